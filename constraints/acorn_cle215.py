# SPDX-License-Identifier: BSD-2-Clause
#
# acorn_cle215.py: pins and timing of the SQRL Acorn CLE-215+, an M.2 2280 (M key) card with an
# Artix-7 XC7A200T-3 in FBG484, a 200 MHz oscillator, 1 GiB DDR3 (not used by the NIC), a 4-lane
# PCIe connection on GTP quad 216 with the host's 100 MHz reference clock, four LEDs and a
# quad-SPI configuration flash. The NiteFury is the same board.
#
# What it gives: PART, IO (LiteX generic_platform records), CLOCKS (name -> period in ns), the
# Vivado properties (PLATFORM_COMMANDS, BITSTREAM_COMMANDS), and MODULE_IO, the pins the
# Acorn's carrier boards reach (litex_acorn_baseboard_mini.py builds on them).
#
# Source of the pin facts: the card's published pin list (LiteX board support, litex-boards
# sqrl_acorn). PCIe lane i of the M.2 connector is entry i of the lane lists below, the order
# Vivado's 4-lane pcie_7x core places its lanes in.

from litex.build.generic_platform import IOStandard, Misc, Pins, Subsignal

PART = "xc7a200t-fbg484-3"
# openFPGALoader's name for the board (`openFPGALoader --list-boards`): the bare card has no
# cable of its own, so `make flash` needs CABLE= (an FT2232/FT232 or Digilent cable on its JTAG
# header).
OPENFPGALOADER_BOARD = "acornCle215"

# The pins every carrier of the module shares: the clock, the LEDs, the flash, PCIe reset.
MODULE_IO = [
    # 200 MHz LVDS oscillator, on bank 34 (SSTL15: the DDR3 bank).
    ("clk200", 0,
        Subsignal("p", Pins("J19"), IOStandard("DIFF_SSTL15")),
        Subsignal("n", Pins("H19"), IOStandard("DIFF_SSTL15"))),
    # LEDs D1..D4, lit when driven low.
    ("user_led_n", 0, Pins("G3"), IOStandard("LVCMOS33")),
    ("user_led_n", 1, Pins("H3"), IOStandard("LVCMOS33")),
    ("user_led_n", 2, Pins("G4"), IOStandard("LVCMOS33")),
    ("user_led_n", 3, Pins("H4"), IOStandard("LVCMOS33")),
    # Quad-SPI configuration flash (CCLK is the dedicated configuration pin).
    ("spiflash4x", 0,
        Subsignal("cs_n", Pins("T19")),
        Subsignal("dq", Pins("P22 R22 P21 R21")),
        IOStandard("LVCMOS33")),
]

IO = MODULE_IO + [
    # M.2 PERST# and the 4-lane link (MGTREFCLK0 of quad 216 takes the host's REFCLK).
    ("pcie_x4", 0,
        Subsignal("rst_n", Pins("J1"), IOStandard("LVCMOS33"), Misc("PULLUP=TRUE")),
        Subsignal("clk_p", Pins("F6")),
        Subsignal("clk_n", Pins("E6")),
        Subsignal("rx_p", Pins("B10 B8 D11 D9")),
        Subsignal("rx_n", Pins("A10 A8 C11 C9")),
        Subsignal("tx_p", Pins("B6 B4 D5 D7")),
        Subsignal("tx_n", Pins("A6 A4 C5 C7"))),
    ("pcie_clkreq_n", 0, Pins("G1"), IOStandard("LVCMOS33")),
]

# The GTP channel of each M.2 lane (lane i: pins of entry i above), from the card's published
# XDC (lane 0 B10/B6 X0Y6, lane 1 B8/B4 X0Y4, lane 2 D11/D5 X0Y5, lane 3 D9/D7 X0Y7): the 4-lane
# core's lanes are placed on them, whatever the core's own default order.
LANE_CHANNELS = ["GTPE2_CHANNEL_X0Y6", "GTPE2_CHANNEL_X0Y4", "GTPE2_CHANNEL_X0Y5",
                 "GTPE2_CHANNEL_X0Y7"]


def lane_placement(channels):
    """Vivado commands placing the pcie_7x core's lane i on channels[i]: every lane's LOC from
    the core's constraints is removed first, so no site is taken twice (`?` for the brackets
    of pipe_lane[i], which a filter pattern would read as a character class)."""
    cells = [("[get_cells -hierarchical -filter "
              f"{{{{NAME=~pcie_s7/*pipe_lane?{i}?.gt_wrapper_i/gtp_channel.gtpe2_channel_i}}}}]")
             for i in range(len(channels))]
    return ([f"reset_property LOC {c}" for c in cells]
            + [f"set_property LOC {ch} {c}" for ch, c in zip(channels, cells)])


PLACEMENT_COMMANDS = lane_placement(LANE_CHANNELS)

# Clock periods (ns) of the board's clock inputs; the PCIe reference clock's (10 ns) is added by
# LitePCIe's S7PCIEPHY.
CLOCKS = {"clk200": 1e9 / 200e6}

PLATFORM_COMMANDS = [
    # Bank 34 holds the SSTL15 clock input and the DDR3: its reference voltage is internal.
    "set_property INTERNAL_VREF 0.750 [get_iobanks 34]",
]

BITSTREAM_COMMANDS = [
    "set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]",
    "set_property BITSTREAM.CONFIG.CONFIGRATE 16 [current_design]",
    "set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]",
    "set_property CFGBVS VCCO [current_design]",
    "set_property CONFIG_VOLTAGE 3.3 [current_design]",
]
