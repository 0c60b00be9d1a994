# SPDX-License-Identifier: BSD-2-Clause
# Full-system tests of the analyzer's per-request DMA read latency breakdown through `nicscope
# breakdown` on the Verilated SoC, both PHY widths: per transfer size and path, every stage
# adds up to the total, the occupancy integral equals the latency sum (Little's law), per
# request class; each class's rtt and cpl stages equal the host model's own timestamps of the
# same TLPs (on the TX path the model's reads classed by address: the descriptor rings, nic_desc,
# or the payload buffers, nic_payload); the read tags in use agree with MRd rate x tag hold
# within 1 % (the command fails otherwise; here the figures are checked against what the
# transfer must look like). Writes (the write breakdown): per transfer size on the raw DMA
# writer, and the NIC's writes on the TX path, every stage of every class's MWrs equals the
# host model's time of the MWr's first beat with the probe pins' times of the same write,
# cycle for cycle; with the deep capture streaming through the window, its ring writes (the
# scope class) too.
import pytest

from sw.nicscope.nicscope_run import MPS, MRRS, run

from sw.sim.sim_build import WIDTHS, build

COUNT = 8


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"dw{w}" for w in WIDTHS])
def nicscope(request):
    return build(request.param).parent / "nicscope", request.param


def test_breakdown_raw_dma(nicscope, tmp_path):
    binary, _ = nicscope
    sizes = (64, 512, 4096)
    out, r = run(binary, tmp_path, "breakdown", "--path", "dma", "--sizes",
                 ",".join(map(str, sizes)), "--count", str(COUNT))
    assert "equal the host model's timestamps" in out
    assert r["model_crosschecked"] == len(sizes) * 2 * (4 + 16)
    for size, row in zip(sizes, r["sizes"]):
        assert row["size"] == size and row["model_crosschecked"] == 2 * (4 + 16)
        raw = row["classes"]["raw_dma"]
        # One read request per MRRS bytes of each transfer, all on the raw engine.
        assert raw["count"] == raw["raises"] == COUNT * -(-size // MRRS)
        assert raw["model_crosschecked"]
        for cls in ("nic_desc", "nic_payload"):
            assert row["classes"][cls]["count"] == 0
            assert not row["classes"][cls]["model_crosschecked"]
        st = raw["stages"]
        assert sum(st[n]["sum"] for n in st if n != "total") == st["total"]["sum"]
        assert raw["occupancy"] == st["total"]["sum"]
        # Little's law on the read tags, from the tag FIFO's level, the PHY's MRd count and
        # the breakdown: the MRds are the requests, and the three agree within 1 %.
        lt = row["little_tags"]
        assert lt["mrd_rate"] * row["window_cycles"] == pytest.approx(raw["count"])
        assert lt["diff_pct"] < 1.0 and 0 < lt["mean_tags"] <= 8
        # The host model completes reads in order: every read at reorder distance 0.
        assert row["reorder"][0] == sum(row["reorder"]) == raw["count"]
        for n, s in st.items():
            assert sum(s["bins"]) == raw["count"], n
            assert s["min"] <= s["sum"] / raw["count"] <= s["max"], n
        # The link's round trip is most of a read; a larger read's completions take longer.
        assert st["rtt"]["min"] > 0 and st["cpl"]["sum"] >= 0
    big = r["sizes"][-1]["classes"]["raw_dma"]["stages"]
    small = r["sizes"][0]["classes"]["raw_dma"]["stages"]
    assert big["cpl"]["mean_ns"] > small["cpl"]["mean_ns"]


def test_breakdown_nic_tx(nicscope, tmp_path):
    binary, _ = nicscope
    # 32 frames of 1514 B: the wire holds the TX engine back, so more reads wait for their
    # hand-off than there are tags (a slot count of only the tags overwrote one).
    frames = 32
    out, r = run(binary, tmp_path, "breakdown", "--path", "tx", "--sizes", "64,1514",
                 "--count", str(frames))
    assert "equal the host model's timestamps" in out and "classed by address" in out
    # Both NIC classes, each against the model's reads of its own addresses.
    assert r["model_crosschecked"] == 2 * 2 * 2 * (4 + 16)
    for row in r["sizes"]:
        assert row["classes"]["raw_dma"]["count"] == 0
        desc, pay = row["classes"]["nic_desc"], row["classes"]["nic_payload"]
        assert row["model_crosschecked"] == 2 * 2 * (4 + 16)
        # A payload read per MRRS bytes of a frame (one more where a buffer crosses 4 KiB);
        # descriptor reads: the TX ring's (a frame's descriptor, in batches) and the RX ring's
        # prefetches.
        per = -(-row["size"] // MRRS)
        assert pay["count"] == pay["raises"]
        assert frames * per <= pay["count"] <= frames * (per + 1)
        assert 2 <= desc["count"] == desc["raises"] <= 2 * frames
        for cls in (desc, pay):
            assert cls["model_crosschecked"]
            st = cls["stages"]
            assert cls["occupancy"] == st["total"]["sum"]
            assert sum(st[n]["sum"] for n in st if n != "total") == st["total"]["sum"]
            for n, s in st.items():
                assert sum(s["bins"]) == cls["count"], n
        assert row["little_tags"]["diff_pct"] < 1.0
    # A 1514 B frame's payload reads take their completions longer than a descriptor's.
    big = r["sizes"][-1]["classes"]
    assert big["nic_payload"]["stages"]["cpl"]["mean_ns"] > \
        big["nic_desc"]["stages"]["cpl"]["mean_ns"]


def test_breakdown_raw_dma_writes(nicscope, tmp_path):
    binary, _ = nicscope
    sizes = (64, 512, 4096)
    out, r = run(binary, tmp_path, "breakdown", "--path", "c2h", "--sizes",
                 ",".join(map(str, sizes)), "--count", str(COUNT))
    assert "equal the host model's MWr timestamps" in out
    assert r["wr_stages"] == ["queue", "credit", "phy", "total"]
    # Per size: each write class's 4 stages (3 classes), 4 + 16 counts each.
    assert r["wr_model_crosschecked"] == len(sizes) * 12 * (4 + 16)
    for size, row in zip(sizes, r["sizes"]):
        assert row["size"] == size and row["wr_model_crosschecked"] == 12 * (4 + 16)
        assert row["wr_mismatch"] == 0
        raw = row["wr_classes"]["raw_dma"]
        # One MWr per MPS bytes of each transfer, all from the raw writer.
        assert raw["count"] == raw["raises"] == COUNT * -(-size // MPS)
        assert all(v["count"] == 0 for k, v in row["wr_classes"].items() if k != "raw_dma")
        assert row["classes"]["raw_dma"]["count"] == 0
        st = raw["stages"]
        assert sum(st[n]["sum"] for n in st if n != "total") == st["total"]["sum"]
        assert raw["occupancy"] == st["total"]["sum"]
        for n, s in st.items():
            assert sum(s["bins"]) == raw["count"], n
            assert s["min"] <= s["sum"] / raw["count"] <= s["max"], n
        # The packetizer's pipeline takes cycles: every MWr's phy stage is above 0.
        assert st["phy"]["min"] > 0
        assert f"{size} B: window" in out
    # A table of the writes per size, the stacked bar's marks in stage order.
    assert out.count("writes (MWr TLPs)") == len(sizes) and "raw_dma" in out


def test_breakdown_nic_writes(nicscope, tmp_path):
    binary, _ = nicscope
    # Frames through the TX ring: the NIC's writes (TX completion writebacks, and RX data and
    # completions of the looped-back frames) are timed, every stage against the model.
    out, r = run(binary, tmp_path, "breakdown", "--path", "tx", "--sizes", "256",
                 "--count", "8")
    row = r["sizes"][0]
    nic = row["wr_classes"]["nic"]
    assert nic["count"] == nic["raises"] > 0 and row["wr_mismatch"] == 0
    assert nic["occupancy"] == nic["stages"]["total"]["sum"]
    assert row["wr_model_crosschecked"] == 12 * (4 + 16)


@pytest.mark.parametrize("path,load_class", [("tx", "nic"), ("c2h", "raw_dma")])
def test_breakdown_stream_writes(nicscope, tmp_path, path, load_class):
    binary, _ = nicscope
    # The deep capture beside the load: its ring writes are the scope class, timed and compared
    # with the host model like the load's own, every entry in host memory.
    out, r = run(binary, tmp_path, "breakdown", "--path", path, "--sizes", "256",
                 "--count", "8", "--stream")
    assert r["stream"] is True
    row = r["sizes"][0]
    assert row["wr_mismatch"] == 0 and row["wr_model_crosschecked"] == 12 * (4 + 16)
    stream = row["stream"]
    assert stream["entries_taken"] == stream["entries_due"] > 0 and stream["lost"] == 0
    for cls in ("scope", load_class):
        w = row["wr_classes"][cls]
        assert w["count"] == w["raises"] > 0, cls
        st = w["stages"]
        assert sum(st[n]["sum"] for n in st if n != "total") == st["total"]["sum"], cls
        assert w["occupancy"] == st["total"]["sum"], cls
        assert st["phy"]["min"] > 0, cls
    # An entry is 16 bytes: the scope class's MWrs carry every entry's bytes at most MPS each.
    assert row["wr_classes"]["scope"]["count"] >= -(-stream["entries_taken"] * 16 // MPS)
    assert "deep capture beside the load" in out and "scope" in out


@pytest.mark.parametrize("args,msg", [
    (["--path", "rx"], "--path: dma, c2h or tx"),
    (["--sizes", "24"], "multiples of 16"),
    (["--path", "tx", "--sizes", "2000"], "14..1514"),
    (["--count", "0"], "--count: 1..256"),
])
def test_breakdown_bad_options(nicscope, tmp_path, args, msg):
    binary, _ = nicscope
    out, _ = run(binary, tmp_path, "breakdown", *args, expect=2)
    assert msg in out
