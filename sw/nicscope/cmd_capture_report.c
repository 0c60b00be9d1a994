// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_capture_report.c: what `nicscope capture` says after its run (cmd_capture.h): the
 * capture's state and window, the trigger, each figure and the host model's check of it, the
 * tracks, the files written; its JSON record.
 */
#include "cmd_capture.h"

/* The capture's state, entries and window; the trigger's cycle. */
static void cap_status_lines(struct ctx *c, const struct nicscope_status *s,
                             const struct nicscope_change *ch)
{
    const uint64_t first = s->count ? ch[0].cycle : 0;
    out(c, "capture: %s, %u entries, cycles %" PRIu64 "..%" PRIu64 " (%" PRIu64 " cycles, "
        "%.3f us)%s\n", nicscope_state_name(s->state), s->count, first, s->end_ts,
        s->end_ts - first, (double)(s->end_ts - first) * period_ns() / 1000.0,
        s->overflow ? ", OVERFLOW: storage full before the post-trigger window ended" : "");
    if (s->triggered)
        out(c, "trigger: cycle %" PRIu64 " (entry %u; %u entries before it)\n", s->trig_ts,
            (s->trig_index - s->start) % NICSCOPE_DEPTH,
            (s->trig_index - s->start) % NICSCOPE_DEPTH);
}

/* Each figure's comparison and its value on the trigger cycle (read into r->fig_value). */
static void cap_figure_lines(struct ctx *c, const struct cap_args *a, struct cap_result *r)
{
    for (unsigned i = 0; i < a->nfig; i++) {
        r->fig_value[i] = nicscope_fig_value(c->b, i);
        const struct figure_arg *f = &a->figs[i];
        char thr[64] = "", val[64] = "";
        if (f->latency) {
            snprintf(thr, sizeof thr, " (%.1f ns)", (double)f->threshold * period_ns());
            snprintf(val, sizeof val, " (%.1f ns)", (double)r->fig_value[i] * period_ns());
        }
        out(c, "figure %u: %s %c %" PRIu64 "%s%s; on the trigger cycle %u%s%s\n", i,
            nicscope_fig_names[f->src], f->below ? '<' : '>', f->threshold,
            f->latency ? " cycles" : "", thr, r->fig_value[i], f->latency ? " cycles" : "",
            val);
    }
}

/* The host model's check of each figure, when the trigger fired and the model timed the
 * load's reads. */
static int cap_model_checks(struct ctx *c, const struct cap_args *a,
                            const struct load_state *ls, struct cap_result *r, int rc)
{
    struct model_check *mc = r->mc;
    memset(r->mc, 0, sizeof r->mc);
    for (unsigned i = 0; i < a->nfig && r->s.triggered && r->timed && !rc; i++) {
        rc = model_figure_check(c, &a->l, ls, &a->figs[i], r->fig_value[i], r->reads0,
                                r->reads1, &mc[i]);
        if (!rc && mc[i].done)
            out(c, "cross-check: figure %u is the host model's first read of the load past the "
                "threshold (read %" PRIu64 ", %" PRIu64 " cycles); its completion beats at "
                "cycles %" PRId64 "..%" PRId64 ", trigger - last = %" PRId64 "\n", i,
                mc[i].read, mc[i].stage, mc[i].first_cpl_cycle, mc[i].end_cycle,
                (int64_t)r->s.trig_ts - mc[i].end_cycle);
    }
    return rc;
}

/* The files written; the FST beside the VCD when GTKWave's vcd2fst is there, as FILE.fst.part
 * until done. */
static void cap_wrote(struct ctx *c, const struct cap_args *a)
{
    const char *vcd = a->vcd;
    out(c, "wrote %s and %s\n", vcd, a->gtkw);
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

int cap_report(struct ctx *c, const struct cap_args *a, const struct load_state *ls,
               struct cap_result *r, int rc)
{
    cap_status_lines(c, &r->s, r->ch);
    cap_figure_lines(c, a, r);
    rc = cap_model_checks(c, a, ls, r, rc);
    for (unsigned i = 0; i < a->ntracks; i++)
        if (a->tracks[i] >= 0)
            out(c, "track %u: level %s (nic.levels.%s)\n", i,
                nicscope_level_names[a->tracks[i]], nicscope_level_names[a->tracks[i]]);
    if (!rc)
        cap_wrote(c, a);
    return rc;
}

/* "figures": each figure, its value and the host model's read. */
static void cap_json_figures(struct bu_json *j, const struct cap_args *a,
                             const struct cap_result *r)
{
    const struct model_check *mc = r->mc;
    bu_json_key(j, "figures");
    bu_json_arr_begin(j);
    for (unsigned i = 0; i < a->nfig; i++) {
        bu_json_obj_begin(j);
        bu_json_kstr(j, "figure", nicscope_fig_names[a->figs[i].src]);
        bu_json_kstr(j, "op", a->figs[i].below ? "<" : ">");
        bu_json_ku64(j, "threshold", a->figs[i].threshold);
        bu_json_ku64(j, "value", r->fig_value[i]);
        bu_json_key(j, "latency");
        bu_json_bool(j, a->figs[i].latency);
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
}

void cap_json(struct ctx *c, const struct cap_args *a, const struct cap_result *r)
{
    const struct nicscope_status *s = &r->s;
    struct bu_json *j = &c->j;
    bu_json_obj_begin(j);
    bu_json_kstr(j, "state", nicscope_state_name(s->state));
    bu_json_key(j, "triggered");
    bu_json_bool(j, s->triggered);
    bu_json_key(j, "overflow");
    bu_json_bool(j, s->overflow);
    bu_json_ku64(j, "entries", s->count);
    bu_json_ku64(j, "first_cycle", s->count ? r->ch[0].cycle : 0);
    bu_json_ku64(j, "end_cycle", s->end_ts);
    bu_json_ku64(j, "trigger_cycle", s->trig_ts);
    bu_json_ku64(j, "pre", a->pre);
    bu_json_ku64(j, "post", a->post);
    bu_json_kdouble(j, "ns_per_cycle", period_ns());
    bu_json_kstr(j, "vcd", a->vcd);
    bu_json_kstr(j, "gtkw", a->gtkw);
    bu_json_kstrs(j, "trigger", a->specs, a->nst);
    cap_json_figures(j, a, r);
    bu_json_key(j, "tracks");
    bu_json_arr_begin(j);
    for (unsigned i = 0; i < a->ntracks; i++)
        if (a->tracks[i] >= 0)
            bu_json_str(j, nicscope_level_names[a->tracks[i]]);
    bu_json_arr_end(j);
    bu_json_obj_end(j);
}
