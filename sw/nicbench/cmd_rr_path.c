// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_rr_path.c: `nicbench rr`'s round trips (cmd_rr.h): the frames, sending, waiting for the
 * TX and RX MSIs or polling the RX ring, each frame received checked; a size's round trips, the
 * hot path.
 */
#define _GNU_SOURCE
#include "cmd_rr.h"

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

/* One round trip of sequence number seq: A's request, B's response, its time into r->rtt. */
static int rr_round_trip(struct ctx *c, const struct rr_args *a, struct rr_run *r,
                         struct rr_point *p, uint32_t seq)
{
    struct rr_side *A = &r->side[0], *B = &r->side[1];
    const uint32_t size = p->size, reply = p->reply;
    const uint64_t poll_ns = a->poll_ns;
    const bool irq = a->irq;
    struct nic_q_rx_frame f;
    uint64_t t_b, t1;
    int rc;
    rr_frame_fill(r->want, size, false, seq);
    const uint64_t t0 = nic_now_ns(A->b);
    if ((rc = rr_send(c, A, r->want, size)) || (irq && (rc = rr_tx_msi(c, A))))
        return rc;
    if (rr_wait(c, B, &f, poll_ns, irq, &t_b) != 1)
        return fail(c, "rr: size %u: request %u not received by host B within %" PRIu64
                    " ns", size, seq, c->timeout_ns);
    p->bad_req += (uint64_t)rr_check(&f, r->want, size, r->got, "request", seq, &p->printed);
    rr_frame_fill(r->want, reply, true, seq);
    if ((rc = rr_send(c, B, r->want, reply)) || (irq && (rc = rr_tx_msi(c, B))))
        return rc;
    if (rr_wait(c, A, &f, poll_ns, irq, &t1) != 1)
        return fail(c, "rr: size %u: response %u not received by host A within %" PRIu64
                    " ns", size, seq, c->timeout_ns);
    p->bad_resp += (uint64_t)rr_check(&f, r->want, reply, r->got, "response", seq, &p->printed);
    r->rtt[p->done++] = t1 - t0;
    return EXIT_OK;
}

int rr_round_trips(struct ctx *c, const struct rr_args *a, struct rr_run *r, struct rr_point *p)
{
    char err[512];
    int rc = EXIT_OK;
    for (uint64_t i = 0; i < a->count && !rc; i++) {
        if ((rc = rr_round_trip(c, a, r, p, (uint32_t)i)))
            break;
        /* Off the timed path (between round trips): repost the RX buffers, reclaim TX. */
        for (int k = 0; k < 2; k++) {
            struct rr_side *s = &r->side[k];
            nic_q_rx_refill(&s->nq);
            if (nic_q_tx_reclaim(&s->nq, 0, err, sizeof err) < 0) {
                rc = fail(c, "rr: host %s: %s", s->name, err);
                break;
            }
        }
    }
    return rc;
}
