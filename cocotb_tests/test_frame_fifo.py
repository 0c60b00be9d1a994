# SPDX-License-Identifier: BSD-2-Clause
#
# test_frame_fifo.py: pytest entry of the cocotb + Verilator tests of rtl/nic/frame_fifo.py.
#
# What it is: for each configuration below, emits FrameFIFO(...) as Verilog module
# frame_fifo_<tag> (in rtl/nic/flat_ports.py's FlatShell: its stream ports `s`, `m` as the flat
# s_*, m_* ports the AXI-stream models drive; no s_ready in drop mode), builds it with
# Verilator (build/cocotb/frame_fifo_<tag>/, reused while the Verilog is unchanged) and runs
# cocotb_tests/tb_frame_fifo.py on it (cocotbext-axi source and back-pressuring sink, random
# good / bad-FCS / oversize / runt frames, checked against the core's drop rules and
# nicmodels/frame_fifo_model.py's cycle-accurate model); fails if any cocotb test fails.
# Parameters (CONFIGS): rx = the RX side (drop mode, 4-byte beats, a length FIFO of 4 frames:
# frames are dropped full under back-pressure); tx = the TX side (backpressure=True, 8-byte
# beats, max_len > depth so frames bigger than the memory are dropped full, nothing else).

import shutil

import pytest

from cocotb_tests.cocotb_run import run
from rtl.nic.flat_ports import FlatShell
from rtl.nic.frame_fifo import FrameFIFO

CONFIGS = {
    "rx": dict(data_width=4, depth=256, max_frames=4, backpressure=False, max_len=120,
               min_len=16, nframes=150, seed=1),
    "tx": dict(data_width=8, depth=256, max_frames=None, backpressure=True, max_len=300,
               min_len=16, nframes=150, seed=2),
}


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
@pytest.mark.parametrize("tag", sorted(CONFIGS))
def test_frame_fifo_cocotb(tag):
    cfg = CONFIGS[tag]
    core = FrameFIFO(data_width=cfg["data_width"], depth=cfg["depth"],
                     max_frames=cfg["max_frames"], backpressure=cfg["backpressure"])
    run(FlatShell(core), f"frame_fifo_{tag}", "cocotb_tests.tb_frame_fifo",
        env=dict(FIFO_CFG=cfg))
