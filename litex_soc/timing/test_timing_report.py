# SPDX-License-Identifier: BSD-2-Clause
# timing_report.py on a small nextpnr report: Fmax per clock against its constraint, the
# critical path cut into cores by the HDL source of its nets (Amaranth's module, LiteX's line)
# and by cell names, and the exit status on a missed clock.
import json
import subprocess
import sys

from litex_soc.timing import timing_report

NICSOC = "module nicsoc();\n  wire pcie_max_payload_size;\n  assign x = csr_bankarray_dat;\n"
DATAPATH = "module nic_datapath();\nendmodule\nmodule \\nic_datapath.rxe (a);\n  assign b = a;\n"


def step(kind, cell, delay, port="F", sources=()):
    s = {"type": kind, "delay": delay, "from": {"cell": cell}, "to": {"cell": cell, "port": port}}
    if sources:
        s["sources"] = list(sources)
    return s


REPORT = {
    "fmax": {"sys_clk": {"achieved": 60.5, "constraint": 50},
             "eth_rx": {"achieved": 100.0, "constraint": 125}},
    "critical_paths": [{"from": "posedge sys_clk", "to": "posedge sys_clk", "path": [
        step("clk-to-q", "in_chain_FF", 0.5, "Q"),
        step("routing", "lut_a", 0.8, sources=["gateware/nicsoc.v:2.3-2.30"]),
        step("logic", "lut_a", 0.24),
        step("routing", "lut_b", 1.0, sources=["gateware/nicsoc.v:3.1-3.20"]),
        step("logic", "lut_b", 0.24),
        step("routing", "soc.nic_datapath.rxe.x_LUT4", 2.0,
             sources=["gateware/nic_datapath.v:4.1"]),
        step("logic", "soc.nic_datapath.rxe.x_LUT4", 0.24),
        step("routing", "carry$CCU2", 0.0),
        step("logic", "carry$CCU2", 0.07, "FCO"),
        step("routing", "soc.nic_datapath.rxe.ff", 0.5),
        step("setup", "soc.nic_datapath.rxe.ff", 0.1, "DI"),
    ]}],
}


def test_summary(tmp_path):
    (tmp_path / "gateware").mkdir()
    (tmp_path / "gateware" / "nicsoc.v").write_text(NICSOC)
    (tmp_path / "gateware" / "nic_datapath.v").write_text(DATAPATH)
    s = timing_report.summarize(REPORT, tmp_path)
    assert [(c["clock"], c["met"]) for c in s["clocks"]] == [("sys_clk", True), ("eth_rx", False)]
    assert not s["ok"]
    (p,) = s["paths"]
    assert p["delay_ns"] == 5.69 and p["end"] == "soc.nic_datapath.rxe.ff"
    # A LUT is the core of the net it drives: lut_a computes the CSR line's signal, lut_b the
    # RX engine's; the carry cell's inner net has no source and stays in the RX engine.
    assert [(c["core"], c["levels"]) for c in p["cores"]] == [
        ("PCIe link configuration (MPS, MRRS)", 0), ("CSR register blocks", 1),
        ("NIC datapath: rxe", 2)]


def test_exit_status(tmp_path):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(REPORT))
    r = subprocess.run([sys.executable, "-m", "litex_soc.timing.timing_report", str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "eth_rx: Fmax 100.00 MHz (constraint 125.00 MHz) MISSED" in \
        r.stdout
    met = json.loads(json.dumps(REPORT))            # a copy: test_summary needs REPORT
    met["fmax"]["eth_rx"]["achieved"] = 130.0
    path.write_text(json.dumps(met))
    r = subprocess.run([sys.executable, "-m", "litex_soc.timing.timing_report", str(path)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "litex_soc.timing.timing_report",
                        str(tmp_path / "none.json")], capture_output=True, text=True)
    assert r.returncode != 0 and "no routed report" in r.stderr
