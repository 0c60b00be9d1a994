# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of TLPTypeCounter (amaranth.sim): classify() vs PCIe codes, all 256 codes, windows.
import random

import pytest
from amaranth.sim import Simulator

from rtl.nicscope.tlp_type_counter import TLP_TYPES, TLPType, TLPTypeCounter, classify


def test_classify_known_codes():
    """classify() against Fmt/Type codes from the PCIe base specification."""
    known = {
        0x00: TLPType.MRD,    # MRd, 3 DW
        0x20: TLPType.MRD,    # MRd, 4 DW
        0x40: TLPType.MWR,    # MWr, 3 DW
        0x60: TLPType.MWR,    # MWr, 4 DW
        0x4A: TLPType.CPLD,
        0x0A: TLPType.CPL,
        0x30: TLPType.MSG,    # Msg, routed to root complex
        0x34: TLPType.MSG,    # Msg, local
        0x70: TLPType.MSG,    # MsgD
        0x73: TLPType.MSG,
        0x01: TLPType.OTHER,  # MRdLk
        0x21: TLPType.OTHER,
        0x02: TLPType.OTHER,  # IORd
        0x42: TLPType.OTHER,  # IOWr
        0x04: TLPType.OTHER,  # CfgRd0
        0x44: TLPType.OTHER,  # CfgWr0
        0x05: TLPType.OTHER,  # CfgRd1
        0x45: TLPType.OTHER,  # CfgWr1
        0x0B: TLPType.OTHER,  # CplLk
        0x4B: TLPType.OTHER,  # CplDLk
        0x4C: TLPType.OTHER,  # FetchAdd
        0x80: TLPType.OTHER,  # Fmt 100 (TLP prefix), Type 00000: not a memory request
        0xCA: TLPType.OTHER,  # Fmt 110 with the CplD type: not 0x4A
    }
    for code, kind in known.items():
        assert classify(code) == kind, hex(code)
    # The whole table by another route: count the codes of each class.
    census = [0] * 6
    for v in range(256):
        census[classify(v)] += 1
    # MRd 2, MWr 2, CplD 1, Cpl 1, Msg 8 types x 8 fmts, the rest other.
    assert census == [2, 2, 1, 1, 64, 256 - 70]


def run(dut, cycles):
    """Drive (valid, ready, first, fmt_type, snapshot) per cycle; the outputs after each tick."""
    outs = []

    async def bench(ctx):
        for valid, ready, first, fmt_type, snap in cycles:
            ctx.set(dut.valid, valid)
            ctx.set(dut.ready, ready)
            ctx.set(dut.first, first)
            ctx.set(dut.fmt_type, fmt_type)
            ctx.set(dut.snapshot, snap)
            await ctx.tick()
            outs.append([ctx.get(getattr(dut, n)) for n in TLP_TYPES])

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return outs


def test_every_fmt_type_and_handshake():
    """Each of the 256 codes under each of the 8 valid/ready/first combinations, one window per
    cycle (snapshot always 1): the window closed on cycle k holds exactly cycle k-1's TLP."""
    cycles = [(valid, ready, first, v, 1)
              for v in range(256) for valid in (0, 1) for ready in (0, 1) for first in (0, 1)]
    outs = run(TLPTypeCounter(), cycles)
    assert outs[0] == [0] * 6                    # the window before cycle 0 is empty
    for k in range(1, len(cycles)):
        valid, ready, first, v, _ = cycles[k - 1]
        want = [0] * 6
        if valid and ready and first:
            want[classify(v)] = 1
        assert outs[k] == want, f"fmt_type {v:#04x} valid {valid} ready {ready} first {first}"


@pytest.mark.parametrize("width,seed", [(48, 1), (8, 2)])
def test_random_windows(width, seed):
    rng = random.Random(seed)
    ncycles = 600
    cycles = []
    for cyc in range(ncycles):
        # Mostly codes of the five named classes, so that each count gets large.
        v = rng.choice([0x00, 0x20, 0x40, 0x60, 0x4A, 0x0A, 0x30, 0x74, rng.randrange(256)])
        snap = int(rng.random() < 0.03 or cyc in (0, 50, 51))
        cycles.append((rng.randint(0, 1), int(rng.random() < 0.8), int(rng.random() < 0.7), v,
                       snap))
    outs = run(TLPTypeCounter(width=width), cycles)
    expected = [0] * 6
    start = 0
    windows = 0
    for cyc, (_, _, _, _, snap) in enumerate(cycles):
        if snap:
            expected = [0] * 6
            for valid, ready, first, v, _ in cycles[start:cyc]:
                if valid and ready and first:
                    expected[classify(v)] += 1
            expected = [e % 2**width for e in expected]
            start = cyc
            windows += 1
        assert outs[cyc] == expected, f"cycle {cyc}"
    assert windows >= 4


def test_counter_wraps():
    """An 8-bit counter counts modulo 256: 300 MWr TLPs then a snapshot read 44."""
    cycles = [(1, 1, 1, 0x60, 0)] * 300 + [(1, 1, 1, 0x4A, 1)]
    assert run(TLPTypeCounter(width=8), cycles)[-1] == [0, 44, 0, 0, 0, 0]
