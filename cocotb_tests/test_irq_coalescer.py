# SPDX-License-Identifier: BSD-2-Clause
#
# test_irq_coalescer.py: pytest entry of the cocotb + Verilator test of rtl/nic/irq_coalescer.py.
#
# What it is: emits IRQCoalescer() (width 16, count_width 32) as Verilog module irq_coalescer,
# builds it with Verilator (build/cocotb/irq_coalescer/, reused while the Verilog is unchanged)
# and runs cocotb_tests/tb_irq_coalescer.py on it (random configurations and event streams vs
# nicmodels/coalesce_model.py: predict_irqs with irq_ready 1, the cycle-stepped model
# with irq_ready random); fails if any cocotb test fails.
# Parameters: SEED, CONFIGS (random configurations per cocotb test), CYCLES per configuration.

import shutil

import pytest

from cocotb_tests.cocotb_run import run
from rtl.nic.irq_coalescer import IRQCoalescer

SEED, CONFIGS, CYCLES = 1, 12, 1200


@pytest.mark.skipif(shutil.which("verilator") is None, reason="verilator not installed")
def test_irq_coalescer_cocotb():
    run(IRQCoalescer(), "irq_coalescer", "cocotb_tests.tb_irq_coalescer",
        env=dict(IRQ_SEED=SEED, IRQ_CONFIGS=CONFIGS, IRQ_CYCLES=CYCLES))
