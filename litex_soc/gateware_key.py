# SPDX-License-Identifier: BSD-2-Clause
#
# gateware_key.py: one digest of the gateware's sources, the key a measurement of it (a cost
# run's resources and Fmax) is current for.
#
# What it hashes: every Python file under rtl/ and litex_soc/ but tests, the proofs' harnesses
# (rtl/formal/) and the measuring tools (litex_soc/cost/, litex_soc/timing/,
# litex_soc/nicscope/analyzer_cost.py, this file), the LitePCIe patches, and the pinned
# requirements (LiteX's versions): path and contents, in path order.
#
# Interfaces: gateware_key(root) -> 64 hex digits; gateware_files(root) -> the files, sorted.
# Usage: python -m litex_soc.gateware_key (prints the key of this tree).

import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOT_GATEWARE = ("rtl/formal/", "litex_soc/cost/", "litex_soc/timing/",
                "litex_soc/nicscope/analyzer_cost.py", "litex_soc/gateware_key.py")


def gateware_files(root=ROOT):
    root = Path(root)
    files = [p for d in ("rtl", "litex_soc") for p in (root / d).rglob("*.py")
             if not p.name.startswith("test_")]
    files += list((root / "litex_soc" / "patches").rglob("*.patch"))
    files += [root / "requirements.txt", root / "requirements-fpga.txt"]
    rel = sorted(p.relative_to(root).as_posix() for p in files if p.is_file())
    return [r for r in rel if not r.startswith(NOT_GATEWARE)]


def gateware_key(root=ROOT):
    h = hashlib.sha256()
    for rel in gateware_files(root):
        data = (Path(root) / rel).read_bytes()
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)
    return h.hexdigest()


if __name__ == "__main__":
    print(gateware_key(sys.argv[1] if len(sys.argv) > 1 else ROOT))
