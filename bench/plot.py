# SPDX-License-Identifier: BSD-2-Clause
# plot.py: matplotlib figures of the report, written as PNG and SVG under RESULTS/plots/.
#
# Interfaces: figure(ncols) -> (fig, axes); save(fig, outdir, name) -> [png, svg] paths relative
# to outdir. Headless (Agg backend); a fixed SVG hash salt and no dates keep the files stable.

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "nic-bench"
matplotlib.rcParams["savefig.dpi"] = 110
import matplotlib.pyplot as plt  # noqa: E402

OURS = {"color": "tab:blue", "marker": "o"}
PAPER = {"color": "tab:red", "marker": "s", "linestyle": "--"}


def figure(ncols=1, width=6.0, height=4.0):
    fig, axes = plt.subplots(1, ncols, figsize=(width * ncols, height), squeeze=False)
    return fig, list(axes[0])


def save(fig, outdir, name):
    d = Path(outdir) / "plots"
    d.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    out = []
    for ext in ("png", "svg"):
        p = d / f"{name}.{ext}"
        fig.savefig(p, metadata={"Date": None} if ext == "svg" else {})
        out.append(p.relative_to(outdir).as_posix())
    plt.close(fig)
    return out
