# SPDX-License-Identifier: BSD-2-Clause
#
# latency_histogram.py: DMA read latency (request to last completion) as a histogram, with
# snapshot-and-clear. Requests and completions are matched in order; see the class docstring.
#
# Interfaces:
#   req, cpl             in: pulses: a read request leaves; the last completion of one arrives.
#   bin_min              in, 32 bits: latency (cycles) at the bottom of bin 0 (taken when a
#                        request is queued: change it between measurements, not during one).
#   bin_shift            in, 5 bits: each bin is 2**bin_shift cycles wide.
#   snapshot             in: pulse.
#   inc_bins, inc_<stat> out (comb): this cycle's increments (bins one-hot; below, above, count,
#                        sum, lost, unmatched).
#   inc_hist_valid, inc_hist   out (comb): the same bins, below and above as one update: entry
#                        inc_hist (bin i, nbins for below, nbins + 1 for above) when valid.
#   bins, below, above, count, sum, lost, unmatched   out: the last closed window (counters=True).
#   min, max             out: of the last closed window (2**32-1 and 0 when count is 0).
#
# Parameters: nbins (a power of two, 2..256), depth (outstanding requests tracked: at least the
# DMA engine's maximum), width (of the bin counters and the other counts; sum is 48 bits),
# counters (True: the counts in registers here; False: only the increments, for the bus
# analyzer's CounterBank, `max_inc` giving their largest values).

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, fifo, wiring
from amaranth.lib.wiring import In, Out

from .counter_bank import register_counters

STATS = ("below", "above", "count", "sum", "min", "max", "lost", "unmatched")
# The statistics that are sums of increments (min and max are not).
SUMS = tuple(s for s in STATS if s not in ("min", "max"))


class LatencyHistogram(wiring.Component):
    """DMA read latency histogram.

    `req` pulses when a read request leaves the DMA engine, `cpl` when the last completion of a
    request reaches it. LitePCIe's DMA ports are in order (its TLP controller reorders
    completions by tag), so the timestamps of outstanding requests sit in a FIFO and each `cpl`
    matches the oldest. The latency (the `cpl` cycle minus the matched `req` cycle, so at least
    1) is binned as (latency - bin_min) >> bin_shift into `nbins` bins, with counts below and
    above the range, and the window's count, sum, min and max of the latency.

    A request that finds the FIFO full (a `cpl` on the same cycle does not make room for it) is
    counted in `lost` and not measured. Its completion is still due, after those of the requests
    in the FIFO, so a request that comes while lost requests are outstanding is lost too
    (queued, it would be matched with a lost request's completion); a completion that finds the
    FIFO empty while lost requests are outstanding is the oldest one's (not measured, not
    unmatched). So every measured latency is exact. Completions with no request outstanding,
    queued or lost, are counted in `unmatched`.

    Pipeline: the latency is taken on the `cpl` cycle, its bin is found one cycle later and it
    is counted two cycles later (the subtraction, the range check and the bin counters' adders
    are in three different cycles); an event counted on a snapshot cycle goes to the new window.
    `lost` and `unmatched` events follow the same pipeline. min and max are registers in both
    forms (counters True or False), and read 2**32-1 and 0 before the first snapshot too.
    """

    def __init__(self, nbins=16, depth=32, width=32, counters=True):
        if nbins < 2 or nbins > 256 or nbins & (nbins - 1):
            raise ValueError(f"LatencyHistogram: nbins={nbins} must be a power of two, 2..256")
        if depth < 1:
            raise ValueError(f"LatencyHistogram: depth={depth} must be at least 1")
        self.nbins, self.depth, self.width, self.counters = nbins, depth, width, counters
        self.max_inc = {name: 2**32 - 1 if name == "sum" else 1 for name in SUMS}
        counts = {
            "bins": Out(data.ArrayLayout(width, nbins)),
            **{name: Out(48 if name == "sum" else width) for name in SUMS},
        } if counters else {}
        super().__init__({
            "req":       In(1),
            "cpl":       In(1),
            "bin_min":   In(32),
            "bin_shift": In(5),
            "snapshot":  In(1),
            "inc_bins":  Out(nbins),
            "inc_hist_valid": Out(1),
            "inc_hist":  Out(range(nbins + 2)),
            **{f"inc_{name}": Out(32 if name == "sum" else 1) for name in SUMS},
            "min":       Out(32, init=0xFFFFFFFF),
            "max":       Out(32),
            **counts,
        })

    def elaborate(self, platform):
        m = Module()
        # Each queued request keeps its cycle and its cycle + bin_min, so the completion's cycle
        # gives both the latency and its offset into the bins with one subtraction each.
        m.submodules.fifo = q = fifo.SyncFIFO(width=64, depth=self.depth)
        now = Signal(32)
        m.d.sync += now.eq(now + 1)

        # Stage 1: match the completion with the oldest request. `skip` counts the lost requests
        # whose completions are still due: they come after every queued request's.
        skip = Signal(32)
        req_lost = self.req & (~q.w_rdy | (skip != 0))
        cpl_skip = self.cpl & ~q.r_rdy & (skip != 0)
        m.d.comb += [
            q.w_data.eq(Cat(now, now + self.bin_min)),
            q.w_en.eq(self.req & ~req_lost),
            q.r_en.eq(self.cpl),
        ]
        with m.If(req_lost & ~cpl_skip):
            m.d.sync += skip.eq(skip + 1)
        with m.Elif(cpl_skip & ~req_lost):
            m.d.sync += skip.eq(skip - 1)
        lat = Signal(32)
        offset = Signal(32)       # lat - bin_min (modulo 2**32)
        lat_valid = Signal()
        ev_lost = Signal()
        ev_unmatched = Signal()
        m.d.sync += [
            lat.eq(now - q.r_data[:32]),
            offset.eq(now - q.r_data[32:]),
            lat_valid.eq(self.cpl & q.r_rdy),
            ev_lost.eq(req_lost),
            ev_unmatched.eq(self.cpl & ~q.r_rdy & (skip == 0)),
        ]

        # Stage 2: find its bin.
        # Three independent parts, none waiting on another: below the range, beyond it (the
        # offset reaches nbins << bin_shift), the bin (the offset's bits from bin_shift up).
        below_min = lat < self.bin_min
        nbits = (self.nbins - 1).bit_length()
        idx_full = Signal(32)
        m.d.comb += idx_full.eq(offset >> self.bin_shift)
        beyond = Signal()
        m.d.comb += beyond.eq(offset >= (Const(self.nbins, nbits + 1) << self.bin_shift))
        lat2 = Signal(32)
        lat2_valid = Signal()
        below2 = Signal()
        in_range2 = Signal()
        idx = Signal(nbits)
        ev2_lost = Signal()
        ev2_unmatched = Signal()
        m.d.sync += [
            lat2.eq(lat), lat2_valid.eq(lat_valid),
            below2.eq(below_min), in_range2.eq(~below_min & ~beyond),
            idx.eq(idx_full[:nbits]),
            ev2_lost.eq(ev_lost), ev2_unmatched.eq(ev_unmatched),
        ]

        # Stage 3: count it.
        lat, lat_valid, below_min, in_range = lat2, lat2_valid, below2, in_range2
        ev_lost, ev_unmatched = ev2_lost, ev2_unmatched
        inc = {
            "below":     lat_valid & below_min,
            "above":     lat_valid & ~below_min & ~in_range,
            "count":     lat_valid,
            "sum":       lat_valid * lat,
            "lost":      ev_lost,
            "unmatched": ev_unmatched,
        }
        m.d.comb += [getattr(self, f"inc_{name}").eq(value) for name, value in inc.items()]

        live_min = Signal(32, init=0xFFFFFFFF)
        live_max = Signal(32)
        new_min = Signal(32)
        new_max = Signal(32)
        m.d.comb += [
            new_min.eq(live_min),
            new_max.eq(live_max),
        ]
        with m.If(lat_valid & (lat < live_min)):
            m.d.comb += new_min.eq(lat)
        with m.If(lat_valid & (lat > live_max)):
            m.d.comb += new_max.eq(lat)
        with m.If(self.snapshot):
            m.d.sync += [self.min.eq(live_min), self.max.eq(live_max)]
            m.d.sync += [live_min.eq(0xFFFFFFFF), live_max.eq(0)]
            with m.If(lat_valid):
                m.d.sync += [live_min.eq(lat), live_max.eq(lat)]
        with m.Else():
            m.d.sync += [live_min.eq(new_min), live_max.eq(new_max)]

        for i in range(self.nbins):
            m.d.comb += self.inc_bins[i].eq(lat_valid & in_range & (idx == i))
        m.d.comb += [self.inc_hist_valid.eq(lat_valid),
                     self.inc_hist.eq(Mux(in_range, idx, Mux(below_min, self.nbins,
                                                              self.nbins + 1)))]
        if self.counters:
            incs = {name: getattr(self, f"inc_{name}") for name in SUMS}
            outs = {name: getattr(self, name) for name in SUMS}
            for i in range(self.nbins):
                incs[f"bin{i}"], outs[f"bin{i}"] = self.inc_bins[i], self.bins[i]
            register_counters(m, self.snapshot, incs, outs)
        return m
