# SPDX-License-Identifier: BSD-2-Clause
#
# proof.py: what a formal proof of rtl/formal/ is made of, apart from running it (sby_run.py):
# Proof (a harness and how to check it), peek(core, *names) (a core's internal registers, for
# induction invariants) and implies(a, b). The proof modules (*_proof.py) import this, and
# sby_run.py imports them (proofs()), so neither imports the other both ways.
#
# Parameters (per Proof): mode ("prove": k-induction, a full proof when it converges at depth k;
# "bmc": every trace of `depth` cycles from reset), depth (make test), deep_depth (make formal),
# timeout (seconds).

from dataclasses import dataclass, field

from amaranth.hdl import Fragment, Value


@dataclass
class Proof:
    """One formal check: `harness()` returns the Elaboratable holding the core and its
    properties; `properties` names what its asserts state (for the report)."""
    name: str
    harness: object
    mode: str
    depth: int
    deep_depth: int
    properties: list = field(default_factory=list)
    timeout: int = 600
    script: list = field(default_factory=list)   # Yosys commands after prep



def implies(a, b):
    """a -> b, for properties."""
    return ~Value.cast(a).bool() | Value.cast(b).bool()


def peek(core, *names):
    """Elaborates `core` now and returns (fragment, signals): its internal signals by name (a
    name must be unique in the core's hierarchy). Add the fragment as the harness's submodule in
    place of the core; the harness may then state invariants over the core's registers, which
    k-induction needs."""
    fragment = Fragment.get(core, None)
    found = {}

    def walk(frag):
        for stmts in frag.statements.values():
            for st in stmts:
                for sig in st._lhs_signals() | st._rhs_signals():
                    found.setdefault(sig.name, {})[id(sig)] = sig
        for sub, *_ in frag.subfragments:
            walk(sub)
    walk(fragment)
    out = []
    for name in names:
        sigs = list(found.get(name, {}).values())
        if len(sigs) != 1:
            raise KeyError(f"peek: {len(sigs)} signals named {name!r} in {core!r}")
        out.append(sigs[0])
    return fragment, out
