# SPDX-License-Identifier: BSD-2-Clause
#
# tx_scheduler_model.py: cycle-accurate pure-Python reference model of rtl/nic/tx_scheduler.py
# (TXScheduler) and the random traffic both its amaranth.sim test (rtl/nic/test_tx_scheduler.py)
# and its cocotb testbench (cocotb_tests/tb_tx_scheduler.py) compare the core with it under.
#
# Interfaces: Model(n).step(active, prio, weight, mode, ready), .outputs() -> (grant_valid,
# grant_queue), .grants, .kinds_accepted; RandomTraffic(rng, n, ncycles)(cyc, valid, queue) ->
# (active, prio, weight, mode, ready) of the cycle, None after ncycles; .seen_modes, .withdrawn.

from rtl.nic.tx_scheduler import NLEVELS


class Model:
    """The scheduler's registers, advanced one clock edge at a time (see tx_scheduler.py)."""

    def __init__(self, n):
        self.n = n
        self.valid, self.queue, self.grants = 0, 0, 0
        self.ptr_rr, self.ptr_lvl = 0, [0] * NLEVELS
        self.credit, self.wrr_q = 0, 0
        self.kind, self.lvl = "rr", 0       # how the presented grant was chosen: rr|sp|wrr|hold
        self.kinds_accepted = set()

    def outputs(self):
        return self.valid, self.queue

    def search(self, cand, ptr):
        for i in list(range(ptr, self.n)) + list(range(ptr)):
            if cand[i]:
                return i
        return None

    def step(self, active, prio, weight, mode, ready):
        if self.valid and ready:                                # accepted
            q = self.queue
            self.kinds_accepted.add(self.kind)
            nxt = (q + 1) % self.n
            self.grants = (self.grants + 1) % 2**32
            self.ptr_rr = nxt
            if self.kind == "sp":
                self.ptr_lvl[self.lvl] = nxt
            if self.kind == "hold":
                self.credit -= 1
            elif self.kind == "wrr":
                self.credit, self.wrr_q = max(weight[q], 1) - 1, q
            else:
                self.credit = 0
            self.valid = 0                                      # the bubble
            return
        hold = mode == 2 and self.credit > 0 and active[self.wrr_q]
        if hold:
            self.valid, self.queue, self.kind = 1, self.wrr_q, "hold"
            return
        self.credit = 0
        if mode == 1 and any(active):
            top = max(p for a, p in zip(active, prio) if a)
            cand = [a and p == top for a, p in zip(active, prio)]
            pick, kind, self.lvl = self.search(cand, self.ptr_lvl[top]), "sp", top
        else:
            pick, kind = self.search(active, self.ptr_rr), "wrr" if mode == 2 else "rr"
        if pick is not None:
            self.valid, self.queue, self.kind = 1, pick, kind
        else:
            self.valid = 0


class RandomTraffic:
    """Random active patterns (queues toggling, all on, all off), prio/weight changes,
    back-pressure and mode switches. Also checks that a presented queue was active in the
    previous cycle."""

    def __init__(self, rng, n, ncycles):
        self.rng, self.n, self.ncycles = rng, n, ncycles
        self.active = [rng.randint(0, 1) for _ in range(n)]
        self.new_prio()
        self.weight = [rng.randrange(6) for _ in range(n)]
        self.mode, self.p_toggle, self.p_ready = 0, 0.05, 0.7
        self.prev_active = [0] * n
        self.seen_modes, self.withdrawn = set(), 0

    def new_prio(self):
        levels = self.rng.sample(range(NLEVELS), self.rng.choice((1, 2, 3, 8)))
        self.prio = [self.rng.choice(levels) for _ in range(self.n)]

    def __call__(self, cyc, valid, queue):
        rng, n = self.rng, self.n
        if cyc == self.ncycles:
            return None
        if valid:
            assert self.prev_active[queue], f"cycle {cyc}: queue {queue} presented, inactive"
        if rng.random() < 0.03:
            self.p_toggle, self.p_ready = rng.choice((0.0, 0.02, 0.2, 0.5)), rng.random()
        if rng.random() < 0.03:
            self.mode = rng.randrange(4)
        if rng.random() < 0.01:
            self.new_prio()
        if rng.random() < 0.02:
            self.weight[rng.randrange(n)] = rng.choice((0, 1, 2, 3, 7, 255))
        r = rng.random()
        if r < 0.01:
            self.active = [0] * n
        elif r < 0.02:
            self.active = [1] * n
        else:
            self.active = [a ^ (rng.random() < self.p_toggle) for a in self.active]
        ready = int(rng.random() < self.p_ready)
        if valid and not self.active[queue]:
            self.withdrawn += 1
        self.prev_active = list(self.active)
        self.seen_modes.add(self.mode)
        return list(self.active), list(self.prio), list(self.weight), self.mode, ready
