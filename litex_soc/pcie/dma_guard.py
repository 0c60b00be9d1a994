# SPDX-License-Identifier: BSD-2-Clause
#
# dma_guard.py: DMAGuard, the descriptors LitePCIe's DMA reader and writer cannot move, refused
# in hardware and counted.
#
# What it is: LitePCIe's DMA moves whole datapath beats only. Its writer sends len = length / 4
# DWORDs in length / (W/8) beats with first/last byte enables 0xf, and its reader asks for
# length / 4 DWORDs and counts length / (W/8) beats back; neither looks at the address's low
# bits. A descriptor whose address or length is not a multiple of W/8 bytes (16 at 128 bits, 8
# at 64) therefore gives malformed TLPs (an MWr whose header says 9 DW with 8 DW of payload),
# writes before the buffer (address & ~3) or past it, and a length of 0 asks for 1024 DWORDs
# (reader) or never ends (writer). The host library refuses such descriptors
# (nic_dma_desc_check()); the device must not rely on it. CheckedTable is LitePCIe's descriptor
# table (LitePCIeDMAScatterGather) with a check at its head: a descriptor that fails it never
# reaches the splitter. While the engine is enabled it is taken from the table, no TLP is made
# for it, no IRQ raised, and it is counted; while the engine is disabled it waits at the head
# (TABLE_LEVEL counts it) like any other. In loop mode it is refilled as the others are and
# refused, and counted, on every lap.
#
# Hardware: the check is comparators (the low bits of address and length, length == 0) on each
# descriptor entering the table, its verdict kept in a 1-bit FIFO beside the table's and gating
# the head's valid; a refused head is taken a cycle after it is seen (a register between the
# verdict and the head's ready); no buffering, no latency added to a good descriptor.
#
# Interfaces: checked_tables(align) (context manager: the LitePCIe DMAs made inside it get a
# CheckedTable; the SoC's add_pcie), CheckedTable(depth, address_width, align) (LitePCIe's
# table: source, the CSRs; plus enable (in: the engine's enable), refused (out: a pulse per
# refused descriptor, the cycle after it was taken)); DMAGuard(reader_table, writer_table,
# align): CSRs reader_refused and writer_refused (32-bit error counters, wrap) and align (the
# bytes a descriptor's address and length must be a multiple of). The SoC drives each table's
# enable from its engine.

from contextlib import contextmanager

from migen import If, ResetInserter, Signal
from migen.genlib import fifo
from migen.fhdl.bitcontainer import log2_int

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRStatus

import litepcie.frontend.dma as litepcie_dma


def descriptor_ok(address, length, align):
    """The check, as an expression: address and length multiples of align, length non-zero."""
    k = log2_int(align)
    return (address[:k] == 0) & (length[:k] == 0) & (length != 0)


class CheckedTable(litepcie_dma.LitePCIeDMAScatterGather):
    def __init__(self, depth, address_width=32, align=16):
        super().__init__(depth, address_width=address_width)
        self.enable = Signal()
        self.refused = Signal()

        # # #

        head = self.source           # the table FIFO's head, as LitePCIe drives it
        self.source = source = stream.Endpoint(litepcie_dma.descriptor_layout(address_width))
        # The check is made as a descriptor enters the table (from the CSRs or, in loop mode,
        # refilled from the head) and kept beside it in a 1-bit FIFO that takes the same writes,
        # reads and reset: the head's verdict is one memory bit, not a compare of address and
        # length bits spread over the table's memory (its read was the SoC's longest path).
        table, = [sub for _name, sub in self._submodules if isinstance(sub, stream.SyncFIFO)]
        self.submodules.verdict = verdict = ResetInserter()(fifo.SyncFIFO(1, table.depth))
        # A refused head is taken the cycle after it is seen (`drop`, a register), so the
        # verdict's memory read reaches no ready and no count combinationally (the table's
        # level behind the head's ready was the SoC's longest routed path). A head the
        # splitter takes is refused there and then (source.valid is 0 for it).
        ok, drop = Signal(), Signal()
        self.comb += [
            verdict.reset.eq(table.reset),
            verdict.din.eq(descriptor_ok(table.sink.address, table.sink.length, align)),
            verdict.we.eq(table.sink.valid & table.sink.ready),
            verdict.re.eq(head.valid & head.ready),
            ok.eq(verdict.dout),
            head.connect(source, omit={"valid", "ready"}),
            source.valid.eq(head.valid & ok),
            head.ready.eq(source.ready | drop),
        ]
        self.sync += [
            drop.eq(head.valid & ~ok & self.enable & ~head.ready),
            self.refused.eq(head.valid & head.ready & ~ok),
        ]


@contextmanager
def checked_tables(align):
    """LitePCIe DMAs made inside this get CheckedTable(align) as their descriptor tables (the
    reader and writer make theirs by this module-level name)."""
    orig = litepcie_dma.LitePCIeDMAScatterGather

    class Table(CheckedTable):
        def __init__(self, depth, address_width=32):
            super().__init__(depth, address_width=address_width, align=align)

    litepcie_dma.LitePCIeDMAScatterGather = Table
    try:
        yield
    finally:
        litepcie_dma.LitePCIeDMAScatterGather = orig


class DMAGuard(LiteXModule):
    def __init__(self, reader_table, writer_table, align):
        for t in (reader_table, writer_table):
            if not isinstance(t, CheckedTable):
                raise TypeError("DMAGuard: the DMA was not made inside checked_tables()")
        what = ("descriptors refused: address or length not a multiple of {a} bytes (the "
                "datapath width), or length 0. Refused while the engine is enabled, as it "
                "reaches the table's head: no TLP, no IRQ, taken from the table (in loop mode "
                "refilled, refused and counted again on every lap). Wraps.").format(a=align)
        self._reader_refused = CSRStatus(32, name="reader_refused", description="DMA reader "
                                         + what)
        self._writer_refused = CSRStatus(32, name="writer_refused", description="DMA writer "
                                         + what)
        self._align = CSRStatus(8, name="align", reset=align, description=(
            "Bytes a DMA descriptor's address and length must be a multiple of (the datapath "
            "width); others are refused and counted."))

        # # #

        self.sync += [
            If(reader_table.refused,
               self._reader_refused.status.eq(self._reader_refused.status + 1)),
            If(writer_table.refused,
               self._writer_refused.status.eq(self._writer_refused.status + 1)),
        ]
