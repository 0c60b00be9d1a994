// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_tx_run.c: one run of `nicbench tx` (cmd_tx.h): its set-up and the device's counters read
 * before it, the hot path (no MMIO read from the first doorbell to the last frame received),
 * and the counters read after it.
 */
#define _GNU_SOURCE
#include "cmd_tx.h"

/* The host model's counters read around the hot path (model.<name>). */
#define TX_MODEL_COUNTERS 5
static const char *const tx_model_names[TX_MODEL_COUNTERS] = {"tlps_down_mrd", "mmio_reads",
                                                              "mmio_writes", "msis",
                                                              "msix_messages"};

/* What a run reads before its hot path, to take from what it reads after it. */
struct tx_marks {
    const struct nic_q_counter_def *defs;
    size_t ncnt;
    uint64_t *cnt0, *cnt1;                /* the NIC's counters (nic_q_counters_read()) */
    uint32_t qf0[NIC_Q_MAX_TXQ], qb0[NIC_Q_MAX_TXQ];     /* per queue frames and bytes */
    uint32_t vi0[NIC_Q_MAX_TXIRQ];        /* per TX vector interrupts */
    uint64_t txdb0, rxdb0;                /* the host's doorbells */
    uint64_t m0[TX_MODEL_COUNTERS], m1[TX_MODEL_COUNTERS];
};

static bool model_counter(struct ctx *c, const char *name, uint64_t *v)
{
    char full[64];
    snprintf(full, sizeof full, "model.%s", name);
    return counter(c, full, v);
}

/* The counters before the hot path: the NIC's, per queue, per TX vector; then the MSIs pending
 * are dropped, and the doorbells and the host model's counts noted. */
static int tx_marks_begin(struct tx_state *s, struct tx_marks *m)
{
    struct ctx *c = s->c;
    struct nic_backend *b = c->b;
    struct nic_queues *nq = s->nq;
    char err[512];
    if (nic_q_counters_read(b, m->cnt0, m->ncnt, err, sizeof err) < 0)
        return fail(c, "tx: %s", err);
    for (unsigned q = 0; q < s->p->queues; q++)
        if (nic_q_tx_queue_stats(b, q, &m->qf0[q], &m->qb0[q], err, sizeof err) < 0)
            return fail(c, "tx: %s", err);
    for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
        if (nic_q_tx_vector_irqs(b, g, &m->vi0[g], err, sizeof err) < 0)
            return fail(c, "tx: %s", err);
    nic_irq_drain(b);
    m->rxdb0 = nq->rx.doorbells;
    for (unsigned q = 0; q < s->p->queues; q++)
        m->txdb0 += nq->tx[q].doorbells;
    s->res->have_model = true;
    for (int k = 0; k < TX_MODEL_COUNTERS; k++)
        s->res->have_model &= model_counter(c, tx_model_names[k], &m->m0[k]);
    return EXIT_OK;
}

/* One poll of the hot path: reclaim every queue's completed descriptors, take and check the
 * frames received. *progress: any found. */
static int tx_poll(struct tx_state *s, struct nic_q_rx_frame *recs, uint64_t now, bool *progress)
{
    struct tx_result *res = s->res;
    char err[512];
    int done = 0;
    tx_cpu_start(&res->cpu);
    for (unsigned q = 0; q < s->p->queues; q++) {
        const int n = nic_q_tx_reclaim(s->nq, q, err, sizeof err);
        if (n < 0)
            return fail(s->c, "tx: %s", err);
        done += n;
    }
    tx_cpu_lap(&res->cpu, CPU_TX, done > 0);
    *progress = done > 0;
    s->now = now;
    const int nrx = nic_q_rx_poll(s->nq, recs, TX_RX_POLL);
    tx_cpu_lap(&res->cpu, CPU_RX, nrx > 0);
    if (nrx > 0) {
        if (s->p->csum) {
            tx_rx_csum(s, recs, nrx);
            tx_cpu_lap(&res->cpu, CPU_RX_CSUM, true);
        }
        for (int i = 0; i < nrx; i++)
            tx_rx_check(s, &recs[i]);
        tx_cpu_lap(&res->cpu, CPU_RX, true);
        if (!res->rx_last_ns)
            res->rx_first_ns = now - s->t0;
        res->rx_last_ns = now - s->t0;
        *progress = true;
    }
    return EXIT_OK;
}

/* The hot path, from s->t0 on: poll, post what each queue may (round-robin start), refill the
 * RX ring, take MSIs, until every frame is back (--io: every I/O seen done), the rest lost
 * (--gap-ns) or nothing moved for the timeout (*stalled). */
static int tx_hot_path(struct tx_state *s, bool *stalled)
{
    struct ctx *c = s->c;
    struct nic_backend *b = c->b;
    struct nic_queues *nq = s->nq;
    const struct tx_params *p = s->p;
    const struct tx_point *pt = s->pt;
    struct tx_result *res = s->res;
    const unsigned Q = p->queues;
    struct nic_q_rx_frame recs[TX_RX_POLL];
    const unsigned rx_batch = p->batch < nq->rx.size / 2 ? p->batch : nq->rx.size / 2;
    const uint64_t settle_ns = TX_GAP_SETTLE_NS + 2 * p->rx_refill_ns;
    uint64_t last_progress = s->t0, last_refill = s->t0;
    unsigned rr = 0;
    /* --io: until the last I/O is seen done as well */
    const uint64_t ios_all = p->mode == TX_IO ? pt->ios * Q : 0;
    while (res->received < pt->frames || res->ios < ios_all) {
        uint64_t now = nic_now_ns(b);
        bool progress = false;
        if (tx_poll(s, recs, now, &progress))
            return EXIT_FAIL;
        if (p->mode == TX_IO)
            for (unsigned q = 0; q < Q; q++)
                tx_io_poll(s, q, now);
        for (unsigned k = 0; k < Q; k++) {
            const unsigned q = (rr + k) % Q;
            const unsigned n = tx_quota(s, q, now);
            if (!n)
                continue;
            const int m = tx_post(s, q, n, now);
            if (m < 0)
                return EXIT_FAIL;
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
        const bool gap_wait = p->mode == TX_GAP && s->posted < pt->frames && s->next_post_ns > now;
        if (progress || gap_wait) {
            last_progress = now;
        } else if (p->mode == TX_GAP && now - last_progress > settle_ns && tx_all_sent(s)) {
            break;                       /* the rest was lost: counted below */
        } else if (now - last_progress > c->timeout_ns) {
            *stalled = true;
            break;
        }
        if (!progress) {
            const uint64_t due = gap_wait ? s->next_post_ns - now : p->poll_ns;
            nic_idle(b, due < p->poll_ns ? due : p->poll_ns);
        }
    }
    return EXIT_OK;
}

/* Off the clock: repost what was polled, let the last writebacks land. */
static int tx_settle(struct tx_state *s)
{
    struct ctx *c = s->c;
    char err[512];
    nic_q_rx_refill(s->nq);
    const uint64_t deadline = nic_now_ns(c->b) + c->timeout_ns;
    for (unsigned q = 0; q < s->p->queues; q++) {
        while (nic_q_tx_pending(s->nq, q) && nic_now_ns(c->b) < deadline) {
            if (nic_q_tx_reclaim(s->nq, q, err, sizeof err) < 0)
                return fail(c, "tx: %s", err);
            nic_idle(c->b, 200);
        }
    }
    return EXIT_OK;
}

/* The device's counters after the run, less those before: the NIC's (cnt_delta, and the drops
 * among them), per queue (each against what the host sent), per TX vector; and the MSIs that
 * came with them. */
static int tx_marks_end(struct tx_state *s, struct tx_marks *m, uint64_t *cnt_delta)
{
    struct ctx *c = s->c;
    struct nic_backend *b = c->b;
    struct tx_result *res = s->res;
    char err[512];
    if (nic_q_counters_read(b, m->cnt1, m->ncnt, err, sizeof err) < 0)
        return fail(c, "tx: %s", err);
    for (unsigned q = 0; q < s->p->queues; q++) {
        uint32_t f1, b1;
        if (nic_q_tx_queue_stats(b, q, &f1, &b1, err, sizeof err) < 0)
            return fail(c, "tx: %s", err);
        res->q_frames[q] = f1 - m->qf0[q];
        res->q_bytes[q] = b1 - m->qb0[q];
        if (res->q_frames[q] != (uint32_t)s->per_q[q] ||
            res->q_bytes[q] != (uint32_t)res->q_sent_bytes[q]) {
            res->q_mismatch++;
            fprintf(stderr, "nicbench: tx run %u: queue %u: device counted %u frames, %u bytes; "
                    "the host sent %" PRIu64 " frames, %" PRIu64 " bytes\n", s->run, q,
                    res->q_frames[q], res->q_bytes[q], s->per_q[q], res->q_sent_bytes[q]);
        }
    }
    for (unsigned g = 0; g < nic_q_hw_txirq(b); g++) {
        uint32_t v1;
        if (nic_q_tx_vector_irqs(b, g, &v1, err, sizeof err) < 0)
            return fail(c, "tx: %s", err);
        res->irqs_tx_vec[g] = v1 - m->vi0[g];
    }
    /* The MSIs of interrupts the device counted by now reached the host before the counters'
     * read completions (both are posted upstream in order): take them. */
    const int late_irqs = nic_irq_drain_vectors(b, res->msi_vec);
    if (late_irqs > 0)
        res->msis += (unsigned)late_irqs;
    for (size_t i = 0; i < m->ncnt; i++) {
        cnt_delta[i] = nic_q_counter_delta(&m->defs[i], m->cnt0[i], m->cnt1[i]);
        if (m->defs[i].kind == NIC_QC_ERROR)
            res->drops_total += cnt_delta[i];
    }
    return EXIT_OK;
}

/* The run's totals: its time (stream: to the last frame received; io: to the last I/O done,
 * tx_io_poll(); gap: to the last frame received, without the quiet time that ended the run),
 * doorbells and the host model's counts over the hot path [t0, t1]. */
static void tx_totals(struct tx_state *s, const struct tx_marks *m, uint64_t t1, bool stalled,
                      uint64_t rxdb1)
{
    struct tx_result *res = s->res;
    res->frames = s->pt->frames;
    if (s->p->mode == TX_STREAM || stalled)
        res->time_ns = t1 - s->t0;
    else if (s->p->mode == TX_GAP)
        res->time_ns = res->received ? res->rx_last_ns : t1 - s->t0;
    for (unsigned q = 0; q < s->p->queues; q++)
        res->tx_doorbells += s->nq->tx[q].doorbells;
    res->tx_doorbells -= m->txdb0;
    res->rx_doorbells = rxdb1 - m->rxdb0;
    if (res->have_model) {
        res->mmio_rd_tlps = m->m1[0] - m->m0[0];
        res->mmio_reads = m->m1[1] - m->m0[1];
        res->mmio_writes = m->m1[2] - m->m0[2];
        res->model_msis = m->m1[3] - m->m0[3];
        res->model_msix = m->m1[4] - m->m0[4];
    }
}

/* A stalled run: the counters that moved, each queue's progress; the failure. */
static int tx_stalled(struct tx_state *s, const struct tx_marks *m, const uint64_t *cnt_delta)
{
    const struct tx_point *pt = s->pt;
    char detail[512] = "";
    size_t len = 0;
    for (unsigned q = 0; q < s->p->queues; q++)
        len += (size_t)snprintf(detail + len, len < sizeof detail ? sizeof detail - len : 0,
                                "%s q%u: %" PRIu64 " posted, %" PRIu64 " received, next "
                                "expected %" PRIu64, q ? ";" : "", q, s->sent[q], s->rx_q[q],
                                s->next_seq[q]);
    fprintf(stderr, "nicbench: tx run %u: counter deltas:", s->run);
    for (size_t i = 0; i < m->ncnt; i++)
        if (cnt_delta[i])
            fprintf(stderr, " %s=%" PRIu64, m->defs[i].name, cnt_delta[i]);
    fputc('\n', stderr);
    return fail(s->c, "tx run %u (size %u, inflight %u, window %u): %" PRIu64 " of %" PRIu64
                " frames received, no progress for %" PRIu64 " ns:%s", s->run, pt->size,
                pt->inflight, pt->window, s->res->received, pt->frames, s->c->timeout_ns,
                detail);
}

int tx_run(struct ctx *c, struct nic_queues *nq, const struct tx_params *p, unsigned run,
           const struct tx_point *pt, struct tx_result *res, uint64_t *cnt_delta)
{
    struct nic_backend *b = c->b;
    char err[512];
    const unsigned Q = p->queues;
    memset(res, 0, sizeof *res);
    for (unsigned q = 0; q < Q; q++)
        if (nic_q_set_limit(nq, q, pt->inflight, err, sizeof err) < 0)
            return fail(c, "tx: %s", err);

    struct tx_marks m = {0};
    m.defs = nic_q_counter_defs(&m.ncnt);
    m.cnt0 = calloc(m.ncnt * 2 + 1, sizeof *m.cnt0);
    m.cnt1 = m.cnt0 + m.ncnt;
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
    int rc = EXIT_OK;
    if (!m.cnt0 || !s.stage || !s.want || !s.got || !s.fr || (pt->window && !s.post_ns)) {
        rc = fail(c, "tx: out of memory");
        goto out;
    }
    for (unsigned q = 0; q < Q; q++)
        s.per_q[q] = p->mode == TX_IO ? pt->ios * pt->io_frames
                                      : pt->frames / Q + (q < pt->frames % Q);
    if ((rc = tx_marks_begin(&s, &m)))
        goto out;
    tx_cpu_init(&res->cpu);

    /* ---- hot path: no MMIO read from here to t1 ---- */
    const uint64_t t0 = nic_now_ns(b);
    s.t0 = s.next_post_ns = t0;
    for (unsigned q = 0; q < Q; q++) {
        s.io_end[q] = pt->io_frames;     /* --io: every submitter starts its first I/O */
        s.io_t0[q] = p->mode == TX_IO ? t0 : UINT64_MAX;
    }
    bool stalled = false;
    if ((rc = tx_hot_path(&s, &stalled)))
        goto out;
    const uint64_t t1 = nic_now_ns(b);
    /* ---- end of the hot path ---- */
    if (res->have_model)
        for (int k = 0; k < TX_MODEL_COUNTERS; k++)
            res->have_model &= model_counter(c, tx_model_names[k], &m.m1[k]);

    const uint64_t rxdb1 = nq->rx.doorbells;
    if ((rc = tx_settle(&s)) || (rc = tx_marks_end(&s, &m, cnt_delta)))
        goto out;
    tx_totals(&s, &m, t1, stalled, rxdb1);
    if (stalled)
        rc = tx_stalled(&s, &m, cnt_delta);
out:
    free(m.cnt0);
    free(s.stage);
    free(s.want);
    free(s.got);
    free(s.fr);
    free(s.post_ns);
    return rc;
}
