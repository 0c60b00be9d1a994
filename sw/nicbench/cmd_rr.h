/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_rr.h: what the files of `nicbench rr` share (cmd_rr.c the command: options, the two
 * hosts' queues, the sweep over sizes; cmd_rr_path.c the round trips, the hot path;
 * cmd_rr_report.c a size's figures, table row and JSON record). Private to the rr command;
 * after nicbench.h.
 *
 * Request/response between two simulated NIC + host systems back to back (sim backend with
 * peer=1): host A sends a request on TX queue 0, host B waits for it on its RX ring (polling,
 * or sleeping until the RX MSI with --irq) and sends a response, A does the same and takes the
 * round-trip time. Every frame is checked bit-exact.
 */
#ifndef CMD_RR_H
#define CMD_RR_H

#include "nicbench.h"

#define RR_MAX_ERR_PRINT 10              /* mismatches printed per size */
#define RR_RING 64u                      /* TX and RX descriptors per ring, each host */
#define RR_MSI_SLICE_NS 10000u           /* --irq: irq_wait slice between timeout checks */

/* The options, checked. */
struct rr_args {
    uint64_t sizes[MAX_SIZES];           /* request sizes, bytes without FCS */
    size_t nsizes;
    uint64_t max_size;                   /* the largest frame, request or reply */
    uint64_t count, poll_ns, reply_size; /* reply_size 0: the request's size */
    bool irq;
    struct nic_q_coalesce co;
};

/* One host. */
struct rr_side {
    const char *name;                    /* "A" or "B" */
    struct nic_backend *b;
    struct nic_queues nq;
    bool open;
    uint64_t m0[3], m1[3];               /* model.tlps_down_mrd, mmio_reads, mmio_writes */
    bool have_model;
    uint64_t rx_msis;                    /* --irq: RX MSIs taken */
    uint64_t tx_msis;                    /* --irq: TX MSIs taken */
    uint64_t order_errors;               /* --irq: MSIs that came before what they announce */
    bool rx_msi_early;                   /* an RX MSI taken while waiting for the TX one */
};

/* The two hosts and the buffers of the round trips. */
struct rr_run {
    struct rr_side side[2];              /* A, B */
    uint8_t *want, *got;                 /* the frame expected, the frame received */
    uint64_t *rtt;                       /* round-trip times of a size, simulated ns */
};

/* One size's round trips: what they counted, and the hosts' MSI counts before them. */
struct rr_point {
    uint32_t size, reply;
    uint64_t bad_req, bad_resp, done;
    int printed;                         /* mismatches printed */
    uint64_t msis0[2], tx_msis0[2], order0[2];
};

/* cmd_rr_path.c: a size's round trips (the hot path: no MMIO read on either host). */
int rr_round_trips(struct ctx *c, const struct rr_args *a, struct rr_run *r, struct rr_point *p);

/* cmd_rr_report.c */
/* Host s's model counters (rr_report()'s MMIO figures) into v[3]; false if it has none. */
bool rr_model(struct rr_side *s, uint64_t *v);
/* The size's table row, JSON record and, when it failed, the line saying why: ok or not. */
bool rr_report(struct ctx *c, const struct rr_args *a, const struct rr_run *r,
               const struct rr_point *p, struct bu_table *t);
/* The table of the sizes, its header. */
void rr_table_init(struct bu_table *t);
/* After the table: what its columns mean, and the frames each way on the wire. */
void rr_table_notes(struct ctx *c, const struct rr_run *r);

#endif /* CMD_RR_H */
