# SPDX-License-Identifier: BSD-2-Clause
#
# loopback_eth_phy.py: LoopbackEthPHY, a LiteEth PHY for a board with no Ethernet: the MAC's
# transmit octets come back as its receive octets, through the same registered GMII-like
# signals as the simulation's PHY (sim_eth_phy.py SimEthGMIIPHY), so the NIC's DMA, queues and
# the analyzer run on the board as they do in the simulation with its loopback.
#
# Interfaces: `sink` (MAC -> PHY) and `source` (PHY -> MAC), LiteEth PHY streams
# (eth_phy_description(8)); clock domains eth_tx and eth_rx, both the system clock. No
# parameters; no pins.

from migen import Record

from litex_soc.targets.sim_eth_phy import SimEthGMIIPHY

GMII_LAYOUT = [("tx_data", 8), ("tx_en", 1), ("tx_er", 1),
               ("rx_data", 8), ("rx_dv", 1), ("rx_er", 1)]


class LoopbackEthPHY(SimEthGMIIPHY):
    """SimEthGMIIPHY on internal signals, its transmit side wired to its receive side: a frame
    comes back two cycles after it left (one register each way), with its preamble and FCS."""

    def __init__(self):
        self.gmii = gmii = Record(GMII_LAYOUT)
        SimEthGMIIPHY.__init__(self, gmii)
        self.comb += [
            gmii.rx_data.eq(gmii.tx_data),
            gmii.rx_dv.eq(gmii.tx_en),
            gmii.rx_er.eq(gmii.tx_er),
        ]
