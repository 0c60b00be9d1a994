# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of TXEngine (amaranth.sim): a host-memory model serves the DMA reads (in-order
# completions after a random latency, random rd_cpl_valid gaps, injected read errors) under
# random tx_ready back-pressure; a pure-Python reference model computes, from the ring
# contents, the exact read requests, frames, completions, done records and counters. Random
# scatter-gather frames at random alignments for both data widths; hand-worked cases.
import gc
import random
from collections import deque

import pytest
from amaranth import Elaboratable, Module
from amaranth.lib import wiring
from amaranth.sim import Simulator

from rtl.nic.flat_ports import FlatShell
from rtl.nic.frame_fifo import FrameFIFO

from nicmodels.nic_driver import decode_tx_desc, encode_tx_desc, tx_desc_eop
from rtl.contract.formats import TxStatus
from rtl.nic.tx_engine import COUNTS, STATUS_COUNTER, TXEngine
from rtl.verilator_lint import verilator_lint


OK, DESC_LEN0, DESC_LEN, FRAME_LEN, READ, NO_EOP, DESC_READ = (
    TxStatus.OK, TxStatus.DESC_LEN0, TxStatus.DESC_LEN, TxStatus.FRAME_LEN, TxStatus.READ,
    TxStatus.NO_EOP, TxStatus.DESC_READ)

HBASE = 0x7F3A_5C00_0000_0000        # host memory window (the high address bits matter)
MEMSIZE = 1 << 20
RING_OFF = 0                         # rings: queue q at q * RING_SPAN (+ a 16-aligned offset)
RING_SPAN = 20 << 10
BUF_OFF = 128 << 10                  # payload buffers
BUF_END = MEMSIZE - (16 << 10)
POISON = (HBASE + MEMSIZE - (12 << 10), HBASE + MEMSIZE - (4 << 10))   # reads here fail


class EngineFIFO(Elaboratable):
    """TXEngine feeding a TX FrameFIFO (backpressure=True), as on the NIC's TX path."""

    def __init__(self, engine):
        self.eng = engine
        self.fifo = FrameFIFO(data_width=engine.data_width // 8, depth=32768,
                              backpressure=True)

    def elaborate(self, platform):
        m = Module()
        m.submodules.eng = e = self.eng
        m.submodules.fifo = f = self.fifo
        wiring.connect(m, e.tx, f.s)
        m.d.comb += [f.max_len.eq(0xFFFF), f.min_len.eq(0), f.enable.eq(1)]
        return m


class Host:
    """Host memory: random bytes, plus read-failure address ranges."""

    def __init__(self, rng):
        self.mem = bytearray(rng.randbytes(MEMSIZE))
        self.poison = [POISON]

    def write(self, addr, data):
        off = addr - HBASE
        assert 0 <= off and off + len(data) <= MEMSIZE
        self.mem[off:off + len(data)] = data

    def read(self, addr, n):
        off = addr - HBASE
        assert 0 <= off and off + n <= MEMSIZE, hex(addr)
        return bytes(self.mem[off:off + n])

    def fails(self, addr, n):
        return any(addr < hi and lo < addr + n for lo, hi in self.poison)


def splits(addr, n, max_read):
    """The read requests of n bytes at addr (both 16-aligned)."""
    out = []
    while n:
        ln = min(n, max_read, 4096 - addr % 4096)
        out.append((addr, ln))
        addr += ln
        n -= ln
    return out


ABORT = ("abort",)                   # a job-list item: hold `abort` until the open frame ends


def reference(host, bases, jobs, max_read, max_frame):
    """The expected requests, frames [(bytes or None for an errored frame)], cpls, dones and
    counters of a run of jobs [(queue, index, count) or ABORT]. Frames span jobs: a job that
    ends inside a frame completes its descriptors and leaves the frame open for the next job
    (which must be of the same queue, or ABORT)."""
    reqs, frames, cpls, dones = [], [], [], []
    cnt = dict.fromkeys(COUNTS, 0)
    cnt.update(q_frames={}, q_bytes={}, q_errors={},     # per queue, the queues with one
               q_last_error={})
    open_q = None
    data, status, flen = bytearray(), OK, 0

    def end(q, status):
        frames.append(bytes(data) if status == OK else None)
        dones.append((q, flen if status == OK else 0, status))
        if status == OK:
            cnt["frames"] += 1
            cnt["bytes"] += flen
            cnt["q_frames"][q] = cnt["q_frames"].get(q, 0) + 1
            cnt["q_bytes"][q] = cnt["q_bytes"].get(q, 0) + flen
        else:
            cnt["q_errors"][q] = cnt["q_errors"].get(q, 0) + 1
            cnt["q_last_error"][q] = status
            if status != DESC_READ:                # DESC_READ is counted per failed job
                cnt[STATUS_COUNTER[status]] += 1

    for job in jobs:
        if job == ABORT:
            assert open_q is not None, "ABORT without an open frame"
            end(open_q, NO_EOP if status == OK else status)
            open_q, data, status, flen = None, bytearray(), OK, 0
            continue
        q, index, count = job
        if count == 0:
            continue
        assert open_q in (None, q), "a job of another queue while a frame is open"
        ring = bases[q] + index * 16
        rr = splits(ring, count * 16, max_read)
        reqs += rr
        cnt["desc_reads"] += len(rr)
        if host.fails(ring, count * 16):
            cpls.append((q, count))
            cnt["err_desc_read"] += 1
            status = DESC_READ if status == OK else status
            open_q = q
            continue
        raw = host.read(ring, count * 16)
        descs = []
        for k in range(count):
            d = decode_tx_desc(raw[16 * k:16 * k + 16])
            descs.append((d.addr, d.len, int(tx_desc_eop(d))))
        # The issuer: every payload read of the job, ahead of the packer. It knows the frame's
        # error at the job's start and the length checks, not the READ errors of this job.
        issued, iskip, iflen = [], status != OK, flen
        for a, ln, eop in descs:
            err = iskip or ln == 0 or ln > max_frame or iflen + ln > max_frame
            issued.append(not err)
            if err:
                iskip = True
            else:
                iflen += ln
                start = a & ~15
                pr = splits(start, (a - start + ln + 15) & ~15, max_read)
                reqs += pr
                cnt["data_reads"] += len(pr)
            if eop:
                iskip, iflen = False, 0
        # The packer.
        ndesc = 0
        for k, (a, ln, eop) in enumerate(descs):
            ndesc += 1
            if status == OK:
                if ln == 0:
                    status = DESC_LEN0
                elif ln > max_frame:
                    status = DESC_LEN
                elif flen + ln > max_frame:
                    status = FRAME_LEN
                else:
                    flen += ln
            if issued[k]:
                start = a & ~15
                append = status == OK
                if host.fails(start, (a - start + ln + 15) & ~15):
                    status = READ
                elif append:
                    data += host.read(a, ln)
            if eop:
                cpls.append((q, ndesc))
                end(q, status)
                data, status, flen, ndesc = bytearray(), OK, 0, 0
        if ndesc:
            cpls.append((q, ndesc))
        open_q = q if ndesc else None
    return reqs, frames, cpls, dones, cnt


def simulate(host, bases, jobs, rng, data_width=128, max_read=512, max_frame=9216, max_batch=8,
             nqueues=4, p_req=0.7, p_cpl=0.8, p_tx=0.7, max_lat=20, max_cycles=200_000,
             fifo=False, mrrs=None):
    """Runs the jobs on the core against the host model; returns what it observed: requests,
    frames [(bytes, error, [(data, keep, last)])], cpls, dones, counters, cycles. fifo: the
    frames are observed at the output of a FrameFIFO fed by the core (error always 0). mrrs:
    the run-time MRRS input (None: left at its reset value, max_read)."""
    limit = max_read if mrrs is None else min(max_read, mrrs)
    dut = TXEngine(data_width=data_width, nqueues=nqueues, max_read=max_read,
                   max_frame=max_frame, max_batch=max_batch)
    top = EngineFIFO(dut) if fifo else dut
    out = top.fifo.m if fifo else dut.tx
    o_valid, o_ready, o_data, o_keep, o_last = \
        out.valid, out.ready, out.p.data, out.p.keep, out.p.last
    o_error = None if fifo else out.p.error
    B = data_width // 8
    full = (1 << B) - 1
    obs = dict(reqs=[], frames=[], cpls=[], dones=[], counts=None, cycles=0)
    nframes_cpl = None

    async def bench(ctx):
        nonlocal nframes_cpl
        if mrrs is not None:
            ctx.set(dut.mrrs, mrrs)
        for q, base in bases.items():
            ctx.set(dut.base_valid, 1)
            ctx.set(dut.base_queue, q)
            ctx.set(dut.base_addr, base)
            await ctx.tick()
        ctx.set(dut.base_valid, 0)
        todo = deque(jobs)
        job = None
        beats = deque()                  # (cycle ready, data, last, err)
        t_last = 0
        cur = []                         # beats of the frame being received
        idle = 0
        for cyc in range(max_cycles):
            if job is None and todo:
                job = todo.popleft()
                if job == ABORT:
                    ctx.set(dut.open_abort, 1)
                else:
                    ctx.set(dut.job.valid, 1)
                    ctx.set(dut.job.p.queue, job[0])
                    ctx.set(dut.job.p.index, job[1])
                    ctx.set(dut.job.p.count, job[2])
            req_ready = rng.random() < p_req
            ctx.set(dut.rd.req.ready, req_ready)
            cv = bool(beats) and beats[0][0] <= cyc and rng.random() < p_cpl
            ctx.set(dut.rd.cpl.valid, cv)
            if cv:
                _, d, last, err = beats[0]
                ctx.set(dut.rd.cpl.p.data, d)
                ctx.set(dut.rd.cpl.p.last, last)
                # rd_cpl_err counts only with rd_cpl_last: random on the other beats.
                ctx.set(dut.rd.cpl.p.err, err if last else rng.random() < 0.3)
            elif rng.random() < 0.3:                     # garbage while not valid
                ctx.set(dut.rd.cpl.p.data, rng.getrandbits(data_width))
                ctx.set(dut.rd.cpl.p.last, rng.getrandbits(1))
                ctx.set(dut.rd.cpl.p.err, rng.getrandbits(1))
            tx_ready = rng.random() < p_tx
            ctx.set(o_ready, tx_ready)

            if job == ABORT:
                job_taken = ctx.get(dut.idle) and ctx.get(dut.open_valid)
            else:
                job_taken = job is not None and ctx.get(dut.job.ready)
            assert ctx.get(dut.open_valid) or not ctx.get(dut.open_abort) or not ctx.get(dut.idle)
            if req_ready and ctx.get(dut.rd.req.valid):
                addr, ln = ctx.get(dut.rd.req.p.addr), ctx.get(dut.rd.req.p.len)
                obs["reqs"].append((addr, ln))
                # Descriptor fetches (the rings, below BUF_OFF) carry desc, payload reads not.
                assert ctx.get(dut.rd.req.p.desc) == (addr < HBASE + BUF_OFF), hex(addr)
                assert addr % 16 == 0 and ln % 16 == 0 and 16 <= ln <= limit, (addr, ln)
                assert addr // 4096 == (addr + ln - 1) // 4096, (hex(addr), ln)
                err = host.fails(addr, ln)
                payload = rng.randbytes(ln) if err else host.read(addr, ln)
                t_last = max(t_last, cyc + 1 + rng.randint(0, max_lat))
                nb = ln // B
                for i in range(nb):
                    beats.append((t_last, int.from_bytes(payload[i * B:i * B + B], "little"),
                                  int(i == nb - 1), int(err and i == nb - 1)))
            if cv and ctx.get(dut.rd.cpl.ready):
                beats.popleft()
            if tx_ready and ctx.get(o_valid):
                d, k = ctx.get(o_data), ctx.get(o_keep)
                last = ctx.get(o_last)
                error = ctx.get(o_error) if o_error is not None else 0
                cur.append((d, k, last))
                if last:
                    data = b"".join(
                        (d >> 8 * i & 0xFF).to_bytes(1, "little")
                        for d, k, _ in cur for i in range(B) if k >> i & 1)
                    obs["frames"].append((data, error, cur))
                    cur = []
                else:
                    assert k == full, "partial beat before the last"
            if ctx.get(dut.cpl.valid):
                obs["cpls"].append((ctx.get(dut.cpl.p.queue), ctx.get(dut.cpl.p.count)))
            if ctx.get(dut.done.valid):
                obs["dones"].append((ctx.get(dut.done.p.queue), ctx.get(dut.done.p.len),
                                     ctx.get(dut.done.p.status)))
            await ctx.tick()
            if job_taken:
                job = None
                ctx.set(dut.job.valid, 0)
                ctx.set(dut.open_abort, 0)
            busy = job is not None or todo or beats or ctx.get(dut.tx.valid) or \
                ctx.get(o_valid) or \
                ctx.get(dut.rd.req.valid) or not ctx.get(dut.job.ready)
            idle = 0 if busy else idle + 1
            if idle > 8:
                break
        else:
            raise AssertionError("timeout")
        assert not cur
        assert not ctx.get(dut.open_valid), "a frame left open at the end of the run"
        obs["cycles"] = cyc
        obs["counts"] = {name: ctx.get(getattr(dut, name)) for name in COUNTS}
        for name in ("q_frames", "q_bytes", "q_errors", "q_last_error"):
            vals = [int(ctx.get(getattr(dut, name)[i])) for i in range(nqueues)]
            obs["counts"][name] = {i: v for i, v in enumerate(vals) if v}
        if fifo:
            obs["fifo"] = {name: ctx.get(getattr(top.fifo, name))
                           for name in ("frames_in", "frames_out", "drop_error")}

    sim = Simulator(top)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    return obs


def check(obs, expected, data_width, fifo=False):
    reqs, frames, cpls, dones, cnt = expected
    if fifo:                                    # the FrameFIFO dropped every errored frame
        nerr = sum(f is None for f in frames)
        frames = [f for f in frames if f is not None]
        assert obs["fifo"] == dict(frames_in=len(frames) + nerr, frames_out=len(frames),
                                   drop_error=nerr)
    B = data_width // 8
    assert obs["reqs"] == reqs
    assert len(obs["frames"]) == len(frames)
    for i, ((data, error, beats), exp) in enumerate(zip(obs["frames"], frames)):
        if exp is None:
            assert error == 1, f"frame {i}: error frame not flagged"
            continue
        assert error == 0, f"frame {i}: good frame flagged"
        assert data == exp, f"frame {i}: bytes differ"
        assert len(beats) == (len(exp) + B - 1) // B, f"frame {i}: beat count"
        d, k, _ = beats[-1]
        nlast = len(exp) - B * (len(beats) - 1)
        assert k == (1 << nlast) - 1, f"frame {i}: last keep"
        assert d >> 8 * nlast == 0, f"frame {i}: bytes beyond keep not 0"
    assert obs["cpls"] == cpls
    assert obs["dones"] == dones
    assert obs["counts"] == cnt


class Ring:
    """Builds the rings and jobs of a test: frames are lists of descriptors (addr, len, eop)."""

    def __init__(self, host, rng, nqueues):
        self.host = host
        self.bases = {q: HBASE + RING_OFF + q * RING_SPAN + 16 * rng.randrange(200)
                      for q in range(nqueues)}
        self.pos = dict.fromkeys(range(nqueues), 0)
        self.jobs = []

    def job(self, q, descs):
        index = self.pos[q]
        for k, (a, ln, eop) in enumerate(descs):
            self.host.write(self.bases[q] + 16 * (index + k), encode_tx_desc(a, ln, eop=eop))
        self.pos[q] += len(descs)
        assert self.pos[q] < 1024
        self.jobs.append((q, index, len(descs)))
        return self.bases[q] + 16 * index


def buf(rng, n):
    return HBASE + rng.randrange(BUF_OFF, BUF_END - n)


def random_frame(rng, max_frame, max_frags=4):
    """A frame's descriptors [(addr, len, eop)], sometimes bad on purpose."""
    r = rng.random()
    if r < 0.06:
        size = rng.randint(max_frame - 200, max_frame)       # large
    elif r < 0.1:
        size = rng.randint(1, 59)                            # short
    else:
        size = rng.randint(60, min(1514, max_frame))
    k = rng.randint(1, min(max_frags, size))
    cuts = sorted(rng.sample(range(1, size), k - 1))
    lens = [b - a for a, b in zip([0] + cuts, cuts + [size])]
    descs = [[buf(rng, ln), ln, 0] for ln in lens]
    r = rng.random()
    i = rng.randrange(k)
    if r < 0.04:
        descs[i][1] = 0                                      # zero length
    elif r < 0.07:
        descs[i][1] = rng.randint(max_frame + 1, 65535)      # longer than max_frame
        descs[i][0] = buf(rng, descs[i][1])
    elif r < 0.10:
        extra = rng.randint(1, min(2000, max_frame))         # frame over max_frame
        descs.append([buf(rng, extra), extra, 0])
        descs[0][1] = max_frame - extra + 1 + rng.randint(0, 50)
        descs[0][1] = min(descs[0][1], max_frame)
        descs[0][0] = buf(rng, descs[0][1])
    elif r < 0.14 and descs[i][1] < 4000:
        descs[i][0] = rng.randrange(POISON[0], POISON[1] - descs[i][1] - 16)   # read error
    descs[-1][2] = 1
    return [tuple(d) for d in descs]


def random_run(seed, data_width, max_read, max_frame, max_batch, nframes, nqueues=4,
               profile="random", fifo=False, mrrs=None):
    """Random frames on random queues, cut into jobs of random length (1..max_batch) without
    regard to frame boundaries, as TXQueueManager cuts them; while a frame is open the next job
    is of its queue, or now and then an ABORT (the rest of that frame is then never posted)."""
    rng = random.Random(seed)
    host = Host(rng)
    ring = Ring(host, rng, nqueues)
    pending = {q: deque() for q in range(nqueues)}
    for _ in range(nframes):
        pending[rng.randrange(nqueues)].extend(random_frame(rng, max_frame, min(4, max_batch)))
    open_q = None
    while open_q is not None or any(pending.values()):
        if open_q is not None and (not pending[open_q] or rng.random() < 0.03):
            ring.jobs.append(ABORT)
            while pending[open_q] and not pending[open_q].popleft()[2]:
                pass                                         # the frame's unposted tail
            open_q = None
            continue
        q = open_q if open_q is not None else rng.choice([q for q in pending if pending[q]])
        k = rng.randint(1, min(max_batch, len(pending[q])))
        descs = [pending[q].popleft() for _ in range(k)]
        at = ring.job(q, descs)
        open_q = None if descs[-1][2] else q
        if rng.random() < 0.03:
            host.poison.append((at, at + 16 * len(descs)))   # descriptor read error
            open_q = q                                       # skipping up to the next EOP
    expected = reference(host, ring.bases, ring.jobs,
                         max_read if mrrs is None else min(max_read, mrrs), max_frame)
    flow = PROFILES[profile] if profile != "random" else dict(
        p_req=rng.choice([0.3, 0.7, 1]), p_cpl=rng.choice([0.3, 0.8, 1]),
        p_tx=rng.choice([0.2, 0.6, 1]), max_lat=rng.choice([0, 5, 40]))
    obs = simulate(host, ring.bases, ring.jobs, rng, data_width=data_width, max_read=max_read,
                   max_frame=max_frame, max_batch=max_batch, nqueues=nqueues, fifo=fifo,
                   mrrs=mrrs, **flow)
    check(obs, expected, data_width, fifo)
    return expected, obs


PROFILES = {
    "full": dict(p_req=1, p_cpl=1, p_tx=1, max_lat=0),         # no gaps, no back-pressure
    "slow_tx": dict(p_req=1, p_cpl=1, p_tx=0.15, max_lat=3),   # heavy back-pressure
    "slow_dma": dict(p_req=0.3, p_cpl=0.3, p_tx=1, max_lat=60),
}


@pytest.mark.parametrize("data_width,max_read,max_frame,max_batch,nframes,nqueues,profile", [
    (128, 512, 9216, 8, 60, 4, "random"),
    (64, 512, 9216, 8, 25, 4, "random"),
    (128, 128, 2000, 6, 60, 4, "full"),
    (64, 64, 1600, 16, 30, 3, "slow_tx"),
    (128, 4096, 9216, 8, 40, 1, "slow_dma"),
    (64, 16, 3000, 4, 30, 2, "full"),
    (128, 512, 1514, 8, 60, 4, "slow_tx"),
    (64, 256, 9216, 8, 25, 4, "slow_dma"),
])
def test_random_frames(data_width, max_read, max_frame, max_batch, nframes, nqueues, profile):
    (_, frames, _, dones, cnt), obs = random_run(
        f"{data_width}-{max_read}-{max_frame}-{profile}", data_width, max_read, max_frame,
        max_batch, nframes, nqueues, profile)
    assert sum(f is not None for f in frames) >= nframes // 2
    assert any(f is None for f in frames)


@pytest.mark.parametrize("data_width,mrrs", [(128, 128), (64, 256)])
def test_runtime_mrrs(data_width, mrrs):
    """Built for MRRS 512, run at the MRRS the link negotiated: every read is cut at it."""
    (reqs, frames, _, _, _), _ = random_run(f"mrrs-{data_width}-{mrrs}", data_width, 512, 9216,
                                            8, 30, mrrs=mrrs)
    assert max(ln for _a, ln in reqs) == mrrs
    assert sum(f is not None for f in frames) >= 15


@pytest.mark.parametrize("data_width", [64, 128])
def test_random_frames_into_frame_fifo(data_width):
    """Through a TX FrameFIFO: only the good frames come out, bit-exact; every errored frame is
    dropped (drop_error)."""
    (_, frames, _, _, _), _ = random_run(f"fifo-{data_width}", data_width, 512, 9216, 8, 40,
                                         fifo=True)
    assert any(f is None for f in frames)


def test_random_error_causes_all_seen():
    """Over the random runs' generator, every error cause occurs (the generator is useful)."""
    rng = random.Random(5)
    host = Host(rng)
    ring = Ring(host, rng, 1)
    for _ in range(300):
        f = random_frame(rng, 2000)
        if len(f) <= 8:
            ring.job(0, f)
    statuses = {s for _, _, s in reference(host, ring.bases, ring.jobs, 512, 2000)[3]}
    assert {OK, DESC_LEN0, DESC_LEN, FRAME_LEN, READ} <= statuses


# Hand-worked cases. One queue (q = 1 of 4), ring at a chosen base; tx_ready and the DMA
# always ready, unless said otherwise.

def hand(descs_per_job, data_width=128, max_read=512, base=HBASE + 0x1000, poison=(), **kw):
    rng = random.Random(1)
    host = Host(rng)
    host.poison += list(poison)
    ring = Ring(host, rng, 4)
    ring.bases[1] = base
    for descs in descs_per_job:
        if descs == ABORT:
            ring.jobs.append(ABORT)
        else:
            ring.job(1, descs)
    expected = reference(host, ring.bases, ring.jobs, max_read, kw.get("max_frame", 9216))
    obs = simulate(host, ring.bases, ring.jobs, rng, data_width=data_width, max_read=max_read,
                   **kw)
    check(obs, expected, data_width)
    return host, obs


@pytest.mark.parametrize("data_width", [64, 128])
def test_one_60_byte_frame(data_width):
    a = HBASE + 0x40000
    host, obs = hand([[(a, 60, 1)]], data_width, p_req=1, p_cpl=1, p_tx=1, max_lat=0)
    assert obs["reqs"] == [(HBASE + 0x1000, 16), (a, 64)]
    (data, error, beats), = obs["frames"]
    assert data == host.read(a, 60) and error == 0
    B = data_width // 8
    assert [k for _, k, _ in beats] == [(1 << B) - 1] * (60 // B) + [(1 << 60 % B) - 1]
    assert [last for _, _, last in beats] == [0] * (60 // B) + [1]
    assert obs["cpls"] == [(1, 1)]
    assert obs["dones"] == [(1, 60, OK)]
    assert obs["counts"]["frames"] == 1 and obs["counts"]["bytes"] == 60
    assert obs["counts"]["desc_reads"] == 1 and obs["counts"]["data_reads"] == 1


@pytest.mark.parametrize("data_width", [64, 128])
def test_three_fragments_odd(data_width):
    # 7 bytes at +3 (read 16 at +0), 13 bytes at +9 (read 32), 5 bytes at +15 (read 32): 25
    # bytes packed as one full beat and a 9-byte (W=128) or 3 full beats and a 1-byte (W=64) one.
    a, b, c = HBASE + 0x40003, HBASE + 0x50009, HBASE + 0x6000F
    host, obs = hand([[(a, 7, 0), (b, 13, 0), (c, 5, 1)]], data_width)
    assert obs["reqs"] == [(HBASE + 0x1000, 48), (a - 3, 16), (b - 9, 32), (c - 15, 32)]
    (data, error, beats), = obs["frames"]
    assert data == host.read(a, 7) + host.read(b, 13) + host.read(c, 5) and error == 0
    assert [k for _, k, _ in beats] == ([0xFFFF, 0x1FF] if data_width == 128 else
                                        [0xFF, 0xFF, 0xFF, 0x1])
    assert obs["cpls"] == [(1, 3)] and obs["dones"] == [(1, 25, OK)]


def test_zero_length_descriptor():
    # Frame 1: 10 bytes, 0 bytes, 20 bytes EOP: error DESC_LEN0; its third fragment is not read;
    # the 10 bytes already packed go out in the error beat. Frame 2 (same job) is good.
    a, b, c = HBASE + 0x40001, HBASE + 0x50000, HBASE + 0x60000
    host, obs = hand([[(a, 10, 0), (b, 0, 0), (c, 20, 1), (c, 100, 1)]])
    assert obs["reqs"] == [(HBASE + 0x1000, 64), (a - 1, 16), (c, 112)]
    (_, e1, beats1), (d2, e2, _) = obs["frames"]
    assert e1 == 1 and beats1[-1][1:] == (0x3FF, 1)
    assert e2 == 0 and d2 == host.read(c, 100)
    assert obs["cpls"] == [(1, 3), (1, 1)]
    assert obs["dones"] == [(1, 0, DESC_LEN0), (1, 100, OK)]
    assert obs["counts"]["err_desc_len0"] == 1 and obs["counts"]["frames"] == 1
    # A frame whose first descriptor is bad ends with one beat of keep 0.
    host, obs = hand([[(b, 0, 1)]])
    assert [(e, bs) for _, e, bs in obs["frames"]] == [(1, [(0, 0, 1)])]
    assert obs["dones"] == [(1, 0, DESC_LEN0)]


def test_length_errors():
    # max_frame 100: a 101-byte descriptor (DESC_LEN), then 60 + 41 (FRAME_LEN), then a
    # descriptor of 100 (good), then a job without EOP, aborted (NO_EOP).
    a = HBASE + 0x40000
    host, obs = hand([[(a, 101, 1), (a, 60, 0), (a, 41, 1), (a, 100, 1)], [(a, 5, 0)], ABORT],
                     max_frame=100)
    assert [s for _, _, s in obs["dones"]] == [DESC_LEN, FRAME_LEN, OK, NO_EOP]
    assert obs["cpls"] == [(1, 1), (1, 2), (1, 1), (1, 1)]
    assert [e for _, e, _ in obs["frames"]] == [1, 1, 0, 1]
    # The aborted frame's 5 bytes go out in its error beat.
    assert obs["frames"][-1][2][-1][1:] == (0x1F, 1)
    c = obs["counts"]
    assert (c["err_desc_len"], c["err_frame_len"], c["err_no_eop"], c["frames"]) == (1, 1, 1, 1)


@pytest.mark.parametrize("data_width", [64, 128])
def test_read_error(data_width):
    # Frame 1: good fragment then one in the failing range (2 requests at max_read 512, the
    # first one fails): flagged, err_read. Frame 2 good. Then a job whose descriptors fail.
    a, p = HBASE + 0x40000, POISON[0] + 0xFF0
    host, obs = hand([[(a, 30, 0), (p, 600, 1), (a, 60, 1)]], data_width)
    assert obs["reqs"][2:] == [(p, 16), (p + 16, 512), (p + 528, 80), (a, 64)]
    assert [e for _, e, _ in obs["frames"]] == [1, 0]
    assert obs["dones"] == [(1, 0, READ), (1, 60, OK)]
    assert obs["cpls"] == [(1, 2), (1, 1)]
    assert obs["counts"]["err_read"] == 1
    # A failed descriptor fetch: the job completes, and the queue's descriptors are skipped up
    # to the next EOP (the next job's first frame is lost with it: its head may have been in
    # the failed job), the frame after that is good.
    host, obs = hand([[(a, 30, 1), (a, 60, 1)], [(a, 20, 0), (a, 40, 1), (a, 50, 1)]],
                     data_width, poison=[(HBASE + 0x1010, HBASE + 0x1011)])
    assert obs["reqs"] == [(HBASE + 0x1000, 32), (HBASE + 0x1020, 48), (a, 64)]
    assert [(d, e) for d, e, _ in obs["frames"]] == [(b"", 1), (host.read(a, 50), 0)]
    assert obs["cpls"] == [(1, 2), (1, 2), (1, 1)]
    assert obs["dones"] == [(1, 0, DESC_READ), (1, 50, OK)]
    assert obs["counts"]["err_desc_read"] == 1 and obs["counts"]["frames"] == 1
    # Aborted while skipping: the frame ends with DESC_READ, not NO_EOP.
    host, obs = hand([[(a, 30, 1)], ABORT], data_width, poison=[(HBASE + 0x1000, HBASE + 0x1001)])
    assert obs["dones"] == [(1, 0, DESC_READ)] and obs["counts"]["err_no_eop"] == 0


@pytest.mark.parametrize("data_width", [64, 128])
def test_read_splits(data_width):
    # Payload: 100 bytes at 0x...FF3: read 0xFF0.. 112 bytes, split at 4 KiB into 16 + 96.
    # 1500 bytes at 16-aligned 0x...100 with max_read 512: 512, 512, 480 (1500 rounded to 1504),
    # the last one crossing no boundary; 1200 at 0x...E05 (read from 0xE00, 1216 bytes):
    # 512 (0xE00..0xFFF), 4 KiB boundary, 512, 192.
    a, b, c = HBASE + 0x40FF3, HBASE + 0x50100, HBASE + 0x60E05
    # Ring at 0x...0FE0: a job of 3 descriptors (48 bytes) splits at 4 KiB into 32 + 16.
    base = HBASE + 0x2FE0
    host, obs = hand([[(a, 100, 1), (b, 1500, 1), (c, 1200, 1)]], data_width, base=base)
    assert obs["reqs"] == [(base, 32), (base + 32, 16),
                           (a - 3, 16), (a + 13, 96),
                           (b, 512), (b + 512, 512), (b + 1024, 480),
                           (c - 5, 512), (c - 5 + 512, 512), (c - 5 + 1024, 192)]
    assert [d for d, _, _ in obs["frames"]] == [host.read(a, 100), host.read(b, 1500),
                                                host.read(c, 1200)]
    assert obs["counts"]["desc_reads"] == 2 and obs["counts"]["data_reads"] == 8
    # The descriptor read split at max_read 64: 8 descriptors at a 16-aligned base: 64 + 64.
    host, obs = hand([[(a, 10, 1)] * 8], data_width, max_read=64, base=HBASE + 0x3010)
    assert obs["reqs"][:2] == [(HBASE + 0x3010, 64), (HBASE + 0x3050, 64)]
    assert len(obs["frames"]) == 8


@pytest.mark.parametrize("data_width", [64, 128])
def test_misaligned_base_refused(data_width):
    """A ring base that is not 16-byte aligned is refused (issue 37): no base for the queue
    (base_bad), err_base counted, and a job of that queue makes no read at all (it fails as a
    failed fetch, DESC_READ); a queue number out of range is ignored, not counted; an aligned
    base clears base_bad and the next job reads its descriptors there."""
    good = HBASE + 0x1000
    dut = TXEngine(data_width=data_width, nqueues=3)
    obs = dict(reqs=[], cpls=[], dones=[])

    async def bench(ctx):
        async def base(q, addr):
            ctx.set(dut.base_valid, 1)
            ctx.set(dut.base_queue, q)
            ctx.set(dut.base_addr, addr)
            await ctx.tick()
            ctx.set(dut.base_valid, 0)

        async def run(cycles, job=None, abort=False):
            if job:
                ctx.set(dut.job.valid, 1)
                ctx.set(dut.job.p.queue, job[0])
                ctx.set(dut.job.p.index, job[1])
                ctx.set(dut.job.p.count, job[2])
            ctx.set(dut.open_abort, int(abort))
            for _ in range(cycles):
                ctx.set(dut.rd.req.ready, 1)
                if ctx.get(dut.rd.req.valid):
                    obs["reqs"].append((ctx.get(dut.rd.req.p.addr), ctx.get(dut.rd.req.p.len)))
                if ctx.get(dut.cpl.valid):
                    obs["cpls"].append((ctx.get(dut.cpl.p.queue), ctx.get(dut.cpl.p.count)))
                if ctx.get(dut.done.valid):
                    obs["dones"].append((ctx.get(dut.done.p.queue), ctx.get(dut.done.p.status)))
                taken = ctx.get(dut.job.valid) and ctx.get(dut.job.ready)
                await ctx.tick()
                if taken:
                    ctx.set(dut.job.valid, 0)
            ctx.set(dut.open_abort, 0)

        ctx.set(dut.tx.ready, 1)
        await base(0, good)
        for off in (1, 4, 8, 15):                 # queue 1 given misaligned bases only
            await base(1, good + 0x100 + off)
        await base(3, good + 3)                   # >= nqueues: ignored
        await base(2, good + 0x200)
        await run(40, job=(1, 2, 3))              # no base: no read, the job fails at once
        assert obs["reqs"] == [], \
            f"read at {obs['reqs']} for a queue whose ring base was refused"
        assert obs["cpls"] == [(1, 3)] and ctx.get(dut.open_valid)
        await run(10, abort=True)                 # the driver disables it: the frame ends
        assert obs["dones"] == [(1, DESC_READ)] and not ctx.get(dut.open_valid)
        obs["bad1"] = ctx.get(dut.base_bad)
        obs["counts"] = {name: ctx.get(getattr(dut, name)) for name in COUNTS}
        await base(1, good + 0x300)               # aligned: the queue has its base again
        obs["bad2"] = ctx.get(dut.base_bad)
        await run(10, job=(1, 2, 1))
        assert obs["reqs"] == [(good + 0x300 + 2 * 16, 16)]

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert obs["bad1"] == 0b010 and obs["bad2"] == 0
    assert obs["counts"] == {**dict.fromkeys(COUNTS, 0), "err_base": 4, "err_desc_read": 1}


def test_job_count_zero_ignored_and_max_batch_1():
    a = HBASE + 0x40000
    rng = random.Random(3)
    host = Host(rng)
    ring = Ring(host, rng, 2)
    ring.job(1, [(a, 64, 1)])
    ring.jobs.insert(0, (0, 0, 0))
    expected = reference(host, ring.bases, ring.jobs, 512, 9216)
    obs = simulate(host, ring.bases, ring.jobs, rng, nqueues=2, max_batch=1)
    check(obs, expected, 128)
    assert obs["cpls"] == [(1, 1)]


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_bad_parameters():
    for kw in [dict(data_width=32), dict(data_width=256), dict(nqueues=0), dict(nqueues=65),
               dict(max_read=8), dict(max_read=520 + 1), dict(max_read=8192),
               dict(max_frame=0), dict(max_frame=65536), dict(max_batch=0),
               dict(max_batch=257), dict(nqueues=True)]:
        with pytest.raises(ValueError):
            TXEngine(**kw)
    gc.collect()


@pytest.mark.parametrize("data_width", [64, 128])
def test_verilator_lint(data_width, tmp_path):
    verilator_lint(FlatShell(TXEngine(data_width=data_width)), "tx_engine", tmp_path)
