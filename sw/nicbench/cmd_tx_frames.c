// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_tx_frames.c: `nicbench tx`'s frames (cmd_tx.h): their content, size and checksum, the
 * host's CPU time spent on them (struct tx_cpu), and the host's work on a run's frames: what a
 * queue posts and posting it, the I/Os done (--io), each frame received checked.
 */
#define _GNU_SOURCE
#include "cmd_tx.h"

/* --- the frames ------------------------------------------------------------------------------- */

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
void tx_io_point(const struct tx_params *p, uint64_t io, struct tx_point *pt)
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

/* --- the host's CPU time (struct tx_cpu) ------------------------------------------------------ */

static uint64_t cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tx_cpu_init(struct tx_cpu *k)
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

void tx_cpu_start(struct tx_cpu *k) { k->t = cpu_now(); }

/* End the lap begun at the last tx_cpu_start() or tx_cpu_lap(), counted as `kind` when keep, and
 * begin the next. */
void tx_cpu_lap(struct tx_cpu *k, enum tx_cpu_kind kind, bool keep)
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
double tx_cpu_per_frame(const struct tx_cpu *k, unsigned mask, uint64_t frames)
{
    double ns = 0;
    for (int i = 0; i < CPU_KINDS; i++)
        if (mask >> i & 1)
            ns += (double)k->ns[i] - (double)k->laps[i] * (double)k->clock_ns;
    return frames ? (ns > 0 ? ns : 0) / (double)frames : NAN;
}

/* --- the host's work in a run ---------------------------------------------------------------- */

/* How many frames queue q posts now with one doorbell, 0 for none. stream: up to --batch within
 * the in-flight limit and the --window, waiting for a whole batch while more can come (with a
 * window of W <= B: for the whole window to be back; --batch 1 sends each frame as soon as the
 * window opens); io: what of its open I/O the ring takes; gap: one when the next frame
 * (round-robin over the queues) is q's and due. */
unsigned tx_quota(const struct tx_state *s, unsigned q, uint64_t now)
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
int tx_post(struct tx_state *s, unsigned q, unsigned n, uint64_t now)
{
    struct tx_result *res = s->res;
    char err[512];
    tx_cpu_start(&res->cpu);
    for (unsigned i = 0; i < n; i++) {
        const uint32_t seq = (uint32_t)(s->sent[q] + i);
        s->fr[i].data = s->stage + (size_t)i * s->smax;
        s->fr[i].len = tx_size(s->p, s->pt, s->run, q, seq);
        tx_frame_fill(s->stage + (size_t)i * s->smax, s->fr[i].len, s->run, q, seq);
        if (s->post_ns)
            s->post_ns[(size_t)q * s->pt->window + seq % s->pt->window] = now;
    }
    if (s->p->csum) {
        tx_cpu_lap(&res->cpu, CPU_TX, true);
        for (unsigned i = 0; i < n; i++)
            tx_csum_put(s->stage + (size_t)i * s->smax, s->fr[i].len);
        tx_cpu_lap(&res->cpu, CPU_TX_CSUM, true);
    }
    const int m = nic_q_tx_post(s->nq, q, s->fr, n, err, sizeof err);
    tx_cpu_lap(&res->cpu, CPU_TX, true);
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
void tx_io_poll(struct tx_state *s, unsigned q, uint64_t now)
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
void tx_rx_csum(struct tx_state *s, const struct nic_q_rx_frame *recs, int n)
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
void tx_rx_check(struct tx_state *s, const struct nic_q_rx_frame *f)
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
bool tx_all_sent(const struct tx_state *s)
{
    for (unsigned q = 0; q < s->p->queues; q++)
        if (s->sent[q] < s->per_q[q] || nic_q_tx_pending(s->nq, q))
            return false;
    return true;
}
