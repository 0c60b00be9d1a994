// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_loopback.c: `nicbench loopback`, reader -> writer loopback of random data at random sizes
 * and offsets, bit-exact. Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

/* --- loopback ---------------------------------------------------------------------------------- */

int cmd_loopback(struct ctx *c, int argc, char **argv)
{
    uint64_t count = 16, seed = 1, max_size = 64u << 10;
    bool unaligned = false;
    static const struct option opts[] = {
        {"count", required_argument, NULL, 'c'}, {"seed", required_argument, NULL, 's'},
        {"max-size", required_argument, NULL, 'm'}, {"unaligned", no_argument, NULL, 'u'},
        {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("loopback", argc, argv, opts)) != -1) {
        int rc = EXIT_OK;
        switch (o) {
        case 'c':
            rc = parse_num("--count", optarg, &count);
            break;
        case 's':
            rc = parse_num("--seed", optarg, &seed);
            break;
        case 'm':
            rc = parse_num("--max-size", optarg, &max_size);
            break;
        case 'u':
            unaligned = true;
            break;
        default:
            return EXIT_USAGE;
        }
        if (rc)
            return rc;
    }
    if (max_size < 16 || max_size % 16)
        return usage_error("--max-size: %" PRIu64 " is not a positive multiple of 16", max_size);
    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
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

        /* Writer first (it waits for data), then the reader feeds it through the loopback. */
        nic_dma_enable(b, NIC_DMA_WRITER, false);
        nic_dma_table_reset(b, NIC_DMA_WRITER);
        nic_dma_set_loop(b, NIC_DMA_WRITER, false);
        nic_dma_push(b, NIC_DMA_WRITER, dst_bus + doff, size, NIC_DMA_LAST_DISABLE);
        nic_dma_enable(b, NIC_DMA_WRITER, true);
        nic_dma_enable(b, NIC_DMA_READER, false);
        nic_dma_table_reset(b, NIC_DMA_READER);
        nic_dma_set_loop(b, NIC_DMA_READER, false);
        nic_dma_push(b, NIC_DMA_READER, src_bus + so, size, NIC_DMA_IRQ_DISABLE);
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
