# SPDX-License-Identifier: BSD-2-Clause
#
# tx_slices.py: SlicedPacketizer, LitePCIe's TLP packetizer with a ready slice on each of its
# inputs (requests from the crossbar's masters, completions from its slave).
#
# What it is: the PHY's ready passes combinationally through LitePCIe's packetizer (its header
# inserter's FSM, its buffer, the arbiter of requests and completions), on through the
# crossbar's master arbiter to every master port (the DMA's reader and writer, the NIC's
# engines) and into their arbiters' grants and FIFO levels: the longest paths of the SoC's
# depth map after its datapath cores (docs/experiments.md). A PipeReady (LiteX's
# stream.PipeReady) on each packetizer input ends that path at its own register.
#
# Hardware: per input one register slice of its payload and a valid bit; no cycle added while
# the packetizer is ready (valid and data pass through), one beat held while it is not. The
# MSI order (msi_order.py) counts writes as the crossbar takes them and as they leave on the
# PHY, so a write held here is still ahead of its MSI.
#
# Interfaces: sliced_packetizers() (context manager: the LitePCIe endpoints made inside it get a
# SlicedPacketizer; the SoC's add_pcie), SlicedPacketizer (LitePCIe's packetizer: same
# arguments, same source, req_sink and cmp_sink).

from contextlib import contextmanager

from litex.soc.interconnect import stream

import litepcie.core.endpoint as litepcie_endpoint
from litepcie.tlp.packetizer import LitePCIeTLPPacketizer


class SlicedPacketizer(LitePCIeTLPPacketizer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("req_sink", "cmp_sink"):
            inner = getattr(self, name, None)
            if inner is None:
                continue
            pipe = stream.PipeReady(inner.description)
            self.comb += pipe.source.connect(inner)
            self.add_module(name + "_slice", pipe)
            setattr(self, name, pipe.sink)


@contextmanager
def sliced_packetizers():
    """LitePCIe endpoints made inside this get SlicedPacketizer (the endpoint makes its
    packetizers by this module-level name)."""
    orig = litepcie_endpoint.LitePCIeTLPPacketizer
    litepcie_endpoint.LitePCIeTLPPacketizer = SlicedPacketizer
    try:
        yield
    finally:
        litepcie_endpoint.LitePCIeTLPPacketizer = orig
