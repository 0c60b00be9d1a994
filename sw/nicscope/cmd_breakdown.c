// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_breakdown.c: `nicscope breakdown`, where a DMA read's or write's time goes. Per transfer
 * size, one snapshot window around a load (--path dma: h2c transfers on LitePCIe's DMA reader,
 * descriptors back to back; --path c2h: the same on its DMA writer; --path tx: frames through
 * the NIC's TX ring and the MAC loopback), then the analyzer's per-request latency breakdown
 * (rtl/nicscope/latency_breakdown.py) per request class: mean, min and max cycles of each stage,
 * as a table and a stacked bar, and the reorder distance of the window's reads (how many
 * earlier reads still lacked their last completion when a read's own came) as a histogram; and
 * its write breakdown (rtl/nicscope/write_breakdown.py: queue, credit, phy) per write class, a
 * table of the window's writes.
 * Checks, each a failure when it does not hold: every request of the window completed (count ==
 * raises), the stages add up to the total, the occupancy integral equals the total (Little's
 * law over a window of whole requests), no tag mismatch; Little's law on the read tags from
 * three counters measured apart (the rd_tags level: LitePCIe's tag FIFO; the MRd count on the
 * PHY; the breakdown's phy + rtt + cpl stages, a tag's life from issue to last completion)
 * within 1 %, when the analyzer has levels; on a backend that times device reads
 * at the PHY (the sim host model), per request class its count and its rtt and cpl stages equal
 * the model's timestamps of the same TLPs, sum, min, max and bins (the model's reads classed by
 * their address: --path dma all raw_dma; --path tx nic_desc in the TX and RX descriptor rings,
 * nic_payload elsewhere). Writes: every write of the window
 * reached the PHY (count == raises), the stages add up to the total, Little's law, every MWr
 * matched to a write; on the sim backend, every stage of every write class equals, sum, min,
 * max and bins, the host model's time of each MWr's first beat with the harness's probe-pin
 * times of the same write (raised at its class's port, offered to and taken by the
 * packetizer). --stream runs the deep capture (capture_stream.c) through each window, so
 * its ring writes are timed as the scope write class beside the load's. Options: the usage
 * text in main.c.
 */
#include "nicscope.h"

#include <math.h>

#define MAX_SIZES 16
enum { STG_PHY = 3, STG_RTT = 4, STG_CPL = 5, STG_TOTAL = NICSCOPE_BD_NSTAGES - 1 };
/* One letter per stage in the stacked bar. */
static const char stage_mark[NICSCOPE_BD_NSTAGES] = {'q', 't', 'c', 'p', 'R', 'C', 'o', '='};
#define BAR 48

struct bd_args {
    const char *path;                      /* "dma", "c2h" or "tx" */
    uint64_t sizes[MAX_SIZES];
    size_t nsizes;
    uint64_t count;                        /* transfers or frames per size */
    bool stream;                           /* the deep capture through each window */
};

/* The deep capture beside a window: a ring of 2**BD_STREAM_LOG2 entries, drained from the
 * loads' wait loops; entries are counted, not kept. */
#define BD_STREAM_LOG2 12
struct bd_stream {
    struct nicscope_stream s;
    size_t taken;
    uint32_t entries, lost;
};

static void bd_count(const struct nicscope_change *ch, bool gap, void *arg)
{
    (void)ch;
    (void)gap;
    ((struct bd_stream *)arg)->taken++;
}

static void bd_poll(struct ctx *c)
{
    struct bd_stream *st = c->poll_arg;
    nicscope_stream_take(&st->s, bd_count, st);
}

/* count h2c transfers of size bytes, back to back from one buffer, into the pattern checker. */
static int h2c_run(struct ctx *c, uint32_t size, uint32_t count)
{
    struct nic_backend *b = c->b;
    char err[256];
    const uint32_t total = size * count;
    uint64_t bus;
    if (nic_dma_desc_check(b, 0, size, c->info.data_width / 8, err, sizeof err) < 0)
        return fail(c, "breakdown: %u B: %s", size, err);
    uint8_t *buf = nic_dma_alloc(b, total, &bus);
    if (!buf)
        return fail(c, "breakdown: cannot allocate %u B of DMA memory", total);
    nic_pattern_fill(buf, total, 0x3000);
    nic_dma_stop(b, NIC_DMA_READER);
    nic_dma_set_loop(b, NIC_DMA_READER, false);
    nic_pattern_chk_restart(b, 0x3000, total);
    for (uint32_t i = 0; i < count; i++)
        nic_dma_push(b, NIC_DMA_READER, bus + (uint64_t)i * size, size, NIC_DMA_IRQ_DISABLE);
    nic_dma_enable(b, NIC_DMA_READER, true);
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    int rc = EXIT_OK;
    while (nic_pattern_chk_bytes(b) < total && !nic_last_error(b)) {
        if (nic_now_ns(b) > deadline) {
            rc = fail(c, "breakdown: the checker has %" PRIu64 " of %u B after %" PRIu64 " ns",
                      nic_pattern_chk_bytes(b), total, c->timeout_ns);
            break;
        }
        load_poll(c);
        nic_idle(b, 200);
    }
    nic_dma_enable(b, NIC_DMA_READER, false);
    const uint32_t errors = nic_pattern_chk_errors(b);
    nic_dma_free(b, buf, total);
    if (!rc && errors)
        rc = fail(c, "breakdown: the checker counted %u bad beats", errors);
    return rc ? rc : backend_check(c, "breakdown h2c");
}

/* count c2h transfers of size bytes from the pattern generator, back to back into one buffer
 * (the pattern's stream continues across them); done when the last bytes are in host memory
 * (posted writes land in order), then the whole buffer is checked. */
static int c2h_run(struct ctx *c, uint32_t size, uint32_t count)
{
    struct nic_backend *b = c->b;
    char err[256];
    const uint32_t total = size * count, seed = 0x5000;
    uint64_t bus;
    if (nic_dma_desc_check(b, 0, size, c->info.data_width / 8, err, sizeof err) < 0)
        return fail(c, "breakdown: %u B: %s", size, err);
    uint32_t *buf = nic_dma_alloc(b, total, &bus);
    if (!buf)
        return fail(c, "breakdown: cannot allocate %u B of DMA memory", total);
    for (size_t i = 0; i < total / 4; i++)
        buf[i] = ~nic_pattern_word(seed, i);       /* no word matches before it is written */
    const uint32_t last = nic_pattern_word(seed, total / 4 - 1);
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    int rc = EXIT_OK;
    if (nic_dma_writer_drain(b, c->timeout_ns) < 0)
        rc = fail(c, "breakdown: the DMA writer's FIFO still holds %u bytes",
                  nic_dma_buffering_level(b, NIC_DMA_WRITER));
    if (!rc) {
        nic_dma_table_reset(b, NIC_DMA_WRITER);
        nic_dma_set_loop(b, NIC_DMA_WRITER, false);
        for (uint32_t i = 0; i < count; i++)
            nic_dma_push(b, NIC_DMA_WRITER, bus + (uint64_t)i * size, size,
                         NIC_DMA_IRQ_DISABLE | NIC_DMA_LAST_DISABLE);
        nic_pattern_gen_seed(b, seed);
        nic_dma_enable(b, NIC_DMA_WRITER, true);
        nic_pattern_gen_enable(b, true);
        const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
        const volatile uint32_t *tail = (const volatile uint32_t *)buf + total / 4 - 1;
        while (*tail != last && !nic_last_error(b)) {
            if (nic_now_ns(b) > deadline) {
                rc = fail(c, "breakdown: c2h %u x %u B: the last word not written after %"
                          PRIu64 " ns", count, size, c->timeout_ns);
                break;
            }
            load_poll(c);
            nic_idle(b, 200);
        }
    }
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    size_t first = 0;
    const size_t bad = rc ? 0 : nic_pattern_check(buf, total, seed, &first);
    nic_dma_free(b, buf, total);
    if (bad)
        rc = fail(c, "breakdown: c2h: %zu of %u words differ from the pattern, first at byte "
                  "%zu", bad, total / 4, first);
    return rc ? rc : backend_check(c, "breakdown c2h");
}

/* --- the host model's own timing of the same reads ---------------------------------------------- */

struct stage_ref {
    uint64_t count, sum, min, max, bins[NICSCOPE_BD_NBINS];
};

static unsigned bin_of(uint64_t v)
{
    unsigned n = 0;
    while (v) {
        n++;
        v >>= 1;
    }
    return n < NICSCOPE_BD_NBINS ? n : NICSCOPE_BD_NBINS - 1;
}

static void ref_add(struct stage_ref *r, uint64_t v)
{
    if (r->count == 0 || v < r->min)
        r->min = v;
    if (v > r->max)
        r->max = v;
    r->count++;
    r->sum += v;
    r->bins[bin_of(v)]++;
}

static bool model_read(struct ctx *c, uint64_t i, const char *field, uint64_t *v)
{
    char n[64];
    snprintf(n, sizeof n, "model_read_%s:%" PRIu64, field, i);
    return nic_counter(c->b, n, v) == 0;
}

/* The model's reads [n0, n1), per request class (by address: model_class()): rtt (MRd first
 * beat -> first completion beat) and cpl (-> last completion beat) in cycles. */
struct class_ref {
    struct stage_ref rtt, cpl;
};

/* The class of a model read at addr: raw_dma on --path dma; on --path tx nic_desc in the
 * load's descriptor rings, else nic_payload. -1 if the analyzer has no such class. */
static int model_class(const struct load_state *ls, bool tx, uint64_t addr)
{
    const char *want = !tx ? "raw_dma" : load_desc_addr(ls, addr) ? "nic_desc" : "nic_payload";
    for (unsigned k = 0; k < NICSCOPE_BD_NCLASSES; k++)
        if (strcmp(nicscope_bd_class_names[k], want) == 0)
            return (int)k;
    return -1;
}

static int model_stages(struct ctx *c, const struct load_state *ls, bool tx, uint64_t n0,
                        uint64_t n1, struct class_ref ref[NICSCOPE_BD_NCLASSES])
{
    const uint64_t period_ps = (uint64_t)(period_ns() * 1000.0 + 0.5);
    memset(ref, 0, sizeof(struct class_ref) * NICSCOPE_BD_NCLASSES);
    for (uint64_t i = n0; i < n1; i++) {
        uint64_t s, f, e, addr;
        if (!model_read(c, i, "start_ps", &s) || !model_read(c, i, "first_cpl_ps", &f) ||
            !model_read(c, i, "end_ps", &e) || !model_read(c, i, "addr", &addr))
            return fail(c, "breakdown: the host model no longer holds read %" PRIu64, i);
        if (f < s || e < f || (f - s) % period_ps || (e - f) % period_ps)
            return fail(c, "breakdown: model read %" PRIu64 ": times %" PRIu64 ", %" PRIu64
                        ", %" PRIu64 " ps are not in order on the %" PRIu64 " ps clock", i, s, f,
                        e, period_ps);
        const int k = model_class(ls, tx, addr);
        if (k < 0)
            return fail(c, "breakdown: model read %" PRIu64 " at %#" PRIx64 ": the analyzer "
                        "has no class %s", i, addr,
                        !tx ? "raw_dma" : load_desc_addr(ls, addr) ? "nic_desc" : "nic_payload");
        ref_add(&ref[k].rtt, (f - s) / period_ps);
        ref_add(&ref[k].cpl, (e - f) / period_ps);
    }
    return EXIT_OK;
}

/* Stage s of class k as a stage_ref. */
static void class_stage(const struct nicscope_bd *bd, unsigned k, unsigned s,
                        struct stage_ref *m)
{
    const struct nicscope_bd_class *cl = &bd->cls[k];
    const struct nicscope_bd_stage *st = &cl->st[s];
    memset(m, 0, sizeof *m);
    m->count = cl->count;
    if (!cl->count)
        return;
    m->min = st->min;
    m->max = st->max;
    m->sum = st->sum;
    for (unsigned i = 0; i < NICSCOPE_BD_NBINS; i++)
        m->bins[i] = st->bins[i];
}

static int ref_compare(struct ctx *c, const char *what, const struct stage_ref *an,
                       const struct stage_ref *model, size_t *compared)
{
    const struct { const char *name; uint64_t a, m; } v[] = {
        {"count", an->count, model->count}, {"sum", an->sum, model->sum},
        {"min", an->min, model->min}, {"max", an->max, model->max}};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (v[i].a != v[i].m)
            return fail(c, "cross-check: breakdown %s %s = %" PRIu64 ", host model %" PRIu64,
                        what, v[i].name, v[i].a, v[i].m);
    for (unsigned i = 0; i < NICSCOPE_BD_NBINS; i++)
        if (an->bins[i] != model->bins[i])
            return fail(c, "cross-check: breakdown %s bin %u = %" PRIu64 ", host model %" PRIu64,
                        what, i, an->bins[i], model->bins[i]);
    *compared += 4 + NICSCOPE_BD_NBINS;
    return EXIT_OK;
}

/* --- checks, table, JSON ------------------------------------------------------------------------ */

static int self_check(struct ctx *c, const struct nicscope_bd *bd)
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

/* --- writes ------------------------------------------------------------------------------------ */

enum { WSTG_QUEUE = 0, WSTG_CREDIT = 1, WSTG_PHY = 2, WSTG_TOTAL = NICSCOPE_WBD_NSTAGES - 1 };
static const char wstage_mark[NICSCOPE_WBD_NSTAGES] = {'q', 'c', 'p', '='};
_Static_assert(NICSCOPE_WBD_NSTAGES <= NICSCOPE_BD_NSTAGES, "the tables' cells");

static int wr_self_check(struct ctx *c, const struct nicscope_wbd *wb)
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

static bool sim_value(struct ctx *c, const char *what, uint64_t i, uint64_t *v)
{
    char n[64];
    snprintf(n, sizeof n, "%s:%" PRIu64, what, i);
    return nic_counter(c->b, n, v) == 0;
}

/* The MWrs [n0, n1) as the host model timed them on the PHY (their first beat), with the
 * harness's probe-pin times of the same writes: every stage of every write class (the
 * harness's classes are the analyzer's, in its order), in cycles. */
static int model_writes(struct ctx *c, uint64_t n0, uint64_t n1, unsigned nclasses,
                        struct stage_ref ref[][NICSCOPE_WBD_NSTAGES])
{
    const uint64_t p = (uint64_t)(period_ns() * 1000.0 + 0.5);
    memset(ref, 0, NICSCOPE_WBD_NCLASSES * sizeof *ref);
    for (uint64_t i = n0; i < n1; i++) {
        uint64_t start, matched, k, raised, r, g, t;
        if (!sim_value(c, "model_write_start_ps", i, &start) ||
            !sim_value(c, "probe_write_matched", i, &matched) ||
            !sim_value(c, "probe_write_class", i, &k) ||
            !sim_value(c, "probe_write_raised", i, &raised) ||
            !sim_value(c, "probe_write_raised_ps", i, &r) ||
            !sim_value(c, "probe_write_granted_ps", i, &g) ||
            !sim_value(c, "probe_write_taken_ps", i, &t))
            return fail(c, "breakdown: the simulator no longer holds MWr %" PRIu64, i);
        if (!matched)
            return fail(c, "cross-check: MWr %" PRIu64 " on the PHY with no write taken by the "
                        "packetizer before it (probe pins)", i);
        if (k >= nclasses)
            return fail(c, "cross-check: MWr %" PRIu64 " of write class %" PRIu64 ", which the "
                        "analyzer's %u classes do not hold (probe pins)", i, k, nclasses);
        if (!raised)
            return fail(c, "cross-check: MWr %" PRIu64 " (%s) taken by the packetizer with no "
                        "write raised at its port before it (probe pins)", i,
                        nicscope_wbd_class_names[k]);
        if (r > g || g > t || t > start || r % p || (t - g) % p || (start - t) % p)
            return fail(c, "cross-check: MWr %" PRIu64 ": times %" PRIu64 ", %" PRIu64 ", %"
                        PRIu64 ", %" PRIu64 " ps are not in order on the %" PRIu64 " ps clock",
                        i, r, g, t, start, p);
        ref_add(&ref[k][WSTG_QUEUE], (g - r) / p);
        ref_add(&ref[k][WSTG_CREDIT], (t - g) / p);
        ref_add(&ref[k][WSTG_PHY], (start - t) / p);
        ref_add(&ref[k][WSTG_TOTAL], (start - r) / p);
    }
    return EXIT_OK;
}

/* Stage s of write class k as a stage_ref. */
static void wr_ref(const struct nicscope_wbd *wb, unsigned k, unsigned s, struct stage_ref *m)
{
    const struct nicscope_wbd_class *cl = &wb->cls[k];
    const struct nicscope_bd_stage *st = &cl->st[s];
    memset(m, 0, sizeof *m);
    if (!cl->count)
        return;
    m->count = cl->count;
    m->sum = st->sum;
    m->min = st->min;
    m->max = st->max;
    memcpy(m->bins, st->bins, sizeof m->bins);
}

static int wr_crosscheck(struct ctx *c, const struct nicscope_wbd *wb, uint64_t n0,
                         uint64_t n1, size_t *compared)
{
    struct stage_ref ref[NICSCOPE_WBD_NCLASSES][NICSCOPE_WBD_NSTAGES], an;
    int rc = model_writes(c, n0, n1, wb->nclasses, ref);
    char what[64];
    for (unsigned k = 0; !rc && k < wb->nclasses; k++)
        for (unsigned s = 0; !rc && s < NICSCOPE_WBD_NSTAGES; s++) {
            wr_ref(wb, k, s, &an);
            snprintf(what, sizeof what, "write %s %s", nicscope_wbd_class_names[k],
                     nicscope_wbd_stage_names[s]);
            rc = ref_compare(c, what, &an, &ref[k][s], compared);
        }
    return rc;
}

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

static void print_wr_size(struct ctx *c, const struct nicscope_wbd *wb)
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

/* Little's law on the read tags: mean tags in use (the rd_tags level over the window) against
 * the MRd rate (the PHY's TLP counter) x the mean tag hold (the breakdown's phy + rtt + cpl:
 * from the cycle the packetizer takes the request, and its tag leaves the tag FIFO, to its last
 * completion beat). Three counters of different hardware; the check is 1 %. */
struct little {
    bool have;
    double mean_tags, mrd_rate, mean_hold, diff_pct;
};

static int little_tags(struct ctx *c, const struct nicscope_counts *k,
                       const struct nicscope_bd *bd, uint64_t window, struct little *lt)
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

static void print_size(struct ctx *c, uint64_t size, const struct nicscope_bd *bd,
                       uint64_t window)
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

static void json_size(struct ctx *c, uint64_t size, uint64_t window,
                      const struct nicscope_bd *bd, size_t compared, const struct little *lt,
                      const bool *checked, const struct nicscope_wbd *wb,
                      size_t wr_compared, const struct bd_stream *st)
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

/* --- one size ----------------------------------------------------------------------------------- */

static int run_size(struct ctx *c, const struct bd_args *a, uint64_t size, size_t *compared,
                    size_t *wr_compared)
{
    struct nic_backend *b = c->b;
    static struct load_state ls;
    const struct load l = {.kind = "tx", .frames = a->count, .frame_size = size};
    const bool tx = strcmp(a->path, "tx") == 0, c2h = strcmp(a->path, "c2h") == 0;
    int rc;
    if (tx && (rc = load_prepare(c, &l, &ls)))
        return rc;
    uint64_t n0 = 0, n1 = 0, w0 = 0, w1 = 0;
    const bool timed = nic_counter(b, "model.reads_timed", &n0) == 0;
    const bool wtimed = nic_counter(b, "model.writes_timed", &w0) == 0;
    struct window w;
    static struct bd_stream st;
    char err[256];
    window_open(c, &w);
    if (a->stream) {
        memset(&st, 0, sizeof st);
        if (nicscope_stream_start(b, &st.s, BD_STREAM_LOG2, err, sizeof err) < 0)
            return fail(c, "breakdown --stream: %s", err);
        c->poll = bd_poll;
        c->poll_arg = &st;
    }
    rc = tx ? run_load(c, &l, &ls)
            : c2h ? c2h_run(c, (uint32_t)size, (uint32_t)a->count)
                  : h2c_run(c, (uint32_t)size, (uint32_t)a->count);
    if (!rc && tx)
        nic_idle(b, 5000);          /* the RX descriptor prefetch after the last refill */
    if (a->stream) {
        c->poll = NULL;
        const int r2 = stream_end(c, &st.s, bd_count, &st, &st.taken, &st.entries, &st.lost);
        rc = rc ? rc : r2;
    }
    window_close(c, &w);
    if (timed && nic_counter(b, "model.reads_timed", &n1) != 0)
        rc = rc ? rc : fail(c, "breakdown: counter model.reads_timed disappeared");
    uint64_t stamped = 0;
    if (wtimed && (nic_counter(b, "model.writes_timed", &w1) != 0 ||
                   nic_counter(b, "probe.writes_stamped", &stamped) != 0 || stamped != w1))
        rc = rc ? rc : fail(c, "breakdown: the host model timed %" PRIu64 " MWrs, the probe "
                            "pins %" PRIu64, w1, stamped);
    if (tx) {
        const int r2 = load_finish(c, &l, &ls);
        rc = rc ? rc : r2;
    }
    if (rc)
        return rc;
    struct nicscope_counts k;
    struct nicscope_bd bd;
    if ((rc = read_window(c, w.refused0, &k)))
        return rc;
    if (nicscope_read_breakdown(b, &bd, err, sizeof err) < 0)
        return fail(c, "breakdown read-out: %s", err);
    if (bd.nclasses == 0)
        return fail(c, "this analyzer was built without the latency breakdown "
                    "(ANALYZER_BD_INFO.NCLASSES 0)");
    const uint64_t window = k.occ[0][NS_BUSY] + k.occ[0][NS_STALL] + k.occ[0][NS_IDLE];
    if ((rc = self_check(c, &bd)))
        return rc;
    size_t n = 0;
    bool checked[NICSCOPE_BD_NCLASSES] = {false};
    if (timed) {
        static struct class_ref ref[NICSCOPE_BD_NCLASSES];
        if ((rc = model_stages(c, &ls, tx, n0, n1, ref)))
            return rc;
        for (unsigned q = 0; q < bd.nclasses && q < NICSCOPE_BD_NCLASSES; q++) {
            struct stage_ref artt, acpl;
            char wr[64], wc[64];
            class_stage(&bd, q, STG_RTT, &artt);
            class_stage(&bd, q, STG_CPL, &acpl);
            if (!artt.count && !ref[q].rtt.count)
                continue;           /* no read of this class on either side */
            snprintf(wr, sizeof wr, "%s rtt", nicscope_bd_class_names[q]);
            snprintf(wc, sizeof wc, "%s cpl", nicscope_bd_class_names[q]);
            if ((rc = ref_compare(c, wr, &artt, &ref[q].rtt, &n)) ||
                (rc = ref_compare(c, wc, &acpl, &ref[q].cpl, &n)))
                return rc;
            checked[q] = true;
        }
    }
    struct little lt = {0};
    if (!c2h && (rc = little_tags(c, &k, &bd, window, &lt)))
        return rc;
    struct nicscope_wbd wb;
    if (nicscope_read_wr_breakdown(b, &wb, err, sizeof err) < 0)
        return fail(c, "write breakdown read-out: %s", err);
    if (wb.nclasses == 0 && c2h)
        return fail(c, "this analyzer was built without the write breakdown "
                    "(ANALYZER_WBD_INFO.NCLASSES 0)");
    if ((rc = wr_self_check(c, &wb)))
        return rc;
    size_t wn = 0;
    if (wtimed && wb.nclasses && w1 > w0 && (rc = wr_crosscheck(c, &wb, w0, w1, &wn)))
        return rc;
    if (c2h)
        out(c, "\n%" PRIu64 " B: window %" PRIu64 " cycles\n", size, window);
    else
        print_size(c, size, &bd, window);
    if (lt.have)
        out(c, "  Little's law on read tags: mean in use %.4f (tag FIFO) = MRd rate %.6f/cycle "
            "(PHY) x mean hold %.2f cycles (phy+rtt+cpl) = %.4f; %.3f %% apart\n", lt.mean_tags,
            lt.mrd_rate, lt.mean_hold, lt.mrd_rate * lt.mean_hold, lt.diff_pct);
    if (wb.nclasses)
        print_wr_size(c, &wb);
    if (a->stream)
        out(c, "  deep capture beside the load: %zu entries in host memory of %u due, %u lost\n",
            st.taken, st.entries, st.lost);
    json_size(c, size, window, &bd, n, &lt, checked, &wb, wn, a->stream ? &st : NULL);
    *compared += n;
    *wr_compared += wn;
    return EXIT_OK;
}

int cmd_breakdown(struct ctx *c, int argc, char **argv)
{
    struct bd_args a = {.path = "dma", .count = 16};
    const char *sizes = NULL;
    char err[256];
    static const struct option opts[] = {{"path", required_argument, NULL, 'p'},
                                         {"sizes", required_argument, NULL, 's'},
                                         {"count", required_argument, NULL, 'n'},
                                         {"stream", no_argument, NULL, 'S'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("breakdown", argc, argv, opts)) != -1) {
        switch (o) {
        case 'p':
            if (!optarg || (strcmp(optarg, "dma") && strcmp(optarg, "c2h") &&
                            strcmp(optarg, "tx")))
                return usage_error("--path: dma, c2h or tx");
            a.path = optarg;
            break;
        case 's':
            if (!optarg)
                return usage_error("--sizes: a list of bytes");
            sizes = optarg;
            break;
        case 'n':
            if (!optarg || bu_parse_u64(optarg, &a.count) < 0 || a.count == 0 ||
                a.count > 256)
                return usage_error("--count: 1..256");
            break;
        case 'S':
            a.stream = true;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    const bool tx = strcmp(a.path, "tx") == 0;
    if (!sizes)
        sizes = tx ? "64,256,1024,1514" : "64,256,1024,4096";
    if (bu_parse_list(sizes, a.sizes, MAX_SIZES, &a.nsizes, err, sizeof err) < 0)
        return usage_error("--sizes: %s", err);
    for (size_t i = 0; i < a.nsizes; i++) {
        const uint64_t s = a.sizes[i];
        if (tx && (s < 14 || s > 1514))
            return usage_error("--sizes: %" PRIu64 ": --path tx frames are 14..1514 bytes", s);
        if (!tx && (s == 0 || s % 16 || s > 65536))
            return usage_error("--sizes: %" PRIu64 ": --path %s transfers are multiples of 16 "
                               "up to 64K", s, a.path);
        if (!tx && s * a.count > (64u << 20))
            return usage_error("--sizes x --count: %" PRIu64 " B, at most 64M", s * a.count);
    }
    int rc = open_dev(c);
    if (rc)
        return rc;
    const bool c2h = strcmp(a.path, "c2h") == 0;
    out(c, "latency breakdown of the device's DMA %s: %s, %" PRIu64 " %s per size\n",
        c2h ? "writes" : "reads and writes",
        tx ? "frames through the NIC's TX ring (descriptor and payload reads) and the MAC "
             "loopback" : c2h ? "c2h transfers on the raw DMA writer, descriptors back to back"
                              : "h2c transfers on the raw DMA reader, descriptors back to back",
        a.count, tx ? "frames" : "transfers");
    bu_json_obj_begin(&c->j);
    bu_json_kstr(&c->j, "path", a.path);
    bu_json_ku64(&c->j, "count", a.count);
    bu_json_key(&c->j, "stream");
    bu_json_bool(&c->j, a.stream);
    bu_json_kdouble(&c->j, "ns_per_cycle", period_ns());
    bu_json_kstrs(&c->j, "stages", nicscope_bd_stage_names, NICSCOPE_BD_NSTAGES);
    bu_json_kstrs(&c->j, "wr_stages", nicscope_wbd_stage_names, NICSCOPE_WBD_NSTAGES);
    bu_json_key(&c->j, "sizes");
    bu_json_arr_begin(&c->j);
    size_t compared = 0, wr_compared = 0;
    for (size_t i = 0; i < a.nsizes && !rc; i++)
        rc = run_size(c, &a, a.sizes[i], &compared, &wr_compared);
    bu_json_arr_end(&c->j);
    bu_json_ku64(&c->j, "model_crosschecked", compared);
    bu_json_ku64(&c->j, "wr_model_crosschecked", wr_compared);
    bu_json_obj_end(&c->j);
    if (rc)
        return rc;
    out(c, "\nchecks: every request of each window completed; stages add up to the total; "
        "occupancy integral = latency sum (Little's law); no tag mismatch; %s"
        "every MWr matched to a write\n", c2h ? "" : "tags in use = MRd rate x tag hold within "
        "1 % (Little's law, three counters); ");
    if (compared && !c2h)
        out(c, "cross-check: %zu breakdown counts (rtt, cpl per request class) equal the host "
            "model's timestamps of the same TLPs (%s)\n", compared,
            tx ? "its reads classed by address: descriptor rings or payload buffers"
               : "its reads all raw_dma");
    if (wr_compared)
        out(c, "cross-check: %zu write breakdown counts (every class: queue, credit, phy, "
            "total) equal the host model's MWr timestamps with the probe pins' times of the "
            "same writes\n", wr_compared);
    return EXIT_OK;
}
