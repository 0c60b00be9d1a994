# SPDX-License-Identifier: BSD-2-Clause
# Unit test of nicbench's pure helpers: compiles sw/common/test_bench_util.c with
# bench_util.c (gcc, C11, -Wall -Wextra -Werror, as the project builds host code; linked with
# jansson, the JSON writer's library) and runs it.
# Needs no simulator build and no device.
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
@pytest.mark.parametrize("std", ["c11", "gnu11"])
def test_bench_util(tmp_path, std):
    exe = tmp_path / "test_bench_util"
    build = subprocess.run(
        ["gcc", f"-std={std}", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HERE}",
         str(HERE / "test_bench_util.c"), str(HERE / "bench_util.c"), "-o", str(exe),
         "-ljansson", "-lm"],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "ok"
