# SPDX-License-Identifier: BSD-2-Clause
#
# socbus_handoffs.py: the bus analyzer's breakdown inputs and device-side events on a SoC whose
# host port is the SoC bus (litex_soc/nic/host_port.py's SoCBusHostPort: the NIC's DMA on
# Wishbone masters, the CPU as the host; the open ECP5 target), where nic_soc.py's PCIe
# hand-offs (crossbar, TLP controller, PHY streams, MSIs) do not exist.
#
# What it is: each hand-off of the PCIe build mapped to the Wishbone adapters'
# (litex_soc/nic/wishbone_dma_adapter.py) and the CPU's. A read of the NIC datapath:
#   t0 raised   its request is valid at the read adapter (rd_req_valid);
#   t1 granted  the adapter takes it (it serves one request at a time: queue = the wait for
#               the one before);
#   t2, t3      issued and taken: the first cycle of its first bus access (`issued`);
#   t4 "on PHY" the cycle after (the breakdown matches a request a cycle after its issue);
#   t5, t6      the first and the last access ended (`access_end`): each access is a one-beat
#               "completion" (CplD, length W/32 dwords, byte count the bytes still to come),
#               so rtt is the bus's latency to the first beat (arbitration with the CPU, the
#               width converter, the RAM) and cpl the rest of the request's accesses;
#   t7 handed   its last beat moves to the core (`handed`).
# So the tag stage is 1 cycle, credit 0 and phy 1 by construction; the raw_dma class (no
# LitePCIe DMA) never has a request. A write (classes nic, scope): t0 its first beat valid at
# its adapter, t1 the bus access of that beat requested, t2 that access ended (credit: the bus
# latency of the first beat), t3 a cycle later (the MWr "on the PHY": phy is 1 cycle by
# construction). The tags are 0: one request at a time per adapter.
# Events: mmio_rd, a CPU read on the CSR bridge's bus from its first cycle to its ack;
# rx_irq_msi, the RX interrupt decision (enabled in nic_irq) to the CPU clearing its pending
# bit (the interrupt serviced; decisions while one is open merge into it); db_desc as on PCIe.
#
# Interfaces: read_handoffs(soc, an, data_width), write_handoffs(soc, an, adapters) (adapters:
# the write classes' adapters in class order, None for a class with none), mmio_event(soc, an,
# wb), irq_event(an, ev, enable) (ev: LiteX EventSourcePulse of the NIC's RX vector, enable:
# its enable bit).

from functools import reduce
from operator import or_

from migen import If, Mux, Signal

from rtl.nicscope.latency_breakdown import CPL_TYPES, MRD_TYPES
from rtl.nicscope.write_breakdown import MWR_TYPES


def read_handoffs(soc, an, data_width):
    rd = soc.nic.rdadp
    desc = Signal()                     # the kind of the request being served
    soc.sync += If(rd.rd_req_valid & rd.rd_req_ready, desc.eq(rd.rd_req_desc))
    kinds = [None, rd.rd_req_desc, ~rd.rd_req_desc]
    none = dict(valid=0, ready=0)
    an.breakdown_input("bd_raised", classes=[
        none if k is None else dict(valid=rd.rd_req_valid & k, ready=rd.rd_req_ready)
        for k in kinds])
    an.breakdown_input("bd_granted", classes=[
        none if k is None else dict(valid=rd.rd_req_valid & rd.rd_req_ready & k, ready=1)
        for k in kinds])
    an.breakdown_input("bd_issue", valid=rd.issued, ready=1, cls=Mux(desc, 1, 2), tag=0)
    on_bus = Signal()
    soc.sync += on_bus.eq(rd.issued)
    an.breakdown_input("bd_tx", valid=on_bus, ready=1, first=1, fmt_type=MRD_TYPES[0], tag=0)
    nbytes = data_width // 8
    an.breakdown_input("bd_rx", valid=rd.access_end, ready=1, first=1, last=1,
                       fmt_type=CPL_TYPES[1], length=data_width // 32,
                       byte_count=(rd.left * nbytes)[:12], tag=0)
    an.breakdown_input("bd_handoff", valid=rd.handed, tag=0)


def write_handoffs(soc, an, adapters):
    none = dict(valid=0, ready=0)
    an.breakdown_input("wbd_raised", classes=[
        none if a is None else dict(valid=a.wr_valid & a.wr_first, ready=a.wr_ready)
        for a in adapters])
    an.breakdown_input("wbd_granted", classes=[
        none if a is None else dict(valid=a.first_access, ready=a.first_end)
        for a in adapters])
    an.breakdown_input("wbd_other", valid=0, ready=0)
    on_bus = Signal()
    soc.sync += on_bus.eq(reduce(or_, [a.first_end for a in adapters if a is not None]))
    an.breakdown_input("wbd_tx", valid=on_bus, ready=1, first=1, fmt_type=MWR_TYPES[0])


def mmio_event(soc, an, wb):
    busy = Signal()                     # a read in progress, its start seen
    start = Signal()
    soc.comb += start.eq(wb.cyc & wb.stb & ~wb.we & ~busy)
    soc.sync += If(wb.ack, busy.eq(0)).Elif(start, busy.eq(1))
    an.event("mmio_rd", start=start, end=wb.ack & (busy | start) & ~wb.we)


def irq_event(an, ev, enable):
    an.event("rx_irq_msi", start=ev.trigger & enable, end=ev.clear)
