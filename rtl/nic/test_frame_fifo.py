# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of FrameFIFO (amaranth.sim): the core vs a pure-Python model
# (nicmodels/frame_fifo_model.py, shared with cocotb_tests/tb_frame_fifo.py), cycle for cycle
# (s_ready, m_* and every counter) over random traffic that drops frames for every reason; the
# frames that come out vs a timing-free frame-level prediction; hand-worked cases with their
# cycle numbers (latency, exact fill, priorities, back-pressure); Verilator lint.
import gc
import random
from dataclasses import dataclass

import pytest
from amaranth.sim import Simulator

from nicmodels.frame_fifo_model import (DROPS, Collector, Ending, Frame, FrameFIFOModel, Source,
                                        classify, predict)
from rtl.nic.flat_ports import FlatShell
from rtl.nic.frame_fifo import COUNTS, FrameFIFO
from rtl.verilator_lint import verilator_lint

STATUS = ("level", "frames_queued")


@dataclass
class Result:
    frames: list          # [(payload, m_len)] in output order
    counts: dict          # counters, level, frames_queued at the end
    valid_cycles: list    # cycles with m_valid 1
    moved: list           # cycles with m_valid & m_ready
    partial: int          # bytes output of a frame whose last beat has not been output
    uncounted: int        # bytes output in the last cycle (bytes_out counts them a cycle on)
    s_ready: list         # s_ready of every cycle
    last_in: list         # cycles in which a last beat was accepted


def simulate(frames, ready=None, *, data_width=8, depth=4096, max_frames=None,
             backpressure=False, max_len=1518, min_len=60, count_width=32, tail=None,
             src=None):
    """Runs `frames` (or the Source `src`) through the core and the model in lockstep,
    checking s_ready and m_* every cycle and every counter after every edge. Runs until the
    source is done, then `tail` more cycles (None: until drained). Returns the core's
    Result."""
    dut = FrameFIFO(data_width=data_width, depth=depth, max_frames=max_frames,
                    backpressure=backpressure, count_width=count_width)
    model = FrameFIFOModel(data_width, depth, max_frames, backpressure, count_width)
    src = src or Source(frames, data_width)
    col = Collector(data_width)
    ready = ready or (lambda c: 1)
    end = Ending(tail)
    res = Result(frames=[], counts={}, valid_cycles=[], moved=[], partial=0, uncounted=0,
                 s_ready=[], last_in=[])

    async def bench(ctx):
        ctx.set(dut.max_len, max_len)
        ctx.set(dut.min_len, min_len)
        cyc = 0
        while not end.now(src, model):
            s = src.current()
            r = ready(cyc)
            for sig, v in zip((dut.s.valid, dut.s.p.data, dut.s.p.keep, dut.s.p.last,
                               dut.s.p.error, dut.enable), s):
                ctx.set(sig, v)
            ctx.set(dut.m.ready, r)
            s_ready, valid = ctx.get(dut.s.ready), ctx.get(dut.m.valid)
            exp_ready, exp_out = model.step(s, r, max_len, min_len)
            assert s_ready == exp_ready, f"cycle {cyc}: s_ready"
            assert valid == (exp_out is not None), f"cycle {cyc}: m_valid"
            if valid:
                out = (ctx.get(dut.m.p.data), ctx.get(dut.m.p.keep), ctx.get(dut.m.p.last),
                       ctx.get(dut.m.p.len))
                assert out == exp_out, f"cycle {cyc}: m_* {out} != model {exp_out}"
                res.valid_cycles.append(cyc)
                if r:
                    res.moved.append(cyc)
                    col.beat(*out)
            if s[0] and s_ready and s[3]:
                res.last_in.append(cyc)
            res.s_ready.append(s_ready)
            src.advance(s_ready)
            await ctx.tick()
            got = {name: ctx.get(getattr(dut, name)) for name in COUNTS + STATUS}
            assert got == model.status(), f"cycle {cyc}: counters"
            cyc += 1
        res.counts, res.uncounted = got, model.out_bytes

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    res.frames, res.partial = col.frames, len(col.cur)
    return res


def check_frame_level(frames, res, max_len, min_len, no_full=False):
    """The frames out are, in order and bit-exact with their m_len, the frames without an
    intrinsic drop reason less the drop_full ones; the intrinsic drop counters are exact;
    every frame is accounted for once."""
    fates = classify(frames, max_len, min_len)
    c = res.counts
    for name in DROPS[:-1]:
        assert c[name] == fates.count(name), name
    candidates = [(f.payload, len(f.payload)) for f, x in zip(frames, fates) if x is None]
    out = iter(candidates)
    assert all(any(o == cand for cand in out) for o in res.frames), "not a subsequence"
    assert c["frames_in"] == len(frames)
    assert c["frames_in"] == c["frames_out"] + sum(c[d] for d in DROPS) + c["frames_queued"]
    assert c["frames_out"] == len(res.frames)
    assert c["bytes_out"] + res.uncounted == sum(n for _, n in res.frames) + res.partial
    assert c["drop_full"] + c["frames_out"] + c["frames_queued"] == len(candidates)
    if no_full:
        assert c["drop_full"] == 0 and res.frames == candidates


# ---- random traffic

def random_frames(rng, n, max_len, min_len, p_disable=0.05):
    frames, enable = [], 1
    for _ in range(n):
        kind = rng.random()
        if kind < 0.5:
            size = rng.randint(min_len, max_len)
        elif kind < 0.7:
            size = rng.randint(1, max(1, min_len))
        else:
            size = rng.randint(1, 2 * max_len)
        if enable and rng.random() < p_disable:
            enable = 0                                # disabled for a few frames
        elif not enable and rng.random() < 0.4:
            enable = 1
        frames.append(Frame(bytes(rng.randrange(256) for _ in range(size)),
                            error=int(rng.random() < 0.12),
                            gap=rng.choice([0, 0, 0, 0, 1, 2, 3, 7, 20]), enable=enable))
    return frames


def random_ready(rng, ncycles):
    """m_ready per cycle, in phases: always, mostly, seldom, stalled."""
    pattern, p = [], 1.0
    for _ in range(ncycles):
        if rng.random() < 0.02:
            p = rng.choice([1.0, 0.8, 0.5, 0.3, 0.1, 0.0])
        pattern.append(int(rng.random() < p))
    return lambda c: pattern[c] if c < len(pattern) else 1


RANDOM = [
    # data_width, depth, max_frames, backpressure, max_len, min_len, nframes
    (1, 64, None, False, 40, 5, 250),
    (1, 128, 4, False, 50, 10, 200),
    (8, 256, None, False, 100, 20, 400),
    (8, 512, 2, False, 120, 9, 400),
    (4, 128, None, False, 60, 12, 300),
    (8, 256, None, True, 100, 20, 300),
    (1, 64, 4, True, 40, 5, 200),
    (8, 128, None, True, 200, 10, 250),   # frames bigger than the whole memory: dropped full
]


@pytest.mark.parametrize("dw,depth,max_frames,bp,max_len,min_len,nframes", RANDOM)
def test_random_traffic(dw, depth, max_frames, bp, max_len, min_len, nframes):
    rng = random.Random(f"{dw} {depth} {max_frames} {bp}")
    frames = random_frames(rng, nframes, max_len, min_len)
    ready = random_ready(rng, 100_000)
    kw = dict(data_width=dw, depth=depth, max_frames=max_frames, backpressure=bp,
              max_len=max_len, min_len=min_len)
    res = simulate(frames, ready, tail=30, **kw)
    check_frame_level(frames, res, max_len, min_len)
    c = res.counts
    possible = set(DROPS) if not bp or max_len > depth else set(DROPS) - {"drop_full"}
    assert all(c[name] >= 3 for name in possible), c  # every rule exercised
    assert c["frames_out"] >= 10, c
    if bp:
        assert 0 in res.s_ready
    else:
        assert set(res.s_ready) == {1}
    # The model alone (frame-level use) gives the same result.
    assert predict(frames, ready, tail=30, **kw) == (res.frames, res.counts)


@pytest.mark.parametrize("dw", [1, 8])
def test_random_no_full(dw):
    """Enough room and m_ready 1: every frame without an intrinsic reason comes out."""
    rng = random.Random(dw)
    frames = random_frames(rng, 40, 300, 30)
    res = simulate(frames, data_width=dw, depth=2048, max_len=300, min_len=30)
    check_frame_level(frames, res, 300, 30, no_full=True)
    assert res.counts["level"] == 0 and res.counts["frames_queued"] == 0


# ---- hand-worked cases (data_width 8 unless told; frame sizes in bytes)

def payload(n, seed=0):
    return bytes((seed * 37 + i * 11 + 5) & 0xFF for i in range(n))


def counts(res, **nonzero):
    """All drop counters 0 except `nonzero`."""
    return {name: res.counts[name] for name in DROPS} == {**dict.fromkeys(DROPS, 0), **nonzero}


def test_latency_three_cycles():
    # 20 bytes (3 beats) after a 5-cycle gap: beats in 5, 6, 7, decided in 6, 7, 8; first beat
    # out in 10 = 7 + 3, the rest in 11, 12 with m_ready 1. Counters: frames_in and level
    # visible from 9.
    f = Frame(payload(20), gap=5)
    res = simulate([f], min_len=1, tail=10)
    assert res.last_in == [7]
    assert res.valid_cycles == [10, 11, 12]
    assert res.frames == [(f.payload, 20)]
    # m_ready 0 until 12: the first beat waits in the output register; then 12, 13, 14.
    res = simulate([f], lambda c: int(c >= 12), min_len=1, tail=10)
    assert res.valid_cycles == [10, 11, 12, 13, 14]
    assert res.frames == [(f.payload, 20)]


def test_counters_cycle():
    """frames_in and the commit three cycles after the last beat (decided in the cycle after
    it, the decision registered in the next); frames_out after the output's last beat, its
    bytes a cycle later."""
    dut = FrameFIFO(data_width=8, depth=256)

    async def bench(ctx):
        ctx.set(dut.max_len, 100)
        ctx.set(dut.enable, 1)
        ctx.set(dut.m.ready, 1)
        for i, (keep, last) in enumerate([(0xFF, 0), (0x07, 1)]):   # cycles 0, 1
            ctx.set(dut.s.valid, 1)
            ctx.set(dut.s.p.data, 0x1111111111111111 * (i + 1))
            ctx.set(dut.s.p.keep, keep)
            ctx.set(dut.s.p.last, last)
            await ctx.tick()
        ctx.set(dut.s.valid, 0)
        # cycle 2: the last beat decided (committed), cycle 3: the decision registered
        for _ in range(2):
            assert (ctx.get(dut.frames_in), ctx.get(dut.level), ctx.get(dut.frames_queued),
                    ctx.get(dut.m.valid)) == (0, 0, 0, 0)
            await ctx.tick()
        # cycle 4: counted; first beat out, m_len 11 (the second in cycle 5)
        assert (ctx.get(dut.frames_in), ctx.get(dut.level), ctx.get(dut.frames_queued)) == \
            (1, 11, 1)
        assert (ctx.get(dut.m.valid), ctx.get(dut.m.p.len), ctx.get(dut.m.p.keep)) == (1, 11, 0xFF)
        await ctx.tick()
        # cycle 5: the first beat's bytes counted a cycle later (from a register)
        assert (ctx.get(dut.level), ctx.get(dut.bytes_out)) == (11, 0)
        assert (ctx.get(dut.m.valid), ctx.get(dut.m.p.last), ctx.get(dut.m.p.keep)) == (1, 1, 0x07)
        assert ctx.get(dut.m.p.data) & 0xFFFFFF == 0x222222
        await ctx.tick()
        # cycle 6: the frame out; its last beat's bytes in cycle 7
        assert (ctx.get(dut.frames_out), ctx.get(dut.bytes_out), ctx.get(dut.level),
                ctx.get(dut.frames_queued), ctx.get(dut.m.valid)) == (1, 8, 3, 0, 0)
        await ctx.tick()
        assert (ctx.get(dut.bytes_out), ctx.get(dut.level)) == (11, 0)

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


def test_max_len_and_min_len():
    frames = [Frame(payload(100, 1)), Frame(payload(101, 2)), Frame(payload(59, 3)),
              Frame(payload(60, 4)), Frame(payload(1000, 5)), Frame(payload(1, 6))]
    res = simulate(frames, max_len=100, min_len=60)
    assert res.frames == [(payload(100, 1), 100), (payload(60, 4), 60)]
    assert counts(res, drop_oversize=2, drop_runt=2)
    # data_width 1: the 101st byte is the beat that decides.
    res = simulate(frames, data_width=1, max_len=100, min_len=60)
    assert res.frames == [(payload(100, 1), 100), (payload(60, 4), 60)]
    assert counts(res, drop_oversize=2, drop_runt=2)


def test_error_frame():
    frames = [Frame(payload(64, 1), error=1), Frame(payload(64, 2)), Frame(payload(70, 3), 1)]
    res = simulate(frames)
    assert res.frames == [(payload(64, 2), 64)]
    assert counts(res, drop_error=2)


def test_exact_fill():
    # depth 64, data_width 8: 8 entries; m_ready 0 throughout. 64 bytes = 8 beats (cycles
    # 0..7) fill the memory exactly: kept. In cycle 8 its first beat is read into the output
    # register, which frees one entry from cycle 9: the next frame (gap 4: beats from 12) may
    # have 1 beat. A 9-byte frame (2 beats) overflows at its second beat: dropped full.
    kw = dict(depth=64, max_len=200, min_len=1, tail=20)
    never = lambda c: 0                                                   # noqa: E731
    res = simulate([Frame(payload(64, 1)), Frame(payload(9, 2), gap=4)], never, **kw)
    assert counts(res, drop_full=1)
    assert res.counts["frames_queued"] == 1 and res.counts["level"] == 64
    res = simulate([Frame(payload(64, 1)), Frame(payload(8, 2), gap=4),
                    Frame(payload(1, 3))], never, **kw)
    assert counts(res, drop_full=1)
    assert res.counts["frames_queued"] == 2 and res.counts["level"] == 72
    # Once drained (m_ready 1 from 40) both come out.
    res = simulate([Frame(payload(64, 1)), Frame(payload(8, 2), gap=4)],
                   lambda c: int(c >= 40), **{**kw, "tail": 60})
    assert res.frames == [(payload(64, 1), 64), (payload(8, 2), 8)]
    # 65 bytes (9 beats) alone: dropped full at its 9th beat; then 64 kept.
    res = simulate([Frame(payload(65, 1)), Frame(payload(64, 2))], never, **kw)
    assert counts(res, drop_full=1)
    assert res.counts["level"] == 64
    # data_width 1, depth 16, m_ready 1: 17 bytes dropped full at the 17th (cycle 16); 16
    # bytes in 17..32 kept; a 16-byte frame right behind it (from 33) finds the memory full
    # (the first beat of the previous one is read in 33, freeing its entry from 34): dropped
    # full; one cycle of gap and it fits, since the output then drains a byte per cycle.
    kw = dict(data_width=1, depth=16, max_len=200, min_len=1)
    res = simulate([Frame(payload(17, 1)), Frame(payload(16, 2)), Frame(payload(16, 3))],
                   **kw)
    assert res.frames == [(payload(16, 2), 16)]
    assert counts(res, drop_full=2)
    res = simulate([Frame(payload(17, 1)), Frame(payload(16, 2)),
                    Frame(payload(16, 3), gap=1)], **kw)
    assert res.frames == [(payload(16, 2), 16), (payload(16, 3), 16)]
    assert counts(res, drop_full=1)


def test_max_frames():
    # Length FIFO of 2, m_ready 0: frame 0 moves to the output register (leaves the length
    # FIFO), frames 1 and 2 fill it, frame 3 is dropped full; frame 4 after 0 drains fits.
    frames = [Frame(payload(8, i), gap=2) for i in range(4)] + [Frame(payload(8, 4), gap=30)]
    res = simulate(frames, lambda c: int(c >= 20), max_frames=2, min_len=1)
    assert res.frames == [(payload(8, i), 8) for i in (0, 1, 2, 4)]
    assert counts(res, drop_full=1)


def test_enable():
    # Frame 0 (beats 0..7) committed; frames 1 (8..15) and 2 (gap 60: 76..83) arrive with
    # enable 0 (0 from cycle 8 to 83): dropped as disabled, frame 2 even though it is also an
    # error frame. Frame 0 drains (m_ready from 40) while enable is 0. Frame 3 kept.
    frames = [Frame(payload(64, 0)), Frame(payload(64, 1), enable=0),
              Frame(payload(64, 2), error=1, gap=60, enable=0), Frame(payload(64, 3))]
    res = simulate(frames, lambda c: int(c >= 40))
    assert res.frames == [(payload(64, 0), 64), (payload(64, 3), 64)]
    assert res.valid_cycles[0] == 10 and res.moved[:8] == list(range(40, 48))
    assert counts(res, drop_disabled=2)
    # enable is sampled on the first beat: the frame's first beat is accepted in cycle 3 with
    # enable 1, enable is 0 from cycle 4 on: kept. The next frame starts with enable 0.
    src = Source([Frame(payload(64, 4), gap=3), Frame(payload(64, 5))], 8)
    src.items = [it[:5] + (int(k <= 3),) for k, it in enumerate(src.items)]
    src.final_enable = 0
    res = simulate(None, src=src)
    assert res.frames == [(payload(64, 4), 64)]
    assert counts(res, drop_disabled=1)


def test_back_to_back_single_beats():
    # 10 single-beat frames with no gap (last beats in 0..9): out in 3..12, continuously.
    frames = [Frame(payload(5, i)) for i in range(10)]
    res = simulate(frames, min_len=1)
    assert res.last_in == list(range(10))
    assert res.valid_cycles == list(range(3, 13))
    assert res.frames == [(payload(5, i), 5) for i in range(10)]
    # data_width 1: one byte each.
    res = simulate([Frame(payload(1, i)) for i in range(10)], data_width=1, min_len=1)
    assert res.valid_cycles == list(range(3, 13))


def test_partial_last_beat():
    # 13 bytes: keep 0xFF then 0x1F; garbage lanes 5..7 of the last beat pass through m_data
    # but m_keep excludes them; m_len 13 on both beats (checked by the collector).
    res = simulate([Frame(payload(13)), Frame(payload(8)), Frame(payload(1))], min_len=1)
    assert res.frames == [(payload(13), 13), (payload(8), 8), (payload(1), 1)]
    # A single beat with keep 0 is a frame of 0 bytes: a runt unless min_len is 0.
    res = simulate([Frame(b""), Frame(payload(3))], min_len=0)
    assert res.frames == [(b"", 0), (payload(3), 3)]
    res = simulate([Frame(b""), Frame(payload(3))], min_len=1)
    assert res.frames == [(payload(3), 3)] and counts(res, drop_runt=1)
    dw4 = simulate([Frame(payload(n, n)) for n in (1, 2, 3, 4, 5, 6, 7)], data_width=4,
                   min_len=1)
    assert dw4.frames == [(payload(n, n), n) for n in (1, 2, 3, 4, 5, 6, 7)]


def test_oversize_keeps_frame_sync():
    # A 3000-byte frame (max 1518) followed with no gap by a good one and another oversize:
    # the discard stops exactly at its last beat.
    frames = [Frame(payload(3000, 1)), Frame(payload(100, 2)), Frame(payload(1519, 3)),
              Frame(payload(1518, 4))]
    res = simulate(frames)
    assert res.frames == [(payload(100, 2), 100), (payload(1518, 4), 1518)]
    assert counts(res, drop_oversize=2)


def test_priorities():
    # error > oversize, oversize > runt (min_len > max_len), runt > full, error > full,
    # oversize > full: the FIFO (8 entries) is filled by a 64-byte frame with m_ready 0.
    never = lambda c: 0                                                   # noqa: E731
    kw = dict(depth=64, tail=10)
    fill = Frame(payload(64, 0))
    res = simulate([Frame(payload(200, 1), error=1)], max_len=100, **kw)
    assert counts(res, drop_error=1)
    res = simulate([Frame(payload(80, 1))], max_len=70, min_len=90, **kw)
    assert counts(res, drop_oversize=1)
    res = simulate([fill, Frame(payload(40, 1))], never, max_len=100, min_len=50, **kw)
    assert counts(res, drop_runt=1)
    res = simulate([fill, Frame(payload(70, 1), error=1)], never, max_len=100, min_len=1, **kw)
    assert counts(res, drop_error=1)
    res = simulate([fill, Frame(payload(120, 1))], never, max_len=100, min_len=1, **kw)
    assert counts(res, drop_oversize=1)
    res = simulate([fill, Frame(payload(90, 1))], never, max_len=100, min_len=1, **kw)
    assert counts(res, drop_full=1)


def test_backpressure():
    # TX side: depth 64 (8 entries), m_ready 0 until 30. A 64-byte frame fills the memory
    # (beats in 0..7, stored in 1..8); the next frame waits instead of being dropped: its first
    # beat in the input stage from cycle 8, s_ready 0 from 9 (1 in 10, when the first beat of
    # the other has moved to the output register: room for one); both come out.
    frames = [Frame(payload(64, 1)), Frame(payload(64, 2))]
    res = simulate(frames, lambda c: int(c >= 30), depth=64, backpressure=True, min_len=1)
    assert res.frames == [(payload(64, 1), 64), (payload(64, 2), 64)]
    assert counts(res)
    assert res.s_ready[:9] == [1] * 9 and res.s_ready[9:11] == [0, 1]
    assert res.s_ready[11:30] == [0] * 19
    # A frame bigger than the whole memory is accepted and dropped full (no dead-lock).
    frames = [Frame(payload(100, 1)), Frame(payload(64, 2))]
    res = simulate(frames, depth=64, backpressure=True, min_len=1)
    assert res.frames == [(payload(64, 2), 64)]
    assert counts(res, drop_full=1)
    # Length FIFO of 2 and m_ready 0 until 40: frame 0 in the output register, 1 and 2 in
    # the FIFO, s_ready 0 until frame 0 leaves; nothing dropped.
    frames = [Frame(payload(8, i)) for i in range(6)]
    res = simulate(frames, lambda c: int(c >= 40), max_frames=2, backpressure=True, min_len=1)
    assert res.frames == [(payload(8, i), 8) for i in range(6)]
    assert counts(res)


def test_counters_wrap():
    # count_width 2: 5 frames in and out read 1; bytes_out 5 * 3 = 15 reads 3.
    res = simulate([Frame(payload(3, i)) for i in range(5)], min_len=1, count_width=2)
    assert res.counts["frames_in"] == 1 and res.counts["frames_out"] == 1
    assert res.counts["bytes_out"] == 3


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_bad_parameters():
    for kw in (dict(data_width=3), dict(data_width=128), dict(depth=1000),
               dict(data_width=8, depth=8), dict(len_width=0), dict(max_frames=1),
               dict(max_frames=3), dict(count_width=0)):
        with pytest.raises(ValueError):
            FrameFIFO(**kw)
    gc.collect()                  # the UnusedElaboratable warnings here, where they are ignored


@pytest.mark.parametrize("kw", [dict(), dict(data_width=1, depth=4096, max_frames=64),
                                dict(data_width=8, depth=16384, backpressure=True)])
def test_verilator_lint(kw, tmp_path):
    verilator_lint(FlatShell(FrameFIFO(**kw)), "frame_fifo", tmp_path)
