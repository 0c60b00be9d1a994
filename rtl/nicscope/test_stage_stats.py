# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of StageStats (amaranth.sim): random requests (back-to-back ones of one class, on
# snapshot cycles too) and random snapshots; every cycle, every class's closed window's min and
# max through the read port against a model of the windows.
import random

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.stage_stats import StageStats

TW = 12
EMPTY = (2**TW - 1, 0)


@pytest.mark.parametrize("nclasses,seed", [(1, 1), (2, 2), (3, 3)])
def test_closed_windows_match_a_model(nclasses, seed):
    rng = random.Random(seed)
    nstages, ncycles = 3, 1500
    dut = StageStats(nclasses, nstages, TW)
    live = {}                       # (class, stage) -> [min, max] of the open window
    closed = {}
    checked = {"updates": 0, "nonempty": 0, "empty": 0}

    async def bench(ctx):
        nonlocal live, closed
        for _ in range(ncycles):
            # The closed window of the last snapshot, for every class.
            for c in range(nclasses):
                ctx.set(dut.rd_cls, c)
                got = list(zip(ctx.get(dut.rd_min), ctx.get(dut.rd_max)))
                want = [tuple(closed.get((c, s), EMPTY)) for s in range(nstages)]
                assert got == want, (c, got, want)
                checked["nonempty" if want[0] != EMPTY else "empty"] += 1
            valid = rng.random() < 0.7
            cls = rng.randrange(nclasses) if rng.random() < 0.5 else 0
            diffs = [rng.choice((0, 1, rng.randrange(2**TW))) for _ in range(nstages)]
            snap = rng.random() < 0.03
            ctx.set(dut.valid, valid)
            ctx.set(dut.cls, cls)
            ctx.set(dut.diffs, diffs)
            ctx.set(dut.snapshot, snap)
            # A snapshot cycle's request is the new window's.
            if snap:
                closed, live = live, {}
            if valid:
                checked["updates"] += 1
                for s, d in enumerate(diffs):
                    lo, hi = live.get((cls, s), EMPTY)
                    live[(cls, s)] = [min(lo, d), max(hi, d)]
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    # Windows with and without requests of a class were both read.
    assert checked["updates"] > 500 and checked["nonempty"] > 500
    assert checked["empty"] > 0
