/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nicbench.h: what nicbench's commands (cmd_*.c) share with each other and with main.c: the
 * context, backend open/close, option parsing, JSON helpers, the waits of dma and loopback, the
 * frame size list of tx and rr; exit codes, errors and output are sw/common/cli.h's. Private to
 * sw/nicbench/. Files define _GNU_SOURCE before including it.
 */
#ifndef NICBENCH_H
#define NICBENCH_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "cli.h"
#include "global_opts.h"
#include "nic_backend.h"
#include "nic_dev.h"
#include "nic_queues.h"

#define MAX_SIZES 64
#define DMA_ALIGN_PAGE 4096u             /* no request may cross a 4 KiB boundary */

struct ctx {
    /* global options */
    const char *kind, *opts, *json_path, *command;
    struct cli_run run;             /* --quiet, the first failure (cli.h) */
    uint64_t timeout_ns;
    int argc;
    char **argv;
    /* the open backend */
    struct nic_backend *b;
    struct nic_dev_info info;
    uint32_t align;                 /* DMA length/address granule: datapath bytes */
    /* output */
    struct bu_json rec;             /* the records array */
    struct bu_json configs;         /* dma: one object per backend configuration */
    size_t nconfigs;
    char *params;                   /* params_json of the first backend opened */
    /* the host model's error counts (model.<name>), summed over the backends opened */
    bool have_model_checks;
    uint64_t model_checks[16];
    uint64_t model_faults[16];       /* faults the host model injected */
    /* simulator speed */
    bool have_cycles;
    uint64_t cyc0, wall0, sim0;
    uint64_t cycles, wall_ns, sim_ns;
};

#define TX_HDR 20u                       /* Ethernet header + queue, run, sequence number */
#define WIRE_PREAMBLE 8u                 /* preamble + SFD octets before every frame */
#define WIRE_OVERHEAD (WIRE_PREAMBLE + 12u) /* ... and the inter-frame gap (12) */
#define FCS_BYTES 4u

/* main.c */
uint64_t wall_ns(void);
bool counter(struct ctx *c, const char *name, uint64_t *v);
void json_opt_u64(struct bu_json *j, const char *key, bool have, uint64_t v);
void json_opt_double(struct bu_json *j, const char *key, bool have, double v);
void quiesce(struct ctx *c);
void close_backend(struct ctx *c);
int open_backend(struct ctx *c, const char *opts);
int dev_mps(struct nic_backend *b);
int dev_mrrs(struct nic_backend *b);
void print_params(struct ctx *c, const char *label);
/* cli_next_option(): a missing value is a usage error. */
static inline int next_option(const char *cmd, int argc, char **argv, const struct option *opts)
{
    return cli_next_option(cmd, argc, argv, opts, false);
}
int wait_msi(struct ctx *c, unsigned irq, const char *what);
void json_coalesce(struct bu_json *j, const struct nic_q_coalesce *co);
int wait_tail(struct ctx *c, const volatile uint8_t *p, const uint8_t *want,
              const char *what);
int frame_sizes(const char *sizes_s, uint64_t *sizes, size_t *nsizes, uint64_t *max_size);

/* The commands: cmd_<name>.c. */
int cmd_info(struct ctx *c, int argc, char **argv);
int cmd_stats(struct ctx *c, int argc, char **argv);
int cmd_csr(struct ctx *c, int argc, char **argv);
int cmd_dma(struct ctx *c, int argc, char **argv);
int cmd_loopback(struct ctx *c, int argc, char **argv);
int cmd_tx(struct ctx *c, int argc, char **argv);
int cmd_rr(struct ctx *c, int argc, char **argv);
int cmd_fuzz(struct ctx *c, int argc, char **argv);
int cmd_misaligned(struct ctx *c, int argc, char **argv);

#endif /* NICBENCH_H */
