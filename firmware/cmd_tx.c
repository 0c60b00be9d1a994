// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_tx.c: `tx FRAMES SIZE [INFLIGHT [nocheck]]`: the TX/RX benchmark through the MAC
 * loopback. FRAMES frames of SIZE bytes go out on TX queue 0 with at most INFLIGHT (default
 * FW_RING - 1) posted and not yet received, one doorbell per batch posted; each comes back on
 * the RX ring and is checked (sequence number, then every byte against its TX buffer, which
 * holds it until the frame is back as INFLIGHT < FW_RING; unless nocheck). Time: the cycle
 * counter from the first doorbell to the last frame taken. Prints nicbench tx's JSON record
 * (experiment, mode, size, queues, ring, rx_ring, batch, inflight, frames, bytes, wire_bytes,
 * time_ns, mbps, mpps, line_mpps, line_ratio) with the losses (lost, bad, out_of_order), the
 * CPU's cycles per frame and the interrupt events seen (rx_irqs, tx_irqs: nic_irq's pending
 * bits polled once per loop, so events between two polls count once, as one CPU interrupt
 * would take them; the coalescing settings decide how many there are).
 */
#include <string.h>

#include "fw.h"

#define LINE_BPS 1000000000ull      /* the MAC's line rate */

/* a and b 4-byte aligned: the first len bytes equal (words, then the tail). */
static bool same(const uint8_t *a, const uint8_t *b, unsigned len)
{
    const uint32_t *wa = (const uint32_t *)a, *wb = (const uint32_t *)b;
    for (unsigned i = 0; i < len / 4; i++)
        if (wa[i] != wb[i])
            return false;
    for (unsigned i = len & ~3u; i < len; i++)
        if (a[i] != b[i])
            return false;
    return true;
}

static unsigned wire_bytes(unsigned len)
{
    /* preamble + SFD, the frame padded to 60, FCS, inter-frame gap */
    return 8u + (len < 60u ? 60u : len) + 4u + 12u;
}

int cmd_tx(int argc, char **argv)
{
    uint32_t frames, size, inflight = FW_RING - 1;
    bool full_check = true;
    if (argc < 3 || !fw_parse_u32(argv[1], &frames) || !fw_parse_u32(argv[2], &size) ||
        (argc > 3 && !fw_parse_u32(argv[3], &inflight)) ||
        (argc > 4 && strcmp(argv[4], "nocheck") != 0)) {
        con_puts("error: usage: tx FRAMES SIZE [INFLIGHT [nocheck]]\n");
        return -1;
    }
    full_check = argc <= 4;
    if (frames == 0 || size < 60 || size > FW_FRAME_MAX || inflight == 0 ||
        inflight > FW_RING - 1) {
        con_printf("error: tx: FRAMES >= 1, SIZE 60..%u, INFLIGHT 1..%u\n", FW_FRAME_MAX,
                   FW_RING - 1);
        return -1;
    }
    struct fw_nic *n = &fw_nic;
    if (fw_nic_open(n) < 0)
        return -1;
    struct nic_txq *t = &n->tx[0];
    /* Every slot's buffer once: only the sequence number changes per frame. */
    for (unsigned s = 0; s < FW_RING; s++)
        fw_frame_fill(t->buf + (size_t)s * FW_BUF_STRIDE, size, s);

    uint32_t sent = 0, got = 0, bad = 0, ooo = 0, expect = 0, rx_irqs = 0, tx_irqs = 0;
    uint64_t batches = 0;
    fw_nic_irq_take(n);
    const uint64_t t0 = fw_cycles();
    uint64_t last = t0, idle_since = t0;
    const uint64_t stall_limit = fw_clk_hz() / 10;          /* 100 ms without progress */
    while (got < frames) {
        unsigned posted = 0;
        while (sent < frames && sent - got < inflight && nic_core_tx_room(t) > 0) {
            const unsigned slot = t->next_to_use;
            uint8_t *buf = t->buf + (size_t)slot * FW_BUF_STRIDE;
            memcpy(buf + 14, &sent, 4);
            fw_nic_tx_post(n, 0, buf, size);
            sent++;
            posted++;
        }
        if (posted) {
            fw_nic_tx_doorbell(n, 0);
            batches++;
        }
        fw_nic_tx_reclaim(n, 0);
        struct nic_core_rx_rec rec;
        const uint8_t *data;
        bool progress = false;
        while (fw_nic_rx_take(n, &rec, &data)) {
            progress = true;
            uint32_t seq;
            memcpy(&seq, data + 14, 4);
            if (rec.status != NIC_RX_STATUS_OK || rec.len != size)
                bad++;
            else if (seq != expect)
                ooo++;
            else if (full_check && !same(data, t->buf + (size_t)(seq % FW_RING) * FW_BUF_STRIDE,
                                         size))
                bad++;
            expect = seq + 1;
            got++;
        }
        fw_nic_rx_refill(n);
        const uint32_t irqs = fw_nic_irq_take(n);
        rx_irqs += irqs & 1u;
        tx_irqs += (irqs >> 1) != 0;
        const uint64_t now = fw_cycles();
        if (progress) {
            last = now;
            idle_since = now;
        } else if (now - idle_since > stall_limit) {
            break;
        }
    }
    const uint64_t cycles = last - t0;
    const uint64_t ns = fw_cycles_to_ns(cycles);
    const uint64_t bytes = (uint64_t)got * size;
    const uint64_t wire = (uint64_t)got * wire_bytes(size);
    json_begin();
    json_str("experiment", "tx");
    json_str("mode", "stream");
    json_str("backend", "soc-bus");
    json_u64("run", 0);
    json_u64("size", size);
    json_u64("size_max", size);
    json_u64("queues", 1);
    json_u64("ring", FW_RING);
    json_u64("rx_ring", FW_RING);
    json_u64("batch", FW_RING - 1);
    json_u64("inflight", inflight);
    json_u64("frames", got);
    json_u64("bytes", bytes);
    json_u64("wire_bytes", wire);
    json_u64("time_ns", ns);
    json_u64("cycles", cycles);
    json_fix("mbps", bytes * 1000, ns, 3);
    json_fix("mpps", (uint64_t)got * 1000, ns, 6);
    json_fix("line_mpps", LINE_BPS, 8ull * wire_bytes(size) * 1000000ull, 6);
    json_fix("line_ratio", (uint64_t)got * 8ull * wire_bytes(size) * 1000000000ull,
             ns * LINE_BPS, 4);
    json_u64("doorbells", batches);
    json_fix("cycles_per_frame", cycles, got, 1);
    json_u64("sent", sent);
    json_u64("lost", frames - got);
    json_u64("bad", bad);
    json_u64("out_of_order", ooo);
    json_u64("checked", full_check);
    json_u64("rx_irqs", rx_irqs);
    json_u64("tx_irqs", tx_irqs);
    json_end();
    if (got != frames || bad || ooo) {
        con_printf("error: tx: %lu of %lu frames back, %lu bad, %lu out of order\n",
                   (unsigned long)got, (unsigned long)frames, (unsigned long)bad,
                   (unsigned long)ooo);
        return -1;
    }
    return 0;
}
