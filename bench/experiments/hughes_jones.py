# SPDX-License-Identifier: BSD-2-Clause
# hughes_jones.py: seed 004 (R. Hughes-Jones, "End-user systems: NICs, motherboards, TCP
# stacks"): UDPmon latency against frame size, throughput and loss against inter-frame spacing,
# PCI bus occupancy per frame from a logic analyzer, CSR access cost, interrupt coalescence at
# rx-usecs 0 / 20 / 80, and PCI-X mmrbc 512 against 4096.
#
# Ours, one job per point: `nicbench rr` (two NICs back to back) per request size with a 60 B
# reply; `nicbench tx --gap-ns` per spacing; `nicscope report --load tx` at 1400 B; `nicbench
# csr`; `nicbench tx` and `rr --irq` per coalescing setting; `nicbench dma` per (MPS, MRRS).

from .. import fit, papers, plot
from ..section import Section, table
from .common import nicbench, nicscope, rec, umlbench, wire_ns

TITLE = ("Hughes-Jones: latency slope, spacing and loss, bus occupancy, CSR cost, "
         "coalescence, read request size")
RR_SIZES = (60, 128, 256, 512, 768, 1024, 1280, 1472)
REPLY = 60
GAP_SIZE = 1472
GAPS_US = (0, 10, 12, 13, 15, 20, 30)
# A receiving host that is the bottleneck, as UDPmon's was: 16 RX buffers reposted every 208 us,
# room for one frame per 13 us.
SLOW_RX = ("--rx-ring", 16, "--rx-refill-ns", 16 * 13000)
RECEIVERS = {"nic": (), "slow host": SLOW_RX}
OCC_SIZE = 1400
# The paper's coalescing settings, from 004_interrupt_coalescence.csv.
COALESCE = papers.table("004_interrupt_coalescence")
RX_USECS = tuple(int(p["rx_usecs"]) for p in COALESCE)
CO_SIZE = 1472
MPS = (128, 256, 512)
MRRS = (128, 256, 512, 1024, 2048, 4096)
DMA_SIZE = 256 * 1024


def _coalesce(u):
    """The paper's e1000 settings for rx-usecs u (its CSV's row): rx-usecs 0 is an interrupt
    per frame (rx-frames 1), else the delay timer alone (rx-frames 0) bounded by rx-abs-usecs."""
    p = next(p for p in COALESCE if int(p["rx_usecs"]) == u)
    return (f"rx-usecs={u},rx-abs-usecs={p['rx_abs_usecs']},rx-frames={0 if u else 1},"
            f"tx-usecs={p['tx_usecs']},tx-abs-usecs={p['tx_abs_usecs']},tx-frames=0")


def _ethtool_c(u):
    """_coalesce(u) as `ethtool -C` arguments (nicdrv: *-abs-usecs is *-usecs-irq)."""
    names = {"rx-abs-usecs": "rx-usecs-irq", "tx-abs-usecs": "tx-usecs-irq"}
    return " ".join(f"{names.get(k, k)} {v}" for k, v in
                    (kv.split("=") for kv in _coalesce(u).split(",")))


def jobs(cfg):
    q = cfg.quick
    out = []
    for s in RR_SIZES[::3] if q else RR_SIZES:
        out.append(nicbench(cfg, f"s004_rr_{s}", "rr", "--sizes", s, "--reply-size", REPLY,
                            "--count", 30 if q else 100, opts="peer=1", est=3))
    for rx, extra in RECEIVERS.items():
        for g in GAPS_US:
            f = 100 if q else 300
            out.append(nicbench(cfg, f"s004_gap_{rx.replace(' ', '_')}_{g}", "tx", "--frames", f,
                                "--size", GAP_SIZE, "--gap-ns", g * 1000, *extra,
                                est=f * max(g * 1000, 12000) * 3e-6))
    out.append(nicscope(cfg, "s004_occupancy", "report", "--load", "tx", "--frames", 64,
                        "--frame-size", OCC_SIZE, est=4))
    out.append(nicbench(cfg, "s004_csr", "csr", "--samples", 200 if q else 1000, est=6))
    for u in RX_USECS:
        f = 300 if q else 2000
        out.append(nicbench(cfg, f"s004_co_tx_{u}", "tx", "--frames", f, "--size", CO_SIZE,
                            "--coalesce", _coalesce(u), est=f * 12e-3 * 3))
        out.append(nicbench(cfg, f"s004_co_rr_{u}", "rr", "--sizes", CO_SIZE, "--count",
                            20 if q else 100, "--irq", "--coalesce", _coalesce(u),
                            opts="peer=1", est=6))
    out.append(umlbench(cfg, "s004_kernel_co", "--frames", 100 if q else 300, "--csum-frames", 0,
                        "--size", CO_SIZE + 42,
                        *[x for u in RX_USECS for x in ("--coalesce", f"{u}={_ethtool_c(u)}")],
                        est=90))
    for m in MPS:
        for r in MRRS:
            out.append(nicbench(cfg, f"s004_dma_mps{m}_mrrs{r}", "dma", "--dir", "both",
                                "--sizes", DMA_SIZE, "--min-bytes", DMA_SIZE * 2,
                                opts=f"mps={m},mrrs={r}", est=2))
    return out


def _rr_fit(cfg, res):
    sizes = RR_SIZES[::3] if cfg.quick else RR_SIZES
    rows = [rec(res, f"s004_rr_{s}") for s in sizes]
    f = fit.line(sizes, [r["rtt_median_ns"] for r in rows])
    lim = {d: rec(res, "s004_dma_mps256_mrrs512", dir=d)["limit_gbps"] for d in ("h2c", "c2h")}
    # Expected per byte, one way: PCIe read at the sender + the wire + PCIe write at the receiver.
    exp = {"pcie_send": 8 / lim["h2c"], "wire": 8.0, "pcie_recv": 8 / lim["c2h"]}
    paper = papers.table("004_udpmon_latency")
    return rows, sizes, f, exp, paper


def _gap(res, rx):
    out = []
    for g in GAPS_US:
        r = rec(res, f"s004_gap_{rx.replace(' ', '_')}_{g}")
        out.append({"receiver": rx, "gap_us": g, "offered_mbps": r["offered_gbps"] * 1e3,
                    "received_mbps": r["received_gbps"] * 1e3, "lost": r["lost"],
                    "drops": {k: v for k, v in r["drops"].items() if v}, "frames": r["frames"]})
    return out


def _no_loss_above(gap):
    """The smallest spacing from which on nothing is lost at any larger spacing."""
    ok = None
    for g in sorted(gap, key=lambda g: -g["gap_us"]):
        if g["lost"]:
            break
        ok = g["gap_us"]
    return ok


def _latency(cfg, res, outdir, verdicts, body, plots, csv):
    """UDPmon latency against frame size: slope and intercept against the bus timing."""
    rows, sizes, lat, exp, paper = _rr_fit(cfg, res)
    exp_slope = sum(exp.values())
    csv["s004_latency"] = [{"size": s, "reply": REPLY, "rtt_median_ns": r["rtt_median_ns"],
                            "rtt_p99_ns": r["rtt_p99_ns"], "rtt_min_ns": r["rtt_min_ns"]}
                           for s, r in zip(sizes, rows)]
    verdicts.append(
        f"latency: {lat.intercept / 1000:.2f} us + {lat.slope / 1000:.5f} us/byte (r2 "
        f"{lat.r2:.3f}); expected from bus timing {exp_slope / 1000:.5f} us/byte (PCIe "
        f"{exp['pcie_send'] / 1000:.5f} + GigE {exp['wire'] / 1000:.4f} + PCIe "
        f"{exp['pcie_recv'] / 1000:.5f}); measured/expected {lat.slope / exp_slope:.2f} (paper: "
        + ", ".join(f"{p['nic']} {p['pci_bus']} {p['slope_us_per_byte']} against "
                    f"{p['expected_slope_us_per_byte']}" for p in paper) + ")")
    body.append("### Latency against frame size (UDPmon)\n\nPaper (`004_udpmon_latency.csv`):\n\n"
                + table(["NIC", "bus", "small-frame latency us", "slope us/B", "expected us/B"],
                        [[p["nic"], p["pci_bus"], p["latency_small_frames_us"] or None,
                          p["slope_us_per_byte"], p["expected_slope_us_per_byte"]]
                         for p in paper])
                + f"\nOurs (request of N bytes, reply of {REPLY} B, round trip, sim time):\n\n"
                + table(["request B", "RTT min ns", "RTT median ns", "RTT p99 ns"],
                        [[s, r["rtt_min_ns"], r["rtt_median_ns"], r["rtt_p99_ns"]]
                         for s, r in zip(sizes, rows)]))
    fig, (a, b) = plot.figure(2)
    a.plot(sizes, [r["rtt_median_ns"] / 1000 for r in rows], label="ours, median RTT",
           **plot.OURS)
    a.plot(sizes, [(lat.intercept + lat.slope * s) / 1000 for s in sizes], color="gray",
           linestyle=":", label=f"fit {lat.slope / 1000:.4f} us/B")
    a.set(xlabel="request size (B)", ylabel="us", title="ours: round trip")
    a.legend(fontsize=8)
    names = [f"{p['nic']}\n{p['pci_bus']}" for p in paper] + ["ours"]
    meas = [float(p["slope_us_per_byte"]) for p in paper] + [lat.slope / 1000]
    expv = [float(p["expected_slope_us_per_byte"]) for p in paper] + [exp_slope / 1000]
    xs = range(len(names))
    b.bar([x - 0.2 for x in xs], meas, width=0.4, label="measured", color="tab:blue")
    b.bar([x + 0.2 for x in xs], expv, width=0.4, label="expected from bus timing",
          color="tab:orange")
    b.set_xticks(list(xs), names, fontsize=6)
    b.set(ylabel="us/byte", title="latency slope: papers' and ours")
    b.legend(fontsize=8)
    plots.append(plot.save(fig, outdir, "s004_latency"))


def _spacing(cfg, res, outdir, verdicts, body, plots, csv):
    """Throughput and loss against inter-frame spacing, with the NIC and a slow host receiving."""
    gaps = {rx: _gap(res, rx) for rx in RECEIVERS}
    csv["s004_spacing"] = [dict(g, drops=" ".join(f"{k}={v}" for k, v in g["drops"].items()))
                           for v in gaps.values() for g in v]
    pg = papers.table("004_udp_throughput_vs_spacing")
    verdicts.append(
        f"spacing: {GAP_SIZE} B frames (wire time {wire_ns(GAP_SIZE) / 1000:.2f} us) "
        + "; ".join(f"{rx} receiver: max {max(g['received_mbps'] for g in v):.0f} Mb/s "
                    f"received, no loss from {_no_loss_above(v)} us spacing up, "
                    f"{sum(g['lost'] for g in v)} frames lost in all"
                    for rx, v in gaps.items())
        + " (paper: max " + ", ".join(f"{p['max_throughput_mbit_per_s']}" for p in pg)
        + " Mbit/s; no loss above " + ", ".join(f"{p['no_loss_above_spacing_us']}" for p in pg
                                               if p["no_loss_above_spacing_us"]) + " us)")
    body.append("### Throughput and loss against spacing\n\nPaper "
                "(`004_udp_throughput_vs_spacing.csv`):\n\n"
                + table(["NIC", "bus", "max Mb/s", "no loss above us"],
                        [[p["nic"], p["pci_bus"], p["max_throughput_mbit_per_s"],
                          p["no_loss_above_spacing_us"] or None] for p in pg])
                + f"\nOurs ({GAP_SIZE} B frames, one per doorbell, spaced start to start; the "
                  "slow host reposts its 16 RX buffers every 208 us; lost frames by the NIC's "
                  "drop counters):\n\n"
                + table(["receiver", "spacing us", "offered Mb/s", "received Mb/s", "lost",
                         "drops by cause"],
                        [[g["receiver"], g["gap_us"], g["offered_mbps"], g["received_mbps"],
                          g["lost"], " ".join(f"{k}={v}" for k, v in g["drops"].items()) or "-"]
                         for v in gaps.values() for g in v]))
    fig, (a, b) = plot.figure(2)
    for rx, v in gaps.items():
        a.plot([g["gap_us"] for g in v], [g["received_mbps"] for g in v],
               label=f"ours, {rx} receiver", marker="o")
        b.plot([g["gap_us"] for g in v], [100 * g["lost"] / g["frames"] for g in v],
               label=f"ours, {rx} receiver", marker="o")
    a.axhline(max(float(p["max_throughput_mbit_per_s"]) for p in pg), label="paper: best max",
              **{k: v for k, v in plot.PAPER.items() if k != "marker"})
    a.set(xlabel="spacing (us)", ylabel="Mb/s received", title="received rate")
    a.legend(fontsize=8)
    for p in pg:
        if p["no_loss_above_spacing_us"]:
            b.axvline(float(p["no_loss_above_spacing_us"]), color="tab:red", linestyle=":",
                      label=f"paper no loss above: {p['nic']} {p['pci_bus']}")
    b.set(xlabel="spacing (us)", ylabel="% frames lost", title="loss")
    b.legend(fontsize=6)
    plots.append(plot.save(fig, outdir, "s004_spacing"))


def _occupancy(cfg, res, outdir, verdicts, body, plots, csv):
    """PCIe occupancy per frame from the analyzer, as the paper's logic analyzer."""
    occ = res("s004_occupancy")["result"]
    ns, fr = occ["ns_per_cycle"], occ["load_frames"]
    pr = occ["probes"]
    up = {"busy_pct": pr["pcie_tx"]["busy_pct"], "ns_per_frame": pr["pcie_tx"]["busy"] * ns / fr}
    down = {"busy_pct": pr["pcie_rx"]["busy_pct"],
            "ns_per_frame": pr["pcie_rx"]["busy"] * ns / fr}
    spacing = occ["window_cycles"] * ns / fr
    po = [p for p in papers.table("004_pci_occupancy") if p["send_pci_bus_time_us"]]
    csv["s004_occupancy"] = [{"direction": "device->host", **up}, {"direction": "host->device",
                                                                    **down}]
    verdicts.append(
        f"occupancy: {OCC_SIZE} B frames every {spacing / 1000:.2f} us: device->host "
        f"{up['busy_pct']:.1f} % busy, {up['ns_per_frame'] / 1000:.3f} us per frame; host->device "
        f"{down['busy_pct']:.1f} %, {down['ns_per_frame'] / 1000:.3f} us (paper: "
        + "; ".join(f"{p['nic']} {p['pci_bus']}: send {p['send_pci_bus_time_us']} us, "
                    f"{p['pci_bus_occupancy_pct'] or 'n/a'} %" for p in po) + ")")
    body.append("### PCIe occupancy per frame (logic analyzer)\n\nPaper "
                "(`004_pci_occupancy.csv`):\n\n"
                + table(["NIC", "bus", "frame B", "spacing us", "send bus us", "recv data us",
                         "occupancy %"],
                        [[p["nic"], p["pci_bus"], p["frame_bytes"], p["spacing_us"],
                          p["send_pci_bus_time_us"], p["recv_pci_data_time_us"] or None,
                          p["pci_bus_occupancy_pct"] or None] for p in po])
                + f"\nOurs (`nicscope report --load tx`, {fr} frames of {OCC_SIZE} B at line "
                  "rate; device->host carries the frames' read requests and RX writes, "
                  "host->device the completions with the frames' data):\n\n"
                + table(["direction", "busy %", "bus us per frame"],
                        [["device->host", up["busy_pct"], up["ns_per_frame"] / 1000],
                         ["host->device", down["busy_pct"], down["ns_per_frame"] / 1000]]))


def _csr(cfg, res, outdir, verdicts, body, plots, csv):
    """CSR read cost idle and under DMA, and the DMA stall cycles the reads add."""
    lat_rows = res("s004_csr")["records"]
    rd = {r["condition"]: r for r in lat_rows
          if r.get("experiment") == "csr_latency" and r["access"] == "read"}
    hold = [r for r in lat_rows if r.get("experiment") == "csr_dma_holdoff"]
    csr_paper = next(p for p in papers.table("004_pci_occupancy") if p["nic_csr_access_us"])
    with_csr = next(r for r in hold if r["csr_reads"])
    without = next(r for r in hold if not r["csr_reads"])
    # DMA write stall cycles the reads added, per read, over equally long windows.
    per_read = (with_csr["dma_wr_stall"] - without["dma_wr_stall"]) / with_csr["csr_reads"]
    verdicts.append(
        f"CSR: a read takes {rd['idle']['median_ns']} ns idle (median), "
        + (f"{rd[k]['median_ns']} ns under DMA, " if (k := next((c for c in rd if c != 'idle'),
                                                                 None)) else "")
        + f"and adds {per_read:.2f} DMA write stall cycles per read ({with_csr['dma_wr_stall_csr']}"
        f" stall cycles while the CSR bridge was busy) "
        + f"(paper: {csr_paper['nic']} takes {csr_paper['nic_csr_access_us']} us per CSR; "
        "\"CSR access inserts PCI STOPs\")")
    body.append("### CSR access cost\n\nOurs (`nicbench csr`):\n\n"
                + table(["access", "condition", "min ns", "median ns", "p99 ns", "max ns"],
                        [[r["access"], r["condition"], r["min_ns"], r["median_ns"], r["p99_ns"],
                          r["max_ns"]] for r in lat_rows
                         if r.get("experiment") == "csr_latency"])
                + "\n" + table(["window", "ns", "CSR reads", "DMA write stall cycles",
                                "of which CSR busy", "DMA write requests"],
                               [[r["window"], r["duration_ns"], r["csr_reads"], r["dma_wr_stall"],
                                 r["dma_wr_stall_csr"], r["dma_wr_reqs"]] for r in hold]))


def _coalescence(cfg, res, outdir, verdicts, body, plots, csv):
    """Interrupt rate, throughput and added round-trip latency at the paper's settings."""
    co = []
    for u in RX_USECS:
        t = rec(res, f"s004_co_tx_{u}")
        r = rec(res, f"s004_co_rr_{u}")
        co.append({"rx_usecs": u, "irqs_rx_per_s": t["irqs_rx"] / (t["time_ns"] * 1e-9),
                   "frames_per_irq": t["frames"] / max(1, t["irqs_rx"]),
                   "mbps": t["gbps"] * 1e3, "rtt_median_us": r["rtt_median_ns"] / 1000,
                   "rtt_p99_us": r["rtt_p99_ns"] / 1000})
    csv["s004_coalescence"] = co
    kern = [rec(res, "s004_kernel_co", rx_usecs=u) for u in RX_USECS]
    csv["s004_coalescence_kernel"] = kern
    pc = COALESCE
    verdicts.append(
        "coalescence at rx-usecs " + " / ".join(str(c["rx_usecs"]) for c in co) + ": "
        + " / ".join(f"{c['irqs_rx_per_s']:.0f}" for c in co) + " RX interrupts/s, "
        + " / ".join(f"{c['mbps']:.0f}" for c in co) + " Mb/s, median RTT "
        + " / ".join(f"{c['rtt_median_us']:.1f}" for c in co) + " us (+"
        + f"{co[-1]['rtt_median_us'] - co[0]['rtt_median_us']:.1f} us at {co[-1]['rx_usecs']}); "
        "paper: " + " / ".join(f"{p['throughput_low_mbit_per_s'] or '?'}-"
                                f"{p['throughput_high_mbit_per_s'] or '?'}" for p in pc)
        + " Mbit/s")
    verdicts.append(
        "coalescence through the kernel (nicdrv.ko in a UML guest, the same ethtool -C "
        "settings, " + f"{kern[0]['frames']} frames of {kern[0]['size']} B): RX interrupts per "
        "frame " + " / ".join(f"{k['irqs_rx_proc'] / k['frames']:.2f}" for k in kern)
        + " (/proc/interrupts = the coalescer's count = MSIs delivered: "
        + ("yes" if all(k["irqs_rx_proc"] == k["nic_rxirq_irqs"] == k["msis_rx"] for k in kern)
           else "NO") + "), nicbench " + " / ".join(f"{1 / c['frames_per_irq']:.2f}" for c in co)
        + "; MMIO writes per frame " + " / ".join(f"{k['pcie_mmio_writes'] / k['frames']:.2f}"
                                                  for k in kern))
    body.append("### Interrupt coalescence\n\nPaper (`004_interrupt_coalescence.csv`, TCP "
                "mem-mem):\n\n"
                + table(["tx-usecs", "tx-abs", "rx-usecs", "rx-abs", "Mbit/s low", "Mbit/s high"],
                        [[p["tx_usecs"], p["tx_abs_usecs"], p["rx_usecs"], p["rx_abs_usecs"],
                          p["throughput_low_mbit_per_s"] or None,
                          p["throughput_high_mbit_per_s"] or None] for p in pc])
                + f"\nOurs (the paper's settings; throughput: {CO_SIZE} B frames through the "
                  "MAC loopback; round trip: `rr --irq`, each side waiting for its RX "
                  "interrupt):\n\n"
                + table(["rx-usecs", "RX irqs/s", "frames/irq", "Mb/s", "RTT median us",
                         "RTT p99 us"],
                        [[c["rx_usecs"], c["irqs_rx_per_s"], c["frames_per_irq"], c["mbps"],
                          c["rtt_median_us"], c["rtt_p99_us"]] for c in co])
                + "\nThrough the kernel (`sw/uml/umlbench.py`: nicdrv.ko in a UML guest, the "
                  "same settings by `ethtool -C`, raw frames out and back through the MAC "
                  "loopback, 16 in flight; the guest runs on wall-clock time against the "
                  "simulation, sw/uml/README.md; PCIe figures from the host model):\n\n"
                + table(["rx-usecs", "frames", "RX irqs /proc", "coalescer irqs", "MSIs",
                         "frames/irq", "sim us/frame", "MMIO writes/frame",
                         "MMIO reads/frame", "PCIe MRd up/frame", "guest frames/s"],
                        [[k["rx_usecs"], k["frames"], k["irqs_rx_proc"], k["nic_rxirq_irqs"],
                          k["msis_rx"], k["frames"] / max(1, k["irqs_rx_proc"]),
                          k["sim_ns"] / 1000 / k["frames"], k["pcie_mmio_writes"] / k["frames"],
                          k["pcie_mmio_reads"] / k["frames"],
                          k["pcie_tlps_up_mrd"] / k["frames"], k["guest_frames_per_s"]]
                         for k in kern]))
    fig, (a, b) = plot.figure(2)
    a.bar([str(c["rx_usecs"]) for c in co], [c["irqs_rx_per_s"] for c in co], color="tab:blue")
    a.set(xlabel="rx-usecs", ylabel="RX interrupts/s", title="ours: interrupt rate")
    b.plot([c["rx_usecs"] for c in co], [c["rtt_median_us"] for c in co], label="ours RTT median",
           **plot.OURS)
    b.plot([c["rx_usecs"] for c in co], [c["rtt_p99_us"] for c in co], label="ours RTT p99",
           color="tab:cyan", marker="v")
    b.set(xlabel="rx-usecs", ylabel="us", title="added latency")
    b2 = b.twinx()
    b2.plot([float(p["rx_usecs"]) for p in pc if p["throughput_high_mbit_per_s"]],
            [float(p["throughput_high_mbit_per_s"]) for p in pc
             if p["throughput_high_mbit_per_s"]], label="paper Mbit/s (high)", **plot.PAPER)
    b2.plot([c["rx_usecs"] for c in co], [c["mbps"] for c in co], label="ours Mb/s",
            color="tab:green", marker="^")
    b2.set_ylabel("Mb/s")
    b.legend(loc="upper left", fontsize=7)
    b2.legend(loc="lower right", fontsize=7)
    plots.append(plot.save(fig, outdir, "s004_coalescence"))


def _mrrs(cfg, res, outdir, verdicts, body, plots, csv):
    """DMA throughput against MPS and MRRS, as PCI-X mmrbc 512 against 4096."""
    dm = []
    for m in MPS:
        for r in MRRS:
            for d in ("h2c", "c2h"):
                x = rec(res, f"s004_dma_mps{m}_mrrs{r}", dir=d)
                dm.append({"mps": m, "mrrs": r, "dir": d, "gbps": x["gbps"],
                           "expected_gbps": x["limit_gbps"], "ratio": x["ratio"]})
    csv["s004_mrrs"] = dm
    h = {(x["mps"], x["mrrs"]): x for x in dm if x["dir"] == "h2c"}
    pm = [p for p in papers.table("004_pcix_mmrbc_10gbe") if p["mmrbc_bytes"]]
    # The device uses at most its own MRRS (LitePCIe: 512 B) whatever the host allows.
    dev_max = max(rec(res, f"s004_dma_mps256_mrrs{r}", dir="h2c")["dev_mrrs"] for r in MRRS)
    lo, hi = h[(256, MRRS[0])], h[(256, dev_max)]
    p512 = next(float(p["throughput_gbit_per_s"]) for p in pm if p["mmrbc_bytes"] == "512")
    p4k = max(float(p["throughput_gbit_per_s"]) for p in pm if p["mmrbc_bytes"] == "4096")
    verdicts.append(
        f"read request size: h2c {DMA_SIZE // 1024} KiB at MPS 256, MRRS {MRRS[0]} -> "
        f"{dev_max} (the largest the device uses; above it nothing changes): "
        f"{lo['gbps']:.2f} -> {hi['gbps']:.2f} Gb/s, x{hi['gbps'] / lo['gbps']:.2f}; "
        f"measured/expected {lo['ratio']:.3f} and {hi['ratio']:.3f} (paper: mmrbc 512 -> 4096: "
        f"{p512} -> {p4k} Gbit/s, x{p4k / p512:.2f})")
    body.append("### Read request size (PCI-X mmrbc -> PCIe MRRS, MPS)\n\nPaper "
                "(`004_pcix_mmrbc_10gbe.csv`):\n\n"
                + table(["system", "mmrbc B", "Gbit/s"],
                        [[p["system"], p["mmrbc_bytes"], p["throughput_gbit_per_s"]] for p in pm])
                + f"\nOurs (`nicbench dma`, {DMA_SIZE // 1024} KiB transfers; expected = the "
                  "model's limit from its link timing):\n\n"
                + table(["MPS", "MRRS", "dir", "Gb/s", "expected Gb/s", "measured/expected"],
                        [[x["mps"], x["mrrs"], x["dir"], x["gbps"], x["expected_gbps"],
                          x["ratio"]] for x in dm]))
    fig, (a, b) = plot.figure(2)
    for m in MPS:
        a.plot(MRRS, [h[(m, r)]["gbps"] for r in MRRS], marker="o", label=f"MPS {m} measured")
        a.plot(MRRS, [h[(m, r)]["expected_gbps"] for r in MRRS], linestyle=":",
               label=f"MPS {m} expected")
    a.set(xscale="log", xlabel="MRRS (B)", ylabel="Gb/s", title="ours: host-to-card DMA")
    a.legend(fontsize=7)
    b.bar([f"{p['system'][:14]}\nmmrbc {p['mmrbc_bytes']}" for p in pm],
          [float(p["throughput_gbit_per_s"]) for p in pm], color="tab:red")
    b.set(ylabel="Gbit/s", title="paper: 10GbE over PCI-X")
    b.tick_params(axis="x", labelsize=7)
    plots.append(plot.save(fig, outdir, "s004_mrrs"))


def section(cfg, res, outdir):
    verdicts, body, plots, csv = [], [], [], {}
    for part in (_latency, _spacing, _occupancy, _csr, _coalescence, _mrrs):
        part(cfg, res, outdir, verdicts, body, plots, csv)
    return Section("004", TITLE,
                   "Two simulated hosts with our NIC back to back stand for UDPmon's two PCs; the "
                   "PCIe link's two directions for the PCI bus; MRRS/MPS for PCI-X mmrbc; our "
                   "coalescer's rx-usecs for the e1000's.", verdicts, "\n".join(body), plots, csv)
