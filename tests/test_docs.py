# SPDX-License-Identifier: BSD-2-Clause
#
# test_docs.py: the manual (docs/, make docs) builds with no Sphinx warning; its generated pages
# keep every line of their sources (the experiments log, the register map, the host-memory
# formats); the README stays one screen that names the two commands and the manual; and the
# paths and make targets the README and the manual's own pages name exist in the tree.

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS))
import gen_pages  # noqa: E402

# The pages written for the manual (the design notes, faults and experiments log are older
# logs that also name paths as they were).
PAGES = sorted(p for p in DOCS.rglob("*.md") if "_generated" not in p.parts
               and p.name not in ("design.md", "faults.md", "experiments.md", "register_map.md"))


@pytest.fixture(scope="module")
def html(tmp_path_factory):
    """The manual built as make docs builds it, into a fresh folder: an incremental build would
    not report again the warnings of pages it does not rebuild."""
    out = tmp_path_factory.mktemp("docs")
    r = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-b", "html",
                        "-d", str(out / "doctrees"), str(DOCS), str(out / "html")],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    log = r.stdout + r.stderr
    assert r.returncode == 0, log[-6000:]
    warnings = [x for x in log.splitlines() if "WARNING" in x or "ERROR" in x]
    assert not warnings, "\n".join(warnings)
    return out / "html"


def test_manual_builds_without_warnings(html):
    for page in ["index", "getting_started", "guide/make", "guide/nicbench", "guide/nicscope",
                 "guide/firmware", "boards", "driver", "driver_uml", "analyzer", "design",
                 "faults", "testing", "register_map", "_generated/formats",
                 "_generated/experiments/index"]:
        assert (html / f"{page}.html").stat().st_size > 0, page


def test_register_map_page_is_the_generated_file(html):
    """Every register of docs/register_map.md (written by litex_soc/regmap.py) is on its page."""
    regs = re.findall(r"^\| (0x[0-9a-f]{4}) \| `(\w+)` \|", (DOCS / "register_map.md").read_text(),
                      re.M)
    assert len(regs) > 100
    page = (html / "register_map.html").read_text()
    missing = [r for r in regs if not re.search(rf"<p>{r[0]}</p></td>\s*<td><p><code[^>]*>"
                                                rf"<span[^>]*>{r[1]}<", page)]
    assert not missing, missing[:10]


def test_experiments_pages_keep_every_line(html):
    text = (DOCS / "experiments.md").read_text()
    intro, days = gen_pages.split_experiments(text)
    assert intro + "".join(e for _d, entries in days for e in entries) == text
    entries = re.findall(r"^## (\d{4}-\d\d-\d\d)", text, re.M)
    assert sum(len(e) for _d, e in days) == len(entries)
    pages = gen_pages.experiments_pages(text)
    for date, day in days:
        page = pages[f"experiments/{date}.md"]
        assert all(e in page for e in day), date
        assert (html / "_generated" / "experiments" / f"{date}.html").exists(), date
    assert [d for d, _e in days] == sorted({d for d in entries}, reverse=True)


def test_formats_page_has_every_field():
    from rtl.contract import formats
    page = gen_pages.formats_page()
    for key, (layout, _doc, _fields) in formats.FORMATS.items():
        assert f"## `{key}`" in page
        for name, f in layout:
            assert f"| {f.offset + f.width - 1}:{f.offset} | `{name}` |" in page, (key, name)
    for key, (enum, _doc, _members) in formats.ENUMS.items():
        for m in enum:
            assert f"| {int(m):#x} | `{m.name}` |" in page, (key, m.name)


def test_readme_is_one_screen_with_the_two_commands():
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) < 120, len(lines)
    head = "\n".join(lines[:5])
    assert re.search(r"^ +make bench ", head, re.M) and re.search(r"^ +make test ", head, re.M)
    text = "\n".join(lines)
    assert "make docs" in text and "build/docs/html/" in text


SOURCE_PATH = re.compile(r"`((?:rtl|litex_soc|sw|docs|scripts|bench|tests|firmware|cocotb_tests|"
                         r"constraints|LICENSES)/[\w./+-]*|LICENSE|Makefile|requirements"
                         r"(?:-fpga)?\.txt|pyproject\.toml)`")


def make_targets():
    text = (ROOT / "Makefile").read_text()
    return set(re.findall(r"^([a-z][\w-]*):", text, re.M))


@pytest.mark.parametrize("page", [ROOT / "README.md"] + PAGES,
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_named_paths_and_targets_exist(page):
    text = page.read_text()
    missing = [p for p in SOURCE_PATH.findall(text) if not (ROOT / p.rstrip("/")).exists()]
    assert not missing, f"{page.relative_to(ROOT)} names paths not in the tree: {missing}"
    targets = make_targets()
    named = re.findall(r"(?:`|^ +)make ([a-z][\w-]*)", text, re.M)
    assert named or page.name in ("index.md", "driver_uml.md")
    unknown = sorted(set(named) - targets)
    assert not unknown, f"{page.relative_to(ROOT)} names make targets not in the Makefile: " \
        f"{unknown}"
