"""Amaranth cores of the NIC. Each module holds one core; see its header comment."""
