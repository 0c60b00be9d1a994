// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_rr.c: `nicbench rr`, request/response latency between two simulated NIC + host systems
 * back to back (sim backend with peer=1; cmd_rr.h): its options, the two hosts' queues, the
 * sweep over sizes. Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "cmd_rr.h"

/* The options into *a, checked in the order the usage errors name them. */
static int rr_parse(int argc, char **argv, struct rr_args *a)
{
    const char *sizes_s = "60,128,512,1514";
    const char *coalesce_s = NULL;
    *a = (struct rr_args){.count = 200, .poll_ns = 8};
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
            if ((rc = cli_parse_num("--count", optarg, &a->count)))
                return rc;
            break;
        case 'p':
            if ((rc = cli_parse_num("--poll-ns", optarg, &a->poll_ns)))
                return rc;
            break;
        case 'r':
            if ((rc = cli_parse_num("--reply-size", optarg, &a->reply_size)))
                return rc;
            if (a->reply_size < TX_HDR || a->reply_size > NIC_Q_FRAME_MAX)
                return usage_error("--reply-size: frame of %" PRIu64 " bytes: must be %u..%u "
                                   "(without FCS)", a->reply_size, TX_HDR, NIC_Q_FRAME_MAX);
            break;
        case 'i':
            a->irq = true;
            break;
        case 'C':
            coalesce_s = optarg;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    int rc = frame_sizes(sizes_s, a->sizes, &a->nsizes, &a->max_size);
    if (rc)
        return rc;
    if (a->reply_size > a->max_size)
        a->max_size = a->reply_size;
    if ((rc = cli_range("--count", a->count, 1, 1000000, NULL)) ||
        (rc = cli_range("--poll-ns", a->poll_ns, 1, 1000000, NULL)))
        return rc;
    char err[512];
    nic_q_coalesce_defaults(&a->co);
    if (coalesce_s && nic_q_coalesce_parse(coalesce_s, &a->co, err, sizeof err) < 0)
        return usage_error("--coalesce: %s", err);
    if (coalesce_s && !a->irq)
        return usage_error("rr: --coalesce delays interrupts: it needs --irq");
    return EXIT_OK;
}

static int rr_backend_check(struct ctx *c, struct rr_side *s, const char *what)
{
    const char *e = nic_last_error(s->b);
    if (e)
        return fail(c, "%s: host %s: backend error: %s", what, s->name, e);
    return EXIT_OK;
}

/* Each host's queues: one TX queue and the RX ring, the coalescing settings, the MSIs the run
 * takes (polling: none; --irq: the RX vector's and TX vector 0's). */
static int rr_open(struct ctx *c, const struct rr_args *a, struct rr_side *side)
{
    char err[512];
    int rc = EXIT_OK;
    const struct nic_q_config qc = {.ntxq = 1, .tx_ring = RR_RING, .tx_limit = 0,
                                    .rx_ring = RR_RING,
                                    .buf_size = (unsigned)(a->max_size < NIC_Q_FRAME_MIN ?
                                                           NIC_Q_FRAME_MIN : a->max_size),
                                    .sched_mode = 0};
    for (int k = 0; k < 2 && !rc; k++) {
        struct rr_side *s = &side[k];
        if (nic_q_open(&s->nq, s->b, &qc, c->timeout_ns, err, sizeof err) < 0)
            rc = fail(c, "rr: host %s: %s", s->name, err);
        else
            s->open = true;
        if (!rc && nic_q_coalesce_set(&s->nq, &a->co, err, sizeof err) < 0)
            rc = fail(c, "rr: host %s: %s", s->name, err);
        nic_msi_enable(s->b, a->irq ? nic_msi_bit(nic_q_rx_msi(s->b)) |
                                      nic_msi_bit(nic_q_tx_vector_msi(s->b, 0)) : 0);
        if (!rc && nic_irq_drain(s->b) < 0)
            rc = fail(c, "rr: host %s: irq drain failed", s->name);
        if (!rc)
            rc = rr_backend_check(c, s, "rr setup");
    }
    return rc;
}

/* What the run does, before its table. */
static void rr_intro(struct ctx *c, const struct rr_args *a)
{
    out(c, "rr: %" PRIu64 " round trips per size between host A and host B (two simulated "
        "NIC + host systems, GMII back to back): A sends a request on TX queue 0 (one "
        "doorbell), B %s and sends a response of %s, A does the same and takes the "
        "round-trip time (simulated ns, from before A's send to A seeing the response); every "
        "frame checked bit-exact\n", a->count,
        a->irq ? "sleeps until its RX MSI, then reads its RX ring" : "polls its RX ring",
        a->reply_size ? "--reply-size bytes" : "the request's size");
    if (!a->irq)
        out(c, "  polls every %" PRIu64 " ns\n", a->poll_ns);
}

/* One size: the hosts' counters before and after its round trips, its row and record; *ok
 * false when it failed. */
static int rr_size(struct ctx *c, const struct rr_args *a, struct rr_run *r, uint32_t size,
                   struct bu_table *t, bool *ok)
{
    struct rr_side *side = r->side;
    struct rr_point p = {.size = size, .reply = a->reply_size ? (uint32_t)a->reply_size : size};
    for (int k = 0; k < 2; k++) {
        p.msis0[k] = side[k].rx_msis;
        p.tx_msis0[k] = side[k].tx_msis;
        p.order0[k] = side[k].order_errors;
    }
    for (int k = 0; k < 2; k++)
        side[k].have_model = rr_model(&side[k], side[k].m0);
    /* ---- hot path: no MMIO read on either host from here ---- */
    int rc = rr_round_trips(c, a, r, &p);
    /* ---- end of the hot path ---- */
    for (int k = 0; k < 2; k++)
        side[k].have_model &= rr_model(&side[k], side[k].m1);
    for (int k = 0; k < 2 && !rc; k++)
        rc = rr_backend_check(c, &side[k], "rr run");
    if (!rc)
        *ok = rr_report(c, a, r, &p, t);
    return rc;
}

/* Both hosts' queues closed (B first), then B's backend (its model errors listed). */
static int rr_close(struct ctx *c, struct rr_side *side, int rc)
{
    for (int k = 1; k >= 0; k--) {
        char cerr[512] = "";
        if (side[k].open && nic_q_close(&side[k].nq, c->timeout_ns, cerr, sizeof cerr) < 0 &&
            !rc)
            rc = fail(c, "rr: host %s: closing the queues: %s", side[k].name, cerr);
        if (!rc)
            rc = rr_backend_check(c, &side[k], "rr");
    }
    nic_close(side[1].b);       /* lists B's model errors; B is freed with A */
    return rc;
}

int cmd_rr(struct ctx *c, int argc, char **argv)
{
    struct rr_args a;
    int rc = rr_parse(argc, argv, &a);
    if (rc || (rc = open_backend(c, c->opts)))
        return rc;
    struct nic_backend *bb = nic_backend_sim_peer(c->b);
    if (!bb)
        return fail(c, "rr: needs two NICs back to back: the sim backend opened with peer=1 "
                    "(--backend sim --opts ...,peer=1); this %s backend has no peer",
                    c->b->kind);
    char err[512];
    struct nic_dev_info info_b;
    if (nic_dev_check(bb, &info_b, err, sizeof err) < 0)
        return fail(c, "rr: host B: bring-up check failed: %s", err);
    print_params(c, "params: ");
    struct rr_run r = {.side = {{.name = "A", .b = c->b}, {.name = "B", .b = bb}}};
    rc = rr_open(c, &a, r.side);
    r.want = malloc(NIC_Q_FRAME_MAX);
    r.got = malloc(NIC_Q_FRAME_MAX);
    r.rtt = calloc(a.count, sizeof *r.rtt);
    if (!rc && (!r.want || !r.got || !r.rtt))
        rc = fail(c, "rr: out of memory");
    rr_intro(c, &a);
    struct bu_table t;
    rr_table_init(&t);
    bool any_bad = false;
    for (size_t si = 0; si < a.nsizes && !rc; si++) {
        bool ok = true;
        rc = rr_size(c, &a, &r, (uint32_t)a.sizes[si], &t, &ok);
        any_bad |= !ok;
    }
    if (!c->run.quiet && t.nrows)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    rr_table_notes(c, &r);
    free(r.want);
    free(r.got);
    free(r.rtt);
    rc = rr_close(c, r.side, rc);
    if (!rc && any_bad)
        rc = fail(c, "rr: requests or responses corrupted, MMIO reads on the hot path or MSIs "
                  "before what they announce (see the table and the messages above)");
    return rc;
}
