# SPDX-License-Identifier: BSD-2-Clause
# __main__.py: `python -m bench`, the suite behind `make bench`: collects the jobs of the chosen
# sections (bench/experiments/), runs those that are not current in parallel with progress, and
# writes the report (bench/report.py). Exit 0 ok, 1 a job or a section failed, 2 usage.

import argparse
import os
import sys
from pathlib import Path

from . import jobs as joblib
from . import report
from .experiments import ALL
from .experiments.common import Config


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__ and None or
                                "The seed papers re-run on the simulated NIC: jobs and report.")
    p.add_argument("--results", default="results", help="output folder (default results)")
    p.add_argument("--nicbench", default="build/sim_dw128/nicbench")
    p.add_argument("--nicscope", default="build/sim_dw128/nicscope")
    p.add_argument("--umlbench", default="sw/uml/umlbench.py",
                   help="the kernel-path runner (a UML guest against build/sim_dw128)")
    p.add_argument("--opts", default=Config.opts, help="sim backend options (BENCH_OPTS)")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                   help="jobs run at once (default: every core)")
    p.add_argument("--only", default=",".join(ALL),
                   help=f"sections, comma-separated (default all: {','.join(ALL)})")
    p.add_argument("--quick", action="store_true", help="smaller sweeps (tests)")
    p.add_argument("--list", action="store_true", help="print the jobs and exit")
    a = p.parse_args(argv)
    only = [s for s in a.only.split(",") if s]
    bad = [s for s in only if s not in ALL]
    if bad or a.jobs < 1:
        p.error(f"unknown section {bad[0]!r}" if bad else "-j must be at least 1")
    tools = {"nicbench": Path(a.nicbench), "nicscope": Path(a.nicscope),
             "umlbench": Path(a.umlbench)}
    for t, path in tools.items():
        if not os.access(path, os.X_OK):
            p.error(f"--{t} {path}: not an executable (build it with `make sim`)")
    cfg = Config(opts=a.opts, quick=a.quick, outdir=a.results)
    exps = {s: ALL[s] for s in only}
    jobs = [j for e in exps.values() for j in e.jobs(cfg)]
    if a.list:
        for j in jobs:
            print(j.name, " ".join(map(str, j.argv(tools, "JSON"))))
        return 0
    out = Path(a.results)
    try:
        ran = [j for j in jobs if not joblib.current(j, tools, out)]
        wall = joblib.run(jobs, tools, out, a.jobs)
    except joblib.JobFailed as e:
        print(f"bench: FAILED:\n{e}", file=sys.stderr)
        return 1
    by_name = {j.name: j for j in jobs}

    def res(name):
        return joblib.load(by_name[name], out)

    sections = [e.section(cfg, res, out) for e in exps.values()]
    path = report.write(out, sections, jobs,
                        {"ran": len(ran), "wall_s": wall, "workers": a.jobs})
    for s in sections:
        print(f"\n{s.seed}: {s.title}")
        for v in s.verdicts:
            print(f"  {v}")
    print(f"\nbench: wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
