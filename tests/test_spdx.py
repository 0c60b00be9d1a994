# SPDX-License-Identifier: BSD-2-Clause
#
# test_spdx.py: every source file in git carries an SPDX licence tag in its first lines, and
# the licence texts it names are in the tree (LICENSE: BSD-2-Clause; LICENSES/GPL-2.0 for the
# kernel module and the core it shares).

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Sources by name: code, build files, scripts, linker scripts, lint waivers, configuration.
SOURCE = re.compile(r"(\.(py|c|h|cpp|S|ld|sh|vlt|toml)|(^|/)(Makefile|Kbuild)|^\.ci/run)$")
# Their text keys the cached UML kernel build (sw/uml/build_kernel.sh): a tag would rebuild it.
EXEMPT = {"sw/uml/build_kernel.sh"}
TAG = re.compile(r"SPDX-License-Identifier: (.+?)(\s*\*/)?$")
TEXTS = {"BSD-2-Clause": ("LICENSE", "Redistribution and use in source and binary forms"),
         "GPL-2.0": ("LICENSES/GPL-2.0", "GNU GENERAL PUBLIC LICENSE")}


def sources():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout.split()
    return [f for f in out if SOURCE.search(f) and f not in EXEMPT and (ROOT / f).exists()]


def tag_of(path):
    for line in (ROOT / path).read_text(errors="replace").splitlines()[:3]:
        m = TAG.search(line)
        if m:
            return m.group(1)
    return None


def test_every_source_has_a_tag():
    files = sources()
    assert len(files) > 300
    missing = [f for f in files if tag_of(f) is None]
    assert not missing, f"no SPDX-License-Identifier in the first 3 lines: {missing}"


def test_named_licences_are_in_the_tree():
    named = set()
    for f in sources():
        named |= set(re.split(r"\s+(?:OR|AND)\s+", tag_of(f) or ""))
    named.discard("")
    assert named <= set(TEXTS), f"licences without their text in the tree: {named - set(TEXTS)}"
    for lic in named:
        path, words = TEXTS[lic]
        assert words in (ROOT / path).read_text(), (lic, path)


def test_the_kernel_module_is_gpl():
    for f in sources():
        if f.startswith(("sw/kernel/", "sw/core/")) and f.endswith((".c", ".h")):
            assert "GPL-2.0" in (tag_of(f) or ""), f
