# SPDX-License-Identifier: BSD-2-Clause
"""Register blocks: what the host discovers at run time, and how.

BAR0 offset 0 is the identification block (`info`): MAGIC, VERSION, CONFIG, RB_COUNT, then a
table of RB_COUNT entries of four 32-bit words (RB_MAX at most), one per register block:

    TYPE     the block's type (BLOCKS below)
    VERSION  major << 16 | layout: major is the block's version here, layout a CRC-16 of its
             register names, widths and fields, so a host built for another layout refuses it
    BASE     the block's BAR0 offset
    INFO     first MSI number (bits 7..0, 0xff: none), MSI count (15..8), a block parameter
             (31..16: NIC TX queues for `nic`, the DMA address width for `pcie_dma0`, else 0)

The host reads the table once, then reaches every register at its block's BASE plus an offset
that does not depend on the build (sw/include/nic_regs.h, generated from the SoC). MSIs of a
block are numbered consecutively from its first, in the order of `irqs` below.
"""

MAGIC = 0x4E494331            # "NIC1"
VERSION_MAJOR, VERSION_MINOR = 0, 2
RB_MAX = 16                   # table entries the identification block has room for
ENTRY_WORDS = 4
NO_IRQ = 0xFF

# name (the SoC's CSR region) -> (type, major version, MSI names in order, what it is)
BLOCKS = {
    "ctrl":           (0x0001, 1, (), "LiteX SoC controller: reset, scratch, bus errors"),
    "identifier_mem": (0x0002, 1, (), "LiteX identifier string, one character per word"),
    "pcie_phy":       (0x0010, 1, (), "LitePCIe PHY: link status, negotiated MPS/MRRS"),
    "pcie_msi":       (0x0011, 1, (), "LitePCIe MSI, one vector per message number"),
    "pcie_msix":      (0x0017, 1, (), "LitePCIe MSI-X: per-vector enable, pending bits (PBA)"),
    "pcie_msix_table": (0x0018, 1, (), "MSI-X table: an entry of four words per MSI number"),
    "pcie_bar":       (0x0013, 1, (), "BAR0 accesses refused: partial writes, longer than 1 DW"),
    "pcie_cpl":       (0x0014, 1, (), "Device read completions: timeouts, UR, CA, poisoned"),
    "pcie_msi_order": (0x0015, 1, (), "NIC MSIs and read completions held until the DMA "
                       "writes before them left"),
    "pcie_dma0":      (0x0012, 1, ("PCIE_DMA0_READER", "PCIE_DMA0_WRITER"),
                       "LitePCIe DMA channel 0 with loopback and buffering"),
    "pcie_dma0_guard": (0x0016, 1, (), "DMA channel 0 descriptors refused: misaligned, odd "
                        "length, length 0"),
    "dma_pattern":    (0x0020, 1, ("DMA_PATTERN_CHECKER",),
                       "DMA pattern generator (card-to-host) and checker (host-to-card)"),
    "nic":            (0x0100, 1, ("NIC_RX", "NIC_TX"),
                       "NIC datapath: TX queues, rings, engines, FIFOs, coalescing"),
    "analyzer":       (0x0200, 1, (), "Bus analyzer: occupancy, TLP types, latency, trace"),
    "uart":           (0x0300, 1, (), "Soft CPU console: crossover UART (host side: xover_*)"),
}
TYPES = {name: t for name, (t, *_rest) in BLOCKS.items()}
