# SPDX-License-Identifier: BSD-2-Clause
#
# skid_buffer.py: a stream register slice with both directions registered, placed between two
# cores to cut the combinational valid/payload path forward and the ready path backward.
#
# Interfaces: s (In stream), m (Out stream), of one payload shape.
# Parameters: shape (the payload's), name of nothing else.
# Behaviour: SkidBuffer's docstring.

from amaranth import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out


class SkidBuffer(wiring.Component):
    """A two-entry register slice (LiteX's stream.Buffer(pipe_valid=True, pipe_ready=True),
    Corundum's axis_register with REG_TYPE=2).

    m.valid and m.payload are registers (the main entry); s.ready is a register (the skid entry
    is empty). A beat taken in cycle t is on m from cycle t+1. When m stalls while s delivers,
    the beat taken in that cycle waits in the skid entry and s.ready is 0 from the next cycle
    until the main entry moves on. Beats leave in the order they came, one a cycle at full
    rate, none lost or repeated. No combinational path from s to m nor from m.ready to s.ready.

    Ports
    -----
    s : In(stream.Signature(shape))
    m : Out(stream.Signature(shape))
    """

    def __init__(self, shape):
        self.shape = shape
        super().__init__({
            "s": In(stream.Signature(shape)),
            "m": Out(stream.Signature(shape)),
        })

    def elaborate(self, platform):
        m = Module()
        skid_valid = Signal()
        skid = Signal(self.shape)
        m.d.comb += self.s.ready.eq(~skid_valid)
        take = self.s.valid & self.s.ready                # a beat enters
        free = ~self.m.valid | self.m.ready               # the main entry can load
        with m.If(free):
            m.d.sync += [self.m.valid.eq(skid_valid | self.s.valid),
                         self.m.payload.eq(Mux(skid_valid, skid, self.s.payload)),
                         skid_valid.eq(0)]
        with m.Elif(take):
            m.d.sync += [skid_valid.eq(1), skid.eq(self.s.payload)]
        return m
