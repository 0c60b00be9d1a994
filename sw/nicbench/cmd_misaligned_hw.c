// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_misaligned_hw.c: the registers `nicbench misaligned` programs (cmd_misaligned.h): the
 * nic block's TX and RX rings and the analyzer's stream, straight to their CSRs, their stops,
 * and each address's refusal count and status bit.
 */
#define _GNU_SOURCE
#include "cmd_misaligned.h"

#include "nicscope_lib.h"

const char *const mis_kind_names[K_N] = {"txe_base_addr", "txq_wb_addr", "rxe_ring_base",
                                         "rxe_cpl_base", "analyzer_stream_base"};
/* The device's error counter and status register of each (nic block, by name), and the bit. */
const char *const mis_kind_counter[K_N] = {"txe_err_base", "txq_err_wb_addr", "rxe_err_base",
                                           "rxe_err_base", NULL};
static const char *const kind_status[K_N] = {"txe_base_bad", "txq_wb_bad", "rxe_base_bad",
                                             "rxe_base_bad", NULL};
static const unsigned kind_bit[K_N] = {0, 0, 0, 1, 0};

uint64_t mis_bus_at(const struct area *a, unsigned page, uint32_t off)
{
    return a->bus + (uint64_t)page * 4096u + off;
}

/* A register of the nic block by its CSR name (the contract's table): false if this build's
 * table has no such register. */
bool mis_nic_reg(struct nic_backend *b, const char *name, uint64_t *v)
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

uint32_t mis_nic_off(struct nic_backend *b) { return (uint32_t)nic_rb_base(b, NIC_RB_NIC); }

void mis_tx_program(struct nic_backend *b, uint64_t base, uint64_t wb)
{
    struct nic_core_hw *hw = nic_hw(b);
    const uint32_t nb = mis_nic_off(b);
    nic_core_csr_write_wide(hw, nb + NIC_CSR_NIC_TXE_BASE_ADDR_ADDR,
                            NIC_CSR_NIC_TXE_BASE_ADDR_SIZE, base);
    nic_core_wr32(hw, nb + NIC_CSR_NIC_TXE_BASE_ADDR, NIC_Q_FIELD(NIC_CSR_NIC_TXE_BASE_QUEUE, 0));
    nic_core_csr_write_wide(hw, nb + NIC_CSR_NIC_TXQ_WB_ADDR_ADDR, NIC_CSR_NIC_TXQ_WB_ADDR_SIZE,
                            wb);
    nic_core_wr32(hw, nb + NIC_CSR_NIC_TXQ_WB_ADDR_QUEUE_ADDR,
                  NIC_Q_FIELD(NIC_CSR_NIC_TXQ_WB_ADDR_QUEUE_QUEUE, 0));
}

/* TX queue 0 enabled (a reset of a drained queue) and its first descriptor posted. */
void mis_tx_send_one(struct nic_backend *b)
{
    nic_core_txq_cfg(nic_hw(b), mis_nic_off(b), 0, RING_LOG2, true, (1u << RING_LOG2) - 1);
    nic_core_wr32(nic_hw(b), mis_nic_off(b) + NIC_CSR_NIC_TXQ_DB_ADDR,
                  NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_QUEUE, 0) |
                  NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_INDEX, 1));
}

int mis_tx_stop(struct ctx *c)
{
    struct nic_backend *b = c->b;
    nic_core_txq_cfg(nic_hw(b), mis_nic_off(b), 0, RING_LOG2, false, (1u << RING_LOG2) - 1);
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    while (!nic_core_txq_drained(nic_hw(b), mis_nic_off(b), 0)) {
        if (nic_now_ns(b) > deadline)
            return fail(c, "misaligned: TX queue 0 does not drain");
        nic_idle(b, 500);
    }
    return EXIT_OK;
}

int mis_rx_stop(struct ctx *c)
{
    struct nic_backend *b = c->b;
    nic_core_rx_enable(nic_hw(b), mis_nic_off(b), false);
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    while (nic_core_rx_cons(nic_hw(b), mis_nic_off(b)) != 0) {
        if (nic_now_ns(b) > deadline)
            return fail(c, "misaligned: the RX engine does not reset its ring");
        nic_idle(b, 500);
    }
    nic_idle(b, 500);
    return EXIT_OK;
}

void mis_rx_program(struct nic_backend *b, uint64_t ring, uint64_t cpl)
{
    struct nic_core_hw *hw = nic_hw(b);
    const uint32_t nb = mis_nic_off(b);
    nic_core_csr_write_wide(hw, nb + NIC_CSR_NIC_RXE_RING_BASE_ADDR,
                            NIC_CSR_NIC_RXE_RING_BASE_SIZE, ring);
    nic_core_wr32(hw, nb + NIC_CSR_NIC_RXE_RING_SIZE_LOG2_ADDR, RING_LOG2);
    nic_core_csr_write_wide(hw, nb + NIC_CSR_NIC_RXE_CPL_BASE_ADDR,
                            NIC_CSR_NIC_RXE_CPL_BASE_SIZE, cpl);
}

void mis_stream_set(struct nic_backend *b, bool on)
{
    nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_CTRL),
                (uint32_t)on << NIC_CSR_ANALYZER_STREAM_CTRL_ENABLE_OFFSET);
}

/* Stop, taking every entry (the ring's slots freed) until the FIFO is empty. */
int mis_stream_stop(struct ctx *c)
{
    struct nic_backend *b = c->b;
    mis_stream_set(b, false);
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
bool mis_refusal(struct ctx *c, enum kind k, uint64_t *count, bool *bit)
{
    uint64_t st = 0;
    if (k == K_STREAM) {
        uint32_t n;
        if (nicscope_stream_refused(c->b, bit, &n) < 0)
            return false;
        *count = n;
        return true;
    }
    const bool have = mis_nic_reg(c->b, mis_kind_counter[k], count) &
                      mis_nic_reg(c->b, kind_status[k], &st);
    *bit = (st >> kind_bit[k]) & 1;
    return have;
}
