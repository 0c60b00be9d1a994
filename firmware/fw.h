/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fw.h: the firmware's shared declarations (VexRiscv on the open ECP5 target's SoC).
 *
 * console.c   the UART console: output, formatted output, line input, JSON records
 * nic_fw.c    the NIC driver on the on-chip host port: register-block discovery, TX/RX rings and
 *             buffers in the SoC's main RAM (sw/core/nic_core.c does rings, descriptors,
 *             doorbells, coalescing), the cycle counter
 * cmd_*.c     the console's commands (main.c dispatches): selftest, tx, csr, coalesce, scope
 *             (cmd_nicscope.c: the analyzer's)
 * Parameters: FW_RING (descriptors per ring), FW_BUF_STRIDE (bytes per buffer slot).
 */
#ifndef FW_H
#define FW_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nic_core.h"

#define FW_RING 16u
#define FW_BUF_STRIDE 1536u
#define FW_FRAME_MAX 1514u
#define FW_NTXQ 1u
#define FW_LINE_MAX 128u
#define FW_MAX_ARGS 12u

/* --- console ------------------------------------------------------------------------------ */
void con_putc(char c);
void con_puts(const char *s);
void con_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
unsigned con_getline(char *buf, unsigned size);     /* echo off; returns the length */
/* JSON record: one line, {"key": value, ...}. */
void json_begin(void);
void json_str(const char *key, const char *v);
void json_u64(const char *key, uint64_t v);
void json_fix(const char *key, uint64_t num, uint64_t den, unsigned decimals); /* num/den */
void json_end(void);

/* --- time ---------------------------------------------------------------------------------- */
uint64_t fw_cycles(void);               /* timer0 uptime: sys clock cycles since reset */
uint32_t fw_clk_hz(void);               /* INFO_CLK_FREQ */
uint64_t fw_cycles_to_ns(uint64_t cycles);

/* --- the NIC ------------------------------------------------------------------------------ */
struct nic_core_hw {
    uintptr_t base;                     /* CPU address of the identification block */
};
struct fw_nic {
    struct nic_core_hw hw;
    struct nic_core_rb_table rb;
    uint32_t nic_base, scope_base, ctrl_base;
    uint32_t tick_cycles;
    unsigned hw_txq;
    unsigned irq_first, irq_count;      /* the nic block's vectors: RX, then TX groups */
    struct nic_txq tx[FW_NTXQ];
    struct nic_rxq rx;
    struct nic_q_coalesce co;           /* what fw_nic_open writes (coalesce changes it) */
    bool have_co, open;
};
extern struct fw_nic fw_nic;

/* Discovery: the identification block and the register-block table; 0 or -1 (message printed). */
int fw_nic_discover(struct fw_nic *n);
/* Rings in main RAM, FIFOs, scheduler, default coalescing, TX queue 0 and RX started. */
int fw_nic_open(struct fw_nic *n);
/* Copy a frame into the next TX slot of queue q and post it (no doorbell): false if full. */
bool fw_nic_tx_post(struct fw_nic *n, unsigned q, const uint8_t *frame, unsigned len);
void fw_nic_tx_doorbell(struct fw_nic *n, unsigned q);
int fw_nic_tx_reclaim(struct fw_nic *n, unsigned q);
/* Take a completed RX frame: true and rec/data filled. */
bool fw_nic_rx_take(struct fw_nic *n, struct nic_core_rx_rec *rec, const uint8_t **data);
void fw_nic_rx_refill(struct fw_nic *n);
/* The interrupt events pending (nic_irq, one bit per vector from irq_first), cleared. */
uint32_t fw_nic_irq_take(struct fw_nic *n);
uint32_t fw_nic_rd(struct fw_nic *n, uint32_t off);
void fw_nic_wr(struct fw_nic *n, uint32_t off, uint32_t v);
/* The i-th frame of a test stream: its length and content (sequence number in bytes 14..17). */
void fw_frame_fill(uint8_t *buf, unsigned len, uint32_t seq);
bool fw_frame_check(const uint8_t *buf, unsigned len, uint32_t seq);

/* --- commands ----------------------------------------------------------------------------- */
int cmd_selftest(int argc, char **argv);
int cmd_tx(int argc, char **argv);
int cmd_csr(int argc, char **argv);
int cmd_coalesce(int argc, char **argv);
int cmd_nicscope(int argc, char **argv);
int cmd_stream(int argc, char **argv);
int cmd_info(int argc, char **argv);
/* The analyzer's probes in selector order (nicscope_layout.h's NICSCOPE_PROBES; cmd_nicscope.c). */
struct fw_probe {
    const char *name, *group;
    int tlp;
};
extern const struct fw_probe fw_probes[];
/* Parse "N" (decimal) into *v; false on anything else. */
bool fw_parse_u32(const char *s, uint32_t *v);

#endif /* FW_H */
