# SPDX-License-Identifier: BSD-2-Clause
#
# litex_acorn_baseboard_mini.py: pins and timing of the LiteX Acorn Baseboard Mini, a carrier
# for the Acorn CLE-215+ (acorn_cle215.py): the M.2 card's four GTP lanes are split into a PCIe
# Gen2 x1 link to the host (a PCIe x1 edge), two SFP cages and a SATA port; an FT4232 gives JTAG
# and a UART.
#
# What it gives: as acorn_cle215.py (PART, IO, CLOCKS, PLATFORM_COMMANDS, BITSTREAM_COMMANDS)
# and PLACEMENT_COMMANDS: the x1 core's GTP channel, which Vivado would otherwise put on lane 0's.
#
# Source of the pin facts: the baseboard's published pin list (litex-boards sqrl_acorn,
# "litex_acorn_baseboard_mini" extension), the card's lane-to-channel XDC (acorn_cle215.py) and
# Enjoy-Digital's LiteX-WR-NIC target for this board (the x1 lane's channel, X0Y7, agrees; the
# SFP's receive polarity). The PCIe lane and SFP 0 share GTP quad
# 216 and so one GTPE2_COMMON: PCIe on its PLL0 from the host's REFCLK, 1000BASE-X on PLL1.

from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal

from constraints import acorn_cle215

PART = acorn_cle215.PART
# openFPGALoader's name for the board; the baseboard's FT4232 is its JTAG cable.
OPENFPGALOADER_BOARD = "litex-acorn-baseboard-mini"

IO = acorn_cle215.MODULE_IO + [
    # PCIe x1 edge: PERST#, REFCLK and lane 3 of the M.2 card.
    ("pcie_x1", 0,
        Subsignal("rst_n", Pins("J1"), IOStandard("LVCMOS33"), Misc("PULLUP=TRUE")),
        Subsignal("clk_p", Pins("F6")),
        Subsignal("clk_n", Pins("E6")),
        Subsignal("rx_p", Pins("D9")),
        Subsignal("rx_n", Pins("C9")),
        Subsignal("tx_p", Pins("D7")),
        Subsignal("tx_n", Pins("C7"))),
    # SFP cages: lane 2 (SFP 0) and lane 1 (SFP 1) of the M.2 card.
    ("sfp", 0,
        Subsignal("txp", Pins("D5")), Subsignal("txn", Pins("C5")),
        Subsignal("rxp", Pins("D11")), Subsignal("rxn", Pins("C11"))),
    ("sfp", 1,
        Subsignal("txp", Pins("B4")), Subsignal("txn", Pins("A4")),
        Subsignal("rxp", Pins("B8")), Subsignal("rxn", Pins("A8"))),
    ("sfp_i2c", 0,
        Subsignal("sda", Pins("Y12")), Subsignal("scl", Pins("Y11")),
        IOStandard("LVCMOS18")),
    # FT4232 UART, on the M.2 card's CLKREQ# and SMB_ALERT# pins.
    ("serial", 0,
        Subsignal("tx", Pins("G1"), IOStandard("LVCMOS33")),
        Subsignal("rx", Pins("Y13"), IOStandard("LVCMOS18"))),
]

# SFP 0's receive pair is inverted between the cage and the FPGA; its transmit pair is not.
SFP0_RX_POLARITY = 1
SFP0_TX_POLARITY = 0

CLOCKS = acorn_cle215.CLOCKS
PLATFORM_COMMANDS = acorn_cle215.PLATFORM_COMMANDS
BITSTREAM_COMMANDS = acorn_cle215.BITSTREAM_COMMANDS

# The x1 core's GTP channel is the one on pins D9/C9 and D7/C7 (the card's lane 3).
PCIE_X1_CHANNEL = acorn_cle215.LANE_CHANNELS[3]
PLACEMENT_COMMANDS = acorn_cle215.lane_placement([PCIE_X1_CHANNEL])
