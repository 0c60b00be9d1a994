# SPDX-License-Identifier: BSD-2-Clause
#
# cpl_guard.py: CplGuard, what the SoC does with completions that fail (PCIe Base Spec 2.3.2,
# 2.7.2.2, 2.8): the PHY's host -> device TLP stream passes through it before LitePCIe's
# depacketizer, which flags a completion's status (`err`) but nothing else.
#
# What it is, per completion the PHY delivers (first beat: DW0 fmt/type, EP; DW1 status, byte
# count; the same beat at W = 64 and 128):
# - poisoned (EP = 1): its status is made Completer Abort, so LitePCIe flags it `err` and its
#   data is never taken as good (the NIC's engines drop or skip what it was for);
# - a non-successful Cpl (UR, CA, ...; no data) ends its request: its byte count is made 0,
#   which is how LitePCIe's depacketizer recognises a request's last completion (it would
#   otherwise keep the tag for ever and every later read would stall behind it);
# - completion timeout: when the oldest read the TLP controller waits for (the head of its
#   in-order request queue: head_valid, head_tag) has had no data for `timeout` cycles, a Cpl
#   with status CA and byte count 0 for that tag is put into the stream between two TLPs, so
#   its reader gets an error and the tag is freed. A completion arriving later for that tag is
#   not told apart from one for the tag's next request (the host model's lost reads never come).
# Interfaces: sink (from the PHY's source), source (to the depacketizer), phy_layout(W);
# head_valid, head_tag, head_data (inputs: the controller's request queue head and its
# in-order completion output's valid); link_up (input, the PHY's); CSRs timeouts, unsupported,
# aborts, poisoned, link_downs (32-bit counters, wrap). Parameters: data_width (64, 128),
# req_id (the completions' requester and completer id), timeout (cycles; the default is 500 us
# at 125 MHz, PCIe's default range is 50 us .. 50 ms), tag_bits.

from migen import FSM, Cat, Constant, If, NextState, NextValue, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRStatus
from litepcie.common import phy_layout

CPL, CPLD = 0x0A, 0x4A
ST_UR, ST_CA = 1, 4


class GuardedPHY:
    """The PCIe PHY as LitePCIe's endpoint sees it: `source` is the guard's, the rest the PHY's."""

    def __init__(self, phy, source):
        self._phy = phy
        self.source = source

    def __getattr__(self, name):
        return getattr(self._phy, name)


class CplGuard(LiteXModule):
    def __init__(self, data_width, req_id, timeout=62500, tag_bits=8):
        if data_width not in (64, 128):
            raise ValueError(f"data_width must be 64 or 128, not {data_width}")
        if timeout < 1:
            raise ValueError(f"timeout must be >= 1 cycle, not {timeout}")
        self.sink = sink = stream.Endpoint(phy_layout(data_width))
        self.source = source = stream.Endpoint(phy_layout(data_width))
        self.head_valid = Signal()
        self.head_tag = Signal(tag_bits)
        self.head_data = Signal()
        self.link_up = Signal()
        self._timeouts = CSRStatus(32, name="timeouts", description=(
            "Device reads that got no completion within the completion timeout (500 us): each "
            "ended with an error towards its reader and its tag freed. Wraps."))
        self._unsupported = CSRStatus(32, name="unsupported", description=(
            "Completions with status Unsupported Request to device reads. Wraps."))
        self._aborts = CSRStatus(32, name="aborts", description=(
            "Completions with status Completer Abort (or another non-successful status) to "
            "device reads. Wraps."))
        self._poisoned = CSRStatus(32, name="poisoned", description=(
            "Poisoned completions (EP) to device reads: their data is flagged bad. Wraps."))
        self._link_downs = CSRStatus(32, name="link_downs", description=(
            "Times the link went down (link up 1 -> 0): TLPs in flight may be lost; the driver "
            "resets its queues (docs/faults.md). Wraps."))

        # # #

        dw0, dw1 = sink.dat[0:32], sink.dat[32:64]
        fmt_type = dw0[24:32]
        status = dw1[13:16]
        in_pkt = Signal()
        is_cpl = Signal()
        ep = Signal()
        nodata_fail = Signal()
        taken = Signal()
        self.comb += [
            is_cpl.eq(sink.first & ~in_pkt & ((fmt_type == CPL) | (fmt_type == CPLD))),
            ep.eq(is_cpl & dw0[14]),
            nodata_fail.eq(is_cpl & (fmt_type == CPL) & (status != 0)),
            taken.eq(sink.valid & sink.ready),
        ]
        self.sync += If(taken, in_pkt.eq(~sink.last))

        # Completion timeout: fire is timer == timeout, kept as a register of its own (it
        # gates the whole stream) and updated with the timer.
        timer = Signal(max=timeout + 1)
        fire = Signal()

        beats = 1 if data_width == 128 else 2
        beat = Signal(max=beats + 1)
        # The injected Cpl: DW0 type Cpl, length 0; DW1 completer id, status CA, byte count 0;
        # DW2 requester id, tag, lower address 0.
        hdr = [Signal(32) for _ in range(3)]
        self.comb += [
            hdr[0].eq(CPL << 24),
            hdr[1].eq(Cat(Constant(0, 13), Constant(ST_CA, 3), req_id)),
            hdr[2].eq(Cat(Constant(0, 8), self.head_tag[:8], req_id)),
        ]
        self.fsm = fsm = FSM(reset_state="PASS")
        fsm.act("PASS",
            If(fire & ~in_pkt,
                NextState("INJECT"),
            ).Else(
                sink.connect(source),
                If(ep & (status == 0), source.dat[32 + 13:32 + 16].eq(ST_CA)),
                If(nodata_fail, source.dat[32:32 + 12].eq(0)),
            ),
        )
        if data_width == 128:
            fsm.act("INJECT",
                source.valid.eq(1), source.first.eq(1), source.last.eq(1),
                source.dat.eq(Cat(*hdr)), source.be.eq(0x0FFF),
                If(source.ready, NextState("PASS")),
            )
        else:
            fsm.act("INJECT",
                source.valid.eq(1), source.first.eq(beat == 0), source.last.eq(beat == 1),
                If(beat == 0,
                    source.dat.eq(Cat(hdr[0], hdr[1])), source.be.eq(0xFF),
                ).Else(
                    source.dat.eq(hdr[2]), source.be.eq(0x0F),
                ),
                If(source.ready,
                    NextValue(beat, beat + 1),
                    If(beat == 1, NextValue(beat, 0), NextState("PASS")),
                ),
            )
        self.sync += [
            If(self.head_valid & ~self.head_data & ~fire & fsm.ongoing("PASS"),
                timer.eq(timer + 1),
                fire.eq(timer == timeout - 1),
            ).Elif(~fire | fsm.ongoing("INJECT"),
                timer.eq(0),
                fire.eq(0),
            ),
        ]

        # The counters count a cycle after the event (the stream's handshake and the header
        # fields registered first: the stream's ready comes through the depacketizer).
        cnt = Signal()
        cnt_status = Signal(3)
        cnt_ep = Signal()
        injected = Signal()
        link_was = Signal()
        self.sync += [
            cnt.eq(taken & is_cpl),
            cnt_status.eq(status),
            cnt_ep.eq(ep),
            injected.eq(fsm.ongoing("INJECT") & source.valid & source.ready & source.last),
            link_was.eq(self.link_up),
            If(link_was & ~self.link_up, self._link_downs.status.eq(self._link_downs.status + 1)),
            If(injected, self._timeouts.status.eq(self._timeouts.status + 1)),
            If(cnt & (cnt_status == ST_UR),
               self._unsupported.status.eq(self._unsupported.status + 1)),
            If(cnt & (cnt_status != 0) & (cnt_status != ST_UR),
               self._aborts.status.eq(self._aborts.status + 1)),
            If(cnt & cnt_ep, self._poisoned.status.eq(self._poisoned.status + 1)),
        ]
