# SPDX-License-Identifier: BSD-2-Clause
#
# Tests of litex_soc/nic/wishbone_dma_adapter.py in Migen's simulator: both adapters on one
# Wishbone SRAM (LiteX's wishbone.SRAM behind a round-robin arbiter, as the SoC bus gives
# them), a core-side model that issues requests and takes completion beats with random
# backpressure. Checked: read data bit-exact per beat, last/err on the right beats, writes
# landing with the right byte lanes (partial last beat), rejected requests (no bus access,
# padded beats, counters), a bus error turned into err on the request's last beat.
import random

import pytest
from migen import If, Signal
from migen.sim import run_simulation

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone

from litex_soc.nic.wishbone_dma_adapter import WishboneDMAReadAdapter, WishboneDMAWriteAdapter

WORDS = 512             # SRAM of 512 W-bit words at byte address 0


class Top(LiteXModule):
    def __init__(self, dw, init, err_word=None):
        self.rd = WishboneDMAReadAdapter(dw, max_read=512, timeout=64)
        self.wr = WishboneDMAWriteAdapter(dw, max_payload=512)
        self.sram = wishbone.SRAM(WORDS * dw // 8, bus=wishbone.Interface(data_width=dw),
                                  init=init)
        bus = wishbone.Interface(data_width=dw)
        self.arb = wishbone.Arbiter([self.rd.bus, self.wr.bus], bus)
        self.comb += bus.connect(self.sram.bus, omit={"err"})
        if err_word is not None:        # one word answers with the bus's err instead of ack
            self.comb += If(bus.adr == err_word, self.sram.bus.stb.eq(0),
                            bus.ack.eq(0), bus.err.eq(bus.cyc & bus.stb))


def beats(data, B):
    data = data + bytes(-len(data) % B)
    return [int.from_bytes(data[i:i + B], "little") for i in range(0, len(data), B)]


def mem_init(dw, rng):
    return [rng.getrandbits(dw) for _ in range(WORDS)]


def mem_bytes(init, dw, addr, n):
    raw = b"".join(w.to_bytes(dw // 8, "little") for w in init)
    return raw[addr:addr + n]


def reader(dut, reqs, got, rng):
    def gen():
        for addr, length in reqs:
            yield dut.rd.rd_req_addr.eq(addr)
            yield dut.rd.rd_req_len.eq(length)
            yield dut.rd.rd_req_valid.eq(1)
            yield
            while not (yield dut.rd.rd_req_ready):
                yield
            yield dut.rd.rd_req_valid.eq(0)
            beats_got = []
            while True:
                ready = rng.random() < 0.7
                yield dut.rd.rd_cpl_ready.eq(ready)
                yield
                if ready and (yield dut.rd.rd_cpl_valid):
                    beats_got.append(((yield dut.rd.rd_cpl_data), (yield dut.rd.rd_cpl_last),
                                      (yield dut.rd.rd_cpl_err)))
                    if beats_got[-1][1]:
                        break
            # (the handshake was sampled before the edge the loop waited on)
            yield dut.rd.rd_cpl_ready.eq(0)
            got.append(beats_got)
    return gen()


@pytest.mark.parametrize("dw", [64, 128])
def test_reads_and_rejects(dw):
    rng = random.Random(dw)
    B = dw // 8
    init = mem_init(dw, rng)
    reqs = [(B * rng.randrange(0, WORDS - 64), 16 * rng.randrange(1, 32)) for _ in range(20)]
    reqs += [(4, 64), (0, 0), (0, 6), (0, 1024), (1 << 40, 64)]     # rejected
    dut = Top(dw, init)
    got = []
    run_simulation(dut, [reader(dut, reqs, got, rng)])
    assert len(got) == len(reqs)
    for (addr, length), bs in zip(reqs[:20], got[:20]):
        want = beats(mem_bytes(init, dw, addr, length), B)
        assert [d for d, _l, _e in bs] == want
        assert [(last, err) for _d, last, err in bs] == [(0, 0)] * (len(want) - 1) + [(1, 0)]
    for (addr, length), bs in zip(reqs[20:], got[20:]):
        n = max(1, (length + B - 1) // B)
        assert [(d, last, err) for d, last, err in bs] == [(0, 0, 0)] * (n - 1) + [(0, 1, 1)]


def test_bus_error_flags_the_last_beat():
    dw = 64
    init = mem_init(dw, random.Random(1))
    dut = Top(dw, init, err_word=10)
    got = []
    run_simulation(dut, [reader(dut, [(8 * 8, 64), (0, 32)], got, random.Random(2))])
    # Words 8..15: word 10 errs (its beat reads 0); the request's last beat carries err.
    first = got[0]
    assert len(first) == 8 and first[2][0] == 0
    assert [e for _d, _l, e in first] == [0] * 7 + [1]
    assert [e for _d, _l, e in got[1]] == [0] * 4


@pytest.mark.parametrize("dw", [64, 128])
def test_writes_and_counters(dw):
    rng = random.Random(dw + 7)
    B = dw // 8
    init = [0] * WORDS
    writes = [(B * rng.randrange(0, WORDS - 64), 4 * rng.randrange(1, 128)) for _ in range(12)]
    bad = [(2, 16), (0, 0), (0, 516)]
    data = {w: bytes(rng.getrandbits(8) for _ in range(w[1])) for w in writes + bad}
    dut = Top(dw, init)
    done = Signal()

    def gen():
        for addr, length in writes + bad:
            bs = beats(data[(addr, length)], B) or [0]
            for i, b in enumerate(bs):
                yield dut.wr.wr_valid.eq(1)
                yield dut.wr.wr_addr.eq(addr)
                yield dut.wr.wr_len.eq(length)
                yield dut.wr.wr_data.eq(b)
                yield dut.wr.wr_first.eq(i == 0)
                yield dut.wr.wr_last.eq(i == len(bs) - 1)
                yield
                while not (yield dut.wr.wr_ready):
                    yield
            yield dut.wr.wr_valid.eq(0)
            for _ in range(rng.randrange(3)):
                yield
        for _ in range(4):
            yield
        yield done.eq(1)
        mem = bytearray()
        for i in range(WORDS):
            mem += (yield dut.sram.mem[i]).to_bytes(B, "little")
        want = bytearray(WORDS * B)
        for addr, length in writes:
            want[addr:addr + length] = data[(addr, length)]
        assert mem == want
        assert (yield dut.wr.writes) == len(writes) + len(bad)
        assert (yield dut.wr.tlps) == len(writes)
        assert (yield dut.wr.rejected) == len(bad)

    run_simulation(dut, [gen()])
