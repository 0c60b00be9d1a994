// SPDX-License-Identifier: BSD-2-Clause
/*
 * cli.c: the tools' shared command-line helpers (cli.h).
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bench_util.h"
#include "nic_dev.h"

static const char *cli_tool = "?", *cli_hint = "";

void cli_init(const char *tool, const char *usage_hint)
{
    cli_tool = tool;
    cli_hint = usage_hint;
}

__attribute__((format(printf, 2, 3))) int cli_fail(struct cli_run *r, const char *fmt, ...)
{
    /* The first failure is the cause; main() prints it. */
    if (r->failmsg[0])
        return EXIT_FAIL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->failmsg, sizeof r->failmsg, fmt, ap);
    va_end(ap);
    return EXIT_FAIL;
}

__attribute__((format(printf, 2, 3))) void cli_out(const struct cli_run *r, const char *fmt, ...)
{
    if (r->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

int cli_backend_check(struct cli_run *r, struct nic_backend *b, const char *what)
{
    const char *e = b ? nic_last_error(b) : NULL;
    if (e)
        return cli_fail(r, "%s: backend error: %s", what, e);
    return EXIT_OK;
}

__attribute__((format(printf, 1, 2))) int usage_error(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "%s: ", cli_tool);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s\n", cli_hint);
    return EXIT_USAGE;
}

int cli_parse_num(const char *opt, const char *s, uint64_t *v)
{
    if (bu_parse_u64(s, v) < 0)
        return usage_error("%s: '%s' is not a number (e.g. 4096, 4K, 0x1000)", opt, s);
    return EXIT_OK;
}

int cli_range(const char *opt, uint64_t v, uint64_t lo, uint64_t hi, const char *note)
{
    if (v < lo || v > hi)
        return usage_error("%s: %" PRIu64 " out of range %" PRIu64 "..%" PRIu64 "%s", opt, v, lo,
                           hi, note ? note : "");
    return EXIT_OK;
}

int cli_parse_range(const char *opt, const char *s, uint64_t *v, uint64_t lo, uint64_t hi)
{
    int rc = cli_parse_num(opt, s, v);
    return rc ? rc : cli_range(opt, *v, lo, hi, NULL);
}

int cli_next_option(const char *cmd, int argc, char **argv, const struct option *opts,
                    bool missing_ok)
{
    opterr = 0;
    const int at = optind ? optind : 1;
    const int o = getopt_long(argc, argv, "+:", opts, NULL);
    if (o == ':' && missing_ok) {
        optarg = NULL;
        return optopt;
    }
    if (o == ':') {
        usage_error("option %s needs a value", argv[at]);
        return 0;
    }
    if (o == '?' || (o == -1 && optind < argc)) {
        usage_error("%s: unknown option '%s'", cmd, argv[o == -1 ? optind : at]);
        return 0;
    }
    return o;
}

int cli_part_create(const char *opt, const char *path, char *part, size_t size)
{
    struct stat sb;
    const char *why = NULL;
    if (snprintf(part, size, "%s.part", path) >= (int)size)
        why = "path too long";
    else if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        why = "is a directory";
    else {
        FILE *f = fopen(part, "w");
        if (!f)
            why = strerror(errno);
        else
            fclose(f);
    }
    if (!why)
        return EXIT_OK;
    fprintf(stderr, "%s: %s: cannot create %s: %s\n", cli_tool, opt, path, why);
    return EXIT_USAGE;
}
