# SPDX-License-Identifier: BSD-2-Clause
# hp_ots.py: seed 003 (HP, "OTS/9000 Performance Information", 1992): throughput against TPDU
# size and window, request/reply transactions per second for 100 B and 3840 B requests with
# 100 B replies, and the checksum computed by the host on against off.
#
# Ours, one job per point: `nicbench tx --window` per (frame size, frames sent and not yet
# received: an end-to-end window like TP4's); `nicbench rr
# --reply-size 100` between two simulated hosts; `nicbench tx --csum` against without, with the
# host's CPU time per frame. The request/reply runs write the wire in RESULTS/rr_wire_<size>.pcapng.

from .. import papers, plot
from ..section import Section, table
from .common import nicbench, rec, umlbench

TITLE = "HP OTS/9000 (1992): TPDU size x window, request/reply, checksum on/off"
# The paper's own sweep points and sizes, from its tables; windows 1 and 2 added below its 3.
_SWEEP = papers.table("003_tpdu_window_lan")
TPDUS = tuple(sorted({int(p["tpdu_bytes"]) for p in _SWEEP if p["sweep"] == "tpdu"}))
WINDOWS = tuple(sorted({1, 2} | {int(p["window_tpdus"]) for p in _SWEEP}))
RR_REQ = tuple(sorted({int(p["request_size_bytes"])
                       for p in papers.table("003_request_reply_lan")}))
RR_REPLY = 100                          # "the reply is always 100 bytes" (not a table column)
SDU = int(papers.table("003_checksum_on_off")[0]["sdu_bytes"])
# The kernel path's frames: the largest UDP datagram one 1500 B MTU frame carries (the paper's
# 3840 B SDU would be three IP fragments).
KERNEL_FRAME = 1514


def _frames(cfg, size):
    return max(60 if cfg.quick else 120, (64 if cfg.quick else 384) * 1024 // size)


def jobs(cfg):
    out = []
    for t in TPDUS:
        for w in WINDOWS:
            f = _frames(cfg, t)
            out.append(nicbench(cfg, f"s003_tx_{t}_w{w}", "tx", "--size", t, "--window", w,
                                "--frames", f, est=f * t * 8e-9 * 3 + 0.5))
    for q in RR_REQ:
        out.append(nicbench(cfg, f"s003_rr_{q}", "rr", "--sizes", q, "--reply-size", RR_REPLY,
                            "--count", 40 if cfg.quick else 200, est=4,
                            opts=f"peer=1,pcap={cfg.outdir}/rr_wire_{q}.pcapng"))
    for on in (False, True):
        out.append(nicbench(cfg, f"s003_csum_{'on' if on else 'off'}", "tx", "--size", SDU,
                            "--frames", 100 if cfg.quick else 500, *(("--csum",) if on else ()),
                            est=5))
    out.append(umlbench(cfg, "s003_kernel_csum", "--frames", 0, "--csum-frames",
                        50 if cfg.quick else 200, "--csum-rounds", 4, "--size", KERNEL_FRAME,
                        "--coalesce",
                        "0=rx-usecs 0 rx-frames 1", est=60))
    return out


def _kernel_csum(res, c):
    """The kernel path's rounds with checksum c, summed; sendto() ns: the median of the rounds'
    medians (rounds alternate on and off)."""
    rs = [r for r in res("s003_kernel_csum")["records"] if r.get("csum") == c]
    k = {f: sum(r[f] for r in rs) for f in ("frames", "good", "pcie_mmio_writes",
                                             "pcie_bytes_down_payload", "irqs_rx_proc")}
    med = sorted(r["send_ns_median"] for r in rs)
    k.update(csum=c, rounds=len(rs),
             send_ns_median=(med[(len(med) - 1) // 2] + med[len(med) // 2]) / 2,
             send_ns_mean=sum(r["send_ns_mean"] * r["frames"] for r in rs) / max(1, k["frames"]),
             guest_frames_per_s=sum(r["guest_frames_per_s"] for r in rs) / len(rs),
             rounds_ns=" / ".join(f"{m:.0f}" for m in (r["send_ns_median"] for r in rs)))
    return k


def section(cfg, res, outdir):
    g = {}
    for t in TPDUS:
        for w in WINDOWS:
            g[t, w] = rec(res, f"s003_tx_{t}_w{w}")["gbps"] * 1e3 / 8     # MB/s
    best = max(g, key=g.get)
    need = {t: next((w for w in WINDOWS if g[t, w] >= 0.95 * max(g[t, x] for x in WINDOWS)),
                    None) for t in TPDUS}
    paper = papers.table("003_tpdu_window_lan")
    rr = {q: rec(res, f"s003_rr_{q}") for q in RR_REQ}
    tps = {q: 1e9 / r["rtt_mean_ns"] for q, r in rr.items()}
    small, large = RR_REQ
    prr = papers.table("003_request_reply_lan")
    xti = {int(p["request_size_bytes"]): float(p["requester_trans_per_s"]) for p in prr
           if p["api"] == "XTI"}
    on, off = rec(res, "s003_csum_on"), rec(res, "s003_csum_off")
    pcs = {p["configuration"]: p for p in papers.table("003_checksum_on_off")}
    pon, poff = pcs["with checksum"], pcs["without checksum"]
    cpu_paper = (float(pon["cpu_util_pct_sender"]) / float(poff["cpu_util_pct_sender"]) - 1) * 100
    thr_paper = (float(pon["throughput_kbytes_per_s"]) / float(poff["throughput_kbytes_per_s"])
                 - 1) * 100
    host_on, host_off = on["host_ns_per_frame"], off["host_ns_per_frame"]
    kon, koff = (_kernel_csum(res, c) for c in ("on", "off"))

    verdicts = [
        f"TPDU x window: best {g[best]:.1f} MB/s at {best[0]} B x {best[1]}; windows needed for "
        "95 % of each size's best: " + ", ".join(f"{t} B -> {w}" for t, w in need.items())
        + " (paper, XTI/802.3: best "
        + max(paper, key=lambda p: float(p["throughput_kbytes_per_s"]))["throughput_kbytes_per_s"]
        + " KB/s at TPDU "
        + max(paper, key=lambda p: float(p["throughput_kbytes_per_s"]))["tpdu_bytes"] + " x window "
        + max(paper, key=lambda p: float(p["throughput_kbytes_per_s"]))["window_tpdus"] + ")",
        f"request/reply: {tps[small]:.0f} transactions/s with {small} B requests, "
        f"{tps[large]:.0f} with {large} B, x{tps[small] / tps[large]:.2f} (paper XTI: "
        f"{xti[small]:.0f} and {xti[large]:.0f}, x{xti[small] / xti[large]:.2f})",
        f"checksum: host CPU per {SDU} B frame {host_off:.0f} -> {host_on:.0f} ns "
        f"({(host_on / host_off - 1) * 100:+.0f} %), of which checksum "
        f"{on.get('host_csum_ns_per_frame', 0):.0f} ns; throughput "
        f"{(on['gbps'] / off['gbps'] - 1) * 100:+.1f} % (the simulated host does not gate the "
        f"link) (paper: sender CPU {cpu_paper:+.0f} %, throughput {thr_paper:+.0f} %)",
        f"checksum through the kernel (nicdrv.ko in a UML guest, {KERNEL_FRAME} B UDP frames, "
        f"checksum by the kernel against SO_NO_CHECK; each frame back with its checksum field "
        f"set / zero: {kon['good']}/{kon['frames']} and {koff['good']}/{koff['frames']}): "
        f"sendto() median off -> on {koff['send_ns_median']:.0f} -> {kon['send_ns_median']:.0f} ns "
        f"({(kon['send_ns_median'] / koff['send_ns_median'] - 1) * 100:+.1f} %; median of "
        f"{kon['rounds']} alternating rounds, guest wall time under UML, whose syscall cost "
        f"dominates); PCIe bytes down per frame "
        f"{koff['pcie_bytes_down_payload'] / koff['frames']:.0f} and "
        f"{kon['pcie_bytes_down_payload'] / kon['frames']:.0f}",
    ]
    body = ("### TPDU size x window\n\nPaper (`003_tpdu_window_lan.csv`, XTI over 802.3, "
            "KB/s):\n\n"
            + table(["sweep", "TPDU B", "window", "KB/s", "sender CPU %"],
                    [[p["sweep"], p["tpdu_bytes"], p["window_tpdus"], p["throughput_kbytes_per_s"],
                      p["cpu_util_pct_sender"]] for p in paper])
            + "\nOurs (frame size x window: frames sent and not yet received; MB/s of frame "
              "bytes):\n\n"
            + table(["frame B", *[f"window {w}" for w in WINDOWS]],
                    [[t, *[g[t, w] for w in WINDOWS]] for t in TPDUS])
            + "\n### Request/reply\n\nPaper (`003_request_reply_lan.csv`):\n\n"
            + table(["API", "request B", "requester trans/s", "replier trans/s"],
                    [[p["api"], p["request_size_bytes"], p["requester_trans_per_s"],
                      p["replier_trans_per_s"]] for p in prr])
            + f"\nOurs (reply {RR_REPLY} B; trans/s = 1 / mean round trip, sim time):\n\n"
            + table(["request B", "trans/s", "RTT median ns", "RTT p99 ns"],
                    [[q, tps[q], rr[q]["rtt_median_ns"], rr[q]["rtt_p99_ns"]] for q in RR_REQ])
            + "\n### Checksum on/off\n\nPaper (`003_checksum_on_off.csv`):\n\n"
            + table(["configuration", "KB/s", "sender CPU %", "receiver CPU %"],
                    [[p["configuration"], p["throughput_kbytes_per_s"], p["cpu_util_pct_sender"],
                      p["cpu_util_pct_receiver"]] for p in (pon, poff)])
            + f"\nOurs ({SDU} B frames; host CPU ns per frame is CPU time of the host code on "
              "this machine, outside the simulator):\n\n"
            + table(["checksum", "Mb/s", "host CPU ns/frame", "of which checksum ns"],
                    [["on", on["gbps"] * 1e3, host_on, on.get("host_csum_ns_per_frame")],
                     ["off", off["gbps"] * 1e3, host_off, off.get("host_csum_ns_per_frame")]])
            + f"\nThrough the kernel (`sw/uml/umlbench.py`: nicdrv.ko in a UML guest, "
              f"{KERNEL_FRAME} B UDP frames out and back through the MAC loopback; sendto() "
              "ns is the guest's wall time per call; PCIe figures from the host model, per "
              "frame):\n\n"
            + table(["checksum", "rounds", "frames", "good", "sendto median ns",
                     "per round", "sendto mean ns", "guest frames/s", "MMIO writes/frame",
                     "PCIe bytes down/frame", "RX irqs"],
                    [[k["csum"], k["rounds"], k["frames"], k["good"], k["send_ns_median"],
                      k["rounds_ns"], k["send_ns_mean"], k["guest_frames_per_s"],
                      k["pcie_mmio_writes"] / k["frames"],
                      k["pcie_bytes_down_payload"] / k["frames"], k["irqs_rx_proc"]]
                     for k in (kon, koff)]))

    fig, (a, b, c, d) = plot.figure(4, width=4.2)
    for w in WINDOWS:
        a.plot(TPDUS, [g[t, w] for t in TPDUS], marker="o", label=f"window {w}")
    a.set(xscale="log", xlabel="frame size (B)", ylabel="MB/s", title="ours: size x window")
    a.legend(fontsize=7)
    # Paper and ours on the same axes, each as a fraction of its own best.
    pw = [p for p in paper if p["sweep"] == "window"]
    pbest = max(float(p["throughput_kbytes_per_s"]) for p in paper)
    b.plot([int(p["window_tpdus"]) for p in pw],
           [float(p["throughput_kbytes_per_s"]) / pbest for p in pw],
           label=f"paper, TPDU {pw[0]['tpdu_bytes']}", **plot.PAPER)
    b.plot(WINDOWS, [g[TPDUS[-1], w] / g[best] for w in WINDOWS], label=f"ours, {TPDUS[-1]} B",
           **plot.OURS)
    b.set(xlabel="window", ylabel="fraction of best", title="throughput against window")
    b.legend(fontsize=7)
    pt = [p for p in paper if p["sweep"] == "tpdu"]
    wt = int(pt[0]["window_tpdus"])
    c.plot([int(p["tpdu_bytes"]) for p in pt],
           [float(p["throughput_kbytes_per_s"]) / pbest for p in pt],
           label=f"paper, window {wt}", **plot.PAPER)
    c.plot(TPDUS, [g[t, wt] / g[best] for t in TPDUS], label=f"ours, window {wt}", **plot.OURS)
    c.set(xscale="log", xlabel="TPDU / frame size (B)", ylabel="fraction of best",
          title="throughput against TPDU size")
    c.legend(fontsize=7)
    d.bar([f"ours {q}" for q in RR_REQ], [tps[q] for q in RR_REQ], color="tab:blue")
    d2 = d.twinx()
    d2.bar([f"paper {q}" for q in RR_REQ], [xti[q] for q in RR_REQ], color="tab:red")
    d.set(ylabel="ours trans/s", title=f"request/reply (reply {RR_REPLY} B)")
    d2.set_ylabel("paper trans/s (XTI)")
    plots = [plot.save(fig, outdir, "s003_tpdu_rr")]
    csv = [{"frame": t, "window": w, "mbps": g[t, w]} for t, w in g]
    return Section("003", TITLE,
                   "Our frame size stands for the TPDU, frames sent and not yet received for the "
                   "window, "
                   "two simulated hosts for the 842 and 827, and a checksum the host computes "
                   "over each frame for TP4's.", verdicts, body, plots,
                   {"s003_window": csv,
                    "s003_rr": [{"request": q, "tps": tps[q]} for q in RR_REQ]})
