# SPDX-License-Identifier: BSD-2-Clause
#
# test_tx_scheduler.py: pytest entry of the cocotb + Verilator test of rtl/nic/tx_scheduler.py.
#
# What it is: emits TXScheduler(nqueues) as Verilog module tx_scheduler_<n>, builds it with
# Verilator (build/cocotb/tx_scheduler_<n>/, reused while the Verilog is unchanged) and runs
# the cocotb testbench cocotb_tests/tb_tx_scheduler.py on it (each policy and mixed traffic vs
# the reference model of nicmodels/tx_scheduler_model.py, cycle by cycle); fails if any cocotb test
# fails.
# Parameters: N (queues: 5, not a power of two), SEED, CYCLES per cocotb test.

import shutil

import pytest

from cocotb_tests.cocotb_run import run
from rtl.nic.tx_scheduler import TXScheduler

N, SEED, CYCLES = 5, 1, 3000


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
def test_tx_scheduler_cocotb():
    run(TXScheduler(N), f"tx_scheduler_{N}", "cocotb_tests.tb_tx_scheduler",
        env=dict(SCHED_N=N, SCHED_SEED=SEED, SCHED_CYCLES=CYCLES))
