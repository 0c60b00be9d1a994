# SPDX-License-Identifier: BSD-2-Clause
#
# tb_frame_fifo.py: cocotb testbench of the emitted Verilog of rtl/nic/frame_fifo.py (FrameFIFO)
# with cocotbext-axi's AXI-stream models, run by cocotb_tests/test_frame_fifo.py.
#
# What it is: an AxiStreamSource on the sink port and an AxiStreamSink on the source port
# (AxiStreamBus with the core's names: tdata=data, tkeep=keep, tlast=last, tvalid=valid,
# tready=ready; tuser=s_error on the sink side; m_len read by a monitor of this file), random
# frames sent back to back into a back-pressuring sink; once everything has drained, the frames
# and counters are checked against the drop rules and a cycle-accurate model (the docstring).
# Interfaces: the core's s_*, m_*, max_len, min_len, enable (held 1), counters, level,
# frames_queued.
# Parameters (environment, JSON): FIFO_CFG = {data_width, depth, max_frames, backpressure,
# max_len, min_len, nframes, seed} (the first four as the emitted core's).

"""Stimulus and checks.

Frames: good, bad-FCS (tuser 1), oversize (up to 2 * max_len) and runts, sent back to back; the
AxiStreamSink back-pressures with a random pause generator (phases of always ready .. stalled).

Frame level (the core's rules, no timing): every frame out is bit-exact, with m_len equal to its
length on every beat, and the frames out are, in order, the frames without an intrinsic drop
reason (error, oversize, runt; priority as the core's) less those dropped full; drop_error /
drop_oversize / drop_runt are exact, frames_in == frames sent == frames_out + sum(drop_*),
level == frames_queued == 0. In backpressure mode with max_len <= depth nothing may be dropped
full, so the frames out are exactly the good ones; with max_len > depth exactly the frames of
more than depth // data_width beats are.

Cycle-exact model: the m_ready and s_valid of every cycle are recorded and the run replayed on
nicmodels/frame_fifo_model.py's predict() (its cycle-accurate FrameFIFOModel with the same input
frames, their start cycle and that m_ready pattern): the frames out and every counter must equal
its prediction (this also pins down which frames are dropped full).
"""

import random

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, RisingEdge
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource

from cocotb_tests.cocotb_run import env_params
from nicmodels.frame_fifo_model import DROPS, Frame, classify, predict
from rtl.nic.frame_fifo import COUNTS


class NamedBus(AxiStreamBus):
    """An AxiStreamBus that looks its signals up by exact name. cocotb-bus's default lookup is
    case-insensitive through dir(dut), which makes cocotb 1.9 discover every object of the
    design; on Verilator 5.006 the handles that discovery returns for the ports are not the
    model's inputs (a value written to them reads back, then is lost at the next evaluation),
    so the AxiStreamSource would drive nothing."""

    def _caseInsensGetattr(self, obj, attr):
        try:
            return getattr(obj, attr)
        except AttributeError:
            return None


class SinkBus(NamedBus):
    """The core's sink port s_* as an AXI stream (tuser is s_error)."""
    _signals = {"tdata": "data"}
    _optional_signals = {"tvalid": "valid", "tready": "ready", "tlast": "last", "tkeep": "keep",
                         "tuser": "error"}


class SourceBus(NamedBus):
    """The core's source port m_* as an AXI stream (m_len is not part of it)."""
    _signals = {"tdata": "data"}
    _optional_signals = {"tvalid": "valid", "tready": "ready", "tlast": "last", "tkeep": "keep"}


def random_frames(rng, n, max_len, min_len):
    """Good frames (50 %), runts (15 %), oversize up to 2 * max_len (20 %), and any of them
    with a bad FCS (12 %)."""
    frames = []
    for _ in range(n):
        kind = rng.random()
        if kind < 0.5:
            size = rng.randint(min_len, max_len)
        elif kind < 0.65:
            size = rng.randint(1, min_len - 1)
        elif kind < 0.85:
            size = rng.randint(max_len + 1, 2 * max_len)
        else:
            size = rng.randint(1, 2 * max_len)
        frames.append(Frame(rng.randbytes(size), error=int(rng.random() < 0.12)))
    return frames


def pauses(rng):
    """The sink's pause per cycle, in phases: always ready, mostly, half, seldom, stalled."""
    p = 0.0
    while True:
        if rng.random() < 0.02:
            p = rng.choice([0.0, 0.0, 0.2, 0.5, 0.9, 1.0])
        yield rng.random() < p


class Recorder:
    """Per cycle from cycle 0 (the first after reset): s_valid, m_ready; and the m_len of every
    beat that moves on m_*, grouped by frame."""

    def __init__(self, dut):
        self.dut, self.s_valid, self.m_ready, self.lens, self.cur = dut, [], [], [], set()
        self.idle = 0             # cycles in a row with nothing queued and m_valid 0

    async def run(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)            # the values of the cycle this edge ends
            self.s_valid.append(int(dut.s_valid.value))
            self.m_ready.append(int(dut.m_ready.value))
            if dut.m_valid.value and dut.m_ready.value:
                self.cur.add(int(dut.m_len.value))
                if dut.m_last.value:
                    self.lens.append(self.cur)
                    self.cur = set()
            busy = dut.m_valid.value or int(dut.frames_queued.value)
            self.idle = 0 if busy else self.idle + 1


@cocotb.test()
async def random_traffic(dut):
    cfg = env_params("FIFO_CFG")
    dw, depth, bp = cfg["data_width"], cfg["depth"], cfg["backpressure"]
    max_len, min_len = cfg["max_len"], cfg["min_len"]
    rng = random.Random(cfg["seed"])
    frames = random_frames(rng, cfg["nframes"], max_len, min_len)

    cocotb.start_soon(Clock(dut.clk, 8, units="ns").start())
    dut.rst.value = 1
    dut.max_len.value = max_len
    dut.min_len.value = min_len
    dut.enable.value = 1
    source = AxiStreamSource(SinkBus.from_prefix(dut, "s"), dut.clk, dut.rst)
    sink = AxiStreamSink(SourceBus.from_prefix(dut, "m"), dut.clk, dut.rst)
    sink.set_pause_generator(pauses(rng))
    for _ in range(3):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    dut.rst.value = 0                            # cycle 0 starts at the previous rising edge
    # Queued only now: the models' reset handling only sees a reset that starts after them.
    for f in frames:
        source.send_nowait(AxiStreamFrame(f.payload, tuser=f.error))
    rec = Recorder(dut)
    cocotb.start_soon(rec.run())

    await source.wait()                          # every beat accepted
    sink.clear_pause_generator()
    sink.pause = False
    rec.idle = 0
    ncycles = 0
    while rec.idle < 4:
        await RisingEdge(dut.clk)
        ncycles += 1
        assert ncycles < 100 * depth, "the FIFO does not drain"
    await FallingEdge(dut.clk)
    got = []
    while not sink.empty():
        got.append(bytes(sink.recv_nowait().tdata))
    counts = {name: int(getattr(dut, name).value) for name in COUNTS + ("level",
                                                                        "frames_queued")}

    dut._log.info("counters at the end: %s; s_valid cycles %d, frames out %d", counts,
                  sum(rec.s_valid), len(got))

    # ---- frame level (the core's rules)
    fates = classify(frames, max_len, min_len)
    good = [f.payload for f, x in zip(frames, fates) if x is None]
    assert len(rec.lens) == len(got)
    for i, (data, lens) in enumerate(zip(got, rec.lens)):
        assert lens == {len(data)}, f"frame out {i}: m_len {lens} for {len(data)} bytes"
    it = iter(good)
    assert all(any(o == g for g in it) for o in got), "frames out: not in order or not exact"
    for name in ("drop_error", "drop_oversize", "drop_runt", "drop_disabled"):
        assert counts[name] == fates.count(name), (name, counts[name], fates.count(name))
    assert counts["frames_in"] == len(frames)
    assert counts["frames_out"] == len(got)
    assert counts["bytes_out"] == sum(len(g) for g in got)
    assert counts["frames_in"] == counts["frames_out"] + sum(counts[d] for d in DROPS)
    assert counts["level"] == 0 and counts["frames_queued"] == 0
    assert counts["drop_full"] + len(got) == len(good)
    if bp:
        entries = depth // dw
        too_big = [f.payload for f, x in zip(frames, fates)
                   if x is None and -(-len(f.payload) // dw) > entries]
        assert counts["drop_full"] == len(too_big), (counts["drop_full"], len(too_big))
        assert got == [g for g in good if g not in too_big]

    # ---- the cycle-accurate model on the recorded timing
    start = rec.s_valid.index(1)
    beats = sum(max(1, -(-len(f.payload) // dw)) for f in frames)
    if not bp:   # s_ready 1: the source's beats are back to back from its first
        assert rec.s_valid[start:start + beats] == [1] * beats
    frames[0].gap = start
    m_ready = rec.m_ready
    exp_frames, exp_counts = predict(
        frames, lambda c: m_ready[c] if c < len(m_ready) else 1, data_width=dw, depth=depth,
        max_frames=cfg["max_frames"], backpressure=bp, max_len=max_len, min_len=min_len)
    assert [p for p, _ in exp_frames] == got, "frames out differ from the model's"
    assert counts == exp_counts, f"counters {counts} != model {exp_counts}"
    used = {name for name in DROPS if counts[name]}
    dut._log.info("%d frames in, %d out, drops %s, %d cycles", len(frames), len(got),
                  {d: counts[d] for d in DROPS}, len(rec.m_ready))
    assert {"drop_error", "drop_oversize", "drop_runt"} <= used
    assert 0 in rec.m_ready[start:], "no back-pressure"
