/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nicscope_lib.h: the bus analyzer's driver (the analyzer block's registers, nic_regs.h; the sample
 * layout and counter selectors of the generated nicscope_layout.h, the same in every build),
 * over any backend (nic_backend.h).
 *
 * In bring-up order:
 *   1. nicscope_check()           ANALYZER_INFO against nicscope_layout.h
 *   2. counters                   ANALYZER_CONTROL.SNAPSHOT, ANALYZER_CNT_SEL/CNT_VALUE,
 *                                 ANALYZER_BIN_MIN/BIN_SHIFT
 *   3. trigger and capture        ANALYZER_TRIG<s>_*, ANALYZER_TRIG_NSTAGES, ANALYZER_CAP_*,
 *                                 ANALYZER_CONTROL.ARM/STOP
 *   4. read-out and decode        ANALYZER_CAP_RD_ADDR/RD_DATA: the run-length-compressed entries
 *                                 back to (cycle, sample) changes.
 *   5. deep capture               ANALYZER_STREAM_*: the same entries streamed by DMA into a ring
 *                                 in host memory, drained by the host.
 * Samples are arrays of NICSCOPE_SAMPLE_WORDS 32-bit words, least significant first; a signal is
 * the bits [offset, offset + width) of that vector (struct nicscope_signal).
 */
#ifndef NICSCOPE_LIB_H
#define NICSCOPE_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nicscope_layout.h"
#include "nic_backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NICSCOPE_SAMPLE_WORDS ((NICSCOPE_SAMPLE_WIDTH + 31) / 32)
/* A capture entry: the sample, the tracked levels above it, the timestamp above them. */
#define NICSCOPE_ENTRY_WORDS ((NICSCOPE_CAPTURE_WIDTH + NICSCOPE_TS_WIDTH + 31) / 32)
/* The trigger's compare vector: the sample, the figure comparators' hits above it. */
#define NICSCOPE_TRIG_WORDS ((NICSCOPE_TRIG_WIDTH + 31) / 32)
#define NICSCOPE_NLAT 8

struct nicscope_probe {
    const char *name, *group;
    int tlp;                        /* index among the TLP probes, -1 if none */
};
struct nicscope_signal {
    int probe;                      /* index into nicscope_probes */
    const char *name;
    unsigned offset, width;
};
extern const struct nicscope_probe nicscope_probes[NICSCOPE_NPROBES];
extern const struct nicscope_signal nicscope_signals[];
extern const size_t nicscope_nsignals;
extern const char *const nicscope_count_names[NICSCOPE_NCOUNTS];
extern const char *const nicscope_tlp_names[NICSCOPE_NTLP_TYPES];
extern const char *const nicscope_lat_names[NICSCOPE_NLAT];

/* Occupancy count indices (NICSCOPE_COUNT_NAMES order). */
enum { NS_BUSY, NS_STALL, NS_IDLE, NS_BYTES, NS_FRAMES, NS_STALL_HOLD };
/* Latency statistics (NICSCOPE_LAT_NAMES order). */
enum { NS_LAT_BELOW, NS_LAT_ABOVE, NS_LAT_COUNT, NS_LAT_SUM, NS_LAT_MIN, NS_LAT_MAX,
       NS_LAT_LOST, NS_LAT_UNMATCHED };

/* Index of a probe / of a signal ("probe.signal"), or -1. */
int nicscope_probe_index(const char *name);
int nicscope_signal_index(const char *probe_dot_signal);
/* Bits [offset, offset + width) (width <= 64) of a sample; set them. */
uint64_t nicscope_bits(const uint32_t *v, unsigned offset, unsigned width);
void nicscope_set_bits(uint32_t *v, unsigned offset, unsigned width, uint64_t x);

/* --- 1. ANALYZER_INFO ------------------------------------------------------------------------ */
int nicscope_check(struct nic_backend *b, char *err, size_t errlen);

/* --- 2. Counters --------------------------------------------------------------------------- */
struct nicscope_counts {
    uint64_t occ[NICSCOPE_NPROBES][NICSCOPE_NCOUNTS];
    uint64_t tlp[NICSCOPE_NPROBES][NICSCOPE_NTLP_TYPES];     /* rows of TLP probes only */
    uint64_t bins[NICSCOPE_NBINS];
    uint64_t lat[NICSCOPE_NLAT];
    unsigned snap_refused;          /* CNT_STATUS.REFUSED: snapshots refused since reset */
};
/* Close every counter's window on one cycle (CONTROL.SNAPSHOT). */
void nicscope_snapshot(struct nic_backend *b);
/* A snapshot's pass in ns (NICSCOPE_SNAPSHOT_CYCLES at ns_per_cycle, from INFO_CLK_FREQ): a
 * snapshot sooner than that after the last is refused. */
static inline uint64_t nicscope_pass_ns(double ns_per_cycle)
{
    return (uint64_t)(NICSCOPE_SNAPSHOT_CYCLES * ns_per_cycle) + 1;
}
/* Close the window no sooner than backend time not_before_ns (nic_now_ns()), idling until then
 * without an MMIO access, so the window holds only the load's traffic. Opened at T, closed
 * with not_before_ns = T + 2 * nicscope_pass_ns(): the opening pass is over (the margin covers
 * the time a posted write takes to reach the device). */
void nicscope_snapshot_close(struct nic_backend *b, uint64_t not_before_ns);
uint64_t nicscope_counter(struct nic_backend *b, unsigned sel);
/* CNT_STATUS: busy (the last snapshot's counts are still being written) and refused (snapshots
 * refused since reset because one was still being written). */
uint32_t nicscope_cnt_status(struct nic_backend *b, unsigned *refused);
/* Read every counter of the last closed window, once the snapshot's counts are written (waits
 * for CNT_STATUS.BUSY to fall: about one cycle per counter; -1 and a message if it does not). */
int nicscope_read_counts(struct nic_backend *b, struct nicscope_counts *c, char *err,
                         size_t errlen);
void nicscope_set_histogram(struct nic_backend *b, uint32_t bin_min, unsigned bin_shift);

/* Per-request DMA read latency breakdown (ANALYZER_BD_INFO; rtl/nicscope/latency_breakdown.py):
 * per request class (NICSCOPE_BD_CLASS_NAMES) and stage (NICSCOPE_BD_STAGE_NAMES, the last
 * the total), in cycles, over the last closed window. */
extern const char *const nicscope_bd_stage_names[NICSCOPE_BD_NSTAGES];
extern const char *const nicscope_bd_class_names[];
struct nicscope_bd_stage {
    uint64_t sum, min, max;         /* min 2**32-1, max 0 in a window without requests */
    uint64_t bins[NICSCOPE_BD_NBINS];   /* bin i: bit length i (the last: longer) */
};
struct nicscope_bd_class {
    uint64_t count;                 /* requests handed to their engine */
    uint64_t raises;                /* requests raised by their engine */
    uint64_t occupancy;             /* sum over cycles of the requests outstanding */
    struct nicscope_bd_stage st[NICSCOPE_BD_NSTAGES];
};
struct nicscope_bd {
    unsigned nclasses, nslots;      /* 0 classes: not built */
    uint64_t mismatch;              /* hand-offs whose tag was not the oldest request's */
    /* reorder[i]: requests whose last completion came while i requests issued before them
     * still lacked theirs */
    uint64_t reorder[NICSCOPE_BD_NSLOTS + 1];
    struct nicscope_bd_class cls[NICSCOPE_BD_MAX_CLASSES];
};
/* Read the breakdown of the last closed window (after nicscope_read_counts(), which waits for
 * the snapshot's counts). -1 and a message if the block's parameters disagree with the header. */
int nicscope_read_breakdown(struct nic_backend *b, struct nicscope_bd *bd, char *err,
                            size_t errlen);

/* Per-request DMA write latency breakdown (ANALYZER_WBD_INFO; rtl/nicscope/write_breakdown.py):
 * per write class (NICSCOPE_WBD_CLASS_NAMES) and stage (NICSCOPE_WBD_STAGE_NAMES: queue,
 * credit, phy, the total), in cycles, over the last closed window. */
extern const char *const nicscope_wbd_stage_names[NICSCOPE_WBD_NSTAGES];
extern const char *const nicscope_wbd_class_names[];
struct nicscope_wbd_class {
    uint64_t count;                 /* writes whose MWr reached the PHY */
    uint64_t raises;                /* writes raised by their engine */
    uint64_t occupancy;             /* sum over cycles of the writes outstanding */
    struct nicscope_bd_stage st[NICSCOPE_WBD_NSTAGES];
};
struct nicscope_wbd {
    unsigned nclasses, nslots;      /* 0 classes: not built */
    uint64_t mismatch;              /* MWrs on the PHY with no write taken before them */
    struct nicscope_wbd_class cls[NICSCOPE_WBD_MAX_CLASSES];
};
/* Read the write breakdown of the last closed window (as nicscope_read_breakdown()). */
int nicscope_read_wr_breakdown(struct nic_backend *b, struct nicscope_wbd *wb, char *err,
                               size_t errlen);

/* Occupancy integrals (ANALYZER_LEVELS_INFO; rtl/nicscope/level_monitor.py): per level
 * (NICSCOPE_LEVEL_NAMES), the sum of its value over the cycles of the last closed window (the
 * window's cycles: busy + stall + idle of any probe) and its largest value. */
extern const char *const nicscope_level_names[];
struct nicscope_levels {
    unsigned n;                     /* 0: not built */
    uint64_t sum[NICSCOPE_NLEVELS + 1], max[NICSCOPE_NLEVELS + 1];
};
/* Index of a level by name, or -1. */
int nicscope_level_index(const char *name);
/* Read the levels of the last closed window (after nicscope_read_counts()). -1 and a message
 * if the block's level count disagrees with the header. */
int nicscope_read_levels(struct nic_backend *b, struct nicscope_levels *lv, char *err,
                         size_t errlen);

/* Device-side event latencies (ANALYZER_LEVELS_INFO.NEVENTS; rtl/nicscope/event_latency.py): per
 * event (NICSCOPE_EV_NAMES), in cycles over the last closed window. */
extern const char *const nicscope_ev_names[];
struct nicscope_event {
    uint64_t count, sum, merged, lost, unmatched, min, max;   /* min 2**32-1 without events */
    uint64_t bins[NICSCOPE_EV_NBINS];                         /* bin i: bit length i */
};
struct nicscope_events {
    unsigned n;                     /* 0: not built */
    struct nicscope_event ev[NICSCOPE_NEVENTS + 1];
};
int nicscope_ev_index(const char *name);
int nicscope_read_events(struct nic_backend *b, struct nicscope_events *e, char *err,
                         size_t errlen);

/* --- 3. Trigger and capture ---------------------------------------------------------------- */
struct nicscope_cmp {
    uint32_t mask[NICSCOPE_TRIG_WORDS], value[NICSCOPE_TRIG_WORDS];
    unsigned mode;                  /* NICSCOPE_MODE_* */
};
struct nicscope_stage {
    struct nicscope_cmp a, b;
    unsigned op;                    /* NICSCOPE_OP_* */
    unsigned count;                 /* completes on the count-th occurrence (0 acts as 1) */
};
/* Parse one stage:
 *   stage := cmp [('&' | '|') cmp] ['#' N]  |  'always' ['#' N]
 *   cmp   := [('level' | 'rise' | 'fall' | 'change') ':'] term (',' term)*
 *   term  := probe '.' signal ['==' value]      (value defaults to 1; change takes none)
 * e.g. "rise:dma_rd_req.valid", "pcie_rx.fmt_type==0x4a,pcie_rx.valid,pcie_rx.first#3",
 * "change:csr.adr". The terms of one comparator are ANDed (their masks and values merge).
 * A term may also be `fig<i>` (figure comparator i's hit, nicscope_set_figure()).
 * 0, or -1 with a message. */
int nicscope_parse_stage(const char *spec, struct nicscope_stage *st, char *err,
                         size_t errlen);
void nicscope_set_trigger(struct nic_backend *b, const struct nicscope_stage *st, unsigned n);
/* Triggers on figures (ANALYZER_FIG<i>_*; rtl/nicscope/figure_compare.py): comparator i hits
 * when figure `src` (an index into nicscope_fig_names, NICSCOPE_FIG_SOURCES) is above
 * `threshold` (below it with `below`): a level on any cycle, a breakdown stage or an event
 * latency (in cycles) on the cycle the request or event is counted. Its hit is the trigger
 * term `fig<i>`. nicscope_fig_value(): its figure on the trigger cycle. */
extern const char *const nicscope_fig_names[];
int nicscope_fig_index(const char *name);
/* The comparators and tracks the gateware has (ANALYZER_LEVELS_INFO): 0 (not built) or the
 * header's count; -1 with a message otherwise. */
int nicscope_figures_info(struct nic_backend *b, unsigned *nfigures, unsigned *ntracks,
                          char *err, size_t errlen);
void nicscope_set_figure(struct nic_backend *b, unsigned i, unsigned src, bool below,
                         uint32_t threshold);
uint32_t nicscope_fig_value(struct nic_backend *b, unsigned i);
/* Capture tracks: level[i] (an index into nicscope_level_names, -1: none) stored beside the
 * sample on track i, for i < n (the others none). */
void nicscope_set_tracks(struct nic_backend *b, const int *level, unsigned n);

/* Arm: keep `pre` entries before the trigger, capture `post` cycles after it. */
void nicscope_arm(struct nic_backend *b, uint32_t pre, uint32_t post);
void nicscope_stop(struct nic_backend *b);

struct nicscope_status {
    unsigned state, triggered, overflow, stage;
    uint32_t start, count, trig_index;
    uint64_t trig_ts, end_ts, last_ts, now;
};
void nicscope_status(struct nic_backend *b, struct nicscope_status *s);
const char *nicscope_state_name(unsigned state);

/* --- 4. Read-out ----------------------------------------------------------------------------- */
struct nicscope_change {
    uint64_t cycle;                 /* analyzer cycle (since reset) from which v holds */
    uint32_t v[NICSCOPE_SAMPLE_WORDS];
    uint16_t trk[NICSCOPE_NTRACKS + 1];     /* the tracked levels (capture only) */
};
/* Read the s->count entries (CAP_RD_ADDR/CAP_RD_DATA) into out[] (s->count elements) with
 * their timestamps unwrapped from s->last_ts. */
void nicscope_read_trace(struct nic_backend *b, const struct nicscope_status *s,
                         struct nicscope_change *out);
/* The same decode from raw entries (NICSCOPE_ENTRY_WORDS words each, least significant word
 * first, oldest first), for tests. */
void nicscope_decode(const uint32_t *entries, uint32_t count, uint64_t last_ts,
                     struct nicscope_change *out);

/* --- Time base: the analyzer's cycle count paired with the host's clock (nic_now_ns()) ------ */
/* On a backend that knows the pairing (the simulation: probe.an_now at probe.an_now_ps) it is
 * exact; otherwise a read of ANALYZER_CAP_NOW bracketed by two host clock reads, cycle taken at
 * their midpoint, uncertainty half their distance. */
struct nicscope_timebase {
    uint64_t cycle;                 /* the analyzer's count ... */
    double ns;                      /* ... at this host time */
    double ns_per_cycle, uncertainty_ns;
    bool exact;
};
void nicscope_timebase(struct nic_backend *b, double ns_per_cycle,
                       struct nicscope_timebase *tb);
/* The analyzer cycle of host time host_ns (which may be before tb->ns). */
static inline int64_t nicscope_cycle_at(const struct nicscope_timebase *tb, double host_ns)
{
    const double d = (host_ns - tb->ns) / tb->ns_per_cycle;
    return (int64_t)tb->cycle + (int64_t)(d < 0 ? d - 0.5 : d + 0.5);
}

/* --- 5. Deep capture: ANALYZER_STREAM_* (rtl/nicscope/trace_stream.py) ------------------------ */
/* A ring of 2**size_log2 entries of NICSCOPE_STREAM_ENTRY_BYTES in DMA memory; cons counts the
 * entries taken. An entry: the sample, its 32-bit timestamp above it, the gap flag (entries were
 * lost just before this one) in the entry's top bit. */
struct nicscope_stream {
    struct nic_backend *b;
    uint8_t *ring;
    uint64_t bus;
    size_t bytes;
    unsigned size_log2;
    uint32_t cons;
    uint64_t last_cycle;            /* the last entry's cycle (timestamps unwrap from it) */
};
/* Allocate the ring (4 KiB aligned), program it and start: the first entry is the sample of
 * the cycle streaming starts. 0, or -1 with a message (busy from an earlier stream, no
 * memory, not built). */
int nicscope_stream_start(struct nic_backend *b, struct nicscope_stream *s,
                          unsigned size_log2, char *err, size_t errlen);
/* Take every entry the device has written (one read of STREAM_PROD, one write of STREAM_CONS):
 * fn(change, gap, arg) for each, the change's cycle unwrapped. Returns the entries taken. */
uint32_t nicscope_stream_take(struct nicscope_stream *s,
                              void (*fn)(const struct nicscope_change *ch, bool gap,
                                         void *arg),
                              void *arg);
/* Stop streaming (entries stored are still written: busy until then). */
void nicscope_stream_stop(struct nicscope_stream *s);
/* STREAM_STATUS.REFUSED (the last start was refused: STREAM_BASE not 4 KiB aligned, nothing
 * streamed) and STREAM_REFUSED (starts refused, wraps). -1 if the analyzer has no deep capture. */
int nicscope_stream_refused(struct nic_backend *b, bool *refused, uint32_t *count);
/* STREAM_STATUS.BUSY, and the counts: entries due, lost, written (prod). */
bool nicscope_stream_busy(struct nic_backend *b);
void nicscope_stream_counts(struct nic_backend *b, uint32_t *entries, uint32_t *lost,
                            uint32_t *prod);
void nicscope_stream_free(struct nicscope_stream *s);

#ifdef __cplusplus
}
#endif

#endif /* NICSCOPE_LIB_H */
