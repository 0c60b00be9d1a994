# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of TXQueueManager (amaranth.sim): a cycle-accurate model compared every cycle under
# random driver/scheduler/DMA traffic with invariant checks, hand-worked cases with their cycle
# numbers, the manager wired to the real TXScheduler, and lint of the emitted Verilog.
import gc
import random
import warnings

import pytest
from amaranth import Elaboratable, Module, UnusedElaboratable
from amaranth.sim import Simulator
from amaranth.utils import ceil_log2

from rtl.nic.flat_ports import FlatShell, flat_values
from rtl.nic.tx_queue_manager import COUNTS, TXQueueManager
from rtl.nic.tx_scheduler import TXScheduler
from rtl.verilator_lint import verilator_lint


INPUTS = ("cfg_valid", "cfg_queue", "cfg_size_log2", "cfg_enable", "cfg_limit",
          "db_valid", "db_queue", "db_index", "grant_valid", "grant_queue", "job_ready",
          "cpl_valid", "cpl_queue", "cpl_count", "wb_ready")
OUTPUTS = ("active", "drained", "db_range_err", "job_valid", "job_queue", "job_index",
           "job_count", "wb_valid", "wb_queue", "wb_cons") + COUNTS
STATE = ("size_log2", "enable", "limit", "prod", "fetch", "in_flight")


def held(inp):
    """The queues whose grant the core holds back this cycle: a doorbell's, a config write's."""
    return (inp.get("db_queue", 0) if inp.get("db_valid") else None,
            inp.get("cfg_queue", 0) if inp.get("cfg_valid") else None)


class Model:
    """The manager's registers, advanced one clock edge at a time (see tx_queue_manager.py)."""

    def __init__(self, n, max_batch=8):
        self.n, self.max_batch = n, max_batch
        self.qbits = max(1, ceil_log2(n))
        self.size_log2, self.enable, self.limit = [0] * n, [0] * n, [1] * n
        self.prod, self.fetch, self.in_flight = [0] * n, [0] * n, [0] * n
        self.db_err, self.pend = [0] * n, [0] * n
        self.wb_ptr = 0
        self.job = (0, 0, 0, 0)                 # valid, queue, index, count
        # The core's registered job counts (from the cycle before) and which are stale.
        self.count_r, self.stale = [0] * n, [1] * n
        self.wb = (0, 0, 0)                     # valid, queue, cons
        self.counts = dict.fromkeys(COUNTS, 0)
        self.events = {}                        # what the last step did (for coverage)

    def size(self, q):
        return 1 << self.size_log2[q]

    def cons(self, q):
        return (self.fetch[q] - self.in_flight[q]) % self.size(q)

    def waiting(self, q):
        return (self.prod[q] - self.fetch[q]) % self.size(q)

    def is_active(self, q):
        return q < self.n and self.enable[q] and self.prod[q] != self.fetch[q] and \
            self.in_flight[q] < self.limit[q]

    def job_count(self, q):
        return min(self.max_batch, self.waiting(q), self.size(q) - self.fetch[q],
                   self.limit[q] - self.in_flight[q])

    def grant_ready(self, grant_queue, job_ready, db=None, cfg=None):
        """db, cfg: the queue of a doorbell, a config write in the cycle, or None."""
        return int(bool(self.is_active(grant_queue) and not self.stale[grant_queue] and
                        (not self.job[0] or job_ready) and grant_queue not in (db, cfg)))

    def outputs(self):
        n = self.n
        drained = [not self.enable[q] and self.in_flight[q] == 0 and not self.pend[q] and
                   not (self.wb[0] and self.wb[1] == q) for q in range(n)]
        return {
            "active": sum(1 << q for q in range(n) if self.is_active(q)),
            "drained": sum(1 << q for q in range(n) if drained[q]),
            "db_range_err": sum(b << q for q, b in enumerate(self.db_err)),
            **dict(zip(("job_valid", "job_queue", "job_index", "job_count"), self.job)),
            **dict(zip(("wb_valid", "wb_queue", "wb_cons"), self.wb)),
            **{k: v % 2**32 for k, v in self.counts.items()},
        }

    def state(self, q):
        return {name: getattr(self, name)[q] for name in STATE}

    def step(self, inp):
        i = {k: inp.get(k, 0) for k in INPUTS}
        n, c, ev = self.n, self.counts, {}
        self.events = ev
        old_enable, old_inf = list(self.enable), list(self.in_flight)
        drained = [self.outputs()["drained"] >> q & 1 for q in range(n)]
        cpl_set = None
        was_active = [self.is_active(q) for q in range(n)]
        counts_now = [self.job_count(q) for q in range(n)]
        changed = set()                         # queues with a job, doorbell or config write

        # Writeback register (from the registers before this edge).
        if not self.wb[0] or i["wb_ready"]:
            order = list(range(self.wb_ptr, n)) + list(range(self.wb_ptr))
            pending = [q for q in order if self.pend[q]]
            if pending:
                q = pending[0]
                self.wb = (1, q, self.cons(q))
                self.pend[q] = 0
                self.wb_ptr = (q + 1) % n
            else:
                self.wb = (0,) + self.wb[1:]

        # Grant -> job; the job stream.
        jv, jq, ji, jc = self.job
        if jv and i["job_ready"]:
            c["jobs"] += 1
            c["descs_fetched"] += jc
        g = i["grant_queue"]
        if i["grant_valid"] and self.grant_ready(g, i["job_ready"], *held(i)):
            cnt = self.count_r[g]
            assert cnt <= self.job_count(g)
            changed.add(g)
            ev["job"] = (g, self.fetch[g], cnt)
            ev["job_by_wrap"] = cnt == self.size(g) - self.fetch[g] < self.waiting(g)
            ev["job_by_limit"] = cnt == self.limit[g] - self.in_flight[g] < self.max_batch
            self.job = (1, g, self.fetch[g], cnt)
            self.fetch[g] = (self.fetch[g] + cnt) % self.size(g)
            self.in_flight[g] += cnt
        elif i["job_ready"]:
            self.job = (0, jq, ji, jc)

        # Doorbell.
        if i["db_valid"]:
            q, idx = i["db_queue"], i["db_index"]
            if q >= n:
                c["err_db_range"] += 1
            elif not self.enable[q]:
                c["err_db_disabled"] += 1
            elif idx >= self.size(q):
                c["err_db_range"] += 1
                self.db_err[q] = 1
            else:
                ev["db_noop"] = idx == self.prod[q]
                changed.add(q)
                self.prod[q] = idx
                c["doorbells"] += 1

        # Completion.
        if i["cpl_valid"]:
            q, cnt = i["cpl_queue"], i["cpl_count"]
            if q < n and cnt <= old_inf[q]:
                self.in_flight[q] -= cnt
                c["descs_completed"] += cnt
                if cnt:
                    cpl_set = q
                    ev["coalesced"] = self.pend[q] == 1
            else:
                c["err_cpl"] += 1

        # Config.
        if i["cfg_valid"]:
            q, lg, en, lim = (i["cfg_queue"], i["cfg_size_log2"], i["cfg_enable"],
                              i["cfg_limit"])
            if q >= n or lg > 12 or lim > 4096:
                c["err_cfg"] += 1
            elif drained[q]:
                ev["reset"] = q
                changed.add(q)
                self.size_log2[q], self.enable[q], self.limit[q] = lg, en, max(lim, 1)
                self.prod[q] = self.fetch[q] = self.in_flight[q] = 0
                self.db_err[q] = 0
            elif lg != self.size_log2[q] or (not old_enable[q] and en):
                c["err_cfg"] += 1
            else:
                ev["cfg_update"] = q
                changed.add(q)
                self.enable[q], self.limit[q] = en, max(lim, 1)

        if cpl_set is not None:
            self.pend[cpl_set] = 1
        self.count_r = counts_now
        self.stale = [int(q in changed or not was_active[q]) for q in range(n)]


def simulate(dut, stim, model=None, check=None, state_every=1):
    """Drive `stim(cyc, outs, model)` -> dict of inputs (missing: 0; None: stop) every cycle,
    comparing the outputs, grant_ready and (every state_every cycles) the per-queue registers
    with the model. `outs` are the cycle's registered outputs (the model's, which the core's
    must equal). `check(cyc, outs, inp, model)` sees every cycle before the edge, with the
    core's grant_ready in inp. Returns [(cycle, outputs, inputs)].

    The stimulus runs as a process, not a testbench: its input changes settle the design once
    per cycle, at the clock edge, where the core's values of the cycle are sampled."""
    n = dut.nqueues
    model = model or Model(n, dut.max_batch)
    trace = []
    ports = flat_values(dut)                    # the model's names: job_valid, cpl_count, ..
    sampled = [ports[k] for k in OUTPUTS] + [dut.grant_ready]
    state_sigs = [getattr(dut, f"q_{name}")[q] for q in range(n) for name in STATE]
    done = []

    async def bench(ctx):
        cyc, prev = 0, dict.fromkeys(INPUTS, 0)
        while True:
            outs = model.outputs()
            inp = stim(cyc, outs, model)
            if inp is None:
                done.append(cyc)
                return
            for k in INPUTS:
                v = inp.get(k, 0)
                if v != prev[k]:
                    ctx.set(ports[k], v)
                    prev[k] = v
            with_state = cyc % state_every == 0
            vals = await ctx.tick().sample(*sampled, *(state_sigs if with_state else ()))
            vals = vals[2:]                             # (after the clock and reset)
            got = dict(zip(OUTPUTS, vals))
            assert got == outs, f"cycle {cyc}: " + ", ".join(
                f"{k} dut {got[k]} model {outs[k]}" for k in OUTPUTS if got[k] != outs[k])
            gr = vals[len(OUTPUTS)]
            assert gr == model.grant_ready(inp.get("grant_queue", 0), inp.get("job_ready", 0),
                                           *held(inp)), \
                f"cycle {cyc}: grant_ready {gr}"
            if with_state:
                st = vals[len(OUTPUTS) + 1:]
                for q in range(n):
                    assert dict(zip(STATE, st[q * len(STATE):(q + 1) * len(STATE)])) == \
                        model.state(q), f"cycle {cyc}: queue {q} registers"
            inp = dict(inp, grant_ready=gr)
            if check:
                check(cyc, outs, inp, model)
            trace.append((cyc, outs, inp))
            model.step(inp)
            cyc += 1

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_process(bench)
    while not done:
        sim.advance()
    return trace


def cfg(q, size_log2, enable=1, limit=8):
    return dict(cfg_valid=1, cfg_queue=q, cfg_size_log2=size_log2, cfg_enable=enable,
                cfg_limit=limit)


def db(q, index):
    return dict(db_valid=1, db_queue=q, db_index=index)


def grant(q):
    return dict(grant_valid=1, grant_queue=q)


def cpl(q, count):
    return dict(cpl_valid=1, cpl_queue=q, cpl_count=count)


def scripted(script, ncycles, default=None):
    """A stimulus from {cycle: inputs}, `default` merged in every cycle."""
    def stim(cyc, outs, model):
        if cyc == ncycles:
            return None
        return {**(default or {}), **script.get(cyc, {})}
    return stim


# -- random traffic against the model ---------------------------------------------------------

class Traffic:
    """A driver (configures, posts descriptors without overrunning its ring, disables and
    re-enables queues, some bad doorbells and config writes), a grant source (mostly active
    queues, some inactive or nonexistent ones), a fetch DMA that takes jobs under
    back-pressure and completes them in order per queue (some bad completions) and a
    writeback sink under back-pressure. After `ncycles` a drain phase: no more doorbells or
    config writes, everything is fetched, completed and written back."""

    def __init__(self, rng, n, ncycles, sizes, limits):
        self.rng, self.n, self.ncycles = rng, n, ncycles
        self.sizes, self.limits = sizes, limits
        self.nq = 2**max(1, ceil_log2(n))           # queue numbers the ports can carry
        self.dma = [0] * n                          # descriptors the DMA took, not completed
        self.p_ready, self.p_wb, self.p_grant, self.p_cpl, self.p_db, self.p_cfg = \
            0.8, 0.8, 0.7, 0.3, 0.2 if n <= 8 else 0.4, 0.02

    def pick_queue(self, p_bad=0.03):
        if self.nq > self.n and self.rng.random() < p_bad:
            return self.rng.randrange(self.n, self.nq)
        return self.rng.randrange(self.n)

    def config(self, m):
        rng, q = self.rng, self.pick_queue()
        r = rng.random()
        if q >= self.n or r < 0.04:
            return cfg(q, rng.choice([13, 15, 3]), 1, rng.choice([4097, 8191, 8]) if
                       r < 0.02 else 8)             # (bad queue number, size or limit)
        lim = rng.choice(self.limits)
        if m.outputs()["drained"] >> q & 1:                         # reset
            return cfg(q, rng.choice(self.sizes), int(rng.random() < 0.85), lim)
        lg = m.size_log2[q]
        if m.enable[q]:
            if r < 0.35:
                return cfg(q, lg, 0, lim)                           # disable
            if r < 0.9:
                return cfg(q, lg, 1, lim)                           # new limit
            return cfg(q, (lg + 1) % 13, 1, lim)                    # size change: refused
        return cfg(q, lg, int(r < 0.5), lim)                        # draining: re-enable refused

    def doorbell(self, m):
        rng, q = self.rng, self.pick_queue()
        if q >= self.n or not m.enable[q]:
            return db(q, rng.randrange(2**16) if rng.random() < 0.5 else 0)
        size = m.size(q)
        if rng.random() < 0.06:
            return db(q, rng.choice([size, size + 1, 2**16 - 1]))   # out of range
        free = size - 1 - (m.prod[q] - m.cons(q)) % size
        k = rng.choice([0, 1, 2, 3, rng.randint(0, 16), rng.randint(0, 48)])
        if free <= 64 and rng.random() < 0.1:
            k = free                                                # fill the ring
        return db(q, (m.prod[q] + min(k, free)) % size)

    def __call__(self, cyc, outs, m):
        rng, n = self.rng, self.n
        draining = cyc >= self.ncycles
        if draining and not (any(self.dma) or any(m.in_flight) or any(m.pend) or m.job[0] or
                             m.wb[0] or outs["active"]):
            return None
        assert cyc < self.ncycles + 3000, "not drained"
        if rng.random() < 0.02:
            self.p_ready, self.p_wb = rng.choice([1.0, 0.8, 0.3, 0.0]), rng.choice([1.0, 0.5, 0.0])
            self.p_grant, self.p_cpl = rng.choice([1.0, 0.6, 0.1]), rng.choice([0.6, 0.3, 0.05])
        inp = {}
        if cyc < n:                                                 # set every queue up
            inp.update(cfg(cyc, rng.choice(self.sizes), 1, rng.choice(self.limits)))
        elif not draining and rng.random() < self.p_cfg:
            inp.update(self.config(m))
        if not draining and rng.random() < self.p_db:
            inp.update(self.doorbell(m))
        inp["job_ready"] = int(draining or rng.random() < self.p_ready)
        inp["wb_ready"] = int(draining or rng.random() < self.p_wb)
        if outs["job_valid"] and inp["job_ready"]:
            self.dma[outs["job_queue"]] += outs["job_count"]
        if draining or rng.random() < self.p_grant:
            act = [q for q in range(n) if outs["active"] >> q & 1]
            inp.update(grant(rng.choice(act) if act and rng.random() < 0.85
                             else rng.randrange(self.nq)))
        else:
            inp["grant_queue"] = rng.randrange(self.nq)             # junk while not valid
        if draining or rng.random() < self.p_cpl:
            busy = [q for q in range(n) if self.dma[q]]
            r = rng.random()
            if r < 0.04 and not draining:                           # more than in flight
                q = rng.randrange(self.nq)
                inp.update(cpl(q, (m.in_flight[q] if q < n else 0) + rng.randint(1, 9)))
            elif r < 0.07 and not draining:
                inp.update(cpl(rng.randrange(n), 0))                # legal, does nothing
            elif busy:
                q = rng.choice(busy)
                k = rng.randint(1, self.dma[q]) if rng.random() < 0.5 else self.dma[q]
                self.dma[q] -= k
                inp.update(cpl(q, k))
        return inp


class Invariants:
    """Checked every cycle on the core's registers and job stream (resets from the model):
    in_flight only grows up to limit; the driver-correct traffic never has more than S - 1
    descriptors outstanding; jobs start where the previous one of the queue ended (so each
    descriptor is handed out once per lap, in order), never cross the ring end, never go
    beyond prod, and hold 1..max_batch descriptors."""

    def __init__(self, n, max_batch):
        self.n, self.max_batch = n, max_batch
        self.next_idx = [0] * n
        self.prev_inf, self.prev_lim = [0] * n, [1] * n
        self.granted = None                     # (queue, prod, fetch) of the accepted grant
        self.stats = dict.fromkeys(("jobs", "wrap_jobs", "by_wrap", "by_limit", "resets",
                                    "coalesced", "db_noop", "drained_seen", "limit_below",
                                    "cfg_update"), 0)

    def __call__(self, cyc, outs, inp, m):
        st = self.stats
        if self.granted is not None:            # the job of last cycle's grant
            q, prod, fetch, size, inf, lim = self.granted
            assert outs["job_valid"] and outs["job_queue"] == q, f"cycle {cyc}"
            idx, cnt = outs["job_index"], outs["job_count"]
            assert idx == fetch == self.next_idx[q], f"cycle {cyc}: job index {idx}"
            assert 1 <= cnt <= self.max_batch, f"cycle {cyc}"
            assert idx + cnt <= size, f"cycle {cyc}: job crosses the ring end"
            assert cnt <= (prod - idx) % size, f"cycle {cyc}: job beyond prod"
            assert inf + cnt <= lim, f"cycle {cyc}: job beyond limit"
            self.next_idx[q] = (idx + cnt) % size
            st["jobs"] += 1
            st["wrap_jobs"] += idx + cnt == size
            self.granted = None
        for q in range(self.n):
            s = m.state(q)                      # == the core's (simulate compares them)
            inf, lim, size = s["in_flight"], s["limit"], 1 << s["size_log2"]
            if inf > lim:                       # only if the limit was lowered
                st["limit_below"] += 1
                assert inf <= max(self.prev_inf[q], self.prev_lim[q]), \
                    f"cycle {cyc}: queue {q} in_flight above limit"
            assert inf + (s["prod"] - s["fetch"]) % size <= size - 1, f"cycle {cyc}"
            self.prev_inf[q], self.prev_lim[q] = inf, lim
        if inp.get("grant_valid") and inp["grant_ready"]:
            q = inp["grant_queue"]
            self.granted = (q, m.prod[q], m.fetch[q], m.size(q), m.in_flight[q], m.limit[q])
        st["drained_seen"] += outs["drained"] != 0

    def after_step(self, m):
        ev = m.events
        if "reset" in ev:
            self.next_idx[ev["reset"]] = 0
            self.stats["resets"] += 1
        for k in ("coalesced", "db_noop", "by_wrap", "by_limit"):
            self.stats[k] += bool(ev.get(k) or ev.get("job_" + k))
        self.stats["cfg_update"] += "cfg_update" in ev


RANDOM_CASES = [
    # n, max_batch, sizes, limits, ncycles, seed
    (1, 8, [0, 1, 3, 12], [0, 1, 2, 8, 4096], 2500, 1),
    (1, 1, [2, 3], [1, 3, 4096], 1500, 2),
    (4, 8, [0, 2, 3, 12], [1, 1, 2, 5, 8, 4096], 3000, 3),
    (4, 3, [1, 3, 5], [0, 1, 4, 100], 2000, 4),
    (5, 4096, [3, 6, 12], [1, 7, 4096], 2000, 5),
    (64, 8, [0, 3, 12], [1, 2, 8, 4096], 800, 6),
]


@pytest.mark.parametrize("n,max_batch,sizes,limits,ncycles,seed", RANDOM_CASES)
def test_random_vs_model(n, max_batch, sizes, limits, ncycles, seed):
    rng = random.Random(seed)
    dut = TXQueueManager(n, max_batch)
    model = Model(n, max_batch)
    traffic = Traffic(rng, n, ncycles, sizes, limits)
    inv = Invariants(n, max_batch)

    step = model.step

    def stepping(inp):
        step(inp)
        inv.after_step(model)
    model.step = stepping

    written = {}

    def check(cyc, outs, inp, m):
        inv(cyc, outs, inp, m)
        if "reset" in m.events:                 # (of the previous cycle)
            written.pop(m.events["reset"], None)
        if outs["wb_valid"] and inp["wb_ready"]:
            written[outs["wb_queue"]] = outs["wb_cons"]

    simulate(dut, traffic, model, check, state_every=1 if n <= 8 else 7)
    # Drained: everything posted was fetched, completed and written back; nothing hangs.
    last = model.outputs()
    assert last["active"] == 0 and last["job_valid"] == 0 and last["wb_valid"] == 0
    for q in range(n):
        assert model.in_flight[q] == 0 and not model.pend[q]
        if model.enable[q]:
            assert model.prod[q] == model.fetch[q], f"queue {q} not fetched"
        if q in written:
            assert written[q] == model.cons(q), f"queue {q}: last writeback"
    assert last["drained"] == sum(1 << q for q in range(n) if not model.enable[q])
    c, st = model.counts, inv.stats
    assert c["descs_fetched"] == c["descs_completed"]
    # Coverage.
    assert c["jobs"] >= ncycles // 40 and st["jobs"] == c["jobs"]
    for k in ("err_db_range", "err_db_disabled", "err_cpl", "err_cfg", "doorbells"):
        assert c[k] > 0, k
    for k in ("wrap_jobs", "resets", "db_noop", "drained_seen", "cfg_update"):
        assert st[k] > 0, (k, st)
    if n <= 8:
        assert st["coalesced"] > 0, st
    if max(limits) > 1 and max_batch > 1:
        assert st["by_limit"] > 0, st
    if max_batch > 1:
        assert st["by_wrap"] > 0, st


# -- hand-worked cases ------------------------------------------------------------------------
# A doorbell in cycle c is seen in `active` from c+1 (a grant taken from c+2); a grant accepted
# in cycle c is presented as a job from c+1 and is already in `active` of c+1; a completion in
# cycle c makes the queue pending in c+1, loaded into the writeback register at the end of c+1
# (if it is free), so the writeback is presented from c+2.

TAKE = dict(job_ready=1, wb_ready=1)


def run(n, script, ncycles, max_batch=8, default=TAKE, stim=None):
    """Runs a script against the core and the model; returns the trace."""
    return simulate(TXQueueManager(n, max_batch), stim or scripted(script, ncycles, default))


def jobs_of(trace):
    """(cycle, queue, index, count) of the jobs the DMA took."""
    return [(c, o["job_queue"], o["job_index"], o["job_count"]) for c, o, i in trace
            if o["job_valid"] and i.get("job_ready")]


def wbs_of(trace):
    """(cycle, queue, cons) of the writebacks taken."""
    return [(c, o["wb_queue"], o["wb_cons"]) for c, o, i in trace
            if o["wb_valid"] and i.get("wb_ready")]


def reactive(script, ncycles, complete_after=None):
    """Scripted inputs plus: grant queue 0 whenever it is active; the DMA takes every job and,
    if complete_after is set, completes it that many cycles after taking it."""
    done = {}

    def stim(cyc, outs, model):
        if cyc == ncycles:
            return None
        inp = {**TAKE, **script.get(cyc, {})}
        if outs["active"] & 1:
            inp.update(grant(0))
        if outs["job_valid"] and complete_after is not None:
            done[cyc + complete_after] = outs["job_count"]
        if cyc in done:
            inp.update(cpl(0, done.pop(cyc)))
        return inp
    return stim


def test_ring8_doorbell5_one_job():
    # Ring of 8, limit 8, max_batch 8: doorbell 5 -> one job of descriptors 0..4. The queue is
    # active from the cycle after the doorbell, its job count registered from then: the grant
    # is taken a cycle later.
    tr = run(1, {0: cfg(0, 3, 1, 8), 1: db(0, 5), 2: grant(0), 3: grant(0)}, 7)
    outs = [o for _, o, _ in tr]
    assert [o["active"] for o in outs] == [0, 0, 1, 1, 0, 0, 0]
    assert tr[2][2]["grant_ready"] == 0 and tr[3][2]["grant_ready"] == 1
    assert jobs_of(tr) == [(4, 0, 0, 5)]
    assert outs[4]["jobs"] == 0 and outs[5]["jobs"] == 1 and outs[5]["descs_fetched"] == 5
    assert outs[2]["doorbells"] == 1 and outs[6]["drained"] == 0


def test_limit1_one_descriptor_per_job():
    # The one-packet-at-a-time driver: limit 1, doorbell 5, each job completed the cycle after
    # it is taken: a job every 4 cycles (grant, job, completion, the count registered once the
    # queue is active again), cons written back 1..5.
    tr = run(1, None, 24, stim=reactive({0: cfg(0, 3, 1, 1), 1: db(0, 5)}, 24, 1))
    assert jobs_of(tr) == [(c, 0, i, 1) for c, i in zip(range(4, 21, 4), range(5))]
    assert wbs_of(tr) == [(c, 0, i + 1) for c, i in zip(range(7, 24, 4), range(5))]
    assert tr[-1][1]["descs_completed"] == 5


def test_wrap_ring8():
    # Ring of 8: doorbell 6 -> job (0, 6), completed; doorbell 2 (prod 2, fetch 6): 4 waiting,
    # but the ring ends after 2: jobs (6, 2) then (0, 2), a cycle apart (a queue's count is
    # registered again after its job).
    tr = run(1, None, 12, stim=reactive({0: cfg(0, 3, 1, 8), 1: db(0, 6), 4: cpl(0, 6),
                                         5: db(0, 2)}, 12))
    assert jobs_of(tr) == [(4, 0, 0, 6), (8, 0, 6, 2), (10, 0, 0, 2)]
    assert wbs_of(tr) == [(6, 0, 6)]


def test_wrap_ring4096():
    # size_log2 12, max_batch 4096, limit 4096: doorbell 4090 -> one job of 4090; after its
    # completion doorbell 5: 11 waiting, jobs (4090, 6) and (0, 5).
    tr = run(1, None, 12, max_batch=4096,
             stim=reactive({0: cfg(0, 12, 1, 4096), 1: db(0, 4090), 4: cpl(0, 4090),
                            5: db(0, 5)}, 12))
    assert jobs_of(tr) == [(4, 0, 0, 4090), (8, 0, 4090, 6), (10, 0, 0, 5)]


def test_doorbell_out_of_range():
    # Ring of 8 with a job (0, 5) in flight: doorbell 8 in cycle 5 and 0xffff in 7 are refused,
    # counted in err_db_range and the sticky bit; nothing else changes. A reset clears the bit.
    states = {}

    def check(cyc, outs, inp, m):
        states[cyc] = m.state(0)
    script = {0: cfg(0, 3, 1, 8), 1: db(0, 5), 2: grant(0), 5: db(0, 8), 7: db(0, 0xFFFF),
              9: db(0, 7), 11: cfg(0, 3, 0, 8), 12: cpl(0, 5), 18: cfg(0, 3, 1, 8)}
    tr = simulate(TXQueueManager(1), scripted(script, 20, TAKE), check=check)
    outs = [o for _, o, _ in tr]
    for c in (6, 8):
        assert outs[c]["err_db_range"] == outs[c - 1]["err_db_range"] + 1
        assert {k: v for k, v in outs[c].items() if k not in ("err_db_range", "db_range_err")} \
            == {k: v for k, v in outs[c - 1].items() if k not in ("err_db_range", "db_range_err")}
        assert states[c] == states[c - 1]
    assert [o["db_range_err"] for o in outs[5:8]] == [0, 1, 1]
    assert outs[10]["doorbells"] == 2 and states[10]["prod"] == 7      # 7 is legal
    assert outs[18]["db_range_err"] == 1 and outs[18]["drained"] == 1
    assert outs[19]["db_range_err"] == 0 and states[19]["prod"] == 0
    assert outs[19]["err_db_range"] == 2 and outs[19]["err_cfg"] == 0
    # A ring of 1: only doorbell 0 is legal (a no-op, nothing can ever be posted).
    tr = run(1, {0: cfg(0, 0, 1, 8), 1: db(0, 0), 2: db(0, 1), 3: grant(0)}, 5)
    assert tr[-1][1]["doorbells"] == 1 and tr[-1][1]["err_db_range"] == 1
    assert not any(o["active"] for _, o, _ in tr) and tr[3][2]["grant_ready"] == 0


def test_disable_drain_reenable():
    # Queue 0: ring 8, limit 8, max_batch 4, doorbell 7: job (0, 4) (granted in 3), 3 more
    # waiting, active. Disabled in 4: inactive from 5 (a grant in 6 is not taken); re-enabling
    # in 5 is refused. Completions in 6 and 7; writebacks cons 2 (presented from 8, wb_ready 0
    # in 8) and cons 4 (taken in 10): drained from 11. Re-enabled in 11 (a reset): empty;
    # doorbell 2 -> (0, 2), granted in 14. Queue 1 stays active throughout.
    script = {0: cfg(0, 3, 1, 8), 1: {**cfg(1, 3, 1, 8), **db(0, 7)}, 2: db(1, 3),
              3: grant(0), 4: cfg(0, 3, 0, 8), 5: cfg(0, 3, 1, 8), 6: {**cpl(0, 2), **grant(0)},
              7: cpl(0, 2), 8: dict(wb_ready=0), 11: cfg(0, 3, 1, 8), 12: db(0, 2),
              14: grant(0)}
    tr = run(2, script, 17, max_batch=4)
    outs = [o for _, o, _ in tr]
    assert [o["active"] & 1 for o in outs] == [0, 0, 1, 1, 1] + [0] * 8 + [1, 1, 0, 0]
    assert all(o["active"] >> 1 for o in outs[3:])
    assert jobs_of(tr) == [(4, 0, 0, 4), (15, 0, 0, 2)]
    assert tr[6][2]["grant_ready"] == 0
    assert outs[6]["err_cfg"] == 1 and outs[-1]["err_cfg"] == 1
    assert wbs_of(tr) == [(9, 0, 2), (10, 0, 4)]
    assert [o["drained"] & 1 for o in outs[8:13]] == [0, 0, 0, 1, 0]
    assert outs[-1]["drained"] == 0 and outs[-1]["descs_completed"] == 4


def test_same_cycle_all_ports():
    # Ring of 16, limit 8, max_batch 2, doorbell 10; jobs (0, 2) and (2, 2): fetch 4, in
    # flight 4. Cycle 6: doorbell 12, limit 5 and a completion of 3, all for queue 0, and a grant
    # of queue 0, held back by the doorbell and config write of its queue (and in 7 by its count,
    # registered again): taken in 8 (count min(2, 8 waiting, 12 to the ring end, 5 - 1 = 4
    # room) = 2).
    states = {}

    def check(cyc, outs, inp, m):
        states[cyc] = m.state(0)
    script = {0: cfg(0, 4, 1, 8), 1: db(0, 10), 3: grant(0), 5: grant(0),
              6: {**db(0, 12), **cfg(0, 4, 1, 5), **grant(0), **cpl(0, 3)}, 7: grant(0),
              8: grant(0)}
    tr = simulate(TXQueueManager(1, 2), scripted(script, 11, TAKE), check=check)
    assert [tr[c][2]["grant_ready"] for c in (6, 7, 8)] == [0, 0, 1]
    assert jobs_of(tr) == [(4, 0, 0, 2), (6, 0, 2, 2), (9, 0, 4, 2)]
    assert states[7] == dict(size_log2=4, enable=1, limit=5, prod=12, fetch=4, in_flight=1)
    assert states[9] == dict(size_log2=4, enable=1, limit=5, prod=12, fetch=6, in_flight=3)
    assert wbs_of(tr) == [(8, 0, 3)]
    o = tr[9][1]
    assert o["active"] == 1 and o["doorbells"] == 2 and o["descs_completed"] == 3
    assert all(o[k] == 0 for k in COUNTS if k.startswith("err"))


def test_writeback_coalescing_round_robin():
    # Four rings of 8, each with a job (0, 4) in flight; wb_ready 0 until 24. The completion
    # of 16 is written back at once (cons 1, presented from 18); those of 17 and 20 (queue 0)
    # coalesce into one pending writeback; queues 1, 2, 3 are pending too. From 24 one is taken
    # per cycle, round-robin after queue 0: 1, 2, 3, then 0 with its latest cons (3).
    script = {q: cfg(q, 3, 1, 8) for q in range(4)}
    script.update({4 + q: db(q, 4) for q in range(4)})
    script.update({8 + 2 * q: grant(q) for q in range(4)})
    script.update({16: cpl(0, 1), 17: cpl(0, 1), 18: cpl(2, 1), 19: cpl(1, 2), 20: cpl(0, 1),
                   21: cpl(3, 1)})

    def stim(cyc, outs, model):
        if cyc == 31:
            return None
        return {"job_ready": 1, "wb_ready": int(cyc >= 24), **script.get(cyc, {})}
    tr = simulate(TXQueueManager(4), stim)
    assert [(q, i, n) for _, q, i, n in jobs_of(tr)] == [(q, 0, 4) for q in range(4)]
    assert [o["wb_valid"] for _, o, _ in tr[16:20]] == [0, 0, 1, 1]
    assert wbs_of(tr) == [(24, 0, 1), (25, 1, 2), (26, 2, 1), (27, 3, 1), (28, 0, 3)]
    assert tr[29][1]["wb_valid"] == 0


def test_errors_and_limits():
    # nqueues 3 (queue numbers 0..3): queue 3 does not exist. Bad config writes: queue 3,
    # size_log2 13, limit 4097, a size change while enabled. Limit 0 is kept as 1.
    states = {}

    def check(cyc, outs, inp, m):
        states[cyc] = [m.state(q) for q in range(3)]
    script = {0: cfg(3, 3), 1: cfg(0, 13), 2: cfg(0, 3, 1, 4097), 3: cfg(0, 3, 1, 0),
              4: {**cfg(0, 4, 1, 8), **db(3, 0)}, 5: {**db(0, 6), **cpl(3, 0)},
              6: {**grant(3), **cpl(0, 1), **db(1, 0)}, 7: grant(0),
              9: cpl(0, 2), 10: cpl(0, 1), 11: cpl(1, 0)}
    tr = simulate(TXQueueManager(3), scripted(script, 13, TAKE), check=check)
    o = tr[-1][1]
    assert o["err_cfg"] == 4 and o["err_db_range"] == 1 and o["err_db_disabled"] == 1
    assert o["err_cpl"] == 3 and o["descs_completed"] == 1          # 3: bad queue; 2 > 1
    assert states[4][0]["limit"] == 1 and states[12][0]["size_log2"] == 3
    assert tr[6][2]["grant_ready"] == 0
    assert jobs_of(tr) == [(8, 0, 0, 1)]
    assert wbs_of(tr) == [(12, 0, 1)]


# -- with the real scheduler ------------------------------------------------------------------

class ManagerWithScheduler(Elaboratable):
    """TXQueueManager.active -> TXScheduler -> grant -> TXQueueManager."""

    def __init__(self, n, max_batch):
        self.sched = TXScheduler(n)
        self.qm = TXQueueManager(n, max_batch)

    def elaborate(self, platform):
        m = Module()
        m.submodules.sched = s = self.sched
        m.submodules.qm = q = self.qm
        m.d.comb += [s.active.eq(q.active), q.grant_valid.eq(s.grant_valid),
                     q.grant_queue.eq(s.grant_queue), s.grant_ready.eq(q.grant_ready)]
        return m


@pytest.mark.parametrize("size_log2,posted,max_batch,limit,p_ready", [
    (3, 7, 2, 8, 1.0),           # rings of 8, full: 2, 2, 2, 1 descriptors per queue
    (3, 7, 8, 1, 0.6),           # one descriptor at a time, back-pressure
    (12, 1000, 8, 4096, 0.7),    # long rings, back-pressure
])
def test_with_scheduler_round_robin(size_log2, posted, max_batch, limit, p_ready):
    """4 queues, all posted full: round-robin gives jobs in queue order 0, 1, 2, 3, 0, ..; each
    queue's jobs are contiguous and cover exactly what was posted; the DMA completes each job
    the cycle after taking it."""
    n = 4
    top = ManagerWithScheduler(n, max_batch)
    qm = top.qm
    rng = random.Random(size_log2 * 100 + limit)
    per_queue = -(-posted // min(max_batch, limit))     # jobs per queue
    njobs = min(n * per_queue, 60)
    jobs = []

    async def bench(ctx):
        for q in range(n):
            for k, v in cfg(q, size_log2, 1, limit).items():
                ctx.set(getattr(qm, k), v)
            await ctx.tick()
        ctx.set(qm.cfg_valid, 0)
        for q in range(n):
            for k, v in db(q, posted).items():
                ctx.set(getattr(qm, k), v)
            await ctx.tick()
        ctx.set(qm.db_valid, 0)
        ctx.set(qm.wb.ready, 1)
        done = None
        for _ in range(40 * njobs):
            ctx.set(qm.cpl.valid, 0)
            if done:
                ctx.set(qm.cpl.valid, 1)
                ctx.set(qm.cpl.p.queue, done[0])
                ctx.set(qm.cpl.p.count, done[1])
                done = None
            ready = int(rng.random() < p_ready)
            ctx.set(qm.job.ready, ready)
            if ctx.get(qm.job.valid) and ready:
                p = qm.job.p
                job = (ctx.get(p.queue), ctx.get(p.index), ctx.get(p.count))
                jobs.append(job)
                done = (job[0], job[2])
            await ctx.tick()
            if len(jobs) == njobs:
                break

    sim = Simulator(top)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert [q for q, _, _ in jobs] == [q % n for q in range(njobs)]
    for q in range(n):
        mine = [(i, c) for jq, i, c in jobs if jq == q]
        assert [i for i, _ in mine] == [sum(c for _, c in mine[:k]) for k in range(len(mine))]
        assert all(c == min(max_batch, limit, posted - i) for i, c in mine)
    if n * per_queue <= 60:
        assert sum(c for _, _, c in jobs) == n * posted


# -- parameters and Verilog -------------------------------------------------------------------

@pytest.mark.parametrize("nqueues,max_batch", [
    (0, 8), (65, 8), (-1, 8), (2.5, 8), ("4", 8), (True, 8), (None, 8),
    (4, 0), (4, 4097), (4, True), (4, 2.0),
])
def test_bad_parameters(nqueues, max_batch):
    with warnings.catch_warnings():       # the half-built core is never elaborated, of course
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ValueError):
            TXQueueManager(nqueues, max_batch)
        gc.collect()


@pytest.mark.parametrize("n,max_batch", [(1, 8), (3, 1), (4, 4096), (64, 8)])
def test_verilator_lint(n, max_batch, tmp_path):
    name = f"tx_queue_manager_{n}_{max_batch}"
    verilator_lint(FlatShell(TXQueueManager(n, max_batch)), name, tmp_path)
