// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_tx_opts.c: `nicbench tx`'s options (cmd_tx.h; the usage text in main.c), checked in the
 * order the usage errors name them, into the sweep's axes.
 */
#define _GNU_SOURCE
#include "cmd_tx.h"

/* --name VALUE options: strings, then numbers (each at most its max); getopt_long's val is
 * OPT_STR or OPT_NUM plus the index. */
enum { S_SIZES, S_RANGE, S_INFLIGHT, S_COALESCE, S_IO, S_GAP, S_WINDOW, S_BUF_OFFSET, NSTR };
enum { N_FRAMES, N_QUEUES, N_RING, N_RX_RING, N_BATCH, N_POLL, N_IO_FRAME, N_MIN_BYTES,
       N_REFILL, NNUM };
enum { OPT_CSUM = 1, OPT_STR = 256, OPT_NUM = 512 };

/* The options as given: the strings (NULL: not given; S_COALESCE is p.coalesce's) and which
 * numbers were given. */
struct tx_given {
    const char *s[NSTR];
    bool num[NNUM];
};

/* A list option (--sizes, --io, --inflight, --gap-ns) into out: each lo..hi. 0 or a usage
 * error. */
static int tx_list(const char *opt, const char *s, uint64_t *out, size_t *n, uint64_t lo,
                   uint64_t hi)
{
    char err[512];
    if (bu_parse_list(s, out, MAX_SIZES, n, err, sizeof err) < 0)
        return usage_error("%s: %s", opt, err);
    int rc = EXIT_OK;
    for (size_t i = 0; i < *n && !rc; i++)
        rc = cli_range(opt, out[i], lo, hi, NULL);
    return rc;
}

/* Options one mode does not take: the first given, or NULL. */
static const char *tx_refused(const char *const *names, const bool *given, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (given[i])
            return names[i];
    return NULL;
}

/* getopt_long over the command's options: the numbers into *p (the defaults where not given),
 * the strings into *g; the mode from --io and --gap-ns. */
static int tx_getopt(int argc, char **argv, struct tx_params *p, struct tx_given *g)
{
    static const char *const nnames[NNUM] = {"--frames", "--queues", "--ring", "--rx-ring",
                                             "--batch", "--poll-ns", "--io-frame",
                                             "--min-bytes", "--rx-refill-ns"};
    static const uint64_t nmax[NNUM] = {UINT64_MAX, 1000000, 1000000, 1000000, 1000000, 1000000,
                                        1000000, 1ull << 40, TX_GAP_MAX_NS};
#define TX_OPT(name, val) {name, required_argument, NULL, val}
    static const struct option opts[] = {
        TX_OPT("size", OPT_STR + S_SIZES),         TX_OPT("sizes", OPT_STR + S_SIZES),
        TX_OPT("size-range", OPT_STR + S_RANGE),   TX_OPT("inflight", OPT_STR + S_INFLIGHT),
        TX_OPT("coalesce", OPT_STR + S_COALESCE),  TX_OPT("io", OPT_STR + S_IO),
        TX_OPT("gap-ns", OPT_STR + S_GAP),         TX_OPT("window", OPT_STR + S_WINDOW),
        TX_OPT("frames", OPT_NUM + N_FRAMES),      TX_OPT("queues", OPT_NUM + N_QUEUES),
        TX_OPT("ring", OPT_NUM + N_RING),          TX_OPT("rx-ring", OPT_NUM + N_RX_RING),
        TX_OPT("batch", OPT_NUM + N_BATCH),        TX_OPT("poll-ns", OPT_NUM + N_POLL),
        TX_OPT("io-frame", OPT_NUM + N_IO_FRAME),  TX_OPT("min-bytes", OPT_NUM + N_MIN_BYTES),
        TX_OPT("rx-refill-ns", OPT_NUM + N_REFILL), TX_OPT("buf-offset", OPT_STR + S_BUF_OFFSET),
        {"csum", no_argument, NULL, OPT_CSUM},     {NULL, 0, NULL, 0}};
#undef TX_OPT
    uint64_t num[NNUM] = {p->frames, p->queues, p->ring, p->rx_ring, p->batch, p->poll_ns,
                          p->io_frame, p->min_bytes, 0};
    int o;
    while ((o = next_option("tx", argc, argv, opts)) != -1) {
        int rc;
        switch (o) {
        case 0:
            return EXIT_USAGE;
        case OPT_CSUM:
            p->csum = true;
            break;
        default:
            if (o < OPT_NUM) {
                g->s[o - OPT_STR] = optarg;
                break;
            }
            const int k = o - OPT_NUM;
            if ((rc = cli_parse_num(nnames[k], optarg, &num[k])))
                return rc;
            if (num[k] > nmax[k])
                return usage_error("%s: %" PRIu64 " is too large", nnames[k], num[k]);
            g->num[k] = true;
        }
    }
    p->frames = num[N_FRAMES];
    p->queues = (unsigned)num[N_QUEUES];
    p->ring = (unsigned)num[N_RING];
    p->rx_ring = (unsigned)num[N_RX_RING];
    p->batch = (unsigned)num[N_BATCH];
    p->poll_ns = num[N_POLL];
    p->io_frame = (unsigned)num[N_IO_FRAME];
    p->min_bytes = num[N_MIN_BYTES];
    p->rx_refill_ns = num[N_REFILL];
    p->coalesce = g->s[S_COALESCE];
    p->mode = g->s[S_IO] ? TX_IO : g->s[S_GAP] ? TX_GAP : TX_STREAM;
    return EXIT_OK;
}

/* What each mode refuses: --io sets its frames, batches and in-flight limit itself; --gap-ns
 * posts one frame per doorbell; the I/O and refill options belong to their modes. */
static int tx_mode_check(const struct tx_params *p, const struct tx_given *g)
{
    const bool *given = g->num;
    const char *const io_no[] = {"--sizes", "--size-range", "--frames", "--batch", "--inflight",
                                 "--window", "--gap-ns", "--rx-refill-ns"};
    const bool io_no_given[] = {g->s[S_SIZES], g->s[S_RANGE], given[N_FRAMES], given[N_BATCH],
                                g->s[S_INFLIGHT], g->s[S_WINDOW], g->s[S_GAP], given[N_REFILL]};
    const char *const gap_no[] = {"--batch", "--inflight", "--window", "--io-frame",
                                  "--min-bytes"};
    const bool gap_no_given[] = {given[N_BATCH], g->s[S_INFLIGHT], g->s[S_WINDOW],
                                 given[N_IO_FRAME], given[N_MIN_BYTES]};
    const char *const stream_no[] = {"--io-frame", "--min-bytes", "--rx-refill-ns"};
    const bool stream_no_given[] = {given[N_IO_FRAME], given[N_MIN_BYTES], given[N_REFILL]};
#define TX_REFUSED(names, given) tx_refused(names, given, sizeof names / sizeof names[0])
    const char *bad_opt = p->mode == TX_IO    ? TX_REFUSED(io_no, io_no_given)
                          : p->mode == TX_GAP ? TX_REFUSED(gap_no, gap_no_given)
                                              : TX_REFUSED(stream_no, stream_no_given);
#undef TX_REFUSED
    if (bad_opt)
        return usage_error("tx: %s does not go with %s", bad_opt,
                           p->mode == TX_IO ? "--io" : p->mode == TX_GAP ? "--gap-ns"
                           : "the default mode (it belongs to --io or --gap-ns)");
    return EXIT_OK;
}

/* The first axis: frame sizes (--sizes, one --size-range) or I/O sizes (--io), and the largest
 * frame; with --csum each must hold the checksum. */
static int tx_sizes(struct tx_args *a, const struct tx_given *g)
{
    struct tx_params *p = &a->p;
    int rc;
    if (p->mode == TX_IO) {
        if ((rc = cli_range("--io-frame", p->io_frame, NIC_Q_FRAME_MIN, NIC_Q_FRAME_MAX, NULL)))
            return rc;
        if (p->min_bytes < 1)
            return usage_error("--min-bytes: must be at least 1");
        if ((rc = tx_list("--io", g->s[S_IO], a->sizes, &a->nsizes, TX_IO_MIN, TX_IO_MAX)))
            return rc;
        for (size_t i = 0; i < a->nsizes; i++) {
            struct tx_point pt;
            tx_io_point(p, a->sizes[i], &pt);
            if (pt.size > a->max_size)
                a->max_size = pt.size;
        }
    } else if ((rc = frame_sizes(g->s[S_SIZES] ? g->s[S_SIZES] : "60", a->sizes, &a->nsizes,
                                 &a->max_size))) {
        return rc;
    }
    if (g->s[S_RANGE]) {
        const char *range_s = g->s[S_RANGE];
        unsigned lo, hi;
        char end;
        if (g->s[S_SIZES])
            return usage_error("--size-range and --sizes: give one of them");
        if (sscanf(range_s, "%u-%u%c", &lo, &hi, &end) != 2 || lo < TX_HDR || lo >= hi ||
            hi > NIC_Q_FRAME_MAX)
            return usage_error("--size-range: '%s' is not LO-HI with %u <= LO < HI <= %u",
                               range_s, TX_HDR, NIC_Q_FRAME_MAX);
        a->sizes[0] = lo;
        a->nsizes = 1;
        p->size_hi = hi;
        a->max_size = hi;
    }
    if (p->csum)
        for (size_t i = 0; i < a->nsizes && p->mode != TX_IO; i++)
            if (a->sizes[i] < TX_CSUM_MIN)
                return usage_error("--csum: frames of %" PRIu64 " bytes have no room for the "
                                   "checksum (bytes %u..%u): %u at least", a->sizes[i],
                                   TX_CSUM_AT, TX_CSUM_AT + 1, TX_CSUM_MIN);
    return EXIT_OK;
}

/* Frames, queues, rings, batch and poll interval in range (the batch's default cut to a small
 * ring). */
static int tx_limits(struct tx_params *p, const struct tx_given *g)
{
    int rc;
    if ((rc = cli_range("--frames", p->frames, 1, 100000000, NULL)) ||
        (rc = cli_range("--queues", p->queues, 1, NIC_Q_MAX_TXQ, NULL)))
        return rc;
    if (p->ring < 2 || p->ring > NIC_Q_RING_MAX || (p->ring & (p->ring - 1)))
        return usage_error("--ring: %u is not a power of two 2..%u", p->ring, NIC_Q_RING_MAX);
    if (p->rx_ring < 2 || p->rx_ring > NIC_Q_RING_MAX || (p->rx_ring & (p->rx_ring - 1)))
        return usage_error("--rx-ring: %u is not a power of two 2..%u", p->rx_ring,
                           NIC_Q_RING_MAX);
    if (!g->num[N_BATCH] && p->batch > p->ring - 1)
        p->batch = p->ring - 1;         /* the default of 32 on a small ring */
    if ((rc = cli_range("--batch", p->batch, 1, p->ring - 1, " (ring size - 1)")))
        return rc;
    if (p->poll_ns < 1)
        return usage_error("--poll-ns: must be at least 1");
    return EXIT_OK;
}

/* --buf-offset N | random[:SEED] (SEED default: the clock). */
static int tx_buf_offset(struct tx_params *p, const char *bufoff_s)
{
    uint64_t v = 0;
    int rc;
    p->buf_offset_given = true;
    if (strncmp(bufoff_s, "random", 6) == 0 && (!bufoff_s[6] || bufoff_s[6] == ':')) {
        p->buf_random = true;
        p->buf_seed = wall_ns();
        if (bufoff_s[6] && (rc = cli_parse_num("--buf-offset random:SEED", bufoff_s + 7,
                                           &p->buf_seed)))
            return rc;
    } else if ((rc = cli_parse_num("--buf-offset", bufoff_s, &v))) {
        return rc;
    } else if (v > 4095) {
        return usage_error("--buf-offset: %" PRIu64 " is not an offset in a page (0..4095)", v);
    }
    p->buf_offset = (unsigned)v;
    return EXIT_OK;
}

int tx_parse(int argc, char **argv, struct tx_args *a)
{
    *a = (struct tx_args){.p = {.frames = 10000, .queues = 1, .ring = 64, .rx_ring = 1024,
                                .batch = 32, .poll_ns = 64, .coalesce = NULL, .mode = TX_STREAM,
                                .io_frame = TX_IO_FRAME, .min_bytes = TX_IO_MIN_BYTES},
                          .nsecond = 1, .nwindows = 1};
    struct tx_params *p = &a->p;
    struct tx_given g = {0};
    int rc;
    if ((rc = tx_getopt(argc, argv, p, &g)) || (rc = tx_mode_check(p, &g)) ||
        (rc = tx_sizes(a, &g)) || (rc = tx_limits(p, &g)))
        return rc;
    /* The second axis of the sweep: in-flight limits (stream) or gaps; one point for --io. */
    a->second[0] = p->ring - 1;
    if (g.s[S_INFLIGHT] &&
        (rc = tx_list("--inflight", g.s[S_INFLIGHT], a->second, &a->nsecond, 1, p->ring - 1)))
        return rc;
    if (g.s[S_GAP] &&
        (rc = tx_list("--gap-ns", g.s[S_GAP], a->second, &a->nsecond, 0, TX_GAP_MAX_NS)))
        return rc;
    /* --window: a third axis, inside the in-flight limits (0: no window) */
    a->window_given = g.s[S_WINDOW] != NULL;
    if (g.s[S_WINDOW] &&
        (rc = tx_list("--window", g.s[S_WINDOW], a->windows, &a->nwindows, 1, TX_WINDOW_MAX)))
        return rc;
    if (g.s[S_BUF_OFFSET] && (rc = tx_buf_offset(p, g.s[S_BUF_OFFSET])))
        return rc;
    char err[512];
    nic_q_coalesce_defaults(&a->co);
    if (p->coalesce && nic_q_coalesce_parse(p->coalesce, &a->co, err, sizeof err) < 0)
        return usage_error("--coalesce: %s", err);
    return EXIT_OK;
}
