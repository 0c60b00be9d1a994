#!/usr/bin/env python3
#
# gtkw.py: writes a GTKWave save file for a trace of the simulated SoC, with the PCIe PHY streams
# (host->device, device->host, MSI), the link configuration and the measurement probes in named
# groups. Usage: python3 scripts/gtkw.py TRACE.fst OUT.gtkw [--data-width 128]
#
# The signal names are the Verilated top level's ports (TOP.<port>): the same for FST and VCD.

import argparse
import os

# GTKWave trace flags: 0x22 hex right-justified, 0x28 binary right-justified, 0x24 decimal.
HEX, BIN, DEC = "@22", "@28", "@24"

GROUPS = [
    ("PCIe host->device (rx)", [
        ("pcie_rx_valid", BIN, 1), ("pcie_rx_ready", BIN, 1), ("pcie_rx_first", BIN, 1),
        ("pcie_rx_last", BIN, 1), ("pcie_rx_be", HEX, "be"), ("pcie_rx_dat", HEX, "dat"),
    ]),
    ("PCIe device->host (tx)", [
        ("pcie_tx_valid", BIN, 1), ("pcie_tx_ready", BIN, 1), ("pcie_tx_first", BIN, 1),
        ("pcie_tx_last", BIN, 1), ("pcie_tx_be", HEX, "be"), ("pcie_tx_dat", HEX, "dat"),
    ]),
    ("MSI", [("pcie_msi_valid", BIN, 1), ("pcie_msi_ready", BIN, 1), ("pcie_msi_dat", HEX, 8)]),
    ("Link configuration", [
        ("pcie_max_payload_size", DEC, 16), ("pcie_max_request_size", DEC, 16),
        ("pcie_id", HEX, 16), ("pcie_link_up", BIN, 1),
    ]),
    ("Probes: DMA requests and CSR bridge", [
        ("probe_dma_wr_valid", BIN, 1), ("probe_dma_wr_ready", BIN, 1),
        ("probe_dma_rd_valid", BIN, 1), ("probe_dma_rd_ready", BIN, 1),
        ("probe_csr_busy", BIN, 1),
    ]),
]


def signal_name(port, width, data_width):
    if width == "dat":
        width = data_width
    elif width == "be":
        width = data_width // 8
    return f"TOP.{port}" if width == 1 else f"TOP.{port}[{width - 1}:0]"


def write_gtkw(trace, out, data_width=128):
    lines = [
        f'[dumpfile] "{os.path.abspath(trace)}"',
        "[timestart] 0",
        "[size] 1600 900",
        "[signals_width] 300",
        "[sst_expanded] 1",
        "[sst_vpaned_height] 300",
    ]
    lines.append(f"{BIN}")
    lines.append("TOP.sys_clk")
    for name, signals in GROUPS:
        lines.append("@800200")
        lines.append(f"-{name}")
        for port, fmt, width in signals:
            lines.append(fmt)
            lines.append(signal_name(port, width, data_width))
        lines.append("@1000200")
        lines.append(f"-{name}")
    with open(out, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    parser = argparse.ArgumentParser(description="GTKWave save file for a trace of the SoC.")
    parser.add_argument("trace")
    parser.add_argument("out")
    parser.add_argument("--data-width", type=int, default=128, choices=(64, 128))
    args = parser.parse_args()
    write_gtkw(args.trace, args.out, args.data_width)


if __name__ == "__main__":
    main()
