# SPDX-License-Identifier: BSD-2-Clause
#
# level_monitor.py: occupancy integrals of a set of levels, with snapshot-and-clear.
#
# What it is: for each level the design reports (read tags in use, flow-control credits in use,
# descriptors in flight, FIFO fill), the sum of its value over the cycles of a window (the
# occupancy integral: divided by the window's cycles, the mean occupancy) and its maximum.
#
# Interfaces:
#   <name>               in: the level, one input per level.
#   snapshot             in: pulse: closes the window.
#   inc_<name>           out (comb): this cycle's increment of the sum (the level itself, for a
#                        CounterBank; `max_inc` gives each one's largest value).
#   max_<name>           out: the largest value of the last closed window (a register).
#
# Parameters: levels ((name, width) pairs).


from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

STATS = ("sum", "max")


class LevelMonitor(wiring.Component):
    """Sum and maximum of each level over a window.

    Window: as OccupancyCounter's (the cycles since the previous `snapshot`, that cycle not
    included), so the sum of level L over a window of T cycles is the integral of L, and sum / T
    its mean. The sum is a CounterBank's: `inc_<name>` is the level, added every cycle. The
    maximum is kept here: on a `snapshot` cycle the window's maximum moves to `max_<name>` and the
    live maximum restarts with that cycle's level. `max_<name>` reads 0 before the first snapshot.
    """

    def __init__(self, levels):
        levels = tuple(levels)
        names = [n for n, _ in levels]
        if not levels or len(set(names)) != len(names) or not all(n.isidentifier()
                                                                  for n in names):
            raise ValueError(f"LevelMonitor: levels {names} must be one or more unique "
                             "identifiers")
        if not all(1 <= w <= 16 for _, w in levels):
            raise ValueError(f"LevelMonitor: level widths {levels} must be 1..16")
        self.levels = levels
        self.max_inc = {n: 2**w - 1 for n, w in levels}
        super().__init__({
            **{n: In(w) for n, w in levels},
            "snapshot": In(1),
            **{f"inc_{n}": Out(w) for n, w in levels},
            **{f"max_{n}": Out(w) for n, w in levels},
        })

    def elaborate(self, platform):
        m = Module()
        for n, w in self.levels:
            level, live = getattr(self, n), Signal(w, name=f"{n}_live_max")
            m.d.comb += getattr(self, f"inc_{n}").eq(level)
            with m.If(self.snapshot):
                m.d.sync += [getattr(self, f"max_{n}").eq(live), live.eq(level)]
            with m.Elif(level > live):
                m.d.sync += live.eq(level)
        return m
