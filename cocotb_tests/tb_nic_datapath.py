# SPDX-License-Identifier: BSD-2-Clause
#
# tb_nic_datapath.py: cocotb testbench of the emitted Verilog of rtl/nic/nic_datapath.py
# (NICDatapath), run by cocotb_tests/test_nic_datapath.py.
#
# What it is: the host of rtl/nic/test_nic_datapath.py as a cocotb coroutine, one loop iteration
# per cycle: host memory, an in-order DMA read responder, a checking write sink, a MAC loopback
# and the driver model of sw/lib/nic_queues.c (nicmodels/nic_driver.py) on 4 TX rings and the RX
# ring, posting frames with the TX loop the amaranth.sim test uses too
# (nicmodels/loopback_host.py; the docstring has the details). Checks: every frame received
# exactly once, bit-exact, each queue's frames in order; the writebacks end at the producer
# indexes; frame/byte counters; no error or drop counter moved. Interrupts are
# tb_irq_coalescer.py's.
# Interfaces: the core's ports by their names (rtl/nic/nic_datapath.py EXPOSED).
# Parameters (environment, JSON): NIC_CFG = {seed, nframes (per queue), max_frags,
# data_width (as the emitted core)}.

"""The host, cycle by cycle.

Inputs are set and outputs sampled at the falling edge, the rising edge ending the cycle. Host
memory is nicmodels/loopback_host.py's Host class and address map, as in the amaranth.sim test
(rtl/nic/test_nic_datapath.py); the DMA read responder (rd_*) answers in order with random
latency and gaps; the write sink (wr_*) back-pressures at random and checks that every write
lands in a region the NIC may write; the MAC loopback feeds mac_tx to mac_rx one cycle later,
with random mac_tx_ready gaps. The driver model's register writes are applied one per cycle: 4
TX rings filled (loopback_host.TxPoster) with frames of 60..1514 bytes (bytes 0..1 queue, 2..3
sequence number) in 1..max_frags descriptors at random alignments as ring space frees up from
the consumer-index writebacks, one doorbell per batch; RX buffers posted and reposted as
completion records come in. The interrupt check of the amaranth.sim test needs internal event
signals that are not ports, so the interrupts are exercised by tb_irq_coalescer.py.
"""

import random
from collections import deque

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge

from cocotb_tests.cocotb_run import env_params
from nicmodels.loopback_host import NQ, RX_LOG2, Host, TxPoster, make_frames, rings, writable
from nicmodels.nic_driver import NicDriver, PortRegisters, coalesce
from rtl.contract.formats import RxStatus
from rtl.nic.nic_datapath import EXPOSED


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

    frames = make_frames(rng, nframes)          # bytes 0..1 queue, 2..3 sequence number
    good = set(frames)
    allowed = writable()

    cocotb.start_soon(Clock(dut.clk, 8, units="ns").start())
    ctx.set("rst", 1)
    for name in ("txq_db_valid", "rxe_db_valid", "rd_cpl_valid", "mac_rx_valid", "rxe_enable",
                 "txq_cfg_valid", "txe_base_valid", "txq_wb_addr_valid", "rd_req_ready",
                 "wr_ready", "mac_tx_ready"):
        ctx.set(name, 0)
    ctx.set("irq_ready", 3)
    for _ in range(3):
        await RisingEdge(dut.clk)
    await FallingEdge(dut.clk)
    ctx.set("rst", 0)

    # the driver (nicmodels/nic_driver.py, as sw/lib/nic_queues.c)
    regs = PortRegisters()
    txr, rxr = rings(host, regs)
    NicDriver(regs, txr, rxr).open(tx_coalesce=coalesce(), rx_coalesce=coalesce())
    tx = TxPoster(host, txr, frames, nframes, rng, max_frags=max_frags)

    S_rx = 1 << RX_LOG2
    rx_seen = 0
    reads = deque()
    t_last = 0
    wcur = loop = mac_id = done_at = None

    for cyc in range(max_cycles):
        # -- driver: TX (frames posted as ring space frees up, one doorbell per batch)
        tx.step()
        # -- driver: RX (completion records polled, buffers reposted: one doorbell)
        for f in rxr.poll():
            assert f.status == RxStatus.OK, f"cycle {cyc}: RX completion status {f.status}"
            assert f.index == rx_seen % S_rx, f"cycle {cyc}: RX completion index {f.index}"
            rx.append(f.data)
            rx_seen += 1
        rxr.refill()
        regs.step(ctx.set, ctx.get)                  # one register write per cycle
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
        if done_at is None and len(rx) == len(good) and tx.done():
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
    assert [t.written_back() for t in txr] == [t.next_to_use for t in txr]
    counts = {prefix + name: ctx.get(prefix + name)
              for prefix, (_, _, outs) in EXPOSED.items() for name in outs}
    nbytes = sum(len(frames[k]) for k in good)
    assert counts["txe_frames"] == len(good) and counts["txe_bytes"] == nbytes, counts
    assert counts["rxe_frames"] == len(good) and counts["rxe_bytes"] == nbytes, counts
    assert counts["txfifo_frames_out"] == counts["rxfifo_frames_out"] == len(good), counts
    assert counts["txq_descs_completed"] == tx.ndescs, counts
    assert counts["rdarb_outstanding"] == 0, counts
    for name, v in counts.items():
        if "drop_" in name or name.startswith(("txq_err", "rxe_err", "txe_err")):
            assert v == 0, f"{name} = {v}"
    dut._log.info("%d frames over %d queues received in order, bit-exact, in %d cycles",
                  len(rx), NQ, cyc + 1)
