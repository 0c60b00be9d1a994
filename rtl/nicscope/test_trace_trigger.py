# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of TraceTrigger (amaranth.sim): fire cycles of every mode/op/count/sequence vs a model.
import gc
import random

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.trace_trigger import STAGE_FIELDS, Mode, Op, TraceTrigger


def stage_cfg(mask_a=0, value_a=0, mode_a=Mode.LEVEL, mask_b=0, value_b=0, mode_b=Mode.LEVEL,
              op=Op.A, count=1):
    return dict(mask_a=mask_a, value_a=value_a, mode_a=mode_a, mask_b=mask_b, value_b=value_b,
                mode_b=mode_b, op=op, count=count)


class TriggerModel:
    """The header's trigger, one cycle at a time (prev starts at 0, as the register does)."""

    def __init__(self):
        self.stage, self.hits, self.prev = 0, 0, 0

    def cmp(self, sample, mask, value, mode):
        now = (sample & mask) == (value & mask)
        was = (self.prev & mask) == (value & mask)
        return {Mode.LEVEL: now, Mode.RISE: now and not was, Mode.FALL: was and not now,
                Mode.CHANGE: ((sample ^ self.prev) & mask) != 0}[Mode(mode)]

    def cond(self, sample, s):
        a = self.cmp(sample, s["mask_a"], s["value_a"], s["mode_a"])
        b = self.cmp(sample, s["mask_b"], s["value_b"], s["mode_b"])
        return {Op.A: a, Op.A_AND_B: a and b, Op.A_OR_B: a or b, Op.ALWAYS: True}[Op(s["op"])]

    def step(self, sample, enable, arm, nstages_used, stages):
        fire = 0
        if arm:
            self.stage, self.hits = 0, 0
        elif enable:
            if nstages_used == 0:
                fire = 1
            elif self.cond(sample, stages[self.stage]):
                if self.hits + 1 >= max(stages[self.stage]["count"], 1):
                    self.hits = 0
                    if self.stage == nstages_used - 1:
                        fire = 1
                    else:
                        self.stage += 1
                else:
                    self.hits += 1
        self.prev = sample
        return fire


def simulate(dut, runs):
    """runs: a list of (nstages_used, stages, cycles), cycles = [(sample, enable, arm)]; the
    configuration is applied before the first cycle of its run. Returns, per run, the cycles
    (index within the run) on which `fire` was 1, and the `stage` output on each cycle."""
    results = []

    async def bench(ctx):
        for nstages_used, stages, cycles in runs:
            ctx.set(dut.nstages_used, nstages_used)
            for i in range(dut.nstages):
                cfg = stages[i] if i < len(stages) else stage_cfg()
                for f in STAGE_FIELDS:
                    ctx.set(getattr(dut, f"s{i}_{f}"), cfg[f])
            fires, stage_trace = [], []
            # With latency 1 the sample goes in one cycle ahead of its enable and arm, and the
            # results come out one cycle later: shifted back, they must be the same.
            lat = dut.latency
            pad = [(0, 0, 0)] * lat
            feed = [(s, e, a) for (s, _, _), (_, e, a) in zip(cycles + pad, pad + cycles)]
            for k, (sample, enable, arm) in enumerate(feed):
                ctx.set(dut.sample, sample)
                ctx.set(dut.enable, enable)
                ctx.set(dut.arm, arm)
                if k >= lat:
                    stage_trace.append(ctx.get(dut.stage))
                    if ctx.get(dut.fire):
                        fires.append(k - lat)
                await ctx.tick()
            results.append((fires, stage_trace))

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return results


def fires_of(nstages_used, stages, samples, enable=None, arm=None, sample_width=4, nstages=4,
             latency=0):
    """Arm on cycle 0 (sample 0, disabled), then the samples from cycle 1, enabled unless told."""
    n = len(samples)
    enable = enable if enable is not None else [1] * n
    arm = arm if arm is not None else [0] * n
    cycles = [(0, 0, 1)] + list(zip(samples, enable, arm))
    dut = TraceTrigger(sample_width, nstages=nstages, latency=latency)
    (fires, _), = simulate(dut, [(nstages_used, stages, cycles)])
    return fires


# Directed cases: the expected cycles are worked out by hand (cycle 0 is the arm cycle).
S = [0, 1, 1, 0, 1, 3, 2, 0, 0, 1]        # samples on cycles 1..10


@pytest.mark.parametrize("mode,expected", [
    (Mode.LEVEL, [2, 3, 5, 6, 10]),   # bit 0 is 1 on cycles 2, 3, 5, 6, 10
    (Mode.RISE, [2, 5, 10]),          # 0 -> 1 on cycles 2, 5, 10
    (Mode.FALL, [4, 7]),              # 1 -> 0 on cycles 4, 7
    (Mode.CHANGE, [2, 4, 5, 7, 10]),  # bit 0 differs from the previous cycle
])
def test_modes(mode, expected):
    assert fires_of(1, [stage_cfg(mask_a=1, value_a=1, mode_a=mode)], S) == expected


def test_masked_value_and_change_ignores_value():
    # LEVEL on the two low bits == 0b10: only sample 2 (cycle 7).
    assert fires_of(1, [stage_cfg(mask_a=3, value_a=2)], S) == [7]
    # Bits outside the mask are ignored: value 0b0110 under mask 0b0010 matches 2 and 3.
    assert fires_of(1, [stage_cfg(mask_a=2, value_a=6)], S) == [6, 7]
    # CHANGE on bit 1: 1 -> 3 (cycle 6), 2 -> 0 (cycle 8); the value does not matter.
    assert fires_of(1, [stage_cfg(mask_a=2, value_a=0, mode_a=Mode.CHANGE)], S) == [6, 8]
    assert fires_of(1, [stage_cfg(mask_a=2, value_a=15, mode_a=Mode.CHANGE)], S) == [6, 8]
    # Mask 0: LEVEL always matches, RISE/FALL/CHANGE never.
    assert fires_of(1, [stage_cfg(mask_a=0, value_a=5)], S[:3]) == [1, 2, 3]
    for mode in (Mode.RISE, Mode.FALL, Mode.CHANGE):
        assert fires_of(1, [stage_cfg(mask_a=0, mode_a=mode)], S) == []


@pytest.mark.parametrize("op,expected", [
    (Op.A, [2, 3, 5, 6, 10]),        # A: bit 0 set
    (Op.A_AND_B, [6]),                # and B: bit 1 set -> sample 3 only
    (Op.A_OR_B, [2, 3, 5, 6, 7, 10]),  # or B: adds sample 2 (cycle 7)
    (Op.ALWAYS, list(range(1, 11))),
])
def test_ops(op, expected):
    cfg = stage_cfg(mask_a=1, value_a=1, mask_b=2, value_b=2, op=op)
    assert fires_of(1, [cfg], S) == expected


def test_a_and_b_with_edges():
    # A = FALL of bit 0 (cycles 4, 7) and B = LEVEL bit 1 set (cycles 6, 7): cycle 7 (3 -> 2).
    cfg = stage_cfg(mask_a=1, value_a=1, mode_a=Mode.FALL, mask_b=2, value_b=2, op=Op.A_AND_B)
    assert fires_of(1, [cfg], S) == [7]
    # A = LEVEL bit 0 set and B = RISE of bit 1 (cycle 6 only): cycle 6.
    cfg = stage_cfg(mask_a=1, value_a=1, mask_b=2, value_b=2, mode_b=Mode.RISE, op=Op.A_AND_B)
    assert fires_of(1, [cfg], S) == [6]
    # A = RISE of bit 0 (2, 5, 10) or B = FALL of bit 1 (8).
    cfg = stage_cfg(mask_a=1, value_a=1, mode_a=Mode.RISE, mask_b=2, value_b=2, mode_b=Mode.FALL,
                    op=Op.A_OR_B)
    assert fires_of(1, [cfg], S) == [2, 5, 8, 10]


@pytest.mark.parametrize("count,expected", [
    (0, [2, 3, 5, 6, 10]),   # 0 counts as 1
    (1, [2, 3, 5, 6, 10]),
    (2, [3, 6]),             # the 2nd and, counting again, the 4th
    (3, [5]),
    (5, [10]),
    (6, []),
])
def test_count(count, expected):
    assert fires_of(1, [stage_cfg(mask_a=1, value_a=1, count=count)], S) == expected


def test_sequence_of_stages():
    """Stage 0: sample == 1 (cycle 2 completes it); stage 1: sample == 3 (cycle 6); stage 2: two
    cycles with sample == 0 (cycles 8 and 9; cycle 4's 0 came while stage 0 or 1 was evaluated,
    so it does not count); stage 3: sample == 1 (cycle 10)."""
    stages = [stage_cfg(mask_a=15, value_a=1), stage_cfg(mask_a=15, value_a=3),
              stage_cfg(mask_a=15, value_a=0, count=2), stage_cfg(mask_a=15, value_a=1)]
    assert fires_of(1, stages, S) == [2, 3, 5, 10]   # after firing the last stage counts again
    assert fires_of(2, stages, S) == [6]
    assert fires_of(3, stages, S) == [9]
    assert fires_of(4, stages, S) == [10]
    # A stage completed on one cycle is not evaluated by the next stage on the same cycle:
    # two stages both "sample == 1" complete on cycles 2 and 3 (then stage 1 again on 5, 10).
    same = [stage_cfg(mask_a=15, value_a=1)] * 2
    assert fires_of(2, same, S) == [3, 5, 10]


def test_nstages_used_zero_fires_on_first_enabled_cycle():
    stages = [stage_cfg(mask_a=15, value_a=9)]     # never matches
    enable = [0, 0, 0, 1, 1, 0, 1]
    # With enable held, every enabled cycle is a first-enabled cycle (the capture drops enable
    # on the trigger cycle's next cycle).
    assert fires_of(0, stages, S[:7], enable=enable) == [4, 5, 7]


def test_enable_blocks_and_arm_restarts():
    stages = [stage_cfg(mask_a=1, value_a=1, count=3)]
    # Disabled on cycles 3 and 5: the matches there do not count; 2, 6, 10 do.
    assert fires_of(1, stages, S, enable=[1, 1, 0, 1, 0, 1, 1, 1, 1, 1]) == [10]
    # Arm on cycle 5 clears the 2 hits of cycles 2, 3 (and its own match is not counted):
    # 6, 10 then are only 2.
    assert fires_of(1, stages, S, arm=[0, 0, 0, 0, 1, 0, 0, 0, 0, 0]) == []
    # A two-stage sequence (sample == 1, then sample == 3) fires on cycle 6; an arm on cycle 6
    # (in stage 1) sends it back to stage 0, which completes on cycle 10, so it does not fire.
    seq = [stage_cfg(mask_a=15, value_a=1), stage_cfg(mask_a=15, value_a=3)]
    assert fires_of(2, seq, S) == [6]
    assert fires_of(2, seq, S, arm=[0, 0, 0, 0, 0, 1, 0, 0, 0, 0]) == []
    # An arm on cycle 4 (in stage 1): stage 0 completes again on cycle 5, stage 1 on 6.
    assert fires_of(2, seq, S, arm=[0, 0, 0, 1, 0, 0, 0, 0, 0, 0]) == [6]
    # An arm on an enabled cycle does not fire, even with nstages_used = 0.
    assert fires_of(0, seq, S[:4], arm=[0, 1, 0, 0]) == [1, 3, 4]


def test_prev_is_kept_while_disabled():
    """RISE on the first enabled cycle compares with the previous cycle's sample, enabled or not."""
    cfg = [stage_cfg(mask_a=1, value_a=1, mode_a=Mode.RISE)]
    assert fires_of(1, cfg, [0, 1, 1], enable=[0, 0, 1]) == []
    assert fires_of(1, cfg, [0, 0, 1], enable=[0, 0, 1]) == [3]


def random_stage(rng, width):
    def field():
        return rng.randrange(2**width)

    def mask():
        # Few bits under the mask, so that matches are frequent; sometimes all or none.
        return rng.choice([0, 2**width - 1, 1 << rng.randrange(width), field() & field()])

    return stage_cfg(mask_a=mask(), value_a=field(), mode_a=rng.choice(list(Mode)),
                     mask_b=mask(), value_b=field(), mode_b=rng.choice(list(Mode)),
                     op=rng.choice(list(Op)), count=rng.choice([0, 1, 1, 2, 3, 5]))


@pytest.mark.parametrize("nstages,sample_width,seed,latency", [
    (4, 3, 1, 0), (4, 5, 2, 0), (2, 2, 3, 0), (1, 4, 4, 0), (4, 3, 5, 1), (4, 5, 6, 1),
    (1, 4, 7, 1)])
def test_random_vs_model(nstages, sample_width, seed, latency):
    rng = random.Random(seed)
    dut = TraceTrigger(sample_width, nstages=nstages, count_width=8, latency=latency)
    runs = []
    for _ in range(100):
        nstages_used = rng.choice([0] + list(range(1, nstages + 1)) * 4)
        stages = [random_stage(rng, sample_width) for _ in range(nstages)]
        p_change, p_enable = rng.choice([0.2, 0.5, 0.9]), rng.choice([1.0, 0.8, 0.5])
        cycles, sample = [], rng.randrange(2**sample_width)
        for k in range(40):
            if rng.random() < p_change:
                sample = rng.randrange(2**sample_width)
            cycles.append((sample, int(rng.random() < p_enable),
                           int(k == 0 or rng.random() < 0.03)))
        runs.append((nstages_used, stages, cycles))
    results = simulate(dut, runs)
    model = TriggerModel()
    total_fires = 0
    for (nstages_used, stages, cycles), (fires, stage_trace) in zip(runs, results):
        expected, expected_stage = [], []
        for k, (sample, enable, arm) in enumerate(cycles):
            expected_stage.append(model.stage)
            if model.step(sample, enable, arm, nstages_used, stages):
                expected.append(k)
        assert fires == expected, (nstages_used, stages, cycles)
        assert stage_trace == expected_stage, (nstages_used, stages, cycles)
        total_fires += len(fires)
    assert total_fires > 100


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_latency_one_fires_on_the_same_cycles():
    """latency=1 registers the conditions: shifted back one cycle, every directed case above
    gives the same cycles (the random cases check it against the model)."""
    seq = [stage_cfg(mask_a=1, value_a=1), stage_cfg(mask_a=3, value_a=2),
           stage_cfg(mask_a=2, value_a=0, mode_a=Mode.FALL), stage_cfg(op=Op.ALWAYS)]
    for n in range(5):
        assert fires_of(n, seq, S, latency=1) == fires_of(n, seq, S)
    cfg = [stage_cfg(mask_a=1, value_a=1, mode_a=Mode.RISE)]
    assert fires_of(1, cfg, [0, 0, 1], enable=[0, 0, 1], latency=1) == [3]
    with pytest.raises(ValueError):
        TraceTrigger(4, latency=2)
    gc.collect()                  # its UnusedElaboratable warning here, where it is ignored
