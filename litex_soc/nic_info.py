# SPDX-License-Identifier: BSD-2-Clause
#
# nic_info.py: the identification block (BAR0 offset 0), the first thing a driver reads.
#
# What it is: read-only registers: MAGIC, VERSION, CONFIG (the build's configuration), CLK_FREQ,
# BUS_BASE (the soft CPU's address of BAR0 offset 0), RB_COUNT and the register-block table
# (rtl/contract/regblocks.py): RB_MAX entries of TYPE, VERSION, BASE and INFO, of which the
# first RB_COUNT are valid. set_table() fills the table in once LiteX has placed every CSR block
# (NICSoC.finalize); every value is a constant.
#
# Parameters: data_width (PCIe datapath bits), ndmas (LitePCIe DMA channels), sim (1 for the
# simulation target), with_cpu (1 when a soft CPU is built in), sys_clk_freq (Hz).

from migen import Constant

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRField, CSRStatus

from rtl.contract.regblocks import ENTRY_WORDS, MAGIC, RB_MAX, VERSION_MAJOR, VERSION_MINOR

ENTRY_NAMES = ("type", "version", "base", "info")
assert len(ENTRY_NAMES) == ENTRY_WORDS


class NICInfo(LiteXModule):
    def __init__(self, data_width, ndmas, sim, with_cpu, sys_clk_freq):
        self.magic = CSRStatus(32, reset=MAGIC,
            description=f"Identification: reads {MAGIC:#010x} (\"NIC1\") on this design.")
        self.version = CSRStatus(fields=[
            CSRField("minor", size=16, reset=VERSION_MINOR, description="Minor version."),
            CSRField("major", size=16, reset=VERSION_MAJOR, description="Major version."),
        ], description="Design version.")
        self.config = CSRStatus(fields=[
            CSRField("data_width", size=10, reset=data_width,
                     description="PCIe datapath width in bits (64 or 128)."),
            CSRField("ndmas", size=6, reset=ndmas, description="LitePCIe DMA channels."),
            CSRField("sim", size=1, reset=int(sim),
                     description="``1``: simulation target (host model in place of the hard IP)."),
            CSRField("cpu", size=1, reset=int(with_cpu), description="``1``: soft CPU present."),
        ], description="Build-time configuration.")
        self.clk_freq = CSRStatus(32, reset=int(sys_clk_freq),
            description="System clock frequency in Hz (the NIC's cycle counters and coalescing "
                        "ticks count this clock).")
        self.bus_base = CSRStatus(32, description="Where BAR0 offset 0 is on the SoC bus (the "
                                  "soft CPU's address of these registers).")
        self.rb_count = CSRStatus(8, description="Valid entries of the register-block table.")
        descriptions = {
            "type": "Register block type (rtl/contract/regblocks.py).",
            "version": "Block version: major << 16 | CRC-16 of its register layout.",
            "base": "The block's BAR0 offset.",
            "info": "First MSI number (7..0, 0xff: none), MSI count (15..8), block "
                    "parameter (31..16).",
        }
        self._table = []
        for i in range(RB_MAX):
            entry = []
            for word in ENTRY_NAMES:
                csr = CSRStatus(32, name=f"rb{i}_{word}",
                                description=f"Table entry {i}: {descriptions[word]}")
                setattr(self, f"rb{i}_{word}", csr)
                entry.append(csr)
            self._table.append(entry)

    def set_table(self, entries, bus_base):
        """entries: (type, version, base, info) tuples, at most RB_MAX; bus_base: the CSR
        region's SoC bus address."""
        self.bus_base.status.reset = Constant(bus_base, 32)
        if len(entries) > RB_MAX:
            raise ValueError(f"NICInfo: {len(entries)} register blocks, room for {RB_MAX}")
        self.rb_count.status.reset = Constant(len(entries), 8)
        for csrs, values in zip(self._table, entries):
            for csr, v in zip(csrs, values):
                csr.status.reset = Constant(v, 32)
