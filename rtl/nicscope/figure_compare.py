# SPDX-License-Identifier: BSD-2-Clause
#
# figure_compare.py: the trigger's figure comparators: a request's latency, an occupancy level
# or an event latency against a threshold, as bits the trigger can watch.
#
# What it is: `ncmp` comparators, each picking one of the analyzer's figures (a source: a level,
# a latency breakdown stage of one request class, an event latency) and comparing it with a
# threshold on every cycle the figure is valid (a level: always; a latency: the cycle it is
# counted). Its `hit` bits go beside the sample into TraceTrigger's compare vector, so "the
# first DMA read slower than 2 us" is a trigger stage on one bit. Timing: FigureCompare's
# docstring.
#
# Interfaces:
#   valid<k>, value<k>   in: source k (valid 1 bit; value up to 32 bits). With value_of, value<j>
#                        is value j, which the sources k with value_of[k] == j share.
#   sel<i>, below<i>, threshold<i>   in: comparator i's source (an index into the sources; one
#                        out of range never hits), direction (0: value > threshold, 1: value <
#                        threshold) and threshold.
#   hit                  out, ncmp bits: comparator i's result for the figure of two cycles
#                        before (the selected figure registered, then the comparison).
#   value<i>_q           out: the value hit[i] was computed from (registered with it; 0 when
#                        the figure was not valid).
#
# Parameters: widths (each source's value width, 1..32), ncmp (comparators, 1..4), value_of
# (optional: source k's value is value<value_of[k]>, so sources that differ only in their valid,
# such as a breakdown stage's cycles per request class, share one value and the multiplexer
# selects among the values, not the sources).

from amaranth import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

SEL_WIDTH = 7
THRESHOLD_WIDTH = 32


class FigureCompare(wiring.Component):
    """Threshold comparators over a set of figures.

    On every cycle t, comparator i takes source sel<i>: hit[i] on cycle t + 2 is valid(t) &
    (value(t) > threshold, or < with below<i>), and value<i>_q on t + 2 is value(t) if valid(t),
    else 0 (0 for a source out of range too): so sources may share one value and differ in
    their valid (a breakdown stage's cycles, valid for one class). Two registers between the
    figure and the trigger's comparators: the selected figure (after the source multiplexer),
    then the comparison; the trigger sees a figure two cycles after the sample of its own cycle
    (the bus analyzer documents what that means for each kind of figure). sel applies on the
    figure's cycle t, below and threshold on t + 1 (the software sets them while the trigger
    is disarmed).
    """

    def __init__(self, widths, ncmp=2, value_of=None):
        widths = tuple(widths)
        if not widths or len(widths) > 2**SEL_WIDTH:
            raise ValueError(f"FigureCompare: {len(widths)} sources, 1..{2**SEL_WIDTH}")
        if not all(1 <= w <= THRESHOLD_WIDTH for w in widths):
            raise ValueError(f"FigureCompare: source widths {widths} must be 1..32")
        if not 1 <= ncmp <= 4:
            raise ValueError(f"FigureCompare: ncmp={ncmp}, 1..4")
        self.value_of = tuple(range(len(widths)) if value_of is None else value_of)
        nvalues = max(self.value_of) + 1
        if len(self.value_of) != len(widths) or set(self.value_of) != set(range(nvalues)):
            raise ValueError(f"FigureCompare: value_of {self.value_of}: one value index per "
                             "source, every value used")
        self.widths, self.ncmp = widths, ncmp
        self.value_widths = [max(w for w, j in zip(widths, self.value_of) if j == v)
                             for v in range(nvalues)]
        super().__init__({
            **{f"valid{k}": In(1) for k in range(len(widths))},
            **{f"value{j}": In(w) for j, w in enumerate(self.value_widths)},
            **{f"sel{i}": In(SEL_WIDTH) for i in range(ncmp)},
            **{f"below{i}": In(1) for i in range(ncmp)},
            **{f"threshold{i}": In(THRESHOLD_WIDTH) for i in range(ncmp)},
            "hit": Out(ncmp),
            **{f"value{i}_q": Out(THRESHOLD_WIDTH) for i in range(ncmp)},
        })

    def elaborate(self, platform):
        m = Module()
        nvalues = len(self.value_widths)
        for i in range(self.ncmp):
            valid, value = Signal(name=f"valid_c{i}"), Signal(THRESHOLD_WIDTH, name=f"value_c{i}")
            # The source's valid, and which value it has; then that value.
            vsel = Signal(range(nvalues + 1), name=f"vsel_c{i}")
            with m.Switch(getattr(self, f"sel{i}")):
                for k in range(len(self.widths)):
                    with m.Case(k):
                        m.d.comb += [valid.eq(getattr(self, f"valid{k}")),
                                     vsel.eq(self.value_of[k])]
                with m.Default():
                    m.d.comb += [valid.eq(0), vsel.eq(nvalues)]
            with m.Switch(vsel):
                for j in range(nvalues):
                    with m.Case(j):
                        m.d.comb += value.eq(getattr(self, f"value{j}"))
                with m.Default():
                    m.d.comb += value.eq(0)
            # The selected figure, registered: the multiplexer and the comparator are apart.
            valid_r = Signal(name=f"valid_r{i}")
            value_r = Signal(THRESHOLD_WIDTH, name=f"value_r{i}")
            m.d.sync += [valid_r.eq(valid), value_r.eq(Mux(valid, value, 0))]
            thr = getattr(self, f"threshold{i}")
            m.d.sync += [
                self.hit[i].eq(valid_r & Mux(getattr(self, f"below{i}"), value_r < thr,
                                             value_r > thr)),
                getattr(self, f"value{i}_q").eq(value_r),
            ]
        return m
