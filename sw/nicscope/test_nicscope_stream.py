# SPDX-License-Identifier: BSD-2-Clause
# Full-system tests of the analyzer's deep capture (`nicscope capture --stream`) on the
# Verilated SoC: the entries streamed into host memory equal the simulator's own sample log on
# every cycle; at the default rate (frames through the NIC) a million entries arrive with none
# lost; a throttled host loses entries, and the device's counts say exactly how many, each gap
# marked in the VCD. (The command itself fails unless entries taken = written and taken + lost
# = due.)
import bisect
import json
import re
import subprocess
from pathlib import Path

import pytest

from sw.nicscope.nicscope_run import OPTS, check_trace, read_log, read_vcd, run, value_at

from sw.sim.sim_build import WIDTHS, build

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"dw{w}" for w in WIDTHS])
def nicscope(request):
    return build(request.param).parent / "nicscope", request.param


def test_stream_equals_the_simulator(nicscope, tmp_path):
    binary, _ = nicscope
    log, vcd = tmp_path / "samples.txt", tmp_path / "s.vcd"
    out, r = run(binary, tmp_path, "capture", "--stream", "--load", "tx", "--frames", "6",
                 "--frame-size", "700", "--vcd", str(vcd), opts=OPTS + f",sample_log={log}")
    assert r["mode"] == "stream" and r["lost"] == 0 and r["gaps"] == 0
    assert r["entries_taken"] == r["entries_due"] > 1000
    check_trace(binary, tmp_path, {"vcd": vcd, "first_cycle": r["first_cycle"],
                                   "end_cycle": r["last_cycle"] + 1, "triggered": False},
                read_log(log))


def test_stream_a_million_entries_none_lost(tmp_path):
    """One width (the long run): the other's entries are checked above. 1050 frames give
    about 1.03 million entries (an entry per cycle in which a probed signal changes)."""
    binary = build(128).parent / "nicscope"
    out, r = run(binary, tmp_path, "capture", "--stream", "--load", "tx", "--frames", "1050",
                 "--vcd", str(tmp_path / "m.vcd"))
    assert r["entries_taken"] >= 1_000_000 and r["lost"] == 0 and r["gaps"] == 0
    assert r["entries_due"] == r["entries_taken"]
    # Progress while it runs: a line about every 100 000 entries taken (the count at the drain
    # that passed the mark), up to the million.
    taken = [int(n) for n in re.findall(r"stream: (\d+) entries taken", out)]
    assert len(taken) >= 10 and taken == sorted(taken) and taken[-1] >= 1_000_000, out[-2000:]


def test_stream_throttled_counts_every_loss(nicscope, tmp_path):
    binary, _ = nicscope
    vcd = tmp_path / "t.vcd"
    out, r = run(binary, tmp_path, "capture", "--stream", "--load", "tx", "--frames", "16",
                 "--ring-log2", "8", "--throttle-ns", "20000", "--vcd", str(vcd))
    assert r["lost"] > 0 and r["gaps"] > 0
    assert r["entries_taken"] + r["lost"] == r["entries_due"]
    changes, _ = read_vcd(vcd)
    gap = changes["nic.analyzer.gap"]
    assert sum(1 for _t, v in gap if v == 1) == r["gaps"]


@pytest.mark.parametrize("args,msg", [
    (["--stream", "--trigger", "always"], "no --trigger"),
    (["--ring-log2", "8"], "--stream's"),
    (["--stream", "--ring-log2", "3"], "--ring-log2: 4..24"),
])
def test_stream_bad_options(nicscope, tmp_path, args, msg):
    binary, _ = nicscope
    out, _ = run(binary, tmp_path, "capture", *args, expect=2)
    assert msg in out


def test_host_doorbells_on_the_device_time_axis(nicscope, tmp_path):
    """One time base (exact in the simulation): each TX doorbell the host wrote, placed on the
    trace by its host time, is followed by the doorbell register's CSR write on the device (the
    write's way over the link and the CSR bridge), never before it. At dw64 the TX load's
    changes outrun the stream's DMA writes: a doorbell whose next 200 cycles the device marked
    as lost (nic.analyzer.gap) is not judged; at dw128 (none lost) every one is."""
    binary, _ = nicscope
    vcd = tmp_path / "h.vcd"
    _, r = run(binary, tmp_path, "capture", "--stream", "--load", "tx", "--frames", "200",
               "--frame-size", "200", "--vcd", str(vcd))
    assert r["timebase"]["pairing"] == "exact" and r["timebase"]["uncertainty_ns"] == 0
    ch, _ = read_vcd(vcd)
    ps = 8000
    db = [t // ps for t, v in ch["nic.host.tx_doorbell"] if v == 1]
    assert len(db) >= 20 and db == [c for c in r["host_tx_doorbell_cycles"]
                                    if r["first_cycle"] <= c <= r["last_cycle"]]
    writes = [(t // ps, value_at(ch["nic.csr.csr.adr"], t))
              for t, v in ch["nic.csr.csr.we"] if v == 1]
    # The doorbell register's word address on the CSR bus: its block's base (discovered) plus
    # its offset (the generated header).
    info = subprocess.run([str(binary.parent / "nicbench"), "--opts", OPTS, "--json",
                           str(tmp_path / "i.json"), "info"], capture_output=True, timeout=60)
    assert info.returncode == 0
    blocks = json.loads((tmp_path / "i.json").read_text())["records"][1]["blocks"]
    base = next(b["base"] for b in blocks if b["name"] == "nic")
    off = int(re.search(r"NIC_CSR_NIC_TXQ_DB_ADDR (0x[0-9a-f]+)u",
                        (ROOT / "sw/include/nic_regs.h").read_text()).group(1), 16)
    adr = (base + off) // 4
    # The cycles whose entries the device lost (a narrow DMA port behind a TX load cannot carry
    # every change): between a gap-flagged entry and the stored entry before it, exclusive.
    ends = sorted({t // ps for name, c in ch.items() if not name.startswith("nic.host.")
                   for t, _v in c})
    lost = [(ends[bisect.bisect_left(ends, g) - 1], g)
            for g in (t // ps for t, v in ch["nic.analyzer.gap"] if v == 1)]
    assert len(lost) == r["gaps"]
    delays = []
    for c in db:
        # A doorbell whose way to the register the device lost says nothing: left out, and
        # only there.
        if any(p < c + 200 and g > c for p, g in lost):
            continue
        later = [t for t, a in writes if a == adr and t > c]
        delays.append(later[0] - c if later else None)
    # Every doorbell reaches the register after the host wrote it, most after the unloaded
    # write latency, some later behind the completions the link carries downstream. Where the
    # stream loses entries (dw64) it does so from its first few microseconds on, whatever the
    # load's length: the doorbells judged are those before (18 of 63 at dw64).
    want = 20 if r["gaps"] == 0 else 15
    assert len(delays) >= want and (r["gaps"] > 0 or len(delays) == len(db)), (len(delays), db)
    assert all(d is not None and 0 < d < 200 for d in delays), delays
    mode = max(set(delays), key=delays.count)
    assert mode < 20 and delays.count(mode) >= len(delays) / 2, delays
