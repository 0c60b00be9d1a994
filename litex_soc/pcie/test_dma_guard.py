# SPDX-License-Identifier: BSD-2-Clause
#
# Tests of DMAGuard's CheckedTable (litex_soc/pcie/dma_guard.py) in Migen's simulator: LitePCIe's
# descriptor table with the check at its head, at both datapath widths.
#
# test_table_refuses_what_the_dma_cannot_move: descriptors at offsets 0..16 and lengths 0..40
#   plus random ones, pushed in prog mode: the engine sees exactly the descriptors whose address
#   and length are multiples of the datapath width and non-zero, in order; every other one is
#   counted once in the guard's counter, and only the table it was pushed to counts.
# test_disabled_engine_refuses_nothing: a bad descriptor waits at the head (TABLE_LEVEL) while
#   the engine is disabled and is refused, counted, once it is enabled.
# test_loop_mode_refuses_every_lap: in loop mode a bad descriptor is refilled with the good ones
#   and refused, counted, on every lap; a table reset empties the verdicts with the table, so
#   the descriptors pushed after it are judged on their own.
# test_checked_tables_restores_litepcie: the substitution is scoped to the `with`.
import random

import pytest
from migen.sim import run_simulation

import litepcie.frontend.dma as litepcie_dma
from litex.gen import LiteXModule

from litex_soc.pcie.dma_guard import CheckedTable, DMAGuard, checked_tables

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


class Pair(LiteXModule):
    def __init__(self, align, depth=512):
        self.rd = CheckedTable(depth, align=align)
        self.wr = CheckedTable(depth, align=align)
        self.guard = DMAGuard(self.rd, self.wr, align)


def push(t, addr, length):
    # The CSR fields the table takes in prog mode (the CSR bank is not simulated).
    yield t.value.fields.address_lsb.eq(addr)
    yield t.value.fields.length.eq(length)
    yield t.we.re.eq(1)
    yield
    yield t.we.re.eq(0)
    yield


def drain(t, n_cycles, out, ready_every=1):
    for i in range(n_cycles):
        yield t.source.ready.eq(i % ready_every == 0)
        yield
        if (yield t.source.valid) and (yield t.source.ready):
            out.append(((yield t.source.address), (yield t.source.length)))


@pytest.mark.parametrize("align", [8, 16])
def test_table_refuses_what_the_dma_cannot_move(align):
    rng = random.Random(align)
    descs = [(0x1000 + off, length) for off in (0, 1, 2, 3, 4, 8, 12, 16)
             for length in (0, 1, 3, 4, 8, 12, 16, 17, 32, 40)]
    descs += [(rng.getrandbits(32), rng.randrange(1 << 24)) for _ in range(100)]
    rng.shuffle(descs)
    want = [(a, n) for a, n in descs if a % align == 0 and n % align == 0 and n]
    dut = Pair(align)
    out, got = [], {}

    def bench():
        yield dut.wr.enable.eq(1)              # the other table stays disabled
        yield dut.rd.enable.eq(1)
        for a, n in descs:
            yield from push(dut.rd, a, n)
        yield from drain(dut.rd, 4 * len(descs), out, ready_every=3)
        got["rd"] = yield dut.guard._reader_refused.status
        got["wr"] = yield dut.guard._writer_refused.status
        got["level"] = yield dut.rd.level.status
        got["align"] = yield dut.guard._align.status

    run_simulation(dut, bench())
    assert out == want
    assert len(want) < len(descs) - 50                 # the cases do exercise the check
    assert got == dict(rd=len(descs) - len(want), wr=0, level=0, align=align)


def test_disabled_engine_refuses_nothing():
    dut = Pair(16)
    seen = []

    def bench():
        yield from push(dut.wr, 0x2004, 64)
        yield from push(dut.wr, 0x3000, 64)
        for _ in range(20):
            yield
        seen.append(((yield dut.wr.level.status), (yield dut.guard._writer_refused.status),
                     (yield dut.wr.source.valid)))
        yield dut.wr.enable.eq(1)
        out = []
        yield from drain(dut.wr, 20, out)
        seen.append(((yield dut.wr.level.status), (yield dut.guard._writer_refused.status),
                     out))

    run_simulation(dut, bench())
    assert seen == [(2, 0, 0), (0, 1, [(0x3000, 64)])]


def test_loop_mode_refuses_every_lap():
    dut = Pair(16, depth=8)
    descs = [(0x1000, 64), (0x2008, 64), (0x3000, 32)]
    after_reset = [(0x5000, 0), (0x4000, 16), (0x6000, 48), (0x7004, 16)]
    seen = []

    def bench():
        for a, n in descs:
            yield from push(dut.rd, a, n)
        yield dut.rd.loop_prog_n.storage.eq(1)
        yield dut.rd.enable.eq(1)
        out = []
        yield from drain(dut.rd, 60, out, ready_every=2)
        seen.append((out, (yield dut.guard._reader_refused.status)))
        # Reset the table (a bad head left in it) and start again with good descriptors only.
        yield dut.rd.source.ready.eq(0)
        yield dut.rd.loop_prog_n.storage.eq(0)
        yield dut.rd.reset.storage.eq(1)
        yield dut.rd.reset.re.eq(1)
        yield
        yield dut.rd.reset.re.eq(0)
        yield
        for a, n in after_reset:
            yield from push(dut.rd, a, n)
        out = []
        yield from drain(dut.rd, 20, out)
        seen.append((out, (yield dut.guard._reader_refused.status)))

    run_simulation(dut, bench())
    (lap_out, refused), after = seen
    good = [descs[0], descs[2]]
    assert len(lap_out) >= 6 and lap_out == (good * len(lap_out))[:len(lap_out)]
    assert refused in (len(lap_out) // 2, len(lap_out) // 2 + 1)
    assert after == ([(0x4000, 16), (0x6000, 48)], refused + 2)


def test_checked_tables_restores_litepcie():
    orig = litepcie_dma.LitePCIeDMAScatterGather
    with checked_tables(8):
        t = litepcie_dma.LitePCIeDMAScatterGather(4, 32)
    assert isinstance(t, CheckedTable) and litepcie_dma.LitePCIeDMAScatterGather is orig
    with pytest.raises(TypeError):
        DMAGuard(orig(4), t, 8)
