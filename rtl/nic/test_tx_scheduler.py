# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of TXScheduler (amaranth.sim): a cycle-accurate model (nicmodels/
# tx_scheduler_model.py, shared with cocotb_tests/tb_tx_scheduler.py) compared every cycle under
# random traffic, fairness of the three policies, edge cases, and lint of the emitted Verilog.
import gc
import random
import warnings

import pytest
from amaranth import UnusedElaboratable
from amaranth.sim import Simulator

from nicmodels.tx_scheduler_model import Model, RandomTraffic
from rtl.nic.tx_scheduler import NLEVELS, TXScheduler
from rtl.verilator_lint import verilator_lint


def simulate(dut, stim, check=None, model=None):
    """Drive `stim(cyc, valid, queue)` -> (active list, prio, weight, mode, ready) every cycle
    (None: stop), compare with the model every cycle and return the (cycle, queue) of the
    accepted grants. `check(cyc, valid, queue, stim values)` sees every cycle."""
    n = dut.nqueues
    model = model or Model(n)
    accepted = []

    async def bench(ctx):
        cyc = 0
        while True:
            valid, queue = ctx.get(dut.grant_valid), ctx.get(dut.grant_queue)
            assert (valid, queue) == model.outputs(), f"cycle {cyc}: dut {(valid, queue)} " \
                                                      f"!= model {model.outputs()}"
            assert ctx.get(dut.grants) == model.grants, f"cycle {cyc}"
            s = stim(cyc, valid, queue)
            if s is None:
                return
            active, prio, weight, mode, ready = s
            ctx.set(dut.active, sum(1 << i for i in range(n) if active[i]))
            ctx.set(dut.prio, prio)
            ctx.set(dut.weight, weight)
            ctx.set(dut.mode, mode)
            ctx.set(dut.grant_ready, ready)
            if check:
                check(cyc, valid, queue, s)
            if valid and ready:
                accepted.append((cyc, queue))
            model.step(active, prio, weight, mode, ready)
            await ctx.tick()
            cyc += 1

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return accepted


def fixed(n, active, prio=None, weight=None, mode=0, ready=1, ncycles=100):
    """A stimulus with constant inputs for ncycles cycles."""
    prio = prio or [0] * n
    weight = weight or [1] * n

    def stim(cyc, valid, queue):
        if cyc == ncycles:
            return None
        a = active(cyc) if callable(active) else active
        r = ready(cyc) if callable(ready) else ready
        return a, prio, weight, mode, r
    return stim


# -- random traffic against the model ---------------------------------------------------------

@pytest.mark.parametrize("n,ncycles,seed", [
    (1, 1500, 1), (3, 3000, 2), (4, 3000, 3), (17, 3000, 4), (64, 3000, 5),
])
def test_random_vs_model(n, ncycles, seed):
    rng = random.Random(seed)
    traffic = RandomTraffic(rng, n, ncycles)
    model = Model(n)
    accepted = simulate(TXScheduler(n), traffic, model=model)
    assert len(accepted) > ncycles // 10
    assert traffic.seen_modes == {0, 1, 2, 3}
    assert traffic.withdrawn > 0
    assert model.kinds_accepted == {"rr", "sp", "wrr", "hold"}
    if n > 1:
        assert len({q for _, q in accepted}) == n


@pytest.mark.parametrize("n,seed", [(4, 11), (17, 12)])
def test_queue_manager_traffic(n, seed):
    """Queues with descriptor counts, `active` = count > 0 computed from registers the
    acceptance updates (as the queue manager does): no grant is ever accepted for an empty
    queue, even with a ready TX engine, in every mode."""
    rng = random.Random(seed)
    count = [rng.randrange(3) for _ in range(n)]
    prio = [rng.randrange(3) for _ in range(n)]
    weight = [rng.randrange(5) for _ in range(n)]
    state = {"mode": 0}
    ncycles = 1500

    def stim(cyc, valid, queue):
        if cyc == ncycles:
            return None
        if rng.random() < 0.02:
            state["mode"] = rng.randrange(4)
        ready = int(rng.random() < 0.8)
        active = [int(c > 0) for c in count]
        if valid and ready:
            assert count[queue] > 0, f"cycle {cyc}: grant for empty queue {queue}"
            count[queue] -= 1               # the consumer moves on at this edge
        for i in range(n):                  # the host posts descriptors
            if rng.random() < 0.02:
                count[i] += rng.randrange(1, 4)
        return active, prio, weight, state["mode"], ready

    accepted = simulate(TXScheduler(n), stim)
    assert len(accepted) > 100


# -- fairness ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 3, 4, 17, 64])
def test_rr_fairness(n):
    """All queues always active: the grants go 0, 1, .., n-1, 0, .. even under back-pressure,
    so over n*k grants each queue gets exactly k."""
    k = 3
    rng = random.Random(n)
    ready = [int(rng.random() < 0.6) for _ in range(20 * n * k)]
    accepted = []

    def stim(cyc, valid, queue):
        if len(accepted) == n * k:
            return None
        if valid and ready[cyc]:
            accepted.append(queue)
        return [1] * n, [rng.randrange(NLEVELS)] * n, [5] * n, 0, ready[cyc]

    simulate(TXScheduler(n), stim)
    assert accepted == list(range(n)) * k
    assert all(accepted.count(q) == k for q in range(n))


def test_rr_full_rate():
    """With a ready TX engine a grant is accepted every other cycle (the bubble)."""
    acc = simulate(TXScheduler(4), fixed(4, [1, 1, 1, 1], ncycles=17))
    assert acc == [(1, 0), (3, 1), (5, 2), (7, 3), (9, 0), (11, 1), (13, 2), (15, 3)]


@pytest.mark.parametrize("ready_p", [1.0, 0.5])
def test_wrr_rounds(ready_p):
    """Weights (1, 2, 3, 4), all active: each round is 0, 1, 1, 2, 2, 2, 3, 3, 3, 3."""
    rng = random.Random(7)
    n, rounds = 4, 5
    acc = simulate(TXScheduler(n), fixed(n, [1] * n, weight=[1, 2, 3, 4], mode=2,
                                          ready=lambda c: int(rng.random() < ready_p),
                                          ncycles=500))
    queues = [q for _, q in acc]
    round_ = [0, 1, 1, 2, 2, 2, 3, 3, 3, 3]
    for r in range(rounds):
        assert queues[10 * r:10 * r + 10] == round_, f"round {r}: {queues[10 * r:10 * r + 10]}"


def test_sp_levels():
    """Queue 2 (level 7) takes every grant while active; then the level-2 queues 0, 1, 3 share
    round-robin; queue 4 (level 0) only gets grants once they are all inactive."""
    n = 5
    prio = [2, 2, 7, 2, 0]
    acc = []

    def active(cyc):
        done = len(acc)
        return [int(done < 16), int(done < 16), int(done < 6), int(done < 16), 1]

    def stim(cyc, valid, queue):
        if cyc == 60:
            return None
        s = fixed(n, active, prio=prio, mode=1)(cyc, valid, queue)
        if valid:
            acc.append(queue)               # ready is always 1
        return s

    simulate(TXScheduler(n), stim)
    assert acc[:6] == [2] * 6
    assert acc[6:16] == [0, 1, 3, 0, 1, 3, 0, 1, 3, 0]
    assert len(acc) == 30 and set(acc[16:]) == {4}


def test_sp_level_pointers():
    """Queue 0 (level 5) active for every other grant must not starve queue 2 (level 1): each
    level keeps its own round-robin pointer, so queues 1 and 2 still alternate."""
    n = 3
    acc = []

    def stim(cyc, valid, queue):
        if cyc == 80:
            return None
        if valid:
            acc.append(queue)
        hi = int(len(acc) % 2 == 0)         # queue 0 becomes active after each low grant
        return [hi, 1, 1], [5, 1, 1], [1] * n, 1, 1

    simulate(TXScheduler(n), stim)
    assert acc == [0, 1, 0, 2] * 10          # one global pointer would give 0, 1, 0, 1, ..


# -- edge cases -------------------------------------------------------------------------------

@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_single_queue(mode):
    """nqueues=1: the queue gets every grant, one every other cycle, while active."""
    def active(cyc):
        return [int(not 10 <= cyc < 15)]
    acc = simulate(TXScheduler(1), fixed(1, active, prio=[3], weight=[3], mode=mode,
                                          ncycles=24))
    assert acc == [(1, 0), (3, 0), (5, 0), (7, 0), (9, 0), (16, 0), (18, 0), (20, 0), (22, 0)]


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
@pytest.mark.parametrize("n", [1, 17, 64])
def test_all_inactive(n, mode):
    seen = []

    def check(cyc, valid, queue, s):
        seen.append((valid, queue))
    acc = simulate(TXScheduler(n), fixed(n, [0] * n, prio=[7] * n, weight=[9] * n, mode=mode,
                                          ncycles=30), check)
    assert acc == [] and set(seen) == {(0, 0)}


def test_deactivated_while_presented():
    """Without acceptance the decision is remade every cycle: a queue that goes inactive is
    withdrawn the next cycle; grant_queue holds while grant_valid is 0."""
    n = 4
    script = {0: [1, 0, 1, 0], 3: [0, 0, 1, 0], 5: [0, 0, 0, 0], 8: [1, 0, 0, 1]}
    seen = []
    cur = [0] * n

    def active(cyc):
        cur[:] = script.get(cyc, cur)
        return list(cur)

    def check(cyc, valid, queue, s):
        seen.append((valid, queue))
    acc = simulate(TXScheduler(n), fixed(n, active, ready=lambda c: int(c == 11),
                                          ncycles=14), check)
    assert seen == [(0, 0), (1, 0), (1, 0), (1, 0), (1, 2), (1, 2), (0, 2), (0, 2), (0, 2),
                    (1, 0), (1, 0), (1, 0), (0, 0), (1, 3)]
    assert acc == [(11, 0)]


def test_wrr_weight_zero_is_one():
    n = 3
    acc = simulate(TXScheduler(n), fixed(n, [1] * n, weight=[0, 0, 2], mode=2, ncycles=33))
    assert [q for _, q in acc] == [0, 1, 2, 2] * 4


def test_wrr_credit_dropped_when_inactive():
    """Queue 0 (weight 4) goes inactive for one cycle after two of its frames: its credit is
    dropped, queues 1 and 2 go next, then queue 0 gets a full 4 again."""
    n = 3
    # Queue 0 is accepted in cycles 1 and 3 and is inactive in cycle 4 (the bubble).
    acc = simulate(TXScheduler(n), fixed(n, lambda c: [int(c != 4), 1, 1], weight=[4, 1, 1],
                                          mode=2, ncycles=25))
    assert [q for _, q in acc] == [0, 0, 1, 2, 0, 0, 0, 0, 1, 2, 0, 0]


def test_mode3_is_round_robin():
    n = 4
    acc = simulate(TXScheduler(n), fixed(n, [1] * n, prio=[0, 1, 7, 2], weight=[3, 2, 1, 4],
                                          mode=3, ncycles=17))
    assert [q for _, q in acc] == [0, 1, 2, 3] * 2


def test_mode_switch_to_rr_drops_credit():
    """A WRR burst of queue 1 (weight 5) is cut when the mode changes to round-robin."""
    n = 3

    def stim(cyc, valid, queue):
        if cyc == 20:
            return None
        return [1] * n, [0] * n, [1, 5, 1], 2 if cyc < 6 else 0, 1

    acc = simulate(TXScheduler(n), stim)
    # WRR: 0 (cycle 1), 1 (3), 1 (5, chosen on credit); mode 0 from cycle 6: round-robin from 2.
    assert [q for _, q in acc] == [0, 1, 1, 2, 0, 1, 2, 0, 1, 2]


# -- parameters and Verilog -------------------------------------------------------------------

@pytest.mark.parametrize("nqueues", [0, 65, -1, 2.5, "4", True, None])
def test_bad_parameters(nqueues):
    with warnings.catch_warnings():       # the half-built core is never elaborated, of course
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ValueError):
            TXScheduler(nqueues)
        gc.collect()


@pytest.mark.parametrize("n", [1, 2, 17, 64])
def test_verilator_lint(n, tmp_path):
    verilator_lint(TXScheduler(n), f"tx_scheduler_{n}", tmp_path)
