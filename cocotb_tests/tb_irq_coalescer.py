# SPDX-License-Identifier: BSD-2-Clause
#
# tb_irq_coalescer.py: cocotb testbench of the emitted Verilog of rtl/nic/irq_coalescer.py
# (IRQCoalescer), run by cocotb_tests/test_irq_coalescer.py.
#
# What it is: random configurations and random event streams (bursty and sparse phases, as the
# amaranth.sim test), each after a reset, against nicmodels/coalesce_model.py: its
# predicted interrupts with irq_ready and enable 1 (test `predicted`), and its cycle-stepped
# model with irq_ready random and enable 0 now and then (test `random_ready`); the docstring
# has the checks and the cycle convention.
# Interfaces: the core's ports event, enable, frames, usecs, abs_usecs, min_interval,
# tick_cycles, irq_valid, irq_ready, irqs, by_*, pending.
# Parameters (environment, JSON): IRQ_SEED, IRQ_CONFIGS (configurations per test),
# IRQ_CYCLES (cycles per configuration).

"""Checks and cycle convention.

predicted     irq_ready and enable 1: the accept cycles (irq_valid & irq_ready) and their reasons
              (the by_* counter that moved) must equal coalesce_model.predict_irq_reasons /
              predict_irqs of the event cycles.
random_ready  irq_ready random (phases of 1.0 .. 0.2) and enable 0 now and then: irq_valid every
              cycle and pending after every edge must equal the cycle-stepped
              CoalesceModel.step, so the accept cycles do too; the counters are compared at the
              end. (predict_irqs assumes irq_ready and enable 1, so it is the reference of the
              first test only.)

Convention (rtl/nic/test_irq_coalescer.py): cycle 0 is the first cycle after reset; an event in
cycle c is set with that cycle's irq_ready/enable and counts in `pending` from cycle c+1;
irq_valid is read in cycle c after its inputs are set (it depends on `enable`).
"""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from cocotb_tests.cocotb_run import env_params
from nicmodels.coalesce_model import (CONFIG, REASONS, CoalesceModel, predict_irq_reasons,
                                      predict_irqs, random_stim)
from rtl.nic.irq_coalescer import COUNTS


def first_diff(got, exp):
    """'got X expected Y at index i' for the first difference of two lists."""
    for i in range(max(len(got), len(exp))):
        g = got[i] if i < len(got) else None
        e = exp[i] if i < len(exp) else None
        if g != e:
            return f"got {g} expected {e} at index {i} (of {len(got)} and {len(exp)})"
    return "equal"


def random_config(rng):
    return dict(frames=rng.choice([0, 1, 2, 4, 7]), usecs=rng.choice([0, 1, 3, 10]),
                abs_usecs=rng.choice([0, 2, 5, 20]), min_interval=rng.choice([0, 1, 4, 9]),
                tick_cycles=rng.choice([0, 1, 2, 3]))


async def start(dut):
    cocotb.start_soon(Clock(dut.clk, 8, units="ns").start())
    await FallingEdge(dut.clk)


async def reset(dut, cfg):
    """Reset with the configuration applied; returns at the falling edge of cycle 0."""
    dut.rst.value = 1
    for sig in (dut.event, dut.irq_ready, dut.enable):
        sig.value = 0
    for name in CONFIG:
        getattr(dut, name).value = cfg[name]
    for _ in range(2):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0


def counters(dut):
    return {name: int(getattr(dut, name).value) for name in COUNTS + ("pending",)}


async def run_stim(dut, stim, model=None):
    """Drives stim [(event, irq_ready, enable)] from cycle 0; returns [(accept cycle, reason)]
    from the by_* counters. With `model` (a CoalesceModel) irq_valid and pending are compared
    every cycle."""
    accepts = []
    before = counters(dut)
    for cyc, (event, ready, enable) in enumerate(stim):
        dut.event.value = event
        dut.irq_ready.value = ready
        dut.enable.value = enable
        await ReadOnly()
        valid = int(dut.irq_valid.value)
        if model is not None:
            exp = model.step(event, ready, enable)
            assert valid == exp, f"cycle {cyc}: irq_valid {valid} != model {exp}"
        await FallingEdge(dut.clk)
        now = counters(dut)
        if model is not None:
            assert now["pending"] == model.pending, \
                f"cycle {cyc}: pending {now['pending']} != model {model.pending}"
        if valid and ready:
            changed = [r for r in REASONS if now[r] != before[r]]
            assert len(changed) == 1 and now["irqs"] == before["irqs"] + 1, \
                f"cycle {cyc}: accept with reasons {changed}"
            accepts.append((cyc, changed[0]))
        else:
            assert now["irqs"] == before["irqs"], f"cycle {cyc}: irqs moved without an accept"
        before = now
    return accepts


@cocotb.test()
async def predicted(dut):
    """irq_ready = enable = 1: accept cycles == predict_irqs(event cycles)."""
    seed, nconfigs, ncycles = (env_params(k) for k in ("IRQ_SEED", "IRQ_CONFIGS", "IRQ_CYCLES"))
    rng = random.Random(f"{seed} predicted")
    await start(dut)
    total = 0
    for k in range(nconfigs):
        cfg = random_config(rng)
        stim = [(ev, 1, 1) for ev, _, _ in random_stim(rng, ncycles // 2, bursty=True)
                + random_stim(rng, ncycles - ncycles // 2, bursty=False)]
        await reset(dut, cfg)
        got = await run_stim(dut, stim)
        events = [c for c, (ev, _, _) in enumerate(stim) if ev]
        exp = predict_irq_reasons(events, len(stim), **cfg)
        pred = predict_irqs(events, len(stim), **cfg)
        cycles = [c for c, _ in got]
        assert cycles == pred, f"config {k} {cfg}: accepts {first_diff(cycles, pred)}"
        assert got == exp, f"config {k} {cfg}: (cycle, reason) {first_diff(got, exp)}"
        total += len(got)
        dut._log.info("config %d %s: %d events, %d interrupts as predicted", k, cfg,
                      len(events), len(got))
    assert total >= 5 * nconfigs


@cocotb.test()
async def random_ready(dut):
    """irq_ready random, enable 0 now and then: cycle by cycle vs CoalesceModel.step."""
    seed, nconfigs, ncycles = (env_params(k) for k in ("IRQ_SEED", "IRQ_CONFIGS", "IRQ_CYCLES"))
    rng = random.Random(f"{seed} random_ready")
    await start(dut)
    held = 0
    for k in range(nconfigs):
        cfg = random_config(rng)
        stim = (random_stim(rng, ncycles // 2, bursty=True)
                + random_stim(rng, ncycles - ncycles // 2, bursty=False))
        await reset(dut, cfg)
        model = CoalesceModel(**cfg)
        got = await run_stim(dut, stim, model)
        assert counters(dut) == model.counts(), f"config {k} {cfg}: counters"
        assert len(got) == model.irqs
        held += sum(1 for c, (_, r, _) in enumerate(stim) if not r and c + 1 < len(stim))
        dut._log.info("config %d %s: %d interrupts as the model", k, cfg, len(got))
    assert held > 0
