# SPDX-License-Identifier: BSD-2-Clause
# MSIOrder (msi_order.py) alone in Migen's simulator: random write requests taken by a request
# stream, the same writes (and reads and completions, which do not count) leaving as TLPs of
# random length on a PHY stream with random backpressure, random interrupt pulses on two lines.
# Checks: every pulse comes out once every MWr taken up to its cycle has left (its last beat),
# none is lost (one out after the last pulse of a line), at most one out per pulse, and the
# counters. The whole SoC: sw/nicbench/test_nicbench_rr.py (rr --irq, the ordering errors).

import random
from collections import deque

from migen import Signal
from migen.sim import run_simulation

from litex.soc.interconnect import stream
from litepcie.common import phy_layout, request_layout

from litex_soc.pcie.msi_order import MSIOrder

W = 128


def run(seed, cycles=3000, p_req=0.3, p_irq=0.02, p_ready=0.6):
    rng = random.Random(seed)
    req = stream.Endpoint(request_layout(W))
    tx = stream.Endpoint(phy_layout(W))
    dut = MSIOrder(req, tx, 2)
    dut.req, dut.tx = req, tx
    obs = dict(pulses=[[], []], outs=[[], []], taken_at=[], left_at=[], delayed=0, cycles=0)

    def bench():
        pipe = deque()                       # TLPs taken, to leave in order: (is_mwr, beats)
        cur = None                           # [is_mwr, beats left, first]
        for cyc in range(cycles):
            # request stream: a one-beat request, a write or a read
            rv = rng.random() < p_req
            we = rng.random() < 0.7
            yield req.valid.eq(rv)
            yield req.we.eq(we)
            yield req.last.eq(1)
            yield req.ready.eq(1)
            # the PHY stream: the oldest TLP, beat by beat; a completion now and then
            if cur is None and pipe:
                cur = list(pipe.popleft()) + [True]
            if cur is None and rng.random() < 0.05:
                cur = [False, rng.randint(1, 3), True, 0x4A]
            tv = cur is not None
            tr = rng.random() < p_ready
            yield tx.valid.eq(tv)
            yield tx.ready.eq(tr)
            if tv:
                fmt = cur[3] if len(cur) > 3 else (0x40 if cur[0] else 0x00)
                yield tx.first.eq(cur[2])
                yield tx.last.eq(cur[1] == 1)
                yield tx.dat.eq(fmt << 24 if cur[2] else rng.getrandbits(32))
            irq = [rng.random() < p_irq for _ in range(2)]
            yield dut.irqs.eq(irq[0] | irq[1] << 1)
            yield
            out = yield dut.irqs_out
            for i in range(2):
                if irq[i]:
                    obs["pulses"][i].append((cyc, len(obs["taken_at"]) + (rv and we)))
                if out >> i & 1:
                    obs["outs"][i].append((cyc, len(obs["left_at"])))
            if rv:
                if we:
                    obs["taken_at"].append(cyc)
                pipe.append((we, rng.randint(1, 4) if we else 1))
            if tv and tr:
                if cur[1] == 1:
                    if cur[0]:
                        obs["left_at"].append(cyc)
                    cur = None
                else:
                    cur[1] -= 1
                    cur[2] = False
        for _ in range(200):                 # drain: the PHY takes everything
            yield dut.irqs.eq(0)
            yield req.valid.eq(0)
            if cur is None and pipe:
                cur = list(pipe.popleft()) + [True]
            yield tx.valid.eq(cur is not None)
            yield tx.ready.eq(1)
            if cur is not None:
                yield tx.first.eq(cur[2])
                yield tx.last.eq(cur[1] == 1)
                yield tx.dat.eq((0x40 if cur[0] else 0) << 24 if cur[2] else 0)
            yield
            out = yield dut.irqs_out
            for i in range(2):
                if out >> i & 1:
                    obs["outs"][i].append((cycles, len(obs["left_at"])))
            if cur is not None:
                if cur[1] == 1:
                    if cur[0]:
                        obs["left_at"].append(cycles)
                    cur = None
                else:
                    cur[1] -= 1
                    cur[2] = False
        obs["delayed"] = yield dut._delayed.status
        obs["cycles"] = yield dut._delay_cycles.status

    run_simulation(dut, bench())
    return obs


def check(obs):
    """Each out comes when the oldest pulse not yet served has all its writes out, and serves
    every pulse before it whose writes are; every pulse is served in the end."""
    for i in range(2):
        pulses, outs = obs["pulses"][i], obs["outs"][i]
        assert pulses and outs and outs[-1][0] > pulses[-1][0]
        assert len(outs) <= len(pulses)
        unserved = list(pulses)
        for cyc, left in outs:
            before = [p for p in unserved if p[0] < cyc]
            # (none: the second out of a merged pair whose writes the first already covered)
            assert not before or before[0][1] <= left, (i, cyc, left, before[:1])
            unserved = [p for p in unserved if not (p[0] < cyc and p[1] <= left)]
        assert not unserved, (i, unserved[:3])


def test_msi_after_writes():
    for seed in range(3):
        obs = run(seed)
        check(obs)
        assert 0 < obs["delayed"] <= sum(len(p) for p in obs["pulses"])
        assert obs["cycles"] > 0


def test_no_writes_pass_at_once():
    """No write in flight: every pulse comes out the next cycle, none counted as delayed."""
    obs = run(7, cycles=600, p_req=0.0)
    check(obs)
    assert obs["delayed"] == 0 and obs["cycles"] == 0
    for i in range(2):
        assert [c for c, _ in obs["outs"][i]] == [c + 1 for c, _ in obs["pulses"][i]]


def test_signals_exist():
    dut = MSIOrder(stream.Endpoint(request_layout(64)), stream.Endpoint(phy_layout(64)), 3)
    assert len(dut.irqs) == len(dut.irqs_out) == 3
    assert isinstance(dut.irqs, Signal)
