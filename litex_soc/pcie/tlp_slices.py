# SPDX-License-Identifier: BSD-2-Clause
#
# tlp_slices.py: SlicedDepacketizer and SlicedPacketizer, LitePCIe's TLP depacketizer and
# packetizer with a ready slice on each of the depacketizer's outputs (requests to the BAR's
# Wishbone master, completions to the TLP controller) and of the packetizer's inputs (requests
# from the crossbar's masters, completions from its slave).
#
# What it is: both pass a ready back combinationally across LitePCIe. The depacketizer decodes
# fmt/type from its header register, selects the output by it and passes that output's ready
# (the TLP controller's per-tag buffer by the header's tag, or the Wishbone master's) back to
# its header extracter, the completion guard and the PHY: 13 LUT levels, once the SoC's deepest
# path (docs/experiments.md). The PHY's ready passes through the packetizer (its header
# inserter's FSM, its buffer, the request/completion arbiter) and the crossbar's master arbiter
# to every master port (the DMA's reader and writer, the NIC's engines), into their grants and
# FIFO levels. A PipeReady (LiteX's stream.PipeReady) on each of those streams ends the path at
# its own register.
#
# Hardware: per stream one register slice of its payload and a valid bit; no cycle added while
# the consumer is ready (valid and data pass through), one beat held while it is not. The MSI
# order (msi_order.py) counts a write as taken where the crossbar hands it to the packetizer's
# slice and as left on the PHY, so a write held in the slice is still ahead of its MSI.
#
# Interfaces: sliced_tlp_streams() (context manager: the LitePCIe endpoints made inside it get a
# SlicedDepacketizer and a SlicedPacketizer; the SoC's add_pcie), SlicedDepacketizer and
# SlicedPacketizer (LitePCIe's: same arguments, same streams).

from contextlib import contextmanager

from litex.soc.interconnect import stream

import litepcie.core.endpoint as litepcie_endpoint
from litepcie.tlp.depacketizer import LitePCIeTLPDepacketizer
from litepcie.tlp.packetizer import LitePCIeTLPPacketizer


def _slice(module, names, outputs):
    """Each stream module.<name> (if present) behind a PipeReady, which takes its name."""
    for name in names:
        inner = getattr(module, name, None)
        if inner is None:
            continue
        pipe = stream.PipeReady(inner.description)
        module.comb += inner.connect(pipe.sink) if outputs else pipe.source.connect(inner)
        module.add_module(name + "_slice", pipe)
        setattr(module, name, pipe.source if outputs else pipe.sink)


class SlicedDepacketizer(LitePCIeTLPDepacketizer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _slice(self, ("req_source", "cmp_source"), outputs=True)


class SlicedPacketizer(LitePCIeTLPPacketizer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _slice(self, ("req_sink", "cmp_sink"), outputs=False)


@contextmanager
def sliced_tlp_streams():
    """LitePCIe endpoints made inside this get SlicedDepacketizer and SlicedPacketizer (the
    endpoint makes them by these module-level names)."""
    orig = litepcie_endpoint.LitePCIeTLPDepacketizer, litepcie_endpoint.LitePCIeTLPPacketizer
    litepcie_endpoint.LitePCIeTLPDepacketizer = SlicedDepacketizer
    litepcie_endpoint.LitePCIeTLPPacketizer = SlicedPacketizer
    try:
        yield
    finally:
        litepcie_endpoint.LitePCIeTLPDepacketizer, litepcie_endpoint.LitePCIeTLPPacketizer = orig
