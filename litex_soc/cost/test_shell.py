# test_shell.py: the Fmax flow's I/O shell reads every top-level port of the SoC it measures
# (litex_soc/cost/ecp5_fmax.py top_ports, write_shell): wire and registered outputs, vectors and
# single bits. Needs no FPGA tools.
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
