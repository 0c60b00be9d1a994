// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_tx_report.c: what a run of `nicbench tx` prints and records (cmd_tx.h): its figures, its
 * table row, its JSON record, and a failed run's details.
 */
#define _GNU_SOURCE
#include "cmd_tx.h"

static const char *const tx_mode_name[] = {"stream", "io", "gap"};

/* --gap-ns: the drop counters whose frames count as lost, not as a failure: the receiver had no
 * buffer (rx_engine.py) or its FIFO no room. Any other drop or error fails the run. */
static const char *const tx_loss_causes[] = {"rxe_drop_no_buffer", "rxfifo_drop_full"};
_Static_assert(sizeof tx_loss_causes / sizeof tx_loss_causes[0] == TX_LOSS_CAUSES,
               "TX_LOSS_CAUSES (cmd_tx.h)");

/* n events from the first to the last (ns) as millions per second (NaN under two events). */
static double tx_rate_mpps(uint64_t n, uint64_t first, uint64_t last)
{
    return n > 1 && last > first ? (double)(n - 1) / (double)(last - first) * 1e3 : NAN;
}

void tx_figures(struct nic_backend *b, const struct tx_params *p, const struct tx_result *r,
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
    f->host_ns = tx_cpu_per_frame(&r->cpu, CPU_ALL, r->frames);
    f->host_csum_ns = tx_cpu_per_frame(&r->cpu, CPU_CSUM, r->frames);
    f->host_tx_ns = tx_cpu_per_frame(&r->cpu, CPU_TX_ALL, r->frames);
    f->host_rx_ns = tx_cpu_per_frame(&r->cpu, CPU_RX_ALL, r->frames);
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
void tx_row(struct tx_row *w, const struct tx_params *p, const struct tx_point *pt,
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

/* --io: the I/Os (time_ns: from the start to the poll that saw the last I/O done). */
static void tx_json_io(struct bu_json *j, const struct tx_params *p, const struct tx_point *pt,
                       const struct tx_result *r, const struct tx_figures *f)
{
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

/* --gap-ns: the offered and received rates, the frames lost (time_ns: from the start to the
 * last frame received; rates from first to last). */
static void tx_json_gap(struct bu_json *j, const struct tx_params *p, const struct tx_point *pt,
                        const struct tx_result *r, const struct tx_figures *f)
{
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

/* MMIO on the hot path, doorbells, interrupts and MSIs (per vector). */
static void tx_json_irqs(struct bu_json *j, struct nic_backend *b, const struct tx_result *r,
                         const struct tx_figures *f, const uint64_t *delta)
{
    const int i_txdb = nic_q_counter_index("txq_doorbells");
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
    json_opt_u64(j, "msix_model", r->have_model, r->model_msix);    /* of msis_model */
    /* Per vector (an MSI number per vector: LitePCIe's msi-multi-vector, or MSI-X's table
     * entry of that number). */
    bu_json_kstr(j, "msi_type", b->msix ? "msi-x" : "msi-multi-vector");
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
}

/* The device's counters: per queue, the drops, every counter; the coalescing used. */
static void tx_json_counters(struct bu_json *j, const struct tx_params *p,
                             const struct tx_result *r, const uint64_t *delta,
                             const struct nic_q_coalesce *co)
{
    size_t ncnt;
    const struct nic_q_counter_def *defs = nic_q_counter_defs(&ncnt);
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
}

/* The run's JSON record. */
void tx_json(struct ctx *c, const struct tx_params *p, const struct tx_point *pt,
             unsigned run, const struct tx_result *r, const struct tx_figures *f,
             const uint64_t *delta, const struct nic_q_coalesce *co)
{
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
    if (p->mode == TX_IO)
        tx_json_io(j, p, pt, r, f);
    if (p->mode == TX_GAP)
        tx_json_gap(j, p, pt, r, f);
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
    tx_json_irqs(j, c->b, r, f, delta);
    bu_json_ku64(j, "received", r->received);
    bu_json_ku64(j, "received_bytes", r->rx_bytes);
    bu_json_ku64(j, "bad_content", r->bad_content);
    bu_json_ku64(j, "bad_length", r->bad_len);
    bu_json_ku64(j, "bad_status", r->bad_status);
    bu_json_ku64(j, "bad_header", r->bad_header);
    bu_json_ku64(j, "out_of_order", r->out_of_order);
    bu_json_ku64(j, "lost", f->lost);
    bu_json_ku64(j, "drops_total", r->drops_total);
    tx_json_counters(j, p, r, delta, co);
    bu_json_kstr(j, "result", f->ok ? "ok" : "fail");
    bu_json_obj_end(j);
}

/* A failed run's details on stderr: what was lost, bad and dropped. */
void tx_explain(const struct tx_params *p, const struct tx_point *pt, unsigned run,
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
