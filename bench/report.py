# SPDX-License-Identifier: BSD-2-Clause
# report.py: the report of `make bench`: RESULTS/report.md (an index: every section's verdicts,
# the suite's wall time and the simulator's speed), one RESULTS/seed_<id>.md per section (the
# mapping, the verdicts, the plots, the paper's numbers beside ours) and CSV appendices:
# RESULTS/csv/<table>.csv per section table and RESULTS/csv/jobs/<job>.csv per job (every record
# with its counters, one column per field, nested fields as a.b).
#
# Interfaces: write(outdir, sections, jobs, timing) -> path of report.md.

import csv
import statistics
from pathlib import Path

from . import jobs as joblib
from .section import table


def flatten(obj, prefix=""):
    out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.update(flatten(v, f"{prefix}{k}."))
    elif isinstance(obj, list) and obj and isinstance(obj[0], (dict, list)):
        for i, v in enumerate(obj):
            out.update(flatten(v, f"{prefix}{i}."))
    elif isinstance(obj, list):
        out[prefix[:-1]] = " ".join(map(str, obj))
    else:
        out[prefix[:-1]] = obj
    return out


def write_csv(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    cols = list(dict.fromkeys(k for r in rows for k in r))
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols)
        w.writeheader()
        w.writerows(rows)


def job_rows(doc):
    """A job's records as flat rows: nicbench's records, or nicscope's one result."""
    if "records" in doc:
        return [flatten(r) for r in doc["records"]]
    return [flatten(doc.get("result", {}))]


def _speeds(docs):
    """Simulated cycles per wall second of every nicbench job, one-host and two-host."""
    out = {"one NIC": [], "two NICs (peer=1)": []}
    for d in docs:
        sp = d.get("sim_speed")
        if sp and sp.get("wall_s", 0) > 0.5:
            two = "peer=1" in (d.get("opts") or "")
            out["two NICs (peer=1)" if two else "one NIC"].append(sp["cycles_per_wall_s"])
    return out


def write(outdir, sections, jobs, timing):
    outdir = Path(outdir)
    docs = {j.name: joblib.load(j, outdir) for j in jobs}
    for name, doc in docs.items():
        write_csv(outdir / "csv" / "jobs" / f"{name}.csv", job_rows(doc))
    index = ["# NIC benchmark report: the seed papers re-run\n",
             "Made by `make bench` (`python -m bench`) from runs of the Verilated SoC driven by "
             "the C host tools; every figure is simulated time unless it says otherwise. Each "
             "section puts the paper's numbers (vendored in `bench/papers/`) beside ours; the "
             "verdicts are computed from the data.\n"]
    total = sum(joblib.seconds(j, outdir) for j in jobs)
    index.append(f"Suite: {len(jobs)} jobs, {total:.0f} s of job wall time in all; this run "
                 f"ran {timing['ran']} of them in {timing['wall_s']:.1f} s wall on "
                 f"{timing['workers']} workers.\n")
    sp = _speeds(docs.values())
    index.append(table(["simulation", "jobs", "median cycles/s", "min", "max"],
                       [[k, len(v), statistics.median(v), min(v), max(v)]
                        for k, v in sp.items() if v]))
    for s in sections:
        name = f"seed_{s.seed}.md" if s.seed[0].isdigit() else f"{s.seed}.md"
        for t, rows in s.csv.items():
            write_csv(outdir / "csv" / f"{t}.csv", rows)
        md = [f"# {s.title}\n", f"**Mapping.** {s.mapping}\n", "**Verdict (computed).**\n"]
        md += [f"- {v}" for v in s.verdicts]
        md.append("")
        for png, svg in s.plots:
            md.append(f"![{Path(png).stem}]({png}) ([SVG]({svg}))\n")
        md.append(s.body)
        md.append("CSV: " + ", ".join(f"[`csv/{t}.csv`](csv/{t}.csv)" for t in s.csv)
                  + "; every job's records with their counters: `csv/jobs/`.\n")
        (outdir / name).write_text("\n".join(md))
        index.append(f"\n## [{s.title}]({name})\n")
        index += [f"- {v}" for v in s.verdicts]
    path = outdir / "report.md"
    path.write_text("\n".join(index) + "\n")
    return path
