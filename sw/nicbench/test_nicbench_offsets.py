# SPDX-License-Identifier: BSD-2-Clause
# DMA at any host buffer offset, under our own host model, at both datapath widths
# (build/sim_dw128/ and build/sim_dw64/, built by `make test` or `make sim`): `nicbench dma
# --offset` at random offsets (multiples of the width, with page+0x40 and offsets that make
# requests straddle a 4 KiB boundary) and random sizes, both directions, one at a time and with
# descriptors queued, at MPS 128 and 256; and `nicbench tx --buf-offset` (TX frames and RX
# buffers at random or chosen byte offsets in their pages, frames up to 9000 B). The tool
# checks every transfer's data and every frame byte for byte (exit 0); the host model's TLP
# checks must count nothing (JSON model_checks: boundary_violations, mps_violations, ...).
# The cases come from a seed printed in the session's summary (NIC_OFFSET_SEED replays one).
# Bad offsets are usage errors. About 20 s.
import os
import random
import re

import pytest
from conftest import ROOT, nic_run

OPTS = {128: "gen=2,lanes=4,mrrs=512", 64: "gen=2,lanes=2,mrrs=512"}
NOFFSETS = 8                    # per dma run: 0x40, a straddling one, the page's last, 5 random


def binary(width):
    path = ROOT / "build" / f"sim_dw{width}" / "nicbench"
    if not path.exists():
        pytest.fail(f"{path.relative_to(ROOT)} is missing: `make sim W={width}` (make test "
                    "builds it)")
    return path


def model_error_counters():
    """The host model's error counters (sw/sim/model_log.h, Counters from `errors` up to the
    faults it injected, which count what was asked for, not errors)."""
    text = (ROOT / "sw" / "sim" / "model_log.h").read_text()
    body = text[text.index("struct Counters {"):]
    body = body[:body.index("};")].split("/* Faults injected")[0]
    names = re.findall(r"(\w+) = 0", body)
    return names[names.index("errors"):]


def check_model(doc, out):
    checks = doc["model_checks"]
    assert checks is not None, out
    missing = set(model_error_counters()) - set(checks)
    assert not missing, f"nicbench does not report model counters {missing}"
    assert not any(checks.values()), ({k: v for k, v in checks.items() if v}, out)


@pytest.fixture(scope="session")
def seed(testrun_uid):
    """NIC_OFFSET_SEED, else one per session, the same in every xdist worker (testrun_uid)."""
    return int(os.environ.get("NIC_OFFSET_SEED", str(int(testrun_uid[:8], 16))))


def summary(record_property, seed, what, n):
    record_property("summary", f"{what}: seed {seed} (NIC_OFFSET_SEED), {n} random cases")


def dma_cases(seed, width):
    """Sizes and offsets, multiples of the width: a small, a medium and a large size; offsets
    0x40, one that makes the medium size straddle 4 KiB, the page's last granule and random."""
    r = random.Random(seed)
    g = width // 8
    sizes = [g * r.randint(16 // g, 256 // g), g * r.randint(256 // g, 4096 // g),
             g * r.randint(4096 // g, 12288 // g)]
    straddle = (4096 - sizes[1] // 2) // g * g
    offsets = [0x40, straddle, 4096 - g] + [g * r.randrange(4096 // g) for _ in range(5)]
    return sizes, offsets


@pytest.mark.parametrize("width", [128, 64], ids=["W128", "W64"])
@pytest.mark.parametrize("mps", [128, 256], ids=["mps128", "mps256"])
def test_dma_random_offsets(tmp_path, record_property, seed, width, mps):
    sizes, offsets = dma_cases(seed ^ (width << 16) ^ mps, width)
    summary(record_property, seed, f"dma offsets W={width} MPS {mps}",
            len(sizes) * len(offsets))
    opts = f"{OPTS[width]},mps={mps}"
    out, doc = nic_run(binary(width), tmp_path / "dma.json", opts, "dma", "--dir", "both",
                       "--sizes", ",".join(map(str, sizes)), "--offset",
                       ",".join(map(str, offsets)), "--inflight", "1,8", "--min-bytes", "1K")
    assert doc["status"] == "ok", out
    check_model(doc, out)
    got = {(r["dir"], r["size"], r["offset"], r["inflight"] > 1) for r in doc["records"]}
    want = {(d, s, o, q) for d in ("h2c", "c2h") for s in sizes for o in offsets
            for q in (False, True)}
    assert got == want, want - got
    for r in doc["records"]:
        assert r["gbps"] > 0 and r["dev_mps"] == mps, r
    # (one cause of a straddle: the medium size crosses 4 KiB at its straddling offset)
    assert offsets[1] % 4096 + sizes[1] > 4096


@pytest.mark.parametrize("width", [128, 64], ids=["W128", "W64"])
def test_dma_latency_at_offsets(tmp_path, record_property, seed, width):
    """Single reads at offsets: as many read requests as the offset makes cross MRRS-aligned and
    4 KiB boundaries (the device splits at both), checked by the model."""
    sizes, offsets = dma_cases(seed ^ width, width)
    summary(record_property, seed, f"dma latency offsets W={width}", len(offsets))
    out, doc = nic_run(binary(width), tmp_path / "lat.json", f"{OPTS[width]},mps=256", "dma",
                       "--latency", "--sizes", sizes[1], "--offset", ",".join(map(str, offsets)),
                       "--count", 3)
    check_model(doc, out)
    assert sorted(r["offset"] for r in doc["records"]) == sorted(offsets)
    for r in doc["records"]:
        assert r["count"] == 3 and 0 < r["lat_min_ns"] <= r["lat_max_ns"], r
        # one request per MRRS at least, and per 4 KiB page the read touches; one more per
        # page boundary at most
        pages = (r["offset"] + r["size"] - 1) // 4096 + 1
        least = max(pages, -(-r["size"] // r["dev_mrrs"]))
        assert least <= r["requests"] <= -(-r["size"] // r["dev_mrrs"]) + pages - 1, r


@pytest.mark.parametrize("width", [128, 64], ids=["W128", "W64"])
def test_rings_at_random_buffer_offsets(tmp_path, record_property, seed, width):
    """TX frames at random byte offsets, RX buffers at random 16 B multiples, frames of random
    size 60..9000 over two queues; then every buffer at one random odd offset."""
    r = random.Random(seed ^ width)
    frames, fixed = 160, r.randrange(4096) | 1
    summary(record_property, seed, f"tx buffer offsets W={width}", 2 * frames)
    for arg in (f"random:{r.getrandbits(32)}", str(fixed)):
        out, doc = nic_run(binary(width), tmp_path / "tx.json", f"{OPTS[width]},mps=256", "tx",
                           "--frames", frames, "--queues", 2, "--size-range", "60-9000",
                           "--buf-offset", arg)
        assert doc["status"] == "ok", out
        check_model(doc, out)
        rec, = doc["records"]
        assert rec["result"] == "ok" and rec["received"] == frames and rec["lost"] == 0, rec
        for k in ("bad_content", "bad_length", "bad_status", "bad_header", "out_of_order"):
            assert rec[k] == 0, (k, rec)
        assert rec["drops_total"] == 0 and rec["mmio_read_tlps_hot"] == 0
        if arg.startswith("random"):
            assert rec["buf_offset"] is None and rec["buf_offset_seed"] == int(arg[7:])
        else:
            assert rec["buf_offset"] == fixed and rec["buf_offset_seed"] is None


@pytest.mark.parametrize("args, message", [
    (["dma", "--offset", "4096"], "--offset: 4096"),
    (["dma", "--offset", "12"], "--offset: 12"),              # not a multiple of 8 B
    (["dma", "--offset", "8"], "--offset 8 unusable"),        # not of the 16 B datapath
    (["dma", "--offset", "0..64:0"], "--offset"),
    (["dma", "--offset", "x"], "--offset"),
    (["dma", "--offset", "0..4096:512"], "--offset: 4096"),
    (["tx", "--buf-offset", "4096"], "--buf-offset"),
    (["tx", "--buf-offset", "random:x"], "--buf-offset random:SEED"),
    (["tx", "--buf-offset", "randomly"], "--buf-offset"),
])
def test_bad_offsets_are_usage_errors(tmp_path, args, message):
    out, _ = nic_run(binary(128), tmp_path / "bad.json", OPTS[128], *args, expect=2)
    assert message in out
