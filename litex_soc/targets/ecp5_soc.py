# SPDX-License-Identifier: BSD-2-Clause
#
# ecp5_soc.py: the NIC SoC as the open ECP5 targets build it, shared by the ECPIX-5 board
# (ecpix5.py) and its Verilator model (ecp5_sim.py): the same NIC datapath (data width 64) with
# its host port on the SoC bus (litex_soc/nic/host_port.py: the DMA engines read and write SoC
# RAM through Wishbone masters), VexRiscv running the firmware (firmware/) from its ROM, the
# NIC's interrupt vectors as one CPU interrupt, and the bus analyzer's probes and trace.
#
# Memory: ROM (the firmware's code and constants), SRAM (its data and stack), main RAM (its
# rings and buffers: what host memory is on PCIe), all block RAM. Timer0 with its uptime
# counter (the firmware's cycle counter).
# The analyzer: the whole one, as the PCIe builds have it (the same registers and layout); its
# PCIe and LitePCIe DMA probes see nothing; the CSR probe watches the CPU's CSR bridge, the msi
# probe the CPU interrupt's events; the breakdowns and events time the Wishbone adapters' and
# the CPU's hand-offs (litex_soc/nicscope/socbus_handoffs.py), the deep capture writes its ring
# into main RAM through a Wishbone master; the MAC probes watch the PHY's streams when the PHY
# runs on the sys clock (the simulation), else the MAC core's sys-side streams (beats and
# frames; bytes read 0).
#
# Interfaces: ECP5NICSoC(platform, crg, eth_phy, sys_clk_freq, uart_name, build_dir, sim,
# with_analyzer, phy_on_sys_clock);
# init_mems() (Builder's hook, after LiteX wrote the generated headers) builds the firmware
# against them (make -C firmware) and puts it in the ROM. Parameters: the constants below.

import re
import subprocess
from pathlib import Path

from litex.soc.integration.soc_core import get_mem_data

from litex_soc import regblocks
from litex_soc.nic_soc import NICSoC

DATA_WIDTH = 64
ROM_SIZE = 0x10000
SRAM_SIZE = 0x4000
MAIN_RAM_SIZE = 0x10000
ROOT = Path(__file__).resolve().parents[2]
# The analyzer registers the firmware reads (firmware/cmd_nicscope.c) at nic_regs.h's offsets.
SCOPE_REGS = ("control", "cnt_sel", "cnt_value", "cnt_status", "bd_info", "wbd_info")


def check_scope_offsets(soc, header=ROOT / "sw" / "include" / "nic_regs.h"):
    """The analyzer registers the firmware uses must be where nic_regs.h says."""
    text = Path(header).read_text()
    words = {name: word for name, word, *_ in regblocks.layout(soc.csr.regions["analyzer"])}
    for reg in SCOPE_REGS:
        m = re.search(rf"#define NIC_CSR_ANALYZER_{reg.upper()}_ADDR (0x[0-9a-f]+)u", text)
        if m is None or reg not in words or 4 * words[reg] != int(m.group(1), 16):
            raise ValueError(f"analyzer register {reg}: offset {4 * words.get(reg, -1):#x} in "
                             f"this SoC, {m.group(1) if m else 'none'} in {header}")


def firmware_bin(output_dir):
    return Path(output_dir) / "firmware" / "firmware.bin"


def build_firmware(output_dir):
    """make -C firmware against the LiteX build in output_dir; returns firmware.bin's path."""
    out = Path(output_dir).resolve()
    cmd = ["make", "-s", "-C", str(ROOT / "firmware"), f"LITEX_BUILD={out}",
           f"OUT={out / 'firmware'}"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"firmware build failed ({' '.join(cmd)}):\n{r.stdout}")
    return firmware_bin(output_dir)


class ECP5NICSoC(NICSoC):
    def __init__(self, platform, crg, eth_phy, sys_clk_freq, uart_name="serial",
                 build_dir="build", sim=False, with_analyzer=True, phy_on_sys_clock=False):
        # A PHY on its own clocks (the board's RGMII): the analyzer's MAC probes move to the MAC
        # core's sys-side streams (nic_soc.py, add_nic_probes).
        self.mac_probes_sys_side = not phy_on_sys_clock
        cpu_args = dict(cpu_type="vexriscv", cpu_variant="lite", integrated_rom_size=ROM_SIZE,
                        integrated_sram_size=SRAM_SIZE, integrated_main_ram_size=MAIN_RAM_SIZE,
                        uart_name=uart_name, timer_uptime=True)
        NICSoC.__init__(self, platform, crg, None, eth_phy, sys_clk_freq=sys_clk_freq,
                        with_cpu=True, build_dir=build_dir, sim=sim,
                        ident="open FPGA NIC", with_analyzer=with_analyzer,
                        data_width=DATA_WIDTH, cpu_args=cpu_args)

    def finalize(self):
        if self.finalized:
            return
        super().finalize()
        if hasattr(self, "analyzer"):
            check_scope_offsets(self)

    def init_mems(self, **kwargs):
        # Builder calls this once csr.h, soc.h, mem.h are written under its output_dir.
        output_dir = self.platform.output_dir
        path = build_firmware(output_dir)
        data = get_mem_data(str(path), data_width=self.bus.data_width,
                            endianness=self.cpu.endianness)
        if 4 * len(data) > ROM_SIZE:
            raise ValueError(f"firmware {path} is {4 * len(data)} bytes, the ROM {ROM_SIZE}")
        self.init_rom(name="rom", contents=data, auto_size=False)
