# SPDX-License-Identifier: BSD-2-Clause
#
# glue_depth.py: the SoC's own glue between LitePCIe and the NIC datapath, each module built
# alone as the PCIe SoC builds it, for the logic-depth guard (test_logic_depth.py).
#
# What it is: GLUE names a builder per module (the completion guard, the depacketizer with its
# ready slices, the NIC's DMA read and write adapters on a crossbar port, the MSI and completion
# ordering, a checked descriptor table, the crossbar with the SoC's master ports);
# glue_depth(data_width, name) converts one to Verilog with every stream, signal attribute and
# CSR of it as a port, and gives its longest path in LUT levels (logic_depth.analyse on the cost
# flow's synthesis, cached). Out of context, as the datapath's cores are: a path through several
# modules is the SoC synthesis's (logic_depth --soc) and the routed flow's to find.

from migen import Signal
from migen.fhdl.verilog import convert

from litex.soc.interconnect import stream
from litepcie.common import completion_layout, phy_layout, request_layout
from litepcie.core.common import LitePCIeMasterInternalPort, LitePCIeMasterPort

from litex_soc.nic.dma_port_adapter import DMAReadAdapter, DMAWriteAdapter
from litex_soc.pcie.cpl_guard import CplGuard
from litex_soc.pcie.cpl_order import CplOrder
from litex_soc.pcie.dma_guard import CheckedTable
from litex_soc.pcie.msi_order import MSIOrder
from litex_soc.pcie.tlp_slices import SlicedCrossbar, SlicedDepacketizer, SlicedPacketizer
from litex_soc.timing import logic_depth

# As litex_soc/nic_soc.py builds them: 8 reads in flight (3 tag bits), 3 NIC interrupts, the
# read and write sizes of its datapath, 32-bit addresses; its crossbar's master ports: read
# (the DMA's reader, the NIC's) and write (the DMA's writer, the NIC's, the analyzer stream's).
TAG_BITS, NIRQ, MAX_READ, MAX_PAYLOAD, AW = 3, 3, 512, 256, 32
READ_PORTS, WRITE_PORTS = 2, 3


def _port(dw, **kind):
    return LitePCIeMasterPort(LitePCIeMasterInternalPort(dw, AW, channel=1, **kind))


def _adapter(cls, dw, kind, **kw):
    port = _port(dw, **{kind: True})
    return cls(port, dw, **kw), [port.source, port.sink]


def _msi_order(dw):
    req, tx = stream.Endpoint(request_layout(dw)), stream.Endpoint(phy_layout(dw))
    return MSIOrder(req, tx, NIRQ), [req, tx]


def _cpl_order(dw):
    cmp = stream.Endpoint(completion_layout(dw))
    taken, left = Signal(16, name="taken"), Signal(16, name="left")
    return CplOrder(cmp, taken, left), [cmp, taken, left]


def _crossbar(dw):
    xb = SlicedCrossbar(dw, AW, 2**TAG_BITS)
    ports = [xb.get_master_port(read_only=True) for _ in range(READ_PORTS)]
    ports += [xb.get_master_port(write_only=True) for _ in range(WRITE_PORTS)]
    xb.finalize()
    ends = [xb.phy_master.source, xb.phy_master.sink, xb.write_taken]
    return xb, [e for p in ports for e in (p.source, p.sink)] + ends


# name: data width -> (module, the streams and signals it was given, which are ports too)
GLUE = {
    "cpl_guard": lambda dw: (CplGuard(dw, req_id=0, tag_bits=TAG_BITS), []),
    "depacketizer": lambda dw: (SlicedDepacketizer(dw, "big"), []),
    "packetizer": lambda dw: (SlicedPacketizer(dw, "big", address_width=AW), []),
    "rdadp": lambda dw: _adapter(DMAReadAdapter, dw, "read_only", max_read=MAX_READ),
    "wradp": lambda dw: _adapter(DMAWriteAdapter, dw, "write_only", max_payload=MAX_PAYLOAD),
    "msi_order": _msi_order,
    "cpl_order": _cpl_order,
    "crossbar": _crossbar,
    "dma_table": lambda dw: (CheckedTable(256, address_width=AW, align=dw // 8), []),
}


def _ios(module, given):
    """The signals of module's stream endpoints and signal attributes, of the streams it was
    given, and of its CSRs' fields."""
    ios = set()
    for v in list(vars(module).values()) + given:
        if isinstance(v, stream.Endpoint):
            ios |= set(v.flatten())
        elif isinstance(v, Signal):
            ios.add(v)
    for csr in module.get_csrs():
        for a in ("status", "storage", "re", "we", "r", "w"):
            s = getattr(csr, a, None)
            if isinstance(s, Signal):
                ios.add(s)
    return ios


def glue_depth(data_width, name):
    """(levels, end, start) of the longest path of the glue module `name` alone."""
    module, given = GLUE[name](data_width)
    return logic_depth.deepest(str(convert(module, ios=_ios(module, given), name=name)), name)
