// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_loopback.c: `nicbench loopback`, reader -> writer loopback of random data at random sizes
 * and offsets, bit-exact. Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

/* --- loopback --misaligned ----------------------------------------------------------------------
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

/* One loopback transfer armed: the writer first (it waits for data), then the reader's
 * descriptor, its engine left disabled for the caller to start after draining interrupts. */
static void arm_one(struct nic_backend *b, uint64_t dst, uint64_t src, uint32_t size)
{
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    nic_dma_table_reset(b, NIC_DMA_WRITER);
    nic_dma_set_loop(b, NIC_DMA_WRITER, false);
    nic_dma_push(b, NIC_DMA_WRITER, dst, size, NIC_DMA_LAST_DISABLE);
    nic_dma_enable(b, NIC_DMA_WRITER, true);
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_dma_table_reset(b, NIC_DMA_READER);
    nic_dma_set_loop(b, NIC_DMA_READER, false);
    nic_dma_push(b, NIC_DMA_READER, src, size, NIC_DMA_IRQ_DISABLE);
}

static int loopback_misaligned(struct ctx *c)
{
    struct nic_backend *b = c->b;
    uint64_t src_bus, dst_bus;
    uint8_t *src = nic_dma_alloc(b, MIS_AREA, &src_bus);
    uint8_t *dst = src ? nic_dma_alloc(b, MIS_AREA, &dst_bus) : NULL;
    if (!dst)
        return fail(c, "loopback --misaligned: cannot allocate DMA memory: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");
    if (src_bus % DMA_ALIGN_PAGE || dst_bus % DMA_ALIGN_PAGE)
        return fail(c, "loopback --misaligned: DMA buffers not 4 KiB aligned");
    if (!nic_rb_find(b, NIC_RB_PCIE_DMA0_GUARD))
        return fail(c, "loopback --misaligned: the SoC has no pcie_dma0_guard block: its DMA "
                    "does not refuse the descriptors it cannot move");
    const uint32_t align = nic_dma_hw_align(b);
    uint64_t v;
    if (!mis_counter(c, "model.tlps_up_mrd", &v))
        return fail(c, "loopback --misaligned: needs the sim backend (host model TLP counts)");
    out(c, "loopback --misaligned: DMA alignment %u B (PCIE_DMA0_GUARD_ALIGN), guard %u B\n",
        align, MIS_GUARD);
    out(c, "%6s %7s %7s %7s %8s %8s %9s\n", "#", "size_B", "src_off", "dst_off", "reader",
        "writer", "result");
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
                const uint32_t so = MIS_PAGE_AT + (variant == 1 ? 0 : off);
                const uint32_t doff = MIS_PAGE_AT + (variant == 2 ? 0 : off);
                uint8_t before[MIS_GUARD * 2 + 64];
                const uint32_t win = 2 * MIS_GUARD + size;
                for (uint32_t k = 0; k < 64 + 2 * MIS_GUARD; k++) {
                    src[so - MIS_GUARD + k] = (uint8_t)bu_rand(&rng);
                    before[k] = (uint8_t)~src[so - MIS_GUARD + k];
                }
                memcpy(dst + doff - MIS_GUARD, before, win);
                uint64_t mrd0, mwr0, mrd1, mwr1;
                mis_counter(c, "model.tlps_up_mrd", &mrd0);
                mis_counter(c, "model.tlps_up_mwr", &mwr0);
                const uint32_t r0 = nic_dma_refused(b, NIC_DMA_READER);
                const uint32_t w0 = nic_dma_refused(b, NIC_DMA_WRITER);

                arm_one(b, dst_bus + doff, src_bus + so, size);
                if (nic_irq_drain(b) < 0)
                    return fail(c, "loopback --misaligned: irq drain failed");
                nic_dma_enable(b, NIC_DMA_READER, true);
                bool msi = false;
                const uint64_t deadline = nic_now_ns(b) + MIS_WAIT_NS;
                while (!msi && nic_now_ns(b) < deadline) {
                    unsigned vec = 0;
                    if (nic_irq_wait_vector(b, 1000, &vec) == 1 && vec == wr_irq)
                        msi = true;
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
                mis_counter(c, "model.tlps_up_mrd", &mrd1);
                mis_counter(c, "model.tlps_up_mwr", &mwr1);
                const uint32_t rd_ref = nic_dma_refused(b, NIC_DMA_READER) - r0;
                const uint32_t wr_ref = nic_dma_refused(b, NIC_DMA_WRITER) - w0;
                const bool rd_bad = !align || so % align || size % align || !size;
                const bool wr_bad = !align || doff % align || size % align || !size;
                char why[160] = "";
                const volatile uint8_t *d = dst + doff - MIS_GUARD;
                bool same = true, exact = true, guards = true;
                for (uint32_t k = 0; k < win; k++) {
                    if (d[k] != before[k])
                        same = false;
                    if ((k < MIS_GUARD || k >= MIS_GUARD + size) && d[k] != before[k])
                        guards = false;
                }
                for (uint32_t k = 0; k < size; k++)
                    if (d[MIS_GUARD + k] != src[so + k])
                        exact = false;
                if (rd_ref > 1 || wr_ref > 1)
                    snprintf(why, sizeof why, "refused counted %u/%u times", rd_ref, wr_ref);
                else if (rd_ref != rd_bad || wr_ref != wr_bad)
                    snprintf(why, sizeof why, "refused reader %u writer %u, want %d %d (align "
                             "%u)", rd_ref, wr_ref, rd_bad, wr_bad, align);
                else if (rd_ref && mrd1 != mrd0)
                    snprintf(why, sizeof why, "reader refused, yet %" PRIu64 " MRd",
                             mrd1 - mrd0);
                else if (wr_ref && mwr1 != mwr0)
                    snprintf(why, sizeof why, "writer refused, yet %" PRIu64 " MWr",
                             mwr1 - mwr0);
                else if ((rd_ref || wr_ref) && (!same || msi))
                    snprintf(why, sizeof why, "refused, yet %s", msi ? "the writer's MSI came"
                             : "the destination changed");
                else if (!rd_ref && !wr_ref && !guards)
                    snprintf(why, sizeof why, "guard bytes around the destination overwritten");
                else if (!rd_ref && !wr_ref && (!exact || !msi))
                    snprintf(why, sizeof why, "taken by both engines but %s",
                             msi ? "the bytes differ" : "no writer MSI");
                const char *result = why[0] ? "BAD" : rd_ref || wr_ref ? "refused" : "moved";
                if (why[0]) {
                    bad++;
                    fprintf(stderr, "nicbench: misaligned case %u (%u B, src +%u, dst +%u): "
                            "%s\n", n, size, so - MIS_PAGE_AT, doff - MIS_PAGE_AT, why);
                } else if (rd_ref || wr_ref) {
                    refused++;
                } else {
                    moved++;
                }
                out(c, "%6u %7u %7u %7u %8s %8s %9s\n", n, size, so - MIS_PAGE_AT,
                    doff - MIS_PAGE_AT, rd_ref ? "refused" : "taken",
                    wr_ref ? "refused" : "taken", result);
                bu_json_obj_begin(&c->rec);
                bu_json_kstr(&c->rec, "experiment", "loopback_misaligned");
                bu_json_ku64(&c->rec, "index", n);
                bu_json_ku64(&c->rec, "size", size);
                bu_json_ku64(&c->rec, "src_offset", so - MIS_PAGE_AT);
                bu_json_ku64(&c->rec, "dst_offset", doff - MIS_PAGE_AT);
                bu_json_key(&c->rec, "reader_refused");
                bu_json_bool(&c->rec, rd_ref != 0);
                bu_json_key(&c->rec, "writer_refused");
                bu_json_bool(&c->rec, wr_ref != 0);
                bu_json_ku64(&c->rec, "mrd_tlps", mrd1 - mrd0);
                bu_json_ku64(&c->rec, "mwr_tlps", mwr1 - mwr0);
                bu_json_kstr(&c->rec, "result", why[0] ? "bad" : result);
                bu_json_obj_end(&c->rec);
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

/* --- loopback ---------------------------------------------------------------------------------- */

int cmd_loopback(struct ctx *c, int argc, char **argv)
{
    uint64_t count = 16, seed = 1, max_size = 64u << 10;
    bool unaligned = false, misaligned = false;
    static const struct option opts[] = {
        {"count", required_argument, NULL, 'c'}, {"seed", required_argument, NULL, 's'},
        {"max-size", required_argument, NULL, 'm'}, {"unaligned", no_argument, NULL, 'u'},
        {"misaligned", no_argument, NULL, 'M'}, {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("loopback", argc, argv, opts)) != -1) {
        int rc = EXIT_OK;
        switch (o) {
        case 'c':
            rc = cli_parse_num("--count", optarg, &count);
            break;
        case 's':
            rc = cli_parse_num("--seed", optarg, &seed);
            break;
        case 'm':
            rc = cli_parse_num("--max-size", optarg, &max_size);
            break;
        case 'u':
            unaligned = true;
            break;
        case 'M':
            misaligned = true;
            break;
        default:
            return EXIT_USAGE;
        }
        if (rc)
            return rc;
    }
    int rc = cli_range("--count", count, 1, 1000000, NULL);
    if (rc)
        return rc;
    if (max_size < 16 || max_size % 16)
        return usage_error("--max-size: %" PRIu64 " is not a positive multiple of 16", max_size);
    if ((rc = open_backend(c, c->opts)))
        return rc;
    if (misaligned) {
        print_params(c, "params: ");
        return loopback_misaligned(c);
    }
    struct nic_backend *b = c->b;
    if (max_size > nic_dma_max_len() || max_size % c->align)
        return fail(c, "--max-size %" PRIu64 " unusable: at most %u and a multiple of %u",
                    max_size, nic_dma_max_len(), c->align);
    print_params(c, "params: ");

    /* Two areas of 2 x max_size each: room for random offsets. */
    const size_t area = (size_t)max_size * 2;
    uint64_t src_bus, dst_bus;
    uint8_t *src = nic_dma_alloc(b, area, &src_bus);
    uint8_t *dst = src ? nic_dma_alloc(b, area, &dst_bus) : NULL;
    if (!dst) {
        const char *e = nic_last_error(b);
        return fail(c, "loopback: cannot allocate 2 x %zu bytes of DMA memory: %s", area,
                    e ? e : "?");
    }
    if (src_bus % DMA_ALIGN_PAGE || dst_bus % DMA_ALIGN_PAGE)
        return fail(c, "loopback: DMA buffers not 4 KiB aligned (%#" PRIx64 ", %#" PRIx64 ")",
                    src_bus, dst_bus);

    out(c, "loopback: %" PRIu64 " transfers, sizes 16..%" PRIu64 " B, %s offsets, seed %" PRIu64
        "\n", count, max_size, unaligned ? "16 B-aligned" : "4 KiB-aligned", seed);
    out(c, "%6s %9s %10s %10s %12s %7s\n", "#", "size_B", "src_off", "dst_off", "time_ns",
        "result");
    uint64_t rng = bu_rand_seed(seed);
    const uint64_t gran = unaligned ? 16 : DMA_ALIGN_PAGE;
    uint64_t bad_transfers = 0, bytes = 0;
    nic_dma_stop(b, NIC_DMA_READER);
    nic_dma_stop(b, NIC_DMA_WRITER);
    nic_pattern_gen_enable(b, false);
    nic_dma_loopback(b, true);
    nic_msi_enable(b, nic_msi_bit(nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1)));

    for (uint64_t n = 0; n < count; n++) {
        const uint32_t size = (uint32_t)(16 * (1 + bu_rand(&rng) % (max_size / 16)));
        const uint64_t so = gran * (bu_rand(&rng) % ((area - size) / gran + 1));
        const uint64_t doff = gran * (bu_rand(&rng) % ((area - size) / gran + 1));
        for (uint32_t k = 0; k < size; k += 8) {
            const uint64_t x = bu_rand(&rng);
            memcpy(src + so + k, &x, 8);
        }
        for (uint32_t k = 0; k < size; k++)
            dst[doff + k] = (uint8_t)~src[so + k];

        arm_one(b, dst_bus + doff, src_bus + so, size);
        if (nic_irq_drain(b) < 0) {
            rc = fail(c, "loopback: irq drain failed: %s",
                      nic_last_error(b) ? nic_last_error(b) : "?");
            break;
        }
        if ((rc = backend_check(c, "loopback setup")))
            break;

        char what[96];
        snprintf(what, sizeof what, "loopback transfer %" PRIu64 " (%u B, src +%#" PRIx64
                 ", dst +%#" PRIx64 ")", n, size, so, doff);
        const uint64_t t0 = nic_now_ns(b);
        nic_dma_enable(b, NIC_DMA_READER, true);
        if ((rc = wait_msi(c, nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1), what)) || (rc = wait_tail(c, dst + doff + size - 16,
                                                        src + so + size - 16, what)))
            break;
        const uint64_t t1 = nic_now_ns(b);

        size_t diff = 0, first = 0;
        for (uint32_t k = 0; k < size; k++)
            if (((const volatile uint8_t *)dst)[doff + k] != src[so + k]) {
                if (!diff)
                    first = k;
                diff++;
            }
        nic_dma_enable(b, NIC_DMA_READER, false);
        nic_dma_enable(b, NIC_DMA_WRITER, false);
        if ((rc = backend_check(c, what)))
            break;
        bytes += size;
        out(c, "%6" PRIu64 " %9u %#10" PRIx64 " %#10" PRIx64 " %12" PRIu64 " %7s\n", n, size, so,
            doff, t1 - t0, diff ? "BAD" : "ok");
        if (diff) {
            bad_transfers++;
            fprintf(stderr, "nicbench: transfer %" PRIu64 ": %zu of %u bytes differ, first at "
                    "byte %zu: got %#04x, expected %#04x\n", n, diff, size, first,
                    ((const volatile uint8_t *)dst)[doff + first], src[so + first]);
        }
        bu_json_obj_begin(&c->rec);
        bu_json_kstr(&c->rec, "experiment", "loopback");
        bu_json_ku64(&c->rec, "index", n);
        bu_json_ku64(&c->rec, "size", size);
        bu_json_ku64(&c->rec, "src_offset", so);
        bu_json_ku64(&c->rec, "dst_offset", doff);
        bu_json_key(&c->rec, "unaligned");
        bu_json_bool(&c->rec, unaligned);
        bu_json_ku64(&c->rec, "time_ns", t1 - t0);
        bu_json_ku64(&c->rec, "bytes_differing", diff);
        bu_json_kstr(&c->rec, "result", diff ? "mismatch" : "ok");
        bu_json_obj_end(&c->rec);
    }
    if (rc)
        return rc;
    quiesce(c);
    nic_dma_free(b, dst, area);
    nic_dma_free(b, src, area);
    if ((rc = backend_check(c, "loopback")))
        return rc;
    if (bad_transfers) {
        printf("loopback: %" PRIu64 " transfers, %" PRIu64 " with mismatches\n", count,
               bad_transfers);
        return fail(c, "loopback: %" PRIu64 " of %" PRIu64 " transfers differ", bad_transfers,
                    count);
    }
    out(c, "loopback: %" PRIu64 " transfers, %" PRIu64 " bytes, 0 mismatches\n", count, bytes);
    return EXIT_OK;
}
