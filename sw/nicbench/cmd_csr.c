// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_csr.c: `nicbench csr`, MMIO write cost and read round trip, idle and under a card-to-host
 * DMA stream; DMA hold-off caused by CSR reads (sim probes). Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

#define CSR_STREAM_BYTES (64u << 10)     /* csr: the card-to-host loop buffer */
#define CSR_STREAM_DESC (4u << 10)       /* ... in 4 KiB descriptors */

/* --- csr --------------------------------------------------------------------------------------- */

enum csr_access { CSR_WRITE, CSR_READ };

/* n timed accesses to CTRL_SCRATCH; reads check they return the last value written. */
static int time_csr(struct ctx *c, enum csr_access a, uint64_t *samples, size_t n,
                    uint32_t *last_written)
{
    struct nic_backend *b = c->b;
    for (size_t i = 0; i < n; i++) {
        if (a == CSR_WRITE) {
            const uint32_t v = (uint32_t)(0x5ca1ab1eu ^ (i * 0x9e3779b9u));
            const uint64_t t0 = nic_now_ns(b);
            nic_write32(b, NIC_CSR(b, CTRL, SCRATCH), v);
            const uint64_t t1 = nic_now_ns(b);
            samples[i] = t1 - t0;
            *last_written = v;
        } else {
            const uint64_t t0 = nic_now_ns(b);
            const uint32_t v = nic_read32(b, NIC_CSR(b, CTRL, SCRATCH));
            const uint64_t t1 = nic_now_ns(b);
            samples[i] = t1 - t0;
            if (v != *last_written)
                return fail(c, "CTRL_SCRATCH read %zu returned %#010x, last written %#010x", i,
                            v, *last_written);
        }
    }
    return EXIT_OK;
}

static void dist_row(struct bu_table *t, const char *access, const char *cond,
                     const struct bu_dist *d)
{
    char n[24], mn[24], md[24], p99[24], mx[24], mean[32];
    snprintf(n, sizeof n, "%zu", d->n);
    snprintf(mn, sizeof mn, "%" PRIu64, d->min);
    snprintf(md, sizeof md, "%" PRIu64, d->median);
    snprintf(p99, sizeof p99, "%" PRIu64, d->p99);
    snprintf(mx, sizeof mx, "%" PRIu64, d->max);
    snprintf(mean, sizeof mean, "%.1f", d->mean);
    const char *row[] = {access, cond, n, mn, md, p99, mx, mean};
    bu_table_row(t, row);
}

static void dist_record(struct ctx *c, const char *exp, const char *access, const char *cond,
                        const struct bu_dist *d)
{
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", exp);
    bu_json_kstr(&c->rec, "access", access);
    bu_json_kstr(&c->rec, "condition", cond);
    bu_json_ku64(&c->rec, "samples", d->n);
    bu_json_ku64(&c->rec, "min_ns", d->min);
    bu_json_ku64(&c->rec, "median_ns", d->median);
    bu_json_ku64(&c->rec, "p99_ns", d->p99);
    bu_json_ku64(&c->rec, "max_ns", d->max);
    bu_json_kdouble(&c->rec, "mean_ns", d->mean);
    bu_json_obj_end(&c->rec);
}

/* Probe counters of one window. */
struct probes {
    bool have[5];
    uint64_t v[5];
};
static const char *const probe_names[5] = {
    "probe.cycles", "probe.dma_wr_stall", "probe.dma_wr_stall_csr", "probe.csr_busy",
    "probe.dma_wr_reqs",
};
enum { P_CYCLES, P_STALL, P_STALL_CSR, P_CSR_BUSY, P_WR_REQS };

static void probes_read(struct ctx *c, struct probes *p)
{
    for (int k = 0; k < 5; k++)
        p->have[k] = counter(c, probe_names[k], &p->v[k]);
}

static void probes_delta(const struct probes *a, const struct probes *b, struct probes *d)
{
    for (int k = 0; k < 5; k++) {
        d->have[k] = a->have[k] && b->have[k];
        d->v[k] = d->have[k] ? b->v[k] - a->v[k] : 0;
    }
}

/* Completions the device held until the DMA writes taken before them had left
 * (pcie_msi_order_cpl_held; UINT64_MAX without the block). */
static uint64_t cpl_held(struct ctx *c)
{
    if (!nic_rb_find(c->b, NIC_RB_PCIE_MSI_ORDER))
        return UINT64_MAX;
    return nic_read32(c->b, NIC_CSR(c->b, PCIE_MSI_ORDER, CPL_HELD));
}

/* The reads of one condition that waited for earlier DMA writes, printed and recorded. */
static void held_output(struct ctx *c, const char *cond, uint64_t reads, uint64_t h0,
                        uint64_t h1)
{
    if (h0 == UINT64_MAX || h1 == UINT64_MAX)
        return;
    /* the counter wraps at 32 bits; the second read of it is not among the samples */
    const uint64_t held = (h1 - h0) & 0xffffffffu;
    out(c, "  reads held behind earlier DMA writes (%s): %" PRIu64 " of %" PRIu64
        " (pcie_msi_order_cpl_held)\n", cond, held, reads);
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "csr_cpl_held");
    bu_json_kstr(&c->rec, "condition", cond);
    bu_json_ku64(&c->rec, "reads", reads);
    bu_json_ku64(&c->rec, "held", held);
    bu_json_obj_end(&c->rec);
}

static const char *fmt_opt(char *buf, size_t len, bool have, uint64_t v)
{
    if (have)
        snprintf(buf, len, "%" PRIu64, v);
    else
        snprintf(buf, len, "n/a");
    return buf;
}

static void holdoff_output(struct ctx *c, struct bu_table *t, const char *window,
                           uint64_t duration_ns, uint64_t reads, const struct probes *d)
{
    char dur[24], nr[24], cyc[24], st[24], stc[24], per[32], busy[24], reqs[24];
    snprintf(dur, sizeof dur, "%" PRIu64, duration_ns);
    snprintf(nr, sizeof nr, "%" PRIu64, reads);
    fmt_opt(cyc, sizeof cyc, d->have[P_CYCLES], d->v[P_CYCLES]);
    fmt_opt(st, sizeof st, d->have[P_STALL], d->v[P_STALL]);
    fmt_opt(stc, sizeof stc, d->have[P_STALL_CSR], d->v[P_STALL_CSR]);
    fmt_opt(busy, sizeof busy, d->have[P_CSR_BUSY], d->v[P_CSR_BUSY]);
    fmt_opt(reqs, sizeof reqs, d->have[P_WR_REQS], d->v[P_WR_REQS]);
    const bool have_per = d->have[P_STALL_CSR] && reads > 0;
    const double per_read = have_per ? (double)d->v[P_STALL_CSR] / (double)reads : 0;
    if (have_per)
        snprintf(per, sizeof per, "%.2f", per_read);
    else
        snprintf(per, sizeof per, "n/a");
    const char *row[] = {window, dur, nr, cyc, st, stc, per, busy, reqs};
    bu_table_row(t, row);

    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "csr_dma_holdoff");
    bu_json_kstr(&c->rec, "window", window);
    bu_json_ku64(&c->rec, "duration_ns", duration_ns);
    bu_json_ku64(&c->rec, "csr_reads", reads);
    json_opt_u64(&c->rec, "cycles", d->have[P_CYCLES], d->v[P_CYCLES]);
    json_opt_u64(&c->rec, "dma_wr_stall", d->have[P_STALL], d->v[P_STALL]);
    json_opt_u64(&c->rec, "dma_wr_stall_csr", d->have[P_STALL_CSR], d->v[P_STALL_CSR]);
    json_opt_double(&c->rec, "stall_per_read", have_per, per_read);
    json_opt_u64(&c->rec, "csr_busy", d->have[P_CSR_BUSY], d->v[P_CSR_BUSY]);
    json_opt_u64(&c->rec, "dma_wr_reqs", d->have[P_WR_REQS], d->v[P_WR_REQS]);
    char stream[96];
    snprintf(stream, sizeof stream, "c2h writer loop over %u B in %u B descriptors, IRQs off",
             CSR_STREAM_BYTES, CSR_STREAM_DESC);
    bu_json_kstr(&c->rec, "stream", stream);
    bu_json_obj_end(&c->rec);
}

/* The card-to-host stream of csr (c)/(d): writer ring in loop mode, then the generator. */
static int stream_start(struct ctx *c, struct nic_dma_ring *ring, uint64_t bus)
{
    char err[512];
    struct nic_backend *b = c->b;
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    if (nic_dma_writer_drain(b, c->timeout_ns) < 0)
        return fail(c, "writer buffering FIFO did not drain");
    if (nic_dma_ring_setup(ring, b, NIC_DMA_WRITER, bus, CSR_STREAM_DESC,
                           CSR_STREAM_BYTES / CSR_STREAM_DESC, c->align,
                           NIC_DMA_IRQ_DISABLE | NIC_DMA_LAST_DISABLE, err, sizeof err) < 0)
        return fail(c, "csr: DMA stream: %s", err);
    nic_dma_ring_start(ring, true);
    nic_pattern_gen_seed(b, 0);
    nic_pattern_gen_enable(b, true);
    /* Steady state: wait until the ring wrapped once (TABLE_LOOP_STATUS count). */
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    for (;;) {
        nic_dma_ring_update(ring);
        if (ring->loops >= 1)
            break;
        if (nic_now_ns(b) > deadline)
            return fail(c, "csr: the card-to-host stream did not complete one pass of its "
                        "%u-descriptor ring within %" PRIu64 " ns (loop status index %u)",
                        ring->count, c->timeout_ns, ring->next_to_clean);
        int rc = backend_check(c, "csr: DMA stream start");
        if (rc)
            return rc;
        nic_idle(b, 1000);
    }
    return backend_check(c, "csr: DMA stream start");
}

static int csr_options(int argc, char **argv, uint64_t *samples, uint64_t *window_ns)
{
    static const struct option opts[] = {{"samples", required_argument, NULL, 's'},
                                         {"dma-window-ns", required_argument, NULL, 'w'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("csr", argc, argv, opts)) != -1) {
        int rc;
        switch (o) {
        case 's':
            if ((rc = cli_parse_range("--samples", optarg, samples, 1, 100000000)))
                return rc;
            break;
        case 'w':
            if ((rc = cli_parse_range("--dma-window-ns", optarg, window_ns, 0, 1000000000)))
                return rc;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}

/* The samples of each access, their table and the completions held during the reads. */
struct csr_run {
    uint64_t *s;
    uint64_t samples;
    uint32_t last;                  /* the last value written to CTRL_SCRATCH */
    struct bu_table t;
    uint64_t held_idle[2], held_dma[2];     /* completions held before and after the reads */
};

/* One row of the table and its record: the distribution of r->s. */
static void csr_row(struct ctx *c, struct csr_run *r, const char *what, const char *access,
                    const char *cond)
{
    struct bu_dist d;
    bu_dist_compute(r->s, r->samples, &d);
    dist_row(&r->t, what, cond, &d);
    dist_record(c, "csr_latency", access, cond, &d);
}

/* Timed reads of CTRL_SCRATCH under `cond` (`what` names them if the backend fails): their
 * row and record, the completions held before and after them in held[2]. */
static int csr_reads(struct ctx *c, struct csr_run *r, const char *what, const char *cond,
                     uint64_t *held)
{
    held[0] = cpl_held(c);
    int rc;
    if ((rc = time_csr(c, CSR_READ, r->s, r->samples, &r->last)) ||
        (rc = backend_check(c, what)))
        return rc;
    held[1] = cpl_held(c);
    csr_row(c, r, "read CTRL_SCRATCH", "read", cond);
    return EXIT_OK;
}

/* (a) write cost, (b) read round trip, idle. */
static int csr_idle(struct ctx *c, struct csr_run *r)
{
    int rc;
    if ((rc = time_csr(c, CSR_WRITE, r->s, r->samples, &r->last)) ||
        (rc = backend_check(c, "csr write")))
        return rc;
    csr_row(c, r, "write CTRL_SCRATCH", "write", "idle");
    return csr_reads(c, r, "csr read", "idle", r->held_idle);
}

/* (c) read round trip with the card-to-host stream running (started in *ring), then the
 * table. */
static int csr_under_dma(struct ctx *c, struct csr_run *r, struct nic_dma_ring *ring)
{
    struct nic_backend *b = c->b;
    uint64_t bus;
    void *buf = nic_dma_alloc(b, CSR_STREAM_BYTES, &bus);
    if (!buf) {
        const char *e = nic_last_error(b);
        return fail(c, "csr: cannot allocate %u bytes of DMA memory: %s", CSR_STREAM_BYTES,
                    e ? e : "?");
    }
    if (bus % DMA_ALIGN_PAGE)
        return fail(c, "csr: DMA buffer at bus address %#" PRIx64 " is not 4 KiB aligned", bus);
    int rc;
    if ((rc = stream_start(c, ring, bus)) ||
        (rc = csr_reads(c, r, "csr read under DMA", "c2h DMA stream", r->held_dma)))
        return rc;
    out(c, "\nMMIO cost on the backend clock (%s), CTRL_SCRATCH, %" PRIu64 " samples each\n",
        b->kind, r->samples);
    if (!c->run.quiet)
        bu_table_print(&r->t, stdout, "  ");
    held_output(c, "idle", r->samples, r->held_idle[0], r->held_idle[1]);
    held_output(c, "c2h DMA stream", r->samples, r->held_dma[0], r->held_dma[1]);
    return EXIT_OK;
}

/* (d) hold-off: a window of CSR reads (at least `samples`, at least window_ns), then an equally
 * long one without CSR access; their probes' differences. */
static int csr_holdoff_windows(struct ctx *c, const struct csr_run *r, uint64_t window_ns,
                               struct probes *dcsr, struct probes *didle, uint64_t *reads,
                               uint64_t *ns_csr, uint64_t *ns_idle)
{
    struct nic_backend *b = c->b;
    struct probes p0, p1, p2, p3;
    probes_read(c, &p0);
    const uint64_t t0 = nic_now_ns(b);
    *reads = 0;
    while (*reads < r->samples || nic_now_ns(b) - t0 < window_ns) {
        const uint32_t v = nic_read32(b, NIC_CSR(b, CTRL, SCRATCH));
        (*reads)++;
        if (v != r->last)
            return fail(c, "CTRL_SCRATCH read returned %#010x, expected %#010x", v, r->last);
    }
    const uint64_t t1 = nic_now_ns(b);
    probes_read(c, &p1);
    probes_read(c, &p2);
    const uint64_t t2 = nic_now_ns(b);
    nic_idle(b, t1 - t0);
    const uint64_t t3 = nic_now_ns(b);
    probes_read(c, &p3);
    int rc = backend_check(c, "csr DMA hold-off");
    if (rc)
        return rc;
    probes_delta(&p0, &p1, dcsr);
    probes_delta(&p2, &p3, didle);
    *ns_csr = t1 - t0;
    *ns_idle = t3 - t2;
    return EXIT_OK;
}

/* (d) and its table; the stream stopped. */
static int csr_holdoff(struct ctx *c, const struct csr_run *r, uint64_t window_ns,
                       struct nic_dma_ring *ring)
{
    struct nic_backend *b = c->b;
    struct probes dcsr, didle;
    uint64_t reads = 0, ns_csr = 0, ns_idle = 0;
    int rc = csr_holdoff_windows(c, r, window_ns, &dcsr, &didle, &reads, &ns_csr, &ns_idle);
    if (rc)
        return rc;
    nic_dma_ring_update(ring);
    const uint32_t loops = ring->loops;

    static const char *const hh[] = {"window", "duration_ns", "csr_reads", "cycles",
                                     "wr_stall_cyc", "wr_stall_in_csr_cyc", "stall_cyc/read",
                                     "csr_busy_cyc", "wr_req_beats"};
    struct bu_table th;
    bu_table_init(&th, 9, hh);
    holdoff_output(c, &th, "csr reads", ns_csr, reads, &dcsr);
    holdoff_output(c, &th, "no csr access", ns_idle, 0, &didle);
    out(c, "\nDMA hold-off by CSR reads: card-to-host stream (writer loop, %u x %u B "
        "descriptors, IRQs off, %u ring passes so far)\n", ring->count, ring->size, loops);
    if (!c->run.quiet)
        bu_table_print(&th, stdout, "  ");
    if (dcsr.have[P_STALL] && didle.have[P_STALL])
        out(c, "  stall cycles: %" PRIu64 " with CSR reads vs %" PRIu64 " without "
            "(difference %" PRId64 ")\n", dcsr.v[P_STALL], didle.v[P_STALL],
            (int64_t)(dcsr.v[P_STALL] - didle.v[P_STALL]));
    else
        out(c, "  stall counters: n/a on the %s backend (no probes)\n", b->kind);
    bu_table_free(&th);

    nic_pattern_gen_enable(b, false);
    nic_dma_ring_stop(ring);
    return backend_check(c, "csr");
}

int cmd_csr(struct ctx *c, int argc, char **argv)
{
    uint64_t samples = 1000, window_ns = 0;
    int rc = csr_options(argc, argv, &samples, &window_ns);
    if (rc || (rc = open_backend(c, c->opts)))
        return rc;
    print_params(c, "params: ");
    struct csr_run r = {.s = calloc(samples, sizeof *r.s), .samples = samples};
    if (!r.s)
        return fail(c, "out of memory for %" PRIu64 " samples", samples);
    static const char *const hdr[] = {"access", "condition", "samples", "min_ns", "median_ns",
                                      "p99_ns", "max_ns", "mean_ns"};
    bu_table_init(&r.t, 8, hdr);
    struct nic_dma_ring ring;
    if (!(rc = csr_idle(c, &r)) && !(rc = csr_under_dma(c, &r, &ring)))
        rc = csr_holdoff(c, &r, window_ns, &ring);
    bu_table_free(&r.t);
    free(r.s);
    return rc;
}
