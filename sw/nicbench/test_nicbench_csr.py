# SPDX-License-Identifier: BSD-2-Clause
# nicbench csr on the simulator: register read and write costs idle and under a card-to-host
# DMA stream, and the reads the device held behind earlier DMA writes (litex_soc/pcie/
# cpl_order.py: a completion waits until the writes taken before it left on the PHY).
from conftest import nic_run

OPTS = "gen=2,lanes=4,mps=256,mrrs=512"


def test_csr_reads_not_held_without_writes(nicbench, tmp_path):
    out, doc = nic_run(nicbench, tmp_path / "csr.json", OPTS, "csr", "--samples", 200)
    assert doc["status"] == "ok", out
    held = {r["condition"]: r for r in doc["records"] if r["experiment"] == "csr_cpl_held"}
    assert set(held) == {"idle", "c2h DMA stream"}, out
    # idle: no write in flight, no read waits. Under the stream the DMA writer is held off
    # while a register read is in progress (the hold-off table), so a read's completion
    # finds the writes before it gone: none waits there either.
    assert held["idle"]["held"] == 0 and held["c2h DMA stream"]["held"] == 0, held
    lat = {r["condition"]: r for r in doc["records"]
           if r["experiment"] == "csr_latency" and r["access"] == "read"}
    assert lat["idle"]["max_ns"] < lat["c2h DMA stream"]["mean_ns"], lat
