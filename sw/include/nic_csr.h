/*
 * nic_csr.h: the NIC's register map for host code, as BAR0 offsets.
 *
 * What it is: LiteX's generated csr.h and soc.h (build/sim_dw<W>/host_include/, found through
 * -I), included with CSR_BASE = 0 so every CSR_*_ADDR macro is an offset into BAR0. This is the
 * only way host code gets a register address or an interrupt number: never hand-copy one.
 *
 * Interfaces: the CSR_* macros of csr.h (addresses, _SIZE in 32-bit words, field _OFFSET/_SIZE),
 * the interrupt numbers and DMA_ADDR_WIDTH of soc.h, and NIC_FIELD_GET() to extract a field.
 *
 * The checks below stop the build when the generated headers lack a register the host library
 * uses (a SoC built without one of its blocks) or lay it out differently than the code assumes.
 */
#ifndef NIC_CSR_H
#define NIC_CSR_H

#ifdef CSR_BASE
#if CSR_BASE != 0
#error "nic_csr.h: CSR_BASE is already defined and non-zero; BAR0 offsets need CSR_BASE 0"
#endif
#else
#define CSR_BASE 0x0L
#endif

#include <stdint.h>

#include "csr.h"
#include "soc.h"

/* Extract field F (e.g. CSR_INFO_CONFIG_DATA_WIDTH) from a register value v. */
#define NIC_FIELD_GET(v, F) \
    ((uint32_t)(((uint64_t)(v) >> F##_OFFSET) & ((1ull << F##_SIZE) - 1)))

/* Every block the host library touches, in bring-up order. */
#if !defined(CSR_INFO_MAGIC_ADDR) || !defined(CSR_INFO_VERSION_ADDR) || \
    !defined(CSR_INFO_CONFIG_ADDR) || !defined(CSR_INFO_CONFIG_DATA_WIDTH_OFFSET)
#error "nic_csr.h: csr.h has no INFO block (litex_soc/nic_info.py)"
#endif
#if !defined(CSR_CTRL_SCRATCH_ADDR)
#error "nic_csr.h: csr.h has no CTRL_SCRATCH register"
#endif
#if !defined(CSR_IDENTIFIER_MEM_BASE)
#error "nic_csr.h: csr.h has no IDENTIFIER_MEM block"
#endif
/* MSI: LitePCIe's single-vector LitePCIeMSI has ENABLE, VECTOR (pending) and CLEAR; its
 * msi-multi-vector (LitePCIeMSIMultiVector) has only ENABLE, each MSI number being its own
 * vector (NIC_MSI_MULTI_VECTOR 1: the backend's irq_wait tells which, no register to read). */
#if !defined(CSR_PCIE_MSI_ENABLE_ADDR)
#error "nic_csr.h: csr.h has no PCIE_MSI_ENABLE (LitePCIe MSI block)"
#endif
#if defined(CSR_PCIE_MSI_CLEAR_ADDR) != defined(CSR_PCIE_MSI_VECTOR_ADDR)
#error "nic_csr.h: csr.h has one of PCIE_MSI_CLEAR/PCIE_MSI_VECTOR without the other"
#endif
#ifdef CSR_PCIE_MSI_CLEAR_ADDR
#define NIC_MSI_MULTI_VECTOR 0
#else
#define NIC_MSI_MULTI_VECTOR 1
#endif
#if !defined(CSR_PCIE_DMA0_WRITER_ENABLE_ADDR) || !defined(CSR_PCIE_DMA0_WRITER_TABLE_VALUE_ADDR) || \
    !defined(CSR_PCIE_DMA0_WRITER_TABLE_WE_ADDR) || \
    !defined(CSR_PCIE_DMA0_WRITER_TABLE_LOOP_PROG_N_ADDR) || \
    !defined(CSR_PCIE_DMA0_WRITER_TABLE_RESET_ADDR) || \
    !defined(CSR_PCIE_DMA0_WRITER_TABLE_LOOP_STATUS_ADDR) || \
    !defined(CSR_PCIE_DMA0_WRITER_TABLE_LEVEL_ADDR)
#error "nic_csr.h: csr.h has no PCIE_DMA0 writer with a descriptor table"
#endif
#if !defined(CSR_PCIE_DMA0_READER_ENABLE_ADDR) || !defined(CSR_PCIE_DMA0_READER_TABLE_VALUE_ADDR) || \
    !defined(CSR_PCIE_DMA0_READER_TABLE_WE_ADDR) || \
    !defined(CSR_PCIE_DMA0_READER_TABLE_LOOP_PROG_N_ADDR) || \
    !defined(CSR_PCIE_DMA0_READER_TABLE_RESET_ADDR) || \
    !defined(CSR_PCIE_DMA0_READER_TABLE_LOOP_STATUS_ADDR) || \
    !defined(CSR_PCIE_DMA0_READER_TABLE_LEVEL_ADDR)
#error "nic_csr.h: csr.h has no PCIE_DMA0 reader with a descriptor table"
#endif
#if !defined(CSR_PCIE_DMA0_LOOPBACK_ENABLE_ADDR)
#error "nic_csr.h: csr.h has no PCIE_DMA0_LOOPBACK (SoC built without with_dma_loopback)"
#endif
#if !defined(CSR_DMA_PATTERN_GEN_CONTROL_ADDR) || !defined(CSR_DMA_PATTERN_GEN_SEED_ADDR) || \
    !defined(CSR_DMA_PATTERN_CHK_CONTROL_ADDR) || !defined(CSR_DMA_PATTERN_CHK_SEED_ADDR) || \
    !defined(CSR_DMA_PATTERN_CHK_TARGET_ADDR) || !defined(CSR_DMA_PATTERN_CHK_BYTES_ADDR) || \
    !defined(CSR_DMA_PATTERN_CHK_ERRORS_ADDR)
#error "nic_csr.h: csr.h has no DMA_PATTERN block (litex_soc/dmatest/dma_pattern.py)"
#endif
#if !defined(DMA_PATTERN_CHECKER_INTERRUPT) || !defined(PCIE_DMA0_READER_INTERRUPT) || \
    !defined(PCIE_DMA0_WRITER_INTERRUPT)
#error "nic_csr.h: soc.h lacks DMA_PATTERN_CHECKER/PCIE_DMA0_READER/PCIE_DMA0_WRITER interrupts"
#endif
#if !defined(DMA_ADDR_WIDTH)
#error "nic_csr.h: soc.h lacks DMA_ADDR_WIDTH"
#endif

/* Layouts the code relies on: a descriptor is one 64-bit CSR (two 32-bit words), its fields
 * where LitePCIe puts them; 32-bit CSR words. */
#if CONFIG_CSR_DATA_WIDTH != 32
#error "nic_csr.h: the host library assumes 32-bit CSR words (CONFIG_CSR_DATA_WIDTH 32)"
#endif
_Static_assert(CSR_PCIE_DMA0_WRITER_TABLE_VALUE_SIZE == 2 &&
               CSR_PCIE_DMA0_READER_TABLE_VALUE_SIZE == 2,
               "descriptor TABLE_VALUE must be a 64-bit CSR of two 32-bit words");
_Static_assert(CSR_PCIE_DMA0_WRITER_TABLE_VALUE_LENGTH_OFFSET ==
                   CSR_PCIE_DMA0_READER_TABLE_VALUE_LENGTH_OFFSET &&
               CSR_PCIE_DMA0_WRITER_TABLE_VALUE_IRQ_DISABLE_OFFSET ==
                   CSR_PCIE_DMA0_READER_TABLE_VALUE_IRQ_DISABLE_OFFSET &&
               CSR_PCIE_DMA0_WRITER_TABLE_VALUE_LAST_DISABLE_OFFSET ==
                   CSR_PCIE_DMA0_READER_TABLE_VALUE_LAST_DISABLE_OFFSET,
               "reader and writer descriptors must share one layout");
_Static_assert(DMA_PATTERN_CHECKER_INTERRUPT < 32 && PCIE_DMA0_READER_INTERRUPT < 32 &&
               PCIE_DMA0_WRITER_INTERRUPT < 32, "MSI vector is 32 bits wide");

#endif /* NIC_CSR_H */
