# SPDX-License-Identifier: BSD-2-Clause
#
# sim_build.py: the Verilated SoC and its host tools for the full-system tests
# (litex_soc/targets/test_sim.py, sw/nicscope/test_nicscope*.py): build(width, eth, scope) runs
# `make sim` for that configuration under a lock (pytest-xdist workers build each one once) and
# returns its nicbench; WIDTHS are the PHY widths the tests cover; ROOT the repository.
# Not a test module, so that the tests share it without importing one another.

import fcntl
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WIDTHS = [64, 128]


def build(width, eth=1, scope=True):
    """Build (or find up to date) build/sim_dw<W>/nicbench, or a soak configuration's
    (the Makefile's ETH and SCOPE: build/sim_dw<W>_eth<K>_noscope/); a lock keeps xdist
    workers apart."""
    name = f"sim_dw{width}" + (f"_eth{eth}" if eth != 1 else "") + ("" if scope else "_noscope")
    lock = ROOT / "build" / f".{name}.lock"
    lock.parent.mkdir(exist_ok=True)
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "sim", f"W={width}", f"ETH={eth}",
                        f"SCOPE={1 if scope else 0}"], cwd=ROOT, check=True)
    return ROOT / "build" / name / "nicbench"
