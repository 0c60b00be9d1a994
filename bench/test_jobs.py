# SPDX-License-Identifier: BSD-2-Clause
# Tests of the suite's job runner (bench/jobs.py) with a stand-in tool, a script that writes the
# JSON document nicbench would and can be told to fail: every job runs once, a current job is
# not run again, a changed command or binary makes it run, a failed job leaves no JSON that
# looks current and fails the suite, and progress is printed per job.

import io
import json
import os
import stat

import pytest

from bench import jobs as joblib

TOOL = """#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
path = args[args.index("--json") + 1]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(" ".join(args[2:]) + "\\n")
if "fail" in args:
    open(path, "w").write("{partial")
    print("FAILED: asked to"); sys.exit(1)
json.dump({"records": [{"args": args[2:]}]}, open(path, "w"))
"""


@pytest.fixture
def tool(tmp_path, monkeypatch):
    p = tmp_path / "faketool"
    p.write_text(TOOL)
    p.chmod(p.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "calls.log"
    log.write_text("")
    monkeypatch.setenv("FAKE_LOG", str(log))
    return {"nicbench": p, "nicscope": p}, log


def calls(log):
    return [line for line in log.read_text().splitlines() if line]


def test_runs_each_job_once_then_resumes(tool, tmp_path):
    tools, log = tool
    out = tmp_path / "res"
    jobs = [joblib.Job(f"j{i}", "nicbench", ("tx", "--size", i), est_s=i) for i in range(5)]
    progress = io.StringIO()
    joblib.run(jobs, tools, out, 2, out=progress)
    assert sorted(calls(log)) == sorted(f"tx --size {i}" for i in range(5))
    assert progress.getvalue().count("] ") == 5 and "[5/5]" in progress.getvalue()
    for j in jobs:
        assert joblib.load(j, out) == {"records": [{"args": ["tx", "--size", str(j.args[2])]}]}
        assert joblib.seconds(j, out) >= 0
    joblib.run(jobs, tools, out, 2, out=io.StringIO())
    assert len(calls(log)) == 5                        # all current: nothing ran again
    changed = jobs[:4] + [joblib.Job("j4", "nicbench", ("tx", "--size", 99))]
    joblib.run(changed, tools, out, 2, out=io.StringIO())
    assert calls(log)[5:] == ["tx --size 99"]


def test_a_changed_binary_reruns(tool, tmp_path):
    tools, log = tool
    out = tmp_path / "res"
    jobs = [joblib.Job("a", "nicbench", ("info",))]
    joblib.run(jobs, tools, out, 1, out=io.StringIO())
    joblib._digest.__defaults__[0].clear()             # a new process would hash afresh
    with open(tools["nicbench"], "a") as f:
        f.write("# rebuilt\n")
    joblib.run(jobs, tools, out, 1, out=io.StringIO())
    assert len(calls(log)) == 2


def test_a_failed_job_leaves_nothing_current(tool, tmp_path):
    tools, log = tool
    out = tmp_path / "res"
    jobs = [joblib.Job("ok", "nicbench", ("info",)), joblib.Job("bad", "nicbench", ("fail",))]
    with pytest.raises(joblib.JobFailed, match="(?s)bad: exit 1.*FAILED: asked to"):
        joblib.run(jobs, tools, out, 2, out=io.StringIO())
    js, key, log_path = joblib.paths(jobs[1], out)
    assert not js.exists() and not key.exists() and "asked to" in log_path.read_text()
    assert not list((out / "jobs").glob("*.part"))
    assert joblib.current(jobs[0], tools, out) and not joblib.current(jobs[1], tools, out)


def test_duplicate_names_are_refused(tool, tmp_path):
    tools, _ = tool
    with pytest.raises(ValueError, match="duplicate"):
        joblib.run([joblib.Job("x", "nicbench", ()), joblib.Job("x", "nicscope", ())], tools,
                   tmp_path, 1, out=io.StringIO())


def test_every_section_has_unique_jobs_and_vendored_tables():
    from bench import papers
    from bench.experiments import ALL
    from bench.experiments.common import Config
    names = [j.name for e in ALL.values() for j in e.jobs(Config())]
    assert len(names) == len(set(names))
    readme = (papers.DIR / "README.md").read_text()
    for csv in papers.DIR.glob("*.csv"):
        assert f"`{csv.name}`" in readme, f"{csv.name} is not described in bench/papers/README.md"
        assert papers.table(csv.stem), csv
    src = "".join(p.read_text() for p in (papers.DIR.parent / "experiments").glob("*.py"))
    for name in set(__import__("re").findall(r'papers\.(?:table|value)\("([^"]+)"', src)):
        assert (papers.DIR / f"{name}.csv").exists(), name
    assert json.dumps(names)  # the names are plain strings
    assert all(os.sep not in n for n in names)
