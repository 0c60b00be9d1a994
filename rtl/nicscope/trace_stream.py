# SPDX-License-Identifier: BSD-2-Clause
#
# trace_stream.py: the bus analyzer's deep capture: run-length-compressed samples streamed
# through a DMA write port into a ring in host memory, the way an RX queue fills its ring.
#
# What it is: while `enable`, an entry (sample, 32-bit timestamp, gap flag) for every cycle the
# sample changes, into a FIFO, and from it DMA writes of whole entries to ring slot `prod` at
# `base`; the host frees slots by writing its consumer index `cons`. An entry due while the FIFO
# is full is lost: counted in `lost`, and the next entry stored carries the gap flag.
#
# Interfaces:
#   sample, now          in: the sample vector and the cycle count it is stamped with.
#   enable               in: level: streaming (its rising edge writes the first entry).
#   base, size_log2, cons   in: the ring (base 4 KiB aligned, else streaming is refused;
#                        2**size_log2 entries; the host's consumer index, a free-running entry
#                        count).
#   mps                  in: largest DMA write in bytes (the link's MPS).
#   wr                   out: DMA write port (rtl/nic/dma_port.py write_signature).
#   prod, entries, lost  out: entries written to the ring (free-running), entries due, lost.
#   level, busy          out: FIFO fill; entries still to write or a write in progress.
#   refused, refusals    out: this stream was refused (its base not 4 KiB aligned); starts
#                        refused (32 bits, wrapping).
#
# Parameters: sample_width, data_width (the DMA port's W: 64, 128), fifo_depth (entries, a power
# of two), flush_cycles (a partial burst waits at most this long for more entries).

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import fifo, wiring
from amaranth.lib.wiring import In, Out

from rtl.nic.dma_port import write_signature

from .trace_capture import TS_WIDTH

ENTRY_BITS = 128        # bits of an entry in host memory (16 bytes)


def entry_bytes(sample_width):
    """Bytes of a streamed entry: sample, timestamp and the gap flag, in 16-byte units."""
    return 16 * -(-(sample_width + TS_WIDTH + 1) // ENTRY_BITS)


class TraceStream(wiring.Component):
    """Deep capture into a ring in host memory.

    Entry (entry_bytes(sample_width) bytes, little-endian): bits [0, sample_width) the sample,
    then 32 bits of timestamp (the low bits of `now`), the top bit of the entry the gap flag
    (entries were lost between this one and the one before it); the bits between are 0. Entries
    are written as while TraceCapture is armed: on the first enabled cycle, on every change of
    the sample and on every cycle whose timestamp's low 32 bits are 0.

    Ring: slot i at base + (i mod 2**size_log2) * entry_bytes. A write covers consecutive slots
    and never crosses the ring's end, a 4 KiB boundary or `mps` bytes; it starts when the FIFO
    holds a full write or an entry has waited flush_cycles, and only while the ring has room:
    prod - cons < 2**size_log2 - 1 slots in use after it. `prod` counts entries once their write
    has been taken by the DMA port (posted: the host sees the data when it sees `prod` change,
    the PCIe ordering of posted writes before the completion of its read of `prod`).

    Counts (32 bits, wrapping): `entries` every entry due since `enable` rose, `lost` those the
    full FIFO could not take; entries = lost + stored, and after `enable` falls and `busy` clears,
    prod = entries - lost. Rising `enable` resets prod, entries and lost to 0.

    Refusal: `base` must be 4 KiB aligned. If its bits 11..0 are not 0 when `enable` rises (as
    registered with it), the stream is refused: `refused` is 1 (until the next rise of `enable`
    with an aligned base), `refusals` += 1, and while `enable` stays 1 no entry is due (entries
    and lost stay 0) and nothing is written. No write starts while the base is misaligned (the
    base changed under a running stream: the entries wait in the FIFO).
    """

    def __init__(self, sample_width, data_width=128, fifo_depth=512, flush_cycles=256):
        if data_width not in (64, 128):
            raise ValueError(f"TraceStream: data_width={data_width}, 64 or 128")
        if fifo_depth < 16 or fifo_depth & (fifo_depth - 1):
            raise ValueError(f"TraceStream: fifo_depth={fifo_depth}, a power of two >= 16")
        self.sample_width, self.data_width = sample_width, data_width
        self.fifo_depth, self.flush_cycles = fifo_depth, flush_cycles
        self.entry_bytes = entry_bytes(sample_width)
        self.beats = self.entry_bytes * 8 // data_width
        super().__init__({
            "sample":    In(sample_width),
            "now":       In(48),
            "enable":    In(1),
            "base":      In(64),
            "size_log2": In(5),
            "cons":      In(32),
            "mps":       In(13, init=256),
            "wr":        Out(write_signature(data_width)),
            "prod":      Out(32),
            "entries":   Out(32),
            "lost":      Out(32),
            "level":     Out(range(fifo_depth + 1)),
            "busy":      Out(1),
            "refused":   Out(1),
            "refusals":  Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        ew = self.entry_bytes * 8
        eb_log2 = (self.entry_bytes - 1).bit_length()
        m.submodules.fifo = q = fifo.SyncFIFOBuffered(width=ew, depth=self.fifo_depth)
        m.d.comb += self.level.eq(q.level)

        # -- entries: compressed as TraceCapture's, one register stage on entry ------------------
        sample, ts, prev = Signal(self.sample_width), Signal(TS_WIDTH), Signal(self.sample_width)
        en_q, was_en, ts_zero = Signal(), Signal(), Signal()
        m.d.sync += [sample.eq(self.sample), ts.eq(self.now[:TS_WIDTH]), prev.eq(sample),
                     en_q.eq(self.enable), was_en.eq(en_q),
                     ts_zero.eq(self.now[:TS_WIDTH] == 0)]
        rise = en_q & ~was_en
        # The base's alignment registered with `enable`: decided at the rise, for the stream.
        bad = Signal()
        m.d.sync += bad.eq(self.base[:12] != 0)
        run = Signal()
        m.d.comb += run.eq(en_q & Mux(rise, ~bad, ~self.refused))
        with m.If(rise):
            m.d.sync += self.refused.eq(bad)
            with m.If(bad):
                m.d.sync += self.refusals.eq(self.refusals + 1)
        due = run & (rise | (sample != prev) | ts_zero)
        gap = Signal()                      # an entry was lost since the last one stored
        pad = ew - self.sample_width - TS_WIDTH - 1
        m.d.comb += [
            q.w_data.eq(Cat(sample, ts, Const(0, pad), gap & ~rise)),
            q.w_en.eq(due),
        ]
        with m.If(rise):
            m.d.sync += [self.entries.eq(run), self.lost.eq(run & ~q.w_rdy),
                         gap.eq(run & ~q.w_rdy)]
        with m.Elif(due):
            m.d.sync += self.entries.eq(self.entries + 1)
            with m.If(q.w_rdy):
                m.d.sync += gap.eq(0)
            with m.Else():
                m.d.sync += [self.lost.eq(self.lost + 1), gap.eq(1)]

        # -- the writer --------------------------------------------------------------------------
        size = Signal(33)
        m.d.comb += size.eq(Const(1, 33) << self.size_log2)
        used, room = Signal(32), Signal(33)
        m.d.comb += [used.eq(self.prod - self.cons), room.eq(size - 1 - used)]
        slot = Signal(32)
        m.d.comb += slot.eq(self.prod & (size - 1))
        addr = Signal(64)
        m.d.comb += addr.eq(self.base + (slot << eb_log2))
        # Entries in one write: at most MPS, to the 4 KiB boundary, to the ring's end, the room.
        by_mps, by_4k, by_end = Signal(13), Signal(13), Signal(33)
        lim0, lim1, lim = Signal(13), Signal(33), Signal(33)
        m.d.comb += [by_mps.eq(self.mps >> eb_log2), by_4k.eq((4096 - addr[:12]) >> eb_log2),
                     by_end.eq(size - slot),
                     lim0.eq(Mux(by_mps < by_4k, by_mps, by_4k)),
                     lim1.eq(Mux(by_end < lim0, by_end, lim0)),
                     lim.eq(Mux(room < lim1, room, lim1))]
        n = Signal(13)
        m.d.comb += n.eq(Mux(q.level < lim, q.level, lim))
        wait = Signal(range(self.flush_cycles + 1))
        with m.If(q.level == 0):
            m.d.sync += wait.eq(0)
        with m.Elif(wait != self.flush_cycles):
            m.d.sync += wait.eq(wait + 1)

        rise_in = Signal()
        m.d.comb += rise_in.eq(self.enable & ~en_q)        # prod restarts before the first entry
        left = Signal(13)                                  # entries of this write still to send
        beat = Signal(range(max(2, self.beats)))
        w_addr, w_len, w_n = Signal(64), Signal(13), Signal(13)
        W = self.data_width
        writing = Signal()                                 # a write in progress
        # (The base checked as it is, not as registered: a base changed under a running
        # stream starts no write in the cycle `bad` has not caught up.)
        go = (n != 0) & ~rise_in & (self.base[:12] == 0) & ((q.level >= lim) |
                                                              (wait == self.flush_cycles) | ~en_q)
        with m.If(~writing):
            with m.If(go):
                m.d.sync += [writing.eq(1), left.eq(n), w_n.eq(n), beat.eq(0),
                             w_addr.eq(addr), w_len.eq(n << eb_log2)]
        with m.Else():
            m.d.comb += [
                self.wr.valid.eq(q.r_rdy),
                self.wr.p.addr.eq(w_addr), self.wr.p.len.eq(w_len),
                self.wr.p.first.eq((left == w_n) & (beat == 0)),
                self.wr.p.last.eq((left == 1) & (beat == self.beats - 1)),
                self.wr.p.data.eq(q.r_data.word_select(beat, W) if self.beats > 1
                                  else q.r_data),
            ]
            with m.If(self.wr.valid & self.wr.ready):
                if self.beats > 1:
                    m.d.sync += beat.eq(beat + 1)
                with m.If(beat == self.beats - 1):
                    m.d.comb += q.r_en.eq(1)
                    m.d.sync += [beat.eq(0), left.eq(left - 1)]
                    with m.If(left == 1):
                        m.d.sync += [self.prod.eq(self.prod + w_n), writing.eq(0)]
        with m.If(rise_in):
            m.d.sync += self.prod.eq(0)
        m.d.comb += self.busy.eq((q.level != 0) | writing)
        return m
