# SPDX-License-Identifier: BSD-2-Clause
# pciebench.py: small DMA as pcie-bench measures it (Neugebauer et al., SIGCOMM 2018): bandwidth
# with the DMA engine's descriptor table kept full, 64 B .. 4 KiB, against one transfer at a
# time and the model's limit; the latency of single DMA reads (median, p99) beside their
# published 64 B median; and their alignment test: bandwidth and read latency against the host
# buffer's offset in its 4 KiB page.
#
# Ours, one job per point: `nicbench dma --inflight N` per direction and size, `nicbench dma`
# one at a time, and `nicbench dma --latency` per size; the offset sweep one job per transfer
# size, MPS and direction (`nicbench dma --offset LIST`: every offset of the list in one run),
# and one `--latency --offset LIST`.

import statistics

from .. import papers, plot
from ..section import Section, table
from .common import nicbench, rec

TITLE = "pcie-bench: small DMA with many transfers in flight, and DMA read latency"
SIZES = (64, 128, 256, 512, 1024, 2048, 4096)
INFLIGHT = 32
# The offset sweep: every 16 B of the page at 256 B; 64 B at the page's two ends (where its
# alignment and its straddling show) and every 256 B between. MRRS 512 as BENCH_OPTS.
OFFSET_MPS = (128, 256)
OFFSET_SIZES = {256: "0..4080:16", 64: "0..240:16,256..3840:256,3856..4080:16"}
OFFSET_QUICK = "0..240:16,256..3840:512,4032..4080:16"
OFFSET_LAT_COUNT = 20


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
    return out + offset_jobs(cfg)


def offset_jobs(cfg):
    out = []
    for size, offs in OFFSET_SIZES.items():
        offs = OFFSET_QUICK if cfg.quick else offs
        for mps in OFFSET_MPS:
            for d in ("h2c", "c2h"):
                out.append(nicbench(cfg, f"pb_off_{size}_mps{mps}_{d}", "dma", "--dir", d,
                                    "--sizes", size, "--inflight", INFLIGHT, "--min-bytes",
                                    "64K", "--offset", offs, opts=f"mps={mps}",
                                    est=8 if d == "h2c" else 3))
    out.append(nicbench(cfg, "pb_off_lat_256", "dma", "--latency", "--sizes", 256, "--count",
                        OFFSET_LAT_COUNT, "--offset", OFFSET_QUICK if cfg.quick else
                        OFFSET_SIZES[256], est=3))
    return out


def offset_class(offset, size, rcb):
    """'straddle': the transfer crosses a 4 KiB boundary; 'unaligned': it does not, and its
    start is not on the read completion boundary (completions split there); else 'aligned'."""
    if offset % 4096 + size > 4096:
        return "straddle"
    return "aligned" if offset % rcb == 0 else "unaligned"


def offset_rows(res):
    """Every offset point of the sweep: size, mps, dir, offset, class, Gb/s, ratio."""
    rows = []
    for size in OFFSET_SIZES:
        for mps in OFFSET_MPS:
            for d in ("h2c", "c2h"):
                doc = res(f"pb_off_{size}_mps{mps}_{d}")
                rcb = doc["params"]["rcb"]
                if any(r["dev_mps"] != mps for r in doc["records"]):
                    raise ValueError(f"pb_off_{size}_mps{mps}_{d}: the device did not use MPS "
                                     f"{mps}")
                rows += [{"size": size, "mps": mps, "dir": d, "offset": r["offset"],
                          "class": offset_class(r["offset"], size, rcb), "gbps": r["gbps"],
                          "ratio": r["ratio"], "dev_mps": r["dev_mps"]}
                         for r in doc["records"]]
    return rows


def offset_summary(rows):
    """Per size, MPS and direction: Gb/s at offset 0, the mean of each offset class and its
    change from offset 0 (%), the lowest point."""
    out = []
    for size in OFFSET_SIZES:
        for mps in OFFSET_MPS:
            for d in ("h2c", "c2h"):
                pts = [r for r in rows if (r["size"], r["mps"], r["dir"]) == (size, mps, d)]
                at0 = next(r["gbps"] for r in pts if r["offset"] == 0)
                low = min(pts, key=lambda r: r["gbps"])
                row = {"size": size, "mps": mps, "dir": d, "gbps_0": at0,
                       "min_gbps": low["gbps"], "min_offset": low["offset"]}
                for c in ("aligned", "unaligned", "straddle"):
                    g = [r["gbps"] for r in pts if r["class"] == c]
                    row[f"n_{c}"] = len(g)
                    row[f"gbps_{c}"] = statistics.fmean(g) if g else None
                    row[f"pct_{c}"] = 100 * (row[f"gbps_{c}"] / at0 - 1) if g else None
                out.append(row)
    return out


def offset_verdicts(summ, lat):
    out = []
    for s in summ:
        parts = [f"{c} {s[f'pct_{c}']:+.1f} %" for c in ("unaligned", "straddle")
                 if s[f"pct_{c}"] is not None]
        worst = min(s[f"pct_{c}"] or 0 for c in ("aligned", "unaligned", "straddle"))
        if worst > -1:
            what = "no dependence on the offset beyond 1 %"
        else:
            what = "against offset 0: " + ", ".join(parts)
        out.append(f"offset {s['size']} B {s['dir']} MPS {s['mps']}: {s['gbps_0']:.2f} Gb/s at "
                   f"offset 0; {what} (lowest {s['min_gbps']:.2f} Gb/s at {s['min_offset']})")
    by = {}
    for r in lat:
        by.setdefault(r["class"], []).append(r["lat_median_ns"])
    med = {c: statistics.median(v) for c, v in by.items()}
    out.append("read latency of 256 B against the offset: median " + ", ".join(
        f"{c} {med[c]:.0f} ns" for c in ("aligned", "unaligned", "straddle") if c in med))
    return out


def offset_part(res, outdir):
    """The offset sweep's verdicts, plot, markdown and CSV tables."""
    rows = offset_rows(res)
    summ = offset_summary(rows)
    ldoc = res("pb_off_lat_256")
    lat = [{"offset": r["offset"], "class": offset_class(r["offset"], 256,
                                                         ldoc["params"]["rcb"]),
            **{k: r[k] for k in ("requests", "lat_min_ns", "lat_median_ns", "lat_p99_ns")}}
           for r in ldoc["records"]]
    fig, axes = plot.figure(len(OFFSET_MPS) + 1)
    style = {("h2c", 256): ("tab:blue", "-"), ("c2h", 256): ("tab:green", "-"),
             ("h2c", 64): ("tab:blue", ":"), ("c2h", 64): ("tab:green", ":")}
    for ax, mps in zip(axes, OFFSET_MPS):
        for (d, size), (c, ls) in style.items():
            pts = [r for r in rows if (r["size"], r["mps"], r["dir"]) == (size, mps, d)]
            ax.plot([r["offset"] for r in pts], [r["gbps"] for r in pts], color=c, linestyle=ls,
                    linewidth=0 if size == 256 else 1, marker="." if size == 256 else "x",
                    markersize=3, label=f"{d} {size} B")
        ax.set(xlabel="host buffer offset in its 4 KiB page (B)", ylabel="Gb/s",
               title=f"ours: bandwidth, {INFLIGHT} in flight, MPS {mps}")
        ax.legend(fontsize=7)
    axes[-1].plot([r["offset"] for r in lat], [r["lat_median_ns"] for r in lat], linewidth=0,
                  markersize=3, label="median", **plot.OURS)
    axes[-1].plot([r["offset"] for r in lat], [r["lat_p99_ns"] for r in lat], linewidth=0,
                  label="p99", color="tab:cyan", marker="v", markersize=3)
    axes[-1].set(xlabel="host buffer offset (B)", ylabel="ns", title="ours: 256 B read latency")
    axes[-1].legend(fontsize=7)
    plots = plot.save(fig, outdir, "pciebench_offset")
    body = ("\nOurs, bandwidth against the host buffer's offset in its page (pcie-bench's "
            "alignment test; every transfer at the offset in its own page; aligned: on the "
            "read completion boundary, unaligned: not, straddle: the transfer crosses 4 KiB "
            "and the device splits it there; % against offset 0):\n\n"
            + table(["size B", "MPS", "dir", "Gb/s at 0", "aligned", "unaligned", "%",
                     "straddle", "%", "lowest Gb/s", "at offset"],
                    [[s["size"], s["mps"], s["dir"], s["gbps_0"], s["gbps_aligned"],
                      s["gbps_unaligned"], s["pct_unaligned"], s["gbps_straddle"],
                      s["pct_straddle"], s["min_gbps"], s["min_offset"]] for s in summ])
            + f"\nEvery point: `csv/pciebench_offset.csv`; read latency of 256 B at each offset "
              f"({OFFSET_LAT_COUNT} reads each): `csv/pciebench_offset_lat.csv`.\n")
    return (offset_verdicts(summ, lat), plots, body,
            {"pciebench_offset": rows, "pciebench_offset_summary": summ,
             "pciebench_offset_lat": lat})


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
    off_verdicts, off_plots, off_body, off_csv = offset_part(res, outdir)
    verdicts += off_verdicts
    plots.append(off_plots)
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
                      x["lat_max_ns"]] for x in lat])
            + off_body)
    return Section("pcie-bench", TITLE,
                   "LitePCIe's DMA engine with its descriptor table kept full stands for "
                   "pcie-bench's bandwidth test, at host buffer offsets for its alignment test; "
                   "single reads timed at the PHY for its latency test.", verdicts, body, plots,
                   {"pciebench_bw": bw, "pciebench_lat": lat, **off_csv})
