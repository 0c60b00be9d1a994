// SPDX-License-Identifier: BSD-2-Clause
/*
 * capture_stream.c: `nicscope capture --stream`, the deep capture. The analyzer streams an entry
 * for every change of its sample through its DMA writer into a ring in host memory while the
 * load runs (rtl/nicscope/trace_stream.py); nicscope drains the ring from the loads' wait loops
 * (ctx.poll), at most every --throttle-ns, with a progress line per 100000 entries, then stops
 * the stream, drains the rest and checks the device's counts against what it took: entries
 * taken = entries written, and taken + lost = entries due. The VCD marks each gap, and shows
 * the tx load's doorbell writes on the device's time axis (nic.host.tx_doorbell, placed by
 * nicscope_timebase()).
 */
#include "nicscope.h"

#define PROGRESS_EVERY 100000u

struct drain {
    struct nicscope_stream s;
    struct nicscope_change *ch;
    bool *gap;
    size_t n, cap;
    uint64_t throttle_ns, next_ns, gaps;
    size_t next_progress;
    bool oom;
};

static void keep(const struct nicscope_change *ch, bool gap, void *arg)
{
    struct drain *d = arg;
    if (d->n == d->cap) {
        const size_t cap = d->cap ? 2 * d->cap : 65536;
        struct nicscope_change *nc = realloc(d->ch, cap * sizeof *nc);
        bool *ng = realloc(d->gap, cap * sizeof *ng);
        if (nc)
            d->ch = nc;
        if (ng)
            d->gap = ng;
        if (!nc || !ng) {
            d->oom = true;
            return;
        }
        d->cap = cap;
    }
    d->ch[d->n] = *ch;
    d->gap[d->n++] = gap;
    d->gaps += gap;
}

static void drain(struct ctx *c, struct drain *d)
{
    nicscope_stream_take(&d->s, keep, d);
    if (d->n >= d->next_progress) {
        uint32_t entries, lost, prod;
        nicscope_stream_counts(c->b, &entries, &lost, &prod);
        if (!c->run.quiet)
            fprintf(stderr, "stream: %zu entries taken, %u lost, cycle %" PRIu64 "\n", d->n,
                    lost, d->n ? d->ch[d->n - 1].cycle : 0);
        d->next_progress += PROGRESS_EVERY;
    }
}

static void poll_drain(struct ctx *c)
{
    struct drain *d = c->poll_arg;
    const uint64_t now = nic_now_ns(c->b);
    if (now < d->next_ns)
        return;
    drain(c, d);
    d->next_ns = now + d->throttle_ns;
}

/* Stops the stream, takes the rest (throttled or not) until the device has written everything,
 * frees the ring and checks the device's counts against *taken (updated by fn): entries
 * written = taken, entries due = taken + lost. */
int stream_end(struct ctx *c, struct nicscope_stream *s,
               void (*fn)(const struct nicscope_change *ch, bool gap, void *arg), void *arg,
               const size_t *taken, uint32_t *entries, uint32_t *lost)
{
    int rc = EXIT_OK;
    uint32_t prod;
    nicscope_stream_stop(s);
    const uint64_t deadline = nic_now_ns(c->b) + c->timeout_ns;
    for (;;) {
        const bool busy = nicscope_stream_busy(c->b);
        if (!nicscope_stream_take(s, fn, arg) && !busy)
            break;
        if (nic_now_ns(c->b) > deadline) {
            rc = fail(c, "stream: still busy %" PRIu64 " ns after the stop", c->timeout_ns);
            break;
        }
        nic_idle(c->b, 1000);
    }
    nicscope_stream_take(s, fn, arg);
    nicscope_stream_counts(c->b, entries, lost, &prod);
    nicscope_stream_free(s);
    if (!rc && (prod != (uint32_t)*taken || *entries != (uint32_t)*taken + *lost))
        rc = fail(c, "stream: the device wrote %u entries of %u due (%u lost), the host took "
                  "%zu", prod, *entries, *lost, *taken);
    return rc;
}

int capture_stream(struct ctx *c, const struct load *l, struct out_file *vcd,
                   struct out_file *gtkw, unsigned ring_log2, uint64_t throttle_ns)
{
    static struct load_state ls;
    static struct drain d;
    char err[256];
    int rc;
    memset(&d, 0, sizeof d);
    d.throttle_ns = throttle_ns;
    d.next_progress = PROGRESS_EVERY;
    if ((rc = load_prepare(c, l, &ls)))
        return rc;
    if (nicscope_stream_start(c->b, &d.s, ring_log2, err, sizeof err) < 0)
        return fail(c, "stream: %s", err);
    c->poll = poll_drain;
    c->poll_arg = &d;
    rc = run_load(c, l, &ls);
    c->poll = NULL;
    const int r2 = load_finish(c, l, &ls);
    rc = rc ? rc : r2;
    uint32_t entries, lost;
    const int r3 = stream_end(c, &d.s, keep, &d, &d.n, &entries, &lost);
    rc = rc ? rc : r3;
    if (!rc && d.oom)
        rc = fail(c, "stream: out of memory after %zu entries", d.n);
    struct nicscope_timebase tb;
    int64_t *host = load_host_cycles(c, &ls, &tb);
    if (!rc && !host)
        rc = fail(c, "out of memory");
    if (!rc && (rc = backend_check(c, "stream")) == 0 && d.n) {
        struct nicscope_status st = {.count = (uint32_t)d.n,
                                      .end_ts = d.ch[d.n - 1].cycle + 1};
        rc = write_vcd(c, vcd, gtkw, &st, d.ch, d.gap, host, ls.ntx_db, NULL, 0);
        if (!rc && !(rc = out_commit(c, vcd)))
            rc = out_commit(c, gtkw);
    }
    if (!rc) {
        const uint64_t first = d.n ? d.ch[0].cycle : 0, last = d.n ? d.ch[d.n - 1].cycle : 0;
        out(c, "stream: %zu entries in host memory over cycles %" PRIu64 "..%" PRIu64
            " (%.3f us), %u due, %u lost in %" PRIu64 " gaps (ring of %u entries, drained "
            "every %" PRIu64 " ns at most)\n", d.n, first, last,
            (double)(last - first) * period_ns() / 1000.0, entries, lost, d.gaps,
            1u << ring_log2, throttle_ns);
        out(c, "wrote %s and %s\n", vcd->path, gtkw->path);
    }
    bu_json_obj_begin(&c->j);
    bu_json_kstr(&c->j, "mode", "stream");
    bu_json_ku64(&c->j, "entries_taken", d.n);
    bu_json_ku64(&c->j, "entries_due", entries);
    bu_json_ku64(&c->j, "lost", lost);
    bu_json_ku64(&c->j, "gaps", d.gaps);
    bu_json_ku64(&c->j, "first_cycle", d.n ? d.ch[0].cycle : 0);
    bu_json_ku64(&c->j, "last_cycle", d.n ? d.ch[d.n - 1].cycle : 0);
    bu_json_ku64(&c->j, "ring_entries", 1u << ring_log2);
    bu_json_ku64(&c->j, "throttle_ns", throttle_ns);
    bu_json_key(&c->j, "timebase");
    bu_json_obj_begin(&c->j);
    bu_json_kstr(&c->j, "pairing", tb.exact ? "exact" : "bracketed read");
    bu_json_kdouble(&c->j, "uncertainty_ns", tb.uncertainty_ns);
    bu_json_ku64(&c->j, "cycle", tb.cycle);
    bu_json_kdouble(&c->j, "host_ns", tb.ns);
    bu_json_obj_end(&c->j);
    bu_json_key(&c->j, "host_tx_doorbell_cycles");
    bu_json_arr_begin(&c->j);
    for (size_t i = 0; host && i < ls.ntx_db; i++)
        bu_json_u64(&c->j, (uint64_t)host[i]);
    bu_json_arr_end(&c->j);
    bu_json_obj_end(&c->j);
    free(d.ch);
    free(d.gap);
    free(host);
    return rc;
}
