# SPDX-License-Identifier: BSD-2-Clause
#
# stage_stats.py: per class and stage, the statistics of the latency breakdowns.
#
# What it is: the counting stage the read and write breakdowns share (LatencyBreakdown,
# WriteBreakdown): from a request's stage cycles, registered with its class and a valid flag,
# a cycle later the request to count (valid, class, per stage its cycles and log2 bin: for the
# bus analyzer's CounterBank, one update per lane), and the window's min and max per class and
# stage in StageStats (distributed RAM, one lane per stage shared by the classes); and, for a
# component's unit tests, the per-class increments and their register form.
#
# Interfaces: stage_ports() gives the increments' ports; stage_counts(m, comp, valid, cls,
# diffs, ...) drives comp.inc_valid, comp.inc_cls, comp.inc_diff[s], comp.inc_bin[s] (and with
# counters, comp.inc_count[c], comp.inc_sum[c][s], comp.inc_bins[c][s] one-hot) and
# comp.rd_min[s], comp.rd_max[s] (the closed window's min and max of class comp.rd_cls);
# stage_counters() gives the name -> increment and name -> count dicts for register_counters().
#
# Parameters: nclasses, nbins (log2 bins: bin i for bit_length(cycles) == i, the last for all
# longer), ts_width (the widest stage), names (the stages, for signal names).

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out


class StageStats(wiring.Component):
    """Min and max per class and stage over snapshot windows, in distributed RAM.

    Inputs per cycle: `valid`, the request's class `cls` and its stages' cycles `diffs`. At
    most one request (so one class) per cycle: each stage is one lane, a RAM of min and max
    per class, updated by a read-modify-write a cycle after the request's cycle (the read is
    asynchronous and the write lands before the next cycle's read, so back-to-back updates of
    one class need no forwarding).

    Windows, as the CounterBank's lanes: two banks (epochs) per lane; a request goes to the
    bank live on its cycle (`epoch ^ snapshot`: a request on a snapshot cycle is the new
    window's), the other bank holds the closed window until the next snapshot. A flag per bank
    and class says whether the entry holds its bank's window (cleared for the bank that opens
    on a snapshot, and at reset): an entry without it reads as an empty window. So every
    class and stage closes on the snapshot cycle, and no clearing pass is needed.

    Read-out (combinational): `rd_min[s]` and `rd_max[s]`, the closed window's min and max of
    class `rd_cls` from the cycle after the snapshot on; 2**ts_width-1 and 0 for a window
    without requests of that class (and before the first snapshot).
    """

    def __init__(self, nclasses, nstages, ts_width, names=None):
        self.nclasses, self.nstages, self.ts_width = nclasses, nstages, ts_width
        self.names = names or [str(s) for s in range(nstages)]
        self.cls_width = max(1, (nclasses - 1).bit_length())
        stages = data.ArrayLayout(ts_width, nstages)
        super().__init__({
            "valid":    In(1),
            "cls":      In(self.cls_width),
            "diffs":    In(stages),
            "snapshot": In(1),
            "rd_cls":   In(self.cls_width),
            "rd_min":   Out(stages),
            "rd_max":   Out(stages),
        })

    def elaborate(self, platform):
        m = Module()
        tw, nc, cw = self.ts_width, self.nclasses, self.cls_width
        empty_min = 2**tw - 1
        epoch, epoch_now = Signal(), Signal()
        m.d.comb += epoch_now.eq(epoch ^ self.snapshot)
        m.d.sync += epoch.eq(epoch_now)
        # The flags: bank b's entry c holds bank b's window.
        held = [Signal(nc, name=f"held_bank{b}") for b in range(2)]
        for b in range(2):
            opens = self.snapshot & (epoch_now == b)
            mine = Signal(nc, name=f"set_bank{b}")
            m.d.comb += mine.eq(Mux(self.valid & (epoch_now == b), Const(1, nc) << self.cls, 0))
            m.d.sync += held[b].eq(Mux(opens, 0, held[b]) | mine)
        # The update, registered with its epoch and whether its entry held its window.
        u_valid, u_tag, u_held = Signal(), Signal(), Signal()
        u_cls = Signal(cw)
        u_d = Signal(data.ArrayLayout(tw, self.nstages))
        live_held = Mux(epoch_now, held[1], held[0]).bit_select(self.cls, 1)
        m.d.sync += [u_valid.eq(self.valid), u_tag.eq(epoch_now), u_cls.eq(self.cls),
                     u_d.eq(self.diffs), u_held.eq(live_held & ~self.snapshot)]
        closed_held = Mux(epoch, held[0], held[1]).bit_select(self.rd_cls, 1)
        for s, n in enumerate(self.names):
            # An entry: Cat(min, max); address Cat(class, bank).
            lane = Memory(shape=2 * tw, depth=2**(cw + 1), init=[])
            m.submodules[f"lane_{n}"] = lane
            rmw, rd, wr = lane.read_port(domain="comb"), lane.read_port(domain="comb"), \
                lane.write_port()
            d = u_d[s]
            old_min, old_max = rmw.data[:tw], rmw.data[tw:]
            new_min = Mux(u_held & (old_min < d), old_min, d)
            new_max = Mux(u_held & (old_max > d), old_max, d)
            m.d.comb += [
                rmw.addr.eq(Cat(u_cls, u_tag)),
                wr.addr.eq(Cat(u_cls, u_tag)), wr.data.eq(Cat(new_min, new_max)),
                wr.en.eq(u_valid),
                rd.addr.eq(Cat(self.rd_cls, ~epoch)),
                self.rd_min[s].eq(Mux(closed_held, rd.data[:tw], empty_min)),
                self.rd_max[s].eq(Mux(closed_held, rd.data[tw:], 0)),
            ]
        return m


def stage_ports(nclasses, nstages, nbins, ts_width, cls_width, counters):
    """The increments' ports of a breakdown: the request counted this cycle (`inc_valid`, its
    class `inc_cls`, per stage its cycles `inc_diff` and bin `inc_bin`), and with counters the
    per-class increments (`inc_count`, `inc_sum`, `inc_bins` one-hot) for register_counters()."""
    stages = data.ArrayLayout(ts_width, nstages)
    return {
        "inc_valid": Out(1),
        "inc_cls":   Out(cls_width),
        "inc_diff":  Out(stages),
        "inc_bin":   Out(data.ArrayLayout(max(1, (nbins - 1).bit_length()), nstages)),
        **({"inc_sum":   Out(data.ArrayLayout(stages, nclasses)),
            "inc_bins":  Out(data.ArrayLayout(data.ArrayLayout(nbins, nstages), nclasses)),
            "inc_count": Out(nclasses)} if counters else {}),
    }


def bin_index(m, d, nbins, name):
    """min(bit_length(d), nbins - 1), as a signal."""
    idx = Signal(max(1, (nbins - 1).bit_length()), name=name)
    m.d.comb += idx.eq(0)
    for i in range(1, nbins - 1):
        with m.If(d[i - 1]):                # the highest bit set wins (the last assignment)
            m.d.comb += idx.eq(i)
    with m.If(d[nbins - 2:] != 0):
        m.d.comb += idx.eq(nbins - 1)
    return idx


def stage_counts(m, comp, valid, cls, diffs, snapshot, nclasses, nbins, ts_width, names,
                 counters=False):
    """Count a request whose stage cycles `diffs` (registered) are valid with class `cls`: its
    bins and the registered differences a cycle later in the increments and StageStats (a class
    of nclasses or more is not counted)."""
    tw, nb = ts_width, nbins
    db = [Signal(tw, name=f"db_{n}") for n in names]
    binb = [Signal(max(1, (nb - 1).bit_length()), name=f"bin_{n}") for n in names]
    vb, clb = Signal(), Signal.like(cls)
    m.d.sync += [vb.eq(valid), clb.eq(cls)]
    for s, n in enumerate(names):
        m.d.sync += [db[s].eq(diffs[s]), binb[s].eq(bin_index(m, diffs[s], nb, f"binidx_{n}"))]
    counted = Signal()
    m.d.comb += [counted.eq(vb & (clb < nclasses)), comp.inc_valid.eq(counted),
                 comp.inc_cls.eq(clb)]
    m.d.comb += [comp.inc_diff[s].eq(db[s]) for s in range(len(names))]
    m.d.comb += [comp.inc_bin[s].eq(binb[s]) for s in range(len(names))]
    if counters:
        for c in range(nclasses):
            mine = vb & (clb == c)
            m.d.comb += comp.inc_count[c].eq(mine)
            for s in range(len(names)):
                m.d.comb += [comp.inc_sum[c][s].eq(Mux(mine, db[s], 0)),
                             comp.inc_bins[c][s].eq(Mux(mine, Const(1, nb) << binb[s], 0))]
    m.submodules.stats = stats = StageStats(nclasses, len(names), tw, names)
    m.d.comb += [stats.valid.eq(counted), stats.cls.eq(clb),
                 stats.snapshot.eq(snapshot), stats.rd_cls.eq(comp.rd_cls)]
    m.d.comb += [stats.diffs[s].eq(db[s]) for s in range(len(names))]
    m.d.comb += [comp.rd_min.eq(stats.rd_min), comp.rd_max.eq(stats.rd_max)]


def stage_counters(comp, nclasses, nstages, nbins, class_counts):
    """(incs, outs) of the per-class counts and per-stage sums and bins, for
    register_counters()."""
    incs, outs = {}, {}
    for c in range(nclasses):
        for n in class_counts:
            incs[f"{n}{c}"] = getattr(comp, f"inc_{n}")[c]
            outs[f"{n}{c}"] = getattr(comp, n)[c]
        for s in range(nstages):
            incs[f"sum{c}_{s}"] = comp.inc_sum[c][s]
            outs[f"sum{c}_{s}"] = comp.sum[c][s]
            for i in range(nbins):
                incs[f"bin{c}_{s}_{i}"] = comp.inc_bins[c][s][i]
                outs[f"bin{c}_{s}_{i}"] = comp.bins[c][s][i]
    return incs, outs
