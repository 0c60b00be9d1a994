# SPDX-License-Identifier: BSD-2-Clause
#
# trace_trigger.py: the bus analyzer's trigger, a sequence of up to `nstages` stages.
#
# What it is: decides the cycle on which a capture triggers. Each stage has two comparators (A,
# B) over the sample vector, each in a Mode (LEVEL, RISE, FALL, CHANGE), combined by an Op, and
# an occurrence count; the stages complete in order. Semantics: TraceTrigger's docstring.
#
# Interfaces:
#   sample           in, sample_width bits: what is watched (the previous cycle's value is kept).
#   enable           in: evaluate on this cycle (the capture holds it while armed).
#   arm              in: pulse; back to stage 0, counts cleared.
#   nstages_used     in: stages in the sequence (0..nstages).
#   s<i>_{mask,value,mode}_{a,b}, s<i>_op, s<i>_count   in: stage i's configuration.
#   fire             out: the trigger cycle.
#   stage            out: the stage being evaluated.
#
# Parameters: sample_width (bits watched), nstages (stages built, 1..4), count_width (width of
# the occurrence counts), latency (0, or 1: the stages' conditions are registered and `fire`
# pairs with the sample of the cycle before).

from enum import IntEnum

from amaranth import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


class Mode(IntEnum):
    LEVEL = 0
    RISE = 1
    FALL = 2
    CHANGE = 3


class Op(IntEnum):
    A = 0
    A_AND_B = 1
    A_OR_B = 2
    ALWAYS = 3


STAGE_FIELDS = ("mask_a", "value_a", "mode_a", "mask_b", "value_b", "mode_b", "op", "count")


def stage_ports(sample_width, nstages, count_width):
    widths = {"mask_a": sample_width, "value_a": sample_width, "mode_a": 2,
              "mask_b": sample_width, "value_b": sample_width, "mode_b": 2,
              "op": 2, "count": count_width}
    return {f"s{i}_{f}": widths[f] for i in range(nstages) for f in STAGE_FIELDS}


class TraceTrigger(wiring.Component):
    """A sequence of trigger stages over a sample vector.

    Each stage has two comparators, A and B, each in one of four modes (Mode):
      LEVEL   (sample & mask) == (value & mask)                      the sample matches
      RISE    it matches on this cycle and did not on the previous    the match begins
      FALL    it does not match and did on the previous cycle         the match ends
      CHANGE  any bit under the mask differs from the previous cycle  (value unused)
    combined by the stage's Op (A alone, A and B, A or B, or ALWAYS), and a count N: the stage
    completes on the N-th cycle its condition holds (0 counts as 1). Stages complete in order;
    the trigger fires (`fire` = 1, combinationally, on that very cycle) when stage
    `nstages_used` - 1 completes. nstages_used = 0 fires on the first enabled cycle. Only the
    current stage is evaluated; its occurrence count restarts when it is entered (the stage's
    count is read then: at arm for stage 0, on completing the stage before for the others, and
    again after the trigger fires). Masks and values are set before arming: RISE and FALL use
    the previous cycle's match under the previous cycle's mask and value.

    latency=1: each stage's condition is computed from the sample (and the previous one) and
    registered; the sequencing acts on it one cycle later, so `enable`, `arm` and `fire` on
    cycle t pair with the sample of cycle t - 1 (the user delays what is captured by one cycle
    to match). This takes the wide comparators out of the sequencing's path.
    """

    def __init__(self, sample_width, nstages=4, count_width=16, latency=0):
        if sample_width < 1:
            raise ValueError(f"TraceTrigger: sample_width={sample_width} must be at least 1")
        if not 1 <= nstages <= 4:
            raise ValueError(f"TraceTrigger: nstages={nstages} must be 1..4")
        if latency not in (0, 1):
            raise ValueError(f"TraceTrigger: latency={latency} must be 0 or 1")
        self.sample_width, self.nstages, self.count_width = sample_width, nstages, count_width
        self.latency = latency
        super().__init__({
            "sample":       In(sample_width),
            "enable":       In(1),
            "arm":          In(1),
            "nstages_used": In(3),
            **{name: In(w) for name, w in stage_ports(sample_width, nstages, count_width).items()},
            "fire":         Out(1),
            "stage":        Out(2),
        })

    def _cmp(self, m, prev, mask, value, mode):
        # One masked comparison: with the value (LEVEL, RISE, FALL) or with the previous
        # sample (CHANGE), so each bit is one LUT before the reduction.
        ref = Mux(mode == Mode.CHANGE, prev, value)
        differs = ((self.sample ^ ref) & mask).any()
        now_match = ~differs
        # The previous cycle's match, registered rather than computed again from `prev` (the
        # same under the same mask and value: they are set before arming, not while armed).
        prev_match = Signal()
        m.d.sync += prev_match.eq(now_match)
        out = Signal()
        with m.Switch(mode):
            with m.Case(Mode.LEVEL):
                m.d.comb += out.eq(now_match)
            with m.Case(Mode.RISE):
                m.d.comb += out.eq(now_match & ~prev_match)
            with m.Case(Mode.FALL):
                m.d.comb += out.eq(~now_match & prev_match)
            with m.Case(Mode.CHANGE):
                m.d.comb += out.eq(differs)
        return out

    def elaborate(self, platform):
        m = Module()
        prev = Signal(self.sample_width)
        m.d.sync += prev.eq(self.sample)

        conds = []
        for i in range(self.nstages):
            p = {f: getattr(self, f"s{i}_{f}") for f in STAGE_FIELDS}
            a = self._cmp(m, prev, p["mask_a"], p["value_a"], p["mode_a"])
            b = self._cmp(m, prev, p["mask_b"], p["value_b"], p["mode_b"])
            cond = Signal(name=f"cond{i}")
            with m.Switch(p["op"]):
                with m.Case(Op.A):
                    m.d.comb += cond.eq(a)
                with m.Case(Op.A_AND_B):
                    m.d.comb += cond.eq(a & b)
                with m.Case(Op.A_OR_B):
                    m.d.comb += cond.eq(a | b)
                with m.Case(Op.ALWAYS):
                    m.d.comb += cond.eq(1)
            if self.latency:
                cond_q = Signal(name=f"cond{i}_q")
                m.d.sync += cond_q.eq(cond)
                cond = cond_q
            conds.append((cond, p["count"]))

        # Occurrences still needed after this one: loaded with count - 1 (count 0 counts as 1)
        # when a stage is entered, counted down on each cycle its condition holds. The stage
        # completes when its condition holds with none left: a register compared with 0, rather
        # than an adder and a comparison with the count, on the way from the condition to `fire`.
        stage = self.stage
        left = Signal(self.count_width)

        def needed(i):
            n = conds[i][1]
            return Mux(n == 0, 0, n - 1)

        # The current stage's condition, its count again, and the next stage's count.
        cond = Signal()
        again, following = Signal(self.count_width), Signal(self.count_width)
        with m.Switch(stage):
            for i, (c, _n) in enumerate(conds):
                with m.Case(i):
                    m.d.comb += [
                        cond.eq(c), again.eq(needed(i)),
                        following.eq(needed(i + 1) if i + 1 < self.nstages else 0),
                    ]
        last_stage = Signal()
        m.d.comb += last_stage.eq(stage == self.nstages_used - 1)
        complete = Signal()
        m.d.comb += complete.eq(cond & (left == 0))

        with m.If(self.arm):
            m.d.sync += [stage.eq(0), left.eq(needed(0))]
        with m.Elif(self.enable):
            with m.If(self.nstages_used == 0):
                m.d.comb += self.fire.eq(1)
            with m.Elif(complete):
                with m.If(last_stage):
                    m.d.comb += self.fire.eq(1)
                    m.d.sync += left.eq(again)
                with m.Else():
                    m.d.sync += [stage.eq(stage + 1), left.eq(following)]
            with m.Elif(cond):
                m.d.sync += left.eq(left - 1)
        return m
