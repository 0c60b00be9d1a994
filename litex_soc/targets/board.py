# SPDX-License-Identifier: BSD-2-Clause
#
# board.py: what every Xilinx 7-series PCIe board target shares: the platform made from a
# constraints module (constraints/<board>.py), the PCIe core's configuration, the generated
# files and the command line. A target (litex_acorn_baseboard_mini.py, acorn_cle215.py) adds
# only its platform, PHYs and clocking around the one NIC SoC (litex_soc/nic_soc.py).
#
# Command line of every board target (the Makefile's `bitstream` rule relies on it):
#   python -m litex_soc.targets.<board> --output-dir build/board_<board> [--build]
#       [--without-analyzer]
# Writes, under --output-dir: gateware/ (nicsoc.v, the Amaranth cores' Verilog, nicsoc.xdc, the
# Vivado project nicsoc.tcl with the pcie_7x core's create_ip, build_nicsoc.sh), yosys/ (the
# file list and the pcie_s7 blackbox for litex_soc/targets/synth_size.py), csr.csv, csr.json,
# register_map.md, host_include/ (csr.h, soc.h, nic_contract.h) and board.json (the board's
# PCIe link, part, openFPGALoader name and whether the analyzer is in). --build then runs
# Vivado on the project (gateware/nicsoc.bit, .bin for the SPI flash), or exits 2 naming what
# is missing. --without-analyzer leaves the bus analyzer out (a board that cannot afford it;
# make test's quick size check).
#
# Parameters of S7BoardPlatform: the constraints module (PART, IO, CLOCKS, PLATFORM_COMMANDS,
# BITSTREAM_COMMANDS, optional PLACEMENT_COMMANDS).

import argparse
import json
import os
import shutil
import subprocess
import sys

from litex.build.xilinx import Xilinx7SeriesPlatform
from litex.soc.integration import export
from litex.soc.integration.builder import Builder

from litex_soc.regmap import write_regmap
from rtl.contract.gen_c import write_header as write_contract_header

TOP = "nicsoc"
# PCI IDs the host tools and nicdrv.ko (sw/kernel/nicdrv.h) expect on every board.
PCI_VENDOR_ID = "10EE"
PCI_DEVICE_ID = "7024"
# BAR0: the SoC's CSR space, as the simulation's (sim_pcie_phy.py's default).
BAR0_SIZE = 0x100000
SYS_CLK_FREQ = 125e6


class S7BoardPlatform(Xilinx7SeriesPlatform):
    """A Xilinx 7-series platform from a constraints module (constraints/<board>.py)."""

    def __init__(self, constraints):
        Xilinx7SeriesPlatform.__init__(self, constraints.PART, constraints.IO,
                                       toolchain="vivado",
                                       name=constraints.__name__.rsplit(".", 1)[-1])
        self.constraints = constraints
        for cmd in constraints.PLATFORM_COMMANDS:
            self.add_platform_command(cmd)
        self.toolchain.bitstream_commands = list(constraints.BITSTREAM_COMMANDS)
        # The SPI flash image beside the bitstream (openFPGALoader's --write-flash takes both).
        self.toolchain.additional_commands = [
            "write_cfgmem -force -format bin -interface spix4 -size 16 "
            "-loadbit \"up 0x0 {build_name}.bit\" -file {build_name}.bin",
        ]
        for cmd in getattr(constraints, "PLACEMENT_COMMANDS", ()):
            self.toolchain.pre_placement_commands.append(cmd)

    def do_finalize(self, fragment):
        Xilinx7SeriesPlatform.do_finalize(self, fragment)
        for name, period in self.constraints.CLOCKS.items():
            self.add_period_constraint(self.lookup_request(name, loose=True), period)


def msi_vectors_option(n):
    """The pcie_7x core's Multiple_Message_Capable value for n MSI vectors."""
    for v in (1, 2, 4, 8, 16, 32):
        if n <= v:
            return f"{v}_vector" + ("s" if v > 1 else "")
    raise ValueError(f"{n} MSI vectors: MSI allows at most 32")


def bar_size_option(size):
    """(Bar0_Scale, Bar0_Size) of the pcie_7x core for a BAR of `size` bytes."""
    if size & (size - 1) or size < 128:
        raise ValueError(f"BAR0 size {size:#x}: a power of two of 128 bytes or more")
    if size >= 1 << 30:
        return "Gigabytes", size >> 30
    if size >= 1 << 20:
        return "Megabytes", size >> 20
    return "Kilobytes", size >> 10


def configure_pcie(soc):
    """The pcie_7x core's identity and capabilities for the NIC: its PCI IDs, class (Ethernet
    controller), BAR0 as the PHY decodes it, and as many MSI vectors as the SoC has (LitePCIe
    2024.12 asks for one whatever its MSI block). Call after NICSoC.__init__ (the MSIs are
    known), before finalize (the core's Tcl is written then)."""
    phy = soc.pcie_phy
    scale, size = bar_size_option(phy.bar0_size)
    phy.update_config({
        "Vendor_ID": PCI_VENDOR_ID,
        "Device_ID": PCI_DEVICE_ID,
        "Base_Class_Menu": "Network_controller",
        "Sub_Class_Interface_Menu": "Ethernet_controller",
        "Class_Code_Base": "02",
        "Class_Code_Sub": "00",
        "Class_Code_Interface": "00",
        "Bar0_Scale": scale,
        "Bar0_Size": size,
        "Multiple_Message_Capable": msi_vectors_option(len(soc.msis)),
    })


def active_low_led(platform, index, on):
    """Drives LED `index` (user_led_n, lit when low) with `on`; returns the statement."""
    pad = platform.request("user_led_n", index)
    return pad.eq(~on)


def write_host_files(soc, output_dir):
    """LiteX's csr.h and soc.h without access functions, the contract header and the register
    map, as the simulation target writes them (litex_soc/test_regmap.py checks those)."""
    host_inc = os.path.join(output_dir, "host_include")
    os.makedirs(host_inc, exist_ok=True)
    csr_h = export.get_csr_header(regions=soc.csr_regions, constants=soc.constants,
                                  csr_base=soc.mem_regions["csr"].origin,
                                  with_access_functions=False)
    with open(os.path.join(host_inc, "csr.h"), "w") as f:
        f.write(csr_h)
    with open(os.path.join(host_inc, "soc.h"), "w") as f:
        f.write(export.get_soc_header(soc.constants, with_access_functions=False))
    write_contract_header(os.path.join(host_inc, "nic_contract.h"))
    write_regmap(soc, os.path.join(output_dir, "register_map.md"))


def _port_width(value):
    if isinstance(value, int):
        return max(1, value.bit_length())
    try:
        return len(value)
    except TypeError:
        return 1


def pcie_s7_blackbox(phy):
    """A `(* blackbox *)` module with the ports LitePCIe's S7PCIEPHY connects on pcie_s7 (the
    core Vivado generates from the Tcl): open-tool synthesis of everything around it."""
    ports = []
    for key, value in sorted(phy.pcie_phy_params.items()):
        direction, name = key.split("_", 1)
        if direction not in ("i", "o"):
            continue
        w = _port_width(value)
        rng = f"[{w - 1}:0] " if w > 1 else ""
        ports.append(f"    {'input' if direction == 'i' else 'output'} wire {rng}{name}")
    return ("// The pcie_7x core's ports as S7PCIEPHY uses them: a blackbox for Yosys.\n"
            "(* blackbox *)\nmodule pcie_s7 (\n" + ",\n".join(ports) + "\n);\nendmodule\n")


def write_yosys_inputs(soc, gateware_dir, output_dir):
    """yosys/sources.f (every Verilog file of the design, absolute) and yosys/blackboxes.v."""
    ydir = os.path.join(output_dir, "yosys")
    os.makedirs(ydir, exist_ok=True)
    with open(os.path.join(ydir, "blackboxes.v"), "w") as f:
        f.write(pcie_s7_blackbox(soc.pcie_phy))
    paths = [os.path.abspath(p if os.path.isabs(p) else os.path.join(gateware_dir, p))
             for p, _language, _library in soc.platform.sources]
    top = os.path.abspath(os.path.join(gateware_dir, TOP + ".v"))
    with open(os.path.join(ydir, "sources.f"), "w") as f:
        for path in dict.fromkeys(paths + [top]):
            f.write(path + "\n")


def pcie_ip_config(tcl_path):
    """The pcie_7x core's CONFIG.* values in a generated Vivado project (its create_ip ...
    set_property -dict block), as strings; {} when the Tcl has no pcie_7x core."""
    cfg, inside = {}, False
    with open(tcl_path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("create_ip") and "-name pcie_7x" in line:
                inside = True
            elif inside and line.startswith("CONFIG."):
                key, value = line[len("CONFIG."):].split(" ", 1)
                cfg[key] = value.rstrip(" \\").strip("{}")
            elif inside and line.startswith("]"):
                break
    return cfg


def board_info(soc, board, description, tcl_path):
    phy = soc.pcie_phy
    cfg = pcie_ip_config(tcl_path)
    return {
        "board": board, "description": description, "part": soc.platform.device,
        "openfpgaloader_board": soc.platform.constraints.OPENFPGALOADER_BOARD,
        "pcie_lanes": phy.nlanes, "pcie_data_width": phy.data_width,
        "pcie_link_speed": cfg.get("Link_Speed"), "bar0_size": phy.bar0_size,
        "msi_vectors": len(soc.msis), "sys_clk_hz": soc.sys_clk_freq,
        "ethernet": soc.ethernet, "top": TOP, "analyzer": hasattr(soc, "analyzer"),
    }


def vivado_missing_message(output_dir):
    gw = os.path.join(output_dir, "gateware")
    return (f"make bitstream: Vivado was not found (no `vivado` on PATH; source Vivado's "
            f"settings64.sh first). Generated, ready for it: {gw}/{TOP}.tcl (the Vivado project "
            f"with the pcie_7x core's create_ip), {gw}/build_{TOP}.sh, {gw}/{TOP}.xdc, "
            f"{gw}/{TOP}.v; host headers in {output_dir}/host_include/. No bitstream was built.")


def main(board, description, make_soc):
    """The board targets' command line. make_soc(build_dir, with_analyzer=) returns the SoC."""
    parser = argparse.ArgumentParser(description=f"The NIC SoC on the {description}.")
    parser.add_argument("--output-dir", default=f"build/board_{board}")
    parser.add_argument("--build", action="store_true",
                        help="Run Vivado on the generated project (bitstream and flash image).")
    parser.add_argument("--without-analyzer", action="store_true",
                        help="Leave the bus analyzer out of the SoC.")
    args = parser.parse_args()

    output_dir = os.path.abspath(args.output_dir)
    gateware_dir = os.path.join(output_dir, "gateware")
    soc = make_soc(gateware_dir, with_analyzer=not args.without_analyzer)
    builder = Builder(soc, output_dir=output_dir, gateware_dir=gateware_dir,
                      compile_software=False, compile_gateware=False,
                      csr_csv=os.path.join(output_dir, "csr.csv"),
                      csr_json=os.path.join(output_dir, "csr.json"))
    builder.build(build_name=TOP, run=False)
    write_host_files(soc, output_dir)
    write_yosys_inputs(soc, gateware_dir, output_dir)
    with open(os.path.join(output_dir, "board.json"), "w") as f:
        json.dump(board_info(soc, board, description, os.path.join(gateware_dir, TOP + ".tcl")),
                  f, indent=1)
        f.write("\n")
    print(f"{board}: generated {gateware_dir}/{TOP}.tcl, {TOP}.v, {TOP}.xdc and "
          f"{output_dir}/host_include/")
    if not args.build:
        return 0
    if shutil.which("vivado") is None:
        print(vivado_missing_message(output_dir), file=sys.stderr)
        return 2
    r = subprocess.run(["bash", f"build_{TOP}.sh"], cwd=gateware_dir)
    if r.returncode != 0:
        print(f"make bitstream: Vivado failed (exit {r.returncode}); its logs are in "
              f"{gateware_dir}/", file=sys.stderr)
        return 1
    print(f"{board}: bitstream {gateware_dir}/{TOP}.bit, flash image {gateware_dir}/{TOP}.bin")
    return 0
