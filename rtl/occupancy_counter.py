#
# occupancy_counter.py: how one stream spends its cycles, counted with snapshot-and-clear.
#
# What it is: the per-probe counters of the bus analyzer. Every cycle is exactly one of busy
# (valid and ready: a beat moves), stalled (valid, not ready: held off) or idle (not valid), so
# busy + stall + idle is the number of cycles elapsed. It also counts bytes (of the beats that
# moved), frames (beats with `last` that moved) and stalled cycles while `hold` is 1 (the analyzer
# drives it with "a host CSR access is in progress", so a DMA probe shows how long CSR accesses
# hold it off).
#
# Snapshot: on the cycle `snapshot` is 1 the live counts (covering every cycle since the previous
# snapshot, that cycle not included) move to the outputs and the live counts restart with that
# cycle's events. Driving `snapshot` from one wire for every probe makes all probes' windows
# identical, so their figures can be compared and summed exactly.
#
# Interfaces:
#   valid, ready, last   in: the probed stream's handshake (ready may be 1 always).
#   nbytes               in: bytes the current beat carries (counted only when it moves).
#   hold                 in: qualifies the `stall_hold` count.
#   snapshot             in: pulse, see above.
#   busy, stall, idle, bytes, frames, stall_hold   out: counts of the last closed window.
#
# Parameters:
#   nbytes_width  width of `nbytes` (bytes per beat up to 2**nbytes_width - 1).
#   width         counter width (48: 26 days at 125 MHz before wrapping).

from amaranth import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

COUNTS = ("busy", "stall", "idle", "bytes", "frames", "stall_hold")


class OccupancyCounter(wiring.Component):
    def __init__(self, nbytes_width=8, width=48):
        if nbytes_width < 1 or width < 8:
            raise ValueError(f"OccupancyCounter: nbytes_width={nbytes_width} must be >= 1 and "
                             f"width={width} >= 8")
        self.width = width
        super().__init__({
            "valid":    In(1),
            "ready":    In(1),
            "last":     In(1),
            "nbytes":   In(nbytes_width),
            "hold":     In(1),
            "snapshot": In(1),
            **{name: Out(width) for name in COUNTS},
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
        for name in COUNTS:
            live = Signal(self.width, name=f"live_{name}")
            with m.If(self.snapshot):
                m.d.sync += [getattr(self, name).eq(live), live.eq(inc[name])]
            with m.Else():
                m.d.sync += live.eq(live + inc[name])
        return m
