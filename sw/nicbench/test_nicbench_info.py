# SPDX-License-Identifier: BSD-2-Clause
# `nicbench info` and `nicbench stats` on the Verilated SoC (build/sim_dw128/): the register
# blocks the identification block lists are the ones this binary knows, at the SoC's bases, with
# the NIC's MSIs and queue count; `stats --all` lists every counter of the contract by its
# ethtool -S name (sw/include/nic_contract.h, generated from rtl/contract/registers.py).
import re
import subprocess

import pytest

from conftest import nic_run

from rtl.contract import regblocks
from rtl.contract.gen_c import header_text

OPTS = "gen=2,lanes=4,mps=256,mrrs=512"


def record(doc, experiment):
    return next(r for r in doc["records"] if r.get("experiment") == experiment)


def test_info_lists_the_register_blocks(nicbench, tmp_path):
    out, doc = nic_run(nicbench, tmp_path / "info.json", OPTS, "info")
    blocks = {b["name"]: b for b in record(doc, "register_blocks")["blocks"]}
    assert set(blocks) == set(regblocks.BLOCKS) - {"uart"}
    for name, b in blocks.items():
        assert b["known"], f"{name}: layout not this binary's"
        assert b["type"] == regblocks.TYPES[name]
        assert b["base"] % 0x800 == 0 and b["base"] != 0      # 0 is the identification block
    nic = blocks["nic"]["info"]
    assert (nic >> 16, (nic >> 8) & 0xFF) == (4, 3)          # 4 TX queues; RX + 2 TX vectors
    assert blocks["ctrl"]["info"] & 0xFF == regblocks.NO_IRQ
    assert f"register blocks ({len(blocks)})" in out


def test_stats_names_every_counter(nicbench, tmp_path):
    out, doc = nic_run(nicbench, tmp_path / "stats.json", OPTS, "stats", "--all")
    stats = record(doc, "stats")["stats"]
    names = set(re.findall(r'X\(\w+, \w+, \w+, "([^"]+)"', header_text()))
    plain = {n for n in names if "%u" not in n}
    assert plain <= set(stats)
    assert {f"tx_queue_{q}_packets" for q in range(4)} <= set(stats)
    assert {"tx_vec0_irqs", "tx_vec1_irqs"} <= set(stats) and "tx_vec2_irqs" not in stats
    assert all(isinstance(v, int) for v in stats.values())
    assert stats["tx_frames"] == 0                          # a fresh device
    _, doc = nic_run(nicbench, tmp_path / "stats0.json", OPTS, "stats")
    assert not any(record(doc, "stats")["stats"].values())   # only non-zero counters by default



MISSING = "no/such"              # a folder under tmp_path that does not exist


@pytest.mark.parametrize("what, args", [
    ("trace", ["--opts", f"{OPTS},trace={MISSING}/x.fst", "info"]),
    ("trace", ["--opts", f"{OPTS},trace={MISSING}/x.vcd", "info"]),
    ("pcap", ["--opts", f"{OPTS},pcap={MISSING}/w.pcapng", "info"]),
    ("--json", ["--json", f"{MISSING}/o.json", "info"]),
    ("--json", ["--json", ".", "info"]),                      # a directory
])
def test_unwritable_output_refused_before_the_run(nicbench, tmp_path, what, args):
    """An output that cannot be created (the sim backend's trace= and pcap=, --json) is one
    error line and exit 2 before any simulated time, never "ok"; nothing is left behind."""
    r = subprocess.run([str(nicbench)] + args, capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    err = r.stderr.splitlines()
    assert len(err) == 1 and err[0].startswith("nicbench: ") and what in err[0], err
    assert "cannot create" in err[0] and "ok" not in r.stdout and "sim speed" not in r.stdout
    assert not list(tmp_path.iterdir())


def test_outputs_whole_or_not_at_all(nicbench, tmp_path):
    """A usage error in the command's own options leaves no JSON; a writable trace is written
    whole under its name, with no part file left."""
    r = subprocess.run([str(nicbench), "--json", "o.json", "csr", "--samples", "x"],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 2 and not list(tmp_path.iterdir())
    _, doc = nic_run(nicbench, tmp_path / "o.json", f"{OPTS},trace={tmp_path}/t.fst", "info")
    assert doc["status"] == "ok" and (tmp_path / "t.fst").stat().st_size > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.json", "t.fst"]
