# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of PatternChecker (amaranth.sim): byte count, error count, done pulse at the target.
import pytest
from amaranth.sim import Simulator

from rtl.dmatest.pattern_checker import PatternChecker


def beat(word, words):
    return sum(((word + i) & 0xFFFFFFFF) << (32 * i) for i in range(words))


@pytest.mark.parametrize("data_width", [64, 128])
def test_counts_errors_and_done(data_width):
    dut = PatternChecker(data_width)
    words = data_width // 32
    nbeats = 10
    target = nbeats * data_width // 8
    done_cycles = []

    async def bench(ctx):
        ctx.set(dut.seed, 100)
        ctx.set(dut.target, target)
        ctx.set(dut.restart, 1)
        await ctx.tick()
        ctx.set(dut.restart, 0)
        word = 100
        for n in range(nbeats):
            ctx.set(dut.sink.valid, 1)
            # Corrupt beats 3 and 7.
            ctx.set(dut.sink.payload, beat(word, words) ^ (1 if n in (3, 7) else 0))
            assert ctx.get(dut.sink.ready) == 1
            await ctx.tick()
            if ctx.get(dut.done):
                done_cycles.append(n)
            word += words
            ctx.set(dut.sink.valid, 0)   # a gap between beats changes nothing
            await ctx.tick()
            if ctx.get(dut.done):
                done_cycles.append(n + 0.5)
        assert ctx.get(dut.bytes) == target
        assert ctx.get(dut.errors) == 2

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert done_cycles == [nbeats - 1]     # exactly one pulse, on the beat that reached target


def test_target_zero_never_done():
    dut = PatternChecker(128)

    async def bench(ctx):
        ctx.set(dut.target, 0)
        ctx.set(dut.sink.valid, 1)
        for _ in range(5):
            await ctx.tick()
            assert ctx.get(dut.done) == 0

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


def test_error_counted_a_cycle_after_its_beat():
    """Back-to-back beats, the last one wrong: bytes counts it at once, errors a cycle later
    (the compare is registered); a restart drops a compare still pending."""
    dut = PatternChecker(64)

    async def bench(ctx):
        ctx.set(dut.seed, 7)
        ctx.set(dut.restart, 1)
        await ctx.tick()
        ctx.set(dut.restart, 0)
        for n in range(4):
            ctx.set(dut.sink.valid, 1)
            ctx.set(dut.sink.payload, beat(7 + 2 * n, 2) ^ (n == 3))
            await ctx.tick()
        ctx.set(dut.sink.valid, 0)
        assert ctx.get(dut.bytes) == 32 and ctx.get(dut.errors) == 0
        await ctx.tick()
        assert ctx.get(dut.errors) == 1
        # a wrong beat, then a restart the next cycle: not counted
        ctx.set(dut.sink.valid, 1)
        ctx.set(dut.sink.payload, 0)
        await ctx.tick()
        ctx.set(dut.sink.valid, 0)
        ctx.set(dut.restart, 1)
        await ctx.tick()
        ctx.set(dut.restart, 0)
        await ctx.tick()
        assert ctx.get(dut.errors) == 0 and ctx.get(dut.bytes) == 0

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
