#!/usr/bin/env python3
#
# coalesce_bench.py: RX interrupts per second against rx-usecs at line rate, on the simulation.
#
# What it does: runs `nicbench tx` (64-byte frames on the wire: 60 bytes + FCS, one TX queue,
# ring 64, a doorbell every 32 frames) once per coalescing setting (settings(): none, delay,
# delay+abs) and collects, from each run's JSON, the simulated time, frames, Mpps, RX and TX
# interrupts raised by the device and MSIs the host model received. Interrupts per second = the
# RX interrupts counted / the simulated time of that run. Writes results/coalesce.json (every
# run's record, as nicbench wrote it, plus the derived rate) and prints a table.
#
# Usage: python scripts/coalesce_bench.py --nicbench build/sim_dw128/nicbench
#            [--opts gen=2,lanes=4,mps=256,mrrs=512] [--frames 5000] [--size 60]
#            [--usecs 0,20,80] [--json results/coalesce.json]

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def settings(usecs):
    """(mode, U, --coalesce argument) for each U of --usecs (ethtool -C names, the rules of
    rtl/nic/irq_coalescer.py):
      U = 0                  rx-usecs 0, rx-frames 1: no coalescing (one interrupt per frame).
      delay   (e1000 RDTR)   rx-usecs U, rx-frames 0: the timer restarts at every frame, so under
                             steady traffic with frames closer than U it never fires before the
                             traffic stops (the reason the e1000 has RADV).
      delay+abs (RDTR+RADV)  rx-usecs U, rx-abs-usecs U, rx-frames 0: the absolute timer bounds
                             the wait: about one interrupt per U microseconds.
    """
    out = []
    for u in usecs:
        if u == 0:
            out.append(("none", 0, "rx-usecs=0,rx-frames=1"))
        else:
            out.append(("delay", u, f"rx-usecs={u},rx-frames=0"))
            out.append(("delay+abs", u, f"rx-usecs={u},rx-abs-usecs={u},rx-frames=0"))
    return out


def main():
    p = argparse.ArgumentParser(description="RX interrupts per second against rx-usecs.")
    p.add_argument("--nicbench", required=True)
    p.add_argument("--opts", default="gen=2,lanes=4,mps=256,mrrs=512")
    p.add_argument("--frames", type=int, default=5000)
    p.add_argument("--size", type=int, default=60)
    p.add_argument("--usecs", default="0,20,80")
    p.add_argument("--json", default="results/coalesce.json")
    a = p.parse_args()
    usecs = [int(u) for u in a.usecs.split(",")]
    runs = []
    print(f"{'mode':>10} {'rx_usecs':>8} {'frames':>7} {'sim_us':>11} {'Mpps':>7} "
          f"{'irqs_rx':>8} {'irqs_rx_per_s':>14} {'frames_per_irq':>14} {'msis_rx':>7} "
          f"{'msis':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for mode, u, co in settings(usecs):
            js = Path(tmp) / "tx.json"
            cmd = [a.nicbench, "--backend", "sim", "--opts", a.opts, "--json", str(js), "tx",
                   "--frames", str(a.frames), "--size", str(a.size), "--ring", "64",
                   "--batch", "32", "--coalesce", co]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"coalesce_bench: {' '.join(cmd)} failed ({r.returncode}):\n"
                         f"{r.stdout}{r.stderr}")
            rec, = json.loads(js.read_text())["records"]
            rate = rec["irqs_rx"] / (rec["time_ns"] * 1e-9)
            runs.append({"mode": mode, "rx_usecs": u, "coalesce_arg": co, "command": cmd,
                         "irqs_rx_per_s": round(rate, 1), "record": rec})
            per = rec["frames"] / rec["irqs_rx"] if rec["irqs_rx"] else float("inf")
            print(f"{mode:>10} {u:>8} {rec['frames']:>7} {rec['time_ns'] / 1000:>11.3f} "
                  f"{rec['mpps']:>7.4f} {rec['irqs_rx']:>8} {rate:>14.1f} {per:>14.1f} "
                  f"{rec['msis_rx'] if rec.get('msis_rx') is not None else '-':>7} "
                  f"{rec['msis_received']:>6}")
    Path(a.json).parent.mkdir(parents=True, exist_ok=True)
    Path(a.json).write_text(json.dumps({"tool": "coalesce_bench", "opts": a.opts,
                                        "frames": a.frames, "size": a.size, "runs": runs},
                                       indent=1))
    print(f"coalesce_bench: wrote {a.json}")


if __name__ == "__main__":
    main()
