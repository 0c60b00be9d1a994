# SPDX-License-Identifier: BSD-2-Clause
#
# pattern_checker.py: counting-pattern stream sink, the host-to-card traffic checker.
#
# What it is: takes the stream a DMA reader produces, always ready, and checks it against the
# pattern PatternGenerator makes (32-bit words seed, seed+1, ... lowest word in the lowest bits).
# It counts bytes and mismatching beats, and raises `done` for one cycle when the byte count
# reaches `target` (so the host can wait for an interrupt instead of polling registers, which
# would disturb the measurement).
#
# Interfaces:
#   sink        stream.Signature(data_width), in; ready is always 1.
#   restart     in, pulse: clear counts and expect `seed` next.
#   seed        in, 32 bits: expected first word.
#   target      in, 32 bits: byte count at which `done` pulses (0: never).
#   bytes       out, 48 bits: bytes received since restart.
#   errors      out, 32 bits: beats whose data differed from the pattern since restart (a beat
#               counted a cycle after `bytes`: the beat and its expected words are registered
#               before the compare, which is off the DMA FIFO's block RAM output).
#   done        out: one-cycle pulse when `bytes` reaches `target`.
#
# Parameters:
#   data_width  beat width in bits, a multiple of 32.

from amaranth import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import Out, In


class PatternChecker(wiring.Component):
    def __init__(self, data_width=128):
        if data_width % 32 or data_width <= 0:
            raise ValueError(f"PatternChecker: data_width must be a positive multiple of 32, "
                             f"not {data_width}")
        self.data_width = data_width
        super().__init__({
            "sink":    In(stream.Signature(data_width)),
            "restart": In(1),
            "seed":    In(32),
            "target":  In(32),
            "bytes":   Out(48),
            "errors":  Out(32),
            "done":    Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        words = self.data_width // 32
        beat_bytes = self.data_width // 8
        word = Signal(32)
        match = Signal()

        # The beat and the words it should hold, registered; compared the next cycle.
        got = Signal(self.data_width)
        want = Signal(self.data_width)
        got_valid = Signal()
        m.d.comb += self.sink.ready.eq(1)
        m.d.sync += [got.eq(self.sink.payload),
                     got_valid.eq(self.sink.valid & ~self.restart)]
        for i in range(words):
            m.d.sync += want[32 * i:32 * (i + 1)].eq((word + i)[:32])
        m.d.comb += match.eq(got == want)

        new_bytes = Signal(48)
        m.d.comb += new_bytes.eq(self.bytes + beat_bytes)
        m.d.sync += self.done.eq(0)
        with m.If(self.restart):
            m.d.sync += [word.eq(self.seed), self.bytes.eq(0), self.errors.eq(0)]
        with m.Else():
            with m.If(got_valid & ~match):
                m.d.sync += self.errors.eq(self.errors + 1)
            with m.If(self.sink.valid):
                m.d.sync += [word.eq(word + words), self.bytes.eq(new_bytes)]
                with m.If((self.target != 0) & (new_bytes == self.target)):
                    m.d.sync += self.done.eq(1)
        return m
