// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_selftest.c: `selftest`: the identification block (magic, major version, the register
 * blocks the firmware needs, with the layouts nic_regs.h was generated for), the SoC
 * controller's scratch register (patterns written and read back), then DMA and the MAC: the
 * NIC opened on rings in main RAM, frames of several sizes sent through TX queue 0 and
 * received through the MAC loopback, each checked byte for byte, and the DMA adapters' and
 * the MAC's error counters checked to stay 0, and an RX interrupt event (nic_irq) per frame
 * (selftest sets the default coalescing: rx-frames 1). Prints a line per check and a JSON record
 * {"experiment": "selftest", ...}; fails at the first failed check.
 */
#include <stdio.h>
#include <string.h>

#include "fw.h"

static int check(bool ok, const char *what)
{
    con_printf("selftest: %-44s %s\n", what, ok ? "pass" : "FAIL");
    return ok ? 0 : -1;
}

static uint32_t counter(struct fw_nic *n, uint32_t addr)
{
    return fw_nic_rd(n, n->nic_base + addr);
}

static uint8_t frame[FW_FRAME_MAX];

int cmd_selftest(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    struct fw_nic *n = &fw_nic;
    if (fw_nic_discover(n) < 0)
        return -1;
    if (check(n->rb.magic == NIC_ID_MAGIC, "identification: magic") < 0 ||
        check(n->rb.version >> 16 == NIC_ID_VERSION_MAJOR, "identification: major version") < 0)
        goto fail;
    static const uint32_t blocks[] = {NIC_RB_CTRL, NIC_RB_NIC};
    for (unsigned i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
        char what[48];
        snprintf(what, sizeof what, "register block %s: present, layout",
                 nic_core_rb_name(blocks[i]));
        if (check(nic_core_rb_check(&n->rb, blocks[i]) == NIC_CORE_RB_OK, what) < 0)
            goto fail;
    }
    /* This build's analyzer has fewer features than the one nic_regs.h describes (its layout
     * differs); the registers the firmware uses are at the same offsets (ecp5_soc.py checks). */
    if (check(nic_core_rb_lookup(&n->rb, NIC_RB_ANALYZER) != NULL, "register block analyzer: "
              "present") < 0)
        goto fail;
    static const uint32_t patterns[] = {0x00000000u, 0xffffffffu, 0xa5a5a5a5u, 0x5a5a5a5au,
                                        0x12345678u, 0x80000001u};
    bool scratch_ok = true;
    const uint32_t scratch = n->ctrl_base + NIC_CSR_CTRL_SCRATCH_ADDR;
    for (unsigned i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        fw_nic_wr(n, scratch, patterns[i]);
        scratch_ok &= fw_nic_rd(n, scratch) == patterns[i];
    }
    if (check(scratch_ok, "scratch register") < 0)
        goto fail;
    /* One RX interrupt per frame: the default coalescing. */
    nic_core_coalesce_defaults(&n->co);
    n->have_co = true;
    if (check(fw_nic_open(n) == 0, "NIC open: rings in main RAM") < 0)
        goto fail;

    const uint32_t rd0 = counter(n, NIC_CSR_NIC_RDADP_COMPLETIONS_ADDR);
    const uint32_t wr0 = counter(n, NIC_CSR_NIC_WRADP_WRITES_ADDR);
    const uint32_t err0 = counter(n, NIC_CSR_NIC_RDADP_ERRORS_ADDR) +
                          counter(n, NIC_CSR_NIC_RDADP_REJECTED_ADDR) +
                          counter(n, NIC_CSR_NIC_RDADP_TIMEOUTS_ADDR) +
                          counter(n, NIC_CSR_NIC_WRADP_REJECTED_ADDR) +
                          counter(n, NIC_CSR_NIC_MAC_RX_DATAPATH_CRC_ERRORS_ADDR);
    static const unsigned sizes[] = {60, 61, 64, 127, 128, 256, 511, 1000, 1514};
    const unsigned nframes = sizeof sizes / sizeof sizes[0];
    unsigned received = 0, bad = 0, rx_irqs = 0;
    fw_nic_irq_take(n);
    for (unsigned i = 0; i < nframes; i++) {
        fw_frame_fill(frame, sizes[i], i);
        if (!fw_nic_tx_post(n, 0, frame, sizes[i]))
            break;
        fw_nic_tx_doorbell(n, 0);
        const uint64_t end = fw_cycles() + fw_clk_hz() / 100;
        struct nic_core_rx_rec rec;
        const uint8_t *data;
        bool got = false;
        while (!got && fw_cycles() < end)
            got = fw_nic_rx_take(n, &rec, &data);
        fw_nic_tx_reclaim(n, 0);
        if (!got) {
            con_printf("selftest: frame %u (%u bytes): not received within 10 ms\n", i,
                       sizes[i]);
            break;
        }
        received++;
        rx_irqs += fw_nic_irq_take(n) & 1u;
        if (rec.status != NIC_RX_STATUS_OK || rec.len != sizes[i] ||
            !fw_frame_check(data, rec.len, i)) {
            con_printf("selftest: frame %u: status %lu, %lu bytes (sent %u), content %s\n", i,
                       (unsigned long)rec.status, (unsigned long)rec.len, sizes[i],
                       rec.len == sizes[i] && fw_frame_check(data, rec.len, i) ? "ok" : "bad");
            bad++;
        }
        fw_nic_rx_refill(n);
    }
    const uint32_t rd = counter(n, NIC_CSR_NIC_RDADP_COMPLETIONS_ADDR) - rd0;
    const uint32_t wr = counter(n, NIC_CSR_NIC_WRADP_WRITES_ADDR) - wr0;
    const uint32_t errs = counter(n, NIC_CSR_NIC_RDADP_ERRORS_ADDR) +
                          counter(n, NIC_CSR_NIC_RDADP_REJECTED_ADDR) +
                          counter(n, NIC_CSR_NIC_RDADP_TIMEOUTS_ADDR) +
                          counter(n, NIC_CSR_NIC_WRADP_REJECTED_ADDR) +
                          counter(n, NIC_CSR_NIC_MAC_RX_DATAPATH_CRC_ERRORS_ADDR) - err0;
    json_begin();
    json_str("experiment", "selftest");
    json_u64("frames", nframes);
    json_u64("received", received);
    json_u64("bad", bad);
    json_u64("dma_reads", rd);
    json_u64("dma_writes", wr);
    json_u64("errors", errs);
    json_u64("rx_irqs", rx_irqs);
    json_end();
    if (check(rd >= 2 * nframes, "DMA reads from main RAM (descriptors, frames)") < 0 ||
        check(wr >= 2 * nframes, "DMA writes to main RAM (frames, completions)") < 0 ||
        check(errs == 0, "DMA and MAC error counters") < 0 ||
        check(rx_irqs == nframes, "RX interrupt event per frame (rx-frames 1)") < 0 ||
        check(received == nframes && bad == 0, "MAC loopback: every frame back, bit-exact") < 0)
        goto fail;
    con_puts("selftest: PASS\n");
    return 0;
fail:
    con_puts("error: selftest failed\n");
    return -1;
}
