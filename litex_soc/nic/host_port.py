# SPDX-License-Identifier: BSD-2-Clause
#
# host_port.py: the NIC datapath's host interface, one port with two implementations. The
# datapath's wrapper (nic_datapath_csr.py) asks its host port for a read adapter, a write
# adapter (rtl/nic/dma_port.py's convention, flat: rd_req_*/rd_cpl_*, wr_*, with the counters of
# the rdadp_/wradp_ register groups) and the MRRS/MPS to split its requests at; nothing above
# the port knows which one it has.
#
#   PCIeHostPort(endpoint)          host memory over PCIe: LitePCIe crossbar master ports
#                                   (dma_port_adapter.py), the PHY's negotiated MRRS/MPS, the
#                                   PHY's requester ID. Interrupts: MSIs (nic_soc.py).
#   SoCBusHostPort(bus, data_width) SoC RAM through Wishbone masters on the SoC bus
#                                   (wishbone_dma_adapter.py), added to `bus` (LiteX's
#                                   SoCBusHandler) as nic_dma_rd / nic_dma_wr; MRRS/MPS are the
#                                   datapath's own limits. Interrupts: a CPU interrupt
#                                   (nic_soc.py, NICIrq).
#
# Interfaces: read_adapter(data_width, max_read, timeout), write_adapter(data_width,
# max_payload) -> modules with the flat ports and counters; mrrs(max_read), mps(max_payload)
# -> 13-bit expressions for the datapath's mrrs/mps inputs.

from migen import Constant

from litex_soc.nic.dma_port_adapter import DMAReadAdapter, DMAWriteAdapter
from litex_soc.nic.wishbone_dma_adapter import WishboneDMAReadAdapter, WishboneDMAWriteAdapter


class PCIeHostPort:
    """Host memory over PCIe, through one LitePCIe endpoint's crossbar."""

    def __init__(self, endpoint):
        self.endpoint = endpoint

    def mrrs(self, max_read):
        # The engines split at the MRRS and MPS the PHY reports (LitePCIe clamps them to what
        # it is built for).
        return self.endpoint.phy.max_request_size[:13]

    def mps(self, max_payload):
        return self.endpoint.phy.max_payload_size[:13]

    def read_adapter(self, data_width, max_read, timeout):
        # (Bound to the name NICDatapathCSR gives it, the port unnamed: Migen names the signals
        # after that.)
        xbar = self.endpoint.crossbar
        rdadp = DMAReadAdapter(xbar.get_master_port(read_only=True), data_width,
                               req_id=self.endpoint.phy.id, max_read=max_read, timeout=timeout)
        return rdadp

    def write_adapter(self, data_width, max_payload):
        xbar = self.endpoint.crossbar
        wradp = DMAWriteAdapter(xbar.get_master_port(write_only=True), data_width,
                                req_id=self.endpoint.phy.id, max_payload=max_payload)
        return wradp


class SoCBusHostPort:
    """SoC RAM as host memory: Wishbone masters on the SoC bus (32-bit byte addresses)."""

    def __init__(self, bus):
        self.bus = bus

    def mrrs(self, max_read):
        return Constant(max_read, 13)

    def mps(self, max_payload):
        return Constant(max_payload, 13)

    def read_adapter(self, data_width, max_read, timeout):
        rdadp = WishboneDMAReadAdapter(data_width, address_width=self.bus.address_width,
                                       max_read=max_read, timeout=timeout)
        self.bus.add_master(name="nic_dma_rd", master=rdadp.bus)
        return rdadp

    def write_adapter(self, data_width, max_payload):
        wradp = WishboneDMAWriteAdapter(data_width, address_width=self.bus.address_width,
                                        max_payload=max_payload)
        self.bus.add_master(name="nic_dma_wr", master=wradp.bus)
        return wradp
