# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of OccupancyCounter (amaranth.sim): exact snapshot windows vs a trace-summing model.
import random

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.occupancy_counter import COUNTS, OccupancyCounter


def window_counts(trace, lo, hi, width):
    """The expected outputs for the window of cycles lo..hi-1, summed from the recorded trace."""
    c = dict.fromkeys(COUNTS, 0)
    for valid, ready, last, nbytes, hold in trace[lo:hi]:
        if valid and ready:
            c["busy"] += 1
            c["bytes"] += nbytes
            c["frames"] += last
        elif valid:
            c["stall"] += 1
            c["stall_hold"] += hold
        else:
            c["idle"] += 1
    return {k: v % 2**width for k, v in c.items()}


def make_stimulus(rng, ncycles, nbytes_width, always_ready, snap_p):
    stim = []
    p_valid = rng.random()
    for cyc in range(ncycles):
        if rng.random() < 0.05:                 # change the load from time to time
            p_valid = rng.random()
        valid = int(rng.random() < p_valid)
        ready = 1 if always_ready else rng.randint(0, 1)
        last = rng.randint(0, 1)
        nbytes = rng.randrange(2**nbytes_width)
        hold = rng.randint(0, 1)
        # Snapshots at random cycles, plus one on cycle 0 (an empty window) and two back to back
        # (a one-cycle window).
        snap = int(rng.random() < snap_p or cyc in (0, 100, 101))
        stim.append((valid, ready, last, nbytes, hold, snap))
    return stim


@pytest.mark.parametrize("nbytes_width,width,always_ready,snap_p,seed", [
    (8, 48, False, 0.04, 1),
    (8, 48, True, 0.04, 2),
    (4, 16, False, 0.10, 3),
    (8, 8, False, 0.01, 4),      # 8-bit counters: long windows wrap (bytes certainly does)
])
def test_random_windows(nbytes_width, width, always_ready, snap_p, seed):
    rng = random.Random(seed)
    ncycles = 400
    stim = make_stimulus(rng, ncycles, nbytes_width, always_ready, snap_p)
    dut = OccupancyCounter(nbytes_width=nbytes_width, width=width)
    trace = [s[:5] for s in stim]
    checked = []

    async def bench(ctx):
        expected = dict.fromkeys(COUNTS, 0)          # nothing closed yet
        win_start = 0
        for cyc, (valid, ready, last, nbytes, hold, snap) in enumerate(stim):
            for name, v in zip(("valid", "ready", "last", "nbytes", "hold", "snapshot"),
                               (valid, ready, last, nbytes, hold, snap)):
                ctx.set(getattr(dut, name), v)
            await ctx.tick()
            if snap:
                expected = window_counts(trace, win_start, cyc, width)
                total = expected["busy"] + expected["stall"] + expected["idle"]
                assert total % 2**width == (cyc - win_start) % 2**width
                checked.append((win_start, cyc))
                win_start = cyc                       # the snapshot cycle opens the new window
            got = {name: ctx.get(getattr(dut, name)) for name in COUNTS}
            assert got == expected, f"cycle {cyc}, window {win_start}..: {got} != {expected}"

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert len(checked) >= 4
    assert (0, 0) in checked and (100, 101) in checked
    if width == 8:
        assert any(sum(t[3] for t in trace[lo:hi] if t[0] and t[1]) >= 256 for lo, hi in checked)


def test_directed_window():
    """A hand-computed window: snapshot at cycles 2 and 9, stimulus on cycles 2..8."""
    dut = OccupancyCounter()
    # (valid, ready, last, nbytes, hold) for cycles 2..9; the cycle-9 beat goes to the new window.
    beats = [(1, 1, 0, 16, 0), (1, 0, 0, 99, 1), (1, 0, 0, 99, 0), (0, 1, 1, 99, 1),
             (1, 1, 1, 8, 1), (0, 0, 0, 99, 0), (1, 1, 0, 4, 0), (1, 1, 1, 200, 0)]

    async def bench(ctx):
        ctx.set(dut.valid, 1)
        ctx.set(dut.ready, 1)
        ctx.set(dut.nbytes, 50)
        await ctx.tick()
        await ctx.tick()                              # cycles 0, 1: two busy beats
        ctx.set(dut.snapshot, 1)
        for i, (valid, ready, last, nbytes, hold) in enumerate(beats):
            ctx.set(dut.valid, valid)
            ctx.set(dut.ready, ready)
            ctx.set(dut.last, last)
            ctx.set(dut.nbytes, nbytes)
            ctx.set(dut.hold, hold)
            ctx.set(dut.snapshot, i in (0, 7))
            await ctx.tick()
            if i == 0:
                assert [ctx.get(getattr(dut, n)) for n in COUNTS] == [2, 0, 0, 100, 0, 0]
        assert [ctx.get(getattr(dut, n)) for n in COUNTS] == [3, 2, 2, 28, 1, 1]
        ctx.set(dut.snapshot, 1)
        await ctx.tick()                              # the window of cycle 9 alone
        assert [ctx.get(getattr(dut, n)) for n in COUNTS] == [1, 0, 0, 200, 1, 0]

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
