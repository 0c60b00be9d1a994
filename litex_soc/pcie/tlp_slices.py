# SPDX-License-Identifier: BSD-2-Clause
#
# tlp_slices.py: SlicedDepacketizer, SlicedPacketizer and SlicedCrossbar, LitePCIe's TLP
# depacketizer, packetizer and crossbar with a ready slice on each of the depacketizer's outputs
# (requests to the BAR's Wishbone master, completions to the TLP controller) and of the
# packetizer's inputs (requests from the crossbar's masters, completions from its slave), and a
# valid slice on each input of the crossbar's last arbiter (the TLP controller's reads, the
# write ports' arbiter).
#
# What it is: both pass a ready back combinationally across LitePCIe. The depacketizer decodes
# fmt/type from its header register, selects the output by it and passes that output's ready
# (the TLP controller's per-tag buffer by the header's tag, or the Wishbone master's) back to
# its header extracter, the completion guard and the PHY: 13 LUT levels, once the SoC's deepest
# path (docs/experiments.md). The PHY's ready passes through the packetizer (its header
# inserter's FSM, its buffer, the request/completion arbiter) and the crossbar's master arbiter
# to every master port (the DMA's reader and writer, the NIC's engines), into their grants and
# FIFO levels. A PipeReady (LiteX's stream.PipeReady) on each of those streams ends the path at
# its own register. Forward, a request passes the crossbar's two arbiters (reads: the read
# ports' arbiter and the TLP controller's tag queue; writes: the write ports' arbiter), then its
# last arbiter, combinationally from a master port's request register into the packetizer's
# buffer: the placer puts the arbiters far from both ends (docs/experiments.md). A PipeValid
# on each input of the last arbiter ends those paths at its register.
#
# Hardware: per PipeReady one register slice of its payload and a valid bit; no cycle added
# while the consumer is ready (valid and data pass through), one beat held while it is not. Per
# PipeValid a register of the request (payload and valid): a cycle on every request, full rate.
# A write is taken at its port when the write ports' arbiter passes it into its slice
# (`write_taken` shows that stream): the MSI order (msi_order.py) counts writes there and as
# they leave on the PHY, so a write held in a slice is still ahead of its MSI, and completions
# pass `cmp_open` (held by cpl_order.py until the writes taken before them have left).
#
# Interfaces: sliced_tlp_streams() (context manager: the LitePCIe endpoints made inside it get a
# SlicedDepacketizer, a SlicedPacketizer and a SlicedCrossbar; the SoC's add_pcie),
# SlicedDepacketizer and SlicedPacketizer (LitePCIe's: same arguments, same streams; the
# packetizer's `cmp_open`, 1 when undriven), SlicedCrossbar (LitePCIe's, with `write_taken`).

from contextlib import contextmanager
from types import SimpleNamespace

from migen import Signal

from litex.soc.interconnect import stream

import litepcie.core.endpoint as litepcie_endpoint
from litepcie.common import request_layout
from litepcie.core.crossbar import LitePCIeCrossbar
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
        # Completions pass while cmp_open (a register's output, cpl_order.py).
        self.cmp_open = Signal(reset=1)
        inner = self.cmp_sink
        self.cmp_sink = outer = stream.Endpoint(inner.description)
        self.comb += [outer.connect(inner, omit={"valid", "ready"}),
                      inner.valid.eq(outer.valid & self.cmp_open),
                      outer.ready.eq(inner.ready & self.cmp_open)]


class SlicedCrossbar(LitePCIeCrossbar):
    def __init__(self, data_width, address_width, *args, **kwargs):
        super().__init__(data_width, address_width, *args, **kwargs)
        # The write ports' arbiter's output, before its slice: valid, ready, first, last, we,
        # channel.
        self.write_taken = stream.Endpoint(request_layout(data_width, address_width))

    def master_arbitrate_dispatch(self, masters, master, dispatch=True):
        if dispatch:                           # the read ports' and the write ports' arbiters
            return super().master_arbitrate_dispatch(masters, master, dispatch)
        # The last arbiter (LitePCIe's do_finalize: the TLP controller's output, then the
        # write ports' arbiter's; completions go to the controller, the first).
        ctrl = getattr(self, "controller", None)
        sliced = []
        for i, m in enumerate(masters):
            pipe = stream.PipeValid(m.sink.description)
            self.add_module(f"final_slice{i}", pipe)
            self.comb += m.sink.connect(pipe.sink)
            if ctrl is None or m is not ctrl.master_out:
                wt = self.write_taken
                self.comb += [getattr(wt, f).eq(getattr(m.sink, f))
                              for f in ("valid", "ready", "first", "last", "we", "channel")]
            sliced.append(SimpleNamespace(sink=pipe.source, source=m.source))
        return super().master_arbitrate_dispatch(sliced, master, dispatch)


@contextmanager
def sliced_tlp_streams():
    """LitePCIe endpoints made inside this get SlicedDepacketizer, SlicedPacketizer and
    SlicedCrossbar (the endpoint makes them by these module-level names)."""
    mod = litepcie_endpoint
    names = ("LitePCIeTLPDepacketizer", "LitePCIeTLPPacketizer", "LitePCIeCrossbar")
    orig = [getattr(mod, n) for n in names]
    for n, cls in zip(names, (SlicedDepacketizer, SlicedPacketizer, SlicedCrossbar)):
        setattr(mod, n, cls)
    try:
        yield
    finally:
        for n, cls in zip(names, orig):
            setattr(mod, n, cls)
