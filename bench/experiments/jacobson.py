# SPDX-License-Identifier: BSD-2-Clause
# jacobson.py: seed 002 (Van Jacobson, BSD network speedups, 1988): the "sound barrier" of a
# driver that queues one packet at a time, and the per-packet budget split into fixed and
# per-byte costs with bus time from a logic analyzer.
#
# Ours: `nicbench tx` with 1 descriptor in flight against 63 for frames of 60..1514 B (throughput,
# per-frame time, host CPU time per frame), and `nicscope report --load tx` for the PCIe bus time
# per frame measured by the on-chip analyzer. Fits: time per frame with one in flight = fixed +
# per-byte x size; its n1/2 is the knee.

from .. import fit, papers, plot
from ..section import Section, table
from .common import nicbench, nicscope, rec, wire_ns

TITLE = "Van Jacobson (1988): the one-packet-at-a-time sound barrier and the per-packet budget"
SIZES = (60, 128, 256, 512, 1024, 1514)
SCOPE_SIZES = (60, 512, 1514)
MANY = 63


def _frames(cfg, size, inflight):
    n = 2000 if size <= 256 else 1000 if size <= 1024 else 600
    return max(100, n // 5) if cfg.quick else n


def jobs(cfg):
    out = []
    for s in SIZES:
        for i in (1, MANY):
            f = _frames(cfg, s, i)
            out.append(nicbench(cfg, f"s002_tx_{s}_if{i}", "tx", "--frames", f, "--size", s,
                                "--inflight", i, est=f * (wire_ns(s) + 2000) * 3e-6))
    for s in SCOPE_SIZES:
        out.append(nicscope(cfg, f"s002_scope_{s}", "report", "--load", "tx", "--frames", 64,
                            "--frame-size", s, est=4))
    return out


def _scope(res, s):
    r = res(f"s002_scope_{s}")["result"]
    p = r["probes"]
    ns = r["ns_per_cycle"]
    f = r["load_frames"]
    return {"bus_ns_per_frame": r["nic_dma"]["pcie_busy_ns_per_frame"],
            "up_ns_per_frame": p["pcie_tx"]["busy"] * ns / f,
            "down_ns_per_frame": p["pcie_rx"]["busy"] * ns / f}


def section(cfg, res, outdir):
    rows, csv = [], []
    for s in SIZES:
        one, many = rec(res, f"s002_tx_{s}_if1"), rec(res, f"s002_tx_{s}_if{MANY}")
        t1 = one["time_ns"] / one["frames"]
        host = one.get("host_ns_per_frame")
        row = {"size": s, "mbps_1": one["gbps"] * 1e3, "mbps_many": many["gbps"] * 1e3,
               "barrier_ratio": many["gbps"] / one["gbps"], "ns_per_frame_1": t1,
               "ns_per_frame_many": many["time_ns"] / many["frames"], "wire_ns": wire_ns(s),
               "host_ns_per_frame": host}
        if s in SCOPE_SIZES:
            row.update(_scope(res, s))
        csv.append(row)
        rows.append([s, row["mbps_1"], row["mbps_many"], row["barrier_ratio"], t1,
                     row["ns_per_frame_many"], row.get("bus_ns_per_frame"), wire_ns(s), host])
    f1 = fit.line([r["size"] for r in csv], [r["ns_per_frame_1"] for r in csv])
    knee = fit.n_half(f1)
    bus = [r for r in csv if "bus_ns_per_frame" in r]
    fb = fit.line([r["size"] for r in bus], [r["bus_ns_per_frame"] for r in bus])
    big = csv[-1]
    big_pct = 100 * big["bus_ns_per_frame"] / big["ns_per_frame_1"]

    steps = papers.table("002_throughput_steps")
    barrier = next(float(r["throughput_value"]) for r in steps if r["order"] == "3")
    best = max(float(r["throughput_value"]) * (1000 if r["throughput_unit"] == "MB/s" else 1)
               for r in steps if r["throughput_unit"] in ("KB/s", "MB/s"))
    cost = {r["item"]: float(r["value"]) for r in papers.table("002_per_packet_costs")}

    verdicts = [
        f"barrier: one descriptor in flight gives {big['mbps_1']:.0f} Mb/s at {big['size']} B "
        f"against {big['mbps_many']:.0f} Mb/s with {MANY}, x{big['barrier_ratio']:.2f}; at 60 B "
        f"x{csv[0]['barrier_ratio']:.2f} (paper: stuck at {barrier:.0f} KB/s one packet at a "
        f"time; {best:.0f} KB/s after queueing many and the other fixes, x{best / barrier:.2f})",
        f"per-frame cost with one in flight: fixed {f1.intercept:.0f} ns + {f1.slope:.2f} ns/B "
        f"(r2 {f1.r2:.3f}); knee (n1/2 = fixed / per-byte) at {knee:.0f} B",
        f"PCIe bus time per frame (analyzer, both directions): {fb.intercept:.0f} ns + "
        f"{fb.slope:.3f} ns/B; {big['bus_ns_per_frame']:.0f} ns of a "
        f"{big['ns_per_frame_1']:.0f} ns frame time at {big['size']} B, {big_pct:.0f} % "
        f"(paper: LANCE {cost['lance_bus_memory_per_packet']:.0f} us of "
        f"{cost['packet_interval_achieved']:.0f} us, "
        f"{100 * cost['lance_bus_memory_per_packet'] / cost['packet_interval_achieved']:.0f} %)",
    ]

    fig, (a, b, c) = plot.figure(3, width=5.0)
    x = [r["size"] for r in csv]
    a.plot(x, [r["mbps_1"] for r in csv], label="1 in flight", **plot.OURS)
    a.plot(x, [r["mbps_many"] for r in csv], label=f"{MANY} in flight", color="tab:green",
           marker="^")
    a.axvline(knee, color="gray", linestyle=":", label=f"knee {knee:.0f} B")
    a.set(xlabel="frame size (B)", ylabel="Mb/s of frame bytes", title="ours: throughput")
    a.legend()
    b.bar([r["configuration"][:28] for r in steps if r["throughput_unit"] == "KB/s"],
          [float(r["throughput_value"]) for r in steps if r["throughput_unit"] == "KB/s"],
          color=["tab:red" if r["order"] == "3" else "tab:gray" for r in steps
                 if r["throughput_unit"] == "KB/s"])
    b.set(ylabel="KB/s", title="paper: throughput steps (red: the barrier)")
    b.tick_params(axis="x", labelrotation=60, labelsize=6)
    labels = [f"ours {r['size']} B" for r in bus] + ["paper 1408 B"]
    total = [r["ns_per_frame_1"] for r in bus] + [cost["packet_interval_achieved"]]
    wire = [r["wire_ns"] for r in bus] + [cost["packet_interval_needed_for_10mbps"]]
    busv = [r["bus_ns_per_frame"] for r in bus] + [cost["lance_bus_memory_per_packet"]]
    c.bar(labels, [100] * len(labels), color="lightgray", label="time per frame, 1 in flight")
    c.bar(labels, [100 * w / t for w, t in zip(wire, total)], color="tab:orange", alpha=0.7,
          label="wire time (paper: the 10 Mb/s budget)")
    c.bar(labels, [100 * b / t for b, t in zip(busv, total)], color="tab:blue", alpha=0.8,
          label="bus time (analyzer)")
    c.set(ylabel="% of the time per frame", title="per-frame budget", ylim=(0, 135))
    c.tick_params(axis="x", labelsize=8)
    c.legend(fontsize=7, loc="upper center", ncols=2)
    plots = [plot.save(fig, outdir, "s002_barrier")]

    body = ("Paper (seed 002, `002_throughput_steps.csv`, `002_per_packet_costs.csv`): the "
            f"one-packet-at-a-time driver stuck at {barrier:.0f} KB/s; per 1408-byte packet "
            f"{cost['packet_interval_achieved']:.0f} us achieved against "
            f"{cost['packet_interval_needed_for_10mbps']:.0f} us needed, of which "
            f"{cost['variable_costs_total']:.0f} us variable (LANCE bus "
            f"{cost['lance_bus_memory_per_packet']:.0f} us) and "
            f"{cost['fixed_costs_achieved']:.0f} us fixed.\n\nOurs:\n\n"
            + table(["size B", "Mb/s 1 in flight", f"Mb/s {MANY} in flight", "ratio",
                     "ns/frame 1", f"ns/frame {MANY}", "PCIe bus ns/frame", "wire ns",
                     "host CPU ns/frame"], rows)
            + "\nPCIe bus ns/frame: busy cycles of both PHY streams in the analyzer's window / "
              "frames. Host CPU ns/frame: CPU time of the host code per frame, outside the "
              "simulator (wall-clock CPU of this machine, not simulated time).\n")
    return Section("002", TITLE,
                   "Our TX ring with one descriptor posted at a time stands for if_le.c queueing "
                   "one packet to the LANCE; the on-chip analyzer stands for the logic analyzer "
                   "on the Sun's bus.", verdicts, body, plots, {"s002_tx": csv})
