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
 * Options: the usage text in main.c. This file: the options, the run (posts, polls, the
 * watchdog and the reset path) and its end; the rest is in the files cmd_fuzz.h names.
 */
#define _GNU_SOURCE
#include <unistd.h>

#include "cmd_fuzz.h"

/* The command's options into *f, over the defaults (2000 frames of 60..1514 bytes, a seed from
 * the clock, a 2 ms watchdog). */
static int fz_options(struct fz *f, int argc, char **argv)
{
    static const struct option opts[] = {
        {"frames", required_argument, NULL, 'n'}, {"queues", required_argument, NULL, 'q'},
        {"size-range", required_argument, NULL, 's'}, {"seed", required_argument, NULL, 'S'},
        {"desc-fuzz", required_argument, NULL, 'd'}, {"ctl-fuzz", required_argument, NULL, 'C'},
        {"watchdog-us", required_argument, NULL, 'w'},
        {"progress", required_argument, NULL, 'p'}, {NULL, 0, NULL, 0}};
    f->frames = 2000;
    f->Q = 0;
    f->smin = 60;
    f->smax = 1514;
    f->seed = wall_ns() ^ (uint64_t)getpid() << 32;
    f->watchdog_ns = 2000000;
    uint64_t v;
    int o, rc;
    char *end;
    while ((o = next_option("fuzz", argc, argv, opts)) != -1) {
        switch (o) {
        case 'n':
            if ((rc = cli_parse_range("--frames", optarg, &f->frames, 1, FZ_FRAMES_MAX)))
                return rc;
            break;
        case 'q':
            if ((rc = cli_parse_range("--queues", optarg, &v, 1, NIC_Q_MAX_TXQ)))
                return rc;
            f->Q = (unsigned)v;
            break;
        case 's': {
            unsigned long a = strtoul(optarg, &end, 10), bb = 0;
            if (end != optarg && *end == '-')
                bb = strtoul(end + 1, &end, 10);
            if (*end || a < NIC_Q_FRAME_MIN || bb < a || bb > NIC_Q_FRAME_MAX)
                return usage_error("--size-range: '%s' is not MIN-MAX with %u <= MIN <= MAX <= %u",
                                   optarg, NIC_Q_FRAME_MIN, NIC_Q_FRAME_MAX);
            f->smin = (unsigned)a;
            f->smax = (unsigned)bb;
            break;
        }
        case 'S':
            if ((rc = cli_parse_num("--seed", optarg, &f->seed)))
                return rc;
            break;
        case 'd':
        case 'C': {
            const double p = strtod(optarg, &end);
            if (end == optarg || *end || !(p >= 0 && p <= 1))
                return usage_error("--%s: '%s' is not a probability in 0..1",
                                   o == 'd' ? "desc-fuzz" : "ctl-fuzz", optarg);
            *(o == 'd' ? &f->desc_p : &f->ctl_p) = p;
            break;
        }
        case 'w':
            if ((rc = cli_parse_range("--watchdog-us", optarg, &v, 10, 1000000)))
                return rc;
            f->watchdog_ns = v * 1000;
            break;
        case 'p':
            if ((rc = cli_parse_num("--progress", optarg, &f->progress)))
                return rc;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    if (optind < argc)
        return usage_error("fuzz: unexpected argument '%s'", argv[optind]);
    return EXIT_OK;
}

/* What the scoreboard reads before the run: the NIC's counters, pcie_cpl's, each queue's
 * errored frames (the device's and the writebacks'), the link-downs seen. */
static int fz_begin(struct fz *f, struct fz_marks *m)
{
    struct ctx *c = f->c;
    struct nic_backend *b = f->b;
    for (unsigned q = 0; q < f->Q; q++)
        f->last_rx[q] = -1;
    m->defs = nic_q_counter_defs(&m->ncnt);
    m->cnt0 = calloc(m->ncnt, sizeof *m->cnt0);
    m->cnt1 = calloc(m->ncnt, sizeof *m->cnt1);
    if (!m->cnt0 || !m->cnt1 || !fz_counters(f, m->cnt0, m->ncnt))
        return fail(c, "fuzz: %s", m->cnt0 && m->cnt1 ? f->err : "out of memory");
    fz_cpl_read(f, m->cpl0);
    for (unsigned q = 0; q < f->Q; q++) {
        f->qerr0[q] = nic_q_tx_queue_errors(b, q);
        f->wberr0[q] = f->nq.tx[q].errors;
    }
    f->have_link = nic_rb_find(b, NIC_RB_PCIE_CPL) != NULL;
    f->link_seen = (uint32_t)m->cpl0[FZ_LINK_DOWNS];
    return EXIT_OK;
}

/* Queue q's next batch: up to FZ_BATCH items (a chain without EOP ends it) while the ring has
 * room for a chain, one doorbell; then the driver's reset of a queue such a chain holds, and
 * with probability --ctl-fuzz a control action. *progress: anything posted. */
static int fz_post_batch(struct fz *f, unsigned q, bool *progress)
{
    struct ctx *c = f->c;
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
        *progress = true;
    }
    /* A chain without EOP holds the engine on its queue: the driver resets it. */
    if (f->no_eop_open[q] && fz_txq_reset(f, q) < 0)
        return fail(c, "fuzz: %s", f->err);
    if (n && fz_chance(f, f->ctl_p) && fz_control(f) < 0)
        return fail(c, "fuzz: %s", f->err);
    return EXIT_OK;
}

/* The run: reclaim, poll, post, take MSIs until every good frame is sent and received; the
 * driver's reset path after a link-down, or after a stall (--watchdog-us; a second stall in a
 * row with every frame posted ends the run: the rest was lost); --progress lines. */
static int fz_loop(struct fz *f, struct fz_marks *m)
{
    struct ctx *c = f->c;
    struct nic_backend *b = f->b;
    const uint64_t t0 = m->t0 = nic_now_ns(b);
    uint64_t last_progress = t0, next_report = f->progress, stalls = 0, last_link_check = t0;
    unsigned rr = 0;
    int rc;
    while (f->good < f->frames || f->received + 0 < f->good) {
        bool progress = false;
        for (unsigned q = 0; q < f->Q; q++) {
            const int n = nic_q_tx_reclaim(&f->nq, q, f->err, sizeof f->err);
            if (n < 0)
                return fail(c, "fuzz: %s", f->err);
            progress |= n > 0;
        }
        if (fz_poll(f) > 0)
            progress = true;
        if (f->good < f->frames && (rc = fz_post_batch(f, rr++ % f->Q, &progress)))
            return rc;
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
            if (fz_reset_all(f) < 0)
                return fail(c, "fuzz: reset after a link-down: %s", f->err);
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
            if (fz_reset_all(f) < 0)
                return fail(c, "fuzz: watchdog reset: %s", f->err);
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
    return EXIT_OK;
}

/* Let the last frames land; each queue's errored frames by its writebacks against the
 * device's; the counters after the run. */
static int fz_finish(struct fz *f, struct fz_marks *m)
{
    struct ctx *c = f->c;
    struct nic_backend *b = f->b;
    /* Let the last frames land, then the counters. */
    for (int k = 0; k < 20; k++) {
        nic_idle(b, 5000);
        fz_poll(f);
    }
    /* Errored frames: what each queue's writebacks showed against the device's count. A
     * mismatch is allowed only where the last writeback was lost (a link-down): then the
     * device's consumer index is ahead of it too, and the sync takes both from the device. */
    for (unsigned q = 0; q < f->Q; q++) {
        if (nic_q_tx_reclaim(&f->nq, q, f->err, sizeof f->err) < 0)
            return fail(c, "fuzz: %s", f->err);
        const uint32_t dev = nic_q_tx_queue_errors(b, q) - f->qerr0[q];
        if (f->nq.tx[q].errors - f->wberr0[q] != dev && !nic_q_tx_sync(&f->nq, q))
            m->wb_mismatch++;
        m->q_errors += dev;
        m->wb_errors += f->nq.tx[q].errors - f->wberr0[q];
    }
    if (!fz_counters(f, m->cnt1, m->ncnt))
        return fail(c, "fuzz: %s", f->err);
    fz_cpl_read(f, m->cpl1);
    m->t1 = nic_now_ns(b);
    return EXIT_OK;
}

int cmd_fuzz(struct ctx *c, int argc, char **argv)
{
    struct fz *f = calloc(1, sizeof *f);
    if (!f)
        return fail(c, "fuzz: out of memory");
    f->c = c;
    struct fz_marks m = {0};
    int rc = fz_options(f, argc, argv);
    if (rc)
        goto out_free;
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
    if (!(rc = fz_begin(f, &m)) && !(rc = fz_loop(f, &m)) && !(rc = fz_finish(f, &m)))
        rc = fz_score(f, &m);
out_close:
    if (nic_q_close(&f->nq, c->timeout_ns, f->err, sizeof f->err) < 0 && !rc)
        rc = fail(c, "fuzz: close: %s", f->err);
    if (!rc)
        rc = backend_check(c, "fuzz");
out_free:
    free(m.cnt0);
    free(m.cnt1);
    free(f->frame);
    free(f);
    return rc;
}
