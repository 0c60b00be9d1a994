# SPDX-License-Identifier: BSD-2-Clause
#
# dma_port.py: the NIC cores' DMA port convention, as stream signatures.
#
# What it is: one definition of the read and write ports that rtl/nic/tx_engine.py,
# rx_engine.py, dma_read_arbiter.py and nic_datapath.py share (the engines' docstrings give the
# exact rules: lengths in bytes, reads a multiple of 16 up to MRRS, never crossing 4 KiB,
# completions in request order with the first byte in lane 0); litex_soc/nic/
# dma_port_adapter.py maps them onto LitePCIe's crossbar ports.
# Interfaces (as the DMA client drives them; flip() gives the server's side):
#   read_signature(W)    req: Out(stream of RD_REQ {addr (64), len (13), desc (1)}),
#                        cpl: In(stream of rd_cpl_layout(W) {data (W), last, err})
#   write_signature(W)   stream of wr_layout(W) {addr (64), len (13), data (W), first, last}
# Flat (Verilog) names, rtl/nic/flat_ports.py: rd_req_valid, rd_req_addr, rd_req_desc,
# rd_cpl_data, wr_addr..
# Parameters: data_width (W).

from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

LEN_WIDTH = 13      # bytes, up to 4096

# desc: the read's kind, for the bus analyzer's latency breakdown only (1: descriptors, 0:
# frame payload); a DMA server ignores it.
RD_REQ = data.StructLayout({"addr": 64, "len": LEN_WIDTH, "desc": 1})


def rd_cpl_layout(data_width):
    """A read completion beat: data, the last beat of its request, the request failed."""
    return data.StructLayout({"data": data_width, "last": 1, "err": 1})


def wr_layout(data_width):
    """A write beat: addr and len are valid on the first beat of a write."""
    return data.StructLayout({"addr": 64, "len": LEN_WIDTH, "data": data_width, "first": 1,
                              "last": 1})


def read_signature(data_width):
    """A DMA read port as its client sees it: requests out, completions in."""
    return wiring.Signature({
        "req": Out(stream.Signature(RD_REQ)),
        "cpl": In(stream.Signature(rd_cpl_layout(data_width))),
    })


def write_signature(data_width):
    """A DMA write port as its client sees it: one write = first beat with addr/len + data."""
    return stream.Signature(wr_layout(data_width))
