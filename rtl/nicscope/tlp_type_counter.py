# SPDX-License-Identifier: BSD-2-Clause
#
# tlp_type_counter.py: counts the TLPs of one PCIe TLP stream by type, with snapshot-and-clear.
#
# What it is: the analyzer's per-direction TLP census: MRd, MWr, CplD, Cpl, Msg and other, by the
# Fmt/Type byte of a TLP's first beat (decode: the class docstring; classify() is its model).
#
# Interfaces:
#   valid, ready, first  in: the TLP stream's handshake and start-of-TLP flag.
#   fmt_type             in, 8 bits: header byte 0 (valid with `first`).
#   snapshot             in: pulse.
#   inc_<type>           out (comb): 1 on the cycle a TLP of that type is counted.
#   mrd, mwr, cpld, cpl, msg, other   out: counts of the last closed window (counters=True).
#
# Parameters: width (count width), counters (True: the counts in registers here; False: only
# the increments, for the bus analyzer's CounterBank, as OccupancyCounter).

from enum import IntEnum

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .counter_bank import register_counters


class TLPType(IntEnum):
    MRD = 0
    MWR = 1
    CPLD = 2
    CPL = 3
    MSG = 4
    OTHER = 5


TLP_TYPES = tuple(t.name.lower() for t in TLPType)


def classify(fmt_type):
    """The software model of the decode (used by the tests and by nothing in hardware)."""
    fmt, typ = fmt_type >> 5, fmt_type & 0x1F
    if typ == 0 and fmt in (0, 1):
        return TLPType.MRD
    if typ == 0 and fmt in (2, 3):
        return TLPType.MWR
    if fmt_type == 0x4A:
        return TLPType.CPLD
    if fmt_type == 0x0A:
        return TLPType.CPL
    if typ >> 3 == 0b10:
        return TLPType.MSG
    return TLPType.OTHER


class TLPTypeCounter(wiring.Component):
    """TLP counts by type.

    A TLP is counted on the cycle its first beat moves (valid, ready, first), by the Fmt/Type
    byte of header dword 0 (bits 31:24 of the first beat on LitePCIe's PHY interface):
      MRd   Type 00000, Fmt 000/001 (memory read, 3 or 4 DW header)
      MWr   Type 00000, Fmt 010/011 (memory write)
      CplD  Fmt/Type 0x4A (completion with data)
      Cpl   Fmt/Type 0x0A (completion without data)
      Msg   Type 10rrr (message, with or without data)
      other anything else (I/O, configuration, locked requests and completions)
    Snapshot semantics as OccupancyCounter: the snapshot cycle's TLP goes to the new window.
    """

    def __init__(self, width=48, counters=True):
        self.width, self.counters = width, counters
        self.max_inc = dict.fromkeys(TLP_TYPES, 1)
        super().__init__({
            "valid":    In(1),
            "ready":    In(1),
            "first":    In(1),
            "fmt_type": In(8),
            "snapshot": In(1),
            **{f"inc_{name}": Out(1) for name in TLP_TYPES},
            **({name: Out(width) for name in TLP_TYPES} if counters else {}),
        })

    def elaborate(self, platform):
        m = Module()
        fmt, typ = self.fmt_type[5:8], self.fmt_type[0:5]
        start = self.valid & self.ready & self.first
        is_ = {
            "mrd":  (typ == 0) & (fmt[1:] == 0),
            "mwr":  (typ == 0) & (fmt[1:] == 1),
            "cpld": self.fmt_type == 0x4A,
            "cpl":  self.fmt_type == 0x0A,
            "msg":  typ[3:] == 0b10,
        }
        is_["other"] = ~(is_["mrd"] | is_["mwr"] | is_["cpld"] | is_["cpl"] | is_["msg"])
        incs = {name: getattr(self, f"inc_{name}") for name in TLP_TYPES}
        m.d.comb += [incs[name].eq(start & is_[name]) for name in TLP_TYPES]
        if self.counters:
            register_counters(m, self.snapshot, incs, {n: getattr(self, n) for n in TLP_TYPES})
        return m
