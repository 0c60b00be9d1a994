# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of TraceStream (amaranth.sim): a random sample sequence streamed into a ring that a
# modelled host drains, fast or throttled, through a DMA port with random backpressure. Checks:
# every write is whole entries within MPS, the ring's end and 4 KiB; the entries the host reads
# are exactly the compressed sequence minus the lost ones, in order, each gap flagged where
# entries were lost; entries = stored + lost.
import random

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.trace_stream import TraceStream, entry_bytes

SW = 20                       # sample bits
BASE = 0x10000


def run(seed, data_width, size_log2, drain_every, ncycles=3000, fifo_depth=16, mps=128):
    rng = random.Random(seed)
    dut = TraceStream(SW, data_width=data_width, fifo_depth=fifo_depth, flush_cycles=8)
    eb = entry_bytes(SW)
    size = 1 << size_log2
    samples = []
    v = 0
    for _ in range(ncycles):
        if rng.random() < 0.3:
            v = rng.randrange(2**SW)
        samples.append(v)
    mem, writes, got = {}, [], []
    out = {}

    async def bench(ctx):
        ctx.set(dut.base, BASE)
        ctx.set(dut.size_log2, size_log2)
        ctx.set(dut.mps, mps)
        cons, cur, beats = 0, None, []
        for cyc in range(ncycles + 400):
            ctx.set(dut.enable, int(5 <= cyc < ncycles))
            ctx.set(dut.sample, samples[min(cyc, ncycles - 1)])
            ctx.set(dut.now, cyc)
            ready = rng.random() < 0.8
            ctx.set(dut.wr.ready, ready)
            if ctx.get(dut.wr.valid) and ready:
                p = ctx.get(dut.wr.p)
                if p["first"]:
                    cur = (p["addr"], p["len"])
                    beats = []
                beats.append(p["data"])
                if p["last"]:
                    addr, n = cur
                    assert len(beats) * data_width // 8 == n
                    writes.append(cur)
                    raw = b"".join(b.to_bytes(data_width // 8, "little") for b in beats)
                    for i in range(0, n, eb):
                        mem[addr + i] = int.from_bytes(raw[i:i + eb], "little")
            # The host: every drain_every cycles it reads prod and takes what is there.
            if cyc % drain_every == 0:
                prod = ctx.get(dut.prod)
                while cons != prod:
                    got.append(mem.pop(BASE + (cons % size) * eb))
                    cons += 1
                ctx.set(dut.cons, cons)
            await ctx.tick()
        while cons != ctx.get(dut.prod):            # what the last drain left
            got.append(mem.pop(BASE + (cons % size) * eb))
            cons += 1
        out.update(entries=ctx.get(dut.entries), lost=ctx.get(dut.lost),
                   prod=ctx.get(dut.prod), busy=ctx.get(dut.busy))

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    # Writes: whole entries, within MPS, never across 4 KiB or the ring's end.
    for addr, n in writes:
        assert n % eb == 0 and 0 < n <= mps
        assert addr // 4096 == (addr + n - 1) // 4096
        assert BASE <= addr and addr + n <= BASE + size * eb
    # The expected entries: the first enabled cycle and every change, each with its cycle.
    exp = [(samples[t], t) for t in range(5, ncycles)
           if t == 5 or samples[t] != samples[t - 1]]
    assert out["entries"] == len(exp) and out["busy"] == 0
    assert out["prod"] == len(got) == out["entries"] - out["lost"]
    dec = [(e & (2**SW - 1), (e >> SW) & 0xFFFFFFFF, e >> (eb * 8 - 1)) for e in got]
    # Every entry read is an expected one, in order; a gap flag exactly where some were lost.
    j = 0
    for s, t, gap in dec:
        k = next(i for i in range(j, len(exp)) if exp[i][1] == t)
        assert exp[k][0] == s
        assert gap == (k != j), (t, k, j)
        j = k + 1
    return out, writes


@pytest.mark.parametrize("data_width", [64, 128])
def test_fast_host_loses_nothing(data_width):
    out, writes = run(1, data_width, size_log2=6, drain_every=4, fifo_depth=64)
    assert out["lost"] == 0 and out["entries"] > 500 and len(writes) > 20


@pytest.mark.parametrize("data_width", [64, 128])
def test_throttled_host_counts_every_loss(data_width):
    out, _ = run(2, data_width, size_log2=4, drain_every=300)
    assert out["lost"] > 100


@pytest.mark.parametrize("data_width", [64, 128])
@pytest.mark.parametrize("off", [4, 16, 0x800])
def test_misaligned_base_refused(data_width, off):
    """Issue 37: a ring base that is not 4 KiB aligned when enable rises refuses the stream:
    no write at all, refused 1, refusals + 1, no entry due. Enabled again with an aligned base,
    it streams (refused 0). A base made misaligned under a running stream starts no write."""
    dut = TraceStream(SW, data_width=data_width, fifo_depth=16, flush_cycles=8)
    writes, seen = [], {}

    async def bench(ctx):
        ctx.set(dut.size_log2, 6)
        ctx.set(dut.mps, 128)
        ctx.set(dut.wr.ready, 1)
        cons = 0
        for cyc in range(1200):
            ctx.set(dut.base, BASE + off if cyc < 300 or cyc >= 800 else BASE)
            ctx.set(dut.enable, int(5 <= cyc < 250 or 320 <= cyc < 1100))
            ctx.set(dut.sample, cyc // 3)
            ctx.set(dut.now, cyc)
            if ctx.get(dut.wr.valid) and ctx.get(dut.wr.p.first):
                writes.append((cyc, ctx.get(dut.wr.p.addr)))
            cons = ctx.get(dut.prod)
            ctx.set(dut.cons, cons)
            if cyc in (240, 700, 1150):
                seen[cyc] = {n: ctx.get(getattr(dut, n))
                             for n in ("refused", "refusals", "entries", "prod", "busy")}
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    early = [w for w in writes if w[0] < 300]
    assert early == [], f"writes {early[:3]} to a ring {off:#x} bytes off 4 KiB"
    assert seen[240] == dict(refused=1, refusals=1, entries=0, prod=0, busy=0)
    assert seen[700]["refused"] == 0 and seen[700]["refusals"] == 1
    assert seen[700]["prod"] > 50
    assert all(BASE <= a < BASE + 64 * entry_bytes(SW) for _, a in writes), writes
    late = [w for w in writes if w[0] > 800]
    assert late == [], f"writes {late[:3]} after the base became misaligned"
    assert seen[1150]["busy"] == 1 and seen[1150]["refusals"] == 1
