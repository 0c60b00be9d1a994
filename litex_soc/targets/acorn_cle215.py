#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# acorn_cle215.py: the NIC SoC on the bare SQRL Acorn CLE-215+ (M.2 card, XC7A200T-3): PCIe Gen2
# x4 to the host through LitePCIe's S7PCIEPHY (Vivado's pcie_7x core, 128-bit interface at
# 125 MHz, its own GTPE2_COMMON on the host's REFCLK). The card has no Ethernet: the MAC runs on
# LoopbackEthPHY (loopback_eth_phy.py), so DMA, the TX queues, RX and the analyzer work as in
# the simulation with its loopback. sys is 125 MHz from the 200 MHz oscillator. LEDs: D1 PCIe
# link up.
#
# Usage: python -m litex_soc.targets.acorn_cle215 --output-dir build/board_acorn_cle215 [--build]
# (board.py: what it writes; `make bitstream BOARD=acorn_cle215`).
#
# Pins and timing: constraints/acorn_cle215.py. Parameters of BaseSoC: build_dir (where the
# Amaranth cores' Verilog goes), sys_clk_freq, with_analyzer.

from migen import ClockDomain, Signal

from litex.build.io import DifferentialInput
from litex.gen import LiteXModule
from litex.soc.cores.clock import S7PLL

from litepcie.phy.s7pciephy import S7PCIEPHY

from constraints import acorn_cle215 as pins
from litex_soc.nic_soc import NICSoC
from litex_soc.targets import board
from litex_soc.targets.loopback_eth_phy import LoopbackEthPHY

BOARD = "acorn_cle215"
DESCRIPTION = "SQRL Acorn CLE-215+ (PCIe Gen2 x4, MAC on an internal loopback)"


class _CRG(LiteXModule):
    """sys (sys_clk_freq) from the 200 MHz oscillator."""

    def __init__(self, platform, sys_clk_freq):
        self.rst = Signal()
        self.cd_sys = ClockDomain()
        clk200 = platform.request("clk200")
        clk200_se = Signal()
        self.specials += DifferentialInput(clk200.p, clk200.n, clk200_se)
        self.pll = pll = S7PLL(speedgrade=-3)
        self.comb += pll.reset.eq(self.rst)
        pll.register_clkin(clk200_se, 200e6)
        pll.create_clkout(self.cd_sys, sys_clk_freq)
        platform.add_false_path_constraints(self.cd_sys.clk, pll.clkin)


class BaseSoC(NICSoC):
    ethernet = "none: the MAC on an internal loopback (LoopbackEthPHY)"

    def __init__(self, build_dir, sys_clk_freq=board.SYS_CLK_FREQ, with_analyzer=True):
        platform = board.S7BoardPlatform(pins)
        crg = _CRG(platform, sys_clk_freq)
        pcie_phy = S7PCIEPHY(platform, platform.request("pcie_x4"), data_width=128,
                             bar0_size=board.BAR0_SIZE, msi_type="msi-multi-vector")
        NICSoC.__init__(self, platform, crg, pcie_phy, LoopbackEthPHY(),
                        sys_clk_freq=sys_clk_freq, build_dir=build_dir, sim=False,
                        with_analyzer=with_analyzer)
        board.configure_pcie(self)
        # CLKREQ#: the card asks for REFCLK all the time.
        self.comb += [
            platform.request("pcie_clkreq_n").eq(0),
            board.active_low_led(platform, 0, pcie_phy._link_status.fields.status),
        ]


def main():
    return board.main(BOARD, DESCRIPTION, BaseSoC)


if __name__ == "__main__":
    raise SystemExit(main())
