# SPDX-License-Identifier: BSD-2-Clause
# cocotb tests of the cores' emitted Verilog (Verilator): test_<core>.py (pytest) runs
# tb_<core>.py (cocotb) through cocotb_run.py.
