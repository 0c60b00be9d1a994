/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_tx.h: what the files of `nicbench tx` share (cmd_tx.c the command and its sweep,
 * cmd_tx_opts.c its options, cmd_tx_frames.c the frames and the host's work on them,
 * cmd_tx_run.c one run, cmd_tx_report.c a run's figures, row and JSON). Private to the tx
 * command; after nicbench.h.
 *
 * How the host sends (enum tx_mode), one way per command:
 *   stream  the default: N frames per run over the queues, B per doorbell, at most --inflight
 *           posted and not completed per queue; with --window W also at most W frames per
 *           queue sent and not yet received back at the RX ring (a transport protocol's
 *           end-to-end window: its round trip is TX DMA, the wire, RX DMA and writeback);
 *   io      --io N: each TX queue is a submitter of blocking I/Os of N bytes (the "write size"
 *           of SGI's HIPPI raw-interface tests): an I/O is cut into frames of at most
 *           --io-frame bytes, posted with as few doorbells as the ring allows, and the queue's
 *           next I/O starts when the written-back consumer index has passed the whole I/O;
 *   gap     --gap-ns G: one frame per doorbell, G simulated ns apart start to start
 *           (Hughes-Jones' UDPmon throughput vs spacing); a frame the NIC drops for want of an
 *           RX buffer or of RX FIFO room is counted and reported, not a failure (--rx-ring and
 *           --rx-refill-ns can make the receiver the bottleneck).
 * --csum (any mode) writes an RFC 1071 checksum into every frame and verifies it on every frame
 * received (HP's OTS checksum on/off). Every run measures the host's own CPU time per frame
 * (struct tx_cpu). In every mode every frame received is checked bit-exact and in order per
 * queue.
 */
#ifndef CMD_TX_H
#define CMD_TX_H

#include "nicbench.h"

#define TX_RX_POLL 64u                   /* completion records taken per poll */
#define TX_MAX_ERR_PRINT 10              /* mismatches printed per run */
#define LINE_BPS 1e9                     /* the MAC's line rate (LiteEth 1 Gb/s) */
#define TX_CSUM_FROM 14u                 /* --csum: the sum covers the frame from byte 14 (all
                                          * after the Ethernet header) ... */
#define TX_CSUM_AT TX_HDR                /* ... and the field is bytes 20..21, big-endian */
#define TX_CSUM_MIN (TX_CSUM_AT + 2u)    /* the shortest frame with a checksum */
#define TX_IO_FRAME 9000u                /* --io: default largest frame: the usual jumbo MTU */
#define TX_IO_MIN 60u                    /* --io: I/O sizes, bytes */
#define TX_IO_MAX (16u << 20)
#define TX_IO_MIN_BYTES (1u << 20)       /* --io: default bytes per run at least */
#define TX_IO_MIN_IOS 3u                 /* --io: I/Os per submitter at least */
#define TX_GAP_MAX_NS 10000000u          /* --gap-ns, --rx-refill-ns: 10 ms at most */
#define TX_GAP_SETTLE_NS 600000u         /* --gap-ns: the run ends when every frame is sent and
                                          * none has come for this long: more than the TX and
                                          * RX FIFOs (32 KiB each) take to drain at 1 Gb/s */
#define TX_CPU_CAL 1000                  /* clock reads of the clock-cost calibration */
#define TX_COLS 24                       /* table columns at most */
#define TX_WINDOW_MAX 65536u             /* --window: frames per queue at most */

enum tx_mode { TX_STREAM, TX_IO, TX_GAP };

struct tx_params {
    uint64_t frames;
    uint32_t size_hi;                    /* --size-range LO-HI: sizes drawn in LO..HI; 0: fixed */
    unsigned queues, ring, rx_ring, batch;
    uint64_t poll_ns;
    const char *coalesce;
    enum tx_mode mode;
    bool csum;                           /* --csum: checksum in every frame, verified on receipt */
    uint32_t io_frame;                   /* --io: the largest frame of an I/O */
    uint64_t min_bytes;                  /* --io: bytes per run at least */
    uint64_t rx_refill_ns;               /* --gap-ns: repost RX buffers only every N ns (0: per
                                          * batch, as the other modes) */
    bool buf_offset_given, buf_random;   /* --buf-offset N | random[:SEED] */
    unsigned buf_offset;
    uint64_t buf_seed;
};

/* One run of the sweep. */
struct tx_point {
    uint32_t size;                       /* frame bytes (--size-range: its low end; --io: the
                                          * largest frame of an I/O) */
    unsigned inflight;                   /* descriptors in flight per queue at most */
    unsigned window;                     /* --window: frames per queue sent and not received
                                          * at most; 0: no window (nor its columns) */
    uint64_t frames;                     /* frames of the run, over every queue */
    uint64_t io;                         /* --io: bytes per I/O */
    uint32_t io_frames;                  /* --io: frames per I/O */
    uint64_t ios;                        /* --io: I/Os per queue */
    uint64_t gap_ns;                     /* --gap-ns: post to post */
};

/* The host's own CPU time: CLOCK_THREAD_CPUTIME_ID (this thread's CPU time, wall clock, not
 * simulated time), taken in laps that hold no backend call, so the simulator's work (done in
 * this thread inside MMIO, idle, now_ns and irq calls) is left out. A lap over polling counts
 * only when it found work (a completion or a frame): an empty poll is no per-frame work. Each
 * lap also holds about one clock read, whose cost (the least of TX_CPU_CAL back-to-back
 * differences) is taken off. */
enum tx_cpu_kind {
    CPU_TX,                              /* frame fill, descriptor post, reclaim */
    CPU_TX_CSUM,                         /* checksums computed */
    CPU_RX,                              /* RX poll, frame check */
    CPU_RX_CSUM,                         /* checksums verified */
    CPU_KINDS
};
struct tx_cpu {
    uint64_t t;                          /* the current lap's start */
    uint64_t ns[CPU_KINDS], laps[CPU_KINDS];
    uint64_t clock_ns;                   /* a clock read's share of a lap */
};

struct tx_result {
    uint64_t frames, bytes, wire_bytes, time_ns, received, rx_bytes;
    uint64_t bad_content, bad_len, bad_status, bad_header, out_of_order, bad_csum;
    uint64_t tx_doorbells, rx_doorbells, msis;
    uint64_t msi_vec[NIC_MSI_VECTORS];   /* MSIs received per vector (multi-vector MSI) */
    uint32_t irqs_tx_vec[NIC_Q_MAX_TXIRQ];  /* interrupts per TX vector, device counters */
    bool have_model;
    uint64_t mmio_rd_tlps, mmio_reads, mmio_writes, model_msis, model_msix;
    uint64_t drops_total;
    uint32_t q_frames[NIC_Q_MAX_TXQ], q_bytes[NIC_Q_MAX_TXQ];   /* per queue, device counters */
    uint64_t q_sent_bytes[NIC_Q_MAX_TXQ];                       /* per queue, host's count */
    uint64_t q_mismatch;                 /* queues whose device counters differ from the host's */
    struct tx_cpu cpu;
    /* --io: I/Os completed and their times (start to the poll that saw the consumer index pass
     * the last frame) */
    uint64_t ios, io_ns_sum, io_ns_min, io_ns_max;
    /* --gap-ns: first and last post and frame received (backend ns from the run's start);
     * frames the receiver saw missing before a later one of their queue */
    uint64_t post_first_ns, post_last_ns, rx_first_ns, rx_last_ns, seq_skipped;
    /* --window: round trips (a frame's post to the poll that saw it received) */
    uint64_t rtts, rtt_ns_sum, rtt_ns_min, rtt_ns_max;
};

/* One run's state, for the helpers of tx_run(). */
struct tx_state {
    struct ctx *c;
    struct nic_queues *nq;
    const struct tx_params *p;
    const struct tx_point *pt;
    unsigned run;
    struct tx_result *res;
    uint32_t smax;                       /* the run's largest frame */
    uint8_t *stage, *want, *got;
    struct nic_q_frame *fr;
    int printed;
    uint64_t t0;                         /* the run's start (backend ns) */
    uint64_t per_q[NIC_Q_MAX_TXQ], sent[NIC_Q_MAX_TXQ], next_seq[NIC_Q_MAX_TXQ];
    uint64_t rx_q[NIC_Q_MAX_TXQ];
    uint64_t io_end[NIC_Q_MAX_TXQ];      /* --io: sent[q] once the open I/O is all posted */
    uint64_t io_t0[NIC_Q_MAX_TXQ];       /* --io: its start; UINT64_MAX: none open */
    uint64_t posted;                     /* frames posted, every queue */
    uint64_t next_post_ns;               /* --gap-ns: when the next frame is due */
    uint64_t now;                        /* the backend time of the current poll */
    uint64_t *post_ns;                   /* --window: when frame seq of queue q was posted, at
                                          * [q * window + seq % window] (at most a window of a
                                          * queue's frames is out) */
};

/* --gap-ns: the drop counters whose frames count as lost, not as a failure (tx_loss_causes[],
 * cmd_tx_report.c). */
#define TX_LOSS_CAUSES 2u

/* A run's figures, for its table row and its JSON record. */
struct tx_figures {
    double gbps, wire_gbps, mpps, line_mpps, mbps;
    double host_ns, host_csum_ns, host_tx_ns, host_rx_ns;   /* CPU ns per frame sent */
    double io_mean_ns, rx_mbps;                             /* --io */
    double rtt_mean_ns;                                     /* --window */
    uint64_t irq_tx, irq_rx, msi_tx, msi_rx, msi_other;
    uint64_t lost, loss[TX_LOSS_CAUSES], loss_drops;        /* loss_drops: sum of loss[] */
    double offered_mpps, offered_gbps, rx_mpps, rx_gbps, rx_wire_gbps;
    bool ok;
};

/* A run's table row (tx_row()). */
struct tx_row {
    int n;
    const char *hdr[TX_COLS];
    char cell[TX_COLS][24];
};

#define CPU_ALL ((1u << CPU_KINDS) - 1)
#define CPU_CSUM (1u << CPU_TX_CSUM | 1u << CPU_RX_CSUM)
#define CPU_TX_ALL (1u << CPU_TX | 1u << CPU_TX_CSUM)
#define CPU_RX_ALL (1u << CPU_RX | 1u << CPU_RX_CSUM)

/* cmd_tx_opts.c: the command's options, checked, as the sweep's axes. */
struct tx_args {
    struct tx_params p;
    uint64_t sizes[MAX_SIZES];           /* frame sizes (--size-range: its low end; --io: I/O
                                          * sizes) */
    uint64_t second[MAX_SIZES];          /* in-flight limits (stream) or gaps (--gap-ns) */
    uint64_t windows[MAX_SIZES];         /* --window (0: no window) */
    size_t nsizes, nsecond, nwindows;
    uint64_t max_size;                   /* the largest frame */
    bool window_given;                   /* --window */
    struct nic_q_coalesce co;            /* --coalesce over the defaults */
};
/* EXIT_OK, or a usage error's exit code, its message printed. */
int tx_parse(int argc, char **argv, struct tx_args *a);

/* cmd_tx_frames.c: the frames (content, size, checksum), the host's CPU time (struct tx_cpu),
 * and the host's work on a run's frames: what a queue posts, posting, the I/Os done, each frame
 * received checked. */
void tx_io_point(const struct tx_params *p, uint64_t io, struct tx_point *pt);
void tx_cpu_init(struct tx_cpu *k);
void tx_cpu_start(struct tx_cpu *k);
void tx_cpu_lap(struct tx_cpu *k, enum tx_cpu_kind kind, bool keep);
double tx_cpu_per_frame(const struct tx_cpu *k, unsigned mask, uint64_t frames);
unsigned tx_quota(const struct tx_state *s, unsigned q, uint64_t now);
int tx_post(struct tx_state *s, unsigned q, unsigned n, uint64_t now);
void tx_io_poll(struct tx_state *s, unsigned q, uint64_t now);
void tx_rx_csum(struct tx_state *s, const struct nic_q_rx_frame *recs, int n);
void tx_rx_check(struct tx_state *s, const struct nic_q_rx_frame *f);
bool tx_all_sent(const struct tx_state *s);

/* cmd_tx_run.c: one run (a point of the sweep) in the command's mode: pt->frames frames over
 * the queues, every one checked on receipt; cnt_delta: the NIC's counters over the run. */
int tx_run(struct ctx *c, struct nic_queues *nq, const struct tx_params *p, unsigned run,
           const struct tx_point *pt, struct tx_result *res, uint64_t *cnt_delta);

/* cmd_tx_report.c */
void tx_figures(struct nic_backend *b, const struct tx_params *p, const struct tx_result *r,
                const uint64_t *delta, struct tx_figures *f);
void tx_row(struct tx_row *w, const struct tx_params *p, const struct tx_point *pt,
            const struct tx_result *r, const struct tx_figures *f);
void tx_json(struct ctx *c, const struct tx_params *p, const struct tx_point *pt, unsigned run,
             const struct tx_result *r, const struct tx_figures *f, const uint64_t *delta,
             const struct nic_q_coalesce *co);
void tx_explain(const struct tx_params *p, const struct tx_point *pt, unsigned run,
                const struct tx_result *r, const struct tx_figures *f, const uint64_t *delta);

#endif /* CMD_TX_H */
