# SPDX-License-Identifier: BSD-2-Clause
#
# emit.py: writes the Verilog of an Amaranth core for LiteX to instantiate.
#
# Usage: python -m rtl.dmatest.emit CORE DATA_WIDTH OUT.v   (CORE: pattern_generator |
# pattern_checker)
# The Verilog module is named CORE_DATA_WIDTH (e.g. pattern_checker_128) so that builds with
# other widths do not collide.

import sys

from amaranth.back import verilog

from .pattern_checker import PatternChecker
from .pattern_generator import PatternGenerator

CORES = {
    "pattern_generator": PatternGenerator,
    "pattern_checker":   PatternChecker,
}


def module_name(core, data_width):
    return f"{core}_{data_width}"


def emit(core, data_width, path):
    if core not in CORES:
        raise ValueError(f"unknown core {core!r}; known: {', '.join(sorted(CORES))}")
    component = CORES[core](data_width=data_width)
    text = verilog.convert(component, name=module_name(core, data_width), emit_src=False)
    with open(path, "w") as f:
        f.write(text)
    return module_name(core, data_width)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python -m rtl.dmatest.emit CORE DATA_WIDTH OUT.v")
    emit(sys.argv[1], int(sys.argv[2]), sys.argv[3])
