# SPDX-License-Identifier: BSD-2-Clause
#
# least.py: the least of several unsigned values in one compare's depth (every pair compared
# side by side, the value below all the others selected), for the engines' request sizes
# and the TX queue manager's job count.
#
# Interfaces: least(m, name, width, *vals) -> Signal(width), its comb logic added to module m.

import functools
import operator

from amaranth import Cat, Mux, Signal


def least(m, name, width, *vals):
    """The least of vals (ties to the first): one compare deep, then a one-hot select, not a
    tree of compares and muxes. n values take n(n-1)/2 compares; two are a compare and a mux."""
    vals = list(vals)
    n = len(vals)
    out = Signal(width, name=name)
    if n == 2:
        a, b = vals
        m.d.comb += out.eq(Mux(b < a, b, a))
        return out
    wins = {}
    for i in range(n):
        for j in range(i + 1, n):
            c = Signal(name=f"{name}_le{i}{j}")
            m.d.comb += c.eq(vals[i] <= vals[j])          # vals[i] wins a tie
            wins[i, j], wins[j, i] = c, ~c
    sel = [Cat(wins[i, j] for j in range(n) if j != i).all() for i in range(n)]   # one-hot
    m.d.comb += out.eq(functools.reduce(operator.or_, (Mux(sel[i], vals[i], 0)
                                                       for i in range(n))))
    return out
