# SPDX-License-Identifier: BSD-2-Clause
#
# irq_coalescer_proof.py: formal properties of IRQCoalescer (rtl/nic/irq_coalescer.py).
#
# What it proves (k-induction: for every reachable state, any enable/event/irq_ready sequence,
# reset free at every cycle, any constant configuration): the docstring's rules, restated with
# plain cycle counters (age of the last and of the first uncovered completion, time since the last
# accept, compared with N * T) instead of the core's per-timer tick prescalers:
#   bound     a completion is never left without irq_valid once a rule is due: frames reached,
#             usecs * T cycles after the last completion, abs_usecs * T after the first, or at once
#             (no coalescing), as soon as min_interval allows and enable is 1;
#   cause     irq_valid is never raised without one of those (or held from before);
#   interval  two accepted interrupts are at least max(1, min_interval * T) cycles apart;
#   held      once raised, irq_valid stays 1 until accepted;
#   pending   pending = the completions since the last accept (saturating).
# irq_coalescer_cfg (bounded, from reset): the configuration free on every cycle (ethtool -C under
# traffic). held and pending always; bound, cause and interval once the configuration has been
# unchanged for SETTLE cycles (a timer started under the old configuration has saturated by then).
# Interfaces: PROOFS (rtl/formal/sby_run.py). Parameters: width 3 (configuration values 0..7,
# up to 7 ticks of up to 7 cycles: timers of 49 cycles, saturated at 7 ticks), count_width 2;
# irq_coalescer_cfg: width 2 (timers of up to 9 cycles), so its bound reaches past SETTLE.

from amaranth import Cat, Module, Mux, Signal
from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Elaboratable

from ..contract.coalesce import CONFIG
from ..nic.irq_coalescer import IRQCoalescer
from .proof import Proof, implies, peek

WIDTH = 3
AGE = 7                      # age counters' bits: saturate at 127 >= 7 * 7 + 1


class CoalescerRules(Elaboratable):
    """The rules; with cfg_changes the configuration is AnySeq and bound, cause and interval
    hold once it has been unchanged for settle(width) cycles (no induction invariants: BMC)."""

    def __init__(self, width=WIDTH, cfg_changes=False):
        self.width, self.cfg_changes = width, cfg_changes

    @staticmethod
    def settle(width):
        """Cycles after a configuration change by which every timer started before it has
        saturated: top ticks of at most top cycles, plus the cycle ending a longer tick."""
        top = 2**width - 1
        return top * top + 2

    def elaborate(self, platform):
        m = Module()
        w = self.width
        dut = IRQCoalescer(width=w, count_width=2)
        timers = [f"{t}_{f}" for t in ("dly", "abs", "ivl") for f in ("ticks", "sub", "ge")]
        rules = ["immediate", "on_frames", "on_usecs", "on_abs"]
        m.submodules.dut, internal = peek(dut, "held", "has", "p_ge", "t_m1", *rules, *timers)
        held, has_r, p_ge, t_m1 = internal[:4]
        r_immediate, on_frames, on_usecs, on_abs = internal[4:8]
        dly_t, dly_s, dly_ge, abs_t, abs_s, abs_ge, ivl_t, ivl_s, ivl_ge = internal[8:]
        top = 2**w - 1
        cfg = {name: Signal(w, name=f"cfg_{name}") for name in CONFIG}
        free = AnySeq if self.cfg_changes else AnyConst
        m.d.comb += [s.eq(free(w)) for s in cfg.values()]
        # Cycles since the configuration last changed (the reset cycle counts as a change).
        settled = Signal()
        if self.cfg_changes:
            prev = {n: Signal(w, name=f"prev_{n}") for n in CONFIG}
            m.d.sync += [prev[n].eq(cfg[n]) for n in CONFIG]
            changed = Signal()
            first = Signal(init=1)
            m.d.sync += first.eq(0)
            m.d.comb += changed.eq(first | Cat(*(cfg[n] != prev[n] for n in CONFIG)).any())
            n_settle = self.settle(w)
            stable = Signal(range(n_settle + 1))
            with m.If(changed):
                m.d.sync += stable.eq(0)
            with m.Elif(stable != n_settle):
                m.d.sync += stable.eq(stable + 1)
            m.d.comb += settled.eq(~changed & (stable == n_settle))
        else:
            m.d.comb += settled.eq(1)
        m.d.comb += [getattr(dut, name).eq(s) for name, s in cfg.items()]
        m.d.comb += [dut.event.eq(AnySeq(1)), dut.enable.eq(AnySeq(1)),
                     dut.irq_ready.eq(AnySeq(1))]
        t = Signal(w)
        m.d.comb += t.eq(Mux(cfg["tick_cycles"] == 0, 1, cfg["tick_cycles"]))
        accept = dut.irq_valid & dut.irq_ready

        # The reference: completions since the last accept, and cycle counts (saturating).
        pending = Signal(w)
        with m.If(accept):
            m.d.sync += pending.eq(dut.event)
        with m.Elif(dut.event & (pending != top)):
            m.d.sync += pending.eq(pending + 1)
        has = pending != 0

        def age(name, start, init=0):
            a = Signal(AGE, name=name, init=init)
            with m.If(start):
                m.d.sync += a.eq(1)
            with m.Elif(a != 2**AGE - 1):
                m.d.sync += a.eq(a + 1)
            return a
        last_age = age("last_age", dut.event)                       # since the last completion
        first_age = age("first_age", dut.event & (~has | accept))   # since the first uncovered
        ivl_age = age("ivl_age", accept, init=2**AGE - 1)           # since the last accept
        accepted = Signal()
        m.d.sync += accepted.eq(accepted | accept)
        was_raised = Signal()                                       # valid & not ready before
        m.d.sync += was_raised.eq(dut.irq_valid & ~dut.irq_ready)

        frames, usecs, abs_usecs = cfg["frames"], cfg["usecs"], cfg["abs_usecs"]
        immediate = (frames == 1) | ((frames == 0) & (usecs == 0) & (abs_usecs == 0))
        due = has & (immediate |
                     ((frames != 0) & (pending >= frames)) |
                     ((usecs != 0) & (last_age >= usecs * t)) |
                     ((abs_usecs != 0) & (first_age >= abs_usecs * t)))
        ok = ~accepted | (ivl_age >= cfg["min_interval"] * t)

        m.d.comb += [
            Assert(implies(settled & dut.enable & due & ok, dut.irq_valid),
                   "bound: irq_valid once a rule is due and min_interval allows"),
            Assert(implies(settled & dut.irq_valid, was_raised | (dut.enable & due & ok)),
                   "cause: irq_valid only when due (or held)"),
            Assert(implies(settled & accept & accepted,
                       ivl_age >= Mux(cfg["min_interval"] == 0, 1, cfg["min_interval"] * t)),
                   "interval: accepts at least max(1, min_interval * T) cycles apart"),
            Assert(implies(was_raised, dut.irq_valid), "held: irq_valid stays until accepted"),
            Assert(dut.pending == pending, "pending: completions since the last accept"),
        ]
        if self.cfg_changes:
            return m

        # Induction invariants: the core's registers against the reference.
        past_reset = Signal()
        m.d.sync += past_reset.eq(1)
        def timer_inv(ticks, sub, a, what):
            return [
                Assert(sub < t, f"inv: {what} prescaler < T"),
                Assert(implies(ticks < top, ticks * t + sub == a),
                       f"inv: {what} ticks * T + sub == age"),
                Assert(implies(ticks == top, a >= top * t), f"inv: {what} saturated"),
            ]
        m.d.comb += [
            Assert(held == was_raised, "inv: held"),
            Assert(implies(was_raised, ok), "inv: raised only when min_interval allowed"),
            Assert(implies(~accepted, ivl_age == 2**AGE - 1), "inv: no accept yet"),
            *timer_inv(dly_t, dly_s, last_age, "usecs timer"),
            *timer_inv(abs_t, abs_s, first_age, "abs timer"),
            *timer_inv(ivl_t, ivl_s, ivl_age, "interval timer"),
            # The rules' registered compares (each gated by its setting != 0 where used).
            Assert(has_r == has, "inv: has == (pending != 0)"),
            Assert(implies(frames != 0, p_ge == (pending >= frames)), "inv: pending >= frames"),
            Assert(implies(usecs != 0, dly_ge == (dly_t >= usecs)), "inv: usecs timer >= usecs"),
            Assert(implies(abs_usecs != 0, abs_ge == (abs_t >= abs_usecs)),
                   "inv: abs timer >= abs_usecs"),
            Assert(ivl_ge == (ivl_t >= cfg["min_interval"]), "inv: interval timer >= min"),
            Assert(implies(past_reset, (r_immediate == immediate)
                           & (on_frames == (frames != 0)) & (on_usecs == (usecs != 0))
                           & (on_abs == (abs_usecs != 0))),
                   "inv: the rules on, as the configuration says"),
            Assert(Mux(past_reset, implies(cfg["tick_cycles"] != 0,
                                           t_m1 == cfg["tick_cycles"] - 1), t_m1 == top),
                   "inv: tick_cycles - 1 (all ones in the reset cycle)"),
        ]
        return m


PROOFS = [
    Proof("irq_coalescer", CoalescerRules, mode="prove", depth=6, deep_depth=16,
          properties=["bound: irq_valid once frames / usecs*T / abs_usecs*T / immediate is due, "
                      "enable 1 and min_interval*T elapsed",
                      "cause: irq_valid only when a rule is due (or held from before)",
                      "interval: accepts at least max(1, min_interval*T) cycles apart",
                      "held: irq_valid stays 1 until accepted",
                      "pending == completions since the last accept (saturating)",
                      "invariants: held, each timer's ticks*T+sub == its age (cycles), the "
                      "registered compares"]),
    Proof("irq_coalescer_cfg", lambda: CoalescerRules(width=2, cfg_changes=True), mode="bmc",
          depth=28, deep_depth=48,
          properties=["configuration changing on any cycle: held and pending always",
                      "bound, cause and interval (as irq_coalescer) once the configuration "
                      f"has been unchanged for {CoalescerRules.settle(2)} cycles"]),
]
