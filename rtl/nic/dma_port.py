#
# dma_port.py: the NIC cores' DMA port convention, as wiring signature members.
#
# What it is: one definition of the read and write ports that rtl/nic/tx_engine.py,
# rtl/nic/rx_engine.py,
# rtl/nic/dma_read_arbiter.py and rtl/nic/nic_datapath.py share (their headers give the exact rules:
# lengths in bytes, reads a multiple of 16 up to MRRS, never crossing 4 KiB, completions in
# request order with the first byte in lane 0; litex_soc/nic/dma_port_adapter.py maps them onto
# LitePCIe's crossbar ports).
#
# Interfaces (as the DMA client drives them; flip=True gives the server's side):
#   <prefix>req_valid/ready/addr(64)/len(13)           read requests, out
#   <prefix>cpl_valid/ready/data(W)/last/err           read completions, in
#   <prefix>valid/ready/addr(64)/len(13)/data(W)/first/last   posted writes, out
#
# Parameters: data_width (W), prefix, flip.

from amaranth.lib.wiring import In, Out

LEN_WIDTH = 13      # bytes, up to 4096


def dma_read_members(data_width, prefix="rd_", flip=False):
    """The members of a DMA read port: requests out, completions in (flip: the reverse)."""
    o, i = (In, Out) if flip else (Out, In)
    return {
        f"{prefix}req_valid": o(1),
        f"{prefix}req_ready": i(1),
        f"{prefix}req_addr":  o(64),
        f"{prefix}req_len":   o(LEN_WIDTH),
        f"{prefix}cpl_valid": i(1),
        f"{prefix}cpl_ready": o(1),
        f"{prefix}cpl_data":  i(data_width),
        f"{prefix}cpl_last":  i(1),
        f"{prefix}cpl_err":   i(1),
    }


def dma_write_members(data_width, prefix="wr_", flip=False):
    """The members of a DMA write port: one request = first beat with addr/len + data beats."""
    o, i = (In, Out) if flip else (Out, In)
    return {
        f"{prefix}valid": o(1),
        f"{prefix}ready": i(1),
        f"{prefix}addr":  o(64),
        f"{prefix}len":   o(LEN_WIDTH),
        f"{prefix}data":  o(data_width),
        f"{prefix}first": o(1),
        f"{prefix}last":  o(1),
    }
