# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of RXEngine (amaranth.sim): a host-memory model (descriptor reads served in order
# after a random latency, writes applied and every one recorded, back-pressure on wr_ready and
# rd_cpl) and a driver model (buffers posted by doorbell at random times, sometimes none, some
# too small or misaligned, out-of-range doorbells, injected read errors), checked against a
# transaction-level reference model: which frames are dropped for lack of a buffer (from the
# doorbells seen before the frame's first beat), every frame bit-exact in its buffer, every
# completion record exact (timestamp = the cycle of the frame's first beat), nothing written
# outside a posted buffer or the completion ring, no write crossing 4 KiB or above max_payload,
# the counters. Hand-worked cases with their cycle numbers; lint of the emitted Verilog.
import gc
import random

import pytest
from amaranth.sim import Simulator

from nicmodels.nic_driver import decode_rx_cpl, encode_rx_cpl, encode_rx_desc
from rtl.contract.formats import RxStatus
from rtl.nic.rx_engine import COUNTS, RXEngine
from rtl.verilator_lint import verilator_lint

OK, TOO_BIG, BAD_ADDR = RxStatus.OK, RxStatus.TOO_BIG, RxStatus.BAD_ADDR

RING_BASE = 0x1_0000_0000
CPL_BASE = 0x2_0000_0f00                   # the 16-byte records cross no 4 KiB boundary anyway
BUF_BASE = 0x4_0000_0000


class Host:
    """Host memory and DMA model, the driver and the frame source, stepped once per cycle."""

    def __init__(self, dut, size_log2, frames, rng, *, post=None, raw_doorbells=(),
                 p_rd_ready=1.0, p_cpl=1.0, p_wr_ready=1.0, p_beat=1.0, latency=(4, 4),
                 p_err=0.0, random_post=None, enable=1):
        self.dut, self.rng = dut, rng
        self.bpb = dut.data_width // 8
        self.S = 1 << size_log2
        self.size_log2 = size_log2
        self.mem = {}
        self.frames = list(frames)           # [(gap cycles before, bytes)]
        self.post = dict(post or {})         # cycle -> [(addr, len)] to post, then doorbell
        self.raw = dict(raw_doorbells)       # cycle -> db_index (written as is)
        self.random_post = random_post       # None or callable(cycle, host) -> [(addr, len)]
        self.p_rd_ready, self.p_cpl, self.p_wr_ready, self.p_beat = \
            p_rd_ready, p_cpl, p_wr_ready, p_beat
        self.latency, self.p_err = latency, p_err
        self.enable = enable
        # driver
        self.dprod = 0                       # ring position of the next descriptor to post
        self.posted = []                     # absolute index -> (addr, len)
        self.doorbells = []                  # (cycle, posted total after it) of valid ones
        self.bad_db = 0
        # DMA
        self.reads = []                      # (cycle, addr, len)
        self.rq = []                         # [due, beats, err_beat]
        self.fetched_abs = 0
        self.errored = set()                 # absolute descriptor indexes of failed reads
        self.writes = []                     # (cycle, addr, len, bytes)
        self.cur_write = None
        self.irqs = 0
        # source
        self.fi, self.gap, self.beat = 0, None, 0
        self.accepted = []                   # (first beat cycle) per frame, in order

    # -- driver -----------------------------------------------------------------------------
    def write_desc(self, pos, addr, length):
        base = RING_BASE + 16 * pos
        garbage = bytes(self.rng.randrange(256) for _ in range(6))   # reserved: garbage
        raw = encode_rx_desc(addr, length, reserved=int.from_bytes(garbage, "little"))
        for i, b in enumerate(raw):
            self.mem[base + i] = b

    def post_buffers(self, bufs, cons):
        n = 0
        for addr, length in bufs:
            if (self.dprod + 1) % self.S == cons:
                break                       # ring full: (prod - cons) mod S <= S - 1
            self.write_desc(self.dprod, addr, length)
            self.posted.append((addr, length))
            self.dprod = (self.dprod + 1) % self.S
            n += 1
        return n

    # -- one cycle --------------------------------------------------------------------------
    async def step(self, ctx, cyc):
        d, rng = self.dut, self.rng
        # doorbell
        db = None
        cons = ctx.get(d.cons)
        bufs = self.post.get(cyc)
        if bufs is None and self.random_post is not None:
            bufs = self.random_post(cyc, self)
        if bufs:
            if self.post_buffers(bufs, cons):
                db = self.dprod
        if cyc in self.raw:
            db = self.raw[cyc]
        ctx.set(d.db_valid, db is not None)
        if db is not None:
            ctx.set(d.db_index, db)
            if self.enable:
                if db < self.S:
                    self.doorbells.append((cyc, len(self.posted)))
                else:
                    self.bad_db += 1

        # read completions (in order, after the latency)
        cpl_valid = 0
        if self.rq and self.rq[0][0] <= cyc and rng.random() < self.p_cpl:
            due, beats, err_beat = self.rq[0]
            cpl_valid = 1
            ctx.set(d.rd.cpl.p.data, beats[0])
            ctx.set(d.rd.cpl.p.last, len(beats) == 1)
            ctx.set(d.rd.cpl.p.err, err_beat == 0)
        ctx.set(d.rd.cpl.valid, cpl_valid)
        rd_ready = int(rng.random() < self.p_rd_ready)
        ctx.set(d.rd.req.ready, rd_ready)
        wr_ready = int(rng.random() < self.p_wr_ready)
        ctx.set(d.wr.ready, wr_ready)

        # frame source (FrameFIFO's m_*)
        s_valid = 0
        if self.fi < len(self.frames):
            gap, data = self.frames[self.fi]
            if self.gap is None:
                self.gap = gap
            if self.gap > 0:
                self.gap -= 1
            elif self.beat == 0 or rng.random() < self.p_beat:
                s_valid = 1
                b = self.bpb
                chunk = data[self.beat * b:(self.beat + 1) * b]
                nbeats = max(1, -(-len(data) // b))
                ctx.set(d.s.p.data, int.from_bytes(chunk, "little"))
                ctx.set(d.s.p.keep, (1 << len(chunk)) - 1)
                ctx.set(d.s.p.last, self.beat == nbeats - 1)
                ctx.set(d.s.p.len, len(data))
        ctx.set(d.s.valid, s_valid)

        # outputs of this cycle
        if ctx.get(d.rd.req.valid) and rd_ready:
            addr, length = ctx.get(d.rd.req.p.addr), ctx.get(d.rd.req.p.len)
            self.reads.append((cyc, addr, length))
            assert ctx.get(d.rd.req.p.desc) == 1         # descriptor fetches only
            raw = bytes(self.mem.get(addr + i, 0) for i in range(length))
            b = self.bpb
            beats = [int.from_bytes(raw[i:i + b], "little") for i in range(0, length, b)]
            n = length // 16
            err_beat = -1
            if rng.random() < self.p_err:
                err_beat = rng.randrange(len(beats))
                self.errored.update(range(self.fetched_abs, self.fetched_abs + n))
            self.fetched_abs += n
            self.rq.append([cyc + rng.randint(*self.latency), beats, err_beat])
        if cpl_valid and ctx.get(d.rd.cpl.ready):
            q = self.rq[0]
            q[1].pop(0)
            q[2] -= 1
            if not q[1]:
                self.rq.pop(0)
        if ctx.get(d.wr.valid) and wr_ready:
            self.wr_beat(cyc, ctx)
        if s_valid and ctx.get(d.s.ready):
            if self.beat == 0:
                self.accepted.append(cyc)
            self.beat += 1
            if ctx.get(d.s.p.last):
                self.fi += 1
                self.beat, self.gap = 0, None
        if ctx.get(d.irq_event):
            self.irqs += 1

    def wr_beat(self, cyc, ctx):
        d, b = self.dut, self.bpb
        first, last = ctx.get(d.wr.p.first), ctx.get(d.wr.p.last)
        data = ctx.get(d.wr.p.data).to_bytes(b, "little")
        if self.cur_write is None:
            assert first, f"cycle {cyc}: write beat without wr_first"
            addr, length = ctx.get(d.wr.p.addr), ctx.get(d.wr.p.len)
            self.cur_write = [cyc, addr, length, b""]
        else:
            assert not first, f"cycle {cyc}: wr_first inside a write"
        w = self.cur_write
        w[3] += data
        nbeats = -(-w[2] // b)
        assert last == (len(w[3]) == nbeats * b), f"cycle {cyc}: wr_last"
        if last:
            cyc0, addr, length, raw = w
            assert 1 <= length <= self.dut.max_payload, f"cycle {cyc0}: wr_len {length}"
            assert addr % 4096 + length <= 4096, f"cycle {cyc0}: write crosses 4 KiB"
            for i in range(length):
                self.mem[addr + i] = raw[i]
            self.writes.append((cyc0, addr, length, raw[:length]))
            self.cur_write = None

    def idle(self):
        return self.fi >= len(self.frames) and not self.rq and self.cur_write is None


def simulate(host, max_cycles=200_000, tail=60, config=None):
    """Runs until every frame has been accepted and the DMA has been quiet for `tail` cycles.
    Returns the core's counters and cons at the end."""
    dut = host.dut
    out = {}

    async def bench(ctx):
        ctx.set(dut.ring_base, RING_BASE)
        ctx.set(dut.ring_size_log2, host.size_log2)
        ctx.set(dut.cpl_base, CPL_BASE)
        ctx.set(dut.enable, host.enable)
        quiet = 0
        nwrites = 0
        for cyc in range(max_cycles):
            if config is not None:
                config(ctx, cyc)
            await host.step(ctx, cyc)
            await ctx.tick()
            busy = not host.idle() or len(host.writes) != nwrites or ctx.get(dut.wr.valid) \
                or ctx.get(dut.rd.req.valid)
            nwrites = len(host.writes)
            quiet = 0 if busy else quiet + 1
            if quiet >= tail:
                break
        else:
            raise AssertionError("simulation did not finish")
        out.update({name: ctx.get(getattr(dut, name)) for name in COUNTS + ("cons",)})
        out["cycles"] = cyc

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return out


def len4(data):
    """Bytes written for a frame: its length rounded up to whole DWORDs (zero padding)."""
    return (len(data) + 3) & ~3


def expected(host):
    """The reference model: per frame, in order, (drop | the descriptor it uses) from the
    doorbells seen before its first beat, and the writes and counters that follow."""
    frames = [data for _, data in host.frames]
    assert len(host.accepted) == len(frames)
    p = 0
    results = []                            # per frame: None (no buffer) or (abs index, status)
    for data, c in zip(frames, host.accepted):
        posted = 0
        for dc, total in host.doorbells:
            if dc < c:
                posted = total
        while p in host.errored:
            p += 1
        if not host.enable or p >= posted:
            results.append(None)
            continue
        addr, blen = host.posted[p]
        status = BAD_ADDR if addr % 16 else TOO_BIG if len4(data) > blen else OK
        results.append((p, status))
        p += 1
    counts = dict.fromkeys(COUNTS, 0)
    counts["drop_no_buffer"] = results.count(None)
    for data, r in zip(frames, results):
        if r is not None:
            st = r[1]
            counts["frames"] += st == OK
            counts["bytes"] += len(data) if st == OK else 0
            counts["drop_too_big"] += st == TOO_BIG
            counts["drop_bad_desc"] += st == BAD_ADDR
    counts["desc_reads"] = len(host.reads)
    counts["err_db_range"] = host.bad_db
    counts["err_read"] = len(host.errored)
    return results, counts


def check(host, got):
    """Everything the host saw against the reference model; returns the model's results."""
    S, dut = host.S, host.dut
    results, counts = expected(host)
    # descriptor reads: in ring order, whole descriptors, <= max_read, within 4 KiB and the ring
    pos = 0
    for cyc, addr, length in host.reads:
        assert length % 16 == 0 and 16 <= length <= dut.max_read, (cyc, length)
        assert addr % 4096 + length <= 4096, (cyc, addr, length)
        assert addr == RING_BASE + 16 * pos, (cyc, hex(addr), pos)
        assert pos + length // 16 <= S
        pos = (pos + length // 16) % S
    # writes: per frame with a buffer, its data writes then its completion record
    writes = list(host.writes)
    ncpl = 0
    for k, (data, r, c) in enumerate(zip((d for _, d in host.frames), results, host.accepted)):
        if r is None:
            continue
        idx, status = r
        baddr, blen = host.posted[idx]
        if status == OK:
            addr, got_data = baddr, b""
            while len(got_data) < len4(data):
                assert writes, f"frame {k}: data writes missing"
                cyc, waddr, wlen, wdata = writes.pop(0)
                assert waddr == addr, f"frame {k}: write at {waddr:#x}, expected {addr:#x}"
                assert baddr <= waddr and waddr + wlen <= baddr + blen, f"frame {k}: outside"
                got_data += wdata
                addr += wlen
            assert got_data == data + bytes(len4(data) - len(data)), f"frame {k}: data differs"
        assert writes, f"frame {k}: completion missing"
        cyc, waddr, wlen, wdata = writes.pop(0)
        assert (waddr, wlen) == (CPL_BASE + 16 * (ncpl % S), 16), f"frame {k}: completion addr"
        rec = encode_rx_cpl(len(data) if status == OK else 0, idx % S, status, timestamp=c)
        assert wdata == rec, f"frame {k}: record {wdata.hex()} != {rec.hex()}"
        ncpl += 1
    assert not writes, f"writes left over: {[(hex(a), n) for _, a, n, _ in writes]}"
    assert host.irqs == ncpl
    assert {k: got[k] for k in COUNTS} == counts
    return results


def make_frames(rng, n, big=0.0, gaps=(0, 30)):
    frames = []
    for _ in range(n):
        length = rng.randint(1600, 2200) if rng.random() < big else rng.randint(60, 1514)
        frames.append((rng.randint(*gaps), bytes(rng.randrange(256) for _ in range(length))))
    return frames


class BufferPool:
    """Fresh buffers (never reused) at random 16-byte aligned addresses crossing 4 KiB pages,
    mostly 2048 bytes, some smaller than a frame, some misaligned."""

    def __init__(self, rng, p_small=0.1, p_misaligned=0.02):
        self.rng, self.next = rng, BUF_BASE
        self.p_small, self.p_misaligned = p_small, p_misaligned

    def get(self):
        rng = self.rng
        addr = (self.next + rng.randrange(0, 5000)) & ~15
        if rng.random() < self.p_misaligned:
            addr += rng.randint(1, 15)
        length = rng.randint(200, 1600) if rng.random() < self.p_small else 2048
        self.next = addr + length + 16
        return addr, length


def random_driver(rng, pool):
    """Bursts of posting separated by pauses (frames then find no buffer)."""
    state = {"until": 0, "posting": True}

    def post(cyc, host):
        if cyc >= state["until"]:
            state["posting"] = not state["posting"]
            state["until"] = cyc + (rng.randint(100, 1500) if state["posting"] else
                                    rng.randint(300, 2500))
        if state["posting"] and rng.random() < 0.05:
            return [pool.get() for _ in range(rng.randint(1, 6))]
        return None
    return post


@pytest.mark.parametrize("data_width,size_log2,max_payload,max_read,seed", [
    (128, 4, 256, 512, 1),
    (64, 4, 256, 512, 2),
    (128, 2, 128, 64, 3),
    (64, 6, 256, 48, 4),
    (128, 6, 512, 4096, 5),
    (64, 1, 64, 512, 6),
])
def test_random(data_width, size_log2, max_payload, max_read, seed):
    rng = random.Random(seed)
    dut = RXEngine(data_width=data_width, max_payload=max_payload, max_read=max_read)
    pool = BufferPool(rng)
    frames = make_frames(rng, 90, big=0.05)
    S = 1 << size_log2
    raw = {c: S + rng.randrange(100) for c in rng.sample(range(20_000), 5)}
    host = Host(dut, size_log2, frames, rng, random_post=random_driver(rng, pool),
                raw_doorbells=raw, p_rd_ready=0.6, p_cpl=0.7, p_wr_ready=0.7, p_beat=0.9,
                latency=(2, 40), p_err=0.08)
    got = simulate(host)
    results = check(host, got)
    statuses = [r[1] if r else None for r in results]
    assert statuses.count(None) >= 3, statuses          # some frames found no buffer
    assert statuses.count(OK) >= 20, statuses
    assert host.errored and host.bad_db
    if size_log2 >= 2 and max_read >= 32:
        assert max(n for _, _, n in host.reads) > 16            # batched reads
    if size_log2 >= 4:
        assert statuses.count(TOO_BIG) >= 1


# Hand-worked cases: rd_req_ready, rd_cpl, wr_ready always 1 and a read latency of 4 cycles
# (a request taken in cycle t is answered from cycle t + 4).

def hand(data_width=128, size_log2=2, frames=(), post=None, raw=(), **kw):
    dut = RXEngine(data_width=data_width)
    host = Host(dut, size_log2, frames, random.Random(0), post=post, raw_doorbells=raw, **kw)
    got = simulate(host)
    results = check(host, got)
    return host, got, results


def test_one_frame_one_buffer():
    # Buffer posted in cycle 0 (doorbell prod = 1): prod is 1 from cycle 1, the read's count is
    # registered in 2, the request raised in 3 (taken in 3), answered in 7 (one beat of 16 bytes),
    # the descriptor is in the FIFO from 8. The frame (100 bytes) is presented from cycle 20: popped
    # in 20, its first beat accepted in 21 (timestamp 21), its 7 beats 21..27 are written as one
    # write of 100 bytes (beats taken 22..28); in 28 the frame is done, the record is loaded in 29
    # and taken in 30, irq_event in 31.
    data = bytes(range(100))
    host, got, res = hand(frames=[(20, data)], post={0: [(BUF_BASE + 0x40, 2048)]})
    assert res == [(0, OK)]
    assert host.reads == [(3, RING_BASE, 16)]
    assert host.accepted == [21]
    assert [(c, a, n) for c, a, n, _ in host.writes] == [(22, BUF_BASE + 0x40, 100),
                                                         (30, CPL_BASE, 16)]
    assert host.writes[1][3] == encode_rx_cpl(100, 0, OK, timestamp=21)
    assert host.mem[BUF_BASE + 0x40 + 99] == 99 and BUF_BASE + 0x40 + 100 not in host.mem
    assert got["frames"] == 1 and got["bytes"] == 100 and got["cons"] == 1
    # The same with 64-bit beats: 13 beats (21..33, taken 22..34); the record is 2 beats.
    host, got, res = hand(data_width=64, frames=[(20, data)],
                          post={0: [(BUF_BASE + 0x40, 2048)]})
    assert host.reads == [(3, RING_BASE, 16)] and host.accepted == [21]
    assert [(c, a, n) for c, a, n, _ in host.writes] == [(22, BUF_BASE + 0x40, 100),
                                                         (36, CPL_BASE, 16)]


def test_splits_at_4k_and_max_payload():
    # 1000 bytes into a buffer 0x100 before a 4 KiB boundary: 256 (to the boundary), then
    # max_payload 256, 256, and 232.
    data = bytes(random.Random(1).randrange(256) for _ in range(1000))
    addr = BUF_BASE + 0x1000 - 0x100
    host, got, res = hand(frames=[(20, data)], post={0: [(addr, 2048)]})
    assert [(a - BUF_BASE, n) for _, a, n, _ in host.writes] == [
        (0xF00, 256), (0x1000, 256), (0x1100, 256), (0x1200, 232), (CPL_BASE - BUF_BASE, 16)]
    host, got, res = hand(frames=[(20, data)], post={0: [(addr + 0x80, 2048)]})
    assert [n for _, _, n, _ in host.writes] == [128, 256, 256, 256, 104, 16]


def test_splits_at_runtime_mps():
    # Built for MPS 256, run at the link's MPS 128: the same 1000 bytes go as 7 x 128 and 104.
    data = bytes(random.Random(1).randrange(256) for _ in range(1000))
    dut = RXEngine(data_width=128)
    host = Host(dut, 2, [(20, data)], random.Random(0),
                post={0: [(BUF_BASE + 0x1000 - 0x100, 2048)]})
    got = simulate(host, config=lambda ctx, cyc: ctx.set(dut.mps, 128))
    assert check(host, got) == [(0, OK)]
    assert [n for _, _, n, _ in host.writes] == [128] * 7 + [104, 16]


def test_frame_bigger_than_buffer():
    # 600-byte frame, 512-byte buffer: nothing written to the buffer, record: length 0, index 0,
    # status TOO_BIG, the timestamp of the first (discarded) beat. The next frame uses buffer 1.
    # A misaligned buffer (2) is BAD_ADDR.
    frames = [(20, bytes(600)), (5, bytes([7]) * 64), (5, bytes([9]) * 64)]
    bufs = [(BUF_BASE, 512), (BUF_BASE + 0x1000, 512), (BUF_BASE + 0x2004, 2048)]
    host, got, res = hand(size_log2=3, frames=frames, post={0: bufs})
    assert res == [(0, TOO_BIG), (1, OK), (2, BAD_ADDR)]
    assert host.writes[0][1] == CPL_BASE
    assert host.writes[0][3] == encode_rx_cpl(0, 0, TOO_BIG, timestamp=host.accepted[0])
    assert [a for _, a, _, _ in host.writes] == [CPL_BASE, BUF_BASE + 0x1000, CPL_BASE + 16,
                                                 CPL_BASE + 32]
    rec = decode_rx_cpl(host.writes[3][3])
    assert (rec.len, rec.index, rec.status, rec.queue, rec.reserved) == (0, 2, BAD_ADDR, 0, 0)
    assert (got["drop_too_big"], got["drop_bad_desc"], got["frames"]) == (1, 1, 1)


def test_no_buffer_posted():
    # No doorbell: the frame's first beat is accepted in the cycle it is presented (10) and the
    # frame discarded; nothing is read or written. A buffer posted in 50 serves the frame of 100.
    frames = [(10, bytes(300)), (80, bytes(64))]
    host, got, res = hand(frames=frames, post={50: [(BUF_BASE, 2048)]})
    assert res == [None, (0, OK)]
    assert host.accepted[0] == 10
    assert got["drop_no_buffer"] == 1 and host.reads == [(53, RING_BASE, 16)]
    assert [a for _, a, _, _ in host.writes] == [BUF_BASE, CPL_BASE]
    # enable 0: frames dropped, doorbells ignored, nothing read.
    host, got, res = hand(frames=frames, post={0: [(BUF_BASE, 2048)]}, enable=0)
    assert res == [None, None] and host.reads == [] and got["drop_no_buffer"] == 2


def test_frame_waits_for_fetch():
    # Posted in cycle 0, frame presented in 3 while the read (taken in 3) is outstanding: it
    # waits (not dropped); the descriptor arrives in 7, is popped in 8, first beat taken in 9.
    host, got, res = hand(frames=[(3, bytes(64))], post={0: [(BUF_BASE, 2048)]})
    assert res == [(0, OK)] and host.accepted == [9]


def test_ring_wrap():
    # Ring of 4 (at most 3 posted): 3 buffers, 3 frames, 3 more buffers (positions 3, 0, 1) and
    # 3 frames: the second batch is read as 1 descriptor (to the ring end) then 2; completion
    # records wrap to the ring start.
    bufs = [(BUF_BASE + 0x1000 * i, 2048) for i in range(6)]
    frames = [(5, bytes([i]) * 100) for i in range(3)] + \
        [(200 if i == 0 else 5, bytes([i + 3]) * 100) for i in range(3)]
    host, got, res = hand(size_log2=2, frames=frames, post={0: bufs[:3], 200: bufs[3:]})
    assert res == [(i, OK) for i in range(6)]
    assert [(a - RING_BASE, n) for _, a, n in host.reads] == [(0, 48), (48, 16), (0, 32)]
    cpl = [a - CPL_BASE for _, a, n, _ in host.writes if n == 16]
    assert cpl == [0, 16, 32, 48, 0, 16]
    idx = [decode_rx_cpl(w[3]).index for w in host.writes if w[2] == 16]
    assert idx == [0, 1, 2, 3, 0, 1] and got["cons"] == 2


def test_doorbell_out_of_range():
    # Ring of 4: doorbell 4 and 1000 are refused and change nothing (no read, the frame dropped).
    host, got, res = hand(size_log2=2, frames=[(20, bytes(64))], raw={0: 4, 1: 1000})
    assert got["err_db_range"] == 2 and host.reads == [] and res == [None]


def test_read_error_skips_descriptors():
    # The read of descriptors 0..1 fails: both skipped (err_read 2, cons 2), the frame uses the
    # next posted buffer (2).
    dut = RXEngine()
    host = Host(dut, 3, [(60, bytes(64))], random.Random(0),
                post={0: [(BUF_BASE, 2048), (BUF_BASE + 0x1000, 2048)],
                      30: [(BUF_BASE + 0x2000, 2048)]}, p_err=1.0)
    orig = host.step

    async def step(ctx, cyc):                  # only the first read fails
        if host.reads:
            host.p_err = 0.0
        await orig(ctx, cyc)
    host.step = step
    got = simulate(host)
    res = check(host, got)
    assert res == [(2, OK)] and got["err_read"] == 2 and got["cons"] == 3
    assert host.writes[-1][3][2:4] == bytes([2, 0])


@pytest.mark.parametrize("data_width", [64, 128])
@pytest.mark.parametrize("which,off", [("ring", 4), ("ring", 1), ("cpl", 8), ("cpl", 3)])
def test_misaligned_base_refused(data_width, which, off):
    """A ring base that is not 16-byte aligned holds the ring disabled (issue 37): a buffer
    posted and a frame arriving make no DMA at all (the frame is dropped, no buffer), the start
    is counted once in err_base and base_bad says which base. Disabled, given an aligned base
    and enabled again, the ring runs: the next frame lands in the buffer posted since."""
    dut = RXEngine(data_width=data_width)
    data1, data2 = bytes(range(100)), bytes(range(7, 207))
    host = Host(dut, 2, [(40, data1), (400, data2)], random.Random(5),
                post={5: [(BUF_BASE + 0x40, 2048)], 300: [(BUF_BASE + 0x840, 2048)]})
    seen = {}

    def config(ctx, cyc):
        base = {"ring": RING_BASE, "cpl": CPL_BASE}[which]
        port = {"ring": dut.ring_base, "cpl": dut.cpl_base}[which]
        if cyc == 0:
            ctx.set(port, base + off)
        elif cyc == 200:
            seen.update(bad=ctx.get(dut.base_bad), err_base=ctx.get(dut.err_base))
            ctx.set(dut.enable, 0)
        elif cyc == 205:
            ctx.set(port, base)
        elif cyc == 210:
            ctx.set(dut.enable, 1)
            host.dprod = 0                     # the ring was reset: post from position 0 again

    got = simulate(host, config=config)
    early = [r for r in host.reads if r[0] < 210] + [w[:3] for w in host.writes if w[0] < 210]
    assert early == [], f"DMA {early} while the {which} base was {off} bytes off 16"
    assert seen == dict(bad=1 if which == "ring" else 2, err_base=1)
    assert got["err_base"] == 1 and got["drop_no_buffer"] == 1 and got["frames"] == 1
    assert [(a, n) for _, a, n, _ in host.writes] == [(BUF_BASE + 0x840, 200), (CPL_BASE, 16)]
    assert host.writes[0][3] == data2


@pytest.mark.parametrize("data_width", [64, 128])
def test_base_made_misaligned_under_a_running_ring(data_width):
    """Against the protocol (configure with enable 0), a base made misaligned while the ring
    runs: still no DMA uses it. ring_base in the cycle a descriptor read would be decided (two
    after the doorbell, before base_bad follows): no read. cpl_base while a frame is being
    written: its data lands in its buffer, its completion record is not written anywhere."""
    dut = RXEngine(data_width=data_width)
    host = Host(dut, 2, [], random.Random(6), post={0: [(BUF_BASE + 0x40, 2048)]})

    def config(ctx, cyc):
        if cyc == 2:
            ctx.set(dut.ring_base, RING_BASE + 4)

    simulate(host, config=config)
    assert host.reads == [], f"descriptor read {host.reads} at a misaligned ring base"

    data = bytes(range(100))
    dut = RXEngine(data_width=data_width)
    host = Host(dut, 2, [(40, data)], random.Random(6), post={0: [(BUF_BASE + 0x40, 2048)]})

    def config(ctx, cyc):
        if host.accepted and cyc == host.accepted[0] + 1:
            ctx.set(dut.cpl_base, CPL_BASE + 4)

    got = simulate(host, config=config)
    assert [(a, n) for _, a, n, _ in host.writes] == [(BUF_BASE + 0x40, 100)]
    assert host.writes[0][3] == data and host.irqs == 0 and got["frames"] == 1


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_parameters():
    for kw in (dict(data_width=32), dict(data_width=256), dict(max_payload=8),
               dict(max_payload=300), dict(max_payload=8192), dict(max_read=8),
               dict(max_read=520), dict(max_read=8192), dict(max_payload=True)):
        with pytest.raises(ValueError):
            RXEngine(**kw)
    assert RXEngine(max_read=48).max_batch == 3
    gc.collect()


@pytest.mark.parametrize("data_width", [64, 128])
def test_verilator_lint(data_width, tmp_path):
    verilator_lint(RXEngine(data_width=data_width), "rx_engine", tmp_path)
