# SPDX-License-Identifier: BSD-2-Clause
# common.py: what the experiments share: the suite's configuration, job builders for the two
# tools on the sim backend, and accessors for the records a job wrote.

import dataclasses

from ..jobs import Job

WIRE_OVERHEAD = 24          # wire bytes per frame besides it: FCS 4, preamble 8, gap 12
LINE_BPS = 1e9              # LiteEth's 1 Gb/s MAC


@dataclasses.dataclass(frozen=True)
class Config:
    opts: str = "gen=2,lanes=4,mps=256,mrrs=512"   # BENCH_OPTS: the model's link and host
    quick: bool = False                            # smaller sweeps (tests)
    outdir: str = "results"                        # where files other than JSON go


def nicbench(cfg, name, *args, opts="", est=1.0):
    o = cfg.opts + ("," + opts if opts else "")
    return Job(name, "nicbench", ("--backend", "sim", "--opts", o, "--quiet", *args), est)


def nicscope(cfg, name, *args, opts="", est=1.0):
    o = cfg.opts + ("," + opts if opts else "")
    return Job(name, "nicscope", ("--backend", "sim", "--opts", o, *args), est)


def umlbench(cfg, name, *args, est=30.0):
    """A kernel-path job: sw/uml/umlbench.py (nicdrv.ko in a UML guest against the SoC); keyed
    to the server binary and the guest's sources through --server-digest."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "sw/uml/uml_guest.py"
    spec = importlib.util.spec_from_file_location("uml_guest", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return Job(name, "umlbench", ("--opts", cfg.opts, "--server-digest", mod.inputs_digest(),
                                  *args), est)


def rec(res, name, **match):
    """The one record of job `name` whose fields match."""
    rs = [r for r in res(name)["records"] if all(r.get(k) == v for k, v in match.items())]
    if len(rs) != 1:
        raise KeyError(f"{name}: {len(rs)} records match {match}")
    return rs[0]


def wire_ns(size):
    """One frame's time on a 1 Gb/s wire (frames padded to 60 B, + FCS, preamble, gap)."""
    return (max(size, 60) + WIRE_OVERHEAD) * 8e9 / LINE_BPS
