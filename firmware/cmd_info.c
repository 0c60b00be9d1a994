// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_info.c: `info`: the identification block (magic, version, configuration, clock) and the
 * register-block table, each block with its base, version and whether nic_regs.h knows its
 * layout.
 */
#include "fw.h"

int cmd_info(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    struct fw_nic *n = &fw_nic;
    if (fw_nic_discover(n) < 0)
        return -1;
    con_printf("magic %#lx version %#lx config %#lx clk_freq %lu\n",
               (unsigned long)n->rb.magic, (unsigned long)n->rb.version,
               (unsigned long)fw_nic_rd(n, NIC_CSR_INFO_CONFIG_ADDR),
               (unsigned long)fw_nic_rd(n, NIC_CSR_INFO_CLK_FREQ_ADDR));
    for (unsigned i = 0; i < n->rb.n; i++) {
        const struct nic_core_rb_entry *e = &n->rb.e[i];
        con_printf("block %-10s type %#06lx base %#07lx version %#010lx info %#010lx %s\n",
                   nic_core_rb_name(e->type), (unsigned long)e->type, (unsigned long)e->base,
                   (unsigned long)e->version, (unsigned long)e->info,
                   nic_core_rb_check(&n->rb, e->type) == NIC_CORE_RB_OK ? "layout ok" :
                   "layout differs");
    }
    return 0;
}
