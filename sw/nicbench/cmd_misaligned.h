/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_misaligned.h: what the files of `nicbench misaligned` share (cmd_misaligned.c the cases
 * and the command, cmd_misaligned_hw.c the registers each case programs, stops and reads).
 * Private to the misaligned command; after nicbench.h.
 */
#ifndef CMD_MISALIGNED_H
#define CMD_MISALIGNED_H

#include "nicbench.h"

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
extern const char *const mis_kind_names[K_N];
extern const char *const mis_kind_counter[K_N];

struct area {
    uint8_t *mem, *before;
    uint64_t bus;
};

/* cmd_misaligned_hw.c: a page of the area on the bus, the nic block's registers by name, the
 * TX and RX rings programmed, started and stopped, the stream on and off, a kind's refusal
 * count and status bit. */
uint64_t mis_bus_at(const struct area *a, unsigned page, uint32_t off);
bool mis_nic_reg(struct nic_backend *b, const char *name, uint64_t *v);
uint32_t mis_nic_off(struct nic_backend *b);
void mis_tx_program(struct nic_backend *b, uint64_t base, uint64_t wb);
void mis_tx_send_one(struct nic_backend *b);
int mis_tx_stop(struct ctx *c);
int mis_rx_stop(struct ctx *c);
void mis_rx_program(struct nic_backend *b, uint64_t ring, uint64_t cpl);
void mis_stream_set(struct nic_backend *b, bool on);
int mis_stream_stop(struct ctx *c);
bool mis_refusal(struct ctx *c, enum kind k, uint64_t *count, bool *bit);

#endif /* CMD_MISALIGNED_H */
