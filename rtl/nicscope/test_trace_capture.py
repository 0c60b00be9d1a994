# SPDX-License-Identifier: BSD-2-Clause
# Unit tests of TraceCapture (amaranth.sim): RLE decode of the RAM vs the input, trigger/pre/post.
import random

import pytest
from amaranth import Elaboratable, Module
from amaranth.sim import Simulator

from rtl.nicscope.trace_capture import TS_WIDTH, State, TraceCapture

TS_MOD = 2**TS_WIDTH


def decode(raw, last_ts, sample_width):
    """The host's decoder: raw entries oldest first -> [(48-bit timestamp, value)], unwrapping the
    32-bit timestamps backwards from last_ts (the newest entry's full timestamp)."""
    vals = [e & (2**sample_width - 1) for e in raw]
    ts = [e >> sample_width for e in raw]
    assert all(t < TS_MOD for t in ts)
    assert last_ts % TS_MOD == ts[-1]
    full = [last_ts]
    for i in range(len(raw) - 2, -1, -1):
        gap = (ts[i + 1] - ts[i]) % TS_MOD
        assert gap > 0                        # at most one entry per cycle
        full.insert(0, full[0] - gap)
    return list(zip(full, vals))


def value_at(decoded, cycle):
    """The value the trace says the sample had on `cycle` (it holds until the next entry)."""
    value = None
    for ts, v in decoded:
        if ts > cycle:
            break
        value = v
    return value


class Bench:
    """Drives a TraceCapture cycle by cycle and records what it saw. cycle = the `now` output."""

    def __init__(self, ctx, dut):
        self.ctx, self.dut = ctx, dut
        self.samples = {}          # now -> sample on that cycle
        self.states = {}           # now -> state on that cycle
        self.sample = 0

    @property
    def now(self):
        return self.ctx.get(self.dut.now)

    async def step(self, sample=None, arm=0, stop=0, trigger=0):
        ctx, dut = self.ctx, self.dut
        if sample is not None:
            self.sample = sample
        ctx.set(dut.sample, self.sample)
        ctx.set(dut.arm, arm)
        ctx.set(dut.stop, stop)
        ctx.set(dut.trigger, trigger)
        now = self.now
        self.samples[now] = self.sample
        self.states[now] = ctx.get(dut.state)
        assert ctx.get(dut.armed) == (self.states[now] == State.ARMED)
        await ctx.tick()
        ctx.set(dut.arm, 0)
        ctx.set(dut.stop, 0)
        ctx.set(dut.trigger, 0)
        return now

    def outputs(self):
        names = ("state", "start", "count", "trig_index", "trig_ts", "end_ts", "last_ts",
                 "overflow", "triggered")
        return {n: self.ctx.get(getattr(self.dut, n)) for n in names}

    async def read_entries(self):
        """Read the `count` entries from `start` through rd_addr (data one cycle later)."""
        ctx, dut = self.ctx, self.dut
        start, count = ctx.get(dut.start), ctx.get(dut.count)
        raw = []
        for i in range(count):
            ctx.set(dut.rd_addr, (start + i) % dut.depth)
            await self.step()
            raw.append(ctx.get(dut.rd_data))
        return raw

    async def check_decode(self, sample_width):
        """Decode the capture; every cycle from its first entry to end_ts - 1 must be recorded
        and must decode to what was driven. Returns the decoded entries."""
        out = self.outputs()
        raw = await self.read_entries()
        decoded = decode(raw, out["last_ts"], sample_width)
        for cycle in range(decoded[0][0], out["end_ts"]):
            assert value_at(decoded, cycle) == self.samples[cycle], f"cycle {cycle}"
        return decoded


def simulate(dut, bench_fn):
    async def testbench(ctx):
        await bench_fn(Bench(ctx, dut))

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(testbench)
    sim.run()


def test_trigger_pre_post_directed():
    """depth 16. Arm on cycle 2 (first armed cycle 3); the sample is 0, then 1 from cycle 5, 2
    from 10, 7 from 15; trigger on cycle 12 with pre = 2, post = 5.
    ARMED entries: 3 (first, 0), 5 (1), 10 (2) at RAM 0, 1, 2. The trigger entry goes to 3, the
    newest 2 before it are kept (start 1); post covers 13..17: one entry (15); end_ts 18."""
    dut = TraceCapture(4, depth=16)

    async def bench(b):
        b.ctx.set(dut.pre, 2)
        b.ctx.set(dut.post, 5)
        for c in range(30):
            sample = 0 if c < 5 else 1 if c < 10 else 2 if c < 15 else 7
            await b.step(sample, arm=c == 2, trigger=c == 12)
            if c == 12:
                assert b.outputs()["state"] == State.TRIGGERED
        out = b.outputs()
        assert out == dict(state=State.DONE, start=1, count=4, trig_index=3, trig_ts=12,
                           end_ts=18, last_ts=15, overflow=0, triggered=1)
        assert [b.states[c] for c in range(2, 20)] == \
            [State.IDLE] + [State.ARMED] * 10 + [State.TRIGGERED] * 5 + [State.DONE] * 2
        decoded = await b.check_decode(4)
        assert decoded == [(5, 1), (10, 2), (12, 2), (15, 7)]

    simulate(dut, bench)


@pytest.mark.parametrize("nchanges", [3, 40])
@pytest.mark.parametrize("pre", [0, 1, 3, 5, 15, 16, 31])
def test_pre_keeps_min_pre_stored(pre, nchanges):
    """ARMED for 50 cycles with `nchanges` changes (the first armed cycle's entry makes
    nchanges + 1 writes; 40 changes wrap the 16-entry ring); trigger, post = 0. Exactly
    min(pre, depth - 1, stored) entries are kept: the newest ones."""
    depth = 16
    dut = TraceCapture(3, depth=depth)
    stored = min(nchanges + 1, depth)
    kept = min(pre, depth - 1, stored)

    async def bench(b):
        b.ctx.set(dut.pre, pre)
        b.ctx.set(dut.post, 0)
        await b.step(0, arm=1)
        first = await b.step(0)
        writes = [first]
        value = 0
        change_at = set(random.Random(nchanges).sample(range(1, 50), nchanges))
        for i in range(1, 50):
            if i in change_at:
                value = (value + 1 + i % 6) % 8
            c = await b.step(value)
            if i in change_at:
                writes.append(c)
        assert len(writes) == nchanges + 1
        trig = await b.step(value ^ 1, trigger=1)
        await b.step(value)
        out = b.outputs()
        assert out["state"] == State.DONE and out["triggered"] == 1 and out["overflow"] == 0
        assert out["count"] == kept + 1
        assert out["trig_index"] == len(writes) % depth
        assert out["start"] == (len(writes) - kept) % depth
        assert (out["trig_ts"], out["end_ts"], out["last_ts"]) == (trig, trig + 1, trig)
        decoded = await b.check_decode(3)
        assert [ts for ts, _ in decoded] == writes[len(writes) - kept:] + [trig]

    simulate(dut, bench)


@pytest.mark.parametrize("post", [1, 2, 7, 30])
def test_post_window_ends_at_trig_plus_post_plus_1(post):
    """The sample changes every cycle; post = P: entries for the trigger cycle T and T+1..T+P,
    none for T+P+1; end_ts = T+P+1 and DONE is seen on that cycle."""
    dut = TraceCapture(8, depth=64)

    async def bench(b):
        b.ctx.set(dut.pre, 0)
        b.ctx.set(dut.post, post)
        await b.step(0, arm=1)
        for i in range(5):
            await b.step(i + 1)
        trig = await b.step(100, trigger=1)
        for i in range(post + 3):
            await b.step(101 + i)
        out = b.outputs()
        assert (out["trig_ts"], out["end_ts"], out["count"]) == (trig, trig + post + 1, post + 1)
        assert out["last_ts"] == trig + post
        assert b.states[trig + post] == State.TRIGGERED
        assert b.states[trig + post + 1] == State.DONE
        decoded = await b.check_decode(8)
        assert [ts for ts, _ in decoded] == list(range(trig, trig + post + 1))

    simulate(dut, bench)


@pytest.mark.parametrize("every", [1, 3])
def test_overflow(every):
    """depth 16, pre = 3 with more stored: 3 kept + the trigger entry, then 12 entries fit; the
    13th change after the trigger cannot be stored: DONE, overflow, end_ts = that cycle. The
    sample changes every `every` cycles after the trigger."""
    depth = 16
    dut = TraceCapture(4, depth=depth)

    async def bench(b):
        b.ctx.set(dut.pre, 3)
        b.ctx.set(dut.post, 1000)
        await b.step(0, arm=1)
        for i in range(10):
            await b.step(i)
        trig = await b.step(15, trigger=1)
        changes = []
        i = 0
        while b.outputs()["state"] != State.DONE:
            i += 1
            if i % every == 0:
                changes.append(await b.step((15 + i) % 16))
            else:
                await b.step()
        out = b.outputs()
        assert out["overflow"] == 1 and out["triggered"] == 1
        assert out["count"] == depth
        assert out["end_ts"] == changes[12]            # the 13th change after the trigger
        assert out["last_ts"] == changes[11]
        decoded = await b.check_decode(4)
        assert [ts for ts, _ in decoded] == [trig - 3, trig - 2, trig - 1, trig] + changes[:12]

    simulate(dut, bench)


@pytest.mark.parametrize("armed_cycles", [0, 1, 6, 40])
def test_stop_while_armed(armed_cycles):
    """Stop after `armed_cycles` ARMED cycles, the sample changing every cycle: DONE, not
    triggered, end_ts = the stop cycle (its change not stored), the newest min(n, depth)
    entries kept. Stop on the first armed cycle leaves no entry."""
    depth = 16
    dut = TraceCapture(6, depth=depth)

    async def bench(b):
        b.ctx.set(dut.pre, 5)
        b.ctx.set(dut.post, 5)
        await b.step(0, arm=1)
        writes = [await b.step(i + 1) for i in range(armed_cycles)]
        stop = await b.step(63, stop=1, trigger=1)          # stop wins over the trigger
        await b.step(62)
        out = b.outputs()
        assert out["state"] == State.DONE and out["triggered"] == 0 and out["overflow"] == 0
        assert out["end_ts"] == stop
        assert out["count"] == min(armed_cycles, depth)
        assert out["start"] == (armed_cycles - out["count"]) % depth
        if armed_cycles:
            decoded = await b.check_decode(6)
            assert [ts for ts, _ in decoded] == writes[-depth:]

    simulate(dut, bench)


def test_stop_while_triggered():
    """Arm on 0; entries on 1 (first, 1), 3 (trigger, 2), 4 (3); stop on 6: end_ts 6, the stop
    cycle's change (4) not stored."""
    dut = TraceCapture(4, depth=16)

    async def bench(b):
        b.ctx.set(dut.pre, 15)
        b.ctx.set(dut.post, 50)
        await b.step(0, arm=1)
        await b.step(1)
        await b.step(1)
        trig = await b.step(2, trigger=1)
        await b.step(3)
        await b.step(3)
        stop = await b.step(4, stop=1)
        await b.step(5)
        out = b.outputs()
        assert out == dict(state=State.DONE, start=0, count=3, trig_index=1, trig_ts=trig,
                           end_ts=stop, last_ts=trig + 1, overflow=0, triggered=1)
        decoded = await b.check_decode(4)
        assert decoded == [(trig - 2, 1), (trig, 2), (trig + 1, 3)]    # not the stop cycle's 4

    simulate(dut, bench)


def test_rearm_clears_and_arm_wins():
    dut = TraceCapture(4, depth=4)

    async def bench(b):
        b.ctx.set(dut.pre, 1)
        b.ctx.set(dut.post, 100)
        await b.step(0, arm=1)
        await b.step(1)
        await b.step(2, trigger=1)
        for i in range(5):
            await b.step(3 + i)
        out = b.outputs()
        assert out["state"] == State.DONE and out["overflow"] == 1 and out["triggered"] == 1
        assert out["end_ts"] != 0 and out["trig_ts"] != 0 and out["count"] == 4
        # Arm together with stop and trigger: arm wins, everything is cleared.
        await b.step(9, arm=1, stop=1, trigger=1)
        cleared = dict(b.outputs())
        del cleared["last_ts"]                        # unspecified until an entry is written
        assert cleared == dict(state=State.ARMED, start=0, count=0, trig_index=0, trig_ts=0,
                               end_ts=0, overflow=0, triggered=0)
        first = await b.step(9)                       # the first armed cycle writes
        assert b.outputs()["count"] == 1 and b.outputs()["last_ts"] == first
        # Re-arm while TRIGGERED restarts the capture from scratch.
        await b.step(10, trigger=1)
        assert b.outputs()["state"] == State.TRIGGERED
        await b.step(11, arm=1)
        assert b.outputs()["state"] == State.ARMED and b.outputs()["triggered"] == 0
        a = await b.step(11)
        await b.step(12)
        await b.step(12, stop=1)
        out = b.outputs()
        assert (out["count"], out["start"], out["triggered"]) == (2, 0, 0)
        decoded = await b.check_decode(4)
        assert decoded == [(a, 11), (a + 1, 12)]
        # Trigger and stop are ignored while IDLE or DONE.
        for i in range(3):
            await b.step(i, trigger=1, stop=1)
            assert b.outputs() == out

    simulate(dut, bench)


def test_idle_ignores_trigger():
    dut = TraceCapture(4, depth=4)

    async def bench(b):
        for i in range(4):
            await b.step(i, trigger=1, stop=i == 2)
            assert b.outputs()["state"] == State.IDLE and b.outputs()["count"] == 0

    simulate(dut, bench)


def test_read_port_latency():
    """rd_data shows the entry at rd_addr one cycle later."""
    dut = TraceCapture(4, depth=4)

    async def bench(b):
        b.ctx.set(dut.pre, 3)
        b.ctx.set(dut.post, 1)
        await b.step(0, arm=1)
        c0 = await b.step(5)
        c1 = await b.step(6)
        c2 = await b.step(7, trigger=1)
        c3 = await b.step(8)
        entries = [5 | c0 << 4, 6 | c1 << 4, 7 | c2 << 4, 8 | c3 << 4]
        b.ctx.set(dut.rd_addr, 0)
        await b.step()
        for addr in (1, 2, 3, 0, 2):
            before = b.ctx.get(dut.rd_data)
            b.ctx.set(dut.rd_addr, addr)
            assert b.ctx.get(dut.rd_data) == before       # not yet
            await b.step()
            assert b.ctx.get(dut.rd_data) == entries[addr]

    simulate(dut, bench)


def test_timestamp_wrap_entries():
    """The `now` counter is forced (a simulator deposit) near 2**32 and 2**33: an entry is written
    on every cycle whose low 32 timestamp bits are 0, in ARMED and in TRIGGERED, even with no
    change, and the decoder unwraps the 32-bit timestamps across the wrap with last_ts."""
    dut = TraceCapture(4, depth=16)

    async def bench(b):
        b.ctx.set(dut.pre, 15)
        b.ctx.set(dut.post, 12)
        await b.step(3, arm=1)
        first = await b.step(3)
        b.ctx.set(dut.now, TS_MOD - 3)
        for _ in range(6):
            await b.step(3)                           # 2**32 - 3 .. 2**32 + 2: one entry at 2**32
        trig = await b.step(4, trigger=1)             # 2**32 + 3
        await b.step(4)
        b.ctx.set(dut.now, 2 * TS_MOD - 2)
        ch = await b.step(5)                          # 2**33 - 2: a change
        for _ in range(12):
            await b.step(5)                           # 2**33 - 1 .. : the entry at 2**33
        out = b.outputs()
        assert trig == TS_MOD + 3 and ch == 2 * TS_MOD - 2
        assert out["state"] == State.DONE and out["end_ts"] == 2 * TS_MOD + 9
        assert out["last_ts"] == 2 * TS_MOD
        raw = await b.read_entries()
        decoded = decode(raw, out["last_ts"], 4)
        assert decoded == [(first, 3), (TS_MOD, 3), (trig, 4), (ch, 5), (2 * TS_MOD, 5)]
        assert raw[1] == 3 and raw[4] == 5              # the wrap entries' timestamps: low 0
        # The cycles the deposits skipped were not simulated: check the simulated ones.
        for cycle in sorted(c for c in b.samples if first <= c < out["end_ts"]):
            assert value_at(decoded, cycle) == b.samples[cycle]

    simulate(dut, bench)


def expected_capture(samples, a, trig, stops, pre, post, depth):
    """What the header says a capture armed on cycle `a` does, from the driven samples and the
    cycles with a trigger or stop pulse. Returns the outputs, the entries' timestamps, and the
    cycles on which the state is ARMED, TRIGGERED and (from) DONE."""
    first = a + 1

    def due(c):
        return c == first or samples[c] != samples[c - 1] or c % TS_MOD == 0

    written, c = [], first
    while True:                                        # ARMED
        if c in stops:
            n = min(len(written), depth)
            return dict(state=State.DONE, start=(len(written) - n) % depth, count=n,
                        trig_index=0, trig_ts=0, end_ts=c, overflow=0,
                        triggered=0), written[len(written) - n:], (first, c), None, c + 1
        if c in trig:
            break
        if due(c):
            written.append(c)
        c += 1
    t = c
    kept = min(pre, depth - 1, len(written))
    entries = written[len(written) - kept:] + [t]
    out = dict(state=State.DONE, start=(len(written) - kept) % depth, count=None,
               trig_index=len(written) % depth, trig_ts=t, end_ts=None, overflow=0, triggered=1)
    # A post window that runs out is DONE on end_ts; a stop or overflow on end_ts, one later.
    end = done_from = t + 1                            # post = 0: never TRIGGERED
    c = t + 1
    while post:                                        # TRIGGERED
        if c in stops:
            end, done_from = c, c + 1
            break
        if due(c):
            if len(entries) == depth:
                out["overflow"], end, done_from = 1, c, c + 1
                break
            entries.append(c)
        if c == t + post:
            end = done_from = c + 1
            break
        c += 1
    out["count"], out["end_ts"] = len(entries), end
    return out, entries, (first, t), (t + 1, done_from - 1), done_from


@pytest.mark.parametrize("depth,sample_width,seed", [(16, 3, 1), (4, 2, 2), (32, 4, 3)])
def test_random_vs_spec(depth, sample_width, seed):
    """Many captures back to back in one simulation (each re-arms the last): random samples,
    pre, post, trigger and stop cycles (and trigger/stop pulses where they must be ignored).
    Every capture's outputs, states and entries are as the header says, and the decoded trace
    equals the driven samples over the whole covered window."""
    rng = random.Random(seed)
    dut = TraceCapture(sample_width, depth=depth)
    seen = {"overflow": 0, "stop_armed": 0, "stop_trig": 0, "post_end": 0, "wrapped": 0}

    async def bench(b):
        sample = 0
        for _ in range(60):
            pre = rng.randrange(2 * depth)
            post = rng.choice([0, 1, 2, rng.randrange(60)])
            p_change = rng.choice([0.05, 0.3, 0.9])
            t_rel = rng.choice([None, 0, 1, rng.randrange(40), rng.randrange(3 * depth)])
            s_rel = rng.choice([None, None, rng.randrange(80),
                                (t_rel or 0) + rng.randrange(1, 30)])
            b.ctx.set(dut.pre, pre)
            b.ctx.set(dut.post, post)
            for _ in range(rng.randrange(3)):              # idle cycles, spurious pulses
                await b.step(sample, trigger=rng.randint(0, 1), stop=rng.randint(0, 1))
            a = await b.step(sample, arm=1)
            trig, stops = set(), {a + 1 + 150}
            if t_rel is not None:
                trig.add(a + 1 + t_rel)
            if s_rel is not None:
                stops.add(a + 1 + s_rel)
            while True:
                c = b.now
                if rng.random() < p_change:
                    sample = rng.randrange(2**sample_width)
                # Extra trigger pulses after the planned one must be ignored.
                extra = t_rel is not None and c > a + 1 + t_rel and rng.random() < 0.2
                await b.step(sample, trigger=int(c in trig or extra), stop=int(c in stops))
                if b.outputs()["state"] == State.DONE:
                    break
            await b.step(sample, trigger=1)
            out, entries, armed, triggered, done_from = expected_capture(
                b.samples, a, trig, stops, pre, post, depth)
            got = b.outputs()
            want = dict(out, last_ts=entries[-1] if entries else got["last_ts"])
            assert got == want, (a, trig, stops, pre, post)
            for c in range(armed[0], armed[1] + 1):
                assert b.states[c] == State.ARMED
            if triggered:
                for c in range(triggered[0], triggered[1] + 1):
                    assert b.states[c] == State.TRIGGERED
            assert b.states[done_from] == State.DONE and b.states[done_from - 1] != State.DONE
            if entries:
                decoded = await b.check_decode(sample_width)
                assert [ts for ts, _ in decoded] == entries
            # Coverage bookkeeping.
            if out["overflow"]:
                seen["overflow"] += 1
            elif not out["triggered"]:
                seen["stop_armed"] += 1
                seen["wrapped"] += out["count"] == depth
            elif out["end_ts"] == out["trig_ts"] + post + 1:
                seen["post_end"] += 1
            else:
                seen["stop_trig"] += 1

    simulate(dut, bench)
    assert all(v > 0 for v in seen.values()), seen


class _DelayedCapture(Elaboratable):
    """A latency-1 capture beside a latency-0 one fed the sample delayed by a register."""

    def __init__(self, sample_width, depth):
        self.fast = TraceCapture(sample_width, depth=depth, latency=1)
        self.ref = TraceCapture(sample_width, depth=depth)

    def elaborate(self, platform):
        m = Module()
        m.submodules.fast, m.submodules.ref = self.fast, self.ref
        m.d.sync += self.ref.sample.eq(self.fast.sample)
        for name in ("arm", "stop", "trigger", "pre", "post", "rd_addr"):
            m.d.comb += getattr(self.ref, name).eq(getattr(self.fast, name))
        return m


@pytest.mark.parametrize("depth,sample_width,seed", [(16, 3, 1), (4, 2, 2)])
def test_latency_one_is_a_delayed_latency_zero(depth, sample_width, seed):
    """latency=1 equals a latency-0 capture of the sample delayed one cycle, on every output on
    every cycle, under random samples, pulses, pre/post, read addresses and timestamp wraps."""
    rng = random.Random(seed)
    top = _DelayedCapture(sample_width, depth)
    fast, ref = top.fast, top.ref
    outs = ("armed", "state", "start", "count", "trig_index", "trig_ts", "end_ts", "last_ts",
            "now", "overflow", "triggered", "rd_data")

    async def bench(ctx):
        sample = 0
        for cyc in range(6000):
            if cyc % 500 == 250:                       # jump both clocks near a 2**32 wrap
                base = rng.randrange(1, 4) * TS_MOD - rng.randrange(1, 6)
                ctx.set(fast.now, base)
                ctx.set(ref.now, base)
            if rng.random() < 0.3:
                sample = rng.randrange(2**sample_width)
            ctx.set(fast.sample, sample)
            ctx.set(fast.arm, int(rng.random() < 0.01))
            ctx.set(fast.stop, int(rng.random() < 0.005))
            ctx.set(fast.trigger, int(rng.random() < 0.03))
            if rng.random() < 0.01:
                ctx.set(fast.pre, rng.randrange(2 * depth))
                ctx.set(fast.post, rng.choice([0, 1, rng.randrange(80)]))
            ctx.set(fast.rd_addr, rng.randrange(depth))
            for name in outs:
                assert ctx.get(getattr(fast, name)) == ctx.get(getattr(ref, name)), (cyc, name)
            await ctx.tick()

    sim = Simulator(top)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
