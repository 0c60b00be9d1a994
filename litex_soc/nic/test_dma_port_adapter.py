# SPDX-License-Identifier: BSD-2-Clause
#
# Tests of litex_soc/nic/dma_port_adapter.py in Migen's simulator.
#
# test_crossbar_*: the adapters on master ports of LitePCIe's real LitePCIeCrossbar (with its
#   LitePCIeTLPController: tag allocation, per-tag completion reordering), a behavioural host at
#   the crossbar's PHY-side master port: it takes MRd/MWr requests (random backpressure) and
#   returns completions in a random order across tags, each request split at 64-byte RCB
#   boundaries, some with an error status (err on the first or the last completion TLP of the
#   request, or a single short errored completion).
#   Random reads (16-byte aligned, multiples of 16, no 4 KiB crossing, 64-bit addresses above
#   4 GiB included) and random writes (4-byte aligned/multiple lengths), plus invalid ones.
#   Checked: every request's fields at the PHY side (we, address, length in DWORDS, req_id),
#   every read's completion beats on the core side (count, order, data bit-exact, err on the
#   last beat exactly when expected), the exact MWr TLP sequence (address, DWORD length, data,
#   full beats), the counters.
# test_direct_*: the read adapter on a bare port driven by a behavioural model (no controller):
#   timeout, late data of a timed-out request dropped, overrun and short completions, a 32-bit
#   port (addresses >= 4 GiB rejected).
import random

import pytest
from migen.sim import passive, run_simulation

from litex.gen import LiteXModule
from litepcie.core.common import LitePCIeMasterInternalPort, LitePCIeMasterPort
from litepcie.core.crossbar import LitePCIeCrossbar

from litex_soc.nic.dma_port_adapter import DMAReadAdapter, DMAWriteAdapter

REQ_ID = 0x0142
RCB = 64


def mem_byte(a):
    return ((a * 2654435761) >> 7 ^ (a >> 13)) & 0xFF


def mem_bytes(a, n):
    return bytes(mem_byte(a + i) for i in range(n))


def beats_of(data, B):
    """Little-endian integers of B bytes (the last one zero-padded)."""
    data = data + bytes(-len(data) % B)
    return [int.from_bytes(data[i:i + B], "little") for i in range(0, len(data), B)]


class Top(LiteXModule):
    def __init__(self, dw, aw=64, max_pending=8, timeout=2**22, max_read=512, max_payload=512):
        self.crossbar = LitePCIeCrossbar(dw, aw, max_pending)
        rport = self.crossbar.get_master_port(read_only=True)
        wport = self.crossbar.get_master_port(write_only=True)
        self.rd = DMAReadAdapter(rport, dw, req_id=REQ_ID, max_read=max_read, timeout=timeout)
        self.wr = DMAWriteAdapter(wport, dw, req_id=REQ_ID, max_payload=max_payload)


# Stimulus -----------------------------------------------------------------------------------


def gen_reads(rng, n, max_read=512):
    """(addr, len, valid) read requests; a few invalid ones (rejected by the adapter)."""
    reqs = []
    for i in range(n):
        base = rng.choice([0x1000_0000, 0x7_2345_0000, 0xFFFF_FFFF_0000_0000])
        addr = base + rng.randrange(0, 1 << 20) * 16
        room = 4096 - addr % 4096
        ln = rng.randrange(1, min(max_read, room) // 16 + 1) * 16
        kind = rng.random()
        if kind < 0.06:
            reqs.append((addr, max_read + 16, False))       # too long
        elif kind < 0.10:
            reqs.append((addr + 2, ln, False))              # unaligned address
        elif kind < 0.13:
            reqs.append((addr, 6, False))                   # length not whole DWORDs
        else:
            reqs.append((addr, ln, True))
    return reqs


def gen_writes(rng, n, B, max_payload=512):
    writes = []
    for i in range(n):
        region = 0x2_0000_0000 + i * 0x10000 if i % 2 else 0x4000_0000 + i * 0x10000
        kind = rng.random()
        off = rng.randrange(0, 2048) * 4
        room = 4096 - off % 4096
        ln = rng.randrange(1, min(max_payload, room) // 4 + 1) * 4
        if rng.random() < 0.3:
            ln = rng.choice([4, 8, 12, B, B + 4, 2 * B - 4, max_payload])
            ln = min(ln, room)
        data = bytes(rng.randrange(256) for _ in range(ln))
        valid = True
        addr = region + off
        if kind < 0.05:
            addr += 1
            valid = False
        elif kind < 0.10:
            data = data[:-1] if ln > 4 else data + b"\x00\x00"
            valid = False
        elif kind < 0.13:
            data = bytes(max_payload + 4)
            valid = False
        writes.append((addr, data, valid))
    return writes


def expected_tlps(addr, data, B):
    """The MWr TLPs the write adapter must send: (addr, len in DWORDS, data bytes)."""
    k = len(data) // B
    out = []
    if k:
        out.append((addr, k * B // 4, data[:k * B]))
    for i in range((len(data) - k * B) // 4):
        a = k * B + 4 * i
        out.append((addr + a, 1, data[a:a + 4]))
    return out


# Generators -----------------------------------------------------------------------------------


def core_rd_req(dut, reqs, rng):
    rd = dut.rd
    for addr, ln, _ in reqs:
        for _ in range(rng.choice([0, 0, 0, 1, 3])):
            yield
        yield rd.rd_req_valid.eq(1)
        yield rd.rd_req_addr.eq(addr)
        yield rd.rd_req_len.eq(ln)
        yield
        while not (yield rd.rd_req_ready):
            yield
        yield rd.rd_req_valid.eq(0)


def core_rd_cpl(dut, nreqs, groups, rng, max_cycles=400000):
    rd = dut.rd
    cur = []
    cycles = 0
    while len(groups) < nreqs:
        ready = rng.random() < 0.8
        yield rd.rd_cpl_ready.eq(ready)
        yield
        cycles += 1
        assert cycles < max_cycles, f"read completions stalled after {len(groups)} requests"
        if ready and (yield rd.rd_cpl_valid):
            data, last, err = (yield rd.rd_cpl_data), (yield rd.rd_cpl_last), \
                (yield rd.rd_cpl_err)
            cur.append((data, err))
            if last:
                groups.append(cur)
                cur = []
    yield rd.rd_cpl_ready.eq(0)
    for _ in range(20):
        yield


def core_wr(dut, writes, B, rng, done):
    wr = dut.wr
    for addr, data, _ in writes:
        bts = beats_of(data, B)
        for j, beat in enumerate(bts):
            for _ in range(rng.choice([0, 0, 0, 1, 2])):
                yield wr.wr_valid.eq(0)
                yield
            yield wr.wr_valid.eq(1)
            yield wr.wr_addr.eq(addr)
            yield wr.wr_len.eq(len(data))
            yield wr.wr_data.eq(beat)
            yield wr.wr_first.eq(j == 0)
            yield wr.wr_last.eq(j == len(bts) - 1)
            yield
            while not (yield wr.wr_ready):
                yield
        yield wr.wr_valid.eq(0)
    for _ in range(50):
        yield
    done.append(1)


@passive
def host_requests(dut, B, pending, tlps, rng, err_every):
    """Takes requests at the crossbar's PHY-side master port."""
    req = dut.crossbar.master.sink
    cur = None
    nrd = 0
    while True:
        ready = rng.random() < 0.7
        yield req.ready.eq(ready)
        yield
        if not (ready and (yield req.valid)):
            continue
        we, adr, ln = (yield req.we), (yield req.adr), (yield req.len)
        first, last, dat = (yield req.first), (yield req.last), (yield req.dat)
        assert (yield req.req_id) == REQ_ID
        ndw = ln if ln else 1024
        if we:
            if first:
                cur = [adr, ndw, b""]
            assert cur is not None and adr == cur[0] and ndw == cur[1]
            cur[2] += dat.to_bytes(B, "little")
            if last:
                n = cur[1] * 4
                # Every beat of a multi-DWORD write is full; a 1-DWORD write is one beat.
                assert len(cur[2]) == (n if n > 4 else B), (hex(cur[0]), n, len(cur[2]))
                tlps.append((cur[0], cur[1], cur[2][:n]))
                cur = None
        else:
            assert first and last
            # Every err_every-th read fails, the error modes in turn: each occurs whatever
            # the timing.
            mode = "ok"
            if nrd % err_every == err_every // 2:
                mode = ("err_data", "err_last", "err_short")[nrd // err_every % 3]
            nrd += 1
            pending.append(dict(tag=(yield req.tag), adr=adr, ndw=ndw, sent=0, mode=mode))


@passive
def host_completions(dut, B, pending, log, rng):
    """Returns completions (RCB splits, random order across tags) at the PHY-side port."""
    cpl = dut.crossbar.master.source
    while True:
        if not pending or rng.random() < 0.3:
            yield
            continue
        p = rng.choice(pending)
        start = p["adr"] + p["sent"]
        end_req = p["adr"] + 4 * p["ndw"]
        if p["mode"] == "err_short":
            stop, data, err = end_req, bytes(B), 1
        else:
            stop = min(end_req, (start // RCB + 1) * RCB)
            data = mem_bytes(start, stop - start)
            err = int((p["mode"] == "err_data" and p["sent"] == 0)
                      or (p["mode"] == "err_last" and stop == end_req))
        bts = beats_of(data, B)
        for j, beat in enumerate(bts):
            yield cpl.valid.eq(1)
            yield cpl.first.eq(j == 0)
            yield cpl.last.eq(j == len(bts) - 1)
            yield cpl.dat.eq(beat)
            yield cpl.tag.eq(p["tag"])
            yield cpl.err.eq(err)
            yield cpl.end.eq(stop == end_req)
            yield cpl.len.eq(0 if p["mode"] == "err_short" else (stop - start) // 4)
            yield
            while not (yield cpl.ready):
                yield
            yield cpl.valid.eq(0)
        p["sent"] = stop - p["adr"]
        if stop == end_req:
            pending.remove(p)
            log.append((p["adr"], p["ndw"], p["mode"]))


# Crossbar tests -------------------------------------------------------------------------------


@pytest.mark.parametrize("dw", [64, 128])
@pytest.mark.parametrize("seed", [1, 2])
def test_crossbar_read_write(dw, seed):
    rng = random.Random(seed * 1000 + dw)
    B = dw // 8
    dut = Top(dw)
    reqs = gen_reads(rng, 30)
    writes = gen_writes(rng, 30, B)
    groups, pending, tlps, log, wdone = [], [], [], [], []
    gens = [
        core_rd_req(dut, reqs, random.Random(rng.random())),
        core_rd_cpl(dut, len(reqs), groups, random.Random(rng.random())),
        core_wr(dut, writes, B, random.Random(rng.random()), wdone),
        host_requests(dut, B, pending, tlps, random.Random(rng.random()), err_every=6),
        host_completions(dut, B, pending, log, random.Random(rng.random())),
    ]
    counters = {}

    def read_counters():
        while not (len(groups) == len(reqs) and wdone):
            yield
        for _ in range(5):
            yield
        for name in ("requests", "completions", "errors", "rejected", "timeouts", "dropped"):
            counters["rd_" + name] = yield getattr(dut.rd, name)
        for name in ("writes", "tlps", "rejected"):
            counters["wr_" + name] = yield getattr(dut.wr, name)

    run_simulation(dut, gens + [read_counters()])

    # Reads: the MRd requests seen by the host, in issue order, are the valid requests.
    modes = {}
    for adr, ndw, mode in log:
        modes.setdefault((adr, ndw), []).append(mode)
    sent = [(a, ln) for a, ln, ok in reqs if ok]
    assert sorted((a, n * 4) for a, n, _ in log) == sorted(sent)
    assert len(groups) == len(reqs)
    nerr = 0
    for (addr, ln, ok), g in zip(reqs, groups):
        n = max(1, -(-ln // B))
        assert len(g) == n, (hex(addr), ln, len(g))
        assert all(e == 0 for _, e in g[:-1])
        if not ok:
            assert g[-1][1] == 1
            nerr += 1
            continue
        mode = modes[(addr, ln // 4)].pop(0)
        if mode == "ok":
            assert g[-1][1] == 0, hex(addr)
            assert [d for d, _ in g] == beats_of(mem_bytes(addr, ln), B), hex(addr)
        else:
            assert g[-1][1] == 1, (hex(addr), mode)
            nerr += 1
    assert {m for _, _, m in log} == {"ok", "err_data", "err_last", "err_short"}
    assert counters["rd_requests"] == len(reqs)
    assert counters["rd_completions"] == len(reqs)
    assert counters["rd_errors"] == nerr
    assert counters["rd_rejected"] == sum(1 for r in reqs if not r[2])
    assert counters["rd_timeouts"] == 0
    assert counters["rd_dropped"] == 0

    # Writes: the exact TLP sequence.
    exp = [t for a, d, ok in writes if ok for t in expected_tlps(a, d, B)]
    assert tlps == exp
    assert counters["wr_writes"] == len(writes)
    assert counters["wr_rejected"] == sum(1 for w in writes if not w[2])
    assert counters["wr_tlps"] == len(exp)
    assert any(n == 1 for _, n, _ in exp) and any(n > 1 for _, n, _ in exp)
    assert any(a >= 1 << 32 for a, _, _ in exp)


# Direct (behavioural port) tests ----------------------------------------------------------------


class Direct(LiteXModule):
    def __init__(self, dw, aw, timeout):
        self.iport = LitePCIeMasterInternalPort(dw, aw, channel=3, read_only=True)
        port = LitePCIeMasterPort(self.iport)
        self.rd = DMAReadAdapter(port, dw, req_id=REQ_ID, timeout=timeout)


@pytest.mark.parametrize("dw", [64, 128])
def test_direct_timeout_overrun_short(dw):
    B = dw // 8
    timeout = 200
    dut = Direct(dw, 32, timeout)
    # (addr, len, what the port model returns)
    script = [
        (0x1000, 64, "late"),       # answered only after the timeout: dropped
        (0x2000, 64, "ok"),
        (0x3000, 32, "over"),       # the port returns 64 bytes for a 32-byte request
        (0x4000, 48, "ok"),
        (0x5000, 64, "short"),      # the port ends the request after 16 bytes
        (0x6000, 16, "ok"),
        (0x1_0000_7000, 16, "rej"),  # does not fit a 32-bit port
        (0x8000, 32, "ok"),
    ]
    groups, seen = [], []
    rng = random.Random(dw)
    reqs = [(a, ln, True) for a, ln, _ in script]

    todo = []

    @passive
    def collect_reqs():
        req = dut.iport.sink
        yield req.ready.eq(1)
        while True:
            yield
            if (yield req.valid):
                assert (yield req.channel) == 3 and (yield req.we) == 0
                assert (yield req.req_id) == REQ_ID
                adr = yield req.adr
                seen.append((adr, (yield req.len)))
                todo.append(script[[s[0] for s in script].index(adr)])

    @passive
    def port_model():
        cpl = dut.iport.source
        while True:
            yield
            if not todo:
                continue
            addr, ln, what = todo.pop(0)
            if what == "late":
                for _ in range(timeout + 50):
                    yield
            n = {"over": 2 * ln, "short": 16}.get(what, ln)
            bts = beats_of(mem_bytes(addr, n), B)
            for j, beat in enumerate(bts):
                yield cpl.valid.eq(1)
                yield cpl.dat.eq(beat)
                yield cpl.first.eq(j == 0)
                yield cpl.last.eq(j == len(bts) - 1)
                yield cpl.end.eq(j == len(bts) - 1)
                yield cpl.err.eq(0)
                yield
                while not (yield cpl.ready):
                    yield
                yield cpl.valid.eq(0)

    counters = {}

    def consumer():
        yield from core_rd_cpl(dut, len(script), groups, rng, max_cycles=20000)
        for name in ("requests", "completions", "errors", "rejected", "timeouts", "dropped"):
            counters[name] = yield getattr(dut.rd, name)

    # One request at a time here: the model answers in order and looks requests up by address.
    def driver():
        for addr, ln, _ in reqs:
            yield from core_rd_req(dut, [(addr, ln, True)], random.Random(0))
            while len(groups) < reqs.index((addr, ln, True)) + 1:
                yield

    run_simulation(dut, [driver(), consumer(), collect_reqs(), port_model()])

    assert [a for a, _ in seen] == [a for a, _, w in script if w != "rej"]
    assert [ln for _, ln in seen] == [ln // 4 for _, ln, w in script if w != "rej"]
    assert len(groups) == len(script)
    for (addr, ln, what), g in zip(script, groups):
        assert len(g) == ln // B, (hex(addr), what)
        assert all(e == 0 for _, e in g[:-1])
        if what == "ok":
            assert g[-1][1] == 0, hex(addr)
            assert [d for d, _ in g] == beats_of(mem_bytes(addr, ln), B)
        else:
            assert g[-1][1] == 1, (hex(addr), what)
        if what == "over":
            assert [d for d, _ in g] == beats_of(mem_bytes(addr, ln), B)
        if what == "short":
            assert g[0][0] == beats_of(mem_bytes(addr, 16), B)[0]
    assert counters["requests"] == len(script)
    assert counters["completions"] == len(script)
    assert counters["errors"] == 4
    assert counters["rejected"] == 1
    assert counters["timeouts"] == 1
    assert counters["dropped"] == 64 // B + 32 // B     # late data + overrun


def test_bad_parameters():
    xb = LitePCIeCrossbar(64, 64, 8)
    with pytest.raises(ValueError):
        DMAReadAdapter(xb.get_master_port(read_only=True), 128)
    with pytest.raises(ValueError):
        DMAWriteAdapter(xb.get_master_port(write_only=True), 64, max_payload=4096)
