# SPDX-License-Identifier: BSD-2-Clause
#
# rx_engine.py: the RX DMA engine of one queue: descriptor prefetch, frame write into host
# buffers, completion records.
#
# Interfaces: s (stream in: the RX FrameFIFO's frames, the length on every beat), rd (DMA read
# port: descriptor reads), wr (DMA write stream: frame data and completion records; both
# rtl/nic/dma_port.py), irq_event (a pulse per completion record written), the configuration
# ring_base, ring_size_log2, cpl_base, enable, db_valid/db_index (doorbells); the counters
# COUNTS (rtl/contract/registers.py), cons and base_bad (a misaligned ring base: the ring does
# not run).
# Parameters: data_width (W: 64, 128), max_payload (largest DMA write, MPS: a power of two
# 16..4096, 256), max_read (largest descriptor read: a multiple of 16, 16..4096, 512).
# Behaviour, to the cycle, and the host memory structures: RXEngine's docstring.

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..contract import registers
from ..contract.formats import RECORD_BYTES, RX_CPL, RX_DESC, RxStatus
from .dma_port import read_signature, write_signature
from .frame_fifo import len_beat_layout
from .least import least

COUNTS = registers.counter_names("rx_engine")
# The fields of a descriptor the local FIFO keeps.
ENTRY = data.StructLayout({name: RX_DESC[name].shape for name in ("addr", "len")})
IDLE, DROP, FRAME, CPL, CPL2 = range(5)        # frame states (CPL2: W=64, the record's 2nd beat)
FIFO_DEPTH = 8
SIZE_LOG2_MAX = 12


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class RXEngine(wiring.Component):
    """The RX DMA engine of one queue.

    Takes the frames of rtl/nic/frame_fifo.py (its source m, the length known on the first beat)
    and writes each one into the next buffer the driver has posted on the RX descriptor ring, then
    writes a completion record to the completion ring and pulses `irq_event` (to
    rtl/nic/irq_coalescer.py's `event`). One frame at a time. Nothing is ever written outside a
    posted buffer (within its length) or the completion ring.

    Host memory structures
    ----------------------
    rtl/contract/formats.py; ring bases 16-byte aligned (else the ring does not run: see
    enable).

    descriptor ring
        S = 2**ring_size_log2 RX_DESC descriptors (16 bytes: addr, len, reserved: ignored) at
        ring_base.
    completion ring
        S RX_CPL records (16 bytes) at cpl_base, written at cpl_base + 16 * cpl_index (cpl_index
        0, 1, .. S-1, 0, ..: one record per descriptor consumed by a frame): len (the frame's
        length; 0 unless status is OK), index (the descriptor's ring position), status, queue (0),
        reserved (0), timestamp.
    status
        RxStatus. OK: the frame is in the buffer. TOO_BIG: the frame's length exceeds the
        buffer's; nothing written to the buffer, the buffer is consumed. BAD_ADDR: the buffer
        address is not a multiple of 16; handled as TOO_BIG (nothing written, buffer consumed) and
        counted apart.
    timestamp
        The value of a free-running 64-bit cycle counter (0 in the first cycle after reset) in the
        cycle the frame's first beat was accepted (s.valid & s.ready).

    Ring positions (prod, fetch, cons, cpl_index) are kept mod S, as in
    rtl/nic/tx_queue_manager.py: posted-but-not-fetched descriptors are (prod - fetch) mod S, so
    prod == fetch is empty and a ring holds at most S - 1 posted descriptors (a ring of 1 never has
    one). The core trusts the driver not to post over descriptors it has not consumed yet ((prod -
    cons) mod S <= S - 1, a full lap cannot be told from none) and to keep a buffer untouched until
    its completion.

    Descriptor prefetch
    -------------------
    A local FIFO of 8 descriptors. With no read outstanding in this cycle and the one before, enable
    1 and posted descriptors not fetched, one DMA read of n = min(8, max_read // 16, (prod - fetch)
    mod S, S - fetch (never across the ring end), free FIFO entries, descriptors before the next 4
    KiB boundary) descriptors at ring_base + 16 * fetch is requested (rd.req.p.len = 16 * n; fetch
    += n when the request is issued), n as of the cycle before (a register: after a doorbell in
    cycle t the request is raised in cycle t+3). One read outstanding at a time. Its completion
    beats (16 // (W/8) per descriptor, in order) are written into the FIFO and committed on
    rd.cpl.p.last. If any beat had rd.cpl.p.err, or the number of beats was not 16 * n * 8 / W, the
    n descriptors are skipped: err_read += n, no frame uses them and no completion is written for
    them (they still count as consumed: `cons` moves past them, in ring order, one per cycle, as
    they reach the FIFO head).

    Frames
    ------
    One at a time. When the first beat of a frame is presented (s.valid) and the engine is idle, in
    that cycle:

    no buffer
        enable is 0, or the FIFO is empty, nothing is posted (prod == fetch) and no read is
        outstanding: the first beat is accepted in this cycle (s.ready 1) and the whole frame is
        discarded up to its s.p.last beat; drop_no_buffer += 1 at the edge.
    buffer
        The FIFO head is a fetched (not skipped) descriptor: it is popped (cons += 1) and its
        status decided from s.p.len: BAD_ADDR, else TOO_BIG if roundup4(s.p.len) > buffer length,
        else OK. The frame's beats are accepted from the next cycle on.
    otherwise
        (a descriptor is posted, being fetched or skipped): wait, s.ready 0.

    OK: the s.p.len bytes (from lane 0 of the first beat on, ceil(s.p.len / (W/8)) beats; s.p.keep
    is ignored), followed by 0..3 zero bytes up to a multiple of 4 (PCIe writes through LitePCIe
    are whole DWORDs: its packetizer cannot express a partial last DWORD, so the buffer must hold
    the frame rounded up to 4 bytes), are written at the buffer address in writes of
    min(remaining, the MPS in use, bytes to the next 4 KiB boundary) bytes (input `mps`: the
    link's MPS in bytes, reset value max_payload, taken as max_payload when above it), whose
    data beats are the frame's beats (every write but the last is a multiple of W/8 bytes, as
    the address is 16-byte aligned). Beats after those are discarded up to s.p.last; a frame
    whose s.p.last comes before s.p.len bytes is padded with zero beats (its next frame is
    never touched). TOO_BIG, BAD_ADDR: the frame's beats are discarded.

    Then the completion record is written (one 16-byte write, after the frame's data writes in the
    write stream), cpl_index += 1, and frames/bytes (OK), drop_too_big or drop_bad_desc count it
    when it is loaded into the write register; irq_event is 1 in the cycle after the DMA takes the
    record's last beat.

    enable
    ------
    0 stops new descriptor reads, drops every frame that starts (no buffer) and ignores doorbells
    (not counted). When the engine is idle (no frame in progress, no read outstanding) with enable
    0, the queue is reset: prod = fetch = cons = cpl_index = 0, the FIFO emptied. This is how the
    driver (re)starts a ring: set ring_base, ring_size_log2, cpl_base with enable 0, then enable 1.
    ring_size_log2 > 12 acts as enable 0. So does a ring base that is not 16-byte aligned:
    base_bad (bit 0 ring_base, bit 1 cpl_base, registers of the bases' bits 3..0 != 0, one cycle
    behind them) not 0 holds the ring disabled: nothing is read or written, every frame is
    dropped (no buffer) and the ring is reset as above; err_base += 1 each time enable is 1 with
    base_bad not 0 where the cycle before it was not (a start refused). Change the configuration
    only while enable is 0. Should a base become misaligned under a running ring anyway, no
    DMA uses it: a descriptor read is not issued while ring_base is misaligned, and a frame in
    progress while cpl_base is has its data written but no completion record (counted as if
    it had been).

    Ports
    -----
    W = data_width bits; byte lanes little-endian, lane i is data[8*i:8*i+8].

    ring_base (64), ring_size_log2 (4), cpl_base (64), enable : In
        Configuration (CSRs).
    db_valid, db_index (16) : In
        Doorbell: prod = db_index (the driver's producer index). With db_index >= S it is ignored
        and err_db_range += 1. Ignored while enable is 0.
    s : In(stream of frame_fifo.len_beat_layout(W/8): data (W), keep (W/8), last, len (16))
        The frames, from FrameFIFO's source `m`; len is the frame's length in bytes, valid on every
        beat. s.ready is a function of registers, enable, ring_size_log2 and wr.ready (not of
        s.valid or s.payload).
    rd : Out(dma_port.read_signature(W))
        DMA read requests rd.req {addr (64), len (13), desc} (held until taken; desc = 1: all
        are descriptor fetches): len a multiple of 16, <= max_read, never crossing 4 KiB;
        completions rd.cpl {data (W), last, err}, in request order, first byte in lane 0, last
        on a request's last beat.
    wr : Out(dma_port.write_signature(W))
        DMA write stream {addr (64), len (13), data (W), first, last}: one write = ceil(len * 8 /
        W) beats, addr and len valid on the first beat (first 1), first byte in lane 0; 1 <= len
        <= max_payload, never crossing 4 KiB. Posted: no completion. Registered outputs, held until
        wr.ready.
    irq_event : Out
        One-cycle pulse per completion record taken by the DMA.
    frames, bytes, drop_no_buffer, drop_too_big, drop_bad_desc, desc_reads, err_db_range,
    err_read, err_base : Out, 32 bits each, wrapping
        Frames written OK and their bytes; frames dropped for lack of a buffer, too big, bad buffer
        address; descriptor read requests taken by the DMA; refused doorbells; descriptors skipped
        after a read error; ring starts refused for a misaligned base (COUNTS: the names of
        rtl/contract/registers.py).
    cons : Out (12)
        Ring position of the next descriptor to consume (popped for a frame or skipped).
    base_bad : Out (2, registers)
        Bit 0: ring_base, bit 1: cpl_base is not 16-byte aligned (see enable).
    """

    def __init__(self, data_width=128, max_payload=256, max_read=512):
        if data_width not in (64, 128):
            raise ValueError(f"RXEngine: data_width={data_width!r} must be 64 or 128")
        if not _is_int(max_payload) or not 16 <= max_payload <= 4096 or \
                max_payload & (max_payload - 1):
            raise ValueError(f"RXEngine: max_payload={max_payload!r} must be a power of two "
                             f"16..4096")
        if not _is_int(max_read) or not 16 <= max_read <= 4096 or max_read % 16:
            raise ValueError(f"RXEngine: max_read={max_read!r} must be a multiple of 16, "
                             f"16..4096")
        self.data_width = data_width
        self.max_payload = max_payload
        self.max_read = max_read
        self.max_batch = min(FIFO_DEPTH, max_read // 16)
        w = data_width
        super().__init__({
            "mps":            In(13, init=max_payload),
            "ring_base":      In(64),
            "ring_size_log2": In(4),
            "cpl_base":       In(64),
            "enable":         In(1),
            "db_valid":       In(1),
            "db_index":       In(16),
            "s":              In(stream.Signature(len_beat_layout(w // 8, 16))),
            "rd":             Out(read_signature(w)),
            "wr":             Out(write_signature(w)),
            "irq_event":      Out(1),
            **{s.name: Out(s.width) for s in registers.CORES["rx_engine"].counters},
            "cons":           Out(12),
            "base_bad":       Out(2),
        })

    def elaborate(self, platform):
        m = Module()
        w = self.data_width
        bpb = w // 8                               # bytes per beat: 8 or 16
        beats_per_desc = RECORD_BYTES // bpb

        # A misaligned ring base holds the ring disabled: the decision in registers (the bases
        # change only while enable is 0), so `en` stays a function of a few flip-flops.
        m.d.sync += self.base_bad.eq(Cat(self.ring_base[:4] != 0, self.cpl_base[:4] != 0))
        refused, refused_q = Signal(), Signal()
        m.d.comb += refused.eq(self.enable & (self.base_bad != 0))
        m.d.sync += refused_q.eq(refused)
        with m.If(refused & ~refused_q):
            m.d.sync += self.err_base.eq(self.err_base + 1)
        # The ring size and its mask for the ring arithmetic, registered from ring_size_log2 (no
        # decode or subtraction in front of it). One cycle behind a size written with enable:
        # fetch is 0 then and waiting (prod - fetch) & mask bounds a read, so a stale mask only
        # delays the first read by a cycle.
        size = Signal(13, init=1)
        mask = Signal(12)
        m.d.sync += [
            size.eq(Const(1, 13) << self.ring_size_log2),
            mask.eq(Cat(Const(k) < self.ring_size_log2 for k in range(12))),
        ]
        en = Signal()
        m.d.comb += en.eq(self.enable & (self.ring_size_log2 <= SIZE_LOG2_MAX) &
                          (self.base_bad == 0))
        now = Signal(64)                           # free-running cycle counter
        m.d.sync += now.eq(now + 1)

        prod = Signal(12)
        prod_n = Signal(12)
        fetch_n = Signal(12)
        same = Signal(init=1)                      # prod == fetch, a register (nothing posted)
        fetch = Signal(12)
        m.d.comb += [prod_n.eq(prod), fetch_n.eq(fetch)]
        m.d.sync += [prod.eq(prod_n), fetch.eq(fetch_n), same.eq(prod_n == fetch_n)]
        cons = self.cons
        cpl_idx = Signal(12)

        # -- local descriptor FIFO ---------------------------------------------------------------
        m.submodules.dmem = dmem = memory.Memory(shape=ENTRY, depth=FIFO_DEPTH, init=[])
        dwr = dmem.write_port()
        drd = dmem.read_port(domain="comb")
        wp = Signal(4)                             # committed entries end
        rp = Signal(4)
        bad = Signal(FIFO_DEPTH)                   # entry of a failed read: skip it
        used = Signal(4)
        fifo_empty = Signal()
        head_bad = Signal()
        m.d.comb += [
            drd.addr.eq(rp[:3]),
            used.eq(wp - rp),
            fifo_empty.eq(wp == rp),
            head_bad.eq(bad.bit_select(rp[:3], 1)),
        ]

        # -- descriptor fetch --------------------------------------------------------------------
        in_cpl = Signal()                          # request taken, completion not yet done
        rd_busy = Signal()
        m.d.comb += rd_busy.eq(self.rd.req.valid | in_cpl)
        waiting = Signal(12)
        to_end = Signal(13)
        room = Signal(4)
        raddr = Signal(64)
        to_4k = Signal(13, init=256)
        # Descriptors from fetch to the next 4 KiB boundary: 256 - (ring_base[4:12] + fetch)
        # mod 256, a register made from fetch's next value (so the read's size starts at it).
        d4k_n = Signal(8)
        m.d.comb += [
            waiting.eq((prod - fetch) & mask),
            to_end.eq(size - fetch),
            room.eq(FIFO_DEPTH - used),
            raddr.eq(Cat(Const(0, 4), self.ring_base[4:]) + (fetch << 4)),
            d4k_n.eq(-self.ring_base[4:12] - fetch_n[:8]),
        ]
        m.d.sync += to_4k.eq(Mux(d4k_n == 0, 256, d4k_n))
        # The read's descriptor count, registered: computed from the previous cycle's state,
        # taken only when no read was in progress then (a completion's commit shrinks `room`);
        # prod and pops since then only allow more, and fetch moves only with a request.
        count = Signal(4)
        rd_busy_q = Signal(init=1)
        m.d.sync += [
            count.eq(least(m, "rd_count", 13, Const(self.max_batch, 13), waiting, to_end, room,
                          to_4k)),
            rd_busy_q.eq(rd_busy),
        ]
        bcount = Signal(4)                         # descriptors of the outstanding read
        # (The base checked here too, for a base changed under a running ring: base_bad is a
        # cycle late.)
        with m.If(en & ~rd_busy & ~rd_busy_q & (count != 0) & (self.ring_base[:4] == 0)):
            m.d.sync += [
                self.rd.req.valid.eq(1),
                self.rd.req.p.addr.eq(raddr),
                self.rd.req.p.len.eq(count << 4),
                self.rd.req.p.desc.eq(1),
                bcount.eq(count),
            ]
            m.d.comb += fetch_n.eq((fetch + count) & mask)
        with m.If(self.rd.req.valid & self.rd.req.ready):
            m.d.sync += [self.rd.req.valid.eq(0), in_cpl.eq(1),
                         self.desc_reads.eq(self.desc_reads + 1)]

        rcv = Signal(5)                            # beats received (saturating)
        errd = Signal()
        errd_n = Signal()
        held = Signal(64)                          # W=64: the address beat
        cbeat = Signal()
        m.d.comb += [
            self.rd.cpl.ready.eq(in_cpl),
            cbeat.eq(self.rd.cpl.valid & in_cpl),
            errd_n.eq(errd | self.rd.cpl.p.err),
        ]
        exp_beats = bcount * beats_per_desc
        if bpb == 16:
            desc = data.View(RX_DESC, self.rd.cpl.p.data)
            m.d.comb += [
                dwr.addr.eq((wp + rcv)[:3]),
                dwr.data.addr.eq(desc.addr),
                dwr.data.len.eq(desc.len),
                dwr.en.eq(cbeat & (rcv < bcount)),
            ]
        else:
            desc = data.View(RX_DESC, Cat(held, self.rd.cpl.p.data))
            m.d.comb += [
                dwr.addr.eq((wp + (rcv >> 1))[:3]),
                dwr.data.addr.eq(desc.addr),
                dwr.data.len.eq(desc.len),
                dwr.en.eq(cbeat & rcv[0] & (rcv < exp_beats)),
            ]
            with m.If(cbeat & ~rcv[0]):
                m.d.sync += held.eq(self.rd.cpl.p.data)
        good = Signal()
        m.d.comb += good.eq(~errd_n & (rcv + 1 == exp_beats))
        with m.If(cbeat):
            m.d.sync += [rcv.eq(Mux(rcv == 31, 31, rcv + 1)), errd.eq(errd_n)]
            with m.If(self.rd.cpl.p.last):
                m.d.sync += [in_cpl.eq(0), rcv.eq(0), errd.eq(0), wp.eq(wp + bcount)]
                for i in range(FIFO_DEPTH):
                    with m.If(((i - wp)[:3]) < bcount):
                        m.d.sync += bad[i].eq(~good)
                with m.If(~good):
                    m.d.sync += self.err_read.eq(self.err_read + bcount)

        # -- doorbell ----------------------------------------------------------------------------
        with m.If(self.db_valid & en):
            with m.If((self.db_index >> self.ring_size_log2) == 0):
                m.d.comb += prod_n.eq(self.db_index[:12])
            with m.Else():
                m.d.sync += self.err_db_range.eq(self.err_db_range + 1)

        # -- frames ------------------------------------------------------------------------------
        load = Signal()                            # the write register can take a beat
        m.d.comb += load.eq(~self.wr.valid | self.wr.ready)
        wr_cpl = Signal()                          # the write register holds a record's last beat
        with m.If(load):
            m.d.sync += [self.wr.valid.eq(0), wr_cpl.eq(0)]
        m.d.sync += self.irq_event.eq(self.wr.valid & self.wr.ready & wr_cpl)

        waddr = Signal(64)                         # next buffer byte to write
        rem = Signal(16)                           # bytes of the frame still to write
        crem = Signal(13)                          # bytes of the current write still to send
        flen = Signal(16)
        tail = Signal(w)                           # byte mask of the frame's last data beat
        len4 = Signal(17)
        m.d.comb += len4.eq((self.s.p.len + 3) & ~3)
        didx = Signal(12)
        status = Signal(range(max(RxStatus) + 1))
        ended = Signal()                           # the frame's s_last was accepted
        started = Signal()                         # its first beat was accepted
        ts = Signal(64)

        d_addr = drd.data.addr
        d_len = drd.data.len
        nobuf = Signal()
        pop = Signal()
        skip = Signal()
        m.d.comb += [
            nobuf.eq(~en | (fifo_empty & same & ~rd_busy)),
            skip.eq(~fifo_empty & head_bad),
        ]

        # The write length's limits in registers: the MPS in use (mps changes only when the link
        # trains) and the bytes to the next 4 KiB boundary (kept with waddr).
        w_max = Signal(13, init=self.max_payload)  # MPS in use: mps, at most max_payload
        m.d.sync += w_max.eq(Mux((self.mps >= 16) & (self.mps < self.max_payload), self.mps,
                                 self.max_payload))
        w_to4k = Signal(13)                        # 4096 - waddr[:12]
        clen = least(m, "wr_chunk", 16, rem, w_max, w_to4k)
        cur = Signal(13)                           # bytes of the current write left, this beat
        nb = Signal(5)                             # bytes in this beat
        # A write starts 16-byte aligned and every write but the frame's last is a multiple of
        # 16 bytes (w_max, w_to4k >= 16), so a beat is short only at the end of the frame:
        # min(cur, bpb) is min(rem, bpb), from a register.
        m.d.comb += [
            cur.eq(Mux(crem == 0, clen, crem)),
            nb.eq(Mux(rem < bpb, rem, bpb)),
        ]
        # Every data beat but the frame's last is full (from lane 0); the last holds len mod bpb
        # bytes (bpb when 0), then zero padding: its mask is made when the frame starts.
        byte_mask = Signal(w)
        lanes = self.s.p.len[:exact_log2(bpb)]
        m.d.comb += [
            byte_mask.eq(Mux(rem <= bpb, tail, Const(-1, w))),
        ]

        caddr = Signal(64)
        rec = Signal(RX_CPL)                      # queue and reserved: 0
        m.d.comb += [
            caddr.eq(Cat(Const(0, 4), self.cpl_base[4:]) + (cpl_idx << 4)),
            rec.len.eq(Mux(status == RxStatus.OK, flen, 0)),
            rec.index.eq(didx),
            rec.status.eq(status),
            rec.timestamp.eq(ts),
        ]
        rec_bits = rec.as_value()

        def cpl_counts():
            m.d.sync += [
                cpl_idx.eq((cpl_idx + 1) & mask),
                self.frames.eq(self.frames + (status == RxStatus.OK)),
                self.bytes.eq(self.bytes + Mux(status == RxStatus.OK, flen, 0)),
                self.drop_too_big.eq(self.drop_too_big + (status == RxStatus.TOO_BIG)),
                self.drop_bad_desc.eq(self.drop_bad_desc + (status == RxStatus.BAD_ADDR)),
            ]

        state = Signal(3)
        with m.If(state == IDLE):
            m.d.comb += self.s.ready.eq(nobuf)
            with m.If(self.s.valid):
                with m.If(nobuf):
                    m.d.sync += self.drop_no_buffer.eq(self.drop_no_buffer + 1)
                    with m.If(~self.s.p.last):
                        m.d.sync += state.eq(DROP)
                with m.Elif(~fifo_empty & ~head_bad):
                    m.d.comb += pop.eq(1)
                    # len4 > d_len as len > d_len rounded down to 4: one compare, no sum first.
                    st = Mux(d_addr[:4] != 0, RxStatus.BAD_ADDR,
                             Mux(self.s.p.len > (d_len & ~3), RxStatus.TOO_BIG, RxStatus.OK))
                    m.d.sync += [
                        status.eq(st),
                        rem.eq(Mux(st == RxStatus.OK, len4, 0)),
                        tail.eq(Cat(Mux((lanes == 0) | (lanes > j) if j < bpb - 1 else
                                        lanes == 0, Const(0xFF, 8), Const(0, 8))
                                    for j in range(bpb))),
                        flen.eq(self.s.p.len),
                        waddr.eq(d_addr),
                        w_to4k.eq(4096 - d_addr[:12]),
                        didx.eq(cons),
                        crem.eq(0),
                        ended.eq(0),
                        started.eq(0),
                    ]
                    m.d.sync += state.eq(FRAME)
        with m.Elif(state == DROP):
            m.d.comb += self.s.ready.eq(1)
            with m.If(self.s.valid & self.s.p.last):
                m.d.sync += state.eq(IDLE)
        with m.Elif(state == FRAME):
            with m.If(rem != 0):
                m.d.comb += self.s.ready.eq(~ended & load)
                with m.If(load & (ended | self.s.valid)):
                    m.d.sync += [
                        self.wr.valid.eq(1),
                        self.wr.p.first.eq(crem == 0),
                        self.wr.p.last.eq(cur <= bpb),
                        self.wr.p.data.eq(Mux(ended, 0, self.s.p.data) & byte_mask),
                        rem.eq(rem - nb),
                        crem.eq(cur - nb),
                        waddr.eq(waddr + nb),
                        w_to4k.eq(Mux(w_to4k == nb, 4096, w_to4k - nb)),
                    ]
                    with m.If(crem == 0):
                        m.d.sync += [self.wr.p.addr.eq(waddr), self.wr.p.len.eq(cur)]
                    with m.If(~ended & self.s.p.last):
                        m.d.sync += ended.eq(1)
            with m.Elif(~ended):
                m.d.comb += self.s.ready.eq(1)
                with m.If(self.s.valid & self.s.p.last):
                    m.d.sync += ended.eq(1)
            with m.Else():
                m.d.sync += state.eq(CPL)
            with m.If(self.s.valid & self.s.ready & ~started):
                m.d.sync += [started.eq(1), ts.eq(now)]
        with m.Elif(state == CPL):
            with m.If(load & (self.cpl_base[:4] != 0)):
                # cpl_base made misaligned under a running ring: no record is written.
                cpl_counts()
                m.d.sync += state.eq(IDLE)
            with m.Elif(load):
                m.d.sync += [
                    self.wr.valid.eq(1),
                    self.wr.p.first.eq(1),
                    self.wr.p.last.eq(bpb == 16),
                    self.wr.p.addr.eq(caddr),
                    self.wr.p.len.eq(RX_CPL.size // 8),
                    self.wr.p.data.eq(rec_bits[:w]),
                ]
                if bpb == 16:
                    m.d.sync += wr_cpl.eq(1)
                    cpl_counts()
                    m.d.sync += state.eq(IDLE)
                else:
                    m.d.sync += state.eq(CPL2)
        if bpb == 8:
            with m.Elif(state == CPL2):
                with m.If(load):
                    m.d.sync += [
                        self.wr.valid.eq(1),
                        self.wr.p.first.eq(0),
                        self.wr.p.last.eq(1),
                        self.wr.p.data.eq(rec_bits[64:]),
                        wr_cpl.eq(1),
                    ]
                    cpl_counts()
                    m.d.sync += state.eq(IDLE)
        with m.Else():
            m.d.sync += state.eq(IDLE)

        with m.If(pop | skip):
            m.d.sync += [rp.eq(rp + 1), cons.eq((cons + 1) & mask)]
        # Reset of the queue while disabled and idle (last: overrides the pops and skips).
        with m.If(~en & ~rd_busy & (state == IDLE)):
            m.d.sync += [cons.eq(0), cpl_idx.eq(0), wp.eq(0), rp.eq(0)]
            m.d.comb += [prod_n.eq(0), fetch_n.eq(0)]
        return m
