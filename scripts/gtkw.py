#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# gtkw.py: writes a GTKWave save file for a trace of the simulated SoC, with the PCIe PHY streams
# (host->device, device->host, MSI), the link configuration and the measurement probes in named
# groups, opening zoomed to the whole trace. Usage:
#   python3 scripts/gtkw.py TRACE.fst OUT.gtkw [--data-width 128]
#
# The signal names are the Verilated top level's ports (TOP.<port>): the same for FST and VCD.

import argparse
import math
import os
import re
import struct

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


# The window the save file sets, and the width of the waveform area the zoom is computed for
# (as sw/common/vcd_writer.h: GTKWave 3.3 gives it about 1000 pixels in that window).
SIZE, SIGNALS_WIDTH, WAVE_PIXELS = (1600, 900), 300, 960


def trace_span(trace):
    """(first, last) time of a VCD or FST trace in GTKWave's units: the file's time unit times
    its timescale's 1, 10 or 100."""
    with open(trace, "rb") as f:
        head = f.read(74)
        if len(head) == 74 and head[0] == 0:          # FST: header block first (FST_BL_HDR)
            first, last = struct.unpack(">QQ", head[9:25])
            exponent = struct.unpack("b", head[73:74])[0]
            return first * 10 ** (exponent % 3), last * 10 ** (exponent % 3)
        f.seek(0)
        header, first, last = [], None, None         # VCD: "#<time>" lines
        for line in f:
            if line.startswith(b"#"):
                last = int(line[1:])
                first = last if first is None else first
            elif first is None:
                header.append(line)
    if first is None:
        raise ValueError(f"{trace}: no time in the trace")
    m = re.search(rb"\$timescale\s+(1|10|100)\s*[munpf]?s\s+\$end", b"".join(header))
    scale = int(m.group(1)) if m else 1
    return first * scale, last * scale


def zoom(span):
    """GTKWave's zoom z shows 2**-z time units per 200 pixels: the z that shows `span` units in
    WAVE_PIXELS (at most 0, GTKWave's closest zoom)."""
    return min(0.0, -math.log2(max(span, 1) * 200 / WAVE_PIXELS))


def signal_name(port, width, data_width):
    if width == "dat":
        width = data_width
    elif width == "be":
        width = data_width // 8
    return f"TOP.{port}" if width == 1 else f"TOP.{port}[{width - 1}:0]"


def write_gtkw(trace, out, data_width=128):
    first, last = trace_span(trace)
    lines = [
        f'[dumpfile] "{os.path.abspath(trace)}"',
        f"[timestart] {first}",
        f"[size] {SIZE[0]} {SIZE[1]}",
        f"[signals_width] {SIGNALS_WIDTH}",
        "[sst_expanded] 1",
        "[sst_vpaned_height] 300",
        f"*{zoom(last - first):.6f} -1",              # zoom, no primary marker
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
