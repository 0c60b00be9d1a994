// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_rr.c: `nicbench rr`, request/response latency between two simulated NIC + host systems
 * back to back (sim backend with peer=1). Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

/* --- rr: request/response between two simulated hosts ----------------------------------------- */

#define RR_MAX_ERR_PRINT 10              /* mismatches printed per size */
#define RR_RING 64u                      /* TX and RX descriptors per ring, each host */
#define RR_MSI_SLICE_NS 10000u           /* --irq: irq_wait slice between timeout checks */

struct rr_side {
    const char *name;                    /* "A" or "B" */
    struct nic_backend *b;
    struct nic_queues nq;
    bool open;
    uint64_t m0[3], m1[3];               /* model.tlps_down_mrd, mmio_reads, mmio_writes */
    bool have_model;
    uint64_t rx_msis;                    /* --irq: RX MSIs taken */
    uint64_t tx_msis;                    /* --irq: TX MSIs taken */
    uint64_t order_errors;               /* --irq: MSIs that came before what they announce */
    bool rx_msi_early;                   /* an RX MSI taken while waiting for the TX one */
};

static const char *const rr_mnames[3] = {"tlps_down_mrd", "mmio_reads", "mmio_writes"};

/* Frame `seq` of `size` bytes: a request (A -> B) or a response (B -> A). Ethernet header
 * (locally administered addresses ending 0a for A, 0b for B; EtherType 0x88b5), byte 14 'Q' or
 * 'R', 15 0, 16..19 the sequence number (LE), then bytes of a PRNG seeded by (kind, size, seq). */
static void rr_frame_fill(uint8_t *p, uint32_t size, bool response, uint32_t seq)
{
    static const uint8_t mac_a[6] = {0x02, 0x4e, 0x49, 0x43, 0x00, 0x0a};
    static const uint8_t mac_b[6] = {0x02, 0x4e, 0x49, 0x43, 0x00, 0x0b};
    memcpy(p, response ? mac_a : mac_b, 6);
    memcpy(p + 6, response ? mac_b : mac_a, 6);
    p[12] = 0x88;
    p[13] = 0xb5;
    p[14] = response ? 'R' : 'Q';
    p[15] = 0;
    for (int k = 0; k < 4; k++)
        p[16 + k] = (uint8_t)(seq >> (8 * k));
    uint64_t st = bu_rand_seed((uint64_t)response << 63 ^ (uint64_t)size << 32 ^ seq);
    for (uint32_t i = TX_HDR; i < size; i += 8) {
        const uint64_t x = bu_rand(&st);
        for (uint32_t k = 0; k < 8 && i + k < size; k++)
            p[i + k] = (uint8_t)(x >> (8 * k));
    }
}

/* Post one frame on queue 0 (one doorbell), waiting for ring room if needed. */
static int rr_send(struct ctx *c, struct rr_side *s, const uint8_t *data, uint32_t size)
{
    char err[512];
    const struct nic_q_frame fr = {.data = data, .len = size};
    const uint64_t t0 = nic_now_ns(s->b);
    for (;;) {
        const int m = nic_q_tx_send(&s->nq, 0, &fr, 1, err, sizeof err);
        if (m < 0)
            return fail(c, "rr: host %s: %s", s->name, err);
        if (m == 1)
            return EXIT_OK;
        if (nic_q_tx_reclaim(&s->nq, 0, err, sizeof err) < 0)
            return fail(c, "rr: host %s: %s", s->name, err);
        if (nic_now_ns(s->b) - t0 > c->timeout_ns)
            return fail(c, "rr: host %s: TX ring full for %" PRIu64 " ns", s->name,
                        c->timeout_ns);
        nic_idle(s->b, 100);
    }
}

/* --irq, after a send: wait for s's TX MSI (vector 0) and reclaim TX queue 0. The one frame
 * posted is what the interrupt announces: its consumer-index writeback must be in host memory
 * when the MSI arrives (with the sim backend the host runs at the MSI's arrival, no interrupt
 * latency), or it is an ordering error (counted; the writeback is reclaimed later). */
static int rr_tx_msi(struct ctx *c, struct rr_side *s)
{
    char err[512];
    const uint64_t t0 = nic_now_ns(s->b);
    const uint32_t tx = nic_msi_bit(nic_q_tx_vector_msi(s->b, 0));
    const uint32_t rx = nic_msi_bit(nic_q_rx_msi(s->b));
    for (;;) {
        uint32_t src = 0;
        const int r = nic_msi_wait_sources(s->b, RR_MSI_SLICE_NS, &src);
        if (r < 0) {
            const char *e = nic_last_error(s->b);
            return fail(c, "rr: host %s: irq_wait failed: %s", s->name, e ? e : "?");
        }
        s->rx_msi_early |= r == 1 && (src & rx);
        if (r == 1 && (src & tx)) {
            s->tx_msis++;
            const int freed = nic_q_tx_reclaim(&s->nq, 0, err, sizeof err);
            if (freed < 0)
                return fail(c, "rr: host %s: %s", s->name, err);
            if (freed == 0 && s->order_errors++ < RR_MAX_ERR_PRINT)
                fprintf(stderr, "nicbench: rr: host %s: TX MSI before the consumer-index "
                        "writeback of the frame it announces\n", s->name);
            return EXIT_OK;
        }
        if (nic_now_ns(s->b) - t0 > c->timeout_ns)
            return fail(c, "rr: host %s: no TX MSI within %" PRIu64 " ns", s->name,
                        c->timeout_ns);
    }
}

/* Wait for one frame on s's RX ring until it comes or the timeout: 1 with *f and *t_ns (backend
 * time when the host saw it), 0 on timeout, -1 on a backend error (failed with its message).
 * Polling: the ring every poll_ns. irq: the host sleeps until the RX MSI, then polls the ring,
 * as an interrupt-driven driver does (coalescing delays the MSI, and so the frame); the MSI
 * announces the frame, so its completion record must be there (else an ordering error is
 * counted and the ring polled until it comes). */
static int rr_wait(struct ctx *c, struct rr_side *s, struct nic_q_rx_frame *f, uint64_t poll_ns,
                   bool irq, uint64_t *t_ns)
{
    const uint64_t t0 = nic_now_ns(s->b);
    const uint32_t rx = nic_msi_bit(nic_q_rx_msi(s->b));
    bool polling = !irq;
    for (;;) {
        bool look = polling;
        if (s->rx_msi_early) {
            s->rx_msi_early = false;
            s->rx_msis++;
            look = true;
        } else if (!polling) {
            uint32_t src = 0;
            const int r = nic_msi_wait_sources(s->b, RR_MSI_SLICE_NS, &src);
            if (r < 0) {
                const char *e = nic_last_error(s->b);
                fail(c, "rr: host %s: irq_wait failed: %s", s->name, e ? e : "?");
                return -1;
            }
            look = r == 1 && (src & rx);
            s->rx_msis += look;
        }
        if (look && nic_q_rx_poll(&s->nq, f, 1) == 1) {
            *t_ns = nic_now_ns(s->b);
            return 1;
        }
        if (look && !polling) {
            if (s->order_errors++ < RR_MAX_ERR_PRINT)
                fprintf(stderr, "nicbench: rr: host %s: RX MSI before the completion record "
                        "it announces\n", s->name);
            polling = true;
        }
        if (nic_now_ns(s->b) - t0 > c->timeout_ns)
            return 0;
        if (polling)
            nic_idle(s->b, poll_ns);
    }
}

/* A received frame against the frame expected (size bytes, then the MAC's zero padding to
 * 60): 0 when bit-exact, else 1 with a message (the first RR_MAX_ERR_PRINT). */
static int rr_check(const struct nic_q_rx_frame *f, const uint8_t *want, uint32_t size,
                    uint8_t *got, const char *what, uint32_t seq, int *printed)
{
    const uint32_t len = size < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : size;
    char msg[256] = "";
    if (f->status != 0) {
        snprintf(msg, sizeof msg, "completion status %u", f->status);
    } else if (f->len != len) {
        snprintf(msg, sizeof msg, "%u bytes, expected %u", f->len, len);
    } else {
        for (uint32_t k = 0; k < len; k++)
            got[k] = f->data[k];
        for (uint32_t k = 0; k < len && !msg[0]; k++) {
            const uint8_t w = k < size ? want[k] : 0;
            if (got[k] != w)
                snprintf(msg, sizeof msg, "byte %u is %#04x, expected %#04x", k, got[k], w);
        }
    }
    if (!msg[0])
        return 0;
    if ((*printed)++ < RR_MAX_ERR_PRINT)
        fprintf(stderr, "nicbench: rr: size %u: %s %u: %s\n", size, what, seq, msg);
    return 1;
}

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

static bool rr_model(struct rr_side *s, uint64_t *v)
{
    bool ok = true;
    for (int k = 0; k < 3; k++) {
        char full[64];
        snprintf(full, sizeof full, "model.%s", rr_mnames[k]);
        ok &= nic_counter(s->b, full, &v[k]) == 0;
    }
    return ok;
}

static int rr_backend_check(struct ctx *c, struct rr_side *s, const char *what)
{
    const char *e = nic_last_error(s->b);
    if (e)
        return fail(c, "%s: host %s: backend error: %s", what, s->name, e);
    return EXIT_OK;
}

int cmd_rr(struct ctx *c, int argc, char **argv)
{
    const char *sizes_s = "60,128,512,1514";
    const char *coalesce_s = NULL;
    uint64_t count = 200, poll_ns = 8, reply_size = 0;
    bool irq = false;
    static const struct option opts[] = {
        {"sizes", required_argument, NULL, 's'},      {"size", required_argument, NULL, 's'},
        {"count", required_argument, NULL, 'c'},      {"poll-ns", required_argument, NULL, 'p'},
        {"reply-size", required_argument, NULL, 'r'}, {"irq", no_argument, NULL, 'i'},
        {"coalesce", required_argument, NULL, 'C'},   {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("rr", argc, argv, opts)) != -1) {
        int rc;
        switch (o) {
        case 's':
            sizes_s = optarg;
            break;
        case 'c':
            if ((rc = cli_parse_num("--count", optarg, &count)))
                return rc;
            break;
        case 'p':
            if ((rc = cli_parse_num("--poll-ns", optarg, &poll_ns)))
                return rc;
            break;
        case 'r':
            if ((rc = cli_parse_num("--reply-size", optarg, &reply_size)))
                return rc;
            if (reply_size < TX_HDR || reply_size > NIC_Q_FRAME_MAX)
                return usage_error("--reply-size: frame of %" PRIu64 " bytes: must be %u..%u "
                                   "(without FCS)", reply_size, TX_HDR, NIC_Q_FRAME_MAX);
            break;
        case 'i':
            irq = true;
            break;
        case 'C':
            coalesce_s = optarg;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    uint64_t sizes[MAX_SIZES];
    size_t nsizes;
    uint64_t max_size = 0;
    int rc = frame_sizes(sizes_s, sizes, &nsizes, &max_size);
    if (rc)
        return rc;
    if (reply_size > max_size)
        max_size = reply_size;
    if ((rc = cli_range("--count", count, 1, 1000000, NULL)) ||
        (rc = cli_range("--poll-ns", poll_ns, 1, 1000000, NULL)))
        return rc;
    char err[512];
    struct nic_q_coalesce co;
    nic_q_coalesce_defaults(&co);
    if (coalesce_s && nic_q_coalesce_parse(coalesce_s, &co, err, sizeof err) < 0)
        return usage_error("--coalesce: %s", err);
    if (coalesce_s && !irq)
        return usage_error("rr: --coalesce delays interrupts: it needs --irq");
    if ((rc = open_backend(c, c->opts)))
        return rc;
    struct nic_backend *bb = nic_backend_sim_peer(c->b);
    if (!bb)
        return fail(c, "rr: needs two NICs back to back: the sim backend opened with peer=1 "
                    "(--backend sim --opts ...,peer=1); this %s backend has no peer",
                    c->b->kind);
    struct nic_dev_info info_b;
    if (nic_dev_check(bb, &info_b, err, sizeof err) < 0)
        return fail(c, "rr: host B: bring-up check failed: %s", err);
    print_params(c, "params: ");
    struct rr_side side[2] = {{.name = "A", .b = c->b}, {.name = "B", .b = bb}};
    struct rr_side *A = &side[0], *B = &side[1];
    const struct nic_q_config qc = {.ntxq = 1, .tx_ring = RR_RING, .tx_limit = 0,
                                    .rx_ring = RR_RING,
                                    .buf_size = (unsigned)(max_size < NIC_Q_FRAME_MIN ?
                                                           NIC_Q_FRAME_MIN : max_size),
                                    .sched_mode = 0};
    for (int k = 0; k < 2 && !rc; k++) {
        if (nic_q_open(&side[k].nq, side[k].b, &qc, c->timeout_ns, err, sizeof err) < 0)
            rc = fail(c, "rr: host %s: %s", side[k].name, err);
        else
            side[k].open = true;
        if (!rc && nic_q_coalesce_set(&side[k].nq, &co, err, sizeof err) < 0)
            rc = fail(c, "rr: host %s: %s", side[k].name, err);
        /* polling: no MSIs; --irq: the RX vector's and TX vector 0's */
        nic_msi_enable(side[k].b, irq ? nic_msi_bit(nic_q_rx_msi(side[k].b)) |
                                        nic_msi_bit(nic_q_tx_vector_msi(side[k].b, 0)) : 0);
        if (!rc && nic_irq_drain(side[k].b) < 0)
            rc = fail(c, "rr: host %s: irq drain failed", side[k].name);
        if (!rc)
            rc = rr_backend_check(c, &side[k], "rr setup");
    }
    uint8_t *want = malloc(NIC_Q_FRAME_MAX), *got = malloc(NIC_Q_FRAME_MAX);
    uint64_t *rtt = calloc(count, sizeof *rtt);
    if (!rc && (!want || !got || !rtt))
        rc = fail(c, "rr: out of memory");
    out(c, "rr: %" PRIu64 " round trips per size between host A and host B (two simulated "
        "NIC + host systems, GMII back to back): A sends a request on TX queue 0 (one "
        "doorbell), B %s and sends a response of %s, A does the same and takes the "
        "round-trip time (simulated ns, from before A's send to A seeing the response); every "
        "frame checked bit-exact\n", count,
        irq ? "sleeps until its RX MSI, then reads its RX ring" : "polls its RX ring",
        reply_size ? "--reply-size bytes" : "the request's size");
    if (!irq)
        out(c, "  polls every %" PRIu64 " ns\n", poll_ns);

    static const char *const hdr[] = {"size_B", "reply_B", "count", "rtt_min_ns",
                                      "rtt_med_ns", "rtt_p99_ns", "rtt_max_ns", "rtt_mean_ns",
                                      "half_rtt_ns", "trans/s", "frame_wire_ns", "mmio_rd_A",
                                      "mmio_rd_B", "bad", "result"};
    enum { RR_COLS = sizeof hdr / sizeof hdr[0] };
    struct bu_table t;
    bu_table_init(&t, RR_COLS, hdr);
    bool any_bad = false;
    for (size_t si = 0; si < nsizes && !rc; si++) {
        const uint32_t size = (uint32_t)sizes[si];
        const uint32_t reply = reply_size ? (uint32_t)reply_size : size;
        uint64_t bad_req = 0, bad_resp = 0, done = 0;
        int printed = 0;
        const uint64_t msis0[2] = {A->rx_msis, B->rx_msis};
        const uint64_t tx_msis0[2] = {A->tx_msis, B->tx_msis};
        const uint64_t order0[2] = {A->order_errors, B->order_errors};
        for (int k = 0; k < 2; k++)
            side[k].have_model = rr_model(&side[k], side[k].m0);
        /* ---- hot path: no MMIO read on either host from here ---- */
        for (uint64_t i = 0; i < count && !rc; i++) {
            const uint32_t seq = (uint32_t)i;
            struct nic_q_rx_frame f;
            uint64_t t_b, t1;
            rr_frame_fill(want, size, false, seq);
            const uint64_t t0 = nic_now_ns(A->b);
            if ((rc = rr_send(c, A, want, size)) || (irq && (rc = rr_tx_msi(c, A))))
                break;
            if (rr_wait(c, B, &f, poll_ns, irq, &t_b) != 1) {
                rc = fail(c, "rr: size %u: request %u not received by host B within %" PRIu64
                          " ns", size, seq, c->timeout_ns);
                break;
            }
            bad_req += (uint64_t)rr_check(&f, want, size, got, "request", seq, &printed);
            rr_frame_fill(want, reply, true, seq);
            if ((rc = rr_send(c, B, want, reply)) || (irq && (rc = rr_tx_msi(c, B))))
                break;
            if (rr_wait(c, A, &f, poll_ns, irq, &t1) != 1) {
                rc = fail(c, "rr: size %u: response %u not received by host A within %" PRIu64
                          " ns", size, seq, c->timeout_ns);
                break;
            }
            bad_resp += (uint64_t)rr_check(&f, want, reply, got, "response", seq, &printed);
            rtt[done++] = t1 - t0;
            /* Off the timed path (between round trips): repost the RX buffers, reclaim TX. */
            for (int k = 0; k < 2; k++) {
                nic_q_rx_refill(&side[k].nq);
                if (nic_q_tx_reclaim(&side[k].nq, 0, err, sizeof err) < 0) {
                    rc = fail(c, "rr: host %s: %s", side[k].name, err);
                    break;
                }
            }
        }
        /* ---- end of the hot path ---- */
        for (int k = 0; k < 2; k++)
            side[k].have_model &= rr_model(&side[k], side[k].m1);
        for (int k = 0; k < 2 && !rc; k++)
            rc = rr_backend_check(c, &side[k], "rr run");
        if (rc)
            break;
        uint64_t rd[2], rdm[2], wr[2];
        for (int k = 0; k < 2; k++) {
            rd[k] = side[k].m1[0] - side[k].m0[0];
            rdm[k] = side[k].m1[1] - side[k].m0[1];
            wr[k] = side[k].m1[2] - side[k].m0[2];
        }
        const bool have_model = A->have_model && B->have_model;
        const bool mmio_ok = !have_model || (rd[0] == 0 && rd[1] == 0);
        const uint64_t order = A->order_errors - order0[0] + B->order_errors - order0[1];
        const bool ok = bad_req == 0 && bad_resp == 0 && mmio_ok && order == 0;
        any_bad |= !ok;
        struct bu_dist d;
        bu_dist_compute(rtt, done, &d);
        const uint64_t frame_wire_ns = rr_wire_ns(size), reply_wire_ns = rr_wire_ns(reply);
        /* one transaction at a time: transactions per simulated second */
        const double tps = d.mean > 0 ? 1e9 / d.mean : NAN;
        char cells[RR_COLS][32];
        snprintf(cells[0], 32, "%u", size);
        snprintf(cells[1], 32, "%u", reply);
        snprintf(cells[2], 32, "%" PRIu64, done);
        snprintf(cells[3], 32, "%" PRIu64, d.min);
        snprintf(cells[4], 32, "%" PRIu64, d.median);
        snprintf(cells[5], 32, "%" PRIu64, d.p99);
        snprintf(cells[6], 32, "%" PRIu64, d.max);
        snprintf(cells[7], 32, "%.1f", d.mean);
        snprintf(cells[8], 32, "%.1f", (double)d.median / 2.0);
        snprintf(cells[9], 32, "%.0f", tps);
        snprintf(cells[10], 32, "%" PRIu64, frame_wire_ns);
        for (int k = 0; k < 2; k++) {
            if (have_model)
                snprintf(cells[11 + k], 32, "%" PRIu64, rd[k]);
            else
                snprintf(cells[11 + k], 32, "n/a");
        }
        snprintf(cells[13], 32, "%" PRIu64, bad_req + bad_resp);
        snprintf(cells[14], 32, "%s", ok ? "ok" : "FAIL");
        const char *row[RR_COLS];
        for (int k = 0; k < RR_COLS; k++)
            row[k] = cells[k];
        bu_table_row(&t, row);

        struct bu_json *j = &c->rec;
        bu_json_obj_begin(j);
        bu_json_kstr(j, "experiment", "rr");
        bu_json_ku64(j, "size", size);
        bu_json_ku64(j, "reply_size", reply);
        bu_json_ku64(j, "wire_frame_bytes", rr_wire_bytes(size));
        bu_json_ku64(j, "reply_wire_frame_bytes", rr_wire_bytes(reply));
        bu_json_ku64(j, "count", done);
        bu_json_ku64(j, "poll_ns", poll_ns);
        bu_json_key(j, "irq");
        bu_json_bool(j, irq);
        bu_json_ku64(j, "rx_msis_a", A->rx_msis - msis0[0]);
        bu_json_ku64(j, "rx_msis_b", B->rx_msis - msis0[1]);
        bu_json_ku64(j, "tx_msis_a", A->tx_msis - tx_msis0[0]);
        bu_json_ku64(j, "tx_msis_b", B->tx_msis - tx_msis0[1]);
        bu_json_ku64(j, "irq_order_errors", order);
        json_coalesce(j, &co);
        bu_json_ku64(j, "rtt_min_ns", d.min);
        bu_json_ku64(j, "rtt_median_ns", d.median);
        bu_json_ku64(j, "rtt_p99_ns", d.p99);
        bu_json_ku64(j, "rtt_max_ns", d.max);
        bu_json_kdouble(j, "rtt_mean_ns", d.mean);
        bu_json_kdouble(j, "half_rtt_ns", (double)d.median / 2.0);
        bu_json_ku64(j, "frame_wire_ns", frame_wire_ns);
        bu_json_ku64(j, "reply_frame_wire_ns", reply_wire_ns);
        bu_json_kdouble(j, "transactions_per_s", tps);
        for (int k = 0; k < 2; k++) {
            char key[48];
            snprintf(key, sizeof key, "mmio_read_tlps_hot_%c", k ? 'b' : 'a');
            json_opt_u64(j, key, have_model, rd[k]);
            snprintf(key, sizeof key, "mmio_reads_hot_%c", k ? 'b' : 'a');
            json_opt_u64(j, key, have_model, rdm[k]);
            snprintf(key, sizeof key, "mmio_writes_hot_%c", k ? 'b' : 'a');
            json_opt_u64(j, key, have_model, wr[k]);
        }
        bu_json_ku64(j, "bad_requests", bad_req);
        bu_json_ku64(j, "bad_responses", bad_resp);
        bu_json_kstr(j, "result", ok ? "ok" : "fail");
        bu_json_obj_end(j);
        if (!ok)
            fprintf(stderr, "nicbench: rr: size %u (reply %u): %" PRIu64 " bad requests, %" PRIu64
                    " bad responses, hot-path MMIO read TLPs A %" PRIu64 " B %" PRIu64 ", %"
                    PRIu64 " MSIs before what they announce\n",
                    size, reply, bad_req, bad_resp, rd[0], rd[1], order);
    }
    if (!c->run.quiet && t.nrows)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    out(c, "  rtt: simulated ns from A's send (descriptor + doorbell) to A's poll seeing the "
        "response; half_rtt_ns: rtt_med / 2 (one-way latency, host to host); trans/s: 10^9 / "
        "rtt_mean_ns, request/reply transactions per simulated second, one at a time; "
        "frame_wire_ns: one request frame's serialisation at 1 Gb/s (preamble, frame padded "
        "to 60 B, FCS); mmio_rd_A/B: MMIO read TLPs (model.tlps_down_mrd) of each host over "
        "the size's round trips\n");
    {
        uint64_t fa, fb, fp;
        if (nic_counter(A->b, "wire.tx_frames", &fa) == 0 &&
            nic_counter(B->b, "wire.tx_frames", &fb) == 0 &&
            nic_counter(A->b, "wire.pcap_frames", &fp) == 0)
            out(c, "  wire: %" PRIu64 " frames A->B, %" PRIu64 " frames B->A, %" PRIu64
                " written to the pcap\n", fa, fb, fp);
    }
    free(want);
    free(got);
    free(rtt);
    for (int k = 1; k >= 0; k--) {
        char cerr[512] = "";
        if (side[k].open && nic_q_close(&side[k].nq, c->timeout_ns, cerr, sizeof cerr) < 0 &&
            !rc)
            rc = fail(c, "rr: host %s: closing the queues: %s", side[k].name, cerr);
        if (!rc)
            rc = rr_backend_check(c, &side[k], "rr");
    }
    nic_close(bb);              /* lists B's model errors; B is freed with A */
    if (!rc && any_bad)
        rc = fail(c, "rr: requests or responses corrupted, MMIO reads on the hot path or MSIs "
                  "before what they announce (see the table and the messages above)");
    return rc;
}
