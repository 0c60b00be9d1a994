// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_coalesce.c: `coalesce [KEY VALUE ...]`: the interrupt coalescer's values as ethtool -C
 * names them (rx-usecs, rx-frames, rx-abs-usecs, rx-min-interval, tx-...; sw/core's table),
 * written through nic_core_coalesce_write (checked against the hardware's ranges) and read
 * back, and kept for the commands that open the NIC (tx; selftest needs rx-frames 1 and
 * says so when it is not); without arguments, prints them.
 */
#include <string.h>

#include "fw.h"

int cmd_coalesce(int argc, char **argv)
{
    struct fw_nic *n = &fw_nic;
    if (!n->nic_base && fw_nic_discover(n) < 0)
        return -1;
    struct nic_q_coalesce c;
    uint32_t rt, tt;
    if (!nic_core_coalesce_read(&n->hw, n->nic_base, &c, n->tick_cycles, &rt, &tt))
        nic_core_coalesce_defaults(&c);
    if (argc > 1) {
        if (argc % 2 == 0) {
            con_puts("error: usage: coalesce [KEY VALUE ...]\n");
            return -1;
        }
        uint32_t *field[NIC_CORE_COALESCE_NVALUES] = {
            &c.rx_usecs, &c.rx_frames, &c.rx_abs_usecs, &c.rx_min_interval,
            &c.tx_usecs, &c.tx_frames, &c.tx_abs_usecs, &c.tx_min_interval};
        for (int i = 1; i < argc; i += 2) {
            int k = -1;
            for (unsigned j = 0; j < NIC_CORE_COALESCE_NVALUES; j++)
                if (strcmp(argv[i], nic_core_coalesce_names[j]) == 0)
                    k = (int)j;
            uint32_t v;
            if (k < 0 || !fw_parse_u32(argv[i + 1], &v)) {
                con_printf("error: coalesce: '%s %s' (keys: rx-usecs, rx-frames, "
                           "rx-abs-usecs, rx-min-interval, tx-...)\n", argv[i], argv[i + 1]);
                return -1;
            }
            *field[k] = v;
        }
        c.rx_enable = c.tx_enable = true;
        const int bad = nic_core_coalesce_check(&c);
        if (bad >= 0) {
            con_printf("error: coalesce: %s out of range (0..%u)\n",
                       nic_core_coalesce_names[bad], NIC_Q_COALESCE_MAX);
            return -1;
        }
        nic_core_coalesce_write(&n->hw, n->nic_base, &c, n->tick_cycles);
        if (!nic_core_coalesce_read(&n->hw, n->nic_base, &c, n->tick_cycles, &rt, &tt)) {
            con_puts("error: coalesce: the tick read back is not the one written\n");
            return -1;
        }
        n->co = c;                      /* kept by the next fw_nic_open (tx, selftest) */
        n->have_co = true;
    }
    uint32_t v[NIC_CORE_COALESCE_NVALUES];
    nic_core_coalesce_values(&c, v);
    json_begin();
    json_str("experiment", "coalesce");
    for (unsigned j = 0; j < NIC_CORE_COALESCE_NVALUES; j++)
        json_u64(nic_core_coalesce_names[j], v[j]);
    json_u64("tick_cycles", n->tick_cycles);
    json_end();
    return 0;
}
