# SPDX-License-Identifier: BSD-2-Clause
# Full-system tests of the analyzer's triggers on figures and capture tracks through `nicscope
# capture` on the Verilated SoC, both PHY widths: a trigger on the first DMA read slower than a
# threshold latches that read's latency, which equals the host model's own timing of the first
# read of the load past the threshold, cycle for cycle (nicscope fails otherwise), for the raw
# DMA reads and each class of the NIC's (descriptor, payload); a trigger on a FIFO's fill fires
# two cycles after the fill crossed, as the VCD's analog track of that level shows; GTKWave
# draws the track as an analog waveform; bad figures are refused.
import shutil
import subprocess

import pytest

from sw.nicscope.nicscope_run import read_vcd, run, value_at

from sw.sim.sim_build import WIDTHS, build

PS = 8000                      # ps per cycle at 125 MHz


@pytest.fixture(scope="module", params=WIDTHS, ids=[f"dw{w}" for w in WIDTHS])
def nicscope(request):
    return build(request.param).parent / "nicscope", request.param


def test_trigger_on_slow_dma_read(nicscope, tmp_path):
    binary, _ = nicscope
    vcd = tmp_path / "slow.vcd"
    thr_ns = 1000
    out, cap = run(binary, tmp_path, "capture", "--load", "dma", "--bytes", "65536",
                   "--trigger-figure", f"bd.raw_dma.rtt>{thr_ns}ns", "--pre", "512",
                   "--vcd", str(vcd))
    assert cap["triggered"], out
    fig = cap["figures"][0]
    assert fig["figure"] == "bd.raw_dma.rtt" and fig["threshold"] == thr_ns * 1000 // PS
    # The read the trigger caught was that slow, and it is the host model's first read of the
    # load past the threshold: its MRd -> first completion beat, timed by the model at the PHY,
    # is the latched latency, cycle for cycle; earlier reads of the load were faster.
    assert "is the host model's first read of the load past the threshold" in out
    assert fig["value"] > fig["threshold"]
    model = fig["model"]
    assert model["cycles"] == fig["value"] and model["read"] >= 1
    # The trigger follows the read's last completion beat: its hand-off (reorder wait) + the
    # count (2) + the figure's and the hit's registers (2); and the capture holds the read's
    # completions.
    lag = cap["trigger_cycle"] - model["end_cycle"]
    assert 4 <= lag <= 4 + 64, lag
    assert cap["first_cycle"] <= model["first_cpl_cycle"] - fig["value"]
    # The default tracks: the read tags in use, drawn as a waveform, 1..8 around the read.
    changes, _ = read_vcd(vcd)
    tags = changes["nic.levels.rd_tags"]
    assert 1 <= value_at(tags, model["first_cpl_cycle"] * PS) <= 8
    assert cap["tracks"] == ["rd_tags", "nic_rd"]


@pytest.mark.parametrize("figure,thr_ns", [("bd.nic_payload.rtt", 1000),
                                           ("bd.nic_desc.rtt", 600)])
def test_trigger_on_slow_nic_read(nicscope, tmp_path, figure, thr_ns):
    binary, _ = nicscope
    out, cap = run(binary, tmp_path, "capture", "--load", "tx", "--frames", "8",
                   "--trigger-figure", f"{figure}>{thr_ns}ns", "--vcd",
                   str(tmp_path / "nic.vcd"))
    assert cap["triggered"], out
    fig = cap["figures"][0]
    assert fig["figure"] == figure and fig["value"] > fig["threshold"]
    # The host model's first read of the load of that class (descriptor rings or payload
    # buffers, by address) past the threshold is the one latched, cycle for cycle.
    assert "is the host model's first read of the load past the threshold" in out
    assert fig["model"]["cycles"] == fig["value"]
    assert 4 <= cap["trigger_cycle"] - fig["model"]["end_cycle"] <= 4 + 64


def test_trigger_on_fifo_fill_and_analog_track(nicscope, tmp_path):
    binary, _ = nicscope
    vcd, gtkw = tmp_path / "fill.vcd", tmp_path / "fill.gtkw"
    thr = 3000
    out, cap = run(binary, tmp_path, "capture", "--load", "tx", "--frames", "8",
                   "--trigger-figure", f"level.tx_fifo>{thr}", "--vcd", str(vcd),
                   "--gtkw", str(gtkw))
    assert cap["triggered"], out
    fig = cap["figures"][0]
    assert fig["value"] > thr and "model" not in fig
    assert cap["tracks"][0] == "tx_fifo"
    # The track: the fill crossed two cycles before the trigger (a rise on the hit, which is
    # registered twice), and the latched figure is the fill of that cycle.
    changes, _ = read_vcd(vcd)
    fill = changes["nic.levels.tx_fifo"]
    t = cap["trigger_cycle"]
    before, crossed = (value_at(fill, c * PS) for c in (t - 3, t - 2))
    assert before <= thr < crossed and crossed == fig["value"]
    text = gtkw.read_text()
    assert "@8024\nnic.levels.tx_fifo\n@20000\n" in text
    if not shutil.which("xvfb-run") or not shutil.which("gtkwave"):
        pytest.skip("xvfb-run or gtkwave not installed (scripts/setup.sh installs them)")
    tcl = tmp_path / "q.tcl"
    tcl.write_text('puts "SIGNALS [gtkwave::getDisplayedSignals]"\n'
                   'puts "MARKER [gtkwave::getMarker]"\ngtkwave::/File/Quit\n')
    r = subprocess.run(["xvfb-run", "-a", "gtkwave", "-S", str(tcl), str(gtkw)],
                       capture_output=True, text=True, timeout=120)
    lines = r.stdout.splitlines()
    shown = next(x for x in lines if x.startswith("SIGNALS")).split()
    assert "nic.levels.tx_fifo" in shown, shown
    assert int(next(x for x in lines if x.startswith("MARKER")).split()[1]) == t * PS


def test_info_lists_figures(nicscope, tmp_path):
    binary, _ = nicscope
    out, r = run(binary, tmp_path, "info")
    assert r["figure_comparators"] == 2 and r["tracks"] == 2
    assert {"level.tx_fifo", "bd.raw_dma.total", "ev.mmio_rd"} <= set(r["figures"])
    assert "figures (2 trigger comparators" in out


@pytest.mark.parametrize("args,msg", [
    (["--trigger-figure", "bd.nope.total>1"], "no figure 'bd.nope.total'"),
    (["--trigger-figure", "level.tx_fifo>1us"], "a level's value has no unit"),
    (["--trigger-figure", "bd.raw_dma.total=5"], "figure>value or figure<value"),
    (["--trigger-figure", "bd.raw_dma.total>x"], "is not a number"),
    (["--trigger-figure", "level.rd_tags>1", "--trigger-figure", "level.nic_rd>1",
      "--trigger-figure", "level.tx_fifo>1"], "at most 2"),
    (["--trigger", "fig1", "--trigger-figure", "level.rd_tags>1"], "figN needs N"),
    (["--track", "nope"], "no such level"),
    (["--track", "none", "--track", "rd_tags"], "--track none and --track LEVEL"),
    (["--stream", "--track", "rd_tags"], "--stream takes every change"),
])
def test_trigger_figure_bad_input(nicscope, tmp_path, args, msg):
    binary, _ = nicscope
    out, _ = run(binary, tmp_path, "capture", *args, expect=2)
    assert msg in out
