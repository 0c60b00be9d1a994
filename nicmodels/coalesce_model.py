# SPDX-License-Identifier: BSD-2-Clause
#
# coalesce_model.py: cycle-accurate pure-Python reference model of rtl/nic/irq_coalescer.py.
#
# What it is: the IRQCoalescer's behaviour written with cycle numbers instead of counters (the
# rules: CoalesceModel's docstring), for the core's unit tests and for full-system tests that
# predict the exact interrupts of a run. It does not import Amaranth.
#
# Interfaces:
#   CoalesceModel(frames, usecs, abs_usecs, min_interval, tick_cycles, width=16, count_width=32)
#       .step(event, irq_ready, enable=1) -> irq_valid; .cycle, .pending, .irqs, .by_frames,
#       .by_usecs, .by_abs, .by_immediate, .counts()
#   predict_irqs(event_cycles, ncycles, **config), predict_irq_reasons(...): the interrupts of a
#       run with irq_ready and enable always 1, event-driven (cost per event, not per cycle).
#   random_stim(rng, ncycles, bursty) -> [(event, irq_ready, enable)]: the random stimulus of
#       the core's amaranth.sim test and its cocotb testbench.
#
# Parameters: the five configuration values (0..2**width-1), as the core's inputs.

import operator

from rtl.contract.coalesce import ABS, CONFIG, FRAMES, IMMEDIATE, REASONS, USECS  # noqa: F401


def check_config(width, config):
    for name in CONFIG:
        v = config[name]
        if not isinstance(v, int) or not 0 <= v < 2**width:
            raise ValueError(f"coalescer: {name}={v!r} must be an int in 0..{2**width - 1}")


class CoalesceModel:
    """The coalescer cycle by cycle (the rules in full: rtl/nic/irq_coalescer.py).

    With T = max(tick_cycles, 1), in cycle x (pending > 0 in all of them):
      no coalescing (frames == 1, or frames == usecs == abs_usecs == 0): due,
      frames rule: due if frames != 0 and pending >= frames,
      usecs rule: due if usecs != 0 and x - (cycle of the last event) >= usecs * T,
      abs rule: due if abs_usecs != 0 and x - (cycle of the first event since the last accepted
                interrupt) >= abs_usecs * T,
      min_interval: may be raised only if min_interval == 0, no interrupt was accepted yet, or
                x - (cycle of the last accept) >= min_interval * T,
    and irq_valid(x) = (raised and not yet accepted) or (enable(x) and due and min_interval ok).
    """

    def __init__(self, frames, usecs, abs_usecs, min_interval, tick_cycles, width=16,
                 count_width=32):
        if width < 2 or count_width < 1:
            raise ValueError(f"CoalesceModel: width={width} must be >= 2 and "
                             f"count_width={count_width} >= 1")
        check_config(width, dict(frames=frames, usecs=usecs, abs_usecs=abs_usecs,
                                 min_interval=min_interval, tick_cycles=tick_cycles))
        t = max(tick_cycles, 1)
        self.frames = frames
        self.usecs_cycles = usecs * t                 # 0: rule off
        self.abs_cycles = abs_usecs * t
        self.interval_cycles = min_interval * t
        self.immediate = frames == 1 or (frames == 0 and usecs == 0 and abs_usecs == 0)
        self.pending_max = 2**width - 1
        self.count_mask = 2**count_width - 1
        self.cycle = 0
        self.pending = 0
        self.last_event = None                        # usecs timer start
        self.first_event = None                       # abs timer start
        self.last_accept = None                       # min_interval timer start
        self.held = False                             # raised, not accepted yet
        self.held_reason = None
        for r in REASONS:
            setattr(self, r, 0)
        self.irqs = 0

    def reason(self, x):
        """The reason an interrupt is due in cycle x, or None."""
        if self.pending == 0:
            return None
        if self.immediate:
            return IMMEDIATE
        if self.frames and self.pending >= self.frames:
            return FRAMES
        if self.usecs_cycles and x - self.last_event >= self.usecs_cycles:
            return USECS
        if self.abs_cycles and x - self.first_event >= self.abs_cycles:
            return ABS
        return None

    def interval_ok(self, x):
        return (not self.interval_cycles or self.last_accept is None
                or x - self.last_accept >= self.interval_cycles)

    def next_due(self, limit):
        """The first cycle in self.cycle..limit-1 in which an interrupt would be raised (enable
        1, not held) if no event came in between, or None."""
        if self.pending == 0:
            return None
        cands = []
        if self.immediate or (self.frames and self.pending >= self.frames):
            cands.append(self.cycle)
        if self.usecs_cycles:
            cands.append(self.last_event + self.usecs_cycles)
        if self.abs_cycles:
            cands.append(self.first_event + self.abs_cycles)
        if not cands:
            return None
        x = max(self.cycle, min(cands))
        if self.interval_cycles and self.last_accept is not None:
            x = max(x, self.last_accept + self.interval_cycles)
        return x if x < limit else None

    def _accept(self, x, reason):
        setattr(self, reason, (getattr(self, reason) + 1) & self.count_mask)
        self.irqs = (self.irqs + 1) & self.count_mask
        self.pending = 0
        self.last_accept = x

    def _event(self, x):
        if self.pending == 0:                         # also after an accept in this cycle
            self.first_event = x
        self.last_event = x
        self.pending = min(self.pending + 1, self.pending_max)

    def step(self, event, irq_ready, enable=1):
        """irq_valid of this cycle (it does not depend on this cycle's event or irq_ready), then
        advances one cycle."""
        x = self.cycle
        if self.held:
            valid, reason = True, self.held_reason
        else:
            reason = self.reason(x) if enable and self.interval_ok(x) else None
            valid = reason is not None
        if valid and irq_ready:
            self._accept(x, reason)
        self.held = valid and not irq_ready
        self.held_reason = reason if self.held else None
        if event:
            self._event(x)
        self.cycle = x + 1
        return int(valid)

    def counts(self):
        return {"irqs": self.irqs, **{r: getattr(self, r) for r in REASONS},
                "pending": self.pending}


def predict_irq_reasons(event_cycles, ncycles, **config):
    """[(accept cycle, reason)] of cycles 0..ncycles-1, irq_ready and enable always 1.

    With irq_ready always 1 an interrupt is accepted in the cycle it is raised, which leaves
    pending at 0 (1 if an event comes in that cycle), so between two events at most one
    interrupt happens: CoalesceModel.next_due. Only the events are visited."""
    m = CoalesceModel(**config)
    out = []
    prev = -1
    for e in list(event_cycles) + [None]:
        if e is not None:
            try:
                e = operator.index(e)                 # int, numpy integer, ...
            except TypeError:
                raise ValueError(f"predict_irqs: event cycle {e!r} is not an int") from None
            if e <= prev:
                raise ValueError(f"predict_irqs: event cycles must be increasing and >= 0, "
                                 f"got {e} after {prev}")
        limit = ncycles if e is None else min(e + 1, ncycles)
        x = m.next_due(limit)                         # cycle e itself: raised before its event
        if x is not None:
            reason = m.reason(x)
            m._accept(x, reason)
            out.append((x, reason))
        if e is None or e >= ncycles:
            m.cycle = ncycles
            break
        m._event(e)
        m.cycle = e + 1
        prev = e
    return out


def predict_irqs(event_cycles, ncycles, **config):
    """Accept cycles of the interrupts of cycles 0..ncycles-1, irq_ready and enable always 1."""
    return [c for c, _ in predict_irq_reasons(event_cycles, ncycles, **config)]


def random_stim(rng, ncycles, bursty):
    """[(event, irq_ready, enable)] of ncycles cycles: the event and ready probabilities change
    now and then (bursty: runs of no events and of an event almost every cycle; else sparse),
    and interrupts are masked (enable 0) for up to 40 cycles at times."""
    stim = []
    p_event = p_ready = 1.0
    enable_off = 0
    for _ in range(ncycles):
        if rng.random() < 0.03:                       # change the load from time to time
            if bursty:
                p_event = rng.choice([0.0, 0.0, 0.5, 0.9, 1.0])
            else:
                p_event = rng.choice([0.02, 0.05, 0.15])
            p_ready = rng.choice([1.0, 1.0, 0.7, 0.2])
        if enable_off == 0 and rng.random() < 0.005:
            enable_off = rng.randint(1, 40)           # interrupts masked for a while
        stim.append((int(rng.random() < p_event), int(rng.random() < p_ready),
                     int(enable_off == 0)))
        enable_off = max(enable_off - 1, 0)
    return stim
