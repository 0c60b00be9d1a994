/*
 * bench_util.c: nicbench's pure helpers (see bench_util.h). No device access, no backend, no
 * global state: unit-tested by test_bench_util.c.
 */
#include "bench_util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* --- numbers and lists ---------------------------------------------------------------------- */

int bu_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s || *s == '-' || *s == '+' || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    char *end = NULL;
    const unsigned long long v = strtoull(s, &end, 0);
    if (errno || end == s)
        return -1;
    unsigned shift = 0;
    if (*end) {
        static const struct { const char *suffix; unsigned shift; } sfx[] = {
            {"K", 10}, {"k", 10}, {"KiB", 10}, {"M", 20}, {"MiB", 20}, {"G", 30}, {"GiB", 30},
        };
        size_t i;
        for (i = 0; i < sizeof sfx / sizeof sfx[0]; i++)
            if (strcmp(end, sfx[i].suffix) == 0)
                break;
        if (i == sizeof sfx / sizeof sfx[0])
            return -1;
        shift = sfx[i].shift;
    }
    if (shift && (v >> (64 - shift)) != 0)
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

int bu_parse_list(const char *s, uint64_t *out, size_t max, size_t *n, char *err, size_t errlen)
{
    *n = 0;
    if (!s || !*s) {
        snprintf(err, errlen, "empty list");
        return -1;
    }
    const char *p = s;
    while (1) {
        const char *comma = strchr(p, ',');
        const size_t itemlen = comma ? (size_t)(comma - p) : strlen(p);
        char item[64];
        if (itemlen == 0 || itemlen >= sizeof item) {
            snprintf(err, errlen, "bad list item in '%s'", s);
            return -1;
        }
        memcpy(item, p, itemlen);
        item[itemlen] = 0;
        char *dots = strstr(item, "..");
        if (dots) {
            *dots = 0;
            uint64_t a, b;
            if (bu_parse_u64(item, &a) < 0 || bu_parse_u64(dots + 2, &b) < 0 || a == 0 ||
                a > b) {
                snprintf(err, errlen, "bad range '%s..%s' (want A..B with 0 < A <= B)", item,
                         dots + 2);
                return -1;
            }
            for (uint64_t v = a; v <= b; v *= 2) {
                if (*n >= max) {
                    snprintf(err, errlen, "list '%s' has more than %zu entries", s, max);
                    return -1;
                }
                out[(*n)++] = v;
                if (v > UINT64_MAX / 2)
                    break;
            }
        } else {
            uint64_t v;
            if (bu_parse_u64(item, &v) < 0) {
                snprintf(err, errlen, "bad number '%s' (want e.g. 4096, 4K, 2M, 0x1000)", item);
                return -1;
            }
            if (*n >= max) {
                snprintf(err, errlen, "list '%s' has more than %zu entries", s, max);
                return -1;
            }
            out[(*n)++] = v;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    return 0;
}

const char *bu_fmt_size(uint64_t bytes, char *buf, size_t len)
{
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
        snprintf(buf, len, "%" PRIu64 " GiB", bytes >> 30);
    else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
        snprintf(buf, len, "%" PRIu64 " MiB", bytes >> 20);
    else if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0)
        snprintf(buf, len, "%" PRIu64 " KiB", bytes >> 10);
    else
        snprintf(buf, len, "%" PRIu64 " B", bytes);
    return buf;
}

/* --- distributions -------------------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

uint64_t bu_percentile(const uint64_t *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    if (p <= 0)
        return sorted[0];
    double rank = ceil(p / 100.0 * (double)n);
    if (rank < 1)
        rank = 1;
    if (rank > (double)n)
        rank = (double)n;
    return sorted[(size_t)rank - 1];
}

void bu_dist_compute(uint64_t *samples, size_t n, struct bu_dist *d)
{
    memset(d, 0, sizeof *d);
    d->n = n;
    if (n == 0)
        return;
    qsort(samples, n, sizeof *samples, cmp_u64);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (double)samples[i];
    d->min = samples[0];
    d->max = samples[n - 1];
    d->median = bu_percentile(samples, n, 50);
    d->p99 = bu_percentile(samples, n, 99);
    d->mean = sum / (double)n;
}

/* --- JSON writer ---------------------------------------------------------------------------- */

void bu_json_init(struct bu_json *j) { memset(j, 0, sizeof *j); }

void bu_json_free(struct bu_json *j)
{
    free(j->buf);
    memset(j, 0, sizeof *j);
}

static void jput(struct bu_json *j, const char *s, size_t n)
{
    if (j->oom)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 1024;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(j->buf, cap);
        if (!p) {
            j->oom = true;
            return;
        }
        j->buf = p;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = 0;
}

static void jputs(struct bu_json *j, const char *s) { jput(j, s, strlen(s)); }

__attribute__((format(printf, 2, 3))) static void jprintf(struct bu_json *j, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n > 0)
        jput(j, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Before a value: a comma between siblings, none right after a key. */
static void jvalue(struct bu_json *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (j->depth > 0) {
        if (j->need_comma[j->depth])
            jputs(j, ",");
        j->need_comma[j->depth] = true;
    }
}

static void jopen(struct bu_json *j, const char *c)
{
    jvalue(j);
    jputs(j, c);
    if (j->depth + 1 < BU_JSON_MAX_DEPTH)
        j->depth++;
    j->need_comma[j->depth] = false;
}

static void jclose(struct bu_json *j, const char *c)
{
    jputs(j, c);
    if (j->depth > 0)
        j->depth--;
}

void bu_json_obj_begin(struct bu_json *j) { jopen(j, "{"); }
void bu_json_obj_end(struct bu_json *j) { jclose(j, "}"); }
void bu_json_arr_begin(struct bu_json *j) { jopen(j, "["); }
void bu_json_arr_end(struct bu_json *j) { jclose(j, "]"); }

size_t bu_json_escape(const char *s, char *out, size_t len)
{
    size_t n = 0;
#define EMIT(ch)                                                                               \
    do {                                                                                       \
        if (n + 1 < len)                                                                       \
            out[n] = (ch);                                                                     \
        n++;                                                                                   \
    } while (0)
    EMIT('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        const unsigned char c = *p;
        const char *esc = NULL;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default: break;
        }
        if (esc) {
            for (; *esc; esc++)
                EMIT(*esc);
        } else if (c < 0x20 || c == 0x7f) {
            static const char hex[] = "0123456789abcdef";
            EMIT('\\');
            EMIT('u');
            EMIT('0');
            EMIT('0');
            EMIT(hex[c >> 4]);
            EMIT(hex[c & 15]);
        } else {
            EMIT((char)c);
        }
    }
    EMIT('"');
#undef EMIT
    if (len > 0)
        out[n < len ? n : len - 1] = 0;
    return n;
}

static void jstring(struct bu_json *j, const char *s)
{
    char small[256];
    const size_t need = bu_json_escape(s, small, sizeof small);
    if (need < sizeof small) {
        jput(j, small, need);
        return;
    }
    char *big = malloc(need + 1);
    if (!big) {
        j->oom = true;
        return;
    }
    bu_json_escape(s, big, need + 1);
    jput(j, big, need);
    free(big);
}

void bu_json_key(struct bu_json *j, const char *key)
{
    jvalue(j);
    jstring(j, key);
    jputs(j, ":");
    j->after_key = true;
}

void bu_json_str(struct bu_json *j, const char *s)
{
    jvalue(j);
    if (s)
        jstring(j, s);
    else
        jputs(j, "null");
}

void bu_json_u64(struct bu_json *j, uint64_t v)
{
    jvalue(j);
    jprintf(j, "%" PRIu64, v);
}

void bu_json_i64(struct bu_json *j, int64_t v)
{
    jvalue(j);
    jprintf(j, "%" PRId64, v);
}

void bu_json_double(struct bu_json *j, double v)
{
    jvalue(j);
    if (!isfinite(v))
        jputs(j, "null");
    else
        jprintf(j, "%.6g", v);
}

void bu_json_bool(struct bu_json *j, bool v)
{
    jvalue(j);
    jputs(j, v ? "true" : "false");
}

void bu_json_null(struct bu_json *j)
{
    jvalue(j);
    jputs(j, "null");
}

void bu_json_raw(struct bu_json *j, const char *json)
{
    jvalue(j);
    jputs(j, json && *json ? json : "null");
}

void bu_json_kstr(struct bu_json *j, const char *key, const char *s)
{
    bu_json_key(j, key);
    bu_json_str(j, s);
}

void bu_json_ku64(struct bu_json *j, const char *key, uint64_t v)
{
    bu_json_key(j, key);
    bu_json_u64(j, v);
}

void bu_json_kdouble(struct bu_json *j, const char *key, double v)
{
    bu_json_key(j, key);
    bu_json_double(j, v);
}

/* JSON lookup: a scanner that skips strings and nesting, enough for a flat params object. */
static const char *skip_ws(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* p at an opening quote: returns the position after the closing one (NULL if unterminated). */
static const char *skip_string(const char *p)
{
    for (p++; *p; p++) {
        if (*p == '\\' && p[1])
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

int bu_json_get_number(const char *json, const char *key, double *out)
{
    if (!json || !key)
        return -1;
    const size_t klen = strlen(key);
    const char *p = skip_ws(json);
    if (*p != '{')
        return -1;
    int depth = 0;
    bool expect_key = false;
    for (; *p; p++) {
        if (*p == '"') {
            const char *start = p + 1;
            const char *end = skip_string(p);
            if (!end)
                return -1;
            if (depth == 1 && expect_key) {
                const char *after = skip_ws(end);
                if (*after == ':' && (size_t)(end - 1 - start) == klen &&
                    memcmp(start, key, klen) == 0) {
                    const char *v = skip_ws(after + 1);
                    char *vend = NULL;
                    errno = 0;
                    const double d = strtod(v, &vend);
                    if (vend == v || errno)
                        return -1;
                    const char *t = skip_ws(vend);
                    if (*t != ',' && *t != '}')
                        return -1;
                    *out = d;
                    return 0;
                }
                expect_key = false;
            }
            p = end - 1;
            continue;
        }
        if (*p == '{' || *p == '[') {
            depth++;
            expect_key = (*p == '{' && depth == 1);
        } else if (*p == '}' || *p == ']') {
            depth--;
            if (depth <= 0)
                return -1;
        } else if (*p == ',' && depth == 1) {
            expect_key = true;
        }
    }
    return -1;
}

/* --- option strings ------------------------------------------------------------------------- */

int bu_opts_set(const char *opts, const char *key, const char *value, char *out, size_t len)
{
    size_t n = 0;
    const size_t klen = strlen(key);
    if (len == 0)
        return -1;
    out[0] = 0;
    const char *p = opts ? opts : "";
    while (*p) {
        const char *comma = strchr(p, ',');
        const size_t ilen = comma ? (size_t)(comma - p) : strlen(p);
        const bool same = ilen >= klen && strncmp(p, key, klen) == 0 &&
                          (ilen == klen || p[klen] == '=');
        if (ilen > 0 && !same) {
            if (n + (n ? 1 : 0) + ilen + 1 > len)
                return -1;
            if (n)
                out[n++] = ',';
            memcpy(out + n, p, ilen);
            n += ilen;
            out[n] = 0;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    const int w = snprintf(out + n, len - n, "%s%s=%s", n ? "," : "", key, value);
    if (w < 0 || (size_t)w >= len - n)
        return -1;
    return 0;
}

/* --- text tables ---------------------------------------------------------------------------- */

static char *xstrdup(const char *s)
{
    const size_t n = strlen(s ? s : "") + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s ? s : "", n);
    return p;
}

int bu_table_init(struct bu_table *t, int ncols, const char *const *headers)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
    return bu_table_row(t, headers);
}

int bu_table_row(struct bu_table *t, const char *const *cells)
{
    if (t->nrows + 1 > t->cap) {
        const size_t cap = t->cap ? t->cap * 2 : 16;
        char **c = realloc(t->cells, cap * (size_t)t->ncols * sizeof *c);
        if (!c)
            return -1;
        t->cells = c;
        t->cap = cap;
    }
    char **row = t->cells + t->nrows * (size_t)t->ncols;
    for (int i = 0; i < t->ncols; i++)
        row[i] = xstrdup(cells[i]);
    t->nrows++;
    return 0;
}

void bu_table_print(const struct bu_table *t, FILE *f, const char *indent)
{
    size_t width[64] = {0};
    const int ncols = t->ncols < 64 ? t->ncols : 64;
    for (size_t r = 0; r < t->nrows; r++)
        for (int c = 0; c < ncols; c++) {
            const char *s = t->cells[r * (size_t)t->ncols + c];
            const size_t l = s ? strlen(s) : 0;
            if (l > width[c])
                width[c] = l;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        fputs(indent ? indent : "", f);
        for (int c = 0; c < ncols; c++) {
            const char *s = t->cells[r * (size_t)t->ncols + c];
            fprintf(f, "%s%*s", c ? "  " : "", (int)width[c], s ? s : "");
        }
        fputc('\n', f);
    }
}

void bu_table_free(struct bu_table *t)
{
    for (size_t i = 0; i < t->nrows * (size_t)t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
    memset(t, 0, sizeof *t);
}

int bu_opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    const char *a = argv[*i];
    const size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != 0)
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}
