# SPDX-License-Identifier: BSD-2-Clause
# The bus analyzer from the soft CPU: on the VexRiscv build (make sim CPU=1) the LiteX BIOS,
# typed at through the crossover UART, closes a snapshot window and reads ANALYZER_INFO and
# counters over the SoC bus; every value equals the host's read over BAR0.
import fcntl
import json
import subprocess

from sw.sim.sim_build import ROOT


def test_cpu_reads_the_analyzer(tmp_path):
    lock = ROOT / "build" / ".sim_dw128_cpu.lock"
    lock.parent.mkdir(exist_ok=True)
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "sim", "W=128", "CPU=1"], cwd=ROOT, check=True)
    js = tmp_path / "cpu.json"
    r = subprocess.run([str(ROOT / "build" / "sim_dw128_cpu" / "nicscope"), "--json", str(js),
                        "cpu"], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads(js.read_text())["result"]
    assert res["differ"] == 0 and res["compared"] >= 13
    busy = {x["register"]: x["cpu"] for x in res["reads"]}
    # The CPU's values are live counts, not zeros: the DMA load moved 16 KiB each way.
    assert busy["CNT_VALUE dma_rd_cpl.busy"] * 16 == 16384
