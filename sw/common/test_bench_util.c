// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_bench_util.c: unit test of nicbench's pure helpers (bench_util.h): number and size
 * list parsing, nearest-rank percentiles, JSON escaping/writing/lookup, option strings, tables.
 * No device, no backend. Built and run by test_bench_util.py; prints "ok" and exits 0, or
 * names each failed check and exits 1.
 */
#define _GNU_SOURCE                 /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

static int failures;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);           \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

#define CHECK_STR(got, want)                                                                   \
    do {                                                                                       \
        const char *g_ = (got), *w_ = (want);                                                  \
        if (!g_ || strcmp(g_, w_) != 0) {                                                      \
            fprintf(stderr, "%s:%d: got '%s', want '%s'\n", __FILE__, __LINE__,                \
                    g_ ? g_ : "(null)", w_);                                                   \
            failures++;                                                                        \
        }                                                                                      \
    } while (0)

static void test_numbers(void)
{
    uint64_t v = 0;
    CHECK(bu_parse_u64("4096", &v) == 0 && v == 4096);
    CHECK(bu_parse_u64("4K", &v) == 0 && v == 4096);
    CHECK(bu_parse_u64("4k", &v) == 0 && v == 4096);
    CHECK(bu_parse_u64("4KiB", &v) == 0 && v == 4096);
    CHECK(bu_parse_u64("2M", &v) == 0 && v == 2u << 20);
    CHECK(bu_parse_u64("1G", &v) == 0 && v == 1u << 30);
    CHECK(bu_parse_u64("0x1000", &v) == 0 && v == 4096);
    CHECK(bu_parse_u64("0", &v) == 0 && v == 0);
    CHECK(bu_parse_u64("", &v) < 0);
    CHECK(bu_parse_u64("-1", &v) < 0);
    CHECK(bu_parse_u64(" 1", &v) < 0);
    CHECK(bu_parse_u64("4X", &v) < 0);
    CHECK(bu_parse_u64("4 K", &v) < 0);
    CHECK(bu_parse_u64("K", &v) < 0);
    CHECK(bu_parse_u64("17179869184G", &v) < 0);          /* 2^34 GiB = 2^64: overflow */
    CHECK(bu_parse_u64("99999999999999999999", &v) < 0);  /* > UINT64_MAX */
}

static void test_lists(void)
{
    uint64_t l[64];
    size_t n = 0;
    char err[128];
    CHECK(bu_parse_list("256..2M", l, 64, &n, err, sizeof err) == 0);
    CHECK(n == 14 && l[0] == 256 && l[1] == 512 && l[13] == 2u << 20);
    CHECK(bu_parse_list("4096,6000,8K", l, 64, &n, err, sizeof err) == 0);
    CHECK(n == 3 && l[0] == 4096 && l[1] == 6000 && l[2] == 8192);
    CHECK(bu_parse_list("3..10", l, 64, &n, err, sizeof err) == 0);
    CHECK(n == 2 && l[0] == 3 && l[1] == 6);
    CHECK(bu_parse_list("4K..4K", l, 64, &n, err, sizeof err) == 0 && n == 1 && l[0] == 4096);
    CHECK(bu_parse_list("128,256..1K,4096", l, 64, &n, err, sizeof err) == 0);
    CHECK(n == 5 && l[0] == 128 && l[1] == 256 && l[3] == 1024 && l[4] == 4096);
    CHECK(bu_parse_list("1K..512", l, 64, &n, err, sizeof err) < 0);
    CHECK(bu_parse_list("0..512", l, 64, &n, err, sizeof err) < 0);
    CHECK(bu_parse_list("", l, 64, &n, err, sizeof err) < 0);
    CHECK(bu_parse_list("256,", l, 64, &n, err, sizeof err) < 0);
    CHECK(bu_parse_list(",256", l, 64, &n, err, sizeof err) < 0);
    CHECK(bu_parse_list("abc", l, 64, &n, err, sizeof err) < 0);
    CHECK(strstr(err, "abc") != NULL);
    CHECK(bu_parse_list("256..", l, 64, &n, err, sizeof err) < 0);
    CHECK(bu_parse_list("256..2M", l, 5, &n, err, sizeof err) < 0);   /* too many entries */

    char buf[32];
    CHECK_STR(bu_fmt_size(4096, buf, sizeof buf), "4 KiB");
    CHECK_STR(bu_fmt_size(2u << 20, buf, sizeof buf), "2 MiB");
    CHECK_STR(bu_fmt_size(6000, buf, sizeof buf), "6000 B");
    CHECK(bu_ceil_div(4u << 20, 256) == 16384 && bu_ceil_div(5, 4) == 2 && bu_ceil_div(4, 4) == 1);
}

static void test_percentiles(void)
{
    uint64_t s[1000];
    struct bu_dist d;
    /* 1..100 shuffled: nearest rank. */
    for (int i = 0; i < 100; i++)
        s[i] = (uint64_t)((i * 37) % 100 + 1);
    bu_dist_compute(s, 100, &d);
    CHECK(d.n == 100 && d.min == 1 && d.max == 100);
    CHECK(d.median == 50 && d.p99 == 99);
    CHECK(fabs(d.mean - 50.5) < 1e-9);
    CHECK(s[0] == 1 && s[99] == 100);                      /* sorted in place */
    /* 1000 samples: p99 is the 990th smallest. */
    for (int i = 0; i < 1000; i++)
        s[i] = (uint64_t)(1000 - i);
    bu_dist_compute(s, 1000, &d);
    CHECK(d.median == 500 && d.p99 == 990 && d.min == 1 && d.max == 1000);
    /* One sample, two samples, none. */
    s[0] = 7;
    bu_dist_compute(s, 1, &d);
    CHECK(d.min == 7 && d.median == 7 && d.p99 == 7 && d.max == 7);
    s[0] = 9;
    s[1] = 3;
    bu_dist_compute(s, 2, &d);
    CHECK(d.median == 3 && d.p99 == 9);
    bu_dist_compute(s, 0, &d);
    CHECK(d.n == 0 && d.median == 0);
    const uint64_t sorted[] = {10, 20, 30, 40};
    CHECK(bu_percentile(sorted, 4, 25) == 10 && bu_percentile(sorted, 4, 26) == 20);
    CHECK(bu_percentile(sorted, 4, 100) == 40 && bu_percentile(sorted, 4, 0) == 10);
}

static void test_json_escape(void)
{
    char out[128];
    CHECK(bu_json_escape("plain", out, sizeof out) == 7);
    CHECK_STR(out, "\"plain\"");
    bu_json_escape("a\"b\\c", out, sizeof out);
    CHECK_STR(out, "\"a\\\"b\\\\c\"");
    bu_json_escape("l1\nl2\tx\r", out, sizeof out);
    CHECK_STR(out, "\"l1\\nl2\\tx\\r\"");
    bu_json_escape("\x01\x1f\x7f", out, sizeof out);       /* jansson: DEL needs no escape */
    CHECK_STR(out, "\"\\u0001\\u001F\x7f\"");
    bu_json_escape("a\xff" "b", out, sizeof out);             /* not UTF-8: U+FFFD, still JSON */
    CHECK_STR(out, "\"a\xef\xbf\xbd" "b\"");
    bu_json_escape("\xc2\xb5s", out, sizeof out);          /* UTF-8 passes through */
    CHECK_STR(out, "\"\xc2\xb5s\"");
    bu_json_escape("", out, sizeof out);
    CHECK_STR(out, "\"\"");
    /* Truncation: the needed length is returned, the output stays terminated. */
    char small[6];
    CHECK(bu_json_escape("abcdefgh", small, sizeof small) == 10);
    CHECK(strlen(small) == 5);
}

static void test_json_writer(void)
{
    struct bu_json j;
    bu_json_init(&j);
    bu_json_obj_begin(&j);
    bu_json_kstr(&j, "tool", "nic\"bench");
    bu_json_ku64(&j, "n", 18446744073709551615ull);
    bu_json_kdouble(&j, "x", 1.5);
    bu_json_kdouble(&j, "nan", NAN);
    bu_json_key(&j, "arr");
    bu_json_arr_begin(&j);
    bu_json_i64(&j, -3);
    bu_json_bool(&j, true);
    bu_json_null(&j);
    bu_json_obj_begin(&j);
    bu_json_obj_end(&j);
    bu_json_str(&j, NULL);
    bu_json_arr_end(&j);
    bu_json_key(&j, "params");
    bu_json_raw(&j, "{\"mps\":256}");
    bu_json_key(&j, "none");
    bu_json_raw(&j, NULL);
    static const uint64_t u[] = {7, 0};
    static const char *const s[] = {"a", NULL};
    bu_json_ku64s(&j, "u", u, 2);
    bu_json_kstrs(&j, "s", s, 2);
    bu_json_ku64s(&j, "e", u, 0);
    bu_json_obj_end(&j);
    CHECK(!j.oom);
    /* A u64 above INT64_MAX (jansson's json_int_t) is written as a real. */
    CHECK_STR(j.buf, "{\"tool\":\"nic\\\"bench\",\"n\":1.84467440737096e19,\"x\":1.5,"
                     "\"nan\":null,\"arr\":[-3,true,null,{},null],\"params\":{\"mps\":256},"
                     "\"none\":null,\"u\":[7,0],\"s\":[\"a\",null],\"e\":[]}");
    bu_json_free(&j);

    /* Records appended one by one into an array, as nicbench does. */
    bu_json_init(&j);
    bu_json_arr_begin(&j);
    for (int i = 0; i < 3; i++) {
        bu_json_obj_begin(&j);
        bu_json_ku64(&j, "i", (uint64_t)i);
        bu_json_obj_end(&j);
    }
    bu_json_arr_end(&j);
    CHECK_STR(j.buf, "[{\"i\":0},{\"i\":1},{\"i\":2}]");
    bu_json_free(&j);

    /* Reals: 15 significant digits, the figures the tools print come back unchanged, also
     * through bu_json_raw (parsed and dumped again). */
    bu_json_init(&j);
    bu_json_arr_begin(&j);
    const double reals[] = {0.714105, 1623.14, 6340400.0, 0.1 + 0.2, 1e-7, 2.0 / 3.0, -0.5};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        bu_json_double(&j, reals[i]);
    bu_json_arr_end(&j);
    const char *want = "[0.714105,1623.14,6340400.0,0.3,1e-7,0.666666666666667,-0.5]";
    CHECK_STR(j.buf, want);
    struct bu_json r;
    bu_json_init(&r);
    bu_json_raw(&r, j.buf);
    CHECK(!r.oom);
    CHECK_STR(r.buf, want);
    bu_json_free(&r);
    bu_json_free(&j);

    /* Calls that do not nest mark the document incomplete. */
    bu_json_init(&j);
    bu_json_arr_begin(&j);
    bu_json_key(&j, "k");                                   /* a key in an array */
    bu_json_u64(&j, 1);
    bu_json_arr_end(&j);
    CHECK(j.oom);
    bu_json_free(&j);
    bu_json_init(&j);
    bu_json_obj_begin(&j);
    bu_json_u64(&j, 1);                                     /* a value without a key */
    bu_json_obj_end(&j);
    bu_json_obj_end(&j);                                    /* one end too many */
    CHECK(j.oom);
    CHECK_STR(j.buf, "{}");
    bu_json_free(&j);
    bu_json_init(&j);
    bu_json_obj_begin(&j);
    bu_json_key(&j, "bad");
    bu_json_raw(&j, "{\"mps\":");                          /* raw text that does not parse */
    bu_json_obj_end(&j);
    CHECK(j.oom);
    CHECK_STR(j.buf, "{\"bad\":null}");
    bu_json_free(&j);
    bu_json_init(&j);                                       /* too deep: dropped, still freed */
    for (int i = 0; i < BU_JSON_MAX_DEPTH + 3; i++)
        bu_json_arr_begin(&j);
    for (int i = 0; i < BU_JSON_MAX_DEPTH + 3; i++)
        bu_json_arr_end(&j);
    CHECK(j.oom && j.depth == 0);
    bu_json_free(&j);
    bu_json_init(&j);                                       /* left open: freed */
    bu_json_obj_begin(&j);
    bu_json_key(&j, "a");
    bu_json_arr_begin(&j);
    CHECK(j.len == 0 && !j.oom);
    bu_json_free(&j);

    /* A long string goes through the heap path. */
    char big[1000];
    memset(big, 'a', sizeof big - 1);
    big[sizeof big - 1] = 0;
    bu_json_init(&j);
    bu_json_str(&j, big);
    CHECK(j.buf && strlen(j.buf) == sizeof big + 1);
    bu_json_free(&j);
}

static void test_json_lookup(void)
{
    double d = 0;
    const char *p = "{\"gen\":2, \"mps\" : 256,\"nested\":{\"mrrs\":4},\"s\":\"\\\"mrrs\\\":7\","
                    "\"mrrs\":512,\"name\":\"x\",\"lat\":1.5e2,\"arr\":[1,{\"q\":1}],\"q\":-3}";
    CHECK(bu_json_get_number(p, "mps", &d) == 0 && d == 256);
    CHECK(bu_json_get_number(p, "gen", &d) == 0 && d == 2);
    CHECK(bu_json_get_number(p, "mrrs", &d) == 0 && d == 512);   /* not the nested/quoted one */
    CHECK(bu_json_get_number(p, "lat", &d) == 0 && d == 150);
    CHECK(bu_json_get_number(p, "q", &d) == 0 && d == -3);
    CHECK(bu_json_get_number(p, "name", &d) < 0);                 /* a string */
    CHECK(bu_json_get_number(p, "nested", &d) < 0);               /* an object */
    CHECK(bu_json_get_number(p, "absent", &d) < 0);
    CHECK(bu_json_get_number("[1,2]", "mps", &d) < 0);
    CHECK(bu_json_get_number(NULL, "mps", &d) < 0);
    CHECK(bu_json_get_number("{\"mps\":12", "mps", &d) < 0);      /* truncated */
}

static void test_opts(void)
{
    char o[64];
    CHECK(bu_opts_set("gen=2,mps=256,mrrs=512", "mps", "128", o, sizeof o) == 0);
    CHECK_STR(o, "gen=2,mrrs=512,mps=128");
    CHECK(bu_opts_set("", "mps", "128", o, sizeof o) == 0);
    CHECK_STR(o, "mps=128");
    CHECK(bu_opts_set(NULL, "mrrs", "4096", o, sizeof o) == 0);
    CHECK_STR(o, "mrrs=4096");
    CHECK(bu_opts_set("mpsx=1,mps=2,mps=3,,a=b", "mps", "4", o, sizeof o) == 0);
    CHECK_STR(o, "mpsx=1,a=b,mps=4");
    CHECK(bu_opts_set("mps", "mps", "4", o, sizeof o) == 0);    /* bare key removed too */
    CHECK_STR(o, "mps=4");
    CHECK(bu_opts_set("gen=2,lanes=4", "mps", "128", o, 8) < 0);
}

static void test_table(void)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    CHECK(f != NULL);
    if (!f)
        return;
    static const char *const hdr[] = {"size", "Gb/s"};
    static const char *const r1[] = {"256", "1.5"};
    static const char *const r2[] = {"2097152", "n/a"};
    struct bu_table t;
    CHECK(bu_table_init(&t, 2, hdr) == 0);
    CHECK(bu_table_row(&t, r1) == 0);
    CHECK(bu_table_row(&t, r2) == 0);
    bu_table_print(&t, f, "> ");
    bu_table_free(&t);
    fclose(f);
    CHECK_STR(text, ">    size  Gb/s\n>     256   1.5\n> 2097152   n/a\n");
    free(text);
}

static void test_rand(void)
{
    uint64_t a = bu_rand_seed(7), b = bu_rand_seed(7), z = bu_rand_seed(0x9E3779B97F4A7C15ull);
    CHECK(a != 0 && z != 0);
    for (int i = 0; i < 10; i++)
        CHECK(bu_rand(&a) == bu_rand(&b));
    uint64_t c = bu_rand_seed(8);
    CHECK(bu_rand(&c) != bu_rand(&a));
}

int main(void)
{
    test_numbers();
    test_lists();
    test_percentiles();
    test_json_escape();
    test_json_writer();
    test_json_lookup();
    test_opts();
    test_table();
    test_rand();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    puts("ok");
    return 0;
}
