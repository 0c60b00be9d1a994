# SPDX-License-Identifier: BSD-2-Clause
#
# event_latency.py: the latency from one kind of event to another, as count, sum, min, max and
# a log2 histogram, with snapshot-and-clear.
#
# What it is: the analyzer's device-side latencies (a doorbell write to the first descriptor
# read it causes, a host MMIO read to its completion, an interrupt decision to its MSI on the
# PHY): `start` events are matched with later `end` events in order.
#
# Interfaces:
#   start, end           in: one event each per cycle at most.
#   snapshot             in: pulse: closes the window.
#   inc_<count>          out (comb): this cycle's increments of COUNTS (bins: a one-hot vector).
#   inc_bin              out (comb): the bin of the latency counted (with inc_count) as an index.
#   min, max             out: of the last closed window (2**ts_width-1 and 0 without events).
#
# Parameters: depth (starts waiting for their end, a power of two), merge (True: a start while
# one waits is merged into it, counted in `merged`: the latency from the first of them), nbins
# (log2 bins, 2..16), ts_width.

from amaranth import Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .stage_stats import bin_index

COUNTS = ("count", "sum", "merged", "lost", "unmatched")
STATS = COUNTS + ("min", "max")


class EventLatency(wiring.Component):
    """Latency from `start` to `end` events, matched in order.

    A start is queued with its cycle (up to `depth` at once; a start finding the queue full is
    counted in `lost`, and with merge=True a start while one waits is counted in `merged` and
    not queued). An end takes the oldest queued start: its latency is end cycle - start cycle
    (a start and an end on one cycle: the end takes an older start, or with none waiting the
    start and the end are 0 cycles apart). An end with nothing waiting is counted in
    `unmatched`. Each latency is counted two cycles after its end (`count`, `sum`, the bin of
    its bit length, the last bin taking all longer, min, max); an event on a snapshot cycle goes
    to the new window.
    """

    def __init__(self, depth=4, merge=False, nbins=16, ts_width=32):
        if depth < 1 or depth & (depth - 1) or depth > 64:
            raise ValueError(f"EventLatency: depth={depth}, a power of two up to 64")
        if not 2 <= nbins <= 16:
            raise ValueError(f"EventLatency: nbins={nbins}, 2..16")
        self.depth, self.merge, self.nbins, self.ts_width = depth, merge, nbins, ts_width
        self.max_inc = {"count": 1, "sum": 2**ts_width - 1, "merged": 1, "lost": 1,
                        "unmatched": 1, "bin": 1}
        super().__init__({
            "start": In(1),
            "end": In(1),
            "snapshot": In(1),
            **{f"inc_{n}": Out(ts_width if n == "sum" else 1) for n in COUNTS},
            "inc_bins": Out(nbins),
            "inc_bin": Out(range(nbins)),
            "min": Out(ts_width, init=2**ts_width - 1),
            "max": Out(ts_width),
        })

    def elaborate(self, platform):
        m = Module()
        tw, d = self.ts_width, self.depth
        now = Signal(tw)
        m.d.sync += now.eq(now + 1)

        # The queue of start cycles: distributed RAM (one write port, an asynchronous read of
        # the oldest), a register at depth 1.
        # Pointers wrap at depth (a power of two); depth 1 has one slot and no pointer.
        rd, wr = (Signal(max(1, (d - 1).bit_length()), name=n) for n in ("rd", "wr"))
        if d == 1:
            rd, wr = Const(0, 1), Const(0, 1)
        level = Signal(range(d + 1))
        empty = level == 0
        take = self.end & (~empty | self.start)          # an end that finds a start
        direct = self.end & empty & self.start            # ... the one of its own cycle
        pop = take & ~direct
        merged = self.start & ~empty & self.merge & ~pop
        push = self.start & ~direct & ~merged & ((level < d) | pop)
        lost = self.start & ~direct & ~merged & ~push
        oldest = Signal(tw)
        if d > 1:
            m.submodules.starts = starts = Memory(shape=tw, depth=d, init=[])
            st_wr, st_rd = starts.write_port(), starts.read_port(domain="comb")
            m.d.comb += [st_wr.addr.eq(wr), st_wr.data.eq(now), st_wr.en.eq(push),
                         st_rd.addr.eq(rd), oldest.eq(st_rd.data)]
            with m.If(push):
                m.d.sync += wr.eq(wr + 1)
        else:
            with m.If(push):
                m.d.sync += oldest.eq(now)
        if d > 1:
            with m.If(pop):
                m.d.sync += rd.eq(rd + 1)
        m.d.sync += level.eq(level + push - pop)

        # Stage A: the latency; stage B: its bin, min, max and the increments.
        va, la = Signal(), Signal(tw)
        m.d.sync += [va.eq(take), la.eq(Mux(direct, 0, now - oldest))]
        vb, lb, bins = Signal(), Signal(tw), Signal(range(self.nbins))
        m.d.sync += [vb.eq(va), lb.eq(la), bins.eq(bin_index(m, la, self.nbins, "bin_a"))]
        ev = {"merged": Signal(), "lost": Signal(), "unmatched": Signal()}
        m.d.comb += [ev["merged"].eq(merged), ev["lost"].eq(lost),
                     ev["unmatched"].eq(self.end & ~take)]
        # Counted two cycles late, as the latencies.
        a = {k: Signal(name=f"{k}_a") for k in ev}
        ev2 = {k: Signal(name=f"{k}_b") for k in ev}
        m.d.sync += [a[k].eq(ev[k]) for k in ev] + [ev2[k].eq(a[k]) for k in ev]
        m.d.comb += [
            self.inc_count.eq(vb), self.inc_sum.eq(Mux(vb, lb, 0)),
            self.inc_bins.eq(Mux(vb, Const(1, self.nbins) << bins, 0)), self.inc_bin.eq(bins),
            *[getattr(self, f"inc_{k}").eq(ev2[k]) for k in ev],
        ]
        lmin, lmax = Signal(tw, init=2**tw - 1), Signal(tw)
        with m.If(self.snapshot):
            m.d.sync += [self.min.eq(lmin), self.max.eq(lmax),
                         lmin.eq(Mux(vb, lb, 2**tw - 1)), lmax.eq(Mux(vb, lb, 0))]
        with m.Else():
            m.d.sync += [lmin.eq(Mux(vb & (lb < lmin), lb, lmin)),
                         lmax.eq(Mux(vb & (lb > lmax), lb, lmax))]
        return m
