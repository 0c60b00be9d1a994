# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of PatternGenerator (amaranth.sim): pattern words, restart on enable, backpressure.
import pytest
from amaranth.sim import Simulator

from rtl.dmatest.pattern_generator import PatternGenerator


@pytest.mark.parametrize("data_width", [64, 128])
def test_pattern_and_backpressure(data_width):
    dut = PatternGenerator(data_width)
    words = data_width // 32
    got = []

    async def bench(ctx):
        ctx.set(dut.seed, 0xFFFFFFF0)          # wraps at 2**32
        ctx.set(dut.enable, 1)
        await ctx.tick()
        for cycle in range(40):
            ready = cycle % 3 != 1             # backpressure every third cycle
            ctx.set(dut.source.ready, ready)
            await ctx.delay(1e-9)
            if ctx.get(dut.source.valid) and ready:
                got.append(ctx.get(dut.source.payload))
            await ctx.tick()
        assert ctx.get(dut.beats) == len(got)
        # Restart: a 0 -> 1 edge of enable starts over at the seed.
        ctx.set(dut.source.ready, 0)
        ctx.set(dut.enable, 0)
        await ctx.tick()
        ctx.set(dut.seed, 7)
        ctx.set(dut.enable, 1)
        await ctx.tick()
        await ctx.tick()
        assert ctx.get(dut.beats) == 0
        assert ctx.get(dut.source.payload) & 0xFFFFFFFF == 7

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()

    expect_word = 0xFFFFFFF0
    for beat in got:
        for i in range(words):
            assert (beat >> (32 * i)) & 0xFFFFFFFF == expect_word
            expect_word = (expect_word + 1) & 0xFFFFFFFF
    assert len(got) > 20


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_rejects_bad_width():
    with pytest.raises(ValueError, match="multiple of 32"):
        PatternGenerator(48)
    with pytest.raises(ValueError, match="multiple of 32"):
        PatternGenerator(0)
