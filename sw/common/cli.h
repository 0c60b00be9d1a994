/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cli.h: what the tools' command lines share (nicbench, nicscope): exit codes, a run's output
 * state (--quiet and the first failure), usage errors, a command's option parsing, output files
 * created before the run. The tool names itself once, first thing in main() (cli_init()).
 *
 * A tool's context (its struct ctx) holds a struct cli_run named `run` and its backend as `b`:
 * fail(), out() and backend_check() take that context.
 */
#ifndef CLI_H
#define CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nic_backend;

/* Exit status: 0 ok, 1 measurement/verification failure or backend error, 2 usage error. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

struct cli_run {
    bool quiet;                     /* --quiet: out() prints nothing */
    char failmsg[2048];             /* the first failure: the cause main() prints */
};

/* The tool's name, the prefix of its messages, and the line a usage error ends with. */
void cli_init(const char *tool, const char *usage_hint);

/* Record a failure (only the first is kept: it is the cause); EXIT_FAIL. */
__attribute__((format(printf, 2, 3))) int cli_fail(struct cli_run *r, const char *fmt, ...);
/* printf, unless --quiet. */
__attribute__((format(printf, 2, 3))) void cli_out(const struct cli_run *r, const char *fmt, ...);
/* The backend's recorded error, if any (and a backend is open), fails the experiment `what`. */
int cli_backend_check(struct cli_run *r, struct nic_backend *b, const char *what);

#define fail(c, ...) cli_fail(&(c)->run, __VA_ARGS__)
#define out(c, ...) cli_out(&(c)->run, __VA_ARGS__)
#define backend_check(c, what) cli_backend_check(&(c)->run, (c)->b, (what))

/* "<tool>: <message>" and the usage hint on stderr; EXIT_USAGE. Also global_opts_parse()'s. */
__attribute__((format(printf, 1, 2))) int usage_error(const char *fmt, ...);

/* A number option's value s (bu_parse_u64(): 4096, 4K, 0x1000) into *v: EXIT_OK, or the usage
 * error "<opt>: '<s>' is not a number (e.g. 4096, 4K, 0x1000)". */
int cli_parse_num(const char *opt, const char *s, uint64_t *v);
/* v within lo..hi: EXIT_OK, or the usage error "<opt>: <v> out of range <lo>..<hi>", `note`
 * after it (NULL: none), e.g. " (ring size - 1)". For a value parsed earlier or a default. */
int cli_range(const char *opt, uint64_t v, uint64_t lo, uint64_t hi, const char *note);
/* Both: the number option s into *v, within lo..hi; their usage errors. */
int cli_parse_range(const char *opt, const char *s, uint64_t *v, uint64_t lo, uint64_t hi);

/* The next option of a command's argv (argv[0] its name; main() sets optind = 0 before the
 * command parses, GNU getopt's reinitialisation) by getopt_long and the command's table. No
 * permutation ('+'): a command takes no argument that is not an option. Returns the option's
 * val (optarg its value) or -1 at the end; 0 after a usage error, its message printed: an
 * unknown option (or one given a value it does not take), an argument. A missing value is a
 * usage error too, unless missing_ok: then the option comes back with optarg NULL, for its
 * own check to say what it needs. */
int cli_next_option(const char *cmd, int argc, char **argv, const struct option *opts,
                    bool missing_ok);

/* Create `path`.part (its name in part[size]) for output option `opt` before the run, to be
 * renamed to `path` once written completely: EXIT_OK, or a one-line error ("<tool>: <opt>:
 * cannot create <path>: <why>") and EXIT_USAGE. */
int cli_part_create(const char *opt, const char *path, char *part, size_t size);

#endif /* CLI_H */
