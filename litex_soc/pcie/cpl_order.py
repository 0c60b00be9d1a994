# SPDX-License-Identifier: BSD-2-Clause
#
# cpl_order.py: CplOrder, the SoC's completions (answers to the host's BAR reads) held until
# the DMA writes taken before them have left on the PHY: PCIe does not let a completion pass a
# posted write, so a value read (the analyzer stream's producer index, a queue's consumer index)
# never reaches the host before the writes it counts.
#
# What it is: MSIOrder's two counters (msi_order.py: writes taken at the write ports, MWr TLPs
# left on the PHY) and a gate on the packetizer's completion input (tlp_slices.py, cmp_open).
# A completion whose first beat arrives while every write taken before the previous cycle has
# left passes at once; otherwise it snapshots the writes taken so far, waits until as many have
# left, and passes. The gate opens and closes only between completions. The register read for a
# completion was read at least a cycle before its first beat reaches the packetizer, so every
# write it may count is in the snapshot. CSRs held (completions that waited), held_cycles.
# Interfaces: cmp (the packetizer's completion sink: valid, ready, last), taken / left
# (MSIOrder's counters), open (to the packetizer's cmp_open).
# Parameters: width (the counters' bits).

from migen import If, Mux, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStatus


class CplOrder(LiteXModule):
    def __init__(self, cmp, taken, left):
        width = len(taken)
        self.open = Signal()
        self._held = CSRStatus(32, name="held", description=(
            "Completions that waited for DMA writes taken before them to leave on the PHY. "
            "Wraps."))
        self._held_cycles = CSRStatus(32, name="held_cycles", description=(
            "Cycles in which a completion waited. Wraps."))

        # # #

        in_pkt = Signal()                # a completion's later beats: the gate stays open
        offered = Signal()               # its first beat was offered: open until taken
        drained = Signal()               # last cycle, every write taken had left
        snapped = Signal()               # the first beat waits for `snap` writes to leave
        snap = Signal(width)
        ok = Signal()                    # left >= snap (modulo 2**width), a cycle late
        arm = Signal()                   # a first beat waits; its first cycle, it snapshots
        diff = Signal(width)
        self.comb += [
            self.open.eq(in_pkt | offered | Mux(snapped, ok, drained)),
            arm.eq(cmp.valid & ~self.open),
            diff.eq(left - Mux(arm & ~snapped, taken, snap)),
        ]
        take = cmp.valid & cmp.ready
        held, cycles = Signal(32), Signal(32)
        self.sync += [
            drained.eq(taken == left),
            ok.eq(~diff[width - 1]),
            If(take,
                in_pkt.eq(~cmp.last), offered.eq(0), snapped.eq(0),
            ).Elif(cmp.valid & self.open,
                offered.eq(1),
            ).Elif(arm & ~snapped,
                snapped.eq(1), snap.eq(taken), held.eq(held + 1),
            ),
            If(arm, cycles.eq(cycles + 1)),
        ]
        self.comb += [self._held.status.eq(held), self._held_cycles.status.eq(cycles)]
