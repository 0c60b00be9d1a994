# SPDX-License-Identifier: BSD-2-Clause
#
# gen_pages.py: the manual's generated pages, written by docs/conf.py at every build into
# docs/_generated/ (not in git):
#   experiments/index.md and experiments/<date>.md: docs/experiments.md split at its
#     `## <date>: <title>` entries, one page per date, newest first; nothing is dropped or
#     rewritten (split_experiments() checks that the pieces join back into the file);
#   formats.md: the host-memory formats and their enums from rtl/contract/formats.py, the source
#     nic_contract.h is generated from, so the manual's offsets are the header's.
# A file is rewritten only when its text changed (Sphinx then rebuilds only that page), and a
# page no longer generated (a date gone from the log) is removed.

import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
ENTRY = re.compile(r"^## (\d{4}-\d\d-\d\d)\b")


def split_experiments(text):
    """(intro, [(date, [entry text, ...]), ...]) of the experiments log, dates in the log's
    order (newest first). The intro and the entries joined in order are the text."""
    lines = text.splitlines(keepends=True)
    starts = [i for i, x in enumerate(lines) if ENTRY.match(x)]
    if not starts:
        raise ValueError("docs/experiments.md: no `## <date>: <title>` entry")
    intro = "".join(lines[:starts[0]])
    days = {}
    for a, b in zip(starts, starts[1:] + [len(lines)]):
        days.setdefault(ENTRY.match(lines[a]).group(1), []).append("".join(lines[a:b]))
    pieces = [intro] + [e for _d, entries in days.items() for e in entries]
    # Entries of one date are consecutive in the log: joining by date keeps its order.
    if "".join(pieces) != text:
        raise ValueError("docs/experiments.md: entries of one date are not consecutive")
    return intro, list(days.items())


def experiments_pages(text):
    """{relative path: Markdown} of the experiments' pages."""
    intro, days = split_experiments(text)
    title, _, rest = intro.partition("\n")
    if title != "# Experiments log":
        raise ValueError(f"docs/experiments.md: first line {title!r}, not '# Experiments log'")
    toc = "\n".join(date for date, _e in days)
    pages = {"experiments/index.md": f"{title}\n{rest.rstrip()}\n\nOne page per date, newest "
             f"first, as `docs/experiments.md` has them.\n\n```{{toctree}}\n:maxdepth: 1\n\n"
             f"{toc}\n```\n"}
    for date, entries in days:
        n = len(entries)
        pages[f"experiments/{date}.md"] = (
            f"# {date}\n\n{n} entr{'y' if n == 1 else 'ies'} of `docs/experiments.md`.\n\n"
            + "".join(entries))
    return pages


def _md(s):
    """Prose as one Markdown table cell: `<` and `*` literal, `|` not a column."""
    s = " ".join(s.split())
    for c in "\\|<*":
        s = s.replace(c, "\\" + c)
    return s


def formats_page():
    """The host-memory formats (rtl/contract/formats.py) as Markdown tables."""
    sys.path.insert(0, str(ROOT))
    from rtl.contract import formats
    enum_name = {e: k for k, (e, _d, _m) in formats.ENUMS.items()}
    out = ["# Host-memory formats", "",
           "Generated at build time from `rtl/contract/formats.py`, the one definition the cores,",
           "`sw/include/nic_contract.h` (`python -m rtl.contract.gen_c`) and the driver model",
           f"take them from. Every format is {formats.RECORD_BYTES} bytes, little-endian: bit i",
           "of a record is bit i % 8 of byte i // 8 in host memory; rings step by "
           f"{formats.RECORD_BYTES} bytes.", ""]
    for key, (layout, doc, fields) in formats.FORMATS.items():
        out += [f"## `{key}`", "", _md(doc), "",
                "| byte | bits | field | description |", "|---|---|---|---|"]
        for name, f in layout:
            ref = ""
            if f.shape in enum_name:
                ref = f" ({{ref}}`enum {enum_name[f.shape]} <enum-{enum_name[f.shape]}>`)"
            hi = f.offset + f.width - 1
            first, last = f.offset // 8, hi // 8
            nbytes = f"{first}..{last}" if last > first else f"{first}"
            out.append(f"| {nbytes} | {hi}:{f.offset} | `{name}` | {_md(fields[name])}{ref} |")
        out.append("")
    out += ["## Enums", ""]
    for key, (enum, doc, members) in formats.ENUMS.items():
        out += [f"(enum-{key})=", f"### `{key}`", "", _md(doc), "",
                "| value | name | meaning |", "|---|---|---|"]
        for m in enum:
            out.append(f"| {int(m):#x} | `{m.name}` | {_md(members[m.name])} |")
        out.append("")
    return "\n".join(out)


def all_pages():
    pages = experiments_pages((DOCS / "experiments.md").read_text())
    pages["formats.md"] = formats_page()
    return pages


def write_all(out=DOCS / "_generated"):
    pages = all_pages()
    for rel, text in pages.items():
        path = out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    for path in out.rglob("*.md"):
        if path.relative_to(out).as_posix() not in pages:
            path.unlink()
