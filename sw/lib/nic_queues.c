// SPDX-License-Identifier: BSD-2-Clause
/*
 * nic_queues.c: the NIC datapath driver (see nic_queues.h): TX rings with consumer-index
 * writebacks, the RX ring with its completion ring, doorbells, coalescing, counters.
 *
 * Interfaces: nic_queues.h. Ring state, descriptors, doorbells, queue set-up, coalescing values
 * and the counter table are the shared datapath core's (sw/core/nic_core.c, also compiled into
 * the Linux module); this file owns the DMA block, copy buffers, waits and messages. Every
 * register is the nic block's base plus its NIC_CSR_NIC_* offset of nic_regs.h; strobe CSRs take
 * their fields at its field offsets (NIC_Q_FIELD, nic_core.h).
 * The protocol (set-up order, doorbells, reposting on completion records) is that of the cores'
 * header comments (rtl/nic/nic_datapath.py, tx_queue_manager.py, tx_engine.py, rx_engine.py,
 * frame_fifo.py, irq_coalescer.py); nicmodels/nic_driver.py mirrors this file for
 * the testbenches.
 *
 * Parameters: none beyond struct nic_q_config; the coalescing tick is 1 us, i.e.
 * INFO_CLK_FREQ / 10^6 cycles.
 */
#include "nic_queues.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nic_dev.h"

static uint32_t nic_base(struct nic_backend *b) { return (uint32_t)nic_rb_base(b, NIC_RB_NIC); }


/* --- the counter table: every read-only nic_* register (nic_contract.h) ---------------------- */

#define counter_defs nic_core_counter_defs

const struct nic_q_counter_def *nic_q_counter_defs(size_t *n)
{
    *n = nic_core_ncounters;
    return counter_defs;
}

int nic_q_counter_index(const char *name)
{
    for (size_t i = 0; i < nic_core_ncounters; i++)
        if (strcmp(counter_defs[i].name, name) == 0)
            return (int)i;
    return -1;
}

int nic_q_tx_queue_stats(struct nic_backend *b, unsigned q, uint32_t *frames, uint32_t *bytes,
                         char *err, size_t errlen)
{
    /* One wide CSR per counter, queue i at bits 32i..32i+31. */
    if (q >= nic_q_hw_txq(b))
        return nic_errf(err, errlen, "queue %u out of range (%u TX queues)", q, nic_q_hw_txq(b));
    *frames = nic_csr_read_elem(b, NIC_CSR(b, NIC, TXE_Q_FRAMES), NIC_CSR_NIC_TXE_Q_FRAMES_SIZE, q);
    *bytes = nic_csr_read_elem(b, NIC_CSR(b, NIC, TXE_Q_BYTES), NIC_CSR_NIC_TXE_Q_BYTES_SIZE, q);
    return 0;
}

uint32_t nic_q_tx_queue_errors(struct nic_backend *b, unsigned q)
{
    return nic_core_txq_errors(nic_hw(b), nic_base(b), q);
}

unsigned nic_q_hw_txq(struct nic_backend *b) { return nic_rb_param(b, NIC_RB_NIC); }

unsigned nic_q_hw_txirq(struct nic_backend *b) { return nic_rb_msi_count(b, NIC_RB_NIC) - 1; }

unsigned nic_q_rx_msi(struct nic_backend *b) { return nic_rb_msi(b, NIC_RB_NIC, 0); }

unsigned nic_q_tx_vector_msi(struct nic_backend *b, unsigned g)
{
    return nic_rb_msi(b, NIC_RB_NIC, 1 + g);
}

int nic_q_tx_vector_irqs(struct nic_backend *b, unsigned g, uint32_t *irqs, char *err,
                         size_t errlen)
{
    /* One wide CSR, vector g at bits 32g..32g+31. */
    if (g >= NIC_CSR_NIC_TXIRQ_VEC_IRQS_SIZE || g >= nic_q_hw_txirq(b))
        return nic_errf(err, errlen, "TX vector %u out of range (%u TX vectors)", g,
                        nic_q_hw_txirq(b));
    *irqs = nic_csr_read_elem(b, NIC_CSR(b, NIC, TXIRQ_VEC_IRQS), NIC_CSR_NIC_TXIRQ_VEC_IRQS_SIZE,
                              g);
    return 0;
}

int nic_q_counters_read(struct nic_backend *b, uint64_t *v, size_t n, char *err, size_t errlen)
{
    const size_t want = nic_core_ncounters;
    if (n < want)
        return nic_errf(err, errlen, "counters: room for %zu values, the table has %zu", n,
                        want);
    nic_core_counters_read(nic_hw(b), nic_base(b), v);
    return 0;
}

uint64_t nic_q_counter_delta(const struct nic_q_counter_def *d, uint64_t before, uint64_t after)
{
    if (d->kind == NIC_QC_STATE)
        return after;
    const unsigned bits = 32u * d->words;
    const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    return (after - before) & mask;
}

/* --- register helpers ------------------------------------------------------------------------ */

static void txq_cfg(struct nic_backend *b, unsigned q, unsigned size_log2, bool enable,
                    unsigned limit)
{
    nic_core_txq_cfg(nic_hw(b), nic_base(b), q, size_log2, enable, limit);
}

static int wait_drained(struct nic_backend *b, unsigned q, uint64_t timeout_ns, char *err,
                        size_t errlen)
{
    const uint64_t deadline = nic_now_ns(b) + timeout_ns;
    while (!nic_core_txq_drained(nic_hw(b), nic_base(b), q)) {
        if (nic_now_ns(b) > deadline)
            return nic_errf(err, errlen, "TX queue %u did not drain within %llu ns "
                            "(nic_txq_drained bit %u stays 0: descriptors still in flight, or "
                            "the queue is live with another ring size)", q,
                            (unsigned long long)timeout_ns, q);
        nic_idle(b, 200);
    }
    return 0;
}

static unsigned log2u(unsigned v)
{
    unsigned l = 0;
    while ((1u << l) < v)
        l++;
    return l;
}

static bool pow2(unsigned v) { return v && !(v & (v - 1)); }

static size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static bool buf_offsets(const struct nic_q_config *c)
{
    return c->buf_offset || c->buf_offset_random;
}

/* Bytes between consecutive buffers: the frame rounded up to 64 B (16 B alignment is what the
 * RX engine needs; 64 keeps buffers on cache lines); with buffer offsets, whole pages holding
 * the frame (rounded up to 4 B, the RX writes) at any offset. */
static size_t buf_stride(const struct nic_q_config *c)
{
    return buf_offsets(c) ? align_up(align_up(c->buf_size, 4) + 4095, 4096)
                          : align_up(c->buf_size, 64);
}

/* splitmix64 (Vigna): the offsets of buf_offset_random. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The offset in its slot of the next TX frame or RX buffer. */
static uint32_t next_offset(struct nic_queues *nq)
{
    return nq->cfg.buf_offset_random ? (uint32_t)(next_rand(&nq->rng) % 4096)
                                     : nq->cfg.buf_offset;
}

static uint16_t rx_offset(struct nic_queues *nq)
{
    return (uint16_t)(next_offset(nq) / NIC_Q_RX_BUF_ALIGN * NIC_Q_RX_BUF_ALIGN);
}

static void rx_post_desc(struct nic_queues *nq, unsigned p)
{
    struct nic_rxq *r = &nq->rx;
    /* The RX engine writes whole DWORDs (rtl/nic/rx_engine.py): the buffer it is told about
     * holds the largest frame rounded up to 4 bytes (the stride leaves room for it). */
    nic_core_rx_desc(r, p, r->buf_bus + (uint64_t)p * nq->stride + r->off[p],
                     (uint32_t)align_up(nq->cfg.buf_size, 4));
}

/* --- open / close ---------------------------------------------------------------------------- */

static int check_config(struct nic_backend *b, const struct nic_q_config *c, char *err,
                        size_t errlen)
{
    if (c->ntxq < 1 || c->ntxq > nic_q_hw_txq(b))
        return nic_errf(err, errlen, "TX queues: %u is out of range 1..%u (the TX queues of "
                        "this SoC's nic block)", c->ntxq, nic_q_hw_txq(b));
    if (!pow2(c->tx_ring) || c->tx_ring < 2 || c->tx_ring > NIC_Q_RING_MAX)
        return nic_errf(err, errlen, "TX ring size %u: must be a power of two 2..%u", c->tx_ring,
                        NIC_Q_RING_MAX);
    if (!pow2(c->rx_ring) || c->rx_ring < 2 || c->rx_ring > NIC_Q_RING_MAX)
        return nic_errf(err, errlen, "RX ring size %u: must be a power of two 2..%u", c->rx_ring,
                        NIC_Q_RING_MAX);
    if (c->tx_limit > NIC_Q_RING_MAX)
        return nic_errf(err, errlen, "TX in-flight limit %u: must be 1..%u (0: ring size - 1)",
                        c->tx_limit, NIC_Q_RING_MAX);
    if (c->buf_size < NIC_Q_FRAME_MIN || c->buf_size > NIC_Q_FRAME_MAX)
        return nic_errf(err, errlen, "buffer size %u: must be %u..%u bytes (the largest frame, "
                        "without FCS)", c->buf_size, NIC_Q_FRAME_MIN, NIC_Q_FRAME_MAX);
    if (c->buf_offset > 4095)
        return nic_errf(err, errlen, "buffer offset %u: must be 0..4095 (bytes into a page)",
                        c->buf_offset);
    if (c->sched_mode > NIC_TX_SCHED_MODE_WRR)
        return nic_errf(err, errlen, "scheduler mode %u: 0 round-robin, 1 strict priority, 2 "
                        "weighted round-robin", c->sched_mode);
    return 0;
}

/* Disables the RX engine and waits until it has reset its ring (nic_rxe_cons 0). */
static int rx_disable_wait(struct nic_backend *b, uint64_t timeout_ns, char *err, size_t errlen)
{
    nic_core_rx_enable(nic_hw(b), nic_base(b), false);
    const uint64_t deadline = nic_now_ns(b) + timeout_ns;
    nic_idle(b, 100);
    while (nic_core_rx_cons(nic_hw(b), nic_base(b)) != 0) {
        if (nic_now_ns(b) > deadline)
            return nic_errf(err, errlen, "the RX engine did not reset its ring (nic_rxe_cons "
                            "stays %u with nic_rxe_enable 0) within %llu ns",
                            nic_core_rx_cons(nic_hw(b), nic_base(b)),
                            (unsigned long long)timeout_ns);
        nic_idle(b, 200);
    }
    return 0;
}

int nic_q_open(struct nic_queues *nq, struct nic_backend *b, const struct nic_q_config *cfg,
               uint64_t timeout_ns, char *err, size_t errlen)
{
    memset(nq, 0, sizeof *nq);
    nq->b = b;
    if (nic_rb_require(b, NIC_RB_NIC, err, errlen) < 0 || check_config(b, cfg, err, errlen) < 0)
        return -1;
    nq->nic_base = nic_rb_base(b, NIC_RB_NIC);
    nq->tick_cycles = nic_read32(b, NIC_CSR_INFO_CLK_FREQ_ADDR) / 1000000u;
    nq->cfg = *cfg;
    if (nq->cfg.tx_limit == 0)
        nq->cfg.tx_limit = cfg->tx_ring - 1;
    nq->rng = cfg->buf_offset_seed;
    const size_t stride = nq->stride = buf_stride(cfg);

    /* One DMA block: writeback slots (64 B apart), then per TX queue its ring and buffers, then
     * the RX ring, completion ring and buffers, each region 4 KiB aligned. */
    size_t off = align_up(64u * cfg->ntxq, 4096);
    size_t tx_desc_off[NIC_Q_MAX_TXQ], tx_buf_off[NIC_Q_MAX_TXQ];
    for (unsigned q = 0; q < cfg->ntxq; q++) {
        tx_desc_off[q] = off;
        off += align_up((size_t)cfg->tx_ring * sizeof(struct nic_tx_desc), 4096);
        tx_buf_off[q] = off;
        off += align_up((size_t)cfg->tx_ring * stride, 4096);
    }
    const size_t rx_desc_off = off;
    off += align_up((size_t)cfg->rx_ring * sizeof(struct nic_rx_desc), 4096);
    const size_t rx_cpl_off = off;
    off += align_up((size_t)cfg->rx_ring * sizeof(struct nic_rx_cpl), 4096);
    const size_t rx_buf_off = off;
    off += align_up((size_t)cfg->rx_ring * stride, 4096);

    uint64_t bus;
    uint8_t *mem = nic_dma_alloc(b, off, &bus);
    if (!mem) {
        const char *e = nic_last_error(b);
        return nic_errf(err, errlen, "cannot allocate %zu bytes of DMA memory for %u TX rings of "
                        "%u and an RX ring of %u buffers of %zu bytes: %s", off, cfg->ntxq,
                        cfg->tx_ring, cfg->rx_ring, stride, e ? e : "dma_alloc failed");
    }
    nq->mem = mem;
    nq->mem_size = off;
    if (bus % (buf_offsets(cfg) ? 4096 : 16))
        return nic_errf(err, errlen, "DMA memory at %#llx is not %u-byte aligned",
                        (unsigned long long)bus, buf_offsets(cfg) ? 4096 : 16);
    nq->rx.off = calloc(cfg->rx_ring, sizeof *nq->rx.off);
    if (!nq->rx.off)
        return nic_errf(err, errlen, "out of memory");

    /* Frame FIFOs: TX takes whatever the engine builds (its max_frame), RX what a buffer holds. */
    nic_core_fifos(nic_hw(b), nic_base(b), cfg->buf_size);

    struct nic_q_coalesce co;
    nic_q_coalesce_defaults(&co);
    if (nic_q_coalesce_set(nq, &co, err, errlen) < 0)
        return -1;

    /* Scheduler: the mode, every queue at priority 0 with weight 1. */
    nic_core_sched(nic_hw(b), nic_base(b), cfg->sched_mode, nic_q_hw_txq(b));

    /* TX queues: disable (a drained queue is reset by it), wait drained, ring base and
     * writeback address, then enable (the reset that starts the ring at 0). */
    /* The block's counter at its offset in the nic block (counter_defs[].addr is relative). */
    const uint32_t err_cfg_at = NIC_CSR(b, NIC, TXQ_ERR_CFG);
    const uint32_t err_cfg0 = nic_read32(b, err_cfg_at);
    /* Addresses the device refused (not 16-byte aligned; nic_core_txq_start refuses them
     * first, so these count only what another agent wrote). */
    const uint32_t err_base0 = nic_read32(b, NIC_CSR(b, NIC, TXE_ERR_BASE));
    const uint32_t err_wb0 = nic_read32(b, NIC_CSR(b, NIC, TXQ_ERR_WB_ADDR));
    for (unsigned q = 0; q < cfg->ntxq; q++) {
        struct nic_txq *t = &nq->tx[q];
        t->size = cfg->tx_ring;
        t->size_log2 = log2u(cfg->tx_ring);
        t->limit = nq->cfg.tx_limit;
        t->desc = (struct nic_tx_desc *)(mem + tx_desc_off[q]);
        t->desc_bus = bus + tx_desc_off[q];
        t->buf = mem + tx_buf_off[q];
        t->buf_bus = bus + tx_buf_off[q];
        t->wb = (struct nic_tx_wb *)(mem + 64u * q);
        t->wb_bus = bus + 64u * q;
        txq_cfg(b, q, t->size_log2, false, t->limit);
        if (wait_drained(b, q, timeout_ns, err, errlen) < 0)
            return -1;
        if (nic_core_txq_start(nic_hw(b), nic_base(b), t, q) < 0)
            return nic_errf(err, errlen, "TX queue %u: ring at %#llx or writeback at %#llx is "
                            "not 16-byte aligned", q, (unsigned long long)t->desc_bus,
                            (unsigned long long)t->wb_bus);
    }
    const uint32_t err_cfg1 = nic_read32(b, err_cfg_at);
    if (err_cfg1 != err_cfg0)
        return nic_errf(err, errlen, "the device refused a TX queue configuration write "
                        "(nic_txq_err_cfg %u -> %u)", err_cfg0, err_cfg1);
    const uint32_t err_base1 = nic_read32(b, NIC_CSR(b, NIC, TXE_ERR_BASE));
    const uint32_t err_wb1 = nic_read32(b, NIC_CSR(b, NIC, TXQ_ERR_WB_ADDR));
    if (err_base1 != err_base0 || err_wb1 != err_wb0)
        return nic_errf(err, errlen, "the device refused a TX ring base or writeback address "
                        "(nic_txe_err_base %u -> %u, nic_txq_err_wb_addr %u -> %u)", err_base0,
                        err_base1, err_wb0, err_wb1);

    /* RX: disable (the engine resets its ring when idle), wait for cons 0, configure, post
     * every buffer but one (a ring holds S - 1), enable, one doorbell. */
    struct nic_rxq *r = &nq->rx;
    r->size = cfg->rx_ring;
    r->size_log2 = log2u(cfg->rx_ring);
    r->desc = (struct nic_rx_desc *)(mem + rx_desc_off);
    r->desc_bus = bus + rx_desc_off;
    r->cpl = (struct nic_rx_cpl *)(mem + rx_cpl_off);
    r->cpl_bus = bus + rx_cpl_off;
    r->buf = mem + rx_buf_off;
    r->buf_bus = bus + rx_buf_off;
    if (!nic_core_addr_ok(r->desc_bus) || !nic_core_addr_ok(r->cpl_bus))
        return nic_errf(err, errlen, "RX ring at %#llx or completion ring at %#llx is not "
                        "16-byte aligned", (unsigned long long)r->desc_bus,
                        (unsigned long long)r->cpl_bus);
    int rc = rx_disable_wait(b, timeout_ns, err, errlen);
    if (rc)
        return rc;
    nic_q_rx_restart(nq);
    const uint32_t rx_bad = nic_read32(b, NIC_CSR(b, NIC, RXE_BASE_BAD));
    if (rx_bad)
        return nic_errf(err, errlen, "the device holds the RX ring disabled: nic_rxe_base_bad "
                        "%#x (ring or completion base not 16-byte aligned)", rx_bad);
    nq->open = true;
    return 0;
}

int nic_q_close(struct nic_queues *nq, uint64_t timeout_ns, char *err, size_t errlen)
{
    int rc = 0;
    struct nic_backend *b = nq->b;
    if (nq->open) {
        for (unsigned q = 0; q < nq->cfg.ntxq; q++) {
            txq_cfg(b, q, nq->tx[q].size_log2, false, nq->tx[q].limit);
            if (rc == 0 && wait_drained(b, q, timeout_ns, err, errlen) < 0)
                rc = -1;
        }
        nic_core_rx_enable(nic_hw(b), nic_base(b), false);
        nq->open = false;
    }
    if (nq->mem)
        nic_dma_free(b, nq->mem, nq->mem_size);
    nq->mem = NULL;
    free(nq->rx.off);
    nq->rx.off = NULL;
    return rc;
}

/* --- the reset path (docs/faults.md) ----------------------------------------------------------- */

bool nic_q_tx_sync(struct nic_queues *nq, unsigned q)
{
    return nic_core_txq_sync_cons(nic_hw(nq->b), nic_base(nq->b), &nq->tx[q], q);
}

int nic_q_tx_reset(struct nic_queues *nq, unsigned q, uint64_t timeout_ns, unsigned *dropped,
                   char *err, size_t errlen)
{
    if (!nq->open || q >= nq->cfg.ntxq)
        return nic_errf(err, errlen, "TX queue %u: out of range 0..%u", q, nq->cfg.ntxq - 1);
    struct nic_backend *b = nq->b;
    struct nic_txq *t = &nq->tx[q];
    txq_cfg(b, q, t->size_log2, false, t->limit);
    if (wait_drained(b, q, timeout_ns, err, errlen) < 0)
        return -1;
    /* Drained: the final consumer index, read from the device (its last writeback may have
     * been lost with the link); what it did not pass was dropped. */
    nic_core_txq_sync_cons(nic_hw(b), nic_base(b), t, q);
    uint32_t cons;
    if (nic_core_tx_reclaim(t, &cons) < 0)
        return nic_errf(err, errlen, "TX queue %u: the device's consumer index %u "
                        "(nic_txq_cons) is beyond what was posted (%u)", q, cons,
                        t->next_to_use);
    if (dropped)
        *dropped = nic_core_tx_pending(t);
    if (nic_core_txq_start(nic_hw(b), nic_base(b), t, q) < 0)
        return nic_errf(err, errlen, "TX queue %u: ring at %#llx or writeback at %#llx is not "
                        "16-byte aligned", q, (unsigned long long)t->desc_bus,
                        (unsigned long long)t->wb_bus);
    WRITE_ONCE(t->wb->cons, 0);
    return 0;
}

int nic_q_rx_stop(struct nic_queues *nq, uint64_t timeout_ns, char *err, size_t errlen)
{
    if (!nq->open)
        return nic_errf(err, errlen, "RX ring: the queues are not open");
    return rx_disable_wait(nq->b, timeout_ns, err, errlen);
}

void nic_q_rx_restart(struct nic_queues *nq)
{
    struct nic_backend *b = nq->b;
    struct nic_rxq *r = &nq->rx;
    /* The ring's addresses were checked by nic_q_open (nic_core_rx_setup cannot refuse). */
    if (nic_core_rx_setup(nic_hw(b), nic_base(b), r) < 0)
        return;
    for (unsigned p = 0; p < r->size; p++) {
        r->off[p] = rx_offset(nq);
        rx_post_desc(nq, p);
    }
    nic_core_rx_cpl_init(r);
    nic_core_rx_start(nic_hw(b), nic_base(b), r);
}

int nic_q_set_limit(struct nic_queues *nq, unsigned q, unsigned limit, char *err,
                    size_t errlen)
{
    if (!nq->open || q >= nq->cfg.ntxq)
        return nic_errf(err, errlen, "TX queue %u: out of range 0..%u", q, nq->cfg.ntxq - 1);
    if (limit < 1 || limit > NIC_Q_RING_MAX)
        return nic_errf(err, errlen, "TX in-flight limit %u: must be 1..%u", limit,
                        NIC_Q_RING_MAX);
    nq->tx[q].limit = limit;
    txq_cfg(nq->b, q, nq->tx[q].size_log2, true, limit);
    return 0;
}

/* --- hot path -------------------------------------------------------------------------------- */

int nic_q_tx_post(struct nic_queues *nq, unsigned q, const struct nic_q_frame *frames,
                  unsigned n, char *err, size_t errlen)
{
    if (q >= nq->cfg.ntxq)
        return nic_errf(err, errlen, "TX queue %u: out of range 0..%u", q, nq->cfg.ntxq - 1);
    struct nic_txq *t = &nq->tx[q];
    const unsigned room = nic_q_tx_room(nq, q);
    if (n > room)
        n = room;
    if (n == 0)
        return 0;
    const uint32_t start = t->next_to_use;
    for (unsigned i = 0; i < n; i++) {
        const uint32_t len = frames[i].len;
        if (len == 0 || len > nq->cfg.buf_size) {
            t->next_to_use = start;         /* none of the batch posted */
            return nic_errf(err, errlen, "TX frame %u of the batch: %u bytes does not fit a "
                            "buffer (1..%u bytes)", i, len, nq->cfg.buf_size);
        }
        const size_t at = (size_t)t->next_to_use * nq->stride + next_offset(nq);
        memcpy(t->buf + at, frames[i].data, len);
        nic_core_tx_put(t, t->buf_bus + at, len, true);
    }
    t->frames_sent += n;
    return (int)n;
}

void nic_q_tx_doorbell(struct nic_queues *nq, unsigned q)
{
    if (q < nq->cfg.ntxq)
        nic_core_tx_doorbell(nic_hw(nq->b), (uint32_t)nq->nic_base, &nq->tx[q], q);
}

int nic_q_tx_send(struct nic_queues *nq, unsigned q, const struct nic_q_frame *frames,
                  unsigned n, char *err, size_t errlen)
{
    const int m = nic_q_tx_post(nq, q, frames, n, err, errlen);
    if (m > 0)
        nic_q_tx_doorbell(nq, q);
    return m;
}

int nic_q_tx_reclaim(struct nic_queues *nq, unsigned q, char *err, size_t errlen)
{
    if (q >= nq->cfg.ntxq)
        return nic_errf(err, errlen, "TX queue %u: out of range 0..%u", q, nq->cfg.ntxq - 1);
    struct nic_txq *t = &nq->tx[q];
    uint32_t cons;
    const unsigned from = t->next_to_clean;
    const int done = nic_core_tx_reclaim(t, &cons);
    if (done < 0)
        return nic_errf(err, errlen, "TX queue %u: written-back consumer index %u is beyond the "
                        "%u descriptors posted from %u", q, cons, nic_q_tx_pending(nq, q), from);
    return done;
}

int nic_q_rx_poll(struct nic_queues *nq, struct nic_q_rx_frame *out, unsigned max)
{
    struct nic_rxq *r = &nq->rx;
    unsigned n = 0;
    struct nic_core_rx_rec rec;
    while (n < max && nic_core_rx_take(r, &rec)) {
        out[n] = (struct nic_q_rx_frame){
            .data = r->buf + (size_t)rec.index * nq->stride + r->off[rec.index],
            .len = rec.len, .index = rec.index, .status = rec.status,
            .timestamp = rec.timestamp};
        n++;
    }
    return (int)n;
}

int nic_q_rx_refill(struct nic_queues *nq)
{
    struct nic_rxq *r = &nq->rx;
    const unsigned n = r->to_repost;
    if (n == 0)
        return 0;
    /* Random offsets: each buffer reposted at a new one (positions prod .. prod + n - 1 are
     * beyond what the device may fetch until the doorbell). */
    for (unsigned i = 0; i < n && nq->cfg.buf_offset_random; i++) {
        const unsigned p = (r->prod + i) & (r->size - 1);
        r->off[p] = rx_offset(nq);
        rx_post_desc(nq, p);
    }
    nic_core_rx_post(nic_hw(nq->b), (uint32_t)nq->nic_base, r, n);
    return (int)n;
}

/* --- coalescing ------------------------------------------------------------------------------ */


int nic_q_coalesce_set(struct nic_queues *nq, const struct nic_q_coalesce *c, char *err,
                       size_t errlen)
{
    const int bad = nic_core_coalesce_check(c);
    if (bad >= 0) {
        uint32_t v[NIC_CORE_COALESCE_NVALUES];
        nic_core_coalesce_values(c, v);
        return nic_errf(err, errlen, "coalescing %s=%u: out of range 0..65535",
                        nic_core_coalesce_names[bad], v[bad]);
    }
    if (nq->tick_cycles < 1 || nq->tick_cycles > NIC_Q_COALESCE_MAX)
        return nic_errf(err, errlen, "coalescing: %u cycles per us does not fit tick_cycles",
                        nq->tick_cycles);
    nic_core_coalesce_write(nic_hw(nq->b), nic_base(nq->b), c, nq->tick_cycles);
    return 0;
}

int nic_q_coalesce_get(struct nic_queues *nq, struct nic_q_coalesce *c, char *err,
                       size_t errlen)
{
    uint32_t rt, tt;
    if (!nic_core_coalesce_read(nic_hw(nq->b), nic_base(nq->b), c, nq->tick_cycles, &rt, &tt))
        return nic_errf(err, errlen, "coalescing tick is %u (rx) / %u (tx) cycles, not the "
                        "%u of 1 us: times would not be microseconds", rt, tt, nq->tick_cycles);
    return 0;
}

/* --- coalescing settings without a device ---------------------------------------------------- */

void nic_q_coalesce_defaults(struct nic_q_coalesce *c)
{
    nic_core_coalesce_defaults(c);
}

int nic_q_coalesce_parse(const char *s, struct nic_q_coalesce *c, char *err, size_t errlen)
{
    struct {
        const char *name;
        uint32_t *u;
        bool *flag;
    } keys[] = {
        {"rx-usecs", &c->rx_usecs, NULL},         {"rx-frames", &c->rx_frames, NULL},
        {"rx-abs-usecs", &c->rx_abs_usecs, NULL}, {"rx-min-interval", &c->rx_min_interval, NULL},
        {"tx-usecs", &c->tx_usecs, NULL},         {"tx-frames", &c->tx_frames, NULL},
        {"tx-abs-usecs", &c->tx_abs_usecs, NULL}, {"tx-min-interval", &c->tx_min_interval, NULL},
        {"rx-enable", NULL, &c->rx_enable},       {"tx-enable", NULL, &c->tx_enable},
    };
    const char *p = s;
    while (p && *p) {
        const char *end = strchr(p, ',');
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq)
            return nic_errf(err, errlen, "coalescing '%.*s': expected NAME=VALUE", (int)len, p);
        const size_t klen = (size_t)(eq - p);
        size_t k = 0;
        for (; k < sizeof keys / sizeof keys[0]; k++)
            if (strlen(keys[k].name) == klen && strncmp(keys[k].name, p, klen) == 0)
                break;
        if (k == sizeof keys / sizeof keys[0])
            return nic_errf(err, errlen, "coalescing: unknown name '%.*s' (rx-usecs, rx-frames, "
                            "rx-abs-usecs, rx-min-interval, rx-enable, and the same for tx-)",
                            (int)klen, p);
        char num[32];
        const size_t vlen = len - klen - 1;
        if (vlen == 0 || vlen >= sizeof num)
            return nic_errf(err, errlen, "coalescing %s: bad value", keys[k].name);
        memcpy(num, eq + 1, vlen);
        num[vlen] = 0;
        char *e;
        const unsigned long v = strtoul(num, &e, 0);
        if (*e || num[0] == '-' || v > 0xffff || (keys[k].flag && v > 1))
            return nic_errf(err, errlen, "coalescing %s=%s: must be %s", keys[k].name, num,
                            keys[k].flag ? "0 or 1" : "0..65535");
        if (keys[k].u)
            *keys[k].u = (uint32_t)v;
        else
            *keys[k].flag = v != 0;
        p = end ? end + 1 : NULL;
    }
    return 0;
}
