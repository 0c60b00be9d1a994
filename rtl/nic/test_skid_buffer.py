# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of SkidBuffer (amaranth.sim): random valid and ready on both sides, every beat out
# once and in order, at full rate when never stalled; no combinational path from s to m or
# from m.ready to s.ready (outputs read before and after the inputs change within a cycle);
# Verilator lint.
import random

import pytest
from amaranth import unsigned
from amaranth.sim import Simulator

from rtl.nic.flat_ports import FlatShell
from rtl.nic.skid_buffer import SkidBuffer
from rtl.verilator_lint import verilator_lint


def run(p_valid, p_ready, n=400, seed=0):
    """Sends n beats through; returns (beats out in order, cycles with m.valid & m.ready)."""
    rng = random.Random(seed)
    dut = SkidBuffer(unsigned(16))
    out, moved = [], []

    async def bench(ctx):
        nxt, cyc = 0, 0
        while len(out) < n:
            sv = nxt < n and rng.random() < p_valid
            mr = rng.random() < p_ready
            # Registered outputs: the same whatever this cycle's inputs are.
            before = (ctx.get(dut.s.ready), ctx.get(dut.m.valid), ctx.get(dut.m.payload))
            ctx.set(dut.s.valid, sv)
            ctx.set(dut.s.payload, nxt)
            ctx.set(dut.m.ready, mr)
            assert before == (ctx.get(dut.s.ready), ctx.get(dut.m.valid),
                              ctx.get(dut.m.payload)), f"cycle {cyc}: a combinational path"
            if ctx.get(dut.m.valid) and mr:
                out.append(ctx.get(dut.m.payload))
                moved.append(cyc)
            if sv and ctx.get(dut.s.ready):
                nxt += 1
            await ctx.tick()
            cyc += 1
            assert cyc < 100 * n, "stuck"

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return out, moved


@pytest.mark.parametrize("p_valid, p_ready", [(1, 1), (0.5, 1), (1, 0.5), (0.7, 0.3),
                                              (0.3, 0.7)])
def test_order_and_no_loss(p_valid, p_ready):
    out, moved = run(p_valid, p_ready, seed=int(10 * p_valid + p_ready))
    assert out == list(range(400))
    if p_valid == 1 and p_ready == 1:
        assert moved == list(range(1, 401))             # a beat a cycle, one cycle of latency


def test_verilator_lint(tmp_path):
    verilator_lint(FlatShell(SkidBuffer(unsigned(16))), "skid_buffer", tmp_path)
