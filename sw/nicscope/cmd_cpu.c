// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_cpu.c: `nicscope cpu`, (soft-CPU builds) the same registers read from the CPU over the SoC
 * bus, each equal to the host's read over BAR0. Options: the usage text in main.c.
 */
#include "nicscope.h"

/* --- cpu ---------------------------------------------------------------------------------------- */

int cmd_cpu(struct ctx *c, int argc, char **argv)
{
    struct load l = LOAD_DEFAULT;
    l.bytes = 16 * 1024;
    l.kind = "dma";
    uint64_t boot_ms = 100;
    static const struct option opts[] = {LOAD_OPTIONS, {"boot-ms", required_argument, NULL, 'b'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("cpu", argc, argv, opts)) != -1) {
        int rc;
        switch (o) {
        case 'b':
            if (!optarg || bu_parse_u64(optarg, &boot_ms) < 0 || boot_ms == 0 ||
                boot_ms > 100000)
                return usage_error("--boot-ms: 1..100000 ms of backend time");
            break;
        default:
            if ((rc = load_option(o, optarg, &l)))
                return rc;
        }
    }
    int rc = open_dev(c);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    char err[256];
    if (nic_rb_require(b, NIC_RB_UART, err, sizeof err) < 0)
        return fail(c, "this SoC has no soft CPU console (build it with make sim CPU=1): %s",
                    err);
    static char log[4096];
    const uint64_t boot_ns = boot_ms * 1000000ull, cmd_ns = c->timeout_ns;
    const uint64_t t0 = nic_now_ns(b);
    if (nic_console_bios_prompt(b, log, sizeof log, boot_ns) < 0)
        return fail(c, "the BIOS prompt did not come within %" PRIu64 " ms; console:\n%s",
                    boot_ms, log);
    out(c, "BIOS prompt after %.3f ms of backend time\n", (double)(nic_now_ns(b) - t0) / 1e6);

    /* The host opens a window, the load runs, the CPU closes it. */
    unsigned refused0;
    nicscope_cnt_status(b, &refused0);
    static struct load_state ls;
    if ((rc = load_prepare(c, &l, &ls)))
        return rc;
    nicscope_snapshot(b);
    if ((rc = run_load(c, &l, &ls)))
        return rc;
    const uint64_t base = nic_read32(b, NIC_CSR_INFO_BUS_BASE_ADDR);
    if (nic_console_write32(b, base + NIC_CSR(b, ANALYZER, CONTROL),
                            1u << NIC_CSR_ANALYZER_CONTROL_SNAPSHOT_OFFSET, cmd_ns) < 0)
        return fail(c, "CPU mem_write ANALYZER_CONTROL failed");
    struct nicscope_counts k;
    if ((rc = read_window(c, refused0, &k)) || (rc = load_finish(c, &l, &ls)))
        return rc;
    const uint32_t info_host = nic_read32(b, NIC_CSR(b, ANALYZER, INFO));

    struct bu_table t;
    static const char *const h[] = {"register", "selector", "host (BAR0)", "CPU (SoC bus)"};
    bu_table_init(&t, 4, h);
    bu_json_obj_begin(&c->j);
    bu_json_key(&c->j, "reads");
    bu_json_arr_begin(&c->j);
    unsigned n = 0, bad = 0;
    uint32_t info_cpu = 0;
    if (nic_console_read32(b, base + NIC_CSR(b, ANALYZER, INFO), &info_cpu, cmd_ns) < 0)
        return fail(c, "CPU mem_read ANALYZER_INFO failed");
    struct { const char *what; unsigned sel; uint64_t host; } items[2 * NICSCOPE_NPROBES + 2];
    size_t ni = 0;
    for (unsigned p = 0; p < NICSCOPE_NPROBES; p++) {
        items[ni++] = (typeof(items[0])){nicscope_probes[p].name, p * 8 + NS_BUSY,
                                         k.occ[p][NS_BUSY]};
        items[ni++] = (typeof(items[0])){nicscope_probes[p].name, p * 8 + NS_IDLE,
                                         k.occ[p][NS_IDLE]};
    }
    char hv[32], cv[32], sel[16];
    snprintf(hv, sizeof hv, "%#010x", info_host);
    snprintf(cv, sizeof cv, "%#010x", info_cpu);
    const char *row0[] = {"ANALYZER_INFO", "-", hv, cv};
    bu_table_row(&t, row0);
    n++;
    bad += info_cpu != info_host;
    for (size_t i = 0; i < ni; i++) {
        uint32_t hi, lo;
        if (nic_console_write32(b, base + NIC_CSR(b, ANALYZER, CNT_SEL), items[i].sel, cmd_ns) < 0 ||
            nic_console_read32(b, base + NIC_CSR(b, ANALYZER, CNT_VALUE), &hi, cmd_ns) < 0 ||
            nic_console_read32(b, base + NIC_CSR(b, ANALYZER, CNT_VALUE) + 4, &lo, cmd_ns) < 0)
            return fail(c, "CPU read of counter %#x failed", items[i].sel);
        const uint64_t cpu = ((uint64_t)hi << 32) | lo;
        snprintf(sel, sizeof sel, "%#x", items[i].sel);
        snprintf(hv, sizeof hv, "%" PRIu64, items[i].host);
        snprintf(cv, sizeof cv, "%" PRIu64, cpu);
        char what[64];
        snprintf(what, sizeof what, "CNT_VALUE %s.%s", items[i].what,
                 nicscope_count_names[items[i].sel % 8]);
        const char *row[] = {what, sel, hv, cv};
        bu_table_row(&t, row);
        bu_json_obj_begin(&c->j);
        bu_json_kstr(&c->j, "register", what);
        bu_json_ku64(&c->j, "host", items[i].host);
        bu_json_ku64(&c->j, "cpu", cpu);
        bu_json_obj_end(&c->j);
        n++;
        bad += cpu != items[i].host;
    }
    bu_json_arr_end(&c->j);
    bu_json_ku64(&c->j, "compared", n);
    bu_json_ku64(&c->j, "differ", bad);
    bu_json_obj_end(&c->j);
    out(c, "\nThe window the CPU closed (mem_write ANALYZER_CONTROL.SNAPSHOT), read both ways:\n");
    if (!c->run.quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    if (bad)
        return fail(c, "%u of %u values differ between the CPU's and the host's reads", bad, n);
    out(c, "%u values equal from the CPU and from the host\n", n);
    return backend_check(c, "cpu");
}
