# SPDX-License-Identifier: BSD-2-Clause
#
# sim_headers.py: the host headers generated from the simulation SoC: sw/include/nic_regs.h
# (regblocks.c_header of the default SoC and the one with the soft CPU, for its console) and
# sw/include/nicscope_layout.h (the analyzer's sample layout and counter map).
#
# Usage: python -m litex_soc.targets.sim_headers sw/include/nic_regs.h --nicscope-layout
#            sw/include/nicscope_layout.h
# Interfaces: build_soc(data_width, with_cpu, build_dir) -> the finalized SimSoC (also for
# litex_soc/test_regblocks.py); default_socs(build_dir) -> the SoCs nic_regs.h is made from.
# (Here rather than in regblocks.py, which nic_soc.py imports: building a SimSoC there made the
# loop nic_soc -> regblocks -> targets.sim -> nic_soc.)

import argparse
import os

from litex_soc.regblocks import c_header
from litex_soc.targets.sim import SimSoC


def build_soc(data_width=128, with_cpu=False, build_dir="build/regblocks"):
    """The simulation SoC, finalized (CSR blocks placed), without writing any file but the
    emitted Amaranth Verilog."""
    soc = SimSoC(data_width=data_width, with_cpu=with_cpu,
                 build_dir=os.path.join(build_dir, "gateware"))
    soc.finalize()
    return soc


def default_socs(build_dir="build/regblocks"):
    """The SoCs nic_regs.h is generated from: the default one, and the one with the soft CPU."""
    return [build_soc(build_dir=os.path.join(build_dir, "default")),
            build_soc(with_cpu=True, build_dir=os.path.join(build_dir, "cpu"))]


def main():
    parser = argparse.ArgumentParser(description="Write nic_regs.h (and the analyzer's sample "
                                     "layout, nicscope_layout.h) from the default SoC.")
    parser.add_argument("output", help="nic_regs.h to write")
    parser.add_argument("--nicscope-layout", help="nicscope_layout.h to write")
    args = parser.parse_args()
    socs = default_socs()
    with open(args.output, "w") as f:
        f.write(c_header(socs))
    if args.nicscope_layout:
        with open(args.nicscope_layout, "w") as f:
            f.write(socs[0].analyzer.layout_header)


if __name__ == "__main__":
    main()
