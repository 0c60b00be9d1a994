# SPDX-License-Identifier: BSD-2-Clause
#
# verilator_lint.py: the lint check every core's tests run on its emitted Verilog.
#
# What it is: `verilator_lint(component, name, tmp_path)` converts an Amaranth component to
# Verilog (module `name`) and asserts that `verilator --lint-only -Wall`, with the Yosys-backend
# waivers of rtl/verilator_lint.vlt, passes without a warning; it skips the test when verilator
# is not installed.
#
# Interfaces: the function above, for pytest tests (tmp_path is pytest's fixture).
# Parameters: none.

import shutil
import subprocess
from pathlib import Path

import pytest
from amaranth.back import verilog

WAIVERS = Path(__file__).resolve().parent / "verilator_lint.vlt"


def verilator_lint(component, name, tmp_path):
    if shutil.which("verilator") is None:
        pytest.skip("verilator not installed")
    path = Path(tmp_path) / f"{name}.v"
    path.write_text(verilog.convert(component, name=name, emit_src=False))
    r = subprocess.run(["verilator", "--lint-only", "-Wall", str(WAIVERS), str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "%Warning" not in r.stderr, r.stderr
