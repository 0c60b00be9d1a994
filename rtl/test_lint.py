# Every Amaranth core's emitted Verilog passes `verilator --lint-only -Wall` (with the Yosys
# backend waivers of rtl/verilator_lint.vlt), for every data width the SoC builds.
import subprocess
from pathlib import Path

import pytest

from rtl.emit import CORES, emit

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("core", sorted(CORES))
@pytest.mark.parametrize("data_width", [64, 128])
def test_verilator_lint(core, data_width, tmp_path):
    path = tmp_path / f"{core}_{data_width}.v"
    emit(core, data_width, str(path))
    r = subprocess.run(["verilator", "--lint-only", "-Wall", str(HERE / "verilator_lint.vlt"),
                        str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "%Warning" not in r.stderr, r.stderr


@pytest.mark.parametrize("data_width", [64, 128])
def test_verilator_lint_bus_analyzer(data_width, tmp_path):
    """The bus analyzer as the SoC builds it (litex_soc/nic_soc.py's probes)."""
    from amaranth.back import verilog

    from litex_soc.nic_soc import ANALYZER_DEPTH, ANALYZER_LATENCY, analyzer_probes
    from rtl.bus_analyzer import BusAnalyzer

    core = BusAnalyzer(analyzer_probes(data_width), depth=ANALYZER_DEPTH,
                       latency=ANALYZER_LATENCY)
    path = tmp_path / "nic_bus_analyzer.v"
    path.write_text(verilog.convert(core, name="nic_bus_analyzer", emit_src=False))
    r = subprocess.run(["verilator", "--lint-only", "-Wall", str(HERE / "verilator_lint.vlt"),
                        str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "%Warning" not in r.stderr, r.stderr
