# SPDX-License-Identifier: BSD-2-Clause
#
# nicmodels: the Python models and stimulus the NIC's tests share, as Corundum's tb/mqnic.py and
# LitePCIe's test/model/: the driver model of sw/lib/nic_queues.c (nic_driver.py), the
# coalescer's reference model (coalesce_model.py), and what the amaranth.sim tests (rtl/) and the
# cocotb testbenches (cocotb_tests/tb_*.py) both drive and check with. A package of its own, not
# a test module and not under cocotb_tests/, so that both kinds of test import it and no test
# module imports another (tests/test_imports.py). Never imported by gateware.
