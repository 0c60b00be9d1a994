# SPDX-License-Identifier: BSD-2-Clause
# Full-system tests: the Verilated SoC (LitePCIe endpoint, DMA, MSI) against the C++ PCIe host
# model, driven by the real C host code (nicbench and the host library), for both PHY widths.
import json
import subprocess

import pytest

from sw.sim.sim_build import WIDTHS, build


@pytest.fixture(scope="session", params=WIDTHS, ids=[f"dw{w}" for w in WIDTHS])
def nicbench(request):
    return build(request.param), request.param


def run(binary, opts, *args, expect=0, tmp_path=None):
    cmd = [str(binary), "--backend", "sim", "--opts", opts]
    json_path = None
    if tmp_path is not None:
        json_path = tmp_path / "out.json"
        cmd += ["--json", str(json_path)]
    r = subprocess.run(cmd + list(args), capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == expect, f"exit {r.returncode}, wanted {expect}:\n{out}"
    data = json.loads(json_path.read_text()) if json_path and json_path.exists() else None
    return out, data


def opts(width, extra=""):
    base = f"data_width={width}"
    return f"{base},{extra}" if extra else base


def test_scratch_and_identification(nicbench, tmp_path):
    binary, width = nicbench
    out, data = run(binary, opts(width), "info", tmp_path=tmp_path)
    assert "0x4e494331" in out.lower()
    assert data["params"]["data_width"] == width


def test_dma_loopback_random_sizes_and_alignments(nicbench):
    binary, width = nicbench
    # Random sizes (multiples of 16 B) at random 4 KiB-aligned offsets: bit-exact.
    out, _ = run(binary, opts(width), "loopback", "--count", "24", "--seed", "7",
                 "--max-size", "32768")
    assert "mismatch" not in out.lower() or "0 mismatch" in out.lower()


def test_msi_arrives_for_each_direction(nicbench):
    binary, width = nicbench
    run(binary, opts(width), "dma", "--dir", "both", "--sizes", "4096", "--min-bytes", "4096")


@pytest.mark.parametrize("mps", [128, 256])
def test_unaligned_dma_stays_inside_4k(nicbench, tmp_path, mps):
    # Buffers at 16-byte offsets, not aligned to MPS/MRRS: the DMA's splitter (our LitePCIe
    # patch 0001) ends every request at a 4 KiB boundary, so the model, which rejects a request
    # crossing one (test_tlp_checker.cpp), counts none, and the data loops back intact.
    binary, width = nicbench
    out, data = run(binary, opts(width, f"mps={mps},mrrs=512,strict=1"), "loopback",
                    "--unaligned", "--count", "16", "--seed", "3", "--max-size", "16384",
                    tmp_path=tmp_path)
    assert " 0 mismatches" in out
    assert all(v == 0 for v in data["model_checks"].values()), data["model_checks"]


def test_model_rejects_mps_violation(nicbench):
    # Tell the device MPS 512 while the link runs MPS 128: its 512-byte writes violate MPS.
    binary, width = nicbench
    out, _ = run(binary, opts(width, "mps=128,dev_mps=512"), "dma", "--dir", "c2h", "--sizes",
                 "4096", "--min-bytes", "4096", expect=1)
    assert "mps" in out.lower()
