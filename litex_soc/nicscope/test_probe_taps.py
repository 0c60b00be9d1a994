# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of ProbeTaps (Migen simulation): a probed expression's tapped value equals the
# expression tap_stages cycles earlier, on every cycle of a random run, and with watch() the taps
# sit at the design's registers, not at the signals it computes combinationally.
import random

import pytest
from migen import FSM, Case, Cat, If, Module, NextState, Signal, run_simulation

from litex_soc.nicscope.probe_taps import ProbeTaps


class Design(Module):
    """Registers driven from the testbench (a_in, b_in), and combinational logic of the kinds
    a probe meets: a plain comparison, a default-then-If assignment, a Case assigning two
    signals, an FSM's outputs, a signal computed from another computed one, a wide field."""

    def __init__(self):
        self.a_in, self.b_in = Signal(4), Signal()
        self.a, self.b = Signal(4), Signal()
        self.sync += [self.a.eq(self.a_in), self.b.eq(self.b_in)]
        self.eq3 = Signal()                 # plain: a == 3
        self.comb += self.eq3.eq(self.a == 3)
        self.sel = Signal(reset=1)          # default, then If/Elif on other computed signals
        self.comb += [
            self.sel.eq(self.sel.reset),
            If(self.b, self.sel.eq(self.eq3)).Elif(self.a[0], self.sel.eq(0)),
        ]
        self.odd, self.other = Signal(), Signal()     # one Case assigns both
        self.comb += Case(self.a, {
            1: [self.odd.eq(1), self.other.eq(0)],
            3: [self.odd.eq(1), self.other.eq(self.b)],
            "default": [self.odd.eq(0), self.other.eq(1)],
        })
        self.only2, self.not2 = Signal(), Signal()    # a choice empty for not2, and a default
        self.comb += Case(self.a, {2: self.only2.eq(1), "default": self.not2.eq(1)})
        self.pair = Signal(2)                 # assigned together with another: tapped as is
        self.lo = Signal()
        self.comb += Cat(self.lo, self.pair).eq(self.a[1:])
        self.busy = Signal()
        fsm = FSM()
        self.submodules += fsm
        fsm.act("IDLE", If(self.b & self.eq3, NextState("RUN")))
        fsm.act("RUN", self.busy.eq(1), If(self.a == 0, NextState("IDLE")))
        self.wide = Signal(5)               # a data field: tapped where it is
        self.comb += self.wide.eq(Cat(self.a, self.b))
        self.reads = Signal()               # reads what its own block assigns: tapped as is
        self.tmp = Signal()
        self.comb += If(self.a[1], self.tmp.eq(self.a[2]), self.reads.eq(self.tmp ^ self.b))
        self.on_reads = Signal()            # computed from one that is not copied: tapped as is
        self.comb += self.on_reads.eq(self.reads & self.a[0])
        self.chain = Signal()               # computed from a computed signal: followed twice
        self.comb += self.chain.eq(self.eq3 | self.busy)


def build(tap_stages, watch):
    top = Module()
    top.submodules.design = design = Design()
    taps = ProbeTaps(tap_stages)
    if watch:
        taps.watch(top)
    probes = {
        "eq3": design.eq3, "sel": design.sel, "odd_and_other": design.odd & design.other,
        "busy": design.busy, "wide": design.wide, "reads": design.reads,
        "mix": Cat(design.sel, design.busy, design.wide[2:4]), "chain": design.chain,
        "not2": design.not2, "lo": design.lo, "on_reads": design.on_reads,
    }
    tapped = {k: taps.registered(v) for k, v in probes.items()}
    top.submodules.taps = taps
    return top, design, taps, probes, tapped


@pytest.mark.parametrize("tap_stages", [1, 3])
@pytest.mark.parametrize("watch", [False, True])
def test_tapped_value_is_the_value_tap_stages_earlier(tap_stages, watch):
    top, design, _taps, probes, tapped = build(tap_stages, watch)
    rng = random.Random(tap_stages * 2 + watch)
    seen = {k: [] for k in probes}
    got = {k: [] for k in probes}

    def bench():
        for _ in range(400):
            yield design.a_in.eq(rng.choice([0, 1, 3, rng.randrange(16)]))
            yield design.b_in.eq(rng.randrange(2))
            yield
            for k in probes:
                seen[k].append((yield probes[k]))
                got[k].append((yield tapped[k]))

    run_simulation(top, bench())
    for k in probes:
        assert got[k][tap_stages:] == seen[k][:-tap_stages], k
        assert len(set(seen[k])) > 1, f"{k} never changed: the run tests nothing"


def test_watch_taps_registers_not_computed_signals():
    _top, design, taps, _probes, _tapped = build(3, watch=True)
    fsm = next(m for _n, m in design._submodules if isinstance(m, FSM))
    registers = {id(s) for s in (design.a, design.b, fsm.state)}
    as_they_are = {id(s) for s in (design.wide, design.reads, design.lo, design.on_reads)}
    assert set(taps.taps) == registers | as_they_are
    for computed in (design.eq3, design.sel, design.odd, design.other, design.busy,
                     design.chain, design.not2):
        assert id(computed) not in taps.taps and id(computed) in taps.copies


def test_without_watch_taps_the_probed_signals():
    _top, design, taps, _probes, _tapped = build(2, watch=False)
    assert not taps.copies
    assert {id(design.eq3), id(design.sel), id(design.busy)} <= set(taps.taps)


def test_tap_stages_at_least_one():
    with pytest.raises(ValueError, match="tap_stages"):
        ProbeTaps(0)
