// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_loopback.c: `nicbench loopback`, reader -> writer loopback of random data at random sizes
 * and offsets, bit-exact (cmd_loopback.h; --misaligned: cmd_loopback_misaligned.c). Options:
 * the usage text in main.c.
 */
#define _GNU_SOURCE
#include "cmd_loopback.h"

/* One loopback transfer armed: the writer first (it waits for data), then the reader's
 * descriptor, its engine left disabled for the caller to start after draining interrupts. */
void arm_one(struct nic_backend *b, uint64_t dst, uint64_t src, uint32_t size)
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

/* --- loopback ---------------------------------------------------------------------------------- */

struct lb_args {
    uint64_t count, seed, max_size;
    bool unaligned, misaligned;
};

static int lb_options(int argc, char **argv, struct lb_args *a)
{
    *a = (struct lb_args){.count = 16, .seed = 1, .max_size = 64u << 10};
    static const struct option opts[] = {
        {"count", required_argument, NULL, 'c'}, {"seed", required_argument, NULL, 's'},
        {"max-size", required_argument, NULL, 'm'}, {"unaligned", no_argument, NULL, 'u'},
        {"misaligned", no_argument, NULL, 'M'}, {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("loopback", argc, argv, opts)) != -1) {
        int rc = EXIT_OK;
        switch (o) {
        case 'c':
            rc = cli_parse_num("--count", optarg, &a->count);
            break;
        case 's':
            rc = cli_parse_num("--seed", optarg, &a->seed);
            break;
        case 'm':
            rc = cli_parse_num("--max-size", optarg, &a->max_size);
            break;
        case 'u':
            a->unaligned = true;
            break;
        case 'M':
            a->misaligned = true;
            break;
        default:
            return EXIT_USAGE;
        }
        if (rc)
            return rc;
    }
    int rc = cli_range("--count", a->count, 1, 1000000, NULL);
    if (rc)
        return rc;
    if (a->max_size < 16 || a->max_size % 16)
        return usage_error("--max-size: %" PRIu64 " is not a positive multiple of 16",
                           a->max_size);
    return EXIT_OK;
}

/* The source and destination areas, 2 x max_size each: room for random offsets. */
struct lb_bufs {
    size_t area;
    uint8_t *src, *dst;
    uint64_t src_bus, dst_bus;
};

static int lb_buffers(struct ctx *c, const struct lb_args *a, struct lb_bufs *m)
{
    struct nic_backend *b = c->b;
    m->area = (size_t)a->max_size * 2;
    m->src = nic_dma_alloc(b, m->area, &m->src_bus);
    m->dst = m->src ? nic_dma_alloc(b, m->area, &m->dst_bus) : NULL;
    if (!m->dst) {
        const char *e = nic_last_error(b);
        return fail(c, "loopback: cannot allocate 2 x %zu bytes of DMA memory: %s", m->area,
                    e ? e : "?");
    }
    if (m->src_bus % DMA_ALIGN_PAGE || m->dst_bus % DMA_ALIGN_PAGE)
        return fail(c, "loopback: DMA buffers not 4 KiB aligned (%#" PRIx64 ", %#" PRIx64 ")",
                    m->src_bus, m->dst_bus);
    return EXIT_OK;
}

/* One transfer, n: its size and offsets drawn, its data written, its time and the bytes that
 * differ. */
struct lb_xfer {
    uint64_t n;
    uint32_t size;
    uint64_t so, doff;
    uint64_t time_ns;
    size_t diff, first;                 /* bytes differing, the first */
};

static int lb_transfer(struct ctx *c, const struct lb_bufs *m, uint64_t gran, uint64_t *rng,
                       struct lb_xfer *x)
{
    struct nic_backend *b = c->b;
    uint8_t *src = m->src, *dst = m->dst;
    const size_t area = m->area;
    const uint32_t size = x->size;
    x->so = gran * (bu_rand(rng) % ((area - size) / gran + 1));
    x->doff = gran * (bu_rand(rng) % ((area - size) / gran + 1));
    const uint64_t so = x->so, doff = x->doff;
    for (uint32_t k = 0; k < size; k += 8) {
        const uint64_t v = bu_rand(rng);
        memcpy(src + so + k, &v, 8);
    }
    for (uint32_t k = 0; k < size; k++)
        dst[doff + k] = (uint8_t)~src[so + k];

    arm_one(b, m->dst_bus + doff, m->src_bus + so, size);
    if (nic_irq_drain(b) < 0)
        return fail(c, "loopback: irq drain failed: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");
    int rc;
    if ((rc = backend_check(c, "loopback setup")))
        return rc;

    char what[96];
    snprintf(what, sizeof what, "loopback transfer %" PRIu64 " (%u B, src +%#" PRIx64
             ", dst +%#" PRIx64 ")", x->n, size, so, doff);
    const uint64_t t0 = nic_now_ns(b);
    nic_dma_enable(b, NIC_DMA_READER, true);
    if ((rc = wait_msi(c, nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1), what)) ||
        (rc = wait_tail(c, dst + doff + size - 16, src + so + size - 16, what)))
        return rc;
    x->time_ns = nic_now_ns(b) - t0;

    x->diff = x->first = 0;
    for (uint32_t k = 0; k < size; k++)
        if (((const volatile uint8_t *)dst)[doff + k] != src[so + k]) {
            if (!x->diff)
                x->first = k;
            x->diff++;
        }
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    return backend_check(c, what);
}

/* The transfer's row, its mismatch (if any) and its JSON record. */
static void lb_record(struct ctx *c, const struct lb_args *a, const struct lb_bufs *m,
                      const struct lb_xfer *x)
{
    out(c, "%6" PRIu64 " %9u %#10" PRIx64 " %#10" PRIx64 " %12" PRIu64 " %7s\n", x->n, x->size,
        x->so, x->doff, x->time_ns, x->diff ? "BAD" : "ok");
    if (x->diff)
        fprintf(stderr, "nicbench: transfer %" PRIu64 ": %zu of %u bytes differ, first at "
                "byte %zu: got %#04x, expected %#04x\n", x->n, x->diff, x->size, x->first,
                ((const volatile uint8_t *)m->dst)[x->doff + x->first],
                m->src[x->so + x->first]);
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "loopback");
    bu_json_ku64(&c->rec, "index", x->n);
    bu_json_ku64(&c->rec, "size", x->size);
    bu_json_ku64(&c->rec, "src_offset", x->so);
    bu_json_ku64(&c->rec, "dst_offset", x->doff);
    bu_json_key(&c->rec, "unaligned");
    bu_json_bool(&c->rec, a->unaligned);
    bu_json_ku64(&c->rec, "time_ns", x->time_ns);
    bu_json_ku64(&c->rec, "bytes_differing", x->diff);
    bu_json_kstr(&c->rec, "result", x->diff ? "mismatch" : "ok");
    bu_json_obj_end(&c->rec);
}

int cmd_loopback(struct ctx *c, int argc, char **argv)
{
    struct lb_args a;
    int rc = lb_options(argc, argv, &a);
    if (rc || (rc = open_backend(c, c->opts)))
        return rc;
    if (a.misaligned) {
        print_params(c, "params: ");
        return loopback_misaligned(c);
    }
    struct nic_backend *b = c->b;
    if (a.max_size > nic_dma_max_len() || a.max_size % c->align)
        return fail(c, "--max-size %" PRIu64 " unusable: at most %u and a multiple of %u",
                    a.max_size, nic_dma_max_len(), c->align);
    print_params(c, "params: ");
    struct lb_bufs m;
    if ((rc = lb_buffers(c, &a, &m)))
        return rc;
    out(c, "loopback: %" PRIu64 " transfers, sizes 16..%" PRIu64 " B, %s offsets, seed %" PRIu64
        "\n", a.count, a.max_size, a.unaligned ? "16 B-aligned" : "4 KiB-aligned", a.seed);
    out(c, "%6s %9s %10s %10s %12s %7s\n", "#", "size_B", "src_off", "dst_off", "time_ns",
        "result");
    uint64_t rng = bu_rand_seed(a.seed);
    const uint64_t gran = a.unaligned ? 16 : DMA_ALIGN_PAGE;
    uint64_t bad_transfers = 0, bytes = 0;
    nic_dma_stop(b, NIC_DMA_READER);
    nic_dma_stop(b, NIC_DMA_WRITER);
    nic_pattern_gen_enable(b, false);
    nic_dma_loopback(b, true);
    nic_msi_enable(b, nic_msi_bit(nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1)));
    for (uint64_t n = 0; n < a.count; n++) {
        struct lb_xfer x = {.n = n, .size = (uint32_t)(16 * (1 + bu_rand(&rng) %
                                                              (a.max_size / 16)))};
        if ((rc = lb_transfer(c, &m, gran, &rng, &x)))
            return rc;
        bytes += x.size;
        bad_transfers += x.diff != 0;
        lb_record(c, &a, &m, &x);
    }
    quiesce(c);
    nic_dma_free(b, m.dst, m.area);
    nic_dma_free(b, m.src, m.area);
    if ((rc = backend_check(c, "loopback")))
        return rc;
    if (bad_transfers) {
        printf("loopback: %" PRIu64 " transfers, %" PRIu64 " with mismatches\n", a.count,
               bad_transfers);
        return fail(c, "loopback: %" PRIu64 " of %" PRIu64 " transfers differ", bad_transfers,
                    a.count);
    }
    out(c, "loopback: %" PRIu64 " transfers, %" PRIu64 " bytes, 0 mismatches\n", a.count,
        bytes);
    return EXIT_OK;
}
