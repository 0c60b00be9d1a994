/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_breakdown.h: what the files of `nicscope breakdown` share (cmd_breakdown.c the command:
 * its options, the loads, a size's window; cmd_breakdown_model.c the cross-checks against the
 * host model; cmd_breakdown_report.c a window's own checks, its tables and JSON record).
 * Private to the breakdown command; after nicscope.h.
 */
#ifndef CMD_BREAKDOWN_H
#define CMD_BREAKDOWN_H

#include "nicscope.h"

#define MAX_SIZES 16
enum { STG_PHY = 3, STG_RTT = 4, STG_CPL = 5, STG_TOTAL = NICSCOPE_BD_NSTAGES - 1 };
enum { WSTG_QUEUE = 0, WSTG_CREDIT = 1, WSTG_PHY = 2, WSTG_TOTAL = NICSCOPE_WBD_NSTAGES - 1 };
#define BAR 48

struct bd_args {
    const char *path;                      /* "dma", "c2h" or "tx" */
    uint64_t sizes[MAX_SIZES];
    size_t nsizes;
    uint64_t count;                        /* transfers or frames per size */
    bool stream;                           /* the deep capture through each window */
};

/* The deep capture beside a window: a ring of 2**BD_STREAM_LOG2 entries, drained from the
 * loads' wait loops; entries are counted, not kept. */
#define BD_STREAM_LOG2 12
struct bd_stream {
    struct nicscope_stream s;
    size_t taken;
    uint32_t entries, lost;
};

/* A stage's count, sum, min, max and log2 bins, the analyzer's or the host model's. */
struct stage_ref {
    uint64_t count, sum, min, max, bins[NICSCOPE_BD_NBINS];
};

/* The model's reads [n0, n1), per request class (by address: model_class()): rtt (MRd first
 * beat -> first completion beat) and cpl (-> last completion beat) in cycles. */
struct class_ref {
    struct stage_ref rtt, cpl;
};

/* Little's law on the read tags: mean tags in use (the rd_tags level over the window) against
 * the MRd rate (the PHY's TLP counter) x the mean tag hold (the breakdown's phy + rtt + cpl:
 * from the cycle the packetizer takes the request, and its tag leaves the tag FIFO, to its last
 * completion beat). Three counters of different hardware; the check is 1 %. */
struct little {
    bool have;
    double mean_tags, mrd_rate, mean_hold, diff_pct;
};

/* cmd_breakdown_model.c: the cross-checks against the host model's reads [n0, n1) and writes
 * [n0, n1); the counts compared added to *n (checked[k]: read class k compared). */
int bd_read_crosscheck(struct ctx *c, const struct load_state *ls, bool tx, uint64_t n0,
                       uint64_t n1, const struct nicscope_bd *bd, size_t *n, bool *checked);
int wr_crosscheck(struct ctx *c, const struct nicscope_wbd *wb, uint64_t n0, uint64_t n1,
                  size_t *compared);

/* cmd_breakdown_report.c: a window's checks; its tables, lines and JSON record. */
int self_check(struct ctx *c, const struct nicscope_bd *bd);
int wr_self_check(struct ctx *c, const struct nicscope_wbd *wb);
int little_tags(struct ctx *c, const struct nicscope_counts *k, const struct nicscope_bd *bd,
                uint64_t window, struct little *lt);
void print_size(struct ctx *c, uint64_t size, const struct nicscope_bd *bd, uint64_t window);
void print_wr_size(struct ctx *c, const struct nicscope_wbd *wb);
void json_size(struct ctx *c, uint64_t size, uint64_t window, const struct nicscope_bd *bd,
               size_t compared, const struct little *lt, const bool *checked,
               const struct nicscope_wbd *wb, size_t wr_compared, const struct bd_stream *st);

#endif /* CMD_BREAKDOWN_H */
