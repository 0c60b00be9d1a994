/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nic_rb.h: register blocks found at run time, so one host binary serves every build.
 *
 * The identification block at BAR0 offset 0 lists every register block (type, version, BAR0
 * base, MSI numbers, a parameter; rtl/contract/regblocks.py). nic_rb_discover() reads it into
 * the backend once (nic_backend_open() does); a register is then NIC_CSR(b, BLOCK, REG): the
 * block's base plus the build-independent offset of nic_regs.h. A block whose layout version
 * differs from the one nic_regs.h was generated for counts as absent, and nic_rb_require() says
 * why. Reaching a register of an absent block (without nic_rb_require() first) is a bug: the
 * process stops with a message naming the block. The table is read by the shared datapath
 * core (sw/core/nic_core.h, as the Linux module reads it); a backend is the core's MMIO
 * environment through nic_hw() (nic_core_rd32/wr32 are defined in nic_rb.c).
 */
#ifndef NICRB_H
#define NICRB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nic_backend.h"
#include "nic_core.h"
#include "nic_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backend as the shared core's MMIO handle. */
static inline struct nic_core_hw *nic_hw(struct nic_backend *b) { return (struct nic_core_hw *)b; }

/* Reads MAGIC, VERSION and the table. 0, or -1 with a message. */
int nic_rb_discover(struct nic_backend *b, char *err, size_t errlen);

/* The block's entry if the device has it with the layout this library knows, else NULL. */
const struct nic_rb_entry *nic_rb_find(struct nic_backend *b, enum nic_rb_type type);

/* 0 if the block is there (nic_rb_find); -1 with a message saying it is absent or has another
 * layout version than this binary's. */
int nic_rb_require(struct nic_backend *b, enum nic_rb_type type, char *err, size_t errlen);

/* The block's BAR0 base; stops the process when the block is absent. */
uint64_t nic_rb_base(struct nic_backend *b, enum nic_rb_type type);

/* The block's i-th MSI number and its parameter (INFO bits 31..16); stop when absent. */
unsigned nic_rb_msi(struct nic_backend *b, enum nic_rb_type type, unsigned i);
unsigned nic_rb_msi_count(struct nic_backend *b, enum nic_rb_type type);
unsigned nic_rb_param(struct nic_backend *b, enum nic_rb_type type);

/* "nic", "pcie_dma0", ...; "?" for an unknown type. */
const char *nic_rb_name(enum nic_rb_type type);

#define NIC_CSR(b, BLOCK, REG) \
    (nic_rb_base((b), NIC_RB_##BLOCK) + NIC_CSR_##BLOCK##_##REG##_ADDR)
#define NIC_CSR_SIZE(BLOCK, REG) NIC_CSR_##BLOCK##_##REG##_SIZE

/* Extract field F (e.g. NIC_CSR_INFO_CONFIG_DATA_WIDTH) from a register value v. */
#define NIC_FIELD_GET(v, F) \
    ((uint32_t)(((uint64_t)(v) >> F##_OFFSET) & ((1ull << F##_SIZE) - 1)))

#ifdef __cplusplus
}
#endif

#endif /* NICRB_H */
