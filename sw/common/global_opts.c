// SPDX-License-Identifier: BSD-2-Clause
/*
 * global_opts.c: the tools' global options (global_opts.h), with getopt_long: "+" stops at the
 * command, so argv keeps its order; opterr 0 and the tool's own messages.
 */
#define _GNU_SOURCE
#include "global_opts.h"

#include <getopt.h>
#include <inttypes.h>
#include <string.h>

#include "bench_util.h"

int global_opts_parse(int argc, char **argv, struct global_opts *g,
                      int (*usage_error)(const char *fmt, ...))
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},          {"backend", required_argument, NULL, 'b'},
        {"opts", required_argument, NULL, 'o'},    {"json", required_argument, NULL, 'j'},
        {"quiet", no_argument, NULL, 'q'},         {"timeout-ms", required_argument, NULL, 't'},
        {NULL, 0, NULL, 0}};
    *g = (struct global_opts){.kind = "sim", .opts = "", .timeout_ns = 100000000ull};
    opterr = 0;
    optind = 0;                                /* GNU: a fresh scan */
    for (;;) {
        const int at = optind ? optind : 1;
        const int o = getopt_long(argc, argv, "+:h", opts, NULL);
        uint64_t ms;
        switch (o) {
        case -1:
            return optind;
        case 'h':
            g->help = true;
            return optind;
        case 'b':
            if (strcmp(optarg, "sim") != 0 && strcmp(optarg, "vfio") != 0)
                return usage_error("--backend: '%s' is not sim or vfio", optarg), -1;
            g->kind = optarg;
            break;
        case 'o':
            g->opts = optarg;
            break;
        case 'j':
            g->json_path = optarg;
            break;
        case 'q':
            g->quiet = true;
            break;
        case 't':
            if (bu_parse_u64(optarg, &ms) < 0)
                return usage_error("--timeout-ms: '%s' is not a number (e.g. 100, 0x64)",
                                   optarg), -1;
            if (ms == 0 || ms > 3600000)
                return usage_error("--timeout-ms: %" PRIu64 " out of range 1..3600000", ms), -1;
            g->timeout_ns = ms * 1000000ull;
            break;
        case ':':
            return usage_error("option %s needs a value", argv[at]), -1;
        default:
            return usage_error("unknown option '%s'", argv[at]), -1;
        }
    }
}
