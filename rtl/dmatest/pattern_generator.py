# SPDX-License-Identifier: BSD-2-Clause
#
# pattern_generator.py: counting-pattern stream source, the card-to-host traffic generator.
#
# What it is: feeds a DMA writer with a pattern the host can check: the stream carries 32-bit
# little-endian words seed, seed+1, seed+2, ... packed data_width/32 to a beat, lowest word in the
# lowest bits (so host memory holds them in order). It offers a beat on every cycle while enabled,
# so the rate it sees is the rate the DMA and the link take.
#
# Interfaces:
#   source      stream.Signature(data_width), out.
#   enable      in: offer data while 1. Rising edge restarts the pattern at `seed`.
#   seed        in, 32 bits: first word of the pattern.
#   beats       out, 48 bits: beats accepted downstream since the last restart.
#
# Parameters:
#   data_width  beat width in bits, a multiple of 32 (64 and 128 in this design).

from amaranth import Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import Out, In


class PatternGenerator(wiring.Component):
    def __init__(self, data_width=128):
        if data_width % 32 or data_width <= 0:
            raise ValueError(f"PatternGenerator: data_width must be a positive multiple of 32, "
                             f"not {data_width}")
        self.data_width = data_width
        super().__init__({
            "source": Out(stream.Signature(data_width)),
            "enable": In(1),
            "seed":   In(32),
            "beats":  Out(48),
        })

    def elaborate(self, platform):
        m = Module()
        words = self.data_width // 32
        word = Signal(32)             # first word of the current beat
        enable_q = Signal()
        m.d.sync += enable_q.eq(self.enable)

        for i in range(words):
            m.d.comb += self.source.payload[32 * i:32 * (i + 1)].eq(word + i)
        m.d.comb += self.source.valid.eq(self.enable & enable_q)

        with m.If(self.enable & ~enable_q):
            m.d.sync += [word.eq(self.seed), self.beats.eq(0)]
        with m.Elif(self.source.valid & self.source.ready):
            m.d.sync += [word.eq(word + words), self.beats.eq(self.beats + 1)]
        return m
