/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_fuzz.h: what the files of `nicbench fuzz` share (cmd_fuzz.c the command and its run,
 * cmd_fuzz_driver.c the frames and what the fuzzer does to the device, cmd_fuzz_score.c the
 * scoreboard). Private to the fuzz command; after nicbench.h.
 */
#ifndef CMD_FUZZ_H
#define CMD_FUZZ_H

#include "nicbench.h"

#define FZ_HDR 24u                   /* Ethernet header + magic, queue, seq, len */
#define FZ_ETHERTYPE 0x88b5u          /* IEEE local experimental */
#define FZ_POLL 64
#define FZ_BATCH 16
#define FZ_RING 256u
#define FZ_FRAMES_MAX 1000000000ull   /* a 10 M-frame soak fits; 2^32 sequence numbers */
#define FZ_LINK_CHECK_NS 200000u      /* how often the driver looks at pcie_cpl_link_downs */

enum fz_kind { FZ_GOOD, FZ_CHAIN, FZ_FLAGS, FZ_LEN0, FZ_OVERSIZE, FZ_NO_EOP, FZ_KINDS };
enum fz_ctl { FZ_TXQ_RESET, FZ_RX_RESET, FZ_TX_DB_RANGE, FZ_RX_DB_RANGE, FZ_COALESCE, FZ_CTLS };
enum { FZ_CPL_TIMEOUTS, FZ_CPL_UR, FZ_CPL_CA, FZ_CPL_EP, FZ_LINK_DOWNS, FZ_CPL_N };

struct fz {
    struct ctx *c;
    struct nic_backend *b;
    struct nic_queues nq;
    uint64_t seed, rng;
    unsigned Q, smin, smax;
    uint64_t frames;                 /* good frames to send */
    double desc_p, ctl_p;
    uint64_t watchdog_ns, progress;
    uint8_t *frame;                  /* scratch frame */
    /* per queue */
    uint64_t sent[NIC_Q_MAX_TXQ];    /* good frames posted (their sequence numbers 0..) */
    int64_t last_rx[NIC_Q_MAX_TXQ];  /* last sequence number received, -1 none */
    /* totals */
    uint64_t good, received, corrupted, out_of_order, reset_dropped, kinds[FZ_KINDS];
    uint64_t ctls[FZ_CTLS], watchdog_resets, records;
    uint64_t bad_posted;             /* descriptors posted that make no good frame */
    uint32_t link_seen;              /* pcie_cpl_link_downs at the last reset */
    bool have_link, need_reset;
    uint64_t link_suspect, link_resets; /* bad frames after a link-down, resets for it */
    bool no_eop_open[NIC_Q_MAX_TXQ];
    /* Errored frames per queue at the start: the device's count (nic_txe_q_errors) and the
     * one the host took from the writebacks (nic_txq.errors). */
    uint32_t qerr0[NIC_Q_MAX_TXQ];
    uint64_t wberr0[NIC_Q_MAX_TXQ];
    int64_t pos_seq[NIC_Q_MAX_TXQ][FZ_RING]; /* per ring position: the good frame starting
                                                there, -1 a bad descriptor, -2 a chain's next */
    uint64_t reposted;               /* good frames a reset dropped, posted again */
    char err[512];
};

/* What the run read at its start and at its end, for the scoreboard. */
struct fz_marks {
    const struct nic_q_counter_def *defs;
    size_t ncnt;
    uint64_t *cnt0, *cnt1;                /* the NIC's counters */
    uint64_t cpl0[FZ_CPL_N], cpl1[FZ_CPL_N];
    uint64_t t0, t1;                      /* backend ns */
    /* errored TX frames: the device's count, the writebacks'; queues where they differ with
     * no writeback lost */
    uint64_t q_errors, wb_errors, wb_mismatch;
};

/* cmd_fuzz_driver.c: the fuzzer's draws, the frames it sends and checks, its resets and control
 * actions (each -1 with f->err on a failure). */
bool fz_chance(struct fz *f, double p);
enum fz_kind fz_pick(struct fz *f);
/* The NIC's counters (false: f->err says why); pcie_cpl's completion error counts. */
bool fz_counters(struct fz *f, uint64_t *v, size_t n);
void fz_cpl_read(struct fz *f, uint64_t *v);
bool fz_link_moved(struct fz *f);
/* Take and check every record the RX ring holds, reposting buffers: the records taken. */
int fz_poll(struct fz *f);
void fz_post_one(struct fz *f, unsigned q, enum fz_kind k);
int fz_txq_reset(struct fz *f, unsigned q);
int fz_reset_all(struct fz *f);
int fz_control(struct fz *f);

/* cmd_fuzz_score.c: the scoreboard of a run (printed, its JSON records): EXIT_OK, or
 * EXIT_FAIL after fail(). */
int fz_score(struct fz *f, const struct fz_marks *m);

#endif /* CMD_FUZZ_H */
