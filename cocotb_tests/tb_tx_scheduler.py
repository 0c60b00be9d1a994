# SPDX-License-Identifier: BSD-2-Clause
#
# tb_tx_scheduler.py: cocotb testbench of the emitted Verilog of rtl/nic/tx_scheduler.py
# (TXScheduler), run by cocotb_tests/test_tx_scheduler.py.
#
# What it is: drives `active`, `prio` (flat, queue i at bits 3i..3i+2), `weight` (flat, queue i
# at 8i..8i+7), `mode` and `grant_ready` every cycle and compares grant_valid, grant_queue and
# `grants` every cycle with the cycle-accurate reference model of
# nicmodels/tx_scheduler_model.py (Model), and the list of accepted grants (cycle, queue) at the
# end. Stimulus: one test per policy (mode 0 round-robin, 1 strict priority, 2 WRR) with random
# `active` patterns, priorities, weights and grant_ready, and one with the mixed random traffic
# of the amaranth.sim test (RandomTraffic: mode switches, prio/weight changes, all-on/all-off).
# Timing convention: cycle t runs from rising edge to rising edge; at its falling edge the
# outputs are read and the inputs of cycle t set, and the rising edge that ends it samples them
# (as the amaranth.sim test's ctx.get / ctx.set / ctx.tick).
# Parameters (environment, JSON): SCHED_N (nqueues of the emitted core), SCHED_SEED, SCHED_CYCLES.

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from cocotb_tests.cocotb_run import env_params
from nicmodels.tx_scheduler_model import Model, RandomTraffic
from rtl.nic.tx_scheduler import NLEVELS, PRIO_BITS, WEIGHT_BITS


def pack(values, bits):
    return sum(v << (bits * i) for i, v in enumerate(values))


async def reset(dut):
    cocotb.start_soon(Clock(dut.clk, 8, units="ns").start())
    dut.rst.value = 1
    for sig in (dut.active, dut.prio, dut.weight, dut.mode, dut.grant_ready):
        sig.value = 0
    for _ in range(3):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0


async def run_stim(dut, n, stim):
    """Runs stim(cyc, valid, queue) -> (active, prio, weight, mode, ready) or None (stop)
    against the model; returns the accepted grants [(cycle, queue)]."""
    model = Model(n)
    accepted, expected = [], []
    cyc = 0
    while True:                       # at the falling edge in the middle of cycle cyc
        valid, queue = int(dut.grant_valid.value), int(dut.grant_queue.value)
        assert (valid, queue) == model.outputs(), \
            f"cycle {cyc}: dut (valid, queue) {(valid, queue)} != model {model.outputs()}"
        assert int(dut.grants.value) == model.grants, f"cycle {cyc}: grants"
        s = stim(cyc, valid, queue)
        if s is None:
            break
        active, prio, weight, mode, ready = s
        dut.active.value = pack(active, 1)
        dut.prio.value = pack(prio, PRIO_BITS)
        dut.weight.value = pack(weight, WEIGHT_BITS)
        dut.mode.value = mode
        dut.grant_ready.value = ready
        await ReadOnly()
        # grant_* are registers: this cycle's inputs must not change them.
        assert (int(dut.grant_valid.value), int(dut.grant_queue.value)) == (valid, queue), \
            f"cycle {cyc}: grant changed combinationally"
        if valid and ready:
            accepted.append((cyc, queue))
        if model.valid and ready:
            expected.append((cyc, model.queue))
        model.step(active, prio, weight, mode, ready)
        await FallingEdge(dut.clk)
        cyc += 1
    assert accepted == expected
    return accepted, model


class PolicyTraffic:
    """One policy; `active` bits toggle at a rate that changes now and then (incl. all off and
    all on); priorities from a few levels and weights 0..5 change now and then; grant_ready
    random with a changing probability."""

    def __init__(self, rng, n, ncycles, mode):
        self.rng, self.n, self.ncycles, self.mode = rng, n, ncycles, mode
        self.active = [rng.randint(0, 1) for _ in range(n)]
        self.prio = [rng.randrange(3) for _ in range(n)]
        self.weight = [rng.randrange(6) for _ in range(n)]
        self.p_toggle, self.p_ready = 0.1, 0.7

    def __call__(self, cyc, valid, queue):
        rng, n = self.rng, self.n
        if cyc == self.ncycles:
            return None
        if rng.random() < 0.03:
            self.p_toggle = rng.choice((0.0, 0.02, 0.1, 0.4))
            self.p_ready = rng.choice((1.0, 0.8, 0.5, 0.2))
        if rng.random() < 0.01:
            self.prio = [rng.choice((0, 3, NLEVELS - 1)) for _ in range(n)]
        if rng.random() < 0.01:
            self.weight[rng.randrange(n)] = rng.randrange(6)
        r = rng.random()
        if r < 0.01:
            self.active = [0] * n
        elif r < 0.03:
            self.active = [1] * n
        else:
            self.active = [a ^ (rng.random() < self.p_toggle) for a in self.active]
        return (list(self.active), list(self.prio), list(self.weight), self.mode,
                int(rng.random() < self.p_ready))


async def policy_test(dut, mode):
    n, seed, ncycles = (env_params(k) for k in ("SCHED_N", "SCHED_SEED", "SCHED_CYCLES"))
    await reset(dut)
    rng = random.Random(f"{seed} {mode}")
    accepted, model = await run_stim(dut, n, PolicyTraffic(rng, n, ncycles, mode))
    assert len(accepted) > ncycles // 10, len(accepted)
    assert len({q for _, q in accepted}) == n
    kinds = {0: {"rr"}, 1: {"sp"}, 2: {"wrr", "hold"}}[mode]
    assert model.kinds_accepted == kinds, model.kinds_accepted
    dut._log.info("mode %d: %d grants accepted over %d cycles, all as the model", mode,
                  len(accepted), ncycles)


@cocotb.test()
async def round_robin(dut):
    await policy_test(dut, 0)


@cocotb.test()
async def strict_priority(dut):
    await policy_test(dut, 1)


@cocotb.test()
async def weighted_round_robin(dut):
    await policy_test(dut, 2)


@cocotb.test()
async def mixed_modes(dut):
    n, seed, ncycles = (env_params(k) for k in ("SCHED_N", "SCHED_SEED", "SCHED_CYCLES"))
    await reset(dut)
    traffic = RandomTraffic(random.Random(seed), n, ncycles)
    accepted, model = await run_stim(dut, n, traffic)
    assert traffic.seen_modes == {0, 1, 2, 3}
    assert model.kinds_accepted == {"rr", "sp", "wrr", "hold"}
    assert len(accepted) > ncycles // 10
