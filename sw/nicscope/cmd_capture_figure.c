// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_capture_figure.c: `nicscope capture --trigger-figure` (cmd_capture.h): a figure's spec,
 * its threshold in cycles, and the host model's check of the read the trigger latched.
 */
#include "cmd_capture.h"

#include <math.h>

int parse_figure(const char *spec, struct figure_arg *f)
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

int figure_threshold(struct ctx *c, struct figure_arg *f)
{
    const double cyc = f->ns ? f->value * f->ns / period_ns() : f->value;
    const double t = f->below ? ceil(cyc) : floor(cyc);
    if (t > UINT32_MAX)
        return fail(c, "--trigger-figure '%s': %.0f cycles, more than 2^32-1", f->spec, t);
    f->threshold = (uint64_t)t;
    return EXIT_OK;
}

int model_figure_check(struct ctx *c, const struct load *l, const struct load_state *ls,
                       const struct figure_arg *f, uint32_t value, uint64_t n0, uint64_t n1,
                       struct model_check *mc)
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
