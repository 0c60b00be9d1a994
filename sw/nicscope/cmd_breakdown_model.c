// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_breakdown_model.c: `nicscope breakdown`'s cross-checks against the host model
 * (cmd_breakdown.h): its own timing of the same reads (the rtt and cpl stages per request
 * class) and writes (every stage of every write class, with the probe pins' times), compared
 * count, sum, min, max and bins with the analyzer's.
 */
#include "cmd_breakdown.h"

/* --- the host model's own timing of the same reads ---------------------------------------------- */

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

/* The rtt and cpl stages of each request class against the model's reads [n0, n1): counts
 * compared added to *n, checked[k] for each class compared. */
int bd_read_crosscheck(struct ctx *c, const struct load_state *ls, bool tx, uint64_t n0,
                       uint64_t n1, const struct nicscope_bd *bd, size_t *n, bool *checked)
{
    static struct class_ref ref[NICSCOPE_BD_NCLASSES];
    int rc;
    if ((rc = model_stages(c, ls, tx, n0, n1, ref)))
        return rc;
    for (unsigned q = 0; q < bd->nclasses && q < NICSCOPE_BD_NCLASSES; q++) {
        struct stage_ref artt, acpl;
        char wr[64], wc[64];
        class_stage(bd, q, STG_RTT, &artt);
        class_stage(bd, q, STG_CPL, &acpl);
        if (!artt.count && !ref[q].rtt.count)
            continue;               /* no read of this class on either side */
        snprintf(wr, sizeof wr, "%s rtt", nicscope_bd_class_names[q]);
        snprintf(wc, sizeof wc, "%s cpl", nicscope_bd_class_names[q]);
        if ((rc = ref_compare(c, wr, &artt, &ref[q].rtt, n)) ||
            (rc = ref_compare(c, wc, &acpl, &ref[q].cpl, n)))
            return rc;
        checked[q] = true;
    }
    return EXIT_OK;
}

/* --- the host model's and the probe pins' timing of the same writes ----------------------------- */

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

int wr_crosscheck(struct ctx *c, const struct nicscope_wbd *wb, uint64_t n0, uint64_t n1,
                  size_t *compared)
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
