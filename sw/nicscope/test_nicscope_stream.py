# Full-system tests of the analyzer's deep capture (`nicscope capture --stream`) on the
# Verilated SoC: the entries streamed into host memory equal the simulator's own sample log on
# every cycle; at the default rate (frames through the NIC) a million entries arrive with none
# lost; a throttled host loses entries, and the device's counts say exactly how many, each gap
# marked in the VCD. (The command itself fails unless entries taken = written and taken + lost
# = due.)
import pytest

from sw.nicscope.test_nicscope import OPTS, check_trace, read_log, read_vcd, run

from litex_soc.targets.test_sim import WIDTHS, build


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
    """One width (the long run): the other's entries are checked above."""
    binary = build(128).parent / "nicscope"
    out, r = run(binary, tmp_path, "capture", "--stream", "--load", "tx", "--frames", "1000",
                 "--vcd", str(tmp_path / "m.vcd"))
    assert r["entries_taken"] >= 1_000_000 and r["lost"] == 0 and r["gaps"] == 0
    assert r["entries_due"] == r["entries_taken"]
    assert "stream: 1000000 entries taken" in out          # progress while it runs


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
