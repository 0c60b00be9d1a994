// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_tx.c: `nicbench tx`, frames through the NIC datapath's descriptor rings, the MAC loopback
 * and the RX ring. Options: the usage text in main.c.
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
#define _GNU_SOURCE
#include "nicbench.h"

/* --- tx: the NIC datapath (descriptor rings) through the MAC loopback ------------------------- */

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
static const char *const tx_mode_name[] = {"stream", "io", "gap"};

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
    uint64_t mmio_rd_tlps, mmio_reads, mmio_writes, model_msis;
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

/* Frame (run, q, seq) of `size` bytes: Ethernet header (locally administered addresses, the
 * source's last byte the queue; EtherType 0x88b5, local experimental), byte 14 the queue, 15 the
 * run, 16..19 the sequence number (LE), then bytes of a PRNG seeded by (run, q, seq). */
static void tx_frame_fill(uint8_t *p, uint32_t size, unsigned run, unsigned q, uint32_t seq)
{
    static const uint8_t hdr[14] = {0x02, 0x4e, 0x49, 0x43, 0x00, 0x01,
                                    0x02, 0x4e, 0x49, 0x43, 0x00, 0x00, 0x88, 0xb5};
    memcpy(p, hdr, sizeof hdr);
    p[11] = (uint8_t)q;
    p[14] = (uint8_t)q;
    p[15] = (uint8_t)run;
    for (int k = 0; k < 4; k++)
        p[16 + k] = (uint8_t)(seq >> (8 * k));
    uint64_t st = bu_rand_seed((uint64_t)run << 40 ^ (uint64_t)q << 32 ^ seq);
    for (uint32_t i = TX_HDR; i < size; i += 8) {
        const uint64_t x = bu_rand(&st);
        for (uint32_t k = 0; k < 8 && i + k < size; k++)
            p[i + k] = (uint8_t)(x >> (8 * k));
    }
}

/* RFC 1071: the one's-complement sum of p[0..n-1] as 16-bit big-endian words (an odd last byte
 * padded with a zero), folded to 16 bits. */
static uint16_t inet_sum(const uint8_t *p, uint32_t n)
{
    uint64_t s = 0;
    uint32_t i = 0;
    for (; i + 1 < n; i += 2)
        s += (uint32_t)p[i] << 8 | p[i + 1];
    if (i < n)
        s += (uint32_t)p[i] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)s;
}

/* --csum: the field of a frame of `size` bytes gets the complement of the sum from TX_CSUM_FROM
 * (the field taken as zero), so that the sum over the same bytes is 0xffff at the receiver (the
 * MAC's zero padding adds nothing). */
static void tx_csum_put(uint8_t *p, uint32_t size)
{
    p[TX_CSUM_AT] = p[TX_CSUM_AT + 1] = 0;
    const uint16_t sum = (uint16_t)~inet_sum(p + TX_CSUM_FROM, size - TX_CSUM_FROM);
    p[TX_CSUM_AT] = (uint8_t)(sum >> 8);
    p[TX_CSUM_AT + 1] = (uint8_t)sum;
}

static bool tx_csum_ok(const uint8_t *p, uint32_t len)
{
    return len >= TX_CSUM_MIN && inet_sum(p + TX_CSUM_FROM, len - TX_CSUM_FROM) == 0xffff;
}

/* The frame (run, q, seq) as sent: tx_frame_fill(), then the checksum with --csum. */
static void tx_frame_want(const struct tx_params *p, uint8_t *d, uint32_t size, unsigned run,
                          unsigned q, uint32_t seq)
{
    tx_frame_fill(d, size, run, q, seq);
    if (p->csum)
        tx_csum_put(d, size);
}

/* The size of frame (run, q, seq): the point's size; with --size-range a size drawn uniformly
 * in size..p->size_hi by a PRNG seeded with (run, q, seq), so the receiver knows it too; with
 * --io its share of its I/O (frame seq % io_frames of the I/O: io / io_frames bytes, the first
 * io % io_frames of them one more). */
static uint32_t tx_size(const struct tx_params *p, const struct tx_point *pt, unsigned run,
                        unsigned q, uint32_t seq)
{
    if (p->mode == TX_IO) {
        const uint32_t k = seq % pt->io_frames;
        return (uint32_t)(pt->io / pt->io_frames) + (k < pt->io % pt->io_frames);
    }
    if (!p->size_hi)
        return pt->size;
    uint64_t st = bu_rand_seed(0x517e000000000000ull ^ (uint64_t)run << 40 ^ (uint64_t)q << 32 ^ seq);
    return pt->size + (uint32_t)(bu_rand(&st) % (p->size_hi - pt->size + 1));
}

/* --io: an I/O of `io` bytes as frames of at most p->io_frame, and the run: I/Os per queue so
 * that the run moves at least --min-bytes and each submitter makes TX_IO_MIN_IOS I/Os. */
static void tx_io_point(const struct tx_params *p, uint64_t io, struct tx_point *pt)
{
    pt->io = io;
    pt->io_frames = (uint32_t)bu_ceil_div(io, p->io_frame);
    pt->size = (uint32_t)bu_ceil_div(io, pt->io_frames);
    pt->ios = bu_ceil_div(p->min_bytes, io * p->queues);
    if (pt->ios < TX_IO_MIN_IOS)
        pt->ios = TX_IO_MIN_IOS;
    pt->frames = pt->ios * pt->io_frames * p->queues;
}

static uint32_t tx_wire_bytes(uint32_t size)
{
    return (size < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : size) + FCS_BYTES + WIRE_OVERHEAD;
}

static bool model_counter(struct ctx *c, const char *name, uint64_t *v)
{
    char full[64];
    snprintf(full, sizeof full, "model.%s", name);
    return counter(c, full, v);
}

/* --- the host's CPU time (struct tx_cpu) ------------------------------------------------------ */

static uint64_t cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void cpu_init(struct tx_cpu *k)
{
    memset(k, 0, sizeof *k);
    k->clock_ns = UINT64_MAX;
    uint64_t t = cpu_now();
    for (int i = 0; i < TX_CPU_CAL; i++) {
        const uint64_t u = cpu_now();
        if (u - t < k->clock_ns)
            k->clock_ns = u - t;
        t = u;
    }
    k->t = t;
}

static void cpu_start(struct tx_cpu *k) { k->t = cpu_now(); }

/* End the lap begun at the last cpu_start() or cpu_lap(), counted as `kind` when keep, and
 * begin the next. */
static void cpu_lap(struct tx_cpu *k, enum tx_cpu_kind kind, bool keep)
{
    const uint64_t t = cpu_now();
    if (keep) {
        k->ns[kind] += t - k->t;
        k->laps[kind]++;
    }
    k->t = t;
}

/* The CPU ns of the kinds in `mask` (bit per enum tx_cpu_kind), less the clock reads, per frame
 * (NaN without frames). */
static double cpu_per_frame(const struct tx_cpu *k, unsigned mask, uint64_t frames)
{
    double ns = 0;
    for (int i = 0; i < CPU_KINDS; i++)
        if (mask >> i & 1)
            ns += (double)k->ns[i] - (double)k->laps[i] * (double)k->clock_ns;
    return frames ? (ns > 0 ? ns : 0) / (double)frames : NAN;
}

#define CPU_ALL ((1u << CPU_KINDS) - 1)
#define CPU_CSUM (1u << CPU_TX_CSUM | 1u << CPU_RX_CSUM)
#define CPU_TX_ALL (1u << CPU_TX | 1u << CPU_TX_CSUM)
#define CPU_RX_ALL (1u << CPU_RX | 1u << CPU_RX_CSUM)

/* --- one run ---------------------------------------------------------------------------------- */

/* How many frames queue q posts now with one doorbell, 0 for none. stream: up to --batch within
 * the in-flight limit and the --window, waiting for a whole batch while more can come (with a
 * window of W <= B: for the whole window to be back; --batch 1 sends each frame as soon as the
 * window opens); io: what of its open I/O the ring takes; gap: one when the next frame
 * (round-robin over the queues) is q's and due. */
static unsigned tx_quota(const struct tx_state *s, unsigned q, uint64_t now)
{
    const struct tx_params *p = s->p;
    const uint64_t left = s->per_q[q] - s->sent[q];
    const unsigned room = nic_q_tx_room(s->nq, q);
    if (!left || !room)
        return 0;
    if (p->mode == TX_IO) {
        const uint64_t n = s->io_end[q] - s->sent[q];
        return (unsigned)(n < room ? n : room);
    }
    if (p->mode == TX_GAP)
        return s->posted % p->queues == q && now >= s->next_post_ns;
    const unsigned inflight = s->pt->inflight, pend = nic_q_tx_pending(s->nq, q);
    uint64_t avail = inflight > pend ? inflight - pend : 0;
    if (avail > room)
        avail = room;
    if (avail > left)
        avail = left;
    uint64_t thresh = p->batch;
    if (thresh > left)
        thresh = left;
    if (thresh > inflight)
        thresh = inflight;
    if (s->pt->window) {
        const uint64_t out = s->sent[q] - s->rx_q[q], window = s->pt->window;
        const uint64_t open = window > out ? window - out : 0;
        if (avail > open)
            avail = open;
        if (thresh > window)
            thresh = window;
    }
    if (!avail || avail < thresh)
        return 0;
    return (unsigned)(avail < p->batch ? avail : p->batch);
}

/* Post queue q's next n frames (tx_quota()) with one doorbell: built in the stage (checksummed
 * with --csum), copied into the ring by nic_q_tx_post(). CPU laps: fill and post CPU_TX, the
 * checksums CPU_TX_CSUM; the doorbell is a backend call, outside them. `now`: the backend time
 * before the post. The count posted, or -1 after fail(). */
static int tx_post(struct tx_state *s, unsigned q, unsigned n, uint64_t now)
{
    struct tx_result *res = s->res;
    char err[512];
    cpu_start(&res->cpu);
    for (unsigned i = 0; i < n; i++) {
        const uint32_t seq = (uint32_t)(s->sent[q] + i);
        s->fr[i].data = s->stage + (size_t)i * s->smax;
        s->fr[i].len = tx_size(s->p, s->pt, s->run, q, seq);
        tx_frame_fill(s->stage + (size_t)i * s->smax, s->fr[i].len, s->run, q, seq);
        if (s->post_ns)
            s->post_ns[(size_t)q * s->pt->window + seq % s->pt->window] = now;
    }
    if (s->p->csum) {
        cpu_lap(&res->cpu, CPU_TX, true);
        for (unsigned i = 0; i < n; i++)
            tx_csum_put(s->stage + (size_t)i * s->smax, s->fr[i].len);
        cpu_lap(&res->cpu, CPU_TX_CSUM, true);
    }
    const int m = nic_q_tx_post(s->nq, q, s->fr, n, err, sizeof err);
    cpu_lap(&res->cpu, CPU_TX, true);
    if (m < 0) {
        fail(s->c, "tx: %s", err);
        return -1;
    }
    nic_q_tx_doorbell(s->nq, q);
    for (int i = 0; i < m; i++) {
        res->q_sent_bytes[q] += s->fr[i].len;
        res->bytes += s->fr[i].len;
        res->wire_bytes += tx_wire_bytes(s->fr[i].len);
    }
    if (m > 0 && s->p->mode == TX_GAP) {
        if (!s->posted)
            res->post_first_ns = now - s->t0;
        res->post_last_ns = now - s->t0;
        s->next_post_ns = now + s->pt->gap_ns;
    }
    s->sent[q] += (unsigned)m;
    s->posted += (unsigned)m;
    return m;
}

/* One more time d into a count n, its sum, least and most (--io: I/O times; --window: round
 * trips). */
static void tx_time_add(uint64_t *n, uint64_t *sum, uint64_t *min, uint64_t *max, uint64_t d)
{
    if (!*n || d < *min)
        *min = d;
    if (d > *max)
        *max = d;
    *sum += d;
    ++*n;
}

/* --io: queue q's open I/O is done once all of it is posted and the consumer index has passed
 * it (nothing pending after the reclaim); its time runs from its start to `now`, the poll that
 * saw it, and the queue's next I/O starts at once. */
static void tx_io_poll(struct tx_state *s, unsigned q, uint64_t now)
{
    if (s->io_t0[q] == UINT64_MAX || s->sent[q] != s->io_end[q] || nic_q_tx_pending(s->nq, q))
        return;
    struct tx_result *res = s->res;
    tx_time_add(&res->ios, &res->io_ns_sum, &res->io_ns_min, &res->io_ns_max,
                now - s->io_t0[q]);
    if (s->sent[q] < s->per_q[q]) {
        s->io_end[q] += s->pt->io_frames;
        s->io_t0[q] = now;
    } else {
        s->io_t0[q] = UINT64_MAX;
        res->time_ns = now - s->t0;      /* the last I/O done so far */
    }
}

__attribute__((format(printf, 2, 3))) static void tx_mismatch(struct tx_state *s,
                                                              const char *fmt, ...)
{
    if (s->printed++ >= TX_MAX_ERR_PRINT)
        return;
    va_list ap;
    fprintf(stderr, "nicbench: tx run %u: ", s->run);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* --csum: the receiver's sum over each good frame, in its RX buffer (written before its
 * completion record, which nic_q_rx_poll() read with an acquire fence). */
static void tx_rx_csum(struct tx_state *s, const struct nic_q_rx_frame *recs, int n)
{
    for (int i = 0; i < n; i++) {
        const struct nic_q_rx_frame *f = &recs[i];
        if (f->status == 0 && !tx_csum_ok((const uint8_t *)(uintptr_t)f->data, f->len)) {
            s->res->bad_csum++;
            tx_mismatch(s, "RX frame of %u bytes (buffer %u): checksum wrong", f->len, f->index);
        }
    }
}

/* One received frame against the frame its header names: header, order in its queue, length,
 * content. With --gap-ns a frame after missing ones of its queue counts them as skipped (lost),
 * not as out of order; one behind is out of order in every mode. */
static void tx_rx_check(struct tx_state *s, const struct nic_q_rx_frame *f)
{
    struct tx_result *res = s->res;
    uint8_t *got = s->got, *want = s->want;
    res->received++;
    if (f->status != 0) {
        res->bad_status++;
        tx_mismatch(s, "RX completion with status %u (buffer %u)", f->status, f->index);
        return;
    }
    res->rx_bytes += f->len;
    for (uint32_t k = 0; k < f->len && k < NIC_Q_FRAME_MAX; k++)
        got[k] = f->data[k];
    if (f->len < TX_HDR) {
        res->bad_len++;
        tx_mismatch(s, "RX frame of %u bytes", f->len);
        return;
    }
    const unsigned q = got[14];
    if (q < s->p->queues)
        tx_frame_fill(want, TX_HDR, s->run, q, 0);
    if (q >= s->p->queues || memcmp(want, got, 16) != 0) {   /* Ethernet header, queue, run */
        res->bad_header++;
        tx_mismatch(s, "RX frame with queue %u run %u", q, got[15]);
        return;
    }
    const uint32_t seq = (uint32_t)got[16] | (uint32_t)got[17] << 8 | (uint32_t)got[18] << 16 |
                         (uint32_t)got[19] << 24;
    if (seq > s->next_seq[q] && s->p->mode == TX_GAP) {
        res->seq_skipped += seq - s->next_seq[q];
    } else if (seq != s->next_seq[q]) {
        res->out_of_order++;
        tx_mismatch(s, "queue %u: frame %u received, expected %" PRIu64, q, seq,
                    s->next_seq[q]);
    }
    s->next_seq[q] = (uint64_t)seq + 1;
    s->rx_q[q]++;
    if (s->post_ns && seq < s->sent[q] && s->sent[q] - seq <= s->pt->window)
        tx_time_add(&res->rtts, &res->rtt_ns_sum, &res->rtt_ns_min, &res->rtt_ns_max,
                    s->now - s->post_ns[(size_t)q * s->pt->window + seq % s->pt->window]);
    const uint32_t fsize = tx_size(s->p, s->pt, s->run, q, seq);
    const uint32_t rx_len = fsize < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : fsize;
    if (f->len != rx_len) {
        res->bad_len++;
        tx_mismatch(s, "queue %u frame %u: %u bytes, expected %u", q, seq, f->len, rx_len);
        return;
    }
    tx_frame_want(s->p, want, fsize, s->run, q, seq);
    if (memcmp(want, got, fsize) != 0) {
        res->bad_content++;
        uint32_t k = 0;
        while (want[k] == got[k])
            k++;
        tx_mismatch(s, "queue %u frame %u: byte %u is %#04x, expected %#04x", q, seq, k,
                    got[k], want[k]);
    }
}

/* --gap-ns: every frame posted and completed (the end is then only a matter of the FIFOs). */
static bool tx_all_sent(const struct tx_state *s)
{
    for (unsigned q = 0; q < s->p->queues; q++)
        if (s->sent[q] < s->per_q[q] || nic_q_tx_pending(s->nq, q))
            return false;
    return true;
}

/* One run (a point of the sweep) in the command's mode: pt->frames frames over the queues,
 * every one checked on receipt. */
static int tx_run(struct ctx *c, struct nic_queues *nq, const struct tx_params *p, unsigned run,
                  const struct tx_point *pt, struct tx_result *res, uint64_t *cnt_delta)
{
    struct nic_backend *b = c->b;
    char err[512];
    const unsigned Q = p->queues;
    memset(res, 0, sizeof *res);
    for (unsigned q = 0; q < Q; q++)
        if (nic_q_set_limit(nq, q, pt->inflight, err, sizeof err) < 0)
            return fail(c, "tx: %s", err);

    size_t ncnt;
    const struct nic_q_counter_def *defs = nic_q_counter_defs(&ncnt);
    uint64_t *cnt0 = calloc(ncnt * 2 + 1, sizeof *cnt0), *cnt1 = cnt0 + ncnt;
    /* frames per doorbell at most: --batch; --io: what the ring holds; --gap-ns: one */
    const unsigned post_max = p->mode == TX_STREAM ? p->batch : p->mode == TX_IO ? p->ring - 1 : 1;
    struct tx_state s = {.c = c, .nq = nq, .p = p, .pt = pt, .run = run, .res = res,
                         .smax = p->size_hi ? p->size_hi : pt->size};
    s.stage = malloc((size_t)post_max * s.smax);
    s.want = malloc(s.smax);
    s.got = malloc(NIC_Q_FRAME_MAX);
    s.fr = calloc(post_max, sizeof *s.fr);
    if (pt->window)
        s.post_ns = calloc((size_t)Q * pt->window, sizeof *s.post_ns);
    struct nic_q_rx_frame recs[TX_RX_POLL];
    int rc = EXIT_OK;
    if (!cnt0 || !s.stage || !s.want || !s.got || !s.fr || (pt->window && !s.post_ns)) {
        rc = fail(c, "tx: out of memory");
        goto out;
    }
    for (unsigned q = 0; q < Q; q++)
        s.per_q[q] = p->mode == TX_IO ? pt->ios * pt->io_frames
                                      : pt->frames / Q + (q < pt->frames % Q);
    if (nic_q_counters_read(b, cnt0, ncnt, err, sizeof err) < 0) {
        rc = fail(c, "tx: %s", err);
        goto out;
    }
    uint32_t qf0[NIC_Q_MAX_TXQ], qb0[NIC_Q_MAX_TXQ];
    for (unsigned q = 0; q < Q; q++)
        if (nic_q_tx_queue_stats(b, q, &qf0[q], &qb0[q], err, sizeof err) < 0) {
            rc = fail(c, "tx: %s", err);
            goto out;
        }
    uint32_t vi0[NIC_Q_MAX_TXIRQ];
    for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
        if (nic_q_tx_vector_irqs(b, g, &vi0[g], err, sizeof err) < 0) {
            rc = fail(c, "tx: %s", err);
            goto out;
        }
    nic_irq_drain(b);
    const unsigned rx_batch = p->batch < nq->rx.size / 2 ? p->batch : nq->rx.size / 2;
    uint64_t txdb0 = 0, rxdb0 = nq->rx.doorbells;
    for (unsigned q = 0; q < Q; q++)
        txdb0 += nq->tx[q].doorbells;
    uint64_t m0[4] = {0}, m1[4] = {0};
    static const char *const mnames[4] = {"tlps_down_mrd", "mmio_reads", "mmio_writes", "msis"};
    res->have_model = true;
    for (int k = 0; k < 4; k++)
        res->have_model &= model_counter(c, mnames[k], &m0[k]);
    cpu_init(&res->cpu);

    /* ---- hot path: no MMIO read from here to t1 ---- */
    const uint64_t t0 = nic_now_ns(b);
    s.t0 = s.next_post_ns = t0;
    for (unsigned q = 0; q < Q; q++) {
        s.io_end[q] = pt->io_frames;     /* --io: every submitter starts its first I/O */
        s.io_t0[q] = p->mode == TX_IO ? t0 : UINT64_MAX;
    }
    const uint64_t settle_ns = TX_GAP_SETTLE_NS + 2 * p->rx_refill_ns;
    uint64_t last_progress = t0, last_refill = t0;
    unsigned rr = 0;
    bool stalled = false;
    /* --io: until the last I/O is seen done as well */
    const uint64_t ios_all = p->mode == TX_IO ? pt->ios * Q : 0;
    while (res->received < pt->frames || res->ios < ios_all) {
        uint64_t now = nic_now_ns(b);
        int done = 0;
        cpu_start(&res->cpu);
        for (unsigned q = 0; q < Q; q++) {
            const int n = nic_q_tx_reclaim(nq, q, err, sizeof err);
            if (n < 0) {
                rc = fail(c, "tx: %s", err);
                goto out;
            }
            done += n;
        }
        cpu_lap(&res->cpu, CPU_TX, done > 0);
        bool progress = done > 0;
        s.now = now;
        const int nrx = nic_q_rx_poll(nq, recs, TX_RX_POLL);
        cpu_lap(&res->cpu, CPU_RX, nrx > 0);
        if (nrx > 0) {
            if (p->csum) {
                tx_rx_csum(&s, recs, nrx);
                cpu_lap(&res->cpu, CPU_RX_CSUM, true);
            }
            for (int i = 0; i < nrx; i++)
                tx_rx_check(&s, &recs[i]);
            cpu_lap(&res->cpu, CPU_RX, true);
            if (!res->rx_last_ns)
                res->rx_first_ns = now - t0;
            res->rx_last_ns = now - t0;
            progress = true;
        }
        if (p->mode == TX_IO)
            for (unsigned q = 0; q < Q; q++)
                tx_io_poll(&s, q, now);
        for (unsigned k = 0; k < Q; k++) {
            const unsigned q = (rr + k) % Q;
            const unsigned n = tx_quota(&s, q, now);
            if (!n)
                continue;
            const int m = tx_post(&s, q, n, now);
            if (m < 0) {
                rc = EXIT_FAIL;
                goto out;
            }
            progress |= m > 0;
        }
        rr = (rr + 1) % Q;
        /* after the posts, whose `now` this doorbell would make late */
        if (p->rx_refill_ns ? now - last_refill >= p->rx_refill_ns
                            : nq->rx.to_repost >= rx_batch) {
            nic_q_rx_refill(nq);
            last_refill = now;
        }
        const int irqs = nic_irq_drain_vectors(b, res->msi_vec);
        if (irqs > 0)
            res->msis += (unsigned)irqs;
        now = nic_now_ns(b);
        /* --gap-ns: waiting for the next frame's time is not a stall */
        const bool gap_wait = p->mode == TX_GAP && s.posted < pt->frames && s.next_post_ns > now;
        if (progress || gap_wait) {
            last_progress = now;
        } else if (p->mode == TX_GAP && now - last_progress > settle_ns && tx_all_sent(&s)) {
            break;                       /* the rest was lost: counted below */
        } else if (now - last_progress > c->timeout_ns) {
            stalled = true;
            break;
        }
        if (!progress) {
            const uint64_t due = gap_wait ? s.next_post_ns - now : p->poll_ns;
            nic_idle(b, due < p->poll_ns ? due : p->poll_ns);
        }
    }
    const uint64_t t1 = nic_now_ns(b);
    /* ---- end of the hot path ---- */
    if (res->have_model)
        for (int k = 0; k < 4; k++)
            res->have_model &= model_counter(c, mnames[k], &m1[k]);

    const uint64_t rxdb1 = nq->rx.doorbells;
    /* Off the clock: repost what was polled, let the last writebacks land. */
    nic_q_rx_refill(nq);
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    for (unsigned q = 0; q < Q; q++) {
        while (nic_q_tx_pending(nq, q) && nic_now_ns(b) < deadline) {
            if (nic_q_tx_reclaim(nq, q, err, sizeof err) < 0) {
                rc = fail(c, "tx: %s", err);
                goto out;
            }
            nic_idle(b, 200);
        }
    }
    if (nic_q_counters_read(b, cnt1, ncnt, err, sizeof err) < 0) {
        rc = fail(c, "tx: %s", err);
        goto out;
    }
    for (unsigned q = 0; q < Q; q++) {
        uint32_t f1, b1;
        if (nic_q_tx_queue_stats(b, q, &f1, &b1, err, sizeof err) < 0) {
            rc = fail(c, "tx: %s", err);
            goto out;
        }
        res->q_frames[q] = f1 - qf0[q];
        res->q_bytes[q] = b1 - qb0[q];
        if (res->q_frames[q] != (uint32_t)s.per_q[q] ||
            res->q_bytes[q] != (uint32_t)res->q_sent_bytes[q]) {
            res->q_mismatch++;
            fprintf(stderr, "nicbench: tx run %u: queue %u: device counted %u frames, %u bytes; "
                    "the host sent %" PRIu64 " frames, %" PRIu64 " bytes\n", run, q,
                    res->q_frames[q], res->q_bytes[q], s.per_q[q], res->q_sent_bytes[q]);
        }
    }
    for (unsigned g = 0; g < nic_q_hw_txirq(b); g++) {
        uint32_t v1;
        if (nic_q_tx_vector_irqs(b, g, &v1, err, sizeof err) < 0) {
            rc = fail(c, "tx: %s", err);
            goto out;
        }
        res->irqs_tx_vec[g] = v1 - vi0[g];
    }
    /* The MSIs of interrupts the device counted by now reached the host before the counters'
     * read completions (both are posted upstream in order): take them. */
    const int late_irqs = nic_irq_drain_vectors(b, res->msi_vec);
    if (late_irqs > 0)
        res->msis += (unsigned)late_irqs;
    for (size_t i = 0; i < ncnt; i++) {
        cnt_delta[i] = nic_q_counter_delta(&defs[i], cnt0[i], cnt1[i]);
        if (defs[i].kind == NIC_QC_ERROR)
            res->drops_total += cnt_delta[i];
    }
    res->frames = pt->frames;
    /* stream: to the last frame received; io: to the last I/O done (tx_io_poll()); gap: to the
     * last frame received, without the quiet time that ended the run */
    if (p->mode == TX_STREAM || stalled)
        res->time_ns = t1 - t0;
    else if (p->mode == TX_GAP)
        res->time_ns = res->received ? res->rx_last_ns : t1 - t0;
    for (unsigned q = 0; q < Q; q++)
        res->tx_doorbells += nq->tx[q].doorbells;
    res->tx_doorbells -= txdb0;
    res->rx_doorbells = rxdb1 - rxdb0;
    if (res->have_model) {
        res->mmio_rd_tlps = m1[0] - m0[0];
        res->mmio_reads = m1[1] - m0[1];
        res->mmio_writes = m1[2] - m0[2];
        res->model_msis = m1[3] - m0[3];
    }
    if (stalled) {
        char detail[512] = "";
        size_t len = 0;
        for (unsigned q = 0; q < Q; q++)
            len += (size_t)snprintf(detail + len, len < sizeof detail ? sizeof detail - len : 0,
                                    "%s q%u: %" PRIu64 " posted, %" PRIu64 " received, next "
                                    "expected %" PRIu64, q ? ";" : "", q, s.sent[q], s.rx_q[q],
                                    s.next_seq[q]);
        fprintf(stderr, "nicbench: tx run %u: counter deltas:", run);
        for (size_t i = 0; i < ncnt; i++)
            if (cnt_delta[i])
                fprintf(stderr, " %s=%" PRIu64, defs[i].name, cnt_delta[i]);
        fputc('\n', stderr);
        rc = fail(c, "tx run %u (size %u, inflight %u, window %u): %" PRIu64 " of %" PRIu64
                  " frames received, no progress for %" PRIu64 " ns:%s", run, pt->size,
                  pt->inflight, pt->window, res->received, pt->frames, c->timeout_ns, detail);
    }
out:
    free(cnt0);
    free(s.stage);
    free(s.want);
    free(s.got);
    free(s.fr);
    free(s.post_ns);
    return rc;
}

/* --- what a run prints and records ------------------------------------------------------------ */

/* --gap-ns: the drop counters whose frames count as lost, not as a failure: the receiver had no
 * buffer (rx_engine.py) or its FIFO no room. Any other drop or error fails the run. */
static const char *const tx_loss_causes[] = {"rxe_drop_no_buffer", "rxfifo_drop_full"};
#define TX_LOSS_CAUSES (sizeof tx_loss_causes / sizeof tx_loss_causes[0])

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

/* n events from the first to the last (ns) as millions per second (NaN under two events). */
static double tx_rate_mpps(uint64_t n, uint64_t first, uint64_t last)
{
    return n > 1 && last > first ? (double)(n - 1) / (double)(last - first) * 1e3 : NAN;
}

static void tx_figures(struct nic_backend *b, const struct tx_params *p, const struct tx_result *r,
                       const uint64_t *delta, struct tx_figures *f)
{
    memset(f, 0, sizeof *f);
    /* Wire bytes per frame: the run's mean with --size-range and --io. */
    const double wire = (double)r->wire_bytes / (double)r->frames;
    const double size = (double)r->bytes / (double)r->frames;
    f->gbps = (double)r->bytes * 8 / (double)r->time_ns;
    f->wire_gbps = (double)r->wire_bytes * 8 / (double)r->time_ns;
    f->mbps = (double)r->bytes / (double)r->time_ns * 1e3;
    f->mpps = (double)r->frames / (double)r->time_ns * 1e3;
    f->line_mpps = LINE_BPS / (8.0 * wire) / 1e6;
    f->host_ns = cpu_per_frame(&r->cpu, CPU_ALL, r->frames);
    f->host_csum_ns = cpu_per_frame(&r->cpu, CPU_CSUM, r->frames);
    f->host_tx_ns = cpu_per_frame(&r->cpu, CPU_TX_ALL, r->frames);
    f->host_rx_ns = cpu_per_frame(&r->cpu, CPU_RX_ALL, r->frames);
    f->io_mean_ns = r->ios ? (double)r->io_ns_sum / (double)r->ios : NAN;
    f->rtt_mean_ns = r->rtts ? (double)r->rtt_ns_sum / (double)r->rtts : NAN;
    f->rx_mbps = (double)r->bytes / (double)r->rx_last_ns * 1e3;
    const int i_txirq = nic_q_counter_index("txirq_irqs");
    const int i_rxirq = nic_q_counter_index("rxirq_irqs");
    f->irq_tx = i_txirq >= 0 ? delta[i_txirq] : 0;
    f->irq_rx = i_rxirq >= 0 ? delta[i_rxirq] : 0;
    /* Multi-vector MSI: every MSI must be on a TX vector or the RX vector. */
    for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
        f->msi_tx += r->msi_vec[nic_q_tx_vector_msi(b, g)];
    f->msi_rx = r->msi_vec[nic_q_rx_msi(b)];
    f->msi_other = r->msis - f->msi_tx - f->msi_rx;
    f->lost = r->frames - r->received;
    for (size_t k = 0; k < TX_LOSS_CAUSES; k++) {
        const int i = nic_q_counter_index(tx_loss_causes[k]);
        f->loss[k] = i >= 0 ? delta[i] : 0;
        f->loss_drops += f->loss[k];
    }
    f->offered_mpps = tx_rate_mpps(r->frames, r->post_first_ns, r->post_last_ns);
    f->offered_gbps = f->offered_mpps * size * 8 / 1e3;
    f->rx_mpps = tx_rate_mpps(r->received, r->rx_first_ns, r->rx_last_ns);
    f->rx_gbps = r->received ? f->rx_mpps * (double)r->rx_bytes / (double)r->received * 8 / 1e3
                             : NAN;
    f->rx_wire_gbps = f->rx_gbps * (double)(r->rx_bytes + r->received * (FCS_BYTES +
                                                                         WIRE_OVERHEAD)) /
                      (double)r->rx_bytes;
    /* --gap-ns: frames lost for the causes above are results, each one counted by the NIC */
    const bool gap = p->mode == TX_GAP;
    const uint64_t bad = r->bad_content + r->bad_len + r->bad_status + r->bad_header +
                         r->out_of_order + r->bad_csum + r->q_mismatch + (gap ? 0 : f->lost);
    const uint64_t drops = r->drops_total - (gap ? f->loss_drops : 0);
    const bool mmio_ok = !r->have_model || r->mmio_rd_tlps == 0;
    f->ok = bad == 0 && drops == 0 && mmio_ok && f->msi_other == 0 &&
            (!gap || f->lost == f->loss_drops);
}

struct tx_row {
    int n;
    const char *hdr[TX_COLS];
    char cell[TX_COLS][24];
};

__attribute__((format(printf, 3, 4))) static void tx_col(struct tx_row *r, const char *hdr,
                                                         const char *fmt, ...)
{
    if (r->n >= TX_COLS)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->cell[r->n], sizeof r->cell[0], fmt, ap);
    va_end(ap);
    r->hdr[r->n++] = hdr;
}

/* The table row of a run; its columns depend on the mode. */
static void tx_row(struct tx_row *w, const struct tx_params *p, const struct tx_point *pt,
                   const struct tx_result *r, const struct tx_figures *f)
{
    memset(w, 0, sizeof *w);
    if (p->mode == TX_IO) {
        tx_col(w, "io_B", "%" PRIu64, pt->io);
        tx_col(w, "frame_B", "%u", pt->size);
    } else if (p->size_hi) {
        tx_col(w, "size_B", "%u-%u", pt->size, p->size_hi);
    } else {
        tx_col(w, "size_B", "%u", pt->size);
    }
    if (p->mode == TX_GAP)
        tx_col(w, "gap_ns", "%" PRIu64, pt->gap_ns);
    tx_col(w, "queues", "%u", p->queues);
    if (p->mode == TX_STREAM) {
        tx_col(w, "inflight", "%u", pt->inflight);
        if (pt->window)
            tx_col(w, "window", "%u", pt->window);
        else
            tx_col(w, "window", "-");
    }
    if (p->mode == TX_IO)
        tx_col(w, "ios", "%" PRIu64, r->ios);
    tx_col(w, "frames", "%" PRIu64, r->frames);
    tx_col(w, "bytes", "%" PRIu64, r->bytes);
    tx_col(w, "sim_us", "%.3f", (double)r->time_ns / 1e3);
    if (p->mode == TX_GAP) {
        tx_col(w, "offer_Gb/s", "%.4f", f->offered_gbps);
        tx_col(w, "rx_frames", "%" PRIu64, r->received);
        tx_col(w, "rx_Gb/s", "%.4f", f->rx_gbps);
        tx_col(w, "rx_wire_Gb/s", "%.4f", f->rx_wire_gbps);
        tx_col(w, "lost", "%" PRIu64, f->lost);
        tx_col(w, "no_buf", "%" PRIu64, f->loss[0]);
        tx_col(w, "fifo_full", "%" PRIu64, f->loss[1]);
    } else if (p->mode == TX_IO) {
        tx_col(w, "MB/s", "%.3f", f->mbps);
        tx_col(w, "Gb/s", "%.4f", f->gbps);
        tx_col(w, "us/io", "%.3f", f->io_mean_ns / 1e3);
        tx_col(w, "rx_MB/s", "%.3f", f->rx_mbps);
    } else {
        tx_col(w, "Gb/s", "%.4f", f->gbps);
        tx_col(w, "wire_Gb/s", "%.4f", f->wire_gbps);
        tx_col(w, "Mpps", "%.4f", f->mpps);
        tx_col(w, "line_%", "%.1f", 100.0 * f->mpps / f->line_mpps);
        if (pt->window)
            tx_col(w, "rtt_us", "%.3f", f->rtt_mean_ns / 1e3);
    }
    if (r->have_model)
        tx_col(w, "mmio_rd", "%" PRIu64, r->mmio_rd_tlps);
    else
        tx_col(w, "mmio_rd", "n/a");
    tx_col(w, "tx_db", "%" PRIu64, r->tx_doorbells);
    tx_col(w, "rx_db", "%" PRIu64, r->rx_doorbells);
    if (p->mode != TX_GAP)
        tx_col(w, "drops", "%" PRIu64, r->drops_total);
    if (p->mode == TX_STREAM) {
        tx_col(w, "irq_tx", "%" PRIu64, f->irq_tx);
        tx_col(w, "irq_rx", "%" PRIu64, f->irq_rx);
        tx_col(w, "msi", "%" PRIu64, r->msis);
    }
    tx_col(w, "host_ns/fr", "%.0f", f->host_ns);
    tx_col(w, "csum_ns/fr", "%.0f", f->host_csum_ns);
    tx_col(w, "result", "%s", f->ok ? "ok" : "FAIL");
}

/* The run's JSON record. */
static void tx_json(struct ctx *c, const struct tx_params *p, const struct tx_point *pt,
                    unsigned run, const struct tx_result *r, const struct tx_figures *f,
                    const uint64_t *delta, const struct nic_q_coalesce *co)
{
    struct nic_backend *b = c->b;
    size_t ncnt;
    const struct nic_q_counter_def *defs = nic_q_counter_defs(&ncnt);
    const int i_txdb = nic_q_counter_index("txq_doorbells");
    struct bu_json *j = &c->rec;
    bu_json_obj_begin(j);
    bu_json_kstr(j, "experiment", "tx");
    bu_json_kstr(j, "mode", tx_mode_name[p->mode]);
    bu_json_ku64(j, "run", run);
    bu_json_ku64(j, "size", pt->size);
    bu_json_ku64(j, "size_max", p->size_hi ? p->size_hi : pt->size);
    bu_json_ku64(j, "queues", p->queues);
    bu_json_ku64(j, "ring", p->ring);
    bu_json_ku64(j, "rx_ring", p->rx_ring);
    bu_json_ku64(j, "batch", p->batch);
    bu_json_ku64(j, "inflight", pt->inflight);
    /* --buf-offset: TX frames' (RX buffers': rounded down to 16 B) offset in their pages */
    json_opt_u64(j, "buf_offset", !p->buf_random, p->buf_offset);
    json_opt_u64(j, "buf_offset_seed", p->buf_random, p->buf_seed);
    /* --window: frames per queue sent and not received at most, and the round trips */
    json_opt_u64(j, "window", pt->window, pt->window);
    json_opt_u64(j, "rtts", pt->window, r->rtts);
    json_opt_double(j, "rtt_mean_ns", pt->window && r->rtts, f->rtt_mean_ns);
    json_opt_u64(j, "rtt_min_ns", pt->window && r->rtts, r->rtt_ns_min);
    json_opt_u64(j, "rtt_max_ns", pt->window && r->rtts, r->rtt_ns_max);
    bu_json_ku64(j, "poll_ns", p->poll_ns);
    bu_json_ku64(j, "frames", r->frames);
    bu_json_ku64(j, "bytes", r->bytes);
    bu_json_ku64(j, "wire_bytes", r->wire_bytes);
    bu_json_ku64(j, "time_ns", r->time_ns);
    bu_json_kdouble(j, "gbps", f->gbps);
    bu_json_kdouble(j, "wire_gbps", f->wire_gbps);
    bu_json_kdouble(j, "mbps", f->mbps);
    bu_json_kdouble(j, "mpps", f->mpps);
    bu_json_kdouble(j, "line_mpps", f->line_mpps);
    bu_json_kdouble(j, "line_ratio", f->mpps / f->line_mpps);
    if (p->mode == TX_IO) {
        /* time_ns: from the start to the poll that saw the last I/O done */
        bu_json_ku64(j, "io_size", pt->io);
        bu_json_ku64(j, "io_frame_max", p->io_frame);
        bu_json_ku64(j, "io_frames", pt->io_frames);
        bu_json_ku64(j, "ios_per_queue", pt->ios);
        bu_json_ku64(j, "ios", r->ios);
        bu_json_kdouble(j, "io_time_mean_ns", f->io_mean_ns);
        bu_json_ku64(j, "io_time_min_ns", r->io_ns_min);
        bu_json_ku64(j, "io_time_max_ns", r->io_ns_max);
        bu_json_ku64(j, "min_bytes", p->min_bytes);
        bu_json_kdouble(j, "io_mbps", f->mbps);            /* the submitters' view */
        /* to the last frame received: behind the submitters by what the TX FIFO holds */
        bu_json_ku64(j, "received_last_ns", r->rx_last_ns);
        bu_json_kdouble(j, "received_mbps", f->rx_mbps);
    }
    if (p->mode == TX_GAP) {
        /* time_ns: from the start to the last frame received; rates from first to last */
        bu_json_ku64(j, "gap_ns", pt->gap_ns);
        bu_json_ku64(j, "rx_refill_ns", p->rx_refill_ns);
        json_opt_double(j, "offered_gbps_nominal", pt->gap_ns > 0,
                        (double)r->bytes / (double)r->frames * 8 / (double)pt->gap_ns);
        bu_json_kdouble(j, "offered_mpps", f->offered_mpps);
        bu_json_kdouble(j, "offered_gbps", f->offered_gbps);
        bu_json_kdouble(j, "received_mpps", f->rx_mpps);
        bu_json_kdouble(j, "received_gbps", f->rx_gbps);
        bu_json_kdouble(j, "received_wire_gbps", f->rx_wire_gbps);
        bu_json_ku64(j, "post_first_ns", r->post_first_ns);
        bu_json_ku64(j, "post_last_ns", r->post_last_ns);
        bu_json_ku64(j, "received_first_ns", r->rx_first_ns);
        bu_json_ku64(j, "received_last_ns", r->rx_last_ns);
        bu_json_key(j, "lost_by_cause");
        bu_json_obj_begin(j);
        for (size_t k = 0; k < TX_LOSS_CAUSES; k++)
            bu_json_ku64(j, tx_loss_causes[k], f->loss[k]);
        bu_json_obj_end(j);
        bu_json_ku64(j, "lost_unexplained", f->lost - (f->loss_drops < f->lost ? f->loss_drops
                                                                                 : f->lost));
        bu_json_ku64(j, "seq_skipped", r->seq_skipped);
    }
    bu_json_key(j, "csum");
    bu_json_bool(j, p->csum);
    bu_json_ku64(j, "bad_csum", r->bad_csum);
    /* The host's own CPU time per frame sent (struct tx_cpu): wall-clock CPU, not sim time. */
    bu_json_kstr(j, "host_cpu_clock", "CLOCK_THREAD_CPUTIME_ID: host thread CPU ns (wall "
                 "clock, not simulated), outside backend calls");
    bu_json_kdouble(j, "host_ns_per_frame", f->host_ns);
    bu_json_kdouble(j, "host_csum_ns_per_frame", f->host_csum_ns);
    bu_json_kdouble(j, "host_tx_ns_per_frame", f->host_tx_ns);
    bu_json_kdouble(j, "host_rx_ns_per_frame", f->host_rx_ns);
    bu_json_ku64(j, "host_cpu_laps", r->cpu.laps[CPU_TX] + r->cpu.laps[CPU_TX_CSUM] +
                                         r->cpu.laps[CPU_RX] + r->cpu.laps[CPU_RX_CSUM]);
    bu_json_ku64(j, "host_clock_read_ns", r->cpu.clock_ns);
    json_opt_u64(j, "mmio_read_tlps_hot", r->have_model, r->mmio_rd_tlps);
    json_opt_u64(j, "mmio_reads_hot", r->have_model, r->mmio_reads);
    json_opt_u64(j, "mmio_writes_hot", r->have_model, r->mmio_writes);
    bu_json_ku64(j, "tx_doorbells", r->tx_doorbells);
    bu_json_ku64(j, "rx_doorbells", r->rx_doorbells);
    json_opt_u64(j, "device_tx_doorbells", i_txdb >= 0, i_txdb >= 0 ? delta[i_txdb] : 0);
    bu_json_ku64(j, "irqs_tx", f->irq_tx);
    bu_json_ku64(j, "irqs_rx", f->irq_rx);
    bu_json_ku64(j, "msis_received", r->msis);
    json_opt_u64(j, "msis_model", r->have_model, r->model_msis);
    /* Per vector (LitePCIe's msi-multi-vector: an MSI number per vector). */
    bu_json_kstr(j, "msi_type", "msi-multi-vector");
    bu_json_ku64(j, "msis_tx", f->msi_tx);
    bu_json_ku64(j, "msis_rx", f->msi_rx);
    bu_json_ku64(j, "msis_other", f->msi_other);
    /* TX queue groups: queue q on TX vector q % tx_vectors; per vector the device's interrupt
     * count and the MSIs received. */
    bu_json_ku64(j, "tx_vectors", nic_q_hw_txirq(b));
    bu_json_key(j, "irqs_tx_vec");
    bu_json_arr_begin(j);
    for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
        bu_json_u64(j, r->irqs_tx_vec[g]);
    bu_json_arr_end(j);
    bu_json_key(j, "msis_tx_vec");
    bu_json_arr_begin(j);
    for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
        bu_json_u64(j, r->msi_vec[nic_q_tx_vector_msi(b, g)]);
    bu_json_arr_end(j);
    bu_json_ku64(j, "received", r->received);
    bu_json_ku64(j, "received_bytes", r->rx_bytes);
    bu_json_ku64(j, "bad_content", r->bad_content);
    bu_json_ku64(j, "bad_length", r->bad_len);
    bu_json_ku64(j, "bad_status", r->bad_status);
    bu_json_ku64(j, "bad_header", r->bad_header);
    bu_json_ku64(j, "out_of_order", r->out_of_order);
    bu_json_ku64(j, "lost", f->lost);
    bu_json_ku64(j, "drops_total", r->drops_total);
    bu_json_key(j, "per_queue");                 /* the device's per-queue counters */
    bu_json_arr_begin(j);
    for (unsigned q = 0; q < p->queues; q++) {
        bu_json_obj_begin(j);
        bu_json_ku64(j, "queue", q);
        bu_json_ku64(j, "frames", r->q_frames[q]);
        bu_json_ku64(j, "bytes", r->q_bytes[q]);
        bu_json_obj_end(j);
    }
    bu_json_arr_end(j);
    bu_json_ku64(j, "per_queue_mismatch", r->q_mismatch);
    bu_json_key(j, "drops");
    bu_json_obj_begin(j);
    for (size_t k = 0; k < ncnt; k++)
        if (defs[k].kind == NIC_QC_ERROR)
            bu_json_ku64(j, defs[k].name, delta[k]);
    bu_json_obj_end(j);
    json_coalesce(j, co);
    bu_json_key(j, "counters");
    bu_json_obj_begin(j);
    for (size_t k = 0; k < ncnt; k++)
        bu_json_ku64(j, defs[k].name, delta[k]);
    bu_json_obj_end(j);
    bu_json_kstr(j, "result", f->ok ? "ok" : "fail");
    bu_json_obj_end(j);
}

/* A failed run's details on stderr: what was lost, bad and dropped. */
static void tx_explain(const struct tx_params *p, const struct tx_point *pt, unsigned run,
                       const struct tx_result *r, const struct tx_figures *f,
                       const uint64_t *delta)
{
    size_t ncnt;
    const struct nic_q_counter_def *defs = nic_q_counter_defs(&ncnt);
    fprintf(stderr, "nicbench: tx run %u (size %u, inflight %u, window %u): %" PRIu64 " of %"
            PRIu64 " received; bad content %" PRIu64 ", bad length %" PRIu64 ", bad status %"
            PRIu64 ", bad header %" PRIu64 ", out of order %" PRIu64 ", bad checksum %" PRIu64
            "; hot-path MMIO read TLPs %" PRIu64 "; drops/errors:", run, pt->size,
            pt->inflight, pt->window, r->received, r->frames, r->bad_content, r->bad_len,
            r->bad_status, r->bad_header, r->out_of_order, r->bad_csum, r->mmio_rd_tlps);
    for (size_t k = 0; k < ncnt; k++)
        if (defs[k].kind == NIC_QC_ERROR && delta[k])
            fprintf(stderr, " %s=%" PRIu64, defs[k].name, delta[k]);
    if (p->mode == TX_GAP && f->lost != f->loss_drops)
        fprintf(stderr, "; %" PRIu64 " frames lost, %" PRIu64 " counted by the NIC as "
                "dropped for want of an RX buffer or RX FIFO room", f->lost, f->loss_drops);
    fputc('\n', stderr);
}

/* --- the command ------------------------------------------------------------------------------ */

/* A list option (--sizes, --io, --inflight, --gap-ns) into out: each lo..hi. 0 or a usage
 * error. */
static int tx_list(const char *opt, const char *s, uint64_t *out, size_t *n, uint64_t lo,
                   uint64_t hi)
{
    char err[512];
    if (bu_parse_list(s, out, MAX_SIZES, n, err, sizeof err) < 0)
        return usage_error("%s: %s", opt, err);
    for (size_t i = 0; i < *n; i++)
        if (out[i] < lo || out[i] > hi)
            return usage_error("%s: %" PRIu64 " out of range %" PRIu64 "..%" PRIu64, opt,
                               out[i], lo, hi);
    return EXIT_OK;
}

/* Options one mode does not take: the first given, or NULL. */
static const char *tx_refused(const char *const *names, const bool *given, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (given[i])
            return names[i];
    return NULL;
}

int cmd_tx(struct ctx *c, int argc, char **argv)
{
    struct tx_params p = {.frames = 10000, .queues = 1, .ring = 64, .rx_ring = 1024,
                          .batch = 32, .poll_ns = 64, .coalesce = NULL, .mode = TX_STREAM,
                          .io_frame = TX_IO_FRAME, .min_bytes = TX_IO_MIN_BYTES};
    const char *sizes_s = NULL, *inflight_s = NULL, *range_s = NULL, *io_s = NULL,
               *gap_s = NULL, *window_s = NULL;
    /* --name VALUE options: strings, then numbers (each at most its max); getopt_long's val
     * is OPT_STR or OPT_NUM plus the index. */
    const char *bufoff_s = NULL;
    enum { S_SIZES, S_RANGE, S_INFLIGHT, S_COALESCE, S_IO, S_GAP, S_WINDOW, S_BUF_OFFSET, NSTR };
    const char **sdst[NSTR] = {&sizes_s, &range_s, &inflight_s, &p.coalesce, &io_s, &gap_s,
                               &window_s, &bufoff_s};
    enum { N_FRAMES, N_QUEUES, N_RING, N_RX_RING, N_BATCH, N_POLL, N_IO_FRAME, N_MIN_BYTES,
           N_REFILL, NNUM };
    static const char *const nnames[NNUM] = {"--frames", "--queues", "--ring", "--rx-ring",
                                             "--batch", "--poll-ns", "--io-frame",
                                             "--min-bytes", "--rx-refill-ns"};
    static const uint64_t nmax[NNUM] = {UINT64_MAX, 1000000, 1000000, 1000000, 1000000, 1000000,
                                        1000000, 1ull << 40, TX_GAP_MAX_NS};
    enum { OPT_CSUM = 1, OPT_STR = 256, OPT_NUM = 512 };
#define TX_OPT(name, val) {name, required_argument, NULL, val}
    static const struct option opts[] = {
        TX_OPT("size", OPT_STR + S_SIZES),         TX_OPT("sizes", OPT_STR + S_SIZES),
        TX_OPT("size-range", OPT_STR + S_RANGE),   TX_OPT("inflight", OPT_STR + S_INFLIGHT),
        TX_OPT("coalesce", OPT_STR + S_COALESCE),  TX_OPT("io", OPT_STR + S_IO),
        TX_OPT("gap-ns", OPT_STR + S_GAP),         TX_OPT("window", OPT_STR + S_WINDOW),
        TX_OPT("frames", OPT_NUM + N_FRAMES),      TX_OPT("queues", OPT_NUM + N_QUEUES),
        TX_OPT("ring", OPT_NUM + N_RING),          TX_OPT("rx-ring", OPT_NUM + N_RX_RING),
        TX_OPT("batch", OPT_NUM + N_BATCH),        TX_OPT("poll-ns", OPT_NUM + N_POLL),
        TX_OPT("io-frame", OPT_NUM + N_IO_FRAME),  TX_OPT("min-bytes", OPT_NUM + N_MIN_BYTES),
        TX_OPT("rx-refill-ns", OPT_NUM + N_REFILL), TX_OPT("buf-offset", OPT_STR + S_BUF_OFFSET),
        {"csum", no_argument, NULL, OPT_CSUM},     {NULL, 0, NULL, 0}};
#undef TX_OPT
    uint64_t num[NNUM] = {p.frames, p.queues, p.ring, p.rx_ring, p.batch, p.poll_ns, p.io_frame,
                          p.min_bytes, 0};
    bool given[NNUM] = {false};
    int o;
    while ((o = next_option("tx", argc, argv, opts)) != -1) {
        int rc;
        switch (o) {
        case 0:
            return EXIT_USAGE;
        case OPT_CSUM:
            p.csum = true;
            break;
        default:
            if (o < OPT_NUM) {
                *sdst[o - OPT_STR] = optarg;
                break;
            }
            const int k = o - OPT_NUM;
            if ((rc = parse_num(nnames[k], optarg, &num[k])))
                return rc;
            if (num[k] > nmax[k])
                return usage_error("%s: %" PRIu64 " is too large", nnames[k], num[k]);
            given[k] = true;
        }
    }
    p.frames = num[N_FRAMES];
    p.queues = (unsigned)num[N_QUEUES];
    p.ring = (unsigned)num[N_RING];
    p.rx_ring = (unsigned)num[N_RX_RING];
    p.batch = (unsigned)num[N_BATCH];
    p.poll_ns = num[N_POLL];
    p.io_frame = (unsigned)num[N_IO_FRAME];
    p.min_bytes = num[N_MIN_BYTES];
    p.rx_refill_ns = num[N_REFILL];
    p.mode = io_s ? TX_IO : gap_s ? TX_GAP : TX_STREAM;

    /* What each mode refuses: --io sets its frames, batches and in-flight limit itself; --gap-ns
     * posts one frame per doorbell; the I/O and refill options belong to their modes. */
    const bool sizes_given = sizes_s != NULL;
    const char *const io_no[] = {"--sizes", "--size-range", "--frames", "--batch", "--inflight",
                                 "--window", "--gap-ns", "--rx-refill-ns"};
    const bool io_no_given[] = {sizes_given, range_s, given[N_FRAMES], given[N_BATCH],
                                inflight_s, window_s, gap_s, given[N_REFILL]};
    const char *const gap_no[] = {"--batch", "--inflight", "--window", "--io-frame",
                                  "--min-bytes"};
    const bool gap_no_given[] = {given[N_BATCH], inflight_s, window_s, given[N_IO_FRAME],
                                 given[N_MIN_BYTES]};
    const char *const stream_no[] = {"--io-frame", "--min-bytes", "--rx-refill-ns"};
    const bool stream_no_given[] = {given[N_IO_FRAME], given[N_MIN_BYTES], given[N_REFILL]};
#define TX_REFUSED(names, given) tx_refused(names, given, sizeof names / sizeof names[0])
    const char *bad_opt = p.mode == TX_IO    ? TX_REFUSED(io_no, io_no_given)
                          : p.mode == TX_GAP ? TX_REFUSED(gap_no, gap_no_given)
                                             : TX_REFUSED(stream_no, stream_no_given);
#undef TX_REFUSED
    if (bad_opt)
        return usage_error("tx: %s does not go with %s", bad_opt,
                           p.mode == TX_IO ? "--io" : p.mode == TX_GAP ? "--gap-ns"
                           : "the default mode (it belongs to --io or --gap-ns)");

    uint64_t sizes[MAX_SIZES], second[MAX_SIZES];
    size_t nsizes, nsecond = 1;
    uint64_t max_size = 0;
    int rc;
    if (p.mode == TX_IO) {
        if (p.io_frame < NIC_Q_FRAME_MIN || p.io_frame > NIC_Q_FRAME_MAX)
            return usage_error("--io-frame: %u out of range %u..%u", p.io_frame,
                               NIC_Q_FRAME_MIN, NIC_Q_FRAME_MAX);
        if (p.min_bytes < 1)
            return usage_error("--min-bytes: must be at least 1");
        if ((rc = tx_list("--io", io_s, sizes, &nsizes, TX_IO_MIN, TX_IO_MAX)))
            return rc;
        for (size_t i = 0; i < nsizes; i++) {
            struct tx_point pt;
            tx_io_point(&p, sizes[i], &pt);
            if (pt.size > max_size)
                max_size = pt.size;
        }
    } else if ((rc = frame_sizes(sizes_s ? sizes_s : "60", sizes, &nsizes, &max_size))) {
        return rc;
    }
    if (range_s) {
        unsigned lo, hi;
        char end;
        if (sizes_given)
            return usage_error("--size-range and --sizes: give one of them");
        if (sscanf(range_s, "%u-%u%c", &lo, &hi, &end) != 2 || lo < TX_HDR || lo >= hi ||
            hi > NIC_Q_FRAME_MAX)
            return usage_error("--size-range: '%s' is not LO-HI with %u <= LO < HI <= %u",
                               range_s, TX_HDR, NIC_Q_FRAME_MAX);
        sizes[0] = lo;
        nsizes = 1;
        p.size_hi = hi;
        max_size = hi;
    }
    if (p.csum)
        for (size_t i = 0; i < nsizes && p.mode != TX_IO; i++)
            if (sizes[i] < TX_CSUM_MIN)
                return usage_error("--csum: frames of %" PRIu64 " bytes have no room for the "
                                   "checksum (bytes %u..%u): %u at least", sizes[i], TX_CSUM_AT,
                                   TX_CSUM_AT + 1, TX_CSUM_MIN);
    if (p.frames < 1 || p.frames > 100000000)
        return usage_error("--frames: %" PRIu64 " out of range 1..100000000", p.frames);
    if (p.queues < 1 || p.queues > NIC_Q_MAX_TXQ)
        return usage_error("--queues: %u out of range 1..%u", p.queues, (unsigned)NIC_Q_MAX_TXQ);
    if (p.ring < 2 || p.ring > NIC_Q_RING_MAX || (p.ring & (p.ring - 1)))
        return usage_error("--ring: %u is not a power of two 2..%u", p.ring, NIC_Q_RING_MAX);
    if (p.rx_ring < 2 || p.rx_ring > NIC_Q_RING_MAX || (p.rx_ring & (p.rx_ring - 1)))
        return usage_error("--rx-ring: %u is not a power of two 2..%u", p.rx_ring,
                           NIC_Q_RING_MAX);
    if (!given[N_BATCH] && p.batch > p.ring - 1)
        p.batch = p.ring - 1;           /* the default of 32 on a small ring */
    if (p.batch < 1 || p.batch > p.ring - 1)
        return usage_error("--batch: %u out of range 1..%u (ring size - 1)", p.batch,
                           p.ring - 1);
    if (p.poll_ns < 1)
        return usage_error("--poll-ns: must be at least 1");
    /* The second axis of the sweep: in-flight limits (stream) or gaps; one point for --io. */
    second[0] = p.ring - 1;
    if (inflight_s && (rc = tx_list("--inflight", inflight_s, second, &nsecond, 1, p.ring - 1)))
        return rc;
    if (gap_s && (rc = tx_list("--gap-ns", gap_s, second, &nsecond, 0, TX_GAP_MAX_NS)))
        return rc;
    /* --window: a third axis, inside the in-flight limits (0: no window) */
    uint64_t windows[MAX_SIZES] = {0};
    size_t nwindows = 1;
    if (window_s && (rc = tx_list("--window", window_s, windows, &nwindows, 1, TX_WINDOW_MAX)))
        return rc;
    if (bufoff_s) {
        uint64_t v = 0;
        p.buf_offset_given = true;
        if (strncmp(bufoff_s, "random", 6) == 0 && (!bufoff_s[6] || bufoff_s[6] == ':')) {
            p.buf_random = true;
            p.buf_seed = wall_ns();
            if (bufoff_s[6] && (rc = parse_num("--buf-offset random:SEED", bufoff_s + 7,
                                               &p.buf_seed)))
                return rc;
        } else if ((rc = parse_num("--buf-offset", bufoff_s, &v))) {
            return rc;
        } else if (v > 4095) {
            return usage_error("--buf-offset: %" PRIu64 " is not an offset in a page (0..4095)",
                               v);
        }
        p.buf_offset = (unsigned)v;
    }
    char err[512];
    struct nic_q_coalesce co;
    nic_q_coalesce_defaults(&co);
    if (p.coalesce && nic_q_coalesce_parse(p.coalesce, &co, err, sizeof err) < 0)
        return usage_error("--coalesce: %s", err);

    rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    print_params(c, "params: ");
    struct nic_queues nq;
    const struct nic_q_config qc = {.ntxq = p.queues, .tx_ring = p.ring, .tx_limit = 0,
                                    .rx_ring = p.rx_ring,
                                    .buf_size = (unsigned)(max_size < NIC_Q_FRAME_MIN ?
                                                           NIC_Q_FRAME_MIN : max_size),
                                    .sched_mode = 0, .buf_offset = p.buf_offset,
                                    .buf_offset_random = p.buf_random,
                                    .buf_offset_seed = p.buf_seed};
    if (nic_q_open(&nq, b, &qc, c->timeout_ns, err, sizeof err) < 0) {
        nic_q_close(&nq, c->timeout_ns, NULL, 0);
        return fail(c, "tx: %s", err);
    }
    if (nic_q_coalesce_set(&nq, &co, err, sizeof err) < 0 ||
        nic_q_coalesce_get(&nq, &co, err, sizeof err) < 0) {
        nic_q_close(&nq, c->timeout_ns, NULL, 0);
        return fail(c, "tx: %s", err);
    }
    uint32_t msi_mask = nic_msi_bit(nic_q_rx_msi(b));
    for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
        msi_mask |= nic_msi_bit(nic_q_tx_vector_msi(b, g));
    nic_msi_enable(b, msi_mask);
    if ((rc = backend_check(c, "tx setup"))) {
        nic_q_close(&nq, c->timeout_ns, NULL, 0);
        return rc;
    }
    if (p.mode == TX_IO)
        out(c, "tx --io: each of the %u TX queue(s) a submitter of blocking I/Os, one open at "
            "a time: an I/O of N bytes is k = ceil(N / %u) frames of N/k bytes (the first N %% k "
            "one byte more), posted as far as the ring (%u) takes with a doorbell each time, "
            "until all is posted; the next I/O starts when the written-back consumer index has "
            "passed the whole I/O; at least %u I/Os per submitter and %" PRIu64 " bytes per "
            "run", p.queues, p.io_frame, p.ring, TX_IO_MIN_IOS, p.min_bytes);
    else if (p.mode == TX_GAP)
        out(c, "tx --gap-ns: %" PRIu64 " frames per run over %u queue(s) (round-robin), one "
            "frame per doorbell, posts spaced by the gap in simulated ns (start to start; later "
            "only when the ring is full), ring %u; RX ring %u, buffers reposted %s", p.frames,
            p.queues, p.ring, p.rx_ring, p.rx_refill_ns ? "every --rx-refill-ns" :
            "per batch");
    else
        out(c, "tx: %" PRIu64 " frames per run over %u queue(s), ring %u, RX ring %u, a "
            "doorbell per %u frames%s", p.frames, p.queues, p.ring, p.rx_ring, p.batch,
            window_s ? ", at most --window frames per queue sent and not yet received" : "");
    if (p.rx_refill_ns)
        out(c, " (%" PRIu64 " ns)", p.rx_refill_ns);
    if (p.buf_random)
        out(c, "; each TX frame and RX buffer at a random offset in its page (RX: a multiple "
            "of %u B), seed %" PRIu64, NIC_Q_RX_BUF_ALIGN, p.buf_seed);
    else if (p.buf_offset_given)
        out(c, "; TX frames at offset %u in their pages, RX buffers at %u", p.buf_offset,
            p.buf_offset / NIC_Q_RX_BUF_ALIGN * NIC_Q_RX_BUF_ALIGN);
    out(c, ", poll %" PRIu64 " ns; coalescing rx-usecs=%u rx-frames=%u tx-usecs=%u "
        "tx-frames=%u (each of %u TX vectors: queue q on vector q %% %u); %sframes through "
        "the MAC loopback, checked bit-exact and in order per queue\n", p.poll_ns, co.rx_usecs,
        co.rx_frames, co.tx_usecs, co.tx_frames, nic_q_hw_txirq(b), nic_q_hw_txirq(b),
        p.csum ? "an RFC 1071 checksum in every frame, verified on receipt; " : "");

    struct bu_table t = {0};
    size_t ncnt;
    nic_q_counter_defs(&ncnt);
    uint64_t *delta = calloc(ncnt + 1, sizeof *delta);
    unsigned run = 0;
    bool any_bad = false;
    for (size_t n = 0; n < nsizes * nsecond * nwindows && !rc; n++, run++) {
        const size_t si = n / (nsecond * nwindows), ii = n / nwindows % nsecond,
                     wi = n % nwindows;
        struct tx_point pt = {.size = (uint32_t)sizes[si], .inflight = p.ring - 1,
                              .window = (unsigned)windows[wi], .frames = p.frames};
        if (p.mode == TX_IO)
            tx_io_point(&p, sizes[si], &pt);
        else if (p.mode == TX_GAP)
            pt.gap_ns = second[ii];
        else
            pt.inflight = (unsigned)second[ii];
        struct tx_result r;
        rc = tx_run(c, &nq, &p, run, &pt, &r, delta);
        if (!rc)
            rc = backend_check(c, "tx run");
        if (rc)
            break;
        struct tx_figures f;
        tx_figures(b, &p, &r, delta, &f);
        if (f.msi_other)
            fprintf(stderr, "nicbench: tx run %u: %" PRIu64 " MSIs on vectors other than "
                    "the %u TX vectors (from %u) and NIC_RX (%u)\n", run, f.msi_other,
                    nic_q_hw_txirq(b), nic_q_tx_vector_msi(b, 0), nic_q_rx_msi(b));
        any_bad |= !f.ok;
        struct tx_row w;
        tx_row(&w, &p, &pt, &r, &f);
        if (!t.ncols)
            bu_table_init(&t, w.n, w.hdr);
        const char *row[TX_COLS];
        for (int k = 0; k < w.n; k++)
            row[k] = w.cell[k];
        bu_table_row(&t, row);
        if (!f.ok || (p.mode != TX_GAP && r.drops_total))
            tx_explain(&p, &pt, run, &r, &f, delta);
        tx_json(c, &p, &pt, run, &r, &f, delta, &co);
    }
    if (!c->run.quiet && t.nrows)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    free(delta);
    if (p.mode == TX_IO)
        out(c, "  io_B: bytes per I/O; frame_B: its largest frame; ios: I/Os done (all "
            "submitters); sim_us: simulated time from the first doorbell to the poll that saw "
            "the last I/O done; MB/s: 10^6 frame bytes per simulated second; us/io: mean "
            "simulated time of an I/O, from its start to the poll that saw it done; rx_MB/s: "
            "the bytes over the time to the last frame received (the submitters' MB/s runs "
            "ahead of it by what the TX FIFO, 32 KiB, holds: short runs exceed the 1 Gb/s "
            "line)\n");
    else if (p.mode == TX_GAP)
        out(c, "  gap_ns: post to post; sim_us: from the first post to the last frame "
            "received; offer_Gb/s: frame bytes at the rate frames were posted (first to last "
            "post); rx_Gb/s, rx_wire_Gb/s: at the RX ring (first to last frame received; wire: "
            "with FCS, preamble and gap); lost: sent and never received, each counted by the "
            "NIC (no_buf: rxe_drop_no_buffer, fifo_full: rxfifo_drop_full), a result, not a "
            "failure\n");
    else
        out(c, "  Gb/s: frame bytes (no FCS) per simulated second; wire_Gb/s: with FCS (4 B), "
            "preamble and gap (20 B), frames padded to 60 B; line_%%: Mpps / the 1 Gb/s line "
            "rate (1.488 Mpps at 60 B + FCS)%s\n", window_s ? "; inflight: descriptors per "
            "queue posted and not completed by the TX DMA at most; window: frames per queue "
            "sent and not yet received at the RX ring at most; rtt_us: a frame's mean round "
            "trip, from its post to the poll that saw it received" : "");
    out(c, "  mmio_rd: MMIO read TLPs (model.tlps_down_mrd) from the first doorbell to the last "
        "frame received\n");
    out(c, "  host_ns/fr: the host's own CPU time per frame sent, wall-clock CPU "
        "(CLOCK_THREAD_CPUTIME_ID), not simulated time: frame fill, checksum, descriptor post "
        "and reclaim, RX poll and check, without the time inside backend calls (the "
        "simulator runs in them); csum_ns/fr: its checksum part (computed and verified); in "
        "simulation this work takes no simulated time\n");
    char cerr[512] = "";
    nic_msi_enable(b, 0);
    if (nic_q_close(&nq, c->timeout_ns, cerr, sizeof cerr) < 0 && !rc)
        rc = fail(c, "tx: closing the queues: %s", cerr);
    if (!rc)
        rc = backend_check(c, "tx");
    if (!rc && any_bad)
        rc = fail(c, "tx: frames lost, corrupted, reordered or dropped, or MMIO reads on the "
                  "hot path (see the table and the messages above)");
    return rc;
}
