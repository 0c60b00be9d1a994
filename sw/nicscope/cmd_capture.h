/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_capture.h: what the files of `nicscope capture` share (cmd_capture.c the command: its
 * options, the trigger and window, the run and the trace read back; cmd_capture_figure.c the
 * --trigger-figure comparators and the host model's check of them; cmd_capture_report.c the
 * lines and the JSON record after the run; cmd_capture_vcd.c the VCD and GTKWave files, also
 * capture_stream.c's). Private to the capture command; after nicscope.h.
 */
#ifndef CMD_CAPTURE_H
#define CMD_CAPTURE_H

#include "nicscope.h"

/* --trigger-figure: figure>value or figure<value; a latency's value in cycles or ns/us. */
struct figure_arg {
    const char *spec;
    int src;                        /* index into nicscope_fig_names */
    bool below, latency;
    double value, ns;               /* as given; ns per unit (0: the figure's own units) */
    uint64_t threshold;             /* cycles for a latency (figure_threshold()) */
};

/* One --trigger-figure's spec into *f: EXIT_OK or a usage error. */
int parse_figure(const char *spec, struct figure_arg *f);
/* The threshold in the figure's units, once the clock is known: x > t cycles for a real t is
 * x > floor(t); x < t is x < ceil(t). */
int figure_threshold(struct ctx *c, struct figure_arg *f);

/* The host model's check of a figure on a read's rtt or cpl stage (the stages it times at the
 * PHY), when the load's reads are of the figure's class (dma: raw_dma; tx: nic_desc, nic_payload,
 * the model's reads classed by address, in the load's descriptor rings or not): of the reads of
 * that class the load made, [n0, n1) in completion order, the first past the threshold must be
 * the one the trigger latched, its stage equal to the figure's value cycle for cycle. */
struct model_check {
    bool done;
    uint64_t read, stage;           /* its index in the load, its stage in cycles */
    int64_t first_cpl_cycle, end_cycle;   /* on the analyzer's axis (the time base) */
};

int model_figure_check(struct ctx *c, const struct load *l, const struct load_state *ls,
                       const struct figure_arg *f, uint32_t value, uint64_t n0, uint64_t n1,
                       struct model_check *mc);

/* The command's options, and the tracks they come to once the analyzer is known. */
struct cap_args {
    struct load l;
    struct nicscope_stage st[NICSCOPE_NSTAGES];
    const char *specs[NICSCOPE_NSTAGES];    /* each stage's --trigger, or its figure's spec */
    unsigned nst;
    uint64_t pre, post;
    bool pre_given, post_given;
    const char *vcd, *gtkw;                 /* gtkw: --gtkw, or gtkw_path from the VCD's */
    char gtkw_path[1024];
    bool stream;
    uint64_t ring_log2, throttle_ns;
    struct figure_arg figs[NICSCOPE_NFIGURES + 1];
    unsigned nfig;
    const char *track_names[NICSCOPE_NTRACKS + 1];
    unsigned ntrack_args;
    bool no_tracks;
    unsigned hw_trk;                        /* the analyzer's tracks */
    int tracks[NICSCOPE_NTRACKS + 1];       /* the levels stored, -1: none */
    unsigned ntracks;
};

/* What a capture read back: the analyzer's status and entries, the figures' values on the
 * trigger cycle, the host model's reads of the load ([reads0, reads1) when timed) and its checks
 * of the figures. */
struct cap_result {
    struct nicscope_status s;
    struct nicscope_change *ch;
    uint32_t fig_value[NICSCOPE_NFIGURES + 1];
    bool timed;
    uint64_t reads0, reads1;
    struct model_check mc[NICSCOPE_NFIGURES + 1];
};

/* cmd_capture_report.c: the lines after the run (their failures: rc, if none before) and its
 * JSON record. */
int cap_report(struct ctx *c, const struct cap_args *a, const struct load_state *ls,
               struct cap_result *r, int rc);
void cap_json(struct ctx *c, const struct cap_args *a, const struct cap_result *r);
#endif /* CMD_CAPTURE_H */
