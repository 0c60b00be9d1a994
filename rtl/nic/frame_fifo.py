# SPDX-License-Identifier: BSD-2-Clause
#
# frame_fifo.py: store-and-forward packet FIFO that drops bad frames and counts every drop.
#
# Interfaces: s (stream in: frame beats of beat_layout; always_ready without backpressure),
# m (stream out: beats of len_beat_layout, the frame's length on every beat), max_len, min_len,
# enable; the counters COUNTS (rtl/contract/registers.py), level, frames_queued; the layouts
# beat_layout(nbytes), len_beat_layout(nbytes, len_width).
# Parameters: data_width (bytes per beat, a power of two 1..64), depth (bytes of storage, a
# power of two >= 2 * data_width), len_width (16: frames up to 65535 bytes), max_frames (length
# FIFO entries, a power of two >= 2; None: depth // data_width), backpressure (False: RX side,
# drops; True: TX side), count_width (counter width, 32).
# Behaviour, to the cycle, and the drop rules: FrameFIFO's docstring.

from amaranth import Cat, Module, Mux, Signal, unsigned
from amaranth.utils import ceil_log2
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from ..contract import registers

COUNTS = registers.counter_names("frame_fifo")       # names and meaning: rtl/contract
DROPS = ("drop_disabled", "drop_error", "drop_oversize", "drop_runt", "drop_full")  # priority

# Reason a frame is being discarded, decided before its last beat (the register `reason`).
NONE, DISABLED, OVERSIZE, FULL = range(4)


def beat_layout(nbytes):
    """A frame beat into the FIFO (its sink `s`; the TX engine's `tx`, the MAC's RX): nbytes
    byte lanes, keep, last, error (with last: a bad frame)."""
    return data.StructLayout({"data": 8 * nbytes, "keep": nbytes, "last": 1, "error": 1})


def len_beat_layout(nbytes, len_width=16):
    """A frame beat out of the FIFO (its source `m`; the RX engine's `s`): the frame's length in
    bytes on every beat instead of error."""
    return data.StructLayout({"data": 8 * nbytes, "keep": nbytes, "last": 1, "len": len_width})


def _is_pow2(n):
    return isinstance(n, int) and n >= 1 and n & (n - 1) == 0


def _log2(n):
    return n.bit_length() - 1


class FrameFIFO(wiring.Component):
    """Store-and-forward packet FIFO.

    Corundum's axis_fifo with FRAME_FIFO=1, DROP_BAD_FRAME, DROP_OVERSIZE_FRAME and
    DROP_WHEN_FULL, plus a runt check. On the RX path (MAC -> FIFO -> DMA) the MAC can never wait,
    so the sink never back-pressures and whatever cannot be kept is dropped and counted; on the TX
    path (DMA -> FIFO -> MAC, `backpressure=True`) a whole frame is stored before its first beat
    leaves, so the MAC never underruns. A frame is stored in full before any of it is output, and
    a dropped frame leaves no trace: the write pointer rolls back to the end of the last committed
    frame and readers never see a byte of it. Frame boundaries are never lost: a frame being
    dropped is discarded up to and including its `s.p.last` beat.

    Storage: a memory of depth // data_width beats (data, keep, last: one entry per beat, so a
    partial last beat occupies a whole entry) and a FIFO of the committed frames' lengths (bytes
    and beats), so that `m.p.len` is known on the first beat. A frame's length is the sum over its
    beats of the number of 1 bits of `s.p.keep`.

    Drop rules
    ----------
    Per frame. Each dropped frame increments exactly one counter, the first that applies in this
    priority order (frame-intrinsic reasons first, then lack of space):

    disabled
        `enable` was 0 in the cycle the frame's first beat was accepted (a frame that started with
        enable 1 is handled normally even if enable drops during it).
    error
        `s.p.error` was 1 on the last beat (bad FCS, PHY error).
    oversize
        The length exceeds `max_len`; decided at the beat that makes it exceed: nothing more of the
        frame is stored.
    runt
        Length < `min_len` (decided on the last beat).
    full
        A beat was decided (in the cycle after it moved, see `sink`) while the memory was full
        (entries from the read pointer, as registered at the start of the cycle, to the write
        pointer: a beat read into the output register in cycle t frees its entry from cycle t+1;
        nothing more of the frame is stored), or the length FIFO held `max_frames` frames whose
        first beat had not been read when the last beat was decided.

    A frame is kept (committed) when none applies. `max_len` and `min_len` are compared with
    each beat's length so far as it enters the input stage (`max_len` counts on every beat,
    `min_len` on the last one); keep both stable during a frame.

    Cycles
    ------
    Everything is registered at the clock edge that ends the cycle in question.

    sink
        A beat moves in cycle t when s.valid & s.ready into an input stage (registers: the beat,
        the frame's length up to it and that length's comparisons with max_len and min_len, and
        `enable`), and is decided (stored, or the frame's fate) in cycle t+1.
        With the last beat of a frame in cycle t, in cycle t+3 (the decision is registered in
        t+2): frames_in has incremented, and exactly one of: the frame is committed (level += its
        length, frames_queued += 1) or one drop counter has incremented.
    latency
        A frame whose last beat moves in cycle t, with nothing committed before it still waiting
        and the output register free in cycle t+2 (m.valid 0, or m.ready 1), shows its first beat
        on m (m.valid 1) in cycle t+3: 3 cycles.
    source
        m.valid and m.payload are registers (data and keep are the memory's synchronous read
        port, last is set from the frame's beat count); a beat moves in cycle t when m.valid &
        m.ready, and in cycle t+1 the next beat is on m if one is stored (one beat per cycle,
        frames back to back). frames_out (on m.p.last) and frames_queued (-= 1 on m.p.last) are
        updated in cycle t+1, bytes_out (+= the 1 bits of m.p.keep) and level (-= the same) in
        cycle t+2.
    s.ready
        1 always when backpressure=False. With backpressure=True it is a function of registers
        only: 0 while the input stage holds a beat that cannot be decided, that is while the
        length FIFO is full, or while the memory is full and committed beats still occupy it (it
        frees as the output drains). A frame that fills the whole memory by itself can never
        fit: its next beat is accepted and the frame is dropped as full, so the sink never
        dead-locks.

    No combinational path from m.ready to s.ready, nor from s to m. Beats are written and read in
    the same cycle at full rate.

    Ports
    -----
    Stream payload fields are written s.p.<field>, as in the code.

    s : In(stream of beat_layout(data_width))
        The sink, payload data (data_width byte lanes, little-endian: lane i is
        s.p.data[8*i:8*i+8]), keep (one bit per lane, contiguous from lane 0, only the last beat
        partial; any pattern is stored and passed on, the length counts its 1 bits), last, error
        (sampled with last). always_ready (s.ready is Const(1)) when backpressure=False.
    m : Out(stream of len_beat_layout(data_width, len_width))
        The source, payload data, keep, last and len: the frame's length in bytes, valid on every
        beat of the frame.
    max_len, min_len : In, len_width bits
        See the drop rules.
    enable : In
        See `disabled`; the output keeps draining committed frames while 0.
    frames_in, frames_out, bytes_out, drop_error, drop_oversize, drop_runt, drop_full,
    drop_disabled : Out, count_width bits, wrapping
        frames_in counts every frame whose last beat was accepted: frames_in == frames_out +
        sum(drop_*) + frames_queued (mod 2**count_width), in every cycle.
    level : Out
        Bytes of committed frames not yet output (m.valid & m.ready); up to depth + data_width (a
        full memory and the output register).
    frames_queued : Out
        Committed frames whose last beat has not yet been output.

    Parameters
    ----------
    depth should be at least twice the largest frame kept. max_frames None (depth // data_width)
    can never be the limit (every frame takes at least one entry); with small beats set it lower
    (e.g. depth // 64 for 64-byte minimum frames). backpressure False: s.ready is 1 always (RX
    side); True: see s.ready (TX side).
    """

    def __init__(self, data_width=8, depth=4096, len_width=16, max_frames=None,
                 backpressure=False, count_width=32):
        if not _is_pow2(data_width) or data_width > 64:
            raise ValueError(f"FrameFIFO: data_width={data_width} must be a power of two "
                             f"from 1 to 64")
        if not _is_pow2(depth) or depth < 2 * data_width:
            raise ValueError(f"FrameFIFO: depth={depth} must be a power of two >= "
                             f"2 * data_width = {2 * data_width}")
        if not isinstance(len_width, int) or not 1 <= len_width <= 32:
            raise ValueError(f"FrameFIFO: len_width={len_width} must be 1 to 32")
        entries = depth // data_width
        if max_frames is None:
            max_frames = entries
        if not _is_pow2(max_frames) or max_frames < 2:
            raise ValueError(f"FrameFIFO: max_frames={max_frames} must be a power of two >= 2")
        if not isinstance(count_width, int) or count_width < 1:
            raise ValueError(f"FrameFIFO: count_width={count_width} must be >= 1")
        self.data_width = data_width
        self.depth = depth
        self.entries = entries
        self.len_width = len_width
        self.max_frames = max_frames
        self.backpressure = bool(backpressure)
        self.count_width = count_width
        super().__init__({
            "s":             In(stream.Signature(beat_layout(data_width),
                                                 always_ready=not self.backpressure)),
            "m":             Out(stream.Signature(len_beat_layout(data_width, len_width))),
            "max_len":       In(len_width),
            "min_len":       In(len_width),
            "enable":        In(1),
            **{name: Out(count_width) for name in COUNTS},
            "level":         Out(depth.bit_length()),
            "frames_queued": Out((max_frames + 1).bit_length()),
        })

    def elaborate(self, platform):
        m = Module()
        dw = self.data_width
        lw = self.len_width
        entries = self.entries
        aw = _log2(entries)                 # memory address bits; pointers have one more
        fw = _log2(self.max_frames)         # length FIFO address bits; pointers have one more

        # Entry: data | keep | the bytes kept mod dw (counted on the write side, so that
        # the output's byte count is read, not a popcount of the memory's output; mod dw keeps
        # the entry within the block RAMs' width: a count of 0 is dw bytes when keep[0] is set).
        nb_w = ceil_log2(dw)
        m.submodules.mem = mem = memory.Memory(shape=unsigned(9 * dw + nb_w),
                                               depth=entries, init=[])
        wr = mem.write_port()
        rd = mem.read_port(domain="sync")
        # Length FIFO entry: frame length in bytes | (beats - 1) << len_width.
        m.submodules.lens = lens = memory.Memory(shape=unsigned(lw + aw),
                                                 depth=self.max_frames, init=[])
        lwr = lens.write_port()
        lrd = lens.read_port(domain="sync", transparent_for=[lwr])

        wp = Signal(aw + 1)        # next memory entry to write
        fstart = Signal(aw + 1)    # end of the last committed frame (rollback target)
        rp = Signal(aw + 1)        # next memory entry to read
        lwp = Signal(fw + 1)       # length FIFO write pointer (committed frames)
        lrp = Signal(fw + 1)       # length FIFO read pointer (frames whose first beat was read)
        in_frame = Signal()        # a frame has started (beats accepted, not its last yet)
        reason = Signal(2)         # NONE, DISABLED, OVERSIZE, FULL for the frame in progress

        def popcount(v):
            return sum(v[i] for i in range(len(v)))

        # ---- input stage: the sink's beat in registers with the frame's length up to it, the
        # length's comparisons and `enable`, so that the drop decision starts from flip-flops
        # (logic depth, not cycles, sets Fmax). Beats are decided in the order they are staged,
        # so the length so far is the staged beats'. Full: equal addresses, other lap.
        mem_full = (wp[:aw] == rp[:aw]) & (wp[aw] != rp[aw])
        lfull = (lwp[:fw] == lrp[:fw]) & (lwp[fw] != lrp[fw])
        i_valid = Signal()
        i_p = Signal(beat_layout(dw))
        i_len = Signal(lw + 1)              # bytes of the frame up to the staged beat, inclusive
        i_over = Signal()                   # i_len > max_len
        i_runt = Signal()                   # i_len < min_len
        i_enable = Signal()                 # `enable` when the beat was accepted
        s_first = Signal(init=1)            # the next beat staged starts a frame
        s_len = Signal(lw + 1)
        if self.backpressure:               # else s.ready is Const(1) (always_ready)
            room = ~lfull & ~(mem_full & (fstart != rp))
            beat = i_valid & room
            m.d.comb += self.s.ready.eq(~i_valid | room)
            load = self.s.ready
        else:
            beat = i_valid
            load = 1
        # The comparisons are of the beat's byte count with what the frame has left below
        # max_len (room) and min_len (need), registers kept beside the length: no compare of a
        # sum. The length only grows within a frame, so i_over holds once set and need stops at
        # 0.
        s_pc = Signal(range(dw + 1))
        s_room = Signal(lw + 1)
        s_need = Signal(lw + 1)
        i_room = Signal(lw + 1)             # max_len - i_len while not i_over
        i_need = Signal(lw + 1)             # max(min_len - i_len, 0)
        m.d.comb += [
            s_pc.eq(popcount(self.s.p.keep)),
            s_len.eq(Mux(s_first, 0, i_len) + s_pc),
            s_room.eq(Mux(s_first, self.max_len, i_room)),
            s_need.eq(Mux(s_first, self.min_len, i_need)),
        ]
        with m.If(load):
            m.d.sync += [i_valid.eq(self.s.valid), i_p.eq(self.s.p), i_enable.eq(self.enable)]
            with m.If(self.s.valid):
                m.d.sync += [i_len.eq(s_len), i_over.eq((~s_first & i_over) | (s_pc > s_room)),
                             i_runt.eq(s_pc < s_need), i_room.eq(s_room - s_pc),
                             i_need.eq(Mux(s_pc < s_need, s_need - s_pc, 0)),
                             s_first.eq(self.s.p.last)]

        # ---- write side: the staged beat
        len_now = i_len
        disabled = (reason == DISABLED) | (~in_frame & ~i_enable)
        over = (reason == OVERSIZE) | i_over
        full = (reason == FULL) | mem_full
        keep = Signal()            # the beat is stored (no reason to drop its frame yet)
        nxt = Signal(2)            # the reason after this beat
        m.d.comb += [
            keep.eq(~disabled & ~over & ~full),
            nxt.eq(Mux(disabled, DISABLED, Mux(over, OVERSIZE, Mux(full, FULL, NONE)))),
        ]

        # Drop decision on the last beat, in priority order; commit when none applies. The
        # commit is written flat (not as the priority chain's remainder): it sets the write
        # pointers, whose next values are this core's longest paths.
        final = {
            "drop_disabled": disabled,
            "drop_error":    i_p.error,
            "drop_oversize": over,
            "drop_runt":     i_runt,
            "drop_full":     full | lfull,
        }
        drop_now = {}
        earlier = 0
        for name in DROPS:
            drop_now[name] = Signal(name=f"{name}_now")
            m.d.comb += drop_now[name].eq(beat & i_p.last & ~earlier & final[name])
            earlier = earlier | final[name]
        good = Signal()            # the frame is committed if this is its last beat
        commit = Signal()
        m.d.comb += [good.eq(keep & ~i_p.error & ~i_runt & ~lfull),
                     commit.eq(beat & i_p.last & good)]

        m.d.comb += [
            wr.addr.eq(wp[:aw]),
            wr.data.eq(Cat(i_p.data, i_p.keep, popcount(i_p.keep)[:nb_w])),
            wr.en.eq(beat & keep),
            lwr.addr.eq(lwp[:fw]),
            lwr.data.eq(Cat(len_now[:lw], (wp - fstart)[:aw])),
            lwr.en.eq(commit),
        ]
        with m.If(beat):
            m.d.sync += wp.eq(Mux(Mux(i_p.last, good, keep), wp + 1, fstart))
            with m.If(i_p.last):
                m.d.sync += [in_frame.eq(0), reason.eq(NONE)]
                with m.If(good):
                    m.d.sync += [fstart.eq(wp + 1), lwp.eq(lwp + 1)]
            with m.Else():
                m.d.sync += [in_frame.eq(1), reason.eq(nxt)]
        # The decision registered: the counters follow it a cycle later, all together.
        c_last = Signal()
        c_commit = Signal()
        c_len = Signal(lw + 1)
        c_drop = {name: Signal(name=f"{name}_q") for name in DROPS}
        m.d.sync += [c_last.eq(beat & i_p.last), c_commit.eq(commit), c_len.eq(len_now)]
        m.d.sync += [c_drop[name].eq(drop_now[name]) for name in DROPS]
        with m.If(c_last):
            m.d.sync += self.frames_in.eq(self.frames_in + 1)
        for name in DROPS:
            with m.If(c_drop[name]):
                m.d.sync += getattr(self, name).eq(getattr(self, name) + 1)

        # ---- read side: the memory's read port register is the output register.
        rem = Signal(aw)           # beats of the current output frame still to read
        m_len = Signal(lw)         # the current output frame's length
        adv = ~self.m.valid | self.m.ready                  # the output register can load
        # rem == 0, a register: the beat last read ended its frame (so it is m.p.last, and the
        # next take starts a frame; it addresses the length FIFO).
        rem_0 = Signal(init=1)
        avail = ~rem_0 | (lwp != lrp)
        take = Signal()
        start = Signal()           # take the first beat of a frame (pops the length FIFO)
        lrp_inc = Signal(fw + 1)
        m.d.comb += lrp_inc.eq(lrp + 1)
        m.d.comb += [
            take.eq(adv & avail),
            start.eq(take & rem_0),
            rd.addr.eq(rp[:aw]),
            rd.en.eq(take),
            # Addressed with the next value of lrp: lrd.data is always lens[lrp], including a
            # length written in the previous cycle (transparent port). lrp + 1 is a sum of
            # registers, chosen after `start`.
            lrd.addr.eq(Mux(start, lrp_inc, lrp)[:fw]),
            self.m.p.data.eq(rd.data[:8 * dw]),
            self.m.p.keep.eq(rd.data[8 * dw:9 * dw]),
            self.m.p.last.eq(rem_0),
            self.m.p.len.eq(m_len),
        ]
        with m.If(adv):
            m.d.sync += self.m.valid.eq(avail)
        with m.If(take):
            ends = Mux(start, lrd.data[lw:] == 0, rem == 1)     # rem == 0 after this beat
            m.d.sync += [rp.eq(rp + 1), rem_0.eq(ends)]
            with m.If(start):
                m.d.sync += [
                    m_len.eq(lrd.data[:lw]),
                    rem.eq(lrd.data[lw:]),
                    lrp.eq(lrp_inc),
                ]
            with m.Else():
                m.d.sync += rem.eq(rem - 1)

        # The bytes of a beat output are counted a cycle later, from a register: the block
        # RAM's output reaches no sum.
        out = self.m.valid & self.m.ready
        nb_mod = rd.data[9 * dw:]          # the stored count mod dw
        out_bytes = Cat(nb_mod, (nb_mod == 0) & self.m.p.keep[0]) if nb_w else self.m.p.keep
        o_bytes = Signal(len(out_bytes))
        m.d.sync += o_bytes.eq(Mux(out, out_bytes, 0))
        m.d.sync += self.bytes_out.eq(self.bytes_out + o_bytes)
        with m.If(out & rem_0):
            m.d.sync += self.frames_out.eq(self.frames_out + 1)
        m.d.sync += [
            self.level.eq(self.level + Mux(c_commit, c_len, 0) - o_bytes),
            self.frames_queued.eq(self.frames_queued + c_commit - (out & rem_0)),
        ]
        return m
