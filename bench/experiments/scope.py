# scope.py: the on-chip analyzer's own section: occupancy of every probed bus during DMA in both
# directions plus frames through the NIC, and a triggered capture for GTKWave (trace.vcd and
# trace.gtkw beside the report).

from ..section import Section, table
from .common import nicscope

TITLE = "The bus analyzer: occupancy under DMA and frames, and a triggered capture"
TRIGGER = "rise:mac_tx.valid"


def jobs(cfg):
    return [
        nicscope(cfg, "scope_occupancy", "report", "--load", "dma+tx", "--bytes", 262144,
                 "--frames", 64, est=8),
        nicscope(cfg, "scope_capture", "capture", "--load", "dma+tx", "--bytes", 65536,
                 "--frames", 4, "--trigger", TRIGGER, "--pre", 256, "--post", 1200,
                 "--vcd", f"{cfg.outdir}/trace.vcd", "--gtkw", f"{cfg.outdir}/trace.gtkw", est=6),
    ]


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
    body = ("Ours (`nicscope report --load dma+tx`):\n\n"
            + table(["probe", "group", "busy %", "stall %", "idle %", "bytes", "frames/TLPs",
                     "Gb/s"], rows)
            + "\nOpen the capture with `gtkwave trace.gtkw` (in this folder).\n")
    csv = [dict(zip(["probe", "group", "busy_pct", "stall_pct", "idle_pct", "bytes", "frames",
                     "gbps"], r)) for r in rows]
    return Section("scope", TITLE, "No paper: the instrument the papers' logic analyzers stand "
                   "for, on our own buses.", verdicts, body, [], {"scope_occupancy": csv})
