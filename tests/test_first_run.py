# SPDX-License-Identifier: BSD-2-Clause
# The first `make` on a machine without Verilator: nothing may ask for Verilator's paths before
# set-up installed it. Set-up is replaced (SETUP=) by a script that installs a `verilator` shim
# into a directory already on PATH, as apt-get does; the Makefile then compiles Verilator's
# runtime objects into a throwaway build directory, which must use Verilator's include path.
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REAL_VERILATOR = shutil.which("verilator")


def path_without(tool, mirrors):
    """PATH's directories, each one that holds `tool` replaced by a mirror (symlinks) without
    it."""
    dirs = []
    for d in os.environ["PATH"].split(os.pathsep):
        if d and (Path(d) / tool).exists():
            mirror = mirrors / d.strip("/").replace("/", "_")
            if not mirror.exists():
                mirror.mkdir(parents=True)
                for e in Path(d).iterdir():
                    if not e.name.startswith(tool):
                        (mirror / e.name).symlink_to(e)
            d = str(mirror)
        dirs.append(d)
    return dirs


@pytest.mark.skipif(not REAL_VERILATOR or not shutil.which("g++") or not shutil.which("make"),
                    reason="needs verilator, g++ and make (scripts/setup.sh installs them)")
def test_verilator_runtime_builds_after_setup_installs_verilator(tmp_path):
    vroot = subprocess.run([REAL_VERILATOR, "--getenv", "VERILATOR_ROOT"], capture_output=True,
                           text=True, check=True).stdout.strip()
    installed = tmp_path / "installed"          # on PATH, empty until set-up runs
    installed.mkdir()
    shim = tmp_path / "verilator"
    shim.write_text(f'#!/bin/sh\nexec {REAL_VERILATOR} "$@"\n')
    shim.chmod(0o755)
    setup = tmp_path / "setup.sh"
    setup.write_text(f"#!/bin/sh\necho 'fake setup: installing verilator'\n"
                     f"cp {shim} {installed}/verilator\n")
    setup.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env["PATH"] = os.pathsep.join([str(installed)] + path_without("verilator", tmp_path / "m"))
    assert shutil.which("verilator", path=env["PATH"]) is None
    build = tmp_path / "build"
    obj = build / "vrt" / "verilated.o"
    r = subprocess.run(["make", "-C", str(ROOT), f"BUILD={build}", f"SETUP={setup}", str(obj)],
                       env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert out.index("fake setup: installing verilator") < out.index("g++"), out
    assert f" -I{vroot}/include -I{vroot}/include/vltstd " in out, out
    assert f"-c {vroot}/include/verilated.cpp " in out, out
    assert obj.stat().st_size > 0
