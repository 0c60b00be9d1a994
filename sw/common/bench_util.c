// SPDX-License-Identifier: BSD-2-Clause
/*
 * bench_util.c: nicbench's pure helpers (see bench_util.h). No device access, no backend, no
 * global state: unit-tested by test_bench_util.c. The JSON writer is jansson's (-ljansson).
 */
#include "bench_util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
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

/* jansson builds and dumps the document; this part only keeps the stack of open containers and
 * the pending key, and collects the dumped text of each completed top-level value in buf. */
#define BU_JSON_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(15))

void bu_json_init(struct bu_json *j) { memset(j, 0, sizeof *j); }

void bu_json_free(struct bu_json *j)
{
    for (int i = 0; i < j->depth; i++)
        json_decref(j->stack[i]);
    free(j->buf);
    free(j->key);
    memset(j, 0, sizeof *j);
}

/* json_dump_callback's sink: append to buf, always NUL-terminated. */
static int jput(const char *s, size_t n, void *data)
{
    struct bu_json *j = data;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 1024;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *p = realloc(j->buf, cap);
        if (!p)
            return -1;
        j->buf = p;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = 0;
    return 0;
}

static void jdump(struct bu_json *j, const json_t *v)
{
    if (json_dump_callback(v, jput, j, BU_JSON_FLAGS) != 0)
        j->oom = true;
}

/* Places v (a new reference, or NULL after a failed allocation) where the calls say: under the
 * pending key of the open object, at the end of the open array, or as a top-level value
 * (dumped at once). Takes the reference; 0, or -1 when v was dropped. */
static int jplace(struct bu_json *j, json_t *v)
{
    int rc = -1;
    const bool have_key = j->have_key;
    j->have_key = false;
    if (!v || j->over) {
        j->oom = true;
    } else if (j->depth == 0) {
        if (!have_key) {
            jdump(j, v);
            rc = 0;
        }
    } else {
        json_t *parent = j->stack[j->depth - 1];
        if (json_is_object(parent) && have_key)
            rc = json_object_set(parent, j->key, v);
        else if (json_is_array(parent) && !have_key)
            rc = json_array_append(parent, v);
    }
    if (rc != 0)
        j->oom = true;
    json_decref(v);
    return rc;
}

static void jopen(struct bu_json *j, json_t *c)
{
    if (j->over || j->depth >= BU_JSON_MAX_DEPTH) {
        j->over++;
        j->oom = true;
        j->have_key = false;
        json_decref(c);
        return;
    }
    if (!c) {
        j->oom = true;
        j->have_key = false;
        c = json_null();                /* a placeholder to keep begin/end balanced */
    } else if (j->depth > 0) {
        json_incref(c);                 /* one reference in the parent, one on the stack */
        jplace(j, c);
    } else if (j->have_key) {
        j->have_key = false;
        j->oom = true;
    }
    j->stack[j->depth++] = c;
}

static void jclose(struct bu_json *j)
{
    if (j->over) {
        j->over--;
        return;
    }
    if (j->depth == 0 || j->have_key) {
        j->oom = true;
        j->have_key = false;
        if (j->depth == 0)
            return;
    }
    json_t *c = j->stack[--j->depth];
    if (j->depth == 0)
        jdump(j, c);
    json_decref(c);
}

void bu_json_obj_begin(struct bu_json *j) { jopen(j, json_object()); }
void bu_json_obj_end(struct bu_json *j) { jclose(j); }
void bu_json_arr_begin(struct bu_json *j) { jopen(j, json_array()); }
void bu_json_arr_end(struct bu_json *j) { jclose(j); }

/* A jansson string of s; s that is not UTF-8 (json_string refuses it) has its non-ASCII bytes
 * replaced by U+FFFD. NULL when out of memory. */
static json_t *jstring(const char *s)
{
    json_t *v = json_string(s);
    if (v)
        return v;
    const size_t n = strlen(s);
    char *clean = malloc(3 * n + 1), *q = clean;
    if (!clean)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x80) {
            *q++ = (char)*p;
        } else {
            memcpy(q, "\xef\xbf\xbd", 3);
            q += 3;
        }
    }
    *q = 0;
    v = json_string(clean);
    free(clean);
    return v;
}

size_t bu_json_escape(const char *s, char *out, size_t len)
{
    json_t *v = jstring(s);
    char *text = v ? json_dumps(v, BU_JSON_FLAGS) : NULL;
    json_decref(v);
    const size_t need = text ? strlen(text) : 0;
    if (len > 0) {
        const size_t copy = need < len ? need : len - 1;
        if (copy)
            memcpy(out, text, copy);
        out[copy] = 0;
    }
    free(text);
    return need;
}

void bu_json_key(struct bu_json *j, const char *key)
{
    const size_t n = strlen(key) + 1;
    if (n > j->keycap) {
        char *k = realloc(j->key, n);
        if (!k) {
            j->oom = true;
            return;
        }
        j->key = k;
        j->keycap = n;
    }
    memcpy(j->key, key, n);
    if (j->have_key || !json_is_object(j->depth ? j->stack[j->depth - 1] : NULL))
        j->oom = true;              /* two keys in a row, or a key outside an object */
    j->have_key = true;
}

void bu_json_str(struct bu_json *j, const char *s) { jplace(j, s ? jstring(s) : json_null()); }

void bu_json_u64(struct bu_json *j, uint64_t v)
{
    jplace(j, v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v));
}

void bu_json_i64(struct bu_json *j, int64_t v) { jplace(j, json_integer((json_int_t)v)); }

void bu_json_double(struct bu_json *j, double v)
{
    jplace(j, isfinite(v) ? json_real(v) : json_null());
}

void bu_json_bool(struct bu_json *j, bool v) { jplace(j, json_boolean(v)); }

void bu_json_null(struct bu_json *j) { jplace(j, json_null()); }

void bu_json_raw(struct bu_json *j, const char *json)
{
    if (!json || !*json) {
        jplace(j, json_null());
        return;
    }
    json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
    if (!v) {
        j->oom = true;
        v = json_null();
    }
    jplace(j, v);
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

void bu_json_ku64s(struct bu_json *j, const char *key, const uint64_t *v, size_t n)
{
    bu_json_key(j, key);
    bu_json_arr_begin(j);
    for (size_t i = 0; i < n; i++)
        bu_json_u64(j, v[i]);
    bu_json_arr_end(j);
}

void bu_json_kstrs(struct bu_json *j, const char *key, const char *const *s, size_t n)
{
    bu_json_key(j, key);
    bu_json_arr_begin(j);
    for (size_t i = 0; i < n; i++)
        bu_json_str(j, s[i]);
    bu_json_arr_end(j);
}

int bu_json_get_number(const char *json, const char *key, double *out)
{
    if (!json || !key)
        return -1;
    json_t *root = json_loads(json, 0, NULL);
    const json_t *v = json_object_get(root, key);       /* NULL unless root is an object */
    const int rc = json_is_number(v) ? 0 : -1;
    if (rc == 0)
        *out = json_number_value(v);
    json_decref(root);
    return rc;
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
