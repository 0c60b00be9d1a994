/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench_util.h: the pure helpers of nicbench and nicscope (no device, no backend), shared with
 * their unit test (test_bench_util.c):
 *   - numbers with binary suffixes ("4K", "2M", "0x100") and size lists ("256..2M,6000");
 *   - distributions of samples: min / median / p99 / max / mean (nearest-rank percentiles);
 *   - a JSON writer on jansson (begin/key/value/end calls) and a top-level number lookup;
 *   - "key=value,..." option strings: replace a key;
 *   - a right-aligned text table;
 *   - a small deterministic PRNG (xorshift64*).
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* --- numbers and lists ---------------------------------------------------------------------- */

/* Unsigned integer, decimal or 0x-hex, with an optional binary suffix K/M/G (also k, KiB, MiB,
 * GiB). 0, or -1 when s is not such a number or it overflows. */
int bu_parse_u64(const char *s, uint64_t *out);

/* Comma-separated list of numbers and ranges; "A..B" is A, 2A, 4A, ... up to B inclusive.
 * Up to max entries in out. 0, or -1 with a message. */
int bu_parse_list(const char *s, uint64_t *out, size_t max, size_t *n, char *err, size_t errlen);

/* "4 KiB", "2 MiB", "6000 B": a size for humans. */
const char *bu_fmt_size(uint64_t bytes, char *buf, size_t len);

static inline uint64_t bu_ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* --- distributions -------------------------------------------------------------------------- */

struct bu_dist {
    size_t n;
    uint64_t min, median, p99, max;
    double mean;
};

/* Nearest-rank percentile p (0 < p <= 100) of n sorted samples: the smallest sample with at
 * least p% of the samples at or below it. */
uint64_t bu_percentile(const uint64_t *sorted, size_t n, double p);
/* Sorts samples in place and fills d. n == 0 gives all zeros. */
void bu_dist_compute(uint64_t *samples, size_t n, struct bu_dist *d);

/* --- JSON writer ---------------------------------------------------------------------------- */

/* A streaming front end on jansson (libjansson): the calls build a jansson tree, jansson does
 * the escaping, nesting and number formatting, and each top-level value is dumped (compact) and
 * appended to buf as soon as it is complete. So buf/len hold text only for completed top-level
 * values (the usual use: one object or one array, then read buf).
 * Numbers: integers as integers; a u64 above INT64_MAX (jansson's json_int_t) as a real; reals
 * with 15 significant digits (DBL_DIG: every decimal of up to 15 digits comes back unchanged,
 * e.g. 0.714105, 1623.14, 6340400.0); non-finite reals as null. Strings must be UTF-8: a string
 * that is not has each non-ASCII byte replaced by U+FFFD (the document stays valid JSON). */
#define BU_JSON_MAX_DEPTH 32

struct json_t;                      /* jansson's value (jansson.h is needed only in bench_util.c) */

struct bu_json {
    char *buf;                      /* completed top-level values as text, NUL-terminated */
    size_t len, cap;
    bool oom;                       /* an allocation failed, or the calls did not nest (a value
                                       without a key in an object, an unbalanced end, more than
                                       BU_JSON_MAX_DEPTH levels, bad raw JSON): the document is
                                       incomplete */
    int depth;                      /* open containers in stack[] */
    int over;                       /* containers opened beyond BU_JSON_MAX_DEPTH (dropped) */
    struct json_t *stack[BU_JSON_MAX_DEPTH];
    char *key;                      /* the pending key (after bu_json_key), keycap bytes */
    size_t keycap;
    bool have_key;
};

void bu_json_init(struct bu_json *j);
void bu_json_free(struct bu_json *j);
void bu_json_obj_begin(struct bu_json *j);
void bu_json_obj_end(struct bu_json *j);
void bu_json_arr_begin(struct bu_json *j);
void bu_json_arr_end(struct bu_json *j);
void bu_json_key(struct bu_json *j, const char *key);
void bu_json_str(struct bu_json *j, const char *s);        /* NULL writes null */
void bu_json_u64(struct bu_json *j, uint64_t v);
void bu_json_i64(struct bu_json *j, int64_t v);
void bu_json_double(struct bu_json *j, double v);           /* non-finite writes null */
void bu_json_bool(struct bu_json *j, bool v);
void bu_json_null(struct bu_json *j);
/* A value that is already JSON text (e.g. a backend's params_json), parsed by jansson; NULL or
 * empty writes null; text that does not parse writes null and sets oom. */
void bu_json_raw(struct bu_json *j, const char *json);
/* Shorthands: key then value. */
void bu_json_kstr(struct bu_json *j, const char *key, const char *s);
void bu_json_ku64(struct bu_json *j, const char *key, uint64_t v);
void bu_json_kdouble(struct bu_json *j, const char *key, double v);
/* Key then an array of n values. */
void bu_json_ku64s(struct bu_json *j, const char *key, const uint64_t *v, size_t n);
void bu_json_kstrs(struct bu_json *j, const char *key, const char *const *s, size_t n);
/* Escape s as a JSON string literal (with the quotes) into out; returns the length the full
 * result needs (like snprintf), out is always NUL-terminated when len > 0. */
size_t bu_json_escape(const char *s, char *out, size_t len);

/* The number stored under `key` in the top-level object of `json` (parsed by jansson). 0, or -1
 * when json does not parse, is not an object, or the key is absent or not a number. */
int bu_json_get_number(const char *json, const char *key, double *out);

/* --- option strings ------------------------------------------------------------------------- */

/* out = opts without any "key=..." item, plus ",key=value". 0, or -1 if out is too small. */
int bu_opts_set(const char *opts, const char *key, const char *value, char *out, size_t len);

/* --- text tables ---------------------------------------------------------------------------- */

struct bu_table {
    int ncols;
    size_t nrows, cap;
    char **cells;                   /* (nrows + 1) x ncols, row 0 the header */
};

int bu_table_init(struct bu_table *t, int ncols, const char *const *headers);
/* Adds a row; cells are copied. */
int bu_table_row(struct bu_table *t, const char *const *cells);
/* Right-aligned columns, two spaces apart, each line prefixed with `indent`. */
void bu_table_print(const struct bu_table *t, FILE *f, const char *indent);
void bu_table_free(struct bu_table *t);

/* --- PRNG ----------------------------------------------------------------------------------- */

static inline uint64_t bu_rand(uint64_t *state)
{
    /* xorshift64* (Vigna); state must not be 0. */
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1Dull;
}
static inline uint64_t bu_rand_seed(uint64_t seed)
{
    const uint64_t s = seed ^ 0x9E3779B97F4A7C15ull;
    return s ? s : 0x9E3779B97F4A7C15ull;
}

#endif /* BENCH_UTIL_H */
