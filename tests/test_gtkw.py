# SPDX-License-Identifier: BSD-2-Clause
# scripts/gtkw.py (the save file of `make trace`): GTKWave (under Xvfb) loads it with a small
# trace of the SoC's top-level ports, shows every signal, and opens zoomed to the whole trace,
# not to a few time units at its start. VCD and FST (from vcd2fst), two timescales.
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import gtkw  # noqa: E402

FIRST, LAST, PERIOD = 1_000_000, 9_000_000, 8000      # in the file's time unit


def write_vcd(path, timescale, data_width=128):
    """Every port gtkw.py lists plus the clock, toggling from FIRST to LAST."""
    names = ["TOP.sys_clk"] + [gtkw.signal_name(p, w, data_width)
                               for _, sigs in gtkw.GROUPS for p, _, w in sigs]
    lines = [f"$timescale {timescale} $end", "$scope module TOP $end"]
    ids = []
    for i, name in enumerate(names):
        port, _, rng = name[len("TOP."):].partition("[")
        width = int(rng.split(":")[0]) + 1 if rng else 1
        ids.append((f"v{i}", width))
        lines.append(f"$var wire {width} v{i} {port}{' [' + rng if rng else ''} $end")
    lines += ["$upscope $end", "$enddefinitions $end"]
    for n, t in enumerate(range(FIRST, LAST + 1, PERIOD)):
        lines.append(f"#{t}")
        for ident, width in ids:
            v = n & 1 if ident == "v0" else n % 3 if width > 1 else n >> 1 & 1
            lines.append(f"b{v:b} {ident}" if width > 1 else f"{v}{ident}")
    path.write_text("\n".join(lines) + "\n")
    return names


@pytest.mark.skipif(not shutil.which("xvfb-run") or not shutil.which("gtkwave")
                    or not shutil.which("vcd2fst"),
                    reason="xvfb-run or gtkwave not installed (scripts/setup.sh installs them)")
@pytest.mark.parametrize("fmt", ["vcd", "fst"])
@pytest.mark.parametrize("timescale,scale", [("1ps", 1), ("10ps", 10)])
def test_gtkwave_opens_the_trace_zoomed_to_it(tmp_path, fmt, timescale, scale):
    vcd = tmp_path / "t.vcd"
    names = write_vcd(vcd, timescale)
    trace = vcd
    if fmt == "fst":
        trace = tmp_path / "t.fst"
        subprocess.run(["vcd2fst", str(vcd), str(trace)], check=True, capture_output=True)
    save = tmp_path / "t.gtkw"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "gtkw.py"), str(trace), str(save)],
                   check=True)
    tcl = tmp_path / "q.tcl"
    tcl.write_text('puts "SIGNALS [gtkwave::getDisplayedSignals]"\n'
                   'puts "WINDOW [gtkwave::getWindowStartTime] [gtkwave::getWindowEndTime]"\n'
                   "gtkwave::/File/Quit\n")
    r = subprocess.run(["xvfb-run", "-a", "gtkwave", "-S", str(tcl), str(save)],
                       capture_output=True, text=True, timeout=120)
    lines = r.stdout.splitlines()
    start, end = map(int, next(x for x in lines if x.startswith("WINDOW")).split()[1:])
    first, last = FIRST * scale, LAST * scale
    assert start == first, (start, first)
    assert last <= end <= first + 1.25 * (last - first), (start, end, first, last)
    shown = next(x for x in lines if x.startswith("SIGNALS")).split()[1:]
    assert sorted(shown) == sorted(names)
