# SPDX-License-Identifier: BSD-2-Clause
# The analyzer section's cost part: a `make cost` result is shown as current only for the
# gateware it measured, marked stale otherwise, and missing is said; the gateware key follows
# the gateware's sources and nothing else.
import json
import shutil

from bench.experiments.nicscope import cost_part
from litex_soc.gateware_key import ROOT, gateware_files, gateware_key

XC7 = {"lut": 11375, "ff": 6788, "bram_36k_equiv": 12.0, "lutram": 660}
ECP5 = {"lut4_equiv": 18714, "ff": 7615, "dp16kd": 24}


def doc(key, fmax=True):
    d = {"gateware_key": key, "options": {"soc_analyzer_without": ""},
         "xc7": {"summary": XC7}, "ecp5": {"summary": ECP5},
         "features": {"breakdown": {"what": "the read latency breakdown",
                                    "xc7": {**XC7, "lut": 2100}, "ecp5": {**ECP5, "ff": 900}}}}
    if fmax:
        d["fmax"] = {v: {str(s): {"routed": True, "sys_fmax_mhz": 50.0 + s + (v == "with"),
                                  "sys_fmax_placed_mhz": 40.0 + s} for s in range(1, 6)}
                     for v in ("without", "with")}
        d["fmax_delta_mhz"] = {"routed": {"median": 1.0, "rank_test": {"u": 17, "p": 0.3176}}}
    return d


def test_current_result(tmp_path):
    p = tmp_path / "analyzer_cost.json"
    p.write_text(json.dumps(doc("a" * 64)))
    verdicts, body, csv = cost_part(p, "a" * 64)
    assert "STALE" not in body + "".join(verdicts)
    assert verdicts[0].startswith("analyzer cost (current): 11375 LUT, 6788 FF, 12 x 36 Kb")
    assert "median +1.00 MHz, exact rank test p = 0.318 (not set apart" in verdicts[1]
    assert "| breakdown: the read latency breakdown | 2100 |" in body
    assert body.count("| with |") == 5 and body.count("| without |") == 5
    assert csv["scope_cost"][0]["xc7_lut"] == 11375


def test_stale_and_missing(tmp_path):
    p = tmp_path / "analyzer_cost.json"
    p.write_text(json.dumps(doc("b" * 64, fmax=False)))
    verdicts, body, _ = cost_part(p, "a" * 64)
    assert "STALE: measured on gateware bbbbbbbbbbbb, this tree is aaaaaaaaaaaa" in body
    assert all("STALE" in v for v in verdicts)
    assert "not in the last `make cost` result" in verdicts[-1]
    verdicts, body, csv = cost_part(None, "a" * 64)
    assert "not measured" in verdicts[0] and body == "" and csv == {}


def test_key_follows_the_gateware_only(tmp_path):
    tree = tmp_path / "tree"
    for rel in gateware_files() + ["rtl/nic/test_tx_engine.py", "litex_soc/cost/ecp5_fmax.py"]:
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tree / rel)
    key = gateware_key(tree)
    assert key == gateware_key()
    for rel in ("rtl/nic/test_tx_engine.py", "litex_soc/cost/ecp5_fmax.py"):
        (tree / rel).write_text("# not the gateware\n")
        assert gateware_key(tree) == key, rel
    (tree / "rtl/nic/tx_engine.py").write_text((tree / "rtl/nic/tx_engine.py").read_text() + "\n")
    assert gateware_key(tree) != key
