// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_nicscope.c: the console's `scope` command, the bus analyzer's report from the CPU: a
 * snapshot closes every counter's window (ANALYZER_CONTROL.SNAPSHOT; the window opened at the
 * previous snapshot), then each probe's counts (busy, stall, idle, bytes, frames, stall_hold:
 * nicscope_layout.h) are read through CNT_SEL / CNT_VALUE, as sw/nicscope/lib/nicscope_lib.c
 * reads them. One JSON record per probe: {"experiment": "scope_occupancy", "probe": ...,
 * "group": ..., counts...}. On this SoC the PCIe and LitePCIe DMA probes see nothing (no PCIe):
 * their counts are the window's idle cycles only. This build's analyzer has fewer features
 * than nic_regs.h's (its layout CRC differs); CONTROL, CNT_SEL, CNT_VALUE and CNT_STATUS are at
 * the offsets nic_regs.h gives (litex_soc/targets/ecp5_soc.py checks it when it builds the SoC).
 */
#include "fw.h"

#include "nicscope_layout.h"

struct probe_def {
    const char *name, *group;
    int tlp;
};
static const struct probe_def probes[NICSCOPE_NPROBES] = {NICSCOPE_PROBES};
static const char *const count_names[NICSCOPE_NCOUNTS] = {NICSCOPE_COUNT_NAMES};

static uint64_t counter(struct fw_nic *n, unsigned sel)
{
    fw_nic_wr(n, n->scope_base + NIC_CSR_ANALYZER_CNT_SEL_ADDR, sel);
    return nic_core_csr_read_wide(&n->hw, n->scope_base + NIC_CSR_ANALYZER_CNT_VALUE_ADDR,
                                  NIC_CSR_ANALYZER_CNT_VALUE_SIZE);
}

int cmd_nicscope(int argc, char **argv)
{
    (void)argc;
    (void)argv;
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
        json_str("probe", probes[p].name);
        json_str("group", probes[p].group);
        for (unsigned k = 0; k < NICSCOPE_NCOUNTS; k++)
            json_u64(count_names[k], counter(n, p * 8 + k));
        json_end();
    }
    return 0;
}
