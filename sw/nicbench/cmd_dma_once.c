// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_dma_once.c: `nicbench dma` one transfer at a time (cmd_dma.h): an h2c transfer checked
 * by the pattern checker, a c2h one checked in host memory; --latency, single reads timed at
 * the PHY by the host model.
 */
#define _GNU_SOURCE
#include "cmd_dma.h"

int dma_h2c_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns)
{
    struct nic_backend *b = c->b;
    const uint32_t seed = r->seed++;
    nic_pattern_fill(run_buf(r), size, seed);
    nic_pattern_chk_restart(b, seed, size);
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_dma_table_reset(b, NIC_DMA_READER);
    nic_dma_set_loop(b, NIC_DMA_READER, false);
    nic_dma_push(b, NIC_DMA_READER, run_bus(r), size, NIC_DMA_IRQ_DISABLE);
    if (nic_irq_drain(b) < 0)
        return fail(c, "h2c: irq_wait failed while draining MSIs: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");

    const uint64_t t0 = nic_now_ns(b);
    nic_dma_enable(b, NIC_DMA_READER, true);
    int rc = wait_msi(c, nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0), "h2c: checker interrupt");
    const uint64_t t1 = nic_now_ns(b);
    if (rc)
        return rc;
    *ns = t1 - t0;

    const uint64_t got = nic_pattern_chk_bytes(b);
    const uint32_t errors = nic_pattern_chk_errors(b);
    if (got != size || errors != 0)
        return fail(c, "h2c %u B (seed %#x): checker counted %" PRIu64 " bytes and %u "
                    "mismatching beats, expected %u bytes and 0", size, seed, got, errors, size);
    nic_dma_enable(b, NIC_DMA_READER, false);
    return backend_check(c, "h2c transfer");
}

int dma_c2h_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns)
{
    struct nic_backend *b = c->b;
    const uint32_t seed = r->seed++;
    uint32_t *w = (uint32_t *)run_buf(r);
    /* Sentinel: the pattern's complement, so no word already matches. */
    const size_t words = (size + 16 <= r->cap - r->off ? size + 16 : size) / 4;
    for (size_t i = 0; i < words; i++)
        w[i] = ~nic_pattern_word(seed, i);
    uint8_t tail[16];
    for (int k = 0; k < 4; k++) {
        const uint32_t v = nic_pattern_word(seed, size / 4 - 4 + (size_t)k);
        for (int j = 0; j < 4; j++)
            tail[4 * k + j] = (uint8_t)(v >> (8 * j));          /* little-endian */
    }

    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    if (nic_dma_writer_drain(b, c->timeout_ns) < 0)
        return fail(c, "c2h: writer buffering FIFO still holds %u bytes",
                    nic_dma_buffering_level(b, NIC_DMA_WRITER));
    nic_dma_table_reset(b, NIC_DMA_WRITER);
    nic_dma_set_loop(b, NIC_DMA_WRITER, false);
    nic_dma_push(b, NIC_DMA_WRITER, run_bus(r), size, NIC_DMA_LAST_DISABLE);
    nic_pattern_gen_seed(b, seed);
    nic_dma_enable(b, NIC_DMA_WRITER, true);
    if (nic_irq_drain(b) < 0)
        return fail(c, "c2h: irq_wait failed while draining MSIs: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");

    const uint64_t t0 = nic_now_ns(b);
    nic_pattern_gen_enable(b, true);
    int rc = wait_msi(c, nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1), "c2h: writer interrupt");
    if (rc)
        return rc;
    rc = wait_tail(c, (const volatile uint8_t *)run_buf(r) + size - 16, tail, "c2h");
    const uint64_t t1 = nic_now_ns(b);
    if (rc)
        return rc;
    *ns = t1 - t0;

    size_t first = 0;
    const size_t bad = nic_pattern_check(w, size, seed, &first);
    if (bad) {
        const uint32_t got = ((const volatile uint32_t *)w)[first / 4];
        return fail(c, "c2h %u B (seed %#x): %zu of %u words differ from the pattern, first at "
                    "byte %zu: %#010x, expected %#010x", size, seed, bad, size / 4, first, got,
                    nic_pattern_word(seed, first / 4));
    }
    if (words > size / 4) {
        const volatile uint32_t *after = (const volatile uint32_t *)w + size / 4;
        for (size_t i = 0; i < 4; i++)
            if (after[i] != ~nic_pattern_word(seed, size / 4 + i))
                return fail(c, "c2h %u B: the DMA wrote past the end of the buffer (byte %zu)",
                            size, size + 4 * i);
    }
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    return backend_check(c, "c2h transfer");
}

/* --- latency of single DMA reads (--latency) --------------------------------------------------- */

/* Read i of the model's PHY read timings (model_read_*:I counters): 0 or -1. */
static int read_timing(struct ctx *c, uint64_t i, uint64_t *start, uint64_t *end,
                       uint64_t *bytes)
{
    char n[64];
    snprintf(n, sizeof n, "model_read_start_ps:%" PRIu64, i);
    if (!counter(c, n, start))
        return -1;
    snprintf(n, sizeof n, "model_read_end_ps:%" PRIu64, i);
    if (!counter(c, n, end))
        return -1;
    snprintf(n, sizeof n, "model_read_bytes:%" PRIu64, i);
    return counter(c, n, bytes) ? 0 : -1;
}

/* `count` h2c transfers of `size` bytes, one at a time (dma_h2c_once: checker-verified); each
 * read's latency from the model's PHY timestamps: its first MRd's first beat leaving the device
 * to the last beat of its last completion taken by the device. */
int dma_latency(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t count,
                const struct dma_cfg *cfg)
{
    uint64_t n0;
    const bool have = counter(c, "model.reads_timed", &n0);
    uint64_t *lat = have ? calloc(count, sizeof *lat) : NULL;
    if (have && !lat)
        return fail(c, "out of memory");
    uint64_t reqs = 0;
    for (uint64_t i = 0; have && i < count; i++) {
        uint64_t t, n1;
        int rc = dma_h2c_once(c, r, size, &t);
        if (!rc && !counter(c, "model.reads_timed", &n1))
            rc = fail(c, "latency: counter model.reads_timed disappeared");
        uint64_t first = UINT64_MAX, last = 0, bytes = 0;
        for (uint64_t k = n0; !rc && k < n1; k++) {
            uint64_t s, e, nb;
            if (read_timing(c, k, &s, &e, &nb) < 0) {
                rc = fail(c, "latency: the model no longer holds read %" PRIu64, k);
                break;
            }
            first = s < first ? s : first;
            last = e > last ? e : last;
            bytes += nb;
        }
        if (!rc && bytes != size)
            rc = fail(c, "latency %u B: the model timed %" PRIu64 " device reads of %" PRIu64
                      " bytes in all for this transfer, expected %u bytes", size, n1 - n0, bytes,
                      size);
        if (rc) {
            free(lat);
            return rc;
        }
        lat[i] = (last - first + 500) / 1000;
        reqs = n1 - n0;
        n0 = n1;
    }
    struct bu_dist dist = {0};
    if (have)
        bu_dist_compute(lat, count, &dist);
    free(lat);

    if (have)
        out(c, "%10u %5u %4s %5d %5d %6" PRIu64 " %4" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9"
            PRIu64 " %9" PRIu64 " %9.1f\n", size, r->off, "h2c", cfg->mps, cfg->mrrs, count,
            reqs, dist.min, dist.median, dist.p99, dist.max, dist.mean);
    else
        out(c, "%10u %5u %4s %5d %5d %6s %4s %9s %9s %9s %9s %9s\n", size, r->off, "h2c",
            cfg->mps, cfg->mrrs, "0", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a");
    fflush(stdout);

    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "dma_latency");
    bu_json_kstr(&c->rec, "mode", "latency");
    bu_json_kstr(&c->rec, "dir", "h2c");
    bu_json_ku64(&c->rec, "size", size);
    bu_json_ku64(&c->rec, "offset", r->off);
    json_opt_u64(&c->rec, "mps", cfg->mps >= 0, (uint64_t)cfg->mps);
    json_opt_u64(&c->rec, "mrrs", cfg->mrrs >= 0, (uint64_t)cfg->mrrs);
    json_opt_u64(&c->rec, "dev_mps", cfg->dev_mps >= 0, (uint64_t)cfg->dev_mps);
    json_opt_u64(&c->rec, "dev_mrrs", cfg->dev_mrrs >= 0, (uint64_t)cfg->dev_mrrs);
    bu_json_ku64(&c->rec, "count", have ? count : 0);
    json_opt_u64(&c->rec, "requests", have, reqs);
    json_opt_u64(&c->rec, "lat_min_ns", have, dist.min);
    json_opt_u64(&c->rec, "lat_median_ns", have, dist.median);
    json_opt_u64(&c->rec, "lat_p99_ns", have, dist.p99);
    json_opt_u64(&c->rec, "lat_max_ns", have, dist.max);
    json_opt_double(&c->rec, "lat_mean_ns", have, dist.mean);
    bu_json_kstr(&c->rec, "clock", have ? "sim" : "n/a");
    bu_json_obj_end(&c->rec);
    return EXIT_OK;
}
