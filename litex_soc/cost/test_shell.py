# SPDX-License-Identifier: BSD-2-Clause
# test_shell.py: the Fmax flow's I/O shell reads every top-level port of the SoC it measures
# (litex_soc/cost/ecp5_fmax.py top_ports, write_shell): wire and registered outputs, vectors and
# single bits; the SoC runs' analyzer leaves out the build options asked (--analyzer-without).
# Needs no FPGA tools.
import subprocess
import sys

from litex_soc.cost import ecp5_fmax


def test_top_ports_of_the_soc(tmp_path):
    subprocess.run([sys.executable, "-m", "litex_soc.targets.sim", "--data-width", "64",
                    "--output-dir", str(tmp_path)], check=True, capture_output=True)
    top = tmp_path / "gateware" / "nicsoc.v"
    ports = {name: (d, w) for d, w, name in ecp5_fmax.top_ports(top)}
    assert ports["eth_tx_data"] == ("output", 8)          # a registered output
    assert ports["eth_rx_dv"] == ("input", 1)
    assert ports["pcie_rx_dat"] == ("input", 64)
    assert ports["sys_clk"] == ("input", 1)
    ins, outs = ecp5_fmax.write_shell(top, tmp_path / "shell.v")
    assert ins == sum(w for d, w in ports.values() if d == "input") - 2    # without clk, rst
    assert outs == sum(w for d, w in ports.values() if d == "output")


def test_analyzer_without_options(tmp_path):
    whole = ecp5_fmax.build_soc(64, True, tmp_path / "a").analyzer
    assert whole.breakdown is not None and whole.wr_breakdown is not None and whole._events
    an = ecp5_fmax.build_soc(64, True, tmp_path / "b", ["breakdown", "events"]).analyzer
    assert an.breakdown is None and an._events == set()
    assert an.wr_breakdown is not None and an._levels
