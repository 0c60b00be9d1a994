# SPDX-License-Identifier: BSD-2-Clause
#
# nicscope_run.py: running nicscope on the Verilated SoC and reading what it writes, for the
# full-system tests of the analyzer (sw/nicscope/test_nicscope*.py): run(binary, tmp_path, *args,
# opts, expect) -> (output, the JSON document's result); layout() (the sample's signals by
# probe); read_vcd(path) -> ({signal: [(time, value)]}, last time); read_log(path) (the
# simulator's sample log); value_at(changes, t); check_trace(binary, tmp_path, cap, log) (a
# capture's VCD against the simulator's log, cycle for cycle). OPTS: the link the tests run
# (MPS, MRRS). Not a test module, so that the tests share it without importing one another.

import json
import subprocess

from vcd.reader import TokenKind, tokenize

MPS, MRRS = 256, 512
OPTS = f"gen=2,lanes=4,mps={MPS},mrrs={MRRS}"


def run(binary, tmp_path, *args, opts=OPTS, expect=0):
    js = tmp_path / "out.json"
    r = subprocess.run([str(binary), "--opts", opts, "--json", str(js)] + list(args),
                       capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode == expect, f"exit {r.returncode}, wanted {expect}:\n{out}"
    doc = json.loads(js.read_text()) if js.exists() else None
    if doc is not None:
        assert doc["tool"] == "nicscope" and doc["params"]["mps"] == MPS
    return out, (doc["result"] if doc else None)


def layout(binary, tmp_path):
    _, info = run(binary, tmp_path, "info")
    probes = {}
    for s in info["signals"]:
        probes.setdefault(s["probe"], []).append(s)
    return info, probes


def read_vcd(path):
    """{full signal name: [(time, value)]} with string values kept as str."""
    names, scope, t, changes = {}, [], 0, {}
    with open(path, "rb") as f:
        for tok in tokenize(f):
            if tok.kind is TokenKind.SCOPE:
                scope.append(tok.data.ident)
            elif tok.kind is TokenKind.UPSCOPE:
                scope.pop()
            elif tok.kind is TokenKind.VAR:
                names[tok.data.id_code] = ".".join(scope + [tok.data.reference])
            elif tok.kind is TokenKind.CHANGE_TIME:
                t = tok.data
            elif tok.kind in (TokenKind.CHANGE_SCALAR, TokenKind.CHANGE_VECTOR,
                              TokenKind.CHANGE_STRING):
                v = tok.data.value
                if tok.kind is TokenKind.CHANGE_SCALAR:
                    v = int(v)
                changes.setdefault(names[tok.data.id_code], []).append((t, v))
    return changes, t


def read_log(path):
    out = []
    for line in open(path):
        cycle, *words = line.split()
        out.append((int(cycle), sum(int(w, 16) << (32 * i) for i, w in enumerate(words))))
    return out


def value_at(changes, t):
    v = None
    for tc, x in changes:
        if tc > t:
            break
        v = x
    return v


def bits(sample, s):
    return (sample >> s["offset"]) & ((1 << s["width"]) - 1)


def check_trace(binary, tmp_path, cap, log, ps=8000):
    info, probes = layout(binary, tmp_path)
    changes, last_t = read_vcd(cap["vcd"])
    first, end = cap["first_cycle"], cap["end_cycle"]
    assert last_t == end * ps, "the VCD ends where the capture's window ends"
    ref = [(c, s) for c, s in log]
    compared = 0
    for probe, sigs in probes.items():
        group = {"pcie_rx": "pcie", "pcie_tx": "pcie", "csr": "csr", "mac_tx": "mac",
                 "mac_rx": "mac", "nic_rd_req": "nic", "nic_rd_cpl": "nic", "nic_wr": "nic",
                 "msi": "msi"}.get(probe, "dma")
        for s in sigs:
            name = f"nic.{group}.{probe}.{s['signal']}"
            vc = changes[name]
            # Walk both run-length lists over every cycle of the window.
            i = j = 0
            vcd_v = ref_v = None
            for cycle in range(first, end):
                while i < len(vc) and vc[i][0] <= cycle * ps:
                    vcd_v = vc[i][1]
                    i += 1
                while j < len(ref) and ref[j][0] <= cycle:
                    ref_v = bits(ref[j][1], s)
                    j += 1
                assert vcd_v == ref_v, f"{name} at cycle {cycle}: VCD {vcd_v}, simulator {ref_v}"
                compared += 1
    assert compared == (end - first) * len(info["signals"])
    trig = changes["nic.analyzer.trigger"]
    if cap["triggered"]:
        assert value_at(trig, cap["trigger_cycle"] * ps) == 1
        assert value_at(trig, (cap["trigger_cycle"] + 1) * ps) == 0
        assert value_at(trig, (cap["trigger_cycle"] - 1) * ps) in (0, None)
    return probes
