# SPDX-License-Identifier: BSD-2-Clause
#
# nic_datapath.py: the NIC's whole datapath between the PCIe DMA ports and the Ethernet MAC:
# TX queues, scheduler, TX DMA engine, TX/RX frame FIFOs, RX DMA engine, DMA arbitration and
# interrupt coalescing, with every sub-core's configuration and counters on a flat port list.
#
# Interfaces (flat, Verilog-style): every exposed sub-core port as `<prefix><name>` (EXPOSED)
# and this core's own (OWN_PORTS); mac_tx_*, mac_rx_* (frames to and from the MAC); rd_*, wr_*
# (the DMA read and write ports of rtl/nic/dma_port.py, flat); irq_valid, irq_ready (a bit per
# interrupt vector: the TX queue groups, then RX).
# Parameters: data_width (W: 64, 128), ntxq (1..64), ntxirq (TX vectors, 1..min(ntxq, 8)),
# max_read (MRRS), max_payload (MPS), max_frame, max_batch, tx_fifo_depth, rx_fifo_depth,
# rd_depth. The wiring, the port mapping rule, the parameters' ranges and defaults:
# NICDatapath's docstring.

from amaranth import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.hdl import Shape
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from . import frame_fifo, irq_coalescer, rx_engine, tx_engine, tx_queue_manager
from ..contract.coalesce import CONFIG
from ..contract.formats import TX_WB, TxStatus
from .dma_port import rd_cpl_layout, read_signature, write_signature
from .dma_read_arbiter import DMAReadArbiter
from .skid_buffer import SkidBuffer
from .flat_ports import connect_flat, flat_members
from .frame_fifo import FrameFIFO
from .irq_coalescer import IRQCoalescer
from .rx_engine import RXEngine
from .tx_engine import TXEngine
from .tx_irq_order import TXIrqOrder
from .tx_queue_manager import TXQueueManager
from .tx_scheduler import MAX_QUEUES, TXScheduler

_FIFO = (["max_len", "min_len", "enable"],
         list(frame_fifo.COUNTS) + ["level", "frames_queued"])
_IRQ = (["enable"] + list(CONFIG), list(irq_coalescer.COUNTS) + ["pending"])

EXPOSED = {
    "tx_sched_": ("sched", ["prio", "weight", "mode"], ["grants"]),
    "txq_":      ("txq", ["cfg_valid", "cfg_queue", "cfg_size_log2", "cfg_enable", "cfg_limit",
                          "db_valid", "db_queue", "db_index"],
                  ["active", "drained", "db_range_err"] + list(tx_queue_manager.COUNTS)),
    "txe_":      ("txe", ["base_valid", "base_queue", "base_addr"],
                  list(tx_engine.COUNTS) + ["base_bad"] + list(tx_engine.QUEUE_COUNTS)),
    "txfifo_":   ("txfifo",) + _FIFO,
    "rxfifo_":   ("rxfifo",) + _FIFO,
    "rxe_":      ("rxe", ["ring_base", "ring_size_log2", "cpl_base", "enable", "db_valid",
                          "db_index"], list(rx_engine.COUNTS) + ["cons", "base_bad"]),
    "txirq_":    ("txirq",) + _IRQ,
    "rxirq_":    ("rxirq",) + _IRQ,
    "rdarb_":    ("rdarb", [], ["outstanding", "requests"]),
}
# This core's own configuration/status ports, named like the exposed ones (prefix -> (in names,
# out names)): the TX consumer-index writeback addresses (and the refused ones), the writebacks
# taken and the consumer indexes.
OWN_PORTS = {
    "txq_": (["wb_addr_valid", "wb_addr_queue", "wb_addr"],
             ["wb_writes", "cons", "wb_bad", "err_wb_addr"]),
    "txirq_": ([], ["vec_irqs", "wb_held"]),
}
MAX_TXIRQ = 8


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class NICDatapath(wiring.Component):
    """The NIC datapath: one instance of each core, wired as follows.

    TX
        TXScheduler (tx_sched) <-> TXQueueManager (txq): active, grant_valid/_queue/_ready (plain
        ports, steered below). Streams, by wiring.connect: TXQueueManager job -> TXEngine (txe)
        job; TXEngine cpl -> TXQueueManager cpl.
        Frames may span jobs (TXEngine "Open frames"): a grant is taken only while the engine is
        idle and no job waits, so each job's queue is chosen knowing whether a frame is open; while
        a frame of queue q is open, the scheduler sees only q active and only a grant of q is taken
        (a frame's descriptors are sent back to back, whatever the policy: a continuation job uses
        a grant and, in WRR, a credit); when q is disabled with its frame open, the engine aborts
        the frame (NO_EOP, counted in txe_err_no_eop), and txq_drained[q] waits for that.
        A queue without a ring base (txe_base_bad) or writeback address (txq_wb_bad: their
        last write was refused, not 16-byte aligned) is not active for the scheduler: it is
        never granted, so it makes no DMA (its descriptors wait; it drains when disabled).
        TXEngine tx -> SkidBuffer (txskid) -> FrameFIFO (txfifo, backpressure=True) s (frames
        with error are dropped there, counted in txfifo_drop_error); FrameFIFO m -> mac_tx_*
        (flat, no len).
    RX
        mac_rx_* -> FrameFIFO (rxfifo, drop mode: its sink is always_ready, mac_rx has no ready) s;
        FrameFIFO m -> RXEngine (rxe) s.
    DMA read
        DMAReadArbiter (rtl/nic/dma_read_arbiter.py) with client s[0] = TXEngine rd, s[1] =
        RXEngine rd (descriptor prefetch): one read port, flat as rd_*.
    DMA write
        One write port wr_*, shared by the RXEngine's writes (wr: frame data, completion records)
        and the TX consumer-index writebacks of TXQueueManager (wb): each writeback of queue q is
        one 16-byte write at the queue's writeback address (txq_wb_addr_* below), a TX_WB record
        (rtl/contract/formats.py): cons = wb.p.cons (12 bits, zero-extended), errors = the low 16
        bits of the queue's TXEngine q_errors, last_error = its q_last_error (as they are when
        the writeback is presented), the rest 0 (1 beat at W=128, 2 at W=64). A writeback of a
        queue without a writeback address (txq_wb_bad: the address was rewritten, refused, under
        a live queue) is dropped: taken from the queue manager, nothing written. Arbitration at
        write granularity: when no write is in progress, the source presented (wr_valid) is RX
        or writeback, the one whose turn it is when both wait (turns alternate: after a write of
        one source completes, the other wins the next tie);
        from the cycle a source is first presented until its last beat is taken (wr_valid &
        wr_ready & wr_last) only that source is presented (also while it has no beat ready,
        wr_valid 0 between beats of an RX write), so wr_addr/wr_len/wr_first/data never change
        under wr_valid and writes never interleave.
    IRQ
        ntxirq + 1 IRQCoalescers, one per interrupt vector: TX vector g (0..ntxirq-1; TX queue
        group g = the TX queues q with q % ntxirq == g) has event = TXEngine done.valid with
        done.p.queue in group g (a TX frame of the group done, good or errored); vector ntxirq
        (rxirq) has event = RXEngine irq_event (a completion record taken by the DMA).
        irq_valid[v], irq_ready[v]. The txirq_ configuration ports (ethtool -C tx-*) set every TX
        vector's coalescer alike; each vector counts and times its own completions. The txirq_
        counters are the sums over the TX vectors (pending too); txirq_vec_irqs has the interrupts
        raised per TX vector. A TX frame's done pulse precedes the writeback of its consumer index
        (TXQueueManager: the cons is written back from 2 cycles after the completion, through the
        write arbiter), so the TX vectors' requests pass TXIrqOrder (rtl/nic/tx_irq_order.py):
        irq_valid[g] comes once the writebacks of the completions the coalescer's decision covers
        were taken by the write port (wr_valid & wr_ready on their last beat), the coalescers'
        irq_ready is 1 (decisions merged while one waits); txirq_wb_held counts the TX
        interrupts that waited. The RX vector's event is already a completion record taken by
        the write port. (The SoC then holds each MSI until the writes taken before it left on
        the PHY: litex_soc/pcie/msi_order.py.)

    Port mapping rule
    -----------------
    For a LiteX CSR wrapper: every port named `<prefix><name>` with a prefix below is port `<name>`
    of that sub-core, same direction and width (an ArrayLayout input is flattened to a plain
    vector, element i at bits i*w..): In ports are configuration (CSR storage; the ones named
    *_valid are write strobes: a one-cycle pulse, the CSR's write event, with their companion
    fields presented in the same cycle), Out ports are status and counters (CSR status, 32-bit
    counters wrap). The lists of exposed names are the class attribute EXPOSED (prefix ->
    (sub-core attribute, [in names], [out names])); all other ports of the sub-cores are wired
    internally as above.

    tx_sched_ : TXScheduler
        in: prio (3*ntxq), weight (8*ntxq), mode; out: grants.
    txq_ : TXQueueManager
        in: cfg_valid, cfg_queue, cfg_size_log2, cfg_enable, cfg_limit, db_valid, db_queue,
        db_index; out: active, drained, db_range_err and its counters (doorbells, jobs,
        descs_fetched, ...). Plus this core's writeback config/counter: txq_wb_addr_valid,
        txq_wb_addr_queue, txq_wb_addr (64) in: write strobe, queue number (>= ntxq ignored),
        16-byte aligned host address of the queue's consumer-index writeback; change it only
        while the queue is drained. An address with bits 3..0 not 0 is refused: the queue's
        address is not changed, txq_wb_bad (out, ntxq bits, registers) bit q is set and
        txq_err_wb_addr (out, 32) += 1; an aligned address clears the bit. txq_wb_writes out
        (32): writebacks taken by the DMA. txq_cons out (32 * ntxq): each queue's consumer index
        (queue i at bits 32i..), what
        its writeback carries; the reset path reads it, as a posted writeback can be lost.
    txe_ : TXEngine
        in: base_valid, base_queue, base_addr; out: its counters, base_bad (ntxq bits), and
        q_frames, q_bytes, q_errors (32 bits per queue, queue i at bits 32i..).
    txfifo_ : FrameFIFO (TX)
        in: max_len, min_len, enable; out: counters, level, frames_queued.
    rxfifo_ : FrameFIFO (RX)
        Same as txfifo_.
    rxe_ : RXEngine
        in: ring_base, ring_size_log2, cpl_base, enable, db_valid, db_index; out: its counters,
        cons, base_bad.
    txirq_, rxirq_ : IRQCoalescer
        in: enable, frames, usecs, abs_usecs, min_interval, tick_cycles; out: irqs, by_immediate,
        by_frames, by_usecs, by_abs, pending (txirq_: of every TX vector, see IRQ above). Plus
        txirq_vec_irqs out (32 * ntxirq): interrupts raised by TX vector g at bits 32g.. (this
        core's own port).
    rdarb_ : DMAReadArbiter
        out: outstanding, requests.

    Every configuration input resets to 0 (FIFOs disabled, max_len 0, queues disabled): software
    sets them up.

    Stream ports
    ------------
    W = data_width bits, B = W/8 byte lanes, lane i is data[8*i:8*i+8].

    mac_tx_valid, mac_tx_ready (in), mac_tx_data (W), mac_tx_keep (B), mac_tx_last
        Frames to the MAC (whole frames stored before their first beat leaves: no underrun).
    mac_rx_valid, mac_rx_data (W), mac_rx_keep (B), mac_rx_last, mac_rx_error : In
        Frames from the MAC (no ready: the RX FrameFIFO drops what it cannot keep, counted);
        mac_rx_error with mac_rx_last marks a bad frame (dropped).
    rd_req_valid, rd_req_ready (in), rd_req_addr (64), rd_req_len (13); rd_cpl_valid (in),
    rd_cpl_ready, rd_cpl_data (W, in), rd_cpl_last (in), rd_cpl_err (in)
        DMA read port: rtl/nic/dma_port.py's read_signature, flat (rtl/nic/flat_ports.py; 16-byte
        aligned, lengths multiples of 16 up to max_read, never across 4 KiB, completions in
        request order).
    wr_valid, wr_ready (in), wr_addr (64), wr_len (13), wr_data (W), wr_first, wr_last
        DMA write port: dma_port.py's write_signature, flat (ceil(wr_len*8/W) beats, addr/len
        valid on the wr_first beat, posted).
    irq_valid (ntxirq + 1), irq_ready (ntxirq + 1, in)
        Bit g < ntxirq: TX vector g (queue group g), bit ntxirq: RX. With ntxirq 1: bit 0 TX, bit
        1 RX.
    txq_in_flight (13 * ntxq), txe_desc_rd
        For the bus analyzer (no register): TX queue q's descriptors fetched and not yet
        completed (TXQueueManager in_flight), at bits 13q..; a TX descriptor read request taken
        this cycle (TXEngine desc_rd).

    Parameters
    ----------
    data_width
        W, 64 or 128.
    ntxq
        TX queues, 1..64.
    ntxirq
        TX interrupt vectors (TX queue groups), 1..min(ntxq, MAX_TXIRQ = 8) (1).
    max_read
        Largest DMA read in bytes (MRRS), multiple of 16, 16..4096 (512).
    max_payload
        Largest DMA write in bytes (MPS), power of two 16..4096 (256).
    max_frame
        Largest TX frame the engine builds, 1..65535 (9216).
    max_batch
        TX descriptors per fetch job, 1..256 (8).
    tx_fifo_depth, rx_fifo_depth
        FrameFIFO bytes, powers of two >= 2*B (32768: two 9216-byte frames and more).
    rd_depth
        DMA reads outstanding at most (DMAReadArbiter depth), power of two 2..1024 (16).
    """

    EXPOSED = EXPOSED

    def __init__(self, data_width=128, ntxq=4, max_read=512, max_payload=256, max_frame=9216,
                 max_batch=8, tx_fifo_depth=32768, rx_fifo_depth=32768, rd_depth=16,
                 ntxirq=1):
        if not _is_int(data_width) or data_width not in (64, 128):
            raise ValueError(f"NICDatapath: data_width={data_width!r} must be 64 or 128")
        if not _is_int(ntxq) or not 1 <= ntxq <= MAX_QUEUES:
            raise ValueError(f"NICDatapath: ntxq={ntxq!r} must be an integer 1..{MAX_QUEUES}")
        if not _is_int(ntxirq) or not 1 <= ntxirq <= min(ntxq, MAX_TXIRQ):
            raise ValueError(f"NICDatapath: ntxirq={ntxirq!r} must be an integer "
                             f"1..{min(ntxq, MAX_TXIRQ)} (at most ntxq and {MAX_TXIRQ})")
        B = data_width // 8
        for name, v in (("tx_fifo_depth", tx_fifo_depth), ("rx_fifo_depth", rx_fifo_depth)):
            if not _is_int(v) or v < 2 * B or v & (v - 1):
                raise ValueError(f"NICDatapath: {name}={v!r} must be a power of two >= {2 * B}")
        self.data_width = data_width
        self.ntxq = ntxq
        self.ntxirq = ntxirq
        self.qbits = qbits = max(1, ceil_log2(ntxq))
        # The sub-cores check their own parameters (ValueError).
        self.sched = TXScheduler(ntxq)
        self.txq = TXQueueManager(ntxq, max_batch=max_batch)
        self.txe = TXEngine(data_width=data_width, nqueues=ntxq, max_read=max_read,
                            max_frame=max_frame, max_batch=max_batch)
        self.txfifo = FrameFIFO(data_width=B, depth=tx_fifo_depth, backpressure=True)
        self.rxfifo = FrameFIFO(data_width=B, depth=rx_fifo_depth, backpressure=False)
        # A register slice between the RX FIFO and the engine: the engine's s.ready (from its
        # write register, from the DMA's wr.ready) stops there instead of steering the FIFO's
        # block RAM read.
        self.rxskid = SkidBuffer(frame_fifo.len_beat_layout(B))
        self.cplskid = SkidBuffer(rd_cpl_layout(data_width))
        self.txskid = SkidBuffer(frame_fifo.beat_layout(B))
        self.rxe = RXEngine(data_width=data_width, max_payload=max_payload, max_read=max_read)
        self.txirq = IRQCoalescer()         # TX vector 0; the others below
        self.txirq_more = [IRQCoalescer() for _ in range(ntxirq - 1)]
        self.rxirq = IRQCoalescer()
        self.rdarb = DMAReadArbiter(nports=2, data_width=data_width, depth=rd_depth)
        self.txorder = TXIrqOrder(ntxq, ntxirq)

        ports = {}
        for prefix, (attr, ins, outs) in EXPOSED.items():
            members = getattr(self, attr).signature.members
            for names, flow in ((ins, In), (outs, Out)):
                for name in names:
                    width = Shape.cast(members[name].shape).width
                    ports[prefix + name] = flow(unsigned(width))
        super().__init__({
            **ports,
            "txq_wb_addr_valid": In(1),
            "txq_wb_addr_queue": In(qbits),
            "txq_wb_addr":       In(64),
            "txq_wb_writes":     Out(32),
            "txq_cons":          Out(32 * ntxq),
            "txq_wb_bad":        Out(ntxq),
            "txq_err_wb_addr":   Out(32),
            "txirq_vec_irqs":    Out(32 * ntxirq),
            "txirq_wb_held":     Out(32),
            # The flat ports of the TX FIFO's source (no len), the RX FIFO's sink (no ready)
            # and the DMA ports.
            **flat_members(self.txfifo.m.signature, "mac_tx_", skip=["len"]),
            **flat_members(self.rxfifo.s.signature, "mac_rx_"),
            **flat_members(read_signature(data_width), "rd_"),
            **flat_members(write_signature(data_width), "wr_"),
            "irq_valid":     Out(ntxirq + 1),
            "irq_ready":     In(ntxirq + 1),
            "txq_in_flight": Out(tx_queue_manager.CNT_BITS * ntxq),
            "txe_desc_rd":   Out(1),
            # The MRRS and MPS the link negotiated (bytes); above max_read / max_payload they
            # are taken as those.
            "mrrs":          In(13, init=max_read),
            "mps":           In(13, init=max_payload),
        })

    def elaborate(self, platform):
        m = Module()
        W = self.data_width
        n = self.ntxq
        sched, txq, txe = self.sched, self.txq, self.txe
        txfifo, rxfifo, rxe = self.txfifo, self.rxfifo, self.rxe
        txirq, rxirq, arb = self.txirq, self.rxirq, self.rdarb
        for name in ("sched", "txq", "txe", "txfifo", "rxfifo", "rxskid", "rxe", "txirq",
                     "rxirq", "rdarb", "txorder", "cplskid", "txskid"):
            m.submodules[name] = getattr(self, name)
        txirqs = [txirq] + self.txirq_more
        for g, core in enumerate(self.txirq_more, 1):
            m.submodules[f"txirq{g}"] = core

        # -- the flat configuration/counter ports ------------------------------------------------
        for prefix, (attr, ins, outs) in EXPOSED.items():
            core = getattr(self, attr)
            cores = txirqs if attr == "txirq" else [core]
            for name in ins:
                m.d.comb += [c_.eq(getattr(self, prefix + name))
                             for c_ in (getattr(c, name) for c in cores)]
            for name in outs:
                if prefix + name != "txq_drained":                  # see below
                    outs_ = [getattr(c, name) for c in cores]
                    # A sum over the TX vectors is a register: its adders stay out of the CSR
                    # read path (the counters read a cycle late).
                    dom = m.d.comb if len(outs_) == 1 else m.d.sync
                    dom += getattr(self, prefix + name).eq(
                        outs_[0] if len(outs_) == 1 else sum(outs_))
        m.d.comb += self.txirq_vec_irqs.eq(Cat(c.irqs for c in txirqs))
        for i in range(n):                      # registered, as the sums above
            m.d.sync += self.txq_cons.word_select(i, 32).eq(
                ((txq.q_fetch[i] - txq.q_in_flight[i]) &
                 ((Const(1, tx_queue_manager.CNT_BITS) << txq.q_size_log2[i]) - 1))
                [:tx_queue_manager.POS_BITS])
        m.d.comb += [self.txq_in_flight.eq(Cat(txq.q_in_flight)),
                     self.txe_desc_rd.eq(txe.desc_rd)]
        m.d.comb += [self.txe.mrrs.eq(self.mrrs), self.rxe.mps.eq(self.mps)]

        # -- TX: scheduler, queue manager, engine, FIFO, MAC -------------------------------------
        # Frames may span jobs (TXEngine "Open frames"), so a job is created only when the engine
        # is idle with no job waiting (the next job's queue is decided once the engine knows
        # whether a frame is open), and while a frame of queue q is open the scheduler sees only
        # q active and only a grant of q is taken. A disabled queue's open frame is aborted.
        # The scheduler sees the active queues one cycle late (a register between the queue
        # manager and the engine's open frame and the scheduler's search): a grant made on a
        # stale view is refused (txq.grant_ready, may_take) and the search runs again.
        open_mask = Signal(n)
        may_take = Signal()
        sched_active = Signal(n)
        m.d.sync += sched_active.eq(txq.active & open_mask & ~txe.base_bad & ~self.txq_wb_bad)
        m.d.comb += [
            open_mask.eq(Mux(txe.open_valid, 1 << txe.open_queue, (1 << n) - 1)),
            may_take.eq(txe.idle & ~txq.job.valid &
                        (~txe.open_valid | (sched.grant_queue == txe.open_queue))),
            txe.open_abort.eq(txe.open_valid &
                              ~Array(txq.q_enable + [0] * (2**self.qbits - n))[txe.open_queue]),
            sched.active.eq(sched_active),
            txq.grant_valid.eq(sched.grant_valid & may_take),
            txq.grant_queue.eq(sched.grant_queue),
            sched.grant_ready.eq(txq.grant_ready & may_take),
            # A queue with a frame open in the engine is not drained until the frame ends.
            self.txq_drained.eq(txq.drained & ~Mux(txe.open_valid, open_mask, 0)),
        ]
        wiring.connect(m, txq.job, txe.job)
        wiring.connect(m, txe.cpl, txq.cpl)
        # The engine's frames through a register slice: the FIFO's room (pointer compares)
        # does not reach into the engine's handshakes.
        wiring.connect(m, txe.tx, self.txskid.s)
        wiring.connect(m, self.txskid.m, txfifo.s)
        connect_flat(m, txfifo.m, self, "mac_tx_", skip=["len"])

        # -- RX: MAC, FIFO, engine ---------------------------------------------------------------
        connect_flat(m, rxfifo.s, self, "mac_rx_")
        wiring.connect(m, rxfifo.m, self.rxskid.s)
        wiring.connect(m, self.rxskid.m, rxe.s)

        # -- DMA read: arbiter, client 0 TX engine, client 1 RX engine ---------------------------
        # The completions enter through a register slice: the engines' realigner and descriptor
        # checks start from flip-flops (and the arbiter's head), not from the completion
        # buffer's block RAM.
        wiring.connect(m, txe.rd, arb.s[0])
        wiring.connect(m, rxe.rd, arb.s[1])
        connect_flat(m, arb.rd.req, self, "rd_req_")
        connect_flat(m, self.cplskid.s, self, "rd_cpl_")
        wiring.connect(m, self.cplskid.m, arb.rd.cpl)

        # -- TX consumer-index writebacks as 16-byte writes --------------------------------------
        # An address that is not 16-byte aligned is refused: the queue has none (txq_wb_bad),
        # is not scheduled (above) and its writebacks are dropped (below).
        wb_bases = [Signal(60, name=f"wb_base{i}") for i in range(n)]   # in units of 16 bytes
        wb_misaligned = Signal()
        m.d.comb += wb_misaligned.eq(self.txq_wb_addr[:4] != 0)
        with m.If(self.txq_wb_addr_valid):
            for i in range(n):
                with m.If(self.txq_wb_addr_queue == i):
                    m.d.sync += self.txq_wb_bad[i].eq(wb_misaligned)
                    with m.If(~wb_misaligned):
                        m.d.sync += wb_bases[i].eq(self.txq_wb_addr[4:])
            in_range = Const(1) if n == 2**self.qbits else self.txq_wb_addr_queue < n
            with m.If(wb_misaligned & in_range):
                m.d.sync += self.txq_err_wb_addr.eq(self.txq_err_wb_addr + 1)
        wb_base = Signal(60)
        wb_bad = Signal()                        # the writeback's queue has no address
        for i in range(n):
            with m.If(txq.wb.p.queue == i):
                m.d.comb += [wb_base.eq(wb_bases[i]), wb_bad.eq(self.txq_wb_bad[i])]
        wb_beat = Signal()                       # W=64: the second beat of the writeback
        wb_first = Signal()
        wb_last = Signal()
        wb_errors = Signal(16)                   # the queue's TXEngine q_errors, q_last_error
        wb_last_error = Signal(TxStatus)
        for i in range(n):
            with m.If(txq.wb.p.queue == i):
                m.d.comb += [wb_errors.eq(txe.q_errors[i][:16]),
                             wb_last_error.eq(txe.q_last_error[i])]
        wb_rec = Signal(TX_WB)                   # reserved: 0
        wb_data = Signal(W)
        wb_beats = [wb_rec.as_value()[i:i + W] for i in range(0, TX_WB.size, W)]
        m.d.comb += [wb_rec.cons.eq(txq.wb.p.cons), wb_rec.errors.eq(wb_errors),
                     wb_rec.last_error.eq(wb_last_error),
                     wb_first.eq(~wb_beat),
                     wb_last.eq(1 if len(wb_beats) == 1 else wb_beat),
                     wb_data.eq(Mux(wb_beat, wb_beats[-1], wb_beats[0]))]

        # -- DMA write arbiter: 0 RX engine, 1 writeback -----------------------------------------
        busy = Signal()
        owner = Signal()
        turn = Signal()                          # the source that wins a tie
        choice = Signal()
        sel = Signal()
        # A writeback of a queue without an address is dropped (never between the beats of a
        # write: wb_beat), taken from the queue manager without a write.
        wb_drop = Signal()
        wb_valid = Signal()
        m.d.comb += [
            wb_drop.eq(txq.wb.valid & wb_bad & ~wb_beat),
            wb_valid.eq(txq.wb.valid & ~wb_drop),
            choice.eq(Mux(rxe.wr.valid & wb_valid, turn, ~rxe.wr.valid)),
            sel.eq(Mux(busy, owner, choice)),
        ]
        rx_wr = rxe.wr.p
        with m.If(sel):
            m.d.comb += [self.wr_valid.eq(wb_valid), self.wr_addr.eq(wb_base << 4),
                         self.wr_len.eq(TX_WB.size // 8), self.wr_data.eq(wb_data),
                         self.wr_first.eq(wb_first), self.wr_last.eq(wb_last)]
        with m.Else():
            m.d.comb += [self.wr_valid.eq(rxe.wr.valid), self.wr_addr.eq(rx_wr.addr),
                         self.wr_len.eq(rx_wr.len), self.wr_data.eq(rx_wr.data),
                         self.wr_first.eq(rx_wr.first), self.wr_last.eq(rx_wr.last)]
        take = Signal()
        m.d.comb += [take.eq(self.wr_valid & self.wr_ready),
                     rxe.wr.ready.eq(self.wr_ready & ~sel),
                     txq.wb.ready.eq((self.wr_ready & sel & wb_last) | wb_drop)]
        with m.If(self.wr_valid):
            m.d.sync += [busy.eq(~(take & self.wr_last)), owner.eq(sel)]
        with m.If(take & self.wr_last):
            m.d.sync += turn.eq(~sel)
        with m.If(take & sel):
            m.d.sync += wb_beat.eq(~wb_last)
            with m.If(wb_last):
                m.d.sync += self.txq_wb_writes.eq(self.txq_wb_writes + 1)

        # -- interrupts --------------------------------------------------------------------------
        # TX queue group of the frame done: done_queue % ntxirq (a table over the queue numbers).
        nt = self.ntxirq
        group = Array(q % nt for q in range(2**self.qbits))[txe.done.p.queue]
        order = self.txorder
        for g, c in enumerate(txirqs):
            m.d.comb += [
                c.event.eq(txe.done.valid & (group == g)),
                order.irq_in[g].eq(c.irq_valid),
                c.irq_ready.eq(1),
                self.irq_valid[g].eq(order.irq_valid[g]),
                order.irq_ready[g].eq(self.irq_ready[g]),
            ]
        m.d.comb += [
            order.pend.eq(txq.wb_pending),
            order.wb_valid.eq(txq.wb.valid),
            order.wb_ready.eq(txq.wb.ready),
            order.wb_queue.eq(txq.wb.p.queue),
            self.txirq_wb_held.eq(order.held),
        ]
        m.d.comb += [
            rxirq.event.eq(rxe.irq_event),
            self.irq_valid[nt].eq(rxirq.irq_valid),
            rxirq.irq_ready.eq(self.irq_ready[nt]),
        ]
        return m
