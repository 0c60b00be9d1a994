# SPDX-License-Identifier: BSD-2-Clause
#
# wishbone_dma_adapter.py: the NIC cores' DMA ports (rtl/nic/dma_port.py, flat at the
# NICDatapath boundary) as Wishbone masters on the SoC bus, for SoCs without PCIe where the
# rings and buffers are in SoC RAM (litex_soc/nic/host_port.py, SoCBusHostPort).
#
# What it is: two Migen/LiteX modules with the same ports and counters as
# dma_port_adapter.py's LitePCIe adapters, so the datapath and everything above it see the
# same port. Each drives one W-bit Wishbone master (`bus`, word addressed, classic cycles: one
# access per W-bit beat); LiteX's bus converts it to the SoC bus's width.
# Interfaces: WishboneDMAReadAdapter: rd_req_*, rd_cpl_* and the counters requests,
# completions, errors, rejected, timeouts, dropped; WishboneDMAWriteAdapter: wr_* and the
# counters writes, tlps (bus writes: one per write taken), rejected. Both: the hand-offs the
# bus analyzer's breakdowns time (the docstrings; litex_soc/nicscope/socbus_handoffs.py).
# Parameters: data_width (W: 64, 128), address_width (the bus's byte address bits, 32),
# max_read / max_payload (bytes, multiples of 16), timeout (cycles a read access may wait for
# its ack; 0: never). The mappings and limits: the docstrings.

from migen import FSM, If, Mux, NextState, NextValue, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone

__all__ = ["WishboneDMAReadAdapter", "WishboneDMAWriteAdapter"]


def _counter(module, name, inc):
    c = Signal(32, name=name)
    module.sync += If(inc, c.eq(c + 1))
    return c


def _check(data_width, max_len, what):
    if data_width not in (64, 128):
        raise ValueError(f"data_width must be 64 or 128, not {data_width}")
    if max_len % 16 or not 16 <= max_len <= 4096:
        raise ValueError(f"{what} must be a multiple of 16 in 16..4096, not {max_len}")


def _ok(addr, length, max_len, shift, address_width):
    """A request the bus can serve: a beat-aligned address below 2**address_width, a length of
    whole DWORDs in 4..max_len."""
    return ((addr[0:shift] == 0) & (addr[address_width:64] == 0) & (length[0:2] == 0)
            & (length != 0) & (length <= max_len))


class WishboneDMAReadAdapter(LiteXModule):
    """WishboneDMAReadAdapter(data_width, address_width=32, max_read=512, timeout=2**20)

    Our side: as DMAReadAdapter (rd_req_* in, rd_cpl_* out). `bus`: the Wishbone master.

    A request of L bytes at A becomes n = ceil(L*8/W) single reads at A, A + W/8, ... (word
    address A*8/W + i, all byte lanes), each beat handed to the core when its ack comes;
    rd_cpl_last on the n-th, rd_cpl_err on it when any access ended with the bus's err or timed
    out (its data then reads 0). Requests are served one at a time, in order.

    A request is REJECTED (no bus access; n beats of 0 with rd_cpl_err on the last, rejected
    += 1) when L == 0, L % 4 != 0, L > max_read, A is not W/8-byte aligned or A does not fit
    address_width. Counters: requests, completions, errors, rejected, timeouts (accesses with
    no ack within `timeout` cycles: the access is abandoned), dropped (always 0: a bus master
    receives no data it did not ask for; kept so the register block is the same).

    Hand-offs (outputs, for the bus analyzer): `issued`, the first cycle of a request's first
    bus access (the cycle after it was taken; never for a rejected one); `access_end`, an
    access ended (ack, err or timeout), with `left` the beats still to hand over, its own
    included; `handed`, a served request's last beat moves to the core.
    """

    def __init__(self, data_width, address_width=32, max_read=512, timeout=2**20):
        _check(data_width, max_read, "max_read")
        W, B = data_width, data_width // 8
        shift = B.bit_length() - 1
        self.data_width = W
        self.bus = bus = wishbone.Interface(data_width=W, address_width=address_width,
                                            addressing="word")

        self.rd_req_valid = Signal()
        self.rd_req_ready = Signal()
        self.rd_req_addr = Signal(64)
        self.rd_req_len = Signal(13)
        self.rd_req_desc = Signal()     # the read's kind (bus analyzer only; not used here)
        self.rd_cpl_valid = Signal()
        self.rd_cpl_ready = Signal()
        self.rd_cpl_data = Signal(W)
        self.rd_cpl_last = Signal()
        self.rd_cpl_err = Signal()

        # # #

        nb_w = (4096 // B).bit_length() + 1
        ok = Signal()
        self.comb += ok.eq(_ok(self.rd_req_addr, self.rd_req_len, max_read, shift,
                               address_width))
        adr = Signal(len(bus.adr))
        left = Signal(nb_w)             # beats still to hand over, this one included
        bad = Signal()
        data = Signal(W)
        timer = Signal(max=max(timeout, 1) + 1)
        timed_out = Signal()
        taken = Signal()
        done = Signal()
        self.comb += [
            bus.adr.eq(adr),
            bus.sel.eq(2**B - 1),
            bus.we.eq(0),
            bus.cti.eq(wishbone.CTI_BURST_NONE),
            self.rd_cpl_data.eq(data),
            self.rd_cpl_last.eq(left == 1),
            taken.eq(self.rd_req_valid & self.rd_req_ready),
            done.eq(self.rd_cpl_valid & self.rd_cpl_ready & self.rd_cpl_last),
        ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            self.rd_req_ready.eq(1),
            If(self.rd_req_valid,
                NextValue(adr, self.rd_req_addr[shift:]),
                NextValue(left, Mux(self.rd_req_len == 0, 1,
                                    (self.rd_req_len + (B - 1)) >> shift)),
                NextValue(bad, ~ok),
                NextValue(data, 0),
                NextValue(timer, 0),
                If(ok,
                    NextState("READ"),
                ).Else(
                    NextState("PAD"),
                ),
            ),
        )
        fsm.act("READ",
            bus.cyc.eq(1),
            bus.stb.eq(1),
            NextValue(timer, timer + 1),
            If(bus.ack | bus.err,
                NextValue(data, Mux(bus.err, 0, bus.dat_r)),
                If(bus.err, NextValue(bad, 1)),
                NextState("OUT"),
            ).Elif(timed_out,
                NextValue(data, 0),
                NextValue(bad, 1),
                NextState("OUT"),
            ),
        )
        fsm.act("OUT",
            self.rd_cpl_valid.eq(1),
            self.rd_cpl_err.eq(self.rd_cpl_last & bad),
            If(self.rd_cpl_ready,
                NextValue(left, left - 1),
                NextValue(adr, adr + 1),
                NextValue(timer, 0),
                If(self.rd_cpl_last,
                    NextState("IDLE"),
                ).Else(
                    NextState("READ"),
                ),
            ),
        )
        fsm.act("PAD",
            self.rd_cpl_valid.eq(1),
            self.rd_cpl_err.eq(self.rd_cpl_last),
            If(self.rd_cpl_ready,
                NextValue(left, left - 1),
                If(self.rd_cpl_last, NextState("IDLE")),
            ),
        )
        if timeout:
            self.comb += timed_out.eq(~bus.ack & ~bus.err & (timer == timeout - 1))
        self.issued = Signal()
        self.access_end = Signal()
        self.left = left
        self.handed = Signal()
        self.sync += self.issued.eq(taken & ok)
        self.comb += [
            self.access_end.eq(fsm.ongoing("READ") & (bus.ack | bus.err | timed_out)),
            self.handed.eq(done & fsm.ongoing("OUT")),
        ]

        self.requests = _counter(self, "requests", taken)
        self.completions = _counter(self, "completions", done)
        self.errors = _counter(self, "errors", done & self.rd_cpl_err)
        self.rejected = _counter(self, "rejected", taken & ~ok)
        self.timeouts = _counter(self, "timeouts", fsm.ongoing("READ") & timed_out)
        self.dropped = Signal(32, name="dropped")


class WishboneDMAWriteAdapter(LiteXModule):
    """WishboneDMAWriteAdapter(data_width, address_width=32, max_payload=512)

    Our side: as DMAWriteAdapter (wr_* in: ceil(wr_len*8/W) beats, addr/len on the first).
    `bus`: the Wishbone master.

    A write of L bytes at A is n single writes at word addresses A*8/W + i, beat i's data, every
    byte lane enabled but on the last beat when L is not a multiple of W/8 (then the lanes of
    its L % (W/8) first bytes). A beat is taken when its access ends (ack or err). tlps counts
    the writes done on the bus (one per write). A write is REJECTED (its beats consumed up to
    wr_last, no bus access, rejected += 1) when L == 0, L % 4 != 0, L > max_payload, A is not
    W/8-byte aligned or A does not fit address_width.

    Hand-offs (outputs, for the bus analyzer): `first_access`, the bus access of a write's
    first beat is requested (cyc); `first_end`, that access ends (ack or err).
    """

    def __init__(self, data_width, address_width=32, max_payload=512):
        _check(data_width, max_payload, "max_payload")
        W, B = data_width, data_width // 8
        shift = B.bit_length() - 1
        self.data_width = W
        self.bus = bus = wishbone.Interface(data_width=W, address_width=address_width,
                                            addressing="word")

        self.wr_valid = Signal()
        self.wr_ready = Signal()
        self.wr_addr = Signal(64)
        self.wr_len = Signal(13)
        self.wr_data = Signal(W)
        self.wr_first = Signal()
        self.wr_last = Signal()

        # # #

        ok = Signal()
        self.comb += ok.eq(_ok(self.wr_addr, self.wr_len, max_payload, shift, address_width))
        adr = Signal(len(bus.adr))
        left = Signal(14)               # bytes still to write, this beat included
        sel = Signal(B)
        for i in range(B):
            self.comb += sel[i].eq(left > i)
        write_in = Signal()
        write_bad = Signal()
        write_done = Signal()
        self.comb += [
            bus.adr.eq(adr),
            bus.dat_w.eq(self.wr_data),
            bus.sel.eq(sel),
            bus.we.eq(1),
            bus.cti.eq(wishbone.CTI_BURST_NONE),
        ]

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(self.wr_valid,
                write_in.eq(1),
                NextValue(adr, self.wr_addr[shift:]),
                NextValue(left, self.wr_len),
                If(~ok,
                    write_bad.eq(1),
                    NextState("DROP"),
                ).Else(
                    NextState("WRITE"),
                ),
            ),
        )
        fsm.act("DROP",
            self.wr_ready.eq(1),
            If(self.wr_valid & self.wr_last, NextState("IDLE")),
        )
        fsm.act("WRITE",
            bus.cyc.eq(self.wr_valid),
            bus.stb.eq(self.wr_valid),
            self.wr_ready.eq(bus.ack | bus.err),
            If(self.wr_valid & (bus.ack | bus.err),
                NextValue(adr, adr + 1),
                NextValue(left, Mux(left > B, left - B, 0)),
                If(self.wr_last,
                    write_done.eq(1),
                    NextState("IDLE"),
                ),
            ),
        )

        first = Signal()                # the next access is the write's first beat
        self.sync += If(write_in, first.eq(1)).Elif(bus.cyc & (bus.ack | bus.err), first.eq(0))
        self.first_access = Signal()
        self.first_end = Signal()
        self.comb += [self.first_access.eq(fsm.ongoing("WRITE") & first & bus.cyc),
                      self.first_end.eq(self.first_access & (bus.ack | bus.err))]

        self.writes = _counter(self, "writes", write_in)
        self.tlps = _counter(self, "tlps", write_done)
        self.rejected = _counter(self, "rejected", write_bad)
