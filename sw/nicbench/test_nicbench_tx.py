# SPDX-License-Identifier: BSD-2-Clause
# Full-system test of the NIC datapath driver (sw/lib/nic_queues.c) through `nicbench tx` on the
# Verilated SoC (build/sim_dw128/, built by `make test` or `make sim`): frames of
# several sizes over 1 and 4 TX queues go through the descriptor rings, LiteEth's MAC and its
# loopback PHY back into the RX ring; every frame must come back bit-exact and in order per
# queue (the tool exits non-zero otherwise), with no MMIO read on the hot path (host-model TLP
# counter), no drop or error counter moving, one TX doorbell per batch and interrupts counted.
# The modes for the seed papers: --io (blocking I/Os per submitter, SGI HIPPI), --gap-ns (frames
# at a spacing, loss when the receiver is the bottleneck, Hughes-Jones' UDPmon), --csum (RFC 1071
# checksums and the host's CPU time per frame, HP OTS), --window (an end-to-end window per queue,
# HP OTS's and CERN's window x round trip). Bad parameters are refused with a usage
# error. A few hundred frames per run: well under 2 minutes.

import pytest
from conftest import nic_run

OPTS = "gen=2,lanes=4,mps=256,mrrs=512"
SIZES = [60, 128, 1514]
FRAMES = 240


def run(binary, tmp_path, *args, expect=0, timeout=600):
    return nic_run(binary, tmp_path / "tx.json", OPTS, *args, expect=expect, timeout=timeout)


@pytest.mark.parametrize("queues", [1, 4])
def test_tx_frames_bit_exact_no_mmio_reads(nicbench, tmp_path, queues):
    batch = 16
    out, doc = run(nicbench, tmp_path, "tx", "--frames", FRAMES, "--queues", queues,
                   "--sizes", ",".join(map(str, SIZES)), "--batch", batch)
    assert doc["status"] == "ok", out
    recs = [r for r in doc["records"] if r["experiment"] == "tx"]
    assert [r["size"] for r in recs] == SIZES
    for r in recs:
        assert r["result"] == "ok", r
        assert r["queues"] == queues and r["frames"] == FRAMES
        # every frame back, bit-exact, in order per queue
        assert r["received"] == FRAMES and r["lost"] == 0
        for k in ("bad_content", "bad_length", "bad_status", "bad_header", "out_of_order"):
            assert r[k] == 0, (k, r)
        assert r["received_bytes"] == FRAMES * max(r["size"], 60)
        # the hot path reads nothing over MMIO
        assert r["mmio_read_tlps_hot"] == 0 and r["mmio_reads_hot"] == 0
        # no drop or error counter moved
        assert r["drops_total"] == 0 and not any(r["drops"].values()), r["drops"]
        c = r["counters"]
        assert c["txe_frames"] == FRAMES and c["rxe_frames"] == FRAMES
        assert c["txe_bytes"] == FRAMES * r["size"]
        assert c["txq_descs_completed"] == FRAMES
        # doorbells: what the host wrote is what the device took, one per batch at least
        assert r["device_tx_doorbells"] == r["tx_doorbells"]
        assert r["tx_doorbells"] >= -(-FRAMES // batch)
        assert r["tx_doorbells"] <= FRAMES
        # the hot path's MMIO writes are the doorbells and nothing else
        assert r["mmio_writes_hot"] == r["tx_doorbells"] + r["rx_doorbells"]
        # coalescing defaults (frames 1): one interrupt per completion on each vector
        assert r["irqs_tx"] == FRAMES and r["irqs_rx"] == FRAMES
        # each on its own MSI vector (msi-multi-vector), each reaching the host once
        assert r["msi_type"] == "msi-multi-vector"
        assert (r["msis_tx"], r["msis_rx"], r["msis_other"]) == (FRAMES, FRAMES, 0)
        assert r["msis_received"] == r["msis_model"] == 2 * FRAMES
        # TX queue groups: queue q interrupts on TX vector q % tx_vectors
        nv = r["tx_vectors"]
        per_vec = [FRAMES // queues * len(range(g, queues, nv)) for g in range(nv)]
        assert r["irqs_tx_vec"] == per_vec and r["msis_tx_vec"] == per_vec
        # figures measured on the simulated clock, consistent with each other
        assert r["time_ns"] > 0
        assert r["gbps"] == pytest.approx(r["bytes"] * 8 / r["time_ns"], rel=1e-5)
        assert r["mpps"] == pytest.approx(FRAMES / r["time_ns"] * 1e3, rel=1e-5)
        assert 0 < r["line_ratio"] <= 1.0 + 1e-6      # never faster than the 1 Gb/s wire
        assert r["msix_model"] == 0                  # MSI-X off: MSI requests
    assert "mmio_rd" in out and "Mpps" in out


def test_tx_on_msix(nicbench, tmp_path):
    """msix=1: the host enables MSI-X and the sim backend programs the SoC's table (the MSI
    window's address, entry m's data m): every interrupt is an MSI-X MWr on the TLP stream, on
    the vector of its MSI number; decisions that come while their vector's message is pending
    (the PBA) share it; every frame back, bit-exact."""
    frames = 120
    _, doc = nic_run(nicbench, tmp_path / "tx.json", OPTS + ",msix=1", "tx", "--frames", frames,
                     "--queues", 2, "--sizes", "128", "--batch", 8)
    r = [r for r in doc["records"] if r["experiment"] == "tx"][0]
    assert r["result"] == "ok" and r["received"] == frames and r["lost"] == 0, r
    assert r["msi_type"] == "msi-x"
    assert r["irqs_tx"] == r["irqs_rx"] == frames
    assert r["irqs_tx_vec"] == [frames // 2, frames // 2]
    assert 0 < r["msis_tx"] <= frames and 0 < r["msis_rx"] <= frames and r["msis_other"] == 0
    assert all(0 < m <= i for m, i in zip(r["msis_tx_vec"], r["irqs_tx_vec"]))
    assert r["msis_received"] == r["msis_model"] == r["msix_model"] == \
        r["msis_tx"] + r["msis_rx"]
    assert r["drops_total"] == 0


def test_tx_inflight_list_and_limit(nicbench, tmp_path):
    """--inflight as a list runs each value; one descriptor in flight means one doorbell per
    frame and cannot be faster than a deeper queue."""
    out, doc = run(nicbench, tmp_path, "tx", "--frames", 64, "--inflight", "1,16",
                   "--ring", 32)
    recs = doc["records"]
    assert [r["inflight"] for r in recs] == [1, 16]
    assert all(r["result"] == "ok" and r["window"] is None for r in recs)
    assert recs[0]["tx_doorbells"] == 64
    assert recs[0]["mpps"] <= recs[1]["mpps"]


def window_runs(binary, tmp_path, opts, *args):
    """`tx --window ...` records, each checked as every run is: all frames back bit-exact, in
    order, nothing dropped, no MMIO read on the hot path; a round trip measured per frame."""
    _, doc = nic_run(binary, tmp_path / "tx.json", opts, "tx", *args)
    recs = doc["records"]
    for r in recs:
        assert r["mode"] == "stream" and r["result"] == "ok", r
        assert r["received"] == r["frames"] == r["rtts"] and r["lost"] == 0
        assert r["bad_content"] == r["bad_length"] == r["out_of_order"] == 0
        assert r["drops_total"] == 0 and r["mmio_read_tlps_hot"] == 0
        assert 0 < r["rtt_min_ns"] <= r["rtt_mean_ns"] <= r["rtt_max_ns"]
    return recs


def test_tx_window_default_latency(nicbench, tmp_path):
    """--window: at most W frames per queue sent and not yet received back. With 1514 B frames
    one in flight waits for each frame's whole round trip (TX DMA, wire, RX DMA), so it stays
    clearly under the line; 8 reach it (--inflight 63 alone does too: a TX completion comes when
    the frame is in the TX FIFO). Lists of both run every pair, and both limits apply."""
    recs = window_runs(nicbench, tmp_path, OPTS, "--frames", 48, "--sizes", 1514,
                       "--inflight", "2,63", "--window", "1,8")
    assert [(r["inflight"], r["window"]) for r in recs] == [(2, 1), (2, 8), (63, 1), (63, 8)]
    w1, w8 = recs[2], recs[3]
    assert w1["line_ratio"] < 0.9 and w1["gbps"] < 0.9 * w8["gbps"]
    assert w8["line_ratio"] > 0.95
    # window 1: a frame per round trip
    assert w1["tx_doorbells"] == 48
    assert w1["gbps"] == pytest.approx(1514 * 8 / w1["rtt_mean_ns"], rel=0.02)


def test_tx_window_far_host(nicbench, tmp_path):
    """A far host (20 us to the first read completion): window 1 sends a frame per round trip,
    which pays the latency twice (descriptor, then payload read), so its rate is size / round
    trip. Window 4 moves 4 frames per round, sent with one doorbell once the window is back:
    the TX engine reads them in one job, so the round grows only by the 3 more frames' wire time
    (its jobs do not overlap: a sliding window gains less here): well over twice window 1, under
    the line."""
    size = 1514
    w1, w4 = window_runs(nicbench, tmp_path, OPTS + ",mem_read_latency_ns=20000", "--frames", 40,
                         "--sizes", size, "--window", "1,4")
    assert w1["rtt_mean_ns"] > 2 * 20000
    assert w1["gbps"] == pytest.approx(size * 8 / w1["rtt_mean_ns"], rel=0.02)
    wire_ns = (size + 4 + 20) * 8                         # one frame on the 1 Gb/s wire
    assert w4["gbps"] == pytest.approx(4 * size * 8 / (w1["rtt_mean_ns"] + 3 * wire_ns), rel=0.03)
    assert 2.2 * w1["gbps"] < w4["gbps"] and w4["line_ratio"] < 0.8


def test_tx_io_one_vs_two_submitters(nicbench, tmp_path):
    """--io: each queue a submitter of blocking I/Os. At 128 B one submitter is bound by the
    I/O's turnaround (doorbell, descriptor and payload reads, consumer-index writeback, poll),
    so two interleaved submitters move more; at 1 KiB one already fills the 1 Gb/s line and two
    move the same."""
    recs = {}
    for q in (1, 2):
        _, doc = run(nicbench, tmp_path, "tx", "--io", "128,1K", "--queues", q,
                     "--min-bytes", "32K")
        for r in doc["records"]:
            assert r["mode"] == "io" and r["result"] == "ok", r
            # every I/O done, every frame back bit-exact
            assert r["ios"] == r["ios_per_queue"] * q >= 3 * q
            assert r["ios_per_queue"] * q * r["io_size"] >= 32 * 1024
            assert r["frames"] == r["ios"] * r["io_frames"] == r["received"]
            assert r["bytes"] == r["ios"] * r["io_size"] == r["received_bytes"]
            assert r["bad_content"] == r["out_of_order"] == r["lost"] == 0
            assert r["drops_total"] == 0 and r["mmio_read_tlps_hot"] == 0
            # one I/O open per submitter: a doorbell per I/O at least
            assert r["tx_doorbells"] >= r["ios"]
            assert r["mbps"] == pytest.approx(r["bytes"] / r["time_ns"] * 1e3, rel=1e-5)
            assert r["io_mbps"] == r["mbps"]
            assert r["received_mbps"] == pytest.approx(r["bytes"] / r["received_last_ns"] * 1e3,
                                                       rel=1e-5)
            assert 0 < r["io_time_min_ns"] <= r["io_time_mean_ns"] <= r["io_time_max_ns"]
            recs[q, r["io_size"]] = r
    assert recs[2, 128]["received_mbps"] > 1.03 * recs[1, 128]["received_mbps"]
    line_mbps = 1e9 / 8 * 1024 / (1024 + 24) / 1e6      # 1 KiB frames at the 1 Gb/s line
    for q in (1, 2):
        assert 0.95 * line_mbps < recs[q, 1024]["received_mbps"] <= line_mbps * 1.001
    # there the two submitters take turns on the line: each I/O takes about twice as long
    assert recs[2, 1024]["io_time_mean_ns"] > 1.8 * recs[1, 1024]["io_time_mean_ns"]


def test_tx_io_split_into_jumbo_frames(nicbench, tmp_path):
    """An I/O of 20000 B is ceil(20000 / 9000) = 3 frames of 6667, 6667 and 6666 B."""
    _, doc = run(nicbench, tmp_path, "tx", "--io", "20000", "--min-bytes", 1)
    r, = doc["records"]
    assert r["result"] == "ok"
    assert (r["io_frames"], r["size"], r["io_frame_max"], r["ios"]) == (3, 6667, 9000, 3)
    assert r["frames"] == r["received"] == 9 and r["bytes"] == r["received_bytes"] == 60000
    assert r["counters"]["txe_bytes"] == 60000


def test_tx_gap_receiver_bottleneck(nicbench, tmp_path):
    """--gap-ns: one frame per doorbell at the given spacing. The receiver reposts its 15 RX
    buffers every 20 us (0.75 Mpps at most): back to back (gap 0, line rate, 1.49 Mpps) about
    half the frames are lost, each counted by rxe_drop_no_buffer, and that is a result, not a
    failure; at 3 us (0.33 Mpps) none is lost and the receiver sees the offered rate."""
    frames = 300
    _, doc = run(nicbench, tmp_path, "tx", "--gap-ns", "0,3000", "--frames", frames,
                 "--sizes", 60, "--rx-ring", 16, "--rx-refill-ns", 20000)
    fast, slow = doc["records"]
    assert doc["status"] == "ok"
    for r in (fast, slow):
        assert r["mode"] == "gap" and r["result"] == "ok", r
        assert r["tx_doorbells"] == frames                     # one frame per doorbell
        assert r["received"] + r["lost"] == frames
        assert r["lost"] == sum(r["lost_by_cause"].values()) and r["lost_unexplained"] == 0
        assert r["lost"] == r["drops_total"]                   # no other drop
        assert r["bad_content"] == r["bad_length"] == r["out_of_order"] == 0
        assert r["mmio_read_tlps_hot"] == 0
    assert (fast["gap_ns"], slow["gap_ns"]) == (0, 3000)
    assert fast["lost"] > frames // 4 and fast["lost_by_cause"]["rxe_drop_no_buffer"] > 0
    assert fast["received_mpps"] < 0.8 < fast["offered_mpps"]
    assert fast["received_gbps"] < fast["offered_gbps"]
    assert slow["lost"] == 0
    assert slow["offered_mpps"] == pytest.approx(1e3 / 3000, rel=0.01)
    assert slow["received_mpps"] == pytest.approx(1e3 / 3000, rel=0.02)
    assert slow["offered_gbps_nominal"] == pytest.approx(60 * 8 / 3000)


def test_tx_csum_host_cpu(nicbench, tmp_path):
    """--csum: a checksum in every frame, verified on every frame received (a bad one fails the
    run); its host CPU time is reported per frame, and it changes no simulated figure (the
    host's work takes no simulated time)."""
    recs = {}
    for flag in ([], ["--csum"]):
        _, doc = run(nicbench, tmp_path, "tx", "--frames", 200, "--sizes", "60,1514", *flag)
        for r in doc["records"]:
            assert r["result"] == "ok" and r["bad_csum"] == 0 and r["received"] == 200
            assert r["host_ns_per_frame"] > 0 and "CPUTIME" in r["host_cpu_clock"]
            assert r["host_ns_per_frame"] >= r["host_csum_ns_per_frame"]
            assert r["host_ns_per_frame"] == pytest.approx(
                r["host_tx_ns_per_frame"] + r["host_rx_ns_per_frame"], rel=1e-5)
            recs[r["csum"], r["size"]] = r
    for size in (60, 1514):
        on, off = recs[True, size], recs[False, size]
        assert on["host_csum_ns_per_frame"] > 0 and off["host_csum_ns_per_frame"] == 0
        assert on["time_ns"] == off["time_ns"]


@pytest.mark.parametrize("args, message", [
    (["--ring", "48"], "power of two"),
    (["--ring", "8192"], "power of two"),
    (["--queues", "17"], "--queues"),
    (["--sizes", "10000"], "9216"),
    (["--batch", "64", "--ring", "64"], "--batch"),
    (["--inflight", "64", "--ring", "64"], "--inflight"),
    (["--coalesce", "rx-bogus=1"], "unknown name"),
    (["--io", "1K", "--sizes", "60"], "--sizes does not go with --io"),
    (["--io", "1K", "--frames", "10"], "--frames does not go with --io"),
    (["--io", "10"], "--io: 10 out of range"),
    (["--io", "1K", "--io-frame", "10"], "--io-frame"),
    (["--io-frame", "1500"], "--io-frame does not go with the default mode"),
    (["--gap-ns", "0", "--batch", "4"], "--batch does not go with --gap-ns"),
    (["--gap-ns", "20000000"], "--gap-ns"),
    (["--rx-refill-ns", "1000"], "--rx-refill-ns does not go with the default mode"),
    (["--csum", "--sizes", "21"], "--csum"),
    (["--window", "0"], "--window: 0 out of range"),
    (["--window", "1,65537"], "--window: 65537 out of range"),
    (["--window", "x"], "--window"),
    (["--io", "1K", "--window", "4"], "--window does not go with --io"),
    (["--gap-ns", "0", "--window", "4"], "--window does not go with --gap-ns"),
])
def test_tx_bad_parameters(nicbench, tmp_path, args, message):
    out, _ = run(nicbench, tmp_path, "tx", *args, expect=2)
    assert message in out


def test_tx_more_queues_than_the_soc_has(nicbench, tmp_path):
    """The SoC's TX queue count comes from its nic block (4 here): more is refused with it."""
    out, _ = run(nicbench, tmp_path, "tx", "--queues", "5", expect=1)
    assert "5 is out of range 1..4" in out and "nic block" in out


def test_tx_frame_length_not_multiple_of_4(nicbench, tmp_path):
    """RX writes are whole DWORDs (rtl/nic/rx_engine.py pads the frame with zeros): odd lengths
    arrive whole."""
    run(nicbench, tmp_path, "tx", "--frames", 16, "--sizes", "61,62,63,1514")


def coalesced_random_run(binary, tmp_path, frames, f_rx, f_tx, timeout=600):
    """frames frames of random size 60..1514 over 4 queues with rx-frames = f_rx, tx-frames =
    f_tx and no timers: the coalescing rules (rtl/nic/irq_coalescer.py) give exactly n // f
    interrupts on a vector that sees n events (one event per frame, each interrupt taken at
    once, the remainder left pending), and the host receives exactly that many MSIs on each
    vector (f_rx != f_tx, so the RX and TX vectors cannot be confused)."""
    out, doc = run(binary, tmp_path, "tx", "--frames", frames, "--queues", 4,
                   "--size-range", "60-1514", "--coalesce", f"rx-frames={f_rx},tx-frames={f_tx}",
                   timeout=timeout)
    rec, = doc["records"]
    assert rec["result"] == "ok" and rec["received"] == frames and rec["lost"] == 0
    assert rec["bad_content"] == rec["bad_length"] == rec["out_of_order"] == 0
    assert rec["drops_total"] == 0 and rec["mmio_read_tlps_hot"] == 0
    assert rec["irqs_rx"] == frames // f_rx
    assert (rec["msis_rx"], rec["msis_other"]) == (frames // f_rx, 0)
    # TX queue groups (the NIC build has 2 TX vectors: queues 0, 2 and 1, 3), each vector
    # coalescing its own frames: frames // 2 // f_tx interrupts and MSIs on each
    assert rec["tx_vectors"] == 2
    assert rec["irqs_tx_vec"] == rec["msis_tx_vec"] == [frames // 2 // f_tx] * 2
    assert rec["msis_tx"] == rec["irqs_tx"] == 2 * (frames // 2 // f_tx)
    assert 60 * frames < rec["bytes"] < 1514 * frames
    # the device's per-queue counters (ethtool -S style) match what the host sent on each queue
    per_q = rec["per_queue"]
    assert [q["frames"] for q in per_q] == [frames // 4] * 4 and rec["per_queue_mismatch"] == 0
    assert sum(q["bytes"] for q in per_q) == rec["bytes"]
    return rec


def test_tx_random_sizes_exact_interrupt_count(nicbench, tmp_path):
    coalesced_random_run(nicbench, tmp_path, 2000, 7, 5)


def test_tx_100k_random_frames_full_system(nicbench, tmp_path):
    """The issue's full-system test: 100 000 frames of random size 60..1514 over 4 TX queues
    through the loopback, each received once, in per-queue order, bit-exact (the tool checks),
    and the interrupt count exactly as the coalescing rules predict. About 7 minutes."""
    # (7 minutes alone on 2 cores; the timeout only guards against a hang, with room for a
    # loaded machine)
    coalesced_random_run(nicbench, tmp_path, 100_000, 7, 5, timeout=2400)


def test_dma_interrupts_on_their_own_vectors(nicbench, tmp_path):
    """The NIC build's LitePCIe MSI block is msi-multi-vector: the DMA checker's and writer's
    interrupts each arrive on their own vector (nicbench's wait fails on any other vector), with
    no PCIE_MSI_VECTOR to read."""
    out, doc = run(nicbench, tmp_path, "dma", "--dir", "both", "--sizes", "4096",
                   "--min-bytes", 16384)
    assert doc["status"] == "ok", out
