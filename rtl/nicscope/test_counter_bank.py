# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of CounterBank (amaranth.sim): every entry's window equals the sum of its increments
# over exactly the cycles from one taken snapshot to the next, for scanned and lane entries
# alike; busy, refusals, the cut after reset and lost lane updates to the cycle.
import random

import pytest
from amaranth import Signal
from amaranth.hdl import ResetInserter
from amaranth.sim import Simulator

from rtl.nicscope.counter_bank import CounterBank


def run_bank(max_inc, width, stim, resets=(), lanes=(), coded=()):
    """Drive stim[c] = (incs, snapshot, rd_addr) each cycle c (a reset on the cycles in
    `resets`; a coded lane's increments as its one update, valid on some cycles without one
    too); check every output against a model of the windows. Returns what was checked."""
    dut = CounterBank(max_inc, width=width, lanes=lanes, coded=coded)
    coded_entries = {e for k in coded for e in lanes[k]}
    idle_valid = random.Random(len(stim))
    rst = Signal()
    top = ResetInserter(rst)(dut)
    n, period = dut.n, dut.period
    log = {"taken": [], "refused": 0, "reads": 0, "busy_cycles": 0, "cuts": 0}

    async def bench(ctx):
        live = [0] * n                 # the model: events since the open window's start
        closed = [0] * n               # the last closed window (0 before the first snapshot)
        start = 0                      # the scanner visits entry (c - start) % period on cycle c

        def pass_end(first):
            """The last cycle a pass whose visits start on `first` is busy: its last visit of
            an entry < n within one period, plus the two pipeline cycles."""
            return max(c for c in range(first, first + period) if (c - start) % period < n) + 2

        def after_reset(first):
            """(the cut's cycle or None, the last busy cycle) after a reset: with lanes a scan
            period priming, the cut, then its pass; else the pass at once."""
            if lanes:
                return first + period, pass_end(first + period + 1)
            return None, pass_end(first)

        cut, busy_until = after_reset(0)
        refused = 0
        pending_read = None
        for c, (incs, snap, rd_addr) in enumerate(stim):
            reset = c in resets
            ctx.set(rst, int(reset))
            for i, v in enumerate(incs):
                if i not in coded_entries:
                    ctx.set(getattr(dut, f"inc{i}"), v)
            for k in coded:
                hot = [j for j, e in enumerate(lanes[k]) if incs[e]]
                assert len(hot) <= 1
                ctx.set(getattr(dut, f"lane{k}_valid"), int(bool(hot) or idle_valid.random() < .3))
                ctx.set(getattr(dut, f"lane{k}_entry"),
                        hot[0] if hot else idle_valid.randrange(len(lanes[k])))
                ctx.set(getattr(dut, f"lane{k}_inc"), incs[lanes[k][hot[0]]] if hot else 0)
            ctx.set(dut.snapshot, snap)
            ctx.set(dut.rd_addr, rd_addr)
            if pending_read is not None:
                addr, want = pending_read
                assert ctx.get(dut.rd_data) == want, f"cycle {c}: entry {addr}"
                log["reads"] += 1
            if reset:
                await ctx.tick()
                live, closed, refused, pending_read = [0] * n, [0] * n, 0, None
                start = c + 1
                cut, busy_until = after_reset(start)
                continue
            want_busy = c <= busy_until
            assert ctx.get(dut.busy) == want_busy, f"cycle {c}: busy"
            assert ctx.get(dut.lost) == 0, f"cycle {c}: lost"
            log["busy_cycles"] += want_busy
            taken = snap and not want_busy
            if c == cut:
                # The cut after reset: a window of zeros closes; the next counts from here.
                assert ctx.get(dut.taken), f"cycle {c}: the cut"
                live = [0] * n
                log["cuts"] += 1
            # rd_data is entry rd_addr one cycle later; it is valid when the pass is over (on a
            # snapshot cycle it is still the previous window).
            pending_read = (rd_addr, closed[rd_addr]) if not want_busy and rd_addr < n else None
            assert ctx.get(dut.taken) == (taken or c == cut), f"cycle {c}: taken"
            assert ctx.get(dut.refused) == refused % 2**16, f"cycle {c}: refused"
            if taken:
                closed = [v % 2**width for v in live]
                live = [0] * n
                busy_until = pass_end(c + 1)
                log["taken"].append(c)
            elif snap:
                refused += 1
                log["refused"] += 1
            live = [v + i for v, i in zip(live, incs)]
            await ctx.tick()

    sim = Simulator(top)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return log


def random_stim(rng, max_inc, ncycles, snap_p, p_max=0.2, lanes=()):
    """Random increments; in each lane one entry at most, often the same one for a while (its
    accumulator's read-modify-write back to back) and often the largest."""
    n = len(max_inc)
    stim = []
    hot = [lane[0] for lane in lanes]
    for _ in range(ncycles):
        # Increments: often the largest (to fill the accumulators), often 0, else anything.
        incs = [m if rng.random() < p_max else rng.choice((0, rng.randint(0, m)))
                for m in max_inc]
        for k, lane in enumerate(lanes):
            if rng.random() < 0.1:
                hot[k] = rng.choice(lane)
            for e in lane:
                incs[e] = 0
            if rng.random() < 0.8:
                e = hot[k]
                incs[e] = max_inc[e] if rng.random() < 0.5 else rng.randint(1, max_inc[e])
        stim.append((incs, int(rng.random() < snap_p), rng.randrange(n)))
    return stim


@pytest.mark.parametrize("max_inc,width,snap_p,seed", [
    ([1] * 6 + [16, 1, 1, 2**32 - 1], 48, 0.02, 1),
    ([1, 255, 1], 48, 0.05, 2),                     # a short bank: padded scan period
    ([1], 48, 0.1, 3),                              # one entry
    ([15] * 5 + [1] * 40, 16, 0.005, 4),            # 16-bit counts: long windows wrap
    ([1] * 72 + [16] * 8 + [2**32 - 1], 48, 0.01, 5),   # the analyzer's size
])
def test_random_windows(max_inc, width, snap_p, seed):
    rng = random.Random(seed)
    stim = random_stim(rng, max_inc, 3000, snap_p)
    log = run_bank(max_inc, width, stim)
    assert len(log["taken"]) >= 3
    assert log["reads"] > 1000
    assert log["refused"] >= 1 or snap_p < 0.02


LANES_SMALL = [list(range(0, 4)), list(range(6, 9))]
LANES_BIG = [list(range(10, 58)), list(range(58, 106)), list(range(106, 122)), [122, 123, 124]]


@pytest.mark.parametrize("max_inc,lanes,width,snap_p,seed", [
    ([1] * 10, LANES_SMALL, 48, 0.02, 11),
    ([1] * 4 + [3, 1] + [2**32 - 1] * 3 + [1], LANES_SMALL, 48, 0.05, 12),  # wide lane
    ([1, 1], [[0, 1]], 48, 0.1, 13),                 # padded scan period, all in one lane
    ([1] * 10, LANES_SMALL, 12, 0.005, 14),          # 12-bit counts: long windows wrap
    ([1] * 5 + [16] * 4 + [2**32 - 1] + [1] * 115, LANES_BIG, 48, 0.004, 15),  # like the
])                                                                               # analyzer
def test_random_windows_lanes(max_inc, lanes, width, snap_p, seed):
    rng = random.Random(seed)
    stim = random_stim(rng, max_inc, 3000, snap_p, lanes=lanes)
    log = run_bank(max_inc, width, stim, lanes=lanes)
    assert len(log["taken"]) >= 3 and log["cuts"] == 1
    assert log["reads"] > 1000


@pytest.mark.parametrize("max_inc,lanes,coded,width,snap_p,seed", [
    ([1] * 4 + [3, 1] + [2**32 - 1] * 3 + [1], LANES_SMALL, [1], 48, 0.05, 21),  # wide, coded
    ([1] * 10, LANES_SMALL, [0, 1], 12, 0.005, 22),   # every lane coded; windows wrap
    ([1] * 5 + [16] * 4 + [2**32 - 1] + [1] * 115, LANES_BIG, [0, 3], 48, 0.004, 23),
])
def test_random_windows_coded_lanes(max_inc, lanes, coded, width, snap_p, seed):
    """Lanes given as one update per cycle (an entry index and an increment), beside lanes
    and scanned entries given per entry: the same windows."""
    rng = random.Random(seed)
    stim = random_stim(rng, max_inc, 3000, snap_p, lanes=lanes)
    log = run_bank(max_inc, width, stim, lanes=lanes, coded=coded)
    assert len(log["taken"]) >= 3 and log["cuts"] == 1
    assert log["reads"] > 1000


def test_lane_resets():
    """Distributed RAM keeps its contents through a reset too: after each reset the lanes'
    counts are primed (a scan period, then the cut), so no count carries over."""
    rng = random.Random(17)
    max_inc, lanes = [1] * 10, LANES_SMALL
    stim = random_stim(rng, max_inc, 1500, 0.03, lanes=lanes)
    log = run_bank(max_inc, 48, stim, resets=(300, 301, 700, 703), lanes=lanes)
    assert log["cuts"] == 3          # the reset on 703 comes before the cut of 700's
    assert any(300 < t < 700 for t in log["taken"]) and any(t > 703 for t in log["taken"])


def test_lane_collisions_are_lost():
    """Two increments in one lane on a cycle: `lost` counts the cycle (once, however many
    lanes collide on it)."""
    dut = CounterBank([1] * 6, lanes=[[0, 1, 2], [3, 4]])
    pattern = [[1, 1, 0, 0, 0, 0], [1, 0, 0, 1, 0, 0], [1, 0, 1, 1, 1, 0],
               [0, 0, 0, 0, 0, 1], [1, 1, 1, 1, 1, 1], [0, 1, 0, 0, 1, 0]]
    want = [1, 0, 1, 0, 1, 0]

    async def bench(ctx):
        lost = 0
        for incs, w in zip(pattern, want):
            for i, v in enumerate(incs):
                ctx.set(getattr(dut, f"inc{i}"), v)
            await ctx.tick()
            lost += w
            assert ctx.get(dut.lost) == lost

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


def test_wrap_and_full_accumulators():
    """Every entry at its largest increment every cycle: the accumulators reach their limit
    (max_inc * period) and the 16-bit totals wrap many times."""
    max_inc = [1, 7, 255, 1, 3]
    stim = [(list(max_inc), int(c in (700, 1500, 1501, 1503, 1600)), c % 5)
            for c in range(2000)]
    log = run_bank(max_inc, 16, stim)
    assert log["taken"] == [700, 1500, 1600] and log["refused"] == 2


def test_snapshot_cycles_exact():
    """A hand-worked case: one entry, inc 1 on every cycle; scan period 4 (padded), entry 0
    visited on cycles 0, 4, 8, ... The clear pass is busy through cycle 2; snapshots on 3
    (taken: window 0..2 = 3), 4 and 6 (refused: the pass visit is cycle 4, busy through 6), 7
    (taken: window 3..6 = 4; busy 8..10)."""
    stim = [([1], int(c in (3, 4, 6, 7)), 0) for c in range(20)]
    log = run_bank([1], 48, stim)
    assert log["taken"] == [3, 7] and log["refused"] == 2
    assert log["busy_cycles"] == 3 + 3 + 3


def test_reset_clears_block_ram():
    """Block RAM keeps its contents through a reset; the clear pass restarts every total, so
    the first window after a reset counts from the cycle after it."""
    rng = random.Random(7)
    max_inc = [1, 16, 1, 1, 3]
    stim = random_stim(rng, max_inc, 1500, 0.02)
    log = run_bank(max_inc, 48, stim, resets=(400, 401, 900))
    assert any(400 < t < 900 for t in log["taken"]) and any(t > 900 for t in log["taken"])


def test_bad_parameters():
    with pytest.raises(ValueError):
        CounterBank([])
    with pytest.raises(ValueError):
        CounterBank([1, 0])
    with pytest.raises(ValueError):
        CounterBank([2**47], width=48)
    for lanes in ([[0, 2]], [[0, 1], [1, 2]], [[2, 3]], [[]], [[1, 0]]):
        with pytest.raises(ValueError):
            CounterBank([1, 1, 1], lanes=lanes)
    with pytest.raises(ValueError):
        CounterBank([1, 1, 1], lanes=[[0, 1]], coded=[1])
