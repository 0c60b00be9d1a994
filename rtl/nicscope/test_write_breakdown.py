# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of WriteBreakdown (amaranth.sim): random schedules of multi-beat writes of several
# classes and of no class, with arbitration waits, packetizer backpressure, TX backpressure and
# MRd/completion TLPs between the MWrs on the PHY stream; every stage's sum, min, max and bins,
# the counts and the occupancy integral against the schedule; MWrs without a write counted.
import gc
import random
import warnings

import pytest
from amaranth import UnusedElaboratable
from amaranth.sim import Simulator

from rtl.nicscope.latency_breakdown import bin_of
from rtl.nicscope.write_breakdown import WR_NSTAGES, WR_STAGES, WriteBreakdown

NSLOTS = 4
OTHER = -1


def schedule(rng, n, nclasses, nslots=NSLOTS):
    """n writes in the order the packetizer takes them: class (OTHER: none), beats, t0..t3."""
    wrs = []
    class_free = [0] * nclasses     # the class's port is free from this cycle
    pk_free, tx_free = 0, 0         # the packetizer's input, the PHY's stream
    for k in range(n):
        c = rng.choice(list(range(nclasses)) + [OTHER])
        beats = rng.choice((1, 1, 2, 5))
        t0 = (class_free[c] if c != OTHER else pk_free) + rng.randrange(3)
        t1 = max(t0 + rng.choice((0, 0, 1, 3)), pk_free)
        t2 = t1 + rng.choice((0, 0, 1, 4))      # held off by the packetizer
        if k >= nslots:
            t2 = max(t2, wrs[k - nslots]["t"][3])
        # On the PHY in order; directly when nothing waits (t3 == t2) now and then.
        if (not wrs or wrs[-1]["t"][3] < t2) and rng.random() < 0.2:
            t3 = t2
        else:
            t3 = max(t2 + 1 + rng.randrange(3), tx_free)
        if c != OTHER:
            class_free[c] = t2 + beats
        pk_free, tx_free = t2 + beats, t3 + beats
        wrs.append({"cls": c, "beats": beats, "t": [t0, t1, t2, t3]})
    return wrs


def drive(dut, wrs, extra_mwr=()):
    """Run the schedule (plus MWrs with no write at the cycles extra_mwr), snapshot after it;
    return the counts, min and max."""
    end = max([w["t"][3] + w["beats"] for w in wrs] + list(extra_mwr)) + 5
    ev = {}
    tx_busy = set()
    for w in wrs:
        t, c = w["t"], w["cls"]
        for cyc in range(t[0], t[2] + 1):
            if c != OTHER:
                ev.setdefault(cyc, []).append(("raised", c, cyc == t[2]))
        for cyc in range(t[1], t[2] + 1):
            ev.setdefault(cyc, []).append(("granted", c, cyc == t[2]))
        for b in range(w["beats"]):
            ev.setdefault(t[3] + b, []).append(("tx", b == 0, 0x60 if b == 0 else 0))
            tx_busy.add(t[3] + b)
    for cyc in extra_mwr:
        ev.setdefault(cyc, []).append(("tx", True, 0x40))
        tx_busy.add(cyc)
    # Reads and completions between the writes; the PHY holding a first beat off now and then.
    rng = random.Random(len(wrs))
    for cyc in range(end):
        if cyc not in tx_busy:
            x = rng.random()
            if x < 0.3:
                ev.setdefault(cyc, []).append(("tx", True, rng.choice((0x00, 0x20, 0x4a, 0x0a))))
            elif x < 0.4:
                ev.setdefault(cyc, []).append(("tx_held", True, 0x60))
    out = {}

    async def bench(ctx):
        for cyc in range(end + 1):
            sig = []
            for kind, a, b in ev.get(cyc, []):
                if kind in ("raised", "granted"):
                    hs = dut.other if a == OTHER else getattr(dut, kind)[a]
                    sig += [(hs.valid, 1), (hs.ready, int(b))]
                elif kind in ("tx", "tx_held"):
                    sig += [(dut.tx.valid, 1), (dut.tx.ready, int(kind == "tx")),
                            (dut.tx.first, int(a)), (dut.tx.fmt_type, b)]
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
        for name in ("sum", "bins", "count", "raises", "occupancy", "mismatch"):
            out[name] = ctx.get(getattr(dut, name))

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_stages_match_the_schedule(seed):
    rng = random.Random(seed)
    nclasses, nbins = 3, 8
    wrs = schedule(rng, 80, nclasses)
    out = drive(WriteBreakdown(nclasses=nclasses, nslots=NSLOTS, nbins=nbins), wrs)
    for c in range(nclasses):
        mine = [w["t"] for w in wrs if w["cls"] == c]
        assert out["count"][c] == len(mine) and out["raises"][c] == len(mine)
        for s, name in enumerate(WR_STAGES):
            v = [t[s + 1] - t[s] for t in mine] if s < 3 else [t[3] - t[0] for t in mine]
            assert out["sum"][c][s] == sum(v), (c, name)
            assert out["min"][c][s] == (min(v) if v else 2**32 - 1), (c, name)
            assert out["max"][c][s] == (max(v) if v else 0), (c, name)
            bins = [0] * nbins
            for x in v:
                bins[bin_of(x, nbins)] += 1
            assert list(out["bins"][c][s]) == bins, (c, name)
            # Every stage varies, 0 included: a stage stuck at one value would prove nothing.
            assert max(v) > 0, (c, name)
            assert min(v) == 0 or name == "total", (c, name)
        assert sum(out["sum"][c][s] for s in range(3)) == out["sum"][c][3]
        assert out["occupancy"][c] == out["sum"][c][3]
    assert out["mismatch"] == 0


def test_mwr_without_a_write_is_a_mismatch():
    wrs = schedule(random.Random(4), 10, 1)
    gap = max(w["t"][3] + w["beats"] for w in wrs) + 3
    out = drive(WriteBreakdown(nclasses=1, nslots=NSLOTS), wrs, extra_mwr=(gap, gap + 2))
    assert out["mismatch"] == 2
    assert out["count"][0] == sum(w["cls"] == 0 for w in wrs)


def test_parameters_are_checked():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        for kw in (dict(nclasses=4), dict(nslots=6), dict(nbins=1)):
            with pytest.raises(ValueError):
                WriteBreakdown(**kw)
        gc.collect()
    assert WR_NSTAGES == 4
