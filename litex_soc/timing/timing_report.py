#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# timing_report.py: a routed design's timing from nextpnr's JSON report (--report): per clock the
# Fmax against its constraint, and each critical path nextpnr reports (one per clock pair) cut
# into the cores it runs through, with their logic and routing delay and LUT levels. Exit status
# 1 when a clock misses its constraint.
#
# Usage: python -m litex_soc.timing.timing_report REPORT.json [--json OUT]
#   REPORT.json: nextpnr's --report of a routed run (make bitstream BOARD=ecpix5:
#   build/board_ecpix5/gateware/nextpnr_report.json; the cost flow: <dir>/pnr_report.json).
#
# The core of a cell is read from its name (CORES: the first pattern that matches); nextpnr
# names a mapped LUT after the net it drives, so a name is the signal's, not the LUT's own.

import argparse
import json
import re
import sys
from pathlib import Path

# (pattern on a cell's name, core), first match wins.
CORES = [
    (r"nic_datapath\.(\w+)", r"NIC datapath: \1"),
    (r"nic_datapath", "NIC datapath"),
    (r"nicdatapathcsr|rdadp|wradp|nic_irq", "NIC registers and DMA adapters"),
    (r"csr_bankarray|csrbank|csr_interconnect|interface\d+_bank", "CSR register blocks"),
    (r"wishbone2csr|csr_bridge|csrbridge", "CSR bridge"),
    (r"pcie_mmap|wishbonemaster", "LitePCIe Wishbone master"),
    (r"crossbar|arbiter\d*_|dispatcher\d*_|req_queue|tag_queue|cmp_fsm|req_fsm|controller",
     "LitePCIe crossbar"),
    (r"packetizer|depacketizer|litepcieendpoint|header_", "LitePCIe endpoint"),
    (r"writer|reader|splitter|buffering|loopback|pcie_dma|_table", "LitePCIe DMA"),
    (r"max_payload_size|max_request_size", "PCIe link configuration (MPS, MRRS)"),
    (r"msi", "MSI"),
    (r"cplguard|cpl_timer|pcie_cpl", "completion guard"),
    (r"bar_guard|barguard|pcie_bar", "BAR guard"),
    (r"bus_analyzer|analyzer|scope", "analyzer"),
    (r"liteeth|ethmac|_mac_|crc|preamble|padding|tx_datapath|rx_datapath|ethphy|eth_",
     "LiteEth"),
    (r"pattern_", "DMA pattern generator/checker"),
    (r"vexriscv|cpu_", "CPU"),
    (r"in_chain|out_chain|scan_|rst_q", "I/O shell"),
    (r"storage|syncfifo|fifo", "LiteX FIFOs"),
]


def core_of(name):
    """The core of a cell or signal name (CORES), or None."""
    name = name[4:] if name.startswith("soc.") else name
    for pat, core in CORES:
        m = re.search(pat, name)
        if m:
            return m.expand(core)
    return None


class Sources:
    """The HDL text nextpnr names as a net's source (<file>.v:<line>..., relative to root or
    absolute; a path under the Yosys share folder is no source of ours): the enclosing
    module's name in a file of several modules (Amaranth's, `nic_datapath.rxe`), else the
    signals on that line (LiteX's one flat module)."""

    def __init__(self, root):
        self.root, self.files = Path(root), {}

    def _lines(self, rel):
        if rel not in self.files:
            path = self.root / rel
            self.files[rel] = path.read_text().splitlines() \
                if path.is_file() and "/share/" not in rel else []
        return self.files[rel]

    def core(self, step):
        for src in step.get("sources", []):
            m = re.match(r"([^:]+\.v):(\d+)", src)
            if not m:
                continue
            lines, n = self._lines(m.group(1)), int(m.group(2))
            if not 0 < n <= len(lines):
                continue
            modules = [ln for ln in lines[:n] if ln.startswith("module ")]
            if modules and "." in modules[-1].split("(")[0]:
                found = core_of(modules[-1].split()[1].lstrip("\\"))
            else:
                found = core_of(lines[n - 1])
            if found:
                return found
        return None


def path_by_core(path, sources):
    """[(core, logic ns, routing ns, LUT levels)] of a critical path's steps, in order, one
    entry per run of steps in the same core. A net's core is that of its HDL source where nextpnr
    names one; a cell's is that of the net it drives (the next step), since a mapped LUT is
    named after some net of its cone; else the last core (a carry chain's inner nets have no
    source), or for the path's first cell the core its own name says."""
    net_core = [sources.core(s) if s.get("type") == "routing" else None for s in path]
    runs, core = [], "other"
    for i, step in enumerate(path):
        kind = step.get("type")
        drives = next((c for c in net_core[i + 1:i + 2] if c), None)
        if kind == "routing":
            core = net_core[i] or (core if runs else core_of(step["to"]["cell"]) or core)
        elif kind == "clk-to-q" or not runs:
            core = drives or core_of(step["to"]["cell"]) or core
        else:
            core = drives or core
        if not runs or runs[-1][0] != core:
            runs.append([core, 0.0, 0.0, 0])
        if kind == "routing":
            runs[-1][2] += step["delay"]
        elif kind in ("logic", "clk-to-q", "setup"):
            runs[-1][1] += step["delay"]
            if kind == "logic" and step["to"].get("port") in ("F", "Z", "OFX0", "OFX1"):
                runs[-1][3] += 1
    return [tuple(r) for r in runs]


def summarize(report, root="."):
    """{"clocks": [...], "paths": [...], "ok": bool} from a nextpnr JSON report (root: the
    folder its HDL source names are relative to)."""
    sources = Sources(root)
    clocks = []
    for clk, v in report.get("fmax", {}).items():
        clocks.append({"clock": clk, "fmax_mhz": round(v["achieved"], 2),
                       "constraint_mhz": round(v["constraint"], 2),
                       "met": v["achieved"] >= v["constraint"]})
    paths = []
    for cp in report.get("critical_paths", []):
        steps = cp.get("path", [])
        if not steps:
            continue
        paths.append({"from": cp.get("from"), "to": cp.get("to"),
                      "start": steps[0]["from"]["cell"], "end": steps[-1]["to"]["cell"],
                      "delay_ns": round(sum(s["delay"] for s in steps), 2),
                      "cores": [dict(zip(("core", "logic_ns", "routing_ns", "levels"),
                                         (c, round(lg, 2), round(rt, 2), lv)))
                                for c, lg, rt, lv in path_by_core(steps, sources)]})
    paths.sort(key=lambda p: -p["delay_ns"])
    return {"clocks": clocks, "paths": paths, "ok": all(c["met"] for c in clocks)}


def render(summary):
    lines = []
    for c in summary["clocks"]:
        lines.append(f"clock {c['clock']}: Fmax {c['fmax_mhz']:.2f} MHz (constraint "
                     f"{c['constraint_mhz']:.2f} MHz) {'met' if c['met'] else 'MISSED'}")
    for p in summary["paths"]:
        lines.append(f"critical path {p['delay_ns']:.2f} ns ({p['from']} -> {p['to']}):")
        lines.append(f"  from {p['start']}")
        lines.append(f"  to   {p['end']}")
        for c in p["cores"]:
            lines.append(f"  {c['core']:40s} {c['levels']:2d} levels, logic {c['logic_ns']:5.2f} "
                         f"ns, routing {c['routing_ns']:5.2f} ns")
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description="Fmax per clock and critical paths by core from "
                                            "nextpnr's JSON report.")
    p.add_argument("report")
    p.add_argument("--json", help="also write the summary here")
    a = p.parse_args()
    path = Path(a.report)
    if not path.exists():
        sys.exit(f"timing_report: {path}: no routed report (run the build first)")
    root = path.parent.parent if path.parent.name == "gateware" else path.parent
    summary = summarize(json.loads(path.read_text()), root)
    if not summary["clocks"]:
        sys.exit(f"timing_report: {path} has no clock: the design was not routed")
    print(render(summary))
    if a.json:
        Path(a.json).write_text(json.dumps(summary, indent=1) + "\n")
    if not summary["ok"]:
        print("timing: a clock misses its constraint", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
