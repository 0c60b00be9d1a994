/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nicscope.h: what nicscope's commands (cmd_*.c) share with each other and with main.c: the
 * context, opening the device, snapshot windows, the loads (--load dma/tx/dma+tx/none) and their
 * options; exit codes, errors and output are sw/common/cli.h's. Private to sw/nicscope/.
 */
#ifndef NICSCOPE_H
#define NICSCOPE_H

#include <getopt.h>
#include <inttypes.h>
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
#include "nic_console.h"
#include "nic_dev.h"
#include "nic_queues.h"
#include "nicscope_lib.h"
#include "vcd_writer.h"

/* An output file the user asked for (--json, --vcd, --gtkw): created as `part` (path.part)
 * before the run, renamed to `path` once written completely (out_commit()); main() removes the
 * part of every one not committed, so a failed run leaves no partial file. */
struct out_file {
    const char *path;
    char part[4096];
    bool done;
};
#define MAX_OUT_FILES 4

struct ctx {
    const char *kind, *opts, *json_path;
    struct cli_run run;             /* --quiet, the first failure (cli.h) */
    uint64_t timeout_ns;
    struct nic_backend *b;
    struct nic_dev_info info;
    struct bu_json j;
    struct out_file outs[MAX_OUT_FILES];
    unsigned nouts;
    /* Called from the loads' wait loops while they run (the deep capture drains its ring). */
    void (*poll)(struct ctx *c);
    void *poll_arg;
};

/* The load a command runs inside its window (--load): `dma` moves --bytes in both directions at
 * once (host-to-card into the pattern checker, card-to-host from the pattern generator) and
 * checks the data; `tx` sends --frames frames of --frame-size bytes on the NIC's TX ring and
 * receives them on its RX ring through the MAC loopback, polled, each checked; `dma+tx` runs
 * both at once; `none` lets --idle-ns pass. */
struct load {
    const char *kind;               /* "dma", "tx", "dma+tx", "csr" or "none" */
    uint64_t bytes, idle_ns;        /* dma: bytes each way; none: time to let pass */
    uint64_t frames, frame_size;    /* tx: frames through the NIC's rings, bytes each */
    bool irq;                       /* tx: the RX vector raises MSIs (else polled) */
};

/* The csr load: host MMIO reads of BAR0 offset 0 on an idle device. */
#define CSR_LOAD_READS 32
#define CSR_LOAD_GAP_NS 500

#define LOAD_DEFAULT                                                                            \
    {.kind = "dma+tx", .bytes = 64 * 1024, .idle_ns = 100000, .frames = 32, .frame_size = 1514}

/* What a load holds across the window: set up by load_prepare() before the window opens, run
 * by run_load() inside it, torn down by load_finish() after it closed, so set-up traffic stays
 * out of the counts. The NIC's counters are read in prepare and finish: nic_cnt0/nic_cnt1. */
#define LOAD_MAX_COUNTERS 128
#define LOAD_MAX_HOST_EVENTS 65536
struct load_state {
    struct nic_queues nq;
    bool nq_open;
    size_t ncnt;
    uint64_t nic_cnt0[LOAD_MAX_COUNTERS], nic_cnt1[LOAD_MAX_COUNTERS];
    uint64_t doorbells;             /* TX and RX doorbells the tx load rang (MMIO writes) */
    uint64_t tx_db_ns[LOAD_MAX_HOST_EVENTS];  /* host time (nic_now_ns) of each TX doorbell */
    size_t ntx_db;
    /* The tx load's descriptor rings, bus ranges [lo, hi): TX ring 0, the RX ring. */
    uint64_t desc_lo[2], desc_hi[2];
};

/* main.c */
/* Create `path`.part for option `opt` before the run: the entry in *o, or a one-line error and
 * EXIT_USAGE. out_commit(): rename it to its name once written (a failure: fail()). */
int out_create(struct ctx *c, const char *opt, const char *path, struct out_file **o);
int out_commit(struct ctx *c, struct out_file *o);
/* A snapshot window around a load: window_open() notes CNT_STATUS.REFUSED and opens it;
 * window_close() closes it, no sooner than two snapshot passes after it opened (so the opening
 * pass is over) and without an MMIO read; read_window() then reads its counts. */
struct window {
    unsigned refused0;
    uint64_t close_after_ns;
};
void window_open(struct ctx *c, struct window *w);
void window_close(struct ctx *c, const struct window *w);
int read_window(struct ctx *c, unsigned refused0, struct nicscope_counts *k);
int open_dev(struct ctx *c);
double period_ns(void);
bool load_has(const struct load *l, const char *what);
/* The command's poll hook (ctx.poll), if any: the loads call it between their steps. */
void load_poll(struct ctx *c);
/* Option parsing: cli_next_option(), a missing value given back as the option with optarg NULL
 * (each option's check says what it needs). */
static inline int next_option(const char *cmd, int argc, char **argv, const struct option *opts)
{
    return cli_next_option(cmd, argc, argv, opts, true);
}
/* The LOAD options, in the table of each command that runs a load; their val go to
 * load_option(): EXIT_OK, or a usage error (also for 0, next_option()'s). */
enum { OPT_LOAD = 256, OPT_BYTES, OPT_FRAMES, OPT_FRAME_SIZE, OPT_IDLE_NS, OPT_IRQ };
#define LOAD_OPTIONS                                                                            \
    {"load", required_argument, NULL, OPT_LOAD}, {"bytes", required_argument, NULL, OPT_BYTES}, \
    {"frames", required_argument, NULL, OPT_FRAMES},                                            \
    {"frame-size", required_argument, NULL, OPT_FRAME_SIZE},                                    \
    {"idle-ns", required_argument, NULL, OPT_IDLE_NS}, {"irq", no_argument, NULL, OPT_IRQ}
int load_option(int opt, const char *v, struct load *l);
int load_prepare(struct ctx *c, const struct load *l, struct load_state *s);
int run_load(struct ctx *c, const struct load *l, struct load_state *s);
int load_finish(struct ctx *c, const struct load *l, struct load_state *s);
/* The tx load's TX doorbell writes as analyzer cycles (tb: the time base used; NULL when out
 * of memory; the caller frees it). */
int64_t *load_host_cycles(struct ctx *c, const struct load_state *s,
                          struct nicscope_timebase *tb);
/* A device read at bus address addr during the tx load: in a descriptor ring (else a payload
 * buffer). */
bool load_desc_addr(const struct load_state *s, uint64_t addr);
/* The delta of the NIC counter `name` over the load (load_finish() done); 0 if unknown. */
uint64_t load_counter(const struct load_state *s, const char *name);

/* The commands: cmd_<name>.c. */
int cmd_info(struct ctx *c, int argc, char **argv);
int cmd_report(struct ctx *c, int argc, char **argv);
int cmd_capture(struct ctx *c, int argc, char **argv);
int cmd_cpu(struct ctx *c, int argc, char **argv);
int cmd_breakdown(struct ctx *c, int argc, char **argv);

/* cmd_capture_vcd.c: the VCD (and GTKWave save file) of st->count changes; gap (NULL, or a flag per
 * change: entries were lost just before it) adds nic.analyzer.gap, 1 over each gap; host
 * (NULL, or host events: the analyzer cycles of nhost TX doorbell writes, ascending) adds
 * nic.host.tx_doorbell, 1 for the cycle the host wrote each (on the device's time axis);
 * tracks[i] (ntracks of them; a level index, -1: none) the level stored on capture track i,
 * drawn as nic.levels.<name>. */
int write_vcd(struct ctx *c, const struct out_file *vcd, const struct out_file *gtkw,
              const struct nicscope_status *st, const struct nicscope_change *ch,
              const bool *gap, const int64_t *host, size_t nhost, const int *tracks,
              unsigned ntracks);
/* capture_stream.c: `capture --stream`: the load with the deep capture draining into host
 * memory (a ring of 2**ring_log2 entries, drained at most every throttle_ns), then the VCD. */
int capture_stream(struct ctx *c, const struct load *l, struct out_file *vcd,
                   struct out_file *gtkw, unsigned ring_log2, uint64_t throttle_ns);
/* Stop a stream, take the rest through fn, free its ring; fails unless the device wrote
 * *taken entries and due = *taken + lost. */
int stream_end(struct ctx *c, struct nicscope_stream *s,
               void (*fn)(const struct nicscope_change *ch, bool gap, void *arg), void *arg,
               const size_t *taken, uint32_t *entries, uint32_t *lost);

#endif /* NICSCOPE_H */
