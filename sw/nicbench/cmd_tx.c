/*
 * cmd_tx.c: `nicbench tx`, frames through the NIC datapath's descriptor rings, the MAC loopback
 * and the RX ring. Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

/* --- tx: the NIC datapath (descriptor rings) through the MAC loopback ------------------------- */

#define TX_RX_POLL 64u                   /* completion records taken per poll */
#define TX_MAX_ERR_PRINT 10              /* mismatches printed per run */
#define LINE_BPS 1e9                     /* the MAC's line rate (LiteEth 1 Gb/s) */

struct tx_params {
    uint64_t frames;
    uint32_t size_hi;                    /* --size-range LO-HI: sizes drawn in LO..HI; 0: fixed */
    unsigned queues, ring, rx_ring, batch;
    uint64_t poll_ns;
    const char *coalesce;
};

struct tx_result {
    uint64_t frames, bytes, wire_bytes, time_ns, received, rx_bytes;
    uint64_t bad_content, bad_len, bad_status, bad_header, out_of_order;
    uint64_t tx_doorbells, rx_doorbells, msis;
    uint64_t msi_vec[NIC_MSI_VECTORS];   /* MSIs received per vector (multi-vector MSI) */
    uint32_t irqs_tx_vec[NIC_Q_MAX_TXIRQ];  /* interrupts per TX vector, device counters */
    bool have_model;
    uint64_t mmio_rd_tlps, mmio_reads, mmio_writes, model_msis;
    uint64_t drops_total;
    uint32_t q_frames[NIC_Q_MAX_TXQ], q_bytes[NIC_Q_MAX_TXQ];   /* per queue, device counters */
    uint64_t q_sent_bytes[NIC_Q_MAX_TXQ];                       /* per queue, host's count */
    uint64_t q_mismatch;                 /* queues whose device counters differ from the host's */
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

/* The size of frame (run, q, seq): `lo`, or with --size-range a size drawn uniformly in
 * lo..p->size_hi by a PRNG seeded with (run, q, seq), so the receiver knows it too. */
static uint32_t tx_size(const struct tx_params *p, uint32_t lo, unsigned run, unsigned q,
                        uint32_t seq)
{
    if (!p->size_hi)
        return lo;
    uint64_t st = bu_rand_seed(0x517e000000000000ull ^ (uint64_t)run << 40 ^ (uint64_t)q << 32 ^ seq);
    return lo + (uint32_t)(bu_rand(&st) % (p->size_hi - lo + 1));
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

/* One run: `frames` frames of `size` bytes over the queues, at most `inflight` descriptors
 * posted and not completed per queue, a doorbell per `batch` frames. */
static int tx_run(struct ctx *c, struct nic_queues *nq, const struct tx_params *p, unsigned run,
                  uint32_t size, unsigned inflight, struct tx_result *res, uint64_t *cnt_delta)
{
    struct nic_backend *b = c->b;
    char err[512];
    const unsigned Q = p->queues;
    memset(res, 0, sizeof *res);
    for (unsigned q = 0; q < Q; q++)
        if (nic_q_set_limit(nq, q, inflight, err, sizeof err) < 0)
            return fail(c, "tx: %s", err);

    size_t ncnt;
    const struct nic_q_counter_def *defs = nic_q_counter_defs(&ncnt);
    uint64_t *cnt0 = calloc(ncnt * 2 + 1, sizeof *cnt0), *cnt1 = cnt0 + ncnt;
    const uint32_t smax = p->size_hi ? p->size_hi : size;   /* largest frame of the run */
    uint8_t *stage = malloc((size_t)p->batch * smax);
    uint8_t *want = malloc(smax), *got = malloc(NIC_Q_FRAME_MAX);
    struct nic_q_frame *fr = calloc(p->batch, sizeof *fr);
    struct nic_q_rx_frame recs[TX_RX_POLL];
    uint64_t per_q[NIC_Q_MAX_TXQ], sent[NIC_Q_MAX_TXQ] = {0}, next_seq[NIC_Q_MAX_TXQ] = {0};
    uint64_t rx_q[NIC_Q_MAX_TXQ] = {0};
    int rc = EXIT_OK;
    if (!cnt0 || !stage || !want || !got || !fr) {
        rc = fail(c, "tx: out of memory");
        goto out;
    }
    for (unsigned q = 0; q < Q; q++)
        per_q[q] = p->frames / Q + (q < p->frames % Q);
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

    /* ---- hot path: no MMIO read from here to t1 ---- */
    const uint64_t t0 = nic_now_ns(b);
    uint64_t last_progress = t0;
    unsigned rr = 0;
    int printed = 0;
    while (res->received < p->frames) {
        bool progress = false;
        for (unsigned q = 0; q < Q; q++) {
            const int n = nic_q_tx_reclaim(nq, q, err, sizeof err);
            if (n < 0) {
                rc = fail(c, "tx: %s", err);
                goto out;
            }
            progress |= n > 0;
        }
        const int nrx = nic_q_rx_poll(nq, recs, TX_RX_POLL);
        for (int i = 0; i < nrx; i++) {
            const struct nic_q_rx_frame *f = &recs[i];
            res->received++;
            if (f->status != 0) {
                res->bad_status++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: RX completion with status %u (buffer "
                            "%u)\n", run, f->status, f->index);
                continue;
            }
            res->rx_bytes += f->len;
            for (uint32_t k = 0; k < f->len && k < NIC_Q_FRAME_MAX; k++)
                got[k] = f->data[k];
            if (f->len < TX_HDR) {
                res->bad_len++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: RX frame of %u bytes\n", run, f->len);
                continue;
            }
            const unsigned q = got[14];
            if (q < Q)
                tx_frame_fill(want, TX_HDR, run, q, 0);
            if (q >= Q || memcmp(want, got, 16) != 0) {       /* Ethernet header, queue, run */
                res->bad_header++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: RX frame with queue %u run %u\n", run,
                            q, got[15]);
                continue;
            }
            const uint32_t seq = (uint32_t)got[16] | (uint32_t)got[17] << 8 |
                                 (uint32_t)got[18] << 16 | (uint32_t)got[19] << 24;
            if (seq != next_seq[q]) {
                res->out_of_order++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: queue %u: frame %u received, expected "
                            "%" PRIu64 "\n", run, q, seq, next_seq[q]);
            }
            next_seq[q] = (uint64_t)seq + 1;
            rx_q[q]++;
            const uint32_t fsize = tx_size(p, size, run, q, seq);
            const uint32_t rx_len = fsize < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : fsize;
            if (f->len != rx_len) {
                res->bad_len++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: queue %u frame %u: %u bytes, expected "
                            "%u\n", run, q, seq, f->len, rx_len);
                continue;
            }
            tx_frame_fill(want, fsize, run, q, seq);
            if (memcmp(want, got, fsize) != 0) {
                res->bad_content++;
                if (printed++ < TX_MAX_ERR_PRINT) {
                    uint32_t k = 0;
                    while (want[k] == got[k])
                        k++;
                    fprintf(stderr, "nicbench: tx run %u: queue %u frame %u: byte %u is %#04x, "
                            "expected %#04x\n", run, q, seq, k, got[k], want[k]);
                }
            }
        }
        if (nrx > 0)
            progress = true;
        if (nq->rx.to_repost >= rx_batch)
            nic_q_rx_refill(nq);
        for (unsigned k = 0; k < Q; k++) {
            const unsigned q = (rr + k) % Q;
            const uint64_t left = per_q[q] - sent[q];
            if (!left)
                continue;
            const unsigned pend = nic_q_tx_pending(nq, q);
            uint64_t avail = inflight > pend ? inflight - pend : 0;
            if (avail > nic_q_tx_room(nq, q))
                avail = nic_q_tx_room(nq, q);
            if (avail > left)
                avail = left;
            uint64_t thresh = p->batch;
            if (thresh > left)
                thresh = left;
            if (thresh > inflight)
                thresh = inflight;
            if (!avail || avail < thresh)
                continue;
            const unsigned n = (unsigned)(avail < p->batch ? avail : p->batch);
            for (unsigned i = 0; i < n; i++) {
                const uint32_t seq = (uint32_t)(sent[q] + i);
                fr[i].data = stage + (size_t)i * smax;
                fr[i].len = tx_size(p, size, run, q, seq);
                tx_frame_fill(stage + (size_t)i * smax, fr[i].len, run, q, seq);
            }
            const int m = nic_q_tx_send(nq, q, fr, n, err, sizeof err);
            if (m < 0) {
                rc = fail(c, "tx: %s", err);
                goto out;
            }
            for (int i = 0; i < m; i++) {
                res->q_sent_bytes[q] += fr[i].len;
                res->bytes += fr[i].len;
                res->wire_bytes += tx_wire_bytes(fr[i].len);
            }
            sent[q] += (unsigned)m;
            progress |= m > 0;
        }
        rr = (rr + 1) % Q;
        const int irqs = nic_irq_drain_vectors(b, res->msi_vec);
        if (irqs > 0)
            res->msis += (unsigned)irqs;
        const uint64_t now = nic_now_ns(b);
        if (progress) {
            last_progress = now;
        } else if (now - last_progress > c->timeout_ns) {
            break;
        } else {
            nic_idle(b, p->poll_ns);
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
        if (res->q_frames[q] != (uint32_t)per_q[q] ||
            res->q_bytes[q] != (uint32_t)res->q_sent_bytes[q]) {
            res->q_mismatch++;
            fprintf(stderr, "nicbench: tx run %u: queue %u: device counted %u frames, %u bytes; "
                    "the host sent %" PRIu64 " frames, %" PRIu64 " bytes\n", run, q,
                    res->q_frames[q], res->q_bytes[q], per_q[q], res->q_sent_bytes[q]);
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
    res->frames = p->frames;
    res->time_ns = t1 - t0;
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
    if (res->received < p->frames) {
        char detail[512] = "";
        size_t len = 0;
        for (unsigned q = 0; q < Q; q++)
            len += (size_t)snprintf(detail + len, len < sizeof detail ? sizeof detail - len : 0,
                                    "%s q%u: %" PRIu64 " posted, %" PRIu64 " received, next "
                                    "expected %" PRIu64, q ? ";" : "", q, sent[q], rx_q[q],
                                    next_seq[q]);
        fprintf(stderr, "nicbench: tx run %u: counter deltas:", run);
        for (size_t i = 0; i < ncnt; i++)
            if (cnt_delta[i])
                fprintf(stderr, " %s=%" PRIu64, defs[i].name, cnt_delta[i]);
        fputc('\n', stderr);
        rc = fail(c, "tx run %u (size %u, inflight %u): %" PRIu64 " of %" PRIu64 " frames "
                  "received, no progress for %" PRIu64 " ns:%s", run, size, inflight,
                  res->received, p->frames, c->timeout_ns, detail);
    }
out:
    free(cnt0);
    free(stage);
    free(want);
    free(got);
    free(fr);
    return rc;
}


int cmd_tx(struct ctx *c, int argc, char **argv)
{
    struct tx_params p = {.frames = 10000, .queues = 1, .ring = 64, .rx_ring = 1024,
                          .batch = 32, .poll_ns = 64, .coalesce = NULL};
    const char *sizes_s = "60", *inflight_s = NULL, *range_s = NULL;
    bool batch_given = false, sizes_given = false;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m, rc;
        uint64_t x;
        if ((m = bu_opt_value(argc, argv, &i, "--frames", &v))) {
            if (m < 0)
                return missing("--frames");
            if ((rc = parse_num("--frames", v, &p.frames)))
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--size", &v)) ||
                   (m = bu_opt_value(argc, argv, &i, "--sizes", &v))) {
            if (m < 0)
                return missing("--sizes");
            sizes_s = v;
            sizes_given = true;
        } else if ((m = bu_opt_value(argc, argv, &i, "--size-range", &v))) {
            if (m < 0)
                return missing("--size-range");
            range_s = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--inflight", &v))) {
            if (m < 0)
                return missing("--inflight");
            inflight_s = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--coalesce", &v))) {
            if (m < 0)
                return missing("--coalesce");
            p.coalesce = v;
        } else {
            static const char *const names[] = {"--queues", "--ring", "--rx-ring", "--batch",
                                                "--poll-ns"};
            size_t k = 0;
            for (; k < sizeof names / sizeof names[0]; k++)
                if ((m = bu_opt_value(argc, argv, &i, names[k], &v)))
                    break;
            if (k == sizeof names / sizeof names[0])
                return usage_error("tx: unknown option '%s'", argv[i]);
            if (m < 0)
                return missing(names[k]);
            if ((rc = parse_num(names[k], v, &x)))
                return rc;
            if (x > 1000000)
                return usage_error("%s: %" PRIu64 " is too large", names[k], x);
            if (k == 0)
                p.queues = (unsigned)x;
            else if (k == 1)
                p.ring = (unsigned)x;
            else if (k == 2)
                p.rx_ring = (unsigned)x;
            else if (k == 3)
                p.batch = (unsigned)x, batch_given = true;
            else
                p.poll_ns = x;
        }
    }
    char err[512];
    uint64_t sizes[MAX_SIZES], infl[MAX_SIZES];
    size_t nsizes, ninfl = 1;
    uint64_t max_size = 0;
    const int size_rc = frame_sizes(sizes_s, sizes, &nsizes, &max_size);
    if (size_rc)
        return size_rc;
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
    if (p.frames < 1 || p.frames > 100000000)
        return usage_error("--frames: %" PRIu64 " out of range 1..100000000", p.frames);
    if (p.queues < 1 || p.queues > NIC_Q_MAX_TXQ)
        return usage_error("--queues: %u out of range 1..%u", p.queues, (unsigned)NIC_Q_MAX_TXQ);
    if (p.ring < 2 || p.ring > NIC_Q_RING_MAX || (p.ring & (p.ring - 1)))
        return usage_error("--ring: %u is not a power of two 2..%u", p.ring, NIC_Q_RING_MAX);
    if (p.rx_ring < 2 || p.rx_ring > NIC_Q_RING_MAX || (p.rx_ring & (p.rx_ring - 1)))
        return usage_error("--rx-ring: %u is not a power of two 2..%u", p.rx_ring,
                           NIC_Q_RING_MAX);
    if (!batch_given && p.batch > p.ring - 1)
        p.batch = p.ring - 1;           /* the default of 32 on a small ring */
    if (p.batch < 1 || p.batch > p.ring - 1)
        return usage_error("--batch: %u out of range 1..%u (ring size - 1)", p.batch,
                           p.ring - 1);
    if (p.poll_ns < 1)
        return usage_error("--poll-ns: must be at least 1");
    if (inflight_s) {
        if (bu_parse_list(inflight_s, infl, MAX_SIZES, &ninfl, err, sizeof err) < 0)
            return usage_error("--inflight: %s", err);
        for (size_t i = 0; i < ninfl; i++)
            if (infl[i] < 1 || infl[i] > p.ring - 1)
                return usage_error("--inflight: %" PRIu64 " out of range 1..%u (ring size - 1)",
                                   infl[i], p.ring - 1);
    } else {
        infl[0] = p.ring - 1;
    }
    struct nic_q_coalesce co;
    nic_q_coalesce_defaults(&co);
    if (p.coalesce && nic_q_coalesce_parse(p.coalesce, &co, err, sizeof err) < 0)
        return usage_error("--coalesce: %s", err);

    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    print_params(c, "params: ");
    struct nic_queues nq;
    const struct nic_q_config qc = {.ntxq = p.queues, .tx_ring = p.ring, .tx_limit = 0,
                                    .rx_ring = p.rx_ring,
                                    .buf_size = (unsigned)(max_size < NIC_Q_FRAME_MIN ?
                                                           NIC_Q_FRAME_MIN : max_size),
                                    .sched_mode = 0};
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
    out(c, "tx: %" PRIu64 " frames per run over %u queue(s), ring %u, RX ring %u, a doorbell "
        "per %u frames, poll %" PRIu64 " ns; coalescing rx-usecs=%u rx-frames=%u tx-usecs=%u "
        "tx-frames=%u (each of %u TX vectors: queue q on vector q %% %u); frames through "
        "the MAC loopback, checked bit-exact and in order per queue\n", p.frames, p.queues,
        p.ring, p.rx_ring, p.batch, p.poll_ns, co.rx_usecs, co.rx_frames, co.tx_usecs,
        co.tx_frames, nic_q_hw_txirq(b), nic_q_hw_txirq(b));

    static const char *const hdr[] = {"size_B", "queues", "inflight", "frames", "bytes",
                                      "sim_us", "Gb/s", "wire_Gb/s", "Mpps", "line_%",
                                      "mmio_rd", "tx_db", "rx_db", "drops", "irq_tx",
                                      "irq_rx", "msi", "result"};
    struct bu_table t;
    bu_table_init(&t, (int)(sizeof hdr / sizeof hdr[0]), hdr);
    size_t ncnt;
    const struct nic_q_counter_def *defs = nic_q_counter_defs(&ncnt);
    uint64_t *delta = calloc(ncnt + 1, sizeof *delta);
    const int i_txirq = nic_q_counter_index("txirq_irqs");
    const int i_rxirq = nic_q_counter_index("rxirq_irqs");
    const int i_txdb = nic_q_counter_index("txq_doorbells");
    unsigned run = 0;
    bool any_bad = false;
    for (size_t si = 0; si < nsizes && !rc; si++) {
        for (size_t ii = 0; ii < ninfl && !rc; ii++, run++) {
            const uint32_t size = (uint32_t)sizes[si];
            const unsigned inflight = (unsigned)infl[ii];
            struct tx_result r;
            rc = tx_run(c, &nq, &p, run, size, inflight, &r, delta);
            if (!rc)
                rc = backend_check(c, "tx run");
            if (rc)
                break;
            /* Wire bytes per frame: the run's mean with --size-range. */
            const double wire = (double)r.wire_bytes / (double)r.frames;
            const double secs = (double)r.time_ns / 1e9;
            const double gbps = (double)r.bytes * 8 / (double)r.time_ns;
            const double wire_gbps = (double)r.wire_bytes * 8 / (double)r.time_ns;
            const double mpps = (double)r.frames / secs / 1e6;
            const double line_mpps = LINE_BPS / (8.0 * wire) / 1e6;
            const uint64_t irq_tx = i_txirq >= 0 ? delta[i_txirq] : 0;
            const uint64_t irq_rx = i_rxirq >= 0 ? delta[i_rxirq] : 0;
            const uint64_t bad = r.bad_content + r.bad_len + r.bad_status + r.bad_header +
                                 r.out_of_order + (r.frames - r.received) + r.q_mismatch;
            const bool mmio_ok = !r.have_model || r.mmio_rd_tlps == 0;
            /* Multi-vector MSI: every MSI must be on a TX vector or the RX vector. */
            uint64_t msi_tx = 0;
            for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
                msi_tx += r.msi_vec[nic_q_tx_vector_msi(b, g)];
            const uint64_t msi_rx = r.msi_vec[nic_q_rx_msi(b)];
            const uint64_t msi_other = r.msis - msi_tx - msi_rx;
            if (msi_other)
                fprintf(stderr, "nicbench: tx run %u: %" PRIu64 " MSIs on vectors other than "
                        "the %u TX vectors (from %u) and NIC_RX (%u)\n", run, msi_other,
                        nic_q_hw_txirq(b), nic_q_tx_vector_msi(b, 0), nic_q_rx_msi(b));
            const bool ok = bad == 0 && r.drops_total == 0 && mmio_ok && msi_other == 0;
            any_bad |= !ok;
            char cells[18][32];
            if (p.size_hi)
                snprintf(cells[0], 32, "%u-%u", size, p.size_hi);
            else
                snprintf(cells[0], 32, "%u", size);
            snprintf(cells[1], 32, "%u", p.queues);
            snprintf(cells[2], 32, "%u", inflight);
            snprintf(cells[3], 32, "%" PRIu64, r.frames);
            snprintf(cells[4], 32, "%" PRIu64, r.bytes);
            snprintf(cells[5], 32, "%.3f", (double)r.time_ns / 1e3);
            snprintf(cells[6], 32, "%.4f", gbps);
            snprintf(cells[7], 32, "%.4f", wire_gbps);
            snprintf(cells[8], 32, "%.4f", mpps);
            snprintf(cells[9], 32, "%.1f", 100.0 * mpps / line_mpps);
            if (r.have_model)
                snprintf(cells[10], 32, "%" PRIu64, r.mmio_rd_tlps);
            else
                snprintf(cells[10], 32, "n/a");
            snprintf(cells[11], 32, "%" PRIu64, r.tx_doorbells);
            snprintf(cells[12], 32, "%" PRIu64, r.rx_doorbells);
            snprintf(cells[13], 32, "%" PRIu64, r.drops_total);
            snprintf(cells[14], 32, "%" PRIu64, irq_tx);
            snprintf(cells[15], 32, "%" PRIu64, irq_rx);
            snprintf(cells[16], 32, "%" PRIu64, r.msis);
            snprintf(cells[17], 32, "%s", ok ? "ok" : "FAIL");
            const char *row[18];
            for (int k = 0; k < 18; k++)
                row[k] = cells[k];
            bu_table_row(&t, row);
            if (!ok || r.drops_total) {
                fprintf(stderr, "nicbench: tx run %u (size %u, inflight %u): %" PRIu64 " of %"
                        PRIu64 " received; bad content %" PRIu64 ", bad length %" PRIu64 ", bad "
                        "status %" PRIu64 ", bad header %" PRIu64 ", out of order %" PRIu64
                        "; hot-path MMIO read TLPs %" PRIu64 "; drops/errors:", run, size,
                        inflight, r.received, r.frames, r.bad_content, r.bad_len, r.bad_status,
                        r.bad_header, r.out_of_order, r.mmio_rd_tlps);
                for (size_t k = 0; k < ncnt; k++)
                    if (defs[k].kind == NIC_QC_ERROR && delta[k])
                        fprintf(stderr, " %s=%" PRIu64, defs[k].name, delta[k]);
                fputc('\n', stderr);
            }

            struct bu_json *j = &c->rec;
            bu_json_obj_begin(j);
            bu_json_kstr(j, "experiment", "tx");
            bu_json_ku64(j, "run", run);
            bu_json_ku64(j, "size", size);
            bu_json_ku64(j, "size_max", p.size_hi ? p.size_hi : size);
            bu_json_ku64(j, "queues", p.queues);
            bu_json_ku64(j, "ring", p.ring);
            bu_json_ku64(j, "rx_ring", p.rx_ring);
            bu_json_ku64(j, "batch", p.batch);
            bu_json_ku64(j, "inflight", inflight);
            bu_json_ku64(j, "poll_ns", p.poll_ns);
            bu_json_ku64(j, "frames", r.frames);
            bu_json_ku64(j, "bytes", r.bytes);
            bu_json_ku64(j, "wire_bytes", r.wire_bytes);
            bu_json_ku64(j, "time_ns", r.time_ns);
            bu_json_kdouble(j, "gbps", gbps);
            bu_json_kdouble(j, "wire_gbps", wire_gbps);
            bu_json_kdouble(j, "mpps", mpps);
            bu_json_kdouble(j, "line_mpps", line_mpps);
            bu_json_kdouble(j, "line_ratio", mpps / line_mpps);
            json_opt_u64(j, "mmio_read_tlps_hot", r.have_model, r.mmio_rd_tlps);
            json_opt_u64(j, "mmio_reads_hot", r.have_model, r.mmio_reads);
            json_opt_u64(j, "mmio_writes_hot", r.have_model, r.mmio_writes);
            bu_json_ku64(j, "tx_doorbells", r.tx_doorbells);
            bu_json_ku64(j, "rx_doorbells", r.rx_doorbells);
            json_opt_u64(j, "device_tx_doorbells", i_txdb >= 0, i_txdb >= 0 ? delta[i_txdb] : 0);
            bu_json_ku64(j, "irqs_tx", irq_tx);
            bu_json_ku64(j, "irqs_rx", irq_rx);
            bu_json_ku64(j, "msis_received", r.msis);
            json_opt_u64(j, "msis_model", r.have_model, r.model_msis);
            /* Per vector (LitePCIe's msi-multi-vector: an MSI number per vector). */
            bu_json_kstr(j, "msi_type", "msi-multi-vector");
            bu_json_ku64(j, "msis_tx", msi_tx);
            bu_json_ku64(j, "msis_rx", msi_rx);
            bu_json_ku64(j, "msis_other", msi_other);
            /* TX queue groups: queue q on TX vector q % tx_vectors; per vector the device's
             * interrupt count and the MSIs received. */
            bu_json_ku64(j, "tx_vectors", nic_q_hw_txirq(b));
            bu_json_key(j, "irqs_tx_vec");
            bu_json_arr_begin(j);
            for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
                bu_json_u64(j, r.irqs_tx_vec[g]);
            bu_json_arr_end(j);
            bu_json_key(j, "msis_tx_vec");
            bu_json_arr_begin(j);
            for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
                bu_json_u64(j, r.msi_vec[nic_q_tx_vector_msi(b, g)]);
            bu_json_arr_end(j);
            bu_json_ku64(j, "received", r.received);
            bu_json_ku64(j, "received_bytes", r.rx_bytes);
            bu_json_ku64(j, "bad_content", r.bad_content);
            bu_json_ku64(j, "bad_length", r.bad_len);
            bu_json_ku64(j, "bad_status", r.bad_status);
            bu_json_ku64(j, "bad_header", r.bad_header);
            bu_json_ku64(j, "out_of_order", r.out_of_order);
            bu_json_ku64(j, "lost", r.frames - r.received);
            bu_json_ku64(j, "drops_total", r.drops_total);
            bu_json_key(j, "per_queue");               /* the device's per-queue counters */
            bu_json_arr_begin(j);
            for (unsigned q = 0; q < p.queues; q++) {
                bu_json_obj_begin(j);
                bu_json_ku64(j, "queue", q);
                bu_json_ku64(j, "frames", r.q_frames[q]);
                bu_json_ku64(j, "bytes", r.q_bytes[q]);
                bu_json_obj_end(j);
            }
            bu_json_arr_end(j);
            bu_json_ku64(j, "per_queue_mismatch", r.q_mismatch);
            bu_json_key(j, "drops");
            bu_json_obj_begin(j);
            for (size_t k = 0; k < ncnt; k++)
                if (defs[k].kind == NIC_QC_ERROR)
                    bu_json_ku64(j, defs[k].name, delta[k]);
            bu_json_obj_end(j);
            bu_json_key(j, "coalesce");
            bu_json_obj_begin(j);
            bu_json_ku64(j, "rx-usecs", co.rx_usecs);
            bu_json_ku64(j, "rx-frames", co.rx_frames);
            bu_json_ku64(j, "rx-abs-usecs", co.rx_abs_usecs);
            bu_json_ku64(j, "rx-min-interval", co.rx_min_interval);
            bu_json_ku64(j, "tx-usecs", co.tx_usecs);
            bu_json_ku64(j, "tx-frames", co.tx_frames);
            bu_json_ku64(j, "tx-abs-usecs", co.tx_abs_usecs);
            bu_json_ku64(j, "tx-min-interval", co.tx_min_interval);
            bu_json_obj_end(j);
            bu_json_key(j, "counters");
            bu_json_obj_begin(j);
            for (size_t k = 0; k < ncnt; k++)
                bu_json_ku64(j, defs[k].name, delta[k]);
            bu_json_obj_end(j);
            bu_json_kstr(j, "result", ok ? "ok" : "fail");
            bu_json_obj_end(j);
        }
    }
    if (!c->quiet && t.nrows)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    free(delta);
    out(c, "  Gb/s: frame bytes (no FCS) per simulated second; wire_Gb/s: with FCS (4 B), "
        "preamble and gap (20 B), frames padded to 60 B; line_%%: Mpps / the 1 Gb/s line rate "
        "(1.488 Mpps at 60 B + FCS); mmio_rd: MMIO read TLPs (model.tlps_down_mrd) from the "
        "first doorbell to the last frame received\n");
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
