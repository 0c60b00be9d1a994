# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of FigureCompare and of the bus analyzer's triggers on figures (amaranth.sim):
# each comparator's hit and value against the sources driven, for random selections and
# thresholds; in a small BusAnalyzer, a trigger on a level crossing a threshold and on an event
# latency above one fires on the cycle the docstring gives, latches the figure, and the capture's
# track records the level on every cycle.
import gc
import random

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.analyzer import TRACK_WIDTH, BusAnalyzer, Event, Probe
from rtl.nicscope.figure_compare import FigureCompare
from rtl.nicscope.trace_capture import TS_WIDTH, State
from rtl.nicscope.trace_trigger import Mode, Op


def run(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("seed,widths,value_of", [
    (1, (4, 16, 32, 1), None), (2, (4, 16, 32, 1), None), (3, (4, 16, 32, 1), None),
    # Sources sharing a value (a breakdown stage's classes): 1, 3 and 4 share value 1.
    (4, (4, 32, 16, 32, 32, 1), (0, 1, 2, 1, 1, 3)),
])
def test_compare_random(seed, widths, value_of):
    rng = random.Random(seed)
    dut = FigureCompare(widths, ncmp=2, value_of=value_of)
    of = value_of or tuple(range(len(widths)))
    hits = []

    async def bench(ctx):
        # Per cycle: the sources and the configuration driven. hit on t + 2 is the figure of
        # t (sel of t) against below and threshold of t + 1.
        srcs, cfgs = [], []
        for cyc in range(400):
            if cyc % 50 == 0:
                cfg = [(rng.randrange(len(widths) + 1), rng.randrange(2),
                        rng.randrange(2**rng.choice(widths))) for _ in range(2)]
                for i, (sel, below, thr) in enumerate(cfg):
                    ctx.set(getattr(dut, f"sel{i}"), sel)
                    ctx.set(getattr(dut, f"below{i}"), below)
                    ctx.set(getattr(dut, f"threshold{i}"), thr)
            values = [rng.randrange(2**w) for w in dut.value_widths]
            src = [(rng.randrange(2), values[of[k]] % 2**w) for k, w in enumerate(widths)]
            for k, (v, _x) in enumerate(src):
                ctx.set(getattr(dut, f"valid{k}"), v)
            for j, x in enumerate(values):
                ctx.set(getattr(dut, f"value{j}"), x)
            srcs.append(src)
            cfgs.append(cfg)
            if cyc >= 2:
                hit, vals = 0, []
                for i in range(2):
                    sel = cfgs[cyc - 2][i][0]
                    _s, below, thr = cfgs[cyc - 1][i]
                    v, x = srcs[cyc - 2][sel] if sel < len(widths) else (0, 0)
                    if v and (x < thr if below else x > thr):
                        hit |= 1 << i
                    vals.append(x if v else 0)
                assert ctx.get(dut.hit) == hit, f"cycle {cyc}"
                for i in range(2):
                    assert ctx.get(getattr(dut, f"value{i}_q")) == vals[i]
                hits.append(hit)
            await ctx.tick()

    run(dut, bench)
    assert any(hits) and not all(hits)


@pytest.mark.filterwarnings("ignore:.*created but never used")
@pytest.mark.parametrize("args", [dict(widths=()), dict(widths=(33,)), dict(widths=(4,), ncmp=5)])
def test_compare_bad_parameters(args):
    with pytest.raises(ValueError):
        FigureCompare(**args)
    gc.collect()                  # its UnusedElaboratable warning here, where it is ignored


def small_analyzer(**kw):
    probes = [Probe("p", [("x", 4)], nbytes_width=2)]
    return BusAnalyzer(probes, depth=64, nstages=2, levels=(("lv", 8), ("wide", 16)),
                       events=(Event("e"),), **kw)


def stage_on_bit(ctx, dut, bit, mode):
    mask = 1 << bit
    ctx.set(dut.trig_s0_mask_a, mask)
    ctx.set(dut.trig_s0_value_a, mask)
    ctx.set(dut.trig_s0_mode_a, mode)
    ctx.set(dut.trig_s0_op, Op.A)
    ctx.set(dut.trig_s0_count, 1)
    ctx.set(dut.trig_nstages_used, 1)


async def read_capture(ctx, dut):
    start, count = ctx.get(dut.cap_start), ctx.get(dut.cap_count)
    raw = []
    for i in range(count):
        ctx.set(dut.cap_rd_addr, (start + i) % dut.depth)
        await ctx.tick()
        await ctx.tick()
        raw.append(ctx.get(dut.cap_rd_data))
    return raw


def test_analyzer_level_trigger_and_track():
    dut = small_analyzer(figures=2, tracks=2)
    sw = dut.sample_width
    names = [n for n, _ in dut.figure_sources()]
    assert names[:2] == ["level.lv", "level.wide"] and names[-1] == "ev.e"
    assert dut.trig_width == sw + 2 and dut.capture_width == sw + 2 * TRACK_WIDTH
    levels, wides, fired = {}, {}, {}

    async def bench(ctx):
        rng = random.Random(5)
        ctx.set(dut.fig1_sel, names.index("level.lv"))
        ctx.set(dut.fig1_threshold, 20)
        ctx.set(dut.trk0_sel, 1)            # lv
        ctx.set(dut.trk1_sel, 2)            # wide
        stage_on_bit(ctx, dut, sw + 1, Mode.RISE)
        ctx.set(dut.cap_pre, 20)
        ctx.set(dut.cap_post, 10)
        for _ in range(5):
            await ctx.tick()
        ctx.set(dut.cap_arm, 1)
        await ctx.tick()
        ctx.set(dut.cap_arm, 0)
        for _ in range(6):
            await ctx.tick()
        for cyc in range(60):
            lv = 30 if cyc in (20, 21, 22, 40) else rng.randrange(21)
            wide = rng.choice((5, 40000, 65535))
            ctx.set(dut.level_lv, lv)
            ctx.set(dut.level_wide, wide)
            ctx.set(dut.p.x, cyc % 3)
            now = ctx.get(dut.cap_now)
            levels[now], wides[now] = lv, wide
            if lv > 20 and "cross" not in fired:
                fired["cross"] = now
            await ctx.tick()
        assert ctx.get(dut.cap_state) == State.DONE and ctx.get(dut.cap_triggered)
        fired["trig_ts"] = ctx.get(dut.cap_trig_ts)
        fired["value"] = ctx.get(dut.fig1_value)
        fired["raw"] = await read_capture(ctx, dut)
        fired["end"] = ctx.get(dut.cap_end_ts)

    run(dut, bench)
    # RISE on the level above 20: the sample two cycles after it crossed.
    assert fired["trig_ts"] == fired["cross"] + 2
    assert fired["value"] == 30
    # The tracks hold the levels of every cycle the capture covers.
    entries = []
    for e in fired["raw"]:
        ts = e >> dut.capture_width
        entries.append((ts, (e >> sw) & 0xFFFF, (e >> (sw + 16)) & 0xFFFF))
    checked = 0
    for k, (ts, lv, wide) in enumerate(entries):
        nxt = entries[k + 1][0] if k + 1 < len(entries) else fired["end"]
        for c in range(ts, nxt):
            if c in levels:
                assert (levels[c], wides[c]) == (lv, wide), f"cycle {c}"
                checked += 1
    assert checked > 25


def test_analyzer_event_latency_trigger():
    dut = small_analyzer(figures=1, tracks=0)
    sw = dut.sample_width
    got = {}

    async def bench(ctx):
        ctx.set(dut.fig0_sel, len(dut.figure_sources()) - 1)      # ev.e
        ctx.set(dut.fig0_threshold, 5)
        stage_on_bit(ctx, dut, sw, Mode.LEVEL)
        ctx.set(dut.cap_pre, 20)
        ctx.set(dut.cap_post, 4)
        await ctx.tick()
        ctx.set(dut.cap_arm, 1)
        await ctx.tick()
        ctx.set(dut.cap_arm, 0)
        for _ in range(6):
            await ctx.tick()
        # Latencies 3 (below the threshold), then 9.
        for start, end in ((10, 13), (20, 29)):
            for cyc in range(start, end + 1):
                ctx.set(dut.ev_e_start, cyc == start)
                ctx.set(dut.ev_e_end, cyc == end)
                if cyc == end:
                    got.setdefault("ends", []).append(ctx.get(dut.cap_now))
                await ctx.tick()
            ctx.set(dut.ev_e_end, 0)
        for _ in range(20):
            await ctx.tick()
        got["trig_ts"] = ctx.get(dut.cap_trig_ts)
        got["value"] = ctx.get(dut.fig0_value)
        got["triggered"] = ctx.get(dut.cap_triggered)

    run(dut, bench)
    assert got["triggered"] and got["value"] == 9
    # Counted two cycles after the end, compared on the sample two cycles later.
    assert got["trig_ts"] == got["ends"][1] + 4


@pytest.mark.filterwarnings("ignore:.*created but never used")
@pytest.mark.parametrize("kw", [dict(figures=5), dict(tracks=3)])
def test_analyzer_bad_figures(kw):
    with pytest.raises(ValueError):
        small_analyzer(**kw)
    gc.collect()


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_no_figures_no_tracks_keeps_widths():
    dut = small_analyzer()
    assert dut.trig_width == dut.capture_width == dut.sample_width
    assert len(dut.cap_rd_data) == dut.sample_width + TS_WIDTH
