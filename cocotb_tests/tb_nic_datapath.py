#
# tb_nic_datapath.py: cocotb testbench of the emitted Verilog of rtl/nic/nic_datapath.py
# (NICDatapath), run by cocotb_tests/test_nic_datapath.py.
#
# What it is: the host of rtl/nic/test_nic_datapath.py as a cocotb coroutine, one loop iteration
# per cycle (inputs set and outputs sampled at the falling edge, the rising edge ending the
# cycle): host memory (its Host class and address map constants), an in-order DMA read
# responder with random latency and gaps (rd_*), a write sink with random back-pressure that
# checks every write lands in a region the NIC may write (wr_*), a MAC loopback (mac_tx ->
# mac_rx one cycle later, random mac_tx_ready gaps), and a small driver: 4 TX rings filled
# with frames of 60..1514 bytes (bytes 0..1 queue, 2..3 sequence number) in 1 or 2
# descriptors at random alignments, doorbells rung as ring space frees up from the
# consumer-index writebacks; RX buffers posted and reposted as completion records come in.
# Checks: every frame received exactly once, bit-exact, each queue's frames in order; the
# writebacks end at the producer indexes; frame/byte counters; no error or drop counter moved.
# (The interrupt check of the amaranth.sim test needs internal event signals that are not
# ports; the interrupts are exercised by tb_irq_coalescer.py.)
# Parameters (environment, JSON): NIC_CFG = {seed, nframes (per queue), max_frags,
# data_width (as the emitted core)}.

import random
from collections import deque

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from cocotb_tests.cocotb_run import env_params
from rtl.nic.nic_datapath import EXPOSED
from rtl.nic.test_nic_datapath import (HBASE, NQ, RX_LOG2, RXBUF, RXBUF_LEN, RXCPL, RXRING, TX_LOG2,
                                   TXBUF, TXRING, WB, Host, cfg)


class Ctx:
    """ctx.set / ctx.get of amaranth.sim on the cocotb handles (ports by name)."""

    def __init__(self, dut):
        self.dut = dut
        self.h = {}

    def _handle(self, name):
        if name not in self.h:
            self.h[name] = getattr(self.dut, name)    # exact name (no dir(): see tb_frame_fifo)
        return self.h[name]

    def set(self, name, value):
        self._handle(name).value = int(value)

    def get(self, name):
        return int(self._handle(name).value)


@cocotb.test()
async def loopback(dut):
    c = env_params("NIC_CFG")
    seed, nframes, max_frags, data_width = (c[k] for k in ("seed", "nframes", "max_frags",
                                                            "data_width"))
    p_req, p_cpl, p_wr, p_mac, max_lat, max_cycles = 0.8, 0.85, 0.8, 0.7, 24, 200_000
    rng = random.Random(seed)
    B = data_width // 8
    host = Host()
    ctx = Ctx(dut)
    rx = []

    frames = {}
    for q in range(NQ):
        for s in range(nframes):
            n = rng.randint(60, 1514)
            frames[q, s] = bytes([q, 0]) + s.to_bytes(2, "little") + rng.randbytes(n - 4)
    good = set(frames)
    allowed = [(HBASE + WB, HBASE + WB + 16 * NQ),
               (HBASE + RXCPL, HBASE + RXCPL + (16 << RX_LOG2)),
               (HBASE + RXBUF, HBASE + RXBUF + (RXBUF_LEN << RX_LOG2))]

    def setp(prefix, **kw):
        for k, v in kw.items():
            ctx.set(prefix + k, v)

    cocotb.start_soon(Clock(dut.clk, 8, units="ns").start())
    ctx.set("rst", 1)
    for name in ("txq_db_valid", "rxe_db_valid", "rd_cpl_valid", "mac_rx_valid", "rxe_enable",
                 "txq_cfg_valid", "txe_base_valid", "txq_wb_addr_valid", "rd_req_ready",
                 "wr_ready", "mac_tx_ready"):
        ctx.set(name, 0)
    for prefix in ("txirq_", "rxirq_"):
        setp(prefix, enable=1, **cfg())
    ctx.set("irq_ready", 3)
    setp("txfifo_", max_len=9216, min_len=0, enable=1)
    setp("rxfifo_", max_len=RXBUF_LEN, min_len=0, enable=1)
    setp("rxe_", ring_base=HBASE + RXRING, ring_size_log2=RX_LOG2, cpl_base=HBASE + RXCPL)
    setp("tx_sched_", mode=0, prio=0, weight=0)
    for _ in range(3):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    ctx.set("rst", 0)
    for p in range(1 << RX_LOG2):
        buf = HBASE + RXBUF + p * RXBUF_LEN
        host.write(HBASE + RXRING + 16 * p, buf.to_bytes(8, "little") +
                   RXBUF_LEN.to_bytes(2, "little") + bytes(6))
        host.write(HBASE + RXCPL + 16 * p + 4, b"\xff")

    S_tx, S_rx = 1 << TX_LOG2, 1 << RX_LOG2
    tx_prod, tx_rung, tx_next, prep = [0] * NQ, [0] * NQ, [0] * NQ, [None] * NQ
    tx_alloc = TXBUF
    rx_prod, rx_rung, rx_ci, rx_seen = 0, 0, 0, 0
    reads = deque()
    t_last = 0
    wcur = loop = mac_id = done_at = None
    ndescs = 0
    db_rr = 0

    def wb(q):
        return int.from_bytes(host.read(HBASE + WB + 16 * q, 2), "little")

    for cyc in range(max_cycles):
        if cyc < NQ:
            q = cyc
            setp("txq_", cfg_valid=1, cfg_queue=q, cfg_size_log2=TX_LOG2, cfg_enable=1,
                 cfg_limit=64)
            setp("txe_", base_valid=1, base_queue=q, base_addr=HBASE + TXRING + 4096 * q)
            setp("txq_", wb_addr_valid=1, wb_addr_queue=q, wb_addr=HBASE + WB + 16 * q)
        elif cyc == NQ:
            setp("txq_", cfg_valid=0, wb_addr_valid=0)
            setp("txe_", base_valid=0)
            setp("rxe_", enable=1)
        # -- driver: TX
        db = None
        if cyc > NQ:
            for q in range(NQ):
                cons = wb(q)
                while tx_next[q] < nframes:
                    s = tx_next[q]
                    data = frames[q, s]
                    if prep[q] is not None:
                        descs = prep[q]
                    else:
                        cuts = sorted(rng.sample(range(1, len(data)),
                                                 rng.randint(1, max_frags) - 1))
                        descs = []
                        for lo, hi in zip([0] + cuts, cuts + [len(data)]):
                            addr = HBASE + tx_alloc + rng.randrange(16)
                            host.write(addr, data[lo:hi])
                            descs.append((addr, hi - lo))
                            tx_alloc += (hi - lo + 31) & ~15
                    prep[q] = descs
                    if (tx_prod[q] - cons) % S_tx + len(descs) > S_tx - 1:
                        break
                    for k, (addr, ln) in enumerate(descs):
                        host.write(HBASE + TXRING + 4096 * q + 16 * tx_prod[q],
                                   addr.to_bytes(8, "little") + ln.to_bytes(2, "little") +
                                   int(k == len(descs) - 1).to_bytes(2, "little") + bytes(4))
                        tx_prod[q] = (tx_prod[q] + 1) % S_tx
                    tx_next[q] += 1
                    ndescs += len(descs)
                    prep[q] = None
            for k in range(NQ):
                q = (db_rr + k) % NQ
                if tx_rung[q] != tx_prod[q]:
                    db, db_rr = q, q + 1
                    break
        ctx.set("txq_db_valid", db is not None)
        if db is not None:
            ctx.set("txq_db_queue", db)
            ctx.set("txq_db_index", tx_prod[db])
            tx_rung[db] = tx_prod[db]
        # -- driver: RX
        if cyc > NQ:
            while True:
                rec = host.read(HBASE + RXCPL + 16 * rx_ci, 16)
                if rec[4] == 0xFF:
                    break
                ln = int.from_bytes(rec[0:2], "little")
                idx = int.from_bytes(rec[2:4], "little")
                assert rec[4] == 0, f"cycle {cyc}: RX completion status {rec[4]}"
                assert idx == rx_seen % S_rx, f"cycle {cyc}: RX completion index {idx}"
                rx.append(host.read(HBASE + RXBUF + idx * RXBUF_LEN, ln))
                host.write(HBASE + RXCPL + 16 * rx_ci + 4, b"\xff")
                rx_ci = (rx_ci + 1) % S_rx
                rx_seen += 1
            while (rx_prod - rx_seen) % S_rx < S_rx - 1:
                rx_prod = (rx_prod + 1) % S_rx
        rdb = cyc > NQ and rx_rung != rx_prod
        ctx.set("rxe_db_valid", rdb)
        if rdb:
            ctx.set("rxe_db_index", rx_prod)
            rx_rung = rx_prod
        # -- host DMA read
        rrdy = rng.random() < p_req
        ctx.set("rd_req_ready", rrdy)
        cv = bool(reads) and reads[0][0] <= cyc and rng.random() < p_cpl
        ctx.set("rd_cpl_valid", cv)
        if cv:
            ctx.set("rd_cpl_data", reads[0][1])
            ctx.set("rd_cpl_last", reads[0][2])
        ctx.set("rd_cpl_err", 0)
        # -- host DMA write
        wrdy = rng.random() < p_wr
        ctx.set("wr_ready", wrdy)
        # -- MAC loopback
        mrdy = rng.random() < p_mac
        ctx.set("mac_tx_ready", mrdy)
        ctx.set("mac_rx_valid", loop is not None)
        if loop is not None:
            ctx.set("mac_rx_data", loop[0])
            ctx.set("mac_rx_keep", loop[1])
            ctx.set("mac_rx_last", loop[2])
        ctx.set("mac_rx_error", 0)
        loop = None
        # -- sample the outputs (registered or combinational on this cycle's inputs)
        await ReadOnly()
        if rrdy and ctx.get("rd_req_valid"):
            addr, ln = ctx.get("rd_req_addr"), ctx.get("rd_req_len")
            assert addr % 16 == 0 and ln % 16 == 0 and 16 <= ln <= 512, (cyc, hex(addr), ln)
            assert addr // 4096 == (addr + ln - 1) // 4096, (cyc, hex(addr), ln)
            t_last = max(t_last, cyc + 1 + rng.randrange(max_lat))
            raw = host.read(addr, ln)
            nb = ln // B
            for k in range(nb):
                reads.append((t_last, int.from_bytes(raw[k * B:k * B + B], "little"),
                              int(k == nb - 1)))
        if cv and ctx.get("rd_cpl_ready"):
            reads.popleft()
        wr = None
        if wrdy and ctx.get("wr_valid"):
            wr = (ctx.get("wr_first"), ctx.get("wr_addr"), ctx.get("wr_len"),
                  ctx.get("wr_data"), ctx.get("wr_last"))
        mac = None
        if mrdy and ctx.get("mac_tx_valid"):
            mac = (ctx.get("mac_tx_data"), ctx.get("mac_tx_keep"), ctx.get("mac_tx_last"))
        await FallingEdge(dut.clk)                   # the rising edge ended cycle `cyc`
        if wr is not None:
            first, a, n, d, last = wr
            if first:
                assert wcur is None, f"cycle {cyc}: wr_first inside a write"
                wcur = [a, n, 0]
                assert any(lo <= a and a + n <= hi for lo, hi in allowed), (cyc, hex(a), n)
            assert wcur is not None, f"cycle {cyc}: write beat without wr_first"
            a, n, k = wcur
            nbytes = min(B, n - k * B)
            assert nbytes > 0, f"cycle {cyc}: write longer than wr_len"
            host.write(a + k * B, d.to_bytes(B, "little")[:nbytes])
            wcur[2] += 1
            if last:
                assert wcur[2] * B >= n and (wcur[2] - 1) * B < n, f"cycle {cyc}: wr_last"
                wcur = None
        if mac is not None:
            d, keep, last = mac
            if mac_id is None:
                mac_id = (d & 0xFF, d >> 16 & 0xFFFF)
            loop = (d, keep, last)
            if last:
                mac_id = None
        if done_at is None and len(rx) == len(good) and all(
                wb(q) == tx_prod[q] and tx_next[q] == nframes for q in range(NQ)):
            done_at = cyc
        if done_at is not None and cyc >= done_at + 200:
            break
    else:
        raise AssertionError(f"timeout: {len(rx)} of {len(good)} frames received")

    seen, last_seq = set(), {}
    for i, data in enumerate(rx):
        q, s = data[0], int.from_bytes(data[2:4], "little")
        assert (q, s) in good, f"RX frame {i}: unexpected {(q, s)}"
        assert (q, s) not in seen, f"RX frame {i}: {(q, s)} received twice"
        assert data == frames[q, s], f"RX frame {i}: {(q, s)} corrupted"
        assert s > last_seq.get(q, -1), f"RX frame {i}: queue {q} frame {s} after {last_seq[q]}"
        last_seq[q] = s
        seen.add((q, s))
    assert seen == good
    assert [wb(q) for q in range(NQ)] == tx_prod
    counts = {prefix + name: ctx.get(prefix + name)
              for prefix, (_, _, outs) in EXPOSED.items() for name in outs}
    nbytes = sum(len(frames[k]) for k in good)
    assert counts["txe_frames"] == len(good) and counts["txe_bytes"] == nbytes, counts
    assert counts["rxe_frames"] == len(good) and counts["rxe_bytes"] == nbytes, counts
    assert counts["txfifo_frames_out"] == counts["rxfifo_frames_out"] == len(good), counts
    assert counts["txq_descs_completed"] == ndescs, counts
    assert counts["rdarb_outstanding"] == 0, counts
    for name, v in counts.items():
        if "drop_" in name or name.startswith(("txq_err", "rxe_err", "txe_err")):
            assert v == 0, f"{name} = {v}"
    dut._log.info("%d frames over %d queues received in order, bit-exact, in %d cycles",
                  len(rx), NQ, cyc + 1)
