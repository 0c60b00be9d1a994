// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_dma.c: `nicbench dma`, DMA throughput vs transfer size, host-to-card and card-to-host,
 * one transfer at a time or with descriptors kept queued (--inflight), MPS/MRRS sweeps, and
 * the latency of single DMA reads at the PHY (--latency, sim backend). Options: the usage text
 * in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

#define MAX_PAIRS 16
#define MAX_INFLIGHT 16                 /* --inflight list entries */
#define MAX_OFFSETS 512                 /* --offset list entries */
#define DMA_TABLE_DEPTH 256u            /* LitePCIe's descriptor table (LitePCIeDMA default) */
#define RING_BYTES (2u << 20)           /* --inflight > 1: slots of one 2 MiB DMA buffer */
#define LAT_SIZES "64..4K"
/* h2c with descriptors queued: at least this much data in the table, so the host's refill of a
 * slot (once the checker counted it, an MMIO read later) comes before the reader's next lap. */
#define H2C_MIN_LAP (32u << 10)

/* The negotiated MPS/MRRS as the backend reports them (params "mps"/"mrrs"), -1 if absent. */
static int param_int(struct nic_backend *b, const char *key)
{
    double d;
    return bu_json_get_number(nic_params_json(b), key, &d) == 0 ? (int)d : -1;
}

/* --- dma --------------------------------------------------------------------------------------- */

enum dir { H2C, C2H };
static const char *const dir_name[2] = {"h2c", "c2h"};

struct dma_run {
    void *buf;
    uint64_t bus;
    size_t cap;
    uint32_t seed;                  /* advanced for every transfer */
    uint32_t off;                   /* --offset: bytes past the buffer's (page-aligned) start */
    bool pages;                     /* --offset given: slots are whole pages, each at off */
};

/* The transfer's host memory: the buffer at the current offset. */
static uint8_t *run_buf(const struct dma_run *r) { return (uint8_t *)r->buf + r->off; }
static uint64_t run_bus(const struct dma_run *r) { return r->bus + r->off; }

static int dma_h2c_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns)
{
    struct nic_backend *b = c->b;
    const uint32_t seed = r->seed++;
    nic_pattern_fill(run_buf(r), size, seed);
    nic_pattern_chk_restart(b, seed, size);
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_dma_table_reset(b, NIC_DMA_READER);
    nic_dma_set_loop(b, NIC_DMA_READER, false);
    nic_dma_push(b, NIC_DMA_READER, run_bus(r), size, NIC_DMA_IRQ_DISABLE);
    if (nic_irq_drain(b) < 0)
        return fail(c, "h2c: irq_wait failed while draining MSIs: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");

    const uint64_t t0 = nic_now_ns(b);
    nic_dma_enable(b, NIC_DMA_READER, true);
    int rc = wait_msi(c, nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0), "h2c: checker interrupt");
    const uint64_t t1 = nic_now_ns(b);
    if (rc)
        return rc;
    *ns = t1 - t0;

    const uint64_t got = nic_pattern_chk_bytes(b);
    const uint32_t errors = nic_pattern_chk_errors(b);
    if (got != size || errors != 0)
        return fail(c, "h2c %u B (seed %#x): checker counted %" PRIu64 " bytes and %u "
                    "mismatching beats, expected %u bytes and 0", size, seed, got, errors, size);
    nic_dma_enable(b, NIC_DMA_READER, false);
    return backend_check(c, "h2c transfer");
}

static int dma_c2h_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns)
{
    struct nic_backend *b = c->b;
    const uint32_t seed = r->seed++;
    uint32_t *w = (uint32_t *)run_buf(r);
    /* Sentinel: the pattern's complement, so no word already matches. */
    const size_t words = (size + 16 <= r->cap - r->off ? size + 16 : size) / 4;
    for (size_t i = 0; i < words; i++)
        w[i] = ~nic_pattern_word(seed, i);
    uint8_t tail[16];
    for (int k = 0; k < 4; k++) {
        const uint32_t v = nic_pattern_word(seed, size / 4 - 4 + (size_t)k);
        for (int j = 0; j < 4; j++)
            tail[4 * k + j] = (uint8_t)(v >> (8 * j));          /* little-endian */
    }

    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    if (nic_dma_writer_drain(b, c->timeout_ns) < 0)
        return fail(c, "c2h: writer buffering FIFO still holds %u bytes",
                    nic_dma_buffering_level(b, NIC_DMA_WRITER));
    nic_dma_table_reset(b, NIC_DMA_WRITER);
    nic_dma_set_loop(b, NIC_DMA_WRITER, false);
    nic_dma_push(b, NIC_DMA_WRITER, run_bus(r), size, NIC_DMA_LAST_DISABLE);
    nic_pattern_gen_seed(b, seed);
    nic_dma_enable(b, NIC_DMA_WRITER, true);
    if (nic_irq_drain(b) < 0)
        return fail(c, "c2h: irq_wait failed while draining MSIs: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");

    const uint64_t t0 = nic_now_ns(b);
    nic_pattern_gen_enable(b, true);
    int rc = wait_msi(c, nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1), "c2h: writer interrupt");
    if (rc)
        return rc;
    rc = wait_tail(c, (const volatile uint8_t *)run_buf(r) + size - 16, tail, "c2h");
    const uint64_t t1 = nic_now_ns(b);
    if (rc)
        return rc;
    *ns = t1 - t0;

    size_t first = 0;
    const size_t bad = nic_pattern_check(w, size, seed, &first);
    if (bad) {
        const uint32_t got = ((const volatile uint32_t *)w)[first / 4];
        return fail(c, "c2h %u B (seed %#x): %zu of %u words differ from the pattern, first at "
                    "byte %zu: %#010x, expected %#010x", size, seed, bad, size / 4, first, got,
                    nic_pattern_word(seed, first / 4));
    }
    if (words > size / 4) {
        const volatile uint32_t *after = (const volatile uint32_t *)w + size / 4;
        for (size_t i = 0; i < 4; i++)
            if (after[i] != ~nic_pattern_word(seed, size / 4 + i))
                return fail(c, "c2h %u B: the DMA wrote past the end of the buffer (byte %zu)",
                            size, size + 4 * i);
    }
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    return backend_check(c, "c2h transfer");
}

/* --- descriptors kept queued (--inflight N > 1) ------------------------------------------------ */

/*
 * A run of `reps` transfers of `size` bytes with q descriptors in the engine's table in loop
 * mode: LitePCIe re-queues each descriptor as it completes, so the table always holds q and
 * the engine never waits for the host. Descriptor k points to slot k; transfer j (the j-th the
 * engine runs) uses slot j % q and carries stream bytes [j * size, (j + 1) * size) of the
 * pattern. A slot's stride is size rounded up to a power of two (to 4 KiB multiples above
 * 4 KiB), so no request crosses a 4 KiB boundary; with --offset it is whole pages and each
 * slot starts at the offset in its first page. The host keeps the slots' data one lap
 * ahead: h2c writes transfer j + q's data into a slot once the checker counted transfer j's
 * bytes; c2h checks transfer j's data in place, then puts the sentinel for j + q in its slot.
 */
struct flight {
    uint32_t size, stride, q;
    uint64_t reps;                  /* transfers timed */
    uint64_t total;                 /* transfers the engine ran (h2c: >= reps) */
    uint32_t seed;
    uint64_t run_ns;                /* start to the reps-th transfer's data checked or in place */
};

static uint32_t slot_stride(uint32_t size, bool pages)
{
    /* --offset: whole pages with room for the size at any offset, so every transfer sits at
     * the same offset in its page. */
    if (pages)
        return (uint32_t)bu_ceil_div(size + 4095u, 4096) * 4096;
    if (size > 4096)
        return (uint32_t)bu_ceil_div(size, 4096) * 4096;
    uint32_t s = 16;
    while (s < size)
        s <<= 1;
    return s;
}

static uint8_t *slot(const struct dma_run *r, const struct flight *f, uint64_t j)
{
    return run_buf(r) + (size_t)(j % f->q) * f->stride;
}

/* The pattern's seed for transfer j: the stream continues across transfers. */
static uint32_t slot_seed(const struct flight *f, uint64_t j)
{
    return f->seed + (uint32_t)(j * (f->size / 4));
}

/* Table reset, the q descriptors pushed in prog mode, then loop mode (the engine disabled). */
static void flight_table(struct nic_backend *b, const struct dma_run *r, const struct flight *f,
                         enum nic_dma_engine e, unsigned flags)
{
    nic_dma_enable(b, e, false);
    nic_dma_table_reset(b, e);
    nic_dma_set_loop(b, e, false);
    for (uint32_t k = 0; k < f->q; k++)
        nic_dma_push(b, e, run_bus(r) + (uint64_t)k * f->stride, f->size, flags);
    nic_dma_set_loop(b, e, true);
}

/* A backend error, or no progress for the timeout, fails the run. *t_prog: the last progress. */
static int flight_check(struct ctx *c, const struct flight *f, bool progress, uint64_t *t_prog,
                        uint64_t done, const char *what)
{
    const char *e = nic_last_error(c->b);
    if (e)
        return fail(c, "%s %u B inflight %u: backend error: %s", what, f->size, f->q, e);
    const uint64_t now = nic_now_ns(c->b);
    if (progress)
        *t_prog = now;
    else if (now - *t_prog > c->timeout_ns)
        return fail(c, "%s %u B inflight %u: no progress within %" PRIu64 " ns after %" PRIu64
                    " of %" PRIu64 " transfers", what, f->size, f->q, c->timeout_ns, done,
                    f->reps);
    return EXIT_OK;
}

/* Descriptors the engine consumed since its table reset, at least `floor`: TABLE_LOOP_STATUS
 * counts loops (16 bits) and the index in the loop, which prog mode goes on incrementing. */
static uint64_t flight_consumed(struct nic_backend *b, enum nic_dma_engine e,
                                const struct flight *f, uint64_t floor)
{
    uint32_t index, count;
    nic_dma_loop_status(b, e, &index, &count);
    uint64_t n = (uint64_t)count * f->q + index + 1;
    while (n < floor)
        n += (uint64_t)f->q << 16;
    return n;
}

/* The checker's byte count, from its low 32 bits (one MMIO read) and the previous count. */
static uint64_t chk_bytes_since(struct nic_backend *b, uint64_t prev)
{
    const uint32_t lo = nic_csr_read_elem(b, NIC_CSR(b, DMA_PATTERN, CHK_BYTES),
                                          NIC_CSR_DMA_PATTERN_CHK_BYTES_SIZE, 0);
    return prev + (uint32_t)(lo - (uint32_t)prev);
}

/*
 * h2c: the host polls the checker's byte count, about every q/4 transfers, waiting for the
 * checker's MSI in between, and rewrites the slots of counted transfers one lap ahead. Once
 * reps - q transfers are counted the table goes back to prog mode: the descriptors in it run
 * once more and the engine stops after `total` >= reps transfers, each with its data. When
 * the slots hold the data of all of them, polling stops and the host blocks on the MSI (at
 * reps transfers), which ends the timed run; then the engine drains.
 */
static int dma_h2c_flight(struct ctx *c, struct dma_run *r, struct flight *f)
{
    struct nic_backend *b = c->b;
    const unsigned irq = nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0);
    for (uint64_t j = 0; j < f->q; j++)
        nic_pattern_fill(slot(r, f, j), f->size, slot_seed(f, j));
    nic_pattern_chk_restart(b, f->seed, (uint32_t)(f->reps * f->size));
    flight_table(b, r, f, NIC_DMA_READER, NIC_DMA_IRQ_DISABLE);
    if (nic_irq_drain(b) < 0)
        return fail(c, "h2c: irq_wait failed while draining MSIs: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");

    const uint64_t t0 = nic_now_ns(b);
    nic_dma_enable(b, NIC_DMA_READER, true);
    uint64_t filled = f->q;         /* transfers whose data was put in their slot */
    uint64_t last = UINT64_MAX;     /* after loop mode: more transfers than the engine runs */
    uint64_t received = 0, t_prog = t0, t_poll = t0, wait_ns = 256;
    int rc;
    f->run_ns = 0;
    while (filled < last) {
        unsigned vec = 0;
        const int w = f->run_ns ? 0 : nic_irq_wait_vector(b, wait_ns, &vec);
        if (w < 0)
            return fail(c, "h2c: irq_wait failed: %s", nic_last_error(b) ? nic_last_error(b) : "?");
        if (w == 1 && vec != irq)
            return fail(c, "h2c: MSI on vector %u, expected vector %u", vec, irq);
        if (w == 1)
            f->run_ns = nic_now_ns(b) - t0;     /* (one during a poll: seen after its read) */
        else if (f->run_ns)
            nic_idle(b, wait_ns);
        const uint64_t got = chk_bytes_since(b, received);
        const uint64_t now = nic_now_ns(b);
        if (got > received && now > t_poll) {
            /* q/4 transfers at the rate since the last poll, at most twice the last wait,
             * 64 ns .. 10 us */
            const double t = (double)f->q * f->size / 4 * (double)(now - t_poll) /
                             (double)(got - received);
            const double cap = 2.0 * (double)wait_ns;
            const double x = t < cap ? t : cap;
            wait_ns = x < 64 ? 64 : x > 10000 ? 10000 : (uint64_t)x;
        }
        t_poll = now;
        const bool progress = got != received;
        received = got;
        for (; filled < received / f->size + f->q && filled < last; filled++)
            nic_pattern_fill(slot(r, f, filled), f->size, slot_seed(f, filled));
        if (last == UINT64_MAX && received >= (f->reps - f->q) * f->size) {
            nic_dma_set_loop(b, NIC_DMA_READER, false);
            /* At most the q queued run after the switch. */
            last = flight_consumed(b, NIC_DMA_READER, f, received / f->size) + f->q;
        }
        if ((rc = flight_check(c, f, progress, &t_prog, received / f->size, "h2c")))
            return rc;
    }
    if (!f->run_ns) {
        rc = wait_msi(c, irq, "h2c: checker interrupt");
        if (rc)
            return rc;
        f->run_ns = nic_now_ns(b) - t0;
    }
    /* Drained: the table empty and every byte the engine read counted. */
    for (f->total = 0;;) {
        if (!f->total && nic_dma_level(b, NIC_DMA_READER) == 0)
            f->total = flight_consumed(b, NIC_DMA_READER, f, f->reps);
        const uint64_t got = chk_bytes_since(b, received);
        const bool progress = got != received;
        received = got;
        if (f->total && received >= f->total * f->size)
            break;
        if ((rc = flight_check(c, f, progress, &t_prog, received / f->size, "h2c")))
            return rc;
        nic_idle(b, 256);
    }
    const uint64_t got = nic_pattern_chk_bytes(b);
    const uint32_t errors = nic_pattern_chk_errors(b);
    nic_dma_enable(b, NIC_DMA_READER, false);
    if (got != f->total * f->size || errors != 0)
        return fail(c, "h2c %u B inflight %u (seed %#x): checker counted %" PRIu64 " bytes and "
                    "%u mismatching beats, expected %" PRIu64 " bytes and 0%s", f->size, f->q,
                    f->seed, got, errors, f->total * f->size,
                    errors ? " (a slot rewritten too late: the host fell a lap behind the "
                    "reader)" : "");
    return backend_check(c, "h2c transfers");
}

/* c2h slot of transfer j: the pattern's complement over the whole stride (no word already
 * matches; bytes past the transfer stay recognisable). */
static void c2h_sentinel(const struct dma_run *r, const struct flight *f, uint64_t j)
{
    uint32_t *w = (uint32_t *)slot(r, f, j);
    for (size_t i = 0; i < f->stride / 4; i++)
        w[i] = ~nic_pattern_word(slot_seed(f, j), i);
}

/* Transfer j's last 16 bytes hold its pattern: its writes are in place (posted writes arrive
 * in order). */
static bool c2h_landed(const struct dma_run *r, const struct flight *f, uint64_t j)
{
    const volatile uint32_t *w = (const volatile uint32_t *)slot(r, f, j) + f->size / 4 - 4;
    for (size_t k = 0; k < 4; k++)
        if (w[k] != nic_pattern_word(slot_seed(f, j), f->size / 4 - 4 + k))
            return false;
    return true;
}

static int c2h_verify(struct ctx *c, const struct dma_run *r, const struct flight *f, uint64_t j)
{
    size_t first = 0;
    const uint32_t seed = slot_seed(f, j);
    const volatile uint32_t *w = (const volatile uint32_t *)slot(r, f, j);
    const size_t bad = nic_pattern_check(w, f->size, seed, &first);
    if (bad)
        return fail(c, "c2h %u B inflight %u, transfer %" PRIu64 " (seed %#x): %zu of %u words "
                    "differ from the pattern, first at byte %zu: %#010x, expected %#010x",
                    f->size, f->q, j, seed, bad, f->size / 4, first, w[first / 4],
                    nic_pattern_word(seed, first / 4));
    for (size_t i = f->size / 4; i < f->stride / 4 && i < f->size / 4 + 4; i++)
        if (w[i] != ~nic_pattern_word(seed, i))
            return fail(c, "c2h %u B: transfer %" PRIu64 " wrote past its end (byte %zu)",
                        f->size, j, 4 * i);
    return EXIT_OK;
}

static int dma_c2h_flight(struct ctx *c, struct dma_run *r, struct flight *f)
{
    struct nic_backend *b = c->b;
    for (uint64_t j = 0; j < f->q; j++)
        c2h_sentinel(r, f, j);
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    if (nic_dma_writer_drain(b, c->timeout_ns) < 0)
        return fail(c, "c2h: writer buffering FIFO still holds %u bytes",
                    nic_dma_buffering_level(b, NIC_DMA_WRITER));
    flight_table(b, r, f, NIC_DMA_WRITER, NIC_DMA_IRQ_DISABLE | NIC_DMA_LAST_DISABLE);
    nic_pattern_gen_seed(b, f->seed);
    nic_dma_enable(b, NIC_DMA_WRITER, true);

    /* Every cycle the host checks the transfers in order as they land; no MMIO until the
     * reps-th is in place, which ends the timed run. */
    const uint64_t t0 = nic_now_ns(b);
    nic_pattern_gen_enable(b, true);
    uint64_t t_prog = t0;
    for (uint64_t j = 0; j < f->reps;) {
        bool progress = false;
        for (; j < f->reps && c2h_landed(r, f, j); j++) {
            const int rc = c2h_verify(c, r, f, j);
            if (rc)
                return rc;
            c2h_sentinel(r, f, j + f->q);
            progress = true;
        }
        if (j == f->reps) {
            f->run_ns = nic_now_ns(b) - t0;
            break;
        }
        const int rc = flight_check(c, f, progress, &t_prog, j, "c2h");
        if (rc)
            return rc;
        nic_idle(b, 8);
    }
    f->total = f->reps;
    nic_pattern_gen_enable(b, false);
    nic_dma_stop(b, NIC_DMA_WRITER);
    /* The writes the engine made after the run land before the next run's sentinels: its
     * FSM idle, then a read, whose completion follows them. */
    const uint64_t t_stop = nic_now_ns(b);
    while (!nic_dma_idle(b, NIC_DMA_WRITER))
        if (nic_now_ns(b) - t_stop > c->timeout_ns)
            return fail(c, "c2h: the writer did not stop within %" PRIu64 " ns", c->timeout_ns);
    (void)nic_dma_level(b, NIC_DMA_WRITER);
    return backend_check(c, "c2h transfers");
}

/* --- bandwidth: one size, one direction, one queue depth --------------------------------------- */

struct dma_cfg {
    int mps, mrrs;                  /* link (backend params) */
    int dev_mps, dev_mrrs;          /* what the device uses */
};

/* Descriptors queued for --inflight N at this size: N, for h2c at least H2C_MIN_LAP of data,
 * at most the table's depth and the slots the buffer holds; 1 (one at a time) when it holds
 * one slot only. */
static uint32_t flight_depth(enum dir d, uint32_t size, uint64_t inflight, size_t cap,
                             bool pages)
{
    const uint64_t nslots = cap / slot_stride(size, pages);
    uint64_t q = inflight;
    if (q <= 1 || nslots < 2)
        return 1;
    if (d == H2C && q * size < H2C_MIN_LAP)
        q = bu_ceil_div(H2C_MIN_LAP, size);
    if (q > DMA_TABLE_DEPTH)
        q = DMA_TABLE_DEPTH;
    return (uint32_t)(q < nslots ? q : nslots);
}

/* One table row: `inflight` from flight_depth(). */
static int dma_size(struct ctx *c, struct dma_run *r, enum dir d, uint32_t size, uint32_t inflight,
                    uint64_t min_bytes, const struct dma_cfg *cfg)
{
    struct nic_backend *b = c->b;
    uint64_t reps, time_ns, run_ns = 0;
    struct bu_dist dist = {0};
    struct flight f = {.size = size, .stride = slot_stride(size, r->pages), .q = inflight};
    const bool hw_queue = inflight > 1;
    if (!hw_queue) {
        const uint64_t reps64 = bu_ceil_div(min_bytes, size);
        reps = reps64 > 3 ? reps64 : 3;
        uint64_t *t = calloc(reps, sizeof *t);
        if (!t)
            return fail(c, "out of memory");
        int rc = EXIT_OK;
        for (size_t i = 0; i < reps && !rc; i++)
            rc = d == H2C ? dma_h2c_once(c, r, size, &t[i]) : dma_c2h_once(c, r, size, &t[i]);
        if (rc) {
            free(t);
            return rc;
        }
        bu_dist_compute(t, reps, &dist);
        free(t);
        time_ns = dist.median;
    } else {
        reps = bu_ceil_div(min_bytes, size);
        if (reps < 2ull * f.q)
            reps = 2ull * f.q;
        f.reps = reps;
        f.seed = r->seed++;
        const int rc = d == H2C ? dma_h2c_flight(c, r, &f) : dma_c2h_flight(c, r, &f);
        if (rc)
            return rc;
        run_ns = f.run_ns;
        time_ns = (run_ns + reps / 2) / reps;
    }

    const double ns = hw_queue ? (double)run_ns / (double)reps : (double)time_ns;
    const double gbps = ns > 0 ? (double)size * 8.0 / ns : NAN;
    const double mbps = ns > 0 ? (double)size * 1e3 / ns : NAN;
    const double tps = ns > 0 ? 1e9 / ns : NAN;
    char name[64];
    snprintf(name, sizeof name, "model_limit_%s_kbps:%u", dir_name[d], size);
    uint64_t kbps = 0;
    const bool have_limit = counter(c, name, &kbps) && kbps > 0;
    const double limit = have_limit ? (double)kbps / 1e6 : NAN;
    const double ratio = have_limit ? gbps / limit : NAN;

    char sz[24], lim[24], rat[24];
    snprintf(sz, sizeof sz, "%u", size);
    if (have_limit) {
        snprintf(lim, sizeof lim, "%.3f", limit);
        snprintf(rat, sizeof rat, "%.3f", ratio);
    } else {
        snprintf(lim, sizeof lim, "n/a");
        snprintf(rat, sizeof rat, "n/a");
    }
    out(c, "%10s %5u %4s %5d %5d %6u %7" PRIu64 " %10" PRIu64 " %8.3f %9.2f %8.3f %10s %6s\n",
        sz, r->off, dir_name[d], cfg->mps, cfg->mrrs, inflight, reps, time_ns, gbps, mbps,
        tps / 1e6, lim, rat);
    fflush(stdout);

    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "dma");
    bu_json_kstr(&c->rec, "mode", "bandwidth");
    bu_json_kstr(&c->rec, "dir", dir_name[d]);
    bu_json_ku64(&c->rec, "size", size);
    bu_json_ku64(&c->rec, "offset", r->off);
    bu_json_ku64(&c->rec, "inflight", inflight);
    json_opt_u64(&c->rec, "mps", cfg->mps >= 0, (uint64_t)cfg->mps);
    json_opt_u64(&c->rec, "mrrs", cfg->mrrs >= 0, (uint64_t)cfg->mrrs);
    json_opt_u64(&c->rec, "dev_mps", cfg->dev_mps >= 0, (uint64_t)cfg->dev_mps);
    json_opt_u64(&c->rec, "dev_mrrs", cfg->dev_mrrs >= 0, (uint64_t)cfg->dev_mrrs);
    bu_json_ku64(&c->rec, "reps", reps);
    bu_json_ku64(&c->rec, "time_ns", time_ns);
    json_opt_u64(&c->rec, "time_min_ns", !hw_queue, dist.min);
    json_opt_u64(&c->rec, "time_max_ns", !hw_queue, dist.max);
    json_opt_u64(&c->rec, "run_ns", hw_queue, run_ns);
    json_opt_u64(&c->rec, "transfers_run", hw_queue, f.total);
    bu_json_kdouble(&c->rec, "gbps", gbps);
    bu_json_kdouble(&c->rec, "mbps", mbps);
    bu_json_kdouble(&c->rec, "tps", tps);
    json_opt_double(&c->rec, "limit_gbps", have_limit, limit);
    json_opt_double(&c->rec, "ratio", have_limit, ratio);
    bu_json_kstr(&c->rec, "clock", b->kind);
    bu_json_obj_end(&c->rec);
    return EXIT_OK;
}

/* --- latency of single DMA reads (--latency) --------------------------------------------------- */

/* Read i of the model's PHY read timings (model_read_*:I counters): 0 or -1. */
static int read_timing(struct ctx *c, uint64_t i, uint64_t *start, uint64_t *end,
                       uint64_t *bytes)
{
    char n[64];
    snprintf(n, sizeof n, "model_read_start_ps:%" PRIu64, i);
    if (!counter(c, n, start))
        return -1;
    snprintf(n, sizeof n, "model_read_end_ps:%" PRIu64, i);
    if (!counter(c, n, end))
        return -1;
    snprintf(n, sizeof n, "model_read_bytes:%" PRIu64, i);
    return counter(c, n, bytes) ? 0 : -1;
}

/* `count` h2c transfers of `size` bytes, one at a time (dma_h2c_once: checker-verified); each
 * read's latency from the model's PHY timestamps: its first MRd's first beat leaving the device
 * to the last beat of its last completion taken by the device. */
static int dma_latency(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t count,
                       const struct dma_cfg *cfg)
{
    uint64_t n0;
    const bool have = counter(c, "model.reads_timed", &n0);
    uint64_t *lat = have ? calloc(count, sizeof *lat) : NULL;
    if (have && !lat)
        return fail(c, "out of memory");
    uint64_t reqs = 0;
    for (uint64_t i = 0; have && i < count; i++) {
        uint64_t t, n1;
        int rc = dma_h2c_once(c, r, size, &t);
        if (!rc && !counter(c, "model.reads_timed", &n1))
            rc = fail(c, "latency: counter model.reads_timed disappeared");
        uint64_t first = UINT64_MAX, last = 0, bytes = 0;
        for (uint64_t k = n0; !rc && k < n1; k++) {
            uint64_t s, e, nb;
            if (read_timing(c, k, &s, &e, &nb) < 0) {
                rc = fail(c, "latency: the model no longer holds read %" PRIu64, k);
                break;
            }
            first = s < first ? s : first;
            last = e > last ? e : last;
            bytes += nb;
        }
        if (!rc && bytes != size)
            rc = fail(c, "latency %u B: the model timed %" PRIu64 " device reads of %" PRIu64
                      " bytes in all for this transfer, expected %u bytes", size, n1 - n0, bytes,
                      size);
        if (rc) {
            free(lat);
            return rc;
        }
        lat[i] = (last - first + 500) / 1000;
        reqs = n1 - n0;
        n0 = n1;
    }
    struct bu_dist dist = {0};
    if (have)
        bu_dist_compute(lat, count, &dist);
    free(lat);

    if (have)
        out(c, "%10u %5u %4s %5d %5d %6" PRIu64 " %4" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9"
            PRIu64 " %9" PRIu64 " %9.1f\n", size, r->off, "h2c", cfg->mps, cfg->mrrs, count,
            reqs, dist.min, dist.median, dist.p99, dist.max, dist.mean);
    else
        out(c, "%10u %5u %4s %5d %5d %6s %4s %9s %9s %9s %9s %9s\n", size, r->off, "h2c",
            cfg->mps, cfg->mrrs, "0", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a");
    fflush(stdout);

    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "dma_latency");
    bu_json_kstr(&c->rec, "mode", "latency");
    bu_json_kstr(&c->rec, "dir", "h2c");
    bu_json_ku64(&c->rec, "size", size);
    bu_json_ku64(&c->rec, "offset", r->off);
    json_opt_u64(&c->rec, "mps", cfg->mps >= 0, (uint64_t)cfg->mps);
    json_opt_u64(&c->rec, "mrrs", cfg->mrrs >= 0, (uint64_t)cfg->mrrs);
    json_opt_u64(&c->rec, "dev_mps", cfg->dev_mps >= 0, (uint64_t)cfg->dev_mps);
    json_opt_u64(&c->rec, "dev_mrrs", cfg->dev_mrrs >= 0, (uint64_t)cfg->dev_mrrs);
    bu_json_ku64(&c->rec, "count", have ? count : 0);
    json_opt_u64(&c->rec, "requests", have, reqs);
    json_opt_u64(&c->rec, "lat_min_ns", have, dist.min);
    json_opt_u64(&c->rec, "lat_median_ns", have, dist.median);
    json_opt_u64(&c->rec, "lat_p99_ns", have, dist.p99);
    json_opt_u64(&c->rec, "lat_max_ns", have, dist.max);
    json_opt_double(&c->rec, "lat_mean_ns", have, dist.mean);
    bu_json_kstr(&c->rec, "clock", have ? "sim" : "n/a");
    bu_json_obj_end(&c->rec);
    return EXIT_OK;
}

/* --- one backend configuration ----------------------------------------------------------------- */

struct dma_args {
    bool dirs[2];
    uint64_t sizes[MAX_SIZES];
    size_t nsizes;
    uint64_t min_bytes;
    uint64_t inflight[MAX_INFLIGHT];
    size_t ninflight;
    bool latency;
    uint64_t count;                 /* --latency: reads per size */
    uint64_t offsets[MAX_OFFSETS];  /* --offset: bytes past the page-aligned buffer */
    size_t noffsets;
    bool pages;                     /* --offset given */
};

static int dma_config(struct ctx *c, const char *opts, const struct dma_args *a)
{
    int rc = open_backend(c, opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    struct dma_cfg cfg = {param_int(b, "mps"), param_int(b, "mrrs"), dev_mps(b), dev_mrrs(b)};
    uint64_t maxsize = 0, maxinflight = 1;
    for (size_t i = 0; i < a->nsizes; i++) {
        char err[256];
        if (a->sizes[i] > nic_dma_max_len() || a->sizes[i] < c->align ||
            nic_dma_desc_check(b, 0, (uint32_t)a->sizes[i], c->align, err, sizeof err) < 0)
            return usage_error("dma: size %" PRIu64 " unusable: a multiple of %u bytes (this "
                               "build's datapath), at least %u, at most %u is needed",
                               a->sizes[i], c->align, c->align, nic_dma_max_len());
        if (a->sizes[i] > maxsize)
            maxsize = a->sizes[i];
    }
    for (size_t i = 0; i < a->noffsets; i++) {
        char err[256];
        if (nic_dma_desc_check(b, a->offsets[i], (uint32_t)maxsize, c->align, err,
                               sizeof err) < 0)
            return usage_error("dma: --offset %" PRIu64 " unusable: a multiple of %u bytes "
                               "(this build's datapath) is needed", a->offsets[i], c->align);
    }
    for (size_t i = 0; i < a->ninflight; i++)
        if (a->inflight[i] > maxinflight)
            maxinflight = a->inflight[i];
    struct dma_run r = {.seed = 0x1000, .pages = a->pages};
    /* The largest size fills the buffer; smaller ones leave room to detect overruns. One huge
     * page holds it up to 2 MiB (the sysfs fallback needs physically contiguous memory). With
     * descriptors kept queued it is at least RING_BYTES of slots. --offset adds a page (one
     * slot more when queued). */
    r.cap = (size_t)maxsize + (a->pages ? DMA_ALIGN_PAGE : 0);
    if (maxinflight > 1) {
        const size_t stride = slot_stride((uint32_t)maxsize, a->pages);
        r.cap = stride > RING_BYTES ? stride : RING_BYTES;
        if (a->pages)
            r.cap += stride;
    }
    r.buf = nic_dma_alloc(b, r.cap, &r.bus);
    if (!r.buf) {
        const char *e = nic_last_error(b);
        return fail(c, "dma: cannot allocate %zu bytes of DMA memory: %s", r.cap, e ? e : "?");
    }
    char err[256];
    if (r.bus % DMA_ALIGN_PAGE || nic_dma_desc_check(b, r.bus, (uint32_t)maxsize, c->align, err,
                                                      sizeof err) < 0)
        return fail(c, "dma: DMA buffer at bus address %#" PRIx64 " unusable: %s", r.bus,
                    r.bus % DMA_ALIGN_PAGE ? "not 4 KiB aligned" : err);

    print_params(c, "params: ");
    out(c, "link MPS %d B, MRRS %d B; the device uses MPS %d B, MRRS %d B; times: %s clock\n",
        cfg.mps, cfg.mrrs, cfg.dev_mps, cfg.dev_mrrs, b->kind);
    uint64_t probe;
    const bool timed = counter(c, "model.reads_timed", &probe);
    if (a->latency && !timed)
        out(c, "note: read latency at the PHY needs the sim backend (the host model's per-read "
            "timestamps); n/a on the %s backend\n", b->kind);
    if (a->latency)
        out(c, "%10s %5s %4s %5s %5s %6s %4s %9s %9s %9s %9s %9s\n", "size_B", "off_B", "dir",
            "mps", "mrrs", "count", "reqs", "min_ns", "median_ns", "p99_ns", "max_ns", "mean_ns");
    else
        out(c, "%10s %5s %4s %5s %5s %6s %7s %10s %8s %9s %8s %10s %6s\n", "size_B", "off_B",
            "dir", "mps", "mrrs", "inflt", "reps", "time_ns", "Gb/s", "MB/s", "Mtr/s",
            "limit_Gb/s", "ratio");

    bu_json_obj_begin(&c->configs);
    bu_json_kstr(&c->configs, "opts", opts);
    json_opt_u64(&c->configs, "mps", cfg.mps >= 0, (uint64_t)cfg.mps);
    json_opt_u64(&c->configs, "mrrs", cfg.mrrs >= 0, (uint64_t)cfg.mrrs);
    json_opt_u64(&c->configs, "dev_mps", cfg.dev_mps >= 0, (uint64_t)cfg.dev_mps);
    json_opt_u64(&c->configs, "dev_mrrs", cfg.dev_mrrs >= 0, (uint64_t)cfg.dev_mrrs);
    bu_json_key(&c->configs, "params");
    bu_json_raw(&c->configs, nic_params_json(b));
    bu_json_obj_end(&c->configs);
    c->nconfigs++;

    if (a->latency) {
        nic_msi_enable(b, nic_msi_bit(nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0)));
        for (size_t i = 0; i < a->nsizes && !rc; i++)
            for (size_t o = 0; o < a->noffsets && !rc; o++) {
                r.off = (uint32_t)a->offsets[o];
                rc = dma_latency(c, &r, (uint32_t)a->sizes[i], timed ? a->count : 0, &cfg);
            }
        nic_msi_enable(b, 0);
    }
    for (int d = 0; d < 2 && !rc && !a->latency; d++) {
        if (!a->dirs[d])
            continue;
        bool small_lap = false;
        for (size_t i = 0; i < a->nsizes; i++)
            for (size_t k = 0; k < a->ninflight; k++)
                small_lap |= a->inflight[k] > 1 && a->inflight[k] * a->sizes[i] < H2C_MIN_LAP;
        if (d == H2C && small_lap)
            out(c, "note: h2c keeps at least %u KiB of descriptors queued (inflt column): the "
                "host rewrites a slot's data one lap ahead of the reader\n", H2C_MIN_LAP >> 10);
        nic_msi_enable(b, d == H2C ? nic_msi_bit(nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0))
                                   : nic_msi_bit(nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1)));
        for (size_t n = 0; n < a->nsizes * a->noffsets && !rc; n++) {
            const uint32_t size = (uint32_t)a->sizes[n / a->noffsets];
            r.off = (uint32_t)a->offsets[n % a->noffsets];
            uint32_t done[MAX_INFLIGHT];
            size_t ndone = 0;
            for (size_t k = 0; k < a->ninflight && !rc; k++) {
                /* Requests that come to the same depth run once. */
                const uint32_t q = flight_depth((enum dir)d, size, a->inflight[k], r.cap - r.off,
                                                r.pages);
                bool seen = false;
                for (size_t j = 0; j < ndone; j++)
                    seen |= done[j] == q;
                if (seen)
                    continue;
                done[ndone++] = q;
                rc = dma_size(c, &r, (enum dir)d, size, q, a->min_bytes, &cfg);
            }
        }
        nic_msi_enable(b, 0);
    }
    if (!rc) {
        quiesce(c);
        nic_dma_free(b, r.buf, r.cap);
        rc = backend_check(c, "dma");
    }
    return rc;
}

/* --offset LIST: bu_parse_list's items, and A..B:S (A, A+S, .. <= B). 0, or -1 with err. */
static int parse_offsets(const char *s, uint64_t *out, size_t max, size_t *n, char *err,
                         size_t errlen)
{
    *n = 0;
    for (const char *p = s; p;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char it[64];
        if (len == 0 || len >= sizeof it)
            return nic_errf(err, errlen, "bad list item in '%s'", s);
        memcpy(it, p, len);
        it[len] = 0;
        p = comma ? comma + 1 : NULL;
        char *dots = strstr(it, ".."), *colon = strchr(it, ':');
        if (!colon) {
            size_t k = 0;
            if (bu_parse_list(it, out + *n, max - *n, &k, err, errlen) < 0)
                return -1;
            *n += k;
            continue;
        }
        uint64_t a, b, step;
        if (!dots || dots > colon)
            return nic_errf(err, errlen, "bad item '%s' (want A..B:STEP)", it);
        *dots = *colon = 0;
        if (bu_parse_u64(it, &a) < 0 || bu_parse_u64(dots + 2, &b) < 0 ||
            bu_parse_u64(colon + 1, &step) < 0 || step == 0 || a > b)
            return nic_errf(err, errlen, "bad range '%s..%s:%s' (want A..B:STEP, A <= B, "
                            "STEP > 0)", it, dots + 2, colon + 1);
        for (uint64_t v = a; v <= b; v += step) {
            if (*n >= max)
                return nic_errf(err, errlen, "list '%s' has more than %zu entries", s, max);
            out[(*n)++] = v;
            if (v > UINT64_MAX - step)
                break;
        }
    }
    return *n ? 0 : nic_errf(err, errlen, "empty list");
}

int cmd_dma(struct ctx *c, int argc, char **argv)
{
    struct dma_args a = {.dirs = {true, true}, .min_bytes = 4u << 20, .count = 1000};
    const char *sizes_s = NULL, *mps_s = NULL, *mrrs_s = NULL, *inflight_s = NULL,
               *offset_s = NULL;
    bool dir_given = false, count_given = false;
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},       {"sizes", required_argument, NULL, 's'},
        {"min-bytes", required_argument, NULL, 'b'}, {"inflight", required_argument, NULL, 'i'},
        {"latency", no_argument, NULL, 'l'},         {"count", required_argument, NULL, 'c'},
        {"mps", required_argument, NULL, 'p'},       {"mrrs", required_argument, NULL, 'r'},
        {"offset", required_argument, NULL, 'o'},    {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("dma", argc, argv, opts)) != -1) {
        int rc;
        switch (o) {
        case 'd':
            dir_given = true;
            if (strcmp(optarg, "h2c") == 0)
                a.dirs[H2C] = true, a.dirs[C2H] = false;
            else if (strcmp(optarg, "c2h") == 0)
                a.dirs[H2C] = false, a.dirs[C2H] = true;
            else if (strcmp(optarg, "both") == 0)
                a.dirs[H2C] = a.dirs[C2H] = true;
            else
                return usage_error("--dir: '%s' is not h2c, c2h or both", optarg);
            break;
        case 's':
            sizes_s = optarg;
            break;
        case 'b':
            if ((rc = cli_parse_num("--min-bytes", optarg, &a.min_bytes)))
                return rc;
            break;
        case 'i':
            inflight_s = optarg;
            break;
        case 'l':
            a.latency = true;
            break;
        case 'c':
            if ((rc = cli_parse_range("--count", optarg, &a.count, 1, 1000000)))
                return rc;
            count_given = true;
            break;
        case 'p':
            mps_s = optarg;
            break;
        case 'r':
            mrrs_s = optarg;
            break;
        case 'o':
            offset_s = optarg;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    uint64_t mps[MAX_PAIRS], mrrs[MAX_PAIRS];
    size_t nmps = 0, nmrrs = 0;
    char err[256];
    if (!sizes_s)
        sizes_s = a.latency ? LAT_SIZES : "256..2M";
    if (bu_parse_list(sizes_s, a.sizes, MAX_SIZES, &a.nsizes, err, sizeof err) < 0)
        return usage_error("--sizes: %s", err);
    for (size_t i = 0; i < a.nsizes; i++)
        if (a.sizes[i] > UINT32_MAX || a.sizes[i] < 16 || a.sizes[i] % 8)
            return usage_error("--sizes: %" PRIu64 " is not a DMA length (a multiple of the "
                               "datapath width, 8 or 16 B, from 16 B)", a.sizes[i]);
    if (a.latency) {
        if (inflight_s)
            return usage_error("dma: --latency times one read at a time; --inflight is for "
                               "bandwidth runs");
        if (dir_given && (a.dirs[C2H] || !a.dirs[H2C]))
            return usage_error("dma: --latency times DMA reads: --dir h2c only");
        a.dirs[H2C] = true, a.dirs[C2H] = false;
    } else if (count_given) {
        return usage_error("dma: --count is the number of reads of --latency");
    }
    if (!inflight_s) {
        a.inflight[0] = 1;
        a.ninflight = 1;
    } else {
        if (bu_parse_list(inflight_s, a.inflight, MAX_INFLIGHT, &a.ninflight, err, sizeof err) < 0)
            return usage_error("--inflight: %s", err);
        for (size_t i = 0; i < a.ninflight; i++) {
            const int rc = cli_range("--inflight", a.inflight[i], 1, DMA_TABLE_DEPTH,
                                     " (the descriptor table's depth)");
            if (rc)
                return rc;
        }
        for (size_t i = 0; i < a.ninflight; i++)
            if (a.inflight[i] > 1 && a.min_bytes > (1ull << 31))
                return usage_error("--min-bytes: at most 2G with --inflight above 1 (the "
                                   "checker's byte target is 32 bits)");
    }
    a.pages = offset_s != NULL;
    if (!offset_s) {
        a.noffsets = 1;             /* offset 0 */
    } else {
        if (parse_offsets(offset_s, a.offsets, MAX_OFFSETS, &a.noffsets, err, sizeof err) < 0)
            return usage_error("--offset: %s", err);
        for (size_t i = 0; i < a.noffsets; i++)
            if (a.offsets[i] >= DMA_ALIGN_PAGE || a.offsets[i] % 8)
                return usage_error("--offset: %" PRIu64 " is not a buffer offset (a multiple "
                                   "of the datapath width, 8 or 16 B, below %u)", a.offsets[i],
                                   DMA_ALIGN_PAGE);
    }
    if (mps_s && bu_parse_list(mps_s, mps, MAX_PAIRS, &nmps, err, sizeof err) < 0)
        return usage_error("--mps: %s", err);
    if (mrrs_s && bu_parse_list(mrrs_s, mrrs, MAX_PAIRS, &nmrrs, err, sizeof err) < 0)
        return usage_error("--mrrs: %s", err);

    const bool sweep = mps_s || mrrs_s;
    if (!sweep || strcmp(c->kind, "sim") != 0) {
        if (sweep)
            out(c, "note: on the %s backend MPS and MRRS are fixed by the platform (see "
                "params mps/mrrs); running once instead of the requested sweep\n", c->kind);
        return dma_config(c, c->opts, &a);
    }
    /* A missing list keeps the backend's own value for that parameter. */
    const size_t np = nmps ? nmps : 1, nr = nmrrs ? nmrrs : 1;
    for (size_t i = 0; i < np; i++) {
        for (size_t k = 0; k < nr; k++) {
            char o1[1024], o2[1024], val[32];
            snprintf(o1, sizeof o1, "%s", c->opts);
            if (nmps) {
                snprintf(val, sizeof val, "%" PRIu64, mps[i]);
                if (bu_opts_set(c->opts, "mps", val, o1, sizeof o1) < 0)
                    return usage_error("--opts too long");
            }
            snprintf(o2, sizeof o2, "%s", o1);
            if (nmrrs) {
                snprintf(val, sizeof val, "%" PRIu64, mrrs[k]);
                if (bu_opts_set(o1, "mrrs", val, o2, sizeof o2) < 0)
                    return usage_error("--opts too long");
            }
            out(c, "%s--- backend options: %s\n", i + k ? "\n" : "", o2);
            const int rc = dma_config(c, o2, &a);
            if (rc)
                return rc;
            close_backend(c);
        }
    }
    return EXIT_OK;
}
