"""LiteX SoC of the NIC: targets, PHY stand-ins and the register wrappers of our Amaranth cores."""
