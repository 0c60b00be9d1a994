# pciebench.py: small DMA as pcie-bench measures it (Neugebauer et al., SIGCOMM 2018): bandwidth
# with the DMA engine's descriptor table kept full, 64 B .. 4 KiB, against one transfer at a
# time and the model's limit; and the latency of single DMA reads (median, p99) beside their
# published 64 B median.
#
# Ours, one job per point: `nicbench dma --inflight N` per direction and size, `nicbench dma`
# one at a time, and `nicbench dma --latency` per size.

from .. import papers, plot
from ..section import Section, table
from .common import nicbench, rec

TITLE = "pcie-bench: small DMA with many transfers in flight, and DMA read latency"
SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
INFLIGHT = 32


def jobs(cfg):
    sizes = SIZES[::3] if cfg.quick else SIZES
    mb = (64 if cfg.quick else 128) * 1024
    out = []
    for d in ("h2c", "c2h"):
        for s in sizes:
            out.append(nicbench(cfg, f"pb_bw_{d}_{s}_if{INFLIGHT}", "dma", "--dir", d, "--sizes",
                                s, "--inflight", INFLIGHT, "--min-bytes", mb, est=2))
            out.append(nicbench(cfg, f"pb_bw_{d}_{s}_if1", "dma", "--dir", d, "--sizes", s,
                                "--min-bytes", mb // 4, est=2))
    for s in sizes:
        out.append(nicbench(cfg, f"pb_lat_{s}", "dma", "--dir", "h2c", "--latency", "--sizes", s,
                            "--count", 200 if cfg.quick else 1000, est=3))
    return out


def section(cfg, res, outdir):
    sizes = SIZES[::3] if cfg.quick else SIZES
    bw = []
    for d in ("h2c", "c2h"):
        for s in sizes:
            many = rec(res, f"pb_bw_{d}_{s}_if{INFLIGHT}", dir=d)
            one = rec(res, f"pb_bw_{d}_{s}_if1", dir=d)
            bw.append({"dir": d, "size": s, "inflight": many["inflight"], "gbps_1": one["gbps"],
                       "gbps_many": many["gbps"],
                       "limit_gbps": many["limit_gbps"], "ratio_1": one["ratio"],
                       "ratio_many": many["ratio"]})
    lat = [{"size": s, **{k: rec(res, f"pb_lat_{s}")[k] for k in
                          ("lat_min_ns", "lat_median_ns", "lat_p99_ns", "lat_max_ns")}}
           for s in sizes]
    published = papers.value("pciebench_published", "dma_read_latency_median_64B")
    h64 = next(b for b in bw if b["dir"] == "h2c" and b["size"] == sizes[0])
    c64 = next(b for b in bw if b["dir"] == "c2h" and b["size"] == sizes[0])
    verdicts = [
        f"bandwidth at {sizes[0]} B with the table kept full: h2c {h64['gbps_many']:.2f} Gb/s "
        f"({h64['inflight']} in flight, "
        f"{h64['ratio_many']:.3f} of the model limit; one at a time {h64['ratio_1']:.3f}), "
        f"c2h {c64['gbps_many']:.2f} Gb/s ({c64['inflight']} in flight, {c64['ratio_many']:.3f}; "
        "one at a time "
        f"{c64['ratio_1']:.3f})",
        f"read latency: {lat[0]['lat_median_ns']} ns median, {lat[0]['lat_p99_ns']} ns p99 at "
        f"{sizes[0]} B; {lat[-1]['lat_median_ns']} ns median at {sizes[-1]} B (pcie-bench's "
        f"hosts: {published:.0f} ns median at 64 B)",
    ]
    fig, (a, b) = plot.figure(2)
    for d, c in (("h2c", "tab:blue"), ("c2h", "tab:green")):
        bs = [x for x in bw if x["dir"] == d]
        a.plot(sizes, [x["gbps_many"] for x in bs], marker="o", color=c,
               label=f"{d} table kept full")
        a.plot(sizes, [x["gbps_1"] for x in bs], marker="v", color=c, linestyle="--",
               label=f"{d} one at a time")
        a.plot(sizes, [x["limit_gbps"] for x in bs], color=c, linestyle=":",
               label=f"{d} model limit")
    a.set(xscale="log", xlabel="transfer size (B)", ylabel="Gb/s", title="ours: DMA bandwidth")
    a.legend(fontsize=7)
    b.plot(sizes, [x["lat_median_ns"] for x in lat], label="ours median", **plot.OURS)
    b.plot(sizes, [x["lat_p99_ns"] for x in lat], label="ours p99", color="tab:cyan", marker="v")
    b.plot([64], [published], label="pcie-bench median (their hosts)", **plot.PAPER)
    b.set(xscale="log", xlabel="read size (B)", ylabel="ns", title="DMA read latency")
    b.legend(fontsize=7)
    plots = [plot.save(fig, outdir, "pciebench")]
    body = (f"Published: `pciebench_published.csv` ({published:.0f} ns median, 64 B read).\n\n"
            "Ours, bandwidth (sim time; limit = the model's link timing):\n\n"
            + table(["dir", "size B", "Gb/s one at a time", "in flight", "Gb/s in flight",
                     "limit Gb/s", "ratio one", "ratio in flight"],
                    [[b["dir"], b["size"], b["gbps_1"], b["inflight"], b["gbps_many"],
                      b["limit_gbps"], b["ratio_1"], b["ratio_many"]] for b in bw])
            + f"\nIn flight: {INFLIGHT} asked; host-to-card keeps at least 32 KiB queued, so its "
              "small sizes run deeper (the column shows the depth run).\n"
            + "\nOurs, latency of single reads (request's first beat leaving the device to the "
              "last completion beat back):\n\n"
            + table(["size B", "min ns", "median ns", "p99 ns", "max ns"],
                    [[x["size"], x["lat_min_ns"], x["lat_median_ns"], x["lat_p99_ns"],
                      x["lat_max_ns"]] for x in lat]))
    return Section("pcie-bench", TITLE,
                   "LitePCIe's DMA engine with its descriptor table kept full stands for "
                   "pcie-bench's bandwidth test; single reads timed at the PHY for its latency "
                   "test.", verdicts, body, plots, {"pciebench_bw": bw, "pciebench_lat": lat})
