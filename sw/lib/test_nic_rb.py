# SPDX-License-Identifier: BSD-2-Clause
# Unit test of the register-block discovery (sw/lib/nic_rb.c on the shared core's
# sw/core/nic_core.c): compiles test_nic_rb.c with them
# (gcc, -Wall -Wextra -Werror, as the project builds host code) and runs it on a fake BAR0: block
# bases, MSI numbers and parameters from the table, a block of another layout version or absent
# refused with a message naming it, a bad MAGIC, RB_COUNT or major version refused.
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parent / "include"
CORE = HERE.parent / "core"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_nic_rb(tmp_path):
    exe = tmp_path / "test_nic_rb"
    build = subprocess.run(
        ["gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HERE}", f"-I{INCLUDE}",
         f"-I{CORE}", str(HERE / "test_nic_rb.c"), str(HERE / "nic_rb.c"), str(CORE / "nic_core.c"),
         "-o", str(exe)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "ok"
