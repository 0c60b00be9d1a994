# SPDX-License-Identifier: BSD-2-Clause
#
# sim_eth_phy.py: a 1 Gb/s Ethernet PHY for the simulation (one octet per 125 MHz cycle: GMII's
# rate), a LiteEth PHY (8-bit stream, with_preamble_crc: the MAC adds preamble, SFD,
# padding, the FCS and the inter-frame gap, and checks them on receive). Nothing else is
# modelled: no line coding, no clock recovery.
#
#   SimEthGMIIPHY      GMII-like pins at the SoC's top level (eth_tx_data/en/er out,
#                      eth_rx_data/dv/er in), driven by the Verilator harness (sw/sim/), which
#                      loops them or wires two SoCs back to back.
#
# Interfaces: `sink` (MAC -> PHY, TX) and `source` (PHY -> MAC, RX), LiteEth PHY streams
# (eth_phy_description(8)); clock domains eth_tx and eth_rx, both the system clock (125 MHz),
# or both `eth_clk` when given (a faster wire for the soak: litex_soc/targets/sim.py
# --eth-ratio), reset with the system.

from migen import ClockDomain, ClockSignal, ResetSignal, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

from liteeth.common import eth_phy_description


def _sys_eth_clock_domains(m, clk=None):
    """eth_tx and eth_rx clock domains on `clk` (default the system clock), system reset."""
    clk = ClockSignal("sys") if clk is None else clk
    m.cd_eth_tx = ClockDomain()
    m.cd_eth_rx = ClockDomain()
    m.comb += [
        m.cd_eth_tx.clk.eq(clk), m.cd_eth_tx.rst.eq(ResetSignal("sys")),
        m.cd_eth_rx.clk.eq(clk), m.cd_eth_rx.rst.eq(ResetSignal("sys")),
    ]


# SimEthGMIIPHY: the GMII transmit and receive signals of a 1 Gb/s PHY as top-level pins, all
# synchronous to the system clock (GTX_CLK = RX_CLK = 125 MHz sys clock).
#   TX: eth_tx_data[7:0], eth_tx_en, eth_tx_er are registered from `sink` (as LiteEth's
#       LiteEthPHYGMIITX does): the octet the MAC presents in cycle n is on the pins in n+1;
#       tx_er is the stream's error bit on a valid octet (LiteEth's MAC never sets it).
#   RX: eth_rx_data[7:0], eth_rx_dv, eth_rx_er are registered into `source` (as
#       LiteEthPHYGMIIRX does): source.valid is rx_dv one cycle late, `last` marks the octet
#       after which rx_dv fell, error is rx_er.
#   The preamble and SFD are octets of the stream (the MAC inserts and checks them), so the
#   pins carry exactly what a GMII carries: 7 x 0x55, 0xd5, the frame, its FCS; tx_en low in
#   the inter-frame gap.
# Parameters: pads, a record with tx_data (8), tx_en, tx_er, rx_data (8), rx_dv, rx_er (from
#   litex_soc/targets/sim.py's sim_io(): the top-level eth_* pins).
class SimEthGMIIPHY(LiteXModule):
    dw = 8
    with_preamble_crc = True

    def __init__(self, pads, eth_clk=None):
        self.sink = sink = stream.Endpoint(eth_phy_description(8))
        self.source = source = stream.Endpoint(eth_phy_description(8))
        _sys_eth_clock_domains(self, eth_clk)

        # TX: registered onto the pins; a PHY takes an octet every cycle.
        self.comb += sink.ready.eq(1)
        self.sync.eth_tx += [
            pads.tx_en.eq(sink.valid),
            pads.tx_data.eq(sink.data),
            pads.tx_er.eq(sink.valid & (sink.error != 0)),
        ]

        # RX: registered from the pins; the octet before rx_dv falls is the last one.
        dv_d = Signal()
        self.sync.eth_rx += [
            dv_d.eq(pads.rx_dv),
            source.valid.eq(pads.rx_dv),
            source.data.eq(pads.rx_data),
            source.error.eq(pads.rx_dv & pads.rx_er),
        ]
        self.comb += [
            source.last.eq(dv_d & ~pads.rx_dv),
            source.last_be.eq(source.last),
        ]
