# SPDX-License-Identifier: BSD-2-Clause
#
# loopback_host.py: the host side of the NIC datapath's full-loopback tests, shared by the
# amaranth.sim test (rtl/nic/test_nic_datapath.py) and the cocotb testbench
# (cocotb_tests/tb_nic_datapath.py): host memory and its address map, the frames, the regions
# the NIC may write, the driver's rings over that map (nic_driver.py) and the driver's TX loop.
#
# Interfaces: Host() (read(addr, n), write(addr, data) over MEMSIZE bytes at HBASE); the map
# HBASE + TXRING / WB / RXRING / RXCPL / RXBUF / TXBUF, TX_LOG2, RX_LOG2, NQ;
# make_frames(rng, nframes, nq) -> {(queue, seq): bytes}; writable(nq) -> [(lo, hi)];
# rings(host, regs, nq) -> (TX rings, RX ring); TxPoster(host, rings, frames, nframes, rng,
# max_frags, bad): .step() once a cycle, .done(), .ndescs.
# Never imported by gateware.

from nicmodels.nic_driver import RxRing, TxRing

HBASE = 0x5A3C_7E00_0000_0000
MEMSIZE = 4 << 20
TXRING = 0x0000                  # queue q's ring at TXRING + q * 4096
WB = 0x8000                      # queue q's writeback at WB + 16 * q
RXRING = 0x9000
RXCPL = 0xA000
RXBUF = 0x10000                  # RX buffer of ring position p at RXBUF + p * RXBUF_LEN
RXBUF_LEN = 2048
TXBUF = 0x100000                 # TX payloads, bump-allocated
TX_LOG2, RX_LOG2 = 5, 6
NQ = 4


class Host:
    def __init__(self):
        self.mem = bytearray(MEMSIZE)

    def write(self, addr, data):
        off = addr - HBASE
        assert 0 <= off and off + len(data) <= MEMSIZE, hex(addr)
        self.mem[off:off + len(data)] = data

    def read(self, addr, n):
        off = addr - HBASE
        assert 0 <= off and off + n <= MEMSIZE, hex(addr)
        return bytes(self.mem[off:off + n])


def make_frames(rng, nframes, nq=NQ):
    """nframes frames per queue of random size 60..1514: bytes 0..1 the queue, 2..3 the
    sequence number, then random."""
    frames = {}
    for q in range(nq):
        for s in range(nframes):
            n = rng.randint(60, 1514)
            frames[q, s] = bytes([q, 0]) + s.to_bytes(2, "little") + rng.randbytes(n - 4)
    return frames


def writable(nq=NQ):
    """The host regions the NIC may write: the TX writebacks, the RX completion records and the
    RX buffers."""
    return [(HBASE + WB, HBASE + WB + 16 * nq),
            (HBASE + RXCPL, HBASE + RXCPL + (16 << RX_LOG2)),
            (HBASE + RXBUF, HBASE + RXBUF + (RXBUF_LEN << RX_LOG2))]


def rings(host, regs, nq=NQ):
    """The driver's nq TX rings (limit 64) and its RX ring over the address map."""
    txr = [TxRing(host, regs, q, HBASE + TXRING + 4096 * q, HBASE + WB + 16 * q, TX_LOG2,
                  limit=64) for q in range(nq)]
    rxr = RxRing(host, regs, HBASE + RXRING, HBASE + RXCPL, HBASE + RXBUF, RXBUF_LEN, RX_LOG2)
    return txr, rxr


class TxPoster:
    """The driver's TX side, one step a cycle: frames[q, s] for s < nframes posted on ring q in
    order as ring space frees up (reclaimed from the consumer-index writebacks), one doorbell per
    ring and step. Each frame is cut into 1..max_frags descriptors (random cuts), each buffer at
    a random byte offset 0..15 in a bump-allocated payload area at TXBUF; a frame in `bad`
    ((queue, seq)) is posted as one zero-length descriptor instead."""

    def __init__(self, host, rings, frames, nframes, rng, max_frags=1, bad=()):
        self.host, self.rings, self.frames, self.nframes = host, rings, frames, nframes
        self.rng, self.max_frags, self.bad = rng, max_frags, bad
        self.next = [0] * len(rings)                     # next frame to post, per queue
        self.prep = [None] * len(rings)                  # its descriptors, once prepared
        self.alloc = TXBUF
        self.ndescs = 0                                  # descriptors posted

    def _prepare(self, q, s):
        if (q, s) in self.bad:
            return [(HBASE + self.alloc, 0)]
        rng, data = self.rng, self.frames[q, s]
        cuts = sorted(rng.sample(range(1, len(data)), rng.randint(1, self.max_frags) - 1))
        descs = []
        for lo, hi in zip([0] + cuts, cuts + [len(data)]):
            addr = HBASE + self.alloc + rng.randrange(16)
            self.host.write(addr, data[lo:hi])
            descs.append((addr, hi - lo))
            self.alloc += (hi - lo + 31) & ~15
        return descs

    def step(self):
        for q, t in enumerate(self.rings):
            t.reclaim()
            while self.next[q] < self.nframes:
                if self.prep[q] is None:
                    self.prep[q] = self._prepare(q, self.next[q])
                if not t.post(self.prep[q]):
                    break
                self.next[q] += 1
                self.ndescs += len(self.prep[q])
                self.prep[q] = None
            t.doorbell()

    def done(self):
        """Every frame posted and every ring written back up to its producer index."""
        return all(t.written_back() == t.next_to_use and self.next[q] == self.nframes
                   for q, t in enumerate(self.rings))
