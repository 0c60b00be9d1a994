# SPDX-License-Identifier: BSD-2-Clause
#
# bar_guard.py: BARGuard, what BAR0 accesses the SoC refuses, and their counters.
#
# What it is: a Wishbone pass-through in front of the CSR bridge that forwards every access
# except a write whose byte enables (sel) cover part of the 32-bit word: LiteX's CSR bridge would
# write all four bytes (a CSR takes only whole-word writes), so such a write is acknowledged,
# dropped and counted. Beside it, the count of requests LitePCIe's BAR0 master refused for
# being longer than one dword (litex_soc/patches/litepcie/0002-...: a read gets an Unsupported
# Request completion, a write is dropped).
#
# Interfaces: bus (Wishbone slave, to the SoC bus), slave (the CSR bridge's Wishbone bus, given);
# unsupported (input, a pulse per refused request); CSRs partial_writes and unsupported
# (32-bit error counters, wrap). Parameters: slave.

from migen import If, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone
from litex.soc.interconnect.csr import CSRStatus


class BARGuard(LiteXModule):
    def __init__(self, slave):
        self.bus = bus = wishbone.Interface(data_width=slave.data_width,
                                            address_width=slave.address_width,
                                            addressing=slave.addressing)
        self.unsupported = Signal()
        self._partial_writes = CSRStatus(32, name="partial_writes", description=(
            "BAR0 writes dropped because their byte enables did not cover a whole 32-bit "
            "register (BAR0 registers take whole-dword writes only; zero-length writes are no "
            "access and not counted). Wraps."))
        self._unsupported = CSRStatus(32, name="unsupported", description=(
            "BAR0 requests longer than one dword, refused: a read gets an Unsupported Request "
            "completion, a write is dropped. Wraps."))

        # # #

        full = 2**len(bus.sel) - 1
        partial = Signal()
        drop_ack = Signal()
        self.comb += [
            partial.eq(bus.we & (bus.sel != 0) & (bus.sel != full)),
            slave.adr.eq(bus.adr),
            slave.dat_w.eq(bus.dat_w),
            slave.sel.eq(bus.sel),
            slave.we.eq(bus.we),
            slave.cti.eq(bus.cti),
            slave.bte.eq(bus.bte),
            slave.cyc.eq(bus.cyc & ~partial),
            slave.stb.eq(bus.stb & ~partial),
            bus.dat_r.eq(slave.dat_r),
            bus.ack.eq(slave.ack | drop_ack),
            bus.err.eq(slave.err),
        ]
        self.sync += [
            drop_ack.eq(bus.cyc & bus.stb & partial & ~drop_ack),
            If(drop_ack, self._partial_writes.status.eq(self._partial_writes.status + 1)),
            If(self.unsupported, self._unsupported.status.eq(self._unsupported.status + 1)),
        ]
