# SPDX-License-Identifier: BSD-2-Clause
# section.py: one seed's part of the report, and the markdown helpers the experiments share.
#
# Interfaces: Section(seed, title, mapping, verdicts, body, plots, csv); table(headers, rows)
# -> markdown; cell(v) -> a table cell (floats to 4 significant digits below 1000, whole above,
# None -> n/a).

import dataclasses
import math


@dataclasses.dataclass
class Section:
    seed: str                 # "000".."004", or a name for sections without a paper
    title: str
    mapping: str              # one sentence: what our experiment stands for in theirs
    verdicts: list            # lines computed from the data
    body: str                 # markdown: the paper's numbers beside ours
    plots: list               # [png, svg] paths per plot
    csv: dict                 # name -> list of row dicts (our table as CSV)


def cell(v):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        if not math.isfinite(v):
            return "n/a"
        # Never e-notation above 1: a paper's 17066 kB/s stays 17066, as published.
        return f"{v:.0f}" if abs(v) >= 1000 else f"{v:.4g}"
    return str(v)


def table(headers, rows):
    out = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    out += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows]
    return "\n".join(out) + "\n"
