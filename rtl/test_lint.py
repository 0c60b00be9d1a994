# SPDX-License-Identifier: BSD-2-Clause
# Every Amaranth core's emitted Verilog passes `verilator --lint-only -Wall` (with the Yosys
# backend waivers of rtl/verilator_lint.vlt), for every data width the SoC builds. The cores
# that are not yet in the SoC lint themselves in their own tests.
import pytest

from rtl.dmatest.emit import CORES, module_name
from rtl.verilator_lint import verilator_lint


@pytest.mark.parametrize("core", sorted(CORES))
@pytest.mark.parametrize("data_width", [64, 128])
def test_verilator_lint(core, data_width, tmp_path):
    verilator_lint(CORES[core](data_width=data_width), module_name(core, data_width), tmp_path)


@pytest.mark.parametrize("data_width", [64, 128])
def test_verilator_lint_analyzer(data_width, tmp_path):
    """The bus analyzer as the SoC builds it (litex_soc/nic_soc.py's probes)."""
    from litex_soc.nic_soc import (ANALYZER_DEPTH, ANALYZER_EVENT_LIST, ANALYZER_FIGURES,
                                   ANALYZER_LATENCY, ANALYZER_TRACKS, analyzer_breakdown,
                                   analyzer_levels, analyzer_probes, analyzer_wr_breakdown)
    from rtl.nicscope.analyzer import BusAnalyzer

    core = BusAnalyzer(analyzer_probes(data_width), depth=ANALYZER_DEPTH,
                       latency=ANALYZER_LATENCY, breakdown=analyzer_breakdown(data_width),
                       levels=analyzer_levels(4), events=ANALYZER_EVENT_LIST, stream=data_width,
                       figures=ANALYZER_FIGURES, tracks=ANALYZER_TRACKS,
                       wr_breakdown=analyzer_wr_breakdown())
    verilator_lint(core, "nic_bus_analyzer", tmp_path)
