# SPDX-License-Identifier: BSD-2-Clause
#
# stage_stats.py: per class and stage, the statistics of the latency breakdowns.
#
# What it is: the counting stage the read and write breakdowns share (LatencyBreakdown,
# WriteBreakdown): from a request's stage cycles, registered with its class and a valid flag,
# a cycle later per class the count, per stage the sum and the log2 bin increments (for the
# bus analyzer's CounterBank) and the window's min and max (registers closed by `snapshot`);
# and the register form of those counts for a component's unit tests.
#
# Interfaces: stage_counts(m, comp, valid, cls, diffs, ...) drives comp.inc_count[c],
# comp.inc_sum[c][s], comp.inc_bins[c][s], comp.min[c][s], comp.max[c][s]; stage_counters()
# gives the name -> increment and name -> count dicts for register_counters().
#
# Parameters: nclasses, nbins (log2 bins: bin i for bit_length(cycles) == i, the last for all
# longer), ts_width (the widest stage), names (the stages, for signal names).

from amaranth import Mux, Signal


def stage_counts(m, comp, valid, cls, diffs, snapshot, nclasses, nbins, ts_width, names):
    """Count a request whose stage cycles `diffs` (registered) are valid with class `cls`: its
    bins and the registered differences a cycle later in the increments; min/max per window."""
    tw, nb = ts_width, nbins
    db = [Signal(tw, name=f"db_{n}") for n in names]
    binb = [Signal(nb, name=f"bin_{n}") for n in names]
    vb, clb = Signal(), Signal.like(cls)
    m.d.sync += [vb.eq(valid), clb.eq(cls)]
    for s, n in enumerate(names):
        onehot = Signal(nb, name=f"onehot_{n}")
        # bit_length(d) == i for i < nb - 1; the last bin takes the rest.
        m.d.comb += onehot[0].eq(diffs[s] == 0)
        for i in range(1, nb - 1):
            m.d.comb += onehot[i].eq((diffs[s] >> (i - 1)) == 1)
        m.d.comb += onehot[nb - 1].eq((diffs[s] >> (nb - 2)) != 0)
        m.d.sync += [db[s].eq(diffs[s]), binb[s].eq(onehot)]
    for c in range(nclasses):
        mine = vb & (clb == c)
        m.d.comb += comp.inc_count[c].eq(mine)
        for s, n in enumerate(names):
            m.d.comb += [comp.inc_sum[c][s].eq(Mux(mine, db[s], 0)),
                         comp.inc_bins[c][s].eq(Mux(mine, binb[s], 0))]
            lmin = Signal(tw, init=2**tw - 1, name=f"live_min_c{c}_{n}")
            lmax = Signal(tw, name=f"live_max_c{c}_{n}")
            nmin = Mux(mine & (db[s] < lmin), db[s], lmin)
            nmax = Mux(mine & (db[s] > lmax), db[s], lmax)
            with m.If(snapshot):
                m.d.sync += [comp.min[c][s].eq(lmin), comp.max[c][s].eq(lmax),
                             lmin.eq(Mux(mine, db[s], 2**tw - 1)),
                             lmax.eq(Mux(mine, db[s], 0))]
            with m.Else():
                m.d.sync += [lmin.eq(nmin), lmax.eq(nmax)]


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
