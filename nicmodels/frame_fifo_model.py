# SPDX-License-Identifier: BSD-2-Clause
#
# frame_fifo_model.py: cycle-accurate pure-Python reference model of rtl/nic/frame_fifo.py
# (FrameFIFO), for its amaranth.sim test (rtl/nic/test_frame_fifo.py) and its cocotb testbench
# (cocotb_tests/tb_frame_fifo.py).
#
# Interfaces: Frame(payload, error, gap, enable) (one input frame); Source(frames, data_width,
# seed) (its beats, cycle by cycle); FrameFIFOModel(data_width, depth, max_frames, backpressure,
# count_width).step(s, m_ready, max_len, min_len) -> (s_ready, output register), .status();
# Collector (output frames from beats), Ending (when a run ends); predict(frames, ready, ...)
# -> (frames out, counters) of the model alone; classify(frames, max_len, min_len) -> each
# frame's intrinsic drop reason (DROPS, in the core's priority order) or None.

import random
from collections import deque
from dataclasses import dataclass

from rtl.nic.frame_fifo import COUNTS

# The drop counters in priority order (the model's own copy of the documented rule).
DROPS = ("drop_disabled", "drop_error", "drop_oversize", "drop_runt", "drop_full")


@dataclass
class Frame:
    payload: bytes
    error: int = 0      # s_error on the last beat
    gap: int = 0        # idle cycles before the first beat is presented
    enable: int = 1     # `enable` from the start of the gap until the next frame's gap


def popcount(v):
    return bin(v).count("1")


class Source:
    """The sink stimulus of a list of frames, beat by beat: a beat is presented until accepted
    (s_ready). Lanes beyond the payload carry garbage, s_error on beats other than the last is
    random: neither must matter."""

    def __init__(self, frames, data_width, seed=0):
        rng = random.Random(seed)
        dw = data_width
        self.items = []           # (valid, data, keep, last, error, enable)
        for f in frames:
            self.items += [(0, 0, 0, 0, 0, f.enable)] * f.gap
            p = f.payload
            n = max(1, -(-len(p) // dw))
            for i in range(n):
                chunk = p[i * dw:(i + 1) * dw]
                lanes = chunk + bytes(rng.randrange(256) for _ in range(dw - len(chunk)))
                last = int(i == n - 1)
                self.items.append((1, int.from_bytes(lanes, "little"), (1 << len(chunk)) - 1,
                                   last, f.error if last else rng.randrange(2), f.enable))
        self.final_enable = frames[-1].enable if frames else 1
        self.i = 0

    def done(self):
        return self.i >= len(self.items)

    def current(self):
        if self.done():
            return (0, 0, 0, 0, 0, self.final_enable)
        return self.items[self.i]

    def advance(self, s_ready):
        if not self.done() and (s_ready or not self.items[self.i][0]):
            self.i += 1


# Reason a frame is being discarded before its last beat (as the core's `reason` register).
NONE, DISABLED, OVERSIZE, FULL = range(4)


class FrameFIFOModel:
    """Cycle-accurate reference model, kept at the level of frames: committed frames are a
    queue of beat lists; the memory is full when the beats of committed frames not yet read
    into the output register plus the stored beats of the frame being received fill it. A beat
    taken at the sink waits a cycle in the input stage before it is decided; the counters
    follow the decision a cycle later."""

    def __init__(self, data_width, depth, max_frames=None, backpressure=False, count_width=32):
        self.dw = data_width
        self.entries = depth // data_width
        self.max_frames = max_frames or self.entries
        self.backpressure = backpressure
        self.mask = 2**count_width - 1
        self.committed = deque()  # [length, beats]: committed, some beat not read yet
        self.taken = 0            # beats of committed[0] already read into the output register
        self.cur = []             # stored beats of the frame being received
        self.in_frame = False
        self.reason = NONE
        self.flen = 0
        self.stage = None         # (data, keep, last, error, enable) of the input stage
        self.pending = None       # (last, drop, committed length) of the last decision
        self.out = None           # (data, keep, last, length) in the output register
        self.out_bytes = 0        # bytes of the beat output in the cycle before
        self.counts = dict.fromkeys(COUNTS, 0)
        self.level = 0
        self.frames_queued = 0

    def unread_beats(self):
        return sum(len(b) for _, b in self.committed) - self.taken

    def not_started(self):        # the length FIFO's occupancy
        return len(self.committed) - (1 if self.taken else 0)

    def room(self):
        """The staged beat can be decided (always, without backpressure)."""
        if not self.backpressure:
            return 1
        unread = self.unread_beats()
        mem_full = unread + len(self.cur) == self.entries
        return int(self.not_started() < self.max_frames and not (mem_full and unread > 0))

    def s_ready(self):
        return int(self.stage is None or self.room())

    def _count(self, name, n=1):
        self.counts[name] = (self.counts[name] + n) & self.mask

    def _decide(self, beat, max_len, min_len, mem_full, lfull):
        """The staged beat's decision; returns the committed frame or None."""
        data, keep, last, error, enable = beat
        length = self.flen + popcount(keep)
        if self.reason == DISABLED or (not self.in_frame and not enable):
            nxt = DISABLED
        elif self.reason == OVERSIZE or length > max_len:
            nxt = OVERSIZE
        elif self.reason == FULL or mem_full:
            nxt = FULL
        else:
            nxt = NONE
        if nxt == NONE:
            self.cur.append((data, keep, last))
        else:
            self.cur = []
        if not last:
            self.in_frame, self.reason, self.flen = True, nxt, length
            return None
        rules = {"drop_disabled": nxt == DISABLED, "drop_error": error,
                 "drop_oversize": nxt == OVERSIZE, "drop_runt": length < min_len,
                 "drop_full": nxt == FULL or lfull}
        drop = next((name for name in DROPS if rules[name]), None)
        new_frame = None if drop else [length, self.cur]
        self.pending = (True, drop, None if drop else length)
        self.cur, self.in_frame, self.reason, self.flen = [], False, NONE, 0
        return new_frame

    def step(self, s, m_ready, max_len, min_len):
        """One cycle with sink inputs s = (valid, data, keep, last, error, enable): returns
        (s_ready, output register or None) as seen in this cycle, then moves to the next."""
        out, ready, room = self.out, self.s_ready(), self.room()
        unread = self.unread_beats()
        mem_full = unread + len(self.cur) == self.entries
        lfull = self.not_started() == self.max_frames
        pending, self.pending = self.pending, None
        new_frame = None
        if self.stage is not None and room:
            new_frame = self._decide(self.stage, max_len, min_len, mem_full, lfull)
        if ready:
            self.stage = s[1:] if s[0] else None
        if pending:
            last, drop, length = pending
            self._count("frames_in")
            if drop:
                self._count(drop)
            else:
                self.level += length
                self.frames_queued += 1
        self._count("bytes_out", self.out_bytes)
        self.level -= self.out_bytes
        self.out_bytes = popcount(out[1]) if out and m_ready else 0
        if out and m_ready:
            if out[2]:
                self._count("frames_out")
                self.frames_queued -= 1
        if out is None or m_ready:
            if unread:
                length, beats = self.committed[0]
                self.out = beats[self.taken] + (length,)
                self.taken += 1
                if self.taken == len(beats):
                    self.committed.popleft()
                    self.taken = 0
            else:
                self.out = None
        if new_frame:
            self.committed.append(new_frame)
        return ready, out

    def status(self):
        return {**self.counts, "level": self.level, "frames_queued": self.frames_queued}


class Collector:
    """Assembles output frames from the beats that move on m_*."""

    def __init__(self, dw):
        self.dw, self.frames, self.cur, self.lens = dw, [], bytearray(), set()

    def beat(self, data, keep, last, length):
        lanes = data.to_bytes(self.dw, "little")
        self.cur += bytes(lanes[i] for i in range(self.dw) if keep >> i & 1)
        self.lens.add(length)
        if last:
            assert len(self.lens) == 1, f"m_len changed within a frame: {self.lens}"
            self.frames.append((bytes(self.cur), length))
            self.cur, self.lens = bytearray(), set()


class Ending:
    """When a run ends: `tail` cycles after the source is done, or (tail None) 3 cycles after
    the model has nothing left to output."""

    def __init__(self, tail):
        self.tail, self.idle = tail, 0

    def now(self, src, model):
        if not src.done():
            return False
        if self.tail is not None:
            self.tail -= 1
            return self.tail < 0
        self.idle = self.idle + 1 if model.frames_queued == 0 and model.out is None else 0
        return self.idle > 3


def predict(frames, ready=None, *, data_width=8, depth=4096, max_frames=None,
            backpressure=False, max_len=1518, min_len=60, count_width=32, tail=None):
    """The model alone: the frames that come out and the counters, from the input frames (their
    bytes, error flags and gaps) and the m_ready pattern (cycle -> 0/1; None: always 1)."""
    model = FrameFIFOModel(data_width, depth, max_frames, backpressure, count_width)
    src = Source(frames, data_width)
    col = Collector(data_width)
    ready = ready or (lambda c: 1)
    cyc, end = 0, Ending(tail)
    while not end.now(src, model):
        s = src.current()
        s_ready, out = model.step(s, ready(cyc), max_len, min_len)
        if out and ready(cyc):
            col.beat(*out)
        src.advance(s_ready)
        cyc += 1
    return col.frames, model.status()


def classify(frames, max_len, min_len):
    """Timing-free frame-level prediction: each frame's intrinsic fate (a DROPS name), or None
    for a frame that is kept unless the FIFO lacks space for it."""
    fates = []
    for f in frames:
        n = len(f.payload)
        fates.append("drop_disabled" if not f.enable else "drop_error" if f.error else
                     "drop_oversize" if n > max_len else "drop_runt" if n < min_len else None)
    return fates
