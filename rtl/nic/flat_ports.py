# SPDX-License-Identifier: BSD-2-Clause
#
# flat_ports.py: the NIC cores' stream ports as flat, Verilog-style ports: the NICDatapath's
# boundary (rtl/nic/nic_datapath.py) and the testbenches of emitted Verilog use them.
#
# Naming: a stream port `<name>` of a core becomes `<name>_valid`, `<name>_ready` (each left
# out when the stream is always_valid / always_ready) and `<name>_<field>` per field of its
# StructLayout payload; a bundle of streams (the DMA read port: `req`, `cpl`) nests the names:
# `rd_req_valid`, `rd_cpl_data`. Directions are the core's.
#
# Interfaces: flat_members(signature, prefix, skip) -> {name: Member}; connect_flat(m, iface,
# obj, prefix, skip): wires an interface to the flat ports of `obj`; flat_values(core) -> {name:
# value}; FlatShell(core): `core` with every stream port flat, its other ports as they are.

from amaranth import Module, Shape
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import Out

__all__ = ["flat_members", "flat_values", "connect_flat", "FlatShell"]


def _leaves(signature, obj, prefix):
    """(flat name, flow, width, value or None) of every port of a stream signature or of a
    bundle of them, in the order valid, ready, payload fields."""
    unflipped = signature.flip() if isinstance(signature, wiring.FlippedSignature) else signature
    members = signature.members
    if isinstance(unflipped, stream.Signature):
        names = [n for n, const in (("valid", unflipped.always_valid),
                                    ("ready", unflipped.always_ready)) if not const]
        names.append("payload")
    else:
        names = list(members)
    for name in names:
        member = members[name]
        value = None if obj is None else getattr(obj, name)
        if member.is_signature:
            yield from _leaves(member.signature, value, f"{prefix}{name}_")
        elif name == "payload" and isinstance(member.shape, data.StructLayout):
            for field, f in member.shape:
                yield (f"{prefix}{field}", member.flow, f.width,
                       None if value is None else value[field])
        else:
            yield f"{prefix}{name}", member.flow, Shape.cast(member.shape).width, value


def flat_members(signature, prefix="", skip=()):
    """The flat port members of a stream signature (or a bundle of streams): {prefix + name:
    In/Out(width)}, leaving out the names in `skip` (without the prefix)."""
    return {prefix + name: wiring.Member(flow, width)
            for name, flow, width, _v in _leaves(signature, None, "") if name not in skip}


def flat_values(core):
    """{flat name: value} of every port of the component `core`: its stream ports by their flat
    names (a payload field is a slice of the payload), its other ports as they are. For tests
    that drive ports from tables of names."""
    out = {}
    for name, member in core.signature.members.items():
        value = getattr(core, name)
        if member.is_signature:
            out.update((n, v) for n, _f, _w, v in _leaves(member.signature, value, name + "_"))
        else:
            out[name] = value
    return out


def connect_flat(m, iface, obj, prefix="", skip=()):
    """Wires the stream interface `iface` (a sub-core's port) to the flat ports `prefix +
    name` of `obj` (combinational, in the directions of iface's core)."""
    for name, flow, _w, value in _leaves(iface.signature, iface, ""):
        if name not in skip:
            port = getattr(obj, prefix + name)
            m.d.comb += port.eq(value) if flow == Out else value.eq(port)


class FlatShell(wiring.Component):
    """`core` with each stream port `<name>` as flat ports `<name>_*` (see the naming above) and
    its other ports unchanged: what a Verilog testbench drives, and how a core with an
    always_ready or always_valid stream is emitted (amaranth 0.5's verilog.convert cannot take
    a Const port: amaranth-lang/amaranth#1574)."""

    def __init__(self, core):
        self.core = core
        members = {}
        for name, member in core.signature.members.items():
            if member.is_signature:
                members.update(flat_members(member.signature, name + "_"))
            else:
                members[name] = member
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.core = core = self.core
        for name, member in core.signature.members.items():
            if member.is_signature:
                connect_flat(m, getattr(core, name), self, name + "_")
            elif member.flow == Out:
                m.d.comb += getattr(self, name).eq(getattr(core, name))
            else:
                m.d.comb += getattr(core, name).eq(getattr(self, name))
        return m
