# SPDX-License-Identifier: BSD-2-Clause
# `nicbench dma` on the Verilated SoC (build/sim_dw128/, built by `make test` or `make sim`):
# pcie-bench's two small-DMA tests. Bandwidth with descriptors kept queued (--inflight: the
# table in loop mode) must beat one transfer at a time, stay within the model's limit and be
# verified (checker counts for h2c, every transfer in place for c2h; a model error fails the
# run). Read latency (--latency) comes from the host model's PHY timestamps: positive, growing
# with the size, one request per MRRS, and moved by exactly the model's memory latency.
# Descriptors the DMA cannot move (`loopback --misaligned`) are refused in hardware or moved
# exactly; so are the NIC's ring, writeback and stream addresses at byte offsets (`misaligned`).
# Bad arguments are usage errors (exit 2). A few seconds.
import json
import subprocess

import pytest
from conftest import nic_run

OPTS = "gen=2,lanes=4,mps=256,mrrs=512"


def run(binary, tmp_path, *args, opts=OPTS, expect=0):
    return nic_run(binary, tmp_path / "dma.json", opts, "dma", *args, expect=expect)


def records(doc, experiment):
    return [r for r in doc["records"] if r["experiment"] == experiment]


def test_inflight_beats_one_at_a_time(nicbench, tmp_path):
    out, doc = run(nicbench, tmp_path, "--dir", "both", "--sizes", "256", "--inflight", "1,32",
                   "--min-bytes", "64K")
    assert doc["status"] == "ok", out
    rec = {(r["dir"], r["inflight"] > 1): r for r in records(doc, "dma")}
    assert len(rec) == 4, out
    for d in ("h2c", "c2h"):
        one, many = rec[(d, False)], rec[(d, True)]
        assert one["mode"] == many["mode"] == "bandwidth"
        assert one["inflight"] == 1 and many["run_ns"] > 0 and one["run_ns"] is None
        # The queue keeps the engine busy: more than twice one-at-a-time, near the model limit.
        assert many["gbps"] > 2 * one["gbps"], (d, one["gbps"], many["gbps"])
        assert 0.85 < many["ratio"] <= 1.0, (d, many["ratio"])
        assert many["reps"] * 256 >= 64 * 1024 and many["reps"] >= 2 * many["inflight"]
        # (JSON numbers have 6 significant digits)
        assert many["tps"] == pytest.approx(many["gbps"] * 1e9 / (8 * 256), rel=2e-5)
        assert many["mbps"] == pytest.approx(many["gbps"] * 125, rel=2e-5)
    # c2h queues what was asked; h2c at least 32 KiB of data (the host's refill lap).
    assert rec[("c2h", True)]["inflight"] == 32
    assert rec[("h2c", True)]["inflight"] == 128
    assert rec[("h2c", True)]["transfers_run"] >= rec[("h2c", True)]["reps"]
    assert "inflt" in out and "Mtr/s" in out


def test_inflight_sizes_and_depths(nicbench, tmp_path):
    """Small, odd and large sizes; depths that clamp to the same value run once."""
    out, doc = run(nicbench, tmp_path, "--dir", "both", "--sizes", "16,96,6000",
                   "--inflight", "2,256", "--min-bytes", "32K")
    rec = records(doc, "dma")
    _, big = run(nicbench, tmp_path, "--dir", "c2h", "--sizes", "1M", "--inflight", "4",
                 "--min-bytes", "1")
    rec += records(big, "dma")
    depth = {}
    for r in rec:
        depth.setdefault((r["dir"], r["size"]), []).append(r["inflight"])
        assert r["ratio"] <= 1.0, r
    assert depth[("c2h", 16)] == [2, 256] and depth[("h2c", 16)] == [256]
    assert depth[("h2c", 96)] == [256]
    assert depth[("h2c", 6000)] == [6, 256]          # 8 KiB slots: 6 hold 32 KiB
    assert depth[("c2h", 1048576)] == [2]             # two 1 MiB slots in the 2 MiB buffer


def test_inflight_model_error_fails(nicbench, tmp_path):
    """The device told MPS 512 on an MPS 128 link: the model rejects its writes, the run fails
    (no figure from unverified transfers)."""
    out, _ = run(nicbench, tmp_path, "--dir", "c2h", "--sizes", "4096", "--inflight", "8",
                 "--min-bytes", "16K", opts="mps=128,dev_mps=512", expect=1)
    assert "mps" in out.lower()


def test_latency_from_the_model(nicbench, tmp_path):
    sizes = [64, 512, 4096]
    out, doc = run(nicbench, tmp_path, "--latency", "--sizes", ",".join(map(str, sizes)),
                   "--count", "40")
    lat = {r["size"]: r for r in records(doc, "dma_latency")}
    assert sorted(lat) == sizes, out
    for s, r in lat.items():
        assert r["mode"] == "latency" and r["dir"] == "h2c" and r["count"] == 40
        assert r["clock"] == "sim"
        assert 0 < r["lat_min_ns"] <= r["lat_median_ns"] <= r["lat_p99_ns"] <= r["lat_max_ns"]
        assert r["requests"] == -(-s // r["dev_mrrs"])
    # At least the model's memory latency (500 ns); growing with the size.
    assert 500 < lat[64]["lat_median_ns"] < lat[512]["lat_median_ns"] < lat[4096]["lat_median_ns"]
    assert "median_ns" in out
    # One read request each: 300 ns more memory latency shows as 300 ns more (to the 8 ns
    # clock cycle).
    _, slow = run(nicbench, tmp_path, "--latency", "--sizes", "64,512", "--count", "10",
                  opts=OPTS + ",mem_read_latency_ns=800")
    for r in records(slow, "dma_latency"):
        assert abs(r["lat_median_ns"] - lat[r["size"]]["lat_median_ns"] - 300) <= 8, r


def test_misaligned_descriptors_moved_or_refused(nicbench, tmp_path):
    """LitePCIe's DMA given what nic_dma_desc_check() refuses (byte offsets 1..12, odd lengths,
    length 0), through the host model with its TLP checks: every descriptor is moved exactly or
    refused in hardware (counter + 1, no TLP of its kind, destination and guard bytes intact);
    refused exactly when PCIE_DMA0_GUARD_ALIGN says so. A model error (malformed TLP, a write
    outside mapped memory) fails the run."""
    out, doc = nic_run(nicbench, tmp_path / "mis.json", OPTS, "loopback", "--misaligned")
    rec = records(doc, "loopback_misaligned")
    assert len(rec) == 5 + 6 * 5 * 3, out                    # offset 0 once per size
    assert all(r["result"] in ("moved", "refused") for r in rec), out
    # 128-bit datapath: only 16-byte multiples (64 B at offset 0) are moved, by both engines.
    moved = [(r["size"], r["src_offset"], r["dst_offset"]) for r in rec if r["result"] == "moved"]
    assert moved == [(64, 0, 0)], out
    for r in rec:
        if r["reader_refused"]:
            assert r["mrd_tlps"] == 0, r
        if r["writer_refused"]:
            assert r["mwr_tlps"] == 0, r
    both = [r for r in rec if r["src_offset"] % 16 == 0 and r["size"] == 64
            and r["dst_offset"] % 16]
    assert both and all(not r["reader_refused"] and r["writer_refused"] and r["mrd_tlps"]
                        for r in both), out            # the reader ran, the writer refused
    assert "0 bad" in out


@pytest.mark.parametrize("args", [
    ["--sizes", "24"],                        # not a multiple of the 16 B datapath
    ["--sizes", "8"],                         # below the datapath width
    ["--latency", "--sizes", "40"],
    ["--inflight", "0"],
    ["--inflight", "257"],                    # beyond the descriptor table
    ["--inflight", "x"],
    ["--latency", "--dir", "c2h"],
    ["--latency", "--inflight", "4"],
    ["--count", "5"],                         # only with --latency
    ["--latency", "--count", "0"],
])
def test_bad_arguments_are_usage_errors(nicbench, tmp_path, args):
    out, _ = run(nicbench, tmp_path, *args, expect=2)
    assert "nicbench" in out


def test_misaligned_ring_addresses_refused(nicbench, tmp_path):
    """Issue 37: the TX ring base and writeback address, the RX ring and completion bases and
    the deep capture's ring base, each programmed at byte offsets straight to its register,
    through the host model with its TLP checks: offset 0 moves exactly, every other offset is
    refused in hardware (its counter + 1 and status bit, no MRd or MWr TLP, no byte of the DMA
    area changed). A model error fails the run."""
    out, doc = nic_run(nicbench, tmp_path / "mis.json", OPTS, "misaligned")
    rec = records(doc, "misaligned")
    kinds = ("txe_base_addr", "txq_wb_addr", "rxe_ring_base", "rxe_cpl_base",
             "analyzer_stream_base")
    assert sorted({r["address"] for r in rec}) == sorted(kinds), out
    assert len(rec) == 5 * 7, out
    for r in rec:
        if r["offset"] == 0:
            assert r["result"] == "moved" and r["refused_count"] == 0, r
        else:
            assert r["result"] == "refused", r
            assert r["refused_count"] == 1 and r["status_bit"], r
            assert r["mrd_tlps"] == 0 and r["mwr_tlps"] == 0 and r["bytes_changed"] == 0, r
    # The aligned TX and stream cases did DMA (the TLP counts are live).
    assert all(r["mrd_tlps"] and r["mwr_tlps"] for r in rec
               if r["offset"] == 0 and r["address"].startswith("txe")), out
    assert "0 bad" in out and not any(doc["model_checks"].values()), out
    # The device's counters say so, by the names `nicbench stats` shows (6 offsets each; the RX
    # ring and completion bases share rx_err_base).
    counts, = records(doc, "misaligned_counters")
    assert {k: counts.get(k) for k in ("tx_err_base", "tx_err_wb_addr", "rx_err_base",
                                       "stream_refused")} == dict(
        tx_err_base=6, tx_err_wb_addr=6, rx_err_base=12, stream_refused=6), out
    stats, _ = nic_run(nicbench, tmp_path / "stats.json", OPTS, "stats", "--all")
    for name in ("tx_err_base", "tx_err_wb_addr", "rx_err_base", "tx_queues_base_bad",
                 "tx_queues_wb_bad", "rx_base_bad"):
        assert f"  {name} " in stats, stats
    # nicscope info shows the deep capture's status: none refused in a fresh run.
    scope = nicbench.parent / "nicscope"
    r = subprocess.run([str(scope), "--opts", OPTS, "--json", str(tmp_path / "i.json"), "info"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "0 streams refused" in r.stdout, r.stdout + r.stderr
    info = json.loads((tmp_path / "i.json").read_text())["result"]
    assert info["stream"]["refused"] is False and info["stream"]["refused_count"] == 0
