// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_dma.c: `nicbench dma`, DMA throughput vs transfer size, host-to-card and card-to-host,
 * one transfer at a time or with descriptors kept queued (--inflight), MPS/MRRS sweeps, and
 * the latency of single DMA reads at the PHY (--latency, sim backend; cmd_dma.h). Options:
 * the usage text in main.c.
 */
#define _GNU_SOURCE
#include "cmd_dma.h"

const char *const dir_name[2] = {"h2c", "c2h"};

/* The negotiated MPS/MRRS as the backend reports them (params "mps"/"mrrs"), -1 if absent. */
static int param_int(struct nic_backend *b, const char *key)
{
    double d;
    return bu_json_get_number(nic_params_json(b), key, &d) == 0 ? (int)d : -1;
}

/* --- bandwidth: one size, one direction, one queue depth --------------------------------------- */

/* Descriptors queued for --inflight N at this size: N, for h2c at least H2C_MIN_LAP of data,
 * at most the table's depth and the slots the buffer holds; 1 (one at a time) when it holds
 * one slot only. */
static uint32_t flight_depth(enum dir d, uint32_t size, uint64_t inflight, size_t cap,
                             bool pages)
{
    const uint64_t nslots = cap / slot_stride(size, pages);
    uint64_t q = inflight;
    if (q <= 1 || nslots < 2)
        return 1;
    if (d == H2C && q * size < H2C_MIN_LAP)
        q = bu_ceil_div(H2C_MIN_LAP, size);
    if (q > DMA_TABLE_DEPTH)
        q = DMA_TABLE_DEPTH;
    return (uint32_t)(q < nslots ? q : nslots);
}

/* A bandwidth point: its measurement and figures. */
struct dma_point {
    uint64_t reps, time_ns, run_ns;     /* run_ns: with descriptors queued */
    struct bu_dist dist;                /* one at a time: the transfers' times */
    struct flight f;
    double gbps, mbps, tps;
    bool have_limit;                    /* the host model's bound for the point */
    double limit, ratio;                /* Gb/s; gbps / limit */
};

/* The transfers of a point: one at a time (their median time), or with `inflight`
 * descriptors queued (the run's time per transfer). */
static int dma_measure(struct ctx *c, struct dma_run *r, enum dir d, uint32_t size,
                       uint32_t inflight, uint64_t min_bytes, struct dma_point *pt)
{
    struct flight *f = &pt->f;
    *f = (struct flight){.size = size, .stride = slot_stride(size, r->pages), .q = inflight};
    if (inflight <= 1) {
        const uint64_t reps64 = bu_ceil_div(min_bytes, size);
        pt->reps = reps64 > 3 ? reps64 : 3;
        uint64_t *t = calloc(pt->reps, sizeof *t);
        if (!t)
            return fail(c, "out of memory");
        int rc = EXIT_OK;
        for (size_t i = 0; i < pt->reps && !rc; i++)
            rc = d == H2C ? dma_h2c_once(c, r, size, &t[i]) : dma_c2h_once(c, r, size, &t[i]);
        if (rc) {
            free(t);
            return rc;
        }
        bu_dist_compute(t, pt->reps, &pt->dist);
        free(t);
        pt->time_ns = pt->dist.median;
    } else {
        pt->reps = bu_ceil_div(min_bytes, size);
        if (pt->reps < 2ull * f->q)
            pt->reps = 2ull * f->q;
        f->reps = pt->reps;
        f->seed = r->seed++;
        const int rc = d == H2C ? dma_h2c_flight(c, r, f) : dma_c2h_flight(c, r, f);
        if (rc)
            return rc;
        pt->run_ns = f->run_ns;
        pt->time_ns = (pt->run_ns + pt->reps / 2) / pt->reps;
    }
    return EXIT_OK;
}

/* The point's rates, and the host model's bound for it. */
static void dma_figures(struct ctx *c, enum dir d, uint32_t size, uint32_t inflight,
                        struct dma_point *pt)
{
    const bool hw_queue = inflight > 1;
    const double ns = hw_queue ? (double)pt->run_ns / (double)pt->reps : (double)pt->time_ns;
    pt->gbps = ns > 0 ? (double)size * 8.0 / ns : NAN;
    pt->mbps = ns > 0 ? (double)size * 1e3 / ns : NAN;
    pt->tps = ns > 0 ? 1e9 / ns : NAN;
    char name[64];
    snprintf(name, sizeof name, "model_limit_%s_kbps:%u", dir_name[d], size);
    uint64_t kbps = 0;
    pt->have_limit = counter(c, name, &kbps) && kbps > 0;
    pt->limit = pt->have_limit ? (double)kbps / 1e6 : NAN;
    pt->ratio = pt->have_limit ? pt->gbps / pt->limit : NAN;
}

/* The point's JSON record. */
static void dma_size_json(struct ctx *c, const struct dma_run *r, enum dir d, uint32_t size,
                          uint32_t inflight, const struct dma_cfg *cfg,
                          const struct dma_point *pt)
{
    const bool hw_queue = inflight > 1;
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "dma");
    bu_json_kstr(&c->rec, "mode", "bandwidth");
    bu_json_kstr(&c->rec, "dir", dir_name[d]);
    bu_json_ku64(&c->rec, "size", size);
    bu_json_ku64(&c->rec, "offset", r->off);
    bu_json_ku64(&c->rec, "inflight", inflight);
    json_opt_u64(&c->rec, "mps", cfg->mps >= 0, (uint64_t)cfg->mps);
    json_opt_u64(&c->rec, "mrrs", cfg->mrrs >= 0, (uint64_t)cfg->mrrs);
    json_opt_u64(&c->rec, "dev_mps", cfg->dev_mps >= 0, (uint64_t)cfg->dev_mps);
    json_opt_u64(&c->rec, "dev_mrrs", cfg->dev_mrrs >= 0, (uint64_t)cfg->dev_mrrs);
    bu_json_ku64(&c->rec, "reps", pt->reps);
    bu_json_ku64(&c->rec, "time_ns", pt->time_ns);
    json_opt_u64(&c->rec, "time_min_ns", !hw_queue, pt->dist.min);
    json_opt_u64(&c->rec, "time_max_ns", !hw_queue, pt->dist.max);
    json_opt_u64(&c->rec, "run_ns", hw_queue, pt->run_ns);
    json_opt_u64(&c->rec, "transfers_run", hw_queue, pt->f.total);
    bu_json_kdouble(&c->rec, "gbps", pt->gbps);
    bu_json_kdouble(&c->rec, "mbps", pt->mbps);
    bu_json_kdouble(&c->rec, "tps", pt->tps);
    json_opt_double(&c->rec, "limit_gbps", pt->have_limit, pt->limit);
    json_opt_double(&c->rec, "ratio", pt->have_limit, pt->ratio);
    bu_json_kstr(&c->rec, "clock", c->b->kind);
    bu_json_obj_end(&c->rec);
}

/* One table row: `inflight` from flight_depth(). */
static int dma_size(struct ctx *c, struct dma_run *r, enum dir d, uint32_t size, uint32_t inflight,
                    uint64_t min_bytes, const struct dma_cfg *cfg)
{
    struct dma_point pt = {0};
    int rc = dma_measure(c, r, d, size, inflight, min_bytes, &pt);
    if (rc)
        return rc;
    dma_figures(c, d, size, inflight, &pt);
    char sz[24], lim[24], rat[24];
    snprintf(sz, sizeof sz, "%u", size);
    if (pt.have_limit) {
        snprintf(lim, sizeof lim, "%.3f", pt.limit);
        snprintf(rat, sizeof rat, "%.3f", pt.ratio);
    } else {
        snprintf(lim, sizeof lim, "n/a");
        snprintf(rat, sizeof rat, "n/a");
    }
    out(c, "%10s %5u %4s %5d %5d %6u %7" PRIu64 " %10" PRIu64 " %8.3f %9.2f %8.3f %10s %6s\n",
        sz, r->off, dir_name[d], cfg->mps, cfg->mrrs, inflight, pt.reps, pt.time_ns, pt.gbps,
        pt.mbps, pt.tps / 1e6, lim, rat);
    fflush(stdout);
    dma_size_json(c, r, d, size, inflight, cfg, &pt);
    return EXIT_OK;
}

/* --- one backend configuration ----------------------------------------------------------------- */

/* The sizes and offsets against the engine's limits, then the DMA buffer: the largest size
 * fills it; smaller ones leave room to detect overruns. One huge page holds it up to 2 MiB (the
 * sysfs fallback needs physically contiguous memory). With descriptors kept queued it is at
 * least RING_BYTES of slots. --offset adds a page (one slot more when queued). */
static int dma_buffer(struct ctx *c, const struct dma_args *a, struct dma_run *r)
{
    struct nic_backend *b = c->b;
    uint64_t maxsize = 0, maxinflight = 1;
    for (size_t i = 0; i < a->nsizes; i++) {
        char err[256];
        if (a->sizes[i] > nic_dma_max_len() || a->sizes[i] < c->align ||
            nic_dma_desc_check(b, 0, (uint32_t)a->sizes[i], c->align, err, sizeof err) < 0)
            return usage_error("dma: size %" PRIu64 " unusable: a multiple of %u bytes (this "
                               "build's datapath), at least %u, at most %u is needed",
                               a->sizes[i], c->align, c->align, nic_dma_max_len());
        if (a->sizes[i] > maxsize)
            maxsize = a->sizes[i];
    }
    for (size_t i = 0; i < a->noffsets; i++) {
        char err[256];
        if (nic_dma_desc_check(b, a->offsets[i], (uint32_t)maxsize, c->align, err,
                               sizeof err) < 0)
            return usage_error("dma: --offset %" PRIu64 " unusable: a multiple of %u bytes "
                               "(this build's datapath) is needed", a->offsets[i], c->align);
    }
    for (size_t i = 0; i < a->ninflight; i++)
        if (a->inflight[i] > maxinflight)
            maxinflight = a->inflight[i];
    *r = (struct dma_run){.seed = 0x1000, .pages = a->pages};
    r->cap = (size_t)maxsize + (a->pages ? DMA_ALIGN_PAGE : 0);
    if (maxinflight > 1) {
        const size_t stride = slot_stride((uint32_t)maxsize, a->pages);
        r->cap = stride > RING_BYTES ? stride : RING_BYTES;
        if (a->pages)
            r->cap += stride;
    }
    r->buf = nic_dma_alloc(b, r->cap, &r->bus);
    if (!r->buf) {
        const char *e = nic_last_error(b);
        return fail(c, "dma: cannot allocate %zu bytes of DMA memory: %s", r->cap, e ? e : "?");
    }
    char err[256];
    if (r->bus % DMA_ALIGN_PAGE || nic_dma_desc_check(b, r->bus, (uint32_t)maxsize, c->align,
                                                       err, sizeof err) < 0)
        return fail(c, "dma: DMA buffer at bus address %#" PRIx64 " unusable: %s", r->bus,
                    r->bus % DMA_ALIGN_PAGE ? "not 4 KiB aligned" : err);
    return EXIT_OK;
}

/* The configuration's lines and table header, and its record in "configs"; whether the
 * backend times reads at the PHY (--latency). */
static bool dma_header(struct ctx *c, const char *opts, const struct dma_args *a,
                       const struct dma_cfg *cfg)
{
    struct nic_backend *b = c->b;
    print_params(c, "params: ");
    out(c, "link MPS %d B, MRRS %d B; the device uses MPS %d B, MRRS %d B; times: %s clock\n",
        cfg->mps, cfg->mrrs, cfg->dev_mps, cfg->dev_mrrs, b->kind);
    uint64_t probe;
    const bool timed = counter(c, "model.reads_timed", &probe);
    if (a->latency && !timed)
        out(c, "note: read latency at the PHY needs the sim backend (the host model's per-read "
            "timestamps); n/a on the %s backend\n", b->kind);
    if (a->latency)
        out(c, "%10s %5s %4s %5s %5s %6s %4s %9s %9s %9s %9s %9s\n", "size_B", "off_B", "dir",
            "mps", "mrrs", "count", "reqs", "min_ns", "median_ns", "p99_ns", "max_ns", "mean_ns");
    else
        out(c, "%10s %5s %4s %5s %5s %6s %7s %10s %8s %9s %8s %10s %6s\n", "size_B", "off_B",
            "dir", "mps", "mrrs", "inflt", "reps", "time_ns", "Gb/s", "MB/s", "Mtr/s",
            "limit_Gb/s", "ratio");

    bu_json_obj_begin(&c->configs);
    bu_json_kstr(&c->configs, "opts", opts);
    json_opt_u64(&c->configs, "mps", cfg->mps >= 0, (uint64_t)cfg->mps);
    json_opt_u64(&c->configs, "mrrs", cfg->mrrs >= 0, (uint64_t)cfg->mrrs);
    json_opt_u64(&c->configs, "dev_mps", cfg->dev_mps >= 0, (uint64_t)cfg->dev_mps);
    json_opt_u64(&c->configs, "dev_mrrs", cfg->dev_mrrs >= 0, (uint64_t)cfg->dev_mrrs);
    bu_json_key(&c->configs, "params");
    bu_json_raw(&c->configs, nic_params_json(b));
    bu_json_obj_end(&c->configs);
    c->nconfigs++;
    return timed;
}

/* One direction's bandwidth rows: each size at each offset, each queue depth (requests that
 * come to the same depth run once). */
static int dma_dir(struct ctx *c, const struct dma_args *a, struct dma_run *r, enum dir d,
                   const struct dma_cfg *cfg)
{
    struct nic_backend *b = c->b;
    int rc = EXIT_OK;
    bool small_lap = false;
    for (size_t i = 0; i < a->nsizes; i++)
        for (size_t k = 0; k < a->ninflight; k++)
            small_lap |= a->inflight[k] > 1 && a->inflight[k] * a->sizes[i] < H2C_MIN_LAP;
    if (d == H2C && small_lap)
        out(c, "note: h2c keeps at least %u KiB of descriptors queued (inflt column): the "
            "host rewrites a slot's data one lap ahead of the reader\n", H2C_MIN_LAP >> 10);
    nic_msi_enable(b, d == H2C ? nic_msi_bit(nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0))
                               : nic_msi_bit(nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1)));
    for (size_t n = 0; n < a->nsizes * a->noffsets && !rc; n++) {
        const uint32_t size = (uint32_t)a->sizes[n / a->noffsets];
        r->off = (uint32_t)a->offsets[n % a->noffsets];
        uint32_t done[MAX_INFLIGHT];
        size_t ndone = 0;
        for (size_t k = 0; k < a->ninflight && !rc; k++) {
            const uint32_t q = flight_depth(d, size, a->inflight[k], r->cap - r->off, r->pages);
            bool seen = false;
            for (size_t j = 0; j < ndone; j++)
                seen |= done[j] == q;
            if (seen)
                continue;
            done[ndone++] = q;
            rc = dma_size(c, r, d, size, q, a->min_bytes, cfg);
        }
    }
    nic_msi_enable(b, 0);
    return rc;
}

static int dma_config(struct ctx *c, const char *opts, const struct dma_args *a)
{
    int rc = open_backend(c, opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    struct dma_cfg cfg = {param_int(b, "mps"), param_int(b, "mrrs"), dev_mps(b), dev_mrrs(b)};
    struct dma_run r;
    if ((rc = dma_buffer(c, a, &r)))
        return rc;
    const bool timed = dma_header(c, opts, a, &cfg);
    if (a->latency) {
        nic_msi_enable(b, nic_msi_bit(nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0)));
        for (size_t i = 0; i < a->nsizes && !rc; i++)
            for (size_t o = 0; o < a->noffsets && !rc; o++) {
                r.off = (uint32_t)a->offsets[o];
                rc = dma_latency(c, &r, (uint32_t)a->sizes[i], timed ? a->count : 0, &cfg);
            }
        nic_msi_enable(b, 0);
    }
    for (int d = 0; d < 2 && !rc && !a->latency; d++)
        if (a->dirs[d])
            rc = dma_dir(c, a, &r, (enum dir)d, &cfg);
    if (!rc) {
        quiesce(c);
        nic_dma_free(b, r.buf, r.cap);
        rc = backend_check(c, "dma");
    }
    return rc;
}

int cmd_dma(struct ctx *c, int argc, char **argv)
{
    struct dma_args a;
    int rc = dma_parse(argc, argv, &a);
    if (rc)
        return rc;
    if (!a.sweep || strcmp(c->kind, "sim") != 0) {
        if (a.sweep)
            out(c, "note: on the %s backend MPS and MRRS are fixed by the platform (see "
                "params mps/mrrs); running once instead of the requested sweep\n", c->kind);
        return dma_config(c, c->opts, &a);
    }
    /* A missing list keeps the backend's own value for that parameter. */
    const size_t np = a.nmps ? a.nmps : 1, nr = a.nmrrs ? a.nmrrs : 1;
    for (size_t i = 0; i < np; i++) {
        for (size_t k = 0; k < nr; k++) {
            char o1[1024], o2[1024], val[32];
            snprintf(o1, sizeof o1, "%s", c->opts);
            if (a.nmps) {
                snprintf(val, sizeof val, "%" PRIu64, a.mps[i]);
                if (bu_opts_set(c->opts, "mps", val, o1, sizeof o1) < 0)
                    return usage_error("--opts too long");
            }
            snprintf(o2, sizeof o2, "%s", o1);
            if (a.nmrrs) {
                snprintf(val, sizeof val, "%" PRIu64, a.mrrs[k]);
                if (bu_opts_set(o1, "mrrs", val, o2, sizeof o2) < 0)
                    return usage_error("--opts too long");
            }
            out(c, "%s--- backend options: %s\n", i + k ? "\n" : "", o2);
            if ((rc = dma_config(c, o2, &a)))
                return rc;
            close_backend(c);
        }
    }
    return EXIT_OK;
}
