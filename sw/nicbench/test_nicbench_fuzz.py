# SPDX-License-Identifier: BSD-2-Clause
# Faults and fuzz through the whole SoC (docs/faults.md): `nicbench fuzz` on the Verilated SoC
# (build/sim_dw128/) with the host model's fault injection, one fault class per test, then the
# descriptor and control fuzz. Each run must end (no hang: the tool's own timeouts and the
# subprocess timeout), with every frame received intact and in order and every frame lost
# covered by a device counter (the tool fails otherwise), the fault injected and reported by
# the device's counter where it has one, and no TLP error or IOMMU fault in the host model.
# Seeds are printed; FUZZ_SEED=N replays them. A few hundred frames per run.

import os
import random

import pytest
from conftest import nic_run

OPTS = "gen=2,lanes=4,mps=256,mrrs=512"
SEED = int(os.environ.get("FUZZ_SEED", random.randrange(1 << 32)))
print(f"test_nicbench_fuzz: FUZZ_SEED={SEED}")

# class: (fault opts, model counter that must move, device counter that must move or None)
FAULTS = {
    "cpl_timeout": ("fault_cpl_timeout=0.01", "fault_cpl_timeouts", "cpl_timeouts"),
    "ur": ("fault_ur=0.02", "fault_ur", "cpl_unsupported"),
    "ca": ("fault_ca=0.02", "fault_ca", "cpl_aborts"),
    "poisoned": ("fault_ep=0.02", "fault_ep_tlps", "cpl_poisoned"),
    "cpl_split": ("fault_cpl_split=0.5", "fault_split_reads", None),
    "cpl_reorder": ("fault_cpl_reorder=0.5", "fault_reordered", None),
    "credit_starve": ("fault_credit_starve=0.01,fault_starve_ns=5000", "fault_starves", None),
    "link_down": ("fault_link_down_at_ns=700000,fault_link_down=0.0005,fault_link_down_ns=5000",
                  "fault_link_downs",
                  "link_downs"),
}
# Faults that only slow the device: nothing may be lost.
LOSSLESS = {"cpl_split", "cpl_reorder", "credit_starve"}


def fuzz(nicbench, tmp_path, opts, *args, timeout=900):
    out, doc = nic_run(nicbench, tmp_path / "fuzz.json", opts, "fuzz", "--seed", SEED, *args,
                       timeout=timeout)
    assert doc["status"] == "ok", out
    (rec,) = [r for r in doc["records"] if r["experiment"] == "fuzz"]
    assert rec["seed"] == SEED
    assert rec["corrupted"] == 0 and rec["out_of_order"] == 0, rec
    assert rec["lost_unexplained"] == 0, rec
    # every errored TX frame reported twice: per queue by the device and in the writebacks
    assert rec["device"]["tx_wb_errors"] == rec["device"]["tx_errored_frames"], rec["device"]
    checks = doc["model_checks"]
    assert not any(checks.values()), checks          # incl. iommu_faults
    return out, doc, rec


@pytest.mark.parametrize("cls", list(FAULTS))
def test_fault_class(nicbench, tmp_path, cls):
    opts, model_counter, device_counter = FAULTS[cls]
    out, doc, rec = fuzz(nicbench, tmp_path, f"{OPTS},{opts},fault_seed={SEED}",
                         "--frames", 300, "--queues", 2)
    assert doc["model_faults"][model_counter] > 0, (out, doc["model_faults"])
    assert f"fault_seed={SEED}" in out
    if device_counter:
        assert rec["device"][device_counter] > 0, (out, rec["device"])
    if cls in ("ur", "ca", "poisoned"):     # failed payload reads: frames ended with READ
        assert rec["device"]["tx_errored_frames"] > 0, rec["device"]
    if cls in LOSSLESS:
        assert rec["lost"] == 0 and rec["received"] == rec["sent"] == 300, rec
        assert rec["watchdog_resets"] == 0, rec
    elif cls == "link_down":
        # the driver saw the link-down and ran its reset path; frames went on arriving
        assert rec["link_resets"] > 0 and rec["received"] > 0, rec
    else:
        # the device went on: most frames still arrive
        assert rec["received"] >= rec["sent"] // 2, rec


# One link-down just after TX queue 1's last consumer-index writeback (seed 1, 20 frames over 2
# queues: queue 1 has 4, its last writeback is taken by the DMA at about 28.16 us of device
# time):
# the posted write is lost with the link, and queue 1 sends nothing more that could write a
# newer one. The reset path after the link-down must take the device's own index
# (nic_txq_cons), not the stale one in host memory, or it posts queue 1's last frame again and
# it is received twice (a link-down from 28178 to 28192 ns loses that writeback). A few instants
# around it, so that a small timing change still hits it; a larger one needs them moved
# (trace=FILE.vcd: the datapath's txq_wb_writes port steps when a writeback is taken; the
# link-down must come 22 to 36 ns after it).
LOST_WB_AT_NS = (28184, 28186, 28182, 28188)


def test_link_down_loses_last_tx_writeback(nicbench, tmp_path):
    stale = 0
    for at in LOST_WB_AT_NS:
        out, doc = nic_run(nicbench, tmp_path / "wb.json", f"{OPTS},fault_link_down_at_ns={at},"
                           "fault_link_down_ns=5000", "fuzz", "--seed", 1, "--frames", 20,
                           "--queues", 2, timeout=300)
        assert doc["status"] == "ok", out
        (rec,) = [r for r in doc["records"] if r["experiment"] == "fuzz"]
        assert rec["out_of_order"] == 0 and rec["lost_unexplained"] == 0, (at, rec)
        assert rec["corrupted"] == 0 and doc["model_faults"]["fault_link_downs"] == 1, (at, rec)
        stale += rec["stale_writebacks"]
    # the case happened: a reset found the last writeback missing
    assert stale > 0, "no link-down hit a TX queue's last writeback: LOST_WB_AT_NS needs moving"


def test_descriptor_and_control_fuzz(nicbench, tmp_path):
    out, doc, rec = fuzz(nicbench, tmp_path, OPTS, "--frames", 400, "--queues", 4,
                         "--desc-fuzz", "0.15", "--ctl-fuzz", "0.8")
    cases = rec["cases"]
    assert all(v > 0 for v in cases.values()), cases
    c = rec["counters"]
    # every bad descriptor is counted by the device when fetched (zero length, oversized, a
    # chain without EOP ended by the reset) or was dropped by a reset before the fetch; a good
    # chain a reset cut in the middle also ends with NO_EOP
    bad = cases["zero_length"] + cases["oversized"] + cases["no_eop_chain"]
    assert c["txe_err_desc_len0"] <= cases["zero_length"]
    assert c["txe_err_desc_len"] <= cases["oversized"]
    assert c["txe_err_no_eop"] <= cases["no_eop_chain"] + cases["good_chain"]
    assert (c["txe_err_desc_len0"] + c["txe_err_desc_len"] + c["txe_err_no_eop"]
            + rec["reset_dropped"]) >= bad
    # doorbells past the ring are refused and counted
    assert c["txq_err_db_range"] == cases["tx_doorbell_past_ring"]
    assert c["rxe_err_db_range"] == cases["rx_doorbell_past_ring"]
    assert rec["received"] > 0


@pytest.fixture(params=["default", "soak"])
def wire_nicbench(request):
    """The default build, and the soak's (eth_ratio 8: eight octets on the wire a cycle)."""
    return request.getfixturevalue("nicbench" if request.param == "default" else "soak_nicbench")


def check_eth_ratio(binary, doc):
    assert doc["params"]["eth_ratio"] == (8 if "_eth8" in str(binary) else 1)


def test_wire_fuzz(wire_nicbench, tmp_path):
    # frames with a bad FCS, runts, garbage between frames: each frame lost is one the MAC
    # counted (a burst of garbage costs LiteEth the frame after it: counted as a CRC error)
    out, doc, rec = fuzz(wire_nicbench, tmp_path, f"{OPTS},wire_fuzz=0.1,wire_fuzz_seed={SEED}",
                         "--frames", 300, "--queues", 2)
    check_eth_ratio(wire_nicbench, doc)
    (wire,) = [r for r in doc["records"] if r["experiment"] == "fuzz_wire"]
    assert wire["bad_fcs"] + wire["runts"] + wire["garbage"] > 0, wire
    c = rec["counters"]
    assert rec["lost"] == c["mac_rx_datapath_crc_errors"] + c["rxfifo_drop_runt"], (rec, c)
    assert c["rxfifo_frames_in"] == 300


def test_wire_fuzz_oversize(wire_nicbench, tmp_path):
    # oversized frames with a good FCS (1600 octets, over the 1514-byte RX buffers): the RX
    # FIFO drops each as oversize (the tool fails otherwise); the frames the wire swallowed
    # while drawing one out are the rest of the loss
    out, doc, rec = fuzz(wire_nicbench, tmp_path, f"{OPTS},wire_fuzz=0.1,wire_fuzz_seed={SEED},"
                         "wire_fuzz_oversize=1600", "--frames", 300, "--queues", 2)
    check_eth_ratio(wire_nicbench, doc)
    (wire,) = [r for r in doc["records"] if r["experiment"] == "fuzz_wire"]
    c = rec["counters"]
    assert wire["oversize"] > 0 and wire["oversize_dropped"] == wire["oversize"], wire
    assert c["rxfifo_drop_oversize"] == wire["oversize"], (wire, c)
    assert rec["lost"] == c["mac_rx_datapath_crc_errors"] + c["rxfifo_drop_runt"] + \
        c["rxfifo_drop_oversize"] + wire["swallowed"], (rec, c, wire)
    assert c["rxfifo_frames_in"] == 300 - wire["swallowed"]


def test_fuzz_refuses_bad_arguments(nicbench, tmp_path):
    for args in (["--frames", "0"], ["--size-range", "10-20"], ["--desc-fuzz", "2"],
                 ["--queues", "99"], ["--watchdog-us", "1"]):
        out, _ = nic_run(nicbench, tmp_path / "bad.json", OPTS, "fuzz", *args, expect=2)
        assert "fuzz" in out or "--" in out, out
