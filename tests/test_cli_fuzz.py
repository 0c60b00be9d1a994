# SPDX-License-Identifier: BSD-2-Clause
# Command-line fuzz test of the tools (build/sim_dw128/nicbench and nicscope, built by
# `make test`): random malformed argument lists, from a seed printed at the start (set
# CLI_FUZZ_SEED to replay one, CLI_FUZZ_CASES for the count): every command of both tools with
# options taken from their --help text, given bad numbers, ranges, lists, empty and huge values,
# unknown and repeated options, missing values; bad --opts values for every key of the sim
# model (sw/sim/link_params.h) and backend; unwritable output paths. Each case must end within
# its timeout with exit 0, 1 (a failed measurement, with a FAILED line) or 2 (a usage error, one
# line naming the tool), never by a signal, and leave no output file that is not complete JSON.

import os
import random
import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "sim_dw128"
TOOLS = ("nicbench", "nicscope")
CASES = int(os.environ.get("CLI_FUZZ_CASES", "300"))
TIMEOUT_S = 120

BAD_NUMBERS = ["", "-1", "0", "abc", "1e999", "99999999999999999999", "0x", "0xg1", "1.5.2",
               "nan", "inf", "-0", "4K..1", "1..", "..8", ",", "1,,2", "1,x", "%s%n%x",
               "1" * 300, "\u00e9", " 12", "12 ", "1K1", "9999999999G", "-4096", "2..2M..4"]
BACKEND_KEYS = ["trace", "peer", "pcap", "wire_ns", "dev", "mode"]


def model_keys():
    """Every LinkParams field: the sim backend's --opts keys."""
    text = (ROOT / "sw" / "sim" / "link_params.h").read_text()
    keys = re.findall(r"^\s+(?:int|double|bool|uint\d+_t)\s+(\w+)\s*=", text, re.M)
    assert len(keys) > 15, keys
    return keys


def commands(tool):
    """{command: [its --options]} from the tool's --help text: its COMMANDS section, one
    paragraph per command; LOAD (nicscope) adds the load options to the commands that take it."""
    text = subprocess.run([str(BUILD / tool), "--help"], capture_output=True, text=True,
                          timeout=30).stdout
    out, cur, inside, load = {}, None, False, []
    for line in text.splitlines():
        if re.match(r"^(COMMANDS|commands:)", line):
            inside = True
            continue
        if inside and line and not line.startswith(" "):
            if not line.startswith("LOAD:"):
                break
            inside, cur = "load", load
        if not inside:
            continue
        m = re.match(r"^ {2,4}([a-z]+)(?: |$)", line)
        if m and inside is True:
            cur = out.setdefault(m.group(1), [])
            if "[LOAD]" in line:
                cur.append("LOAD")
        if cur is not None:
            cur += [o for o in re.findall(r"--[a-z][a-z0-9-]*", line) if o not in cur]
    for opts in out.values():
        if "LOAD" in opts:
            opts.remove("LOAD")
            opts += load
    return out


def bad_opts(rng, keys):
    k = rng.choice(keys + BACKEND_KEYS + ["nokey", "", "gen=2=3"])
    return f"{k}={rng.choice(BAD_NUMBERS)}" if rng.random() < 0.9 else k


def case(rng, tool, cmds, keys, tmp):
    """One malformed argument list: bad command options (60 %), or a quick valid command with
    bad --opts or --timeout-ms (25 %), or with an output it cannot write (15 %)."""
    kind = rng.random()
    if kind >= 0.6:
        if kind < 0.85:
            glob = (["--opts", ",".join(bad_opts(rng, keys) for _ in range(rng.randint(1, 3)))]
                    if rng.random() < 0.8 else ["--timeout-ms", rng.choice(BAD_NUMBERS)])
            return [str(BUILD / tool), "--backend", "sim", *glob, "info"], []
        where = Path("/nonexistent") / f"out{rng.randint(0, 9)}"
        pick = rng.choice(["json", "trace", "pcap", "vcd" if tool == "nicscope" else "json"])
        if pick == "json":
            return [str(BUILD / tool), "--backend", "sim", "--json", f"{where}.json", "info"], \
                [where.with_suffix(".json")]
        if pick in ("trace", "pcap"):
            opts = f"{pick}={where}.{'fst' if pick == 'trace' else 'pcapng'}"
            argv = ([str(BUILD / tool), "--backend", "sim", "--opts", opts + ",peer=1", "rr",
                     "--count", "1", "--sizes", "60"] if tool == "nicbench" and pick == "pcap"
                    else [str(BUILD / tool), "--backend", "sim", "--opts", opts, "info"])
            return argv, [Path(opts.split("=", 1)[1])]
        return [str(BUILD / tool), "--backend", "sim", "capture", "--load", "none", "--trigger",
                "always", "--vcd", f"{where}.vcd"], [where.with_suffix(".vcd")]
    args, outputs = [], []
    if rng.random() < 0.3:
        args += ["--opts", ",".join(bad_opts(rng, keys) for _ in range(rng.randint(1, 3)))]
    if rng.random() < 0.3:
        js = rng.choice([tmp / f"{rng.getrandbits(32):08x}.json", Path("/nonexistent/x.json")])
        args += ["--json", str(js)]
        outputs.append(js)
    cmd = rng.choice(sorted(cmds) + ["nocommand", ""])
    args.append(cmd)
    opts = cmds.get(cmd) or ["--frames", "--sizes"]
    for _ in range(rng.randint(1, 3)):
        r = rng.random()
        o = rng.choice(opts)
        if r < 0.6:
            v = rng.choice(BAD_NUMBERS)
            if o in ("--vcd", "--gtkw"):
                v = rng.choice(["/nonexistent/t.out", str(tmp)])
                outputs.append(Path(v))
            args += [o, v]
        elif r < 0.75:
            args.append(o)                           # its value missing
        elif r < 0.9:
            args += ["--no-such-option", rng.choice(BAD_NUMBERS)]
        else:
            args += [o, "1", o, rng.choice(BAD_NUMBERS)]  # repeated, the second bad
    return [str(BUILD / tool), "--backend", "sim", *args], outputs


def run_case(argv, outputs, cwd):
    """Runs one case in cwd (a bad value may be a valid file name, e.g. trace=..8); returns
    what was wrong, or None."""
    t0 = time.monotonic()
    try:
        r = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                           timeout=TIMEOUT_S, cwd=cwd)
    except subprocess.TimeoutExpired:
        return f"hung (> {TIMEOUT_S} s)"
    tool = Path(argv[0]).name
    err = (r.stderr + r.stdout).strip().splitlines()
    if r.returncode < 0:
        return f"killed by signal {-r.returncode}"
    if r.returncode not in (0, 1, 2):
        return f"exit {r.returncode}"
    if r.returncode == 2 and not any(line.startswith(f"{tool}: ") for line in err[:3]):
        return f"usage error without a '{tool}: ...' line: {err[:3]}"
    if r.returncode == 1 and not any("FAIL" in line or line.startswith(f"{tool}")
                                     for line in err):
        return f"failure without a message: {err[-3:]}"
    for p in outputs:
        if p.is_file():
            text = p.read_text(errors="replace")
            if p.suffix == ".json" and not text.rstrip().endswith("}"):
                return f"partial output left: {p}"
            if r.returncode == 2:
                return f"output left after a usage error: {p}"
    if any(str(p).startswith("/nonexistent") for p in outputs) and r.returncode != 2:
        return f"an unwritable output gave exit {r.returncode}, not 2: {err[-2:]}"
    return None if time.monotonic() - t0 < TIMEOUT_S else "slow"


def test_cli_fuzz(tmp_path, record_property):
    for t in TOOLS:
        if not (BUILD / t).exists():
            pytest.fail(f"{BUILD / t} is missing: `make sim` (make test builds it)")
    seed = int(os.environ.get("CLI_FUZZ_SEED", str(random.SystemRandom().getrandbits(32))))
    # Shown in the session's summary (the root conftest.py), with xdist too.
    record_property("summary", f"cli fuzz: seed {seed} (CLI_FUZZ_SEED), {CASES} cases "
                               "(CLI_FUZZ_CASES)")
    rng = random.Random(seed)
    keys = model_keys()
    cmds = {t: commands(t) for t in TOOLS}
    assert {"info", "csr", "dma", "tx", "rr"} <= set(cmds["nicbench"]), cmds["nicbench"]
    assert {"info", "report", "capture"} <= set(cmds["nicscope"]), cmds["nicscope"]
    cases = []
    for _ in range(CASES):
        t = rng.choice(TOOLS)
        cases.append(case(rng, t, cmds[t], keys, tmp_path))
    with ThreadPoolExecutor(max_workers=2) as pool:
        # Each case in its own folder: a bad value may be a file name two cases share.
        dirs = [tmp_path / f"case{k}" for k in range(len(cases))]
        for d in dirs:
            d.mkdir()
        results = list(pool.map(lambda cd: run_case(*cd[0], cwd=cd[1]), zip(cases, dirs)))
    bad = [(" ".join(argv), why) for (argv, _), why in zip(cases, results) if why]
    assert not bad, f"seed {seed}: {len(bad)} of {CASES} cases failed:\n" + "\n".join(
        f"{why}: {argv}" for argv, why in bad[:20])
