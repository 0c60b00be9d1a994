# SPDX-License-Identifier: BSD-2-Clause
# jobs.py: the suite's jobs and the runner that runs them in parallel and resumes.
#
# A Job is one sweep point: one run of a tool (`nicbench`/`nicscope`, the sim backend) that
# writes one JSON document. Its key is a hash of its command line and of the tool binary's
# contents (which hold the Verilated SoC and the host code): a job whose JSON exists with the
# same key is current and is not run again. The JSON is written to a temporary name and renamed
# only when the tool exits 0, so an interrupted or failed job leaves nothing that looks current.
#
# Interfaces: Job(name, tool, args, est_s); run(jobs, tools, outdir, jobs_n) -> wall seconds;
# load(job, outdir) -> doc; seconds(job, outdir). Per job under OUTDIR/jobs/: NAME.json,
# NAME.key (key and wall seconds), NAME.log (the command and its output).
# Parameters: jobs_n (workers, `make bench -j`/JOBS); est_s orders the longest jobs first.

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path


@dataclasses.dataclass(frozen=True)
class Job:
    name: str                 # unique, a file name: "s002_tx_inflight1_60"
    tool: str                 # "nicbench" or "nicscope"
    args: tuple               # arguments after the tool, without --json
    est_s: float = 1.0        # rough wall seconds, to start the longest first

    def argv(self, tools, json_path):
        return [str(tools[self.tool]), "--json", str(json_path), *map(str, self.args)]


class JobFailed(Exception):
    pass


def _digest(path, cache={}):  # noqa: B006 - one digest per binary and process
    path = Path(path).resolve()
    if path not in cache:
        cache[path] = hashlib.sha256(path.read_bytes()).hexdigest()
    return cache[path]


def key(job, tools):
    h = hashlib.sha256()
    h.update(_digest(tools[job.tool]).encode())
    h.update(json.dumps([job.tool, list(map(str, job.args))]).encode())
    return h.hexdigest()


def paths(job, outdir):
    d = Path(outdir) / "jobs"
    return d / f"{job.name}.json", d / f"{job.name}.key", d / f"{job.name}.log"


def current(job, tools, outdir):
    js, k, _ = paths(job, outdir)
    return js.exists() and k.exists() and k.read_text().split()[0] == key(job, tools)


def seconds(job, outdir):
    """Wall seconds the job's current JSON took to make (the .key file's second field)."""
    return float(paths(job, outdir)[1].read_text().split()[1])


def load(job, outdir):
    return json.loads(paths(job, outdir)[0].read_text())


def _run_one(job, tools, outdir):
    js, k, log = paths(job, outdir)
    tmp = js.with_suffix(".json.part")
    argv = job.argv(tools, tmp)
    t0 = time.monotonic()
    with open(log, "w") as f:
        f.write("$ " + " ".join(argv) + "\n")
        f.flush()
        r = subprocess.run(argv, stdout=f, stderr=subprocess.STDOUT)
    if r.returncode != 0 or not tmp.exists():
        tmp.unlink(missing_ok=True)
        raise JobFailed(f"{job.name}: exit {r.returncode}; see {log}:\n"
                        + "".join(log.read_text().splitlines(True)[-15:]))
    os.replace(tmp, js)
    took = time.monotonic() - t0
    k.write_text(f"{key(job, tools)} {took:.2f}\n")
    return took


def run(jobs, tools, outdir, jobs_n, out=sys.stdout):
    """Runs every job that is not current, jobs_n at a time; prints progress. Raises JobFailed
    (after the other running jobs end) if any job failed."""
    names = [j.name for j in jobs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise ValueError(f"duplicate job names: {sorted(dup)}")
    (Path(outdir) / "jobs").mkdir(parents=True, exist_ok=True)
    todo = sorted((j for j in jobs if not current(j, tools, outdir)), key=lambda j: -j.est_s)
    total, done = len(jobs), len(jobs) - len(todo)
    print(f"bench: {total} jobs, {done} current, {len(todo)} to run on {jobs_n} workers",
          file=out, flush=True)
    t0 = time.monotonic()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs_n) as pool:
        futs = {pool.submit(_run_one, j, tools, outdir): j for j in todo}
        for fut in concurrent.futures.as_completed(futs):
            j = futs[fut]
            done += 1
            try:
                took = f"{fut.result():.1f} s"
            except JobFailed as e:
                failed.append(str(e))
                took = "FAILED"
            print(f"bench: [{done}/{total}] {time.monotonic() - t0:6.1f} s  {j.name} ({took})",
                  file=out, flush=True)
    if failed:
        raise JobFailed("\n".join(failed))
    return time.monotonic() - t0
