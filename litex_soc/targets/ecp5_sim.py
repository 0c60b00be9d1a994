#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# ecp5_sim.py: the open ECP5 target's SoC (ecp5_soc.py, the same one ecpix5.py puts on the
# board) for Verilator, minus the board: one clock (sys_clk, sys_rst pins), the console's UART
# as LiteX's simulation UART (a byte stream on pins, no baud rate: serial_source_* out,
# serial_sink_* in) and the Ethernet PHY as SimEthGMIIPHY's GMII-like pins (eth_*), which the
# harness (firmware/sim/ecp5_sim_main.cpp) loops back. The system clock frequency the firmware
# and the NIC's coalescing ticks use is the board's; the simulated Ethernet runs an octet per
# sys cycle (the board: 125 MHz against a 50 MHz sys clock), so frame timings differ.
#
# Usage: python -m litex_soc.targets.ecp5_sim --output-dir build/ecp5_sim [--firmware-only]
# Output: gateware/ecp5sim.v and sources.f (the Verilator inputs), the firmware in
# firmware/ (built against this SoC's headers and in its ROM), csr.csv/csr.json.
# --firmware-only: the firmware rebuilt against the headers already there and written to the
# ROM's init file (gateware/ecp5sim_rom.init, read by the model when it starts), so a firmware
# change needs no new Verilog and no new Verilator build.

import argparse
import os
from pathlib import Path

from litex.build.generic_platform import Pins, Subsignal
from litex.build.io import CRG
from litex.soc.integration.builder import Builder
from litex.soc.integration.soc_core import get_mem_data

from litex_soc.targets.ecp5_soc import ROM_SIZE, ECP5NICSoC, build_firmware
from litex_soc.targets.ecpix5 import SYS_CLK_FREQ
from litex_soc.targets.sim import VerilogPlatform
from litex_soc.targets.sim_eth_phy import SimEthGMIIPHY

TOP = "ecp5sim"


def sim_io():
    return [
        ("sys_clk", 0, Pins(1)),
        ("sys_rst", 0, Pins(1)),
        ("serial", 0,
            Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)),
            Subsignal("source_data", Pins(8)),
            Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)),
            Subsignal("sink_data", Pins(8)),
        ),
        ("eth", 0,
            Subsignal("tx_data", Pins(8)), Subsignal("tx_en", Pins(1)),
            Subsignal("tx_er", Pins(1)),
            Subsignal("rx_data", Pins(8)), Subsignal("rx_dv", Pins(1)),
            Subsignal("rx_er", Pins(1)),
        ),
    ]


class ECP5SimPlatform(VerilogPlatform):
    def __init__(self):
        from litex.build.generic_platform import GenericPlatform
        GenericPlatform.__init__(self, "sim", sim_io(), name=TOP)


def make_soc(output_dir):
    platform = ECP5SimPlatform()
    crg = CRG(platform.request("sys_clk"), platform.request("sys_rst"))
    eth = SimEthGMIIPHY(platform.request("eth"))
    return ECP5NICSoC(platform, crg, eth, SYS_CLK_FREQ, uart_name="sim",
                      build_dir=os.path.join(output_dir, "gateware"), sim=True,
                      phy_on_sys_clock=True)


def write_rom_init(output_dir):
    """Rebuild the firmware and write it as the ROM's init file (one 32-bit word a line, as
    LiteX writes it; the rest of the ROM reads 0)."""
    words = get_mem_data(str(build_firmware(output_dir)), data_width=32, endianness="little")
    if 4 * len(words) > ROM_SIZE:
        raise ValueError(f"firmware is {4 * len(words)} bytes, the ROM {ROM_SIZE}")
    words += [0] * (ROM_SIZE // 4 - len(words))
    init = Path(output_dir) / "gateware" / f"{TOP}_rom.init"
    init.write_text("".join(f"{w:08x}\n" for w in words))


def main():
    p = argparse.ArgumentParser(description="The open ECP5 target's SoC for Verilator.")
    p.add_argument("--output-dir", default="build/ecp5_sim")
    p.add_argument("--firmware-only", action="store_true",
                   help="rebuild the firmware into the existing build's ROM init file")
    a = p.parse_args()
    if a.firmware_only:
        write_rom_init(a.output_dir)
        return
    gateware = os.path.join(a.output_dir, "gateware")
    soc = make_soc(a.output_dir)
    builder = Builder(soc, output_dir=a.output_dir, gateware_dir=gateware,
                      compile_software=False, compile_gateware=False,
                      csr_csv=os.path.join(a.output_dir, "csr.csv"),
                      csr_json=os.path.join(a.output_dir, "csr.json"))
    builder.build(build_name=TOP)


if __name__ == "__main__":
    main()
