# SPDX-License-Identifier: BSD-2-Clause
#
# tx_engine.py: the TX DMA engine: reads the descriptors of a ring job and each descriptor's
# payload from host memory and packs the fragments back to back into frames for the TX
# FrameFIFO, with in-order descriptor completions and a done record per frame.
#
# Interfaces: job (stream in: TXQueueManager's fetch jobs), rd (DMA read port,
# rtl/nic/dma_port.py), tx (frame beats out, to FrameFIFO.s), cpl (descriptor completions, to
# TXQueueManager.cpl), done (a record per frame); base_valid/base_queue/base_addr (ring
# bases; a misaligned one refused: base_bad), idle, open_valid/open_queue/open_abort (a frame
# open between jobs); the counters
# COUNTS and, per queue, q_frames, q_bytes and q_errors (rtl/contract/registers.py).
# Parameters: data_width (64, 128), nqueues (1..64), max_read (MRRS: a multiple of 16,
# 16..4096), max_frame (1..65535), max_batch (descriptors per job, 1..256).
# Behaviour, to the cycle: TXEngine's docstring.

from amaranth import Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from ..contract import registers
from ..contract.formats import RECORD_BYTES, TX_DESC, TxDescFlags, TxStatus, flag_bit
from .dma_port import read_signature
from .frame_fifo import beat_layout
from .tx_queue_manager import cpl_layout, job_layout, queue_bits

STATUS_COUNTER = registers.TX_STATUS_COUNTER
COUNTS = registers.counter_names("tx_engine")
QUEUE_COUNTS = registers.array_names("tx_engine")   # per queue: good frames, bytes, errored
EOP_BIT = flag_bit(TxDescFlags.EOP)
STATES = ("IDLE", "DFETCH", "DERR", "DESC", "PAYLOAD", "AFTER", "FLUSH", "FDONE")
MAX_QUEUES = 64
LEN_BITS = 17                     # payload reads up to roundup16(15 + 65535) bytes


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def done_layout(nqueues):
    """A frame done: its queue, its length (0 for an errored frame) and its status."""
    return data.StructLayout({"queue": queue_bits(nqueues), "len": 16, "status": TxStatus})


class TXEngine(wiring.Component):
    """The TX DMA engine.

    It takes rtl/nic/tx_queue_manager.py's jobs (a run of `count` consecutive descriptors of one
    ring) and answers on the queue manager's completion port. Jobs are cut by the queue manager
    without regard to frames, so a frame may span jobs: a job that ends inside a frame leaves the
    frame open, and the next job of that queue continues it (see "Open frames"). One job at a
    time: the job's descriptors are read from the ring into a descriptor buffer (max_batch x 16
    bytes), then they are processed in order, one descriptor at a time: its payload is read and
    every byte of it is appended to the current frame by a byte realigner (fragments of any length
    and any byte alignment are packed back to back into full beats; only the last beat of a frame
    is partial). No overlap between jobs; the payload reads of a job are issued ahead (see "Read
    issue").

    Descriptor
    ----------
    rtl/contract/formats.py TX_DESC (16 bytes, little-endian: addr, len, flags with
    TxDescFlags.EOP: the last descriptor of a frame, reserved: ignored). A frame is the run of
    descriptors up to and including one with EOP (scatter-gather).

    DMA reads
    ---------
    Port `rd` (rtl/nic/dma_port.py). B = data_width // 8 bytes per beat.

    rd.req
        Request stream {addr (64), len (13), desc}: read len bytes at addr; desc is 1 for a
        descriptor fetch, 0 for a payload read (for the bus analyzer). The address is 16-byte
        aligned, the length a multiple of 16 in 16..max_read, and a request never crosses a 4 KiB
        boundary: the core splits every read itself, each request being min(bytes left, the MRRS
        in use, bytes to the 4 KiB boundary). The MRRS in use is input `mrrs` (bytes, what the
        link negotiated; reset value max_read), taken as max_read when above it, a cycle after it
        changes. rd.req.valid and .payload are functions of registers only (a stable stream).
    rd.cpl
        Completion stream {data (W), last, err}: the completions come back in request order, each
        request as len*8/W beats, the first byte of the request in byte lane 0 (lane i is
        data[8*i:8*i+8]); last marks the last beat of a request and err (with last) that the
        request failed: the data of that request is garbage. The core relies on the beat count (it
        counts beats, not requests; err without last is ignored); rd.cpl.ready depends
        combinationally on tx.ready (while payload beats are being packed).

    Processing of a job
    -------------------
    Queue q, index i, count c; c == 0 is taken and ignored.

    1. Descriptor fetch: c*16 bytes at base[q] + i*16 (split as above; counted in desc_reads). If
       queue q has no base (base_bad[q]: its last base write was refused), no request is made
       and the job fails at once as below. If any of these requests fails, the job's
       descriptors are unknown: the whole job completes at
       once with cpl (q, c), err_desc_read += 1, and the queue's frame (the one open before this
       job, or a new one) is open with error DESC_READ (unless it already has an error): every
       descriptor of the queue up to the next EOP seen is skipped with it. So a failed fetch never
       lets the tail of a frame go out as a frame of its own.
    2. For each descriptor k = 0..c-1 (address A, length L, EOP), when the current frame has no
       error yet, in this order of checks::

           L == 0                               -> frame error DESC_LEN0
           L > max_frame                        -> frame error DESC_LEN
           frame length so far + L > max_frame  -> frame error FRAME_LEN

       otherwise the payload is read: roundup16((A mod 16) + L) bytes from A rounded down to 16
       (split as above; counted in data_reads), and bytes A..A+L-1 are appended to the frame. If
       any request of that read fails: frame error READ (the bytes already handed on, garbage
       included, belong to a frame that ends with tx.p.error).
       A descriptor of a frame that already has an error is skipped (its bytes are not appended),
       but still belongs to the frame (up to its EOP) and is completed with it. Payload reads run
       ahead (see "Read issue"): a descriptor after a READ error in the same job is still read (its
       data is discarded); one after a length error, or in a frame that had an error when the job
       started, is not.
    3. The frame ends at a descriptor with EOP. If the job's last descriptor has no EOP, the job's
       descriptors of the frame are completed (cpl (q, n), one cycle after the last one was
       processed; no done record) and the engine goes idle with the frame open.

    Ending a frame: the realigner's remaining bytes are output as the last beat (last 1, keep the
    remaining bytes from lane 0; for a frame with an error, error 1, and keep may be 0 when no byte
    of it was output). When that beat has been taken (tx.valid & tx.ready, cycle t), in cycle t+1
    (for one cycle each): a completion cpl (queue q, count = the frame's descriptors of this job)
    and a done record (queue q, len = the frame's length for a good frame, 0 for an errored one,
    status) (cpl.valid only if the frame has descriptors in this job not completed yet); the
    counters are updated (a good frame: frames += 1, bytes += its length; an errored one: the
    counter of its status, the first error detected in the frame, += 1; DESC_READ is counted per
    failed job instead).

    Open frames
    -----------
    While a frame is open between jobs (open_valid, open_queue) the engine takes a job of
    open_queue only (job.ready is 0 for another queue; the datapath also steers the scheduler to
    that queue), so frames of two queues never interleave. A queue that cannot continue its frame
    (the driver disabled it) is closed by `open_abort`: while idle with a frame open, open_abort
    ends the frame at once with error NO_EOP (unless it already has an error): the bytes already
    packed go out in a last beat with error, then the done record (no cpl: its descriptors were
    completed with their jobs). A driver rings doorbells at frame boundaries; one that posts the
    head of a frame and not its tail holds the engine on its queue until it posts the rest or
    disables the queue.

    Read issue
    ----------
    Once a job's descriptors are in, an issuer walks them in order and issues every payload read
    back to back (as many requests in flight as the DMA port takes), tracking the length checks of
    step 2 itself, while the packer consumes the completions in the same order; so the host memory
    latency is paid about once per job, not once per descriptor. A flag per descriptor tells the
    packer which were read. The next job's descriptor fetch still waits for the job's end (not
    overlapped).

    Ports
    -----
    q: max(1, ceil(log2(nqueues))) bits; W = data_width.

    base_valid, base_queue, base_addr (64) : In
        Ring base address of a queue (config write), 16-byte aligned; a queue number >= nqueues
        is ignored. A base with bits 3..0 not 0 is refused: the queue's base is not changed,
        base_bad[q] is set and err_base += 1 (at the edge); an aligned base clears base_bad[q].
        Change it only while the queue has no job in the engine.
    base_bad : Out, nqueues bits (registers)
        Bit q: queue q has no base (see above; 0 after reset). The datapath does not schedule
        such a queue; a job of it taken anyway (its base rewritten under a live queue) makes no
        read: it fails as a failed descriptor fetch (DESC_READ, err_desc_read).
    job : In(stream of tx_queue_manager.job_layout)
        The jobs of TXQueueManager: queue, index (12), count (bit length of max_batch; count must
        be <= max_batch). job.ready is 1 in the idle state only (a job is taken in the cycle the
        engine is idle), and then only if no frame is open or job.p.queue is open_queue, and not
        while an open_abort is being taken.
    idle : Out
        The engine is in its idle state (from a register).
    open_valid, open_queue : Out (registers)
        A frame of open_queue is open between jobs.
    open_abort : In
        End the open frame (see "Open frames"); ignored unless open_valid and idle.
    rd : Out(dma_port.read_signature(W))
        The DMA read port above.
    tx : Out(stream of frame_fifo.beat_layout(W/8): data (W), keep (W/8), last, error)
        Frame output, to FrameFIFO's sink `s`: a registered stream; every beat of a frame but the
        last is full.
    cpl : Out(stream of tx_queue_manager.cpl_layout: queue, count (13); always_ready)
        To TXQueueManager's completion port.
    done : Out(stream of done_layout: queue, len (16), status (3); always_ready)
        One per frame. status: rtl/contract/formats.py TxStatus (OK, DESC_LEN0, DESC_LEN,
        FRAME_LEN, READ, NO_EOP, DESC_READ).
    desc_rd : Out
        A descriptor read request is taken by the DMA read port this cycle (for the bus
        analyzer's doorbell-to-descriptor-read latency).
    frames, bytes, desc_reads, data_reads, err_desc_len0, err_desc_len, err_frame_len, err_read,
    err_no_eop, err_desc_read, err_base : Out, 32 bits each (wrapping)
        Good frames and their bytes, DMA read requests for descriptors / payload, errored frames
        by cause (err_desc_read: jobs), refused base writes; the names are
        rtl/contract/registers.py's (COUNTS,
        QUEUE_COUNTS, STATUS_COUNTER).
    q_frames, q_bytes, q_errors : Out, nqueues x 32 bits
        Good frames and their bytes per queue (ethtool -S tx_queue_<i>_packets/_bytes), and
        errored frames per queue (every done record with a status other than OK; _errors); an
        ArrayLayout, flat in Verilog: queue i at bits 32i..
    q_last_error : Out, nqueues x TxStatus
        Per queue, the status of its latest errored done record (OK: none yet).
    """

    def __init__(self, data_width=128, nqueues=4, max_read=512, max_frame=9216, max_batch=8):
        if data_width not in (64, 128) or not _is_int(data_width):
            raise ValueError(f"TXEngine: data_width={data_width!r} must be 64 or 128")
        if not _is_int(nqueues) or not 1 <= nqueues <= MAX_QUEUES:
            raise ValueError(f"TXEngine: nqueues={nqueues!r} must be an integer "
                             f"1..{MAX_QUEUES}")
        if not _is_int(max_read) or not 16 <= max_read <= 4096 or max_read % 16:
            raise ValueError(f"TXEngine: max_read={max_read!r} must be a multiple of 16 in "
                             f"16..4096")
        if not _is_int(max_frame) or not 1 <= max_frame <= 65535:
            raise ValueError(f"TXEngine: max_frame={max_frame!r} must be an integer 1..65535")
        if not _is_int(max_batch) or not 1 <= max_batch <= 256:
            raise ValueError(f"TXEngine: max_batch={max_batch!r} must be an integer 1..256")
        self.data_width = data_width
        self.nqueues = nqueues
        self.max_read = max_read
        self.max_frame = max_frame
        self.max_batch = max_batch
        self.qbits = qbits = queue_bits(nqueues)
        self.cbits = max_batch.bit_length()
        B = data_width // 8
        super().__init__({
            "mrrs":         In(13, init=max_read),
            "base_valid":   In(1),
            "base_queue":   In(qbits),
            "base_addr":    In(64),
            "job":          In(stream.Signature(job_layout(nqueues, max_batch))),
            "idle":         Out(1),
            "open_valid":   Out(1),
            "open_queue":   Out(qbits),
            "open_abort":   In(1),
            "rd":           Out(read_signature(data_width)),
            "tx":           Out(stream.Signature(beat_layout(B))),
            "cpl":          Out(stream.Signature(cpl_layout(nqueues), always_ready=True)),
            "done":         Out(stream.Signature(done_layout(nqueues), always_ready=True)),
            "desc_rd":      Out(1),
            "base_bad":     Out(nqueues),
            **{s.name: Out(s.width) for s in registers.CORES["tx_engine"].counters},
            **{s.name: Out(data.ArrayLayout(s.width, nqueues))
               for s in registers.CORES["tx_engine"].arrays},
            "q_last_error": Out(data.ArrayLayout(TxStatus, nqueues)),
        })

    def elaborate(self, platform):
        m = Module()
        W = self.data_width
        B = W // 8
        n, qbits, cbits = self.nqueues, self.qbits, self.cbits

        def byte_mask(count, nbytes):
            """nbytes*8 bits: the bytes below `count` all ones."""
            return Cat(Mux(count > j, Const(0xFF, 8), Const(0, 8)) for j in range(nbytes))

        # -- ring base addresses -----------------------------------------------------------------
        # A base that is not 16-byte aligned is refused: the queue has none (base_bad) and its
        # jobs make no read.
        bases = [Signal(60, name=f"q{i}_base") for i in range(n)]    # in units of 16 bytes
        base_misaligned = Signal()
        m.d.comb += base_misaligned.eq(self.base_addr[:4] != 0)
        with m.If(self.base_valid):
            for i in range(n):
                with m.If(self.base_queue == i):
                    m.d.sync += self.base_bad[i].eq(base_misaligned)
                    with m.If(~base_misaligned):
                        m.d.sync += bases[i].eq(self.base_addr[4:])
            in_range = Const(1) if n == 2**qbits else self.base_queue < n
            with m.If(base_misaligned & in_range):
                m.d.sync += self.err_base.eq(self.err_base + 1)
        job_base = Signal(60)
        job_bad = Signal()
        for i in range(n):
            with m.If(self.job.p.queue == i):
                m.d.comb += [job_base.eq(bases[i]), job_bad.eq(self.base_bad[i])]

        # -- job registers -----------------------------------------------------------------------
        queue = Signal(qbits)
        count = Signal(cbits)
        di = Signal(cbits)                       # the descriptor being processed
        cnt_m1 = Signal(cbits)                   # count - 1, set with count
        last_desc = Signal()
        m.d.comb += last_desc.eq(di == cnt_m1)

        # -- descriptor buffer -------------------------------------------------------------------
        m.submodules.descs = descs = memory.Memory(shape=TX_DESC, depth=self.max_batch,
                                                   init=[])
        dwr = descs.write_port()
        # Both reads are synchronous, addressed with the next value of their index (the data is
        # always the current index's descriptor, one written in the cycle before included): the
        # LUT RAM's read ends at a register, not at the length checks.
        di_next = Signal(cbits)
        di_step = Signal()                       # di_next is di + 1
        job_take = Signal()                      # a job starts: di_next and ri_next 0
        m.d.comb += di_next.eq(di)
        m.d.sync += di.eq(di_next)
        drd = descs.read_port(domain="sync", transparent_for=[dwr])
        d_addr = Signal(64)
        d_len = Signal(16)
        d_eop = Signal()
        m.d.comb += [drd.addr.eq(di_next), d_addr.eq(drd.data.addr), d_len.eq(drd.data.len),
                     d_eop.eq(drd.data.flags[EOP_BIT])]

        # -- request issuer: splits a read of rq_rem bytes at rq_addr ----------------------------
        rq_addr = Signal(64)
        rq_rem = Signal(LEN_BITS)
        rq_busy = Signal()                       # rq_rem != 0, a register
        rq_desc = Signal()                       # 1: descriptor reads, 0: payload reads
        to_4k = Signal(13, init=4096)            # 4096 - rq_addr[0:12], kept with rq_addr
        rq_len = Signal(13)
        # The MRRS in use (mrrs, at most max_read), registered: a setting, not on the split's
        # path.
        rq_max = Signal(13, init=self.max_read)
        rq_addr_up = Signal(52)
        m.d.comb += rq_addr_up.eq(rq_addr[12:] + 1)
        m.d.sync += rq_max.eq(Mux((self.mrrs >= 16) & (self.mrrs < self.max_read),
                                  self.mrrs & ~15, self.max_read))
        # rq_len = min(rq_rem, rq_max, to_4k) from the three compares side by side (not a
        # compare of the first min).
        rem_lt_max = Signal()
        rem_lt_4k = Signal()
        max_lt_4k = Signal()
        to_4k_taken = Signal()                   # the read ends at the 4 KiB boundary
        # rq_rem's differences give the compares (their signs) and its next values: no sum
        # after a compare's mux.
        d_max = Signal(signed(LEN_BITS + 1))
        d_4k = Signal(signed(LEN_BITS + 1))
        m.d.comb += [
            d_max.eq(rq_rem - rq_max),
            d_4k.eq(rq_rem - to_4k),
            rem_lt_max.eq(d_max[-1]),
            rem_lt_4k.eq(d_4k[-1]),
            max_lt_4k.eq(rq_max < to_4k),
            to_4k_taken.eq(Mux(rem_lt_max, ~rem_lt_4k, ~max_lt_4k)),
            rq_len.eq(Mux(rem_lt_max, Mux(rem_lt_4k, rq_rem, to_4k),
                          Mux(max_lt_4k, rq_max, to_4k))),
            self.rd.req.valid.eq(rq_busy),
            self.rd.req.p.addr.eq(rq_addr),
            self.rd.req.p.len.eq(rq_len),
            self.rd.req.p.desc.eq(rq_desc),
        ]
        m.d.comb += self.desc_rd.eq(self.rd.req.valid & self.rd.req.ready & rq_desc)
        # The state after the read, per length taken, from registers side by side (not a sum
        # of rq_len, which is a mux of the compares): rq_rem leaves nothing; rq_max moves the
        # address and both distances by rq_max; to_4k ends on the boundary (low address bits
        # 0, to_4k 4096, as to_4k = 4096 - rq_addr[0:12]).
        take_rem = Signal()
        take_max = Signal()
        m.d.comb += [take_rem.eq(rem_lt_max & rem_lt_4k), take_max.eq(~rem_lt_max & max_lt_4k)]
        lo_rem, lo_max = rq_addr[:12] + rq_rem, rq_addr[:12] + rq_max
        with m.If(self.rd.req.valid & self.rd.req.ready):
            # A read never crosses 4 KiB: the address moves in its low 12 bits, and its upper
            # bits step by one (a sum of registers, ready beside the split) when it reaches the
            # boundary.
            m.d.sync += [rq_addr.eq(Cat(Mux(take_rem, lo_rem[:12], Mux(take_max, lo_max[:12], 0)),
                                        Mux(to_4k_taken, rq_addr_up, rq_addr[12:]))),
                         to_4k.eq(Mux(take_rem, to_4k - rq_rem,
                                      Mux(take_max, to_4k - rq_max, 4096))),
                         rq_rem.eq(Mux(take_rem, 0, Mux(take_max, d_max[:LEN_BITS],
                                                        d_4k[:LEN_BITS]))),
                         rq_busy.eq(~take_rem & Mux(take_max, d_max != 0, d_4k != 0))]
            with m.If(rq_desc):
                m.d.sync += self.desc_reads.eq(self.desc_reads + 1)
            with m.Else():
                m.d.sync += self.data_reads.eq(self.data_reads + 1)

        # -- read issuer: the job's payload reads, ahead of the packer (see "Read issue") --------
        irp = descs.read_port(domain="sync", transparent_for=[dwr])
        ri = Signal(cbits + 1)                   # the next descriptor to issue
        r_run = Signal()                         # issuing this job's payload reads
        r_skip = Signal()                        # its frame has a known error: no more reads
        r_room = Signal(16)                      # max_frame - the frame's length so far
        issued = Signal(self.max_batch)          # descriptor k's payload was read
        i_addr = Signal(64)
        i_len = Signal(16)
        i_err = Signal()
        ri_next = Signal(cbits + 1)
        ri_step = Signal()                       # ri_next is ri + 1
        m.d.comb += ri_next.eq(ri)
        m.d.sync += ri.eq(ri_next)
        # The length checks of step 2 as one compare with what the frame has left (a length
        # over max_frame is over that too).
        m.d.comb += [
            irp.addr.eq(ri_next), i_addr.eq(irp.data.addr),
            i_len.eq(irp.data.len),
            i_err.eq(r_skip | (i_len == 0) | (i_len > r_room)),
        ]
        with m.If(r_run & ~rq_busy):
            with m.If(ri == count):
                m.d.sync += r_run.eq(0)
            with m.Else():
                m.d.comb += [ri_next.eq(ri + 1), ri_step.eq(1)]
                with m.If(i_err):
                    m.d.sync += r_skip.eq(1)
                with m.Else():
                    m.d.sync += [
                        r_room.eq(r_room - i_len), issued.eq(issued | (1 << ri)),
                        rq_addr.eq(Cat(Const(0, 4), i_addr[4:])), rq_desc.eq(0),
                        to_4k.eq(4096 - Cat(Const(0, 4), i_addr[4:12])),
                        rq_rem.eq(((i_addr[0:4] + i_len + 15) >> 4) << 4), rq_busy.eq(1),
                    ]
                with m.If(irp.data.flags[EOP_BIT]):   # EOP: the next frame starts clean
                    m.d.sync += [r_skip.eq(0), r_room.eq(self.max_frame)]

        # The issuer has decided about descriptor di (ri > di), a register.
        d_ready = Signal()
        # Chosen among compares of ri and di (not a compare of the next values' muxes); in
        # DERR (di_next count - 1) the engine goes idle, where d_ready is not looked at.
        m.d.sync += d_ready.eq(~job_take & Mux(di_step, Mux(ri_step, ri > di, ri > di + 1),
                                               Mux(ri_step, ri >= di, ri > di)))

        # -- completion consumer -----------------------------------------------------------------
        cpl_rem = Signal(LEN_BITS)               # beats still to come for the current read
        rd_err = Signal()                        # a request of the current read failed
        beat = Signal()
        final = Signal()                         # the last beat of the current read
        err_now = Signal()
        m.d.comb += [
            beat.eq(self.rd.cpl.valid & self.rd.cpl.ready),
            final.eq(beat & (cpl_rem == 1)),
            err_now.eq(rd_err | (self.rd.cpl.p.last & self.rd.cpl.p.err)),
        ]
        with m.If(beat):
            m.d.sync += [cpl_rem.eq(cpl_rem - 1), rd_err.eq(err_now)]

        # -- frame state -------------------------------------------------------------------------
        status = Signal(TxStatus)
        frame_len = Signal(16)
        f_room = Signal(16, init=self.max_frame)  # max_frame - frame_len
        uncpl = Signal(13)                       # descriptors processed, not completed yet
        cur_eop = Signal()
        append = Signal()                        # the payload being consumed is packed

        # -- output register ---------------------------------------------------------------------
        out_free = Signal()
        m.d.comb += out_free.eq(~self.tx.valid | self.tx.ready)
        with m.If(self.tx.valid & self.tx.ready):
            m.d.sync += self.tx.valid.eq(0)

        # -- realigner ---------------------------------------------------------------------------
        # The read stream of a descriptor starts at A rounded down to 16; the wanted bytes are
        # stream bytes [off, end). The beat in hand covers stream bytes [pos, pos + B), kept as
        # the distances from pos to off and to end (0 once passed). The beat's first wanted lane
        # `lo` and wanted byte count `nb` are registers, set with the distances from their next
        # values, so a beat's packing starts from flip-flops; the next beat's lanes are compares
        # of the distances with B and 2B (no subtraction first: B is a power of two).
        acc = Signal(W)                          # bytes of the frame not yet output, lanes 0..
        fill = Signal(range(B + 1))              # .. fill-1 (1..B between beats of a frame)
        d_off = Signal(4)                        # max(off - pos, 0)
        d_end = Signal(LEN_BITS)                 # max(end - pos, 0)
        lo = Signal(range(B + 1))
        nb = Signal(range(B + 1))
        ins = Signal(W)
        comb_ = Signal(2 * W)
        total = Signal(range(2 * B + 1))
        k = exact_log2(B)

        def clamp(d):
            """min(d, B) of a distance d >= 0."""
            return Mux(d >= B, B, d)

        def clamp_next(d):
            """min(max(d - B, 0), B), from compares of d."""
            return Mux(d <= B, 0, Mux(d >= 2 * B, B, d[:k]))

        def start_lanes(off, end):
            """The first beat of a descriptor's stream (pos 0)."""
            m.d.sync += [d_off.eq(off), d_end.eq(end), lo.eq(clamp(off)),
                         nb.eq(clamp(end) - clamp(off))]

        def next_lanes():
            """The next beat (pos + B)."""
            m.d.sync += [d_off.eq(Mux(d_off <= B, 0, d_off - B)),
                         d_end.eq(Mux(d_end <= B, 0, d_end - B)),
                         lo.eq(clamp_next(d_off)),
                         nb.eq(clamp_next(d_end) - clamp_next(d_off))]

        m.d.comb += [
            ins.eq((self.rd.cpl.p.data >> Cat(Const(0, 3), lo)) & byte_mask(nb, B)),
            comb_.eq(acc | (ins << Cat(Const(0, 3), fill))),
            total.eq(fill + nb),
        ]

        # -- control -----------------------------------------------------------------------------
        m.d.sync += [self.cpl.valid.eq(0), self.done.valid.eq(0)]
        lo_half = Signal(64)                     # data_width 64: first half of a descriptor
        bidx = Signal(cbits + 1)                 # descriptor fetch: beat number

        def complete(cnt):
            m.d.sync += [self.cpl.valid.eq(cnt != 0), self.cpl.p.queue.eq(queue),
                         self.cpl.p.count.eq(cnt), uncpl.eq(0)]

        m.d.comb += self.open_queue.eq(queue)

        state = Signal(range(len(STATES)))
        S = {name: i for i, name in enumerate(STATES)}

        def goto(name):
            m.d.sync += state.eq(S[name])

        # A state register and If/Elif rather than m.FSM/m.Switch: Yosys writes those as `case`
        # statements without a default, which Verilator -Wall flags (CASEINCOMPLETE).
        with m.If(state == S["IDLE"]):
            m.d.comb += self.idle.eq(1)
            with m.If(self.open_valid & self.open_abort):
                # The open frame ends here; di == count - 1 still holds, so FDONE returns to
                # IDLE.
                with m.If(status == TxStatus.OK):
                    m.d.sync += status.eq(TxStatus.NO_EOP)
                goto("FLUSH")
            with m.Else():
                m.d.comb += self.job.ready.eq(~self.open_valid | (self.job.p.queue == queue))
                with m.If(self.job.valid & self.job.ready & (self.job.p.count != 0)):
                    m.d.comb += [di_next.eq(0), ri_next.eq(0), job_take.eq(1)]
                    m.d.sync += [
                        queue.eq(self.job.p.queue), count.eq(self.job.p.count),
                        cnt_m1.eq(self.job.p.count - 1),
                        rq_addr.eq(Cat(Const(0, 4), job_base + self.job.p.index)),
                        to_4k.eq(4096 - Cat(Const(0, 4), (job_base + self.job.p.index)[:8])),
                        rq_rem.eq(Mux(job_bad, 0, self.job.p.count * RECORD_BYTES)),
                        rq_busy.eq(~job_bad),
                        rq_desc.eq(1),
                        cpl_rem.eq(self.job.p.count * (TX_DESC.size // W)), rd_err.eq(0),
                        bidx.eq(0),
                        issued.eq(0), r_run.eq(0),
                    ]
                    with m.If(~self.open_valid):
                        m.d.sync += [status.eq(TxStatus.OK), frame_len.eq(0),
                                     f_room.eq(self.max_frame)]
                    with m.If(job_bad):                 # no base: no read, the job fails
                        goto("DERR")
                    with m.Else():
                        goto("DFETCH")
        with m.Elif(state == S["DFETCH"]):
            m.d.comb += self.rd.cpl.ready.eq(1)
            with m.If(beat):
                m.d.sync += bidx.eq(bidx + 1)
                if W == 128:
                    m.d.comb += [dwr.addr.eq(bidx), dwr.data.eq(self.rd.cpl.p.data),
                                 dwr.en.eq(1)]
                else:
                    m.d.sync += lo_half.eq(self.rd.cpl.p.data)
                    m.d.comb += [dwr.addr.eq(bidx[1:]),
                                 dwr.data.eq(Cat(lo_half, self.rd.cpl.p.data)),
                                 dwr.en.eq(bidx[0])]
            with m.If(final):
                with m.If(err_now):
                    goto("DERR")
                with m.Else():
                    # The issuer starts from the frame's state at the job's start.
                    m.d.sync += [r_run.eq(1), r_skip.eq(status != TxStatus.OK),
                                 r_room.eq(f_room)]
                    goto("DESC")
        with m.Elif(state == S["DERR"]):
            complete(count)
            m.d.sync += [self.err_desc_read.eq(self.err_desc_read + 1), self.open_valid.eq(1)]
            m.d.comb += di_next.eq(cnt_m1)
            with m.If(status == TxStatus.OK):
                m.d.sync += status.eq(TxStatus.DESC_READ)
            goto("IDLE")
        with m.Elif(state == S["DESC"]):
            # Only once the issuer has decided about this descriptor.
            with m.If(d_ready):
                m.d.sync += [uncpl.eq(uncpl + 1), cur_eop.eq(d_eop)]
                sum_len = Signal(LEN_BITS)
                rlen = Signal(LEN_BITS)              # roundup16((A mod 16) + L), in 16s
                m.d.comb += [sum_len.eq(frame_len + d_len),
                             rlen.eq((d_addr[0:4] + d_len + 15) >> 4)]
                goto("AFTER")
                with m.If(status == TxStatus.OK):
                    with m.If(d_len == 0):
                        m.d.sync += status.eq(TxStatus.DESC_LEN0)
                    with m.Elif(d_len > self.max_frame):
                        m.d.sync += status.eq(TxStatus.DESC_LEN)
                    with m.Elif(d_len > f_room):
                        m.d.sync += status.eq(TxStatus.FRAME_LEN)
                    with m.Else():
                        m.d.sync += [frame_len.eq(sum_len), f_room.eq(f_room - d_len)]
                # The issuer read it (it mirrors the length checks): consume its completions,
                # packing them only if the frame had no error before it (else after a READ error).
                with m.If(issued.bit_select(di, 1)):
                    m.d.sync += [
                        cpl_rem.eq(rlen << (128 // W - 1)), rd_err.eq(0),
                        append.eq(status == TxStatus.OK),
                    ]
                    start_lanes(d_addr[0:4], (d_addr[0:4] + d_len)[:LEN_BITS])
                    goto("PAYLOAD")
        with m.Elif(state == S["PAYLOAD"]):
            m.d.comb += self.rd.cpl.ready.eq(Mux(append, out_free, 1))
            with m.If(beat & append):
                next_lanes()
                with m.If(total > B):
                    m.d.sync += [self.tx.valid.eq(1), self.tx.p.data.eq(comb_[:W]),
                                 self.tx.p.keep.eq((1 << B) - 1), self.tx.p.last.eq(0),
                                 self.tx.p.error.eq(0),
                                 acc.eq(comb_[W:]), fill.eq(total - B)]
                with m.Else():
                    m.d.sync += [acc.eq(comb_[:W]), fill.eq(total)]
            with m.If(final):
                with m.If(err_now):
                    m.d.sync += status.eq(TxStatus.READ)
                goto("AFTER")
        with m.Elif(state == S["AFTER"]):
            with m.If(cur_eop):
                goto("FLUSH")
            with m.Elif(last_desc):                      # the job ends inside the frame
                complete(uncpl)
                m.d.sync += self.open_valid.eq(1)
                goto("IDLE")
            with m.Else():
                m.d.comb += [di_next.eq(di + 1), di_step.eq(1)]
                goto("DESC")
        with m.Elif(state == S["FLUSH"]):
            with m.If(out_free):
                keep = Signal(B)
                m.d.comb += keep.eq(Cat(fill > j for j in range(B)))
                m.d.sync += [self.tx.valid.eq(1), self.tx.p.data.eq(acc),
                             self.tx.p.keep.eq(keep), self.tx.p.last.eq(1),
                             self.tx.p.error.eq(status != TxStatus.OK), acc.eq(0), fill.eq(0)]
                goto("FDONE")
        with m.Elif(state == S["FDONE"]):
            with m.If(self.tx.valid & self.tx.ready):
                complete(uncpl)
                m.d.sync += [self.done.valid.eq(1), self.done.p.queue.eq(queue),
                             self.done.p.status.eq(status),
                             self.done.p.len.eq(Mux(status == TxStatus.OK, frame_len, 0)),
                             self.open_valid.eq(0)]
                for i in range(n):
                    with m.If(queue == i):
                        with m.If(status == TxStatus.OK):
                            m.d.sync += [self.q_frames[i].eq(self.q_frames[i] + 1),
                                         self.q_bytes[i].eq(self.q_bytes[i] + frame_len)]
                        with m.Else():
                            m.d.sync += [self.q_errors[i].eq(self.q_errors[i] + 1),
                                         self.q_last_error[i].eq(status)]
                with m.If(status == TxStatus.OK):
                    m.d.sync += [self.frames.eq(self.frames + 1),
                                 self.bytes.eq(self.bytes + frame_len)]
                for st, name in STATUS_COUNTER.items():
                    if st != TxStatus.DESC_READ:     # counted per failed job, in DERR
                        c = getattr(self, name)
                        m.d.sync += c.eq(c + (status == st))
                m.d.sync += [status.eq(TxStatus.OK), frame_len.eq(0), f_room.eq(self.max_frame)]
                with m.If(last_desc):
                    goto("IDLE")
                with m.Else():
                    m.d.comb += [di_next.eq(di + 1), di_step.eq(1)]
                    goto("DESC")
        return m
