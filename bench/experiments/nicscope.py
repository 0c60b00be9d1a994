# SPDX-License-Identifier: BSD-2-Clause
# nicscope.py: the on-chip analyzer's own section ("scope"): occupancy of every probed bus during
# DMA in both directions plus frames through the NIC, a triggered capture for GTKWave (trace.vcd and
# trace.gtkw beside the report), and the per-request DMA read latency breakdown (`nicscope
# breakdown`) on the raw DMA engine and the NIC's TX path (its descriptor and payload reads, class
# by class), with Little's law per window and class (the breakdown's own occupancy, and the read
# tags from three counters), the write breakdown on the raw DMA writer (queue, credit, phy per MWr),
# and the occupancy levels.

import json
from pathlib import Path

from litex_soc.gateware_key import gateware_key

from .. import plot
from ..section import Section, table
from .common import nicscope

ROOT = Path(__file__).resolve().parents[2]

TITLE = "The bus analyzer: occupancy, a triggered capture, where a DMA read's time goes"
TRIGGER = "rise:mac_tx.valid"
# Per path: the request classes its reads are of, the sizes.
BD_PATHS = {"dma": (("raw_dma",), "64,128,256,512,1024,2048,4096"),
            "tx": (("nic_desc", "nic_payload"), "64,256,512,1024,1514")}
BD_PANELS = [(p, c) for p, (classes, _s) in BD_PATHS.items() for c in classes]
BD_TITLES = {"raw_dma": "ours: raw DMA reads", "nic_desc": "ours: NIC descriptor reads (TX path)",
             "nic_payload": "ours: NIC payload reads (TX path)"}
BD_COUNT = 32
BD_QUICK = {"dma": "64,4096", "tx": "64,1514"}
WBD_SIZES, WBD_QUICK = "64,128,256,512,1024,2048,4096", "64,4096"


def jobs(cfg):
    return [
        nicscope(cfg, "scope_occupancy", "report", "--load", "dma+tx", "--bytes", 262144,
                 "--frames", 64, "--irq", est=8),
        nicscope(cfg, "scope_csr", "report", "--load", "csr", est=2),
        nicscope(cfg, "scope_stream", "capture", "--stream", "--load", "tx", "--frames",
                 100 if cfg.quick else 1000, "--vcd", f"{cfg.outdir}/jobs/deep.vcd", est=10),
        nicscope(cfg, "scope_stream_throttled", "capture", "--stream", "--load", "tx",
                 "--frames", 16, "--ring-log2", 8, "--throttle-ns", 20000,
                 "--vcd", f"{cfg.outdir}/jobs/deep_throttled.vcd", est=2),
        nicscope(cfg, "scope_capture", "capture", "--load", "dma+tx", "--bytes", 65536,
                 "--frames", 4, "--trigger", TRIGGER, "--pre", 256, "--post", 1200,
                 "--vcd", f"{cfg.outdir}/trace.vcd", "--gtkw", f"{cfg.outdir}/trace.gtkw", est=6),
    ] + [nicscope(cfg, f"scope_breakdown_{p}", "breakdown", "--path", p, "--sizes",
                  BD_QUICK[p] if cfg.quick else sizes, "--count", 8 if cfg.quick else BD_COUNT,
                  est=6) for p, (_classes, sizes) in BD_PATHS.items()] + [
        nicscope(cfg, "scope_breakdown_c2h", "breakdown", "--path", "c2h", "--sizes",
                 WBD_QUICK if cfg.quick else WBD_SIZES, "--count", 8 if cfg.quick else BD_COUNT,
                 est=6)]


def wr_breakdown_part(res):
    """The raw DMA writer's writes per transfer size: mean ns per stage, Little's law."""
    doc = res("scope_breakdown_c2h")["result"]
    ns, stages = doc["ns_per_cycle"], doc["wr_stages"]
    rows = []
    for row in doc["sizes"]:
        c = row["wr_classes"]["raw_dma"]
        st, w = c["stages"], row["window_cycles"]
        r = {"size": row["size"], "writes": c["count"]}
        r.update({f"{n}_ns": st[n]["mean_ns"] for n in stages})
        r.update({"total_min_ns": st["total"]["min"] * ns,
                  "total_max_ns": st["total"]["max"] * ns,
                  "mean_outstanding": c["occupancy"] / w,
                  "rate_x_latency": (c["count"] / w) * (st["total"]["sum"] / c["count"]),
                  "model_crosschecked": row["wr_model_crosschecked"]})
        rows.append(r)
    parts = [s for s in stages if s != "total"]
    verdicts = [f"write breakdown, raw DMA writer, {r['size']} B transfers, mean ns per MWr: "
                + ", ".join(f"{s} {r[f'{s}_ns']:.1f}" for s in parts)
                + f" = total {r['total_ns']:.1f} (min {r['total_min_ns']:.0f}, max "
                  f"{r['total_max_ns']:.0f}; {r['writes']} MWrs)"
                for r in rows if r["size"] in (64, 4096)]
    verdicts.append(f"cross-check: {doc['wr_model_crosschecked']} write breakdown counts equal "
                    "the host model's MWr timestamps with the probe pins' times of the same "
                    "writes")
    body = ("\nWhere a DMA write's time goes (`nicscope breakdown --path c2h`, raw DMA writer, "
            f"{doc['count']} transfers per size; mean ns per MWr TLP; queue: its first beat raised "
            "at the writer's port -> granted by the crossbar's arbiters; credit: -> taken by the "
            "packetizer; phy: -> the MWr's first beat on the PHY):\n\n"
            + table(["size B", "MWrs"] + stages + ["total min", "total max", "outstanding",
                                                   "rate x latency"],
                    [[r["size"], r["writes"]] + [r[f"{s}_ns"] for s in stages]
                     + [r["total_min_ns"], r["total_max_ns"], r["mean_outstanding"],
                        r["rate_x_latency"]] for r in rows]))
    return verdicts, body, {"scope_wr_breakdown": rows}


def breakdown_rows(res):
    """One row per path, size and request class: its mean ns per stage, counts and Little's
    law (the read tags' is the window's, all classes)."""
    rows = []
    for p, cls in BD_PANELS:
        doc = res(f"scope_breakdown_{p}")["result"]
        ns = doc["ns_per_cycle"]
        for row in doc["sizes"]:
            c = row["classes"][cls]
            w = row["window_cycles"]
            st = c["stages"]
            if not c["count"]:
                raise ValueError(f"scope breakdown {p} {row['size']} B: no {cls} reads")
            r = {"path": p, "size": row["size"], "class": cls, "reads": c["count"]}
            r.update({f"{n}_ns": st[n]["mean_ns"] for n in doc["stages"]})
            r.update({"total_min_ns": st["total"]["min"] * ns,
                      "total_max_ns": st["total"]["max"] * ns,
                      # Little's law: mean outstanding (occupancy integral / window) against
                      # arrival rate (reads / window) x mean latency (latency sum / reads).
                      "mean_outstanding": c["occupancy"] / w,
                      "rate_x_latency": (c["count"] / w) * (st["total"]["sum"] / c["count"]),
                      "model_crosschecked": row["model_crosschecked"],
                      "class_crosschecked": c["model_crosschecked"]})
            lt = row["little_tags"]
            r.update({"mean_tags": lt["mean_tags"], "mrd_rate_x_hold":
                      lt["mrd_rate"] * lt["mean_hold_cycles"], "tags_diff_pct": lt["diff_pct"]})
            rows.append(r)
    rows.sort(key=lambda r: (list(BD_PATHS).index(r["path"]), r["size"],
                             BD_PANELS.index((r["path"], r["class"]))))
    return rows, doc["stages"]


def breakdown_part(res, outdir):
    rows, stages = breakdown_rows(res)
    parts = [s for s in stages if s != "total"]
    fig, axes = plot.figure(len(BD_PANELS), width=6.5)
    colors = ["tab:gray", "tab:olive", "tab:brown", "tab:purple", "tab:blue", "tab:cyan",
              "tab:orange"]
    for ax, (p, cls) in zip(axes, BD_PANELS):
        pts = [r for r in rows if (r["path"], r["class"]) == (p, cls)]
        x = [str(r["size"]) for r in pts]
        bottom = [0.0] * len(pts)
        for s, col in zip(parts, colors):
            v = [r[f"{s}_ns"] for r in pts]
            ax.bar(x, v, bottom=bottom, color=col, label=s)
            bottom = [b + d for b, d in zip(bottom, v)]
        ax.set(xlabel="transfer size (B)" if p == "dma" else "frame size (B)",
               ylabel="mean ns per read request",
               title=BD_TITLES.get(cls, cls))
        ax.legend(fontsize=7)
    plots = plot.save(fig, outdir, "scope_breakdown")
    worst = max(abs(r["mean_outstanding"] - r["rate_x_latency"]) / r["mean_outstanding"]
                for r in rows)
    verdicts = []
    for p, cls, size, what in (("dma", "raw_dma", 64, "transfers"),
                               ("dma", "raw_dma", 4096, "transfers"),
                               ("tx", "nic_desc", 1514, "frames, descriptor reads"),
                               ("tx", "nic_payload", 64, "frames, payload reads"),
                               ("tx", "nic_payload", 1514, "frames, payload reads")):
        r = next((r for r in rows if (r["path"], r["class"], r["size"]) == (p, cls, size)),
                 None)
        if r is None:
            continue
        verdicts.append(f"breakdown, {p} {size} B {what}, mean ns per read request: "
                        + ", ".join(f"{s} {r[f'{s}_ns']:.1f}" for s in parts)
                        + f" = total {r['total_ns']:.1f} (min {r['total_min_ns']:.0f}, max "
                          f"{r['total_max_ns']:.0f})")
    verdicts.append(f"Little's law over {len(rows)} windows and classes: mean outstanding reads "
                    "against "
                    f"rate x mean latency, largest difference {100 * worst:.3f} %; e.g. dma "
                    + ", ".join(f"{r['size']} B {r['mean_outstanding']:.3f} = "
                                f"{r['rate_x_latency']:.3f}"
                                for r in rows if r["path"] == "dma" and r["size"] in (64, 4096)))
    worst_tags = max(rows, key=lambda r: r["tags_diff_pct"])
    windows = len({(r["path"], r["size"]) for r in rows})
    verdicts.append(f"Little's law on read tags over {windows} windows, three counters (tag "
                    "FIFO level, PHY MRd count, breakdown phy+rtt+cpl): largest difference "
                    f"{worst_tags['tags_diff_pct']:.3f} % ({worst_tags['path']} "
                    f"{worst_tags['size']} B: {worst_tags['mean_tags']:.4f} tags in use = "
                    f"{worst_tags['mrd_rate_x_hold']:.4f})")
    crossed = sum(r["model_crosschecked"] for r in rows if r["class"] == BD_PATHS[r["path"]][0][0])
    verdicts.append(f"cross-check: {crossed} breakdown counts (rtt and cpl stages, per class; "
                    "the model's TX path reads classed by address: descriptor rings or payload "
                    "buffers) equal the host model's timestamps")
    body = ("\nWhere a DMA read request's time goes (`nicscope breakdown`, "
            f"{BD_COUNT} transfers or frames per size; mean ns per read request; queue: raised "
            "by its engine -> granted by the crossbar; tag: -> issued with a tag; credit: -> "
            "taken by the packetizer; phy: -> first MRd beat on the PHY; rtt: -> first "
            "completion beat back; cpl: -> last completion beat; reorder: -> handed to the "
            "engine in request order):\n\n"
            + table(["path", "size B", "class", "reads"] + stages
                    + ["outstanding", "rate x latency", "tags in use", "MRd rate x hold"],
                    [[r["path"], r["size"], r["class"], r["reads"]]
                     + [r[f"{s}_ns"] for s in stages]
                     + [r["mean_outstanding"], r["rate_x_latency"], r["mean_tags"],
                        r["mrd_rate_x_hold"]] for r in rows]))
    return verdicts, plots, body, {"scope_breakdown": rows}


def cost_path(outdir):
    """The last `make cost` result: beside the report, else where `make cost` writes it."""
    for p in (Path(outdir) / "analyzer_cost.json", ROOT / "results" / "analyzer_cost.json"):
        if p.exists():
            return p
    return None


# The cost table's columns: header, CSV name, family and figure in the `make cost` summaries.
COST_COLUMNS = [("xc7 LUT", "xc7_lut", "xc7", "lut"), ("xc7 FF", "xc7_ff", "xc7", "ff"),
                ("xc7 36 Kb BRAM", "xc7_bram36", "xc7", "bram_36k_equiv"),
                ("xc7 LUTRAM", "xc7_lutram", "xc7", "lutram"),
                ("ECP5 LUT4 eq.", "ecp5_lut4_equiv", "ecp5", "lut4_equiv"),
                ("ECP5 FF", "ecp5_ff", "ecp5", "ff"),
                ("ECP5 DP16KD", "ecp5_dp16kd", "ecp5", "dp16kd")]


def cost_part(path, key):
    """The analyzer's cost from a `make cost` result (litex_soc/nicscope/analyzer_cost.py), if
    any: verdicts, markdown and CSV rows; marked stale unless it measured this gateware (key:
    litex_soc/gateware_key.py)."""
    if path is None:
        return (["analyzer cost: not measured on this tree (`make cost` writes "
                 "results/analyzer_cost.json)"], "", {})
    doc = json.loads(Path(path).read_text())
    got = doc.get("gateware_key")
    state = ("current" if got == key else
             f"STALE: measured on gateware {(got or 'unknown')[:12]}, this tree is {key[:12]}; "
             "`make cost` measures it again")
    verdicts, body, rows = [], f"\nThe analyzer's cost (`make cost`, {state}):\n\n", []
    if "xc7" in doc and "ecp5" in doc:
        # The whole analyzer's summaries, then what each build option adds.
        figures = [("whole analyzer", {fam: doc[fam]["summary"] for fam in ("xc7", "ecp5")})]
        figures += [(f"{name}: {f['what']}", f) for name, f in doc.get("features", {}).items()]
        rows = [[what] + [f[fam][k] for _h, _c, fam, k in COST_COLUMNS] for what, f in figures]
        x, e = figures[0][1]["xc7"], figures[0][1]["ecp5"]
        verdicts.append(f"analyzer cost ({state}): {x['lut']} LUT, {x['ff']} FF, "
                        f"{x['bram_36k_equiv']:g} x 36 Kb BRAM on Artix-7; {e['lut4_equiv']} LUT4 "
                        f"eq., {e['ff']} FF, {e['dp16kd']} DP16KD on ECP5")
        body += table(["analyzer (rows below it: what each build option adds)"]
                      + [h for h, _c, _f, _k in COST_COLUMNS], rows)
    runs = doc.get("fmax")
    if runs:
        frows = [[v, seed, r.get("sys_fmax_mhz") if r.get("routed") else None,
                  r.get("sys_fmax_placed_mhz")]
                 for v in ("without", "with") for seed, r in runs[v].items()]
        body += ("\nThe SoC's sys Fmax with and without the analyzer (open ECP5 flow, one row "
                 "per placer seed; routed n/a: not routed):\n\n"
                 + table(["analyzer", "seed", "Fmax routed (MHz)", "Fmax placed, est. (MHz)"],
                         frows))
        for kind, d in doc.get("fmax_delta_mhz", {}).items():
            rt = d.get("rank_test")
            if rt:
                verdicts.append(
                    f"SoC Fmax with the analyzer ({kind}, {state}): median {d['median']:+.2f} "
                    f"MHz, exact rank test p = {rt['p']:.3f} "
                    f"({'not ' if rt['p'] >= 0.05 else ''}set apart at the 5 % level)")
        without = doc.get("options", {}).get("soc_analyzer_without")
        if without:
            verdicts.append(f"the SoC runs' analyzer was built without: {without}")
    else:
        verdicts.append(f"SoC Fmax with and without the analyzer: not in the last `make cost` "
                        f"result ({state})")
    csv = {"scope_cost": [dict(zip(["what"] + [c for _h, c, _f, _k in COST_COLUMNS], r))
                          for r in rows]}
    return verdicts, body, csv


def section(cfg, res, outdir):
    occ = res("scope_occupancy")["result"]
    ns = occ["ns_per_cycle"]
    rows = [[name, p["group"], p["busy_pct"], p["stall_pct"], p["idle_pct"], p["bytes"],
             p["frames"], p["bytes"] * 8 / (occ["window_cycles"] * ns)]
            for name, p in occ["probes"].items()]
    busiest = max(occ["probes"].items(), key=lambda kv: kv[1]["busy_pct"])
    stalled = max(occ["probes"].items(), key=lambda kv: kv[1]["stall_pct"])
    cap = res("scope_capture")["result"]
    verdicts = [
        f"occupancy over {occ['window_cycles']} cycles of DMA ({occ['load_bytes']} B each way) "
        f"and {occ['load_frames']} frames: busiest {busiest[0]} {busiest[1]['busy_pct']:.1f} %, "
        f"most stalled {stalled[0]} {stalled[1]['stall_pct']:.1f} %; "
        f"{occ['crosschecked_counts']} counts cross-checked against the host model",
        f"capture: trigger {TRIGGER} at cycle {cap['trigger_cycle']}, {cap['entries']} entries "
        f"over cycles {cap['first_cycle']}..{cap['end_cycle']}, overflow {cap['overflow']}: "
        "trace.vcd + trace.gtkw",
    ]
    lv = occ["levels"]
    verdicts.append("occupancy levels (mean / max): " + ", ".join(
        f"{n} {v['mean']:.2f} / {v['max']}" for n, v in lv.items()
        if n in ("rd_tags", "nic_rd", "fc_pd", "fc_nph", "txq0_desc", "tx_fifo")))
    ev = occ["events"]
    idle = res("scope_csr")["result"]["events"]["mmio_rd"]
    mmio, db, msi = ev["mmio_rd"], ev["db_desc"], ev["rx_irq_msi"]
    verdicts.append(
        f"device-side latencies: MMIO read on the PHY -> its completion {idle['mean_ns']:.1f} ns "
        f"idle ({idle['count']} reads), {mmio['mean_ns']:.1f} ns under DMA ({mmio['count']}); "
        f"TX doorbell -> descriptor read {db['mean_ns']:.1f} ns mean (min {db['min'] * ns:.0f}, "
        f"max {db['max'] * ns:.0f}, {db['count']} doorbells); RX interrupt decision -> MSI "
        f"{msi['mean_ns']:.1f} ns ({msi['count']} MSIs)")
    for job, what in (("scope_stream", "drained as fast as the host can"),
                      ("scope_stream_throttled", "a ring of 256 drained every 20 us at most")):
        s = res(job)["result"]
        cycles = s["last_cycle"] - s["first_cycle"]
        verdicts.append(
            f"deep capture ({what}): {s['entries_taken']} entries in host memory over "
            f"{cycles * ns / 1000:.1f} us ({s['entries_taken'] * 16 * 8 / (cycles * ns):.2f} "
            f"Gb/s of trace), {s['entries_due']} due, {s['lost']} lost in {s['gaps']} gaps")
    body = ("Ours (`nicscope report --load dma+tx --irq`):\n\n"
            + table(["probe", "group", "busy %", "stall %", "idle %", "bytes", "frames/TLPs",
                     "Gb/s"], rows)
            + "\nOccupancy levels over the same window (mean: the integral over the window's "
              "cycles; rd_tags: LitePCIe read tags in use; nic_rd: NIC reads outstanding; fc_*: "
              "transmit credits in use; txqN_desc: descriptors in flight; *_fifo: bytes):\n\n"
            + table(["level", "mean", "max", "integral"],
                    [[n, v["mean"], v["max"], v["sum"]] for n, v in lv.items()])
            + "\nOpen the capture with `gtkwave trace.gtkw` (in this folder).\n")
    csv = {"scope_occupancy": [dict(zip(["probe", "group", "busy_pct", "stall_pct", "idle_pct",
                                         "bytes", "frames", "gbps"], r)) for r in rows]}
    bd_verdicts, bd_plots, bd_body, bd_csv = breakdown_part(res, outdir)
    csv.update(bd_csv)
    wbd_verdicts, wbd_body, wbd_csv = wr_breakdown_part(res)
    bd_verdicts += wbd_verdicts
    bd_body += wbd_body
    csv.update(wbd_csv)
    cost_verdicts, cost_body, cost_csv = cost_part(cost_path(outdir), gateware_key())
    bd_verdicts += cost_verdicts
    bd_body += cost_body
    csv.update(cost_csv)
    return Section("scope", TITLE, "No paper: the instrument the papers' logic analyzers stand "
                   "for, on our own buses.", verdicts + bd_verdicts, body + bd_body, [bd_plots],
                   csv)
