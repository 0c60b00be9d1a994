# SPDX-License-Identifier: BSD-2-Clause
#
# probe_taps.py: the bus analyzer's tap registers: a probed expression's value some cycles later,
# taken at the watched design's registers, with all logic behind the taps.
#
# What it is: `registered(expr)` gives expr's value `tap_stages` cycles later, built on tap
# registers (tap_stages in a row per signal, each signal once however many expressions read it),
# so the watched design sees one flip-flop load per tapped signal and no logic. With
# watch(design) the taps sit at the design's registers (ProbeTaps' docstring).
#
# Interface: delay_line(module, sig, n) -> n registers after sig, in module (the taps' and the
# analyzer's strobe delays). ProbeTaps(tap_stages, depth=3, max_bits=64) (a Migen module: add it
# as a submodule); watch(design, skip=()); registered(expr) -> expression, to be called once the
# design's statements are all known (from the owner's do_finalize: watch() finalizes the
# design's other submodules, all but `skip`, to see them).
# Parameters: tap_stages (>= 1), depth (statement levels followed back), max_bits (the most a
# copied statement group may read).

from migen import Case, If, Module, Signal
from migen.fhdl.structure import _Assign
from migen.fhdl.tools import list_inputs, list_signals, list_targets
from migen.fhdl.visit import NodeTransformer


class _Substitute(NodeTransformer):
    """Rebuilds an expression or statement with the signals in `by` (id -> node) replaced."""

    def __init__(self, by):
        self.by = by

    def visit_Signal(self, node):
        return self.by.get(id(node), node)


def _signals(found):
    """Signals in creation order (Migen lists them as sets), so the Verilog is the same each run."""
    return sorted(found, key=lambda s: s.duid)


def _slice(stmts, sig):
    """The part of a list of statements that assigns sig: its assignments, under the If/Case
    conditions they sit in; every other assignment dropped. (A Case keeps all its choices, so
    that one left empty does not fall into its default.)"""
    out = []
    for st in stmts:
        if isinstance(st, list):
            out += _slice(st, sig)
        elif isinstance(st, _Assign):
            if any(t is sig for t in list_targets(st)):
                out.append(st)
        elif isinstance(st, If):
            t, f = _slice(st.t, sig), _slice(st.f, sig)
            if t or f:
                kept = If(st.cond, *t)
                kept.f = f
                out.append(kept)
        elif isinstance(st, Case):
            cases = {k: _slice(v, sig) for k, v in st.cases.items()}
            if any(cases.values()):
                out.append(Case(st.test, cases))
    return out


def delay_line(module, sig, n):
    """n registers after sig in module (named analyzer_tap): the list of them, first to last."""
    regs, src = [], sig
    for _ in range(n):
        reg = Signal(len(sig), name="analyzer_tap")
        module.sync += reg.eq(src)
        regs.append(reg)
        src = reg
    return regs


class ProbeTaps(Module):
    """Tap registers for the analyzer's probes, at the watched design's registers.

    More than one stage, as a vendor logic analyzer's "input pipe stages", lets the placer keep
    the first register by the watched logic and the analyzer where it fits.

    With watch(design), the taps sit at the design's registers: a one-bit signal the design
    computes combinationally (a handshake, a first/last flag) is followed back through the
    statements that assign it, up to `depth` levels, each statement group reading at most
    `max_bits`; the signals those statements read are tapped (or followed in turn), and the
    statements are copied behind the taps. A tap on the computed signal itself would make it a
    LUT output that the design's own logic is then mapped through: LitePCIe's DMA writer
    computes its port's first/last as comparisons of its registers, its crossbar the ports'
    handshakes from the arbiter's grant, and both use them themselves. Data fields (wider than
    one bit: multiplexed, not decoded, and stored downstream as they are) are tapped where they
    are.
    """

    def __init__(self, tap_stages, depth=3, max_bits=64):
        if tap_stages < 1:
            raise ValueError(f"ProbeTaps: tap_stages={tap_stages}, at least 1")
        self.tap_stages, self.depth, self.max_bits = tap_stages, depth, max_bits
        self.taps = {}          # id(design signal) -> its last tap register
        self.copies = {}        # id(design signal) -> its copy behind the taps
        self._watched = None    # (design, skip), not a submodule
        self._drivers = None
        self._reach = {}        # (id(signal), depth) -> _at_registers

    def watch(self, design, skip=()):
        self._watched = (design, skip)

    def tap(self, sig):
        """sig tap_stages cycles later: the last of its tap registers (made once per signal)."""
        if id(sig) not in self.taps:
            self.taps[id(sig)] = delay_line(self, sig, self.tap_stages)[-1]
        return self.taps[id(sig)]

    def registered(self, expr):
        """expr's value tap_stages cycles later, all of its logic behind the tap registers."""
        if isinstance(expr, int):
            return expr
        return _Substitute({id(s): self._rebuilt(s, self.depth)
                            for s in _signals(list_signals(expr))}).visit(expr)

    def _part(self, sig):
        """The statements that assign sig, cut down to sig's assignments (_slice), and the
        signals they read; None where sig cannot be copied that way: it is wider than one bit
        (a data field: multiplexed, not decoded, stored downstream as it is), the part reads
        more than max_bits, reads something the statements assign (a value set and used in
        one block, seen there before the block ends), or assigns sig together with something
        else (Cat(sig, x).eq(...))."""
        stmts = self._comb_drivers().get(id(sig))
        if stmts is None or len(sig) > 1:
            return None
        part = _slice(stmts, sig)
        reads = _signals(list_inputs(part))
        targets = {id(t) for t in list_targets(stmts)}
        if sum(len(r) for r in reads) > self.max_bits or any(id(r) in targets for r in reads) \
                or any(t is not sig for t in list_targets(part)):
            return None
        return part, reads

    def _at_registers(self, sig, depth, busy=()):
        """Whether sig can be computed from registers (and inputs) through at most `depth`
        levels of copyable parts: then, and only then, it is copied rather than tapped, so a
        copy never trades one tap on computed logic for several further in."""
        if id(sig) not in self._comb_drivers():
            return True
        if (id(sig), depth) in self._reach:
            return self._reach[(id(sig), depth)]
        found = self._part(sig) if depth > 0 and id(sig) not in busy else None
        ok = found is not None and all(self._at_registers(r, depth - 1, (*busy, id(sig)))
                                       for r in found[1])
        if not busy:
            self._reach[(id(sig), depth)] = ok
        return ok

    def _rebuilt(self, sig, depth):
        if id(sig) not in self._comb_drivers() or not self._at_registers(sig, depth):
            return self.tap(sig)
        if id(sig) not in self.copies:
            part, reads = self._part(sig)
            by = {id(r): self._rebuilt(r, depth - 1) for r in reads}
            copy = Signal(len(sig), name="analyzer_rebuilt", reset=sig.reset)
            by[id(sig)] = copy
            self.comb += [_Substitute(by).visit(st) for st in part]
            self.copies[id(sig)] = copy
        return self.copies[id(sig)]

    def _comb_drivers(self):
        """id(signal) -> the combinational statements that assign it (in order), for the
        watched design's signals no synchronous statement assigns (empty without watch())."""
        if self._drivers is not None:
            return self._drivers
        self._drivers = {}
        if self._watched is None:
            return self._drivers
        design, skip = self._watched
        # A finalized module's fragment holds all its statements (its submodules', its FSMs'
        # lowered). LiteX adds the CSR bridge and banks while the SoC is being finalized, after
        # the analyzer's siblings were: those are finalized here (as the SoC would next).
        frags = [design._fragment]
        for _n, m in design._submodules:
            if m is not self and all(m is not s for s in skip):
                m.finalize()
                frags.append(m._fragment)
        comb, sync = {}, set()
        for frag in frags:
            for st in frag.comb:
                for t in list_targets(st):
                    comb.setdefault(id(t), []).append(st)
            for stmts in frag.sync.values():
                sync.update(id(t) for t in list_targets(stmts))
        self._drivers = {k: v for k, v in comb.items() if k not in sync}
        return self._drivers
