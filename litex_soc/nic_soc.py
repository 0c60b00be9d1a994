#
# nic_soc.py: the NIC's LiteX SoC, shared by every target (simulation and boards).
#
# What it is: LitePCIe endpoint with its BAR0-to-CSR bridge, MSI and one LitePCIe DMA channel
# (reader + writer + loopback), the DMA pattern generator/checker, the identification block and
# LiteX's controller (ctrl_scratch). A soft CPU (VexRiscv) is optional.
#
# Parameters:
#   platform      a LiteX platform; the PCIe PHY is built by the target and passed in.
#   pcie_phy      a LitePCIe PHY (SimPCIePHY in simulation, S7PCIEPHY on a 7-series board).
#   sys_clk_freq  system clock (125 MHz: the 7-series PCIe user clock for Gen2 x4 at 128 bits).
#   with_cpu      add a VexRiscv with ROM/SRAM and a crossover UART (default off: faster sim).
#   build_dir     where emitted Amaranth Verilog is written.

from litex.soc.integration.soc_core import SoCCore

from litex_soc.dma_pattern import DMAPattern
from litex_soc.nic_info import NICInfo


class NICSoC(SoCCore):
    def __init__(self, platform, crg, pcie_phy, sys_clk_freq=125e6, with_cpu=False,
                 build_dir="build", sim=True, ident="open FPGA NIC"):
        cpu_args = dict(cpu_type="vexriscv", cpu_variant="minimal", integrated_rom_size=0x8000,
                        integrated_sram_size=0x2000, uart_name="crossover") if with_cpu else \
                   dict(cpu_type=None, integrated_rom_size=0, integrated_sram_size=0,
                        with_uart=False)
        SoCCore.__init__(self, platform, sys_clk_freq, ident=ident, with_timer=with_cpu,
                         **cpu_args)
        self.crg = crg
        self.pcie_phy = pcie_phy
        data_width = pcie_phy.data_width

        self.info = NICInfo(data_width=data_width, ndmas=1, sim=sim, with_cpu=with_cpu)
        self.dma_pattern = DMAPattern(platform, data_width, build_dir)

        self.add_pcie(phy=pcie_phy, ndmas=1, address_width=32, max_pending_requests=8,
                      with_dma_loopback=True, with_dma_buffering=True,
                      msis={"DMA_PATTERN_CHECKER": self.dma_pattern.irq})
        self.comb += [
            self.pcie_dma0.source.connect(self.dma_pattern.sink),
            self.dma_pattern.source.connect(self.pcie_dma0.sink),
        ]
