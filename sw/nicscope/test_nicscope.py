# SPDX-License-Identifier: BSD-2-Clause
# Full-system tests of the bus analyzer through nicscope on the Verilated SoC, both PHY widths:
# its counts equal the simulator's own cycle-by-cycle count of the same signals and the PCIe
# facts of the transfer; its trace, written as VCD, equals the simulator's sample log cycle for
# cycle; the trigger fires on the cycle a model of the sequence predicts; bad input is refused.
import json
import subprocess

import pytest

from sw.nicscope.nicscope_run import MPS, MRRS, OPTS, bits, check_trace, layout, read_log, run
from sw.sim.sim_build import WIDTHS, build

BYTES = 65536


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"dw{w}" for w in WIDTHS])
def nicscope(request):
    return build(request.param).parent / "nicscope", request.param


def test_report_counts_cross_checked(nicscope, tmp_path):
    binary, width = nicscope
    out, r = run(binary, tmp_path, "report", "--load", "dma", "--bytes", str(BYTES))
    assert "counts equal the simulator's own" in out
    assert r["crosschecked_counts"] >= 40
    window = r["window_cycles"]
    p = r["probes"]
    for name, c in p.items():
        assert c["busy"] + c["stall"] + c["idle"] == window, name
    # What the transfer must look like on the link: MWr of MPS bytes, MRd of MRRS bytes.
    assert p["pcie_tx"]["tlps"]["mwr"] == BYTES // MPS
    assert p["pcie_tx"]["tlps"]["mrd"] == BYTES // MRRS
    assert p["pcie_rx"]["tlps"]["cpld"] >= BYTES // MRRS
    assert p["dma_rd_req"]["frames"] == BYTES // MRRS
    assert p["dma_rd_cpl"]["bytes"] == BYTES
    assert p["dma_wr_req"]["bytes"] == BYTES
    assert p["dma_wr_req"]["busy"] == BYTES // (width // 8)
    lat = r["latency"]
    assert lat["count"] == BYTES // MRRS
    assert sum(lat["bins"]) + lat["below"] + lat["above"] == lat["count"]
    assert lat["lost"] == 0 and lat["unmatched"] == 0
    assert 0 < lat["min"] <= lat["sum"] / lat["count"] <= lat["max"]


def test_report_mac_frames(nicscope, tmp_path):
    """Frames through the NIC's rings and the MAC loopback while LitePCIe's DMA runs: the MAC
    probes count every octet of the wire (preamble 8 + frame + FCS 4); the link carries the
    DMA benchmark's TLPs plus the NIC's."""
    binary, _ = nicscope
    frames, size, dma = 6, 1000, 16384
    out, r = run(binary, tmp_path, "report", "--load", "dma+tx", "--bytes", str(dma),
                 "--frames", str(frames), "--frame-size", str(size))
    p, n, t = r["probes"], r["nic_dma"]["counters"], r["nic_dma"]["tlps"]
    for mac in ("mac_tx", "mac_rx"):
        assert p[mac]["frames"] == frames
        assert p[mac]["bytes"] == frames * (8 + size + 4)
        assert p[mac]["busy"] == p[mac]["bytes"]          # one octet per cycle at 1 Gb/s
    assert t["device_mrd"] == dma // MRRS + n["rdadp_requests"]
    assert t["device_mwr"] == dma // MPS + n["wradp_tlps"]
    assert "PCIe bus time per Ethernet frame sent" in out
    assert r["crosschecked_counts"] >= 70


def test_report_levels(nicscope, tmp_path):
    """Occupancy integrals under DMA and frames: every level of the build is reported, the
    credits in use equal (sum and max) the simulator's own count of the PHY pins, and each level
    stays within what its hardware holds."""
    binary, _ = nicscope
    info, _ = layout(binary, tmp_path)
    out, r = run(binary, tmp_path, "report", "--load", "dma+tx", "--bytes", "65536",
                 "--frames", "16", "--frame-size", "1514")
    lv, window = r["levels"], r["window_cycles"]
    assert list(lv) == info["levels"]
    assert "Occupancy (mean over the window" in out
    for name, v in lv.items():
        assert v["mean"] == pytest.approx(v["sum"] / window), name
        assert v["sum"] <= v["max"] * window, name
    # 78 probe, TLP and latency counts, the three credit levels' sum and max, and the mmio_rd
    # event latency's count, sum, min and max.
    assert r["crosschecked_counts"] == 78 + 6 + 4
    assert 0 < lv["rd_tags"]["max"] <= 8              # LitePCIe's max_pending_requests
    assert 0 < lv["fc_pd"]["max"] and 0 < lv["fc_nph"]["max"]
    assert 0 < lv["txq0_desc"]["max"] <= 8 and lv["txq1_desc"]["sum"] == 0
    assert 0 < lv["tx_fifo"]["max"] <= 32768 and 0 < lv["rx_fifo"]["max"] <= 32768
    assert lv["nic_rd"]["max"] > 0


def test_report_events(nicscope, tmp_path):
    """Device-side latencies under DMA and frames with RX interrupts: every RX interrupt
    decision is matched by its MSI, every host MMIO read by its completion (the simulator's own
    count of the PHY pins agrees), and every TX descriptor read either ends a doorbell's wait or
    is a later read of the same doorbell."""
    binary, _ = nicscope
    frames = 24
    out, r = run(binary, tmp_path, "report", "--load", "dma+tx", "--bytes", "16384",
                 "--frames", str(frames), "--frame-size", "600", "--irq")
    ev, p = r["events"], r["probes"]
    assert "Device-side latencies" in out
    for name, e in ev.items():
        assert sum(e["bins"]) == e["count"] and e["lost"] == 0, name
        if e["count"]:
            assert e["min"] <= e["sum"] / e["count"] <= e["max"], name
    msi = ev["rx_irq_msi"]
    # The MSIs of the window: the RX vector's and one each of the DMA load's checker and writer.
    assert msi["count"] == p["msi"]["frames"] - 2 > 0 and msi["unmatched"] == 0
    assert msi["count"] <= frames
    mmio = ev["mmio_rd"]
    assert mmio["count"] == p["pcie_rx"]["tlps"]["mrd"] > 0 and mmio["unmatched"] == 0
    assert mmio["min"] > 0
    db = ev["db_desc"]
    assert db["count"] >= 1 and db["min"] > 0
    assert db["count"] + db["unmatched"] == r["nic_dma"]["counters"]["txe_desc_reads"]
    # The csr load: the host's reads and nothing else, each timed.
    _, r = run(binary, tmp_path, "report", "--load", "csr")
    mmio = r["events"]["mmio_rd"]
    assert mmio["count"] == r["probes"]["pcie_rx"]["tlps"]["mrd"] == 32
    assert r["events"]["db_desc"]["count"] == r["events"]["rx_irq_msi"]["count"] == 0


def test_report_tx_tlps_match_the_engines(nicscope, tmp_path):
    """`report --load tx`: PCIe bus time and TLPs per frame for frames through the NIC's DMA
    rings, consistent with what the TX and RX engines fetched and wrote by their own counters:
    every read request of the engines is one MRd on the link, every write (RX data in pieces of
    at most MPS, a completion record per frame, TX consumer-index writebacks) leaves as the
    write adapter's TLPs, the host writes only doorbells and reads nothing."""
    binary, width = nicscope
    frames, size = 40, 1000
    out, r = run(binary, tmp_path, "report", "--load", "tx", "--frames", str(frames),
                 "--frame-size", str(size))
    p, nd = r["probes"], r["nic_dma"]
    n, t = nd["counters"], nd["tlps"]
    # Reads: descriptor fetches and payload of TX, descriptor prefetch of RX, nothing else.
    assert n["txe_desc_reads"] >= 1 and n["rxe_desc_reads"] >= 1
    assert n["txe_data_reads"] >= frames                  # a buffer of 1000 B: 2+ reads each
    reads = n["txe_desc_reads"] + n["txe_data_reads"] + n["rxe_desc_reads"]
    assert n["rdadp_requests"] == n["rdadp_completions"] == reads
    assert p["nic_rd_req"]["frames"] == reads
    assert t["device_mrd"] == reads
    # The payload came back whole: the read completions into the NIC are the TX buffers' bytes
    # (16-byte aligned reads) plus 16 bytes per descriptor.
    assert p["nic_rd_cpl"]["frames"] == reads
    # Writes: each 1000-B frame (buffers 1024 B apart: no 4 KiB crossing) in ceil(1000 / MPS)
    # writes, a completion record each, and the TX writebacks.
    assert n["rxe_frames"] == frames
    assert n["wradp_writes"] == frames * -(-size // MPS) + frames + n["txq_wb_writes"]
    assert p["nic_wr"]["frames"] == n["wradp_writes"]
    assert t["device_mwr"] == n["wradp_tlps"] >= n["wradp_writes"]
    # The host: doorbells only (one MWr each) and the write that closes the window, no MMIO
    # read on the hot path.
    assert t["host_mwr"] == nd["doorbells"] + 1 and nd["doorbells"] >= 2
    assert t["host_mrd"] == 0 and p["pcie_tx"]["tlps"]["cpld"] == 0
    assert t["host_cpld"] == p["pcie_rx"]["tlps"]["cpld"] >= reads
    per = nd["tlps_per_frame"]
    assert per["device_mrd"] == pytest.approx(reads / frames)
    ns = nd["pcie_busy_ns_per_frame"]
    busy = p["pcie_rx"]["busy"] + p["pcie_tx"]["busy"]
    assert ns == pytest.approx(busy * r["ns_per_cycle"] / frames)
    assert "PCIe bus time per Ethernet frame sent" in out


def test_report_mac_runt_is_padded(nicscope, tmp_path):
    """A 14-byte frame leaves the MAC padded to 60 bytes plus FCS."""
    binary, _ = nicscope
    _, r = run(binary, tmp_path, "report", "--load", "tx", "--frames", "2", "--frame-size", "14")
    assert r["probes"]["mac_tx"]["bytes"] == 2 * (8 + 60 + 4)


def test_capture_matches_simulator_and_trigger_model(nicscope, tmp_path):
    binary, _ = nicscope
    log = tmp_path / "samples.txt"
    vcd = tmp_path / "t.vcd"
    out, cap = run(binary, tmp_path, "capture", "--bytes", str(BYTES),
                   "--trigger", "rise:dma_rd_req.valid",
                   "--trigger", "pcie_rx.fmt_type==0x4a,pcie_rx.valid,pcie_rx.first#3",
                   "--pre", "32", "--post", "600", "--vcd", str(vcd),
                   opts=OPTS + f",sample_log={log}")
    assert cap["triggered"] and cap["state"] == "done"
    samples = read_log(log)
    probes = check_trace(binary, tmp_path, cap, samples)
    # The trigger model: the first cycle dma_rd_req.valid rises, then the third cycle after it
    # on which a CplD's first beat is on pcie_rx.
    sig = {(p, s["signal"]): s for p, ss in probes.items() for s in ss}
    per_cycle = {}
    for (c0, v), nxt in zip(samples, samples[1:] + [(samples[-1][0] + 1, None)]):
        for c in range(c0, nxt[0]):
            per_cycle[c] = v
    cycles = sorted(per_cycle)
    stage, hits, expect = 0, 0, None
    prev = None
    for c in cycles:
        v = per_cycle[c]
        if stage == 0:
            if prev is not None and bits(v, sig["dma_rd_req", "valid"]) and \
                    not bits(prev, sig["dma_rd_req", "valid"]):
                stage = 1
        elif bits(v, sig["pcie_rx", "valid"]) and bits(v, sig["pcie_rx", "first"]) and \
                bits(v, sig["pcie_rx", "fmt_type"]) == 0x4A:
            hits += 1
            if hits == 3:
                expect = c
                break
        prev = v
    assert cap["trigger_cycle"] == expect
    # The pre-trigger window: exactly 32 entries before the trigger's.
    assert "entry 32; 32 entries before it" in out
    if not cap["overflow"]:
        assert cap["end_cycle"] == cap["trigger_cycle"] + 600 + 1


def test_capture_bad_input(nicscope, tmp_path):
    binary, _ = nicscope
    out, _ = run(binary, tmp_path, "capture", "--trigger", "nosuch.valid", expect=2)
    assert "no such signal" in out and "pcie_rx.fmt_type" in out
    out, _ = run(binary, tmp_path, "capture", "--pre", "1024", expect=2)
    assert "--pre" in out
    out, _ = run(binary, tmp_path, "capture", "--trigger", "pcie_rx.fmt_type==0x100", expect=2)
    assert "does not fit" in out
    vcd = tmp_path / "never.vcd"
    out, _ = run(binary, tmp_path, "--timeout-ms", "1", "capture", "--bytes", "4096",
                 "--vcd", str(vcd),
                 "--trigger", "pcie_tx.fmt_type==0x7f,pcie_tx.valid", expect=1)
    assert "the trigger did not fire" in out
    assert vcd.exists()


def test_gtkwave_opens_the_capture(nicscope, tmp_path):
    """GTKWave (under Xvfb) loads the save file nicscope writes, shows every signal, and opens
    on the captured window (zoomed to it, not to a few ps at its start) with the marker on the
    trigger."""
    import shutil
    if not shutil.which("xvfb-run") or not shutil.which("gtkwave"):
        pytest.skip("xvfb-run or gtkwave not installed (scripts/setup.sh installs them)")
    binary, _ = nicscope
    vcd, gtkw = tmp_path / "g.vcd", tmp_path / "g.gtkw"
    _, cap = run(binary, tmp_path, "capture", "--bytes", "4096", "--trigger",
                 "rise:pcie_tx.valid", "--vcd", str(vcd), "--gtkw", str(gtkw))
    assert cap["triggered"]
    info, _ = layout(binary, tmp_path)
    tcl = tmp_path / "q.tcl"
    tcl.write_text('puts "SIGNALS [gtkwave::getDisplayedSignals]"\n'
                   'puts "WINDOW [gtkwave::getWindowStartTime] [gtkwave::getWindowEndTime]'
                   ' [gtkwave::getMarker]"\n'
                   "gtkwave::/File/Quit\n")
    r = subprocess.run(["xvfb-run", "-a", "gtkwave", "-S", str(tcl), str(gtkw)],
                       capture_output=True, text=True, timeout=120)
    lines = r.stdout.splitlines()
    start, end, marker = map(int, next(x for x in lines if x.startswith("WINDOW")).split()[1:])
    ps = 8000
    first, last = cap["first_cycle"] * ps, cap["end_cycle"] * ps
    assert start == first, (start, first)
    assert last <= end <= first + 1.25 * (last - first), (start, end, first, last)
    assert marker == cap["trigger_cycle"] * ps
    shown = next(line for line in lines if line.startswith("SIGNALS")).split()
    for s in info["signals"]:
        width = f"[{s['width'] - 1}:0]" if s["width"] > 1 else ""
        assert any(x.endswith(f".{s['probe']}.{s['signal']}{width}") for x in shown), s
    assert any(x.endswith("pcie_tx.tlp") for x in shown)
    assert "nic.analyzer.trigger" in shown


def test_cpu_refused_without_soft_cpu(nicscope, tmp_path):
    """A block the command needs (the soft CPU's console, `uart`) is absent: a clear refusal."""
    binary, _ = nicscope
    out, _ = run(binary, tmp_path, "cpu", expect=1)
    assert "no soft CPU console" in out and "no uart block" in out


def test_capture_default_window_is_complete(nicscope, tmp_path):
    """Only a trigger, every window option at its default: the capture ends with its post-trigger
    window (no OVERFLOW), because the defaults are sized from the depth the analyzer reports:
    pre = depth/16 entries, post = depth - pre - 1 cycles. --help says so."""
    binary, _ = nicscope
    r = subprocess.run([str(binary), "--opts", OPTS, "--json", "out.json", "capture",
                        "--trigger", "rise:dma_rd_req.valid"],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "OVERFLOW" not in out
    cap = json.loads((tmp_path / "out.json").read_text())["result"]
    depth = 1024                                  # ANALYZER_INFO.DEPTH_LOG2 of every build
    assert (cap["pre"], cap["post"]) == (depth // 16, depth - depth // 16 - 1)
    assert cap["state"] == "done" and cap["triggered"] and not cap["overflow"]
    assert cap["end_cycle"] == cap["trigger_cycle"] + cap["post"] + 1
    assert {"nicscope.vcd", "nicscope.gtkw", "out.json"} <= {p.name for p in tmp_path.iterdir()}
    assert not list(tmp_path.glob("*.part"))
    usage = subprocess.run([str(binary), "--help"], capture_output=True, text=True).stdout
    assert "default depth - pre - 1" in usage and f"this build: {depth}" in usage


def test_unwritable_output_refused_before_the_run(nicscope, tmp_path):
    """An output that cannot be created (--vcd, --gtkw, --json, the sim backend's trace= and
    pcap=) is one error line and exit 2 before anything runs, never followed by "wrote"; nothing
    is left behind."""
    binary, _ = nicscope
    missing = tmp_path / "no" / "such"
    cases = [
        ("--vcd", ["capture", "--trigger", "rise:dma_rd_req.valid", "--vcd", f"{missing}/t.vcd"]),
        ("--gtkw", ["capture", "--trigger", "rise:dma_rd_req.valid",
                    "--vcd", str(tmp_path / "t.vcd"), "--gtkw", f"{missing}/t.gtkw"]),
        ("--json", ["--json", f"{missing}/o.json", "info"]),
        ("trace", ["--opts", f"{OPTS},trace={missing}/x.fst", "info"]),
        ("--json", ["--json", str(tmp_path), "info"]),         # a directory
    ]
    for what, args in cases:
        r = subprocess.run([str(binary)] + args, capture_output=True, text=True, timeout=600,
                           cwd=tmp_path)
        assert r.returncode == 2, (args, r.stdout + r.stderr)
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith("nicscope: ") and what in lines[0], lines
        assert "cannot create" in lines[0] and "wrote" not in r.stdout, r.stdout
        assert not list(tmp_path.rglob("*")), list(tmp_path.rglob("*"))


def test_failed_capture_leaves_no_partial_file(nicscope, tmp_path):
    """A capture whose load fails writes no VCD, .gtkw or JSON, not even a part of one."""
    binary, _ = nicscope
    r = subprocess.run([str(binary), "--opts", OPTS, "--json", "o.json", "capture",
                        "--trigger", "rise:dma_rd_req.valid", "--load", "dma",
                        "--bytes", "64M"], capture_output=True, text=True, timeout=600,
                       cwd=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "wrote" not in r.stdout and "FAILED" in r.stderr
    assert not list(tmp_path.iterdir())
