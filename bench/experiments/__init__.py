# SPDX-License-Identifier: BSD-2-Clause
# experiments: one module per seed paper, one for pcie-bench and one for the analyzer (nicscope.py,
# the "scope" section).
# Each has TITLE, jobs(cfg) -> [Job] (one per sweep point) and section(cfg, res) -> Section,
# where res(name) is the JSON document a job wrote.

from . import cern_hippi, hp_ots, hughes_jones, jacobson, nicscope, pciebench, sgi_hippi

ALL = {"000": sgi_hippi, "001": cern_hippi, "002": jacobson, "003": hp_ots,
       "004": hughes_jones, "pcie-bench": pciebench, "scope": nicscope}
