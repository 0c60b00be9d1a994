// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_capture.c: `nicscope capture`, program the trigger, arm, run a load, read the trace back and
 * write a VCD (and FST) plus a GTKWave save file. Options: the usage text in main.c.
 */
#include "nicscope.h"

#include <math.h>

/* --- capture ----------------------------------------------------------------------------------- */

static const char *tlp_name(unsigned ft)
{
    const unsigned fmt = ft >> 5, type = ft & 0x1f;
    if (type == 0 && fmt <= 1)
        return "MRd";
    if (type == 0 && (fmt == 2 || fmt == 3))
        return "MWr";
    if (ft == 0x4a)
        return "CplD";
    if (ft == 0x0a)
        return "Cpl";
    if ((type >> 3) == 2)
        return "Msg";
    return "other";
}

/* The VCD: every sample signal under nic.<group>.<probe>, the decoded TLP type of each TLP
 * probe (a string, "-" between TLPs), nic.analyzer.trigger and the tracked levels under
 * nic.levels (integers, drawn as analog waveforms). Times in ps. */
/* Host events as edges on the device's time axis, written in time order between the
 * entries: at(T) first writes the edges before cycle T, then sets the time to T and writes the
 * edges at T. */
struct host_edges {
    struct vcd_writer *w;
    const struct vcd_var *var;
    const int64_t *ev;
    size_t n, i;
    bool high;                      /* the pulse of ev[i] is on: its falling edge is next */
    uint64_t ps;
};

static uint64_t edge_cycle(const struct host_edges *h)
{
    return (uint64_t)h->ev[h->i] + h->high;
}

static void edge_write(struct host_edges *h)
{
    vcd_value(h->w, h->var, !h->high);
    h->i += h->high;
    h->high = !h->high;
}

static void at(struct host_edges *h, uint64_t cycle)
{
    while (h->var && h->i < h->n && edge_cycle(h) < cycle) {
        vcd_time(h->w, edge_cycle(h) * h->ps);
        edge_write(h);
    }
    vcd_time(h->w, cycle * h->ps);
    while (h->var && h->i < h->n && edge_cycle(h) == cycle)
        edge_write(h);
}

int write_vcd(struct ctx *c, const struct out_file *vcd, const struct out_file *gtkw,
              const struct nicscope_status *st, const struct nicscope_change *ch,
              const bool *gap, const int64_t *host, size_t nhost, const int *tracks,
              unsigned ntracks)
{
    const char *path = vcd->path;
    const size_t nsig = nicscope_nsignals;
    struct vcd_var *vars = calloc(nsig + NICSCOPE_NPROBES + 3 + NICSCOPE_NTRACKS,
                                  sizeof *vars);
    char (*scopes)[64] = calloc(NICSCOPE_NPROBES + 3, sizeof *scopes);
    int *tlp_var = calloc(NICSCOPE_NPROBES, sizeof *tlp_var);
    if (!vars || !scopes || !tlp_var)
        return fail(c, "out of memory");
    for (int p = 0; p < NICSCOPE_NPROBES; p++)
        snprintf(scopes[p], 64, "nic.%s.%s", nicscope_probes[p].group, nicscope_probes[p].name);
    snprintf(scopes[NICSCOPE_NPROBES], 64, "nic.analyzer");
    snprintf(scopes[NICSCOPE_NPROBES + 1], 64, "nic.host");
    snprintf(scopes[NICSCOPE_NPROBES + 2], 64, "nic.levels");
    size_t n = 0;
    for (int p = 0; p < NICSCOPE_NPROBES; p++) {
        for (size_t i = 0; i < nsig; i++)
            if (nicscope_signals[i].probe == p)
                vars[n++] = (struct vcd_var){scopes[p], nicscope_signals[i].name,
                                             nicscope_signals[i].width, VCD_WIRE, ""};
        tlp_var[p] = -1;
        if (nicscope_probes[p].tlp >= 0) {
            tlp_var[p] = (int)n;
            vars[n++] = (struct vcd_var){scopes[p], "tlp", 1, VCD_STRING, ""};
        }
    }
    const size_t trig_var = n;
    vars[n++] = (struct vcd_var){scopes[NICSCOPE_NPROBES], "trigger", 1, VCD_WIRE, ""};
    const size_t gap_var = n;
    if (gap)
        vars[n++] = (struct vcd_var){scopes[NICSCOPE_NPROBES], "gap", 1, VCD_WIRE, ""};
    const size_t host_var = n;
    if (host)
        vars[n++] = (struct vcd_var){scopes[NICSCOPE_NPROBES + 1], "tx_doorbell", 1, VCD_WIRE,
                                     ""};
    /* Track i is stored in the entries' track slot i; only the slots with a level are drawn. */
    size_t trk_var[NICSCOPE_NTRACKS + 1];
    for (unsigned i = 0; i < ntracks && i < NICSCOPE_NTRACKS; i++) {
        trk_var[i] = n;
        if (tracks[i] >= 0)
            vars[n++] = (struct vcd_var){scopes[NICSCOPE_NPROBES + 2],
                                         nicscope_level_names[tracks[i]], NICSCOPE_TRACK_WIDTH,
                                         VCD_INTEGER, ""};
    }

    const uint64_t ps = (uint64_t)(period_ns() * 1000.0 + 0.5);
    char comment[256];
    snprintf(comment, sizeof comment, "bus analyzer capture: %u entries, cycles %" PRIu64
             "..%" PRIu64 ", trigger %s%" PRIu64 ", %" PRIu64 " ps per cycle", st->count,
             st->count ? ch[0].cycle : 0, st->end_ts, st->triggered ? "at cycle " : "not fired ",
             st->trig_ts, ps);
    struct vcd_writer w;
    if (vcd_begin(&w, vcd->part, "1ps", comment, vars, n) < 0)
        return fail(c, "cannot write %s", path);
    /* The host events within the capture: from its first entry to its end. */
    struct host_edges h = {.w = &w, .ps = ps};
    if (host && st->count) {
        size_t i0 = 0;
        while (i0 < nhost && host[i0] < (int64_t)ch[0].cycle)
            i0++;
        size_t i1 = i0;
        while (i1 < nhost && host[i1] + 1 < (int64_t)st->end_ts)
            i1++;
        h = (struct host_edges){&w, &vars[host_var], host + i0, i1 - i0, 0, false, ps};
    }
    uint32_t prev[NICSCOPE_SAMPLE_WORDS] = {0};
    bool trig_on = false;
    for (uint32_t k = 0; k < st->count; k++) {
        /* The trigger marker falls the cycle after the trigger, entry or not. */
        if (trig_on && (k == st->count || ch[k].cycle > st->trig_ts + 1)) {
            at(&h, st->trig_ts + 1);
            vcd_value(&w, &vars[trig_var], 0);
            trig_on = false;
        }
        /* A gap: entries were lost between the entry before and this one. */
        if (gap && k && gap[k]) {
            at(&h, ch[k - 1].cycle + 1);
            vcd_value(&w, &vars[gap_var], 1);
        }
        at(&h, ch[k].cycle);
        if (host && k == 0)
            vcd_value(&w, &vars[host_var], 0);
        if (gap && (k == 0 || gap[k]))
            vcd_value(&w, &vars[gap_var], 0);
        for (size_t i = 0, vi = 0; i < nsig; i++) {
            const struct nicscope_signal *s = &nicscope_signals[i];
            while (vars[vi].kind != VCD_WIRE || strcmp(vars[vi].name, s->name) != 0 ||
                   vars[vi].scope != scopes[s->probe])
                vi++;
            const uint64_t x = nicscope_bits(ch[k].v, s->offset, s->width);
            if (k == 0 || x != nicscope_bits(prev, s->offset, s->width))
                vcd_value(&w, &vars[vi], x);
        }
        for (int p = 0; p < NICSCOPE_NPROBES; p++) {
            if (tlp_var[p] < 0)
                continue;
            char key[96];
            snprintf(key, sizeof key, "%s.valid", nicscope_probes[p].name);
            const struct nicscope_signal *sv = &nicscope_signals[nicscope_signal_index(key)];
            snprintf(key, sizeof key, "%s.first", nicscope_probes[p].name);
            const struct nicscope_signal *sf = &nicscope_signals[nicscope_signal_index(key)];
            snprintf(key, sizeof key, "%s.fmt_type", nicscope_probes[p].name);
            const struct nicscope_signal *sft = &nicscope_signals[nicscope_signal_index(key)];
            const char *now = nicscope_bits(ch[k].v, sv->offset, 1) &&
                                      nicscope_bits(ch[k].v, sf->offset, 1)
                                  ? tlp_name((unsigned)nicscope_bits(ch[k].v, sft->offset, 8))
                                  : "-";
            const char *was = k && nicscope_bits(prev, sv->offset, 1) &&
                                      nicscope_bits(prev, sf->offset, 1)
                                  ? tlp_name((unsigned)nicscope_bits(prev, sft->offset, 8))
                                  : "-";
            if (k == 0 || strcmp(now, was) != 0)
                vcd_string(&w, &vars[tlp_var[p]], now);
        }
        for (unsigned i = 0; i < ntracks && i < NICSCOPE_NTRACKS; i++)
            if (tracks[i] >= 0 && (k == 0 || ch[k].trk[i] != ch[k - 1].trk[i]))
                vcd_value(&w, &vars[trk_var[i]], ch[k].trk[i]);
        if (k == 0 || (st->triggered && ch[k].cycle == st->trig_ts)) {
            trig_on = st->triggered && ch[k].cycle == st->trig_ts;
            vcd_value(&w, &vars[trig_var], trig_on);
        }
        memcpy(prev, ch[k].v, sizeof prev);
    }
    if (trig_on && st->trig_ts + 1 < st->end_ts) {
        at(&h, st->trig_ts + 1);
        vcd_value(&w, &vars[trig_var], 0);
    }
    if (st->count && st->end_ts > ch[st->count - 1].cycle)
        at(&h, st->end_ts);                 /* the end of the covered window */
    int rc = vcd_end(&w) < 0 ? fail(c, "error writing %s", path) : EXIT_OK;
    if (!rc &&
        gtkw_write(gtkw->part, path, vars, n, st->count ? ch[0].cycle * ps : 0, st->end_ts * ps,
                   st->triggered ? (int64_t)(st->trig_ts * ps) : -1) < 0)
        rc = fail(c, "cannot write %s", gtkw->path);
    free(vars);
    free(scopes);
    free(tlp_var);
    return rc;
}

/* --trigger-figure: figure>value or figure<value; a latency's value in cycles or ns/us. */
struct figure_arg {
    const char *spec;
    int src;                        /* index into nicscope_fig_names */
    bool below, latency;
    double value, ns;               /* as given; ns per unit (0: the figure's own units) */
    uint64_t threshold;             /* cycles for a latency (figure_threshold()) */
};

static int parse_figure(const char *spec, struct figure_arg *f)
{
    const char *op = strpbrk(spec, "<>");
    if (!op)
        return usage_error("--trigger-figure '%s': figure>value or figure<value", spec);
    char name[128];
    const size_t len = (size_t)(op - spec);
    if (len == 0 || len >= sizeof name)
        return usage_error("--trigger-figure '%s': no figure name", spec);
    memcpy(name, spec, len);
    name[len] = 0;
    *f = (struct figure_arg){.spec = spec, .src = nicscope_fig_index(name), .below = *op == '<'};
    if (f->src < 0) {
        char names[2048] = "";
        size_t off = 0;
        for (unsigned i = 0; i < NICSCOPE_NFIG_SOURCES && off + 64 < sizeof names; i++)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", i ? ", " : "",
                                    nicscope_fig_names[i]);
        return usage_error("--trigger-figure '%s': no figure '%s'; figures: %s", spec, name,
                           names[0] ? names : "none (this analyzer has no levels, breakdown or "
                           "events)");
    }
    f->latency = strncmp(name, "level.", 6) != 0;
    char *end;
    const double v = strtod(op + 1, &end);
    double scale = 0;                 /* ns per unit; 0: the figure's own units */
    if (strcmp(end, "ns") == 0)
        scale = 1;
    else if (strcmp(end, "us") == 0)
        scale = 1000;
    else if (*end)
        return usage_error("--trigger-figure '%s': '%s' is not a number (a latency may end in "
                           "ns or us)", spec, op + 1);
    if (end == op + 1 || !(v >= 0))
        return usage_error("--trigger-figure '%s': a value >= 0", spec);
    if (scale && !f->latency)
        return usage_error("--trigger-figure '%s': a level's value has no unit", spec);
    if (!scale && (v != floor(v) || v > UINT32_MAX))
        return usage_error("--trigger-figure '%s': an integer up to 2^32-1", spec);
    f->value = v;
    f->ns = scale;
    return EXIT_OK;
}

/* The threshold in the figure's units, once the clock is known: x > t cycles for a real t is
 * x > floor(t); x < t is x < ceil(t). */
static int figure_threshold(struct ctx *c, struct figure_arg *f)
{
    const double cyc = f->ns ? f->value * f->ns / period_ns() : f->value;
    const double t = f->below ? ceil(cyc) : floor(cyc);
    if (t > UINT32_MAX)
        return fail(c, "--trigger-figure '%s': %.0f cycles, more than 2^32-1", f->spec, t);
    f->threshold = (uint64_t)t;
    return EXIT_OK;
}

/* The host model's check of a figure on a read's rtt or cpl stage (the stages it times at the
 * PHY), when the load's reads are of the figure's class (dma: raw_dma; tx: nic_desc, nic_payload,
 * the model's reads classed by address, in the load's descriptor rings or not): of the reads of
 * that class the load made, [n0, n1) in completion order, the first past the threshold must be
 * the one the trigger latched, its stage equal to the figure's value cycle for cycle. */
struct model_check {
    bool done;
    uint64_t read, stage;           /* its index in the load, its stage in cycles */
    int64_t first_cpl_cycle, end_cycle;   /* on the analyzer's axis (the time base) */
};

static int model_figure_check(struct ctx *c, const struct load *l,
                              const struct load_state *ls, const struct figure_arg *f,
                              uint32_t value, uint64_t n0, uint64_t n1, struct model_check *mc)
{
    const char *name = nicscope_fig_names[f->src];
    const bool rtt = strstr(name, ".rtt") != NULL, cpl = strstr(name, ".cpl") != NULL;
    const bool tx = strcmp(l->kind, "tx") == 0;
    const bool desc = strncmp(name, "bd.nic_desc.", 12) == 0;
    const bool cls_ok = (strcmp(l->kind, "dma") == 0 && strncmp(name, "bd.raw_dma.", 11) == 0) ||
                        (tx && (desc || strncmp(name, "bd.nic_payload.", 15) == 0));
    memset(mc, 0, sizeof *mc);
    if (!(rtt || cpl) || !cls_ok)
        return EXIT_OK;
    const uint64_t period_ps = (uint64_t)(period_ns() * 1000.0 + 0.5);
    struct nicscope_timebase tb;
    nicscope_timebase(c->b, period_ns(), &tb);
    uint64_t nread = 0;
    for (uint64_t i = n0; i < n1; i++) {
        uint64_t t[4];
        const char *fields[] = {"start_ps", "first_cpl_ps", "end_ps", "addr"};
        for (int k = 0; k < 4; k++) {
            char n[64];
            snprintf(n, sizeof n, "model_read_%s:%" PRIu64, fields[k], i);
            if (nic_counter(c->b, n, &t[k]) != 0)
                return fail(c, "cross-check: the host model no longer holds read %" PRIu64, i);
        }
        if (tx && load_desc_addr(ls, t[3]) != desc)
            continue;               /* a read of the other NIC class */
        nread++;
        const uint64_t v = (rtt ? t[1] - t[0] : t[2] - t[1]) / period_ps;
        if (f->below ? v < f->threshold : v > f->threshold) {
            *mc = (struct model_check){true, i - n0, v,
                                       nicscope_cycle_at(&tb, (double)t[1] / 1000.0),
                                       nicscope_cycle_at(&tb, (double)t[2] / 1000.0)};
            if (v != value)
                return fail(c, "cross-check: the host model's first read past %s %c %" PRIu64
                            " (read %" PRIu64 " of the load) took %" PRIu64 " cycles; the "
                            "trigger latched %u", name, f->below ? '<' : '>', f->threshold,
                            i - n0, v, value);
            return EXIT_OK;
        }
    }
    return fail(c, "cross-check: none of the host model's %" PRIu64 " reads of the load of that "
                "class is past %s %c %" PRIu64 ", yet the trigger latched %u", nread, name,
                f->below ? '<' : '>', f->threshold, value);
}

/* The analyzer's capture depth (entries) as the hardware reports it: ANALYZER_INFO.DEPTH_LOG2. */
static uint32_t capture_depth(struct nic_backend *b)
{
    const uint32_t info = nic_read32(b, NIC_CSR(b, ANALYZER, INFO));
    return 1u << ((info >> NIC_CSR_ANALYZER_INFO_DEPTH_LOG2_OFFSET) &
                  ((1u << NIC_CSR_ANALYZER_INFO_DEPTH_LOG2_SIZE) - 1u));
}

int cmd_capture(struct ctx *c, int argc, char **argv)
{
    struct load l = LOAD_DEFAULT;
    struct nicscope_stage st[NICSCOPE_NSTAGES];
    const char *specs[NICSCOPE_NSTAGES];
    unsigned nst = 0;
    uint64_t pre = 0, post = 0;
    bool pre_given = false, post_given = false;
    const char *vcd = "nicscope.vcd", *gtkw = NULL;
    bool stream = false;
    uint64_t ring_log2 = 16, throttle_ns = 0;
    struct figure_arg figs[NICSCOPE_NFIGURES + 1];
    unsigned nfig = 0;
    const char *track_names[NICSCOPE_NTRACKS + 1];
    unsigned ntrack_args = 0;
    bool no_tracks = false;
    char err[1024];
    static const struct option opts[] = {
        LOAD_OPTIONS,
        {"trigger", required_argument, NULL, 't'}, {"pre", required_argument, NULL, 'p'},
        {"post", required_argument, NULL, 'P'},    {"vcd", required_argument, NULL, 'v'},
        {"gtkw", required_argument, NULL, 'g'},    {"stream", no_argument, NULL, 's'},
        {"ring-log2", required_argument, NULL, 'r'},
        {"throttle-ns", required_argument, NULL, 'T'},
        {"trigger-figure", required_argument, NULL, 'F'},
        {"track", required_argument, NULL, 'k'}, {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("capture", argc, argv, opts)) != -1) {
        int rc;
        switch (o) {
        case 't':
            if (!optarg)
                return usage_error("--trigger needs a stage");
            if (nst == NICSCOPE_NSTAGES)
                return usage_error("--trigger: at most %d stages", NICSCOPE_NSTAGES);
            if (nicscope_parse_stage(optarg, &st[nst], err, sizeof err) < 0)
                return usage_error("--trigger: %s", err);
            specs[nst++] = optarg;
            break;
        case 'p':
            if (!optarg || bu_parse_u64(optarg, &pre) < 0 || pre >= NICSCOPE_DEPTH)
                return usage_error("--pre: 0..%d entries", NICSCOPE_DEPTH - 1);
            pre_given = true;
            break;
        case 'P':
            if (!optarg || bu_parse_u64(optarg, &post) < 0 || post > UINT32_MAX)
                return usage_error("--post: cycles, 0..2^32-1");
            post_given = true;
            break;
        case 'v':
            if (!optarg)
                return usage_error("--vcd needs a file");
            vcd = optarg;
            break;
        case 'g':
            if (!optarg)
                return usage_error("--gtkw needs a file");
            gtkw = optarg;
            break;
        case 's':
            stream = true;
            break;
        case 'F':
            if (!optarg)
                return usage_error("--trigger-figure needs figure>value or figure<value");
            if (nfig == NICSCOPE_NFIGURES)
                return usage_error("--trigger-figure: at most %d (the analyzer's figure "
                                   "comparators)", NICSCOPE_NFIGURES);
            if ((rc = parse_figure(optarg, &figs[nfig])))
                return rc;
            nfig++;
            break;
        case 'k':
            if (!optarg)
                return usage_error("--track needs a level");
            if (strcmp(optarg, "none") == 0) {
                no_tracks = true;
                break;
            }
            if (nicscope_level_index(optarg) < 0)
                return usage_error("--track '%s': no such level (`nicscope info` lists them)",
                                   optarg);
            if (ntrack_args == NICSCOPE_NTRACKS)
                return usage_error("--track: at most %d levels", NICSCOPE_NTRACKS);
            track_names[ntrack_args++] = optarg;
            break;
        case 'r':
            if (!optarg || bu_parse_u64(optarg, &ring_log2) < 0 || ring_log2 < 4 ||
                ring_log2 > 24)
                return usage_error("--ring-log2: 4..24 (a ring of 2**N entries)");
            break;
        case 'T':
            if (!optarg || bu_parse_u64(optarg, &throttle_ns) < 0 || throttle_ns > 1000000000)
                return usage_error("--throttle-ns: 0..1e9 ns");
            break;
        default:
            if ((rc = load_option(o, optarg, &l)))
                return rc;
        }
    }
    /* Both files are created before the run and get their names only once complete. */
    char gtkw_path[1024];
    if (!gtkw) {
        snprintf(gtkw_path, sizeof gtkw_path, "%s", vcd);
        char *dot = strrchr(gtkw_path, '.');
        if (dot && strcmp(dot, ".vcd") == 0)
            *dot = 0;
        strncat(gtkw_path, ".gtkw", sizeof gtkw_path - strlen(gtkw_path) - 1);
        gtkw = gtkw_path;
    }
    struct out_file *vcd_out, *gtkw_out;
    int rc = out_create(c, "--vcd", vcd, &vcd_out);
    if (rc || (rc = out_create(c, "--gtkw", gtkw, &gtkw_out)))
        return rc;
    if (stream && (nst || pre_given || post_given || nfig || ntrack_args))
        return usage_error("--stream takes every change of the sample from the start to the "
                           "end of the load: no --trigger, --trigger-figure, --pre, --post or "
                           "--track");
    if (no_tracks && ntrack_args)
        return usage_error("--track none and --track LEVEL");
    /* Without --trigger, each figure is a stage on its hit: a level's crossing (rise), a
     * latency's hit (a pulse on the cycle the request is counted). */
    if (!nst)
        for (unsigned i = 0; i < nfig; i++) {
            char spec[32];
            snprintf(spec, sizeof spec, "%sfig%u", figs[i].latency ? "" : "rise:", i);
            if (nicscope_parse_stage(spec, &st[nst], err, sizeof err) < 0)
                return usage_error("--trigger-figure: %s", err);
            specs[nst++] = figs[i].spec;
        }
    if (!stream && (ring_log2 != 16 || throttle_ns))
        return usage_error("--ring-log2 and --throttle-ns are --stream's");
    if ((rc = open_dev(c)))
        return rc;
    unsigned hw_fig = 0, hw_trk = 0;
    if (!stream && nicscope_figures_info(c->b, &hw_fig, &hw_trk, err, sizeof err) < 0)
        return fail(c, "%s", err);
    if (nfig > hw_fig)
        return fail(c, "--trigger-figure: this analyzer has %u figure comparators", hw_fig);
    for (unsigned i = 0; i < nfig; i++)
        if ((rc = figure_threshold(c, &figs[i])))
            return rc;
    for (unsigned s2 = 0; s2 < nst; s2++)
        if (nicscope_bits(st[s2].a.mask, NICSCOPE_SAMPLE_WIDTH, NICSCOPE_NFIGURES) >> nfig ||
            nicscope_bits(st[s2].b.mask, NICSCOPE_SAMPLE_WIDTH, NICSCOPE_NFIGURES) >> nfig)
            return usage_error("--trigger '%s': figN needs N --trigger-figure options before "
                               "it is used (%u given)", specs[s2], nfig);
    /* The tracks: --track, else the figures' levels, then rd_tags and nic_rd. */
    int tracks[NICSCOPE_NTRACKS + 1];
    unsigned ntracks = 0;
    if (ntrack_args && ntrack_args > hw_trk)
        return fail(c, "--track: this analyzer stores %u levels beside the sample", hw_trk);
    for (unsigned i = 0; i < ntrack_args; i++)
        tracks[ntracks++] = nicscope_level_index(track_names[i]);
    if (!ntrack_args && !no_tracks) {
        const char *dflt[] = {"rd_tags", "nic_rd"};
        for (unsigned i = 0; i < nfig + 2 && ntracks < hw_trk; i++) {
            const int l = i < nfig ? (figs[i].latency ? -1 : figs[i].src)
                                   : nicscope_level_index(dflt[i - nfig]);
            bool dup = l < 0;
            for (unsigned j = 0; j < ntracks && !dup; j++)
                dup = tracks[j] == l;
            if (!dup)
                tracks[ntracks++] = l;
        }
    }
    if (stream)
        return capture_stream(c, &l, vcd_out, gtkw_out, (unsigned)ring_log2, throttle_ns);
    /* Default window: pre = depth/16 entries, post = depth - pre - 1 cycles. The trigger's own
     * entry and the pre ones leave depth - pre - 1 entries, and a post window of that many
     * cycles cannot make more even if the sample changes on every cycle: it always ends
     * before the storage is full. */
    const uint32_t depth = capture_depth(c->b);
    if (!pre_given)
        pre = depth / 16;
    if (pre >= depth)
        return fail(c, "--pre %" PRIu64 ": the analyzer holds %u entries", pre, depth);
    if (!post_given)
        post = depth - pre - 1;
    static struct load_state ls;
    if ((rc = load_prepare(c, &l, &ls)))
        return rc;
    for (unsigned i = 0; i < nfig; i++)
        nicscope_set_figure(c->b, i, (unsigned)figs[i].src, figs[i].below,
                            (uint32_t)figs[i].threshold);
    if (hw_trk)
        nicscope_set_tracks(c->b, tracks, ntracks);
    nicscope_set_trigger(c->b, st, nst);
    uint64_t reads0 = 0, reads1 = 0;
    const bool timed = nic_counter(c->b, "model.reads_timed", &reads0) == 0;
    nicscope_arm(c->b, (uint32_t)pre, (uint32_t)post);
    if ((rc = run_load(c, &l, &ls)) || (rc = load_finish(c, &l, &ls)))
        return rc;
    if (timed && nic_counter(c->b, "model.reads_timed", &reads1) != 0)
        return fail(c, "capture: counter model.reads_timed disappeared");
    struct nicscope_status s;
    const uint64_t deadline = nic_now_ns(c->b) + c->timeout_ns;
    for (;;) {
        nicscope_status(c->b, &s);
        if (s.state == NICSCOPE_STATE_DONE || nic_now_ns(c->b) > deadline)
            break;
        nic_idle(c->b, 1000);
    }
    if (s.state != NICSCOPE_STATE_DONE) {
        nicscope_stop(c->b);
        nicscope_status(c->b, &s);
    }
    struct nicscope_change *ch = calloc(s.count ? s.count : 1, sizeof *ch);
    if (!ch)
        return fail(c, "out of memory");
    nicscope_read_trace(c->b, &s, ch);
    if ((rc = backend_check(c, "trace read-out"))) {
        free(ch);
        return rc;
    }
    /* The tx load's doorbell writes on the device's time axis. */
    struct nicscope_timebase tb;
    int64_t *host = load_host_cycles(c, &ls, &tb);
    if (!host) {
        free(ch);
        return fail(c, "out of memory");
    }
    rc = write_vcd(c, vcd_out, gtkw_out, &s, ch, NULL, host, ls.ntx_db, tracks, ntracks);
    free(host);
    if (!rc && !(rc = out_commit(c, vcd_out)))
        rc = out_commit(c, gtkw_out);
    const uint64_t first = s.count ? ch[0].cycle : 0;
    out(c, "capture: %s, %u entries, cycles %" PRIu64 "..%" PRIu64 " (%" PRIu64 " cycles, "
        "%.3f us)%s\n", nicscope_state_name(s.state), s.count, first, s.end_ts,
        s.end_ts - first, (double)(s.end_ts - first) * period_ns() / 1000.0,
        s.overflow ? ", OVERFLOW: storage full before the post-trigger window ended" : "");
    if (s.triggered)
        out(c, "trigger: cycle %" PRIu64 " (entry %u; %u entries before it)\n", s.trig_ts,
            (s.trig_index - s.start) % NICSCOPE_DEPTH, (s.trig_index - s.start) % NICSCOPE_DEPTH);
    uint32_t fig_value[NICSCOPE_NFIGURES + 1];
    for (unsigned i = 0; i < nfig; i++) {
        fig_value[i] = nicscope_fig_value(c->b, i);
        const struct figure_arg *f = &figs[i];
        char thr[64] = "", val[64] = "";
        if (f->latency) {
            snprintf(thr, sizeof thr, " (%.1f ns)", (double)f->threshold * period_ns());
            snprintf(val, sizeof val, " (%.1f ns)", (double)fig_value[i] * period_ns());
        }
        out(c, "figure %u: %s %c %" PRIu64 "%s%s; on the trigger cycle %u%s%s\n", i,
            nicscope_fig_names[f->src], f->below ? '<' : '>', f->threshold,
            f->latency ? " cycles" : "", thr, fig_value[i], f->latency ? " cycles" : "", val);
    }
    struct model_check mc[NICSCOPE_NFIGURES + 1];
    memset(mc, 0, sizeof mc);
    for (unsigned i = 0; i < nfig && s.triggered && timed && !rc; i++) {
        rc = model_figure_check(c, &l, &ls, &figs[i], fig_value[i], reads0, reads1, &mc[i]);
        if (!rc && mc[i].done)
            out(c, "cross-check: figure %u is the host model's first read of the load past the "
                "threshold (read %" PRIu64 ", %" PRIu64 " cycles); its completion beats at "
                "cycles %" PRId64 "..%" PRId64 ", trigger - last = %" PRId64 "\n", i,
                mc[i].read, mc[i].stage, mc[i].first_cpl_cycle, mc[i].end_cycle,
                (int64_t)s.trig_ts - mc[i].end_cycle);
    }
    for (unsigned i = 0; i < ntracks; i++)
        if (tracks[i] >= 0)
            out(c, "track %u: level %s (nic.levels.%s)\n", i, nicscope_level_names[tracks[i]],
                nicscope_level_names[tracks[i]]);
    if (!rc) {
        out(c, "wrote %s and %s\n", vcd, gtkw);
        /* FST beside the VCD when GTKWave's vcd2fst is there, as FILE.fst.part until done. */
        char fst[1100], cmd[2400];
        snprintf(fst, sizeof fst, "%.*s.fst", (int)(strlen(vcd) > 4 ? strlen(vcd) - 4
                                                                    : strlen(vcd)), vcd);
        snprintf(cmd, sizeof cmd, "command -v vcd2fst >/dev/null 2>&1 && vcd2fst '%s' "
                 "'%s.part' >/dev/null 2>&1", vcd, fst);
        char part[1200];
        snprintf(part, sizeof part, "%s.part", fst);
        if (system(cmd) == 0 && rename(part, fst) == 0)
            out(c, "wrote %s\n", fst);
        else
            remove(part);
    }

    struct bu_json *j = &c->j;
    bu_json_obj_begin(j);
    bu_json_kstr(j, "state", nicscope_state_name(s.state));
    bu_json_key(j, "triggered");
    bu_json_bool(j, s.triggered);
    bu_json_key(j, "overflow");
    bu_json_bool(j, s.overflow);
    bu_json_ku64(j, "entries", s.count);
    bu_json_ku64(j, "first_cycle", first);
    bu_json_ku64(j, "end_cycle", s.end_ts);
    bu_json_ku64(j, "trigger_cycle", s.trig_ts);
    bu_json_ku64(j, "pre", pre);
    bu_json_ku64(j, "post", post);
    bu_json_kdouble(j, "ns_per_cycle", period_ns());
    bu_json_kstr(j, "vcd", vcd);
    bu_json_kstr(j, "gtkw", gtkw);
    bu_json_kstrs(j, "trigger", specs, nst);
    bu_json_key(j, "figures");
    bu_json_arr_begin(j);
    for (unsigned i = 0; i < nfig; i++) {
        bu_json_obj_begin(j);
        bu_json_kstr(j, "figure", nicscope_fig_names[figs[i].src]);
        bu_json_kstr(j, "op", figs[i].below ? "<" : ">");
        bu_json_ku64(j, "threshold", figs[i].threshold);
        bu_json_ku64(j, "value", fig_value[i]);
        bu_json_key(j, "latency");
        bu_json_bool(j, figs[i].latency);
        if (mc[i].done) {
            bu_json_key(j, "model");
            bu_json_obj_begin(j);
            bu_json_ku64(j, "read", mc[i].read);
            bu_json_ku64(j, "cycles", mc[i].stage);
            bu_json_key(j, "first_cpl_cycle");
            bu_json_i64(j, mc[i].first_cpl_cycle);
            bu_json_key(j, "end_cycle");
            bu_json_i64(j, mc[i].end_cycle);
            bu_json_obj_end(j);
        }
        bu_json_obj_end(j);
    }
    bu_json_arr_end(j);
    bu_json_key(j, "tracks");
    bu_json_arr_begin(j);
    for (unsigned i = 0; i < ntracks; i++)
        if (tracks[i] >= 0)
            bu_json_str(j, nicscope_level_names[tracks[i]]);
    bu_json_arr_end(j);
    bu_json_obj_end(j);
    free(ch);
    if (!rc && nst && !s.triggered)
        rc = fail(c, "the trigger did not fire (stage %u of %u reached); what was stored before "
                  "the stop is in %s", s.stage, nst, vcd);
    return rc;
}
