# SPDX-License-Identifier: BSD-2-Clause
# The formal proofs of rtl/formal/ (SymbiYosys via yowasp-sby, Yices) at the shallow depths of
# `make test`; `make formal` runs them deeper (python -m rtl.formal.sby_run --deep). Each proof's
# mode, depth and time go to the session's summary. Skipped only when yowasp-sby or Yices is not
# installed (scripts/setup_fpga.sh installs both; `make test` runs it).
import pytest

from rtl.formal.sby_run import proofs, run, sby_missing

PROOFS = proofs()


@pytest.mark.parametrize("name", list(PROOFS))
def test_formal(name, tmp_path, record_property):
    missing = sby_missing()
    if missing:
        pytest.skip(missing)
    r = run(PROOFS[name], workdir=tmp_path)
    record_property("summary", f"formal: {r.line()}")
    assert r.status == "PASS", "\n".join([r.line(), *r.failed(), r.log[-3000:]])


def test_proofs_listed():
    """Every proof names what it proves, and the three cores are covered."""
    assert {"irq_coalescer", "irq_coalescer_cfg", "txqm_ranges", "txqm_fetch_once",
            "occupancy_window", "counter_bank_snap", "counter_bank_all",
            "counter_bank_lane", "counter_bank_coded"} <= set(PROOFS)
    for p in PROOFS.values():
        assert p.properties and p.mode in ("bmc", "prove") and p.deep_depth >= p.depth
