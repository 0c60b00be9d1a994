#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""umlbench: the kernel-path experiments of the bench (make bench), one UML boot per job.

The guest (uml_guest.py) runs nicdrv.ko against the Verilator SoC; per step the host reads the
RTL's registers through the server (outside the guest) and the server's counts, before and
after, and the guest prints /proc/interrupts and nictraffic's line. Writes a JSON document like
nicbench's: {"tool": "umlbench", "records": [...]}, one record per step:
  coalesce: --coalesce U=ETHTOOL_ARGS (repeatable): `ethtool -C eth0 ETHTOOL_ARGS`, then
            --frames raw frames of --size bytes through the MAC loopback (nictraffic, window 16);
            none with --frames 0
  csum:     --csum-frames UDP datagrams of --size bytes (frame) through the kernel's UDP/IP
            stack with the UDP checksum computed (on) and not (off, SO_NO_CHECK), each sendto()
            timed in the guest (nictraffic -u), at the first --coalesce setting; --csum-rounds
            rounds of on then off (the guest's wall time drifts with the machine's load)
Each record: frames, good, the guest's wall seconds and frames/s, RX/TX interrupts from
/proc/interrupts, the coalescer's nic_rxirq_irqs/nic_txirq_irqs and the MSIs the server
delivered, simulated ns, the host model's PCIe counters per direction (TLPs, payload bytes,
link busy ps) and the guest's MMIO reads and writes; csum records add send_ns_median/mean.

  umlbench.py --json PATH [--opts K=V,...] [--frames N] [--csum-frames N] [--csum-rounds R]
              [--size S]
              --coalesce 0="rx-usecs 0 rx-frames 1" [--coalesce ...] [--server-digest X]
(--server-digest is not used: it keys the bench's job to the server binary.)
"""
import argparse
import json
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import uml_guest  # noqa: E402

MODEL = ("tlps_up_mwr", "tlps_up_mrd", "tlps_up_cpld", "tlps_down_mwr", "tlps_down_mrd",
         "tlps_down_cpld", "bytes_up_payload", "bytes_down_payload", "link_busy_ps_up",
         "link_busy_ps_down", "mmio_reads", "mmio_writes", "msis")
RTL = ("nic_rxirq_irqs", "nic_txirq_irqs", "nic_rxe_frames", "nic_txe_frames")
PEER = "10.9.0.2"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json", required=True)
    p.add_argument("--opts", default="")
    p.add_argument("--frames", type=int, default=300)
    p.add_argument("--csum-frames", type=int, default=300)
    p.add_argument("--csum-rounds", type=int, default=4)
    p.add_argument("--size", type=int, default=1472)
    p.add_argument("--coalesce", action="append", required=True)
    p.add_argument("--server-digest", default="")
    a = p.parse_args(argv)
    settings = []
    for c in a.coalesce:
        u, _, args = c.partition("=")
        settings.append(("coalesce", int(u), args))
    steps = settings if a.frames else []
    for _ in range(a.csum_rounds if a.csum_frames else 0):
        steps += [("csum", "on", settings[0][2]), ("csum", "off", settings[0][2])]
    lines = ["if insmod /nicdrv.ko; then echo UML-INSMOD-OK; fi", "ip link set eth0 up",
             "ip addr add 10.9.0.1/24 dev eth0",
             f"arp -s {PEER} $(cat /sys/class/net/eth0/address)",
             "irqs() { awk -v n=\"eth0-$1\" '$NF == n { print $2 }' /proc/interrupts; }"]
    for i, (kind, val, args) in enumerate(steps):
        lines.append(f"ethtool -C eth0 {args} || echo UML-C-FAILED {i}")
        lines.append(f"sync_host s{i}a")
        if kind == "coalesce":
            lines.append(f"nictraffic eth0 {a.frames} {a.size} 16 10000")
        else:
            lines.append(f"nictraffic -u eth0 {a.csum_frames} {a.size} "
                         f"{'csum' if val == 'on' else 'nocsum'} {PEER} 16 10000")
        lines.append(f"echo \"UML-IRQS s{i} $(irqs rx) $(irqs tx0) $(irqs tx1)\"")
        lines.append(f"sync_host s{i}b")
    lines += ["ip link set eth0 down", "rmmod nicdrv && echo UML-RMMOD-OK"]
    regs = uml_guest.csr_map()
    snaps = {}

    def snap(name):
        def fn(g):
            s = {k: g.csr(regs[k]) for k in RTL}
            s["server"] = json.loads(g.ctl("stats"))
            snaps[name] = s
        return fn

    on_sync = {f"s{i}{x}": snap(f"s{i}{x}") for i in range(len(steps)) for x in "ab"}
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="umlbench.") as d:
        g = uml_guest.Guest(d, "\n".join(lines) + "\n", on_sync=on_sync, opts=a.opts,
                            timeout=1800)
        out = g.run()
    if "UML-RMMOD-OK" not in out or "UML-C-FAILED" in out:
        print(out[-4000:], file=sys.stderr)
        return 1
    traffic = re.findall(r"^nictraffic: .*$", out, re.M)
    irqs = {m.group(1): [int(x or 0) for x in m.groups()[1:]] for m in
            re.finditer(r"^UML-IRQS (s\d+) (\d*) (\d*) (\d*)", out, re.M)}
    if len(traffic) != len(steps):
        print(out[-4000:], file=sys.stderr)
        return 1
    records, prev = [], [0, 0, 0]
    for i, ((kind, val, args), line) in enumerate(zip(steps, traffic)):
        b, e = snaps[f"s{i}a"], snaps[f"s{i}b"]
        f = {k: float(v) for k, v in re.findall(r"(\w+) ([\d.]+)", line.split(":", 1)[1])}
        cur = irqs[f"s{i}"]
        r = {"step": kind, "ethtool_c": args, "frames": int(f["received"]),
             "sent": int(f["sent"]), "good": int(f["good"]), "bad": int(f["bad"]),
             "size": a.size, "guest_s": f["seconds"], "guest_frames_per_s": f["frames_per_s"],
             "irqs_rx_proc": cur[0] - prev[0], "irqs_tx_proc": cur[1] + cur[2] - prev[1] - prev[2],
             "sim_ns": e["server"]["sim_ns"] - b["server"]["sim_ns"],
             "msis_rx": e["server"].get("msi_vec1", 0) - b["server"].get("msi_vec1", 0)}
        prev = cur
        if kind == "coalesce":
            r["rx_usecs"] = val
        else:
            r["csum"] = val
            r["round"] = sum(1 for x in records if x.get("csum") == val)
            r["send_ns_median"] = f["send_ns_median"]
            r["send_ns_mean"] = f["send_ns_mean"]
        for k in RTL:
            r[k] = (e[k] - b[k]) & 0xffffffff
        for k in MODEL:
            r["pcie_" + k] = e["server"]["model." + k] - b["server"]["model." + k]
        records.append(r)
    doc = {"tool": "umlbench", "boot_s": g.times.get("UML-BOOTED"),
           "wall_s": time.monotonic() - t0, "records": records}
    Path(a.json).write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
