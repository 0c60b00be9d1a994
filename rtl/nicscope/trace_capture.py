# SPDX-License-Identifier: BSD-2-Clause
#
# trace_capture.py: the bus analyzer's sample storage, run-length compressed, with pre-trigger.
#
# What it is: writes the sample vector into a block RAM only on the cycles it changes, each entry
# tagged with the low 32 bits of a free-running cycle counter; keeps a pre-trigger ring and a
# post-trigger window. Sequence (arm, trigger, stop, overflow): TraceCapture's docstring.
#
# Interfaces:
#   sample         in, sample_width bits.
#   arm, stop      in: pulses (arm wins).
#   trigger        in: the trigger fired (TraceTrigger.fire); looked at only while ARMED.
#   pre            in: pre-trigger entries to keep (values above depth - 1 act as depth - 1).
#   post           in, 32 bits: cycles captured after the trigger cycle.
#   armed, state   out: state is ARMED (enables the trigger); State.
#   start, count, trig_index   out: where the entries are.
#   trig_ts, end_ts, last_ts, now   out, 48 bits: cycle counts since reset.
#   overflow, triggered        out.
#   rd_addr        in; rd_data out (one cycle later): entry = sample | timestamp << sample_width.
#
# Parameters: sample_width (bits per sample), depth (entries, a power of two; the RAM is depth x
# (sample_width + 32) bits), latency (0, or 1: the sample is registered on entry, and arm, stop
# and trigger pair with the sample of the cycle before).

from enum import IntEnum

from amaranth import Cat, Module, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

TS_WIDTH = 32


class State(IntEnum):
    IDLE = 0
    ARMED = 1
    TRIGGERED = 2
    DONE = 3


class TraceCapture(wiring.Component):
    """Run-length-compressed trace storage with a pre-trigger ring.

    A long idle stretch costs one entry: a value holds from its entry's timestamp until the next
    entry's. At most one entry per cycle: capture runs at the full clock rate and loses nothing
    while storage remains.

    Sequence:
      arm      (pulse) clears the storage; state ARMED. The first armed cycle always writes an
               entry (the starting value); so does every cycle whose timestamp's low 32 bits are
               0, so that consecutive entries are never 2**32 or more cycles apart.
      ARMED    entries go round the RAM as a ring. On the cycle `trigger` is 1 an entry is always
               written (the trigger entry, at `trig_index`, time `trig_ts`); of the entries
               before it the newest min(pre, stored) are kept; state TRIGGERED.
      TRIGGERED  entries are written after the pre-trigger ones until the capture has covered
               `post` cycles after the trigger cycle (then DONE, `end_ts` = the first cycle not
               covered), or until the RAM is full when another entry is due (then DONE with
               `overflow` = 1 and `end_ts` = the cycle whose change could not be stored).
      stop     (pulse) ends an ARMED or TRIGGERED capture at once: DONE, `end_ts` = that cycle.
    The entries are the `count` at `start`, `start`+1, ... (mod depth); `last_ts` is the full
    timestamp of the newest one, so host software can unwrap the 32-bit timestamps from it.

    latency=1: `sample` is registered on entry, with whether it differs from the one before and
    whether the next timestamp's low bits are 0, so the wide comparison is out of the write
    decision's path; the capture is then exactly a latency-0 capture of the sample delayed by
    one cycle (arm, stop and trigger on cycle t pair with the sample of cycle t - 1).
    """

    def __init__(self, sample_width, depth=1024, latency=0):
        if depth < 4 or depth & (depth - 1):
            raise ValueError(f"TraceCapture: depth={depth} must be a power of two >= 4")
        if sample_width < 1:
            raise ValueError(f"TraceCapture: sample_width={sample_width} must be at least 1")
        if latency not in (0, 1):
            raise ValueError(f"TraceCapture: latency={latency} must be 0 or 1")
        self.sample_width, self.depth, self.latency = sample_width, depth, latency
        aw = (depth - 1).bit_length()
        self.entry_width = sample_width + TS_WIDTH
        super().__init__({
            "sample":     In(sample_width),
            "arm":        In(1),
            "stop":       In(1),
            "trigger":    In(1),
            "pre":        In(aw + 1),
            "post":       In(32),
            "armed":      Out(1),
            "state":      Out(2),
            "start":      Out(aw),
            "count":      Out(aw + 1),
            "trig_index": Out(aw),
            "trig_ts":    Out(48),
            "end_ts":     Out(48),
            "last_ts":    Out(48),
            "now":        Out(48),
            "overflow":   Out(1),
            "triggered":  Out(1),
            "rd_addr":    In(aw),
            "rd_data":    Out(self.entry_width),
        })

    def elaborate(self, platform):
        m = Module()
        depth = self.depth
        aw = (depth - 1).bit_length()
        m.submodules.mem = mem = memory.Memory(shape=unsigned(self.entry_width), depth=depth,
                                               init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="sync")
        m.d.comb += [rd.addr.eq(self.rd_addr), self.rd_data.eq(rd.data)]

        now = self.now
        m.d.sync += now.eq(now + 1)
        if self.latency:
            sample, differs, ts_zero = Signal(self.sample_width), Signal(), Signal(init=1)
            m.d.sync += [
                sample.eq(self.sample),
                differs.eq(self.sample != sample),
                ts_zero.eq(now[:TS_WIDTH] == 2**TS_WIDTH - 1),
            ]
        else:
            sample, prev = self.sample, Signal(self.sample_width)
            m.d.sync += prev.eq(sample)
            differs, ts_zero = sample != prev, now[:TS_WIDTH] == 0
        first = Signal()          # the first armed cycle: always write
        wp = Signal(aw)
        post_left = Signal(32)

        changed = differs | first | ts_zero
        m.d.comb += [
            wr.addr.eq(wp),
            wr.data.eq(Cat(sample, now[:TS_WIDTH])),
            self.armed.eq(self.state == State.ARMED),
        ]

        def write():
            m.d.comb += wr.en.eq(1)
            m.d.sync += [wp.eq(wp + 1), self.last_ts.eq(now)]

        def done(end):
            m.d.sync += [self.state.eq(State.DONE), self.end_ts.eq(end)]

        with m.If(self.arm):
            m.d.sync += [
                self.state.eq(State.ARMED), first.eq(1), wp.eq(0), self.start.eq(0),
                self.count.eq(0), self.overflow.eq(0), self.triggered.eq(0),
                self.trig_index.eq(0), self.trig_ts.eq(0), self.end_ts.eq(0),
            ]
        with m.Elif(self.stop & ((self.state == State.ARMED) | (self.state == State.TRIGGERED))):
            done(now)
            with m.If(self.state == State.ARMED):
                m.d.sync += self.start.eq(wp - self.count)
        with m.Elif(self.state == State.ARMED):
            m.d.sync += first.eq(0)
            with m.If(self.trigger):
                write()
                kept = Signal(aw + 1)
                m.d.comb += kept.eq(self.count)
                with m.If(self.pre >= depth):
                    with m.If(self.count > depth - 1):
                        m.d.comb += kept.eq(depth - 1)
                with m.Elif(self.pre < self.count):
                    m.d.comb += kept.eq(self.pre)
                m.d.sync += [
                    self.state.eq(State.TRIGGERED), self.triggered.eq(1),
                    self.trig_index.eq(wp), self.trig_ts.eq(now),
                    self.start.eq(wp - kept), self.count.eq(kept + 1),
                    post_left.eq(self.post),
                ]
                with m.If(self.post == 0):
                    done(now + 1)
            with m.Elif(changed):
                write()
                with m.If(self.count != depth):
                    m.d.sync += self.count.eq(self.count + 1)
        with m.Elif(self.state == State.TRIGGERED):
            with m.If(changed):
                with m.If(self.count == depth):
                    done(now)
                    m.d.sync += self.overflow.eq(1)
                with m.Else():
                    write()
                    m.d.sync += self.count.eq(self.count + 1)
            with m.If(~(changed & (self.count == depth))):
                m.d.sync += post_left.eq(post_left - 1)
                with m.If(post_left == 1):
                    done(now + 1)
        return m
