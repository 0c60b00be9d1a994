# SPDX-License-Identifier: BSD-2-Clause
# The suite end to end on the Verilated SoC (build/sim_dw128/, built by `make test`): the
# Van Jacobson section and the analyzer's, with small sweeps (--quick): the report, its section
# with computed verdicts and plots (PNG and SVG), the CSV appendices; a second run finds every
# job current and runs none.

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "sim_dw128"


def bench(out, *args):
    r = subprocess.run([sys.executable, "-m", "bench", "--results", str(out), "--nicbench",
                        str(BUILD / "nicbench"), "--nicscope", str(BUILD / "nicscope"), "-j", "2",
                        "--quick", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)
    return r.returncode, r.stdout + r.stderr


def test_report_from_real_runs(tmp_path):
    rc, out = bench(tmp_path, "--only", "002,scope")
    assert rc == 0, out
    index = (tmp_path / "report.md").read_text()
    assert "(seed_002.md)" in index and "(scope.md)" in index
    sec = (tmp_path / "seed_002.md").read_text()
    for word in ("barrier: one descriptor in flight gives", "knee (n1/2", "PCIe bus time"):
        assert word in sec and word in out
    for ext in ("png", "svg"):
        assert (tmp_path / "plots" / f"s002_barrier.{ext}").stat().st_size > 1000
    assert (tmp_path / "csv" / "s002_tx.csv").read_text().startswith("size,")
    assert "txe_frames" in (tmp_path / "csv" / "jobs" / "s002_tx_60_if1.csv").read_text()
    assert (tmp_path / "trace.vcd").exists() and (tmp_path / "trace.gtkw").exists()
    scope = (tmp_path / "scope.md").read_text()
    for word in ("breakdown, dma 64 B transfers", "breakdown, dma 4096 B transfers",
                 "Little's law over 6 windows and classes", "equal the host model's timestamps",
                 "Little's law on read tags over 4 windows", "occupancy levels (mean / max)",
                 "device-side latencies: MMIO read", "deep capture (drained as fast",
                 "write breakdown, raw DMA writer, 64 B transfers",
                 "write breakdown, raw DMA writer, 4096 B transfers",
                 "equal the host model's MWr timestamps"):
        assert word in scope, word
    assert (tmp_path / "plots" / "scope_breakdown.png").stat().st_size > 1000
    assert (tmp_path / "csv" / "scope_breakdown.csv").read_text().startswith("path,size,")
    rc, out = bench(tmp_path, "--only", "002,scope")
    assert rc == 0 and " 0 to run" in out, out


def test_usage_errors():
    for args in (["--only", "007"], ["-j", "0"], ["--nicbench", "/nonexistent"]):
        r = subprocess.run([sys.executable, "-m", "bench", *args], cwd=ROOT, capture_output=True,
                           text=True)
        assert r.returncode == 2 and "error:" in r.stderr, (args, r.stderr)
