# SPDX-License-Identifier: BSD-2-Clause
#
# msi_order.py: MSIOrder, the SoC's interrupt requests held until the DMA writes taken before
# them have left on the PHY (PCIe orders an MSI after the posted writes before it only once
# both are TLPs on the link: LitePCIe's MSI goes to the PHY's msi interface, beside the TLP
# stream, so an MSI could reach the host before the write it announces).
#
# What it is: two counters, MWr requests taken by the crossbar's write stream (`req`: every
# write port's writes, after their arbiter, where a port's write is taken) and MWr TLPs whose
# last beat left on the PHY's device-to-host stream (`tx`); per interrupt line, an interrupt
# pulse (`irqs`) snapshots the first and is passed on (`irqs_out`, one pulse) once the second
# reached it. Writes leave in the order that arbiter took them, so then every write taken up to
# the pulse is on the link ahead of the MSI. A pulse while one waits is merged into one more (it
# waits for its own snapshot), so every wait ends. CSRs delayed (interrupts that had to wait),
# delay_cycles (cycles in which one waited).
# Interfaces: req (a request stream endpoint to watch: valid, ready, last, we), tx (the PHY's
# sink: valid, ready, first, last, dat), irqs / irqs_out (n one-cycle pulses each), taken /
# left (the two counters, registers).
# Parameters: n (interrupt lines), width (counter bits: more than the writes ever in flight).

from migen import If, Mux, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRStatus

MWR_3DW, MWR_4DW = 0x40, 0x60


class MSIOrder(LiteXModule):
    def __init__(self, req, tx, n, width=16):
        self.irqs = Signal(n)
        self.irqs_out = Signal(n)
        self._delayed = CSRStatus(32, name="delayed", description=(
            "Interrupts whose MSI request waited for DMA writes taken before it to leave on "
            "the PHY (the write it announces). Wraps."))
        self._delay_cycles = CSRStatus(32, name="delay_cycles", description=(
            "Cycles in which at least one interrupt waited. Wraps."))

        # # #

        # MWr requests taken by the crossbar, MWr TLPs whose last beat left on the PHY (CplOrder
        # reads them too).
        self.taken = taken = Signal(width)
        self.left = left = Signal(width)
        in_mwr = Signal()                      # the TLP on the PHY is a MWr (after its first beat)
        fmt = tx.dat[24:32]
        is_mwr = Signal()
        self.comb += is_mwr.eq(Mux(tx.first, (fmt == MWR_3DW) | (fmt == MWR_4DW), in_mwr))
        taken1 = Signal(width, reset=1)        # taken + 1, kept beside it
        take = Signal()
        self.comb += take.eq(req.valid & req.ready & req.last & req.we)
        self.sync += [
            If(take, taken.eq(taken1), taken1.eq(taken1 + 1)),
            If(tx.valid & tx.ready,
                in_mwr.eq(is_mwr & ~tx.last),
                If(tx.last & is_mwr, left.eq(left + 1)),
            ),
        ]
        # A pulse's snapshot counts the writes taken in its own cycle too: a mux of the kept
        # counts, not a sum with the (late) handshake.
        now = Signal(width)
        self.comb += now.eq(Mux(take, taken1, taken))

        waiting = Signal(n)
        for i in range(n):
            busy, snap = Signal(), Signal(width)           # the interrupt waiting
            more, more_snap = Signal(), Signal(width)      # pulses merged behind it
            done = Signal()
            # left - snap >= 0, modulo 2**width
            diff = Signal(width)
            self.comb += [
                diff.eq(left - snap),
                done.eq(busy & ~diff[width - 1]),
                self.irqs_out[i].eq(done),
                waiting[i].eq(busy & ~done),
            ]
            self.sync += [
                If(done,
                    busy.eq(more | self.irqs[i]),
                    snap.eq(Mux(self.irqs[i], now, more_snap)),
                    more.eq(0),
                ).Elif(self.irqs[i],
                    If(busy,
                        more.eq(1), more_snap.eq(now),
                    ).Else(
                        busy.eq(1), snap.eq(now),
                    ),
                ),
            ]

        delayed = Signal(32)
        cycles = Signal(32)
        # An interrupt waited when its line is still waiting the cycle after it arrived.
        prev = Signal(n)
        self.sync += [
            prev.eq(self.irqs),
            If((prev & waiting) != 0, delayed.eq(delayed + 1)),
            If(waiting != 0, cycles.eq(cycles + 1)),
        ]
        self.comb += [self._delayed.status.eq(delayed), self._delay_cycles.status.eq(cycles)]
