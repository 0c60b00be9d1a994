// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_fuzz_score.c: the scoreboard of `nicbench fuzz` (cmd_fuzz.h): every good frame sent and
 * not received intact must be covered by a counter the device (or the sim's wire) kept; the
 * figures printed and recorded, and the run's verdict.
 */
#define _GNU_SOURCE
#include "cmd_fuzz.h"

static const char *const fz_kind_names[FZ_KINDS] = {
    "good", "good_chain", "unknown_flags", "zero_length", "oversized", "no_eop_chain"};
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
static const char *const fz_cpl_names[FZ_CPL_N] = {"cpl_timeouts", "cpl_unsupported",
                                                   "cpl_aborts", "cpl_poisoned", "link_downs"};

/* The scoreboard's figures, from the counters' deltas and the host's counts. */
struct fz_tally {
    uint64_t tx_err, rx_drop;            /* fz_tx_err[], fz_rx_drop[] */
    uint64_t desc_read_jobs;             /* failed descriptor fetches */
    uint64_t frame_errs;                 /* the TX engine's errored frames by cause */
    uint64_t txe_good, rx_recs;          /* frames out of the TX engine good; RX records */
    uint64_t cpl[FZ_CPL_N];
    uint64_t lost, tx_lost, rx_lost;     /* good frames lost: all, before the wire, after */
    uint64_t recs_lost;                  /* RX records the device wrote and the host missed */
    uint64_t unexplained;                /* lost without a counter */
    uint64_t wf[5];                      /* the sim wire's fuzz counts (wf_names[]) */
    uint64_t oversize_dropped;
    uint64_t stale_wb;                   /* resets whose last writeback was lost */
};

static uint64_t delta_of(const struct nic_q_counter_def *d, size_t n, const uint64_t *a,
                         const uint64_t *b, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0)
            return nic_q_counter_delta(&d[i], a[i], b[i]);
    return 0;
}

static void fz_tally(struct fz *f, const struct fz_marks *m, struct fz_tally *t)
{
    struct ctx *c = f->c;
    memset(t, 0, sizeof *t);
#define DELTA(name) delta_of(m->defs, m->ncnt, m->cnt0, m->cnt1, name)
    for (size_t i = 0; i < NTXERR; i++)
        t->tx_err += DELTA(fz_tx_err[i]);
    for (size_t i = 0; i < NRXDROP; i++)
        t->rx_drop += DELTA(fz_rx_drop[i]);
    t->desc_read_jobs = DELTA("txe_err_desc_read");
    /* The frames the TX engine ended with an error status (nic_txe_q_errors): one per frame
     * counted by cause, plus at most one per failed descriptor fetch (DESC_READ). */
    for (size_t i = 0; i < FZ_TXE_FRAME_ERRS; i++)
        t->frame_errs += DELTA(fz_tx_err[i]);
    t->txe_good = DELTA("txe_frames");
    t->rx_recs = DELTA("rxe_frames") + DELTA("rxe_drop_too_big") + DELTA("rxe_drop_bad_desc");
    for (int i = 0; i < FZ_CPL_N; i++)
        t->cpl[i] = (m->cpl1[i] - m->cpl0[i]) & 0xffffffffu;
    t->lost = f->good - f->received;
    /* TX: good frames that did not leave the TX engine good (a reset posts the ones it
     * dropped again): each failed with a counted error beyond the bad descriptors' own, or in
     * a failed descriptor fetch (its job's frames and the one it ran into, at most a ring). */
    t->tx_lost = f->good > t->txe_good ? f->good - t->txe_good : 0;
    const uint64_t bad_fetched = f->bad_posted - f->reset_dropped;
    const uint64_t tx_budget = (t->tx_err > bad_fetched ? t->tx_err - bad_fetched : 0) +
                               t->desc_read_jobs * (FZ_RING + 1);
    const uint64_t tx_unexplained = t->tx_lost > tx_budget ? t->tx_lost - tx_budget : 0;
    /* Wire and RX: good frames out of the TX engine and not received intact: dropped and
     * counted on the way, or their record lost with a link-down. */
    t->rx_lost = t->txe_good > f->received ? t->txe_good - f->received : 0;
    t->recs_lost = t->rx_recs > f->records ? t->rx_recs - f->records : 0;
    /* The wire's fuzz (sim backend wire_fuzz): frames it swallowed while it drew an oversized
     * one out are lost on the wire, by its own count. */
    static const char *const wf_names[5] = {"wire.fuzz_bad_fcs", "wire.fuzz_runts",
                                            "wire.fuzz_garbage", "wire.fuzz_oversize",
                                            "wire.fuzz_swallowed"};
    bool have_wire = true;
    for (int k = 0; k < 5; k++)
        have_wire &= counter(c, wf_names[k], &t->wf[k]);
    if (!have_wire)
        memset(t->wf, 0, sizeof t->wf);
    const uint64_t rx_budget = t->rx_drop + t->wf[4] +
                               (t->cpl[FZ_LINK_DOWNS] ? t->recs_lost + f->link_suspect : 0);
    /* Every oversized frame (good FCS) reaches the RX FIFO and is dropped there as such. */
    t->oversize_dropped = DELTA("rxfifo_drop_oversize");
    const uint64_t rx_unexplained = t->rx_lost > rx_budget ? t->rx_lost - rx_budget : 0;
    t->unexplained = tx_unexplained + rx_unexplained;

    /* Resets whose queue's last consumer-index writeback was lost (the reset path took the
     * device's index from nic_txq_cons instead). */
    for (unsigned q = 0; q < f->Q; q++)
        t->stale_wb += f->nq.tx[q].stale_wb;
#undef DELTA
}

/* The scoreboard's lines. */
static void fz_print(struct fz *f, const struct fz_marks *m, const struct fz_tally *t)
{
    struct ctx *c = f->c;
    out(c, "fuzz: %" PRIu64 " good frames sent, %" PRIu64 " received intact, %" PRIu64
        " lost (%" PRIu64 " before the wire, %" PRIu64 " after), %" PRIu64
        " lost without a counter, %" PRIu64 " corrupted, %" PRIu64 " out of order; %.3f "
        "simulated ms\n", f->good, f->received, t->lost, t->tx_lost, t->rx_lost,
        t->unexplained, f->corrupted, f->out_of_order, (double)(m->t1 - m->t0) / 1e6);
    out(c, "fuzz: cases:");
    for (int k = 0; k < FZ_KINDS; k++)
        out(c, " %s=%" PRIu64, fz_kind_names[k], f->kinds[k]);
    for (int k = 0; k < FZ_CTLS; k++)
        out(c, " %s=%" PRIu64, fz_ctl_names[k], f->ctls[k]);
    out(c, " watchdog_resets=%" PRIu64 " link_resets=%" PRIu64 " reset_dropped=%" PRIu64
        " reposted=%" PRIu64 " link_suspect=%" PRIu64 " stale_writebacks=%" PRIu64 "\n",
        f->watchdog_resets, f->link_resets, f->reset_dropped, f->reposted, f->link_suspect,
        t->stale_wb);
    out(c, "fuzz: device: tx_errors=%" PRIu64 " desc_read_errors=%" PRIu64 " tx_errored_frames=%"
        PRIu64 " (writebacks %" PRIu64 ") rx_drops=%" PRIu64 " rx_records_lost=%" PRIu64,
        t->tx_err, t->desc_read_jobs, m->q_errors, m->wb_errors, t->rx_drop, t->recs_lost);
    for (int i = 0; i < FZ_CPL_N; i++)
        out(c, " %s=%" PRIu64, fz_cpl_names[i], t->cpl[i]);
    out(c, "\n");
}

/* The run's JSON record. */
static void fz_json(struct fz *f, const struct fz_marks *m, const struct fz_tally *t)
{
    struct bu_json *j = &f->c->rec;
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
    bu_json_ku64(j, "lost", t->lost);
    bu_json_ku64(j, "lost_tx", t->tx_lost);
    bu_json_ku64(j, "lost_rx", t->rx_lost);
    bu_json_ku64(j, "lost_unexplained", t->unexplained);
    bu_json_ku64(j, "corrupted", f->corrupted);
    bu_json_ku64(j, "out_of_order", f->out_of_order);
    bu_json_ku64(j, "reset_dropped", f->reset_dropped);
    bu_json_ku64(j, "reposted", f->reposted);
    bu_json_ku64(j, "watchdog_resets", f->watchdog_resets);
    bu_json_ku64(j, "link_resets", f->link_resets);
    bu_json_ku64(j, "link_suspect", f->link_suspect);
    bu_json_ku64(j, "stale_writebacks", t->stale_wb);
    bu_json_ku64(j, "time_ns", m->t1 - m->t0);
    bu_json_key(j, "cases");
    bu_json_obj_begin(j);
    for (int k = 0; k < FZ_KINDS; k++)
        bu_json_ku64(j, fz_kind_names[k], f->kinds[k]);
    for (int k = 0; k < FZ_CTLS; k++)
        bu_json_ku64(j, fz_ctl_names[k], f->ctls[k]);
    bu_json_obj_end(j);
    bu_json_key(j, "device");
    bu_json_obj_begin(j);
    bu_json_ku64(j, "tx_errors", t->tx_err);
    bu_json_ku64(j, "desc_read_errors", t->desc_read_jobs);
    bu_json_ku64(j, "tx_errored_frames", m->q_errors);
    bu_json_ku64(j, "tx_wb_errors", m->wb_errors);
    bu_json_ku64(j, "rx_drops", t->rx_drop);
    bu_json_ku64(j, "rx_records_lost", t->recs_lost);
    for (int i = 0; i < FZ_CPL_N; i++)
        bu_json_ku64(j, fz_cpl_names[i], t->cpl[i]);
    bu_json_obj_end(j);
    bu_json_key(j, "counters");
    bu_json_obj_begin(j);
    for (size_t i = 0; i < m->ncnt; i++)
        if (m->defs[i].kind != NIC_QC_STATE)
            bu_json_ku64(j, m->defs[i].name,
                         nic_q_counter_delta(&m->defs[i], m->cnt0[i], m->cnt1[i]));
    bu_json_obj_end(j);
    bu_json_obj_end(j);
}

/* The host model's errors and the wire's fuzz (sim backend), then the verdict. */
static int fz_verdict(struct fz *f, const struct fz_marks *m, const struct fz_tally *t)
{
    struct ctx *c = f->c;
    int rc = EXIT_OK;
    /* The host model: every TLP checked, every address through the IOMMU (sim backend). */
    uint64_t model_err = 0, iommu = 0;
    const bool have_model = counter(c, "model.errors", &model_err) &&
                            counter(c, "model.iommu_faults", &iommu);
    if (have_model)
        out(c, "fuzz: host model: %" PRIu64 " TLP errors, %" PRIu64 " IOMMU faults\n", model_err,
            iommu);
    if (t->wf[0] + t->wf[1] + t->wf[2] + t->wf[3]) {
        out(c, "fuzz: wire: %" PRIu64 " frames with a bad FCS, %" PRIu64 " runts, %" PRIu64
            " garbage bursts between frames, %" PRIu64 " oversized (%" PRIu64 " dropped as "
            "oversize by the RX FIFO, %" PRIu64 " frames swallowed meanwhile)\n", t->wf[0],
            t->wf[1], t->wf[2], t->wf[3], t->oversize_dropped, t->wf[4]);
        bu_json_obj_begin(&c->rec);
        bu_json_kstr(&c->rec, "experiment", "fuzz_wire");
        bu_json_ku64(&c->rec, "bad_fcs", t->wf[0]);
        bu_json_ku64(&c->rec, "runts", t->wf[1]);
        bu_json_ku64(&c->rec, "garbage", t->wf[2]);
        bu_json_ku64(&c->rec, "oversize", t->wf[3]);
        bu_json_ku64(&c->rec, "oversize_dropped", t->oversize_dropped);
        bu_json_ku64(&c->rec, "swallowed", t->wf[4]);
        bu_json_obj_end(&c->rec);
    }
    if (m->wb_mismatch)
        rc = fail(c, "fuzz: %" PRIu64 " TX queue(s) whose writebacks show other errored frames "
                  "(%" PRIu64 " in all) than nic_txe_q_errors (%" PRIu64 "), no writeback lost "
                  "(seed %" PRIu64 ")", m->wb_mismatch, m->wb_errors, m->q_errors, f->seed);
    if (m->q_errors < t->frame_errs || m->q_errors > t->frame_errs + t->desc_read_jobs)
        rc = fail(c, "fuzz: %" PRIu64 " errored TX frames (nic_txe_q_errors), not %" PRIu64
                  " by cause (+ up to %" PRIu64 " failed descriptor fetches) (seed %" PRIu64 ")",
                  m->q_errors, t->frame_errs, t->desc_read_jobs, f->seed);
    if (t->oversize_dropped != t->wf[3])
        rc = fail(c, "fuzz: the wire sent %" PRIu64 " oversized frames, the RX FIFO dropped %"
                  PRIu64 " as oversize (seed %" PRIu64 ")", t->wf[3], t->oversize_dropped,
                  f->seed);
    if (have_model && (model_err || iommu) &&
        !(f->corrupted || f->out_of_order || t->unexplained))
        rc = fail(c, "fuzz: the host model saw %" PRIu64 " TLP errors and %" PRIu64 " IOMMU "
                  "faults (seed %" PRIu64 ")", model_err, iommu, f->seed);
    if (f->corrupted || f->out_of_order || t->unexplained)
        rc = fail(c, "fuzz: %" PRIu64 " corrupted, %" PRIu64 " out of order, %" PRIu64
                  " lost without a counter (seed %" PRIu64 ")", f->corrupted, f->out_of_order,
                  t->unexplained, f->seed);
    return rc;
}

int fz_score(struct fz *f, const struct fz_marks *m)
{
    struct fz_tally t;
    fz_tally(f, m, &t);
    fz_print(f, m, &t);
    fz_json(f, m, &t);
    return fz_verdict(f, m, &t);
}
