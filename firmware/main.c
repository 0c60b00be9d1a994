// SPDX-License-Identifier: BSD-2-Clause
/*
 * main.c: the firmware's entry: discovers the NIC, prints a banner, then reads commands from the
 * UART console, one per line, and runs them. Every command ends with a line "ok" or
 * "error: <why>", so a program on the other end knows when it is done.
 *
 * Commands: help; info (the identification block and register blocks); selftest (ID, blocks,
 * scratch, DMA and MAC loopback); tx FRAMES SIZE [INFLIGHT [nocheck]] (benchmark through the MAC
 * loopback, a nicbench tx JSON record); csr [SAMPLES] (CSR access cost, csr_latency records);
 * coalesce [KEY VALUE ...] (rx-usecs, rx-frames, ... as ethtool -C); scope (the analyzer's
 * per-probe counts over the last run, a JSON record).
 */
#include <string.h>

#include "fw.h"

struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *help;
};

static int cmd_help(int argc, char **argv);

static const struct command commands[] = {
    {"help", cmd_help, "this list"},
    {"info", cmd_info, "identification block and register blocks"},
    {"selftest", cmd_selftest, "ID, register blocks, scratch, DMA and MAC loopback"},
    {"tx", cmd_tx, "tx FRAMES SIZE [INFLIGHT [nocheck]]: TX/RX benchmark (MAC loopback)"},
    {"csr", cmd_csr, "csr [SAMPLES]: CSR read/write cost from the cycle counter"},
    {"coalesce", cmd_coalesce, "coalesce [rx-usecs N] [rx-frames N] ...: ethtool -C values"},
    {"scope", cmd_nicscope, "scope [breakdown]: the bus analyzer's counts since the last scope"},
    {"stream", cmd_stream, "stream [READS]: the analyzer's deep capture into main RAM"},
};

static int cmd_help(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    for (unsigned i = 0; i < sizeof commands / sizeof commands[0]; i++)
        con_printf("  %-9s %s\n", commands[i].name, commands[i].help);
    return 0;
}

int main(void)
{
    static char line[FW_LINE_MAX];
    char *argv[FW_MAX_ARGS];
    con_printf("\nnicfw: open FPGA NIC firmware, sys clock %lu Hz\n",
               (unsigned long)fw_clk_hz());
    if (fw_nic_discover(&fw_nic) == 0)
        con_printf("nicfw: %u register blocks, nic at %#lx, %u TX queues\n", fw_nic.rb.n,
                   (unsigned long)fw_nic.nic_base, fw_nic.hw_txq);
    for (;;) {
        con_puts("nicfw> ");
        con_getline(line, sizeof line);
        con_printf("%s\n", line);
        /* Split at blanks (not strtok: picolibc keeps its state in thread-local storage,
         * which this start-up does not set up). */
        int argc = 0;
        for (char *p = line; *p && argc < (int)FW_MAX_ARGS;) {
            while (*p == ' ' || *p == '\t')
                *p++ = 0;
            if (!*p)
                break;
            argv[argc++] = p;
            while (*p && *p != ' ' && *p != '\t')
                p++;
        }
        if (argc == 0)
            continue;
        const struct command *c = NULL;
        for (unsigned i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp(argv[0], commands[i].name) == 0)
                c = &commands[i];
        if (!c) {
            con_printf("error: unknown command '%s' (help lists them)\n", argv[0]);
            continue;
        }
        if (c->run(argc, argv) == 0)
            con_puts("ok\n");
    }
}
