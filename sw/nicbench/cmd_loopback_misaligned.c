// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_loopback_misaligned.c: `nicbench loopback --misaligned` (cmd_loopback.h).
 */
#define _GNU_SOURCE
#include "cmd_loopback.h"

/*
 * Descriptors the DMA may not be able to move (byte offsets, odd lengths, length 0), pushed as
 * they are, without nic_dma_desc_check(): reader from src + so, writer to dst + doff, through
 * the loopback. Each engine must either refuse its descriptor in hardware (its
 * PCIE_DMA0_GUARD_*_REFUSED + 1, no TLP of its kind: the host model's TLP counts) or take it;
 * when both take theirs the bytes arrive exactly (writer MSI, dst == src); when either refuses,
 * nothing is written (the destination and GUARD bytes either side unchanged). What is refused
 * must be what PCIE_DMA0_GUARD_ALIGN says: an address or length not a multiple of it, or 0. */

#define MIS_GUARD 64u
#define MIS_PAGE_AT 4096u                /* each buffer starts at page 1 + its offset */
#define MIS_AREA (3u * 4096u)
#define MIS_WAIT_NS 40000u               /* for the writer MSI of a transfer both engines took */

static const uint32_t mis_offsets[] = {0, 1, 2, 3, 4, 8, 12};
static const uint32_t mis_sizes[] = {64, 36, 17, 1, 0};

static bool mis_counter(struct ctx *c, const char *name, uint64_t *v)
{
    if (!counter(c, name, v)) {
        *v = 0;
        return false;
    }
    return true;
}

/* One case: its transfer and what it did. */
struct mis_case {
    unsigned n;                         /* its number */
    uint32_t size, so, doff;            /* so, doff: in the buffers (MIS_PAGE_AT + offset) */
    uint32_t win;                       /* the destination and its guard bytes */
    uint8_t before[MIS_GUARD * 2 + 64]; /* the window before the transfer */
    uint64_t mrd0, mwr0, mrd1, mwr1;    /* the host model's MRd and MWr TLP counts */
    uint32_t rd_ref, wr_ref;            /* refused by the reader, the writer */
    bool msi;                           /* the writer's MSI came */
};

/* The source's bytes (and guards) at random, the destination window their complement. */
static void mis_fill(uint8_t *src, uint8_t *dst, uint64_t *rng, struct mis_case *k)
{
    k->win = 2 * MIS_GUARD + k->size;
    for (uint32_t i = 0; i < 64 + 2 * MIS_GUARD; i++) {
        src[k->so - MIS_GUARD + i] = (uint8_t)bu_rand(rng);
        k->before[i] = (uint8_t)~src[k->so - MIS_GUARD + i];
    }
    memcpy(dst + k->doff - MIS_GUARD, k->before, k->win);
}

/* The case's transfer: armed, started, the writer's MSI awaited (MIS_WAIT_NS), both engines
 * stopped; the TLPs and refusals it made. */
static int mis_run(struct ctx *c, unsigned wr_irq, uint64_t src_bus, uint64_t dst_bus,
                   struct mis_case *k)
{
    struct nic_backend *b = c->b;
    mis_counter(c, "model.tlps_up_mrd", &k->mrd0);
    mis_counter(c, "model.tlps_up_mwr", &k->mwr0);
    const uint32_t r0 = nic_dma_refused(b, NIC_DMA_READER);
    const uint32_t w0 = nic_dma_refused(b, NIC_DMA_WRITER);

    arm_one(b, dst_bus + k->doff, src_bus + k->so, k->size);
    if (nic_irq_drain(b) < 0)
        return fail(c, "loopback --misaligned: irq drain failed");
    nic_dma_enable(b, NIC_DMA_READER, true);
    k->msi = false;
    const uint64_t deadline = nic_now_ns(b) + MIS_WAIT_NS;
    while (!k->msi && nic_now_ns(b) < deadline) {
        unsigned vec = 0;
        if (nic_irq_wait_vector(b, 1000, &vec) == 1 && vec == wr_irq)
            k->msi = true;
        if (nic_last_error(b))
            break;
    }
    nic_idle(b, 2000);                  /* writes in flight land */
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    nic_idle(b, 2000);                  /* the loopback drains */
    int rc = backend_check(c, "loopback --misaligned");
    if (rc)
        return rc;
    mis_counter(c, "model.tlps_up_mrd", &k->mrd1);
    mis_counter(c, "model.tlps_up_mwr", &k->mwr1);
    k->rd_ref = nic_dma_refused(b, NIC_DMA_READER) - r0;
    k->wr_ref = nic_dma_refused(b, NIC_DMA_WRITER) - w0;
    return EXIT_OK;
}

/* What is wrong with the case (why[0] 0: nothing): refused as PCIE_DMA0_GUARD_ALIGN says,
 * nothing written when refused, the bytes exactly and the guards intact when moved. */
static void mis_judge(const uint8_t *src, const uint8_t *dst, uint32_t align,
                      const struct mis_case *k, char *why, size_t len)
{
    const uint32_t so = k->so, doff = k->doff, size = k->size;
    const uint32_t rd_ref = k->rd_ref, wr_ref = k->wr_ref;
    const bool msi = k->msi;
    const bool rd_bad = !align || so % align || size % align || !size;
    const bool wr_bad = !align || doff % align || size % align || !size;
    const volatile uint8_t *d = dst + doff - MIS_GUARD;
    bool same = true, exact = true, guards = true;
    for (uint32_t i = 0; i < k->win; i++) {
        if (d[i] != k->before[i])
            same = false;
        if ((i < MIS_GUARD || i >= MIS_GUARD + size) && d[i] != k->before[i])
            guards = false;
    }
    for (uint32_t i = 0; i < size; i++)
        if (d[MIS_GUARD + i] != src[so + i])
            exact = false;
    why[0] = 0;
    if (rd_ref > 1 || wr_ref > 1)
        snprintf(why, len, "refused counted %u/%u times", rd_ref, wr_ref);
    else if (rd_ref != rd_bad || wr_ref != wr_bad)
        snprintf(why, len, "refused reader %u writer %u, want %d %d (align %u)", rd_ref, wr_ref,
                 rd_bad, wr_bad, align);
    else if (rd_ref && k->mrd1 != k->mrd0)
        snprintf(why, len, "reader refused, yet %" PRIu64 " MRd", k->mrd1 - k->mrd0);
    else if (wr_ref && k->mwr1 != k->mwr0)
        snprintf(why, len, "writer refused, yet %" PRIu64 " MWr", k->mwr1 - k->mwr0);
    else if ((rd_ref || wr_ref) && (!same || msi))
        snprintf(why, len, "refused, yet %s", msi ? "the writer's MSI came"
                 : "the destination changed");
    else if (!rd_ref && !wr_ref && !guards)
        snprintf(why, len, "guard bytes around the destination overwritten");
    else if (!rd_ref && !wr_ref && (!exact || !msi))
        snprintf(why, len, "taken by both engines but %s",
                 msi ? "the bytes differ" : "no writer MSI");
}

/* The case's table row and JSON record. */
static void mis_record(struct ctx *c, const struct mis_case *k, const char *why,
                       const char *result)
{
    out(c, "%6u %7u %7u %7u %8s %8s %9s\n", k->n, k->size, k->so - MIS_PAGE_AT,
        k->doff - MIS_PAGE_AT, k->rd_ref ? "refused" : "taken",
        k->wr_ref ? "refused" : "taken", result);
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "loopback_misaligned");
    bu_json_ku64(&c->rec, "index", k->n);
    bu_json_ku64(&c->rec, "size", k->size);
    bu_json_ku64(&c->rec, "src_offset", k->so - MIS_PAGE_AT);
    bu_json_ku64(&c->rec, "dst_offset", k->doff - MIS_PAGE_AT);
    bu_json_key(&c->rec, "reader_refused");
    bu_json_bool(&c->rec, k->rd_ref != 0);
    bu_json_key(&c->rec, "writer_refused");
    bu_json_bool(&c->rec, k->wr_ref != 0);
    bu_json_ku64(&c->rec, "mrd_tlps", k->mrd1 - k->mrd0);
    bu_json_ku64(&c->rec, "mwr_tlps", k->mwr1 - k->mwr0);
    bu_json_kstr(&c->rec, "result", why[0] ? "bad" : result);
    bu_json_obj_end(&c->rec);
}

/* The buffers and the SoC's guard, then the header lines: the DMA's alignment. */
static int mis_setup(struct ctx *c, uint8_t **src, uint8_t **dst, uint64_t *src_bus,
                     uint64_t *dst_bus, uint32_t *align)
{
    struct nic_backend *b = c->b;
    *src = nic_dma_alloc(b, MIS_AREA, src_bus);
    *dst = *src ? nic_dma_alloc(b, MIS_AREA, dst_bus) : NULL;
    if (!*dst)
        return fail(c, "loopback --misaligned: cannot allocate DMA memory: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");
    if (*src_bus % DMA_ALIGN_PAGE || *dst_bus % DMA_ALIGN_PAGE)
        return fail(c, "loopback --misaligned: DMA buffers not 4 KiB aligned");
    if (!nic_rb_find(b, NIC_RB_PCIE_DMA0_GUARD))
        return fail(c, "loopback --misaligned: the SoC has no pcie_dma0_guard block: its DMA "
                    "does not refuse the descriptors it cannot move");
    *align = nic_dma_hw_align(b);
    uint64_t v;
    if (!mis_counter(c, "model.tlps_up_mrd", &v))
        return fail(c, "loopback --misaligned: needs the sim backend (host model TLP counts)");
    out(c, "loopback --misaligned: DMA alignment %u B (PCIE_DMA0_GUARD_ALIGN), guard %u B\n",
        *align, MIS_GUARD);
    out(c, "%6s %7s %7s %7s %8s %8s %9s\n", "#", "size_B", "src_off", "dst_off", "reader",
        "writer", "result");
    return EXIT_OK;
}

int loopback_misaligned(struct ctx *c)
{
    struct nic_backend *b = c->b;
    uint64_t src_bus = 0, dst_bus = 0;
    uint8_t *src = NULL, *dst = NULL;
    uint32_t align = 0;
    int rc = mis_setup(c, &src, &dst, &src_bus, &dst_bus, &align);
    if (rc)
        return rc;
    nic_dma_stop(b, NIC_DMA_READER);
    nic_dma_stop(b, NIC_DMA_WRITER);
    nic_pattern_gen_enable(b, false);
    nic_dma_loopback(b, true);
    const unsigned wr_irq = nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1);
    nic_msi_enable(b, nic_msi_bit(wr_irq));
    uint64_t rng = bu_rand_seed(0x5eed);
    unsigned n = 0, bad = 0, moved = 0, refused = 0;
    const size_t noff = sizeof mis_offsets / sizeof mis_offsets[0];
    for (size_t oi = 0; oi < noff; oi++)
        for (size_t si = 0; si < sizeof mis_sizes / sizeof mis_sizes[0]; si++)
            for (unsigned variant = 0; variant < 3; variant++, n++) {
                /* both at the offset; only the destination; only the source */
                const uint32_t off = mis_offsets[oi], size = mis_sizes[si];
                if (off == 0 && variant)
                    continue;
                struct mis_case k = {.n = n, .size = size,
                                     .so = MIS_PAGE_AT + (variant == 1 ? 0 : off),
                                     .doff = MIS_PAGE_AT + (variant == 2 ? 0 : off)};
                mis_fill(src, dst, &rng, &k);
                if ((rc = mis_run(c, wr_irq, src_bus, dst_bus, &k)))
                    return rc;
                char why[160];
                mis_judge(src, dst, align, &k, why, sizeof why);
                const char *result = why[0] ? "BAD" : k.rd_ref || k.wr_ref ? "refused" : "moved";
                if (why[0]) {
                    bad++;
                    fprintf(stderr, "nicbench: misaligned case %u (%u B, src +%u, dst +%u): "
                            "%s\n", n, size, k.so - MIS_PAGE_AT, k.doff - MIS_PAGE_AT, why);
                } else if (k.rd_ref || k.wr_ref) {
                    refused++;
                } else {
                    moved++;
                }
                mis_record(c, &k, why, result);
            }
    quiesce(c);
    nic_dma_free(b, dst, MIS_AREA);
    nic_dma_free(b, src, MIS_AREA);
    out(c, "loopback --misaligned: %u moved exactly, %u refused, %u bad\n", moved, refused,
        bad);
    if (bad)
        return fail(c, "loopback --misaligned: %u cases neither moved exactly nor refused "
                    "cleanly", bad);
    return backend_check(c, "loopback --misaligned");
}
