// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_tx.c: `nicbench tx`, frames through the NIC datapath's descriptor rings, the MAC loopback
 * and the RX ring. Options: the usage text in main.c; the modes: cmd_tx.h. This file: the
 * queues opened for the command, the sweep of runs (cmd_tx_run.c) and its table, the lines
 * that say what was run and what the columns mean.
 */
#define _GNU_SOURCE
#include "cmd_tx.h"

/* The NIC's queues for the command (rings, buffers for the largest frame, the coalescing asked,
 * read back into a->co) and its MSIs on. */
static int tx_open(struct ctx *c, struct tx_args *a, struct nic_queues *nq)
{
    struct nic_backend *b = c->b;
    const struct tx_params *p = &a->p;
    char err[512];
    int rc;
    const struct nic_q_config qc = {.ntxq = p->queues, .tx_ring = p->ring, .tx_limit = 0,
                                    .rx_ring = p->rx_ring,
                                    .buf_size = (unsigned)(a->max_size < NIC_Q_FRAME_MIN ?
                                                           NIC_Q_FRAME_MIN : a->max_size),
                                    .sched_mode = 0, .buf_offset = p->buf_offset,
                                    .buf_offset_random = p->buf_random,
                                    .buf_offset_seed = p->buf_seed};
    if (nic_q_open(nq, b, &qc, c->timeout_ns, err, sizeof err) < 0) {
        nic_q_close(nq, c->timeout_ns, NULL, 0);
        return fail(c, "tx: %s", err);
    }
    if (nic_q_coalesce_set(nq, &a->co, err, sizeof err) < 0 ||
        nic_q_coalesce_get(nq, &a->co, err, sizeof err) < 0) {
        nic_q_close(nq, c->timeout_ns, NULL, 0);
        return fail(c, "tx: %s", err);
    }
    uint32_t msi_mask = nic_msi_bit(nic_q_rx_msi(b));
    for (unsigned g = 0; g < nic_q_hw_txirq(b); g++)
        msi_mask |= nic_msi_bit(nic_q_tx_vector_msi(b, g));
    nic_msi_enable(b, msi_mask);
    if ((rc = backend_check(c, "tx setup"))) {
        nic_q_close(nq, c->timeout_ns, NULL, 0);
        return rc;
    }
    return EXIT_OK;
}

/* What the command runs, in a line. */
static void tx_intro(struct ctx *c, const struct tx_args *a)
{
    struct nic_backend *b = c->b;
    const struct tx_params *p = &a->p;
    if (p->mode == TX_IO)
        out(c, "tx --io: each of the %u TX queue(s) a submitter of blocking I/Os, one open at "
            "a time: an I/O of N bytes is k = ceil(N / %u) frames of N/k bytes (the first N %% k "
            "one byte more), posted as far as the ring (%u) takes with a doorbell each time, "
            "until all is posted; the next I/O starts when the written-back consumer index has "
            "passed the whole I/O; at least %u I/Os per submitter and %" PRIu64 " bytes per "
            "run", p->queues, p->io_frame, p->ring, TX_IO_MIN_IOS, p->min_bytes);
    else if (p->mode == TX_GAP)
        out(c, "tx --gap-ns: %" PRIu64 " frames per run over %u queue(s) (round-robin), one "
            "frame per doorbell, posts spaced by the gap in simulated ns (start to start; later "
            "only when the ring is full), ring %u; RX ring %u, buffers reposted %s", p->frames,
            p->queues, p->ring, p->rx_ring, p->rx_refill_ns ? "every --rx-refill-ns" :
            "per batch");
    else
        out(c, "tx: %" PRIu64 " frames per run over %u queue(s), ring %u, RX ring %u, a "
            "doorbell per %u frames%s", p->frames, p->queues, p->ring, p->rx_ring, p->batch,
            a->window_given ? ", at most --window frames per queue sent and not yet received"
                            : "");
    if (p->rx_refill_ns)
        out(c, " (%" PRIu64 " ns)", p->rx_refill_ns);
    if (p->buf_random)
        out(c, "; each TX frame and RX buffer at a random offset in its page (RX: a multiple "
            "of %u B), seed %" PRIu64, NIC_Q_RX_BUF_ALIGN, p->buf_seed);
    else if (p->buf_offset_given)
        out(c, "; TX frames at offset %u in their pages, RX buffers at %u", p->buf_offset,
            p->buf_offset / NIC_Q_RX_BUF_ALIGN * NIC_Q_RX_BUF_ALIGN);
    out(c, ", poll %" PRIu64 " ns; coalescing rx-usecs=%u rx-frames=%u tx-usecs=%u "
        "tx-frames=%u (each of %u TX vectors: queue q on vector q %% %u); %sframes through "
        "the MAC loopback, checked bit-exact and in order per queue\n", p->poll_ns,
        a->co.rx_usecs, a->co.rx_frames, a->co.tx_usecs, a->co.tx_frames, nic_q_hw_txirq(b),
        nic_q_hw_txirq(b),
        p->csum ? "an RFC 1071 checksum in every frame, verified on receipt; " : "");
}

/* The sweep: a run per (size, in-flight limit or gap, window), its row, JSON record and, if it
 * failed, its details; the table. *any_bad: a run failed its checks. */
static int tx_sweep(struct ctx *c, struct tx_args *a, struct nic_queues *nq, bool *any_bad)
{
    struct nic_backend *b = c->b;
    const struct tx_params *p = &a->p;
    int rc = EXIT_OK;
    struct bu_table t = {0};
    size_t ncnt;
    nic_q_counter_defs(&ncnt);
    uint64_t *delta = calloc(ncnt + 1, sizeof *delta);
    unsigned run = 0;
    for (size_t n = 0; n < a->nsizes * a->nsecond * a->nwindows && !rc; n++, run++) {
        const size_t si = n / (a->nsecond * a->nwindows), ii = n / a->nwindows % a->nsecond,
                     wi = n % a->nwindows;
        struct tx_point pt = {.size = (uint32_t)a->sizes[si], .inflight = p->ring - 1,
                              .window = (unsigned)a->windows[wi], .frames = p->frames};
        if (p->mode == TX_IO)
            tx_io_point(p, a->sizes[si], &pt);
        else if (p->mode == TX_GAP)
            pt.gap_ns = a->second[ii];
        else
            pt.inflight = (unsigned)a->second[ii];
        struct tx_result r;
        rc = tx_run(c, nq, p, run, &pt, &r, delta);
        if (!rc)
            rc = backend_check(c, "tx run");
        if (rc)
            break;
        struct tx_figures f;
        tx_figures(b, p, &r, delta, &f);
        if (f.msi_other)
            fprintf(stderr, "nicbench: tx run %u: %" PRIu64 " MSIs on vectors other than "
                    "the %u TX vectors (from %u) and NIC_RX (%u)\n", run, f.msi_other,
                    nic_q_hw_txirq(b), nic_q_tx_vector_msi(b, 0), nic_q_rx_msi(b));
        *any_bad |= !f.ok;
        struct tx_row w;
        tx_row(&w, p, &pt, &r, &f);
        if (!t.ncols)
            bu_table_init(&t, w.n, w.hdr);
        const char *row[TX_COLS];
        for (int k = 0; k < w.n; k++)
            row[k] = w.cell[k];
        bu_table_row(&t, row);
        if (!f.ok || (p->mode != TX_GAP && r.drops_total))
            tx_explain(p, &pt, run, &r, &f, delta);
        tx_json(c, p, &pt, run, &r, &f, delta, &a->co);
    }
    if (!c->run.quiet && t.nrows)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    free(delta);
    return rc;
}

/* What the columns mean. */
static void tx_legend(struct ctx *c, const struct tx_args *a)
{
    const struct tx_params *p = &a->p;
    if (p->mode == TX_IO)
        out(c, "  io_B: bytes per I/O; frame_B: its largest frame; ios: I/Os done (all "
            "submitters); sim_us: simulated time from the first doorbell to the poll that saw "
            "the last I/O done; MB/s: 10^6 frame bytes per simulated second; us/io: mean "
            "simulated time of an I/O, from its start to the poll that saw it done; rx_MB/s: "
            "the bytes over the time to the last frame received (the submitters' MB/s runs "
            "ahead of it by what the TX FIFO, 32 KiB, holds: short runs exceed the 1 Gb/s "
            "line)\n");
    else if (p->mode == TX_GAP)
        out(c, "  gap_ns: post to post; sim_us: from the first post to the last frame "
            "received; offer_Gb/s: frame bytes at the rate frames were posted (first to last "
            "post); rx_Gb/s, rx_wire_Gb/s: at the RX ring (first to last frame received; wire: "
            "with FCS, preamble and gap); lost: sent and never received, each counted by the "
            "NIC (no_buf: rxe_drop_no_buffer, fifo_full: rxfifo_drop_full), a result, not a "
            "failure\n");
    else
        out(c, "  Gb/s: frame bytes (no FCS) per simulated second; wire_Gb/s: with FCS (4 B), "
            "preamble and gap (20 B), frames padded to 60 B; line_%%: Mpps / the 1 Gb/s line "
            "rate (1.488 Mpps at 60 B + FCS)%s\n", a->window_given ? "; inflight: descriptors "
            "per queue posted and not completed by the TX DMA at most; window: frames per queue "
            "sent and not yet received at the RX ring at most; rtt_us: a frame's mean round "
            "trip, from its post to the poll that saw it received" : "");
    out(c, "  mmio_rd: MMIO read TLPs (model.tlps_down_mrd) from the first doorbell to the last "
        "frame received\n");
    out(c, "  host_ns/fr: the host's own CPU time per frame sent, wall-clock CPU "
        "(CLOCK_THREAD_CPUTIME_ID), not simulated time: frame fill, checksum, descriptor post "
        "and reclaim, RX poll and check, without the time inside backend calls (the "
        "simulator runs in them); csum_ns/fr: its checksum part (computed and verified); in "
        "simulation this work takes no simulated time\n");
}

int cmd_tx(struct ctx *c, int argc, char **argv)
{
    struct tx_args a;
    int rc = tx_parse(argc, argv, &a);
    if (rc)
        return rc;
    rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    print_params(c, "params: ");
    struct nic_queues nq;
    if ((rc = tx_open(c, &a, &nq)))
        return rc;
    tx_intro(c, &a);
    bool any_bad = false;
    rc = tx_sweep(c, &a, &nq, &any_bad);
    tx_legend(c, &a);
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
