# SPDX-License-Identifier: BSD-2-Clause
# sgi_hippi.py: seed 000 (SGI, "HIPPI Performance on IRIX 5.2", 1994): raw-interface
# throughput against write size 256 B .. 2 MB with one and two submitting processes, and
# transmit-only against receive.
#
# Ours, one job per point: the raw DMA engine (`nicbench dma`, one transfer per I/O) host-to-card
# (transmit) and card-to-host (receive); and the NIC's TX queues as blocking submitters (`nicbench
# tx --io N`: each queue writes I/Os of N bytes and waits for each) with one and two queues.
# Fits: time per I/O = fixed + per-byte x size (intercept, slope), knee n1/2 = fixed / per-byte.

from .. import fit, papers, plot
from ..section import Section, table
from .common import nicbench, rec

TITLE = "SGI HIPPI on IRIX 5.2 (1994): throughput against I/O size, one and two submitters"
SIZES = tuple(256 << i for i in range(14))          # 256 B .. 2 MiB
# TX I/Os: 64 and 128 B too (where a second submitter shows), to 1 MiB (the wire has flattened).
IO_SIZES = (64, 128) + SIZES[:-1]


def _io_bytes(cfg, size):
    return (64 if cfg.quick else 256) * 1024


def jobs(cfg):
    sizes = SIZES[::4] if cfg.quick else SIZES
    out = []
    for d in ("h2c", "c2h"):
        for s in sizes:
            out.append(nicbench(cfg, f"s000_dma_{d}_{s}", "dma", "--dir", d, "--sizes", s,
                                "--min-bytes", max(3 * s, 256 * 1024), est=1))
    for q in (1, 2):
        for s in IO_SIZES[::4] if cfg.quick else IO_SIZES:
            n = max(_io_bytes(cfg, s), 3 * s * q)
            out.append(nicbench(cfg, f"s000_io_q{q}_{s}", "tx", "--io", s, "--queues", q,
                                "--min-bytes", n, est=n * 8e-9 * 2.5 + 0.5))
    return out


def _curve(xs, mbps):
    """Fit time per I/O (us) = fixed + per-byte x size from MB/s (10^6 B/s) per size."""
    return fit.line(xs, [x / m for x, m in zip(xs, mbps)])


def section(cfg, res, outdir):
    sizes = SIZES[::4] if cfg.quick else SIZES
    ours = {}
    for d in ("h2c", "c2h"):
        ours[f"dma {d}"] = [rec(res, f"s000_dma_{d}_{s}", dir=d)["mbps"] for s in sizes]
    io_sizes = IO_SIZES[::4] if cfg.quick else IO_SIZES
    tx = {}
    for q in (1, 2):
        # Received rate (to the last frame at the RX ring): the sink's figure, as Table 1's.
        tx[f"tx {q} queue{'s' if q > 1 else ''}"] = [
            rec(res, f"s000_io_q{q}_{s}")["received_mbps"] for s in io_sizes]
    paper = papers.table("000_throughput_vs_io_size")
    px = [int(r["io_size_bytes"]) for r in paper]
    pcurves = {"paper fork (2 submitters)": [float(r["mb_per_s_fork"]) for r in paper],
               "paper no fork (1 submitter)": [float(r["mb_per_s_nofork"]) for r in paper]}
    fits = {**{k: _curve(sizes, v) for k, v in ours.items()},
            **{k: _curve(io_sizes, v) for k, v in tx.items()}}
    pfits = {k: _curve(px, v) for k, v in pcurves.items()}
    tx_only = papers.value("000_text_figures", "hippi_ph_transmit_only_throughput_2MB_writes")

    def describe(name, f):
        return (f"{name}: fixed {f.intercept:.2f} us per I/O + {f.slope * 1000:.3f} ns/B "
                f"(asymptote {1 / f.slope:.0f} MB/s), knee {fit.n_half(f):.0f} B")

    q1, q2 = tx["tx 1 queue"], tx["tx 2 queues"]
    verdicts = [describe(k, f) for k, f in fits.items()]
    pf, pn = pcurves.values()
    ours_gain = max(zip((b / a for a, b in zip(q1, q2)), io_sizes))
    paper_gain = max(zip((f / n for f, n in zip(pf, pn)), px))
    verdicts.append(
        f"two submitters against one: at most x{ours_gain[0]:.2f}, at {ours_gain[1]} B; "
        f"x{q2[-1] / q1[-1]:.2f} at {io_sizes[-1]} B (paper, fork against no fork: at most "
        f"x{paper_gain[0]:.2f}, at {paper_gain[1]} B; x{pf[-1] / pn[-1]:.2f} at {px[-1]} B)")
    verdicts.append(
        f"transmit against receive at {sizes[-1]} B: dma h2c {ours['dma h2c'][-1]:.0f} MB/s, c2h "
        f"{ours['dma c2h'][-1]:.0f} MB/s, x{ours['dma h2c'][-1] / ours['dma c2h'][-1]:.2f} (paper: "
        f"transmit-only {tx_only:.0f} MB/s against receive "
        f"{max(pcurves['paper no fork (1 submitter)']):.0f} MB/s, "
        f"x{tx_only / max(pcurves['paper no fork (1 submitter)']):.2f})")
    verdicts += [describe(k, f) for k, f in pfits.items()]

    fig, (a, b) = plot.figure(2)
    for k, v in pcurves.items():
        a.plot(px, v, label=k, **{**plot.PAPER, **({"color": "tab:purple"} if "no" in k else {})})
    a.set(xscale="log", xlabel="write size (B)", ylabel="MB/s", title="paper: HIPPI PH, receive")
    a.legend(fontsize=8)
    for k, v in ours.items():
        b.plot(sizes, v, marker="o", label=k)
    for k, v in tx.items():
        b.plot(io_sizes, v, marker="^", label=k)
    b.set(xscale="log", yscale="log", xlabel="I/O size (B)", ylabel="MB/s",
          title="ours: DMA engine and TX queues")
    b.legend(fontsize=8)
    plots = [plot.save(fig, outdir, "s000_io_size")]

    pmap = {int(r["io_size_bytes"]): r for r in paper}
    pmap[2048] = pmap.get(2048) or pmap.get(2024)       # printed 2024 (see the CSV's note)
    cols = {**ours, **tx}
    xs = {**{k: sizes for k in ours}, **{k: io_sizes for k in tx}}
    rows = []
    for s in sorted(set(sizes) | set(io_sizes)):
        p = pmap.get(s)
        rows.append([s, float(p["mb_per_s_nofork"]) if p else None,
                     float(p["mb_per_s_fork"]) if p else None]
                    + [dict(zip(xs[k], v)).get(s) for k, v in cols.items()])
    csv = [dict(zip(["size", "paper_nofork", "paper_fork", *cols], r)) for r in rows]
    body = ("Paper: `000_throughput_vs_io_size.csv` (Table 1, receive side; the 2048 row is "
            "printed 2024); ours: MB/s = 10^6 B/s of simulated time.\n\n"
            + table(["I/O B", "paper 1 submitter MB/s", "paper 2 submitters MB/s",
                     *[f"ours {k} MB/s" for k in cols]], rows)
            + "\nFits (time per I/O = fixed + per-byte x size, least squares over all sizes):\n\n"
            + table(["curve", "fixed us", "ns/B", "asymptote MB/s", "knee B", "r2"],
                    [[k, f.intercept, f.slope * 1000, 1 / f.slope, fit.n_half(f), f.r2]
                     for k, f in {**fits, **pfits}.items()]))
    return Section("000", TITLE,
                   "LitePCIe's DMA engine moving one buffer per I/O stands for the raw HIPPI PH "
                   "interface (host-to-card = transmit, card-to-host = receive); our TX queues, "
                   "each a blocking submitter of I/Os split into 9000-byte frames, stand for "
                   "blast's one or two processes.", verdicts, body, plots, {"s000": csv})
