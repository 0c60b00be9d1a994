// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_rr_report.c: `nicbench rr`'s figures (cmd_rr.h): the hosts' model counters, a size's
 * round-trip distribution, MMIO reads and MSI order, its table row, JSON record and failure line;
 * the notes after the table.
 */
#define _GNU_SOURCE
#include "cmd_rr.h"

static const char *const rr_mnames[3] = {"tlps_down_mrd", "mmio_reads", "mmio_writes"};

static const char *const rr_hdr[] = {"size_B", "reply_B", "count", "rtt_min_ns", "rtt_med_ns",
                                     "rtt_p99_ns", "rtt_max_ns", "rtt_mean_ns", "half_rtt_ns",
                                     "trans/s", "frame_wire_ns", "mmio_rd_A", "mmio_rd_B", "bad",
                                     "result"};
enum { RR_COLS = sizeof rr_hdr / sizeof rr_hdr[0] };

/* A size's figures. */
struct rr_figs {
    uint64_t rd[2], rdm[2], wr[2];      /* per host: MMIO read TLPs, reads, writes */
    bool have_model;                    /* both hosts have the model counters */
    uint64_t order;                     /* MSIs before what they announce, both hosts */
    bool ok;
    struct bu_dist d;                   /* the round-trip times */
    double tps;                         /* transactions per simulated second */
};

/* A frame of `size` bytes (no FCS) on the wire: padded to 60 B, with its FCS; and its
 * serialisation at 1 Gb/s, with the preamble. */
static uint32_t rr_wire_bytes(uint32_t size)
{
    return (size < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : size) + FCS_BYTES;
}

static uint64_t rr_wire_ns(uint32_t size)
{
    return (uint64_t)(rr_wire_bytes(size) + WIRE_PREAMBLE) * 8u;
}

bool rr_model(struct rr_side *s, uint64_t *v)
{
    bool ok = true;
    for (int k = 0; k < 3; k++) {
        char full[64];
        snprintf(full, sizeof full, "model.%s", rr_mnames[k]);
        ok &= nic_counter(s->b, full, &v[k]) == 0;
    }
    return ok;
}

void rr_table_init(struct bu_table *t)
{
    bu_table_init(t, RR_COLS, rr_hdr);
}

static void rr_figures(const struct rr_run *r, const struct rr_point *p, struct rr_figs *g)
{
    const struct rr_side *side = r->side, *A = &side[0], *B = &side[1];
    for (int k = 0; k < 2; k++) {
        g->rd[k] = side[k].m1[0] - side[k].m0[0];
        g->rdm[k] = side[k].m1[1] - side[k].m0[1];
        g->wr[k] = side[k].m1[2] - side[k].m0[2];
    }
    g->have_model = A->have_model && B->have_model;
    const bool mmio_ok = !g->have_model || (g->rd[0] == 0 && g->rd[1] == 0);
    g->order = A->order_errors - p->order0[0] + B->order_errors - p->order0[1];
    g->ok = p->bad_req == 0 && p->bad_resp == 0 && mmio_ok && g->order == 0;
    bu_dist_compute(r->rtt, p->done, &g->d);
    /* one transaction at a time: transactions per simulated second */
    g->tps = g->d.mean > 0 ? 1e9 / g->d.mean : NAN;
}

static void rr_row(struct bu_table *t, const struct rr_point *p, const struct rr_figs *g)
{
    const struct bu_dist *d = &g->d;
    char cells[RR_COLS][32];
    snprintf(cells[0], 32, "%u", p->size);
    snprintf(cells[1], 32, "%u", p->reply);
    snprintf(cells[2], 32, "%" PRIu64, p->done);
    snprintf(cells[3], 32, "%" PRIu64, d->min);
    snprintf(cells[4], 32, "%" PRIu64, d->median);
    snprintf(cells[5], 32, "%" PRIu64, d->p99);
    snprintf(cells[6], 32, "%" PRIu64, d->max);
    snprintf(cells[7], 32, "%.1f", d->mean);
    snprintf(cells[8], 32, "%.1f", (double)d->median / 2.0);
    snprintf(cells[9], 32, "%.0f", g->tps);
    snprintf(cells[10], 32, "%" PRIu64, rr_wire_ns(p->size));
    for (int k = 0; k < 2; k++) {
        if (g->have_model)
            snprintf(cells[11 + k], 32, "%" PRIu64, g->rd[k]);
        else
            snprintf(cells[11 + k], 32, "n/a");
    }
    snprintf(cells[13], 32, "%" PRIu64, p->bad_req + p->bad_resp);
    snprintf(cells[14], 32, "%s", g->ok ? "ok" : "FAIL");
    const char *row[RR_COLS];
    for (int k = 0; k < RR_COLS; k++)
        row[k] = cells[k];
    bu_table_row(t, row);
}

static void rr_json(struct ctx *c, const struct rr_args *a, const struct rr_run *r,
                    const struct rr_point *p, const struct rr_figs *g)
{
    const struct rr_side *A = &r->side[0], *B = &r->side[1];
    const struct bu_dist *d = &g->d;
    struct bu_json *j = &c->rec;
    bu_json_obj_begin(j);
    bu_json_kstr(j, "experiment", "rr");
    bu_json_ku64(j, "size", p->size);
    bu_json_ku64(j, "reply_size", p->reply);
    bu_json_ku64(j, "wire_frame_bytes", rr_wire_bytes(p->size));
    bu_json_ku64(j, "reply_wire_frame_bytes", rr_wire_bytes(p->reply));
    bu_json_ku64(j, "count", p->done);
    bu_json_ku64(j, "poll_ns", a->poll_ns);
    bu_json_key(j, "irq");
    bu_json_bool(j, a->irq);
    bu_json_ku64(j, "rx_msis_a", A->rx_msis - p->msis0[0]);
    bu_json_ku64(j, "rx_msis_b", B->rx_msis - p->msis0[1]);
    bu_json_ku64(j, "tx_msis_a", A->tx_msis - p->tx_msis0[0]);
    bu_json_ku64(j, "tx_msis_b", B->tx_msis - p->tx_msis0[1]);
    bu_json_ku64(j, "irq_order_errors", g->order);
    json_coalesce(j, &a->co);
    bu_json_ku64(j, "rtt_min_ns", d->min);
    bu_json_ku64(j, "rtt_median_ns", d->median);
    bu_json_ku64(j, "rtt_p99_ns", d->p99);
    bu_json_ku64(j, "rtt_max_ns", d->max);
    bu_json_kdouble(j, "rtt_mean_ns", d->mean);
    bu_json_kdouble(j, "half_rtt_ns", (double)d->median / 2.0);
    bu_json_ku64(j, "frame_wire_ns", rr_wire_ns(p->size));
    bu_json_ku64(j, "reply_frame_wire_ns", rr_wire_ns(p->reply));
    bu_json_kdouble(j, "transactions_per_s", g->tps);
    for (int k = 0; k < 2; k++) {
        char key[48];
        snprintf(key, sizeof key, "mmio_read_tlps_hot_%c", k ? 'b' : 'a');
        json_opt_u64(j, key, g->have_model, g->rd[k]);
        snprintf(key, sizeof key, "mmio_reads_hot_%c", k ? 'b' : 'a');
        json_opt_u64(j, key, g->have_model, g->rdm[k]);
        snprintf(key, sizeof key, "mmio_writes_hot_%c", k ? 'b' : 'a');
        json_opt_u64(j, key, g->have_model, g->wr[k]);
    }
    bu_json_ku64(j, "bad_requests", p->bad_req);
    bu_json_ku64(j, "bad_responses", p->bad_resp);
    bu_json_kstr(j, "result", g->ok ? "ok" : "fail");
    bu_json_obj_end(j);
}

bool rr_report(struct ctx *c, const struct rr_args *a, const struct rr_run *r,
               const struct rr_point *p, struct bu_table *t)
{
    struct rr_figs g;
    rr_figures(r, p, &g);
    rr_row(t, p, &g);
    rr_json(c, a, r, p, &g);
    if (!g.ok)
        fprintf(stderr, "nicbench: rr: size %u (reply %u): %" PRIu64 " bad requests, %" PRIu64
                " bad responses, hot-path MMIO read TLPs A %" PRIu64 " B %" PRIu64 ", %"
                PRIu64 " MSIs before what they announce\n",
                p->size, p->reply, p->bad_req, p->bad_resp, g.rd[0], g.rd[1], g.order);
    return g.ok;
}

void rr_table_notes(struct ctx *c, const struct rr_run *r)
{
    const struct rr_side *A = &r->side[0], *B = &r->side[1];
    out(c, "  rtt: simulated ns from A's send (descriptor + doorbell) to A's poll seeing the "
        "response; half_rtt_ns: rtt_med / 2 (one-way latency, host to host); trans/s: 10^9 / "
        "rtt_mean_ns, request/reply transactions per simulated second, one at a time; "
        "frame_wire_ns: one request frame's serialisation at 1 Gb/s (preamble, frame padded "
        "to 60 B, FCS); mmio_rd_A/B: MMIO read TLPs (model.tlps_down_mrd) of each host over "
        "the size's round trips\n");
    uint64_t fa, fb, fp;
    if (nic_counter(A->b, "wire.tx_frames", &fa) == 0 &&
        nic_counter(B->b, "wire.tx_frames", &fb) == 0 &&
        nic_counter(A->b, "wire.pcap_frames", &fp) == 0)
        out(c, "  wire: %" PRIu64 " frames A->B, %" PRIu64 " frames B->A, %" PRIu64
            " written to the pcap\n", fa, fb, fp);
}
