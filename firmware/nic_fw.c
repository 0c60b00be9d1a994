// SPDX-License-Identifier: BSD-2-Clause
/*
 * nic_fw.c: the NIC driver on the on-chip host port. The NIC's registers are on the CPU's CSR
 * bus (the identification block at the CSR region's base, as at BAR0 offset 0 on PCIe); its DMA
 * engines read and write the SoC's main RAM, where the rings and buffers are (section .dma, bus
 * address = CPU address; the CPU has no data cache). The ring, descriptor, doorbell and
 * coalescing logic is sw/core/nic_core.c, the same code the Linux module and sw/lib run.
 * One TX queue (0) and the RX ring, FW_RING descriptors each, a FW_BUF_STRIDE-byte buffer per
 * slot; the cycle counter is timer0's uptime (sys clock cycles). The interrupt vectors are
 * nic_irq's events (the nic block's MSI numbers are their bits); the firmware polls them.
 */
#include <string.h>

#include <generated/csr.h>
#include <generated/soc.h>

#include "fw.h"

struct fw_nic fw_nic;

/* Every ring and buffer, 4 KiB aligned regions as sw/lib lays them out. */
struct fw_dma {
    struct nic_tx_wb wb[4];                                 /* 64 B per queue */
    uint8_t pad0[4096 - 4 * sizeof(struct nic_tx_wb)];
    struct nic_tx_desc tx_desc[FW_NTXQ][FW_RING];
    struct nic_rx_desc rx_desc[FW_RING];
    struct nic_rx_cpl rx_cpl[FW_RING];
    uint8_t tx_buf[FW_NTXQ][FW_RING][FW_BUF_STRIDE];
    uint8_t rx_buf[FW_RING][FW_BUF_STRIDE];
};
static struct fw_dma dma __attribute__((section(".dma"), aligned(4096)));

uint32_t nic_core_rd32(struct nic_core_hw *hw, uint32_t off)
{
    return *(volatile uint32_t *)(hw->base + off);
}

void nic_core_wr32(struct nic_core_hw *hw, uint32_t off, uint32_t v)
{
    *(volatile uint32_t *)(hw->base + off) = v;
}

uint32_t fw_nic_rd(struct fw_nic *n, uint32_t off) { return nic_core_rd32(&n->hw, off); }
void fw_nic_wr(struct fw_nic *n, uint32_t off, uint32_t v) { nic_core_wr32(&n->hw, off, v); }

uint64_t fw_cycles(void)
{
    timer0_uptime_latch_write(1);
    return timer0_uptime_cycles_read();
}

uint32_t fw_clk_hz(void) { return CONFIG_CLOCK_FREQUENCY; }

uint64_t fw_cycles_to_ns(uint64_t cycles)
{
    return cycles * 1000000000ull / CONFIG_CLOCK_FREQUENCY;
}

static const char *const rb_status_text[] = {
    "ok", "bad magic", "bad major version", "bad block count", "absent", "other layout version",
};

int fw_nic_discover(struct fw_nic *n)
{
    const struct nic_q_coalesce co = n->co;
    const bool have_co = n->have_co;
    memset(n, 0, sizeof *n);
    n->co = co;
    n->have_co = have_co;
    n->hw.base = CSR_BASE;
    const enum nic_core_rb_status s = nic_core_rb_discover(&n->hw, &n->rb);
    if (s != NIC_CORE_RB_OK) {
        con_printf("error: discovery: %s (magic %#lx, version %#lx, count %lu)\n",
                   rb_status_text[s], (unsigned long)n->rb.magic, (unsigned long)n->rb.version,
                   (unsigned long)n->rb.count);
        return -1;
    }
    static const uint32_t need[] = {NIC_RB_NIC, NIC_RB_CTRL};
    for (unsigned i = 0; i < sizeof need / sizeof need[0]; i++) {
        const enum nic_core_rb_status c = nic_core_rb_check(&n->rb, need[i]);
        if (c != NIC_CORE_RB_OK) {
            con_printf("error: register block %s: %s\n", nic_core_rb_name(need[i]),
                       rb_status_text[c]);
            return -1;
        }
    }
    n->nic_base = nic_core_rb_lookup(&n->rb, NIC_RB_NIC)->base;
    n->ctrl_base = nic_core_rb_lookup(&n->rb, NIC_RB_CTRL)->base;
    const struct nic_core_rb_entry *an = nic_core_rb_lookup(&n->rb, NIC_RB_ANALYZER);
    n->scope_base = an ? an->base : 0;
    const struct nic_core_rb_entry *nic = nic_core_rb_lookup(&n->rb, NIC_RB_NIC);
    n->hw_txq = nic_core_rb_param(nic);
    n->irq_first = nic_core_rb_msi(nic);
    n->irq_count = nic_core_rb_msi_count(nic);
    n->tick_cycles = nic_core_tick_cycles(fw_nic_rd(n, NIC_CSR_INFO_CLK_FREQ_ADDR));
    return 0;
}

static bool wait_until(bool (*done)(struct fw_nic *, unsigned), struct fw_nic *n, unsigned q)
{
    const uint64_t end = fw_cycles() + fw_clk_hz() / 100;        /* 10 ms */
    while (!done(n, q))
        if (fw_cycles() > end)
            return false;
    return true;
}

static bool txq_drained(struct fw_nic *n, unsigned q)
{
    return nic_core_txq_drained(&n->hw, n->nic_base, q);
}

static bool rx_reset(struct fw_nic *n, unsigned q)
{
    (void)q;
    return nic_core_rx_cons(&n->hw, n->nic_base) == 0;
}

/* On this SoC an MSI number is the vector's bit in nic_irq's pending register. */
uint32_t fw_nic_irq_take(struct fw_nic *n)
{
    const uint32_t p = nic_irq_ev_pending_read();
    if (p)
        nic_irq_ev_pending_write(p);
    return (p >> n->irq_first) & ((1u << n->irq_count) - 1u);
}

int fw_nic_open(struct fw_nic *n)
{
    if (!n->nic_base && fw_nic_discover(n) < 0)
        return -1;
    if (n->hw_txq < FW_NTXQ) {
        con_printf("error: the NIC has %u TX queues, the firmware uses %u\n", n->hw_txq,
                   FW_NTXQ);
        return -1;
    }
    memset(&dma, 0, sizeof dma);
    nic_core_fifos(&n->hw, n->nic_base, FW_FRAME_MAX);
    if (!n->have_co) {
        nic_core_coalesce_defaults(&n->co);
        n->have_co = true;
    }
    nic_core_coalesce_write(&n->hw, n->nic_base, &n->co, n->tick_cycles);
    nic_core_sched(&n->hw, n->nic_base, 0, n->hw_txq);
    const uint32_t err_cfg0 = fw_nic_rd(n, n->nic_base + NIC_CSR_NIC_TXQ_ERR_CFG_ADDR);
    for (unsigned q = 0; q < FW_NTXQ; q++) {
        struct nic_txq *t = &n->tx[q];
        memset(t, 0, sizeof *t);
        t->size = FW_RING;
        t->size_log2 = __builtin_ctz(FW_RING);
        t->limit = FW_RING - 1;
        t->desc = dma.tx_desc[q];
        t->desc_bus = (uintptr_t)dma.tx_desc[q];
        t->buf = &dma.tx_buf[q][0][0];
        t->buf_bus = (uintptr_t)t->buf;
        t->wb = &dma.wb[q];
        t->wb_bus = (uintptr_t)&dma.wb[q];
        nic_core_txq_cfg(&n->hw, n->nic_base, q, t->size_log2, false, t->limit);
        if (!wait_until(txq_drained, n, q)) {
            con_printf("error: TX queue %u does not drain\n", q);
            return -1;
        }
        if (nic_core_txq_start(&n->hw, n->nic_base, t, q) < 0) {
            con_printf("error: TX queue %u: ring or writeback not 16-byte aligned\n", q);
            return -1;
        }
    }
    if (fw_nic_rd(n, n->nic_base + NIC_CSR_NIC_TXQ_ERR_CFG_ADDR) != err_cfg0) {
        con_puts("error: the device refused a TX queue configuration write\n");
        return -1;
    }
    struct nic_rxq *r = &n->rx;
    memset(r, 0, sizeof *r);
    r->size = FW_RING;
    r->size_log2 = __builtin_ctz(FW_RING);
    r->desc = dma.rx_desc;
    r->desc_bus = (uintptr_t)dma.rx_desc;
    r->cpl = dma.rx_cpl;
    r->cpl_bus = (uintptr_t)dma.rx_cpl;
    r->buf = &dma.rx_buf[0][0];
    r->buf_bus = (uintptr_t)r->buf;
    nic_core_rx_enable(&n->hw, n->nic_base, false);
    if (!wait_until(rx_reset, n, 0)) {
        con_puts("error: the RX engine does not reset its ring\n");
        return -1;
    }
    if (nic_core_rx_setup(&n->hw, n->nic_base, r) < 0) {
        con_puts("error: the RX ring or completion ring is not 16-byte aligned\n");
        return -1;
    }
    for (unsigned p = 0; p < r->size; p++)
        nic_core_rx_desc(r, p, r->buf_bus + (uint64_t)p * FW_BUF_STRIDE,
                         (FW_FRAME_MAX + 3u) & ~3u);
    nic_core_rx_cpl_init(r);
    nic_core_rx_start(&n->hw, n->nic_base, r);
    n->open = true;
    return 0;
}

bool fw_nic_tx_post(struct fw_nic *n, unsigned q, const uint8_t *frame, unsigned len)
{
    struct nic_txq *t = &n->tx[q];
    if (nic_core_tx_room(t) == 0)
        return false;
    uint8_t *slot = t->buf + (size_t)t->next_to_use * FW_BUF_STRIDE;
    if (frame != slot)
        memcpy(slot, frame, len);
    nic_core_tx_put(t, t->buf_bus + (uint64_t)t->next_to_use * FW_BUF_STRIDE, len, true);
    t->frames_sent++;
    return true;
}

void fw_nic_tx_doorbell(struct fw_nic *n, unsigned q)
{
    nic_core_tx_doorbell(&n->hw, n->nic_base, &n->tx[q], q);
}

int fw_nic_tx_reclaim(struct fw_nic *n, unsigned q)
{
    uint32_t cons;
    return nic_core_tx_reclaim(&n->tx[q], &cons);
}

bool fw_nic_rx_take(struct fw_nic *n, struct nic_core_rx_rec *rec, const uint8_t **data)
{
    if (!nic_core_rx_take(&n->rx, rec))
        return false;
    *data = n->rx.buf + (size_t)rec->index * FW_BUF_STRIDE;
    return true;
}

void fw_nic_rx_refill(struct fw_nic *n)
{
    if (n->rx.to_repost)
        nic_core_rx_post(&n->hw, n->nic_base, &n->rx, n->rx.to_repost);
}

/* Test frames: broadcast destination, source 02:00:00:00:00:01, EtherType 0x88b5 (local
 * experimental), the sequence number (bytes 14..17), then a pattern of the sequence number's
 * ring slot (so a slot's buffer is filled once and only the number changes). */
static uint8_t pattern(uint32_t seq, unsigned i)
{
    return (uint8_t)(i * 13u + (seq % FW_RING) * 7u);
}

void fw_frame_fill(uint8_t *buf, unsigned len, uint32_t seq)
{
    static const uint8_t hdr[14] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                                    0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x88, 0xb5};
    memcpy(buf, hdr, 14);
    memcpy(buf + 14, &seq, 4);
    for (unsigned i = 18; i < len; i++)
        buf[i] = pattern(seq, i);
}

bool fw_frame_check(const uint8_t *buf, unsigned len, uint32_t seq)
{
    uint32_t s;
    memcpy(&s, buf + 14, 4);
    if (s != seq || buf[12] != 0x88 || buf[13] != 0xb5)
        return false;
    for (unsigned i = 18; i < len; i++)
        if (buf[i] != pattern(seq, i))
            return false;
    return true;
}
