# Full-system test of two NIC + host systems back to back: `nicbench rr` on the NIC=1 Verilated
# SoC (build/sim_dw128_nic/, built by `make test` or `make sim NIC=1`) with the sim backend's
# peer=1 (two SoC instances, each with its own PCIe host model and memory, their GMII pins wired
# together, stepped in lockstep) and pcap= (every frame on both wire directions). Host A sends
# requests, host B answers each with a response of the same size; every frame is checked
# bit-exact by the tool (it exits non-zero otherwise), the hot path of both hosts reads nothing
# over MMIO, and the pcap written by the harness is read back here with a small pure-Python
# reader: nanosecond magic, LINKTYPE_ETHERNET, 2 x count frames per size of the right length
# (padded to 60 B, + 4 B FCS), each FCS correct, requests and responses in order. Without
# peer=1 (or on a build without the NIC datapath) the command fails with a clear message.
# About half a minute.
import struct
import zlib
from pathlib import Path

import pytest
from conftest import ROOT, nic_run

NON_NIC_BINARY = ROOT / "build" / "sim_dw128" / "nicbench"
OPTS = "gen=2,lanes=4,mps=256,mrrs=512"
SIZES = [60, 1514]
COUNT = 20
MAC_A = bytes([0x02, 0x4E, 0x49, 0x43, 0x00, 0x0A])
MAC_B = bytes([0x02, 0x4E, 0x49, 0x43, 0x00, 0x0B])


def run(binary, tmp_path, opts, *args, expect=0):
    return nic_run(binary, tmp_path / "rr.json", opts, *args, expect=expect)


def read_pcap(path):
    """Classic libpcap: (linktype, nanosecond, [(ts_ns, orig_len, data), ...])."""
    raw = Path(path).read_bytes()
    assert len(raw) >= 24, "pcap: no global header"
    magic_le = struct.unpack("<I", raw[:4])[0]
    magics = {0xA1B2C3D4: False, 0xA1B23C4D: True}
    if magic_le in magics:
        end = "<"
    else:
        magic_be = struct.unpack(">I", raw[:4])[0]
        assert magic_be in magics, f"pcap: bad magic {raw[:4].hex()}"
        end = ">"
    magic, vmaj, vmin, _zone, _sigfigs, snaplen, linktype = struct.unpack(end + "IHHiIII",
                                                                          raw[:24])
    nano = magics[magic]
    assert (vmaj, vmin) == (2, 4)
    recs, off = [], 24
    while off < len(raw):
        assert off + 16 <= len(raw), "pcap: truncated record header"
        sec, frac, incl, orig = struct.unpack(end + "IIII", raw[off:off + 16])
        off += 16
        assert incl <= snaplen and incl <= orig
        assert off + incl <= len(raw), "pcap: truncated record"
        ts = sec * 10**9 + (frac if nano else frac * 1000)
        recs.append((ts, orig, raw[off:off + incl]))
        off += incl
    return linktype, nano, recs


def fcs_ok(frame):
    return zlib.crc32(frame[:-4]) & 0xFFFFFFFF == int.from_bytes(frame[-4:], "little")


def test_rr_two_hosts_back_to_back_with_pcap(nicbench, tmp_path):
    pcap = tmp_path / "wire.pcap"
    out, doc = run(nicbench, tmp_path, f"{OPTS},peer=1,pcap={pcap}", "rr",
                   "--sizes", ",".join(map(str, SIZES)), "--count", COUNT)
    assert doc["status"] == "ok", out
    assert doc["params"]["peer"] == 1 and doc["params"]["pcap"] == str(pcap)
    recs = [r for r in doc["records"] if r["experiment"] == "rr"]
    assert [r["size"] for r in recs] == SIZES
    for r in recs:
        assert r["result"] == "ok", r
        assert r["count"] == COUNT
        assert r["bad_requests"] == 0 and r["bad_responses"] == 0
        for k in ("rtt_min_ns", "rtt_median_ns", "rtt_p99_ns", "rtt_max_ns", "rtt_mean_ns",
                  "half_rtt_ns"):
            assert r[k] > 0, (k, r)
        assert r["rtt_min_ns"] <= r["rtt_median_ns"] <= r["rtt_p99_ns"] <= r["rtt_max_ns"]
        assert r["rtt_min_ns"] <= r["rtt_mean_ns"] <= r["rtt_max_ns"]
        assert r["half_rtt_ns"] == pytest.approx(r["rtt_median_ns"] / 2)
        # a round trip serialises the frame twice at 1 Gb/s: it cannot be faster than that
        assert r["rtt_min_ns"] > 2 * r["frame_wire_ns"]
        # no MMIO read on either host's hot path; the doorbells are MMIO writes
        for h in "ab":
            assert r[f"mmio_read_tlps_hot_{h}"] == 0 and r[f"mmio_reads_hot_{h}"] == 0
            assert r[f"mmio_writes_hot_{h}"] >= COUNT
    # larger frames take longer
    assert recs[1]["rtt_median_ns"] > recs[0]["rtt_median_ns"]
    assert "rtt_med_ns" in out and "half_rtt_ns" in out

    linktype, nano, frames = read_pcap(pcap)
    assert linktype == 1 and nano
    assert len(frames) == 2 * COUNT * len(SIZES)
    ts = [t for t, _, _ in frames]
    assert ts == sorted(ts), "pcap records not in time order"
    for i, size in enumerate(SIZES):
        want_len = max(size, 60) + 4           # the MAC pads to 60 B, then appends the FCS
        chunk = frames[i * 2 * COUNT:(i + 1) * 2 * COUNT]
        for k, (_t, orig, data) in enumerate(chunk):
            assert orig == len(data) == want_len, (size, k, orig, len(data))
            assert fcs_ok(data), f"size {size} frame {k}: bad FCS"
            response = k % 2 == 1              # request, response, request, ...
            assert data[0:6] == (MAC_A if response else MAC_B)
            assert data[6:12] == (MAC_B if response else MAC_A)
            assert data[12:14] == b"\x88\xb5"
            assert data[14] == (ord("R") if response else ord("Q"))
            assert int.from_bytes(data[16:20], "little") == k // 2
            assert data[size:want_len - 4] == bytes(want_len - 4 - size)   # zero padding
        # a response starts after its request started
        for k in range(0, len(chunk), 2):
            assert chunk[k + 1][0] > chunk[k][0]


def test_rr_needs_peer(nicbench, tmp_path):
    out, _ = run(nicbench, tmp_path, OPTS, "rr", "--count", 1, expect=1)
    assert "peer=1" in out


def test_rr_bad_parameters(nicbench, tmp_path):
    out, _ = run(nicbench, tmp_path, OPTS + ",peer=1", "rr", "--sizes", "10000", expect=2)
    assert "9216" in out
    out, _ = run(nicbench, tmp_path, OPTS + ",peer=1", "rr", "--count", "0", expect=2)
    assert "--count" in out


def test_rr_refused_without_nic_datapath(tmp_path):
    if not NON_NIC_BINARY.exists():
        pytest.skip(f"{NON_NIC_BINARY.relative_to(ROOT)} not built (make sim W=128)")
    out, _ = run(NON_NIC_BINARY, tmp_path, OPTS + ",peer=1", "rr", "--count", 1, expect=1)
    assert "no NIC datapath" in out
