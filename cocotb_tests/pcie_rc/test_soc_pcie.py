# SPDX-License-Identifier: BSD-2-Clause
#
# test_soc_pcie.py: pytest entry of the SoC-under-cocotbext-pcie tests (tb_soc_pcie.py): one
# Verilator build of build/sim_dw128/gateware (soc_run.build, reused while its sources match),
# run once per configuration below, each in its own build/cocotb/soc_pcie_dw128/run_<tag>/.
#
# Configurations (CONFIGS): every MPS x MRRS the RC can program (128/256/512), each with and
# without backpressure on the SoC's TX stream, gaps in its RX stream and completions split at
# every RCB; each runs enumeration, DMA and the NIC rings, two of them the MMIO sweep.
# test_soc_pcie_misaligned: two of them (one with backpressure and buffers across 4 KiB) with
# descriptors the DMA cannot move (tb_soc_pcie.test_dma_misaligned).
# Seeds: random per run, printed in the summary; PCIE_RC_SEED replays one. Counts: dma_cases
# random DMA transfers per configuration, nic_frames frames for the ring test.

import json
import os
import random
import shutil
import subprocess

import pytest

from cocotb_tests.cocotb_run import BUILD, REPO
from cocotb_tests.pcie_rc.soc_run import run

WIDTH = 128
SIZES = (128, 256, 512)
# Every MPS x MRRS, each without and with backpressure ("_bp": the SoC's tx_ready low 30% of
# cycles, 20% idle beats in its RX stream, the RC's read completions split at every RCB). The
# MMIO sweep does not depend on MPS/MRRS: it runs in two configurations.
CONFIGS = {}
for _mps in SIZES:
    for _mrrs in SIZES:
        for _bp in (False, True):
            _tag = f"mps{_mps}_mrrs{_mrrs}" + ("_bp" if _bp else "")
            CONFIGS[_tag] = dict(mps=_mps, mrrs=_mrrs, tx_ready_prob=0.3 * _bp,
                                 rx_gap_prob=0.2 * _bp, split_rcb=_bp)
MMIO_IN = {"mps256_mrrs512", "mps256_mrrs512_bp"}
DMA_CASES, NIC_FRAMES = 24, 12


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
@pytest.mark.parametrize("tag", sorted(CONFIGS))
def test_soc_pcie(tag, record_property):
    seed = int(os.environ.get("PCIE_RC_SEED", str(random.SystemRandom().getrandbits(32))))
    cfg = dict(CONFIGS[tag], seed=seed, dma_cases=DMA_CASES, nic_frames=NIC_FRAMES)
    tests = ["test_enumerate"] + (["test_mmio"] if tag in MMIO_IN else []) + [
        "test_dma", "test_nic_rings"]
    record_property("summary", f"pcie_rc {tag}: seed {seed} (PCIE_RC_SEED), {DMA_CASES} DMA "
                               f"cases, {NIC_FRAMES} NIC frames"
                               + (", 46 MMIO cases" if tag in MMIO_IN else ""))
    run(WIDTH, "cocotb_tests.pcie_rc.tb_soc_pcie", env=dict(PCIE_RC_CFG=cfg), tag=tag,
        testcase=",".join(tests))


# One h2c transfer as `nicbench dma --latency` makes it (4 KiB-aligned buffer + offset): the
# SoC's read requests and the bytes they ask for must be what the C++ host model counted.
ONE = [dict(size=4096, offset=64, mps=256, mrrs=512), dict(size=1040, offset=0xFC0, mps=128,
                                                            mrrs=128)]
NICBENCH = REPO / "build" / f"sim_dw{WIDTH}" / "nicbench"


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
@pytest.mark.parametrize("one", ONE, ids=lambda o: "h2c{size}_off{offset}_mps{mps}_mrrs{mrrs}"
                         .format(**o))
def test_dma_agrees_with_cpp_model(one, tmp_path):
    if not NICBENCH.exists():
        pytest.fail(f"{NICBENCH} is missing: `make sim W={WIDTH}` (make test builds it)")
    js = tmp_path / "cpp.json"
    r = subprocess.run([str(NICBENCH), "--backend", "sim", "--opts",
                        f"mps={one['mps']},mrrs={one['mrrs']}", "--json", str(js), "dma",
                        "--latency", "--sizes", str(one["size"]), "--count", "2", "--offset",
                        str(one["offset"])], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    cpp = json.loads(js.read_text())["records"][0]
    tag = "one_h2c{size}_off{offset}_mps{mps}_mrrs{mrrs}".format(**one)
    out = BUILD / f"soc_pcie_dw{WIDTH}" / f"run_{tag}" / "one.json"
    out.unlink(missing_ok=True)
    cfg = dict(mps=one["mps"], mrrs=one["mrrs"], seed=1, one=dict(dir="h2c", **{
        k: one[k] for k in ("size", "offset")}))
    run(WIDTH, "cocotb_tests.pcie_rc.tb_soc_pcie", env=dict(PCIE_RC_CFG=cfg,
        PCIE_RC_OUT=str(out)), tag=tag, testcase="test_dma_one")
    ours = json.loads(out.read_text())
    assert (ours["requests"], ours["bytes"]) == (cpp["requests"], one["size"]), (ours, cpp)


# Descriptors LitePCIe's DMA cannot move (byte offsets 1..12, odd lengths, length 0), both
# directions (tb_soc_pcie.test_dma_misaligned): each moved exactly or refused in hardware
# (PCIE_DMA0_GUARD counter + 1, no TLP), guard bytes intact, every TLP through the rule checks;
# the RX ring's misaligned and odd-length buffers (test_nic_rx_misaligned); the NIC's ring,
# writeback and stream base addresses at byte offsets (test_nic_addr_misaligned).
MISALIGNED = {
    "mps256_mrrs512": dict(mps=256, mrrs=512),
    "mps128_mrrs128_bp_near4k": dict(mps=128, mrrs=128, tx_ready_prob=0.3, rx_gap_prob=0.2,
                                     split_rcb=True, near_4k=True),
}


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
@pytest.mark.parametrize("tag", sorted(MISALIGNED))
def test_soc_pcie_misaligned(tag, record_property):
    seed = int(os.environ.get("PCIE_RC_SEED", str(random.SystemRandom().getrandbits(32))))
    record_property("summary", f"pcie_rc misaligned {tag}: seed {seed} (PCIE_RC_SEED)")
    run(WIDTH, "cocotb_tests.pcie_rc.tb_soc_pcie", env=dict(PCIE_RC_CFG=dict(
        MISALIGNED[tag], seed=seed)), tag="misaligned_" + tag,
        testcase="test_dma_misaligned,test_nic_rx_misaligned,test_nic_addr_misaligned")
