// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_fuzz.c: `nicbench fuzz`, the device fuzzer and its scoreboard (docs/faults.md): frames of
 * random size over the TX queues through the MAC loopback, each checked on the RX ring, mixed
 * with bad descriptors (zero and oversized lengths, unknown flags, chains split at odd offsets,
 * chains without EOP), doorbells past the ring, queue and RX ring resets with DMA in flight and
 * coalescing changes under traffic, all drawn from one printed seed (--seed replays). With the
 * sim backend's fault injection (--opts fault_*=RATE) it is the fault test and `make soak`.
 *
 * The scoreboard: every frame received must be one that was sent, intact (length and every
 * byte, from its queue, sequence number and the seed), in order per queue and once (else:
 * corrupted); every good frame sent and not received must be covered by a counter: the TX
 * engine's frame errors, the frame FIFOs' and RX engine's drops, descriptors the driver's reset
 * path dropped before the device fetched them, or RX completion records lost with a link-down
 * the device counted (pcie_cpl_link_downs). A stall (no progress for --watchdog-us) runs the
 * driver's reset path on every queue and the RX ring, as a netdev TX timeout does.
 * Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "nicbench.h"

#define FZ_HDR 24u                   /* Ethernet header + magic, queue, seq, len */
#define FZ_ETHERTYPE 0x88b5u          /* IEEE local experimental */
#define FZ_POLL 64
#define FZ_BATCH 16
#define FZ_RING 256u
#define FZ_FRAMES_MAX 1000000000ull   /* a 10 M-frame soak fits; 2^32 sequence numbers */
#define FZ_LINK_CHECK_NS 200000u      /* how often the driver looks at pcie_cpl_link_downs */

enum fz_kind { FZ_GOOD, FZ_CHAIN, FZ_FLAGS, FZ_LEN0, FZ_OVERSIZE, FZ_NO_EOP, FZ_KINDS };
static const char *const fz_kind_names[FZ_KINDS] = {
    "good", "good_chain", "unknown_flags", "zero_length", "oversized", "no_eop_chain"};
enum fz_ctl { FZ_TXQ_RESET, FZ_RX_RESET, FZ_TX_DB_RANGE, FZ_RX_DB_RANGE, FZ_COALESCE, FZ_CTLS };
static const char *const fz_ctl_names[FZ_CTLS] = {
    "txq_reset", "rx_reset", "tx_doorbell_past_ring", "rx_doorbell_past_ring", "coalesce"};

/* The counters the scoreboard reads (nic_contract.h names). txfifo_drop_error and
 * rxfifo_drop_error are not among them: they count again the frames the TX engine, or the MAC
 * (bad FCS), ended with an error. */
static const char *const fz_tx_err[] = {"txe_err_desc_len0", "txe_err_desc_len",
                                        "txe_err_frame_len", "txe_err_read", "txe_err_no_eop",
                                        "txfifo_drop_oversize",
                                        "txfifo_drop_runt", "txfifo_drop_full",
                                        "txfifo_drop_disabled"};
/* The first FZ_TXE_FRAME_ERRS of fz_tx_err: the TX engine's errored frames by cause. */
#define FZ_TXE_FRAME_ERRS 5
static const char *const fz_rx_drop[] = {"rxfifo_drop_oversize",
                                         "rxfifo_drop_runt", "rxfifo_drop_full",
                                         "rxfifo_drop_disabled", "rxe_drop_no_buffer",
                                         "rxe_drop_too_big", "rxe_drop_bad_desc",
                                         "mac_rx_datapath_crc_errors"};
#define NTXERR (sizeof fz_tx_err / sizeof fz_tx_err[0])
#define NRXDROP (sizeof fz_rx_drop / sizeof fz_rx_drop[0])
enum { FZ_CPL_TIMEOUTS, FZ_CPL_UR, FZ_CPL_CA, FZ_CPL_EP, FZ_LINK_DOWNS, FZ_CPL_N };
static const char *const fz_cpl_names[FZ_CPL_N] = {"cpl_timeouts", "cpl_unsupported",
                                                   "cpl_aborts", "cpl_poisoned", "link_downs"};

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

static uint64_t fz_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t fz_rand(struct fz *f) { return fz_mix(f->rng += 0x9e3779b97f4a7c15ull); }

static bool fz_chance(struct fz *f, double p)
{
    return p > 0 && (double)(fz_rand(f) >> 11) * 0x1.0p-53 < p;
}

/* Frame (q, seq): its length and bytes follow from the seed alone. */
static uint32_t fz_len(const struct fz *f, unsigned q, uint64_t seq)
{
    const uint64_t h = fz_mix(f->seed ^ ((uint64_t)q << 56) ^ seq ^ 0x5a5a5a5a5a5aull);
    return f->smin + (uint32_t)(h % (f->smax - f->smin + 1));
}

static void fz_fill(const struct fz *f, uint8_t *p, unsigned q, uint64_t seq, uint32_t len)
{
    static const uint8_t mac[12] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2};
    memcpy(p, mac, 12);
    p[12] = FZ_ETHERTYPE >> 8;
    p[13] = FZ_ETHERTYPE & 0xff;
    p[14] = 'F';
    p[15] = 'Z';
    p[16] = (uint8_t)q;
    p[17] = 0;
    for (int i = 0; i < 4; i++)
        p[18 + i] = (uint8_t)(seq >> (8 * i));
    p[22] = (uint8_t)len;
    p[23] = (uint8_t)(len >> 8);
    uint64_t s = fz_mix(f->seed ^ ((uint64_t)q << 48) ^ (seq << 8)), w = 0;
    for (uint32_t i = FZ_HDR; i < len; i++) {
        if ((i - FZ_HDR) % 8 == 0)
            w = fz_mix(s += 0x9e3779b97f4a7c15ull);
        p[i] = (uint8_t)(w >> (8 * ((i - FZ_HDR) % 8)));
    }
}

static uint64_t delta_of(const struct nic_q_counter_def *d, size_t n, const uint64_t *a,
                         const uint64_t *b, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0)
            return nic_q_counter_delta(&d[i], a[i], b[i]);
    return 0;
}

static bool fz_counters(struct fz *f, uint64_t *v, size_t n)
{
    if (nic_q_counters_read(f->b, v, n, f->err, sizeof f->err) < 0)
        return false;
    return true;
}

static void fz_cpl_read(struct fz *f, uint64_t *v)
{
    memset(v, 0, FZ_CPL_N * sizeof *v);
    if (!nic_rb_find(f->b, NIC_RB_PCIE_CPL))
        return;
    v[FZ_CPL_TIMEOUTS] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, TIMEOUTS));
    v[FZ_CPL_UR] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, UNSUPPORTED));
    v[FZ_CPL_CA] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, ABORTS));
    v[FZ_CPL_EP] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, POISONED));
    v[FZ_LINK_DOWNS] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, LINK_DOWNS));
}

/* The link went down since the driver last reset for it (pcie_cpl_link_downs moved): the
 * TLPs in flight then were lost, so a frame may have lost part of its data. */
static bool fz_link_moved(struct fz *f)
{
    return f->have_link && nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, LINK_DOWNS)) != f->link_seen;
}

/* A bad frame: lost to a link-down (the driver drops it and resets) or corrupted. */
static bool fz_bad_after_link_down(struct fz *f)
{
    if (!fz_link_moved(f))
        return false;
    f->link_suspect++;
    f->need_reset = true;
    return true;
}

/* One received record against the scoreboard. */
static void fz_check(struct fz *f, const struct nic_q_rx_frame *r)
{
    f->records++;
    if (r->status != NIC_RX_STATUS_OK) {
        /* too big / bad buffer: counted by the RX engine (rxe_drop_*) */
        return;
    }
    const volatile uint8_t *d = r->data;
    const uint32_t len = r->len;
    unsigned q = 0;
    uint64_t seq = 0;
    bool ok = len >= FZ_HDR && d[12] == (FZ_ETHERTYPE >> 8) && d[13] == (FZ_ETHERTYPE & 0xff) &&
              d[14] == 'F' && d[15] == 'Z';
    if (ok) {
        q = d[16];
        for (int i = 0; i < 4; i++)
            seq |= (uint64_t)d[18 + i] << (8 * i);
        ok = q < f->Q && seq < f->sent[q] && len == fz_len(f, q, seq) &&
             (uint32_t)(d[22] | d[23] << 8) == len;
    }
    if (ok) {
        fz_fill(f, f->frame, q, seq, len);
        for (uint32_t i = 0; i < len && ok; i++)
            ok = d[i] == f->frame[i];
    }
    if (!ok) {
        if (fz_bad_after_link_down(f))
            return;
        if (f->corrupted++ < 5)
            fprintf(stderr, "nicbench: fuzz: corrupted frame of %u bytes (buffer %u)%s\n", len,
                    r->index, len >= FZ_HDR ? "" : ": shorter than the header");
        return;
    }
    if ((int64_t)seq <= f->last_rx[q]) {
        if (fz_bad_after_link_down(f))
            return;
        if (f->out_of_order++ < 5)
            fprintf(stderr, "nicbench: fuzz: queue %u frame %" PRIu64 " after %" PRId64 "\n", q,
                    seq, f->last_rx[q]);
        return;
    }
    f->last_rx[q] = (int64_t)seq;
    f->received++;
}

static int fz_poll(struct fz *f)
{
    struct nic_q_rx_frame recs[FZ_POLL];
    int n, total = 0;
    while ((n = nic_q_rx_poll(&f->nq, recs, FZ_POLL)) > 0) {
        for (int i = 0; i < n; i++)
            fz_check(f, &recs[i]);
        total += n;
        nic_q_rx_refill(&f->nq);
    }
    return total;
}

/* Put a descriptor into queue q's ring at its next slot (no copy). */
static void fz_put(struct fz *f, unsigned q, uint64_t addr, uint32_t len, bool eop,
                   uint16_t extra_flags)
{
    struct nic_txq *t = &f->nq.tx[q];
    const uint32_t i = nic_core_tx_put(t, addr, len, eop);
    t->desc[i].flags |= extra_flags;
}

static void fz_post_good(struct fz *f, unsigned q, uint64_t seq, enum fz_kind k);

/* Post one item of kind k on queue q (room checked by the caller: 3 slots). */
static void fz_post_one(struct fz *f, unsigned q, enum fz_kind k)
{
    struct nic_txq *t = &f->nq.tx[q];
    const size_t slot = (size_t)t->next_to_use * f->nq.stride;
    const uint64_t bus = t->buf_bus + slot;
    f->kinds[k]++;
    f->pos_seq[q][t->next_to_use] = -1;             /* a bad descriptor, unless good below */
    if (k == FZ_LEN0 || k == FZ_OVERSIZE) {
        fz_put(f, q, bus, k == FZ_LEN0 ? 0 : NIC_Q_FRAME_MAX + 1 + (uint32_t)(fz_rand(f) % 4000),
               true, 0);
        f->bad_posted++;
        return;
    }
    if (k == FZ_NO_EOP) {
        memset(t->buf + slot, 0xee, 64);
        fz_put(f, q, bus, 64, false, 0);
        f->bad_posted++;
        f->no_eop_open[q] = true;
        return;
    }
    const uint64_t seq = f->sent[q]++;
    f->good++;
    fz_post_good(f, q, seq, k);
}

/* Good frame seq of queue q at the ring's next position: one descriptor, or a chain. */
static void fz_post_good(struct fz *f, unsigned q, uint64_t seq, enum fz_kind k)
{
    struct nic_txq *t = &f->nq.tx[q];
    const size_t slot = (size_t)t->next_to_use * f->nq.stride;
    const uint64_t bus = t->buf_bus + slot;
    const uint32_t len = fz_len(f, q, seq);
    fz_fill(f, t->buf + slot, q, seq, len);
    f->pos_seq[q][t->next_to_use] = (int64_t)seq;
    if (k == FZ_CHAIN && len >= 3) {
        /* two or three pieces at odd offsets of the one buffer */
        const uint32_t a = 1 + (uint32_t)(fz_rand(f) % (len - 2));
        const uint32_t b = a + 1 + (uint32_t)(fz_rand(f) % (len - a - 1));
        fz_put(f, q, bus, a, false, 0);
        f->pos_seq[q][t->next_to_use] = -2;         /* the chain's next pieces */
        fz_put(f, q, bus + a, b - a, false, 0);
        f->pos_seq[q][t->next_to_use] = -2;
        fz_put(f, q, bus + b, len - b, true, 0);
        return;
    }
    fz_put(f, q, bus, len, true, k == FZ_FLAGS ? (uint16_t)(0x8000 | (fz_rand(f) & 0x7ffe)) : 0);
}

static int fz_txq_reset(struct fz *f, unsigned q)
{
    unsigned dropped = 0;
    fz_poll(f);
    struct nic_txq *t = &f->nq.tx[q];
    const uint32_t end = t->next_to_use;
    if (nic_q_tx_reset(&f->nq, q, f->c->timeout_ns, &dropped, f->err, sizeof f->err) < 0)
        return -1;
    f->no_eop_open[q] = false;
    /* The descriptors the device never fetched: the good frames among them are posted again,
     * in order, on the restarted ring (the rest, bad descriptors, are dropped). */
    int64_t seqs[FZ_RING];
    unsigned n = 0;
    for (unsigned i = 0; i < dropped; i++) {
        const int64_t sq = f->pos_seq[q][(end - dropped + i) & (t->size - 1)];
        if (sq >= 0)
            seqs[n++] = sq;
        else if (sq == -1)
            f->reset_dropped++;
    }
    for (unsigned i = 0; i < n; i++) {
        fz_post_good(f, q, (uint64_t)seqs[i], FZ_GOOD);
        f->reposted++;
    }
    nic_q_tx_doorbell(&f->nq, q);
    return 0;
}

static int fz_rx_reset(struct fz *f)
{
    if (nic_q_rx_stop(&f->nq, f->c->timeout_ns, f->err, sizeof f->err) < 0)
        return -1;
    fz_poll(f);
    nic_q_rx_restart(&f->nq);
    return 0;
}

/* The reset path on every TX queue and the RX ring (after a stall or a link-down). */
static int fz_reset_all(struct fz *f)
{
    /* The count this reset answers for is taken first and made the seen one only after it:
     * frames polled during the reset are still judged against the link-down, and one that
     * happens meanwhile calls for the next reset. */
    const uint32_t links = f->have_link ? nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, LINK_DOWNS))
                                        : 0;
    f->need_reset = false;
    for (unsigned q = 0; q < f->Q; q++)
        if (fz_txq_reset(f, q) < 0)
            return -1;
    const int rc = fz_rx_reset(f);
    f->link_seen = links;
    return rc;
}

static int fz_control(struct fz *f)
{
    uint64_t done = 0;
    for (int i = 0; i < FZ_CTLS; i++)
        done += f->ctls[i];
    const enum fz_ctl k = (enum fz_ctl)(done % FZ_CTLS);   /* each in turn, at random times */
    f->ctls[k]++;
    struct nic_backend *b = f->b;
    const uint64_t base = nic_rb_base(b, NIC_RB_NIC);
    switch (k) {
    case FZ_TXQ_RESET:
        return fz_txq_reset(f, (unsigned)(fz_rand(f) % f->Q));
    case FZ_RX_RESET:
        return fz_rx_reset(f);
    case FZ_TX_DB_RANGE: {
        const unsigned q = (unsigned)(fz_rand(f) % f->Q);
        nic_write32(b, base + NIC_CSR_NIC_TXQ_DB_ADDR,
                    NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_QUEUE, q) |
                        NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_INDEX,
                                    f->nq.tx[q].size + fz_rand(f) % 64));
        return 0;
    }
    case FZ_RX_DB_RANGE:
        nic_write32(b, base + NIC_CSR_NIC_RXE_DB_ADDR,
                    NIC_Q_FIELD(NIC_CSR_NIC_RXE_DB_INDEX, f->nq.rx.size + fz_rand(f) % 64));
        return 0;
    case FZ_COALESCE: {
        struct nic_q_coalesce co;
        nic_q_coalesce_defaults(&co);
        co.rx_usecs = (uint32_t)(fz_rand(f) % 40);
        co.rx_frames = (uint32_t)(fz_rand(f) % 33);
        co.tx_usecs = (uint32_t)(fz_rand(f) % 40);
        co.tx_frames = (uint32_t)(fz_rand(f) % 33);
        co.rx_min_interval = (uint32_t)(fz_rand(f) % 8);
        return nic_q_coalesce_set(&f->nq, &co, f->err, sizeof f->err);
    }
    default:
        return 0;
    }
}

static enum fz_kind fz_pick(struct fz *f)
{
    if (!fz_chance(f, f->desc_p))
        return FZ_GOOD;
    return (enum fz_kind)(1 + fz_rand(f) % (FZ_KINDS - 1));
}

int cmd_fuzz(struct ctx *c, int argc, char **argv)
{
    static const struct option opts[] = {
        {"frames", required_argument, NULL, 'n'}, {"queues", required_argument, NULL, 'q'},
        {"size-range", required_argument, NULL, 's'}, {"seed", required_argument, NULL, 'S'},
        {"desc-fuzz", required_argument, NULL, 'd'}, {"ctl-fuzz", required_argument, NULL, 'C'},
        {"watchdog-us", required_argument, NULL, 'w'},
        {"progress", required_argument, NULL, 'p'}, {NULL, 0, NULL, 0}};
    struct fz *f = calloc(1, sizeof *f);
    if (!f)
        return fail(c, "fuzz: out of memory");
    f->c = c;
    f->frames = 2000;
    f->Q = 0;
    f->smin = 60;
    f->smax = 1514;
    f->seed = wall_ns() ^ (uint64_t)getpid() << 32;
    f->watchdog_ns = 2000000;
    uint64_t v;
    int o, rc = 0;
    char *end;
    while ((o = next_option("fuzz", argc, argv, opts)) != -1) {
        switch (o) {
        case 'n':
            if ((rc = parse_num("--frames", optarg, &f->frames)))
                goto out_free;
            if (!f->frames || f->frames > FZ_FRAMES_MAX) {
                rc = usage_error("--frames: %" PRIu64 " is out of range 1..%llu", f->frames,
                                 FZ_FRAMES_MAX);
                goto out_free;
            }
            break;
        case 'q':
            if ((rc = parse_num("--queues", optarg, &v)))
                goto out_free;
            if (v < 1 || v > NIC_Q_MAX_TXQ) {
                rc = usage_error("--queues: %" PRIu64 " is out of range 1..%u", v,
                                 (unsigned)NIC_Q_MAX_TXQ);
                goto out_free;
            }
            f->Q = (unsigned)v;
            break;
        case 's': {
            unsigned long a = strtoul(optarg, &end, 10), bb = 0;
            if (end != optarg && *end == '-')
                bb = strtoul(end + 1, &end, 10);
            if (*end || a < NIC_Q_FRAME_MIN || bb < a || bb > NIC_Q_FRAME_MAX) {
                rc = usage_error("--size-range: '%s' is not MIN-MAX with %u <= MIN <= MAX <= %u",
                                 optarg, NIC_Q_FRAME_MIN, NIC_Q_FRAME_MAX);
                goto out_free;
            }
            f->smin = (unsigned)a;
            f->smax = (unsigned)bb;
            break;
        }
        case 'S':
            if ((rc = parse_num("--seed", optarg, &f->seed)))
                goto out_free;
            break;
        case 'd':
        case 'C': {
            const double p = strtod(optarg, &end);
            if (end == optarg || *end || !(p >= 0 && p <= 1)) {
                rc = usage_error("--%s: '%s' is not a probability in 0..1",
                                 o == 'd' ? "desc-fuzz" : "ctl-fuzz", optarg);
                goto out_free;
            }
            *(o == 'd' ? &f->desc_p : &f->ctl_p) = p;
            break;
        }
        case 'w':
            if ((rc = parse_num("--watchdog-us", optarg, &v)))
                goto out_free;
            if (v < 10 || v > 1000000) {
                rc = usage_error("--watchdog-us: %" PRIu64 " is out of range 10..1000000", v);
                goto out_free;
            }
            f->watchdog_ns = v * 1000;
            break;
        case 'p':
            if ((rc = parse_num("--progress", optarg, &f->progress)))
                goto out_free;
            break;
        default:
            rc = EXIT_USAGE;
            goto out_free;
        }
    }
    if (optind < argc) {
        rc = usage_error("fuzz: unexpected argument '%s'", argv[optind]);
        goto out_free;
    }
    f->rng = f->seed;
    f->frame = malloc(NIC_Q_FRAME_MAX);
    if (!f->frame) {
        rc = fail(c, "fuzz: out of memory");
        goto out_free;
    }
    if ((rc = open_backend(c, c->opts)))
        goto out_free;
    struct nic_backend *b = f->b = c->b;
    print_params(c, "params: ");
    if (!f->Q)
        f->Q = nic_q_hw_txq(b) < 4 ? nic_q_hw_txq(b) : 4;
    if (f->Q > nic_q_hw_txq(b)) {
        rc = fail(c, "fuzz: --queues %u: this SoC has %u TX queues", f->Q, nic_q_hw_txq(b));
        goto out_free;
    }
    out(c, "fuzz: seed %" PRIu64 " (--seed %" PRIu64 " replays it with the same --opts), %" PRIu64
        " good frames of %u..%u bytes over %u TX queue(s), bad descriptors %.3g, control "
        "actions %.3g per batch\n", f->seed, f->seed, f->frames, f->smin, f->smax, f->Q,
        f->desc_p, f->ctl_p);
    const struct nic_q_config qc = {.ntxq = f->Q, .tx_ring = FZ_RING, .tx_limit = 0,
                                    .rx_ring = 1024, .buf_size = f->smax, .sched_mode = 0};
    _Static_assert(FZ_RING <= NIC_Q_RING_MAX, "FZ_RING");
    if (nic_q_open(&f->nq, b, &qc, c->timeout_ns, f->err, sizeof f->err) < 0) {
        rc = fail(c, "fuzz: %s", f->err);
        goto out_close;
    }
    for (unsigned q = 0; q < f->Q; q++)
        f->last_rx[q] = -1;
    size_t ncnt;
    const struct nic_q_counter_def *defs = nic_q_counter_defs(&ncnt);
    uint64_t *cnt0 = calloc(ncnt, sizeof *cnt0), *cnt1 = calloc(ncnt, sizeof *cnt1);
    uint64_t cpl0[FZ_CPL_N], cpl1[FZ_CPL_N];
    if (!cnt0 || !cnt1 || !fz_counters(f, cnt0, ncnt)) {
        free(cnt0);
        free(cnt1);
        rc = fail(c, "fuzz: %s", cnt0 && cnt1 ? f->err : "out of memory");
        goto out_close;
    }
    fz_cpl_read(f, cpl0);
    for (unsigned q = 0; q < f->Q; q++) {
        f->qerr0[q] = nic_q_tx_queue_errors(b, q);
        f->wberr0[q] = f->nq.tx[q].errors;
    }
    f->have_link = nic_rb_find(b, NIC_RB_PCIE_CPL) != NULL;
    f->link_seen = (uint32_t)cpl0[FZ_LINK_DOWNS];

    const uint64_t t0 = nic_now_ns(b);
    uint64_t last_progress = t0, next_report = f->progress, stalls = 0, last_link_check = t0;
    unsigned rr = 0;
    while (f->good < f->frames || f->received + 0 < f->good) {
        bool progress = false;
        for (unsigned q = 0; q < f->Q; q++) {
            const int n = nic_q_tx_reclaim(&f->nq, q, f->err, sizeof f->err);
            if (n < 0) {
                rc = fail(c, "fuzz: %s", f->err);
                goto out_cnt;
            }
            progress |= n > 0;
        }
        if (fz_poll(f) > 0)
            progress = true;
        if (f->good < f->frames) {
            const unsigned q = rr++ % f->Q;
            unsigned n = 0;
            while (n < FZ_BATCH && f->good < f->frames && nic_q_tx_room(&f->nq, q) >= 3) {
                const enum fz_kind k = fz_pick(f);
                fz_post_one(f, q, k);
                n++;
                if (k == FZ_NO_EOP)
                    break;
            }
            if (n) {
                nic_q_tx_doorbell(&f->nq, q);
                progress = true;
            }
            /* A chain without EOP holds the engine on its queue: the driver resets it. */
            if (f->no_eop_open[q] && fz_txq_reset(f, q) < 0) {
                rc = fail(c, "fuzz: %s", f->err);
                goto out_cnt;
            }
            if (n && fz_chance(f, f->ctl_p) && fz_control(f) < 0) {
                rc = fail(c, "fuzz: %s", f->err);
                goto out_cnt;
            }
        }
        nic_irq_drain_vectors(b, NULL);
        uint64_t now = nic_now_ns(b);
        /* Link-downs: a look at the counter now and then (an AER handler's job), or at once
         * after a bad frame; then the reset path. */
        if (f->have_link && now - last_link_check > FZ_LINK_CHECK_NS) {
            last_link_check = now;
            f->need_reset |= fz_link_moved(f);
        }
        if (f->need_reset) {
            f->link_resets++;
            if (fz_reset_all(f) < 0) {
                rc = fail(c, "fuzz: reset after a link-down: %s", f->err);
                goto out_cnt;
            }
            now = last_progress = nic_now_ns(b);
        }
        if (progress) {
            last_progress = now;
            stalls = 0;
        } else if (now - last_progress > f->watchdog_ns) {
            /* Stalled: the good frames still missing were lost, or their records were; the
             * reset path restarts every queue and the RX ring. With every frame posted and
             * none pending, a second stall in a row ends the run (the rest was lost). */
            bool pending = false;
            for (unsigned q = 0; q < f->Q; q++)
                pending |= nic_q_tx_pending(&f->nq, q) > 0;
            if (f->good >= f->frames && !pending && stalls)
                break;
            stalls++;
            f->watchdog_resets++;
            if (fz_reset_all(f) < 0) {
                rc = fail(c, "fuzz: watchdog reset: %s", f->err);
                goto out_cnt;
            }
            last_progress = nic_now_ns(b);
        } else {
            nic_idle(b, 200);
        }
        if (f->progress && f->good >= next_report) {
            next_report += f->progress;
            out(c, "fuzz: %" PRIu64 "/%" PRIu64 " sent, %" PRIu64 " received, %" PRIu64
                " corrupted, %" PRIu64 " resets, %.3f simulated ms\n", f->good, f->frames,
                f->received, f->corrupted, f->watchdog_resets + f->ctls[FZ_TXQ_RESET] +
                f->ctls[FZ_RX_RESET], (double)(now - t0) / 1e6);
            fflush(stdout);
        }
    }
    /* Let the last frames land, then the counters. */
    for (int k = 0; k < 20; k++) {
        nic_idle(b, 5000);
        fz_poll(f);
    }
    /* Errored frames: what each queue's writebacks showed against the device's count. A
     * mismatch is allowed only where the last writeback was lost (a link-down): then the
     * device's consumer index is ahead of it too, and the sync takes both from the device. */
    uint64_t q_errors = 0, wb_errors = 0, wb_mismatch = 0;
    for (unsigned q = 0; q < f->Q; q++) {
        if (nic_q_tx_reclaim(&f->nq, q, f->err, sizeof f->err) < 0) {
            rc = fail(c, "fuzz: %s", f->err);
            goto out_cnt;
        }
        const uint32_t dev = nic_q_tx_queue_errors(b, q) - f->qerr0[q];
        if (f->nq.tx[q].errors - f->wberr0[q] != dev && !nic_q_tx_sync(&f->nq, q))
            wb_mismatch++;
        q_errors += dev;
        wb_errors += f->nq.tx[q].errors - f->wberr0[q];
    }
    if (!fz_counters(f, cnt1, ncnt)) {
        rc = fail(c, "fuzz: %s", f->err);
        goto out_cnt;
    }
    fz_cpl_read(f, cpl1);
    const uint64_t t1 = nic_now_ns(b);

    /* ---- the scoreboard ---- */
#define DELTA(name) delta_of(defs, ncnt, cnt0, cnt1, name)
    uint64_t tx_err = 0, rx_drop = 0;
    for (size_t i = 0; i < NTXERR; i++)
        tx_err += DELTA(fz_tx_err[i]);
    for (size_t i = 0; i < NRXDROP; i++)
        rx_drop += DELTA(fz_rx_drop[i]);
    const uint64_t desc_read_jobs = DELTA("txe_err_desc_read");
    /* The frames the TX engine ended with an error status (nic_txe_q_errors): one per frame
     * counted by cause, plus at most one per failed descriptor fetch (DESC_READ). */
    uint64_t frame_errs = 0;
    for (size_t i = 0; i < FZ_TXE_FRAME_ERRS; i++)
        frame_errs += DELTA(fz_tx_err[i]);
    const uint64_t txe_good = DELTA("txe_frames");
    const uint64_t rx_recs = DELTA("rxe_frames") + DELTA("rxe_drop_too_big") +
                             DELTA("rxe_drop_bad_desc");
    uint64_t cpl[FZ_CPL_N];
    for (int i = 0; i < FZ_CPL_N; i++)
        cpl[i] = (cpl1[i] - cpl0[i]) & 0xffffffffu;
    const uint64_t lost = f->good - f->received;
    /* TX: good frames that did not leave the TX engine good (a reset posts the ones it
     * dropped again): each failed with a counted error beyond the bad descriptors' own, or in
     * a failed descriptor fetch (its job's frames and the one it ran into, at most a ring). */
    const uint64_t tx_lost = f->good > txe_good ? f->good - txe_good : 0;
    const uint64_t bad_fetched = f->bad_posted - f->reset_dropped;
    const uint64_t tx_budget = (tx_err > bad_fetched ? tx_err - bad_fetched : 0) +
                               desc_read_jobs * (FZ_RING + 1);
    const uint64_t tx_unexplained = tx_lost > tx_budget ? tx_lost - tx_budget : 0;
    /* Wire and RX: good frames out of the TX engine and not received intact: dropped and
     * counted on the way, or their record lost with a link-down. */
    const uint64_t rx_lost = txe_good > f->received ? txe_good - f->received : 0;
    const uint64_t recs_lost = rx_recs > f->records ? rx_recs - f->records : 0;
    /* The wire's fuzz (sim backend wire_fuzz): frames it swallowed while it drew an oversized
     * one out are lost on the wire, by its own count. */
    uint64_t wf[5] = {0, 0, 0, 0, 0};
    static const char *const wf_names[5] = {"wire.fuzz_bad_fcs", "wire.fuzz_runts",
                                            "wire.fuzz_garbage", "wire.fuzz_oversize",
                                            "wire.fuzz_swallowed"};
    bool have_wire = true;
    for (int k = 0; k < 5; k++)
        have_wire &= counter(c, wf_names[k], &wf[k]);
    if (!have_wire)
        memset(wf, 0, sizeof wf);
    const uint64_t rx_budget = rx_drop + wf[4] +
                               (cpl[FZ_LINK_DOWNS] ? recs_lost + f->link_suspect : 0);
    /* Every oversized frame (good FCS) reaches the RX FIFO and is dropped there as such. */
    const uint64_t oversize_dropped = DELTA("rxfifo_drop_oversize");
    const uint64_t rx_unexplained = rx_lost > rx_budget ? rx_lost - rx_budget : 0;
    const uint64_t unexplained = tx_unexplained + rx_unexplained;

    /* Resets whose queue's last consumer-index writeback was lost (the reset path took the
     * device's index from nic_txq_cons instead). */
    uint64_t stale_wb = 0;
    for (unsigned q = 0; q < f->Q; q++)
        stale_wb += f->nq.tx[q].stale_wb;
    out(c, "fuzz: %" PRIu64 " good frames sent, %" PRIu64 " received intact, %" PRIu64
        " lost (%" PRIu64 " before the wire, %" PRIu64 " after), %" PRIu64
        " lost without a counter, %" PRIu64 " corrupted, %" PRIu64 " out of order; %.3f "
        "simulated ms\n", f->good, f->received, lost, tx_lost, rx_lost, unexplained,
        f->corrupted, f->out_of_order, (double)(t1 - t0) / 1e6);
    out(c, "fuzz: cases:");
    for (int k = 0; k < FZ_KINDS; k++)
        out(c, " %s=%" PRIu64, fz_kind_names[k], f->kinds[k]);
    for (int k = 0; k < FZ_CTLS; k++)
        out(c, " %s=%" PRIu64, fz_ctl_names[k], f->ctls[k]);
    out(c, " watchdog_resets=%" PRIu64 " link_resets=%" PRIu64 " reset_dropped=%" PRIu64
        " reposted=%" PRIu64 " link_suspect=%" PRIu64 " stale_writebacks=%" PRIu64 "\n",
        f->watchdog_resets, f->link_resets, f->reset_dropped, f->reposted, f->link_suspect,
        stale_wb);
    out(c, "fuzz: device: tx_errors=%" PRIu64 " desc_read_errors=%" PRIu64 " tx_errored_frames=%"
        PRIu64 " (writebacks %" PRIu64 ") rx_drops=%" PRIu64 " rx_records_lost=%" PRIu64, tx_err,
        desc_read_jobs, q_errors, wb_errors, rx_drop, recs_lost);
    for (int i = 0; i < FZ_CPL_N; i++)
        out(c, " %s=%" PRIu64, fz_cpl_names[i], cpl[i]);
    out(c, "\n");

    struct bu_json *j = &c->rec;
    bu_json_obj_begin(j);
    bu_json_kstr(j, "experiment", "fuzz");
    bu_json_ku64(j, "seed", f->seed);
    bu_json_ku64(j, "queues", f->Q);
    bu_json_ku64(j, "size_min", f->smin);
    bu_json_ku64(j, "size_max", f->smax);
    bu_json_kdouble(j, "desc_fuzz", f->desc_p);
    bu_json_kdouble(j, "ctl_fuzz", f->ctl_p);
    bu_json_ku64(j, "sent", f->good);
    bu_json_ku64(j, "received", f->received);
    bu_json_ku64(j, "lost", lost);
    bu_json_ku64(j, "lost_tx", tx_lost);
    bu_json_ku64(j, "lost_rx", rx_lost);
    bu_json_ku64(j, "lost_unexplained", unexplained);
    bu_json_ku64(j, "corrupted", f->corrupted);
    bu_json_ku64(j, "out_of_order", f->out_of_order);
    bu_json_ku64(j, "reset_dropped", f->reset_dropped);
    bu_json_ku64(j, "reposted", f->reposted);
    bu_json_ku64(j, "watchdog_resets", f->watchdog_resets);
    bu_json_ku64(j, "link_resets", f->link_resets);
    bu_json_ku64(j, "link_suspect", f->link_suspect);
    bu_json_ku64(j, "stale_writebacks", stale_wb);
    bu_json_ku64(j, "time_ns", t1 - t0);
    bu_json_key(j, "cases");
    bu_json_obj_begin(j);
    for (int k = 0; k < FZ_KINDS; k++)
        bu_json_ku64(j, fz_kind_names[k], f->kinds[k]);
    for (int k = 0; k < FZ_CTLS; k++)
        bu_json_ku64(j, fz_ctl_names[k], f->ctls[k]);
    bu_json_obj_end(j);
    bu_json_key(j, "device");
    bu_json_obj_begin(j);
    bu_json_ku64(j, "tx_errors", tx_err);
    bu_json_ku64(j, "desc_read_errors", desc_read_jobs);
    bu_json_ku64(j, "tx_errored_frames", q_errors);
    bu_json_ku64(j, "tx_wb_errors", wb_errors);
    bu_json_ku64(j, "rx_drops", rx_drop);
    bu_json_ku64(j, "rx_records_lost", recs_lost);
    for (int i = 0; i < FZ_CPL_N; i++)
        bu_json_ku64(j, fz_cpl_names[i], cpl[i]);
    bu_json_obj_end(j);
    bu_json_key(j, "counters");
    bu_json_obj_begin(j);
    for (size_t i = 0; i < ncnt; i++)
        if (defs[i].kind != NIC_QC_STATE)
            bu_json_ku64(j, defs[i].name, nic_q_counter_delta(&defs[i], cnt0[i], cnt1[i]));
    bu_json_obj_end(j);
    bu_json_obj_end(j);
#undef DELTA
    /* The host model: every TLP checked, every address through the IOMMU (sim backend). */
    uint64_t model_err = 0, iommu = 0;
    const bool have_model = counter(c, "model.errors", &model_err) &&
                            counter(c, "model.iommu_faults", &iommu);
    if (have_model)
        out(c, "fuzz: host model: %" PRIu64 " TLP errors, %" PRIu64 " IOMMU faults\n", model_err,
            iommu);
    if (wf[0] + wf[1] + wf[2] + wf[3]) {
        out(c, "fuzz: wire: %" PRIu64 " frames with a bad FCS, %" PRIu64 " runts, %" PRIu64
            " garbage bursts between frames, %" PRIu64 " oversized (%" PRIu64 " dropped as "
            "oversize by the RX FIFO, %" PRIu64 " frames swallowed meanwhile)\n", wf[0], wf[1],
            wf[2], wf[3], oversize_dropped, wf[4]);
        bu_json_obj_begin(&c->rec);
        bu_json_kstr(&c->rec, "experiment", "fuzz_wire");
        bu_json_ku64(&c->rec, "bad_fcs", wf[0]);
        bu_json_ku64(&c->rec, "runts", wf[1]);
        bu_json_ku64(&c->rec, "garbage", wf[2]);
        bu_json_ku64(&c->rec, "oversize", wf[3]);
        bu_json_ku64(&c->rec, "oversize_dropped", oversize_dropped);
        bu_json_ku64(&c->rec, "swallowed", wf[4]);
        bu_json_obj_end(&c->rec);
    }
    if (wb_mismatch)
        rc = fail(c, "fuzz: %" PRIu64 " TX queue(s) whose writebacks show other errored frames "
                  "(%" PRIu64 " in all) than nic_txe_q_errors (%" PRIu64 "), no writeback lost "
                  "(seed %" PRIu64 ")", wb_mismatch, wb_errors, q_errors, f->seed);
    if (q_errors < frame_errs || q_errors > frame_errs + desc_read_jobs)
        rc = fail(c, "fuzz: %" PRIu64 " errored TX frames (nic_txe_q_errors), not %" PRIu64
                  " by cause (+ up to %" PRIu64 " failed descriptor fetches) (seed %" PRIu64 ")",
                  q_errors, frame_errs, desc_read_jobs, f->seed);
    if (oversize_dropped != wf[3])
        rc = fail(c, "fuzz: the wire sent %" PRIu64 " oversized frames, the RX FIFO dropped %"
                  PRIu64 " as oversize (seed %" PRIu64 ")", wf[3], oversize_dropped, f->seed);
    if (have_model && (model_err || iommu) && !(f->corrupted || f->out_of_order || unexplained))
        rc = fail(c, "fuzz: the host model saw %" PRIu64 " TLP errors and %" PRIu64 " IOMMU "
                  "faults (seed %" PRIu64 ")", model_err, iommu, f->seed);
    if (f->corrupted || f->out_of_order || unexplained)
        rc = fail(c, "fuzz: %" PRIu64 " corrupted, %" PRIu64 " out of order, %" PRIu64
                  " lost without a counter (seed %" PRIu64 ")", f->corrupted, f->out_of_order,
                  unexplained, f->seed);
out_cnt:
    free(cnt0);
    free(cnt1);
out_close:
    if (nic_q_close(&f->nq, c->timeout_ns, f->err, sizeof f->err) < 0 && !rc)
        rc = fail(c, "fuzz: close: %s", f->err);
    if (!rc)
        rc = backend_check(c, "fuzz");
out_free:
    free(f->frame);
    free(f);
    return rc;
}
