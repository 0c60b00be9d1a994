#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# sim.py: the simulation target: the NIC SoC (nic_soc.py) with SimPCIePHY in place of the hard
# PCIe block and SimEthGMIIPHY on GMII-like pins. Writes what the Verilator harness (sw/sim/)
# builds from (gateware/nicsoc.v, sources.f), csr.csv/csr.json, register_map.md, and in
# host_include/ LiteX's csr.h and soc.h and nic_contract.h for the build's checks
# (litex_soc/test_regmap.py); host code includes none of them.
#
# Usage: python -m litex_soc.targets.sim --data-width 128 --output-dir build/sim_dw128 [--with-cpu]
#            [--eth-ratio K]
#
# Top-level ports: sys_clk, sys_rst, pcie_* (sim_pcie_phy.py), probe_* (what the harness counts:
# DMA request handshakes, each write class's writes at its port and at the packetizer, the CSR
# bridge's busy state; the analyzer's snapshot, sample and cycle counter) and the Ethernet pins
# eth_tx_data[7:0], eth_tx_en, eth_tx_er (out) and eth_rx_data[7:0], eth_rx_dv, eth_rx_er (in)
# of SimEthGMIIPHY (sim_eth_phy.py), driven by the harness (looped back, or to a second SoC).
# --eth-ratio K > 1 (the soak's build) adds eth_clk: the Ethernet side on its own clock, which
# the harness runs K times as fast as sys_clk (K octets a system cycle: an 8K Gb/s wire); the
# analyzer's MAC probes then watch the MAC core's sys-side streams.

import argparse
import os

from litex.build.generic_platform import GenericPlatform, Pins, Subsignal
from litex.build.io import CRG
from litex.soc.integration import export
from litex.soc.integration.builder import Builder
from migen import Cat, If, Signal

from litex_soc.nic_soc import ANALYZER_WBD_CLASSES, NICSoC, analyzer_probes
from litex_soc.regmap import write_regmap
from litex_soc.targets.sim_eth_phy import SimEthGMIIPHY
from litex_soc.targets.sim_pcie_phy import FC_WIDTH, SimPCIePHY
from rtl.contract.gen_c import write_header as write_contract_header
from rtl.nicscope.analyzer import sample_width

TOP = "nicsoc"
WBD_N = len(ANALYZER_WBD_CLASSES)     # write classes of the probe_wr_* pins


def analyzer_sample_width(data_width):
    return sample_width(analyzer_probes(data_width))


def sim_io(data_width, eth_clk=False):
    """The top-level pins (eth_clk: the Ethernet side's own clock pin)."""
    eth = [("eth_clk", 0, Pins(1))] if eth_clk else []
    eth += [
        ("eth", 0,
            Subsignal("tx_data", Pins(8)), Subsignal("tx_en", Pins(1)),
            Subsignal("tx_er", Pins(1)),
            Subsignal("rx_data", Pins(8)), Subsignal("rx_dv", Pins(1)),
            Subsignal("rx_er", Pins(1)),
        ),
    ]
    return eth + [
        ("sys_clk", 0, Pins(1)),
        ("sys_rst", 0, Pins(1)),
        ("pcie", 0,
            Subsignal("rx_valid", Pins(1)), Subsignal("rx_ready", Pins(1)),
            Subsignal("rx_first", Pins(1)), Subsignal("rx_last", Pins(1)),
            Subsignal("rx_dat", Pins(data_width)), Subsignal("rx_be", Pins(data_width // 8)),
            Subsignal("tx_valid", Pins(1)), Subsignal("tx_ready", Pins(1)),
            Subsignal("tx_first", Pins(1)), Subsignal("tx_last", Pins(1)),
            Subsignal("tx_dat", Pins(data_width)), Subsignal("tx_be", Pins(data_width // 8)),
            Subsignal("msi_valid", Pins(1)), Subsignal("msi_ready", Pins(1)),
            Subsignal("msi_dat", Pins(8)),
            Subsignal("id", Pins(16)),
            Subsignal("max_request_size", Pins(16)), Subsignal("max_payload_size", Pins(16)),
            Subsignal("link_up", Pins(1)), Subsignal("msi_enable", Pins(1)),
            Subsignal("bus_master_enable", Pins(1)),
            Subsignal("msix_enable", Pins(1)), Subsignal("msix_mask", Pins(1)),
            Subsignal("fc_ph", Pins(FC_WIDTH)), Subsignal("fc_pd", Pins(FC_WIDTH)),
            Subsignal("fc_nph", Pins(FC_WIDTH)),
        ),
        ("probe", 0,
            Subsignal("dma_wr_valid", Pins(1)), Subsignal("dma_wr_ready", Pins(1)),
            Subsignal("dma_rd_valid", Pins(1)), Subsignal("dma_rd_ready", Pins(1)),
            Subsignal("csr_busy", Pins(1)),
            # Writes by class (nic_soc.ANALYZER_WBD_CLASSES: raw DMA writer, NIC, analyzer
            # stream; bit k class k): each class's first beat at its LitePCIe port; a write's
            # first beat past the crossbar's write arbiter (pcie/tlp_slices.py, write_taken)
            # and its class (len(ANALYZER_WBD_CLASSES): another port's).
            Subsignal("wr_raise_valid", Pins(WBD_N)), Subsignal("wr_raise_ready", Pins(WBD_N)),
            Subsignal("wr_pk_start", Pins(1)), Subsignal("wr_pk_ready", Pins(1)),
            Subsignal("wr_pk_class", Pins(WBD_N.bit_length())),
            # The analyzer's snapshot strobe, sample vector and cycle counter, so the harness
            # can check the analyzer against its own cycle-by-cycle view.
            Subsignal("an_snapshot", Pins(1)),
            Subsignal("an_sample", Pins(analyzer_sample_width(data_width))),
            Subsignal("an_now", Pins(48)),
        ),
    ]


class VerilogPlatform(GenericPlatform):
    """A platform with no toolchain: build() writes the top-level Verilog and a file list."""

    def __init__(self, data_width, eth_clk=False):
        GenericPlatform.__init__(self, "sim", sim_io(data_width, eth_clk), name=TOP)

    def add_false_path_constraint(self, from_, to):
        pass    # simulation: nothing to constrain

    def build(self, fragment, build_dir, build_name, run=False, **kwargs):
        os.makedirs(build_dir, exist_ok=True)
        conv = self.get_verilog(fragment, name=build_name)
        top = os.path.join(build_dir, build_name + ".v")
        # Memory init files go beside the Verilog and are named by absolute path in it, so the
        # simulation finds them whatever its working directory.
        main = conv.main_source
        for filename, content in conv.data_files.items():
            path = os.path.abspath(os.path.join(build_dir, filename))
            with open(path, "w") as f:
                f.write(content)
            main = main.replace(f'"{filename}"', f'"{path}"')
        with open(top, "w") as f:
            f.write(main)
        with open(os.path.join(build_dir, "sources.f"), "w") as f:
            for path, _language, _library in self.sources:
                f.write(os.path.abspath(os.path.join(build_dir, path)) + "\n")
            f.write(os.path.abspath(top) + "\n")
        return conv.ns


class SimSoC(NICSoC):
    """The NIC SoC with the simulation PHYs: SimPCIePHY (msi_type: LitePCIe's MSI block,
    "msi-multi-vector" by default: each NIC interrupt vector its own MSI) and SimEthGMIIPHY on
    the top-level eth_* pins. with_msix: an MSI-X capability beside MSI (LitePCIe's MSI-X
    block, nic_soc.py; the board targets have MSI only). with_analyzer=False leaves the bus
    analyzer out and analyzer_pins=False leaves its cross-check pins (an_*) undriven (both for
    litex_soc/cost/ecp5_fmax.py, which compares the design's Fmax with and without it).
    eth_ratio > 1 puts the Ethernet side on the eth_clk pin (the harness's SIM_ETH_RATIO)."""

    def __init__(self, data_width=128, with_cpu=False, build_dir="build", with_analyzer=True,
                 analyzer_pins=True, msi_type="msi-multi-vector", nic_ntxirq=2, eth_ratio=1,
                 with_msix=True):
        platform = VerilogPlatform(data_width, eth_clk=eth_ratio > 1)
        eth_clk = platform.request("eth_clk") if eth_ratio > 1 else None
        # The PHY's streams are on eth_clk then, not the analyzer's clock (nic_soc.py).
        self.mac_probes_sys_side = eth_ratio > 1
        crg = CRG(platform.request("sys_clk"), platform.request("sys_rst"))
        phy = SimPCIePHY(platform.request("pcie"), data_width=data_width, msi_type=msi_type,
                         with_msix=with_msix)
        # (Built in the call, unnamed, so that Migen names its signals after the class.)
        NICSoC.__init__(self, platform, crg, phy, SimEthGMIIPHY(platform.request("eth"), eth_clk),
                        sys_clk_freq=125e6, with_cpu=with_cpu, build_dir=build_dir, sim=True,
                        with_analyzer=with_analyzer, nic_ntxirq=nic_ntxirq)
        probe = platform.request("probe")
        writer_port = self.pcie_dma0.writer.port.source
        reader_port = self.pcie_dma0.reader.port.source
        pk = self.pcie_endpoint.crossbar.write_taken
        wr_ports = self.write_ports(hasattr(getattr(self, "analyzer", None), "stream_dma"))
        pk_class = Signal(WBD_N.bit_length(), reset=WBD_N)
        self.comb += [
            probe.dma_wr_valid.eq(writer_port.valid), probe.dma_wr_ready.eq(writer_port.ready),
            probe.dma_rd_valid.eq(reader_port.valid), probe.dma_rd_ready.eq(reader_port.ready),
            probe.csr_busy.eq(self.csr_busy),
            probe.wr_raise_valid.eq(Cat(*[p.source.valid & p.source.first for p in wr_ports])),
            probe.wr_raise_ready.eq(Cat(*[p.source.ready for p in wr_ports])),
            probe.wr_pk_start.eq(pk.valid & pk.first & pk.we), probe.wr_pk_ready.eq(pk.ready),
            probe.wr_pk_class.eq(pk_class),
            *[If(pk.channel == p.channel, pk_class.eq(k)) for k, p in enumerate(wr_ports)],
        ]
        if with_analyzer and analyzer_pins:
            self.comb += [
                probe.an_snapshot.eq(self.analyzer.snapshot_pulse),
                probe.an_sample.eq(self.analyzer.sample),
                probe.an_now.eq(self.analyzer.now),
            ]


def main():
    parser = argparse.ArgumentParser(description="Build the NIC SoC for the Verilator simulation.")
    parser.add_argument("--data-width", type=int, default=128, choices=(64, 128),
                        help="PCIe datapath width (128: Gen2 x4 at 125 MHz; 64: Gen2 x2/Gen1 x4).")
    parser.add_argument("--with-cpu", action="store_true", help="Add a VexRiscv soft CPU.")
    parser.add_argument("--nic-txirq", type=int, default=2,
                        help="TX interrupt vectors (TX queue groups, queue q in group q %% N) "
                             "over the NIC's 4 TX queues (default 2).")
    parser.add_argument("--eth-ratio", type=int, default=1,
                        help="Ethernet clock / system clock (the harness's SIM_ETH_RATIO); "
                             "above 1 the Ethernet side gets its own clock pin, eth_clk.")
    parser.add_argument("--without-analyzer", action="store_true",
                        help="Leave the bus analyzer out (its probe_an_* pins undriven).")
    parser.add_argument("--output-dir", default="build/sim_dw128")
    args = parser.parse_args()

    gateware_dir = os.path.join(args.output_dir, "gateware")
    soc = SimSoC(data_width=args.data_width, with_cpu=args.with_cpu, build_dir=gateware_dir,
                 nic_ntxirq=args.nic_txirq, eth_ratio=args.eth_ratio,
                 with_analyzer=not args.without_analyzer)
    builder = Builder(soc, output_dir=args.output_dir, gateware_dir=gateware_dir,
                      compile_software=args.with_cpu, compile_gateware=False,
                      csr_csv=os.path.join(args.output_dir, "csr.csv"),
                      csr_json=os.path.join(args.output_dir, "csr.json"))
    builder.build(build_name=TOP)

    # LiteX's headers without CPU access functions, as LitePCIe's driver uses them: checked by
    # litex_soc/test_regmap.py, not included by host code (it finds the registers at run time).
    host_inc = os.path.join(args.output_dir, "host_include")
    os.makedirs(host_inc, exist_ok=True)
    csr_h = export.get_csr_header(regions=soc.csr_regions, constants=soc.constants,
                                  csr_base=soc.mem_regions["csr"].origin,
                                  with_access_functions=False)
    with open(os.path.join(host_inc, "csr.h"), "w") as f:
        f.write(csr_h)
    with open(os.path.join(host_inc, "soc.h"), "w") as f:
        f.write(export.get_soc_header(soc.constants, with_access_functions=False))
    write_contract_header(os.path.join(host_inc, "nic_contract.h"))
    write_regmap(soc, os.path.join(args.output_dir, "register_map.md"))


if __name__ == "__main__":
    main()
