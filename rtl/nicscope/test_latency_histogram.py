# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of LatencyHistogram (amaranth.sim): exact latencies, bins, stats, lost/unmatched.
import random
from collections import deque

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.latency_histogram import STATS, LatencyHistogram

NO_MIN = 2**32 - 1


def run(dut, cycles, bin_min, bin_shift):
    """Drive (req, cpl, snapshot) per cycle; return the outputs after each tick."""
    outs = []

    async def bench(ctx):
        ctx.set(dut.bin_min, bin_min)
        ctx.set(dut.bin_shift, bin_shift)
        for req, cpl, snap in cycles:
            ctx.set(dut.req, req)
            ctx.set(dut.cpl, cpl)
            ctx.set(dut.snapshot, snap)
            await ctx.tick()
            out = {name: ctx.get(getattr(dut, name)) for name in STATS}
            out["bins"] = [ctx.get(dut.bins[i]) for i in range(dut.nbins)]
            outs.append(out)

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return outs


def pulses(n, req=(), cpl=(), snap=()):
    return [(int(c in req), int(c in cpl), int(c in snap)) for c in range(n)]


def model_events(cycles, depth):
    """The reference model of the matching: (cycle the event is binned, kind, latency).

    A request is lost if it finds the FIFO full or lost requests still outstanding; a completion
    matches the oldest queued request, else (FIFO empty) the oldest lost one, else it is unmatched.
    Latency = completion cycle - request cycle; the event is counted two cycles later."""
    queue, lost_outstanding, events = deque(), 0, []
    for c, (req, cpl, _) in enumerate(cycles):
        full, skip = len(queue) == depth, lost_outstanding
        if cpl:
            if queue:
                events.append((c + 2, "lat", c - queue.popleft()))
            elif skip:
                lost_outstanding -= 1
            else:
                events.append((c + 2, "unmatched", None))
        if req:
            if full or skip:
                lost_outstanding += 1
                events.append((c + 2, "lost", None))
            else:
                queue.append(c)
    return events


def window(events, lo, hi, nbins, bin_min, bin_shift, width):
    w = {name: 0 for name in STATS}
    w["min"], w["bins"] = NO_MIN, [0] * nbins
    for t, kind, lat in events:
        if not lo <= t < hi:
            continue
        if kind != "lat":
            w[kind] += 1
            continue
        w["count"] += 1
        w["sum"] += lat
        w["min"] = min(w["min"], lat)
        w["max"] = max(w["max"], lat)
        if lat < bin_min:
            w["below"] += 1
        elif (lat - bin_min) >> bin_shift >= nbins:
            w["above"] += 1
        else:
            w["bins"][(lat - bin_min) >> bin_shift] += 1
    for name in ("below", "above", "count", "lost", "unmatched"):
        w[name] %= 2**width
    w["sum"] %= 2**48
    w["bins"] = [b % 2**width for b in w["bins"]]
    return w


def check_windows(outs, cycles, events, nbins, bin_min, bin_shift, width):
    expected = {name: 0 for name in STATS}
    expected["min"], expected["bins"] = NO_MIN, [0] * nbins    # nothing closed yet
    lo = 0
    closed = []
    for c, (_, _, snap) in enumerate(cycles):
        if snap:
            expected = window(events, lo, c, nbins, bin_min, bin_shift, width)
            closed.append(expected)
            lo = c
        assert outs[c] == expected, f"cycle {c}"
    return closed


def test_latency_definition():
    """req on cycle 10, cpl on cycle 25: latency 15, in bin (15 - 3) >> 2 = 3."""
    cycles = pulses(40, req={10}, cpl={25}, snap={39})
    outs = run(LatencyHistogram(nbins=8, depth=4), cycles, bin_min=3, bin_shift=2)
    got = outs[39]
    assert got["bins"] == [0, 0, 0, 1, 0, 0, 0, 0]
    assert (got["count"], got["sum"], got["min"], got["max"]) == (1, 15, 15, 15)
    assert (got["below"], got["above"], got["lost"], got["unmatched"]) == (0, 0, 0, 0)
    # Before the first snapshot nothing is closed: count 0, min 2**32-1, max 0.
    assert outs[38]["count"] == 0 and outs[38]["min"] == NO_MIN and outs[38]["max"] == 0


@pytest.mark.parametrize("snap_cycle,window", [(25, 1), (26, 1), (27, 1), (28, 0)])
def test_counted_two_cycles_later(snap_cycle, window):
    """cpl on cycle 25 is counted on cycle 27: a snapshot on 25, 26 or 27 puts it in the next
    window, one on 28 in the window it closes."""
    cycles = pulses(40, req={10}, cpl={25}, snap={snap_cycle, 35})
    outs = run(LatencyHistogram(nbins=4, depth=4), cycles, bin_min=0, bin_shift=4)
    first, second = outs[snap_cycle], outs[35]
    assert [first["count"], second["count"]] == [1 - window, window]
    assert [first["bins"][0], second["bins"][0]] == [1 - window, window]
    assert [first["sum"], second["sum"]] == [15 * (1 - window), 15 * window]
    assert [first["min"], second["min"]] == [15 if window == 0 else NO_MIN,
                                             15 if window == 1 else NO_MIN]


def test_lost_and_unmatched_directed():
    """depth 4: five back-to-back requests (cycles 0..4), the fifth lost; a sixth request on
    cycle 12 while the lost one is outstanding is lost too. Completions on 20..25: the first four
    measure 20, 20, 20, 20; 24 and 25 complete the two lost requests (neither measured nor
    unmatched); cycle 26 is unmatched; then req 30 / cpl 37 measures 7."""
    cycles = pulses(45, req={0, 1, 2, 3, 4, 12, 30}, cpl={20, 21, 22, 23, 24, 25, 26, 37},
                    snap={44})
    outs = run(LatencyHistogram(nbins=4, depth=4), cycles, bin_min=4, bin_shift=3)
    got = outs[44]
    assert (got["lost"], got["unmatched"], got["count"]) == (2, 1, 5)
    assert (got["sum"], got["min"], got["max"]) == (87, 7, 20)
    assert got["bins"] == [1, 0, 4, 0] and (got["below"], got["above"]) == (0, 0)


def test_same_cycle_req_and_cpl():
    """depth 2. Cycle 5: req and cpl with the FIFO full: the cpl measures 5, the req is lost (no
    room on its cycle); cpl 8 measures 7, cpl 9 is the lost request's. Cycle 12: req and cpl with
    nothing outstanding: the cpl is unmatched (latency 0 cannot be measured), the req is queued
    and cpl 15 measures 3."""
    cycles = pulses(20, req={0, 1, 5, 12}, cpl={5, 8, 9, 12, 15}, snap={19})
    outs = run(LatencyHistogram(nbins=4, depth=2), cycles, bin_min=3, bin_shift=1)
    got = outs[19]
    assert (got["count"], got["sum"], got["min"], got["max"]) == (3, 15, 3, 7)
    assert (got["lost"], got["unmatched"], got["bins"]) == (1, 1, [1, 1, 1, 0])


def random_cycles(rng, ncycles, depth):
    """Random in-order requests and completions, as a DMA engine with up to `limit` reads pending
    would make them (limit > depth loses requests), a few spurious completions (unmatched), and
    snapshots at random cycles."""
    cycles = []
    pending, limit, p_req, p_cpl = 0, depth, 0.3, 0.3
    for c in range(ncycles):
        if rng.random() < 0.04:
            limit = rng.choice([depth, depth, depth, depth + 1, depth + 3])
            p_req, p_cpl = rng.choice([(0.3, 0.3), (0.6, 0.2), (0.1, 0.5), (0.9, 0.9), (0.2, 0.03)])
        req = int(pending < limit and rng.random() < p_req)
        cpl = int(rng.random() < (p_cpl if pending else 0.05))
        pending = max(0, pending + req - cpl)
        snap = int(rng.random() < 0.03 or c in (0, 60, 61))
        cycles.append((req, cpl, snap))
    return cycles


@pytest.mark.parametrize("nbins,depth,bin_min,bin_shift,seed", [
    (8, 4, 0, 0, 1),
    (8, 4, 10, 1, 2),
    (4, 4, 2, 2, 3),
    (16, 8, 3, 2, 4),
    (2, 1, 1, 0, 5),
    (4, 4, 0, 31, 6),          # every latency in bin 0
    (4, 4, 2**32 - 1, 0, 7),   # every latency below
])
def test_random_vs_model(nbins, depth, bin_min, bin_shift, seed):
    rng = random.Random(seed)
    cycles = random_cycles(rng, 800, depth)
    dut = LatencyHistogram(nbins=nbins, depth=depth, width=32)
    outs = run(dut, cycles, bin_min, bin_shift)
    events = model_events(cycles, depth)
    closed = check_windows(outs, cycles, events, nbins, bin_min, bin_shift, 32)
    # The stimulus exercised what it should.
    total = {k: sum(w[k] for w in closed) for k in ("count", "lost", "unmatched", "below",
                                                     "above")}
    assert total["count"] > 20 and total["lost"] > 0 and total["unmatched"] > 0
    if (bin_min, bin_shift) in ((10, 1), (2, 2), (3, 2)):
        assert total["below"] > 0 and total["above"] > 0
        assert total["count"] > total["below"] + total["above"]


def test_narrow_counters_wrap():
    """width 8: 300 measured latencies of 2 cycles count 300 % 256; sum is 48 bits wide."""
    cycles = []
    for _ in range(300):
        cycles += [(1, 0, 0), (0, 0, 0), (0, 1, 0)]
    cycles += [(0, 0, 0), (0, 0, 0), (0, 0, 1)]
    outs = run(LatencyHistogram(nbins=2, depth=2, width=8), cycles, bin_min=2, bin_shift=0)
    got = outs[-1]
    assert (got["count"], got["sum"], got["min"], got["max"]) == (300 % 256, 600, 2, 2)
    assert got["bins"] == [300 % 256, 0]
