# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of DMAReadArbiter (amaranth.sim): random clients issue random read requests and
# take completions under random back-pressure; a host model answers in request order after a
# random latency (random gaps, random errors on the last beat). Every client must get exactly
# its own data, in its own request order; the master's requests must be stable while not taken
# and never more than `depth` outstanding.
import gc
import random
from collections import deque

import pytest
from amaranth.sim import Simulator

from rtl.nic.dma_read_arbiter import DMAReadArbiter
from rtl.verilator_lint import verilator_lint


def mem_beat(addr, nbytes):
    """Host memory contents: a fixed function of the address."""
    return int.from_bytes(bytes(((a * 2654435761) >> 11) & 0xFF
                                for a in range(addr, addr + nbytes)), "little")


def simulate(rng, nports=3, data_width=128, depth=16, nreqs=60, p_req=0.5, p_rdy=0.7,
             p_cpl=0.8, p_cready=0.7, max_lat=30, max_cycles=100_000):
    dut = DMAReadArbiter(nports=nports, data_width=data_width, depth=depth)
    B = data_width // 8
    res = dict(cycles=0, max_out=0)

    async def bench(ctx):
        todo = [deque((rng.randrange(1 << 40) * 16, 16 * rng.randint(1, 16))
                      for _ in range(nreqs)) for _ in range(nports)]
        expected = [deque() for _ in range(nports)]   # per client: beats (data, last, err)
        got_reqs = [deque() for _ in range(nports)]   # requests taken, to build expectations
        cur = [None] * nports
        host = deque()                                # (ready cycle, data, last, err)
        t_last = 0
        prev = None                                   # master request presented, not taken
        for cyc in range(max_cycles):
            for i in range(nports):
                if cur[i] is None and todo[i] and rng.random() < p_req:
                    cur[i] = todo[i].popleft()
                ctx.set(dut.s[i].req.valid, cur[i] is not None)
                if cur[i] is not None:
                    ctx.set(dut.s[i].req.p.addr, cur[i][0])
                    ctx.set(dut.s[i].req.p.len, cur[i][1])
                ctx.set(dut.s[i].cpl.ready, rng.random() < p_cready)
            rdy = rng.random() < p_rdy
            ctx.set(dut.rd.req.ready, rdy)
            cv = bool(host) and host[0][0] <= cyc and rng.random() < p_cpl
            ctx.set(dut.rd.cpl.valid, cv)
            if cv:
                _, d, last, err = host[0]
                ctx.set(dut.rd.cpl.p.data, d)
                ctx.set(dut.rd.cpl.p.last, last)
                ctx.set(dut.rd.cpl.p.err, err)
            else:
                ctx.set(dut.rd.cpl.p.data, rng.getrandbits(data_width))
                ctx.set(dut.rd.cpl.p.last, rng.random() < 0.5)
            mv = ctx.get(dut.rd.req.valid)
            if prev is not None:
                assert mv and (ctx.get(dut.rd.req.p.addr), ctx.get(dut.rd.req.p.len)) == prev, \
                    f"cycle {cyc}: request changed before taken"
            prev = None
            taken_by = [i for i in range(nports) if ctx.get(dut.s[i].req.ready) and
                        cur[i] is not None]
            if mv and rdy:
                assert len(taken_by) == 1
                i = taken_by[0]
                addr, ln = ctx.get(dut.rd.req.p.addr), ctx.get(dut.rd.req.p.len)
                assert (addr, ln) == cur[i]
                cur[i] = None
                nb = ln * 8 // data_width
                err = rng.random() < 0.2
                t_last = max(t_last, cyc + 1 + rng.randrange(max_lat))
                for k in range(nb):
                    beat = (t_last, mem_beat(addr + k * B, B), int(k == nb - 1),
                            int(err and k == nb - 1))
                    host.append(beat)
                    expected[i].append(beat[1:])
                got_reqs[i].append((addr, ln))
            else:
                assert not taken_by, f"cycle {cyc}: ready to a client without acceptance"
                if mv:
                    prev = (ctx.get(dut.rd.req.p.addr), ctx.get(dut.rd.req.p.len))
            if cv and ctx.get(dut.rd.cpl.ready):
                host.popleft()
            for i in range(nports):
                if ctx.get(dut.s[i].cpl.valid):
                    assert cv
                    if ctx.get(dut.s[i].cpl.ready):
                        beat = (ctx.get(dut.s[i].cpl.p.data),
                                ctx.get(dut.s[i].cpl.p.last),
                                ctx.get(dut.s[i].cpl.p.err))
                        assert expected[i], f"cycle {cyc}: client {i}: unexpected beat"
                        assert beat == expected[i].popleft(), f"cycle {cyc}: client {i}"
            out = ctx.get(dut.outstanding)
            assert out <= depth
            res["max_out"] = max(res["max_out"], out)
            await ctx.tick()
            if not any(todo) and all(c is None for c in cur) and not host:
                break
        else:
            raise AssertionError("timeout")
        res["cycles"] = cyc
        assert all(not e for e in expected)
        assert [len(g) for g in got_reqs] == [nreqs] * nports
        assert ctx.get(dut.outstanding) == 0
        assert ctx.get(dut.requests) == nreqs * nports

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return res


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("data_width", [64, 128])
def test_random(seed, data_width):
    rng = random.Random(seed * 7 + data_width)
    nports = 1 + seed % 4
    simulate(rng, nports=nports, data_width=data_width)


def test_full_stalls():
    """depth 2, long latency, greedy clients: the FIFO fills and requests stall."""
    res = simulate(random.Random(11), nports=2, depth=2, p_req=1.0, p_rdy=1.0, max_lat=60,
                   nreqs=40)
    assert res["max_out"] == 2


def test_fair():
    """Always-ready master and greedy clients: strict alternation 0, 1, 2, 0, 1, 2, ..."""
    dut = DMAReadArbiter(nports=3, data_width=128, depth=1024)
    order = []

    async def bench(ctx):
        ctx.set(dut.rd.req.ready, 1)
        for i in range(3):
            ctx.set(dut.s[i].req.valid, 1)
            ctx.set(dut.s[i].req.p.addr, 16 * i)
            ctx.set(dut.s[i].req.p.len, 16)
        for _ in range(12):
            order.append(ctx.get(dut.rd.req.p.addr) // 16)
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert order == [0, 1, 2] * 4


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_bad_params():
    for kw in (dict(nports=0), dict(nports=17), dict(data_width=32), dict(depth=3),
               dict(depth=1), dict(nports=True)):
        with pytest.raises(ValueError):
            DMAReadArbiter(**kw)
    gc.collect()


@pytest.mark.parametrize("nports", [1, 2, 3])
def test_verilator_lint(nports, tmp_path):
    verilator_lint(DMAReadArbiter(nports=nports), "dma_read_arbiter", tmp_path)
