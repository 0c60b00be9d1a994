# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of EventLatency (amaranth.sim): random start/end events and snapshots against a
# Python model of the in-order matching (queued and merged), every window's counts, bins, min
# and max.
import gc
import random

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.event_latency import COUNTS, EventLatency

NBINS = 8


def bin_of(v):
    return min(v.bit_length(), NBINS - 1)


def model(events, depth, merge):
    """Per cycle: the latencies ended (list), merged, lost, unmatched flags."""
    q, out = [], []
    for cyc, (start, end) in enumerate(events):
        lat, mg, lost, um = None, 0, 0, 0
        if end:
            if q:
                lat = cyc - q.pop(0)
            elif start:
                lat, start = 0, 0
            else:
                um = 1
        if start:
            if merge and q:
                mg = 1
            elif len(q) < depth:
                q.append(cyc)
            else:
                lost = 1
        out.append((lat, mg, lost, um))
    return out


@pytest.mark.parametrize("depth,merge,seed", [(4, False, 1), (1, True, 2), (2, False, 3),
                                              (1, False, 4)])
def test_random_windows(depth, merge, seed):
    rng = random.Random(seed)
    n = 600
    events = [(int(rng.random() < 0.15), int(rng.random() < 0.12)) for _ in range(n)]
    snaps = {c for c in range(n) if rng.random() < 0.03} | {0, 300, 301}
    ref = model(events, depth, merge)
    dut = EventLatency(depth=depth, merge=merge, nbins=NBINS)
    seen = []

    async def bench(ctx):
        live = {k: 0 for k in COUNTS} | {"bins": [0] * NBINS, "min": 2**32 - 1, "max": 0}
        closed = None
        for cyc in range(n + 2):
            start, end = events[cyc] if cyc < n else (0, 0)
            ctx.set(dut.start, start)
            ctx.set(dut.end, end)
            snap = cyc in snaps
            ctx.set(dut.snapshot, snap)
            # What the core counts this cycle: the events of two cycles ago.
            inc = {k: ctx.get(getattr(dut, f"inc_{k}")) for k in COUNTS}
            bins = ctx.get(dut.inc_bins)
            if cyc >= 2:
                lat, mg, lost, um = ref[cyc - 2]
                assert inc == {"count": int(lat is not None), "sum": lat or 0, "merged": mg,
                               "lost": lost, "unmatched": um}, (cyc, inc, ref[cyc - 2])
                assert bins == (0 if lat is None else 1 << bin_of(lat))
            else:
                assert inc == dict.fromkeys(COUNTS, 0) and bins == 0
            if snap:
                closed = live
                live = {k: 0 for k in COUNTS} | {"bins": [0] * NBINS, "min": 2**32 - 1,
                                                  "max": 0}
            for k in COUNTS:
                live[k] += inc[k]
            if inc["count"]:
                live["min"] = min(live["min"], inc["sum"])
                live["max"] = max(live["max"], inc["sum"])
            await ctx.tick()
            if snap:
                assert (ctx.get(dut.min), ctx.get(dut.max)) == (closed["min"], closed["max"])
                seen.append(closed["count"])

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    lats = [r[0] for r in ref if r[0] is not None]
    assert len(lats) > 30 and any(seen)
    if merge:
        assert any(r[1] for r in ref)
    elif depth == 1:
        assert any(r[2] for r in ref)
    assert any(r[3] for r in ref) and 0 in lats


@pytest.mark.filterwarnings("ignore:.*created but never used")
@pytest.mark.parametrize("kw", [dict(depth=3), dict(depth=0), dict(nbins=1), dict(nbins=17)])
def test_bad_parameters(kw):
    with pytest.raises(ValueError):
        EventLatency(**kw)
    gc.collect()                  # its UnusedElaboratable warning here, where it is ignored
