// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_breakdown_report.c: `nicscope breakdown`'s checks of a window (cmd_breakdown.h): the
 * read and write breakdowns' own sums and Little's law, Little's law on the read tags; its
 * tables, stacked bars and JSON record.
 */
#include "cmd_breakdown.h"

#include <math.h>

/* One letter per stage in the stacked bar. */
static const char stage_mark[NICSCOPE_BD_NSTAGES] = {'q', 't', 'c', 'p', 'R', 'C', 'o', '='};
static const char wstage_mark[NICSCOPE_WBD_NSTAGES] = {'q', 'c', 'p', '='};
_Static_assert(NICSCOPE_WBD_NSTAGES <= NICSCOPE_BD_NSTAGES, "the tables' cells");

/* --- checks ------------------------------------------------------------------------------------ */

int self_check(struct ctx *c, const struct nicscope_bd *bd)
{
    if (bd->mismatch)
        return fail(c, "breakdown: %" PRIu64 " hand-offs were not of the oldest request's tag",
                    bd->mismatch);
    for (unsigned k = 0; k < bd->nclasses; k++) {
        const struct nicscope_bd_class *cl = &bd->cls[k];
        const char *name = nicscope_bd_class_names[k];
        uint64_t parts = 0;
        for (unsigned s = 0; s < STG_TOTAL; s++)
            parts += cl->st[s].sum;
        if (cl->count != cl->raises)
            return fail(c, "breakdown %s: %" PRIu64 " requests raised, %" PRIu64 " completed in "
                        "the window", name, cl->raises, cl->count);
        if (parts != cl->st[STG_TOTAL].sum) {
            char sums[256];
            size_t at = 0;
            for (unsigned s = 0; s <= STG_TOTAL && at < sizeof sums; s++)
                at += (size_t)snprintf(sums + at, sizeof sums - at, " %s %" PRIu64,
                                       nicscope_bd_stage_names[s], cl->st[s].sum);
            return fail(c, "breakdown %s: the stages add up to %" PRIu64 " cycles, the total is "
                        "%" PRIu64 " (%" PRIu64 " requests:%s)", name, parts,
                        cl->st[STG_TOTAL].sum, cl->count, sums);
        }
        if (cl->occupancy != cl->st[STG_TOTAL].sum)
            return fail(c, "breakdown %s: Little's law: occupancy integral %" PRIu64 " request-"
                        "cycles, latency sum %" PRIu64, name, cl->occupancy,
                        cl->st[STG_TOTAL].sum);
    }
    return EXIT_OK;
}

int wr_self_check(struct ctx *c, const struct nicscope_wbd *wb)
{
    if (wb->mismatch)
        return fail(c, "write breakdown: %" PRIu64 " MWrs on the PHY matched no write",
                    wb->mismatch);
    for (unsigned k = 0; k < wb->nclasses; k++) {
        const struct nicscope_wbd_class *cl = &wb->cls[k];
        const char *name = nicscope_wbd_class_names[k];
        uint64_t parts = 0;
        for (unsigned s = 0; s < WSTG_TOTAL; s++)
            parts += cl->st[s].sum;
        if (cl->count != cl->raises)
            return fail(c, "write breakdown %s: %" PRIu64 " writes raised, %" PRIu64 " on the "
                        "PHY in the window", name, cl->raises, cl->count);
        if (parts != cl->st[WSTG_TOTAL].sum)
            return fail(c, "write breakdown %s: the stages add up to %" PRIu64 " cycles, the "
                        "total is %" PRIu64, name, parts, cl->st[WSTG_TOTAL].sum);
        if (cl->occupancy != cl->st[WSTG_TOTAL].sum)
            return fail(c, "write breakdown %s: Little's law: occupancy integral %" PRIu64
                        " write-cycles, latency sum %" PRIu64, name, cl->occupancy,
                        cl->st[WSTG_TOTAL].sum);
    }
    return EXIT_OK;
}

int little_tags(struct ctx *c, const struct nicscope_counts *k, const struct nicscope_bd *bd,
                uint64_t window, struct little *lt)
{
    struct nicscope_levels lv;
    char err[256];
    *lt = (struct little){0};
    if (nicscope_read_levels(c->b, &lv, err, sizeof err) < 0)
        return fail(c, "levels: %s", err);
    const int tags = nicscope_level_index("rd_tags"), ptx = nicscope_probe_index("pcie_tx");
    if (!lv.n || tags < 0 || ptx < 0 || !window)
        return EXIT_OK;
    uint64_t held = 0, reads = 0;
    for (unsigned q = 0; q < bd->nclasses; q++) {
        for (unsigned s = STG_PHY; s <= STG_CPL; s++)
            held += bd->cls[q].st[s].sum;
        reads += bd->cls[q].count;
    }
    const uint64_t mrd = k->tlp[ptx][0];
    if (!reads || !mrd || !lv.sum[tags])
        return fail(c, "Little's law on tags: %" PRIu64 " reads, %" PRIu64 " MRd TLPs, tag "
                    "integral %" PRIu64 " in the window", reads, mrd, lv.sum[tags]);
    lt->have = true;
    lt->mean_tags = (double)lv.sum[tags] / (double)window;
    lt->mrd_rate = (double)mrd / (double)window;
    lt->mean_hold = (double)held / (double)reads;
    lt->diff_pct = 100.0 * fabs(lt->mean_tags - lt->mrd_rate * lt->mean_hold) / lt->mean_tags;
    if (lt->diff_pct > 1.0)
        return fail(c, "Little's law on tags: mean tags in use %.4f, MRd rate %.6f/cycle x mean "
                    "hold %.2f cycles = %.4f: %.2f %% apart (more than 1 %%)", lt->mean_tags,
                    lt->mrd_rate, lt->mean_hold, lt->mrd_rate * lt->mean_hold, lt->diff_pct);
    return EXIT_OK;
}

/* --- tables, JSON ------------------------------------------------------------------------------ */

/* A breakdown table (read or write): class, `what` (its request count), a column per stage
 * (the last the total), the total's range, and the stages stacked as a bar. */
static void stages_table_init(struct bu_table *t, const char *what, const char *const *names,
                              unsigned nstages)
{
    const char *h[NICSCOPE_BD_NSTAGES + 4];
    h[0] = "class";
    h[1] = what;
    for (unsigned s = 0; s < nstages; s++)
        h[2 + s] = names[s];
    h[nstages + 2] = "min..max total";
    h[nstages + 3] = "mean ns per stage, stacked";
    bu_table_init(t, nstages + 4, h);
}

/* One class's row of a breakdown table: mean ns per stage; marks[s] draws stage s's part. */
static void stages_row(struct bu_table *t, const char *name, uint64_t count,
                       const struct nicscope_bd_stage *st, unsigned nstages, const char *marks)
{
    const double per = period_ns(), n = (double)count;
    const unsigned total = nstages - 1;
    const double tot = (double)st[total].sum;
    char cells[NICSCOPE_BD_NSTAGES + 3][32], bar[BAR + 1];
    const char *row[NICSCOPE_BD_NSTAGES + 4];
    row[0] = name;
    snprintf(cells[0], 32, "%" PRIu64, count);
    row[1] = cells[0];
    size_t at = 0;
    uint64_t acc = 0;
    for (unsigned s = 0; s < nstages; s++) {
        snprintf(cells[1 + s], 32, "%.1f", (double)st[s].sum / n * per);
        row[2 + s] = cells[1 + s];
        if (s == total)
            continue;
        acc += st[s].sum;
        const size_t end = tot > 0 ? (size_t)((double)acc * BAR / tot + 0.5) : 0;
        while (at < end && at < BAR)
            bar[at++] = marks[s];
    }
    bar[at] = 0;
    snprintf(cells[nstages + 1], 32, "%.0f..%.0f", (double)st[total].min * per,
             (double)st[total].max * per);
    row[nstages + 2] = cells[nstages + 1];
    row[nstages + 3] = bar;
    bu_table_row(t, row);
}

/* A class's "stages" object: per stage sum, min, max, mean ns and the log2 bins. */
static void json_stages(struct bu_json *j, uint64_t count, const struct nicscope_bd_stage *st,
                        unsigned nstages, const char *const *names)
{
    bu_json_key(j, "stages");
    bu_json_obj_begin(j);
    for (unsigned s = 0; s < nstages; s++, st++) {
        bu_json_key(j, names[s]);
        bu_json_obj_begin(j);
        bu_json_ku64(j, "sum", st->sum);
        bu_json_ku64(j, "min", count ? st->min : 0);
        bu_json_ku64(j, "max", st->max);
        bu_json_kdouble(j, "mean_ns", count ? (double)st->sum / (double)count * period_ns()
                                            : 0.0);
        bu_json_ku64s(j, "bins", st->bins, NICSCOPE_BD_NBINS);
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
}

void print_wr_size(struct ctx *c, const struct nicscope_wbd *wb)
{
    struct bu_table t;
    stages_table_init(&t, "writes", nicscope_wbd_stage_names, NICSCOPE_WBD_NSTAGES);
    unsigned rows = 0;
    for (unsigned k = 0; k < wb->nclasses; k++) {
        const struct nicscope_wbd_class *cl = &wb->cls[k];
        if (cl->count) {
            stages_row(&t, nicscope_wbd_class_names[k], cl->count, cl->st,
                       NICSCOPE_WBD_NSTAGES, wstage_mark);
            rows++;
        }
    }
    if (!rows)
        out(c, "  writes: none in the window\n");
    else
        out(c, "  writes (MWr TLPs), mean ns per stage (q queue, c credit, p phy):\n");
    if (rows && !c->run.quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
}

static void json_wr(struct ctx *c, const struct nicscope_wbd *wb, size_t compared)
{
    struct bu_json *j = &c->j;
    bu_json_ku64(j, "wr_model_crosschecked", compared);
    bu_json_ku64(j, "wr_mismatch", wb->mismatch);
    bu_json_key(j, "wr_classes");
    bu_json_obj_begin(j);
    for (unsigned k = 0; k < wb->nclasses; k++) {
        const struct nicscope_wbd_class *cl = &wb->cls[k];
        bu_json_key(j, nicscope_wbd_class_names[k]);
        bu_json_obj_begin(j);
        bu_json_ku64(j, "count", cl->count);
        bu_json_ku64(j, "raises", cl->raises);
        bu_json_ku64(j, "occupancy", cl->occupancy);
        json_stages(j, cl->count, cl->st, NICSCOPE_WBD_NSTAGES, nicscope_wbd_stage_names);
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
}

void print_size(struct ctx *c, uint64_t size, const struct nicscope_bd *bd, uint64_t window)
{
    struct bu_table t;
    stages_table_init(&t, "reads", nicscope_bd_stage_names, NICSCOPE_BD_NSTAGES);
    out(c, "\n%" PRIu64 " B: window %" PRIu64 " cycles; mean ns per stage (q queue, t tag, c "
        "credit, p phy, R rtt, C cpl, o reorder)\n", size, window);
    for (unsigned k = 0; k < bd->nclasses; k++) {
        const struct nicscope_bd_class *cl = &bd->cls[k];
        if (cl->count)
            stages_row(&t, nicscope_bd_class_names[k], cl->count, cl->st,
                       NICSCOPE_BD_NSTAGES, stage_mark);
    }
    if (!c->run.quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    uint64_t reads = 0, later = 0;
    unsigned top = 0;
    for (unsigned i = 0; i < bd->nslots && i < NICSCOPE_BD_NSLOTS; i++) {
        reads += bd->reorder[i];
        later += i ? bd->reorder[i] : 0;
        if (bd->reorder[i])
            top = i;
    }
    out(c, "  reorder distance: %" PRIu64 " of %" PRIu64 " reads completed behind earlier ones"
        " (at most %u);", later, reads, top);
    for (unsigned i = 0; i <= top; i++)
        out(c, " %u:%" PRIu64, i, bd->reorder[i]);
    out(c, "\n");
}

void json_size(struct ctx *c, uint64_t size, uint64_t window, const struct nicscope_bd *bd,
               size_t compared, const struct little *lt, const bool *checked,
               const struct nicscope_wbd *wb, size_t wr_compared, const struct bd_stream *st)
{
    struct bu_json *j = &c->j;
    bu_json_obj_begin(j);
    bu_json_ku64(j, "size", size);
    bu_json_ku64(j, "window_cycles", window);
    bu_json_ku64(j, "model_crosschecked", compared);
    bu_json_key(j, "reorder");
    bu_json_arr_begin(j);
    for (unsigned i = 0; i < bd->nslots && i < NICSCOPE_BD_NSLOTS; i++)
        bu_json_u64(j, bd->reorder[i]);
    bu_json_arr_end(j);
    if (lt->have) {
        bu_json_key(j, "little_tags");
        bu_json_obj_begin(j);
        bu_json_kdouble(j, "mean_tags", lt->mean_tags);
        bu_json_kdouble(j, "mrd_rate", lt->mrd_rate);
        bu_json_kdouble(j, "mean_hold_cycles", lt->mean_hold);
        bu_json_kdouble(j, "diff_pct", lt->diff_pct);
        bu_json_obj_end(j);
    }
    bu_json_key(j, "classes");
    bu_json_obj_begin(j);
    for (unsigned k = 0; k < bd->nclasses; k++) {
        const struct nicscope_bd_class *cl = &bd->cls[k];
        bu_json_key(j, nicscope_bd_class_names[k]);
        bu_json_obj_begin(j);
        bu_json_ku64(j, "count", cl->count);
        bu_json_ku64(j, "raises", cl->raises);
        bu_json_ku64(j, "occupancy", cl->occupancy);
        bu_json_key(j, "model_crosschecked");
        bu_json_bool(j, k < NICSCOPE_BD_NCLASSES && checked[k]);
        bu_json_kdouble(j, "mean_outstanding", window ? (double)cl->occupancy / (double)window
                                                      : 0.0);
        json_stages(j, cl->count, cl->st, NICSCOPE_BD_NSTAGES, nicscope_bd_stage_names);
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
    json_wr(c, wb, wr_compared);
    if (st) {
        bu_json_key(j, "stream");
        bu_json_obj_begin(j);
        bu_json_ku64(j, "entries_taken", st->taken);
        bu_json_ku64(j, "entries_due", st->entries);
        bu_json_ku64(j, "lost", st->lost);
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
}
