# SPDX-License-Identifier: BSD-2-Clause
#
# test_nic_datapath.py: pytest entry of the cocotb + Verilator test of rtl/nic/nic_datapath.py.
#
# What it is: emits NICDatapath(data_width=128, ntxq=4) as Verilog module nic_datapath_128,
# builds it with Verilator (build/cocotb/nic_datapath_128/, reused while the Verilog is
# unchanged; the first build takes a few minutes on one core) and runs
# cocotb_tests/tb_nic_datapath.py on it (host memory, DMA responder, MAC loopback and driver as
# cocotb coroutines; NFRAMES frames per queue, 1..MAX_FRAGS descriptors each, checked bit-exact
# and in order); fails if any cocotb test fails.
# Parameters: SEED, NFRAMES (per queue, 4 queues), MAX_FRAGS.

import shutil

import pytest

from cocotb_tests.cocotb_run import run
from rtl.nic.nic_datapath import NICDatapath

SEED, NFRAMES, MAX_FRAGS, DATA_WIDTH = 1, 8, 2, 128


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
def test_nic_datapath_cocotb():
    run(NICDatapath(data_width=DATA_WIDTH, ntxq=4), f"nic_datapath_{DATA_WIDTH}",
        "cocotb_tests.tb_nic_datapath",
        env=dict(NIC_CFG=dict(seed=SEED, nframes=NFRAMES, max_frags=MAX_FRAGS,
                              data_width=DATA_WIDTH)))
