// SPDX-License-Identifier: BSD-2-Clause
/*
 * nic_dev.c: the NIC's device layer (see nic_dev.h): bring-up check, MSI, LitePCIe DMA
 * descriptor tables and rings, pattern generator/checker. Every register access goes through
 * the backend (nic_backend.h), at its block's base from the register-block table (nic_rb.h)
 * plus its offset in nic_regs.h.
 *
 * The DMA programming sequence follows LitePCIe's own kernel driver (litepcie/software/kernel/
 * main.c, litepcie_dma_writer_start/stop): disable, reset the table, prog mode, push each
 * descriptor (TABLE_VALUE then TABLE_WE), optionally loop mode, enable.
 */
#define _DEFAULT_SOURCE             /* endian.h: htole32/le32toh */
#include "nic_dev.h"

#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int nic_errf(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen)
        vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* --- wide CSRs ------------------------------------------------------------------------------ */

/* The shared core's (sw/core/nic_core.c), as the Linux module reads them: addr is a BAR0
 * offset, which the core takes as 32 bits. */
uint64_t nic_csr_read_wide(struct nic_backend *b, uint64_t addr, unsigned nwords)
{
    return nic_core_csr_read_wide(nic_hw(b), (uint32_t)addr, nwords);
}

void nic_csr_write_wide(struct nic_backend *b, uint64_t addr, unsigned nwords, uint64_t value)
{
    nic_core_csr_write_wide(nic_hw(b), (uint32_t)addr, nwords, value);
}

/* --- 1. Identification: INFO, CTRL_SCRATCH, IDENTIFIER_MEM ---------------------------------- */

static void read_ident(struct nic_backend *b, char *buf, size_t len)
{
    /* IDENTIFIER_MEM: one character per 32-bit CSR word, NUL-terminated. */
    size_t i = 0;
    for (; i + 1 < len; i++) {
        const uint32_t c = nic_read32(b, nic_rb_base(b, NIC_RB_IDENTIFIER_MEM) + 4u * i) & 0xff;
        if (c == 0)
            break;
        buf[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    buf[i] = 0;
}

int nic_dev_check(struct nic_backend *b, struct nic_dev_info *info, char *err, size_t errlen)
{
    struct nic_dev_info local;
    if (!info)
        info = &local;
    memset(info, 0, sizeof *info);

    /* INFO_MAGIC first: if it is wrong nothing else on BAR0 is ours. */
    info->magic = nic_read32(b, NIC_CSR_INFO_MAGIC_ADDR);
    if (info->magic != NIC_ID_MAGIC) {
        snprintf(err, errlen,
                 "INFO_MAGIC (BAR0+%#lx) reads %#010x, expected %#010x: not this NIC's "
                 "bitstream, or BAR0 not reachable (all-ones means no completion)",
                 (unsigned long)NIC_CSR_INFO_MAGIC_ADDR, info->magic, NIC_ID_MAGIC);
        return -1;
    }

    /* CTRL_SCRATCH: write/read-back of patterns that toggle every bit, then restore. */
    static const uint32_t patterns[] = {0xa5a5a5a5u, 0x5a5a5a5au, 0x00000000u, 0xffffffffu,
                                        0x01234567u};
    info->scratch_reset = nic_read32(b, NIC_CSR(b, CTRL, SCRATCH));
    for (size_t i = 0; i < sizeof patterns / sizeof patterns[0]; i++) {
        nic_write32(b, NIC_CSR(b, CTRL, SCRATCH), patterns[i]);
        const uint32_t got = nic_read32(b, NIC_CSR(b, CTRL, SCRATCH));
        if (got != patterns[i]) {
            snprintf(err, errlen,
                     "CTRL_SCRATCH (BAR0+%#lx): wrote %#010x, read back %#010x (pattern %zu of "
                     "%zu): CSR writes are not reaching the device",
                     (unsigned long)NIC_CSR(b, CTRL, SCRATCH), patterns[i], got, i + 1,
                     sizeof patterns / sizeof patterns[0]);
            return -1;
        }
        info->scratch_patterns++;
    }
    nic_write32(b, NIC_CSR(b, CTRL, SCRATCH), info->scratch_reset);

    /* INFO_VERSION, INFO_CONFIG: the build this host code talks to. */
    const uint32_t ver = nic_read32(b, NIC_CSR_INFO_VERSION_ADDR);
    info->version_major = NIC_FIELD_GET(ver, NIC_CSR_INFO_VERSION_MAJOR);
    info->version_minor = NIC_FIELD_GET(ver, NIC_CSR_INFO_VERSION_MINOR);
    info->config = nic_read32(b, NIC_CSR_INFO_CONFIG_ADDR);
    info->data_width = NIC_FIELD_GET(info->config, NIC_CSR_INFO_CONFIG_DATA_WIDTH);
    info->ndmas = NIC_FIELD_GET(info->config, NIC_CSR_INFO_CONFIG_NDMAS);
    info->sim = NIC_FIELD_GET(info->config, NIC_CSR_INFO_CONFIG_SIM) != 0;
    info->cpu = NIC_FIELD_GET(info->config, NIC_CSR_INFO_CONFIG_CPU) != 0;
    if (info->data_width == 0 || info->data_width % 32 != 0 || info->ndmas < 1) {
        snprintf(err, errlen, "INFO_CONFIG (BAR0+%#lx) = %#010x: data_width %u, ndmas %u make "
                 "no sense", (unsigned long)NIC_CSR_INFO_CONFIG_ADDR, info->config,
                 info->data_width, info->ndmas);
        return -1;
    }
    read_ident(b, info->ident, sizeof info->ident);
    return 0;
}

/* --- 2. Interrupts: PCIE_MSI ---------------------------------------------------------------- */

void nic_msi_enable(struct nic_backend *b, uint32_t mask)
{
    nic_write32(b, NIC_CSR(b, PCIE_MSI, ENABLE), mask);
    /* MSI-X's per-vector enable too while the host has MSI-X on (the PHY then leaves MSI
     * idle). */
    if (b->msix)
        nic_write32(b, NIC_CSR(b, PCIE_MSIX, ENABLE), mask);
}


int nic_irq_drain_vectors(struct nic_backend *b, uint64_t *per_vector)
{
    int n = 0;
    for (;;) {
        unsigned vec = 0;
        const int r = nic_irq_wait_vector(b, 0, &vec);
        if (r < 0)
            return r;
        if (r == 0)
            return n;
        if (per_vector && vec < NIC_MSI_VECTORS)
            per_vector[vec]++;
        n++;
    }
}

int nic_irq_drain(struct nic_backend *b) { return nic_irq_drain_vectors(b, NULL); }

int nic_msi_wait_sources(struct nic_backend *b, uint64_t timeout_ns, uint32_t *sources)
{
    unsigned vec = 0;
    const int r = nic_irq_wait_vector(b, timeout_ns, &vec);
    if (r == 1)
        *sources |= vec < 32 ? nic_msi_bit(vec) : 0;
    return r;
}

/* --- 3. DMA: PCIE_DMA0_READER_* / PCIE_DMA0_WRITER_* ----------------------------------------- */

/* A descriptor is one 64-bit TABLE_VALUE (two 32-bit words), its fields where LitePCIe puts
 * them, the same for reader and writer. */
_Static_assert(NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_SIZE == 2 &&
                   NIC_CSR_PCIE_DMA0_READER_TABLE_VALUE_SIZE == 2,
               "descriptor TABLE_VALUE must be a 64-bit CSR of two 32-bit words");
_Static_assert(NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_LENGTH_OFFSET ==
                   NIC_CSR_PCIE_DMA0_READER_TABLE_VALUE_LENGTH_OFFSET &&
               NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_IRQ_DISABLE_OFFSET ==
                   NIC_CSR_PCIE_DMA0_READER_TABLE_VALUE_IRQ_DISABLE_OFFSET &&
               NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_LAST_DISABLE_OFFSET ==
                   NIC_CSR_PCIE_DMA0_READER_TABLE_VALUE_LAST_DISABLE_OFFSET,
               "reader and writer descriptors must share one layout");

struct dma_regs {
    uint64_t enable, value, we, loop_prog_n, loop_status, level, reset;
    unsigned value_words, we_words;
};

static const struct dma_regs dma_regs[2] = {
    [NIC_DMA_READER] = {
        NIC_CSR_PCIE_DMA0_READER_ENABLE_ADDR, NIC_CSR_PCIE_DMA0_READER_TABLE_VALUE_ADDR,
        NIC_CSR_PCIE_DMA0_READER_TABLE_WE_ADDR, NIC_CSR_PCIE_DMA0_READER_TABLE_LOOP_PROG_N_ADDR,
        NIC_CSR_PCIE_DMA0_READER_TABLE_LOOP_STATUS_ADDR, NIC_CSR_PCIE_DMA0_READER_TABLE_LEVEL_ADDR,
        NIC_CSR_PCIE_DMA0_READER_TABLE_RESET_ADDR, NIC_CSR_PCIE_DMA0_READER_TABLE_VALUE_SIZE,
        NIC_CSR_PCIE_DMA0_READER_TABLE_WE_SIZE,
    },
    [NIC_DMA_WRITER] = {
        NIC_CSR_PCIE_DMA0_WRITER_ENABLE_ADDR, NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_ADDR,
        NIC_CSR_PCIE_DMA0_WRITER_TABLE_WE_ADDR, NIC_CSR_PCIE_DMA0_WRITER_TABLE_LOOP_PROG_N_ADDR,
        NIC_CSR_PCIE_DMA0_WRITER_TABLE_LOOP_STATUS_ADDR, NIC_CSR_PCIE_DMA0_WRITER_TABLE_LEVEL_ADDR,
        NIC_CSR_PCIE_DMA0_WRITER_TABLE_RESET_ADDR, NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_SIZE,
        NIC_CSR_PCIE_DMA0_WRITER_TABLE_WE_SIZE,
    },
};

const char *nic_dma_engine_name(enum nic_dma_engine e)
{
    return e == NIC_DMA_READER ? "reader" : "writer";
}

unsigned nic_dma_irq(struct nic_backend *b, enum nic_dma_engine e)
{
    return nic_rb_msi(b, NIC_RB_PCIE_DMA0, e == NIC_DMA_READER ? 0 : 1);
}

uint32_t nic_dma_max_len(void)
{
    return (uint32_t)((1ull << NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_LENGTH_SIZE) - 1);
}

int nic_dma_desc_check(struct nic_backend *b, uint64_t bus_addr, uint32_t len, uint32_t align,
                       char *err, size_t errlen)
{
    const unsigned width = nic_rb_param(b, NIC_RB_PCIE_DMA0);
    if (width < 64 && (bus_addr + len - 1) >> width) {
        snprintf(err, errlen, "DMA buffer at bus address %#llx (+%u) is beyond the DMA's "
                 "%u-bit addressing (pcie_dma0's address width)", (unsigned long long)bus_addr,
                 len, width);
        return -1;
    }
    if (len == 0 || len > nic_dma_max_len()) {
        snprintf(err, errlen, "DMA length %u out of range 1..%u (TABLE_VALUE LENGTH field)",
                 len, nic_dma_max_len());
        return -1;
    }
    if (align && (len % align || bus_addr % align)) {
        snprintf(err, errlen, "DMA address %#llx / length %u not a multiple of %u bytes (the "
                 "datapath width)", (unsigned long long)bus_addr, len, align);
        return -1;
    }
    return 0;
}

uint32_t nic_dma_refused(struct nic_backend *b, enum nic_dma_engine e)
{
    if (!nic_rb_find(b, NIC_RB_PCIE_DMA0_GUARD))
        return 0;
    return nic_read32(b, e == NIC_DMA_READER ? NIC_CSR(b, PCIE_DMA0_GUARD, READER_REFUSED)
                                             : NIC_CSR(b, PCIE_DMA0_GUARD, WRITER_REFUSED));
}

uint32_t nic_dma_hw_align(struct nic_backend *b)
{
    if (!nic_rb_find(b, NIC_RB_PCIE_DMA0_GUARD))
        return 0;
    return nic_read32(b, NIC_CSR(b, PCIE_DMA0_GUARD, ALIGN));
}

void nic_dma_table_reset(struct nic_backend *b, enum nic_dma_engine e)
{
    nic_write32(b, nic_rb_base(b, NIC_RB_PCIE_DMA0) + dma_regs[e].reset, 1);
}

void nic_dma_set_loop(struct nic_backend *b, enum nic_dma_engine e, bool loop)
{
    nic_write32(b, nic_rb_base(b, NIC_RB_PCIE_DMA0) + dma_regs[e].loop_prog_n, loop ? 1 : 0);
}

void nic_dma_push(struct nic_backend *b, enum nic_dma_engine e, uint64_t bus_addr, uint32_t len,
                  unsigned flags)
{
    /* Field offsets of nic_regs.h (the reader's are asserted equal to the writer's above). */
    const uint64_t lsb_mask = (1ull << NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_ADDRESS_LSB_SIZE) - 1;
    const uint64_t value =
        ((bus_addr & lsb_mask) << NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_ADDRESS_LSB_OFFSET) |
        ((uint64_t)(len & nic_dma_max_len()) << NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_LENGTH_OFFSET) |
        ((uint64_t)!!(flags & NIC_DMA_IRQ_DISABLE)
         << NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_IRQ_DISABLE_OFFSET) |
        ((uint64_t)!!(flags & NIC_DMA_LAST_DISABLE)
         << NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_LAST_DISABLE_OFFSET);
    nic_csr_write_wide(b, nic_rb_base(b, NIC_RB_PCIE_DMA0) + dma_regs[e].value,
                       dma_regs[e].value_words, value);
    /* TABLE_WE: address bits above the LSB field (0 with 32-bit DMA); the write pushes. */
    const unsigned lsb_bits = NIC_CSR_PCIE_DMA0_WRITER_TABLE_VALUE_ADDRESS_LSB_SIZE;
    nic_csr_write_wide(b, nic_rb_base(b, NIC_RB_PCIE_DMA0) + dma_regs[e].we, dma_regs[e].we_words,
                       lsb_bits < 64 ? bus_addr >> lsb_bits : 0);
}

void nic_dma_enable(struct nic_backend *b, enum nic_dma_engine e, bool on)
{
    nic_write32(b, nic_rb_base(b, NIC_RB_PCIE_DMA0) + dma_regs[e].enable, on ? 1 : 0);
}

bool nic_dma_idle(struct nic_backend *b, enum nic_dma_engine e)
{
    return (nic_read32(b, nic_rb_base(b, NIC_RB_PCIE_DMA0) + dma_regs[e].enable) >> 1) & 1;
}

uint32_t nic_dma_level(struct nic_backend *b, enum nic_dma_engine e)
{
    return nic_read32(b, nic_rb_base(b, NIC_RB_PCIE_DMA0) + dma_regs[e].level);
}

void nic_dma_loop_status(struct nic_backend *b, enum nic_dma_engine e, uint32_t *index,
                         uint32_t *count)
{
    const uint32_t v = nic_read32(b, nic_rb_base(b, NIC_RB_PCIE_DMA0) + dma_regs[e].loop_status);
    if (index)
        *index = NIC_FIELD_GET(v, NIC_CSR_PCIE_DMA0_WRITER_TABLE_LOOP_STATUS_INDEX);
    if (count)
        *count = NIC_FIELD_GET(v, NIC_CSR_PCIE_DMA0_WRITER_TABLE_LOOP_STATUS_COUNT);
}

void nic_dma_stop(struct nic_backend *b, enum nic_dma_engine e)
{
    nic_dma_set_loop(b, e, false);
    nic_dma_table_reset(b, e);
    nic_dma_enable(b, e, false);
    nic_dma_table_reset(b, e);
}

void nic_dma_loopback(struct nic_backend *b, bool on)
{
    nic_write32(b, NIC_CSR(b, PCIE_DMA0, LOOPBACK_ENABLE), on ? 1 : 0);
}

uint32_t nic_dma_buffering_level(struct nic_backend *b, enum nic_dma_engine e)
{
    if (e == NIC_DMA_WRITER)
        return NIC_FIELD_GET(nic_read32(b, NIC_CSR(b, PCIE_DMA0, BUFFERING_WRITER_FIFO_STATUS)),
                             NIC_CSR_PCIE_DMA0_BUFFERING_WRITER_FIFO_STATUS_LEVEL);
    return NIC_FIELD_GET(nic_read32(b, NIC_CSR(b, PCIE_DMA0, BUFFERING_READER_FIFO_STATUS)),
                         NIC_CSR_PCIE_DMA0_BUFFERING_READER_FIFO_STATUS_LEVEL);
}

int nic_dma_writer_drain(struct nic_backend *b, uint64_t timeout_ns)
{
    /* A disabled writer accepts and drops its input, so the buffering FIFO empties. */
    const uint64_t deadline = nic_now_ns(b) + timeout_ns;
    while (nic_dma_buffering_level(b, NIC_DMA_WRITER) != 0) {
        if (nic_now_ns(b) > deadline)
            return -1;
        nic_idle(b, 64);
    }
    return 0;
}

/* Descriptor rings --------------------------------------------------------------------------- */

int nic_dma_ring_setup(struct nic_dma_ring *r, struct nic_backend *b, enum nic_dma_engine e,
                       uint64_t dma, uint32_t size, uint32_t count, uint32_t align,
                       unsigned flags, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->b = b;
    r->engine = e;
    r->dma = dma;
    r->size = size;
    r->count = count;
    r->flags = flags;
    if (count == 0) {
        snprintf(err, errlen, "DMA ring with no descriptors");
        return -1;
    }
    for (uint32_t i = 0; i < count; i++)
        if (nic_dma_desc_check(b, dma + (uint64_t)i * size, size, align, err, errlen) < 0)
            return -1;

    nic_dma_enable(b, e, false);
    nic_dma_table_reset(b, e);
    nic_dma_set_loop(b, e, false);
    for (uint32_t i = 0; i < count; i++) {
        nic_dma_push(b, e, dma + (uint64_t)i * size, size, flags);
        r->next_to_use++;
    }
    const uint32_t level = nic_dma_level(b, e);
    if (level != count) {
        snprintf(err, errlen, "PCIE_DMA0_%s_TABLE_LEVEL is %u after pushing %u descriptors "
                 "(table full or pushes lost)", e == NIC_DMA_READER ? "READER" : "WRITER",
                 level, count);
        return -1;
    }
    return 0;
}

void nic_dma_ring_start(struct nic_dma_ring *r, bool loop)
{
    nic_dma_set_loop(r->b, r->engine, loop);
    nic_dma_enable(r->b, r->engine, true);
}

void nic_dma_ring_update(struct nic_dma_ring *r)
{
    uint32_t index, count;
    nic_dma_loop_status(r->b, r->engine, &index, &count);
    r->next_to_clean = r->count ? (index + 1) % r->count : 0;
    r->loops = count;
}

void nic_dma_ring_stop(struct nic_dma_ring *r) { nic_dma_stop(r->b, r->engine); }

/* --- 4. Traffic: DMA_PATTERN_GEN_*, DMA_PATTERN_CHK_* -------------------------------------- */

void nic_pattern_gen_seed(struct nic_backend *b, uint32_t seed)
{
    nic_write32(b, NIC_CSR(b, DMA_PATTERN, GEN_SEED), seed);
}

void nic_pattern_gen_enable(struct nic_backend *b, bool on)
{
    nic_write32(b, NIC_CSR(b, DMA_PATTERN, GEN_CONTROL),
                (uint32_t)(on ? 1u : 0u) << NIC_CSR_DMA_PATTERN_GEN_CONTROL_ENABLE_OFFSET);
}

uint64_t nic_pattern_gen_beats(struct nic_backend *b)
{
    return nic_csr_read_wide(b, NIC_CSR(b, DMA_PATTERN, GEN_BEATS), NIC_CSR_DMA_PATTERN_GEN_BEATS_SIZE);
}

void nic_pattern_chk_restart(struct nic_backend *b, uint32_t seed, uint32_t target)
{
    nic_write32(b, NIC_CSR(b, DMA_PATTERN, CHK_SEED), seed);
    nic_write32(b, NIC_CSR(b, DMA_PATTERN, CHK_TARGET), target);
    nic_write32(b, NIC_CSR(b, DMA_PATTERN, CHK_CONTROL),
                1u << NIC_CSR_DMA_PATTERN_CHK_CONTROL_RESTART_OFFSET);
}

uint64_t nic_pattern_chk_bytes(struct nic_backend *b)
{
    return nic_csr_read_wide(b, NIC_CSR(b, DMA_PATTERN, CHK_BYTES), NIC_CSR_DMA_PATTERN_CHK_BYTES_SIZE);
}

uint32_t nic_pattern_chk_errors(struct nic_backend *b)
{
    return nic_read32(b, NIC_CSR(b, DMA_PATTERN, CHK_ERRORS));
}

uint32_t nic_pattern_word(uint32_t seed, size_t i) { return seed + (uint32_t)i; }

void nic_pattern_fill(void *buf, size_t len, uint32_t seed)
{
    uint32_t *w = buf;
    for (size_t i = 0; i < len / 4; i++)
        w[i] = htole32(nic_pattern_word(seed, i));
}

size_t nic_pattern_check(const volatile void *buf, size_t len, uint32_t seed, size_t *first_bad)
{
    const volatile uint32_t *w = buf;
    size_t bad = 0;
    for (size_t i = 0; i < len / 4; i++) {
        if (le32toh(w[i]) != nic_pattern_word(seed, i)) {
            if (bad == 0 && first_bad)
                *first_bad = i * 4;
            bad++;
        }
    }
    return bad;
}
