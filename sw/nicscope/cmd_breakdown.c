// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_breakdown.c: `nicscope breakdown`, where a DMA read's or write's time goes. Per transfer
 * size, one snapshot window around a load (--path dma: h2c transfers on LitePCIe's DMA reader,
 * descriptors back to back; --path c2h: the same on its DMA writer; --path tx: frames through
 * the NIC's TX ring and the MAC loopback), then the analyzer's per-request latency breakdown
 * (rtl/nicscope/latency_breakdown.py) per request class: mean, min and max cycles of each stage,
 * as a table and a stacked bar, and the reorder distance of the window's reads (how many
 * earlier reads still lacked their last completion when a read's own came) as a histogram; and
 * its write breakdown (rtl/nicscope/write_breakdown.py: queue, credit, phy) per write class, a
 * table of the window's writes.
 * Checks, each a failure when it does not hold: every request of the window completed (count ==
 * raises), the stages add up to the total, the occupancy integral equals the total (Little's
 * law over a window of whole requests), no tag mismatch; Little's law on the read tags from
 * three counters measured apart (the rd_tags level: LitePCIe's tag FIFO; the MRd count on the
 * PHY; the breakdown's phy + rtt + cpl stages, a tag's life from issue to last completion)
 * within 1 %, when the analyzer has levels; on a backend that times device reads
 * at the PHY (the sim host model), per request class its count and its rtt and cpl stages equal
 * the model's timestamps of the same TLPs, sum, min, max and bins (the model's reads classed by
 * their address: --path dma all raw_dma; --path tx nic_desc in the TX and RX descriptor rings,
 * nic_payload elsewhere). Writes: every write of the window
 * reached the PHY (count == raises), the stages add up to the total, Little's law, every MWr
 * matched to a write; on the sim backend, every stage of every write class equals, sum, min,
 * max and bins, the host model's time of each MWr's first beat with the harness's probe-pin
 * times of the same write (raised at its class's port, offered to and taken by the
 * packetizer). --stream runs the deep capture (capture_stream.c) through each window, so
 * its ring writes are timed as the scope write class beside the load's. Options: the usage
 * text in main.c. The pieces: cmd_breakdown.h.
 */
#include "cmd_breakdown.h"

static void bd_count(const struct nicscope_change *ch, bool gap, void *arg)
{
    (void)ch;
    (void)gap;
    ((struct bd_stream *)arg)->taken++;
}

static void bd_poll(struct ctx *c)
{
    struct bd_stream *st = c->poll_arg;
    nicscope_stream_take(&st->s, bd_count, st);
}

/* count h2c transfers of size bytes, back to back from one buffer, into the pattern checker. */
static int h2c_run(struct ctx *c, uint32_t size, uint32_t count)
{
    struct nic_backend *b = c->b;
    char err[256];
    const uint32_t total = size * count;
    uint64_t bus;
    if (nic_dma_desc_check(b, 0, size, c->info.data_width / 8, err, sizeof err) < 0)
        return fail(c, "breakdown: %u B: %s", size, err);
    uint8_t *buf = nic_dma_alloc(b, total, &bus);
    if (!buf)
        return fail(c, "breakdown: cannot allocate %u B of DMA memory", total);
    nic_pattern_fill(buf, total, 0x3000);
    nic_dma_stop(b, NIC_DMA_READER);
    nic_dma_set_loop(b, NIC_DMA_READER, false);
    nic_pattern_chk_restart(b, 0x3000, total);
    for (uint32_t i = 0; i < count; i++)
        nic_dma_push(b, NIC_DMA_READER, bus + (uint64_t)i * size, size, NIC_DMA_IRQ_DISABLE);
    nic_dma_enable(b, NIC_DMA_READER, true);
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    int rc = EXIT_OK;
    while (nic_pattern_chk_bytes(b) < total && !nic_last_error(b)) {
        if (nic_now_ns(b) > deadline) {
            rc = fail(c, "breakdown: the checker has %" PRIu64 " of %u B after %" PRIu64 " ns",
                      nic_pattern_chk_bytes(b), total, c->timeout_ns);
            break;
        }
        load_poll(c);
        nic_idle(b, 200);
    }
    nic_dma_enable(b, NIC_DMA_READER, false);
    const uint32_t errors = nic_pattern_chk_errors(b);
    nic_dma_free(b, buf, total);
    if (!rc && errors)
        rc = fail(c, "breakdown: the checker counted %u bad beats", errors);
    return rc ? rc : backend_check(c, "breakdown h2c");
}

/* count c2h transfers of size bytes from the pattern generator, back to back into one buffer
 * (the pattern's stream continues across them); done when the last bytes are in host memory
 * (posted writes land in order), then the whole buffer is checked. */
static int c2h_run(struct ctx *c, uint32_t size, uint32_t count)
{
    struct nic_backend *b = c->b;
    char err[256];
    const uint32_t total = size * count, seed = 0x5000;
    uint64_t bus;
    if (nic_dma_desc_check(b, 0, size, c->info.data_width / 8, err, sizeof err) < 0)
        return fail(c, "breakdown: %u B: %s", size, err);
    uint32_t *buf = nic_dma_alloc(b, total, &bus);
    if (!buf)
        return fail(c, "breakdown: cannot allocate %u B of DMA memory", total);
    for (size_t i = 0; i < total / 4; i++)
        buf[i] = ~nic_pattern_word(seed, i);       /* no word matches before it is written */
    const uint32_t last = nic_pattern_word(seed, total / 4 - 1);
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    int rc = EXIT_OK;
    if (nic_dma_writer_drain(b, c->timeout_ns) < 0)
        rc = fail(c, "breakdown: the DMA writer's FIFO still holds %u bytes",
                  nic_dma_buffering_level(b, NIC_DMA_WRITER));
    if (!rc) {
        nic_dma_table_reset(b, NIC_DMA_WRITER);
        nic_dma_set_loop(b, NIC_DMA_WRITER, false);
        for (uint32_t i = 0; i < count; i++)
            nic_dma_push(b, NIC_DMA_WRITER, bus + (uint64_t)i * size, size,
                         NIC_DMA_IRQ_DISABLE | NIC_DMA_LAST_DISABLE);
        nic_pattern_gen_seed(b, seed);
        nic_dma_enable(b, NIC_DMA_WRITER, true);
        nic_pattern_gen_enable(b, true);
        const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
        const volatile uint32_t *tail = (const volatile uint32_t *)buf + total / 4 - 1;
        while (*tail != last && !nic_last_error(b)) {
            if (nic_now_ns(b) > deadline) {
                rc = fail(c, "breakdown: c2h %u x %u B: the last word not written after %"
                          PRIu64 " ns", count, size, c->timeout_ns);
                break;
            }
            load_poll(c);
            nic_idle(b, 200);
        }
    }
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    size_t first = 0;
    const size_t bad = rc ? 0 : nic_pattern_check(buf, total, seed, &first);
    nic_dma_free(b, buf, total);
    if (bad)
        rc = fail(c, "breakdown: c2h: %zu of %u words differ from the pattern, first at byte "
                  "%zu", bad, total / 4, first);
    return rc ? rc : backend_check(c, "breakdown c2h");
}

/* --- one size ----------------------------------------------------------------------------------- */

/* The host model's reads and writes timed before and after a window (when it times them). */
struct bd_marks {
    bool timed, wtimed;
    uint64_t n0, n1, w0, w1;
};

/* A size's window: the load in it (and the deep capture beside it with --stream), the model's
 * counts before and after. */
static int bd_load(struct ctx *c, const struct bd_args *a, uint64_t size, struct load_state *ls,
                   struct bd_stream *st, struct bd_marks *m, struct window *w)
{
    struct nic_backend *b = c->b;
    const struct load l = {.kind = "tx", .frames = a->count, .frame_size = size};
    const bool tx = strcmp(a->path, "tx") == 0, c2h = strcmp(a->path, "c2h") == 0;
    int rc;
    if (tx && (rc = load_prepare(c, &l, ls)))
        return rc;
    *m = (struct bd_marks){0};
    m->timed = nic_counter(b, "model.reads_timed", &m->n0) == 0;
    m->wtimed = nic_counter(b, "model.writes_timed", &m->w0) == 0;
    char err[256];
    window_open(c, w);
    if (a->stream) {
        memset(st, 0, sizeof *st);
        if (nicscope_stream_start(b, &st->s, BD_STREAM_LOG2, err, sizeof err) < 0)
            return fail(c, "breakdown --stream: %s", err);
        c->poll = bd_poll;
        c->poll_arg = st;
    }
    rc = tx ? run_load(c, &l, ls)
            : c2h ? c2h_run(c, (uint32_t)size, (uint32_t)a->count)
                  : h2c_run(c, (uint32_t)size, (uint32_t)a->count);
    if (!rc && tx)
        nic_idle(b, 5000);          /* the RX descriptor prefetch after the last refill */
    if (a->stream) {
        c->poll = NULL;
        const int r2 = stream_end(c, &st->s, bd_count, st, &st->taken, &st->entries, &st->lost);
        rc = rc ? rc : r2;
    }
    window_close(c, w);
    if (m->timed && nic_counter(b, "model.reads_timed", &m->n1) != 0)
        rc = rc ? rc : fail(c, "breakdown: counter model.reads_timed disappeared");
    uint64_t stamped = 0;
    if (m->wtimed && (nic_counter(b, "model.writes_timed", &m->w1) != 0 ||
                      nic_counter(b, "probe.writes_stamped", &stamped) != 0 || stamped != m->w1))
        rc = rc ? rc : fail(c, "breakdown: the host model timed %" PRIu64 " MWrs, the probe "
                            "pins %" PRIu64, m->w1, stamped);
    if (tx) {
        const int r2 = load_finish(c, &l, ls);
        rc = rc ? rc : r2;
    }
    return rc;
}

/* What a window's read-out gave and its checks counted. */
struct bd_size {
    struct nicscope_counts k;
    struct nicscope_bd bd;
    uint64_t window;                        /* cycles */
    size_t n;                               /* read counts compared with the host model's */
    bool checked[NICSCOPE_BD_NCLASSES];     /* read classes compared */
    struct little lt;
    struct nicscope_wbd wb;
    size_t wn;                              /* write counts compared */
};

/* The window's reads: the analyzer's counts and read breakdown, its own checks, the host
 * model's cross-check, Little's law on the tags. */
static int bd_reads(struct ctx *c, const struct bd_args *a, const struct window *w,
                    const struct load_state *ls, const struct bd_marks *m, struct bd_size *r)
{
    const bool tx = strcmp(a->path, "tx") == 0, c2h = strcmp(a->path, "c2h") == 0;
    char err[256];
    int rc;
    if ((rc = read_window(c, w->refused0, &r->k)))
        return rc;
    if (nicscope_read_breakdown(c->b, &r->bd, err, sizeof err) < 0)
        return fail(c, "breakdown read-out: %s", err);
    if (r->bd.nclasses == 0)
        return fail(c, "this analyzer was built without the latency breakdown "
                    "(ANALYZER_BD_INFO.NCLASSES 0)");
    r->window = r->k.occ[0][NS_BUSY] + r->k.occ[0][NS_STALL] + r->k.occ[0][NS_IDLE];
    if ((rc = self_check(c, &r->bd)))
        return rc;
    if (m->timed &&
        (rc = bd_read_crosscheck(c, ls, tx, m->n0, m->n1, &r->bd, &r->n, r->checked)))
        return rc;
    if (!c2h && (rc = little_tags(c, &r->k, &r->bd, r->window, &r->lt)))
        return rc;
    return EXIT_OK;
}

/* The window's writes: the write breakdown, its own checks, the host model's cross-check. */
static int bd_writes(struct ctx *c, const struct bd_args *a, const struct bd_marks *m,
                     struct bd_size *r)
{
    const bool c2h = strcmp(a->path, "c2h") == 0;
    char err[256];
    int rc;
    if (nicscope_read_wr_breakdown(c->b, &r->wb, err, sizeof err) < 0)
        return fail(c, "write breakdown read-out: %s", err);
    if (r->wb.nclasses == 0 && c2h)
        return fail(c, "this analyzer was built without the write breakdown "
                    "(ANALYZER_WBD_INFO.NCLASSES 0)");
    if ((rc = wr_self_check(c, &r->wb)))
        return rc;
    if (m->wtimed && r->wb.nclasses && m->w1 > m->w0 &&
        (rc = wr_crosscheck(c, &r->wb, m->w0, m->w1, &r->wn)))
        return rc;
    return EXIT_OK;
}

static int run_size(struct ctx *c, const struct bd_args *a, uint64_t size, size_t *compared,
                    size_t *wr_compared)
{
    static struct load_state ls;
    static struct bd_stream st;
    struct bd_marks m;
    struct window w;
    int rc = bd_load(c, a, size, &ls, &st, &m, &w);
    if (rc)
        return rc;
    struct bd_size r = {0};
    if ((rc = bd_reads(c, a, &w, &ls, &m, &r)) || (rc = bd_writes(c, a, &m, &r)))
        return rc;
    if (strcmp(a->path, "c2h") == 0)
        out(c, "\n%" PRIu64 " B: window %" PRIu64 " cycles\n", size, r.window);
    else
        print_size(c, size, &r.bd, r.window);
    if (r.lt.have)
        out(c, "  Little's law on read tags: mean in use %.4f (tag FIFO) = MRd rate %.6f/cycle "
            "(PHY) x mean hold %.2f cycles (phy+rtt+cpl) = %.4f; %.3f %% apart\n",
            r.lt.mean_tags, r.lt.mrd_rate, r.lt.mean_hold, r.lt.mrd_rate * r.lt.mean_hold,
            r.lt.diff_pct);
    if (r.wb.nclasses)
        print_wr_size(c, &r.wb);
    if (a->stream)
        out(c, "  deep capture beside the load: %zu entries in host memory of %u due, %u lost\n",
            st.taken, st.entries, st.lost);
    json_size(c, size, r.window, &r.bd, r.n, &r.lt, r.checked, &r.wb, r.wn,
              a->stream ? &st : NULL);
    *compared += r.n;
    *wr_compared += r.wn;
    return EXIT_OK;
}

/* --- the command -------------------------------------------------------------------------------- */

/* The options into *a: EXIT_OK or a usage error. */
static int bd_options(int argc, char **argv, struct bd_args *a)
{
    const char *sizes = NULL;
    char err[256];
    static const struct option opts[] = {{"path", required_argument, NULL, 'p'},
                                         {"sizes", required_argument, NULL, 's'},
                                         {"count", required_argument, NULL, 'n'},
                                         {"stream", no_argument, NULL, 'S'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("breakdown", argc, argv, opts)) != -1) {
        switch (o) {
        case 'p':
            if (!optarg || (strcmp(optarg, "dma") && strcmp(optarg, "c2h") &&
                            strcmp(optarg, "tx")))
                return usage_error("--path: dma, c2h or tx");
            a->path = optarg;
            break;
        case 's':
            if (!optarg)
                return usage_error("--sizes: a list of bytes");
            sizes = optarg;
            break;
        case 'n':
            if (!optarg || bu_parse_u64(optarg, &a->count) < 0 || a->count == 0 ||
                a->count > 256)
                return usage_error("--count: 1..256");
            break;
        case 'S':
            a->stream = true;
            break;
        default:
            return EXIT_USAGE;
        }
    }
    const bool tx = strcmp(a->path, "tx") == 0;
    if (!sizes)
        sizes = tx ? "64,256,1024,1514" : "64,256,1024,4096";
    if (bu_parse_list(sizes, a->sizes, MAX_SIZES, &a->nsizes, err, sizeof err) < 0)
        return usage_error("--sizes: %s", err);
    for (size_t i = 0; i < a->nsizes; i++) {
        const uint64_t s = a->sizes[i];
        if (tx && (s < 14 || s > 1514))
            return usage_error("--sizes: %" PRIu64 ": --path tx frames are 14..1514 bytes", s);
        if (!tx && (s == 0 || s % 16 || s > 65536))
            return usage_error("--sizes: %" PRIu64 ": --path %s transfers are multiples of 16 "
                               "up to 64K", s, a->path);
        if (!tx && s * a->count > (64u << 20))
            return usage_error("--sizes x --count: %" PRIu64 " B, at most 64M", s * a->count);
    }
    return EXIT_OK;
}

/* After the sizes: what was checked, and what was compared with the host model. */
static void bd_summary(struct ctx *c, const struct bd_args *a, size_t compared,
                       size_t wr_compared)
{
    const bool tx = strcmp(a->path, "tx") == 0, c2h = strcmp(a->path, "c2h") == 0;
    out(c, "\nchecks: every request of each window completed; stages add up to the total; "
        "occupancy integral = latency sum (Little's law); no tag mismatch; %s"
        "every MWr matched to a write\n", c2h ? "" : "tags in use = MRd rate x tag hold within "
        "1 % (Little's law, three counters); ");
    if (compared && !c2h)
        out(c, "cross-check: %zu breakdown counts (rtt, cpl per request class) equal the host "
            "model's timestamps of the same TLPs (%s)\n", compared,
            tx ? "its reads classed by address: descriptor rings or payload buffers"
               : "its reads all raw_dma");
    if (wr_compared)
        out(c, "cross-check: %zu write breakdown counts (every class: queue, credit, phy, "
            "total) equal the host model's MWr timestamps with the probe pins' times of the "
            "same writes\n", wr_compared);
}

int cmd_breakdown(struct ctx *c, int argc, char **argv)
{
    struct bd_args a = {.path = "dma", .count = 16};
    int rc = bd_options(argc, argv, &a);
    if (rc || (rc = open_dev(c)))
        return rc;
    const bool tx = strcmp(a.path, "tx") == 0, c2h = strcmp(a.path, "c2h") == 0;
    out(c, "latency breakdown of the device's DMA %s: %s, %" PRIu64 " %s per size\n",
        c2h ? "writes" : "reads and writes",
        tx ? "frames through the NIC's TX ring (descriptor and payload reads) and the MAC "
             "loopback" : c2h ? "c2h transfers on the raw DMA writer, descriptors back to back"
                              : "h2c transfers on the raw DMA reader, descriptors back to back",
        a.count, tx ? "frames" : "transfers");
    bu_json_obj_begin(&c->j);
    bu_json_kstr(&c->j, "path", a.path);
    bu_json_ku64(&c->j, "count", a.count);
    bu_json_key(&c->j, "stream");
    bu_json_bool(&c->j, a.stream);
    bu_json_kdouble(&c->j, "ns_per_cycle", period_ns());
    bu_json_kstrs(&c->j, "stages", nicscope_bd_stage_names, NICSCOPE_BD_NSTAGES);
    bu_json_kstrs(&c->j, "wr_stages", nicscope_wbd_stage_names, NICSCOPE_WBD_NSTAGES);
    bu_json_key(&c->j, "sizes");
    bu_json_arr_begin(&c->j);
    size_t compared = 0, wr_compared = 0;
    for (size_t i = 0; i < a.nsizes && !rc; i++)
        rc = run_size(c, &a, a.sizes[i], &compared, &wr_compared);
    bu_json_arr_end(&c->j);
    bu_json_ku64(&c->j, "model_crosschecked", compared);
    bu_json_ku64(&c->j, "wr_model_crosschecked", wr_compared);
    bu_json_obj_end(&c->j);
    if (rc)
        return rc;
    bd_summary(c, &a, compared, wr_compared);
    return EXIT_OK;
}
