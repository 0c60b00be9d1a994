# SPDX-License-Identifier: BSD-2-Clause
# Unit test of the hardware backend (sw/lib/backend_vfio.c) without a board: compiles
# test_backend_vfio.c with it (gcc, -Wall -Wextra -Werror, as the project builds host code) and
# runs it against a directory laid out like sysfs (the backend's root= option): config-space
# handling (Command register set on open, Bus Master Enable cleared on close, MPS/MRRS and link
# speed/width from the PCIe capability), BAR0 reads and writes through resource0 and their
# bounds, and the messages of the VFIO fallbacks and refusals. Then the hardware nicbench
# (build/host/nicbench, `make tools`) against the same layout: `info` reads BAR0 through the
# backend and names the MAGIC it found.
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
INCLUDE = HERE.parent / "include"
CORE = HERE.parent / "core"

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")


def test_backend_vfio(tmp_path):
    exe = tmp_path / "test_backend_vfio"
    build = subprocess.run(
        ["gcc", "-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HERE}", f"-I{INCLUDE}",
         f"-I{CORE}", str(HERE / "test_backend_vfio.c"), str(HERE / "backend_vfio.c"),
         str(HERE / "nic_rb.c"), str(CORE / "nic_core.c"), "-o", str(exe)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    root = tmp_path / "root"
    root.mkdir()
    run = subprocess.run([str(exe), str(root)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == "ok"


def test_nicbench_vfio_reads_bar0(tmp_path):
    """nicbench --backend vfio against a sysfs-like directory whose BAR0 holds no NIC: the tool
    opens it, reads the identification block's MAGIC through the mmap'd resource0 and refuses
    the device with the value it read."""
    subprocess.run(["make", "-s", "tools"], cwd=ROOT, check=True)
    dev = tmp_path / "sys/bus/pci/devices/0000:03:00.0"
    dev.mkdir(parents=True)
    cfg = bytearray(4096)
    struct.pack_into("<HHH", cfg, 0, 0x10EE, 0x7024, 0)
    (dev / "config").write_bytes(bytes(cfg))
    (dev / "resource0").write_bytes(struct.pack("<I", 0x12345678) + bytes((1 << 20) - 4))
    r = subprocess.run([str(ROOT / "build/host/nicbench"), "--backend", "vfio", "--opts",
                        f"dev=03:00.0,mode=sysfs,root={tmp_path}", "info"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert "MAGIC (BAR0 0x0000) reads 0x12345678" in r.stderr, r.stdout + r.stderr
    # Command register: Memory Space and Bus Master Enable were set, Bus Master cleared on exit.
    assert struct.unpack_from("<H", (dev / "config").read_bytes(), 4)[0] == 0x0002
