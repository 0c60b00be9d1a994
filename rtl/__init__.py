# SPDX-License-Identifier: BSD-2-Clause
"""Amaranth cores of the NIC. Each module holds one core; see its header comment."""
