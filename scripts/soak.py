#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# soak.py: the soak (`make soak`) as resumable chunks of `nicbench fuzz`, run in parallel.
#
# Chunk i is one `nicbench --backend sim fuzz` of --chunk frames with fuzz seed and fault_seed
# SEED + i, on a fresh simulated SoC. A finished chunk's JSON is kept in OUT/chunk_NNNNN.json
# with the SHA-256 of the nicbench binary (the Verilated SoC is linked into it), its options and
# its seed: a rerun skips the chunks that match and runs the rest, so a soak survives being
# stopped, and a new build starts over. Each chunk's progress lines are printed with its number.
# The totals go to OUT/../soak.json (or --json); the exit status is 1 if any frame was lost
# without a counter, corrupted or out of order, any IOMMU fault or host-model TLP error
# happened, or a chunk failed.
# Usage: scripts/soak.py --nicbench build/sim_dw128/nicbench --opts OPTS --frames 10000000
#        [--chunk 100000] [--jobs 2] [--seed 1] [--out results/soak] [FUZZ ARGS after --]

import argparse
import concurrent.futures
import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time

BAD = ("lost_unexplained", "corrupted", "out_of_order")
lock = threading.Lock()


def say(msg):
    with lock:
        print(msg, flush=True)


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def chunk_key(args, binary_hash, i):
    return {"nicbench_sha256": binary_hash, "opts": args.opts, "frames": args.chunk,
            "seed": args.seed + i, "fuzz_args": args.fuzz_args}


def load_done(path, key):
    """The chunk's result if it finished with this key, else None."""
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError):
        return None
    return d if d.get("soak_key") == key and d.get("status") == "ok" else None


def run_chunk(args, exe, i, key):
    seed = args.seed + i
    path = os.path.join(args.out, f"chunk_{i:05d}.json")
    tmp = path + ".part"
    cmd = [exe, "--backend", "sim", "--opts", f"{args.opts},fault_seed={seed}", "--json", tmp,
           "fuzz", "--frames", str(args.chunk), "--seed", str(seed),
           "--progress", str(args.progress), *args.fuzz_args]
    say(f"soak: chunk {i} started: {' '.join(cmd)}")
    with open(path[:-5] + ".log", "w") as log:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in p.stdout:
            log.write(line)
            if line.startswith("fuzz: ") and " sent, " in line:
                say(f"soak: chunk {i}: {line.rstrip()[6:]}")
        rc = p.wait()
    try:
        with open(tmp) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        return i, {"status": "failed", "error": f"exit {rc}, no JSON ({e})"}
    d["soak_key"] = key
    with open(tmp, "w") as f:
        json.dump(d, f)
    if rc == 0 and d.get("status") == "ok":
        os.replace(tmp, path)
    return i, d


def add(total, part):
    for k, v in part.items():
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)):
            total[k] = total.get(k, 0) + v
        elif isinstance(v, dict):
            add(total.setdefault(k, {}), v)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--nicbench", required=True)
    ap.add_argument("--opts", required=True, help="--opts of every chunk (without fault_seed)")
    ap.add_argument("--frames", type=int, default=10_000_000)
    ap.add_argument("--chunk", type=int, default=100_000)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--progress", type=int, default=20_000)
    ap.add_argument("--out", default="results/soak")
    ap.add_argument("--json", default=None)
    ap.add_argument("fuzz_args", nargs="*", help="more `nicbench fuzz` arguments (after --)")
    args = ap.parse_args()
    if args.frames <= 0 or args.chunk <= 0 or args.jobs <= 0:
        ap.error("--frames, --chunk and --jobs must be positive")
    os.makedirs(args.out, exist_ok=True)
    # The chunks run a copy, so a rebuild during the soak does not change their binary.
    exe = os.path.join(args.out, "nicbench")
    binary_hash = sha256(args.nicbench)
    if not os.path.exists(exe) or sha256(exe) != binary_hash:
        shutil.copy2(args.nicbench, exe + ".tmp")
        os.replace(exe + ".tmp", exe)
    nchunks = (args.frames + args.chunk - 1) // args.chunk
    results, todo = {}, []
    for i in range(nchunks):
        key = chunk_key(args, binary_hash, i)
        d = load_done(os.path.join(args.out, f"chunk_{i:05d}.json"), key)
        if d is not None:
            results[i] = d
        else:
            todo.append((i, key))
    say(f"soak: {nchunks} chunks of {args.chunk} frames (seeds {args.seed}.."
        f"{args.seed + nchunks - 1}), {len(results)} already done with this binary "
        f"(sha256 {binary_hash[:12]}), {len(todo)} to run on {args.jobs} jobs")
    t0 = time.monotonic()
    failed = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = [pool.submit(run_chunk, args, os.path.abspath(exe), i, key) for i, key in todo]
        for fut in concurrent.futures.as_completed(futs):
            i, d = fut.result()
            if d.get("status") != "ok":
                failed.append(i)
                say(f"soak: chunk {i} FAILED (seed {args.seed + i}): {d.get('error')}")
                continue
            results[i] = d
            frames = sum(r["records"][0]["sent"] for r in results.values())
            el = time.monotonic() - t0
            say(f"soak: chunk {i} done; {len(results)}/{nchunks} chunks, {frames} frames, "
                f"{el:.0f} wall s this run")
    total = {"records": {}, "model_checks": {}, "model_faults": {}, "sim_speed": {}}
    for d in results.values():
        add(total["records"], {k: v for k, v in d["records"][0].items()
                               if k not in ("seed", "queues", "size_min", "size_max",
                                            "desc_fuzz", "ctl_fuzz")})
        for k in ("model_checks", "model_faults", "sim_speed"):
            add(total[k], d.get(k) or {})
    r, mc = total["records"], total["model_checks"]
    summary = {"tool": "soak", "chunks": nchunks, "chunks_done": len(results),
               "chunks_failed": sorted(failed), "chunk_frames": args.chunk,
               "seeds": [args.seed, args.seed + nchunks - 1], "opts": args.opts,
               "fuzz_args": args.fuzz_args, "nicbench_sha256": binary_hash, **total}
    out = args.json or os.path.join(os.path.dirname(os.path.abspath(args.out)), "soak.json")
    with open(out, "w") as f:
        json.dump(summary, f, indent=1)
    print(f"soak: {r.get('sent', 0)} frames sent, {r.get('received', 0)} received intact, "
          f"{r.get('lost', 0)} lost (all counted but {r.get('lost_unexplained', 0)}), "
          f"{r.get('corrupted', 0)} corrupted, {r.get('out_of_order', 0)} out of order; "
          f"{mc.get('errors', 0)} TLP errors, {mc.get('iommu_faults', 0)} IOMMU faults; "
          f"{total['sim_speed'].get('sim_ns', 0) / 1e9:.3f} simulated s in "
          f"{len(results)}/{nchunks} chunks")
    print("soak: faults injected: " + ", ".join(
        f"{k} {v}" for k, v in total["model_faults"].items()))
    print(f"soak: totals in {out}")
    bad = failed or any(r.get(k, 0) for k in BAD) or mc.get("errors", 0) or \
        mc.get("iommu_faults", 0)
    if bad:
        print("soak: FAILED", file=sys.stderr)
        return 1
    if len(results) < nchunks:
        print(f"soak: incomplete: {nchunks - len(results)} chunks not done", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
