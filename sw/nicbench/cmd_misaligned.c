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
 * ring, buffer and guard byte around them) unchanged. Options: the usage text in main.c. The
 * pieces: cmd_misaligned.h.
 */
#define _GNU_SOURCE
#include "cmd_misaligned.h"

#include <endian.h>

#include "nicscope_lib.h"

static const uint32_t nic_offsets[] = {0, 1, 2, 3, 4, 8, 12};
static const uint32_t stream_offsets[] = {0, 1, 4, 8, 16, 64, 2048};

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

/* What a case did: the refusal count and status bit before and after (have: the device has
 * them), the TLPs, frames, RX descriptor reads, stream entries and RX drops it made, and the
 * bytes of the area it changed outside what it may write. */
struct case_obs {
    bool have, refused_now;
    uint64_t cnt0, cnt1;
    bool bit0, bit1;
    uint64_t mrd, mwr, frames, rx_reads, prod, drops;
    size_t nchanged, first;
};

/* `kind` programmed `off` bytes past its aligned place, the rest aligned, and started; what the
 * case may write: [*lo, *hi) of the area. */
static void case_program(struct nic_backend *b, const struct area *a, enum kind k, uint32_t off,
                         size_t *lo, size_t *hi)
{
    const uint64_t tx_ring = mis_bus_at(a, P_TXRING, 0), wb = mis_bus_at(a, P_WB, WB_AT);
    const uint64_t rx_ring = mis_bus_at(a, P_RXRING, 0), rx_cpl = mis_bus_at(a, P_RXCPL, 0);
    switch (k) {
    case K_TX_BASE:
    case K_TX_WB:
        mis_tx_program(b, tx_ring + (k == K_TX_BASE ? off : 0), wb + (k == K_TX_WB ? off : 0));
        mis_tx_send_one(b);
        if (!off) {
            *lo = P_WB * 4096u + WB_AT;
            *hi = *lo + NIC_TX_WB_BYTES;
        }
        break;
    case K_RX_RING:
    case K_RX_CPL:
        mis_rx_program(b, rx_ring + (k == K_RX_RING ? off : 0), rx_cpl + (k == K_RX_CPL ? off : 0));
        nic_core_rx_enable(nic_hw(b), mis_nic_off(b), true);
        nic_core_wr32(nic_hw(b), mis_nic_off(b) + NIC_CSR_NIC_RXE_DB_ADDR,
                      NIC_Q_FIELD(NIC_CSR_NIC_RXE_DB_INDEX, 1));
        break;
    default:
        nic_csr_write_wide(b, NIC_CSR(b, ANALYZER, STREAM_BASE),
                           NIC_CSR_ANALYZER_STREAM_BASE_SIZE, mis_bus_at(a, P_STREAM, off));
        nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_SIZE_LOG2), STREAM_LOG2);
        nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_CONS), 0);
        mis_stream_set(b, true);
        if (!off) {
            *lo = P_STREAM * 4096u;
            *hi = *lo + ((size_t)NICSCOPE_STREAM_ENTRY_BYTES << STREAM_LOG2);
        }
        break;
    }
}

/* The case run: the counts before, the address programmed, RUN_NS, the refusal, the queue or
 * stream stopped, the counts after; for an RX address then one frame from TX queue 0 (aligned)
 * through the MAC loopback: a refused ring drops it and writes nothing; at offset 0 it lands
 * in buffer 0, its record at slot 0. */
static int case_run(struct ctx *c, struct area *a, enum kind k, uint32_t off, size_t *lo,
                    size_t *hi, struct case_obs *o)
{
    struct nic_backend *b = c->b;
    uint64_t mrd0 = 0, mwr0 = 0, mrd1 = 0, mwr1 = 0, v;
    o->have = mis_refusal(c, k, &o->cnt0, &o->bit0);
    counter(c, "model.tlps_up_mrd", &mrd0);
    counter(c, "model.tlps_up_mwr", &mwr0);
    uint64_t frames0 = 0, reads0 = 0, drops0 = 0;
    mis_nic_reg(b, "txe_frames", &frames0);
    mis_nic_reg(b, "rxe_desc_reads", &reads0);
    mis_nic_reg(b, "rxe_drop_no_buffer", &drops0);
    case_program(b, a, k, off, lo, hi);
    nic_idle(b, RUN_NS);
    o->refused_now = o->have && mis_refusal(c, k, &o->cnt1, &o->bit1) &&
                     o->cnt1 - o->cnt0 == 1 && o->bit1;
    if (k == K_STREAM)
        o->prod = nic_read32(b, NIC_CSR(b, ANALYZER, STREAM_PROD));
    int rc = k <= K_TX_WB ? mis_tx_stop(c) : k == K_STREAM ? mis_stream_stop(c) : EXIT_OK;
    if (rc)
        return rc;
    counter(c, "model.tlps_up_mrd", &mrd1);
    counter(c, "model.tlps_up_mwr", &mwr1);
    o->mrd = mrd1 - mrd0;
    o->mwr = mwr1 - mwr0;
    mis_nic_reg(b, "txe_frames", &v);
    o->frames = v - frames0;
    mis_nic_reg(b, "rxe_desc_reads", &v);
    o->rx_reads = v - reads0;
    if (k == K_RX_RING || k == K_RX_CPL) {
        mis_tx_program(b, mis_bus_at(a, P_TXRING, 0), mis_bus_at(a, P_WB, WB_AT));
        mis_tx_send_one(b);
        nic_idle(b, RUN_NS);
        if ((rc = mis_tx_stop(c)) || (rc = mis_rx_stop(c)))
            return rc;
        mis_nic_reg(b, "rxe_drop_no_buffer", &v);
        o->drops = v - drops0;
    }
    return backend_check(c, "misaligned");
}

/* The bytes the case changed that it may not: outside [lo, hi); for an RX address the TX
 * writeback slot changes in any case, at offset 0 also the buffer and the record. */
static void case_changed(const struct area *a, enum kind k, uint32_t off, size_t lo,
                         size_t hi, struct case_obs *o)
{
    o->first = 0;
    if (k != K_RX_RING && k != K_RX_CPL) {
        o->nchanged = changed(a, lo, hi, &o->first);
        return;
    }
    o->nchanged = 0;
    for (size_t i = 0; i < MIS_AREA; i++) {
        const bool txwb = i >= P_WB * 4096u + WB_AT && i < P_WB * 4096u + WB_AT + 16u;
        const bool rxbuf = !off && i >= P_RXBUF * 4096u && i < P_RXBUF * 4096u + FRAME_LEN;
        const bool rec = !off && i >= P_RXCPL * 4096u && i < P_RXCPL * 4096u + 16u;
        if (!txwb && !rxbuf && !rec && a->mem[i] != a->before[i] && !o->nchanged++)
            o->first = i;
    }
}

/* A refused address (off > 0): no TLP, no frame, nothing written, the looped frame dropped,
 * the refusal counted and flagged. */
static void why_refused(enum kind k, const struct case_obs *o, char *why, size_t len)
{
    if (o->mrd || o->mwr)
        snprintf(why, len, "%" PRIu64 " MRd and %" PRIu64 " MWr TLPs (%zu bytes of the DMA "
                 "area written)", o->mrd, o->mwr, o->nchanged);
    else if (o->frames || o->rx_reads || o->prod)
        snprintf(why, len, "%" PRIu64 " frames sent, %" PRIu64 " RX descriptor reads, %" PRIu64
                 " entries streamed", o->frames, o->rx_reads, o->prod);
    else if (o->nchanged)
        snprintf(why, len, "%zu bytes of the DMA area written, the first at page %zu + %#zx",
                 o->nchanged, o->first / 4096u, o->first % 4096u);
    else if ((k == K_RX_RING || k == K_RX_CPL) && o->drops != 1)
        snprintf(why, len, "the looped frame not dropped (rx_drop_no_buffer +%" PRIu64 ")",
                 o->drops);
    else if (!o->have)
        snprintf(why, len, "the device has no %s counter / status: not refused in hardware",
                 k == K_STREAM ? "stream_refused" : mis_kind_counter[k]);
    else if (!o->refused_now)
        snprintf(why, len, "not refused: counter +%" PRIu64 ", status bit %d", o->cnt1 - o->cnt0,
                 o->bit1);
}

/* An aligned address (off 0): not refused, and its traffic made. */
static void why_aligned(enum kind k, const struct case_obs *o, char *why, size_t len)
{
    if (o->have && (o->cnt1 != o->cnt0 || o->bit1))
        snprintf(why, len, "aligned, yet refused (counter +%" PRIu64 ", bit %d)",
                 o->cnt1 - o->cnt0, o->bit1);
    else if (k <= K_TX_WB && (o->frames != 1 || !o->mrd || !o->mwr))
        snprintf(why, len, "aligned: %" PRIu64 " frames sent, %" PRIu64 " MRd, %" PRIu64 " MWr",
                 o->frames, o->mrd, o->mwr);
    else if ((k == K_RX_RING || k == K_RX_CPL) && (!o->rx_reads || !o->mrd || o->mwr))
        snprintf(why, len, "aligned: %" PRIu64 " RX descriptor reads, %" PRIu64 " MRd, %" PRIu64
                 " MWr before any frame", o->rx_reads, o->mrd, o->mwr);
    else if (k == K_STREAM && (!o->prod || !o->mwr))
        snprintf(why, len, "aligned: %" PRIu64 " entries streamed in %" PRIu64 " MWr", o->prod,
                 o->mwr);
}

/* What is wrong with the case (why[0] 0: nothing): its traffic, the bytes it changed, and at
 * offset 0 the writeback or the looped frame and its record. */
static void case_verdict(const struct area *a, enum kind k, uint32_t off,
                         const struct case_obs *o, char *why, size_t len)
{
    why[0] = 0;
    if (off)
        why_refused(k, o, why, len);
    else
        why_aligned(k, o, why, len);
    if (!why[0] && o->nchanged)
        snprintf(why, len, "%zu bytes of the DMA area written that %s, the first at page %zu + "
                 "%#zx", o->nchanged, off ? "a refused address must leave alone"
                 : "the case does not write", o->first / 4096u, o->first % 4096u);
    if (!why[0] && !off && k <= K_TX_WB) {
        const struct nic_tx_wb *w = (const struct nic_tx_wb *)(a->mem + P_WB * 4096u + WB_AT);
        if (le16toh(w->cons) != 1)
            snprintf(why, len, "aligned: the writeback's cons is %u, not 1", le16toh(w->cons));
    }
    if (!why[0] && !off && (k == K_RX_RING || k == K_RX_CPL)) {
        const struct nic_rx_cpl *r = (const struct nic_rx_cpl *)(a->mem + P_RXCPL * 4096u);
        if (r->status != NIC_RX_STATUS_OK || le16toh(r->len) != FRAME_LEN ||
            memcmp(a->mem + P_RXBUF * 4096u, a->before + P_TXBUF * 4096u, FRAME_LEN))
            snprintf(why, len, "aligned: the looped frame not in RX buffer 0 (record status %u, "
                     "len %u)", r->status, le16toh(r->len));
    }
}

/* The case's row, its failure line and its JSON record. */
static void case_record(struct ctx *c, enum kind k, uint32_t off, const struct case_obs *o,
                        const char *why)
{
    const char *result = why[0] ? "BAD" : off ? "refused" : "moved";
    if (why[0])
        fprintf(stderr, "nicbench: misaligned %s +%u: %s\n", mis_kind_names[k], off, why);
    out(c, "%-22s %6u %9" PRIu64 " %6d %5" PRIu64 " %5" PRIu64 " %8zu %8s\n", mis_kind_names[k],
        off, o->cnt1 - o->cnt0, o->bit1, o->mrd, o->mwr, o->nchanged, result);
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "misaligned");
    bu_json_kstr(&c->rec, "address", mis_kind_names[k]);
    bu_json_ku64(&c->rec, "offset", off);
    bu_json_ku64(&c->rec, "refused_count", o->cnt1 - o->cnt0);
    bu_json_key(&c->rec, "status_bit");
    bu_json_bool(&c->rec, o->bit1);
    bu_json_ku64(&c->rec, "mrd_tlps", o->mrd);
    bu_json_ku64(&c->rec, "mwr_tlps", o->mwr);
    bu_json_ku64(&c->rec, "bytes_changed", o->nchanged);
    bu_json_kstr(&c->rec, "result", why[0] ? "bad" : result);
    if (why[0])
        bu_json_kstr(&c->rec, "why", why);
    bu_json_obj_end(&c->rec);
}

/* One case: `kind` programmed `off` bytes past its aligned place; the rest aligned. */
static int one_case(struct ctx *c, struct area *a, enum kind k, uint32_t off, unsigned *bad)
{
    memcpy(a->mem, a->before, MIS_AREA);
    struct case_obs o = {0};
    size_t lo = 0, hi = 0;
    int rc = case_run(c, a, k, off, &lo, &hi, &o);
    if (rc)
        return rc;
    case_changed(a, k, off, lo, hi, &o);
    char why[256];
    case_verdict(a, k, off, &o, why, sizeof why);
    *bad += why[0] != 0;
    case_record(c, k, off, &o, why);
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
    td[0] = (struct nic_tx_desc){.addr = htole64(mis_bus_at(&a, P_TXBUF, 0)),
                                 .len = htole16(FRAME_LEN),
                                 .flags = htole16(NIC_TX_DESC_FLAGS_EOP)};
    struct nic_rx_desc *rd = (struct nic_rx_desc *)(a.mem + P_RXRING * 4096u);
    rd[0] = (struct nic_rx_desc){.addr = htole64(mis_bus_at(&a, P_RXBUF, 0)),
                                 .len = htole16(RXBUF_LEN)};
    memcpy(a.before, a.mem, MIS_AREA);

    nic_core_fifos(nic_hw(b), mis_nic_off(b), RXBUF_LEN);
    nic_core_sched(nic_hw(b), mis_nic_off(b), 0, nic_q_hw_txq(b));
    if ((rc = mis_tx_stop(c)) || (rc = mis_rx_stop(c)))
        return rc;
    const bool stream = NICSCOPE_HAS_STREAM && nic_rb_find(b, NIC_RB_ANALYZER);
    if (stream && (rc = mis_stream_stop(c)))
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
        if (d[i].kind != NIC_QC_ERROR || !mis_nic_reg(b, d[i].name, &v) || !v)
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
    mis_tx_program(b, mis_bus_at(&a, P_TXRING, 0), mis_bus_at(&a, P_WB, WB_AT));
    mis_rx_program(b, mis_bus_at(&a, P_RXRING, 0), mis_bus_at(&a, P_RXCPL, 0));
    nic_idle(b, 1000);
    quiesce(c);
    nic_dma_free(b, a.mem, MIS_AREA);
    free(a.before);
    out(c, "misaligned: %u cases, %u bad%s\n", n, bad, stream ? "" : " (no deep capture built)");
    if (bad)
        return fail(c, "misaligned: %u cases neither moved exactly nor refused cleanly", bad);
    return backend_check(c, "misaligned");
}
