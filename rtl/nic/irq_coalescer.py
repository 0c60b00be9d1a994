# SPDX-License-Identifier: BSD-2-Clause
#
# irq_coalescer.py: interrupt coalescing for one interrupt vector (ethtool -C semantics, the
# e1000's RDTR/RADV/ITR), exact to the cycle.
#
# Interfaces: event (in: one completion), irq_valid/irq_ready (the interrupt request to the MSI
# block: plain ports, no payload), enable, the configuration frames, usecs, abs_usecs,
# min_interval, tick_cycles (rtl/contract/coalesce.py CONFIG); the counters COUNTS (irqs and
# one per reason) and pending.
# Parameters: width (configuration, pending and timers; 16: frames and ticks up to 65535),
# count_width (interrupt counters, 32).
# Behaviour, to the cycle: IRQCoalescer's docstring; nicmodels/coalesce_model.py is
# its cycle-accurate reference model.

from amaranth import Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from ..contract import registers
from ..contract.coalesce import CONFIG, REASONS

COUNTS = registers.counter_names("irq_coalescer")    # irqs, then the REASONS


class IRQCoalescer(wiring.Component):
    """Interrupt coalescing for one interrupt vector.

    Sits between a completion source (one `event` per completion) and the MSI block
    (`irq_valid`/`irq_ready`) and decides when the completions pending so far make an interrupt.
    nicmodels/coalesce_model.py is its cycle-accurate reference model (predict_irqs: the
    interrupts of a whole run from its event cycles).

    Cycles
    ------
    In cycle x, irq_valid is a function of the registers and of this cycle's `enable` (it does
    not depend on this cycle's `event`, `irq_ready` or configuration): which rules are on and
    the compares of pending and the timers with frames, usecs, abs_usecs and min_interval are
    registers, made with the configuration of cycle x-1. An event in cycle x
    counts in `pending` from cycle x+1. T = max(tick_cycles, 1) cycles per tick; every timer is
    counted in cycles, exactly: a timer of N ticks started by cycle s has expired in cycle x iff
    x - s >= N * T (each timer has its own tick prescaler, started with the timer, so no multiplier
    and no dependence on a free-running phase).

    Rules
    -----
    In cycle x, pending > 0:

    no coalescing
        frames == 1, or frames == usecs == abs_usecs == 0: due (reason immediate).
    frames
        frames != 0 and pending >= frames: due.
    usecs
        Delay timer (re)started by every event: due if usecs != 0 and x - (cycle of the last event)
        >= usecs * T.
    abs_usecs
        Absolute timer started by the event that makes pending 0 -> 1 (the first one after an
        accepted interrupt), never restarted: due if abs_usecs != 0 and x - (cycle of that event)
        >= abs_usecs * T.
    min_interval
        The interrupt may be raised only if min_interval == 0, or no interrupt has been accepted
        since reset, or x - (cycle of the last accept) >= min_interval * T. So accepts are at least
        max(1, min_interval * T) cycles apart.
    enable
        irq_valid = held | (enable & due & min_interval ok). With enable 0 nothing is raised;
        events are still counted and the timers still run, so when enable returns the rules fire
        from then on as if it had always been 1 (a timer that expired meanwhile fires at once).
    held
        Stream rule: once raised, irq_valid stays 1 (even if enable drops) until accepted
        (irq_valid & irq_ready).
    accept
        In cycle a: pending becomes the event of cycle a (0 or 1: a completion in the accepting
        cycle counts toward the NEXT interrupt and starts both timers for it), the min_interval
        timer restarts from a; without a new event the delay and absolute timers are idle (they are
        only looked at while pending > 0).
    reason
        Decided in the cycle irq_valid is raised (kept while held), by priority immediate > frames
        > usecs > abs; the accept increments `irqs` and the reason's counter.
    pending
        Saturates at 2**width-1 (frames <= 2**width-1, so the frames rule still holds).

    Ports
    -----
    event : In
        A completion this cycle.
    irq_valid, irq_ready : Out, In
        The interrupt request to the MSI block.
    enable : In
        See above.
    frames, usecs, abs_usecs, min_interval, tick_cycles : In, `width` bits
        The configuration (CSRs; a change takes effect in the cycle after it is seen (the cycle
        it is seen for the immediate rule and the zero tests), from the state the timers have
        counted so far; a reason already latched stays).
    irqs, by_frames, by_usecs, by_abs, by_immediate : Out, `count_width` bits
        Accepted interrupts and their reasons (wrapping).
    pending : Out, `width` bits
        Completions not yet covered by an accepted interrupt.
    """

    def __init__(self, width=16, count_width=32):
        if width < 2 or count_width < 1:
            raise ValueError(f"IRQCoalescer: width={width} must be >= 2 and "
                             f"count_width={count_width} >= 1")
        self.width = width
        self.count_width = count_width
        super().__init__({
            "event":     In(1),
            "enable":    In(1),
            **{name: In(width) for name in CONFIG},
            "irq_valid": Out(1),
            "irq_ready": In(1),
            **{name: Out(count_width) for name in COUNTS},
            "pending":   Out(width),
        })

    def elaborate(self, platform):
        m = Module()
        w = self.width
        top = 2**w - 1

        def timer(name, start, thr, init_ticks=0):
            """Ticks elapsed since `start` (saturating at 2**w-1); a start in cycle s reads
            floor((x - s) / T) in cycle x (the start cycle counts as the first one). `start`
            selects between two precomputed next states, so it ends the path it is on.
            Returns ticks >= thr as a register: its next value chosen, as the ticks', among
            compares of the candidates (thr as of the cycle before)."""
            ticks = Signal(w, name=f"{name}_ticks", init=init_ticks)
            ge = Signal(name=f"{name}_ge", init=init_ticks == top)
            sub = Signal(w, name=f"{name}_sub")          # cycles into the current tick
            # sub + 1 >= T, T = max(tick_cycles, 1), as sub >= tick_cycles - 1 (a register:
            # one compare, no sum) unless T is 1.
            wrap = t_one | (sub >= t_m1)
            inc = Mux(ticks == top, top, ticks + 1)
            with m.If(start):
                m.d.sync += [sub.eq(Mux(t_one, 0, 1)), ticks.eq(t_one), ge.eq(t_one >= thr)]
            with m.Elif(wrap):
                m.d.sync += [sub.eq(0), ticks.eq(inc), ge.eq(inc >= thr)]
            with m.Else():
                m.d.sync += [sub.eq(sub + 1), ge.eq(ticks >= thr)]
            return ge

        # tick_cycles - 1 for the timers' prescalers (its first value all ones: no wrap of a
        # prescaler at 0 before it is loaded, as for any T >= 2).
        t_one = self.tick_cycles <= 1                     # a started timer wraps at once
        t_m1 = Signal(w, init=top)
        m.d.sync += t_m1.eq(self.tick_cycles - 1)

        held = Signal()
        held_reason = Signal(2)
        accept = Signal()
        # pending != 0 and pending >= frames as registers, their next values chosen as
        # pending's: the rules start from flip-flops, not from compares.
        has = Signal()
        p_ge = Signal()
        inc = self.event & (self.pending != top)

        dly_ge = timer("dly", self.event, self.usecs)
        abs_ge = timer("abs", self.event & (~has | accept), self.abs_usecs)
        # Reset value "expired long ago": the first interrupt is not held off.
        ok = timer("ivl", accept, self.min_interval, init_ticks=top)

        # Which rules are on, as registers of the configuration (a change acts a cycle later).
        immediate = Signal()
        on_frames = Signal()
        on_usecs = Signal()
        on_abs = Signal()
        m.d.sync += [
            immediate.eq((self.frames == 1) | ((self.frames == 0) & (self.usecs == 0) &
                                               (self.abs_usecs == 0))),
            on_frames.eq(self.frames != 0),
            on_usecs.eq(self.usecs != 0),
            on_abs.eq(self.abs_usecs != 0),
        ]
        by_frames = on_frames & p_ge
        by_usecs = on_usecs & dly_ge
        by_abs = on_abs & abs_ge
        due = has & (immediate | by_frames | by_usecs | by_abs)

        # Reason codes are indexes into REASONS (immediate, frames, usecs, abs).
        reason_now = Mux(immediate, 0, Mux(by_frames, 1, Mux(by_usecs, 2, 3)))
        reason = Mux(held, held_reason, reason_now)

        m.d.comb += [
            self.irq_valid.eq(held | (self.enable & due & ok)),
            accept.eq(self.irq_valid & self.irq_ready),
        ]
        m.d.sync += [
            held.eq(self.irq_valid & ~self.irq_ready),
            held_reason.eq(reason),
        ]
        with m.If(accept):
            m.d.sync += [self.pending.eq(self.event), has.eq(self.event),
                         p_ge.eq(self.event >= self.frames)]
        with m.Elif(inc):
            m.d.sync += [self.pending.eq(self.pending + 1), has.eq(1),
                         p_ge.eq(self.pending + 1 >= self.frames)]
        with m.Else():
            m.d.sync += p_ge.eq(self.pending >= self.frames)

        with m.If(accept):
            m.d.sync += self.irqs.eq(self.irqs + 1)
            for i, name in enumerate(REASONS):
                with m.If(reason == i):
                    m.d.sync += getattr(self, name).eq(getattr(self, name) + 1)
        return m
