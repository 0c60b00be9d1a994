# SPDX-License-Identifier: BSD-2-Clause
#
# occupancy_counter.py: how one stream spends its cycles, counted with snapshot-and-clear.
#
# What it is: the per-probe counts of the bus analyzer: busy, stall and idle cycles, bytes,
# frames, and stalled cycles while `hold`. Window semantics: the class docstring.
#
# Interfaces:
#   valid, ready, last   in: the probed stream's handshake (ready may be 1 always).
#   nbytes               in: bytes the current beat carries (counted only when it moves).
#   hold                 in: qualifies the `stall_hold` count.
#   snapshot             in: pulse: closes the window.
#   inc_<count>          out (comb): this cycle's increment of each count (for a CounterBank).
#   busy, stall, idle, bytes, frames, stall_hold   out: counts of the last closed window (only
#                        with counters=True).
#
# Parameters: nbytes_width (width of `nbytes`), width (count width; 48: 26 days at 125 MHz
# before wrapping), counters (True: the counts in registers here, for the core on its own;
# False: only the increments, for a CounterBank, `max_inc` giving each one's largest value).

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .counter_bank import register_counters

COUNTS = ("busy", "stall", "idle", "bytes", "frames", "stall_hold")


class OccupancyCounter(wiring.Component):
    """Occupancy counts of one stream.

    Every cycle is exactly one of busy (valid and ready: a beat moves), stalled (valid, not
    ready: held off) or idle (not valid), so busy + stall + idle is the number of cycles elapsed.
    It also counts bytes (of the beats that moved), frames (beats with `last` that moved) and
    stalled cycles while `hold` is 1 (the analyzer drives it with "a host CSR access is in
    progress", so a DMA probe shows how long CSR accesses hold it off).

    Snapshot: on the cycle `snapshot` is 1 the live counts (covering every cycle since the
    previous snapshot, that cycle not included) move to the outputs and the live counts restart
    with that cycle's events. Driving `snapshot` from one wire for every probe makes all probes'
    windows identical, so their figures can be compared and summed exactly.
    """

    def __init__(self, nbytes_width=8, width=48, counters=True):
        if nbytes_width < 1 or width < 8:
            raise ValueError(f"OccupancyCounter: nbytes_width={nbytes_width} must be >= 1 and "
                             f"width={width} >= 8")
        self.width, self.counters = width, counters
        self.max_inc = {name: 2**nbytes_width - 1 if name == "bytes" else 1 for name in COUNTS}
        super().__init__({
            "valid":    In(1),
            "ready":    In(1),
            "last":     In(1),
            "nbytes":   In(nbytes_width),
            "hold":     In(1),
            "snapshot": In(1),
            **{f"inc_{name}": Out(nbytes_width if name == "bytes" else 1) for name in COUNTS},
            **({name: Out(width) for name in COUNTS} if counters else {}),
        })

    def elaborate(self, platform):
        m = Module()
        moved = self.valid & self.ready
        stalled = self.valid & ~self.ready
        inc = {
            "busy":       moved,
            "stall":      stalled,
            "idle":       ~self.valid,
            "bytes":      moved * self.nbytes,
            "frames":     moved & self.last,
            "stall_hold": stalled & self.hold,
        }
        m.d.comb += [getattr(self, f"inc_{name}").eq(inc[name]) for name in COUNTS]
        if self.counters:
            register_counters(m, self.snapshot, {n: getattr(self, f"inc_{n}") for n in COUNTS},
                              {n: getattr(self, n) for n in COUNTS})
        return m
