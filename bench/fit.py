# SPDX-License-Identifier: BSD-2-Clause
# fit.py: the fits the report's verdicts are computed from.
#
# Interfaces: line(x, y) -> Line(slope, intercept, r2) by least squares (scipy.stats.linregress);
# n_half(line) -> the size at which the fixed cost equals the per-byte cost (Hockney's n1/2:
# throughput is half its asymptote there), the knee of throughput against size.

import dataclasses

from scipy import stats


@dataclasses.dataclass(frozen=True)
class Line:
    slope: float
    intercept: float
    r2: float


def line(x, y):
    r = stats.linregress(list(map(float, x)), list(map(float, y)))
    return Line(float(r.slope), float(r.intercept), float(r.rvalue) ** 2)


def n_half(fit):
    return fit.intercept / fit.slope if fit.slope > 0 else float("inf")
