# SPDX-License-Identifier: BSD-2-Clause
# CplOrder (cpl_order.py) alone in Migen's simulator: MSIOrder's counters driven by the bench
# (writes taken at random, leaving in order after random delays), completions of 1-3 beats
# offered at random into a consumer with random backpressure. Checks: a completion's first beat
# is taken only once every write taken before the cycle before it arrived has left; a completion
# arriving with nothing in flight is not held; a completion's beats are never held once its
# first beat went; none is lost; the counters. The whole SoC: the analyzer stream's producer
# index read by the host (sw/nicscope's stream tests).

import random

from migen import Signal
from migen.sim import run_simulation

from litex.soc.interconnect import stream
from litepcie.common import completion_layout

from litex_soc.pcie.cpl_order import CplOrder

W = 64
WIDTH = 16


def run(seed, cycles=3000, p_write=0.3, p_cpl=0.1, p_ready=0.7, p_leave=0.4):
    rng = random.Random(seed)
    cmp = stream.Endpoint(completion_layout(W))
    taken, left = Signal(WIDTH), Signal(WIDTH)
    dut = CplOrder(cmp, taken, left)
    consumer_ready = Signal()          # the packetizer's gate (tlp_slices.py)
    dut.comb += cmp.ready.eq(consumer_ready & dut.open)
    obs = dict(cpls=[], bad=[], gaps=[], held=0, cycles=0, idle_waits=[])

    def bench():
        n_taken = n_left = 0
        hist = []                          # (taken, left) at each cycle
        cur = None                         # [beats left, arrival cycle, first beat taken]
        pending = 0                        # completions still to offer
        for cyc in range(cycles + 400):
            drain = cyc >= cycles
            if not drain and rng.random() < p_cpl:
                pending += 1
            if cur is None and pending:
                cur = [rng.randint(1, 3), cyc, False]
                pending -= 1
            ready = drain or rng.random() < p_ready
            yield cmp.valid.eq(cur is not None)
            yield cmp.last.eq(cur is not None and cur[0] == 1)
            yield consumer_ready.eq(ready)
            yield taken.eq(n_taken % 2**WIDTH)
            yield left.eq(n_left % 2**WIDTH)
            hist.append((n_taken, n_left))
            yield
            # (after the tick: this cycle's inputs and their combinational results; the
            # handshake is at the next edge)
            opened = yield dut.open
            if cur is not None:
                if cur[2] and ready and not opened:
                    obs["gaps"].append(cyc)            # a later beat held
                if ready and opened:
                    if not cur[2]:
                        a = cur[1]
                        before = hist[a - 1][0] if a >= 1 else 0
                        obs["cpls"].append((a, cyc))
                        if n_left < before:
                            obs["bad"].append((a, cyc, before, n_left))
                        if a >= 1 and hist[a - 1][0] == hist[a - 1][1] and cyc != a \
                                and hist[a][0] == hist[a][1]:
                            obs["idle_waits"].append((a, cyc))
                    cur[2] = True
                    cur[0] -= 1
                    if cur[0] == 0:
                        cur = None
            # writes: taken at random, leaving in order
            if not drain and rng.random() < p_write:
                n_taken += 1
            if n_left < n_taken and (drain or rng.random() < p_leave):
                n_left += 1
        obs["left_over"] = pending + (cur is not None)
        obs["held"] = yield dut._held.status
        obs["cycles"] = yield dut._held_cycles.status

    run_simulation(dut, bench())
    return obs


def test_completions_after_writes():
    for seed in range(4):
        obs = run(seed)
        assert obs["cpls"] and obs["left_over"] == 0
        assert obs["bad"] == [], obs["bad"][:3]
        assert obs["gaps"] == [], obs["gaps"][:3]
        assert 0 < obs["held"] <= len(obs["cpls"]) and obs["cycles"] > 0


def test_no_writes_no_wait():
    """No write ever: every completion's first beat goes the cycle it arrives (consumer
    always ready), none held."""
    obs = run(5, cycles=800, p_write=0.0, p_ready=1.0)
    assert obs["cpls"] and obs["left_over"] == 0
    assert all(a == t for a, t in obs["cpls"]), obs["cpls"][:5]
    assert obs["held"] == 0 and obs["cycles"] == 0


def test_drained_not_held():
    """Writes in flight now and then: a completion arriving with none in flight the cycle
    before and the cycle it arrives goes at once."""
    obs = run(9, p_write=0.05, p_leave=0.9, p_ready=1.0)
    assert obs["bad"] == [] and obs["idle_waits"] == [], obs["idle_waits"][:3]
