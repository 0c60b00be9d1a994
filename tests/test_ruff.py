# SPDX-License-Identifier: BSD-2-Clause
#
# test_ruff.py: the Python lint (`make lint`'s ruff half, pyproject.toml's rules) in make test,
# so a line too long or an unused import fails the suite, not only `make lint`.

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_clean():
    ruff = Path(sys.executable).parent / "ruff"
    r = subprocess.run([str(ruff), "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
