// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_capture_vcd.c: a capture's VCD and GTKWave save file (write_vcd(), nicscope.h), from
 * `nicscope capture` and capture_stream.c.
 */
#include "cmd_capture.h"

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

/* The VCD's variables: the sample's signals and each TLP probe's decoded type under
 * nic.<group>.<probe>, nic.analyzer (trigger, gap), nic.host, nic.levels; which is which. */
struct vcd_layout {
    struct vcd_var *vars;
    size_t n;                       /* variables in vars */
    char (*scopes)[64];             /* the probes', then nic.analyzer, nic.host, nic.levels */
    int *tlp_var;                   /* a probe's "tlp" variable, -1: none */
    size_t trig_var, gap_var, host_var, trk_var[NICSCOPE_NTRACKS + 1];
};

static void vcd_layout_free(struct vcd_layout *v)
{
    free(v->vars);
    free(v->scopes);
    free(v->tlp_var);
}

/* The variables of a capture with gap and host events (or not) and the tracks' levels: false
 * when out of memory. */
static bool vcd_layout(struct vcd_layout *v, bool gap, bool host, const int *tracks,
                       unsigned ntracks)
{
    const size_t nsig = nicscope_nsignals;
    struct vcd_var *vars = calloc(nsig + NICSCOPE_NPROBES + 3 + NICSCOPE_NTRACKS,
                                  sizeof *vars);
    char (*scopes)[64] = calloc(NICSCOPE_NPROBES + 3, sizeof *scopes);
    int *tlp_var = calloc(NICSCOPE_NPROBES, sizeof *tlp_var);
    *v = (struct vcd_layout){.vars = vars, .scopes = scopes, .tlp_var = tlp_var};
    if (!vars || !scopes || !tlp_var)
        return false;
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
    v->trig_var = n;
    vars[n++] = (struct vcd_var){scopes[NICSCOPE_NPROBES], "trigger", 1, VCD_WIRE, ""};
    v->gap_var = n;
    if (gap)
        vars[n++] = (struct vcd_var){scopes[NICSCOPE_NPROBES], "gap", 1, VCD_WIRE, ""};
    v->host_var = n;
    if (host)
        vars[n++] = (struct vcd_var){scopes[NICSCOPE_NPROBES + 1], "tx_doorbell", 1, VCD_WIRE,
                                     ""};
    /* Track i is stored in the entries' track slot i; only the slots with a level are drawn. */
    for (unsigned i = 0; i < ntracks && i < NICSCOPE_NTRACKS; i++) {
        v->trk_var[i] = n;
        if (tracks[i] >= 0)
            vars[n++] = (struct vcd_var){scopes[NICSCOPE_NPROBES + 2],
                                         nicscope_level_names[tracks[i]], NICSCOPE_TRACK_WIDTH,
                                         VCD_INTEGER, ""};
    }
    v->n = n;
    return true;
}

/* Entry k's sample signals that changed (all of them at k = 0). */
static void vcd_signals(struct vcd_writer *w, const struct vcd_layout *v,
                        const struct nicscope_change *ch, uint32_t k, const uint32_t *prev)
{
    for (size_t i = 0, vi = 0; i < nicscope_nsignals; i++) {
        const struct nicscope_signal *s = &nicscope_signals[i];
        while (v->vars[vi].kind != VCD_WIRE || strcmp(v->vars[vi].name, s->name) != 0 ||
               v->vars[vi].scope != v->scopes[s->probe])
            vi++;
        const uint64_t x = nicscope_bits(ch[k].v, s->offset, s->width);
        if (k == 0 || x != nicscope_bits(prev, s->offset, s->width))
            vcd_value(w, &v->vars[vi], x);
    }
}

/* Entry k's decoded TLP type of each TLP probe, where it changed ("-" between TLPs). */
static void vcd_tlps(struct vcd_writer *w, const struct vcd_layout *v,
                     const struct nicscope_change *ch, uint32_t k, const uint32_t *prev)
{
    for (int p = 0; p < NICSCOPE_NPROBES; p++) {
        if (v->tlp_var[p] < 0)
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
            vcd_string(w, &v->vars[v->tlp_var[p]], now);
    }
}

/* The host events within the capture, from its first entry to its end, as edges for at(). */
static struct host_edges host_window(struct vcd_writer *w, const struct vcd_layout *v,
                                     const struct nicscope_status *st,
                                     const struct nicscope_change *ch, const int64_t *host,
                                     size_t nhost, uint64_t ps)
{
    struct host_edges h = {.w = w, .ps = ps};
    if (host && st->count) {
        size_t i0 = 0;
        while (i0 < nhost && host[i0] < (int64_t)ch[0].cycle)
            i0++;
        size_t i1 = i0;
        while (i1 < nhost && host[i1] + 1 < (int64_t)st->end_ts)
            i1++;
        h = (struct host_edges){w, &v->vars[v->host_var], host + i0, i1 - i0, 0, false, ps};
    }
    return h;
}

/* The entries in time order, with the trigger marker, the gaps, the host edges and the
 * tracks' levels. */
static void vcd_entries(struct vcd_writer *w, const struct vcd_layout *v, struct host_edges *h,
                        const struct nicscope_status *st, const struct nicscope_change *ch,
                        const bool *gap, bool host, const int *tracks, unsigned ntracks)
{
    struct vcd_var *vars = v->vars;
    uint32_t prev[NICSCOPE_SAMPLE_WORDS] = {0};
    bool trig_on = false;
    for (uint32_t k = 0; k < st->count; k++) {
        /* The trigger marker falls the cycle after the trigger, entry or not. */
        if (trig_on && (k == st->count || ch[k].cycle > st->trig_ts + 1)) {
            at(h, st->trig_ts + 1);
            vcd_value(w, &vars[v->trig_var], 0);
            trig_on = false;
        }
        /* A gap: entries were lost between the entry before and this one. */
        if (gap && k && gap[k]) {
            at(h, ch[k - 1].cycle + 1);
            vcd_value(w, &vars[v->gap_var], 1);
        }
        at(h, ch[k].cycle);
        if (host && k == 0)
            vcd_value(w, &vars[v->host_var], 0);
        if (gap && (k == 0 || gap[k]))
            vcd_value(w, &vars[v->gap_var], 0);
        vcd_signals(w, v, ch, k, prev);
        vcd_tlps(w, v, ch, k, prev);
        for (unsigned i = 0; i < ntracks && i < NICSCOPE_NTRACKS; i++)
            if (tracks[i] >= 0 && (k == 0 || ch[k].trk[i] != ch[k - 1].trk[i]))
                vcd_value(w, &vars[v->trk_var[i]], ch[k].trk[i]);
        if (k == 0 || (st->triggered && ch[k].cycle == st->trig_ts)) {
            trig_on = st->triggered && ch[k].cycle == st->trig_ts;
            vcd_value(w, &vars[v->trig_var], trig_on);
        }
        memcpy(prev, ch[k].v, sizeof prev);
    }
    if (trig_on && st->trig_ts + 1 < st->end_ts) {
        at(h, st->trig_ts + 1);
        vcd_value(w, &vars[v->trig_var], 0);
    }
    if (st->count && st->end_ts > ch[st->count - 1].cycle)
        at(h, st->end_ts);                  /* the end of the covered window */
}

int write_vcd(struct ctx *c, const struct out_file *vcd, const struct out_file *gtkw,
              const struct nicscope_status *st, const struct nicscope_change *ch,
              const bool *gap, const int64_t *host, size_t nhost, const int *tracks,
              unsigned ntracks)
{
    const char *path = vcd->path;
    struct vcd_layout v;
    if (!vcd_layout(&v, gap != NULL, host != NULL, tracks, ntracks))
        return fail(c, "out of memory");
    const uint64_t ps = (uint64_t)(period_ns() * 1000.0 + 0.5);
    char comment[256];
    snprintf(comment, sizeof comment, "bus analyzer capture: %u entries, cycles %" PRIu64
             "..%" PRIu64 ", trigger %s%" PRIu64 ", %" PRIu64 " ps per cycle", st->count,
             st->count ? ch[0].cycle : 0, st->end_ts, st->triggered ? "at cycle " : "not fired ",
             st->trig_ts, ps);
    struct vcd_writer w;
    if (vcd_begin(&w, vcd->part, "1ps", comment, v.vars, v.n) < 0)
        return fail(c, "cannot write %s", path);
    struct host_edges h = host_window(&w, &v, st, ch, host, nhost, ps);
    vcd_entries(&w, &v, &h, st, ch, gap, host != NULL, tracks, ntracks);
    int rc = vcd_end(&w) < 0 ? fail(c, "error writing %s", path) : EXIT_OK;
    if (!rc &&
        gtkw_write(gtkw->part, path, v.vars, v.n, st->count ? ch[0].cycle * ps : 0,
                   st->end_ts * ps, st->triggered ? (int64_t)(st->trig_ts * ps) : -1) < 0)
        rc = fail(c, "cannot write %s", gtkw->path);
    vcd_layout_free(&v);
    return rc;
}
