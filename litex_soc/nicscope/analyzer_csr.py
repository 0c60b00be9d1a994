# SPDX-License-Identifier: BSD-2-Clause
#
# analyzer_csr.py: LiteX register wrapper around the Amaranth bus analyzer
# (rtl/nicscope/analyzer.py).
#
# What it is: instantiates the emitted BusAnalyzer Verilog, connects its probes to the SoC's
# streams through tap registers (probe_taps.py), and exposes its controls and read-outs as CSRs,
# reachable from the host over PCIe (BAR0) and from the soft CPU over the SoC bus. The logic
# lives in rtl/; this file only exposes it. It also gives `nicscope_layout.h` (sample layout and
# counter selectors) for host code. How the taps are placed: BusAnalyzerCSR's docstring.
#
# Interfaces: `probe(name, valid=, ready=, first=, last=, nbytes=, **fields)` connects a probe
# to Migen expressions (every probe given at construction must be connected once);
# `breakdown_input(name, **fields)` connects a latency breakdown input (bd_raised, ...; the
# write breakdown's wbd_raised, ...) the same way, its fields packed in the core's layout;
# `level(name, expr)` connects a level (an occupancy integral); `event(name, start, end)`
# connects an event latency's start and end strobes; `hold` (a host CSR access is in progress);
# `watch(design)` (the design the probes are in); and for the
# simulation's cross-check `snapshot_pulse`, `sample` and `now`.
#
# Parameters: platform (to add the Verilog), probes (rtl.nicscope.analyzer.Probe list),
# build_dir, depth (trace entries), nbins (latency bins), latency ((request, completion) probe
# names), breakdown (rtl.nicscope.analyzer.Breakdown or None), wr_breakdown
# (rtl.nicscope.analyzer.WrBreakdown or None), levels ((name, width) pairs),
# events (rtl.nicscope.analyzer.Event list), stream (the deep capture's DMA: dict(adapter= a
# write adapter with wr_* ports: DMAWriteAdapter on a LitePCIe crossbar port, or
# WishboneDMAWriteAdapter on the SoC bus; data_width=, mps= its largest write), or None), figures
# (figure comparators for triggers, 0..4), tracks (levels stored beside the capture's sample,
# 0..2), module_name, tap_stages (registers between a probed signal and the analyzer, >= 1).

import os
from functools import reduce
from operator import or_

from migen import Cat, ClockSignal, Constant, Instance, ResetSignal, Signal

from amaranth.back import verilog

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRField, CSRStatus, CSRStorage

from litex_soc.nicscope.probe_taps import ProbeTaps, delay_line
from amaranth.lib import data

from rtl.nicscope.analyzer import CNT_SEL_WIDTH, HANDSHAKE, BusAnalyzer
from rtl.nicscope.latency_breakdown import NSTAGES
from rtl.nicscope.write_breakdown import WR_NSTAGES
from rtl.nicscope.trace_capture import State
from rtl.nicscope.trace_trigger import Mode, Op


class WriteOnlyCSRStorage(CSRStorage):
    """A CSRStorage that reads as 0: its bits stay out of the CSR bank's read multiplexer. For
    wide configuration the host only writes (the trigger's masks and values: 16 x the sample
    width), whose read-back would add that many inputs to the read path for nothing."""

    def do_finalize(self, busword, ordering):
        super().do_finalize(busword, ordering)
        for sc in self.simple_csrs:
            sc.w = Signal(sc.size, name=sc.name + "_w")     # undriven: reads 0


TAP_STAGES = 3


class BusAnalyzerCSR(LiteXModule):
    """The bus analyzer's CSRs and its connection to the SoC.

    Probes put only flip-flops on the SoC: every SoC signal a probe's expressions read goes
    through `tap_stages` registers (each signal once, however many expressions use it), and the
    expressions (a field's Mux, a popcount of byte enables) are built behind them, so all of the
    analyzer's logic sits there; the core then takes its probes as given
    (register_inputs=False). hold, too. More than one stage, as a vendor logic analyzer's "input
    pipe stages", lets the placer keep the first register by the watched logic and the analyzer
    where it fits. The snapshot, arm and stop strobes are delayed to match, and CAP_NOW accounts
    for the stages, so windows, trigger cycles and timestamps are as with one. With
    watch(design), the taps sit at the design's registers: a one-bit signal the design computes
    combinationally (a handshake, a first/last flag) is followed back through the statements
    that assign it, which are copied behind the taps (ProbeTaps).
    """

    def __init__(self, platform, probes, build_dir, depth=1024, nbins=16, latency=None,
                 breakdown=None, levels=(), events=(), stream=None, figures=0, tracks=0,
                 module_name="nic_bus_analyzer",
                 tap_stages=TAP_STAGES, wr_breakdown=None):
        if tap_stages < 1:
            raise ValueError(f"BusAnalyzerCSR: tap_stages={tap_stages}, at least 1")
        self.tap_stages = tap_stages
        core = BusAnalyzer(probes, depth=depth, nbins=nbins, nstages=4, latency=latency,
                           breakdown=breakdown, levels=levels, events=events,
                           stream=stream["data_width"] if stream else None,
                           figures=figures, tracks=tracks, register_inputs=False,
                           wr_breakdown=wr_breakdown)
        self.breakdown = breakdown
        self.wr_breakdown = wr_breakdown
        self._bd_connected = set()
        self._levels = dict(levels)
        self._levels_connected = set()
        self._events = {e.name for e in events}
        self._events_connected = set()
        self._deferred = []     # connections to make when finalized (at_finalize)
        self.core = core
        w, tw = core.sample_width, core.trig_width
        aw = (depth - 1).bit_length()
        self.hold = Signal()
        self.snapshot_pulse = Signal()
        self.sample = Signal(w)
        self.now = Signal(48)
        self._probes = {p.name: p for p in probes}
        self._connected = set()
        self._watched = []      # the design (watch()), in a list: LiteX's CSR scan stays out
        self._probe_in = {"i_hold": self.hold}     # core input port -> SoC expression

        self.info = CSRStatus(fields=[
            CSRField("nprobes", size=5, reset=len(probes), description="Probes built in."),
            CSRField("depth_log2", size=5, reset=aw, description="Trace depth: "
                     "``2**depth_log2`` entries."),
            CSRField("nbins", size=6, reset=nbins, description="Latency histogram bins."),
            CSRField("nstages", size=3, reset=4, description="Trigger stages."),
            CSRField("latency", size=1, reset=int(latency is not None),
                     description="``1``: the DMA read latency histogram is built in."),
            CSRField("sample_width", size=12, reset=w, description="Bits per trace sample "
                     "(the layout is in the generated ``nicscope_layout.h``)."),
        ], description="Build-time parameters of the analyzer; host software checks them "
                       "against ``nicscope_layout.h``.")
        self.control = CSRStorage(fields=[
            CSRField("snapshot", size=1, pulse=True, description="Write ``1``: every counter "
                     "of every probe closes its window on the same cycle; the closed window's "
                     "counts become readable through ``cnt_sel``/``cnt_value``."),
            CSRField("arm", size=1, pulse=True, description="Write ``1``: clear the trace "
                     "storage and arm the trigger (stage 0)."),
            CSRField("stop", size=1, pulse=True, description="Write ``1``: end an armed or "
                     "triggered capture now."),
        ], description="Analyzer strobes.")
        self.cnt_sel = CSRStorage(CNT_SEL_WIDTH, description=(
            "Counter selector: probe ``p`` count ``k`` is ``p*8+k`` (busy, stall, idle, bytes, "
            "frames, stall_hold); TLP probe ``t`` type ``k`` is ``0x80+t*8+k`` (MRd, MWr, CplD, "
            "Cpl, Msg, other); latency bin ``i`` is ``0xC0+i``; latency statistic ``k`` is "
            "``0xE0+k`` (below, above, count, sum, min, max, lost, unmatched); latency breakdown "
            "class ``c`` stage ``s`` bin ``i`` is ``0x100+c*0x200+s*0x20+i``, its sum, min, max "
            "at ``+0x10``, ``+0x11``, ``+0x12``; class ``c``'s count, raises, occupancy at "
            "``0x200+c*0x200+k``; tag mismatches at ``0x700``; reorder distance bin ``i`` at "
            "``0x710+i``; level ``l``'s sum (occupancy integral) and maximum at ``0x780+l*2``, "
            "``0x781+l*2``; event latency ``e``'s bin ``i`` at ``0x800+e*0x20+i``, its count, "
            "sum, merged, lost, unmatched, min, max at ``0x810+e*0x20+k``; write latency "
            "breakdown class ``c`` stage ``s`` bin ``i`` at ``0xC00+c*0x100+s*0x20+i``, its "
            "sum, min, max at ``+0x10``, ``+0x11``, ``+0x12``; class ``c``'s count, raises, "
            "occupancy at ``0xC80+c*0x100+k``; MWrs not matched to a write at ``0xF00``."))
        self.cnt_value = CSRStatus(48, description="The selected counter of the last closed "
            "window (valid two cycles after ``cnt_sel`` is written, and once ``cnt_status.busy`` "
            "is 0 after a snapshot).")
        self.cnt_status = CSRStatus(fields=[
            CSRField("busy", size=1, description="``1`` while the last snapshot's counts are "
                     "written to the counter RAM (one cycle per counter, plus 3, from the "
                     "snapshot strobe): read ``cnt_value`` when it is ``0``."),
            CSRField("refused", size=16, offset=16, description="Snapshots refused because "
                     "one was still being written (since reset, wraps); a refused snapshot "
                     "closes no window."),
        ], description="Counter read-out status.")
        self.bin_min = CSRStorage(32, description="Latency histogram: cycles at the bottom of "
                                  "bin 0.")
        self.bin_shift = CSRStorage(5, description="Latency histogram: each bin is "
                                    "``2**bin_shift`` cycles wide.")
        self.trig_nstages = CSRStorage(3, description="Trigger stages in the sequence (0: "
            "trigger on the first armed cycle; 1..4).")
        mode_doc = ", ".join(f"``{m.value}`` {m.name}" for m in Mode)
        op_doc = ", ".join(f"``{o.value}`` {o.name}" for o in Op)
        self._stage_csrs = []
        for s in range(4):
            csrs = {}
            for ab in ("a", "b"):
                csrs[f"mask_{ab}"] = WriteOnlyCSRStorage(tw, name=f"trig{s}_mask_{ab}",
                    description=f"Stage {s}, comparator {ab.upper()}: the sample bits compared "
                                "(above them the figure comparators' hits; write-only: reads "
                                "0).")
                csrs[f"value_{ab}"] = WriteOnlyCSRStorage(tw, name=f"trig{s}_value_{ab}",
                    description=f"Stage {s}, comparator {ab.upper()}: the value they are "
                                "compared with (write-only: reads 0).")
            csrs["config"] = CSRStorage(name=f"trig{s}_config", fields=[
                CSRField("mode_a", size=2, description=f"Comparator A mode: {mode_doc}."),
                CSRField("mode_b", size=2, description=f"Comparator B mode: {mode_doc}."),
                CSRField("op", size=2, description=f"Stage condition: {op_doc}."),
                CSRField("count", size=16, offset=8, description="The stage completes on the "
                         "``count``-th cycle its condition holds (0 acts as 1); read when the "
                         "stage is entered (at arm for stage 0): set it before arming."),
            ], description=f"Trigger stage {s}.")
            for k, v in csrs.items():
                setattr(self, f"trig{s}_{k}", v)
            self._stage_csrs.append(csrs)
        self.cap_pre = CSRStorage(aw + 1, description="Pre-trigger entries to keep "
                                  f"(at most {depth - 1}).")
        self.cap_post = CSRStorage(32, description="Cycles captured after the trigger cycle.")
        state_doc = ", ".join(f"``{s.value}`` {s.name}" for s in State)
        self.cap_status = CSRStatus(fields=[
            CSRField("state", size=2, description=f"Capture state: {state_doc}."),
            CSRField("triggered", size=1, description="The trigger fired."),
            CSRField("overflow", size=1, description="The storage filled before the "
                     "post-trigger window ended (the capture ends at ``cap_end_ts``)."),
            CSRField("stage", size=2, description="Trigger stage being evaluated."),
        ], description="Capture status.")
        self.cap_start = CSRStatus(aw, description="Index of the oldest entry.")
        self.cap_count = CSRStatus(aw + 1, description="Entries stored.")
        self.cap_trig_index = CSRStatus(aw, description="Index of the trigger entry.")
        self.cap_trig_ts = CSRStatus(48, description="Cycle of the trigger.")
        self.cap_end_ts = CSRStatus(48, description="First cycle the capture does not cover.")
        self.cap_last_ts = CSRStatus(48, description="Cycle of the newest entry (its low 32 "
                                     "bits are the entry's timestamp).")
        self.cap_now = CSRStatus(48, description="The analyzer's cycle counter (since reset).")
        self.cap_rd_addr = CSRStorage(aw, description="Entry to read through ``cap_rd_data``.")
        self.cap_rd_data = CSRStatus(core.capture_width + 32, description="Entry "
            "``cap_rd_addr``: the sample in the low ``sample_width`` bits, the tracked levels "
            "above it (16 bits each), the low 32 bits of its cycle above them.")
        bd = breakdown
        self.bd_info = CSRStatus(fields=[
            CSRField("nclasses", size=4, reset=len(bd.classes) if bd else 0,
                     description="Request classes of the latency breakdown (0: not built)."),
            CSRField("nstages", size=4, reset=NSTAGES if bd else 0,
                     description="Stages per class (the last is the total)."),
            CSRField("nslots", size=9, offset=8, reset=bd.nslots if bd else 0,
                     description="Read requests followed at once, from issue to hand-off."),
        ], description="Build-time parameters of the per-request DMA read latency breakdown; "
                       "its classes' names are in ``nicscope_layout.h``.")
        self.levels_info = CSRStatus(fields=[
            CSRField("nlevels", size=7, reset=len(self._levels),
                     description="Levels whose occupancy integral and maximum are counted (0: "
                                 "none); their names are in ``nicscope_layout.h``."),
            CSRField("nevents", size=4, offset=8, reset=len(self._events),
                     description="Device-side event latencies (0: none); their names are in "
                                 "``nicscope_layout.h``."),
            CSRField("nfigures", size=3, offset=12, reset=figures,
                     description="Figure comparators for triggers (0: none)."),
            CSRField("ntracks", size=2, offset=16, reset=tracks,
                     description="Levels the capture can store beside the sample (0: none)."),
        ], description="Build-time parameters of the occupancy integrals, event latencies, "
                       "figure triggers and capture tracks.")
        src_doc = "the index of a figure in ``nicscope_layout.h``'s ``FIG_SOURCES``"
        for i in range(figures):
            setattr(self, f"fig{i}_config", CSRStorage(name=f"fig{i}_config", fields=[
                CSRField("sel", size=7, description=f"The figure compared: {src_doc} (a "
                         "level, a latency breakdown stage of one request class, an event "
                         "latency)."),
                CSRField("below", size=1, offset=8, description="``0``: hit when the figure "
                         "is above the threshold; ``1``: below it."),
            ], description=f"Figure comparator {i}: its hit is trigger compare bit "
                           f"``sample_width + {i}``."))
            setattr(self, f"fig{i}_threshold", CSRStorage(32, name=f"fig{i}_threshold",
                    description=f"Figure comparator {i}: the threshold (cycles for a latency, "
                                "the level's units for a level)."))
            setattr(self, f"fig{i}_value", CSRStatus(32, name=f"fig{i}_value",
                    description=f"Figure comparator {i}: its figure on the trigger cycle (0 "
                                "after arm, until the trigger fires)."))
        if tracks:
            self.trk_sel = CSRStorage(name="trk_sel", fields=[
                CSRField(f"sel{i}", size=7, offset=8 * i, description=f"Capture track {i}: "
                         "``0`` none, ``l + 1`` level ``l`` (``nicscope_layout.h``'s "
                         "``LEVEL_NAMES``); set before arming.") for i in range(tracks)],
                description="The levels the capture stores beside the sample (a tracked "
                            "level's change writes an entry, as a change of the sample).")

        # # #

        os.makedirs(build_dir, exist_ok=True)
        path = os.path.join(build_dir, f"{module_name}.v")
        with open(path, "w") as f:
            f.write(verilog.convert(core, name=module_name, emit_src=False))
        platform.add_source(path)
        self.layout_header = core.header()

        # The core registers the strobes once, as it would the probes: the other tap stages
        # delay them here. Counts are busy from the snapshot strobe on, through that delay.
        ctrl = self.control.fields
        snap_line = delay_line(self, ctrl.snapshot, tap_stages - 1)
        snapshot = (snap_line or [ctrl.snapshot])[-1]
        arm, stop = (self._delayed(x, tap_stages - 1) for x in (ctrl.arm, ctrl.stop))
        core_busy = Signal()
        self.comb += self.cnt_status.fields.busy.eq(reduce(or_, [core_busy, ctrl.snapshot,
                                                                 *snap_line]))
        core_now = Signal(48)
        self.comb += self.now.eq(core_now + (tap_stages - 1))

        status = self.cap_status.fields
        ports = dict(
            i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"),
            i_snapshot=snapshot,
            i_cnt_sel=self.cnt_sel.storage, o_cnt_value=self.cnt_value.status,
            o_cnt_busy=core_busy,
            o_snap_refused=self.cnt_status.fields.refused,
            i_bin_min=self.bin_min.storage, i_bin_shift=self.bin_shift.storage,
            i_trig_nstages_used=self.trig_nstages.storage,
            o_trig_stage=status.stage,
            i_cap_arm=arm, i_cap_stop=stop,
            i_cap_pre=self.cap_pre.storage, i_cap_post=self.cap_post.storage,
            o_cap_state=status.state, o_cap_triggered=status.triggered,
            o_cap_overflow=status.overflow,
            o_cap_start=self.cap_start.status, o_cap_count=self.cap_count.status,
            o_cap_trig_index=self.cap_trig_index.status, o_cap_trig_ts=self.cap_trig_ts.status,
            o_cap_end_ts=self.cap_end_ts.status, o_cap_last_ts=self.cap_last_ts.status,
            o_cap_now=core_now,
            i_cap_rd_addr=self.cap_rd_addr.storage, o_cap_rd_data=self.cap_rd_data.status,
        )
        for s, csrs in enumerate(self._stage_csrs):
            cfg = csrs["config"].fields
            for ab in ("a", "b"):
                ports[f"i_trig_s{s}_mask_{ab}"] = csrs[f"mask_{ab}"].storage
                ports[f"i_trig_s{s}_value_{ab}"] = csrs[f"value_{ab}"].storage
                ports[f"i_trig_s{s}_mode_{ab}"] = getattr(cfg, f"mode_{ab}")
            ports[f"i_trig_s{s}_op"] = cfg.op
            ports[f"i_trig_s{s}_count"] = cfg.count
        for i in range(figures):
            cfg = getattr(self, f"fig{i}_config").fields
            ports[f"i_fig{i}_sel"] = cfg.sel
            ports[f"i_fig{i}_below"] = cfg.below
            ports[f"i_fig{i}_threshold"] = getattr(self, f"fig{i}_threshold").storage
            ports[f"o_fig{i}_value"] = getattr(self, f"fig{i}_value").status
        for i in range(tracks):
            ports[f"i_trk{i}_sel"] = getattr(self.trk_sel.fields, f"sel{i}")
        if stream:
            self.add_stream_csrs(ports, **stream)
        self._ports = ports
        self._module_name = module_name
        self.comb += [
            self.cap_now.status.eq(self.now),
            self.snapshot_pulse.eq(self.control.fields.snapshot),
        ]
        # Last, so the registers before it keep their addresses.
        wbd = wr_breakdown
        self.wbd_info = CSRStatus(fields=[
            CSRField("nclasses", size=4, reset=len(wbd.classes) if wbd else 0,
                     description="Write classes of the write latency breakdown (0: not "
                                 "built)."),
            CSRField("nstages", size=4, reset=WR_NSTAGES if wbd else 0,
                     description="Stages per class (the last is the total)."),
            CSRField("nslots", size=9, offset=8, reset=wbd.nslots if wbd else 0,
                     description="Writes followed at once, from the packetizer to the PHY."),
        ], description="Build-time parameters of the per-request DMA write latency breakdown; "
                       "its classes' names are in ``nicscope_layout.h``.")

    def add_stream_csrs(self, ports, adapter, data_width, mps):
        """The deep capture's CSRs and its DMA write adapter (`adapter`: wr_* as
        litex_soc/nic/dma_port_adapter.py's, on a LitePCIe port or the SoC bus)."""
        self.stream_ctrl = CSRStorage(fields=[
            CSRField("enable", size=1, description="``1``: stream an entry for every change "
                     "of the sample into the ring (the rising edge restarts ``stream_prod``, "
                     "``stream_entries`` and ``stream_lost`` at 0: set it only while "
                     "``stream_status.busy`` is 0). ``0``: stop; the entries stored are still "
                     "written (``busy`` until then)."),
        ], description="Deep capture into host memory.")
        self.stream_base = CSRStorage(64, description="Ring base address in host memory, 4 KiB "
                                      "aligned (else ``enable`` is refused: nothing streamed, "
                                      "``stream_status.refused``, ``stream_refused`` + 1); "
                                      "entry ``i`` at ``base + (i mod 2**size_log2) * entry "
                                      "bytes``.")
        self.stream_size_log2 = CSRStorage(5, description="Ring size: ``2**size_log2`` "
                                           "entries (a ring holds one less).")
        self.stream_cons = CSRStorage(32, description="The host's consumer index: entries "
                                      "taken from the ring since ``enable`` rose.")
        self.stream_prod = CSRStatus(32, description="Entries written to the ring since "
                                     "``enable`` rose (their posted writes precede a read of "
                                     "this register's completion).")
        self.stream_entries = CSRStatus(32, description="Entries due since ``enable`` rose: "
                                        "stored and lost.")
        self.stream_lost = CSRStatus(32, description="Entries lost: the FIFO was full (the "
                                     "ring had no room). The next entry stored has the gap "
                                     "flag.")
        self.stream_status = CSRStatus(fields=[
            CSRField("level", size=10, description="Entries in the FIFO."),
            CSRField("busy", size=1, offset=16, description="Entries still to write, or a "
                     "write in progress."),
            CSRField("refused", size=1, offset=17, description="This stream was refused: "
                     "``stream_base`` was not 4 KiB aligned when ``enable`` rose (nothing is "
                     "streamed until ``enable`` rises again with an aligned base)."),
        ], description="Deep capture status.")
        self.stream_refused = CSRStatus(32, description="Streams refused (``enable`` rose with "
                                        "``stream_base`` not 4 KiB aligned); wraps.")
        self.stream_dma = adp = adapter
        payload = Signal(64 + 13 + data_width + 2)
        ports.update(
            i_st_enable=self.stream_ctrl.fields.enable, i_st_base=self.stream_base.storage,
            i_st_size_log2=self.stream_size_log2.storage, i_st_cons=self.stream_cons.storage,
            i_st_mps=mps[:13],
            o_st_prod=self.stream_prod.status, o_st_entries=self.stream_entries.status,
            o_st_lost=self.stream_lost.status, o_st_level=self.stream_status.fields.level,
            o_st_busy=self.stream_status.fields.busy,
            o_st_refused=self.stream_status.fields.refused,
            o_st_refusals=self.stream_refused.status,
            o_st_wr__valid=adp.wr_valid, i_st_wr__ready=adp.wr_ready, o_st_wr__payload=payload)
        self.comb += [adp.wr_addr.eq(payload[0:64]), adp.wr_len.eq(payload[64:77]),
                      adp.wr_data.eq(payload[77:77 + data_width]),
                      adp.wr_first.eq(payload[77 + data_width]),
                      adp.wr_last.eq(payload[78 + data_width])]

    def probe(self, name, valid, ready, first, last, nbytes=0, **fields):
        p = self._probes.get(name)
        if p is None:
            raise ValueError(f"BusAnalyzerCSR: no probe {name!r}; built: {list(self._probes)}")
        if name in self._connected:
            raise ValueError(f"BusAnalyzerCSR: probe {name!r} connected twice")
        want = {f for f, _ in p.fields}
        if set(fields) != want:
            raise ValueError(f"BusAnalyzerCSR: probe {name!r} needs fields {sorted(want)}, "
                             f"got {sorted(fields)}")
        self._connected.add(name)
        for h, sig in zip(HANDSHAKE, (valid, ready, first, last)):
            self._probe_in[f"i_{name}__{h}"] = sig
        self._probe_in[f"i_{name}__nbytes"] = nbytes
        for f, sig in fields.items():
            self._probe_in[f"i_{name}__{f}"] = sig
        for probe, _g, sig_name, off, width in self.core.signals():
            if probe == name:
                src = fields[sig_name] if sig_name in fields else \
                    dict(zip(HANDSHAKE, (valid, ready, first, last)))[sig_name]
                self.comb += self.sample[off:off + width].eq(src)

    def breakdown_input(self, name, **fields):
        """Connect the breakdown's input `name` (bd_raised, bd_granted: a list of dicts, one
        per class; the others a dict), each field a Migen expression, packed as the core's
        layout has it; fields left out are 0."""
        lay = {**(self.breakdown.ports() if self.breakdown else {}),
               **(self.wr_breakdown.ports() if self.wr_breakdown else {})}.get(name)
        if lay is None:
            raise ValueError(f"BusAnalyzerCSR: no breakdown input {name!r}")
        if name in self._bd_connected:
            raise ValueError(f"BusAnalyzerCSR: breakdown input {name!r} connected twice")
        self._bd_connected.add(name)

        def pack(layout, values):
            unknown = set(values) - {n for n, _ in layout}
            if unknown:
                raise ValueError(f"BusAnalyzerCSR: {name} has no fields {sorted(unknown)}")
            parts = []
            for n, f in sorted(layout, key=lambda nf: nf[1].offset):
                w = f.width
                v = values.get(n, 0)
                parts.append(Constant(v, w) if isinstance(v, int) else v[:w])
            return Cat(*parts)

        if isinstance(lay, data.ArrayLayout):
            elems = fields["classes"]
            if len(elems) != lay.length:
                raise ValueError(f"BusAnalyzerCSR: {name} needs {lay.length} classes")
            expr = Cat(*[pack(lay.elem_shape, e) for e in elems])
        else:
            expr = pack(lay, fields)
        # Delayed as the probes are, so the breakdown's inputs keep their relative timing and
        # reach the analyzer through registers.
        self._probe_in[f"i_{name}"] = self._delayed(expr, self.tap_stages)

    def level(self, name, expr):
        """Connect level `name` to a Migen expression (through the taps, as the probes)."""
        if name not in self._levels:
            raise ValueError(f"BusAnalyzerCSR: no level {name!r}; built: {list(self._levels)}")
        if name in self._levels_connected:
            raise ValueError(f"BusAnalyzerCSR: level {name!r} connected twice")
        self._levels_connected.add(name)
        self._probe_in[f"i_level_{name}"] = expr[:self._levels[name]]

    def event(self, name, start, end):
        """Connect event latency `name`'s start and end strobes (through the taps)."""
        if name not in self._events:
            raise ValueError(f"BusAnalyzerCSR: no event {name!r}; built: {sorted(self._events)}")
        if name in self._events_connected:
            raise ValueError(f"BusAnalyzerCSR: event {name!r} connected twice")
        self._events_connected.add(name)
        self._probe_in[f"i_ev_{name}_start"] = start
        self._probe_in[f"i_ev_{name}_end"] = end

    def _delayed(self, sig, n):
        return (delay_line(self, sig, n) or [sig])[-1]

    def at_finalize(self, fn):
        """Call fn() first thing in do_finalize: for probes on signals the design creates when
        it is finalized (LitePCIe's crossbar makes its TLP controller then)."""
        self._deferred.append(fn)

    def do_finalize(self):
        for fn in self._deferred:
            fn()
        missing = set(self._probes) - self._connected
        if self.breakdown:
            missing |= set(self.breakdown.ports()) - self._bd_connected
        if self.wr_breakdown:
            missing |= set(self.wr_breakdown.ports()) - self._bd_connected
        missing |= set(self._levels) - self._levels_connected
        missing |= self._events - self._events_connected
        if missing:
            raise ValueError(f"BusAnalyzerCSR: probes not connected: {sorted(missing)}")
        # Made here, after the statements it looks at: a submodule made before would be
        # finalized before this do_finalize.
        taps = ProbeTaps(self.tap_stages)
        for design in self._watched:
            taps.watch(design, skip=(self,))
        self._ports.update({port: taps.registered(expr) for port, expr in self._probe_in.items()})
        self.submodules.taps = taps
        self.specials += Instance(self._module_name, **self._ports)

    def watch(self, design):
        """The design the probes are in (a Migen module): taps then sit at its registers
        (ProbeTaps.watch)."""
        self._watched = [design]
