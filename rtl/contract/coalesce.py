# SPDX-License-Identifier: BSD-2-Clause
"""Interrupt coalescing: the configuration and the reasons an interrupt is raised.

CONFIG are the coalescer's configuration inputs, one per ethtool -C knob (frames -> rx/tx-frames,
usecs -> rx/tx-usecs, ...); REASONS the counters of why an interrupt was raised, in priority
order (highest first). The gateware (rtl/nic/irq_coalescer.py) and its test model
(nicmodels/coalesce_model.py) both take them from here.
"""

IMMEDIATE, FRAMES, USECS, ABS = "by_immediate", "by_frames", "by_usecs", "by_abs"
REASONS = (IMMEDIATE, FRAMES, USECS, ABS)
CONFIG = ("frames", "usecs", "abs_usecs", "min_interval", "tick_cycles")
