# SPDX-License-Identifier: BSD-2-Clause
# Unit test of the shared datapath core (sw/core/nic_core.c), which sw/lib and the Linux driver
# (sw/kernel/) both compile: builds test_nic_core.c with it (gcc, -Wall -Wextra -Werror, as the
# project builds host code) and runs it on a fake BAR0 and rings in plain memory: discovery,
# TX ring wrap, doorbells and writeback reclaim, RX records with skipped descriptors and
# reposting, queue and RX set-up writes, coalescing checks and read-back, the counter table.
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parent / "include"


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_nic_core(tmp_path):
    exe = tmp_path / "test_nic_core"
    build = subprocess.run(
        ["gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HERE}", f"-I{INCLUDE}",
         str(HERE / "test_nic_core.c"), str(HERE / "nic_core.c"), "-o", str(exe)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "ok"
