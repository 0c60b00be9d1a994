# SPDX-License-Identifier: BSD-2-Clause
# The Linux driver's kernel style: scripts/checkpatch.pl of Debian's linux-source-6.1 (the
# tarball scripts/setup.sh installs for the UML guest) run with --strict over every C source and
# header of sw/kernel/ and of the shared datapath core sw/core/ (compiled into the module, and
# into sw/lib and the firmware through nic_core_osdep.h), as a reviewer on netdev would; any
# ERROR, WARNING or CHECK fails.
# checkpatch.pl and the two data files it reads (spelling.txt, const_structs.checkpatch) are
# unpacked once into build/checkpatch/<tarball name>/; without the tarball (or perl) the test
# skips and says so. --no-tree: the checks that need a kernel tree (MAINTAINERS, Kconfig) do not
# apply to an out-of-tree module.
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
SCRIPTS = ("checkpatch.pl", "spelling.txt", "const_structs.checkpatch")


def checkpatch():
    """checkpatch.pl unpacked from TARBALL (cached), or skip the test."""
    if not TARBALL.exists():
        pytest.skip(f"{TARBALL} absent (Debian's linux-source-6.1, scripts/setup.sh): "
                    "checkpatch not run")
    if shutil.which("perl") is None:
        pytest.skip("perl not installed: checkpatch not run")
    top = TARBALL.name.removesuffix(".tar.xz")
    dest = ROOT / "build" / "checkpatch" / top
    script = dest / top / "scripts" / "checkpatch.pl"
    if not all((script.parent / s).exists() for s in SCRIPTS):
        dest.mkdir(parents=True, exist_ok=True)
        subprocess.run(["tar", "-xJf", str(TARBALL), "-C", str(dest)] +
                       [f"{top}/scripts/{s}" for s in SCRIPTS], check=True, timeout=600)
    return script


@pytest.mark.parametrize("folder", ["sw/kernel", "sw/core"])
def test_checkpatch_strict(folder):
    script = checkpatch()
    files = sorted(str(p.relative_to(ROOT)) for p in (ROOT / folder).iterdir()
                   if p.suffix in (".c", ".h"))
    assert files
    r = subprocess.run(["perl", str(script), "--no-tree", "--strict", "--show-types",
                        "-f"] + files, cwd=ROOT, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    found = [ln for ln in out.splitlines() if re.search(r": (ERROR|WARNING|CHECK):", ln)]
    totals = re.findall(r"total: (\d+) errors, (\d+) warnings, (\d+) checks", out)
    errors, warnings, checks = (sum(int(t[i]) for t in totals) for i in range(3))
    print(f"checkpatch --strict on {len(files)} files of {folder}/: {errors} errors, "
          f"{warnings} warnings, {checks} checks")
    assert len(totals) == len(files), f"checkpatch did not check every file:\n{out}"
    assert not found and errors + warnings + checks == 0, (
        f"{folder}: {errors} errors, {warnings} warnings, {checks} checks\n" +
        ("\n".join(found) or out))
