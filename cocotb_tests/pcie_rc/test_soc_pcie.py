#
# test_soc_pcie.py: pytest entry of the SoC-under-cocotbext-pcie tests (tb_soc_pcie.py): one
# Verilator build of build/sim_dw128/gateware (soc_run.build, reused while its sources match),
# run once per configuration below, each in its own build/cocotb/soc_pcie_dw128/run_<tag>/.
#
# Configurations (CONFIGS): the RC's MPS x MRRS, with and without backpressure on the SoC's TX
# stream, gaps in its RX stream and completions split at every RCB; which cocotb tests each runs
# (enumeration, MMIO and the NIC rings once; DMA in every configuration).
# Seeds: random per run, printed in the summary; PCIE_RC_SEED replays one. Counts: dma_cases
# random DMA transfers per configuration, nic_frames frames for the ring test.

import os
import random
import shutil

import pytest

from cocotb_tests.pcie_rc.soc_run import run

WIDTH = 128
TESTS = {"full": "test_enumerate,test_mmio,test_dma,test_nic_rings", "dma": "test_dma"}
CONFIGS = {
    "mps256_mrrs512":      dict(mps=256, mrrs=512, tests="full"),
    "mps128_mrrs128_bp":   dict(mps=128, mrrs=128, tx_ready_prob=0.3, rx_gap_prob=0.2,
                                tests="dma"),
    "mps512_mrrs256_rcb":  dict(mps=512, mrrs=256, split_rcb=True, tx_ready_prob=0.2,
                                tests="dma"),
}
DMA_CASES, NIC_FRAMES = 12, 16


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
@pytest.mark.parametrize("tag", sorted(CONFIGS))
def test_soc_pcie(tag, record_property):
    seed = int(os.environ.get("PCIE_RC_SEED", str(random.SystemRandom().getrandbits(32))))
    cfg = dict(CONFIGS[tag], seed=seed, dma_cases=DMA_CASES, nic_frames=NIC_FRAMES)
    tests = TESTS[cfg.pop("tests")]
    record_property("summary", f"pcie_rc {tag}: seed {seed} (PCIE_RC_SEED), {DMA_CASES} DMA "
                               f"cases" + (f", {NIC_FRAMES} NIC frames" if "nic" in tests else ""))
    run(WIDTH, "cocotb_tests.pcie_rc.tb_soc_pcie", env=dict(PCIE_RC_CFG=cfg), tag=tag,
        testcase=tests)
