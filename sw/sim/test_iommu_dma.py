# SPDX-License-Identifier: BSD-2-Clause
# The host model's IOMMU against the real SoC: builds sw/sim/test_iommu_dma.c with the objects of
# `make sim W=128` (host library, simulator, Verilated SoC) and runs it: a raw DMA descriptor of
# LitePCIe's DMA engine pointing outside every allocation is caught (a write dropped, a read
# faulted, both counted), and with --opts iommu=0 the same write lands.
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build" / "sim_dw128"
HOST = ROOT / "build" / "host"


def test_iommu_stray_dma(tmp_path):
    lib = BUILD / "obj" / "Vnicsoc__ALL.a"
    if not lib.exists() or not (BUILD / "nicbench").exists():
        pytest.fail(f"{BUILD.relative_to(ROOT)} is missing: `make sim W=128` (make test builds it)")
    objs = [*sorted(HOST.glob("lib_*.o")), *sorted(HOST.glob("core_*.o")),
            *sorted(HOST.glob("common_*.o")), *sorted((BUILD / "host").glob("*.o")),
            *sorted((BUILD / "vrt").glob("*.o"))]
    inc = [f"-I{ROOT / 'sw' / d}" for d in ("include", "core", "lib", "common")]
    obj = tmp_path / "test_iommu_dma.o"
    exe = tmp_path / "test_iommu_dma"
    cc = subprocess.run(["gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", *inc, "-c",
                         str(ROOT / "sw" / "sim" / "test_iommu_dma.c"), "-o", str(obj)],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stdout + cc.stderr
    ld = subprocess.run(["g++", "-o", str(exe), str(obj), *map(str, objs), str(lib), "-ljansson",
                         "-lz", "-pthread", "-lm"], capture_output=True, text=True)
    assert ld.returncode == 0, ld.stdout + ld.stderr
    run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "FAIL" not in run.stdout and run.stdout.count("ok") == 5, run.stdout + run.stderr
    assert "IOMMU fault" in run.stderr, run.stderr
