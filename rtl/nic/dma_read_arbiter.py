#
# dma_read_arbiter.py: merges several DMA read clients onto one DMA read port (round-robin
# over requests), routing the in-order completions back to the client of each request.
#
# What it is: the DMA read interface of rtl/nic/tx_engine.py's header (request stream rd_req_*,
# completion stream rd_cpl_* in request order, rd_cpl_last on the last beat of each request)
# on both sides: nports clients (s{i}_*, e.g. the TX engine and the RX engine) and one master
# port (rd_*, to the PCIe DMA). The arbiter does not look at addresses or lengths; it relies on
# the master returning exactly one rd_cpl_last per request, in request order.
#
# Requests: a FIFO of `depth` port numbers holds the client of every request accepted by the
# master whose last completion beat has not yet been taken. While it is full no request is
# presented (rd_req_valid 0). Otherwise the presented client is, when no request is being held
# (below), the first client with s{i}_rd_req_valid at or after the round-robin pointer (wrapping;
# 0 after reset); an acceptance (rd_req_valid & rd_req_ready) pushes the client's number and
# moves the pointer to that client + 1. A request presented and not taken in cycle t is held:
# in t+1 the same client is presented (its request is stable by the convention), so rd_req_addr
# and rd_req_len never change under rd_req_valid. rd_req_valid/_addr/_len are functions of the
# clients' request outputs and of registers; s{i}_rd_req_ready = rd_req_ready & (client i is
# presented) & not full (combinational from rd_req_ready).
#
# Completions: the client at the FIFO head gets the stream: s{h}_rd_cpl_valid = rd_cpl_valid,
# rd_cpl_ready = s{h}_rd_cpl_ready, data/last/err passed to every client (only s{h} sees valid).
# A beat with rd_cpl_last taken (rd_cpl_valid & rd_cpl_ready) pops the head at the edge. With the
# FIFO empty (nothing outstanding) rd_cpl_ready is 0. A request accepted in cycle t can receive
# its first completion beat from cycle t+1 on.
#
# Interfaces (W = data_width bits, for i in 0..nports-1):
#   s{i}_rd_req_valid (in), s{i}_rd_req_ready (out), s{i}_rd_req_addr (64, in),
#   s{i}_rd_req_len (13, in)                     client i's requests.
#   s{i}_rd_cpl_valid (out), s{i}_rd_cpl_ready (in), s{i}_rd_cpl_data (W, out),
#   s{i}_rd_cpl_last (out), s{i}_rd_cpl_err (out)   client i's completions.
#   rd_req_valid, rd_req_ready (in), rd_req_addr (64), rd_req_len (13)    master requests.
#   rd_cpl_valid (in), rd_cpl_ready, rd_cpl_data (W, in), rd_cpl_last (in), rd_cpl_err (in)
#                                                 master completions.
#   outstanding  out: requests accepted whose last completion beat has not been taken (0..depth).
#   requests     out, 32 bits (wrapping): requests accepted by the master.
#
# Parameters:
#   nports      number of clients, 1..16.
#   data_width  W, 64 or 128.
#   depth       outstanding requests at most: a power of two, 2..1024 (16).

from amaranth import Module, Mux, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import Out
from amaranth.utils import ceil_log2

from ..contract import registers
from .dma_port import dma_read_members

COUNTS = registers.counter_names("dma_read_arbiter")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class DMAReadArbiter(wiring.Component):
    def __init__(self, nports=2, data_width=128, depth=16):
        if not _is_int(nports) or not 1 <= nports <= 16:
            raise ValueError(f"DMAReadArbiter: nports={nports!r} must be an integer 1..16")
        if not _is_int(data_width) or data_width not in (64, 128):
            raise ValueError(f"DMAReadArbiter: data_width={data_width!r} must be 64 or 128")
        if not _is_int(depth) or not 2 <= depth <= 1024 or depth & (depth - 1):
            raise ValueError(f"DMAReadArbiter: depth={depth!r} must be a power of two "
                             f"2..1024")
        self.nports = nports
        self.data_width = data_width
        self.depth = depth
        self.pbits = max(1, ceil_log2(nports))
        ports = {}
        for i in range(nports):
            ports.update(dma_read_members(data_width, prefix=f"s{i}_rd_", flip=True))
        super().__init__({
            **ports,
            **dma_read_members(data_width),
            "outstanding":  Out(depth.bit_length()),
            **{s.name: Out(s.width) for s in registers.CORES["dma_read_arbiter"].counters},
        })

    def port(self, i, name):
        return getattr(self, f"s{i}_{name}")

    def elaborate(self, platform):
        m = Module()
        n, pbits, depth = self.nports, self.pbits, self.depth
        abits = ceil_log2(depth)

        # -- request side: round-robin with hold -------------------------------------------------
        ptr = Signal(pbits)                      # round-robin pointer
        held = Signal()                          # a request was presented and not taken
        held_port = Signal(pbits)
        count = Signal(abits + 1)
        full = Signal()
        m.d.comb += [full.eq(count == depth), self.outstanding.eq(count)]

        # first valid client at or after ptr: scan the clients in the order ptr, ptr+1, ...
        choice = Signal(pbits)
        any_valid = Signal()
        for k in reversed(range(n)):             # lower k (closer to ptr) wins: assigned last
            for p in range(n):
                i = (p + k) % n
                with m.If((ptr == p) & self.port(i, "rd_req_valid")):
                    m.d.comb += [choice.eq(i), any_valid.eq(1)]
        sel = Signal(pbits)
        m.d.comb += sel.eq(Mux(held, held_port, choice))
        sel_valid = Signal()
        for i in range(n):
            with m.If(sel == i):
                m.d.comb += [sel_valid.eq(self.port(i, "rd_req_valid")),
                             self.rd_req_addr.eq(self.port(i, "rd_req_addr")),
                             self.rd_req_len.eq(self.port(i, "rd_req_len"))]
        m.d.comb += self.rd_req_valid.eq(sel_valid & ~full)
        accept = Signal()
        m.d.comb += accept.eq(self.rd_req_valid & self.rd_req_ready)
        for i in range(n):
            m.d.comb += self.port(i, "rd_req_ready").eq(self.rd_req_ready & ~full & (sel == i))
        m.d.sync += [held.eq(self.rd_req_valid & ~self.rd_req_ready), held_port.eq(sel)]
        with m.If(accept):
            m.d.sync += [ptr.eq(Mux(sel == n - 1, 0, sel + 1)),
                         self.requests.eq(self.requests + 1)]

        # -- FIFO of the port numbers of outstanding requests ------------------------------------
        m.submodules.ids = ids = memory.Memory(shape=unsigned(pbits), depth=depth, init=[])
        wr = ids.write_port()
        rd = ids.read_port(domain="comb")
        wptr = Signal(abits)
        rptr = Signal(abits)
        m.d.comb += [wr.addr.eq(wptr), wr.data.eq(sel), wr.en.eq(accept), rd.addr.eq(rptr)]
        head = Signal(pbits)
        nonempty = Signal()
        m.d.comb += [head.eq(rd.data), nonempty.eq(count != 0)]

        # -- completion side ---------------------------------------------------------------------
        head_ready = Signal()
        for i in range(n):
            m.d.comb += [self.port(i, "rd_cpl_valid").eq(self.rd_cpl_valid & nonempty &
                                                         (head == i)),
                         self.port(i, "rd_cpl_data").eq(self.rd_cpl_data),
                         self.port(i, "rd_cpl_last").eq(self.rd_cpl_last),
                         self.port(i, "rd_cpl_err").eq(self.rd_cpl_err)]
            with m.If(head == i):
                m.d.comb += head_ready.eq(self.port(i, "rd_cpl_ready"))
        m.d.comb += self.rd_cpl_ready.eq(head_ready & nonempty)
        pop = Signal()
        m.d.comb += pop.eq(self.rd_cpl_valid & self.rd_cpl_ready & self.rd_cpl_last)

        with m.If(accept):
            m.d.sync += wptr.eq(wptr + 1)
        with m.If(pop):
            m.d.sync += rptr.eq(rptr + 1)
        m.d.sync += count.eq(count + accept - pop)
        return m
