# SPDX-License-Identifier: BSD-2-Clause
# The soak runner (scripts/soak.py, `make soak`) on the soak's build of the Verilated SoC (the
# Ethernet side on its own clock at 8 times the system clock, no analyzer): two short chunks
# with faults on, their totals summed from the chunks' own JSON, a rerun that skips both
# chunks, and a failed chunk (an unknown option) reported as a failure, not counted.

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OPTS = "gen=2,lanes=4,mps=256,mrrs=512,fault_ur=0.01,fault_cpl_split=0.2"


def soak(nicbench, out, opts=OPTS):
    return subprocess.run([sys.executable, str(ROOT / "scripts" / "soak.py"), "--nicbench",
                           str(nicbench), "--opts", opts, "--frames", "300", "--chunk", "150",
                           "--jobs", "2", "--progress", "100", "--out", str(out), "--",
                           "--queues", "4"], capture_output=True, text=True, timeout=600)


def test_soak_build(soak_nicbench):
    top = (soak_nicbench.parent / "gateware" / "nicsoc.v").read_text()
    assert "input  wire          eth_clk" in top and "assign eth_tx_clk = eth_clk;" in top
    assert "nic_bus_analyzer" not in top


def test_soak_chunks_resume(soak_nicbench, tmp_path):
    nicbench = soak_nicbench
    out = tmp_path / "soak"
    p = soak(nicbench, out)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "2 to run on 2 jobs" in p.stdout
    total = json.loads((tmp_path / "soak.json").read_text())
    chunks = [json.loads((out / f"chunk_{i:05d}.json").read_text()) for i in range(2)]
    assert [c["records"][0]["seed"] for c in chunks] == [1, 2]
    for k in ("sent", "received", "lost", "lost_unexplained", "corrupted"):
        assert total["records"][k] == sum(c["records"][0][k] for c in chunks), k
    assert total["records"]["sent"] == 300 and total["records"]["corrupted"] == 0
    assert total["model_faults"]["fault_ur"] == sum(c["model_faults"]["fault_ur"]
                                                    for c in chunks) > 0
    assert total["model_checks"]["iommu_faults"] == 0
    assert all(c["params"]["eth_ratio"] == 8 for c in chunks)
    again = soak(nicbench, out)
    assert again.returncode == 0 and "2 already done" in again.stdout, again.stdout
    assert "chunk 0 started" not in again.stdout


def test_soak_failed_chunk(soak_nicbench, tmp_path):
    p = soak(soak_nicbench, tmp_path / "soak", opts=OPTS + ",no_such_opt=1")
    assert p.returncode == 1
    assert "chunk 0 FAILED" in p.stdout and "chunk 1 FAILED" in p.stdout
    assert not list((tmp_path / "soak").glob("chunk_*.json"))
