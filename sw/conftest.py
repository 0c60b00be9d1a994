# SPDX-License-Identifier: BSD-2-Clause
# Shared pytest pieces of the tool tests (sw/nicbench/test_nicbench_tx.py, test_nicbench_rr.py):
# the `nicbench` fixture (the 128-bit simulator's nicbench, built by `make test` or `make sim`),
# `soak_nicbench` (the soak's build) and nic_run(), which runs one with --json and returns
# (output, JSON document). In sw/ so that every tool folder's tests get it.
import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NIC_BINARY = ROOT / "build" / "sim_dw128" / "nicbench"
# The soak's build (the Makefile's SOAK_ETH=8 SOAK_SCOPE=0: an 8 Gb/s wire, no analyzer).
SOAK_BINARY = ROOT / "build" / "sim_dw128_eth8_noscope" / "nicbench"


def built(binary, make):
    if not binary.exists():
        pytest.fail(f"{binary.relative_to(ROOT)} is missing: build the simulator with `{make}` "
                    "(`make test` builds it before pytest)")
    return binary


@pytest.fixture(scope="module")
def nicbench():
    return built(NIC_BINARY, "make sim")


@pytest.fixture(scope="module")
def soak_nicbench():
    return built(SOAK_BINARY, "make sim ETH=8 SCOPE=0")


def nic_run(binary, json_path, opts, *args, expect=0, timeout=600):
    """Runs `binary --backend sim --opts opts --json json_path args...`; asserts its exit status
    is `expect`; returns (stdout + stderr, the JSON document or None). timeout (wall seconds)
    only guards against a hang."""
    r = subprocess.run([str(binary), "--backend", "sim", "--opts", opts, "--json",
                        str(json_path)] + [str(a) for a in args],
                       capture_output=True, text=True, timeout=timeout)
    out = r.stdout + r.stderr
    assert r.returncode == expect, f"exit {r.returncode}, wanted {expect}:\n{out}"
    doc = json.loads(Path(json_path).read_text()) if Path(json_path).exists() else None
    return out, doc
