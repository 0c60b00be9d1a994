# SPDX-License-Identifier: BSD-2-Clause
# The import structure of the Python sources, read with ast (no module is imported): no test
# module (test_*.py) and no cocotb testbench (tb_*.py) imports a test module, since what tests
# share lives in non-test modules (the models and stimulus in nicmodels/); and no top-level
# package (rtl/, litex_soc/, nicmodels/, cocotb_tests/, ...) has an import cycle among its
# modules, counting imports inside functions too (a lazy import hides a loop, it does not remove
# it). Issue 40.
import ast
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {"build", "results", "node_modules", "__pycache__"}


def sources(root=ROOT):
    """{module name: path} of every .py file under root, hidden folders and build output
    left out."""
    mods = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith(".") and x not in SKIP_DIRS)
        for f in files:
            if f.endswith(".py"):
                rel = (Path(d) / f).relative_to(root).with_suffix("")
                parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
                mods[".".join(parts)] = Path(d) / f
    return mods


def imports(name, path, mods):
    """[(line, imported name, module it resolves to or None)] of every import statement in
    the file, at any depth. `from p import x` resolves to module p.x if there is one, else to
    p; a relative import is resolved against the file's package."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []

    def resolve(n):
        while n and n not in mods:
            n = n.rpartition(".")[0]
        return n or None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name, resolve(a.name)) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(p for p in up + base.split(".") if p)
            for a in node.names:
                full = f"{base}.{a.name}" if base else a.name
                target = full if full in mods else resolve(base)
                found.append((node.lineno, full if full in mods else base, target))
    return found


def graph(mods):
    return {name: {t for _, _, t in imports(name, path, mods) if t and t != name}
            for name, path in mods.items()}


def cycles(graph, nodes):
    """The import cycles among `nodes`: one shortest loop of each strongly connected component
    of more than one module (Tarjan's algorithm, iterative)."""
    sub = {n: sorted(t for t in graph[n] if t in nodes) for n in sorted(nodes)}
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]
    for start in sub:
        if start in index:
            continue
        work = [(start, iter(sub[start]))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        x = stack.pop()
                        on.discard(x)
                        comp.append(x)
                        if x == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
            elif w not in index:
                index[w] = low[w] = counter[0]
                counter[0] += 1
                stack.append(w)
                on.add(w)
                work.append((w, iter(sub[w])))
            elif w in on:
                low[v] = min(low[v], index[w])
    loops = []
    for comp in comps:
        members = set(comp)
        start = comp[0]
        # Breadth-first from start back to start inside the component: the shortest loop.
        prev, frontier, seen = {}, [start], {start}
        while frontier and start not in prev:
            nxt = []
            for v in frontier:
                for w in sub[v]:
                    if w in members and w == start and start not in prev:
                        prev[start] = v
                    elif w in members and w not in seen:
                        seen.add(w)
                        prev[w] = v
                        nxt.append(w)
            frontier = nxt
        loop, v = [start], prev[start]
        while v != start:
            loop.append(v)
            v = prev[v]
        loops.append(" -> ".join([start] + loop[:0:-1] + [start]))
    return loops


MODS = sources()
GRAPH = graph(MODS)
# Every top-level folder of modules: rtl/ and litex_soc/ (issue 40), nicmodels/ and the rest.
PACKAGES = sorted({n.partition(".")[0] for n in MODS if "." in n})


def is_test(name):
    return name.rpartition(".")[2].startswith("test_")


def test_no_test_module_imports_a_test_module():
    bad = []
    for name, path in sorted(MODS.items()):
        if not path.name.startswith(("test_", "tb_")):
            continue
        for line, imported, target in imports(name, path, MODS):
            if is_test(imported) or (target and is_test(target)):
                text = f"{path.relative_to(ROOT)}:{line}: imports {target or imported}"
                if text not in bad:
                    bad.append(text)
    assert not bad, ("test modules and testbenches import test modules (move what they share "
                     "into a non-test module, e.g. nicmodels/):\n" + "\n".join(bad))


def test_the_packages_are_seen():
    assert {"rtl", "litex_soc", "nicmodels", "cocotb_tests"} <= set(PACKAGES), PACKAGES


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package):
    nodes = {n for n in MODS if n == package or n.startswith(package + ".")}
    loops = cycles(GRAPH, nodes)
    assert not loops, f"import cycles in {package}/:\n" + "\n".join(loops)


def test_the_checks_see_a_cycle_and_a_test_import(tmp_path):
    """The walker itself: a relative, a lazy and a from-import loop are found, and a test
    module importing another is resolved to it."""
    pkg = tmp_path / "p"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from p.c import g\n")
    (pkg / "c.py").write_text("import p.a\n")
    (pkg / "test_x.py").write_text("from p import test_y\n")
    (pkg / "test_y.py").write_text("")
    mods = sources(tmp_path)
    assert cycles(graph(mods), set(mods)) == ["p.a -> p.b -> p.c -> p.a"]
    assert [t for _, _, t in imports("p.test_x", pkg / "test_x.py", mods)] == ["p.test_y"]
