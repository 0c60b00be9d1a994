# SPDX-License-Identifier: BSD-2-Clause
#
# nic_soc.py: NICSoC, the NIC's LiteX SoC, shared by every target (simulation and boards).
#
# What it is: LitePCIe's endpoint with its BAR0-to-CSR bridge and MSI; the NIC datapath
# (litex_soc/nic/nic_datapath_csr.py: descriptor rings in host memory, TX queues, DMA through
# LitePCIe crossbar master ports, coalesced interrupts) on a LiteEth MAC; LitePCIe's DMA channel
# with the DMA pattern generator/checker as the raw DMA benchmark; the bus analyzer on the PCIe
# PHY streams, both DMA engines' ports, the MAC, the CSR bus and MSI, with the occupancy
# integrals of read tags, credits, TX descriptors and FIFO fill and device-side event latencies;
# the identification block
# at BAR0 offset 0, whose register-block table finalize() fills (regblocks.py); BARGuard
# (pcie/bar_guard.py) in front of the CSR bridge, counting the BAR0 accesses it refuses;
# MSIOrder (pcie/msi_order.py) holding each NIC MSI until the DMA writes before it left;
# DMAGuard (pcie/dma_guard.py) refusing and counting the DMA descriptors LitePCIe cannot move.
#
# The datapath's host port (litex_soc/nic/host_port.py) is PCIe with a pcie_phy; without one it
# is the SoC bus (no LitePCIe, no DMA pattern block: the DMA engines on Wishbone masters, the
# MSIs one CPU interrupt, nic_irq; the open ECP5 target, targets/ecp5_soc.py).
# Parameters: platform; crg; pcie_phy (SimPCIePHY or S7PCIEPHY; its msi_type picks LitePCIe's
# MSI block: the host library drives msi-multi-vector, an MSI per interrupt vector; None: the
# SoC-bus host port, with data_width and cpu_args, the SoCCore arguments of the soft CPU it
# needs); eth_phy (a LiteEth PHY); sys_clk_freq; with_cpu (VexRiscv, crossover UART); sim
# (INFO_CONFIG.SIM); ident
# (IDENTIFIER_MEM); with_analyzer; with_breakdown (the analyzer's per-request DMA read latency
# breakdown, ANALYZER_BREAKDOWN); with_wr_breakdown (its per-request DMA write latency breakdown,
# ANALYZER_WR_BREAKDOWN); with_levels (the analyzer's occupancy integrals,
# ANALYZER_LEVELS); with_events (its device-side latencies, ANALYZER_EVENTS); with_stream (its
# deep capture into host memory through a crossbar write port, or a Wishbone master on the SoC
# bus, ANALYZER_STREAM); on the SoC bus the breakdowns and events time the Wishbone adapters'
# and the CPU's hand-offs (nicscope/socbus_handoffs.py); nic_ntxq TX
# queues in nic_ntxirq TX queue groups (queue q in group q % n), each with its own MSI (NIC_RX,
# then NIC_TX, NIC_TX1, ..., numbered consecutively); build_dir (where emitted Amaranth Verilog
# goes).

from functools import reduce
from operator import or_

from migen import Cat, Constant, Mux, Signal

from litex.soc.integration.soc_core import SoCCore
from litepcie.core.msi import LitePCIeMSIX

from litex_soc.nicscope import socbus_handoffs
from litex_soc.nicscope.analyzer_csr import BusAnalyzerCSR
from litex_soc.dmatest.dma_pattern import DMAPattern
from litex_soc.nic.dma_port_adapter import DMAWriteAdapter
from litex_soc.nic.host_port import PCIeHostPort, SoCBusHostPort
from litex_soc.nic.nic_datapath_csr import NICDatapathCSR
from litex_soc.nic.nic_irq import NICIrq
from litex_soc.nic.wishbone_dma_adapter import WishboneDMAWriteAdapter
from litex_soc import regblocks
from litex_soc.nic_info import NICInfo
from litex_soc.pcie.bar_guard import BARGuard
from litex_soc.pcie.cpl_guard import CplGuard, GuardedPHY
from litex_soc.pcie.cpl_order import CplOrder
from litex_soc.pcie.dma_guard import DMAGuard, checked_tables
from litex_soc.pcie.msi_order import MSIOrder
from litex_soc.pcie.tlp_slices import sliced_tlp_streams
from rtl.nic.tx_queue_manager import CNT_BITS as TXQ_CNT_BITS
from rtl.nicscope.analyzer import Breakdown, Event, Probe, WrBreakdown

ANALYZER_DEPTH = 1024
MAX_DATA_WIDTH = 128
ANALYZER_LATENCY = ("dma_rd_req", "dma_rd_cpl")
# The latency breakdown's request classes: LitePCIe's DMA reader, the NIC datapath's descriptor
# fetches (TX and RX rings) and its TX payload reads.
ANALYZER_BD_CLASSES = ("raw_dma", "nic_desc", "nic_payload")
ANALYZER_BREAKDOWN = True
# The write latency breakdown's classes: LitePCIe's DMA writer, the NIC datapath's writes, the
# analyzer's own deep capture (when built).
ANALYZER_WBD_CLASSES = ("raw_dma", "nic", "scope")
ANALYZER_WR_BREAKDOWN = True
ANALYZER_LEVELS = True
ANALYZER_EVENTS = True
ANALYZER_STREAM = True
# Figure comparators for triggers on a latency or a level, and levels stored beside the capture.
ANALYZER_FIGURES = 2
ANALYZER_TRACKS = 2
# The device-side latencies: a TX doorbell write to the TX engine's next descriptor read (the
# doorbells before that read merged into the first), a host MMIO read's MRd on the PHY to its
# completion's first beat, the RX coalescer's interrupt decision to its MSI request (an irq while
# its MSI is pending merged into it, as LitePCIe's MSI block merges them; masked MSIs ignored).
ANALYZER_EVENT_LIST = (Event("db_desc", depth=1, merge=True), Event("mmio_rd", depth=4),
                       Event("rx_irq_msi", depth=1, merge=True))
MAX_PENDING_REQUESTS = 8
# The deep capture's largest write on the SoC bus (no link MPS there).
SOCBUS_STREAM_MPS = 256


def analyzer_breakdown(data_width, host_on_pcie=True):
    """The latency breakdown as the SoC builds it: a completion's tag (header dword 2) is in
    its first PHY beat at 128 bits, in the second at 64; on the SoC bus (one-beat completions:
    nicscope/socbus_handoffs.py) in the first."""
    # Slots: requests from issue to hand-off. LitePCIe frees a tag when its last completion
    # arrives and its request queue (buffered) holds one request more than its tags, so more
    # than max_pending_requests can wait for their hand-off: twice that many slots.
    return Breakdown(ANALYZER_BD_CLASSES, nslots=2 * MAX_PENDING_REQUESTS,
                     tag_beat=0 if data_width >= 96 or not host_on_pcie else 1)


def analyzer_wr_breakdown(with_stream=True):
    """The write latency breakdown as the SoC builds it (the scope class with the stream)."""
    # Slots: writes taken by the packetizer whose MWr has not reached the PHY; the packetizer
    # and the PHY's TX buffer hold a few.
    return WrBreakdown(ANALYZER_WBD_CLASSES[:3 if with_stream else 2], nslots=8)


def analyzer_levels(ntxq):
    """The levels whose occupancy integral and maximum the analyzer keeps, (name, width):
    LitePCIe's read tags in use, the NIC's reads outstanding in its read arbiter, the transmit
    flow-control credits in use (the PHY's fc_*: posted header, posted data, non-posted header),
    each TX queue's descriptors in flight, the TX and RX frame FIFOs' fill in bytes."""
    return (("rd_tags", MAX_PENDING_REQUESTS.bit_length()), ("nic_rd", 5),
            ("fc_ph", 12), ("fc_pd", 12), ("fc_nph", 12),
            *[(f"txq{q}_desc", TXQ_CNT_BITS) for q in range(ntxq)],
            ("tx_fifo", 16), ("rx_fifo", 16))


def analyzer_probes(data_width):
    """The analyzer's probe points, in the order of its counters and sample vector. Byte counts
    are as wide as the widest datapath needs, so the sample layout (and the analyzer's
    registers) are the same in every build."""
    assert data_width <= MAX_DATA_WIDTH
    bw = (MAX_DATA_WIDTH // 8).bit_length()
    return [
        # PHY streams: host-to-device (MRd/MWr from the host, CplD for DMA reads) and
        # device-to-host (DMA MRd/MWr, CplD for host reads); bytes are the enabled byte lanes.
        Probe("pcie_rx", [("fmt_type", 8)], nbytes_width=bw, tlp=True, group="pcie"),
        Probe("pcie_tx", [("fmt_type", 8)], nbytes_width=bw, tlp=True, group="pcie"),
        # LiteEth MAC, PHY side: one octet per cycle at 1 Gb/s (preamble, FCS and gaps included).
        Probe("mac_tx", [], nbytes_width=1, group="mac"),
        Probe("mac_rx", [], nbytes_width=1, group="mac"),
        # LitePCIe DMA channel 0 (the raw DMA benchmark): reader requests (MRd) and their
        # completions, writer requests.
        Probe("dma_rd_req", [], nbytes_width=1, group="dma"),
        Probe("dma_rd_cpl", [("end", 1)], nbytes_width=bw, group="dma"),
        Probe("dma_wr_req", [], nbytes_width=bw, group="dma"),
        # The NIC datapath's DMA ports: read requests (a beat each: descriptor and payload
        # fetches), their completion beats, and writes (RX data, RX completion records, TX
        # consumer-index writebacks; a burst per write).
        Probe("nic_rd_req", [], nbytes_width=1, group="nic"),
        Probe("nic_rd_cpl", [], nbytes_width=bw, group="nic"),
        Probe("nic_wr", [], nbytes_width=bw, group="nic"),
        # The BAR0-to-CSR bridge's Wishbone bus (a beat per 32-bit register access).
        Probe("csr", [("we", 1), ("adr", 14)], nbytes_width=3, group="csr"),
        # MSI requests to the PHY (a beat per interrupt message; vector: the MSI data's low bits).
        Probe("msi", [("vector", 8)], nbytes_width=1, group="msi"),
    ]


def popcount(bits):
    return sum(bits[i] for i in range(len(bits)))


def tx_msi_names(ntxirq):
    return ["NIC_TX" + (str(g) if g else "") for g in range(ntxirq)]


class NICSoC(SoCCore):
    csr_map = {"info": 0}          # the identification block is at BAR0 offset 0

    def finalize(self):
        if self.finalized:
            return
        # The completion guard watches the oldest read of the TLP controller (made when the
        # crossbar is finalized, after every master port was taken).
        if self.host_on_pcie:
            self.pcie_endpoint.crossbar.finalize()
            ctrl = self.pcie_endpoint.crossbar.controller
            self.comb += [
                self.pcie_cpl.head_valid.eq(ctrl.req_queue.source.valid),
                self.pcie_cpl.head_tag.eq(ctrl.req_queue.source.tag),
                self.pcie_cpl.head_data.eq(ctrl.master_in.source.valid),
            ]
        super().finalize()
        self.info.set_table(regblocks.table(self), self.bus.regions["csr"].origin)

    def add_csr_bridge(self, name="csr", origin=None, register=False):
        # A registered Wishbone-to-CSR bridge, as LiteX builds in SoCs with SDRAM: the bridge's
        # decode and every CSR bank's decode are two short paths instead of one long one.
        # One cycle more per CSR access. BARGuard sits in front of it: it drops the partial
        # writes the bridge would turn into whole-word writes. (SoC.finalize calls this.)
        super().add_csr_bridge(name=name, origin=origin, register=True)
        if not self.host_on_pcie:
            wb = self.bus.slaves[name]
            self.comb += self.csr_busy.eq(wb.cyc)
            if hasattr(self, "analyzer"):
                self.add_csr_probe(self.analyzer, wb)
                if "mmio_rd" in self.analyzer._events:
                    socbus_handoffs.mmio_event(self, self.analyzer, wb)
            return
        self.pcie_bar = BARGuard(self.bus.slaves[name])
        self.bus.slaves[name] = self.pcie_bar.bus
        self.comb += self.pcie_bar.unsupported.eq(self.pcie_mmap.unsupported)

    def __init__(self, platform, crg, pcie_phy, eth_phy, sys_clk_freq=125e6, with_cpu=False,
                 build_dir="build", sim=True, ident="open FPGA NIC", with_analyzer=True,
                 with_breakdown=ANALYZER_BREAKDOWN, with_levels=ANALYZER_LEVELS,
                 with_events=ANALYZER_EVENTS, with_stream=ANALYZER_STREAM, nic_ntxq=4,
                 with_wr_breakdown=ANALYZER_WR_BREAKDOWN,
                 nic_ntxirq=2, data_width=None, cpu_args=None):
        # pcie_phy None: the SoC-bus host port (no LitePCIe); data_width and cpu_args (the
        # soft CPU's SoCCore arguments: ROM, SRAM, main RAM, UART) are then the target's.
        self.host_on_pcie = pcie_phy is not None
        if not self.host_on_pcie:
            if not with_cpu:
                raise ValueError("NICSoC: the SoC-bus host port needs the soft CPU (its driver)")
        if cpu_args is None:
            cpu_args = dict(cpu_type="vexriscv", cpu_variant="minimal",
                            integrated_rom_size=0x8000, integrated_sram_size=0x2000,
                            uart_name="crossover") if with_cpu else \
                       dict(cpu_type=None, integrated_rom_size=0, integrated_sram_size=0,
                            with_uart=False)
        SoCCore.__init__(self, platform, sys_clk_freq, ident=ident, with_timer=with_cpu,
                         **cpu_args)
        self.crg = crg
        self.ethphy = eth_phy
        if self.host_on_pcie:
            self.pcie_phy = pcie_phy
            data_width = pcie_phy.data_width
        else:
            self.pcie_phy = None

        self.info = NICInfo(data_width=data_width, ndmas=1 if self.host_on_pcie else 0, sim=sim,
                            with_cpu=with_cpu, sys_clk_freq=sys_clk_freq)
        tx_msi = tx_msi_names(nic_ntxirq)
        nic_irq_tx, nic_irq_rx = [Signal() for _ in tx_msi], Signal()
        if self.host_on_pcie:
            self.dma_pattern = DMAPattern(platform, data_width, build_dir)
            msis = {"DMA_PATTERN_CHECKER": self.dma_pattern.irq, "NIC_RX": nic_irq_rx}
            msis.update(zip(tx_msi, nic_irq_tx))
            # Completions pass the completion guard (pcie/cpl_guard.py) before LitePCIe's
            # depacketizer: poisoned and failed completions, completion timeout.
            self.pcie_cpl = CplGuard(data_width, req_id=pcie_phy.id,
                                     tag_bits=max(1, (MAX_PENDING_REQUESTS - 1).bit_length()))
            self.comb += [pcie_phy.source.connect(self.pcie_cpl.sink),
                          self.pcie_cpl.link_up.eq(pcie_phy._link_status.fields.status)]
            # The DMA's descriptor tables refuse what it cannot move (pcie/dma_guard.py); the
            # depacketizer's outputs and the packetizer's inputs have ready slices
            # (pcie/tlp_slices.py). The MSI block is as wide as its MSIs (these and the DMA's
            # reader and writer): its vector's priority chain, an If per bit, was 32 deep on
            # LitePCIe's default width.
            align = data_width // 8
            with checked_tables(align), sliced_tlp_streams():
                self.add_pcie(phy=GuardedPHY(pcie_phy, self.pcie_cpl.source), ndmas=1,
                              address_width=32, max_pending_requests=MAX_PENDING_REQUESTS,
                              with_dma_loopback=True, with_dma_buffering=True, msis=msis,
                              msi_type=pcie_phy.msi_type, msi_width=len(msis) + 2)
            if getattr(pcie_phy, "with_msix", False):
                # MSI-X beside MSI (LitePCIe's block with patch 0007): the same interrupt
                # lines, table entry m for MSI number m, each message an MWr TLP on a write
                # port of the crossbar; the PHY leaves MSI idle while the host has MSI-X on.
                self.pcie_msix = LitePCIeMSIX(self.pcie_endpoint, width=len(self.pcie_msi.irqs))
                self.pcie_msix.table.host_written = True      # (regblocks.layout: "rw")
                # The last two CSR locations: every other block stays where the board
                # targets (MSI only) have it.
                self.csr.add("pcie_msix", n=self.csr.n_locs - 2)
                self.csr.add("pcie_msix_table", n=self.csr.n_locs - 1)
                self.comb += [self.pcie_msix.irqs.eq(self.pcie_msi.irqs),
                              self.pcie_msix.msix_enable.eq(pcie_phy.msix_enable),
                              self.pcie_msix.function_mask.eq(pcie_phy.msix_mask)]
            dma = self.pcie_dma0
            self.pcie_dma0_guard = DMAGuard(dma.reader.table, dma.writer.table, align)
            self.comb += [dma.reader.table.enable.eq(dma.reader.enable),
                          dma.writer.table.enable.eq(dma.writer.enable)]
            self.comb += [
                self.pcie_dma0.source.connect(self.dma_pattern.sink),
                self.dma_pattern.source.connect(self.pcie_dma0.sink),
            ]
            host_port = PCIeHostPort(self.pcie_endpoint)
        else:
            # The MSIs become one CPU interrupt with an event per vector; NIC_<vector>_INTERRUPT
            # is the vector's event bit in nic_irq's pending register.
            self.nic_irq = NICIrq(["NIC_RX"] + tx_msi, [nic_irq_rx] + nic_irq_tx)
            self.irq.add("nic_irq", use_loc_if_exists=True)
            for i, name in enumerate(["NIC_RX"] + tx_msi):
                self.add_constant(name + "_INTERRUPT", i)
            host_port = SoCBusHostPort(self.bus)
        self.nic = NICDatapathCSR(platform, host_port, eth_phy, build_dir,
                                  data_width=data_width, ntxq=nic_ntxq, ntxirq=nic_ntxirq)
        nic_irqs = [self.nic.irq_rx] + self.nic.irq_tx
        if self.host_on_pcie:
            # Each NIC MSI leaves after the DMA writes taken before its interrupt decision
            # (pcie/msi_order.py: LitePCIe's MSI is not on the TLP stream).
            # Writes count where the write ports' arbiter takes them (pcie/tlp_slices.py).
            order = self.pcie_msi_order = MSIOrder(self.pcie_endpoint.crossbar.write_taken,
                                                   pcie_phy.sink, len(nic_irqs))
            self.comb += order.irqs.eq(Cat(*nic_irqs))
            nic_irqs = [order.irqs_out[i] for i in range(len(nic_irqs))]
            # Completions leave after the writes taken before them (pcie/cpl_order.py; its
            # registers in the same block).
            pk = self.pcie_endpoint.packetizer
            order.cpl = CplOrder(pk.cmp_sink, order.taken, order.left)
            self.comb += pk.cmp_open.eq(order.cpl.open)
        self.comb += [a.eq(b) for a, b in zip([nic_irq_rx] + nic_irq_tx, nic_irqs)]
        # The nic block's table entry gives its first MSI (NIC_RX) and their count: the host
        # finds TX group g's MSI at NIC_TX_INTERRUPT + g (LiteX numbers MSIs in name order).
        def const(name):                       # SoCConstant, or a plain value
            v = self.constants[name]
            return getattr(v, "value", v)
        first = const("NIC_TX_INTERRUPT")
        for g, name in enumerate(tx_msi):
            if const(name + "_INTERRUPT") != first + g:
                raise ValueError(f"NICSoC: MSI {name} is not NIC_TX_INTERRUPT + {g}")
        self.add_constant("NIC_NTXQ", nic_ntxq)
        self.add_constant("NIC_NTXIRQ", nic_ntxirq)
        # A host CSR access is in progress: the BAR0-to-CSR bridge (the SoC-bus build: the
        # CPU's CSR bridge, add_csr_bridge) is not idle.
        self.csr_busy = Signal()
        if self.host_on_pcie:
            self.comb += self.csr_busy.eq(~self.pcie_mmap.fsm.ongoing("IDLE"))
        if with_analyzer:
            self.add_analyzer(platform, data_width, build_dir, with_breakdown,
                              nic_ntxq if with_levels else 0, with_events, with_stream,
                              with_wr_breakdown)

    def add_analyzer(self, platform, data_width, build_dir, with_breakdown=True, ntxq=4,
                     with_events=True, with_stream=True, with_wr_breakdown=True):
        # ntxq: the TX queues whose levels the analyzer keeps; 0: no levels at all.
        probes = analyzer_probes(data_width)
        stream = None
        if with_stream and self.host_on_pcie:
            port = self.pcie_endpoint.crossbar.get_master_port(write_only=True)
            stream = dict(adapter=DMAWriteAdapter(port, data_width, req_id=self.pcie_phy.id),
                          data_width=data_width, mps=self.pcie_phy.max_payload_size)
        elif with_stream:
            # The deep capture's ring in SoC RAM, through a Wishbone master of its own.
            adapter = WishboneDMAWriteAdapter(data_width, address_width=self.bus.address_width,
                                              max_payload=SOCBUS_STREAM_MPS)
            self.bus.add_master(name="nicscope_stream", master=adapter.bus)
            stream = dict(adapter=adapter, data_width=data_width,
                          mps=Constant(SOCBUS_STREAM_MPS, 13))
        self.analyzer = an = BusAnalyzerCSR(
            platform, probes, build_dir, depth=ANALYZER_DEPTH, latency=ANALYZER_LATENCY,
            breakdown=analyzer_breakdown(data_width, self.host_on_pcie) if with_breakdown
            else None,
            levels=analyzer_levels(ntxq) if ntxq else (),
            events=ANALYZER_EVENT_LIST if with_events else (),
            stream=stream,
            figures=ANALYZER_FIGURES if (with_breakdown or ntxq or with_events) else 0,
            tracks=ANALYZER_TRACKS if ntxq else 0,
            wr_breakdown=analyzer_wr_breakdown(with_stream) if with_wr_breakdown else None)
        if self.host_on_pcie:
            self.add_pcie_probes(an, data_width)
        else:
            # No PCIe PHY, DMA channel or MSI: their probes see nothing; the CSR probe is on
            # the CPU's CSR bridge (add_csr_bridge), MSI on the CPU interrupt's events.
            for p in probes[:2] + probes[4:7]:
                assert p.name.startswith(("pcie_", "dma_"))
                an.probe(p.name, 0, 0, 0, 0, **{f: 0 for f, _w in p.fields})
            irqs = self.nic_irq.pulses
            fired = reduce(or_, irqs)
            vector = reduce(or_, [Mux(p, i, 0) for i, p in enumerate(irqs)])
            an.probe("msi", fired, 1, 1, 1, vector=Mux(fired, vector, 0))
            self.add_nic_probes(an, data_width)
        self.comb += an.hold.eq(self.csr_busy)
        if with_breakdown and self.host_on_pcie:
            an.at_finalize(lambda: self.add_breakdown_inputs(an, data_width))
        elif with_breakdown:
            socbus_handoffs.read_handoffs(self, an, data_width)
        if with_wr_breakdown and self.host_on_pcie:
            an.at_finalize(lambda: self.add_wr_breakdown_inputs(an, with_stream))
        elif with_wr_breakdown:
            adapters = [None, self.nic.wradp] + ([an.stream_dma] if with_stream else [])
            socbus_handoffs.write_handoffs(self, an, adapters)
        if ntxq:
            an.at_finalize(lambda: self.add_levels(an, ntxq))
        if with_events:
            self.add_events(an)
        an.watch(self)

    def add_nic_probes(self, an, data_width, csr=None):
        rd, wr = self.nic.rdadp, self.nic.wradp
        an.probe("nic_rd_req", rd.rd_req_valid, rd.rd_req_ready, 1, 1)
        an.probe("nic_rd_cpl", rd.rd_cpl_valid, rd.rd_cpl_ready, 0, rd.rd_cpl_last,
                 nbytes=data_width // 8)
        an.probe("nic_wr", wr.wr_valid, wr.wr_ready, wr.wr_first, wr.wr_last,
                 nbytes=data_width // 8)
        if csr is not None:
            self.add_csr_probe(an, csr)
        if getattr(self, "mac_probes_sys_side", False):
            # The PHY streams are in the PHY's clock domains (a board's RGMII at 125 MHz), not
            # the analyzer's: the probes watch the MAC core's sys-side streams instead (a beat
            # of data_width bits; bytes not counted: the probes' byte field holds 1).
            for name, ep in (("mac_tx", self.nic.mac.sink), ("mac_rx", self.nic.mac.source)):
                an.probe(name, ep.valid, ep.ready, ep.first, ep.last, nbytes=0)
            return
        for name, ep in (("mac_tx", self.ethphy.sink), ("mac_rx", self.ethphy.source)):
            an.probe(name, ep.valid, ep.ready, ep.first, ep.last, nbytes=1)

    @staticmethod
    def add_csr_probe(an, wb):
        access = wb.cyc & wb.stb
        an.probe("csr", access, wb.ack, 1, 1, nbytes=4, we=access & wb.we,
                 adr=Mux(access, wb.adr[:14], 0))

    def add_pcie_probes(self, an, data_width):
        phy, dma, wb = self.pcie_phy, self.pcie_dma0, self.pcie_mmap.wishbone
        # Fields read 0 when they mean nothing (no header beat, no access), so the trace's
        # run-length compression is not defeated by payload bits.
        for name, ep in (("pcie_rx", phy.source), ("pcie_tx", phy.sink)):
            an.probe(name, ep.valid, ep.ready, ep.first, ep.last, nbytes=popcount(ep.be),
                     fmt_type=Mux(ep.valid & ep.first, ep.dat[24:32], 0))
        rd_req, rd_cpl = dma.reader.port.source, dma.reader.port.sink
        wr_req = dma.writer.port.source
        an.probe("dma_rd_req", rd_req.valid, rd_req.ready, rd_req.first, rd_req.last)
        an.probe("dma_rd_cpl", rd_cpl.valid, rd_cpl.ready, rd_cpl.first, rd_cpl.last,
                 nbytes=data_width // 8, end=rd_cpl.valid & rd_cpl.end)
        an.probe("dma_wr_req", wr_req.valid, wr_req.ready, wr_req.first, wr_req.last,
                 nbytes=data_width // 8)
        self.add_nic_probes(an, data_width, csr=wb)
        msi = phy.msi
        an.probe("msi", msi.valid, msi.ready, 1, 1, vector=Mux(msi.valid, msi.dat[:8], 0))

    def add_events(self, an):
        an.event("db_desc", start=self.nic.txq_db.re, end=self.nic.txe_desc_rd)
        if not self.host_on_pcie:
            # mmio_rd: on the CSR bridge's bus (add_csr_bridge, made at finalize).
            ev = self.nic_irq.ev
            socbus_handoffs.irq_event(an, ev.nic_rx, ev.enable.storage[0])
            return
        rx, tx, msi = self.pcie_phy.source, self.pcie_phy.sink, self.pcie_phy.msi
        def first_beat(ep, types):
            fmt = ep.dat[24:32]
            return ep.valid & ep.ready & ep.first & reduce(or_, [fmt == t for t in types])
        an.event("mmio_rd", start=first_beat(rx, (0x00, 0x20)), end=first_beat(tx, (0x0A, 0x4A)))
        v = self.constants["NIC_RX_INTERRUPT"]
        v = getattr(v, "value", v)
        an.event("rx_irq_msi", start=self.nic.irq_rx & self.pcie_msi.enable.storage[v],
                 end=msi.valid & msi.ready & (msi.dat[:8] == v))

    def add_levels(self, an, ntxq):
        # LitePCIe's tag queue holds the free tags (filled after reset); the NIC's counts are
        # its datapath's own; a PHY without flow-control credit outputs gives 0, the SoC bus
        # (no tags, no credits) 0 for both.
        if self.host_on_pcie:
            self.pcie_endpoint.crossbar.finalize()
            tags = self.pcie_endpoint.crossbar.controller.tag_queue
            an.level("rd_tags", Constant(MAX_PENDING_REQUESTS, 8) - tags.level)
        else:
            an.level("rd_tags", Constant(0, 8))
        an.level("nic_rd", self.nic.port("rdarb_outstanding"))
        fc = getattr(self.pcie_phy, "fc", None)
        for k in ("ph", "pd", "nph"):
            an.level(f"fc_{k}", getattr(fc, k) if fc is not None else Constant(0, 1))
        w = TXQ_CNT_BITS
        for q in range(ntxq):
            an.level(f"txq{q}_desc", self.nic.txq_in_flight[q * w:(q + 1) * w])
        an.level("tx_fifo", self.nic.port("txfifo_level"))
        an.level("rx_fifo", self.nic.port("rxfifo_level"))

    def add_breakdown_inputs(self, an, data_width):
        # Each read's hand-offs: its engine's port, the TLP controller's input (after the
        # crossbar's arbiter) and output (with its tag), the PHY streams (tags from the TLP
        # headers), the controller's in-order completion output.
        # The crossbar makes its TLP controller when it is finalized.
        self.pcie_endpoint.crossbar.finalize()
        ctrl = self.pcie_endpoint.crossbar.controller
        # The NIC's reads are of two classes by their kind (rd_req_desc, carried through the
        # read adapter's register slice: port_desc). Its request is held at the port until
        # taken, and the crossbar and the TLP controller pass it on combinationally (LitePCIe's
        # SEND-READ-REQ), so while it is at the controller's input or output its kind is the
        # one at the port.
        dma, nic = self.pcie_dma0.reader.port, self.nic.rdadp.port
        desc = self.nic.rdadp.port_desc
        engines = [(dma, 1), (nic, desc), (nic, ~desc)]
        cin, cout, cmp = ctrl.master_in.sink, ctrl.master_out.sink, ctrl.master_in.source
        an.breakdown_input("bd_raised", classes=[
            dict(valid=p.source.valid & kind, ready=p.source.ready) for p, kind in engines])
        an.breakdown_input("bd_granted", classes=[
            dict(valid=cin.valid & cin.first & ~cin.we & (cin.channel == p.channel) & kind,
                 ready=cin.ready) for p, kind in engines])
        an.breakdown_input("bd_issue", valid=cout.valid & cout.first & ~cout.we,
                           ready=cout.ready,
                           cls=Mux(cout.channel == nic.channel, Mux(desc, 1, 2), 0),
                           tag=cout.tag)
        tx, rx = self.pcie_phy.sink, self.pcie_phy.source
        an.breakdown_input("bd_tx", valid=tx.valid, ready=tx.ready, first=tx.first,
                           fmt_type=Mux(tx.first, tx.dat[24:32], 0), tag=tx.dat[40:48])
        # The tag: header byte 10, in dword 2 (lane 2 of beat 0 at 128 bits, lane 0 of beat 1
        # at 64); length and byte count in dwords 0 and 1 of the first beat.
        tag = rx.dat[72:80] if data_width >= 96 else rx.dat[8:16]
        an.breakdown_input("bd_rx", valid=rx.valid, ready=rx.ready, first=rx.first,
                           last=rx.last, fmt_type=Mux(rx.first, rx.dat[24:32], 0),
                           length=rx.dat[0:10], byte_count=rx.dat[32:44], tag=tag)
        an.breakdown_input("bd_handoff", valid=cmp.valid & cmp.ready & cmp.last & cmp.end,
                           tag=cmp.tag)

    def write_ports(self, with_stream=True):
        """The write classes' LitePCIe ports, in class order (analyzer_wr_breakdown)."""
        ports = [self.pcie_dma0.writer.port, self.nic.wradp.port]
        return ports + [self.analyzer.stream_dma.port] if with_stream else ports

    def add_wr_breakdown_inputs(self, an, with_stream):
        # Each write's hand-offs: its engine's port, the crossbar's write arbiter's output
        # (where the port's write is taken, into the slice before the crossbar's last arbiter:
        # pcie/tlp_slices.py), the PHY's TX stream. Writes bypass the TLP controller (write-only
        # ports). A port's next write may be raised while the last one is in the slice, so
        # the hand-off is taken before it: a class's write is granted before its next is raised.
        self.pcie_endpoint.crossbar.finalize()
        pk = self.pcie_endpoint.crossbar.write_taken
        ports = self.write_ports(with_stream)
        start = pk.valid & pk.first & pk.we
        mine = [pk.channel == p.channel for p in ports]
        an.breakdown_input("wbd_raised", classes=[
            dict(valid=p.source.valid & p.source.first, ready=p.source.ready) for p in ports])
        an.breakdown_input("wbd_granted", classes=[
            dict(valid=start & m, ready=pk.ready) for m in mine])
        an.breakdown_input("wbd_other", valid=start & ~reduce(or_, mine), ready=pk.ready)
        tx = self.pcie_phy.sink
        an.breakdown_input("wbd_tx", valid=tx.valid, ready=tx.ready, first=tx.first,
                           fmt_type=Mux(tx.first, tx.dat[24:32], 0))
