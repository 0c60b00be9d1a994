# SPDX-License-Identifier: BSD-2-Clause
#
# dma_read_arbiter.py: merges several DMA read clients onto one DMA read port (round-robin
# over requests), routing the in-order completions back to the client of each request.
#
# Interfaces: s (In(dma_port.read_signature(W)).array(nports): the clients' requests and
# completions), rd (Out(dma_port.read_signature(W)): the master port, to the PCIe DMA),
# outstanding (requests whose last completion beat is not yet taken), requests (counter).
# Parameters: nports (clients, 1..16), data_width (W: 64, 128), depth (outstanding requests at
# most: a power of two 2..1024, 16).
# Behaviour, to the cycle: DMAReadArbiter's docstring.

from amaranth import Module, Mux, Signal, unsigned
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from ..contract import registers
from .dma_port import read_signature

COUNTS = registers.counter_names("dma_read_arbiter")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class DMAReadArbiter(wiring.Component):
    """Round-robin DMA read arbiter with in-order completion routing.

    The DMA read port of rtl/nic/dma_port.py (request stream req, completion stream cpl in request
    order, cpl.p.last on the last beat of each request) on both sides: nports clients (s[i], e.g.
    the TX engine and the RX engine) and one master port (rd, to the PCIe DMA). The arbiter does
    not look at addresses or lengths; it relies on the master returning exactly one completion
    beat with last per request, in request order.

    Requests
    --------
    A FIFO of `depth` port numbers holds the client of every request accepted by the master whose
    last completion beat has not yet been taken. While it is full no request is presented
    (rd.req.valid 0). Otherwise the presented client is, when no request is being held (below),
    the first client with s[i].req.valid at or after the round-robin pointer (wrapping; 0 after
    reset); an acceptance (rd.req.valid & rd.req.ready) pushes the client's number and moves the
    pointer to that client + 1. A request presented and not taken in cycle t is held: in t+1 the
    same client is presented (its request is stable by the stream rule), so rd.req.payload never
    changes under rd.req.valid. rd.req.valid and .payload are functions of the clients' requests
    and of registers; s[i].req.ready = rd.req.ready & (client i is presented) & not full
    (combinational from rd.req.ready).

    Completions
    -----------
    The client at the FIFO head gets the stream: s[h].cpl.valid = rd.cpl.valid, rd.cpl.ready =
    s[h].cpl.ready, the payload (data, last, err) passed to every client (only s[h] sees valid). A
    beat with last taken (rd.cpl.valid & rd.cpl.ready) pops the head at the edge. With the FIFO
    empty (nothing outstanding) rd.cpl.ready is 0. A request accepted in cycle t can receive its
    first completion beat from cycle t+1 on.

    Ports
    -----
    s : In(dma_port.read_signature(W)).array(nports)
        Client i's requests and completions.
    rd : Out(dma_port.read_signature(W))
        The master's requests and completions.
    outstanding : Out
        Requests accepted whose last completion beat has not been taken (0..depth).
    requests : Out, 32 bits (wrapping)
        Requests accepted by the master.
    """

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
        super().__init__({
            "s":            In(read_signature(data_width)).array(nports),
            "rd":           Out(read_signature(data_width)),
            "outstanding":  Out(depth.bit_length()),
            **{c.name: Out(c.width) for c in registers.CORES["dma_read_arbiter"].counters},
        })

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
                with m.If((ptr == p) & self.s[i].req.valid):
                    m.d.comb += [choice.eq(i), any_valid.eq(1)]
        sel = Signal(pbits)
        m.d.comb += sel.eq(Mux(held, held_port, choice))
        sel_valid = Signal()
        for i in range(n):
            with m.If(sel == i):
                m.d.comb += [sel_valid.eq(self.s[i].req.valid),
                             self.rd.req.payload.eq(self.s[i].req.payload)]
        m.d.comb += self.rd.req.valid.eq(sel_valid & ~full)
        accept = Signal()
        m.d.comb += accept.eq(self.rd.req.valid & self.rd.req.ready)
        for i in range(n):
            m.d.comb += self.s[i].req.ready.eq(self.rd.req.ready & ~full & (sel == i))
        m.d.sync += [held.eq(self.rd.req.valid & ~self.rd.req.ready), held_port.eq(sel)]
        with m.If(accept):
            m.d.sync += [ptr.eq(Mux(sel == n - 1, 0, sel + 1)),
                         self.requests.eq(self.requests + 1)]

        # -- FIFO of the port numbers of outstanding requests ------------------------------------
        m.submodules.ids = ids = memory.Memory(shape=unsigned(pbits), depth=depth, init=[])
        ids_wr = ids.write_port()
        ids_rd = ids.read_port(domain="comb")
        wptr = Signal(abits)
        rptr = Signal(abits)
        m.d.comb += [ids_wr.addr.eq(wptr), ids_wr.data.eq(sel), ids_wr.en.eq(accept),
                     ids_rd.addr.eq(rptr)]
        head = Signal(pbits)
        nonempty = Signal()
        m.d.comb += [head.eq(ids_rd.data), nonempty.eq(count != 0)]

        # -- completion side ---------------------------------------------------------------------
        head_ready = Signal()
        for i in range(n):
            m.d.comb += [self.s[i].cpl.valid.eq(self.rd.cpl.valid & nonempty & (head == i)),
                         self.s[i].cpl.payload.eq(self.rd.cpl.payload)]
            with m.If(head == i):
                m.d.comb += head_ready.eq(self.s[i].cpl.ready)
        m.d.comb += self.rd.cpl.ready.eq(head_ready & nonempty)
        pop = Signal()
        m.d.comb += pop.eq(self.rd.cpl.valid & self.rd.cpl.ready & self.rd.cpl.p.last)

        with m.If(accept):
            m.d.sync += wptr.eq(wptr + 1)
        with m.If(pop):
            m.d.sync += rptr.eq(rptr + 1)
        m.d.sync += count.eq(count + accept - pop)
        return m
