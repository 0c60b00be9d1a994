# SPDX-License-Identifier: BSD-2-Clause
#
# Tests of our LitePCIe patches (litex_soc/patches/litepcie/) and of BARGuard, in Migen's
# simulator, against the PCIe rules computed here from the byte enables bit by bit.
#
# test_splitter_*: LitePCIeDMADescriptorSplitter on random descriptors (addresses at the DMA's
#   16-byte granularity, near, at and across 4 KiB boundaries) at MPS/MRRS 128..512 and 4096:
#   the pieces cover the descriptor in order, none exceeds max_size or crosses 4 KiB, each is
#   as long as those limits allow.
# test_wishbone_master_*: LitePCIeWishboneMaster on a bare crossbar port with a Wishbone SRAM
#   (which honours sel): every First DW BE of 1 DW reads and writes, zero-length requests,
#   2 DW requests (Unsupported Request / dropped, `unsupported` pulses).
# test_bar_guard: partial writes through BARGuard are dropped and counted, whole ones pass.
# test_msix_*: LitePCIeMSIX on a bare crossbar port: each entry keeps its own DWORDs (written
#   masked, unmasked later); a vector masked in its entry stays pending (PBA) and is sent once
#   unmasked, others pass it; nothing is pending while MSI-X is disabled, nothing is sent while
#   the function is masked or to an entry with an upper address.
import random
from types import SimpleNamespace

import pytest
from migen import If, Signal
from migen.sim import passive, run_simulation

from litex.gen import LiteXModule
from litex.soc.interconnect import stream, wishbone
from litepcie.common import completion_layout, request_layout
from litepcie.core.msi import LitePCIeMSIX
from litepcie.frontend.dma import LitePCIeDMADescriptorSplitter
from litepcie.frontend.wishbone import LitePCIeWishboneMaster

from litex_soc.pcie.bar_guard import BARGuard

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# --- PCIe rules (Base Specification 2.3.1.1), from the bits -------------------------------------

def enabled(first_be, last_be, length):
    """Indices of the enabled bytes of a request of `length` DW."""
    bes = [first_be] + [0xF] * (length - 2) + ([last_be] if length > 1 else [])
    return [4 * d + b for d, be in enumerate(bes) for b in range(4) if be >> b & 1]


def rule_byte_count(first_be, last_be, length):
    on = enabled(first_be, last_be, length)
    return on[-1] - on[0] + 1 if on else 1


def rule_lower_address(addr, first_be):
    on = enabled(first_be, 0, 1)
    return (addr & 0x7C) | (on[0] if on else 0)


# --- splitter ------------------------------------------------------------------------------------

def split(descriptors, max_size):
    dut = LitePCIeDMADescriptorSplitter(max_size=max_size, address_width=32)
    pieces = []

    def feed():
        for addr, length in descriptors:
            yield dut.sink.valid.eq(1)
            yield dut.sink.address.eq(addr)
            yield dut.sink.length.eq(length)
            yield
            while not (yield dut.sink.ready):
                yield
        yield dut.sink.valid.eq(0)
        for _ in range(50):
            yield

    @passive
    def take():
        yield dut.source.ready.eq(1)
        while True:
            if (yield dut.source.valid) and (yield dut.source.ready):
                pieces.append(((yield dut.source.address), (yield dut.source.length),
                               (yield dut.source.first), (yield dut.source.last)))
            yield dut.source.ready.eq(random.random() < 0.7)
            yield

    run_simulation(dut, [feed(), take()])
    return pieces


@pytest.mark.parametrize("max_size", [128, 256, 512, 4096])
def test_splitter_cuts_at_4k(max_size):
    random.seed(max_size)
    descs = [(0x1000 - 0x40, 256), (0x2000 + 0x40, 8192), (0x3F40, 16), (0x10000, 4096),
             (0x5000 - max_size, 2 * max_size), (0x7000 - 0x10, 4096 + 0x20),
             # address[11:0] + length ending on, just past, and a page past a boundary
             (0x9F00, 0x100), (0xAF00, 0x110), (0xC010, 0x1FF0), (0xDFF0, 0x2010)]
    descs += [(random.randrange(0, 1 << 20) & ~15, random.randrange(16, 12288) & ~15)
              for _ in range(40)]
    pieces = split(descs, max_size)
    it = iter(pieces)
    for addr, length in descs:
        pos = addr
        while pos < addr + length:
            a, n, first, last = next(it)
            want = min(max_size, 4096 - (pos & 0xFFF), addr + length - pos)
            assert (a, n) == (pos, want), f"descriptor {addr:#x}+{length}: piece {a:#x}+{n}"
            assert first == (pos == addr) and last == (pos + n == addr + length)
            assert a >> 12 == (a + n - 1) >> 12
            pos += n
    assert next(it, None) is None


# --- Wishbone master -----------------------------------------------------------------------------

def run_master(requests):
    """requests: (we, adr, length, first_be, last_be, data); returns (completions, memory,
    unsupported count)."""
    dut = LiteXModule()
    port = SimpleNamespace(sink=stream.Endpoint(request_layout(64)),
                           source=stream.Endpoint(completion_layout(64)))
    endpoint = SimpleNamespace(crossbar=SimpleNamespace(get_slave_port=lambda d: port),
                               phy=SimpleNamespace(id=Signal(16, reset=0x0100)))
    dut.master = LitePCIeWishboneMaster(endpoint)
    dut.sram = wishbone.SRAM(64, init=[0x11223344 + (i << 24) for i in range(16)])
    dut.comb += dut.master.wishbone.connect(dut.sram.bus)
    count = Signal(8)
    dut.sync += If(dut.master.unsupported, count.eq(count + 1))
    cpls, mem, result = [], [], {}

    def host():
        for i, (we, adr, length, fbe, lbe, data) in enumerate(requests):
            for k, v in dict(valid=1, first=1, last=1, we=we, adr=adr, len=length, first_be=fbe,
                             last_be=lbe, tag=i, req_id=0x0008, dat=data).items():
                yield getattr(port.sink, k).eq(v)
            yield
            while not (yield port.sink.ready):
                yield
            yield port.sink.valid.eq(0)
            for _ in range(8):
                yield
        for w in range(16):
            mem.append((yield dut.sram.mem[w]))
        result["unsupported"] = (yield count)

    @passive
    def completer():
        yield port.source.ready.eq(1)
        while True:
            if (yield port.source.valid):
                c = {}
                for k in ("tag", "len", "byte_count", "adr", "err", "dat", "cmp_id", "req_id"):
                    c[k] = yield getattr(port.source, k)
                cpls.append(c)
            yield

    run_simulation(dut, [host(), completer()])
    return cpls, mem, result["unsupported"]


def test_wishbone_master_reads_every_byte_enable():
    reqs = [(0, 0x20 + 4 * (be % 4), 1, be, 0, 0) for be in range(16)]
    cpls, _mem, unsupported = run_master(reqs)
    assert unsupported == 0 and len(cpls) == 16
    for (we, adr, _n, be, _l, _d), c in zip(reqs, cpls):
        assert c["err"] == 0 and c["len"] == 1 and c["cmp_id"] == 0x0100 and c["req_id"] == 8
        assert c["byte_count"] == rule_byte_count(be, 0, 1), f"first BE {be:#x}"
        assert c["adr"] & 0x7F == rule_lower_address(adr, be), f"first BE {be:#x}"
        word = 0x11223344 + ((adr >> 2) << 24) & 0xFFFFFFFF
        assert c["dat"] & 0xFFFFFFFF == (word if be else 0), f"first BE {be:#x}"


def test_wishbone_master_writes_only_enabled_bytes():
    reqs = [(1, 4 * be, 1, be, 0, 0xA0B0C0D0 + be) for be in range(16)]
    _cpls, mem, unsupported = run_master(reqs)
    assert unsupported == 0
    for be in range(16):
        old, new = 0x11223344 + (be << 24) & 0xFFFFFFFF, 0xA0B0C0D0 + be
        mask = sum(0xFF << 8 * b for b in range(4) if be >> b & 1)
        assert mem[be] == (old & ~mask | new & mask), f"first BE {be:#x}"


def test_wishbone_master_refuses_two_dwords():
    reqs = [(0, 0x10, 2, 0xE, 0x7, 0), (1, 0x10, 2, 0xF, 0xF, 0xDEADBEEFDEADBEEF),
            (0, 0x10, 1, 0xF, 0, 0)]
    cpls, mem, unsupported = run_master(reqs)
    assert unsupported == 2
    assert [c["tag"] for c in cpls] == [0, 2]
    assert cpls[0]["err"] == 1 and cpls[0]["len"] == 0
    assert cpls[0]["byte_count"] == rule_byte_count(0xE, 0x7, 2) == 6
    assert cpls[1]["err"] == 0 and cpls[1]["dat"] & 0xFFFFFFFF == mem[4] == 0x15223344


# --- BARGuard ------------------------------------------------------------------------------------

def test_bar_guard_drops_partial_writes():
    dut = LiteXModule()
    sram = wishbone.SRAM(64, init=[0x11223344] * 16)
    dut.guard = BARGuard(sram.bus)
    dut.sram = sram
    got = {}

    def bus():
        b = dut.guard.bus
        for adr, sel in [(0, 0xF), (1, 0x1), (2, 0x6), (3, 0x0), (4, 0xF)]:
            yield from b.write(adr, 0xCAFEF00D, sel=sel)
        yield dut.guard.unsupported.eq(1)
        yield
        yield dut.guard.unsupported.eq(0)
        yield
        got["mem"] = []
        for w in range(5):
            got["mem"].append((yield sram.mem[w]))
        got["partial"] = (yield dut.guard._partial_writes.status)
        got["unsupported"] = (yield dut.guard._unsupported.status)
        got["read"] = (yield from b.read(1))

    run_simulation(dut, bus())
    assert got["mem"] == [0xCAFEF00D, 0x11223344, 0x11223344, 0x11223344, 0xCAFEF00D]
    assert got["partial"] == 2 and got["unsupported"] == 1 and got["read"] == 0x11223344


# --- MSI-X ---------------------------------------------------------------------------------------

def run_msix(steps, width=4):
    """steps: generator functions of (dut, table write port) run in order; returns the MWr
    requests sent as (cycle, addr, data)."""
    dut = LiteXModule()
    port = SimpleNamespace(source=stream.Endpoint(request_layout(64)), channel=Signal(8))
    endpoint = SimpleNamespace(
        crossbar=SimpleNamespace(get_master_port=lambda write_only=False: port),
        phy=SimpleNamespace(id=Signal(16, reset=0x0100)))
    dut.msix = LitePCIeMSIX(endpoint, width=width)
    wr = dut.msix.table.get_port(write_capable=True)
    dut.specials += wr
    sent, now = [], [0]

    @passive
    def host():
        yield port.source.ready.eq(1)
        while True:
            if (yield port.source.valid):
                assert (yield port.source.we) == 1 and (yield port.source.len) == 1
                sent.append((now[0], (yield port.source.adr), (yield port.source.dat)))
            now[0] += 1
            yield

    def driver():
        yield dut.msix.enable.storage.eq(2**width - 1)
        for step in steps:
            yield from step(dut.msix, wr)

    run_simulation(dut, [driver(), host()])
    return sent


def word(wr, adr, v):
    """One table DWORD written, as the host's 32-bit BAR write."""
    yield wr.adr.eq(adr)
    yield wr.dat_w.eq(v)
    yield wr.we.eq(1)
    yield
    yield wr.we.eq(0)


def entry(wr, i, addr, data, masked, upper=0):
    """Entry i's four DWORDs written one by one, Vector Control last (as Linux unmasks)."""
    for k, v in enumerate((addr, upper, data, masked)):
        yield from word(wr, 4 * i + k, v)


def control(wr, i, masked):
    yield from word(wr, 4 * i + 3, masked)


def pulse(msix, i, idle=12):
    yield msix.irqs.eq(1 << i)
    yield
    yield msix.irqs.eq(0)
    for _ in range(idle):
        yield


def test_msix_masked_vector_stays_pending():
    pba = []

    def setup(msix, wr):
        # Both written masked, then entry 0 unmasked alone (entry 1's words written last).
        yield from entry(wr, 0, 0xFEE00000, 0x40, 1)
        yield from entry(wr, 1, 0xFEE00004, 0x41, 1)
        yield from control(wr, 0, 0)

    def masked_then_other(msix, wr):
        yield from pulse(msix, 1)
        pba.append((yield msix.pba.status))
        yield from pulse(msix, 0)
        pba.append((yield msix.pba.status))

    def unmask(msix, wr):
        yield from control(wr, 1, 0)
        for _ in range(12):
            yield
        pba.append((yield msix.pba.status))

    sent = run_msix([setup, masked_then_other, unmask])
    assert [(a, d) for _, a, d in sent] == [(0xFEE00000, 0x40), (0xFEE00004, 0x41)]
    assert pba == [0b10, 0b10, 0]


def test_msix_disabled_and_function_mask():
    pba = []

    def setup(msix, wr):
        yield from entry(wr, 2, 0xFEE00008, 0x42, 0)

    def disabled(msix, wr):
        yield msix.msix_enable.eq(0)
        yield from pulse(msix, 2)
        pba.append((yield msix.pba.status))
        yield msix.msix_enable.eq(1)

    def function_masked(msix, wr):
        yield msix.function_mask.eq(1)
        yield from pulse(msix, 2)
        pba.append((yield msix.pba.status))
        yield msix.function_mask.eq(0)
        for _ in range(12):
            yield
        pba.append((yield msix.pba.status))

    def upper_address(msix, wr):
        yield from entry(wr, 3, 0x1000, 0x43, 0, upper=1)
        yield from pulse(msix, 3)
        pba.append((yield msix.pba.status))

    sent = run_msix([setup, disabled, function_masked, upper_address])
    assert [(a, d) for _, a, d in sent] == [(0xFEE00008, 0x42)]
    assert pba == [0, 0b100, 0, 0b1000]
