// SPDX-License-Identifier: BSD-2-Clause
/*
 * vcd_writer.c: VCD and GTKWave save-file writer. See vcd_writer.h.
 */
#include "vcd_writer.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

/* Identifier codes: printable ASCII 33..126, base 94. */
static void make_id(size_t i, char *id)
{
    size_t k = 0;
    do {
        id[k++] = (char)(33 + i % 94);
        i /= 94;
    } while (i && k < 7);
    id[k] = 0;
}

/* Length of the common prefix of two dotted scopes, in components. */
static size_t scope_depth(const char *s)
{
    size_t d = *s ? 1 : 0;
    for (; *s; s++)
        d += *s == '.';
    return d;
}

static void scope_part(const char *s, size_t k, char *out, size_t len)
{
    for (size_t i = 0; i < k && s; i++) {
        s = strchr(s, '.');
        if (s)
            s++;
    }
    if (!s) {
        out[0] = 0;
        return;
    }
    size_t n = strcspn(s, ".");
    if (n >= len)
        n = len - 1;
    memcpy(out, s, n);
    out[n] = 0;
}

static size_t common_depth(const char *a, const char *b)
{
    const size_t da = scope_depth(a), db = scope_depth(b);
    size_t k = 0;
    char pa[128], pb[128];
    for (; k < da && k < db; k++) {
        scope_part(a, k, pa, sizeof pa);
        scope_part(b, k, pb, sizeof pb);
        if (strcmp(pa, pb) != 0)
            break;
    }
    return k;
}

int vcd_begin(struct vcd_writer *w, const char *path, const char *timescale, const char *comment,
              struct vcd_var *vars, size_t n)
{
    memset(w, 0, sizeof *w);
    w->f = fopen(path, "w");
    if (!w->f)
        return -1;
    fprintf(w->f, "$version nicscope (open FPGA NIC bus analyzer) $end\n");
    if (comment)
        fprintf(w->f, "$comment\n  %s\n$end\n", comment);
    fprintf(w->f, "$timescale %s $end\n", timescale);
    const char *cur = "";
    char part[128];
    for (size_t i = 0; i < n; i++) {
        make_id(i, vars[i].id);
        const size_t keep = common_depth(cur, vars[i].scope);
        for (size_t d = scope_depth(cur); d > keep; d--)
            fprintf(w->f, "$upscope $end\n");
        for (size_t d = keep; d < scope_depth(vars[i].scope); d++) {
            scope_part(vars[i].scope, d, part, sizeof part);
            fprintf(w->f, "$scope module %s $end\n", part);
        }
        cur = vars[i].scope;
        if (vars[i].kind == VCD_STRING)
            fprintf(w->f, "$var string 1 %s %s $end\n", vars[i].id, vars[i].name);
        else if (vars[i].kind == VCD_INTEGER)
            fprintf(w->f, "$var integer %u %s %s $end\n", vars[i].width, vars[i].id,
                    vars[i].name);
        else if (vars[i].width == 1)
            fprintf(w->f, "$var wire 1 %s %s $end\n", vars[i].id, vars[i].name);
        else
            fprintf(w->f, "$var wire %u %s %s [%u:0] $end\n", vars[i].width, vars[i].id,
                    vars[i].name, vars[i].width - 1);
    }
    for (size_t d = scope_depth(cur); d > 0; d--)
        fprintf(w->f, "$upscope $end\n");
    fprintf(w->f, "$enddefinitions $end\n");
    return 0;
}

void vcd_time(struct vcd_writer *w, uint64_t t)
{
    if (w->have_t && t == w->t)
        return;
    fprintf(w->f, "#%" PRIu64 "\n", t);
    w->t = t;
    w->have_t = 1;
}

void vcd_value(struct vcd_writer *w, const struct vcd_var *v, uint64_t x)
{
    if (v->width == 1 && v->kind != VCD_INTEGER) {
        fprintf(w->f, "%u%s\n", (unsigned)(x & 1), v->id);
        return;
    }
    char bits[65];
    unsigned k = 0;
    for (unsigned i = v->width; i-- > 0;)
        bits[k++] = (char)('0' + ((x >> i) & 1));
    bits[k] = 0;
    fprintf(w->f, "b%s %s\n", bits, v->id);
}

void vcd_string(struct vcd_writer *w, const struct vcd_var *v, const char *s)
{
    fprintf(w->f, "s%s %s\n", s, v->id);
}

int vcd_end(struct vcd_writer *w)
{
    const int bad = ferror(w->f);
    return (fclose(w->f) || bad) ? -1 : 0;
}

double gtkw_zoom(uint64_t span)
{
    const double z = -log2((double)(span ? span : 1) * 200.0 / GTKW_WAVE_PIXELS);
    return z < 0 ? z : 0;
}

int gtkw_write(const char *path, const char *dump, const struct vcd_var *vars, size_t n,
               uint64_t start, uint64_t end, int64_t marker)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "[dumpfile] \"%s\"\n[timestart] %" PRIu64 "\n[size] %d %d\n[signals_width] %d\n"
            "[sst_expanded] 1\n[sst_vpaned_height] 300\n", dump, start, GTKW_WIDTH, GTKW_HEIGHT,
            GTKW_SIGNALS_WIDTH);
    fprintf(f, "*%f %" PRId64 "\n", gtkw_zoom(end > start ? end - start : 0),
            marker < 0 ? -1 : marker);          /* zoom, primary marker */
    const char *group = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!group || strcmp(group, vars[i].scope) != 0) {
            if (group)
                fprintf(f, "@1000200\n-%s\n", group);
            group = vars[i].scope;
            fprintf(f, "@800200\n-%s\n", group);
        }
        /* GTKWave trace flags: 0x8024 analog step, decimal, right-justified; each 0x20000 row
         * after it stretches the analog trace one row taller. */
        const char *fmt = vars[i].kind == VCD_INTEGER ? "@8024"
                          : vars[i].kind == VCD_STRING || vars[i].width == 1 ? "@28" : "@22";
        if (vars[i].kind == VCD_WIRE && vars[i].width > 1)
            fprintf(f, "%s\n%s.%s[%u:0]\n", fmt, vars[i].scope, vars[i].name, vars[i].width - 1);
        else
            fprintf(f, "%s\n%s.%s\n", fmt, vars[i].scope, vars[i].name);
        if (vars[i].kind == VCD_INTEGER)
            fprintf(f, "@20000\n-\n-\n-\n");
    }
    if (group)
        fprintf(f, "@1000200\n-%s\n", group);
    const int bad = ferror(f);
    return (fclose(f) || bad) ? -1 : 0;
}
