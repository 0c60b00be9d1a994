// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_dma_flight.c: `nicbench dma --inflight N` (cmd_dma.h): descriptors kept queued in the
 * engine's table in loop mode, the slots' data kept one lap ahead of the engine (struct
 * flight).
 */
#define _GNU_SOURCE
#include "cmd_dma.h"

uint32_t slot_stride(uint32_t size, bool pages)
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
int dma_h2c_flight(struct ctx *c, struct dma_run *r, struct flight *f)
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

int dma_c2h_flight(struct ctx *c, struct dma_run *r, struct flight *f)
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
