// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_capture.c: `nicscope capture`, program the trigger, arm, run a load, read the trace back and
 * write a VCD (and FST) plus a GTKWave save file (cmd_capture.h). Options: the usage text in
 * main.c.
 */
#include "cmd_capture.h"

/* One option into *a: EXIT_OK or a usage error. */
static int cap_option(int o, struct cap_args *a)
{
    char err[1024];
    int rc;
    switch (o) {
    case 't':
        if (!optarg)
            return usage_error("--trigger needs a stage");
        if (a->nst == NICSCOPE_NSTAGES)
            return usage_error("--trigger: at most %d stages", NICSCOPE_NSTAGES);
        if (nicscope_parse_stage(optarg, &a->st[a->nst], err, sizeof err) < 0)
            return usage_error("--trigger: %s", err);
        a->specs[a->nst++] = optarg;
        break;
    case 'p':
        if (!optarg || bu_parse_u64(optarg, &a->pre) < 0 || a->pre >= NICSCOPE_DEPTH)
            return usage_error("--pre: 0..%d entries", NICSCOPE_DEPTH - 1);
        a->pre_given = true;
        break;
    case 'P':
        if (!optarg || bu_parse_u64(optarg, &a->post) < 0 || a->post > UINT32_MAX)
            return usage_error("--post: cycles, 0..2^32-1");
        a->post_given = true;
        break;
    case 'v':
        if (!optarg)
            return usage_error("--vcd needs a file");
        a->vcd = optarg;
        break;
    case 'g':
        if (!optarg)
            return usage_error("--gtkw needs a file");
        a->gtkw = optarg;
        break;
    case 's':
        a->stream = true;
        break;
    case 'F':
        if (!optarg)
            return usage_error("--trigger-figure needs figure>value or figure<value");
        if (a->nfig == NICSCOPE_NFIGURES)
            return usage_error("--trigger-figure: at most %d (the analyzer's figure "
                               "comparators)", NICSCOPE_NFIGURES);
        if ((rc = parse_figure(optarg, &a->figs[a->nfig])))
            return rc;
        a->nfig++;
        break;
    case 'k':
        if (!optarg)
            return usage_error("--track needs a level");
        if (strcmp(optarg, "none") == 0) {
            a->no_tracks = true;
            break;
        }
        if (nicscope_level_index(optarg) < 0)
            return usage_error("--track '%s': no such level (`nicscope info` lists them)",
                               optarg);
        if (a->ntrack_args == NICSCOPE_NTRACKS)
            return usage_error("--track: at most %d levels", NICSCOPE_NTRACKS);
        a->track_names[a->ntrack_args++] = optarg;
        break;
    case 'r':
        if (!optarg || bu_parse_u64(optarg, &a->ring_log2) < 0 || a->ring_log2 < 4 ||
            a->ring_log2 > 24)
            return usage_error("--ring-log2: 4..24 (a ring of 2**N entries)");
        break;
    case 'T':
        if (!optarg || bu_parse_u64(optarg, &a->throttle_ns) < 0 || a->throttle_ns > 1000000000)
            return usage_error("--throttle-ns: 0..1e9 ns");
        break;
    default:
        return load_option(o, optarg, &a->l);
    }
    return EXIT_OK;
}

static int cap_options(int argc, char **argv, struct cap_args *a)
{
    static const struct option opts[] = {
        LOAD_OPTIONS,
        {"trigger", required_argument, NULL, 't'}, {"pre", required_argument, NULL, 'p'},
        {"post", required_argument, NULL, 'P'},    {"vcd", required_argument, NULL, 'v'},
        {"gtkw", required_argument, NULL, 'g'},    {"stream", no_argument, NULL, 's'},
        {"ring-log2", required_argument, NULL, 'r'},
        {"throttle-ns", required_argument, NULL, 'T'},
        {"trigger-figure", required_argument, NULL, 'F'},
        {"track", required_argument, NULL, 'k'}, {NULL, 0, NULL, 0}};
    int o, rc;
    while ((o = next_option("capture", argc, argv, opts)) != -1)
        if ((rc = cap_option(o, a)))
            return rc;
    return EXIT_OK;
}

/* The output files (both created before the run, named only once complete) and the options
 * that do not go together; without --trigger, each figure is a stage on its hit: a level's
 * crossing (rise), a latency's hit (a pulse on the cycle the request is counted). */
static int cap_check(struct ctx *c, struct cap_args *a, struct out_file **vcd_out,
                     struct out_file **gtkw_out)
{
    char err[1024];
    if (!a->gtkw) {
        snprintf(a->gtkw_path, sizeof a->gtkw_path, "%s", a->vcd);
        char *dot = strrchr(a->gtkw_path, '.');
        if (dot && strcmp(dot, ".vcd") == 0)
            *dot = 0;
        strncat(a->gtkw_path, ".gtkw", sizeof a->gtkw_path - strlen(a->gtkw_path) - 1);
        a->gtkw = a->gtkw_path;
    }
    int rc = out_create(c, "--vcd", a->vcd, vcd_out);
    if (rc || (rc = out_create(c, "--gtkw", a->gtkw, gtkw_out)))
        return rc;
    if (a->stream && (a->nst || a->pre_given || a->post_given || a->nfig || a->ntrack_args))
        return usage_error("--stream takes every change of the sample from the start to the "
                           "end of the load: no --trigger, --trigger-figure, --pre, --post or "
                           "--track");
    if (a->no_tracks && a->ntrack_args)
        return usage_error("--track none and --track LEVEL");
    if (!a->nst)
        for (unsigned i = 0; i < a->nfig; i++) {
            char spec[32];
            snprintf(spec, sizeof spec, "%sfig%u", a->figs[i].latency ? "" : "rise:", i);
            if (nicscope_parse_stage(spec, &a->st[a->nst], err, sizeof err) < 0)
                return usage_error("--trigger-figure: %s", err);
            a->specs[a->nst++] = a->figs[i].spec;
        }
    if (!a->stream && (a->ring_log2 != 16 || a->throttle_ns))
        return usage_error("--ring-log2 and --throttle-ns are --stream's");
    return EXIT_OK;
}

/* The tracks: --track, else the figures' levels, then rd_tags and nic_rd (as many as the
 * analyzer stores). */
static int cap_tracks(struct ctx *c, struct cap_args *a)
{
    if (a->ntrack_args && a->ntrack_args > a->hw_trk)
        return fail(c, "--track: this analyzer stores %u levels beside the sample", a->hw_trk);
    for (unsigned i = 0; i < a->ntrack_args; i++)
        a->tracks[a->ntracks++] = nicscope_level_index(a->track_names[i]);
    if (!a->ntrack_args && !a->no_tracks) {
        const char *dflt[] = {"rd_tags", "nic_rd"};
        for (unsigned i = 0; i < a->nfig + 2 && a->ntracks < a->hw_trk; i++) {
            const int l = i < a->nfig ? (a->figs[i].latency ? -1 : a->figs[i].src)
                                      : nicscope_level_index(dflt[i - a->nfig]);
            bool dup = l < 0;
            for (unsigned j = 0; j < a->ntracks && !dup; j++)
                dup = a->tracks[j] == l;
            if (!dup)
                a->tracks[a->ntracks++] = l;
        }
    }
    return EXIT_OK;
}

/* What the analyzer has: its figure comparators (the figures' thresholds in cycles, each figN
 * a stage uses given) and its tracks. */
static int cap_device(struct ctx *c, struct cap_args *a)
{
    char err[1024];
    unsigned hw_fig = 0;
    int rc;
    if (!a->stream && nicscope_figures_info(c->b, &hw_fig, &a->hw_trk, err, sizeof err) < 0)
        return fail(c, "%s", err);
    if (a->nfig > hw_fig)
        return fail(c, "--trigger-figure: this analyzer has %u figure comparators", hw_fig);
    for (unsigned i = 0; i < a->nfig; i++)
        if ((rc = figure_threshold(c, &a->figs[i])))
            return rc;
    for (unsigned s2 = 0; s2 < a->nst; s2++)
        if (nicscope_bits(a->st[s2].a.mask, NICSCOPE_SAMPLE_WIDTH, NICSCOPE_NFIGURES) >> a->nfig ||
            nicscope_bits(a->st[s2].b.mask, NICSCOPE_SAMPLE_WIDTH, NICSCOPE_NFIGURES) >> a->nfig)
            return usage_error("--trigger '%s': figN needs N --trigger-figure options before "
                               "it is used (%u given)", a->specs[s2], a->nfig);
    return cap_tracks(c, a);
}

/* The analyzer's capture depth (entries) as the hardware reports it: ANALYZER_INFO.DEPTH_LOG2. */
static uint32_t capture_depth(struct nic_backend *b)
{
    const uint32_t info = nic_read32(b, NIC_CSR(b, ANALYZER, INFO));
    return 1u << ((info >> NIC_CSR_ANALYZER_INFO_DEPTH_LOG2_OFFSET) &
                  ((1u << NIC_CSR_ANALYZER_INFO_DEPTH_LOG2_SIZE) - 1u));
}

/* Default window: pre = depth/16 entries, post = depth - pre - 1 cycles. The trigger's own
 * entry and the pre ones leave depth - pre - 1 entries, and a post window of that many cycles
 * cannot make more even if the sample changes on every cycle: it always ends before the
 * storage is full. */
static int cap_window(struct ctx *c, struct cap_args *a)
{
    const uint32_t depth = capture_depth(c->b);
    if (!a->pre_given)
        a->pre = depth / 16;
    if (a->pre >= depth)
        return fail(c, "--pre %" PRIu64 ": the analyzer holds %u entries", a->pre, depth);
    if (!a->post_given)
        a->post = depth - a->pre - 1;
    return EXIT_OK;
}

/* Program the figures, tracks and trigger, arm, run the load; the host model's count of the
 * reads it timed before and after. */
static int cap_run(struct ctx *c, struct cap_args *a, struct load_state *ls,
                   struct cap_result *r)
{
    int rc;
    if ((rc = load_prepare(c, &a->l, ls)))
        return rc;
    for (unsigned i = 0; i < a->nfig; i++)
        nicscope_set_figure(c->b, i, (unsigned)a->figs[i].src, a->figs[i].below,
                            (uint32_t)a->figs[i].threshold);
    if (a->hw_trk)
        nicscope_set_tracks(c->b, a->tracks, a->ntracks);
    nicscope_set_trigger(c->b, a->st, a->nst);
    r->timed = nic_counter(c->b, "model.reads_timed", &r->reads0) == 0;
    nicscope_arm(c->b, (uint32_t)a->pre, (uint32_t)a->post);
    if ((rc = run_load(c, &a->l, ls)) || (rc = load_finish(c, &a->l, ls)))
        return rc;
    if (r->timed && nic_counter(c->b, "model.reads_timed", &r->reads1) != 0)
        return fail(c, "capture: counter model.reads_timed disappeared");
    return EXIT_OK;
}

/* Wait for the capture to end (stopped at the timeout), read its entries back into r->ch. */
static int cap_read(struct ctx *c, struct cap_result *r)
{
    struct nicscope_status *s = &r->s;
    const uint64_t deadline = nic_now_ns(c->b) + c->timeout_ns;
    for (;;) {
        nicscope_status(c->b, s);
        if (s->state == NICSCOPE_STATE_DONE || nic_now_ns(c->b) > deadline)
            break;
        nic_idle(c->b, 1000);
    }
    if (s->state != NICSCOPE_STATE_DONE) {
        nicscope_stop(c->b);
        nicscope_status(c->b, s);
    }
    r->ch = calloc(s->count ? s->count : 1, sizeof *r->ch);
    if (!r->ch)
        return fail(c, "out of memory");
    nicscope_read_trace(c->b, s, r->ch);
    int rc = backend_check(c, "trace read-out");
    if (rc) {
        free(r->ch);
        r->ch = NULL;
    }
    return rc;
}

/* The VCD with the host's events (host: the tx load's doorbell writes on the device's time
 * axis; freed here) and the GTKWave file; both named once written. */
static int cap_files(struct ctx *c, const struct cap_args *a, const struct load_state *ls,
                     const struct cap_result *r, int64_t *host, struct out_file *vcd_out,
                     struct out_file *gtkw_out)
{
    int rc = write_vcd(c, vcd_out, gtkw_out, &r->s, r->ch, NULL, host, ls->ntx_db, a->tracks,
                       a->ntracks);
    free(host);
    if (!rc && !(rc = out_commit(c, vcd_out)))
        rc = out_commit(c, gtkw_out);
    return rc;
}

int cmd_capture(struct ctx *c, int argc, char **argv)
{
    struct cap_args a = {.l = LOAD_DEFAULT, .vcd = "nicscope.vcd", .ring_log2 = 16};
    struct out_file *vcd_out, *gtkw_out;
    int rc;
    if ((rc = cap_options(argc, argv, &a)) || (rc = cap_check(c, &a, &vcd_out, &gtkw_out)) ||
        (rc = open_dev(c)) || (rc = cap_device(c, &a)))
        return rc;
    if (a.stream)
        return capture_stream(c, &a.l, vcd_out, gtkw_out, (unsigned)a.ring_log2, a.throttle_ns);
    static struct load_state ls;
    struct cap_result r = {0};
    if ((rc = cap_window(c, &a)) || (rc = cap_run(c, &a, &ls, &r)) || (rc = cap_read(c, &r)))
        return rc;
    struct nicscope_timebase tb;
    int64_t *host = load_host_cycles(c, &ls, &tb);
    if (!host) {
        free(r.ch);
        return fail(c, "out of memory");
    }
    rc = cap_files(c, &a, &ls, &r, host, vcd_out, gtkw_out);
    rc = cap_report(c, &a, &ls, &r, rc);
    cap_json(c, &a, &r);
    free(r.ch);
    if (!rc && a.nst && !r.s.triggered)
        rc = fail(c, "the trigger did not fire (stage %u of %u reached); what was stored before "
                  "the stop is in %s", r.s.stage, a.nst, a.vcd);
    return rc;
}
