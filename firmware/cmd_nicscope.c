// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_nicscope.c: the console's `scope` command, the bus analyzer's report from the CPU: a
 * snapshot closes every counter's window (ANALYZER_CONTROL.SNAPSHOT; the window opened at the
 * previous snapshot), then each probe's counts (busy, stall, idle, bytes, frames, stall_hold:
 * nicscope_layout.h) are read through CNT_SEL / CNT_VALUE, as sw/nicscope/lib/nicscope_lib.c
 * reads them. One JSON record per probe: {"experiment": "scope_occupancy", "probe": ...,
 * "group": ..., counts...}. On this SoC the PCIe and LitePCIe DMA probes see nothing (no PCIe):
 * their counts are the window's idle cycles only. `scope breakdown`: then, when built, the read
 * and write latency breakdowns per class and stage of the same window (the hand-offs on this SoC:
 * litex_soc/nicscope/socbus_handoffs.py): {"experiment": "scope_breakdown", "path": "h2c" |
 * "c2h", "class": ..., "stage": ..., "count", "raises", "occupancy", "sum", "min", "max",
 * "mismatch"}, as `nicscope breakdown` reads them (sw/nicscope/lib/nicscope_lib.c). The
 * registers used are at the offsets nic_regs.h gives (litex_soc/targets/ecp5_soc.py checks it
 * when it builds the SoC).
 */
#include "fw.h"

#include <stdbool.h>
#include <string.h>

#include "nicscope_layout.h"

const struct fw_probe fw_probes[NICSCOPE_NPROBES] = {NICSCOPE_PROBES};
static const char *const count_names[NICSCOPE_NCOUNTS] = {NICSCOPE_COUNT_NAMES};

static uint64_t counter(struct fw_nic *n, unsigned sel)
{
    fw_nic_wr(n, n->scope_base + NIC_CSR_ANALYZER_CNT_SEL_ADDR, sel);
    return nic_core_csr_read_wide(&n->hw, n->scope_base + NIC_CSR_ANALYZER_CNT_VALUE_ADDR,
                                  NIC_CSR_ANALYZER_CNT_VALUE_SIZE);
}

static const char *const bd_stages[NICSCOPE_BD_NSTAGES] = {NICSCOPE_BD_STAGE_NAMES};
static const char *const bd_classes[NICSCOPE_BD_MAX_CLASSES] = {NICSCOPE_BD_CLASS_NAMES};
static const char *const wbd_stages[NICSCOPE_WBD_NSTAGES] = {NICSCOPE_WBD_STAGE_NAMES};
static const char *const wbd_classes[NICSCOPE_WBD_MAX_CLASSES] = {NICSCOPE_WBD_CLASS_NAMES};

struct bd_shape {
    const char *path;
    unsigned info_addr, sel, class_stride, class_counts, nstages, max_classes;
    const char *const *stages, *const *classes;
    unsigned mismatch_sel;
};

static const struct bd_shape bd_shapes[] = {
    {"h2c", NIC_CSR_ANALYZER_BD_INFO_ADDR, NICSCOPE_SEL_BD, NICSCOPE_BD_CLASS_STRIDE,
     NICSCOPE_BD_CLASS_COUNTS, NICSCOPE_BD_NSTAGES, NICSCOPE_BD_MAX_CLASSES, bd_stages,
     bd_classes, NICSCOPE_SEL_BD_MISMATCH},
    {"c2h", NIC_CSR_ANALYZER_WBD_INFO_ADDR, NICSCOPE_SEL_WBD, NICSCOPE_WBD_CLASS_STRIDE,
     NICSCOPE_WBD_CLASS_COUNTS, NICSCOPE_WBD_NSTAGES, NICSCOPE_WBD_MAX_CLASSES, wbd_stages,
     wbd_classes, NICSCOPE_SEL_WBD_MISMATCH},
};

_Static_assert(NIC_CSR_ANALYZER_WBD_INFO_NCLASSES_OFFSET == NIC_CSR_ANALYZER_BD_INFO_NCLASSES_OFFSET &&
               NIC_CSR_ANALYZER_WBD_INFO_NCLASSES_SIZE == NIC_CSR_ANALYZER_BD_INFO_NCLASSES_SIZE &&
               NIC_CSR_ANALYZER_WBD_INFO_NSTAGES_OFFSET == NIC_CSR_ANALYZER_BD_INFO_NSTAGES_OFFSET &&
               NIC_CSR_ANALYZER_WBD_INFO_NSTAGES_SIZE == NIC_CSR_ANALYZER_BD_INFO_NSTAGES_SIZE,
               "BD_INFO and WBD_INFO differ");

/* One breakdown's records; its INFO register's class and stage counts (the same fields in
 * BD_INFO and WBD_INFO) must be the header's. */
static int breakdown_records(struct fw_nic *n, const struct bd_shape *b)
{
    const uint32_t info = fw_nic_rd(n, n->scope_base + b->info_addr);
    const unsigned nclasses = (info >> NIC_CSR_ANALYZER_BD_INFO_NCLASSES_OFFSET) &
                              ((1u << NIC_CSR_ANALYZER_BD_INFO_NCLASSES_SIZE) - 1);
    const unsigned nstages = (info >> NIC_CSR_ANALYZER_BD_INFO_NSTAGES_OFFSET) &
                             ((1u << NIC_CSR_ANALYZER_BD_INFO_NSTAGES_SIZE) - 1);
    if (nclasses == 0)
        return 0;
    if (nclasses > b->max_classes || nstages != b->nstages) {
        con_printf("error: scope: %s breakdown: %u classes, %u stages; nicscope_layout.h: "
                   "%u, %u\n", b->path, nclasses, nstages, b->max_classes, b->nstages);
        return -1;
    }
    const uint64_t mismatch = counter(n, b->mismatch_sel);
    for (unsigned c = 0; c < nclasses; c++) {
        const unsigned base = b->sel + c * b->class_stride;
        const uint64_t count = counter(n, base + b->class_counts);
        const uint64_t raises = counter(n, base + b->class_counts + 1);
        const uint64_t occupancy = counter(n, base + b->class_counts + 2);
        for (unsigned s = 0; s < nstages; s++) {
            const unsigned sb = base + s * NICSCOPE_BD_STAGE_STRIDE + NICSCOPE_BD_SUM;
            json_begin();
            json_str("experiment", "scope_breakdown");
            json_str("path", b->path);
            json_str("class", b->classes[c]);
            json_str("stage", b->stages[s]);
            json_u64("count", count);
            json_u64("raises", raises);
            json_u64("occupancy", occupancy);
            json_u64("sum", counter(n, sb));
            json_u64("min", counter(n, sb + 1));
            json_u64("max", counter(n, sb + 2));
            json_u64("mismatch", mismatch);
            json_end();
        }
    }
    return 0;
}

int cmd_nicscope(int argc, char **argv)
{
    const bool breakdowns = argc == 2 && !strcmp(argv[1], "breakdown");
    if (argc > 2 || (argc == 2 && !breakdowns)) {
        con_puts("error: usage: scope [breakdown]\n");
        return -1;
    }
    struct fw_nic *n = &fw_nic;
    if (!n->nic_base && fw_nic_discover(n) < 0)
        return -1;
    if (!n->scope_base) {
        con_puts("error: scope: no analyzer block\n");
        return -1;
    }
    fw_nic_wr(n, n->scope_base + NIC_CSR_ANALYZER_CONTROL_ADDR,
              1u << NIC_CSR_ANALYZER_CONTROL_SNAPSHOT_OFFSET);
    unsigned tries = 0;
    while (fw_nic_rd(n, n->scope_base + NIC_CSR_ANALYZER_CNT_STATUS_ADDR) & 1u)
        if (++tries == 1000) {
            con_puts("error: scope: CNT_STATUS.BUSY stays 1\n");
            return -1;
        }
    for (unsigned p = 0; p < NICSCOPE_NPROBES; p++) {
        json_begin();
        json_str("experiment", "scope_occupancy");
        json_str("probe", fw_probes[p].name);
        json_str("group", fw_probes[p].group);
        for (unsigned k = 0; k < NICSCOPE_NCOUNTS; k++)
            json_u64(count_names[k], counter(n, p * 8 + k));
        json_end();
    }
    for (unsigned i = 0; breakdowns && i < sizeof bd_shapes / sizeof bd_shapes[0]; i++)
        if (breakdown_records(n, &bd_shapes[i]) < 0)
            return -1;
    return 0;
}
