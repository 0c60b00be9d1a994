# SPDX-License-Identifier: BSD-2-Clause
#
# rx_slices.py: SlicedDepacketizer, LitePCIe's TLP depacketizer with a ready slice on each of its
# outputs (requests to the BAR's Wishbone master, completions to the TLP controller).
#
# What it is: LitePCIe's depacketizer decodes fmt/type from its header register, selects the
# output by it and passes that output's ready back combinationally to its header extracter,
# the completion guard and the PHY. The completions' ready comes from the TLP controller's
# per-tag buffers (selected by the header's tag), the requests' from the Wishbone master, so
# the one path ran header register -> fmt decode -> tag decode -> buffer ready -> dispatcher
# -> extracter -> guard: 13 LUT levels, the SoC's deepest (docs/experiments.md). A PipeReady
# (LiteX's stream.PipeReady) on each output ends that path at its own register.
#
# Hardware: per output one register slice of its payload and a valid bit; no cycle added while
# the consumer is ready (valid and data pass through), one beat held while it is not.
#
# Interfaces: sliced_depacketizers() (context manager: the LitePCIe endpoints made inside it get
# a SlicedDepacketizer; the SoC's add_pcie), SlicedDepacketizer (LitePCIe's depacketizer:
# same arguments, same sink, req_source and cmp_source).

from contextlib import contextmanager

from litex.soc.interconnect import stream

import litepcie.core.endpoint as litepcie_endpoint
from litepcie.tlp.depacketizer import LitePCIeTLPDepacketizer


class SlicedDepacketizer(LitePCIeTLPDepacketizer):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name in ("req_source", "cmp_source"):
            inner = getattr(self, name, None)
            if inner is None:
                continue
            pipe = stream.PipeReady(inner.description)
            self.comb += inner.connect(pipe.sink)
            self.add_module(name + "_slice", pipe)
            setattr(self, name, pipe.source)


@contextmanager
def sliced_depacketizers():
    """LitePCIe endpoints made inside this get SlicedDepacketizer (the endpoint makes its
    depacketizers by this module-level name)."""
    orig = litepcie_endpoint.LitePCIeTLPDepacketizer
    litepcie_endpoint.LitePCIeTLPDepacketizer = SlicedDepacketizer
    try:
        yield
    finally:
        litepcie_endpoint.LitePCIeTLPDepacketizer = orig
