# SPDX-License-Identifier: BSD-2-Clause
#
# Tests of the ECPIX-5 target (ecpix5.py): the SoC generates for the board (Verilog, pins and
# clock constraints, the firmware in the ROM, the register map), and the timing check passes or
# fails on nextpnr reports. The bitstream itself: `python -m litex_soc.targets.ecpix5 --build`
# (many minutes; not run here).
import json
import subprocess
import sys

import pytest

from litex_soc.targets import ecpix5


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("ecpix5")
    subprocess.run([sys.executable, "-m", "litex_soc.targets.ecpix5", "--output-dir", str(out)],
                   check=True, capture_output=True, cwd=ecpix5.Path(__file__).parents[2])
    return out


def test_generation(generated):
    gw = generated / "gateware"
    top = (gw / "ecpix5.v").read_text()
    # The datapath on Wishbone masters, no LitePCIe; VexRiscv lite; the RGMII PHY.
    assert "nic_datapath nic_datapath" in top and "litepcie" not in top.lower()
    assert "VexRiscv" in top and "eth_rx_ctl" in top and "eth_tx_data" in top
    lpf = (gw / "ecpix5.lpf").read_text()
    for pin in ("K23", "A11", "C9", "E11", "R24", "R26"):      # clk100, RGMII, UART
        assert f'"{pin}"' in lpf, pin
    assert "FREQUENCY" in lpf and "125.0" in lpf
    # The firmware is the ROM's content: its first words are the start-up code.
    fw = (generated / "firmware" / "firmware.bin").read_bytes()
    rom = (gw / "ecpix5_rom.init").read_text().split()
    assert len(fw) > 4096
    words = [int.from_bytes(fw[i:i + 4], "little") for i in range(0, 64, 4)]
    assert [int(w, 16) for w in rom[:16]] == words
    regmap = (generated / "register_map.md").read_text()
    assert "nic_rdadp_requests" in regmap.lower() or "rdadp_requests" in regmap


def report(tmp_path, fmax):
    gw = tmp_path / "gateware"
    gw.mkdir()
    (gw / "nextpnr_report.json").write_text(json.dumps({
        "fmax": fmax, "utilization": {"TRELLIS_COMB": {"used": 10, "available": 20}}}))
    return gw


def test_timing_met(tmp_path, capsys):
    gw = report(tmp_path, {"$glbnet$sys_clk": {"achieved": 61.2, "constraint": 50.0},
                           "$glbnet$eth_rx_clk": {"achieved": 140.0, "constraint": 125.0}})
    ecpix5.check_timing(tmp_path, gw, 50e6, {"seconds": 1.0})
    out = capsys.readouterr().out
    assert "Fmax 61.20 MHz (constraint 50.00 MHz)" in out and "TRELLIS_COMB: 10 / 20" in out
    assert json.loads((tmp_path / "timing.json").read_text())["seconds"] == 1.0


@pytest.mark.parametrize("fmax,why", [
    ({"clk": {"achieved": 49.9, "constraint": 50.0}}, "timing not met: clk"),
    ({"clk": {"achieved": 60.0, "constraint": 50.0},
      "eth": {"achieved": 120.0, "constraint": 125.0}}, "timing not met: eth"),
    ({"eth": {"achieved": 130.0, "constraint": 125.0}}, "no 50.0 MHz clock"),
])
def test_timing_missed(tmp_path, fmax, why):
    gw = report(tmp_path, fmax)
    with pytest.raises(SystemExit, match=why):
        ecpix5.check_timing(tmp_path, gw, 50e6, None)
