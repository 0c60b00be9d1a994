# SPDX-License-Identifier: BSD-2-Clause
"""LiteX SoC of the NIC: targets, PHY stand-ins and the register wrappers of our Amaranth cores."""
