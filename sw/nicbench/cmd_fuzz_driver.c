// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_fuzz_driver.c: what `nicbench fuzz` does to the device (cmd_fuzz.h): its draws from the
 * seed, the frames (length and bytes from the seed alone) posted good, chained or bad, each
 * record received checked against the scoreboard, the driver's reset path and the control
 * actions.
 */
#define _GNU_SOURCE
#include "cmd_fuzz.h"

static uint64_t fz_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t fz_rand(struct fz *f) { return fz_mix(f->rng += 0x9e3779b97f4a7c15ull); }

bool fz_chance(struct fz *f, double p)
{
    return p > 0 && (double)(fz_rand(f) >> 11) * 0x1.0p-53 < p;
}

/* Frame (q, seq): its length and bytes follow from the seed alone. */
static uint32_t fz_len(const struct fz *f, unsigned q, uint64_t seq)
{
    const uint64_t h = fz_mix(f->seed ^ ((uint64_t)q << 56) ^ seq ^ 0x5a5a5a5a5a5aull);
    return f->smin + (uint32_t)(h % (f->smax - f->smin + 1));
}

static void fz_fill(const struct fz *f, uint8_t *p, unsigned q, uint64_t seq, uint32_t len)
{
    static const uint8_t mac[12] = {2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2};
    memcpy(p, mac, 12);
    p[12] = FZ_ETHERTYPE >> 8;
    p[13] = FZ_ETHERTYPE & 0xff;
    p[14] = 'F';
    p[15] = 'Z';
    p[16] = (uint8_t)q;
    p[17] = 0;
    for (int i = 0; i < 4; i++)
        p[18 + i] = (uint8_t)(seq >> (8 * i));
    p[22] = (uint8_t)len;
    p[23] = (uint8_t)(len >> 8);
    uint64_t s = fz_mix(f->seed ^ ((uint64_t)q << 48) ^ (seq << 8)), w = 0;
    for (uint32_t i = FZ_HDR; i < len; i++) {
        if ((i - FZ_HDR) % 8 == 0)
            w = fz_mix(s += 0x9e3779b97f4a7c15ull);
        p[i] = (uint8_t)(w >> (8 * ((i - FZ_HDR) % 8)));
    }
}

bool fz_counters(struct fz *f, uint64_t *v, size_t n)
{
    if (nic_q_counters_read(f->b, v, n, f->err, sizeof f->err) < 0)
        return false;
    return true;
}

void fz_cpl_read(struct fz *f, uint64_t *v)
{
    memset(v, 0, FZ_CPL_N * sizeof *v);
    if (!nic_rb_find(f->b, NIC_RB_PCIE_CPL))
        return;
    v[FZ_CPL_TIMEOUTS] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, TIMEOUTS));
    v[FZ_CPL_UR] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, UNSUPPORTED));
    v[FZ_CPL_CA] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, ABORTS));
    v[FZ_CPL_EP] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, POISONED));
    v[FZ_LINK_DOWNS] = nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, LINK_DOWNS));
}

/* The link went down since the driver last reset for it (pcie_cpl_link_downs moved): the
 * TLPs in flight then were lost, so a frame may have lost part of its data. */
bool fz_link_moved(struct fz *f)
{
    return f->have_link && nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, LINK_DOWNS)) != f->link_seen;
}

/* A bad frame: lost to a link-down (the driver drops it and resets) or corrupted. */
static bool fz_bad_after_link_down(struct fz *f)
{
    if (!fz_link_moved(f))
        return false;
    f->link_suspect++;
    f->need_reset = true;
    return true;
}

/* One received record against the scoreboard. */
static void fz_check(struct fz *f, const struct nic_q_rx_frame *r)
{
    f->records++;
    if (r->status != NIC_RX_STATUS_OK) {
        /* too big / bad buffer: counted by the RX engine (rxe_drop_*) */
        return;
    }
    const volatile uint8_t *d = r->data;
    const uint32_t len = r->len;
    unsigned q = 0;
    uint64_t seq = 0;
    bool ok = len >= FZ_HDR && d[12] == (FZ_ETHERTYPE >> 8) && d[13] == (FZ_ETHERTYPE & 0xff) &&
              d[14] == 'F' && d[15] == 'Z';
    if (ok) {
        q = d[16];
        for (int i = 0; i < 4; i++)
            seq |= (uint64_t)d[18 + i] << (8 * i);
        ok = q < f->Q && seq < f->sent[q] && len == fz_len(f, q, seq) &&
             (uint32_t)(d[22] | d[23] << 8) == len;
    }
    if (ok) {
        fz_fill(f, f->frame, q, seq, len);
        for (uint32_t i = 0; i < len && ok; i++)
            ok = d[i] == f->frame[i];
    }
    if (!ok) {
        if (fz_bad_after_link_down(f))
            return;
        if (f->corrupted++ < 5)
            fprintf(stderr, "nicbench: fuzz: corrupted frame of %u bytes (buffer %u)%s\n", len,
                    r->index, len >= FZ_HDR ? "" : ": shorter than the header");
        return;
    }
    if ((int64_t)seq <= f->last_rx[q]) {
        if (fz_bad_after_link_down(f))
            return;
        if (f->out_of_order++ < 5)
            fprintf(stderr, "nicbench: fuzz: queue %u frame %" PRIu64 " after %" PRId64 "\n", q,
                    seq, f->last_rx[q]);
        return;
    }
    f->last_rx[q] = (int64_t)seq;
    f->received++;
}

int fz_poll(struct fz *f)
{
    struct nic_q_rx_frame recs[FZ_POLL];
    int n, total = 0;
    while ((n = nic_q_rx_poll(&f->nq, recs, FZ_POLL)) > 0) {
        for (int i = 0; i < n; i++)
            fz_check(f, &recs[i]);
        total += n;
        nic_q_rx_refill(&f->nq);
    }
    return total;
}

/* Put a descriptor into queue q's ring at its next slot (no copy). */
static void fz_put(struct fz *f, unsigned q, uint64_t addr, uint32_t len, bool eop,
                   uint16_t extra_flags)
{
    struct nic_txq *t = &f->nq.tx[q];
    const uint32_t i = nic_core_tx_put(t, addr, len, eop);
    t->desc[i].flags |= extra_flags;
}

static void fz_post_good(struct fz *f, unsigned q, uint64_t seq, enum fz_kind k);

/* Post one item of kind k on queue q (room checked by the caller: 3 slots). */
void fz_post_one(struct fz *f, unsigned q, enum fz_kind k)
{
    struct nic_txq *t = &f->nq.tx[q];
    const size_t slot = (size_t)t->next_to_use * f->nq.stride;
    const uint64_t bus = t->buf_bus + slot;
    f->kinds[k]++;
    f->pos_seq[q][t->next_to_use] = -1;             /* a bad descriptor, unless good below */
    if (k == FZ_LEN0 || k == FZ_OVERSIZE) {
        fz_put(f, q, bus, k == FZ_LEN0 ? 0 : NIC_Q_FRAME_MAX + 1 + (uint32_t)(fz_rand(f) % 4000),
               true, 0);
        f->bad_posted++;
        return;
    }
    if (k == FZ_NO_EOP) {
        memset(t->buf + slot, 0xee, 64);
        fz_put(f, q, bus, 64, false, 0);
        f->bad_posted++;
        f->no_eop_open[q] = true;
        return;
    }
    const uint64_t seq = f->sent[q]++;
    f->good++;
    fz_post_good(f, q, seq, k);
}

/* Good frame seq of queue q at the ring's next position: one descriptor, or a chain. */
static void fz_post_good(struct fz *f, unsigned q, uint64_t seq, enum fz_kind k)
{
    struct nic_txq *t = &f->nq.tx[q];
    const size_t slot = (size_t)t->next_to_use * f->nq.stride;
    const uint64_t bus = t->buf_bus + slot;
    const uint32_t len = fz_len(f, q, seq);
    fz_fill(f, t->buf + slot, q, seq, len);
    f->pos_seq[q][t->next_to_use] = (int64_t)seq;
    if (k == FZ_CHAIN && len >= 3) {
        /* two or three pieces at odd offsets of the one buffer */
        const uint32_t a = 1 + (uint32_t)(fz_rand(f) % (len - 2));
        const uint32_t b = a + 1 + (uint32_t)(fz_rand(f) % (len - a - 1));
        fz_put(f, q, bus, a, false, 0);
        f->pos_seq[q][t->next_to_use] = -2;         /* the chain's next pieces */
        fz_put(f, q, bus + a, b - a, false, 0);
        f->pos_seq[q][t->next_to_use] = -2;
        fz_put(f, q, bus + b, len - b, true, 0);
        return;
    }
    fz_put(f, q, bus, len, true, k == FZ_FLAGS ? (uint16_t)(0x8000 | (fz_rand(f) & 0x7ffe)) : 0);
}

int fz_txq_reset(struct fz *f, unsigned q)
{
    unsigned dropped = 0;
    fz_poll(f);
    struct nic_txq *t = &f->nq.tx[q];
    const uint32_t end = t->next_to_use;
    if (nic_q_tx_reset(&f->nq, q, f->c->timeout_ns, &dropped, f->err, sizeof f->err) < 0)
        return -1;
    f->no_eop_open[q] = false;
    /* The descriptors the device never fetched: the good frames among them are posted again,
     * in order, on the restarted ring (the rest, bad descriptors, are dropped). */
    int64_t seqs[FZ_RING];
    unsigned n = 0;
    for (unsigned i = 0; i < dropped; i++) {
        const int64_t sq = f->pos_seq[q][(end - dropped + i) & (t->size - 1)];
        if (sq >= 0)
            seqs[n++] = sq;
        else if (sq == -1)
            f->reset_dropped++;
    }
    for (unsigned i = 0; i < n; i++) {
        fz_post_good(f, q, (uint64_t)seqs[i], FZ_GOOD);
        f->reposted++;
    }
    nic_q_tx_doorbell(&f->nq, q);
    return 0;
}

static int fz_rx_reset(struct fz *f)
{
    if (nic_q_rx_stop(&f->nq, f->c->timeout_ns, f->err, sizeof f->err) < 0)
        return -1;
    fz_poll(f);
    nic_q_rx_restart(&f->nq);
    return 0;
}

/* The reset path on every TX queue and the RX ring (after a stall or a link-down). */
int fz_reset_all(struct fz *f)
{
    /* The count this reset answers for is taken first and made the seen one only after it:
     * frames polled during the reset are still judged against the link-down, and one that
     * happens meanwhile calls for the next reset. */
    const uint32_t links = f->have_link ? nic_read32(f->b, NIC_CSR(f->b, PCIE_CPL, LINK_DOWNS))
                                        : 0;
    f->need_reset = false;
    for (unsigned q = 0; q < f->Q; q++)
        if (fz_txq_reset(f, q) < 0)
            return -1;
    const int rc = fz_rx_reset(f);
    f->link_seen = links;
    return rc;
}

int fz_control(struct fz *f)
{
    uint64_t done = 0;
    for (int i = 0; i < FZ_CTLS; i++)
        done += f->ctls[i];
    const enum fz_ctl k = (enum fz_ctl)(done % FZ_CTLS);   /* each in turn, at random times */
    f->ctls[k]++;
    struct nic_backend *b = f->b;
    const uint64_t base = nic_rb_base(b, NIC_RB_NIC);
    switch (k) {
    case FZ_TXQ_RESET:
        return fz_txq_reset(f, (unsigned)(fz_rand(f) % f->Q));
    case FZ_RX_RESET:
        return fz_rx_reset(f);
    case FZ_TX_DB_RANGE: {
        const unsigned q = (unsigned)(fz_rand(f) % f->Q);
        nic_write32(b, base + NIC_CSR_NIC_TXQ_DB_ADDR,
                    NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_QUEUE, q) |
                        NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_INDEX,
                                    f->nq.tx[q].size + fz_rand(f) % 64));
        return 0;
    }
    case FZ_RX_DB_RANGE:
        nic_write32(b, base + NIC_CSR_NIC_RXE_DB_ADDR,
                    NIC_Q_FIELD(NIC_CSR_NIC_RXE_DB_INDEX, f->nq.rx.size + fz_rand(f) % 64));
        return 0;
    case FZ_COALESCE: {
        struct nic_q_coalesce co;
        nic_q_coalesce_defaults(&co);
        co.rx_usecs = (uint32_t)(fz_rand(f) % 40);
        co.rx_frames = (uint32_t)(fz_rand(f) % 33);
        co.tx_usecs = (uint32_t)(fz_rand(f) % 40);
        co.tx_frames = (uint32_t)(fz_rand(f) % 33);
        co.rx_min_interval = (uint32_t)(fz_rand(f) % 8);
        return nic_q_coalesce_set(&f->nq, &co, f->err, sizeof f->err);
    }
    default:
        return 0;
    }
}

enum fz_kind fz_pick(struct fz *f)
{
    if (!fz_chance(f, f->desc_p))
        return FZ_GOOD;
    return (enum fz_kind)(1 + fz_rand(f) % (FZ_KINDS - 1));
}
