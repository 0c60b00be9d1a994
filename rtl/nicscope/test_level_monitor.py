# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of LevelMonitor (amaranth.sim): each window's maximum against the recorded levels,
# the sum's increment against the level, for random levels and snapshots.
import gc
import random

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.level_monitor import LevelMonitor

LEVELS = (("tags", 4), ("credits", 12), ("one", 1))


@pytest.mark.parametrize("seed", [1, 2])
def test_random_windows(seed):
    rng = random.Random(seed)
    dut = LevelMonitor(LEVELS)
    checked = []

    async def bench(ctx):
        trace, win_start = [], 0
        expected = {n: 0 for n, _ in LEVELS}        # read 0 before the first snapshot
        for cyc in range(500):
            vals = {n: rng.randrange(2**w) if rng.random() < 0.3 else 0 for n, w in LEVELS}
            snap = int(rng.random() < 0.05 or cyc in (0, 200, 201))
            for n, v in vals.items():
                ctx.set(getattr(dut, n), v)
            ctx.set(dut.snapshot, snap)
            for n, v in vals.items():
                assert ctx.get(getattr(dut, f"inc_{n}")) == v
            trace.append(vals)
            await ctx.tick()
            if snap:
                window = trace[win_start:cyc]
                expected = {n: max([t[n] for t in window], default=0) for n, _ in LEVELS}
                checked.append((win_start, cyc))
                win_start = cyc
            got = {n: ctx.get(getattr(dut, f"max_{n}")) for n, _ in LEVELS}
            assert got == expected, f"cycle {cyc}, window {win_start}..: {got} != {expected}"

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert (200, 201) in checked and len(checked) > 10


@pytest.mark.filterwarnings("ignore:.*created but never used")
@pytest.mark.parametrize("levels", [(), (("a", 4), ("a", 2)), (("a", 17),), (("1x", 2),)])
def test_bad_levels(levels):
    with pytest.raises(ValueError):
        LevelMonitor(levels)
    gc.collect()                  # its UnusedElaboratable warning here, where it is ignored
