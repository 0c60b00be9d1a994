/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nic_dev.h: the NIC's device layer: what a driver does with the registers of the register
 * blocks (nic_rb.h, nic_regs.h), over any backend (nic_backend.h).
 *
 * Functions come in bring-up order, each naming the register block it uses:
 *   1. identification       INFO_*, CTRL_SCRATCH, IDENTIFIER_MEM      nic_dev_check()
 *   2. interrupts           PCIE_MSI_ENABLE                          nic_msi_*()
 *   3. DMA engines          PCIE_DMA0_*: single descriptors (nic_dma_*), rings (nic_dma_ring_*)
 *   4. traffic source/sink  DMA_PATTERN_GEN_*, DMA_PATTERN_CHK_*, and the host-side pattern
 * LitePCIe's "reader" reads host memory (host-to-card, a NIC's TX) and its "writer" writes it
 * (card-to-host, RX); a descriptor ring follows e1000e's struct e1000_ring.
 *
 * Parameters come from the device and nic_regs.h only: block bases, MSI numbers and the DMA's
 * address width from the register-block table; register offsets, wide-CSR layout (_SIZE
 * words, most significant word first at the lower address) and fields from nic_regs.h.
 */
#ifndef NICDEV_H
#define NICDEV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nic_backend.h"
#include "nic_rb.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Backend accessors nic_backend.h does not provide inline ------------------------------- */

static inline void *nic_dma_alloc(struct nic_backend *b, size_t size, uint64_t *bus_addr)
{
    return b->ops->dma_alloc(b, size, bus_addr);
}
static inline void nic_dma_free(struct nic_backend *b, void *va, size_t size)
{
    b->ops->dma_free(b, va, size);
}
static inline const char *nic_params_json(struct nic_backend *b) { return b->ops->params_json(b); }
static inline const char *nic_last_error(struct nic_backend *b) { return b->ops->last_error(b); }

/* Format a message into err (errlen bytes; err may be NULL) and return -1: the library's
 * convention for "failed, and here is why". */
__attribute__((format(printf, 3, 4))) int nic_errf(char *err, size_t errlen, const char *fmt,
                                                   ...);

/* --- CSRs wider than 32 bits (LiteX: nwords 32-bit registers, most significant first) ------ */

/* The shared core's nic_core_csr_*_wide() on a backend; addr a BAR0 offset. A read retries
 * while the upper words change between reads (a counter carrying). */
uint64_t nic_csr_read_wide(struct nic_backend *b, uint64_t addr, unsigned nwords);
void nic_csr_write_wide(struct nic_backend *b, uint64_t addr, unsigned nwords, uint64_t value);
/* 32-bit element i (bits 32i..32i+31) of a wide CSR of nwords words: word nwords - 1 - i. */
static inline uint32_t nic_csr_read_elem(struct nic_backend *b, uint64_t addr, unsigned nwords,
                                         unsigned i)
{
    return nic_core_csr_read_elem(nic_hw(b), (uint32_t)addr, nwords, i);
}

/* --- 1. Identification: INFO_MAGIC/VERSION/CONFIG, CTRL_SCRATCH, IDENTIFIER_MEM ------------ */


struct nic_dev_info {
    uint32_t magic;
    uint32_t version_major, version_minor;
    uint32_t config;                /* raw INFO_CONFIG */
    uint32_t data_width;            /* PCIe datapath bits: DMA lengths are multiples of /8 */
    uint32_t ndmas;
    bool sim, cpu;
    uint32_t scratch_reset;         /* CTRL_SCRATCH as found (restored after the test) */
    unsigned scratch_patterns;      /* write/read-back patterns that passed */
    char ident[256];                /* IDENTIFIER_MEM string */
};

/* The bring-up check: INFO_MAGIC == NIC_MAGIC, CTRL_SCRATCH write/read-back of several patterns
 * (then restored), INFO_VERSION/CONFIG and the identifier read. 0 on success; -1 with a message
 * naming the register, offset, written and read values. info may be NULL. */
int nic_dev_check(struct nic_backend *b, struct nic_dev_info *info, char *err, size_t errlen);

/* --- 2. Interrupts: PCIE_MSI_ENABLE (mask). LitePCIe's msi-multi-vector: every MSI number is
 * its own vector, cleared by the device as it sends it: irq_wait tells which, nothing to read
 * or acknowledge. */

static inline uint32_t nic_msi_bit(unsigned irq) { return 1u << irq; }
void nic_msi_enable(struct nic_backend *b, uint32_t mask);   /* PCIE_MSI_ENABLE = mask */
/* Consume MSIs the backend already delivered (irq_wait with a zero timeout); returns how many
 * were consumed, <0 on a backend error. per_vector (NULL, or NIC_MSI_VECTORS entries) gets
 * each one added to its vector's count. */
#define NIC_MSI_VECTORS 32
int nic_irq_drain(struct nic_backend *b);
int nic_irq_drain_vectors(struct nic_backend *b, uint64_t *per_vector);
/* Wait up to timeout_ns for one MSI; on one, OR its vector into *sources as nic_msi_bit(irq).
 * Returns irq_wait's result (1, 0 timeout, <0). */
int nic_msi_wait_sources(struct nic_backend *b, uint64_t timeout_ns, uint32_t *sources);

/* --- 3. DMA: PCIE_DMA0_{READER,WRITER}_{ENABLE,TABLE_*}, PCIE_DMA0_LOOPBACK_ENABLE ---------- */

enum nic_dma_engine {
    NIC_DMA_READER = 0,             /* host-to-card: reads host memory (TX side) */
    NIC_DMA_WRITER = 1,             /* card-to-host: writes host memory (RX side) */
};
const char *nic_dma_engine_name(enum nic_dma_engine e);
/* The engine's MSI number (pcie_dma0's first MSI is the reader's, the next the writer's). */
unsigned nic_dma_irq(struct nic_backend *b, enum nic_dma_engine e);

/* Descriptor flags (TABLE_VALUE fields IRQ_DISABLE, LAST_DISABLE). */
#define NIC_DMA_IRQ_DISABLE  0x1u   /* no MSI when this descriptor completes */
#define NIC_DMA_LAST_DISABLE 0x2u   /* writer: ignore the data stream's `last` (no early end) */

/* Largest descriptor length (TABLE_VALUE LENGTH field) and the alignment the datapath needs. */
uint32_t nic_dma_max_len(void);
/* Checks a descriptor against the DMA (address within its address width, length non-zero, a
 * multiple of align, within the LENGTH field). 0 or -1 with a message. */
int nic_dma_desc_check(struct nic_backend *b, uint64_t bus_addr, uint32_t len, uint32_t align,
                       char *err, size_t errlen);

void nic_dma_table_reset(struct nic_backend *b, enum nic_dma_engine e);        /* TABLE_RESET */
/* TABLE_LOOP_PROG_N: 0 prog mode (each descriptor runs once), 1 loop mode (refilled). */
void nic_dma_set_loop(struct nic_backend *b, enum nic_dma_engine e, bool loop);
/* One descriptor: TABLE_VALUE (length|flags, address[31:0]) then TABLE_WE (address[63:32]),
 * whose write pushes it. Prog mode only. Call nic_dma_desc_check() first. */
void nic_dma_push(struct nic_backend *b, enum nic_dma_engine e, uint64_t bus_addr, uint32_t len,
                  unsigned flags);
void nic_dma_enable(struct nic_backend *b, enum nic_dma_engine e, bool on);    /* ENABLE bit 0 */
bool nic_dma_idle(struct nic_backend *b, enum nic_dma_engine e);       /* ENABLE bit 1: FSM idle */
uint32_t nic_dma_level(struct nic_backend *b, enum nic_dma_engine e);          /* TABLE_LEVEL */
/* TABLE_LOOP_STATUS: index of the last descriptor executed, loops since the table reset. */
void nic_dma_loop_status(struct nic_backend *b, enum nic_dma_engine e, uint32_t *index,
                         uint32_t *count);
/* PCIE_DMA0_GUARD_<engine>_REFUSED: descriptors the engine refused in hardware (address or
 * length not a multiple of PCIE_DMA0_GUARD_ALIGN, or length 0: no TLP, no IRQ; wraps). 0 on a
 * build without the pcie_dma0_guard block. */
uint32_t nic_dma_refused(struct nic_backend *b, enum nic_dma_engine e);
/* PCIE_DMA0_GUARD_ALIGN: the bytes a descriptor's address and length must be a multiple of (0
 * without the block). */
uint32_t nic_dma_hw_align(struct nic_backend *b);
/* Stop as LitePCIe's driver does: prog mode, table reset, disable, table reset. */
void nic_dma_stop(struct nic_backend *b, enum nic_dma_engine e);
/* PCIE_DMA0_LOOPBACK_ENABLE: reader data goes to the writer instead of the pattern cores. */
void nic_dma_loopback(struct nic_backend *b, bool on);
/* PCIE_DMA0_BUFFERING_{READER,WRITER}_FIFO_STATUS level in bytes (0 without buffering). */
uint32_t nic_dma_buffering_level(struct nic_backend *b, enum nic_dma_engine e);
/* With the writer disabled and the generator stopped, wait (backend time) until the writer's
 * buffering FIFO is empty, so the next transfer starts with fresh data. 0, or -1 on timeout. */
int nic_dma_writer_drain(struct nic_backend *b, uint64_t timeout_ns);

/* A descriptor ring over one DMA buffer: `count` descriptors of `size` bytes each, back to
 * back from bus address `dma`. In loop mode the hardware refills the table, so the ring runs
 * until stopped; next_to_clean follows TABLE_LOOP_STATUS. */
struct nic_dma_ring {
    struct nic_backend *b;
    enum nic_dma_engine engine;
    uint64_t dma;                   /* bus address of descriptor 0's buffer */
    uint32_t size;                  /* bytes per descriptor */
    uint32_t count;                 /* descriptors */
    uint32_t next_to_use;           /* descriptors pushed so far */
    uint32_t next_to_clean;         /* next descriptor the hardware will complete */
    uint32_t loops;                 /* completed passes over the ring (loop mode) */
    unsigned flags;                 /* NIC_DMA_* flags of every descriptor */
};
/* Stop the engine, reset its table, push `count` descriptors (prog mode). 0 or -1 + message. */
int nic_dma_ring_setup(struct nic_dma_ring *r, struct nic_backend *b, enum nic_dma_engine e,
                       uint64_t dma, uint32_t size, uint32_t count, uint32_t align,
                       unsigned flags, char *err, size_t errlen);
/* Select loop or prog mode and enable the engine. */
void nic_dma_ring_start(struct nic_dma_ring *r, bool loop);
/* Refresh next_to_clean/loops from TABLE_LOOP_STATUS. */
void nic_dma_ring_update(struct nic_dma_ring *r);
void nic_dma_ring_stop(struct nic_dma_ring *r);

/* --- 4. Traffic: DMA_PATTERN_GEN_* (source of card-to-host data) ----------------------------- */

/* GEN_SEED; GEN_CONTROL.ENABLE (a 0->1 edge restarts the pattern at the seed). While the
 * writer is disabled LitePCIe drops what the generator offers, so enable the writer first. */
void nic_pattern_gen_seed(struct nic_backend *b, uint32_t seed);
void nic_pattern_gen_enable(struct nic_backend *b, bool on);
uint64_t nic_pattern_gen_beats(struct nic_backend *b);                 /* GEN_BEATS */

/* --- 4. Traffic: DMA_PATTERN_CHK_* (sink of host-to-card data) ------------------------------- */

/* CHK_SEED = seed, CHK_TARGET = target (bytes at which the dma_pattern block's first MSI
 * fires, 0: never), then CHK_CONTROL.RESTART (clears the counts and loads the seed). */
void nic_pattern_chk_restart(struct nic_backend *b, uint32_t seed, uint32_t target);
uint64_t nic_pattern_chk_bytes(struct nic_backend *b);                 /* CHK_BYTES */
uint32_t nic_pattern_chk_errors(struct nic_backend *b);                /* CHK_ERRORS */

/* Host side of the pattern: 32-bit little-endian words seed, seed+1, ... in memory order. */
void nic_pattern_fill(void *buf, size_t len, uint32_t seed);
/* Word i of the pattern, as the bytes in memory (for comparisons). */
uint32_t nic_pattern_word(uint32_t seed, size_t i);
/* Number of 32-bit words of buf (len bytes) that differ from the pattern; *first_bad (if not
 * NULL) gets the byte offset of the first one. Reads through volatile (DMA memory). */
size_t nic_pattern_check(const volatile void *buf, size_t len, uint32_t seed, size_t *first_bad);

#ifdef __cplusplus
}
#endif

#endif /* NICDEV_H */
