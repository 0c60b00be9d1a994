# SPDX-License-Identifier: BSD-2-Clause
#
# analyzer.py: the on-chip bus analyzer: per-probe counts, DMA read latency and a trace.
#
# What it is: for each Probe on one of the design's streams, its occupancy counts
# (OccupancyCounter), its TLP counts by type if it carries TLPs (TLPTypeCounter), the DMA read
# latency histogram between two probes (LatencyHistogram), and a triggered, run-length-compressed
# trace of every probe (TraceTrigger + TraceCapture). The counts live in one CounterBank. How they
# are sampled and read: BusAnalyzer's docstring; the C header for host code: header().
#
# Interfaces:
#   <probe>.valid/ready/first/last/nbytes/<fields>   in: one group per Probe.
#   hold                 in: a host CSR access is in progress (qualifies the stall_hold counts).
#   snapshot             in: pulse, closes every count's window (refused while cnt_busy).
#   cnt_busy             out: the last snapshot's counts are being written.
#   snap_refused         out, 16 bits: snapshots refused because cnt_busy (wraps).
#   cnt_lost             out, 16 bits: the counter bank's lost lane updates (wraps; 0 when its
#                        lanes' sources keep their promise; also at selector SEL_BANK_LOST).
#   cnt_sel / cnt_value  in 12 bits / out 48 bits, two cycles later: see counter_map().
#   bd_raised, bd_granted, bd_issue, bd_tx, bd_rx, bd_handoff   in: the latency breakdown's
#                        hand-offs (LatencyBreakdown), when built.
#   wbd_raised, wbd_granted, wbd_other, wbd_tx   in: the write latency breakdown's hand-offs
#                        (WriteBreakdown), when built.
#   level_<name>         in: one per level: its occupancy integral and maximum (LevelMonitor).
#   ev_<name>_start, ev_<name>_end   in: one pair per event latency (EventLatency).
#   st_*                 the deep capture's ring, DMA write port and counts (TraceStream), when
#                        built.
#   bin_min, bin_shift   in: the latency histogram's range (LatencyHistogram).
#   fig<i>_sel, fig<i>_below, fig<i>_threshold   in: figure comparator i (FigureCompare) over
#                        figure_sources(); fig<i>_value out: the figure it saw on the trigger
#                        cycle (the latched value the trigger fired on).
#   trk<i>_sel           in: the level on capture track i (0: none, l + 1: level l).
#   trig_*, cap_*        the trigger's and the capture's ports (TraceTrigger, TraceCapture).
#
# Parameters: probes (1..16 Probe), depth (trace entries, a power of two), nbins (latency bins,
# 2..32), nstages (trigger stages, 1..4), latency ((request probe, completion probe) names, or
# None), breakdown (Breakdown: the per-request latency breakdown's classes, or None),
# wr_breakdown (WrBreakdown: the per-request write latency breakdown's classes, or None), levels
# ((name, width) pairs, up to 64), events (Event list, up to 8), stream (the DMA port's data
# width for the deep capture into host memory, or None), figures (figure comparators beside the
# trigger's sample, 0..4), tracks (levels recorded in the capture beside the sample, 0..2),
# register_inputs (False: the caller has registered the probes, hold, the bd_*, level_* and ev_*
# inputs; the wbd_* too).

from types import SimpleNamespace

from amaranth import Cat, Module, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from .counter_bank import CounterBank
from .latency_histogram import STATS as LAT_STATS
from .latency_histogram import LatencyHistogram
from .latency_breakdown import CLASS_COUNTS, NSTAGES, STAGES, LatencyBreakdown
from .latency_breakdown import handoff_layout, handshake, issue_layout, rx_layout, tx_layout
from .write_breakdown import WR_NSTAGES, WR_STAGES, WriteBreakdown, wr_tx_layout
from .event_latency import COUNTS as EV_COUNTS
from .event_latency import STATS as EV_STATS
from .event_latency import EventLatency
from .level_monitor import STATS as LEVEL_STATS
from .level_monitor import LevelMonitor
from .occupancy_counter import COUNTS, OccupancyCounter
from .tlp_type_counter import TLP_TYPES, TLPTypeCounter
from .trace_capture import TS_WIDTH, State, TraceCapture
from .trace_stream import TraceStream, entry_bytes
from .figure_compare import SEL_WIDTH as FIG_SEL_WIDTH
from .figure_compare import THRESHOLD_WIDTH, FigureCompare
from rtl.nic.dma_port import write_signature
from .trace_trigger import STAGE_FIELDS, Mode, Op, TraceTrigger, stage_ports

HANDSHAKE = ("valid", "ready", "first", "last")
# Counter selector map (cnt_sel): probe p, count k -> p * 8 + k; TLP probe t (in probe order
# among those with tlp=True), type k -> 0x80 + t * 8 + k; histogram bin i -> 0xC0 + i;
# histogram statistic k -> 0xE0 + k. Latency breakdown (laid out for BD_MAX_CLASSES classes):
# class c stage s bin i -> 0x100 + c * 0x200 + s * 0x20 + i, its sum/min/max at + 0x10/0x11/0x12;
# class c count k (CLASS_COUNTS) -> 0x200 + c * 0x200 + k; tag mismatches -> 0x700. Level l's
# sum and max -> 0x780 + l * 2 + k (LEVEL_STATS). Reorder distance bin i -> 0x710 + i. Event
# latency e: bin i -> 0x800 + e * 0x20 + i, statistic k -> 0x800 + e * 0x20 + 0x10 + k (EV_STATS).
SEL_TLP, SEL_BIN, SEL_LAT = 0x80, 0xC0, 0xE0
SEL_BD, BD_CLASS_STRIDE, BD_STAGE_STRIDE, BD_SUM, BD_CLASS_COUNTS, SEL_BD_MISMATCH = \
    0x100, 0x200, 0x20, 0x10, 0x100, 0x700
BD_MAX_CLASSES, BD_NBINS = 3, 16
SEL_LEVEL, MAX_LEVELS = 0x780, 64
SEL_BD_REORDER = 0x710
SEL_EV, EV_STRIDE, EV_NBINS, MAX_EVENTS = 0x800, 0x20, 16, 8
# Write latency breakdown: class c stage s bin i -> 0xC00 + c * 0x100 + s * 0x20 + i, its
# sum/min/max at + 0x10/0x11/0x12 (BD_STAGE_STRIDE, BD_SUM); class c count k (CLASS_COUNTS) ->
# 0xC80 + c * 0x100 + k; writes not matched (an MWr without a write) -> 0xF00.
SEL_WBD, WBD_CLASS_STRIDE, WBD_CLASS_COUNTS, SEL_WBD_MISMATCH = 0xC00, 0x100, 0x80, 0xF00
# The counter bank's lost lane updates since reset (CounterBank.lost: 0 unless a lane's counts
# change twice on one cycle), not windowed.
SEL_BANK_LOST = 0xFFF
WBD_MAX_CLASSES = 3
STREAM_FIFO_DEPTH = 512
CNT_SEL_WIDTH = 12
TRACK_WIDTH, MAX_TRACKS, MAX_FIGURES = 16, 2, 4
READ_CHUNK = 32         # counter selectors per case of the read-out's address decode


class Breakdown:
    """The latency breakdown's build parameters: its request classes (names, in class-index
    order), the requests it can follow from issue to hand-off at once (nslots) and the PHY beat
    holding a completion's tag (tag_beat: 0 at 128 bits, 1 at 64)."""

    def __init__(self, classes, nslots=8, tag_beat=0):
        if not 1 <= len(classes) <= BD_MAX_CLASSES:
            raise ValueError(f"Breakdown: {len(classes)} classes, 1..{BD_MAX_CLASSES}")
        if nslots > 64:
            raise ValueError(f"Breakdown: nslots={nslots}, at most 64 (reorder distance bins)")
        self.classes, self.nslots, self.tag_beat = tuple(classes), nslots, tag_beat

    def ports(self):
        n = len(self.classes)
        return {"bd_raised": data.ArrayLayout(handshake, n),
                "bd_granted": data.ArrayLayout(handshake, n),
                "bd_issue": issue_layout(n), "bd_tx": tx_layout, "bd_rx": rx_layout,
                "bd_handoff": handoff_layout}


class WrBreakdown:
    """The write latency breakdown's build parameters: its write classes (names, in class-index
    order) and the writes it can follow from the packetizer to the PHY at once (nslots)."""

    def __init__(self, classes, nslots=8):
        if not 1 <= len(classes) <= WBD_MAX_CLASSES:
            raise ValueError(f"WrBreakdown: {len(classes)} classes, 1..{WBD_MAX_CLASSES}")
        self.classes, self.nslots = tuple(classes), nslots

    def ports(self):
        n = len(self.classes)
        return {"wbd_raised": data.ArrayLayout(handshake, n),
                "wbd_granted": data.ArrayLayout(handshake, n),
                "wbd_other": handshake, "wbd_tx": wr_tx_layout}


class Event:
    """A device-side latency: from `start` events to `end` events, matched in order
    (EventLatency): name, depth (starts waiting at once), merge (a start while one waits is
    merged into it)."""

    def __init__(self, name, depth=4, merge=False):
        if not name.isidentifier():
            raise ValueError(f"Event {name!r}: the name must be an identifier")
        self.name, self.depth, self.merge = name, depth, merge


class Probe:
    """A probe point: a stream's valid/ready/first/last, its bytes per beat and chosen fields.

    name          identifier (Verilog port prefix, VCD scope).
    fields        (name, width) pairs recorded in the trace and usable in triggers.
    nbytes_width  width of the bytes-per-beat input.
    tlp           the stream carries PCIe TLPs: needs an 8-bit field `fmt_type` (header byte 0).
    group         a label to group probes in viewers (e.g. "pcie", "dma", "csr").
    """

    def __init__(self, name, fields=(), nbytes_width=8, tlp=False, group=""):
        self.name, self.fields = name, tuple(fields)
        self.nbytes_width, self.tlp, self.group = nbytes_width, tlp, group
        names = [f for f, _ in self.fields]
        if not name.isidentifier():
            raise ValueError(f"Probe {name!r}: the name must be an identifier")
        if len(set(names)) != len(names) or set(names) & set(HANDSHAKE + ("nbytes",)):
            raise ValueError(f"Probe {name!r}: field names must be unique and not "
                             f"{', '.join(HANDSHAKE + ('nbytes',))}")
        if tlp and ("fmt_type", 8) not in self.fields:
            raise ValueError(f"Probe {name!r}: a TLP probe needs the field ('fmt_type', 8)")

    def signature(self):
        return wiring.Signature({
            **{h: Out(1) for h in HANDSHAKE},
            "nbytes": Out(self.nbytes_width),
            **{f: Out(w) for f, w in self.fields},
        })

    def sample_signals(self):
        return [(h, 1) for h in HANDSHAKE] + list(self.fields)


def sample_width(probes):
    """Bits of the sample vector of these probes (handshakes and fields, in probe order)."""
    return sum(w for p in probes for _, w in p.sample_signals())


class BusAnalyzer(wiring.Component):
    """The bus analyzer over a list of probes.

    Input stage: every probe and event input (hold, snapshot, cap_arm, cap_stop) is registered
    once on entry, so the watched design sees one flip-flop load per probed signal and no logic.
    With register_inputs=False the probes and hold come registered by the caller, who does the
    same: litex_soc/nicscope/analyzer_csr.py registers the SoC signals a probe is built from and
    builds the probe's fields behind those registers. Everything inside sees the design one cycle
    late, uniformly, so windows and trigger cycles are as if it were not; `cap_now` is the
    timestamp the probes' current cycle will get.

    Counts: all of them close their window on the same `snapshot` cycle. They are kept in one
    CounterBank (block RAM, one adder for all; a group of counts of which one counts per cycle
    at most, such as a histogram's bins or a probe's busy, stall and idle, as a lane in
    distributed RAM), except the min and max (registers or the breakdowns' RAM). A
    snapshot's counts are written in n + 3 cycles (n the number of counts), while `cnt_busy` is
    1; a snapshot requested then is refused and counted in `snap_refused`. After reset the bank
    clears its lanes for n cycles, then cuts (every window, the min and max too, counts from
    there) and writes the zero windows (`cnt_busy` through). `cnt_value` is the count
    `cnt_sel` selects (counter_map()), two cycles after `cnt_sel` changes.

    Latency: a request is a beat that moves with `first` on the request probe; a completion ends
    a request when its beat moves with `last` and its `end` field set (the completion probe needs
    a 1-bit field `end`, as LitePCIe's completion layout has).

    Sample vector (what the trigger watches and the trace stores): probe after probe in the
    order given, valid, ready, first, last, then the probe's fields (lowest bits first).
    signals() lists it; header() writes it, with the counter selector map, as a C header.

    Triggers on figures: `figures` comparators (FigureCompare) each compare one of
    figure_sources() with a threshold: a level (on every cycle), a breakdown stage of one
    request class (on the cycle the request is counted: its hand-off + 2) or an event latency
    (its end + 2). Their hit bits are appended to the trigger's compare vector (bits
    sample_width.., trig_width in all), so a trigger stage names them like sample bits; they
    are not stored. A hit is registered twice (the selected figure, then the comparison): it
    pairs with the sample two cycles after the figure's (a level above its threshold on cycle t
    fires a LEVEL or RISE stage on the sample of t + 2; a request's latency on hand-off + 4).
    On the trigger cycle each comparator's
    figure is latched in fig<i>_value (cleared by arm).

    Tracks: the capture stores `tracks` levels (trk<i>_sel) beside the sample, TRACK_WIDTH bits
    each (LevelMonitor's widest level), so the VCD draws them as waveforms. They are part of the
    run-length-compressed vector: a change of a tracked level writes an entry as a change of
    the sample does, so a fast-moving level (a FIFO's fill) shortens the capture; none tracked,
    the capture is as without tracks. The deep capture (stream) carries the sample only: its
    16-byte entry has room for 95 bits of sample, and a track would double it.
    """

    def __init__(self, probes, depth=1024, nbins=16, nstages=4, latency=None,
                 breakdown=None, levels=(), events=(), stream=None, figures=0, tracks=0,
                 register_inputs=True, wr_breakdown=None):
        probes = list(probes)
        if not 1 <= len(probes) <= 16:
            raise ValueError(f"BusAnalyzer: {len(probes)} probes; 1..16 are supported")
        names = [p.name for p in probes]
        if len(set(names)) != len(names):
            raise ValueError(f"BusAnalyzer: probe names repeat: {names}")
        if sum(p.tlp for p in probes) > 8:
            raise ValueError("BusAnalyzer: at most 8 TLP probes")
        if not 2 <= nbins <= 32:
            raise ValueError(f"BusAnalyzer: nbins={nbins} must be 2..32")
        if latency is not None:
            req, cpl = latency
            if req not in names or cpl not in names:
                raise ValueError(f"BusAnalyzer: latency probes {latency} are not among {names}")
            if ("end", 1) not in probes[names.index(cpl)].fields:
                raise ValueError(f"BusAnalyzer: completion probe {cpl!r} needs a field ('end', 1)")
        self.probes, self.depth, self.nbins, self.nstages = probes, depth, nbins, nstages
        self.latency, self.register_inputs = latency, register_inputs
        self.breakdown = breakdown
        self.wr_breakdown = wr_breakdown
        self.levels = tuple(levels)
        if len(self.levels) > MAX_LEVELS:
            raise ValueError(f"BusAnalyzer: {len(self.levels)} levels, at most {MAX_LEVELS}")
        self.events = tuple(events)
        self.stream = stream
        st_ports = {}
        if stream is not None:
            st_ports = {"st_enable": In(1), "st_base": In(64), "st_size_log2": In(5),
                        "st_cons": In(32), "st_mps": In(13, init=256),
                        "st_wr": Out(write_signature(stream)),
                        "st_prod": Out(32), "st_entries": Out(32), "st_lost": Out(32),
                        "st_level": Out(range(STREAM_FIFO_DEPTH + 1)), "st_busy": Out(1),
                        "st_refused": Out(1), "st_refusals": Out(32)}
        if len(self.events) > MAX_EVENTS or len({e.name for e in self.events}) != len(
                self.events):
            raise ValueError(f"BusAnalyzer: events {[e.name for e in self.events]}: at most "
                             f"{MAX_EVENTS}, names unique")
        bd_ports = {n: In(lay) for n, lay in breakdown.ports().items()} if breakdown else {}
        if wr_breakdown:
            bd_ports.update({n: In(lay) for n, lay in wr_breakdown.ports().items()})
        self.sample_width = sample_width(probes)
        if not 0 <= figures <= MAX_FIGURES:
            raise ValueError(f"BusAnalyzer: figures={figures}, 0..{MAX_FIGURES}")
        if figures and not self.figure_sources():
            raise ValueError("BusAnalyzer: figure comparators need levels, a breakdown or events")
        if not 0 <= tracks <= MAX_TRACKS or (tracks and not self.levels):
            raise ValueError(f"BusAnalyzer: tracks={tracks}, 0..{MAX_TRACKS}, and levels to track")
        self.figures, self.tracks = figures, tracks
        self.trig_width = self.sample_width + figures
        self.capture_width = self.sample_width + tracks * TRACK_WIDTH
        fig_ports = {}
        for i in range(figures):
            fig_ports.update({f"fig{i}_sel": In(FIG_SEL_WIDTH), f"fig{i}_below": In(1),
                              f"fig{i}_threshold": In(THRESHOLD_WIDTH),
                              f"fig{i}_value": Out(THRESHOLD_WIDTH)})
        fig_ports.update({f"trk{i}_sel": In(FIG_SEL_WIDTH) for i in range(tracks)})
        aw = (depth - 1).bit_length()
        super().__init__({
            **{p.name: In(p.signature()) for p in probes},
            "hold":      In(1),
            "snapshot":  In(1),
            "cnt_busy":  Out(1),
            "snap_refused": Out(16),
            "cnt_lost":  Out(16),
            "cnt_sel":   In(CNT_SEL_WIDTH),
            "cnt_value": Out(48),
            "bin_min":   In(32),
            "bin_shift": In(5),
            "trig_nstages_used": In(3),
            **{f"trig_{n}": In(w)
               for n, w in stage_ports(self.trig_width, nstages, 16).items()},
            "trig_stage": Out(2),
            "cap_arm":    In(1),
            "cap_stop":   In(1),
            "cap_pre":    In(aw + 1),
            "cap_post":   In(32),
            "cap_state":  Out(2),
            "cap_start":  Out(aw),
            "cap_count":  Out(aw + 1),
            "cap_trig_index": Out(aw),
            "cap_trig_ts": Out(48),
            "cap_end_ts": Out(48),
            "cap_last_ts": Out(48),
            "cap_now":    Out(48),
            "cap_overflow": Out(1),
            "cap_triggered": Out(1),
            "cap_rd_addr": In(aw),
            "cap_rd_data": Out(self.capture_width + TS_WIDTH),
            **fig_ports,
            **bd_ports,
            **{f"level_{n}": In(w) for n, w in self.levels},
            **{f"ev_{e.name}_{k}": In(1) for e in self.events for k in ("start", "end")},
            **st_ports,
        })

    # --- what host software needs to know -------------------------------------------------

    def signals(self):
        """The sample vector: (probe, group, signal, bit offset, width) in bit order."""
        out, off = [], 0
        for p in self.probes:
            for name, w in p.sample_signals():
                out.append((p.name, p.group, name, off, w))
                off += w
        return out

    def figure_sources(self):
        """The figures a comparator can select, in selector order: (name, width)."""
        out = [(f"level.{n}", w) for n, w in self.levels]
        if self.breakdown is not None:
            out += [(f"bd.{c}.{s}", 32) for c in self.breakdown.classes for s in STAGES]
        out += [(f"ev.{e.name}", 32) for e in self.events]
        return out

    def counter_map(self):
        """cnt_sel values: (selector, probe or 'latency', counter name)."""
        out = []
        for i, p in enumerate(self.probes):
            out += [(i * 8 + k, p.name, c) for k, c in enumerate(COUNTS)]
        for t, p in enumerate([p for p in self.probes if p.tlp]):
            out += [(SEL_TLP + t * 8 + k, p.name, c) for k, c in enumerate(TLP_TYPES)]
        if self.latency is not None:
            out += [(SEL_BIN + i, "latency", f"bin{i}") for i in range(self.nbins)]
            out += [(SEL_LAT + k, "latency", s) for k, s in enumerate(LAT_STATS)]
        if self.breakdown is not None:
            for c, cname in enumerate(self.breakdown.classes):
                base = SEL_BD + c * BD_CLASS_STRIDE
                for s, sname in enumerate(STAGES):
                    b = base + s * BD_STAGE_STRIDE
                    out += [(b + i, f"bd.{cname}.{sname}", f"bin{i}") for i in range(BD_NBINS)]
                    out += [(b + BD_SUM + k, f"bd.{cname}.{sname}", st)
                            for k, st in enumerate(("sum", "min", "max"))]
                out += [(base + BD_CLASS_COUNTS + k, f"bd.{cname}", n)
                        for k, n in enumerate(CLASS_COUNTS)]
            out.append((SEL_BD_MISMATCH, "bd", "mismatch"))
            out += [(SEL_BD_REORDER + i, "bd.reorder", f"bin{i}")
                    for i in range(self.breakdown.nslots)]
        if self.wr_breakdown is not None:
            for c, cname in enumerate(self.wr_breakdown.classes):
                base = SEL_WBD + c * WBD_CLASS_STRIDE
                for s, sname in enumerate(WR_STAGES):
                    b = base + s * BD_STAGE_STRIDE
                    out += [(b + i, f"wbd.{cname}.{sname}", f"bin{i}") for i in range(BD_NBINS)]
                    out += [(b + BD_SUM + k, f"wbd.{cname}.{sname}", st)
                            for k, st in enumerate(("sum", "min", "max"))]
                out += [(base + WBD_CLASS_COUNTS + k, f"wbd.{cname}", n)
                        for k, n in enumerate(CLASS_COUNTS)]
            out.append((SEL_WBD_MISMATCH, "wbd", "mismatch"))
        for i, (n, _w) in enumerate(self.levels):
            out += [(SEL_LEVEL + 2 * i + k, f"level.{n}", st) for k, st in enumerate(LEVEL_STATS)]
        for i, e in enumerate(self.events):
            base = SEL_EV + i * EV_STRIDE
            out += [(base + b, f"ev.{e.name}", f"bin{b}") for b in range(EV_NBINS)]
            out += [(base + 0x10 + k, f"ev.{e.name}", st) for k, st in enumerate(EV_STATS)]
        out.append((SEL_BANK_LOST, "bank", "lost"))
        return out

    def snapshot_cycles(self):
        """CNT_STATUS.BUSY's length after a snapshot: the CounterBank's pass over its counts
        (min and max are not in the bank)."""
        n = sum(name not in ("min", "max") and grp != "bank"
                for _sel, grp, name in self.counter_map())
        return max(n, CounterBank.PIPE + 2) + 3

    def header(self, prefix="NICSCOPE"):
        """A C header with the sample layout and counter map (for host software)."""
        lines = [
            "/* SPDX-License-Identifier: BSD-2-Clause */",
            "/* Generated by rtl/nicscope/analyzer.py: the bus analyzer's sample layout and "
            "counter",
            " * selectors. Do not edit. */",
            "#ifndef NICSCOPE_LAYOUT_H",
            "#define NICSCOPE_LAYOUT_H",
            "",
            f"#define {prefix}_NPROBES {len(self.probes)}",
            f"#define {prefix}_SAMPLE_WIDTH {self.sample_width}",
            f"#define {prefix}_TS_WIDTH {TS_WIDTH}",
            f"#define {prefix}_DEPTH {self.depth}",
            f"#define {prefix}_NBINS {self.nbins}",
            f"#define {prefix}_NSTAGES {self.nstages}",
            f"#define {prefix}_HAS_LATENCY {int(self.latency is not None)}",
            f"#define {prefix}_NCOUNTS {len(COUNTS)}",
            f"#define {prefix}_NTLP_TYPES {len(TLP_TYPES)}",
            f"#define {prefix}_SEL_TLP {SEL_TLP:#x}",
            f"#define {prefix}_SEL_BIN {SEL_BIN:#x}",
            f"#define {prefix}_SEL_LAT {SEL_LAT:#x}",
            f"#define {prefix}_CNT_SEL_WIDTH {CNT_SEL_WIDTH}",
            "/* The counter bank's lost updates since reset (16 bits, wraps): 0 when exact. */",
            f"#define {prefix}_SEL_BANK_LOST {SEL_BANK_LOST:#x}",
            "/* Cycles a snapshot's pass takes (CNT_STATUS.BUSY): a snapshot sooner after the",
            " * last one is refused, so a window must be longer. */",
            f"#define {prefix}_SNAPSHOT_CYCLES {self.snapshot_cycles()}",
            "",
            "/* Latency breakdown: selectors as in rtl/nicscope/analyzer.py; the classes this",
            " * analyzer was generated with (ANALYZER_BD_INFO says which the gateware has). */",
            f"#define {prefix}_SEL_BD {SEL_BD:#x}",
            f"#define {prefix}_BD_CLASS_STRIDE {BD_CLASS_STRIDE:#x}",
            f"#define {prefix}_BD_STAGE_STRIDE {BD_STAGE_STRIDE:#x}",
            f"#define {prefix}_BD_SUM {BD_SUM:#x}",
            f"#define {prefix}_BD_CLASS_COUNTS {BD_CLASS_COUNTS:#x}",
            f"#define {prefix}_SEL_BD_MISMATCH {SEL_BD_MISMATCH:#x}",
            f"#define {prefix}_BD_MAX_CLASSES {BD_MAX_CLASSES}",
            f"#define {prefix}_BD_NBINS {BD_NBINS}",
            f"#define {prefix}_BD_NSTAGES {NSTAGES}",
            f"#define {prefix}_BD_NCLASSES {len(self.breakdown.classes) if self.breakdown else 0}",
            f"#define {prefix}_BD_STAGE_NAMES " + ", ".join(f'"{n}"' for n in STAGES),
            f"#define {prefix}_BD_COUNT_NAMES " + ", ".join(f'"{n}"' for n in CLASS_COUNTS),
            f"#define {prefix}_BD_CLASS_NAMES " + (", ".join(
                f'"{n}"' for n in self.breakdown.classes) if self.breakdown else '""'),
            "",
            "/* Write latency breakdown: class c stage s bin i at SEL_WBD + c * WBD_CLASS_STRIDE",
            " * + s * BD_STAGE_STRIDE + i, its sum/min/max at + BD_SUM + 0/1/2, count k",
            " * (BD_COUNT_NAMES) at SEL_WBD + c * WBD_CLASS_STRIDE + WBD_CLASS_COUNTS + k. */",
            f"#define {prefix}_SEL_WBD {SEL_WBD:#x}",
            f"#define {prefix}_WBD_CLASS_STRIDE {WBD_CLASS_STRIDE:#x}",
            f"#define {prefix}_WBD_CLASS_COUNTS {WBD_CLASS_COUNTS:#x}",
            f"#define {prefix}_SEL_WBD_MISMATCH {SEL_WBD_MISMATCH:#x}",
            f"#define {prefix}_WBD_MAX_CLASSES {WBD_MAX_CLASSES}",
            f"#define {prefix}_WBD_NSTAGES {WR_NSTAGES}",
            f"#define {prefix}_WBD_NCLASSES "
            f"{len(self.wr_breakdown.classes) if self.wr_breakdown else 0}",
            f"#define {prefix}_WBD_STAGE_NAMES " + ", ".join(f'"{n}"' for n in WR_STAGES),
            f"#define {prefix}_WBD_CLASS_NAMES " + (", ".join(
                f'"{n}"' for n in self.wr_breakdown.classes) if self.wr_breakdown else '""'),
            "",
            "/* Levels (occupancy integrals): level l's sum and max at SEL_LEVEL + 2 * l + 0/1. */",
            f"#define {prefix}_SEL_LEVEL {SEL_LEVEL:#x}",
            f"#define {prefix}_NLEVELS {len(self.levels)}",
            f"#define {prefix}_LEVEL_NAMES " + (", ".join(
                f'"{n}"' for n, _w in self.levels) if self.levels else '""'),
            "",
            "/* Reorder distance (latency breakdown): bin i at SEL_BD_REORDER + i, BD_NSLOTS bins.",
            " * Event latencies: event e's bin i at SEL_EV + e * EV_STRIDE + i, statistic k",
            " * (EV_STAT_NAMES) at SEL_EV + e * EV_STRIDE + 0x10 + k. */",
            f"#define {prefix}_SEL_BD_REORDER {SEL_BD_REORDER:#x}",
            f"#define {prefix}_BD_NSLOTS {self.breakdown.nslots if self.breakdown else 0}",
            f"#define {prefix}_SEL_EV {SEL_EV:#x}",
            f"#define {prefix}_EV_STRIDE {EV_STRIDE:#x}",
            f"#define {prefix}_EV_NBINS {EV_NBINS}",
            f"#define {prefix}_NEVENTS {len(self.events)}",
            f"#define {prefix}_EV_NAMES " + (", ".join(
                f'"{e.name}"' for e in self.events) if self.events else '""'),
            f"#define {prefix}_EV_STAT_NAMES " + ", ".join(f'"{n}"' for n in EV_STATS),
            "",
            "/* Deep capture (TraceStream): bytes per entry in the host ring; the entry: sample,",
            " * 32-bit timestamp, the gap flag in the entry's top bit. */",
            f"#define {prefix}_HAS_STREAM {int(self.stream is not None)}",
            f"#define {prefix}_STREAM_ENTRY_BYTES {entry_bytes(self.sample_width)}",
            "",
            "/* Triggers on figures (FigureCompare): comparator i's hit is bit SAMPLE_WIDTH + i of",
            " * the trigger's compare vector (TRIG_WIDTH bits); FIG_SOURCES in selector order.",
            " * A hit pairs with the sample FIG_HIT_DELAY cycles after its figure's cycle; a",
            " * latency is that figure on FIG_COUNT_DELAY cycles after its hand-off (end).",
            " * Tracks: TRACK_WIDTH-bit levels stored above the sample (CAPTURE_WIDTH bits). */",
            f"#define {prefix}_NFIGURES {self.figures}",
            f"#define {prefix}_TRIG_WIDTH {self.trig_width}",
            f"#define {prefix}_FIG_HIT_DELAY 2",
            f"#define {prefix}_FIG_COUNT_DELAY 2",
            f"#define {prefix}_NFIG_SOURCES {len(self.figure_sources())}",
            f"#define {prefix}_FIG_SOURCES " + (", ".join(
                f'"{n}"' for n, _w in self.figure_sources()) or '""'),
            f"#define {prefix}_NTRACKS {self.tracks}",
            f"#define {prefix}_TRACK_WIDTH {TRACK_WIDTH}",
            f"#define {prefix}_CAPTURE_WIDTH {self.capture_width}",
        ]
        for enum in (Mode, Op, State):
            lines += [f"#define {prefix}_{enum.__name__.upper()}_{e.name} {e.value}" for e in enum]
        lines += [
            "",
            "/* Probes in selector order: name, group, TLP counter index (-1: none). */",
            f"#define {prefix}_PROBES \\",
        ]
        t = 0
        for p in self.probes:
            lines.append(f'    {{"{p.name}", "{p.group}", {t if p.tlp else -1}}}, \\')
            t += p.tlp
        lines += [
            "",
            "/* Sample vector: probe index, signal name, bit offset, width. */",
            f"#define {prefix}_SIGNALS \\",
        ]
        names = [p.name for p in self.probes]
        for probe, _group, name, off, w in self.signals():
            lines.append(f'    {{{names.index(probe)}, "{name}", {off}, {w}}}, \\')
        lines += ["", "/* Occupancy counts (selector = probe * 8 + index). */",
                  f"#define {prefix}_COUNT_NAMES \\"]
        lines += [f'    "{c}", \\' for c in COUNTS]
        lines += ["", f"#define {prefix}_TLP_NAMES \\"]
        lines += [f'    "{c}", \\' for c in TLP_TYPES]
        lines += ["", f"#define {prefix}_LAT_NAMES \\"]
        lines += [f'    "{c}", \\' for c in LAT_STATS]
        lines += ["", "#endif", ""]
        return "\n".join(lines)

    # --- hardware -------------------------------------------------------------------------

    def elaborate(self, platform):
        m = Module()
        incs = {}      # selector -> (increment signal, its largest value), for the bank
        regs = {}      # selector -> a value outside the bank (min, max, the bank's lost)
        # A breakdown's min and max come from its RAM's read port, of the class `rd_cls`:
        # (breakdown, [(selectors, class)]).
        rd_cls = []

        # Input stage: every probe signal and event input is registered once before any logic
        # sees it (the probes and hold by the caller if register_inputs is False).
        ports = {}
        for p in self.probes:
            port, reg = getattr(self, p.name), {}
            for name, w in [("nbytes", p.nbytes_width)] + p.sample_signals():
                if self.register_inputs:
                    reg[name] = Signal(w, name=f"{p.name}_{name}_q")
                    m.d.sync += reg[name].eq(getattr(port, name))
                else:
                    reg[name] = getattr(port, name)
            ports[p.name] = SimpleNamespace(**reg)
        snapshot, arm, stop = (Signal(name=f"{n}_q") for n in ("snapshot", "arm", "stop"))
        m.d.sync += [snapshot.eq(self.snapshot), arm.eq(self.cap_arm), stop.eq(self.cap_stop)]
        if self.register_inputs:
            hold = Signal(name="hold_q")
            m.d.sync += hold.eq(self.hold)
        else:
            hold = self.hold

        # The counts' snapshot is the bank's: taken when no pass is running.
        taken = Signal()
        for i, p in enumerate(self.probes):
            port = ports[p.name]
            occ = OccupancyCounter(nbytes_width=p.nbytes_width, counters=False)
            m.submodules[f"occ_{p.name}"] = occ
            m.d.comb += [
                occ.valid.eq(port.valid), occ.ready.eq(port.ready), occ.last.eq(port.last),
                occ.nbytes.eq(port.nbytes), occ.hold.eq(hold),
            ]
            for k, c in enumerate(COUNTS):
                incs[i * 8 + k] = (getattr(occ, f"inc_{c}"), occ.max_inc[c])

        for t, p in enumerate([p for p in self.probes if p.tlp]):
            port = ports[p.name]
            tlp = TLPTypeCounter(counters=False)
            m.submodules[f"tlp_{p.name}"] = tlp
            m.d.comb += [
                tlp.valid.eq(port.valid), tlp.ready.eq(port.ready), tlp.first.eq(port.first),
                tlp.fmt_type.eq(port.fmt_type),
            ]
            for k, c in enumerate(TLP_TYPES):
                incs[SEL_TLP + t * 8 + k] = (getattr(tlp, f"inc_{c}"), tlp.max_inc[c])

        # Coded lanes: a group of counts given to the bank as one update per cycle (an entry
        # index and an increment), where the source has the index (a bin, a class).
        coded = []     # (selectors, valid, entry, increment, its largest value), for the bank

        if self.latency is not None:
            req, cpl = (ports[n] for n in self.latency)
            m.submodules.latency = lat = LatencyHistogram(nbins=self.nbins, counters=False)
            m.d.comb += [
                lat.req.eq(req.valid & req.ready & req.first),
                lat.cpl.eq(cpl.valid & cpl.ready & cpl.last & cpl.end),
                lat.bin_min.eq(self.bin_min), lat.bin_shift.eq(self.bin_shift),
                lat.snapshot.eq(taken),
            ]
            # The histogram: its bins, below and above, one of them per completion.
            hist = [SEL_BIN + i for i in range(self.nbins)] + [
                SEL_LAT + LAT_STATS.index(s) for s in ("below", "above")]
            coded.append((hist, lat.inc_hist_valid, lat.inc_hist, 1, 1))
            for k, s in enumerate(LAT_STATS):
                if s in ("min", "max"):
                    regs[SEL_LAT + k] = getattr(lat, s)
                elif SEL_LAT + k not in hist:
                    incs[SEL_LAT + k] = (getattr(lat, f"inc_{s}"), lat.max_inc[s])

        # A breakdown counts one request per cycle, all its stages on that cycle: per stage its
        # bins over the classes are one lane, its sums over the classes another, and the
        # classes' request counts a third, each given to the bank as the request's one update
        # (a coded lane: class and bin are indices in the breakdown, so they cannot collide).
        # Its min and max per class and stage are in its own RAM (StageStats), read by class.

        def stage_lanes(unit, bdp, sel0, stride, counts, nstages):
            ncls = range(len(bdp.classes))
            for s in range(nstages):
                b = [sel0 + c * stride + s * BD_STAGE_STRIDE for c in ncls]
                coded.append(([bc + i for bc in b for i in range(BD_NBINS)], unit.inc_valid,
                              unit.inc_cls * BD_NBINS + unit.inc_bin[s], 1, unit.max_inc["bin"]))
                coded.append(([bc + BD_SUM for bc in b], unit.inc_valid, unit.inc_cls,
                              unit.inc_diff[s], unit.max_inc["sum"]))
                for c in ncls:
                    regs[b[c] + BD_SUM + 1] = unit.rd_min[s]
                    regs[b[c] + BD_SUM + 2] = unit.rd_max[s]
                    rd_cls[-1][1].append(([b[c] + BD_SUM + 1, b[c] + BD_SUM + 2], c))
            coded.append(([sel0 + c * stride + counts + CLASS_COUNTS.index("count")
                           for c in ncls], unit.inc_valid, unit.inc_cls, 1, unit.max_inc["count"]))
            for c in ncls:
                for k, n in enumerate(CLASS_COUNTS):
                    if n != "count":
                        incs[sel0 + c * stride + counts + k] = (getattr(unit, f"inc_{n}")[c],
                                                                unit.max_inc[n])

        if self.breakdown is not None:
            bd = self.breakdown
            m.submodules.breakdown = lb = LatencyBreakdown(
                nclasses=len(bd.classes), nslots=bd.nslots, nbins=BD_NBINS,
                tag_beat=bd.tag_beat, counters=False)
            rd_cls.append((lb, []))
            for name in bd.ports():
                port = getattr(self, name)
                if self.register_inputs:
                    reg = Signal(port.shape(), name=f"{name}_q")
                    m.d.sync += reg.eq(port)
                    port = reg
                m.d.comb += getattr(lb, name[3:]).eq(port)
            m.d.comb += lb.snapshot.eq(taken)
            stage_lanes(lb, bd, SEL_BD, BD_CLASS_STRIDE, BD_CLASS_COUNTS, NSTAGES)
            incs[SEL_BD_MISMATCH] = (lb.inc_mismatch, 1)
            coded.append(([SEL_BD_REORDER + i for i in range(bd.nslots)],
                          lb.inc_reorder_valid, lb.inc_reorder_dist, 1, 1))

        if self.wr_breakdown is not None:
            wbd = self.wr_breakdown
            m.submodules.wr_breakdown = wb = WriteBreakdown(
                nclasses=len(wbd.classes), nslots=wbd.nslots, nbins=BD_NBINS, counters=False)
            rd_cls.append((wb, []))
            for name in wbd.ports():
                port = getattr(self, name)
                if self.register_inputs:
                    reg = Signal(port.shape(), name=f"{name}_q")
                    m.d.sync += reg.eq(port)
                    port = reg
                m.d.comb += getattr(wb, name[4:]).eq(port)
            m.d.comb += wb.snapshot.eq(taken)
            stage_lanes(wb, wbd, SEL_WBD, WBD_CLASS_STRIDE, WBD_CLASS_COUNTS, WR_NSTAGES)
            incs[SEL_WBD_MISMATCH] = (wb.inc_mismatch, 1)

        level_vals, ev_units = [], []
        if self.levels:
            m.submodules.levels = lm = LevelMonitor(self.levels)
            for i, (n, w) in enumerate(self.levels):
                port = getattr(self, f"level_{n}")
                if self.register_inputs:
                    reg = Signal(w, name=f"level_{n}_q")
                    m.d.sync += reg.eq(port)
                    port = reg
                level_vals.append(port)
                m.d.comb += getattr(lm, n).eq(port)
                incs[SEL_LEVEL + 2 * i] = (getattr(lm, f"inc_{n}"), lm.max_inc[n])
                regs[SEL_LEVEL + 2 * i + 1] = getattr(lm, f"max_{n}")
            m.d.comb += lm.snapshot.eq(taken)

        for i, e in enumerate(self.events):
            el = EventLatency(depth=e.depth, merge=e.merge, nbins=EV_NBINS)
            m.submodules[f"ev_{e.name}"] = el
            ev_units.append(el)
            for k in ("start", "end"):
                port = getattr(self, f"ev_{e.name}_{k}")
                if self.register_inputs:
                    reg = Signal(name=f"ev_{e.name}_{k}_q")
                    m.d.sync += reg.eq(port)
                    port = reg
                m.d.comb += getattr(el, k).eq(port)
            m.d.comb += el.snapshot.eq(taken)
            base = SEL_EV + i * EV_STRIDE
            coded.append(([base + b for b in range(EV_NBINS)], el.inc_count, el.inc_bin, 1, 1))
            for k, st in enumerate(EV_STATS):
                if st in EV_COUNTS:
                    incs[base + 0x10 + k] = (getattr(el, f"inc_{st}"), el.max_inc[st])
                else:
                    regs[base + 0x10 + k] = getattr(el, st)

        # Lanes: runs of selectors of which at most one counts on a cycle, their accumulators
        # in the bank's distributed RAM. Given per count (the bank counts a cycle with two in
        # `lost`): a probe's busy, stall and idle (one of them every cycle), its frames and
        # stall_hold (a beat that moves, a beat held off); a TLP probe's types (a TLP's first
        # beat has one); the latency's count and unmatched (a completion is matched or not), an
        # event's too, and its merged and lost (a start merged is not lost). Coded (above): the
        # histograms' bins (the latency's with below and above, the events', the reorder
        # distance's) and the breakdowns' lanes.
        lanes = []
        for i in range(len(self.probes)):
            for group in (("busy", "stall", "idle"), ("frames", "stall_hold")):
                lanes.append([i * 8 + COUNTS.index(c) for c in group])
        for t in range(sum(p.tlp for p in self.probes)):
            lanes.append([SEL_TLP + t * 8 + k for k in range(len(TLP_TYPES))])
        if self.latency is not None:
            lanes.append([SEL_LAT + LAT_STATS.index(s) for s in ("count", "unmatched")])
        for i in range(len(self.events)):
            for group in (("count", "unmatched"), ("merged", "lost")):
                lanes.append([SEL_EV + i * EV_STRIDE + 0x10 + EV_STATS.index(s) for s in group])
        # Bank entries: the scanned counts in selector order, then each lane's, then each
        # coded lane's.
        in_lane = {sel for lane in lanes for sel in lane}
        sels = [sel for sel in sorted(incs) if sel not in in_lane]
        maxes = {sel: mx for sel, (_inc, mx) in incs.items()}
        bank_lanes = []
        for lane in lanes + [c[0] for c in coded]:
            bank_lanes.append(list(range(len(sels), len(sels) + len(lane))))
            sels += lane
        for lane, _valid, _entry, _inc, mx in coded:
            maxes.update(dict.fromkeys(lane, mx))
        regs[SEL_BANK_LOST] = self.cnt_lost
        # Every selector of counter_map() is one counter or register here, none twice.
        want = [sel for sel, _, _ in self.counter_map()]
        if (len(set(want)) != len(want) or sorted(want) != sorted(sels + list(regs))
                or max(want) >= 2**CNT_SEL_WIDTH):
            raise AssertionError("BusAnalyzer: counter selectors collide or do not fit cnt_sel")
        m.submodules.counts = bank = CounterBank(
            [maxes[sel] for sel in sels], lanes=bank_lanes,
            coded=range(len(lanes), len(lanes) + len(coded)))
        for a, sel in enumerate(sels):
            if sel in incs:
                m.d.comb += getattr(bank, f"inc{a}").eq(incs[sel][0])
        for k, (_lane, valid, entry, inc, _mx) in enumerate(coded, len(lanes)):
            m.d.comb += [getattr(bank, f"lane{k}_valid").eq(valid),
                         getattr(bank, f"lane{k}_entry").eq(entry),
                         getattr(bank, f"lane{k}_inc").eq(inc)]
        m.d.comb += [
            bank.snapshot.eq(snapshot), taken.eq(bank.taken),
            # Busy from the strobe's cycle on, so a read right after the strobe never sees 0.
            self.cnt_busy.eq(bank.busy | snapshot | self.snapshot),
            self.snap_refused.eq(bank.refused),
            self.cnt_lost.eq(bank.lost),
        ]

        # Read-out: the selector picks a bank entry (its address follows cnt_sel through a few
        # LUTs into the block RAM's address register), or one of the registers; cnt_value is
        # registered, so it is valid two cycles after cnt_sel changes. The address is an OR of
        # one small case per run of READ_CHUNK selectors (0 where none matches), not one case
        # over all: a case becomes a chain of as many muxes in Yosys's SAT model of the cone,
        # which synth_ecp5's memory_dff builds for this RAM's read port, and a chain of some
        # 500 exhausts YoWASP Yosys's call stack.
        parts = []
        for c0 in range(0, len(sels), READ_CHUNK):
            part = Signal.like(bank.rd_addr, name=f"rd_addr_part{c0 // READ_CHUNK}")
            with m.Switch(self.cnt_sel):
                for a in range(c0, min(c0 + READ_CHUNK, len(sels))):
                    with m.Case(sels[a]):
                        m.d.comb += part.eq(a)
                with m.Default():
                    m.d.comb += part.eq(0)
            parts.append(part)
        rd_addr = parts[0]
        for part in parts[1:]:
            rd_addr = rd_addr | part
        m.d.comb += bank.rd_addr.eq(rd_addr)
        sel_q = Signal(CNT_SEL_WIDTH)
        m.d.sync += sel_q.eq(self.cnt_sel)
        # A breakdown's class to read, registered beside sel_q.
        for unit, cases in rd_cls:
            with m.Switch(self.cnt_sel):
                for sel_pair, c in cases:
                    with m.Case(*sel_pair):
                        m.d.sync += unit.rd_cls.eq(c)
                with m.Default():                  # a default: Verilator's CASEINCOMPLETE
                    m.d.sync += unit.rd_cls.eq(unit.rd_cls)
        with m.Switch(sel_q):
            with m.Case(*sels):
                m.d.sync += self.cnt_value.eq(bank.rd_data)
            for sel, v in regs.items():
                with m.Case(sel):
                    m.d.sync += self.cnt_value.eq(v)
            with m.Default():
                m.d.sync += self.cnt_value.eq(0)

        # Trace: the sample vector, the trigger and the capture.
        sample = Signal(self.sample_width)
        for p in self.probes:
            port = ports[p.name]
            for probe, _g, name, off, w in self.signals():
                if probe == p.name:
                    m.d.comb += sample[off:off + w].eq(getattr(port, name))
        # The figures: levels every cycle, a request's stage or an event's latency on the cycle
        # it is counted.
        hits = []
        fig_q = []
        if self.figures:
            # Sources in figure_sources() order: (valid, value); a breakdown stage's classes
            # share its cycles as one value (valid for the class counted).
            srcs = [(1, lv, ("level", i)) for i, lv in enumerate(level_vals)]
            if self.breakdown is not None:
                srcs += [(lb.inc_valid & (lb.inc_cls == c), lb.inc_diff[s], ("bd", s))
                         for c in range(len(self.breakdown.classes)) for s in range(NSTAGES)]
            srcs += [(el.inc_count, el.inc_sum, ("ev", i)) for i, el in enumerate(ev_units)]
            values, value_of = {}, []
            for _v, x, key in srcs:
                values.setdefault(key, (len(values), x))
                value_of.append(values[key][0])
            m.submodules.figures = fc = FigureCompare(
                [w for _n, w in self.figure_sources()], ncmp=self.figures, value_of=value_of)
            for k, (v, _x, _key) in enumerate(srcs):
                m.d.comb += getattr(fc, f"valid{k}").eq(v)
            for j, x in values.values():
                m.d.comb += getattr(fc, f"value{j}").eq(x)
            for i in range(self.figures):
                for n in ("sel", "below", "threshold"):
                    m.d.comb += getattr(fc, f"{n}{i}").eq(getattr(self, f"fig{i}_{n}"))
                # The value a hit came from, a cycle later: the trigger's result pairs with it.
                vq = Signal(THRESHOLD_WIDTH, name=f"fig{i}_value_d")
                m.d.sync += vq.eq(getattr(fc, f"value{i}_q"))
                fig_q.append(vq)
            hits = [fc.hit]
        # The tracks: the selected level (levels are at most TRACK_WIDTH bits).
        tracks = []
        for i in range(self.tracks):
            trk = Signal(TRACK_WIDTH, name=f"track{i}")
            with m.Switch(getattr(self, f"trk{i}_sel")):
                for k, lv in enumerate(level_vals):
                    with m.Case(k + 1):
                        m.d.comb += trk.eq(lv)
                with m.Default():
                    m.d.comb += trk.eq(0)
            tracks.append(trk)
        # The trigger registers its comparators' results and the capture its sample (latency 1
        # both): trigger, capture, arm and stop all act one cycle after the sample.
        m.submodules.trigger = trig = TraceTrigger(self.trig_width, self.nstages, latency=1)
        m.submodules.capture = cap = TraceCapture(self.capture_width, self.depth, latency=1)
        arm_q, stop_q = Signal(), Signal()
        m.d.sync += [arm_q.eq(arm), stop_q.eq(stop)]
        m.d.comb += [
            trig.sample.eq(Cat(sample, *hits)), trig.enable.eq(cap.armed), trig.arm.eq(arm_q),
            trig.nstages_used.eq(self.trig_nstages_used), self.trig_stage.eq(trig.stage),
            cap.sample.eq(Cat(sample, *tracks)), cap.trigger.eq(trig.fire),
        ]
        for i, vq in enumerate(fig_q):
            out = getattr(self, f"fig{i}_value")
            with m.If(arm_q):
                m.d.sync += out.eq(0)
            with m.Elif(trig.fire & cap.armed):
                m.d.sync += out.eq(vq)
        for i in range(self.nstages):
            for f in STAGE_FIELDS:
                m.d.comb += getattr(trig, f"s{i}_{f}").eq(getattr(self, f"trig_s{i}_{f}"))
        m.d.comb += [cap.arm.eq(arm_q), cap.stop.eq(stop_q)]
        for name in ("pre", "post", "rd_addr"):
            m.d.comb += getattr(cap, name).eq(getattr(self, f"cap_{name}"))
        for name in ("state", "start", "count", "trig_index", "trig_ts", "end_ts", "last_ts",
                     "overflow", "triggered", "rd_data"):
            m.d.comb += getattr(self, f"cap_{name}").eq(getattr(cap, name))
        # The capture stamps a sample with its own cycle count two cycles after the probes saw
        # it (the input stage, the trigger's): cap_now runs two ahead of that count.
        m.d.comb += self.cap_now.eq(cap.now + 2)

        # The deep capture registers the sample once, as the capture does, and stamps it with
        # the count the capture would give it.
        if self.stream is not None:
            m.submodules.stream = st = TraceStream(self.sample_width, data_width=self.stream,
                                                   fifo_depth=STREAM_FIFO_DEPTH)
            m.d.comb += [st.sample.eq(sample), st.now.eq(cap.now + 1)]
            for n in ("enable", "base", "size_log2", "cons", "mps"):
                m.d.comb += getattr(st, n).eq(getattr(self, f"st_{n}"))
            for n in ("prod", "entries", "lost", "level", "busy", "refused", "refusals"):
                m.d.comb += getattr(self, f"st_{n}").eq(getattr(st, n))
            wiring.connect(m, st.wr, wiring.flipped(self.st_wr))
        return m
