// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_stream.c: the console's `stream [READS]` command, the bus analyzer's deep capture into a
 * ring in main RAM (its own Wishbone master writes the entries; rtl/nicscope/trace_stream.py),
 * taken by the CPU as they come, as `nicscope capture --stream` takes them on PCIe
 * (sw/nicscope/lib/nicscope_lib.c). The load is the command's own: READS reads of the
 * analyzer's INFO register, the ring taken after each. Every entry's timestamp must follow the
 * one before, and the entries whose csr probe shows a read's ack (valid, ready, not we) must
 * number the CSR reads made while streaming: the record says so ("reads_seen"). One JSON
 * record: {"experiment": "scope_stream", "reads", "reads_seen", "taken", "prod", "entries",
 * "lost", "gaps", "backwards"}.
 */
#include "fw.h"

#include <string.h>

#include "nicscope_layout.h"

#define STREAM_LOG2 8u
#define STREAM_N (1u << STREAM_LOG2)

/* In main RAM beside the rings (no data cache: the CPU reads what the device wrote). */
static uint8_t ring[NICSCOPE_STREAM_ENTRY_BYTES * STREAM_N]
    __attribute__((section(".dma"), aligned(4096)));

struct signal_def {
    unsigned probe;
    const char *name;
    unsigned off, width;
};
static const struct signal_def signal_defs[] = {NICSCOPE_SIGNALS};

/* The sample bit of probe `probe`'s signal `name`, or -1. */
static int signal_bit(const char *probe, const char *name)
{
    for (unsigned i = 0; i < sizeof signal_defs / sizeof signal_defs[0]; i++) {
        const struct signal_def *s = &signal_defs[i];
        if (!strcmp(fw_probes[s->probe].name, probe) && !strcmp(s->name, name))
            return (int)s->off;
    }
    return -1;
}

static uint32_t entry_bits(const uint32_t *e, unsigned off, unsigned width)
{
    uint64_t w = e[off / 32];
    if (off % 32 + width > 32)
        w |= (uint64_t)e[off / 32 + 1] << 32;
    return (uint32_t)(w >> (off % 32)) & (width == 32 ? ~0u : (1u << width) - 1);
}

struct take_state {
    int valid, ready, we;
    uint32_t cons, last_ts, reads_seen, gaps, backwards;
    int have_ts;
};

/* Take the entries the device wrote since the last call; CONS follows. */
static void take(struct fw_nic *n, struct take_state *t)
{
    const uint32_t prod = fw_nic_rd(n, n->scope_base + NIC_CSR_ANALYZER_STREAM_PROD_ADDR);
    for (; t->cons != prod; t->cons++) {
        const uint32_t *e = (const uint32_t *)(ring + (t->cons % STREAM_N) *
                                               NICSCOPE_STREAM_ENTRY_BYTES);
        const uint32_t ts = entry_bits(e, NICSCOPE_SAMPLE_WIDTH, NICSCOPE_TS_WIDTH);
        if (t->have_ts && (int32_t)(ts - t->last_ts) <= 0)
            t->backwards++;
        t->last_ts = ts;
        t->have_ts = 1;
        t->gaps += entry_bits(e, NICSCOPE_STREAM_ENTRY_BYTES * 8 - 1, 1);
        if (entry_bits(e, (unsigned)t->valid, 1) && entry_bits(e, (unsigned)t->ready, 1) &&
            !entry_bits(e, (unsigned)t->we, 1))
            t->reads_seen++;
    }
    fw_nic_wr(n, n->scope_base + NIC_CSR_ANALYZER_STREAM_CONS_ADDR, t->cons);
}

static uint32_t status_bit(struct fw_nic *n, unsigned offset)
{
    return (fw_nic_rd(n, n->scope_base + NIC_CSR_ANALYZER_STREAM_STATUS_ADDR) >> offset) & 1u;
}

int cmd_stream(int argc, char **argv)
{
    struct fw_nic *n = &fw_nic;
    uint32_t reads = 200;
    if (argc > 2 || (argc == 2 && !fw_parse_u32(argv[1], &reads)) || reads < 1 ||
        reads > 100000) {
        con_puts("error: usage: stream [READS 1..100000]\n");
        return -1;
    }
    if (!n->nic_base && fw_nic_discover(n) < 0)
        return -1;
    if (!NICSCOPE_HAS_STREAM || !n->scope_base) {
        con_puts("error: stream: no analyzer with a deep capture\n");
        return -1;
    }
    struct take_state t = {.valid = signal_bit("csr", "valid"),
                           .ready = signal_bit("csr", "ready"),
                           .we = signal_bit("csr", "we")};
    if (t.valid < 0 || t.ready < 0 || t.we < 0) {
        con_puts("error: stream: nicscope_layout.h has no csr probe\n");
        return -1;
    }
    const uint32_t ctrl = n->scope_base + NIC_CSR_ANALYZER_STREAM_CTRL_ADDR;
    fw_nic_wr(n, ctrl, 0);
    if (status_bit(n, NIC_CSR_ANALYZER_STREAM_STATUS_BUSY_OFFSET)) {
        con_puts("error: stream: the deep capture is still writing an earlier stream\n");
        return -1;
    }
    nic_core_csr_write_wide(&n->hw, n->scope_base + NIC_CSR_ANALYZER_STREAM_BASE_ADDR,
                            NIC_CSR_ANALYZER_STREAM_BASE_SIZE, (uintptr_t)ring);
    fw_nic_wr(n, n->scope_base + NIC_CSR_ANALYZER_STREAM_SIZE_LOG2_ADDR, STREAM_LOG2);
    fw_nic_wr(n, n->scope_base + NIC_CSR_ANALYZER_STREAM_CONS_ADDR, 0);
    fw_nic_wr(n, ctrl, 1u << NIC_CSR_ANALYZER_STREAM_CTRL_ENABLE_OFFSET);
    /* The reads while streaming: each STREAM_PROD and STATUS read in take() and below too. */
    uint32_t made = 0;
    if (status_bit(n, NIC_CSR_ANALYZER_STREAM_STATUS_REFUSED_OFFSET)) {
        fw_nic_wr(n, ctrl, 0);
        con_puts("error: stream: the device refused the ring (STREAM_STATUS.REFUSED)\n");
        return -1;
    }
    made++;
    for (uint32_t i = 0; i < reads; i++) {
        (void)fw_nic_rd(n, n->scope_base + NIC_CSR_ANALYZER_INFO_ADDR);
        take(n, &t);
        made += 2;
    }
    fw_nic_wr(n, ctrl, 0);
    /* Stopped: the entries stored are still written (busy), then taken. */
    unsigned tries = 0;
    while (status_bit(n, NIC_CSR_ANALYZER_STREAM_STATUS_BUSY_OFFSET) && ++tries < 1000)
        ;
    take(n, &t);
    const uint32_t entries = fw_nic_rd(n, n->scope_base + NIC_CSR_ANALYZER_STREAM_ENTRIES_ADDR);
    const uint32_t lost = fw_nic_rd(n, n->scope_base + NIC_CSR_ANALYZER_STREAM_LOST_ADDR);
    json_begin();
    json_str("experiment", "scope_stream");
    json_u64("reads", made);
    json_u64("reads_seen", t.reads_seen);
    json_u64("taken", t.cons);
    json_u64("prod", fw_nic_rd(n, n->scope_base + NIC_CSR_ANALYZER_STREAM_PROD_ADDR));
    json_u64("entries", entries);
    json_u64("lost", lost);
    json_u64("gaps", t.gaps);
    json_u64("backwards", t.backwards);
    json_end();
    return 0;
}
