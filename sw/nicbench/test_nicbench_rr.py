# SPDX-License-Identifier: BSD-2-Clause
# Full-system test of two NIC + host systems back to back: `nicbench rr` on the Verilated SoC
# (build/sim_dw128/, built by `make test` or `make sim`) with the sim backend's
# peer=1 (two SoC instances, each with its own PCIe host model and memory, their GMII pins wired
# together, stepped in lockstep) and pcap= (every frame on both wire directions). Host A sends
# requests, host B answers each with a response of the same size; every frame is checked
# bit-exact by the tool (it exits non-zero otherwise), the hot path of both hosts reads nothing
# over MMIO, and the pcapng written by the harness is read back here with scapy's pcapng
# reader: LINKTYPE_ETHERNET, ns timestamps, FCS length 4, 2 x count frames per size of the right
# length (padded to 60 B, + 4 B FCS), each FCS correct, requests and responses in order; and by
# tshark, which must find every FCS good and the payload without it. Without peer=1 the command
# fails with a clear message. --reply-size N: replies of N bytes whatever the request's size (HP
# OTS's request/reply), checked on the wire too. --irq with --coalesce: the delay the coalescer
# adds to a round trip. About half a minute.
import shutil
import subprocess
import zlib

import pytest
from conftest import nic_run
from scapy.utils import RawPcapNgReader

OPTS = "gen=2,lanes=4,mps=256,mrrs=512"
SIZES = [60, 1514]
COUNT = 20
MAC_A = bytes([0x02, 0x4E, 0x49, 0x43, 0x00, 0x0A])
MAC_B = bytes([0x02, 0x4E, 0x49, 0x43, 0x00, 0x0B])


def run(binary, tmp_path, opts, *args, expect=0):
    return nic_run(binary, tmp_path / "rr.json", opts, *args, expect=expect)


class _PcapNgKeepOptions(RawPcapNgReader):
    """scapy's pcapng reader, also keeping each interface's raw IDB options: scapy decodes only
    if_tsresol, if_name and the comment into its interface list, not if_fcslen (13)."""

    def _read_block_idb(self, block, size):
        super()._read_block_idb(block, size)
        self.interfaces[-1][2]["raw_options"] = self._read_options(block[8:])


def read_pcapng(path):
    """pcapng with one interface, read by scapy: (linktype, {IDB option code: value bytes},
    [(ts, orig_len, data), ...]) with ts in the interface's if_tsresol units."""
    reader = _PcapNgKeepOptions(str(path))
    try:
        recs = [((m.tshigh << 32) | m.tslow, m.wirelen, data) for data, m in reader]
        interfaces = reader.interfaces
    finally:
        reader.close()
    assert len(interfaces) == 1, "pcapng: one interface expected"
    linktype, snaplen, opts = interfaces[0]
    for _t, orig, data in recs:
        assert len(data) <= snaplen and len(data) <= orig
    return linktype, opts["raw_options"], recs


def fcs_ok(frame):
    return zlib.crc32(frame[:-4]) & 0xFFFFFFFF == int.from_bytes(frame[-4:], "little")


@pytest.fixture(scope="module")
def rr_capture(nicbench, tmp_path_factory):
    """One `nicbench rr` with peer=1 and pcap=: (output, JSON document, pcapng path)."""
    tmp_path = tmp_path_factory.mktemp("rr")
    pcap = tmp_path / "wire.pcapng"
    out, doc = run(nicbench, tmp_path, f"{OPTS},peer=1,pcap={pcap}", "rr",
                   "--sizes", ",".join(map(str, SIZES)), "--count", COUNT)
    return out, doc, pcap


def want_len(size):
    return max(size, 60) + 4                   # the MAC pads to 60 B, then appends the FCS


def test_rr_two_hosts_back_to_back_with_pcap(rr_capture):
    out, doc, pcap = rr_capture
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

    linktype, opts, frames = read_pcapng(pcap)
    assert linktype == 1                        # LINKTYPE_ETHERNET
    assert opts[9] == bytes([9])                # if_tsresol: ns
    assert opts[13] == bytes([4])               # if_fcslen: 4 octets
    assert len(frames) == 2 * COUNT * len(SIZES)
    ts = [t for t, _, _ in frames]
    assert ts == sorted(ts), "pcap records not in time order"
    for i, size in enumerate(SIZES):
        chunk = frames[i * 2 * COUNT:(i + 1) * 2 * COUNT]
        for k, (_t, orig, data) in enumerate(chunk):
            assert orig == len(data) == want_len(size), (size, k, orig, len(data))
            assert fcs_ok(data), f"size {size} frame {k}: bad FCS"
            response = k % 2 == 1              # request, response, request, ...
            assert data[0:6] == (MAC_A if response else MAC_B)
            assert data[6:12] == (MAC_B if response else MAC_A)
            assert data[12:14] == b"\x88\xb5"
            assert data[14] == (ord("R") if response else ord("Q"))
            assert int.from_bytes(data[16:20], "little") == k // 2
            assert data[size:want_len(size) - 4] == bytes(want_len(size) - 4 - size)  # padding
        # a response starts after its request started
        for k in range(0, len(chunk), 2):
            assert chunk[k + 1][0] > chunk[k][0]


def test_rr_pcapng_fcs_checked_by_tshark(rr_capture):
    """Wireshark's dissector, told to check FCSs, finds every frame's FCS good, the payload
    without the FCS, and the timestamps our reader finds (ns)."""
    if not shutil.which("tshark"):
        pytest.skip("tshark not installed (scripts/setup.sh installs it)")
    _, _, pcap = rr_capture
    r = subprocess.run(["tshark", "-r", str(pcap), "-o", "eth.check_fcs:TRUE", "-T", "fields",
                        "-e", "frame.time_epoch", "-e", "frame.len", "-e", "eth.fcs.status",
                        "-e", "eth.type", "-e", "data.len"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    _, _, frames = read_pcapng(pcap)
    assert len(rows) == len(frames) == 2 * COUNT * len(SIZES)
    for n, ((t, _, _), row) in enumerate(zip(frames, rows)):
        size = SIZES[n // (2 * COUNT)]
        epoch, flen, fcs_status, etype, data_len = row
        assert epoch == f"{t // 10**9}.{t % 10**9:09d}", (n, row)
        assert int(flen) == want_len(size), (n, row)
        assert fcs_status == "1", f"frame {n}: FCS not reported good: {row}"   # 1: Good
        assert etype == "0x88b5", (n, row)
        assert int(data_len) == want_len(size) - 14 - 4, (n, row)   # header and FCS excluded


def test_rr_reply_size(nicbench, tmp_path):
    """--reply-size: host B answers 100 B and 3840 B requests (HP OTS) with 100 B replies; the
    wire carries requests of the request size and replies of 100 B, and transactions/s is
    10^9 / the mean RTT."""
    pcap = tmp_path / "reply.pcapng"
    count = 5
    out, doc = run(nicbench, tmp_path, f"{OPTS},peer=1,pcap={pcap}", "rr",
                   "--sizes", "100,3840", "--reply-size", 100, "--count", count)
    small, large = doc["records"]
    for r in (small, large):
        assert r["result"] == "ok" and r["bad_requests"] == r["bad_responses"] == 0
        assert r["reply_size"] == 100 and r["reply_wire_frame_bytes"] == want_len(100)
        assert r["transactions_per_s"] == pytest.approx(1e9 / r["rtt_mean_ns"], rel=1e-5)
    assert (small["size"], large["size"]) == (100, 3840)
    assert small["transactions_per_s"] > large["transactions_per_s"]
    # the large request's RTT holds its own serialisation and one 100 B reply's, not two 3840 B
    assert large["rtt_min_ns"] < 2 * large["frame_wire_ns"]
    assert "trans/s" in out and "reply_B" in out
    _, _, frames = read_pcapng(pcap)
    assert len(frames) == 2 * count * 2
    for k, (_t, orig, data) in enumerate(frames):
        response = k % 2 == 1
        size = 100 if response or k < 2 * count else 3840
        assert orig == len(data) == want_len(size), (k, orig)
        assert data[14] == (ord("R") if response else ord("Q")) and fcs_ok(data)


def test_rr_irq_and_coalescing_delay(nicbench, tmp_path):
    """--irq: each host sleeps until its RX MSI; an interrupt per frame costs little over
    polling, and rx-usecs U (timer only, rx-frames 0) delays each of the two receptions of a
    round trip by U us, so the RTT grows by 2 U; one RX and one TX MSI per frame on each host,
    none before what it announces (the device orders them after their writes)."""
    rtt = {}
    for name, args in (("poll", ()), ("irq", ("--irq",)),
                       ("irq20", ("--irq", "--coalesce", "rx-usecs=20,rx-frames=0"))):
        _, doc = run(nicbench, tmp_path, f"{OPTS},peer=1", "rr", "--sizes", 60, "--count", 5,
                     *args)
        r, = doc["records"]
        assert r["result"] == "ok" and r["irq"] == bool(args)
        assert r["rx_msis_a"] == r["rx_msis_b"] == (5 if args else 0)
        # --irq: each TX MSI found its frame written back, each RX MSI its record
        assert r["tx_msis_a"] == r["tx_msis_b"] == (5 if args else 0)
        assert r["irq_order_errors"] == 0
        rtt[name] = r["rtt_median_ns"]
    assert rtt["poll"] <= rtt["irq"] < rtt["poll"] + 1000
    assert rtt["irq20"] - rtt["irq"] == pytest.approx(40000, abs=500)


def test_rr_needs_peer(nicbench, tmp_path):
    out, _ = run(nicbench, tmp_path, OPTS, "rr", "--count", 1, expect=1)
    assert "peer=1" in out


def test_rr_bad_parameters(nicbench, tmp_path):
    out, _ = run(nicbench, tmp_path, OPTS + ",peer=1", "rr", "--sizes", "10000", expect=2)
    assert "9216" in out
    out, _ = run(nicbench, tmp_path, OPTS + ",peer=1", "rr", "--count", "0", expect=2)
    assert "--count" in out
    out, _ = run(nicbench, tmp_path, OPTS + ",peer=1", "rr", "--reply-size", "10000", expect=2)
    assert "--reply-size" in out and "9216" in out
    out, _ = run(nicbench, tmp_path, OPTS + ",peer=1", "rr", "--coalesce", "rx-usecs=20",
                 expect=2)
    assert "needs --irq" in out
    out, _ = run(nicbench, tmp_path, OPTS + ",peer=1", "rr", "--irq", "--coalesce", "rx-bogus=1",
                 expect=2)
    assert "--coalesce" in out
