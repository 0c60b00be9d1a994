# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of IRQCoalescer (amaranth.sim): irq_valid cycle for cycle and the counters vs
# nicmodels/coalesce_model.py, over every combination of the rules; hand-worked cases
# with their cycle
# numbers; the event-driven predict_irqs vs the cycle-stepped model.
import gc
import itertools
import random

import pytest
from amaranth.sim import Simulator

from nicmodels.coalesce_model import (ABS, FRAMES, IMMEDIATE, REASONS, USECS,
                                      CoalesceModel, predict_irq_reasons, predict_irqs,
                                      random_stim)
from rtl.nic.irq_coalescer import COUNTS, IRQCoalescer
from rtl.verilator_lint import verilator_lint


def config(frames=0, usecs=0, abs_usecs=0, min_interval=0, tick_cycles=1):
    return dict(frames=frames, usecs=usecs, abs_usecs=abs_usecs, min_interval=min_interval,
                tick_cycles=tick_cycles)


def simulate(cfg, stim, width=16, count_width=32, fast_tail=0):
    """Runs stim [(event, irq_ready, enable)] cycle by cycle on the core and the model, checking
    irq_valid (before the edge) and pending (after it) every cycle and the counters at the end.
    fast_tail: cycles appended with the last stimulus held, not checked cycle by cycle.
    Returns [(accept cycle, reason)] read from the core's counters."""
    dut = IRQCoalescer(width=width, count_width=count_width)
    model = CoalesceModel(**cfg, width=width, count_width=count_width)
    accepts = []

    async def bench(ctx):
        for name, v in cfg.items():
            ctx.set(getattr(dut, name), v)
        before = dict.fromkeys(REASONS, 0)
        for cyc, (event, ready, enable) in enumerate(stim):
            ctx.set(dut.event, event)
            ctx.set(dut.irq_ready, ready)
            ctx.set(dut.enable, enable)
            valid = ctx.get(dut.irq_valid)
            expected = model.step(event, ready, enable)
            assert valid == expected, f"cycle {cyc}: irq_valid {valid} != model {expected}"
            await ctx.tick()
            assert ctx.get(dut.pending) == model.pending, f"cycle {cyc}: pending"
            if valid and ready:
                now = {r: ctx.get(getattr(dut, r)) for r in REASONS}
                changed = [r for r in REASONS if now[r] != before[r]]
                assert len(changed) == 1, f"cycle {cyc}: reasons {changed}"
                accepts.append((cyc, changed[0]))
                before = now
        if fast_tail:
            event, ready, enable = stim[-1]
            for _ in range(fast_tail):
                model.step(event, ready, enable)
            await ctx.tick().repeat(fast_tail)
        got = {name: ctx.get(getattr(dut, name)) for name in COUNTS + ("pending",)}
        assert got == model.counts()

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return accepts


def stim_from(ncycles, events=(), not_ready=(), disabled=()):
    """Stimulus from the sets of cycles with an event, with irq_ready 0, with enable 0."""
    events, not_ready, disabled = set(events), set(not_ready), set(disabled)
    return [(int(c in events), int(c not in not_ready), int(c not in disabled))
            for c in range(ncycles)]


COMBOS = list(itertools.product([0, 1, 4], [0, 3], [0, 5], [0, 7], [1, 3]))


@pytest.mark.parametrize("frames,usecs,abs_usecs,min_interval,tick_cycles", COMBOS)
def test_random_streams(frames, usecs, abs_usecs, min_interval, tick_cycles):
    cfg = config(frames, usecs, abs_usecs, min_interval, tick_cycles)
    rng = random.Random(str(cfg))
    stim = random_stim(rng, 600, bursty=True) + random_stim(rng, 600, bursty=False)
    accepts = simulate(cfg, stim)
    assert len(accepts) >= 5
    assert sum(ev for ev, _, _ in stim) >= 100


def test_model_predict_matches_step():
    """predict_irqs (event-driven) == the cycle-stepped model with irq_ready and enable 1, also
    with long gaps and ticks of many cycles."""
    rng = random.Random(7)
    for trial in range(300):
        cfg = config(rng.choice([0, 1, 2, 5, 30]), rng.choice([0, 1, 4, 50]),
                     rng.choice([0, 1, 6, 90]), rng.choice([0, 1, 3, 40]),
                     rng.choice([0, 1, 2, 7]))
        ncycles = rng.randint(1, 3000)
        events, c = [], rng.randint(0, 20)
        while c < ncycles + 5:                        # some events beyond ncycles: ignored
            events.append(c)
            c += rng.choice([1, 1, 1, 2, 3, 10, 100, 600])
        m = CoalesceModel(**cfg)
        ev = set(events)
        stepped = []
        for cyc in range(ncycles):
            before = m.irqs
            if m.step(int(cyc in ev), 1) and m.irqs != before:
                stepped.append(cyc)
        pred = predict_irq_reasons(events, ncycles, **cfg)
        assert [c for c, _ in pred] == stepped, (trial, cfg)
        assert {r: sum(1 for _, x in pred if x == r) for r in REASONS} == \
            {r: getattr(m, r) for r in REASONS}, (trial, cfg)


def test_predict_100k_frames_fast():
    """100 000 frames spread over ~10**8 cycles: predict_irqs visits events only."""
    events = [i * 997 + (i % 13) for i in range(100_000)]
    cfg = config(frames=8, usecs=50, abs_usecs=200, min_interval=20, tick_cycles=125)
    irqs = predict_irqs(events, events[-1] + 10**6, **cfg)
    assert 100_000 // 8 <= len(irqs) <= 100_000


# Hand-worked cases. An event in cycle c is pending from c+1, so with irq_ready 1 the earliest
# interrupt for it is accepted in cycle c+1.

def check(cfg, stim, expected, **kw):
    """The core's [(accept cycle, reason)] is `expected`, and so is the model's prediction when
    irq_ready and enable are always 1."""
    got = simulate(cfg, stim, **kw)
    assert got == expected
    if all(r and e for _, r, e in stim):
        events = [c for c, (ev, _, _) in enumerate(stim) if ev]
        assert predict_irq_reasons(events, len(stim), **cfg) == expected


def test_no_coalescing_one_irq_per_event():
    stim = stim_from(10, events=[0, 1, 2, 5])
    expected = [(1, IMMEDIATE), (2, IMMEDIATE), (3, IMMEDIATE), (6, IMMEDIATE)]
    check(config(frames=1, usecs=3, abs_usecs=5), stim, expected)     # frames=1: timers unused
    check(config(), stim, expected)                                  # all rules 0


def test_frames_4():
    # Events 0..9. Pending is 4 in cycle 4 (events 0-3): accepted in 4. The event of cycle 4
    # counts for the next interrupt: events 4-7 make pending 4 in cycle 8. Events 8, 9 stay.
    cfg = config(frames=4)
    assert simulate(cfg, stim_from(11, events=range(10))) == [(4, FRAMES), (8, FRAMES)]
    m = CoalesceModel(**cfg)
    for c in range(11):
        m.step(int(c < 10), 1)
    assert m.pending == 2
    assert predict_irqs(range(10), 11, **cfg) == [4, 8]


def test_usecs_restarted_by_every_event_abs_fires():
    # usecs=3 alone: events every 2 cycles (0..20) keep restarting the delay timer; it expires
    # 3 cycles after the last one, in cycle 23.
    stim = stim_from(30, events=range(0, 21, 2))
    check(config(usecs=3), stim, [(23, USECS)])
    # With abs_usecs=5: the first event (0) starts the absolute timer: cycle 5. Event 6 makes
    # pending 0 -> 1 again: 11; event 12: 17; event 18: 23, which is also 3 after the last
    # event (20): usecs has priority over abs.
    check(config(usecs=3, abs_usecs=5), stim,
          [(5, ABS), (11, ABS), (17, ABS), (23, USECS)])
    # Ticks of 3 cycles: usecs=2 is 6 cycles. Events 0, 4, 8 (4 apart): 8 + 6 = 14. Event 20: 26.
    check(config(usecs=2, tick_cycles=3), stim_from(30, events=[0, 4, 8, 20]),
          [(14, USECS), (26, USECS)])
    # tick_cycles 0 is 1.
    check(config(usecs=3, tick_cycles=0), stim, [(23, USECS)])


def test_abs_not_restarted():
    # abs_usecs=5: events 0..5. The timer started by event 0 is not restarted by 1..4: cycle 5.
    # Event 5 comes in the accepting cycle: it is the first of the next interrupt: 5 + 5 = 10.
    check(config(abs_usecs=5), stim_from(14, events=range(6)), [(5, ABS), (10, ABS)])
    # Ticks of 3: abs_usecs=2 is 6 cycles; events 1..12 every cycle: 7, then event 7: 13.
    check(config(abs_usecs=2, tick_cycles=3), stim_from(16, events=range(1, 13)),
          [(7, ABS), (13, ABS)])
    # frames=4 and abs_usecs=5 with events 3 apart: pending 2 in cycle 4 (events 0, 3), then
    # abs in 5. Event 6 starts it again: 11 (events 6, 9).
    check(config(frames=4, abs_usecs=5), stim_from(14, events=[0, 3, 6, 9]),
          [(5, ABS), (11, ABS)])


def test_min_interval_spacing():
    # frames=1, min_interval=7: events 0..3. The first interrupt (cycle 1) is not held off (none
    # before); the next may be accepted from 1 + 7 = 8 and covers events 1, 2, 3. Event 20: 21.
    stim = stim_from(24, events=[0, 1, 2, 3, 20])
    check(config(frames=1, min_interval=7), stim, [(1, IMMEDIATE), (8, IMMEDIATE),
                                                     (21, IMMEDIATE)])
    # Ticks of 3: min_interval=2 is 6 cycles: 1, 7; event 9: 10 is 3 after 7: held until 13.
    check(config(frames=1, min_interval=2, tick_cycles=3), stim_from(16, events=[0, 1, 9]),
          [(1, IMMEDIATE), (7, IMMEDIATE), (13, IMMEDIATE)])
    # min_interval 2**16-1 does not hold off the first interrupt (the timer resets to expired).
    check(config(frames=1, min_interval=0xFFFF), stim_from(4, events=[1]), [(2, IMMEDIATE)])
    # Spacing counts from the accept: irq_ready 0 in cycles 1..3 delays the first to 4, so
    # the second (event 5) waits until 4 + 7 = 11.
    got = simulate(config(frames=1, min_interval=7),
                   stim_from(14, events=[0, 5], not_ready=[1, 2, 3]))
    assert got == [(4, IMMEDIATE), (11, IMMEDIATE)]


def test_enable_holds_interrupts():
    # enable 0 in cycles 0..9: events 2, 3 are counted (pending 2) and make one interrupt in 10.
    assert simulate(config(frames=1), stim_from(14, events=[2, 3], disabled=range(10))) == \
        [(10, IMMEDIATE)]
    # The usecs timer runs while disabled: event 2 expires in 5, fires in 10 when re-enabled.
    assert simulate(config(usecs=3), stim_from(14, events=[2], disabled=range(10))) == \
        [(10, USECS)]
    # A request already raised stays raised when enable drops: event 0 raises irq_valid in 1,
    # irq_ready 0 until 4, enable 0 from 2: accepted in 5.
    assert simulate(config(frames=1), stim_from(
        8, events=[0], not_ready=range(1, 5), disabled=range(2, 8))) == [(5, IMMEDIATE)]


def test_reason_latched_when_raised():
    # frames=4, usecs=3: events 0, 1: the delay timer expires in 4 (raised, by usecs).
    # irq_ready 0 in 4..6; events 4, 5 make pending 4 in 6, but the reason stays usecs.
    # Accepted in 7; pending then 0.
    cfg = config(frames=4, usecs=3)
    assert simulate(cfg, stim_from(10, events=[0, 1, 4, 5], not_ready=[4, 5, 6])) == \
        [(7, USECS)]
    # Several rules due in the same cycle: frames beats usecs beats abs (usecs over abs: cycle 23
    # of test_usecs_restarted_by_every_event_abs_fires). frames=4, usecs=1, abs_usecs=1, events
    # 0..3: in 1 usecs and abs are due (1 after event 0), pending 1: usecs; the event of each
    # accepting cycle starts the next one.
    assert simulate(config(frames=4, usecs=1, abs_usecs=1), stim_from(6, events=range(4))) == \
        [(1, USECS), (2, USECS), (3, USECS), (4, USECS)]
    # frames=2, usecs=1, enable 0 in 0..2, events 0, 1: in 3 pending is 2 and 3 - 1 >= 1: frames.
    assert simulate(config(frames=2, usecs=1), stim_from(5, events=[0, 1], disabled=range(3))) \
        == [(3, FRAMES)]
    # frames=2, abs_usecs=2, events 0, 1: in 2 pending is 2 and 2 - 0 >= 2: frames.
    assert simulate(config(frames=2, abs_usecs=2), stim_from(5, events=[0, 1])) == [(2, FRAMES)]
    # frames=2, usecs=2, events 0, 1: in 2 pending is 2; usecs (restarted by 1) not yet: frames.
    assert simulate(config(frames=2, usecs=2), stim_from(5, events=[0, 1])) == [(2, FRAMES)]


def test_pending_saturates():
    # 65 540 events with enable 0 (checked cycle by cycle for 40, then run at full speed):
    # pending stops at 2**16-1, then one interrupt clears it.
    cfg = config(frames=0xFFFF, usecs=0xFFFF)
    stim = [(1, 1, 0)] * 40
    simulate(cfg, stim, fast_tail=65_500)             # checks pending == 65535 at the end
    # width=4 (pending up to 15) cycle by cycle: 20 events disabled, then enabled: frames=15.
    got = simulate(config(frames=15), stim_from(24, events=range(20), disabled=range(20)),
                   width=4)
    assert got == [(20, FRAMES)]
    m = CoalesceModel(**config(frames=15), width=4)
    for _ in range(20):
        m.step(1, 1, 0)
    assert m.pending == 15


def test_counters_wrap():
    # count_width=2: five interrupts read irqs == 1.
    got = simulate(config(frames=1), stim_from(12, events=range(0, 10, 2)), count_width=2)
    assert len(got) == 5


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_bad_parameters():
    with pytest.raises(ValueError):
        IRQCoalescer(width=1)
    with pytest.raises(ValueError):
        IRQCoalescer(count_width=0)
    with pytest.raises(ValueError):
        CoalesceModel(**config(frames=-1))
    with pytest.raises(ValueError):
        CoalesceModel(**config(usecs=0x10000))
    with pytest.raises(ValueError):
        CoalesceModel(**config(tick_cycles=16), width=4)
    with pytest.raises(ValueError):
        predict_irqs([3, 3], 10, **config(frames=1))
    with pytest.raises(ValueError):
        predict_irqs([5, 2], 10, **config(frames=1))
    with pytest.raises(ValueError):
        predict_irqs([1, 2.5], 10, **config(frames=1))
    gc.collect()                  # the UnusedElaboratable warnings here, where they are ignored


def test_verilator_lint(tmp_path):
    verilator_lint(IRQCoalescer(), "irq_coalescer", tmp_path)
