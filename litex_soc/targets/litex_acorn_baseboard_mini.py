#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# litex_acorn_baseboard_mini.py: the NIC SoC on the LiteX Acorn Baseboard Mini (Acorn CLE-215+,
# XC7A200T-3): PCIe Gen2 x1 to the host through LitePCIe's S7PCIEPHY (Vivado's pcie_7x core,
# 64-bit interface at 125 MHz), 1000BASE-X on SFP 0 through LiteEth's A7_1000BASEX, both on
# GTP quad 216 with one GTPE2_COMMON: PCIe on its PLL0 from the host's 100 MHz REFCLK,
# 1000BASE-X on PLL1 from a 125 MHz clock made from the board's 200 MHz oscillator (the
# host's REFCLK may be spread-spectrum, which 1000BASE-X cannot follow). LEDs: D1 PCIe link
# up, D2 SFP link up.
#
# Usage: python -m litex_soc.targets.litex_acorn_baseboard_mini
#            --output-dir build/board_litex_acorn_baseboard_mini [--build]
# (board.py: what it writes; `make bitstream BOARD=litex_acorn_baseboard_mini`).
#
# Pins and timing: constraints/litex_acorn_baseboard_mini.py. Parameters of BaseSoC: build_dir
# (where the Amaranth cores' Verilog goes), sys_clk_freq, with_analyzer.

from migen import ClockDomain, Signal

from litex.build.io import DifferentialInput
from litex.gen import LiteXModule
from litex.soc.cores.clock import S7PLL

from liteeth.phy.a7_1000basex import A7_1000BASEX
from liteeth.phy.a7_gtp import QPLL, QPLLSettings
from liteiclink.serdes.gtp_7series import GTPQuadPLL
from litepcie.phy.s7pciephy import S7PCIEPHY

from constraints import litex_acorn_baseboard_mini as pins
from litex_soc.nic_soc import NICSoC
from litex_soc.targets import board

BOARD = "litex_acorn_baseboard_mini"
DESCRIPTION = "LiteX Acorn Baseboard Mini (Acorn CLE-215+, PCIe Gen2 x1, 1000BASE-X SFP)"
PCIE_REFCLK_FREQ = 100e6
ETH_REFCLK_FREQ = 125e6
# GTPE2_COMMON reference clock selects: PLL0 from GTREFCLK0, PLL1 from GTGREFCLK1 (fabric).
REFCLKSEL_GTREFCLK0 = 0b001
REFCLKSEL_GTGREFCLK = 0b111


class _CRG(LiteXModule):
    """sys (sys_clk_freq) and eth_ref (125 MHz, the 1000BASE-X PLL's reference) from the 200 MHz
    oscillator through one PLL."""

    def __init__(self, platform, sys_clk_freq):
        self.rst = Signal()
        self.cd_sys = ClockDomain()
        self.cd_eth_ref = ClockDomain()
        clk200 = platform.request("clk200")
        clk200_se = Signal()
        self.specials += DifferentialInput(clk200.p, clk200.n, clk200_se)
        self.pll = pll = S7PLL(speedgrade=-3)
        self.comb += pll.reset.eq(self.rst)
        pll.register_clkin(clk200_se, 200e6)
        pll.create_clkout(self.cd_sys, sys_clk_freq)
        pll.create_clkout(self.cd_eth_ref, ETH_REFCLK_FREQ, margin=0)
        platform.add_false_path_constraints(self.cd_sys.clk, pll.clkin)


def qpll_settings(refclksel, refclk_freq, linerate):
    c = GTPQuadPLL.compute_config(refclk_freq, linerate)
    return QPLLSettings(refclksel=refclksel, fbdiv=c["n2"], fbdiv_45=c["n1"], refclk_div=c["m"])


class BaseSoC(NICSoC):
    ethernet = "1000BASE-X on SFP 0 (A7_1000BASEX, GTP PLL1)"

    def __init__(self, build_dir, sys_clk_freq=board.SYS_CLK_FREQ, with_analyzer=True):
        # The PHY's streams are on the GTP's clocks: the analyzer's MAC probes watch the MAC
        # core's sys-side streams (nic_soc.py, add_nic_probes).
        self.mac_probes_sys_side = True
        platform = board.S7BoardPlatform(pins)
        crg = _CRG(platform, sys_clk_freq)
        pcie_phy = S7PCIEPHY(platform, platform.request("pcie_x1"), data_width=64,
                             refclk_freq=PCIE_REFCLK_FREQ, bar0_size=board.BAR0_SIZE,
                             msi_type="msi-multi-vector")
        # One GTPE2_COMMON for the quad: PLL0 for PCIe (5 Gb/s), PLL1 for 1000BASE-X.
        qpll = QPLL(gtrefclk0=pcie_phy.pcie_refclk,
                    qpllsettings0=qpll_settings(REFCLKSEL_GTREFCLK0, PCIE_REFCLK_FREQ, 5e9),
                    gtgrefclk1=crg.cd_eth_ref.clk,
                    qpllsettings1=qpll_settings(REFCLKSEL_GTGREFCLK, ETH_REFCLK_FREQ, 1.25e9))
        pcie_phy.use_external_qpll(qpll.channels[0])
        ethphy = A7_1000BASEX(qpll.channels[1], platform.request("sfp", 0), sys_clk_freq,
                              with_csr=False, rx_polarity=pins.SFP0_RX_POLARITY,
                              tx_polarity=pins.SFP0_TX_POLARITY)
        NICSoC.__init__(self, platform, crg, pcie_phy, ethphy, sys_clk_freq=sys_clk_freq,
                        build_dir=build_dir, sim=False, with_analyzer=with_analyzer)
        self.qpll = qpll
        board.configure_pcie(self)

        # The GTP's 62.5 MHz outputs, asynchronous to sys.
        platform.add_period_constraint(ethphy.txoutclk, 1e9 / 62.5e6)
        platform.add_period_constraint(ethphy.rxoutclk, 1e9 / 62.5e6)
        platform.add_false_path_constraints(crg.cd_sys.clk, ethphy.txoutclk, ethphy.rxoutclk)

        self.comb += [
            board.active_low_led(platform, 0, pcie_phy._link_status.fields.status),
            board.active_low_led(platform, 1, ethphy.link_up),
        ]


def main():
    return board.main(BOARD, DESCRIPTION, BaseSoC)


if __name__ == "__main__":
    raise SystemExit(main())
