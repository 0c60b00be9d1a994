// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_dma_opts.c: `nicbench dma`'s options (cmd_dma.h; the usage text in main.c), checked in
 * the order the usage errors name them.
 */
#define _GNU_SOURCE
#include "cmd_dma.h"

/* --offset LIST: bu_parse_list's items, and A..B:S (A, A+S, .. <= B). 0, or -1 with err. */
static int parse_offsets(const char *s, uint64_t *out, size_t max, size_t *n, char *err,
                         size_t errlen)
{
    *n = 0;
    for (const char *p = s; p;) {
        const char *comma = strchr(p, ',');
        const size_t len = comma ? (size_t)(comma - p) : strlen(p);
        char it[64];
        if (len == 0 || len >= sizeof it)
            return nic_errf(err, errlen, "bad list item in '%s'", s);
        memcpy(it, p, len);
        it[len] = 0;
        p = comma ? comma + 1 : NULL;
        char *dots = strstr(it, ".."), *colon = strchr(it, ':');
        if (!colon) {
            size_t k = 0;
            if (bu_parse_list(it, out + *n, max - *n, &k, err, errlen) < 0)
                return -1;
            *n += k;
            continue;
        }
        uint64_t a, b, step;
        if (!dots || dots > colon)
            return nic_errf(err, errlen, "bad item '%s' (want A..B:STEP)", it);
        *dots = *colon = 0;
        if (bu_parse_u64(it, &a) < 0 || bu_parse_u64(dots + 2, &b) < 0 ||
            bu_parse_u64(colon + 1, &step) < 0 || step == 0 || a > b)
            return nic_errf(err, errlen, "bad range '%s..%s:%s' (want A..B:STEP, A <= B, "
                            "STEP > 0)", it, dots + 2, colon + 1);
        for (uint64_t v = a; v <= b; v += step) {
            if (*n >= max)
                return nic_errf(err, errlen, "list '%s' has more than %zu entries", s, max);
            out[(*n)++] = v;
            if (v > UINT64_MAX - step)
                break;
        }
    }
    return *n ? 0 : nic_errf(err, errlen, "empty list");
}

/* The option strings the lists come from (NULL: not given). */
struct dma_given {
    const char *sizes, *mps, *mrrs, *inflight, *offset;
    bool dir, count;
};

/* getopt_long over the command's options: numbers and flags into *a, the lists' strings into
 * *g. */
static int dma_getopt(int argc, char **argv, struct dma_args *a, struct dma_given *g)
{
    static const struct option opts[] = {
        {"dir", required_argument, NULL, 'd'},       {"sizes", required_argument, NULL, 's'},
        {"min-bytes", required_argument, NULL, 'b'}, {"inflight", required_argument, NULL, 'i'},
        {"latency", no_argument, NULL, 'l'},         {"count", required_argument, NULL, 'c'},
        {"mps", required_argument, NULL, 'p'},       {"mrrs", required_argument, NULL, 'r'},
        {"offset", required_argument, NULL, 'o'},    {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("dma", argc, argv, opts)) != -1) {
        int rc;
        switch (o) {
        case 'd':
            g->dir = true;
            if (strcmp(optarg, "h2c") == 0)
                a->dirs[H2C] = true, a->dirs[C2H] = false;
            else if (strcmp(optarg, "c2h") == 0)
                a->dirs[H2C] = false, a->dirs[C2H] = true;
            else if (strcmp(optarg, "both") == 0)
                a->dirs[H2C] = a->dirs[C2H] = true;
            else
                return usage_error("--dir: '%s' is not h2c, c2h or both", optarg);
            break;
        case 's':
            g->sizes = optarg;
            break;
        case 'b':
            if ((rc = cli_parse_num("--min-bytes", optarg, &a->min_bytes)))
                return rc;
            break;
        case 'i':
            g->inflight = optarg;
            break;
        case 'l':
            a->latency = true;
            break;
        case 'c':
            if ((rc = cli_parse_range("--count", optarg, &a->count, 1, 1000000)))
                return rc;
            g->count = true;
            break;
        case 'p':
            g->mps = optarg;
            break;
        case 'r':
            g->mrrs = optarg;
            break;
        case 'o':
            g->offset = optarg;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    return EXIT_OK;
}

/* --sizes, and what --latency does not take. */
static int dma_sizes(struct dma_args *a, const struct dma_given *g)
{
    char err[256];
    const char *sizes_s = g->sizes;
    if (!sizes_s)
        sizes_s = a->latency ? LAT_SIZES : "256..2M";
    if (bu_parse_list(sizes_s, a->sizes, MAX_SIZES, &a->nsizes, err, sizeof err) < 0)
        return usage_error("--sizes: %s", err);
    for (size_t i = 0; i < a->nsizes; i++)
        if (a->sizes[i] > UINT32_MAX || a->sizes[i] < 16 || a->sizes[i] % 8)
            return usage_error("--sizes: %" PRIu64 " is not a DMA length (a multiple of the "
                               "datapath width, 8 or 16 B, from 16 B)", a->sizes[i]);
    if (a->latency) {
        if (g->inflight)
            return usage_error("dma: --latency times one read at a time; --inflight is for "
                               "bandwidth runs");
        if (g->dir && (a->dirs[C2H] || !a->dirs[H2C]))
            return usage_error("dma: --latency times DMA reads: --dir h2c only");
        a->dirs[H2C] = true, a->dirs[C2H] = false;
    } else if (g->count) {
        return usage_error("dma: --count is the number of reads of --latency");
    }
    return EXIT_OK;
}

/* --inflight, --offset, --mps and --mrrs. */
static int dma_lists(struct dma_args *a, const struct dma_given *g)
{
    char err[256];
    if (!g->inflight) {
        a->inflight[0] = 1;
        a->ninflight = 1;
    } else {
        if (bu_parse_list(g->inflight, a->inflight, MAX_INFLIGHT, &a->ninflight, err,
                          sizeof err) < 0)
            return usage_error("--inflight: %s", err);
        for (size_t i = 0; i < a->ninflight; i++) {
            const int rc = cli_range("--inflight", a->inflight[i], 1, DMA_TABLE_DEPTH,
                                     " (the descriptor table's depth)");
            if (rc)
                return rc;
        }
        for (size_t i = 0; i < a->ninflight; i++)
            if (a->inflight[i] > 1 && a->min_bytes > (1ull << 31))
                return usage_error("--min-bytes: at most 2G with --inflight above 1 (the "
                                   "checker's byte target is 32 bits)");
    }
    a->pages = g->offset != NULL;
    if (!g->offset) {
        a->noffsets = 1;            /* offset 0 */
    } else {
        if (parse_offsets(g->offset, a->offsets, MAX_OFFSETS, &a->noffsets, err, sizeof err) < 0)
            return usage_error("--offset: %s", err);
        for (size_t i = 0; i < a->noffsets; i++)
            if (a->offsets[i] >= DMA_ALIGN_PAGE || a->offsets[i] % 8)
                return usage_error("--offset: %" PRIu64 " is not a buffer offset (a multiple "
                                   "of the datapath width, 8 or 16 B, below %u)", a->offsets[i],
                                   DMA_ALIGN_PAGE);
    }
    if (g->mps && bu_parse_list(g->mps, a->mps, MAX_PAIRS, &a->nmps, err, sizeof err) < 0)
        return usage_error("--mps: %s", err);
    if (g->mrrs && bu_parse_list(g->mrrs, a->mrrs, MAX_PAIRS, &a->nmrrs, err, sizeof err) < 0)
        return usage_error("--mrrs: %s", err);
    a->sweep = g->mps || g->mrrs;
    return EXIT_OK;
}

int dma_parse(int argc, char **argv, struct dma_args *a)
{
    *a = (struct dma_args){.dirs = {true, true}, .min_bytes = 4u << 20, .count = 1000};
    struct dma_given g = {0};
    int rc;
    if ((rc = dma_getopt(argc, argv, a, &g)) || (rc = dma_sizes(a, &g)) ||
        (rc = dma_lists(a, &g)))
        return rc;
    return EXIT_OK;
}
