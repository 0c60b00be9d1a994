#!/usr/bin/env python3
#
# report.py: results/*.json written by `nicbench --json`, `nicscope --json` and
# scripts/coalesce_bench.py -> results/report.md.
#
# What it is: one markdown table per experiment of every nicbench run (by its experiment name,
# with a title for info, csr, dma and loopback), with the run's parameters under each table:
# command line, backend, its params_json (every link/model parameter for sim), the simulator
# speed, and the columns that are the same in every row of the table. A section per nicscope
# document (occupancy report or capture) and per coalesce_bench document.
#
# Interfaces: `python3 scripts/report.py RESULTS_DIR [-o FILE]` (default FILE:
# RESULTS_DIR/report.md). Other files are listed as skipped.
#
# Parameters: none beyond the command line. Python 3.11, standard library only.

import argparse
import json
import math
import sys
from pathlib import Path

TITLES = {
    "info": "Identification and bring-up check",
    "csr_latency": "MMIO cost (CTRL_SCRATCH), ns on the backend clock",
    "csr_dma_holdoff": "DMA hold-off by CSR reads (card-to-host stream)",
    "dma": "DMA throughput vs transfer size",
    "loopback": "DMA loopback (reader -> writer), bit-exact check",
}
DIRS = {"h2c": "host-to-card (reader)", "c2h": "card-to-host (writer)"}
# Columns that stay in the table even when every row has the same value (the row's identity).
KEEP = {
    "csr_latency": {"access", "condition", "median_ns"},
    "csr_dma_holdoff": {"window", "duration_ns", "dma_wr_stall", "dma_wr_stall_csr"},
    "dma": {"size", "mps", "mrrs", "time_ns", "gbps", "limit_gbps", "ratio"},
    "loopback": {"index", "size", "result"},
}
HEADERS = {"gbps": "Gb/s", "mbps": "MB/s", "limit_gbps": "limit Gb/s", "size": "size (B)",
           "src_offset": "src offset", "dst_offset": "dst offset"}


def fmt(v):
    """A cell: None -> n/a, floats to 4 significant digits, bools yes/no."""
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "n/a"
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:.0f}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return str(v).replace("|", "\\|").replace("\n", " ")


def is_number(v):
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def table(rows, columns):
    """Markdown table; numeric columns right-aligned."""
    numeric = [all(is_number(r.get(c)) for r in rows) for c in columns]
    out = ["| " + " | ".join(HEADERS.get(c, c) for c in columns) + " |",
           "|" + "|".join("---:" if n else ":---" for n in numeric) + "|"]
    for r in rows:
        out.append("| " + " | ".join(fmt(r.get(c)) for c in columns) + " |")
    return out


def flat_params(params, prefix=""):
    """key=value pairs of a (possibly nested) params object."""
    if not isinstance(params, dict):
        return [] if params is None else [f"{prefix or 'params'}={fmt(params)}"]
    items = []
    for k, v in params.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            items += flat_params(v, name + ".")
        else:
            items.append(f"{name}={fmt(v)}")
    return items


def group_records(records):
    """{(experiment, dir): [records]} in first-seen order."""
    groups = {}
    for r in records:
        if not isinstance(r, dict):
            continue
        key = (r.get("experiment", "records"), r.get("dir"))
        groups.setdefault(key, []).append(r)
    return groups


def split_columns(rows, keep=frozenset()):
    """Columns in first-seen order; with several rows, those constant across them (except the
    `keep` ones) go below the table."""
    columns = []
    for r in rows:
        for k in r:
            if k != "experiment" and k not in columns:
                columns.append(k)
    if len(rows) < 2:
        return columns, {}
    constant = {}
    for c in columns:
        values = [json.dumps(r.get(c), sort_keys=True) for r in rows]
        if len(set(values)) == 1 and c not in keep:
            constant[c] = rows[0].get(c)
    varying = [c for c in columns if c not in constant]
    if not varying:                  # keep at least one column
        varying, constant = columns, {}
    return varying, constant


def run_section(path, doc):
    lines = []
    cmd = " ".join(doc.get("argv") or []) or f"nicbench {doc.get('command', '?')}"
    status = doc.get("status", "?")
    lines.append(f"## `{path.name}`: {doc.get('command', '?')} on {doc.get('backend', '?')}")
    lines.append("")
    if status != "ok":
        lines.append(f"**Run failed**: {fmt(doc.get('error'))}")
        lines.append("")
    common = [f"command: `{cmd}`", f"backend: {doc.get('backend')}",
              f"backend options: `{doc.get('opts') or '(none)'}`", f"status: {status}"]
    speed = doc.get("sim_speed")
    if isinstance(speed, dict):
        common.append(
            f"simulator speed: {fmt(speed.get('cycles_per_wall_s'))} simulated cycles per wall "
            f"second ({fmt(speed.get('cycles'))} cycles, {fmt(speed.get('wall_s'))} s wall)")
    params = flat_params(doc.get("params"))
    configs = doc.get("configs") or []

    groups = group_records(doc.get("records") or [])
    if not groups:
        lines.append("No records.")
        lines.append("")
    for (exp, direction), rows in groups.items():
        title = TITLES.get(exp, exp)
        if direction:
            title += f", {DIRS.get(direction, direction)}"
        lines.append(f"### {title}")
        lines.append("")
        columns, constant = split_columns(rows, KEEP.get(exp, frozenset()))
        lines += table(rows, columns)
        lines.append("")
        lines.append("Parameters:")
        lines.append("")
        for item in common:
            lines.append(f"- {item}")
        for k, v in constant.items():
            lines.append(f"- {k}: {fmt(v)}")
        if len(configs) > 1:
            lines.append(f"- backend configurations ({len(configs)}; the params below are the "
                         "first one's, mps/mrrs per row):")
            for cfg in configs:
                lines.append(f"  - `{cfg.get('opts') or '(none)'}`: mps={fmt(cfg.get('mps'))}, "
                             f"mrrs={fmt(cfg.get('mrrs'))}, device mps={fmt(cfg.get('dev_mps'))}"
                             f", device mrrs={fmt(cfg.get('dev_mrrs'))}")
        if params:
            lines.append(f"- backend params: {', '.join(params)}")
        lines.append("")
    return lines


def scope_section(path, doc):
    """A nicscope document: the occupancy report or the capture summary."""
    r = doc["result"]
    lines = [f"## nicscope {doc['command']} (`{path.name}`)", "",
             "Command: `" + " ".join(doc.get("argv", [])) + "`", ""]
    if doc["command"] == "report":
        ns = r["ns_per_cycle"]
        lines += [f"Bus occupancy over one snapshot window of {r['window_cycles']} cycles "
                  f"({r['window_cycles'] * ns / 1000:.3f} us), load: {r['load']} "
                  f"{r['load_bytes']} B each way; {r['crosschecked_counts']} counts equal the "
                  "simulator's own count.", ""]
        cols = ["probe", "busy_pct", "stall_pct", "idle_pct", "bytes", "frames", "stall_hold"]
        rows = [dict(probe=n, **c) for n, c in r["probes"].items()]
        lines += table(rows, cols) + [""]
        tlp = [dict(probe=n, **c["tlps"]) for n, c in r["probes"].items() if "tlps" in c]
        if tlp:
            lines += ["TLPs by type:", ""]
            lines += table(tlp, ["probe", "mrd", "mwr", "cpld", "cpl", "msg", "other"]) + [""]
        lat = r.get("latency")
        if lat and lat["count"]:
            lines += [f"DMA read latency: {lat['count']} reads, mean "
                      f"{lat['sum'] / lat['count'] * ns:.1f} ns, min {lat['min'] * ns:.0f} ns, "
                      f"max {lat['max'] * ns:.0f} ns.", ""]
    else:
        lines += [f"Capture: {r['state']}, {r['entries']} entries over cycles "
                  f"{r['first_cycle']}..{r['end_cycle']}, trigger "
                  f"{'at cycle ' + str(r['trigger_cycle']) if r['triggered'] else 'not fired'}"
                  f"{', overflow' if r['overflow'] else ''}; `{r['vcd']}`, `{r['gtkw']}`.", ""]
    return lines


def coalesce_section(path, doc):
    """A scripts/coalesce_bench.py document: RX interrupts per second against rx-usecs."""
    lines = [f"## RX interrupts against rx-usecs (`{path.name}`)", "",
             f"{doc['frames']} frames of {doc['size']} B through the loopback at line rate, "
             f"opts `{doc['opts']}`; interrupts/s = RX interrupts counted / simulated time.", ""]
    rows = [dict(mode=r["mode"], rx_usecs=r["rx_usecs"], coalesce=r["coalesce_arg"],
                 sim_us=r["record"]["time_ns"] / 1000, mpps=r["record"]["mpps"],
                 irqs_rx=r["record"]["irqs_rx"], irqs_rx_per_s=r["irqs_rx_per_s"],
                 msis_rx=r["record"].get("msis_rx"),
                 msis=r["record"]["msis_received"]) for r in doc["runs"]]
    cols = ["mode", "rx_usecs", "coalesce", "sim_us", "mpps", "irqs_rx", "irqs_rx_per_s",
            "msis_rx", "msis"]
    return lines + table(rows, cols) + [""]


def main(argv=None):
    ap = argparse.ArgumentParser(description="nicbench JSON results -> markdown report")
    ap.add_argument("results", type=Path, help="directory with nicbench --json files")
    ap.add_argument("-o", "--output", type=Path, help="report file (default RESULTS/report.md)")
    args = ap.parse_args(argv)
    if not args.results.is_dir():
        print(f"report.py: {args.results} is not a directory", file=sys.stderr)
        return 2
    output = args.output or args.results / "report.md"

    lines = ["# nicbench results", ""]
    skipped, runs = [], 0
    for path in sorted(args.results.glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as e:
            skipped.append(f"{path.name} ({e})")
            continue
        if isinstance(doc, dict) and doc.get("tool") == "coalesce_bench":
            lines += coalesce_section(path, doc)
            runs += 1
            continue
        if isinstance(doc, dict) and doc.get("tool") == "nicscope":
            lines += scope_section(path, doc)
            runs += 1
            continue
        if not isinstance(doc, dict) or doc.get("tool") != "nicbench":
            skipped.append(f"{path.name} (not a nicbench document)")
            continue
        lines += run_section(path, doc)
        runs += 1
    if runs == 0:
        lines += ["No nicbench results found.", ""]
    if skipped:
        lines.append("Skipped: " + "; ".join(skipped))
        lines.append("")
    output.write_text("\n".join(lines))
    print(f"report.py: {runs} run(s) -> {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
