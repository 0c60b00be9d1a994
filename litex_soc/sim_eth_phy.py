#
# sim_eth_phy.py: a 1 Gb/s Ethernet PHY for the simulation that loops the transmitted octets
# back into the receiver (the "internal loopback" of a real PHY's near-end loopback mode).
#
# What it is: a LiteEth PHY (8-bit stream, one octet per 125 MHz cycle: GMII's rate) whose
# receive stream is the transmit stream one cycle later. The MAC adds preamble, SFD, padding, the
# FCS and the inter-frame gap (with_preamble_crc), so the wire is a real 1 Gb/s wire; the MAC's
# receive side checks them again. Nothing else is modelled: no line coding, no errors.
#
# Interfaces: `sink` (MAC -> PHY, TX) and `source` (PHY -> MAC, RX), LiteEth PHY streams
# (eth_phy_description(8)); clock domains eth_tx and eth_rx, both the system clock (125 MHz).
#
# Parameters: none.

from migen import ClockDomain, ClockSignal, ResetSignal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from liteeth.common import eth_phy_description


class SimEthLoopbackPHY(LiteXModule):
    dw = 8
    with_preamble_crc = True

    def __init__(self):
        self.sink = sink = stream.Endpoint(eth_phy_description(8))
        self.source = source = stream.Endpoint(eth_phy_description(8))
        self.cd_eth_tx = ClockDomain()
        self.cd_eth_rx = ClockDomain()
        self.comb += [
            self.cd_eth_tx.clk.eq(ClockSignal("sys")), self.cd_eth_tx.rst.eq(ResetSignal("sys")),
            self.cd_eth_rx.clk.eq(ClockSignal("sys")), self.cd_eth_rx.rst.eq(ResetSignal("sys")),
            sink.ready.eq(1),      # a PHY takes an octet every cycle
        ]
        self.sync += [
            source.valid.eq(sink.valid),
            source.data.eq(sink.data),
            source.last.eq(sink.last),
            source.last_be.eq(sink.last_be),
            source.error.eq(sink.error),
        ]
