/*
 * cmd_dma.c: `nicbench dma`, DMA throughput vs transfer size, host-to-card and card-to-host,
 * MPS/MRRS sweeps. Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

#define MAX_PAIRS 16

/* The negotiated MPS/MRRS as the backend reports them (params "mps"/"mrrs"), -1 if absent. */
static int param_int(struct nic_backend *b, const char *key)
{
    double d;
    return bu_json_get_number(nic_params_json(b), key, &d) == 0 ? (int)d : -1;
}

/* --- dma --------------------------------------------------------------------------------------- */

enum dir { H2C, C2H };
static const char *const dir_name[2] = {"h2c", "c2h"};

struct dma_run {
    void *buf;
    uint64_t bus;
    size_t cap;
    uint32_t seed;                  /* advanced for every transfer */
};

static int dma_h2c_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns)
{
    struct nic_backend *b = c->b;
    const uint32_t seed = r->seed++;
    nic_pattern_fill(r->buf, size, seed);
    nic_pattern_chk_restart(b, seed, size);
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_dma_table_reset(b, NIC_DMA_READER);
    nic_dma_set_loop(b, NIC_DMA_READER, false);
    nic_dma_push(b, NIC_DMA_READER, r->bus, size, NIC_DMA_IRQ_DISABLE);
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

static int dma_c2h_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns)
{
    struct nic_backend *b = c->b;
    const uint32_t seed = r->seed++;
    uint32_t *w = r->buf;
    /* Sentinel: the pattern's complement, so no word already matches. */
    const size_t words = (size + 16 <= r->cap ? size + 16 : size) / 4;
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
    nic_dma_push(b, NIC_DMA_WRITER, r->bus, size, NIC_DMA_LAST_DISABLE);
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
    rc = wait_tail(c, (const volatile uint8_t *)r->buf + size - 16, tail, "c2h");
    const uint64_t t1 = nic_now_ns(b);
    if (rc)
        return rc;
    *ns = t1 - t0;

    size_t first = 0;
    const size_t bad = nic_pattern_check(r->buf, size, seed, &first);
    if (bad) {
        const uint32_t got = ((const volatile uint32_t *)r->buf)[first / 4];
        return fail(c, "c2h %u B (seed %#x): %zu of %u words differ from the pattern, first at "
                    "byte %zu: %#010x, expected %#010x", size, seed, bad, size / 4, first, got,
                    nic_pattern_word(seed, first / 4));
    }
    if (words > size / 4) {
        const volatile uint32_t *after = (const volatile uint32_t *)r->buf + size / 4;
        for (size_t i = 0; i < 4; i++)
            if (after[i] != ~nic_pattern_word(seed, size / 4 + i))
                return fail(c, "c2h %u B: the DMA wrote past the end of the buffer (byte %zu)",
                            size, size + 4 * i);
    }
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    return backend_check(c, "c2h transfer");
}

struct dma_cfg {
    int mps, mrrs;                  /* link (backend params) */
    int dev_mps, dev_mrrs;          /* what the device uses */
};

static int dma_size(struct ctx *c, struct dma_run *r, enum dir d, uint32_t size,
                    uint64_t min_bytes, const struct dma_cfg *cfg)
{
    struct nic_backend *b = c->b;
    const uint64_t reps64 = bu_ceil_div(min_bytes, size);
    const size_t reps = reps64 > 3 ? (size_t)reps64 : 3;
    uint64_t *t = calloc(reps, sizeof *t);
    if (!t)
        return fail(c, "out of memory");
    int rc = EXIT_OK;
    for (size_t i = 0; i < reps && !rc; i++)
        rc = d == H2C ? dma_h2c_once(c, r, size, &t[i]) : dma_c2h_once(c, r, size, &t[i]);
    if (rc) {
        free(t);
        return rc;
    }
    struct bu_dist dist;
    bu_dist_compute(t, reps, &dist);
    free(t);

    const double ns = (double)dist.median;
    const double gbps = ns > 0 ? (double)size * 8.0 / ns : NAN;
    const double mbps = ns > 0 ? (double)size * 1e3 / ns : NAN;
    char name[64];
    snprintf(name, sizeof name, "model_limit_%s_kbps:%u", dir_name[d], size);
    uint64_t kbps = 0;
    const bool have_limit = counter(c, name, &kbps) && kbps > 0;
    const double limit = have_limit ? (double)kbps / 1e6 : NAN;
    const double ratio = have_limit ? gbps / limit : NAN;

    char sz[24], lim[24], rat[24];
    snprintf(sz, sizeof sz, "%u", size);
    if (have_limit) {
        snprintf(lim, sizeof lim, "%.3f", limit);
        snprintf(rat, sizeof rat, "%.3f", ratio);
    } else {
        snprintf(lim, sizeof lim, "n/a");
        snprintf(rat, sizeof rat, "n/a");
    }
    out(c, "%10s %4s %5d %5d %7zu %12" PRIu64 " %8.3f %9.2f %10s %6s\n", sz, dir_name[d],
        cfg->mps, cfg->mrrs, reps, dist.median, gbps, mbps, lim, rat);
    fflush(stdout);

    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "dma");
    bu_json_kstr(&c->rec, "dir", dir_name[d]);
    bu_json_ku64(&c->rec, "size", size);
    json_opt_u64(&c->rec, "mps", cfg->mps >= 0, (uint64_t)cfg->mps);
    json_opt_u64(&c->rec, "mrrs", cfg->mrrs >= 0, (uint64_t)cfg->mrrs);
    json_opt_u64(&c->rec, "dev_mps", cfg->dev_mps >= 0, (uint64_t)cfg->dev_mps);
    json_opt_u64(&c->rec, "dev_mrrs", cfg->dev_mrrs >= 0, (uint64_t)cfg->dev_mrrs);
    bu_json_ku64(&c->rec, "reps", reps);
    bu_json_ku64(&c->rec, "time_ns", dist.median);
    bu_json_ku64(&c->rec, "time_min_ns", dist.min);
    bu_json_ku64(&c->rec, "time_max_ns", dist.max);
    bu_json_kdouble(&c->rec, "gbps", gbps);
    bu_json_kdouble(&c->rec, "mbps", mbps);
    json_opt_double(&c->rec, "limit_gbps", have_limit, limit);
    json_opt_double(&c->rec, "ratio", have_limit, ratio);
    bu_json_kstr(&c->rec, "clock", b->kind);
    bu_json_obj_end(&c->rec);
    return EXIT_OK;
}

static int dma_config(struct ctx *c, const char *opts, const bool dirs[2], const uint64_t *sizes,
                      size_t nsizes, uint64_t min_bytes)
{
    int rc = open_backend(c, opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    struct dma_cfg cfg = {param_int(b, "mps"), param_int(b, "mrrs"), dev_mps(b), dev_mrrs(b)};
    uint64_t maxsize = 0;
    for (size_t i = 0; i < nsizes; i++) {
        char err[256];
        if (sizes[i] > nic_dma_max_len() || sizes[i] < 16 ||
            nic_dma_desc_check(b, 0, (uint32_t)sizes[i], c->align, err, sizeof err) < 0)
            return fail(c, "dma: size %" PRIu64 " unusable: a multiple of %u bytes (datapath), "
                        "at least 16, at most %u is needed", sizes[i], c->align,
                        nic_dma_max_len());
        if (sizes[i] > maxsize)
            maxsize = sizes[i];
    }
    struct dma_run r = {.seed = 0x1000};
    /* The largest size fills the buffer; smaller ones leave room to detect overruns. One huge
     * page holds it up to 2 MiB (the sysfs fallback needs physically contiguous memory). */
    r.cap = (size_t)maxsize;
    r.buf = nic_dma_alloc(b, r.cap, &r.bus);
    if (!r.buf) {
        const char *e = nic_last_error(b);
        return fail(c, "dma: cannot allocate %zu bytes of DMA memory: %s", r.cap, e ? e : "?");
    }
    char err[256];
    if (r.bus % DMA_ALIGN_PAGE || nic_dma_desc_check(b, r.bus, (uint32_t)maxsize, c->align, err,
                                                      sizeof err) < 0)
        return fail(c, "dma: DMA buffer at bus address %#" PRIx64 " unusable: %s", r.bus,
                    r.bus % DMA_ALIGN_PAGE ? "not 4 KiB aligned" : err);

    print_params(c, "params: ");
    out(c, "link MPS %d B, MRRS %d B; the device uses MPS %d B, MRRS %d B; times: %s clock\n",
        cfg.mps, cfg.mrrs, cfg.dev_mps, cfg.dev_mrrs, b->kind);
    out(c, "%10s %4s %5s %5s %7s %12s %8s %9s %10s %6s\n", "size_B", "dir", "mps", "mrrs", "reps",
        "time_ns", "Gb/s", "MB/s", "limit_Gb/s", "ratio");

    bu_json_obj_begin(&c->configs);
    bu_json_kstr(&c->configs, "opts", opts);
    json_opt_u64(&c->configs, "mps", cfg.mps >= 0, (uint64_t)cfg.mps);
    json_opt_u64(&c->configs, "mrrs", cfg.mrrs >= 0, (uint64_t)cfg.mrrs);
    json_opt_u64(&c->configs, "dev_mps", cfg.dev_mps >= 0, (uint64_t)cfg.dev_mps);
    json_opt_u64(&c->configs, "dev_mrrs", cfg.dev_mrrs >= 0, (uint64_t)cfg.dev_mrrs);
    bu_json_key(&c->configs, "params");
    bu_json_raw(&c->configs, nic_params_json(b));
    bu_json_obj_end(&c->configs);
    c->nconfigs++;

    for (int d = 0; d < 2 && !rc; d++) {
        if (!dirs[d])
            continue;
        nic_msi_enable(b, d == H2C ? nic_msi_bit(nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0))
                                   : nic_msi_bit(nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1)));
        for (size_t i = 0; i < nsizes && !rc; i++)
            rc = dma_size(c, &r, (enum dir)d, (uint32_t)sizes[i], min_bytes, &cfg);
        nic_msi_enable(b, 0);
    }
    if (!rc) {
        quiesce(c);
        nic_dma_free(b, r.buf, r.cap);
        rc = backend_check(c, "dma");
    }
    return rc;
}

int cmd_dma(struct ctx *c, int argc, char **argv)
{
    bool dirs[2] = {true, true};
    const char *sizes_s = "256..2M", *mps_s = NULL, *mrrs_s = NULL;
    uint64_t min_bytes = 4u << 20;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        int rc;
        if ((m = bu_opt_value(argc, argv, &i, "--dir", &v))) {
            if (m < 0)
                return missing("--dir");
            if (strcmp(v, "h2c") == 0)
                dirs[H2C] = true, dirs[C2H] = false;
            else if (strcmp(v, "c2h") == 0)
                dirs[H2C] = false, dirs[C2H] = true;
            else if (strcmp(v, "both") == 0)
                dirs[H2C] = dirs[C2H] = true;
            else
                return usage_error("--dir: '%s' is not h2c, c2h or both", v);
        } else if ((m = bu_opt_value(argc, argv, &i, "--sizes", &v))) {
            if (m < 0)
                return missing("--sizes");
            sizes_s = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--min-bytes", &v))) {
            if (m < 0)
                return missing("--min-bytes");
            if ((rc = parse_num("--min-bytes", v, &min_bytes)))
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--mps", &v))) {
            if (m < 0)
                return missing("--mps");
            mps_s = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--mrrs", &v))) {
            if (m < 0)
                return missing("--mrrs");
            mrrs_s = v;
        } else {
            return usage_error("dma: unknown option '%s'", argv[i]);
        }
    }
    uint64_t sizes[MAX_SIZES], mps[MAX_PAIRS], mrrs[MAX_PAIRS];
    size_t nsizes, nmps = 0, nmrrs = 0;
    char err[256];
    if (bu_parse_list(sizes_s, sizes, MAX_SIZES, &nsizes, err, sizeof err) < 0)
        return usage_error("--sizes: %s", err);
    for (size_t i = 0; i < nsizes; i++)
        if (sizes[i] > UINT32_MAX || sizes[i] < 16 || sizes[i] % 8)
            return usage_error("--sizes: %" PRIu64 " is not a DMA length (a multiple of the "
                               "datapath width, 8 or 16 B, from 16 B)", sizes[i]);
    if (mps_s && bu_parse_list(mps_s, mps, MAX_PAIRS, &nmps, err, sizeof err) < 0)
        return usage_error("--mps: %s", err);
    if (mrrs_s && bu_parse_list(mrrs_s, mrrs, MAX_PAIRS, &nmrrs, err, sizeof err) < 0)
        return usage_error("--mrrs: %s", err);

    const bool sweep = mps_s || mrrs_s;
    if (!sweep || strcmp(c->kind, "sim") != 0) {
        if (sweep)
            out(c, "note: on the %s backend MPS and MRRS are fixed by the platform (see "
                "params mps/mrrs); running once instead of the requested sweep\n", c->kind);
        return dma_config(c, c->opts, dirs, sizes, nsizes, min_bytes);
    }
    /* A missing list keeps the backend's own value for that parameter. */
    const size_t np = nmps ? nmps : 1, nr = nmrrs ? nmrrs : 1;
    for (size_t i = 0; i < np; i++) {
        for (size_t k = 0; k < nr; k++) {
            char o1[1024], o2[1024], val[32];
            snprintf(o1, sizeof o1, "%s", c->opts);
            if (nmps) {
                snprintf(val, sizeof val, "%" PRIu64, mps[i]);
                if (bu_opts_set(c->opts, "mps", val, o1, sizeof o1) < 0)
                    return usage_error("--opts too long");
            }
            snprintf(o2, sizeof o2, "%s", o1);
            if (nmrrs) {
                snprintf(val, sizeof val, "%" PRIu64, mrrs[k]);
                if (bu_opts_set(o1, "mrrs", val, o2, sizeof o2) < 0)
                    return usage_error("--opts too long");
            }
            out(c, "%s--- backend options: %s\n", i + k ? "\n" : "", o2);
            const int rc = dma_config(c, o2, dirs, sizes, nsizes, min_bytes);
            if (rc)
                return rc;
            close_backend(c);
        }
    }
    return EXIT_OK;
}
