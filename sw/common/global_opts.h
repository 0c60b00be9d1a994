/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * global_opts.h: the global options every tool takes before its command, parsed with
 * getopt_long: --backend sim|vfio, --opts K=V,..., --json FILE, --quiet, --timeout-ms N (1..3600000,
 * default 100), -h/--help. Errors go through the usage_error() it is given (cli.h's).
 */
#ifndef GLOBAL_OPTS_H
#define GLOBAL_OPTS_H

#include <stdbool.h>
#include <stdint.h>

struct global_opts {
    const char *kind, *opts, *json_path;   /* backend ("sim"), its options (""), --json (NULL) */
    bool quiet, help;
    uint64_t timeout_ns;
};

/* Fills *g from argv up to the command; returns the command's index in argv (argc when there
 * is none), or -1 after usage_error() printed what is wrong. */
int global_opts_parse(int argc, char **argv, struct global_opts *g,
                      int (*usage_error)(const char *fmt, ...));

#endif
