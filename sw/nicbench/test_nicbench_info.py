# `nicbench info` and `nicbench stats` on the Verilated SoC (build/sim_dw128/): the register
# blocks the identification block lists are the ones this binary knows, at the SoC's bases, with
# the NIC's MSIs and queue count; `stats --all` lists every counter of the contract by its
# ethtool -S name (sw/include/nic_contract.h, generated from rtl/contract/registers.py).
import re

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
    assert "register blocks (8)" in out


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
