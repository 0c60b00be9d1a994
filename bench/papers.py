# SPDX-License-Identifier: BSD-2-Clause
# papers.py: the seed papers' tables, read from the CSVs vendored in bench/papers/ (see its
# README for which table of which paper each file is).
#
# Interfaces: table(name) -> list of dict rows (strings as printed); num(cell) -> float or None
# (a range "lo-hi" gives its midpoint; an empty cell None); value(name, quantity) -> the `value`
# of a *_text_figures.csv row.

import csv
from pathlib import Path

DIR = Path(__file__).parent / "papers"


def table(name):
    with open(DIR / f"{name}.csv", newline="") as f:
        return list(csv.DictReader(f))


def num(cell):
    cell = (cell or "").strip()
    if not cell:
        return None
    if "-" in cell[1:]:
        lo, hi = cell.split("-", 1)
        return (float(lo) + float(hi)) / 2
    return float(cell)


def value(name, quantity):
    for row in table(name):
        if row["quantity"] == quantity:
            return num(row["value"])
    raise KeyError(f"{name}.csv has no quantity {quantity!r}")
