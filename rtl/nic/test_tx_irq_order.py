# SPDX-License-Identifier: BSD-2-Clause
# TXIrqOrder (tx_irq_order.py) alone (amaranth.sim), against a Python model of TXQueueManager's
# writeback side (pending bits, one output register loaded round-robin as tx_queue_manager.py
# documents it, taken when the write port is ready): random completions, write-port
# back-pressure and coalescer decisions on 4 queues in 2 groups. Checks: every request comes
# when the writebacks of the completions its oldest unserved decision covers were taken; every
# decision is served in the end; requests keep coming under completions every cycle (no
# starvation); held counts the requests that waited. The datapath with it:
# test_nic_datapath.py.
import random

import pytest
from amaranth.sim import Simulator

from rtl.nic.tx_irq_order import TXIrqOrder
from rtl.verilator_lint import verilator_lint

NQ, NG = 4, 2


def run(seed, cycles=4000, p_cpl=0.1, p_ready=0.5, p_dec=0.05, p_irq_ready=0.8):
    rng = random.Random(seed)
    dut = TXIrqOrder(NQ, NG)
    obs = dict(decisions=[[] for _ in range(NG)], outs=[[] for _ in range(NG)], held=0)

    async def bench(ctx):
        pend = [0] * NQ
        reg = None                        # (queue, cons) in the writeback register
        last = NQ - 1                     # last queue loaded
        done = [0] * NQ                   # completions (cumulative)
        taken = [0] * NQ                  # cons of the last writeback taken
        for cyc in range(cycles + 400):
            busy = cyc < cycles
            ready = rng.random() < p_ready
            dec = [busy and rng.random() < p_dec for _ in range(NG)]
            irq_ready = [rng.random() < p_irq_ready for _ in range(NG)]
            ctx.set(dut.pend, sum(b << q for q, b in enumerate(pend)))
            ctx.set(dut.wb_valid, reg is not None)
            ctx.set(dut.wb_queue, reg[0] if reg else 0)
            ctx.set(dut.wb_ready, ready)
            ctx.set(dut.irq_in, sum(b << g for g, b in enumerate(dec)))
            ctx.set(dut.irq_ready, sum(b << g for g, b in enumerate(irq_ready)))
            out = ctx.get(dut.irq_valid)
            for g in range(NG):
                if dec[g]:
                    # a decision covers the completions of the cycles before it
                    obs["decisions"][g].append((cyc, [done[q] for q in range(g, NQ, NG)]))
                if out >> g & 1 and irq_ready[g]:
                    obs["outs"][g].append((cyc, [taken[q] for q in range(g, NQ, NG)]))
            # the writeback register: taken, then loaded (round-robin over pending queues)
            take = reg is not None and ready
            if take:
                taken[reg[0]] = reg[1]
            cpl = [busy and rng.random() < p_cpl for _ in range(NQ)]
            new_reg = reg if (reg is not None and not take) else None
            new_pend = list(pend)
            if reg is None or take:
                order = [(last + 1 + k) % NQ for k in range(NQ)]
                sel = next((q for q in order if pend[q]), None)
                if sel is not None:
                    new_reg = (sel, done[sel])
                    new_pend[sel] = 0
                    last = sel
            for q in range(NQ):
                if cpl[q]:
                    done[q] += 1
                    new_pend[q] = 1
            pend, reg = new_pend, new_reg
            await ctx.tick()
        obs["held"] = ctx.get(dut.held)

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return obs


def check(obs):
    """Each request taken covers the decisions it serves (TXIrqOrder: the one it was raised
    for, or those merged while the previous one waited and at its taking): every writeback
    of their completions was taken before it. Every decision is served in the end."""
    for g in range(NG):
        decs, outs = obs["decisions"][g], obs["outs"][g]
        assert decs and outs and outs[-1][0] > decs[-1][0], g
        at = {c: need for c, need in decs}
        served = {c: wb for c, wb in outs}
        cur, nxt = [], []
        for cyc in range(max(max(at), max(served)) + 1):
            if cyc in served:
                assert cur, (g, cyc)
                for c in cur:
                    assert all(w >= n for w, n in zip(served[cyc], at[c])), \
                        (g, cyc, served[cyc], c, at[c])
                cur, nxt = nxt + ([cyc] if cyc in at else []), []
            elif cyc in at:
                (nxt if cur else cur).append(cyc)
        assert not cur and not nxt, (g, cur, nxt)
        assert len(outs) <= len(decs)


@pytest.mark.parametrize("seed", range(3))
def test_requests_after_their_writebacks(seed):
    obs = run(seed)
    check(obs)
    assert 0 < obs["held"] <= sum(len(o) for o in obs["outs"])


def test_no_starvation_under_completions_every_cycle():
    """A completion on every queue every cycle, a slow write port, a decision every 20 cycles:
    the queues are always pending, yet the requests keep coming."""
    obs = run(5, cycles=3000, p_cpl=1.0, p_ready=0.2, p_dec=0.05, p_irq_ready=1.0)
    check(obs)
    for g in range(NG):
        outs = [c for c, _ in obs["outs"][g]]
        assert len(outs) > 40, g
        assert max(b - a for a, b in zip(outs, outs[1:])) < 200, g


def test_bad_params():
    for n, g in ((0, 1), (65, 1), (4, 0), (4, 5)):
        with pytest.raises(ValueError):
            TXIrqOrder(n, g)


@pytest.mark.parametrize("n,g", [(1, 1), (4, 2), (64, 8)])
def test_verilator_lint(n, g, tmp_path):
    verilator_lint(TXIrqOrder(n, g), "tx_irq_order", tmp_path)
