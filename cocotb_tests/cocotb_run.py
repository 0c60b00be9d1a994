# SPDX-License-Identifier: BSD-2-Clause
#
# cocotb_run.py: emit an Amaranth core's Verilog, build it with Verilator for cocotb and run a
# cocotb testbench on it; the one helper every cocotb_tests/test_<core>.py uses.
#
# Interfaces: run(core, name, tb_module, env, tag) (the steps in its docstring), build() and
# run_built() (a testbench on a runner already built: also the SoC's, pcie_rc/soc_run.py);
# env_params(var) reads a JSON environment variable in a testbench. Files go to
# build/cocotb/<name>/: the Verilog, sim_build/ (one Verilator build per configuration, reused
# while its stamp matches) and run_<tag>/ (results.xml, sim.log).
# Parameters: none (a configuration is the core object plus its Verilog module name).

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path

from amaranth.back import verilog

REPO = Path(__file__).resolve().parent.parent
BUILD = REPO / "build" / "cocotb"
# Verilator options: the lint waivers of the Yosys backend (rtl/verilator_lint.vlt) and no
# fatal warnings (the build must not fail on a lint rule; rtl/test_lint.py does the linting).
BUILD_ARGS = [str(REPO / "rtl" / "verilator_lint.vlt"), "-Wno-fatal", "--timescale", "1ns/1ps"]


def _verilator_version():
    r = subprocess.run(["verilator", "--version"], capture_output=True, text=True)
    return r.stdout.strip()


@contextlib.contextmanager
def _locked(path):
    with open(path, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@contextlib.contextmanager
def _environ(**changes):
    """os.environ with `changes` (None: removed), restored afterwards (the runner copies
    os.environ into the build's and the simulation's environment)."""
    saved = {k: os.environ.get(k) for k in changes}
    try:
        for k, v in changes.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def build(core, name):
    """Emits `core` as module `name` (amaranth.back.verilog.convert(emit_src=False)) into
    build/cocotb/<name>/<name>.v, written only when the text changed, and builds it with cocotb
    1.9's Python runner for the Verilator on PATH (Debian's 5.006, docs/getting_started.md) into
    build/cocotb/<name>/sim_build, unless the stamp file there records the same Verilog, build
    arguments and Verilator version. Builds are serialised by a file lock (pytest-xdist) and run
    `make -j1` (MAKEFLAGS), so they take one CPU core. Returns (runner, build_dir)."""
    with warnings.catch_warnings():          # "Python runners ... are experimental"
        warnings.simplefilter("ignore", UserWarning)
        from cocotb.runner import get_runner

    bdir = BUILD / name
    bdir.mkdir(parents=True, exist_ok=True)
    text = verilog.convert(core, name=name, emit_src=False)
    src = bdir / f"{name}.v"
    sim_build = bdir / "sim_build"
    stamp_text = hashlib.sha256(
        "\n".join([text, *BUILD_ARGS, _verilator_version()]).encode()).hexdigest()
    stamp = sim_build / "stamp"
    runner = get_runner("verilator")
    with _locked(bdir / ".lock"):
        if not src.exists() or src.read_text() != text:
            src.write_text(text)
        fresh = (stamp.exists() and stamp.read_text() == stamp_text
                 and (sim_build / name).exists())
        if not fresh:
            stamp.unlink(missing_ok=True)
            with _environ(MAKEFLAGS="-j1", PYTEST_CURRENT_TEST=None):
                runner.build(verilog_sources=[src], hdl_toplevel=name, build_dir=sim_build,
                             build_args=BUILD_ARGS, always=True,
                             log_file=bdir / "build.log")
            if not (sim_build / name).exists():
                raise AssertionError(f"Verilator build of {name} failed: see {bdir}/build.log")
            stamp.write_text(stamp_text)
        else:
            # The runner's test step needs the build step's settings; set them without building.
            runner.build_dir = sim_build
            runner.hdl_toplevel = name
            runner.verbose = False
            runner.verilog_sources, runner.vhdl_sources, runner.sources = [src], [], []
    return runner, sim_build


def failures(results_xml):
    """(number of tests, [(test name, failure text)]) from a cocotb results xml."""
    tree = ET.parse(results_xml)
    ntests, failed = 0, []
    for tc in tree.iter("testcase"):
        ntests += 1
        for f in tc.iter("failure"):
            failed.append((tc.get("name"), (f.get("message") or "") + (f.text or "")))
    return ntests, failed


def run(core, name, tb_module, env=None, tag="run"):
    """Builds `core` as `name` (build()) and runs the cocotb module `tb_module` (e.g.
    "cocotb_tests.tb_frame_fifo") on it in build/cocotb/<name>/run_<tag>, with `env` as extra
    environment variables (the testbench's parameters; other than strings as JSON). Fails
    (AssertionError) unless the results xml lists at least one test and no failure; the message
    names the failing tests and their text. Returns the number of tests."""
    runner, sim_build = build(core, name)
    return run_built(runner, sim_build, name, tb_module, BUILD / name / f"run_{tag}", env,
                     label=name)


def run_built(runner, sim_build, toplevel, tb_module, test_dir, env=None, testcase=None,
              label=None):
    """Runs the cocotb module `tb_module` on a built `runner` (its sim_build and toplevel) in
    test_dir, with `env` as extra environment variables (other than strings as JSON) and only
    the tests `testcase` names (comma-separated; None: all). Fails (AssertionError, starting
    with `label`) unless the results xml lists at least one test and no failure; the message
    names the failing tests with each one's part of the log. Returns the number of tests."""
    label = label or toplevel
    for p in (str(REPO), str(REPO / "cocotb_tests")):
        if p not in sys.path:
            sys.path.insert(0, p)            # the runner passes sys.path as PYTHONPATH
    test_dir.mkdir(parents=True, exist_ok=True)
    results = test_dir / "results.xml"
    results.unlink(missing_ok=True)
    log = test_dir / "sim.log"
    extra = {k: v if isinstance(v, str) else json.dumps(v) for k, v in (env or {}).items()}
    # Without PYTEST_CURRENT_TEST the runner writes the xml where we say and does not raise:
    # the verdict is ours.
    with _environ(PYTEST_CURRENT_TEST=None):
        runner.test(test_module=tb_module, hdl_toplevel=toplevel, build_dir=sim_build,
                    test_dir=test_dir, results_xml=str(results), extra_env=extra, log_file=log,
                    testcase=testcase.split(",") if testcase else None)
    if not results.exists():
        raise AssertionError(f"{label}: the simulation ended without results; see {log}")
    ntests, failed = failures(results)
    if ntests == 0:
        raise AssertionError(f"{label}: no cocotb test ran; see {log}")
    if failed:
        text = "\n".join(f"{t}: {msg.strip()[-3000:]}" for t, msg in failed)
        lines = log.read_text(errors="replace").splitlines()
        for t, _msg in failed:
            # The test's part of the log: from its "failed" line to the next test or the end
            # banner; else the log's first traceback.
            start = [i for i, line in enumerate(lines) if line.rstrip().endswith(f"{t} failed")]
            start = start or [i for i, line in enumerate(lines)
                              if "Traceback" in line or "Error" in line]
            for i in start[:1]:
                end = next((j for j in range(i + 1, len(lines))
                            if "*****" in lines[j] or "running test" in lines[j]), i + 80)
                text += "\n" + "\n".join(x.strip() for x in lines[i:min(end, i + 80)])
        raise AssertionError(f"{label}: {len(failed)} of {ntests} cocotb tests failed "
                             f"(log: {log}):\n{text}")
    return ntests


def env_params(var):
    """The JSON value of environment variable `var` (for the testbenches)."""
    return json.loads(os.environ[var])
