// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_misaligned.c: `nicbench misaligned`, every host address a register of the NIC datapath or
 * the analyzer's deep capture takes, programmed at byte offsets, straight to the registers
 * (what nic_core_txq_start(), nic_core_rx_setup() and nicscope_stream_start() refuse): the TX
 * ring base (txe_base_addr), the TX writeback address (txq_wb_addr), the RX descriptor and
 * completion ring bases (rxe_ring_base, rxe_cpl_base) and the stream's ring base
 * (analyzer_stream_base). Each is either moved exactly (offset 0: the frame sent and written
 * back, the descriptors read, the entries streamed) or refused in hardware: its error counter
 * + 1, its status bit set, no TLP at all in the host model's counts, and the DMA area (every
 * ring, buffer and guard byte around them) unchanged. Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

#include <endian.h>

#include "nicscope_lib.h"

#define MIS_PAGES 12u
#define MIS_AREA (MIS_PAGES * 4096u)
/* One page each, so every offset stays inside its page with guard bytes around it. */
#define P_TXRING 1u
#define P_WB 2u
#define WB_AT 0x40u                      /* the writeback slot's place in its page */
#define P_TXBUF 3u
#define P_RXRING 4u
#define P_RXCPL 5u
#define P_RXBUF 6u
#define P_STREAM 8u
#define RING_LOG2 4u
#define FRAME_LEN 60u
#define RXBUF_LEN 2048u
#define STREAM_LOG2 4u
#define RUN_NS 30000u                    /* each case's run, simulated */

enum kind { K_TX_BASE, K_TX_WB, K_RX_RING, K_RX_CPL, K_STREAM, K_N };
static const char *const kind_names[K_N] = {"txe_base_addr", "txq_wb_addr", "rxe_ring_base",
                                            "rxe_cpl_base", "analyzer_stream_base"};
/* The device's error counter and status register of each (nic block, by name), and the bit. */
static const char *const kind_counter[K_N] = {"txe_err_base", "txq_err_wb_addr", "rxe_err_base",
                                              "rxe_err_base", NULL};
static const char *const kind_status[K_N] = {"txe_base_bad", "txq_wb_bad", "rxe_base_bad",
                                             "rxe_base_bad", NULL};
static const unsigned kind_bit[K_N] = {0, 0, 0, 1, 0};

static const uint32_t nic_offsets[] = {0, 1, 2, 3, 4, 8, 12};
static const uint32_t stream_offsets[] = {0, 1, 4, 8, 16, 64, 2048};

struct area {
    uint8_t *mem, *before;
    uint64_t bus;
};

static uint64_t bus_at(const struct area *a, unsigned page, uint32_t off)
{
    return a->bus + (uint64_t)page * 4096u + off;
}

/* A register of the nic block by its CSR name (the contract's table): false if this build's
 * table has no such register. */
static bool nic_reg(struct nic_backend *b, const char *name, uint64_t *v)
{
    const int i = name ? nic_q_counter_index(name) : -1;
    size_t n;
    const struct nic_q_counter_def *d = nic_q_counter_defs(&n);
    *v = 0;
    if (i < 0)
        return false;
    *v = nic_csr_read_wide(b, nic_rb_base(b, NIC_RB_NIC) + d[i].addr, d[i].words);
    return true;
}

static uint32_t nic_off(struct nic_backend *b) { return (uint32_t)nic_rb_base(b, NIC_RB_NIC); }

static void tx_program(struct nic_backend *b, uint64_t base, uint64_t wb)
{
    struct nic_core_hw *hw = nic_hw(b);
    const uint32_t nb = nic_off(b);
    nic_core_csr_write_wide(hw, nb + NIC_CSR_NIC_TXE_BASE_ADDR_ADDR,
                            NIC_CSR_NIC_TXE_BASE_ADDR_SIZE, base);
    nic_core_wr32(hw, nb + NIC_CSR_NIC_TXE_BASE_ADDR, NIC_Q_FIELD(NIC_CSR_NIC_TXE_BASE_QUEUE, 0));
    nic_core_csr_write_wide(hw, nb + NIC_CSR_NIC_TXQ_WB_ADDR_ADDR, NIC_CSR_NIC_TXQ_WB_ADDR_SIZE,
                            wb);
    nic_core_wr32(hw, nb + NIC_CSR_NIC_TXQ_WB_ADDR_QUEUE_ADDR,
                  NIC_Q_FIELD(NIC_CSR_NIC_TXQ_WB_ADDR_QUEUE_QUEUE, 0));
}

/* TX queue 0 enabled (a reset of a drained queue) and its first descriptor posted. */
static void tx_send_one(struct nic_backend *b)
{
    nic_core_txq_cfg(nic_hw(b), nic_off(b), 0, RING_LOG2, true, (1u << RING_LOG2) - 1);
    nic_core_wr32(nic_hw(b), nic_off(b) + NIC_CSR_NIC_TXQ_DB_ADDR,
                  NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_QUEUE, 0) |
                  NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_INDEX, 1));
}

static int tx_stop(struct ctx *c)
{
    struct nic_backend *b = c->b;
    nic_core_txq_cfg(nic_hw(b), nic_off(b), 0, RING_LOG2, false, (1u << RING_LOG2) - 1);
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    while (!nic_core_txq_drained(nic_hw(b), nic_off(b), 0)) {
        if (nic_now_ns(b) > deadline)
            return fail(c, "misaligned: TX queue 0 does not drain");
        nic_idle(b, 500);
    }
    return EXIT_OK;
}

static int rx_stop(struct ctx *c)
{
    struct nic_backend *b = c->b;
    nic_core_rx_enable(nic_hw(b), nic_off(b), false);
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    while (nic_core_rx_cons(nic_hw(b), nic_off(b)) != 0) {
        if (nic_now_ns(b) > deadline)
            return fail(c, "misaligned: the RX engine does not reset its ring");
        nic_idle(b, 500);
    }
    nic_idle(b, 500);
    return EXIT_OK;
}

static void rx_program(struct nic_backend *b, uint64_t ring, uint64_t cpl)
{
    struct nic_core_hw *hw = nic_hw(b);
    const uint32_t nb = nic_off(b);
    nic_core_csr_write_wide(hw, nb + NIC_CSR_NIC_RXE_RING_BASE_ADDR,
                            NIC_CSR_NIC_RXE_RING_BASE_SIZE, ring);
    nic_core_wr32(hw, nb + NIC_CSR_NIC_RXE_RING_SIZE_LOG2_ADDR, RING_LOG2);
    nic_core_csr_write_wide(hw, nb + NIC_CSR_NIC_RXE_CPL_BASE_ADDR,
                            NIC_CSR_NIC_RXE_CPL_BASE_SIZE, cpl);
}

static void stream_set(struct nic_backend *b, bool on)
{
    nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_CTRL),
                (uint32_t)on << NIC_CSR_ANALYZER_STREAM_CTRL_ENABLE_OFFSET);
}

/* Stop, taking every entry (the ring's slots freed) until the FIFO is empty. */
static int stream_stop(struct ctx *c)
{
    struct nic_backend *b = c->b;
    stream_set(b, false);
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    while (nicscope_stream_busy(b)) {
        if (nic_now_ns(b) > deadline)
            return fail(c, "misaligned: the deep capture stays busy");
        nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_CONS),
                    nic_read32(b, NIC_CSR(b, ANALYZER, STREAM_PROD)));
        nic_idle(b, 500);
    }
    return EXIT_OK;
}

/* The device's refusal count and status bit of a kind (false: this build has none). */
static bool refusal(struct ctx *c, enum kind k, uint64_t *count, bool *bit)
{
    uint64_t st = 0;
    if (k == K_STREAM) {
        uint32_t n;
        if (nicscope_stream_refused(c->b, bit, &n) < 0)
            return false;
        *count = n;
        return true;
    }
    const bool have = nic_reg(c->b, kind_counter[k], count) & nic_reg(c->b, kind_status[k], &st);
    *bit = (st >> kind_bit[k]) & 1;
    return have;
}

/* Bytes of the area that differ from `before` outside [lo, hi) (bus offsets in the area); the
 * first one in *first. */
static size_t changed(const struct area *a, size_t lo, size_t hi, size_t *first)
{
    size_t n = 0;
    for (size_t i = 0; i < MIS_AREA; i++)
        if ((i < lo || i >= hi) && a->mem[i] != a->before[i]) {
            if (!n)
                *first = i;
            n++;
        }
    return n;
}

/* One case: `kind` programmed `off` bytes past its aligned place; the rest aligned. */
static int one_case(struct ctx *c, struct area *a, enum kind k, uint32_t off, unsigned *bad)
{
    struct nic_backend *b = c->b;
    char why[256] = "";
    memcpy(a->mem, a->before, MIS_AREA);
    uint64_t mrd0 = 0, mwr0 = 0, mrd1 = 0, mwr1 = 0, cnt0 = 0, cnt1 = 0, v;
    bool bit0 = false, bit1 = false;
    const bool have = refusal(c, k, &cnt0, &bit0);
    counter(c, "model.tlps_up_mrd", &mrd0);
    counter(c, "model.tlps_up_mwr", &mwr0);
    uint64_t frames0 = 0, reads0 = 0, drops0 = 0, prod = 0;
    nic_reg(b, "txe_frames", &frames0);
    nic_reg(b, "rxe_desc_reads", &reads0);
    nic_reg(b, "rxe_drop_no_buffer", &drops0);
    /* what the case may write: [lo, hi) of the area */
    size_t lo = 0, hi = 0;
    const uint64_t tx_ring = bus_at(a, P_TXRING, 0), wb = bus_at(a, P_WB, WB_AT);
    const uint64_t rx_ring = bus_at(a, P_RXRING, 0), rx_cpl = bus_at(a, P_RXCPL, 0);
    switch (k) {
    case K_TX_BASE:
    case K_TX_WB:
        tx_program(b, tx_ring + (k == K_TX_BASE ? off : 0), wb + (k == K_TX_WB ? off : 0));
        tx_send_one(b);
        if (!off) {
            lo = P_WB * 4096u + WB_AT;
            hi = lo + NIC_TX_WB_BYTES;
        }
        break;
    case K_RX_RING:
    case K_RX_CPL:
        rx_program(b, rx_ring + (k == K_RX_RING ? off : 0), rx_cpl + (k == K_RX_CPL ? off : 0));
        nic_core_rx_enable(nic_hw(b), nic_off(b), true);
        nic_core_wr32(nic_hw(b), nic_off(b) + NIC_CSR_NIC_RXE_DB_ADDR,
                      NIC_Q_FIELD(NIC_CSR_NIC_RXE_DB_INDEX, 1));
        break;
    default:
        nic_csr_write_wide(b, NIC_CSR(b, ANALYZER, STREAM_BASE),
                           NIC_CSR_ANALYZER_STREAM_BASE_SIZE, bus_at(a, P_STREAM, off));
        nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_SIZE_LOG2), STREAM_LOG2);
        nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_CONS), 0);
        stream_set(b, true);
        if (!off) {
            lo = P_STREAM * 4096u;
            hi = lo + ((size_t)NICSCOPE_STREAM_ENTRY_BYTES << STREAM_LOG2);
        }
        break;
    }
    nic_idle(b, RUN_NS);
    const bool refused_now = have && refusal(c, k, &cnt1, &bit1) && cnt1 - cnt0 == 1 && bit1;
    if (k == K_STREAM)
        prod = nic_read32(b, NIC_CSR(b, ANALYZER, STREAM_PROD));
    int rc = k <= K_TX_WB ? tx_stop(c) : k == K_STREAM ? stream_stop(c) : EXIT_OK;
    if (rc)
        return rc;
    counter(c, "model.tlps_up_mrd", &mrd1);
    counter(c, "model.tlps_up_mwr", &mwr1);
    const uint64_t mrd = mrd1 - mrd0, mwr = mwr1 - mwr0;
    nic_reg(b, "txe_frames", &v);
    const uint64_t frames = v - frames0;
    nic_reg(b, "rxe_desc_reads", &v);
    const uint64_t rx_reads = v - reads0;

    /* RX: then one frame from TX queue 0 (aligned) through the MAC loopback. A refused ring
     * drops it and writes nothing; at offset 0 it lands in buffer 0, its record at slot 0. */
    uint64_t drops = 0;
    if (k == K_RX_RING || k == K_RX_CPL) {
        tx_program(b, tx_ring, wb);
        tx_send_one(b);
        nic_idle(b, RUN_NS);
        if ((rc = tx_stop(c)) || (rc = rx_stop(c)))
            return rc;
        nic_reg(b, "rxe_drop_no_buffer", &v);
        drops = v - drops0;
    }
    if ((rc = backend_check(c, "misaligned")))
        return rc;

    size_t first = 0, nchanged;
    if (k == K_RX_RING || k == K_RX_CPL) {
        /* The TX writeback slot changes in any case; at offset 0 the buffer and the record. */
        nchanged = 0;
        for (size_t i = 0; i < MIS_AREA; i++) {
            const bool txwb = i >= P_WB * 4096u + WB_AT && i < P_WB * 4096u + WB_AT + 16u;
            const bool rxbuf = !off && i >= P_RXBUF * 4096u && i < P_RXBUF * 4096u + FRAME_LEN;
            const bool rec = !off && i >= P_RXCPL * 4096u && i < P_RXCPL * 4096u + 16u;
            if (!txwb && !rxbuf && !rec && a->mem[i] != a->before[i] && !nchanged++)
                first = i;
        }
    } else {
        nchanged = changed(a, lo, hi, &first);
    }

    if (off) {
        if (mrd || mwr)
            snprintf(why, sizeof why, "%" PRIu64 " MRd and %" PRIu64 " MWr TLPs (%zu bytes of "
                     "the DMA area written)", mrd, mwr, nchanged);
        else if (frames || rx_reads || prod)
            snprintf(why, sizeof why, "%" PRIu64 " frames sent, %" PRIu64 " RX descriptor "
                     "reads, %" PRIu64 " entries streamed", frames, rx_reads, prod);
        else if (nchanged)
            snprintf(why, sizeof why, "%zu bytes of the DMA area written, the first at page "
                     "%zu + %#zx", nchanged, first / 4096u, first % 4096u);
        else if ((k == K_RX_RING || k == K_RX_CPL) && drops != 1)
            snprintf(why, sizeof why, "the looped frame not dropped (rx_drop_no_buffer +%"
                     PRIu64 ")", drops);
        else if (!have)
            snprintf(why, sizeof why, "the device has no %s counter / status: not refused in "
                     "hardware", k == K_STREAM ? "stream_refused" : kind_counter[k]);
        else if (!refused_now)
            snprintf(why, sizeof why, "not refused: counter +%" PRIu64 ", status bit %d",
                     cnt1 - cnt0, bit1);
    } else {
        if (have && (cnt1 != cnt0 || bit1))
            snprintf(why, sizeof why, "aligned, yet refused (counter +%" PRIu64 ", bit %d)",
                     cnt1 - cnt0, bit1);
        else if (k <= K_TX_WB && (frames != 1 || !mrd || !mwr))
            snprintf(why, sizeof why, "aligned: %" PRIu64 " frames sent, %" PRIu64 " MRd, %"
                     PRIu64 " MWr", frames, mrd, mwr);
        else if ((k == K_RX_RING || k == K_RX_CPL) && (!rx_reads || !mrd || mwr))
            snprintf(why, sizeof why, "aligned: %" PRIu64 " RX descriptor reads, %" PRIu64
                     " MRd, %" PRIu64 " MWr before any frame", rx_reads, mrd, mwr);
        else if (k == K_STREAM && (!prod || !mwr))
            snprintf(why, sizeof why, "aligned: %" PRIu64 " entries streamed in %" PRIu64
                     " MWr", prod, mwr);
    }
    if (!why[0] && nchanged)
        snprintf(why, sizeof why, "%zu bytes of the DMA area written that %s, the first at "
                 "page %zu + %#zx", nchanged, off ? "a refused address must leave alone"
                 : "the case does not write", first / 4096u, first % 4096u);
    if (!why[0] && !off && k <= K_TX_WB) {
        const struct nic_tx_wb *w = (const struct nic_tx_wb *)(a->mem + P_WB * 4096u + WB_AT);
        if (le16toh(w->cons) != 1)
            snprintf(why, sizeof why, "aligned: the writeback's cons is %u, not 1",
                     le16toh(w->cons));
    }
    if (!why[0] && !off && (k == K_RX_RING || k == K_RX_CPL)) {
        const struct nic_rx_cpl *r = (const struct nic_rx_cpl *)(a->mem + P_RXCPL * 4096u);
        if (r->status != NIC_RX_STATUS_OK || le16toh(r->len) != FRAME_LEN ||
            memcmp(a->mem + P_RXBUF * 4096u, a->before + P_TXBUF * 4096u, FRAME_LEN))
            snprintf(why, sizeof why, "aligned: the looped frame not in RX buffer 0 (record "
                     "status %u, len %u)", r->status, le16toh(r->len));
    }
    const char *result = why[0] ? "BAD" : off ? "refused" : "moved";
    if (why[0]) {
        (*bad)++;
        fprintf(stderr, "nicbench: misaligned %s +%u: %s\n", kind_names[k], off, why);
    }
    out(c, "%-22s %6u %9" PRIu64 " %6d %5" PRIu64 " %5" PRIu64 " %8zu %8s\n", kind_names[k], off,
        cnt1 - cnt0, bit1, mrd, mwr, nchanged, result);
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "misaligned");
    bu_json_kstr(&c->rec, "address", kind_names[k]);
    bu_json_ku64(&c->rec, "offset", off);
    bu_json_ku64(&c->rec, "refused_count", cnt1 - cnt0);
    bu_json_key(&c->rec, "status_bit");
    bu_json_bool(&c->rec, bit1);
    bu_json_ku64(&c->rec, "mrd_tlps", mrd);
    bu_json_ku64(&c->rec, "mwr_tlps", mwr);
    bu_json_ku64(&c->rec, "bytes_changed", nchanged);
    bu_json_kstr(&c->rec, "result", why[0] ? "bad" : result);
    if (why[0])
        bu_json_kstr(&c->rec, "why", why);
    bu_json_obj_end(&c->rec);
    return EXIT_OK;
}

int cmd_misaligned(struct ctx *c, int argc, char **argv)
{
    static const struct option opts[] = {{NULL, 0, NULL, 0}};
    if (next_option("misaligned", argc, argv, opts) != -1)
        return EXIT_USAGE;
    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    print_params(c, "params: ");
    struct nic_backend *b = c->b;
    char err[256];
    if (nic_rb_require(b, NIC_RB_NIC, err, sizeof err) < 0)
        return fail(c, "misaligned: %s", err);
    uint64_t v;
    if (!counter(c, "model.tlps_up_mrd", &v))
        return fail(c, "misaligned: needs the sim backend (host model TLP counts)");
    struct area a;
    a.mem = nic_dma_alloc(b, MIS_AREA, &a.bus);
    a.before = malloc(MIS_AREA);
    if (!a.mem || !a.before)
        return fail(c, "misaligned: cannot allocate the DMA area");
    if (a.bus % 4096)
        return fail(c, "misaligned: DMA area not 4 KiB aligned");
    quiesce(c);
    /* Random bytes everywhere; the descriptors and records the aligned cases use. */
    uint64_t rng = bu_rand_seed(0xa11e);
    for (size_t i = 0; i < MIS_AREA; i++)
        a.mem[i] = (uint8_t)bu_rand(&rng);
    struct nic_tx_desc *td = (struct nic_tx_desc *)(a.mem + P_TXRING * 4096u);
    td[0] = (struct nic_tx_desc){.addr = htole64(bus_at(&a, P_TXBUF, 0)),
                                 .len = htole16(FRAME_LEN),
                                 .flags = htole16(NIC_TX_DESC_FLAGS_EOP)};
    struct nic_rx_desc *rd = (struct nic_rx_desc *)(a.mem + P_RXRING * 4096u);
    rd[0] = (struct nic_rx_desc){.addr = htole64(bus_at(&a, P_RXBUF, 0)),
                                 .len = htole16(RXBUF_LEN)};
    memcpy(a.before, a.mem, MIS_AREA);

    nic_core_fifos(nic_hw(b), nic_off(b), RXBUF_LEN);
    nic_core_sched(nic_hw(b), nic_off(b), 0, nic_q_hw_txq(b));
    if ((rc = tx_stop(c)) || (rc = rx_stop(c)))
        return rc;
    const bool stream = NICSCOPE_HAS_STREAM && nic_rb_find(b, NIC_RB_ANALYZER);
    if (stream && (rc = stream_stop(c)))
        return rc;
    out(c, "misaligned: TX ring base and writeback, RX ring and completion bases at +0..12 "
        "bytes, the stream's base at +0..2048 (refused unless 4 KiB aligned)\n");
    out(c, "%-22s %6s %9s %6s %5s %5s %8s %8s\n", "address", "off_B", "refused+", "status",
        "MRd", "MWr", "changed", "result");
    unsigned bad = 0, n = 0;
    for (enum kind k = 0; k < K_N; k++) {
        if (k == K_STREAM && !stream)
            continue;
        const uint32_t *offs = k == K_STREAM ? stream_offsets : nic_offsets;
        const size_t noffs = k == K_STREAM ? sizeof stream_offsets / sizeof *stream_offsets
                                           : sizeof nic_offsets / sizeof *nic_offsets;
        for (size_t i = 0; i < noffs; i++, n++)
            if ((rc = one_case(c, &a, k, offs[i], &bad)))
                return rc;
    }
    /* The device's own account, as `nicbench stats` and `nicscope info` show it: every error
     * counter of the nic block that moved, by its ethtool name, and the streams refused. */
    size_t nd;
    const struct nic_q_counter_def *d = nic_q_counter_defs(&nd);
    out(c, "device error counters (nicbench stats):");
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "misaligned_counters");
    for (size_t i = 0; i < nd; i++) {
        if (d[i].kind != NIC_QC_ERROR || !nic_reg(b, d[i].name, &v) || !v)
            continue;
        out(c, " %s %" PRIu64, d[i].ethtool, v);
        bu_json_ku64(&c->rec, d[i].ethtool, v);
    }
    bool st_refused;
    uint32_t st_count;
    if (stream && nicscope_stream_refused(b, &st_refused, &st_count) == 0) {
        out(c, "; streams refused (nicscope info) %u", st_count);
        bu_json_ku64(&c->rec, "stream_refused", st_count);
    }
    out(c, "\n");
    bu_json_obj_end(&c->rec);
    /* Leave the queues with their aligned addresses (status bits clear). */
    tx_program(b, bus_at(&a, P_TXRING, 0), bus_at(&a, P_WB, WB_AT));
    rx_program(b, bus_at(&a, P_RXRING, 0), bus_at(&a, P_RXCPL, 0));
    nic_idle(b, 1000);
    quiesce(c);
    nic_dma_free(b, a.mem, MIS_AREA);
    free(a.before);
    out(c, "misaligned: %u cases, %u bad%s\n", n, bad, stream ? "" : " (no deep capture built)");
    if (bad)
        return fail(c, "misaligned: %u cases neither moved exactly nor refused cleanly", bad);
    return backend_check(c, "misaligned");
}
