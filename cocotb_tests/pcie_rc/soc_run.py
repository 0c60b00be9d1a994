# SPDX-License-Identifier: BSD-2-Clause
#
# soc_run.py: build the SoC's Verilog (build/sim_dw<W>/gateware/, from `make sim W=<W>`) with
# Verilator for cocotb and run a cocotb testbench on it; the sibling of cocotb_tests/cocotb_run.py
# (which emits Amaranth cores) for a LiteX SoC whose file list is gateware/sources.f.
#
# Interfaces: build(width, jobs) -> (runner, sim_build); run(width, tb_module, env, tag,
# testcase) -> number of cocotb tests (fails with cocotb_run's message format); soc_gateware(width).
# `python -m cocotb_tests.pcie_rc.soc_run --width W --jobs N`: the build alone (`make test` makes
# it before pytest, on every core, so no test waits for it).
# Files go to build/cocotb/soc_pcie_dw<W>/: sim_build/ (one Verilator build per data width,
# reused while the stamp of the sources, their init files, the arguments and the Verilator version
# matches) and run_<tag>/ (results.xml, sim.log).
# Parameters: width (64 or 128, the SoC's PCIe data width).

import argparse
import hashlib
import warnings
from pathlib import Path

from cocotb_tests.cocotb_run import BUILD, REPO, _environ, _locked, _verilator_version, run_built

TOP = "nicsoc"
# The Makefile's lint waivers for the SoC (its VL_FLAGS without -O3 and the OPT_FAST split:
# cocotb's makefile sets its own), and a timescale for the modules without one.
BUILD_ARGS = ["-Wno-fatal", "-Wno-lint", "-Wno-style", "--timescale", "1ns/1ps",
              "-MAKEFLAGS", "OPT_FAST=-O2 OPT_SLOW=-O0"]


def soc_gateware(width):
    return REPO / "build" / f"sim_dw{width}" / "gateware"


def _sources(width):
    gw = soc_gateware(width)
    f = gw / "sources.f"
    if not f.exists():
        raise AssertionError(f"{f.relative_to(REPO)} is missing: build the SoC with "
                             f"`make sim W={width}` (`make test` builds it before pytest)")
    return [Path(s) for s in f.read_text().split()]


def build(width, jobs=1):
    """Verilates the SoC's sources.f into build/cocotb/soc_pcie_dw<W>/sim_build unless its stamp
    (sha256 of every source and *.init file, BUILD_ARGS, Verilator version) matches. `jobs` CPU
    cores (MAKEFLAGS=-j<jobs>), serialised by a file lock. Returns (runner, build_dir)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        from cocotb.runner import get_runner

    srcs = _sources(width)
    bdir = BUILD / f"soc_pcie_dw{width}"
    bdir.mkdir(parents=True, exist_ok=True)
    sim_build = bdir / "sim_build"
    h = hashlib.sha256()
    for p in srcs + sorted(soc_gateware(width).glob("*.init")):
        h.update(p.name.encode() + p.read_bytes())
    h.update("\n".join([*BUILD_ARGS, _verilator_version()]).encode())
    stamp_text = h.hexdigest()
    stamp = sim_build / "stamp"
    runner = get_runner("verilator")
    with _locked(bdir / ".lock"):
        fresh = stamp.exists() and stamp.read_text() == stamp_text and (sim_build / TOP).exists()
        if not fresh:
            stamp.unlink(missing_ok=True)
            with _environ(MAKEFLAGS=f"-j{jobs}", PYTEST_CURRENT_TEST=None):
                runner.build(verilog_sources=srcs, hdl_toplevel=TOP, build_dir=sim_build,
                             build_args=BUILD_ARGS, always=True, log_file=bdir / "build.log")
            if not (sim_build / TOP).exists():
                raise AssertionError(f"Verilator build of {TOP} failed: see {bdir}/build.log")
            stamp.write_text(stamp_text)
        else:
            runner.build_dir = sim_build
            runner.hdl_toplevel = TOP
            runner.verbose = False
            runner.verilog_sources, runner.vhdl_sources, runner.sources = srcs, [], []
    return runner, sim_build


def run(width, tb_module, env=None, tag="run", testcase=None):
    """Builds the SoC (build()) and runs cocotb module `tb_module` on it in
    build/cocotb/soc_pcie_dw<W>/run_<tag> with `env` (non-strings as JSON). Fails unless the
    results list at least one test and no failure; testcase: the cocotb tests to run (comma-
    separated; None: all). Returns the number of tests."""
    runner, sim_build = build(width)
    return run_built(runner, sim_build, TOP, tb_module,
                     BUILD / f"soc_pcie_dw{width}" / f"run_{tag}", env, testcase,
                     label=f"{TOP} dw{width} [{tag}]")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Verilate the SoC for the cocotb tests (reused "
                                 "while its sources match).")
    ap.add_argument("--width", type=int, choices=(64, 128), default=128)
    ap.add_argument("--jobs", type=int, default=1)
    a = ap.parse_args()
    build(a.width, jobs=max(1, a.jobs))
