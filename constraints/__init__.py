# SPDX-License-Identifier: BSD-2-Clause
# constraints/: the boards' pins and timing, one module per board (an IO list in LiteX's
# generic_platform form, the part, the clocks, the Vivado properties), read by the board targets
# in litex_soc/targets/; and <board>_size.json, each PCIe target's synthesized size
# (litex_soc/targets/test_boards.py).
