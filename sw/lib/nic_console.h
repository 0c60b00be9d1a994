/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nic_console.h: the soft CPU's console (LiteX BIOS) from the host, through the crossover UART
 * (the uart block's XOVER_* registers: RXTX, TXFULL, RXEMPTY), over any backend.
 *
 * Only builds with a soft CPU have the crossover UART: nic_rb_require(b, NIC_RB_UART) says
 * whether this one has it. Through it the host types BIOS commands, e.g. mem_read/mem_write,
 * which the CPU executes over the SoC bus: the way to show that a register block is reachable
 * from the CPU, not only from BAR0.
 */
#ifndef NICCONSOLE_H
#define NICCONSOLE_H

#include <stddef.h>
#include <stdint.h>

#include "nic_backend.h"
#include "nic_rb.h"

/* One character from the CPU, or -1 when none is waiting. */
int nic_console_getc(struct nic_backend *b);
/* Send characters to the CPU (waits while its receive FIFO is full). */
void nic_console_puts(struct nic_backend *b, const char *s);
/* Read until `pattern` has arrived or timeout_ns of backend time passed; what arrived (NUL-
 * terminated, the tail when it does not fit) goes to log. 0, or -1 on timeout. */
int nic_console_expect(struct nic_backend *b, const char *pattern, char *log, size_t loglen,
                       uint64_t timeout_ns);
/* Bring the BIOS to its prompt: cancel serial boot (it waits for a host there), then wait for
 * the "litex> " prompt. 0, or -1 with the console output in log. */
int nic_console_bios_prompt(struct nic_backend *b, char *log, size_t loglen,
                            uint64_t timeout_ns);
/* Run one BIOS command and wait for the next prompt; its output goes to out. 0 or -1. */
int nic_console_command(struct nic_backend *b, const char *cmd, char *out, size_t outlen,
                        uint64_t timeout_ns);
/* A 32-bit word at bus address `addr` read by the CPU (BIOS mem_read). 0 or -1. */
int nic_console_read32(struct nic_backend *b, uint64_t addr, uint32_t *v, uint64_t timeout_ns);
/* A 32-bit word written by the CPU (BIOS mem_write). 0 or -1. */
int nic_console_write32(struct nic_backend *b, uint64_t addr, uint32_t v, uint64_t timeout_ns);

#endif /* NICCONSOLE_H */
