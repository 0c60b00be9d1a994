# SPDX-License-Identifier: BSD-2-Clause
# The host code serves every build: no C file in sw/ takes a register address, an interrupt
# number or a configuration from a build's generated headers (csr.h, soc.h, soc_bus.h) or tests
# a build at compile time; the hardware binaries (vfio backend only, no simulator) build and
# say clearly that they lack the sim backend.
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def c_files():
    return [p for p in (ROOT / "sw").rglob("*") if p.suffix in (".c", ".h", ".cpp")]


def test_no_build_headers_or_build_conditionals():
    """As `grep -rn "NIC_HAS_DATAPATH\\|#if.*NIC_" sw/` would say, and no build header."""
    bad = []
    for p in c_files():
        for n, line in enumerate(p.read_text().splitlines(), 1):
            if re.search(r'#\s*include\s*"(csr|soc|soc_bus|mem)\.h"', line) or \
                    re.search(r"#if.*NIC_|NIC_HAS_DATAPATH|\bCSR_[A-Z0-9_]+_ADDR\b", line):
                bad.append(f"{p.relative_to(ROOT)}:{n}: {line.strip()}")
    assert not bad, "\n".join(bad)


def test_hardware_binaries(tmp_path):
    subprocess.run(["make", "-s", "tools"], cwd=ROOT, check=True)
    for tool in ("nicbench", "nicscope"):
        exe = ROOT / "build" / "host" / tool
        r = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "usage" in (r.stdout + r.stderr).lower()
        r = subprocess.run([str(exe), "--backend", "sim", "info"], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode != 0 and "built without the sim backend" in r.stdout + r.stderr
