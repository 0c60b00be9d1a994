# SPDX-License-Identifier: BSD-2-Clause
# Full-loopback tests of NICDatapath (amaranth.sim): a Python host (memory, in-order DMA read
# responder with random latency and gaps, write sink with random back-pressure that checks every
# write lands in a region the NIC may write) and the driver model of sw/lib/nic_queues.c
# (nicmodels/nic_driver.py: set-up through the datapath's registers, 4 TX rings filled with
# frames of random size 60..1514 at random buffer alignments as ring space frees up from the
# consumer-index writebacks, one doorbell per batch; RX buffers posted and reposted as completion
# records come in), with a MAC loopback (mac_tx -> mac_rx one cycle later, random mac_tx_ready
# gaps). The host memory, its map and the TX loop are nicmodels/loopback_host.py, which the
# cocotb testbench (cocotb_tests/tb_nic_datapath.py) drives too.
# Checks: every frame received exactly once and bit-exact, each TX queue's frames in order in the
# RX stream, the writebacks end at the producer indexes, the counters, and the interrupts of
# both vectors equal coalesce_model.predict_irqs of the event cycles observed.
import gc
import random
from collections import deque

import pytest
from amaranth.hdl import Shape
from amaranth.sim import Simulator

from nicmodels.coalesce_model import CONFIG, predict_irqs
from nicmodels.loopback_host import (HBASE, NQ, RX_LOG2, RXCPL, RXRING, TX_LOG2, TXBUF, TXRING,
                                     WB, Host, TxPoster, make_frames, rings, writable)
from nicmodels.nic_driver import NicDriver, PortRegisters, coalesce, encode_tx_desc
from rtl.contract.formats import RxStatus, TxStatus
from rtl.nic.nic_datapath import EXPOSED, OWN_PORTS, NICDatapath
from rtl.verilator_lint import verilator_lint


def cfg(frames=1, usecs=0, abs_usecs=0, min_interval=0, tick_cycles=1):
    return dict(frames=frames, usecs=usecs, abs_usecs=abs_usecs, min_interval=min_interval,
                tick_cycles=tick_cycles)


def run(seed, nframes=40, data_width=128, txirq=None, rxirq=None, bad=(), rx_bad=(), max_frags=1,
        p_req=0.8, p_cpl=0.85, p_wr=0.8, p_mac=0.7, max_lat=24, max_cycles=400_000, ntxirq=1):
    """Sends nframes frames on each of the 4 TX queues through the loopback. bad: (queue, seq)
    frames sent as one zero-length descriptor; rx_bad: (queue, seq) frames the MAC loopback
    marks with mac_rx_error on their last beat; max_frags: each other frame is split into 1 to
    max_frags descriptors. The run ends 400 cycles after every frame was received and every
    writeback is final, or 3000 cycles after the last RX frame if the TX rings are done (check()
    then finds the missing frames). ntxirq: TX interrupt vectors (queue q in group q % ntxirq).
    Returns the observations."""
    rng = random.Random(seed)
    txirq = txirq or cfg()
    rxirq = rxirq or cfg()
    dut = NICDatapath(data_width=data_width, ntxq=NQ, ntxirq=ntxirq)
    B = data_width // 8
    host = Host()
    obs = dict(rx=[], tx_events=[[] for _ in range(ntxirq)], rx_events=[],
               irqs=[[] for _ in range(ntxirq + 1)], counts={}, cycles=0, wb=None,
               wr_both=0, open_cycles=0, ntxirq=ntxirq, tx_out=[[] for _ in range(ntxirq)])

    frames = make_frames(rng, nframes)          # bytes 0..1 queue, 2..3 sequence number
    good = {k for k in frames if k not in bad and k not in rx_bad}
    allowed = writable()

    async def bench(ctx):
        def set_(name, v):
            ctx.set(getattr(dut, name), v)

        def get(name):
            return ctx.get(getattr(dut, name))

        # the driver (nicmodels/nic_driver.py, as sw/lib/nic_queues.c)
        regs = PortRegisters()
        txr, rxr = rings(host, regs)
        NicDriver(regs, txr, rxr).open(tx_coalesce=coalesce(**txirq),
                                       rx_coalesce=coalesce(**rxirq))
        tx = TxPoster(host, txr, frames, nframes, rng, max_frags=max_frags, bad=bad)
        ctx.set(dut.irq_ready, (1 << (ntxirq + 1)) - 1)

        S_rx = 1 << RX_LOG2
        rx_seen = 0
        reads = deque()                                  # (ready cycle, data, last)
        t_last = 0
        wcur = None                                      # [addr, len, beat]
        loop = None                                      # beat in the MAC loopback
        mac_id = None                                    # (queue, seq) of the frame on mac_tx
        done_at = None
        rx_count, rx_change = 0, 0

        coalescers = [dut.txirq] + dut.txirq_more + [dut.rxirq]
        cpl_cum = [0] * NQ                               # descriptors completed per queue
        wb_cum = [0] * NQ                                # ... and written back (taken)
        wb_cons = [0] * NQ
        wb_seen = [0] * NQ
        # TXIrqOrder's promise, per vector: a request covers the completions of its decision;
        # decisions made while one waits are merged into one more request, which covers the
        # completions before the cycle the waiting one was taken.
        need = [None] * ntxirq                           # cpl_cum the waiting request covers
        again = [False] * ntxirq                         # decisions merged while it waits

        def decided(g):
            if need[g] is None:
                need[g] = list(cpl_cum)
            else:
                again[g] = True

        def order_check(g, cyc):
            assert need[g] is not None, f"TX irq {g} at {cyc} without a decision"
            for q in range(g, NQ, ntxirq):
                assert wb_seen[q] >= need[g][q], \
                    f"TX irq {g} at {cyc}: queue {q} written back {wb_seen[q]} < {need[g][q]}"
            obs["tx_out"][g].append(cyc)
            need[g] = list(cpl_cum) if again[g] else None
            again[g] = False

        for cyc in range(max_cycles):
            # -- driver: TX (frames posted as ring space frees up, one doorbell per batch) ------
            tx.step()
            # -- driver: RX (completion records polled, buffers reposted: one doorbell) ---------
            for f in rxr.poll():
                assert f.status == RxStatus.OK, f"RX completion status {f.status}"
                assert f.index == rx_seen % S_rx
                obs["rx"].append(f.data)
                rx_seen += 1
            rxr.refill()
            regs.step(set_, get)                         # one register write per cycle
            # -- host DMA read --------------------------------------------------------------------
            rrdy = rng.random() < p_req
            ctx.set(dut.rd_req_ready, rrdy)
            cv = bool(reads) and reads[0][0] <= cyc and rng.random() < p_cpl
            ctx.set(dut.rd_cpl_valid, cv)
            if cv:
                ctx.set(dut.rd_cpl_data, reads[0][1])
                ctx.set(dut.rd_cpl_last, reads[0][2])
            ctx.set(dut.rd_cpl_err, 0)
            # -- host DMA write -------------------------------------------------------------------
            wrdy = rng.random() < p_wr
            ctx.set(dut.wr_ready, wrdy)
            # -- MAC loopback ---------------------------------------------------------------------
            mrdy = rng.random() < p_mac
            ctx.set(dut.mac_tx_ready, mrdy)
            ctx.set(dut.mac_rx_valid, loop is not None)
            if loop is not None:
                ctx.set(dut.mac_rx_data, loop[0])
                ctx.set(dut.mac_rx_keep, loop[1])
                ctx.set(dut.mac_rx_last, loop[2])
            ctx.set(dut.mac_rx_error, loop is not None and loop[3])
            loop = None
            # -- sample the outputs ---------------------------------------------------------------
            if rrdy and ctx.get(dut.rd_req_valid):
                addr, ln = ctx.get(dut.rd_req_addr), ctx.get(dut.rd_req_len)
                assert addr % 16 == 0 and ln % 16 == 0 and 16 <= ln <= 512
                # The read's kind: descriptor rings (TX, RX) against payload buffers.
                ring = HBASE + TXRING <= addr < HBASE + WB or \
                    HBASE + RXRING <= addr < HBASE + RXCPL
                assert ctx.get(dut.rd_req_desc) == ring, hex(addr)
                assert addr // 4096 == (addr + ln - 1) // 4096
                t_last = max(t_last, cyc + 1 + rng.randrange(max_lat))
                raw = host.read(addr, ln)
                nb = ln // B
                for k in range(nb):
                    reads.append((t_last, int.from_bytes(raw[k * B:k * B + B], "little"),
                                  int(k == nb - 1)))
            if cv and ctx.get(dut.rd_cpl_ready):
                reads.popleft()
            wb_seen = list(wb_cum)                       # writebacks taken before this cycle
            if wrdy and ctx.get(dut.wr_valid):
                if ctx.get(dut.wr_first):
                    assert wcur is None
                    wcur = [ctx.get(dut.wr_addr), ctx.get(dut.wr_len), 0]
                    a, n = wcur[0], wcur[1]
                    assert any(lo <= a and a + n <= hi for lo, hi in allowed), hex(a)
                assert wcur is not None
                a, n, k = wcur
                nbytes = min(B, n - k * B)
                assert nbytes > 0
                host.write(a + k * B, ctx.get(dut.wr_data).to_bytes(B, "little")[:nbytes])
                wcur[2] += 1
                if ctx.get(dut.wr_last):
                    assert (wcur[2] * B >= n) and (wcur[2] - 1) * B < n
                    q = (a - HBASE - WB) // 16
                    if 0 <= q < NQ and a == HBASE + WB + 16 * q:
                        cons = int.from_bytes(host.read(a, 2), "little")
                        wb_cum[q] += (cons - wb_cons[q]) % (1 << TX_LOG2)
                        wb_cons[q] = cons
                    wcur = None
            if mrdy and ctx.get(dut.mac_tx_valid):
                d, last = ctx.get(dut.mac_tx_data), ctx.get(dut.mac_tx_last)
                if mac_id is None:
                    mac_id = (d & 0xFF, d >> 16 & 0xFFFF)
                loop = (d, ctx.get(dut.mac_tx_keep), last, int(last and mac_id in rx_bad))
                if last:
                    mac_id = None
            if ctx.get(dut.txq.wb.valid) and ctx.get(dut.rxe.wr.valid):
                obs["wr_both"] += 1                      # the write arbiter had to choose
            obs["open_cycles"] += ctx.get(dut.txe.open_valid)   # a frame open between jobs
            if ctx.get(dut.txe.done.valid):
                obs["tx_events"][ctx.get(dut.txe.done.p.queue) % ntxirq].append(cyc)
            if ctx.get(dut.rxe.irq_event):
                obs["rx_events"].append(cyc)
            # Coalescer decisions (predicted exactly, check()) and the TX requests after
            # TXIrqOrder: each must find the writebacks of its decision's completions taken.
            for g, c in enumerate(coalescers):
                if ctx.get(c.irq_valid):
                    obs["irqs"][g].append(cyc)
                    if g < ntxirq:
                        decided(g)
            iv = ctx.get(dut.irq_valid)
            for g in range(ntxirq):
                if iv >> g & 1:
                    order_check(g, cyc)
            if ctx.get(dut.txe.cpl.valid):
                cpl_cum[ctx.get(dut.txe.cpl.p.queue)] += ctx.get(dut.txe.cpl.p.count)
            await ctx.tick()
            if done_at is None and len(obs["rx"]) == len(good) and tx.done():
                done_at = cyc
            if done_at is not None and cyc >= done_at + 400:
                break
            if len(obs["rx"]) != rx_count:
                rx_count, rx_change = len(obs["rx"]), cyc
            if cyc > rx_change + 3000 and obs["wb"] is None and tx.done():
                break
        else:
            raise AssertionError(f"timeout: {len(obs['rx'])} of {len(good)} frames received")
        obs["cycles"] = cyc + 1
        obs["ndescs"] = tx.ndescs
        obs["prod"] = [t.next_to_use for t in txr]
        obs["wb"] = [t.written_back() for t in txr]
        obs["wb_errors"] = [t.written_back_errors() for t in txr]
        for prefix, (_, _, outs) in EXPOSED.items():
            for name in outs:
                obs["counts"][prefix + name] = ctx.get(getattr(dut, prefix + name))
        obs["counts"]["txq_wb_writes"] = ctx.get(dut.txq_wb_writes)
        obs["counts"]["txq_cons"] = ctx.get(dut.txq_cons)
        obs["counts"]["txirq_vec_irqs"] = ctx.get(dut.txirq_vec_irqs)
        obs["counts"]["txirq_wb_held"] = ctx.get(dut.txirq_wb_held)

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    obs["frames"], obs["good"] = frames, good
    return obs


def check(obs, nframes, bad=(), rx_bad=(), txirq=None, rxirq=None):
    frames, good = obs["frames"], obs["good"]
    seen = set()
    last = {}
    for data in obs["rx"]:
        q, s = data[0], int.from_bytes(data[2:4], "little")
        assert (q, s) in good, f"unexpected frame {(q, s)}"
        assert (q, s) not in seen, f"frame {(q, s)} received twice"
        assert data == frames[q, s], f"frame {(q, s)} corrupted"
        assert s > last.get(q, -1), f"queue {q}: frame {s} after {last[q]}"
        last[q] = s
        seen.add((q, s))
    assert seen == good
    assert obs["wb"] == obs["prod"]
    c = obs["counts"]
    # the consumer indexes read from the device are what was written back
    assert [c["txq_cons"] >> 32 * q & 0xFFFFFFFF for q in range(len(obs["wb"]))] == obs["wb"]
    nbad = len(bad)
    # each queue's errored frames: its counter, and its last writeback with the latest status
    for q, (errors, last_error) in enumerate(obs["wb_errors"]):
        nq = sum(1 for (bq, _) in bad if bq == q)
        assert c["txe_q_errors"] >> 32 * q & 0xFFFFFFFF == errors == nq, (q, errors, nq)
        assert last_error == (TxStatus.DESC_LEN0 if nq else TxStatus.OK), (q, last_error)
    ngood = len(good)
    nbytes = sum(len(frames[k]) for k in good)
    nrxbad = len(rx_bad)
    assert c["txe_frames"] == ngood + nrxbad
    assert c["txe_bytes"] == nbytes + sum(len(frames[k]) for k in rx_bad)
    assert c["txe_err_desc_len0"] == nbad
    assert c["txfifo_drop_error"] == nbad and c["txfifo_frames_out"] == ngood + nrxbad
    assert c["rxfifo_frames_out"] == ngood and c["rxfifo_frames_in"] == ngood + nrxbad
    assert c["rxfifo_drop_error"] == nrxbad
    assert c["rxe_frames"] == ngood and c["rxe_bytes"] == nbytes
    for name, v in c.items():
        if ("drop_" in name and name not in ("txfifo_drop_error", "rxfifo_drop_error")) or \
                (name.startswith(("txq_err", "rxe_err")) or name == "txe_err_read"):
            assert v == 0, f"{name} = {v}"
    assert c["txq_descs_completed"] == obs["ndescs"]
    assert c["rdarb_outstanding"] == 0
    assert c["txq_drained"] == 0                 # queues still enabled
    # interrupts: one TX event per TX frame (good or not), one RX event per frame received
    # (a TX vector per queue group: queue q's events on vector q % ntxirq, each vector
    # coalescing its own with the one txirq_ configuration)
    nt = obs["ntxirq"]
    assert [len(ev) for ev in obs["tx_events"]] == [NQ // nt * nframes] * nt
    assert len(obs["rx_events"]) == ngood
    # TX requests (TXIrqOrder, each checked against its writebacks in run()): after the last
    # decision, at most one per decision; some had to wait for their writeback.
    for g in range(nt):
        dec, out = obs["irqs"][g], obs["tx_out"][g]
        assert out and out[-1] > dec[-1] and len(out) <= len(dec), f"vector {g}"
    assert 0 < c["txirq_wb_held"] <= sum(len(obs["tx_out"][g]) for g in range(nt))
    n = obs["cycles"]
    vectors = [(ev, txirq or cfg()) for ev in obs["tx_events"]] + \
        [(obs["rx_events"], rxirq or cfg())]
    expected = [predict_irqs(ev, n, **conf) for ev, conf in vectors]
    for v in range(nt + 1):
        assert obs["irqs"][v] == expected[v], f"vector {v}"
    per_vec = [c["txirq_vec_irqs"] >> (32 * g) & 0xFFFFFFFF for g in range(nt)]
    assert per_vec == [len(e) for e in expected[:nt]]
    assert c["txirq_irqs"] == sum(per_vec)
    assert c["rxirq_irqs"] == len(expected[nt])


def test_loopback_no_coalescing():
    nframes = 32
    obs = run(1, nframes=nframes)
    check(obs, nframes)
    assert len(obs["irqs"][0]) == NQ * nframes and len(obs["irqs"][1]) == NQ * nframes
    assert obs["wr_both"] > 0                    # RX writes and writebacks did contend


def test_loopback_coalescing():
    txirq = cfg(frames=8, usecs=20, tick_cycles=4)
    rxirq = cfg(frames=0, usecs=0, abs_usecs=30, min_interval=15, tick_cycles=8)
    nframes = 24
    obs = run(2, nframes=nframes, txirq=txirq, rxirq=rxirq)
    check(obs, nframes, txirq=txirq, rxirq=rxirq)
    assert 0 < len(obs["irqs"][0]) < NQ * nframes
    assert 0 < len(obs["irqs"][1]) < NQ * nframes


def test_loopback_tx_vector_per_queue_group():
    """Two TX vectors (queues 0, 2 and queues 1, 3) plus RX, each coalescing its own events
    exactly as predicted, their interrupts on irq_valid bits 0, 1 and 2."""
    txirq = cfg(frames=3, usecs=12, tick_cycles=4)
    rxirq = cfg(frames=5)
    nframes = 20
    obs = run(7, nframes=nframes, txirq=txirq, rxirq=rxirq, ntxirq=2)
    check(obs, nframes, txirq=txirq, rxirq=rxirq)
    assert all(obs["irqs"][v] for v in range(3))
    assert obs["irqs"][0] != obs["irqs"][1]


def test_loopback_bad_inputs():
    """Zero-length descriptors, two on queue 1 and one on queue 3 (dropped by the TX FIFO as
    errored frames, counted in txe_err_desc_len0, txfifo_drop_error and the queues' q_errors,
    which their writebacks carry) and two frames with mac_rx_error (dropped by the RX FIFO):
    every other frame arrives, in order."""
    bad = {(1, 5), (1, 12), (3, 0)}
    nframes = 20
    rx_bad = {(2, 7), (0, 19)}
    obs = run(3, nframes=nframes, bad=bad, rx_bad=rx_bad)
    check(obs, nframes, bad=bad, rx_bad=rx_bad)


def test_loopback_64():
    nframes = 12
    bad = {(2, 3)}                      # the writeback's error fields at W=64 (two beats)
    obs = run(4, nframes=nframes, data_width=64, bad=bad)
    check(obs, nframes, bad=bad)


def test_loopback_scatter_gather():
    """Frames of 1..3 descriptors, cut into jobs at max_batch and the ring end regardless of
    EOP: every frame arrives whole."""
    obs = run(5, nframes=30, max_frags=3)
    check(obs, 30)
    assert obs["open_cycles"] > 0                # some frames did span jobs


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_bad_params():
    for kw in (dict(data_width=32), dict(ntxq=0), dict(ntxq=65), dict(tx_fifo_depth=1000),
               dict(rx_fifo_depth=16), dict(max_batch=0), dict(rd_depth=3), dict(ntxirq=0),
               dict(ntxq=4, ntxirq=5), dict(ntxq=16, ntxirq=9)):
        with pytest.raises(ValueError):
            NICDatapath(**kw)
    gc.collect()                  # the UnusedElaboratable warnings here, where they are ignored


def test_exposed_ports():
    """Every exposed name is a port of its sub-core, with the sub-core's width and direction."""
    dut = NICDatapath()
    members = dut.signature.members
    for prefix, (attr, ins, outs) in EXPOSED.items():
        sub = getattr(dut, attr).signature.members
        for names, flow in ((ins, "In"), (outs, "Out")):
            for name in names:
                assert members[prefix + name].flow.value == flow
                assert sub[name].flow.value == flow
                assert members[prefix + name].shape.width == Shape.cast(sub[name].shape).width
    for prefix, (ins, outs) in OWN_PORTS.items():      # the core's own, for the CSR wrapper
        for names, flow in ((ins, "In"), (outs, "Out")):
            for name in names:
                assert members[prefix + name].flow.value == flow
    for name in CONFIG:
        assert "txirq_" + name in members and "rxirq_" + name in members

    async def bench(ctx):          # the flattened ArrayLayout inputs: element i at bits i*w
        ctx.set(dut.tx_sched_prio, 0b101_011_110_001)
        ctx.set(dut.tx_sched_weight, 0x04_03_02_01)
        assert [ctx.get(dut.sched.prio[i]) for i in range(NQ)] == [1, 6, 3, 5]
        assert [ctx.get(dut.sched.weight[i]) for i in range(NQ)] == [1, 2, 3, 4]

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("data_width", [64, 128])
def test_verilator_lint(data_width, tmp_path):
    verilator_lint(NICDatapath(data_width=data_width), "nic_datapath", tmp_path)


def test_disable_queue_with_open_frame():
    """Queue 0 posts the head of a frame (no EOP) and never its tail; queue 1 posts a whole
    frame. While queue 0's frame is open the engine serves only queue 0, so nothing goes out;
    disabling queue 0 aborts its frame (txe_err_no_eop, dropped by the TX FIFO as an errored
    frame), then queue 1's frame goes out whole, and queue 0 reports drained."""
    dut = NICDatapath(data_width=128, ntxq=2)
    host = Host()
    B = 16
    head = bytes(range(100))
    frame1 = bytes([1, 0]) + bytes(range(200, 255)) * 2
    host.write(HBASE + TXBUF, head)
    host.write(HBASE + TXBUF + 4096, frame1)
    for q, (addr, ln, eop) in enumerate([(HBASE + TXBUF, len(head), 0),
                                         (HBASE + TXBUF + 4096, len(frame1), 1)]):
        host.write(HBASE + TXRING + 4096 * q, encode_tx_desc(addr, ln, eop=eop))
    obs = dict(mac=[], open0=None)

    async def bench(ctx):
        def setp(prefix, **kw):
            for k, v in kw.items():
                ctx.set(getattr(dut, prefix + k), v)
        setp("txfifo_", max_len=9216, min_len=0, enable=1)
        ctx.set(dut.wr_ready, 1)
        ctx.set(dut.mac_tx_ready, 1)
        ctx.set(dut.rd_req_ready, 1)
        reads, cur = deque(), []
        for cyc in range(3000):
            setp("txq_", cfg_valid=0, db_valid=0)
            setp("txe_", base_valid=0)
            setp("txq_", wb_addr_valid=0)
            if cyc < 2:
                setp("txq_", cfg_valid=1, cfg_queue=cyc, cfg_size_log2=4, cfg_enable=1,
                     cfg_limit=8)
                setp("txe_", base_valid=1, base_queue=cyc, base_addr=HBASE + TXRING + 4096 * cyc)
                setp("txq_", wb_addr_valid=1, wb_addr_queue=cyc, wb_addr=HBASE + WB + 16 * cyc)
            elif cyc == 2:
                setp("txq_", db_valid=1, db_queue=0, db_index=1)
            elif cyc == 40:
                setp("txq_", db_valid=1, db_queue=1, db_index=1)
            elif cyc == 1500:                     # disable queue 0 (same ring size)
                obs["open0"] = (ctx.get(dut.txe.open_valid), ctx.get(dut.txe.open_queue),
                                len(obs["mac"]), ctx.get(dut.txq_drained))
                setp("txq_", cfg_valid=1, cfg_queue=0, cfg_size_log2=4, cfg_enable=0,
                     cfg_limit=8)
            cv = bool(reads) and reads[0][0] <= cyc
            ctx.set(dut.rd_cpl_valid, cv)
            if cv:
                ctx.set(dut.rd_cpl_data, reads[0][1])
                ctx.set(dut.rd_cpl_last, reads[0][2])
            if ctx.get(dut.rd_req_valid):
                addr, ln = ctx.get(dut.rd_req_addr), ctx.get(dut.rd_req_len)
                raw = host.read(addr, ln)
                for k in range(ln // B):
                    reads.append((cyc + 20, int.from_bytes(raw[k * B:k * B + B], "little"),
                                  int(k == ln // B - 1)))
            if cv and ctx.get(dut.rd_cpl_ready):
                reads.popleft()
            if ctx.get(dut.mac_tx_valid):
                d, k = ctx.get(dut.mac_tx_data), ctx.get(dut.mac_tx_keep)
                cur += [(d >> 8 * i & 0xFF) for i in range(B) if k >> i & 1]
                if ctx.get(dut.mac_tx_last):
                    obs["mac"].append(bytes(cur))
                    cur = []
            await ctx.tick()
        obs["counts"] = {n: ctx.get(getattr(dut, n)) for n in
                         ("txe_err_no_eop", "txe_frames", "txfifo_drop_error", "txq_drained",
                          "txq_descs_completed", "txq_cons")}

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    assert obs["open0"] == (1, 0, 0, 0)           # held: queue 0 open, nothing sent, not drained
    assert obs["mac"] == [frame1]
    assert obs["counts"] == dict(txe_err_no_eop=1, txe_frames=1, txfifo_drop_error=1,
                                 txq_drained=0b01, txq_descs_completed=2,
                                 txq_cons=1 | 1 << 32)


@pytest.mark.parametrize("data_width", [64, 128])
def test_misaligned_tx_addresses_refused(data_width):
    """Issue 37: a TX ring base or writeback address that is not 16-byte aligned is refused
    (txe_err_base / txq_err_wb_addr + 1, txe_base_bad / txq_wb_bad bit q), and the queue then
    makes no DMA at all: not scheduled, no descriptor read, no writeback, no frame. Given
    aligned addresses (disabled, rewritten, enabled) both queues send their frame and write
    back to the addresses asked. A writeback address refused under a live queue (a frame in
    flight) drops that queue's writeback: nothing is written anywhere, and the queue is not
    scheduled again."""
    dut = NICDatapath(data_width=data_width, ntxq=2)
    host = Host()
    B = data_width // 8
    rings = [HBASE + TXRING + 4096 * q for q in range(2)]
    wbs = [HBASE + WB + 16 * q for q in range(2)]
    frames = [bytes([q, p]) + bytes((7 * q + 3 * p + i) & 0xFF for i in range(58 + 40 * p))
              for q in range(2) for p in range(3)]       # queue q's p-th frame: frames[3q + p]
    for q in range(2):
        for p in range(3):
            addr = HBASE + TXBUF + 0x1000 * q + 0x200 * p + 5 * p   # any byte alignment
            host.write(addr, frames[3 * q + p])
            host.write(rings[q] + 16 * p, encode_tx_desc(addr, len(frames[3 * q + p])))
    obs = dict(reads=[], writes=[], mac=[], snap={})
    names = ("txe_err_base", "txe_base_bad", "txq_err_wb_addr", "txq_wb_bad", "txq_wb_writes",
             "txe_frames", "txq_drained")

    async def bench(ctx):
        def setp(prefix, **kw):
            for k, v in kw.items():
                ctx.set(getattr(dut, prefix + k), v)

        def cfg(q, enable):
            setp("txq_", cfg_valid=1, cfg_queue=q, cfg_size_log2=4, cfg_enable=enable,
                 cfg_limit=8)

        def snap(tag):
            obs["snap"][tag] = dict(reads=len(obs["reads"]), writes=len(obs["writes"]),
                                    mac=len(obs["mac"]),
                                    **{n: ctx.get(getattr(dut, n)) for n in names})

        # Cycle -> what the driver writes (one register write a cycle).
        script = {
            0: lambda: setp("txe_", base_valid=1, base_queue=0, base_addr=rings[0]),
            1: lambda: setp("txq_", wb_addr_valid=1, wb_addr_queue=0, wb_addr=wbs[0] + 4),
            2: lambda: setp("txe_", base_valid=1, base_queue=1, base_addr=rings[1] + 8),
            3: lambda: setp("txq_", wb_addr_valid=1, wb_addr_queue=1, wb_addr=wbs[1]),
            4: lambda: cfg(0, 1), 5: lambda: cfg(1, 1),
            6: lambda: setp("txq_", db_valid=1, db_queue=0, db_index=1),
            7: lambda: setp("txq_", db_valid=1, db_queue=1, db_index=1),
            400: lambda: (snap("refused"), cfg(0, 0)), 401: lambda: cfg(1, 0),
            410: lambda: setp("txq_", wb_addr_valid=1, wb_addr_queue=0, wb_addr=wbs[0]),
            411: lambda: setp("txe_", base_valid=1, base_queue=1, base_addr=rings[1]),
            412: lambda: cfg(0, 1), 413: lambda: cfg(1, 1),
            414: lambda: setp("txq_", db_valid=1, db_queue=0, db_index=1),
            415: lambda: setp("txq_", db_valid=1, db_queue=1, db_index=1),
            1200: lambda: (snap("running"),
                           setp("txq_", db_valid=1, db_queue=0, db_index=2)),
            2000: lambda: (snap("dropped"),
                           setp("txq_", db_valid=1, db_queue=0, db_index=3)),
            2400: lambda: (snap("stopped"), cfg(0, 0)),
        }
        setp("txfifo_", max_len=9216, min_len=0, enable=1)
        ctx.set(dut.wr_ready, 1)
        ctx.set(dut.mac_tx_ready, 1)
        ctx.set(dut.rd_req_ready, 1)
        ctx.set(dut.irq_ready, 0b111)
        reads, cur, wcur = deque(), [], None
        for cyc in range(2600):
            setp("txq_", cfg_valid=0, db_valid=0, wb_addr_valid=0)
            setp("txe_", base_valid=0)
            if cyc in script:
                script[cyc]()
            cv = bool(reads) and reads[0][0] <= cyc
            ctx.set(dut.rd_cpl_valid, cv)
            if cv:
                ctx.set(dut.rd_cpl_data, reads[0][1])
                ctx.set(dut.rd_cpl_last, reads[0][2])
            if ctx.get(dut.rd_req_valid):
                addr, ln = ctx.get(dut.rd_req_addr), ctx.get(dut.rd_req_len)
                obs["reads"].append((cyc, addr, ln))
                raw = host.read(addr, ln)
                for k in range(ln // B):
                    reads.append((cyc + 20, int.from_bytes(raw[k * B:k * B + B], "little"),
                                  int(k == ln // B - 1)))
                # The live refusal: queue 0's writeback address made bad while its third
                # frame's payload is being read.
                if 1200 < cyc and not ctx.get(dut.rd_req_desc) and "live" not in obs:
                    obs["live"] = cyc
                    setp("txq_", wb_addr_valid=1, wb_addr_queue=0, wb_addr=wbs[0] + 12)
            if cv and ctx.get(dut.rd_cpl_ready):
                reads.popleft()
            if ctx.get(dut.wr_valid):
                beat = ctx.get(dut.wr_data).to_bytes(B, "little")
                if ctx.get(dut.wr_first):
                    wcur = [cyc, ctx.get(dut.wr_addr), ctx.get(dut.wr_len), b""]
                wcur[3] += beat
                if ctx.get(dut.wr_last):
                    obs["writes"].append((wcur[0], wcur[1], wcur[2], wcur[3][:wcur[2]]))
            if ctx.get(dut.mac_tx_valid):
                d, k = ctx.get(dut.mac_tx_data), ctx.get(dut.mac_tx_keep)
                cur += [(d >> 8 * i & 0xFF) for i in range(B) if k >> i & 1]
                if ctx.get(dut.mac_tx_last):
                    obs["mac"].append(bytes(cur))
                    cur = []
            await ctx.tick()
        snap("end")

    sim = Simulator(dut)
    sim.add_clock(8e-9)
    sim.add_testbench(bench)
    sim.run()
    s = obs["snap"]
    # Refused: no read, no write, no frame; each refusal counted, its queue's bit set.
    assert (s["refused"]["reads"], s["refused"]["writes"], s["refused"]["mac"]) == (0, 0, 0), \
        f"DMA with refused addresses: reads {obs['reads'][:4]}, writes {obs['writes'][:4]}"
    assert {n: s["refused"][n] for n in names[:4]} == dict(
        txe_err_base=1, txe_base_bad=0b10, txq_err_wb_addr=1, txq_wb_bad=0b01)
    # Aligned again: each queue's ring read where asked, its frame sent, its writeback (cons 1)
    # at its address; nothing else written.
    assert s["running"]["txe_base_bad"] == 0 and s["running"]["txq_wb_bad"] == 0
    desc_reads = {a for _, a, _ in obs["reads"] if a in rings}
    assert desc_reads == set(rings)
    assert sorted(obs["mac"][:2]) == sorted([frames[0], frames[3]])
    assert sorted((a, n, rec[:2]) for _, a, n, rec in obs["writes"]) == \
        [(w, 16, b"\x01\x00") for w in wbs]
    # The address refused under the live queue: its in-flight frame still goes out, but its
    # writeback is dropped (no write at all), and the queue is not scheduled again.
    assert s["dropped"]["txq_err_wb_addr"] == 2 and s["dropped"]["txq_wb_bad"] == 0b01
    assert obs["mac"][2:] == [frames[1]] and s["dropped"]["txq_wb_writes"] == 2
    assert len(obs["writes"]) == 2
    assert s["stopped"]["reads"] == s["dropped"]["reads"], "the refused queue was read again"
    assert s["end"]["txq_drained"] & 1, "the refused queue does not drain when disabled"
