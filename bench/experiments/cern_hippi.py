# SPDX-License-Identifier: BSD-2-Clause
# cern_hippi.py: seed 001 (CERN, "HIPPI in the CERN Computer Centre", 1996): aggregate
# throughput as a table of buffer size x concurrent streams, and the per-stream limit set by
# window / latency ("latency limited": 64 kB window, ~3 ms -> ~20 MB/s).
#
# Ours, one job per cell: `nicbench tx --window` over S TX queues (streams, 1..4: the SoC's
# queues), each with an end-to-end window of W kB = W frames of 1024 B sent and not yet received,
# at the model's default host latency and with the host memory's read latency raised
# (mem_read_latency_ns); one job per latency with a window of one frame measures a frame's round
# trip. Per-stream rate is set beside window / round trip.

from .. import papers, plot
from ..section import Section, table
from .common import nicbench, rec

TITLE = "CERN HIPPI (1996): buffer size x concurrent streams, and the latency limit"
FRAME = 1024
BUFFERS_KB = (1, 2, 4, 8, 16, 63)
STREAMS = (1, 2, 3, 4)
LATENCIES = {"default": (500, ""), "raised": (50000, "mem_read_latency_ns=50000")}
SIM_NS = 3e6            # simulated time per cell, about


def _frames(cfg, lat_ns, window_kb, streams):
    """Frames for about SIM_NS of simulated time at the rate the cell should reach (the wire,
    or window / round trip of two reads), and at least 2 windows per stream."""
    mbps = min(125.0, window_kb * FRAME / (2 * lat_ns) * 1e3)
    n = max(2 * window_kb * streams, int(mbps * 1e6 * SIM_NS * 1e-9 / FRAME))
    return max(4 * streams, n // 4) if cfg.quick else n


def jobs(cfg):
    out = []
    bufs = BUFFERS_KB[::3] if cfg.quick else BUFFERS_KB
    for lat, (lat_ns, opts) in LATENCIES.items():
        out.append(nicbench(cfg, f"s001_{lat}_rtt", "tx", "--size", FRAME, "--window", 1,
                            "--frames", 10 if cfg.quick else 30, opts=opts, est=2))
        for b in bufs:
            for s in STREAMS:
                f = _frames(cfg, lat_ns, b, s)
                out.append(nicbench(cfg, f"s001_{lat}_{b}k_s{s}", "tx", "--size", FRAME,
                                    "--queues", s, "--window", b, "--frames", f,
                                    opts=opts, est=2))
    return out


def section(cfg, res, outdir):
    bufs = BUFFERS_KB[::3] if cfg.quick else BUFFERS_KB
    grid, csv = {}, []
    rtt = {}
    for lat in LATENCIES:
        one = rec(res, f"s001_{lat}_rtt")
        rtt[lat] = one["time_ns"] / one["frames"]
        for b in bufs:
            for s in STREAMS:
                r = rec(res, f"s001_{lat}_{b}k_s{s}")
                mbs = r["bytes"] / r["time_ns"] * 1e3            # MB/s, 10^6 B/s
                grid[lat, b, s] = mbs
                csv.append({"latency": lat, "window_kb": b, "streams": s, "aggregate_mbps": mbs,
                            "per_stream_mbps": mbs / s, "rtt_ns": rtt[lat],
                            "window_over_rtt_mbps": b * FRAME / rtt[lat] * 1e3})
    paper = papers.table("001_hippi_tcp_bufsize_x_streams")
    pbufs = sorted({int(r["buffer_size_kb"]) for r in paper}, reverse=True)
    pstreams = sorted({int(r["streams"]) for r in paper})
    pg = {(int(r["buffer_size_kb"]), int(r["streams"])): float(r["aggregate_kb_per_s"])
          for r in paper}
    win = papers.value("001_text_figures", "hippi_tcp_window_limit")
    lat_ms = papers.value("001_text_figures", "hippi_effective_system_latency")
    per = papers.value("001_text_figures", "hippi_max_rate_per_stream")

    body = ["Paper (`001_hippi_tcp_bufsize_x_streams.csv`, Fig. 4, aggregate kB/s; rows 32 and "
            "16 kB are reconstructed):\n\n"
            + table(["buffer kB", *[f"{s} str" for s in pstreams]],
                    [[b, *[pg.get((b, s)) for s in pstreams]] for b in pbufs])]
    body.append(f"\nOurs: streams are TX queues, {STREAMS[0]}..{STREAMS[-1]} (the SoC has "
                f"{STREAMS[-1]}; the paper's {STREAMS[-1] + 1}..10 have no counterpart). A "
                "stream's window is its frames sent and not yet received; the host sends a "
                "window's frames with one doorbell once the window is free.\n")
    for lat in LATENCIES:
        body.append(f"\nOurs, {lat} host latency ({LATENCIES[lat][1] or 'model default'}; one "
                    f"{FRAME} B frame's round trip {rtt[lat] / 1000:.2f} us), aggregate MB/s "
                    "(10^6 B/s of frame bytes):\n\n"
                    + table(["window kB", *[f"{s} str" for s in STREAMS]],
                            [[b, *[grid[lat, b, s] for s in STREAMS]] for b in bufs]))

    lim = []
    for b in bufs:
        expect = b * FRAME / rtt["raised"] * 1e3
        lim.append((b, expect, grid["raised", b, 1]))
    limited = [(b, e, m) for b, e, m in lim if m >= 0.9 * e]
    plateau = max(grid[k] for k in grid if k[0] == "raised")
    # The plateau's bytes in flight over one read's round trip (about half a frame's: the
    # descriptor read, then the payload read).
    inflight = plateau * 1e6 * rtt["raised"] / 2 * 1e-9
    top = max(grid.values())
    scale = grid["raised", bufs[0], STREAMS[-1]] / grid["raised", bufs[0], 1]
    verdicts = [
        f"aggregate: best {top:.1f} MB/s; at the default latency "
        f"{grid['default', bufs[0], 1]:.1f} MB/s with one {bufs[0]} kB stream and "
        f"{grid['default', bufs[-1], STREAMS[-1]]:.1f} MB/s with {STREAMS[-1]} x {bufs[-1]} kB "
        f"(paper: best {max(pg.values()) / 1000:.1f} MB/s with "
        f"{max(pg, key=pg.get)[1]} streams of {max(pg, key=pg.get)[0]} kB)",
        f"latency limited (raised latency, one frame's round trip {rtt['raised'] / 1000:.1f} "
        "us): one stream at rate = window / round trip up to "
        + ", ".join(f"{b} kB -> {m:.1f} MB/s ({e:.1f})" for b, e, m in limited)
        + f"; {STREAMS[-1]} streams of {bufs[0]} kB give x{scale:.2f} of one (paper: "
        f"{win:.0f} kB / {lat_ms:.0f} ms -> about {per:.0f} MB/s per stream; window / latency "
        f"= {win * 1000 / lat_ms / 1e3:.1f} MB/s)",
        f"ceiling: every raised-latency cell stays at or below {plateau:.1f} MB/s, "
        f"{inflight:.0f} B of reads in flight per read round trip; the largest window would "
        f"allow {lim[-1][1]:.1f} MB/s (window / round trip)"
        + (": the limit is inside the device, not in the streams' windows"
           if lim[-1][1] > 1.5 * plateau else ""),
    ]

    fig, (a, b, c) = plot.figure(3, width=4.8)
    for bk in pbufs:
        a.plot(pstreams, [pg[(bk, s)] / 1000 for s in pstreams], marker="s", label=f"{bk} kB")
    a.set(xlabel="streams", ylabel="MB/s", title="paper: HIPPI TCP aggregate")
    a.legend(fontsize=6)
    for bk in bufs:
        b.plot(STREAMS, [grid["raised", bk, s] for s in STREAMS], marker="o", label=f"{bk} kB")
    b.set(xlabel="streams (TX queues)", ylabel="MB/s", title="ours: raised latency")
    b.legend(fontsize=6)
    c.plot([e for _, e, _ in lim], [m for _, _, m in lim], label="ours, 1 stream", **plot.OURS)
    c.plot([win * 1000 / lat_ms / 1e3], [per], label="paper 64 kB / 3 ms", **plot.PAPER)
    mx = max(max(e for _, e, _ in lim), top)
    c.plot([0, mx], [0, mx], color="gray", linestyle=":", label="rate = window / RTT")
    c.set(xscale="log", yscale="log", xlabel="window / round trip (MB/s)",
          ylabel="per-stream MB/s", title="the latency limit")
    c.legend(fontsize=7)
    plots = [plot.save(fig, outdir, "s001_streams")]
    return Section("001", TITLE,
                   "Our TX queues stand for concurrent TCP streams and a queue's frames sent and "
                   "not yet received (x 1024 B) for a stream's window; raising the host memory's "
                   "read latency stands for the 3 ms effective latency.", verdicts,
                   "".join(body), plots, {"s001": csv})
