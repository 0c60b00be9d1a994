# SPDX-License-Identifier: BSD-2-Clause
# The report's table cells: figures as a reader checks them against the paper, never in
# e-notation above 1.
import math

from bench.section import cell, table


def test_cells():
    assert cell(17066.0) == "17066"          # seed 001's kB/s, as published
    assert cell(123456.7) == "123457"
    assert cell(1234.4) == "1234"
    assert cell(999.94) == "999.9"
    assert cell(0.5843) == "0.5843"
    assert cell(6.42) == "6.42"
    assert cell(17066) == "17066"
    assert cell(None) == "n/a" and cell(math.nan) == "n/a" and cell(math.inf) == "n/a"
    assert "e+" not in table(["a"], [[17066.0], [250000.0]])
