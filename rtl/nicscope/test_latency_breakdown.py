# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of LatencyBreakdown (amaranth.sim): random request schedules with known hand-off
# cycles on every stream; every stage's sum, min, max and bins, the counts and the occupancy
# integral against the schedule.
import random

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.latency_breakdown import NSTAGES, STAGES, LatencyBreakdown, bin_of

NSLOTS = 8


def schedule(rng, n, nclasses, nslots=NSLOTS):
    """n requests in issue order: class, tag, t0..t7, completions [(first beat, length, bc)]."""
    reqs, rx_busy = [], set()
    class_free = [0] * nclasses     # the class's stream is free from this cycle
    issue_free, tx_free, hand_free = 0, 0, 0
    for k in range(n):
        c = rng.randrange(nclasses)
        t0 = class_free[c] + rng.randrange(4)
        t1 = t0 + rng.choice((0, 0, 1, 3))
        t2 = max(t1 + 1, issue_free) + rng.randrange(3)
        if k >= nslots:
            t2 = max(t2, reqs[k - nslots]["t"][7] + 1)
        t3 = t2 + rng.choice((0, 0, 2))
        t4 = max(t3 + 1, tx_free) + rng.randrange(4)
        held = {r["tag"] for r in reqs[max(0, k - nslots + 1):] if r["t"][6] >= t2}
        tag = rng.choice([t for t in range(nslots) if t not in held])
        ncpl, cpls = rng.choice((1, 1, 2, 3)), []
        start = t4 + rng.randrange(5, 40)
        for i in range(ncpl):
            while start in rx_busy or start + 1 in rx_busy:
                start += 1
            rx_busy |= {start, start + 1}
            cpls.append((start, 4, 4 * (ncpl - i)))      # one-dword completions
            start += 2 + rng.randrange(3)
        t5, t6 = cpls[0][0], cpls[-1][0] + 1
        t7 = max(t6 + 1, hand_free) + rng.randrange(3)
        class_free[c], issue_free, tx_free, hand_free = t3 + 1, t3 + 1, t4 + 1, t7 + 1
        reqs.append({"cls": c, "tag": tag, "t": [t0, t1, t2, t3, t4, t5, t6, t7], "cpls": cpls})
    return reqs


def drive(dut, reqs, tag_beat, bad_handoff=()):
    """Run the schedule, snapshot after it; return the counts, min and max."""
    end = max(r["t"][7] for r in reqs) + 5
    ev = {}
    for k, r in enumerate(reqs):
        t = r["t"]
        for cyc in range(t[0], t[3] + 1):
            ev.setdefault(cyc, []).append(("raised", r["cls"], cyc == t[3]))
        for cyc in range(t[1], t[3] + 1):
            ev.setdefault(cyc, []).append(("granted", r["cls"], cyc == t[3]))
        for cyc in range(t[2], t[3] + 1):
            ev.setdefault(cyc, []).append(("issue", r, cyc == t[3]))
        ev.setdefault(t[4], []).append(("tx", r, None))
        for first, length, bc in r["cpls"]:
            ev.setdefault(first, []).append(("rx", r, (1, 0, length, bc)))
            ev.setdefault(first + 1, []).append(("rx", r, (0, 1, length, bc)))
        ev.setdefault(t[7], []).append(("hand", r, k in bad_handoff))
    out = {}

    async def bench(ctx):
        for cyc in range(end + 1):
            sig = []
            for kind, a, b in ev.get(cyc, []):
                if kind in ("raised", "granted"):
                    hs = getattr(dut, kind)[a]
                    sig += [(hs.valid, 1), (hs.ready, int(b))]
                elif kind == "issue":
                    sig += [(dut.issue.valid, 1), (dut.issue.ready, int(b)),
                            (dut.issue.cls, a["cls"]), (dut.issue.tag, a["tag"])]
                elif kind == "tx":
                    sig += [(dut.tx.valid, 1), (dut.tx.ready, 1), (dut.tx.first, 1),
                            (dut.tx.fmt_type, 0x00), (dut.tx.tag, a["tag"])]
                elif kind == "rx":
                    first, last, length, bc = b
                    sig += [(dut.rx.valid, 1), (dut.rx.ready, 1), (dut.rx.first, first),
                            (dut.rx.last, last)]
                    if first:
                        sig += [(dut.rx.fmt_type, 0x4a), (dut.rx.length, length // 4),
                                (dut.rx.byte_count, bc)]
                    if first == (tag_beat == 0):
                        sig += [(dut.rx.tag, a["tag"])]
                elif kind == "hand":
                    sig += [(dut.handoff.valid, 1), (dut.handoff.tag, a["tag"] ^ int(b))]
            for s, v in sig:
                ctx.set(s, v)
            ctx.set(dut.snapshot, int(cyc == end))
            await ctx.tick()
            for s, _ in sig:
                ctx.set(s, 0)
        ctx.set(dut.snapshot, 0)
        await ctx.tick()
        # min and max: the closed window's, per class through the read port.
        for name in ("min", "max"):
            out[name] = []
            for c in range(dut.nclasses):
                ctx.set(dut.rd_cls, c)
                out[name].append(list(ctx.get(getattr(dut, f"rd_{name}"))))
        for name in ("sum", "bins", "count", "raises", "occupancy", "mismatch",
                     "reorder"):
            out[name] = ctx.get(getattr(dut, name))

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return out


def expected(reqs, nclasses, nbins):
    stages = {c: [[] for _ in range(NSTAGES)] for c in range(nclasses)}
    for r in reqs:
        t = r["t"]
        for s in range(7):
            stages[r["cls"]][s].append(t[s + 1] - t[s])
        stages[r["cls"]][7].append(t[7] - t[0])
    return stages


@pytest.mark.parametrize("tag_beat", [0, 1])
@pytest.mark.parametrize("seed", [1, 2])
def test_stages_match_the_schedule(tag_beat, seed):
    rng = random.Random(seed)
    nclasses, nbins = 3, 8
    reqs = schedule(rng, 60, nclasses)
    dut = LatencyBreakdown(nclasses=nclasses, nslots=NSLOTS, nbins=nbins, tag_beat=tag_beat)
    out = drive(dut, reqs, tag_beat)
    exp = expected(reqs, nclasses, nbins)
    for c in range(nclasses):
        n = sum(r["cls"] == c for r in reqs)
        assert out["count"][c] == n and out["raises"][c] == n
        for s, name in enumerate(STAGES):
            v = exp[c][s]
            assert out["sum"][c][s] == sum(v), (c, name)
            assert out["min"][c][s] == (min(v) if v else 2**32 - 1), (c, name)
            assert out["max"][c][s] == (max(v) if v else 0), (c, name)
            bins = [0] * nbins
            for x in v:
                bins[bin_of(x, nbins)] += 1
            assert list(out["bins"][c][s]) == bins, (c, name)
        # The stages add up to the total, and the occupancy integral equals it (whole requests).
        assert sum(out["sum"][c][s] for s in range(7)) == out["sum"][c][7]
        assert out["occupancy"][c] == out["sum"][c][7]
    assert out["mismatch"] == 0
    # Reorder distance: the requests issued before each whose last completion came after its.
    dist = [0] * NSLOTS
    for k, r in enumerate(reqs):
        dist[sum(q["t"][6] > r["t"][6] for q in reqs[:k])] += 1
    assert list(out["reorder"]) == dist and sum(dist[1:]) > 0
    # The schedule makes the stages vary: a stage that is always 0 would prove nothing.
    assert all(max(exp[c][s]) > 0 for c in range(nclasses) for s in range(NSTAGES) if exp[c][s]
               and STAGES[s] not in ("queue", "credit"))


def test_handoff_of_another_tag_is_a_mismatch():
    reqs = schedule(random.Random(3), 20, 2)
    out = drive(LatencyBreakdown(nclasses=2), reqs, 0, bad_handoff={4, 11})
    assert out["mismatch"] == 2
