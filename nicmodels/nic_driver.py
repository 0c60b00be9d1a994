# SPDX-License-Identifier: BSD-2-Clause
#
# nic_driver.py: Python model of the host driver sw/lib/nic_queues.c (as Corundum's tb/mqnic.py
# mirrors its C driver), for the amaranth.sim and cocotb testbenches of the NIC datapath.
#
# What it is: the host-memory formats of rtl/contract/formats.py as bytes (encode_*/decode_*:
# the only place a test packs or parses a descriptor, writeback or completion record), and the
# driver's rings over two small interfaces a testbench provides:
#   HostMemory   read(addr, n) -> bytes, write(addr, data)   (the host memory the DMA serves)
#   Registers    write(port, value), strobe(stem, **fields), wait(cond, what): the datapath's
#                registers by its flat port names (rtl/nic/nic_datapath.py; the nic_* CSRs of
#                litex_soc/nic/nic_datapath_csr.py are built from them): a strobe sets
#                `<stem>_<field>` and pulses `<stem>_valid`; wait(cond) holds the operations
#                after it until cond(read) is true. PortRegisters implements it for per-cycle
#                testbenches: operations are queued and step(set, get), once per cycle, applies
#                one (a register write is one bus access), as nic_queues.c's MMIO writes.
# Rings: TxRing (post a frame's buffers as descriptors, EOP on the last; one doorbell per
# batch, at frame boundaries; reclaim from the consumer-index writeback), RxRing (buffer p at
# ring position p, posted at open; poll completion records, refill with one doorbell);
# NicDriver.open() sets the FIFOs, coalescing and scheduler up as nic_q_open() does.
# Never imported by gateware.

from collections import deque, namedtuple

from rtl.contract.coalesce import CONFIG
from rtl.contract.formats import (RECORD_BYTES, RX_CPL, RX_DESC, TX_DESC, TX_WB, RxStatus,
                                  TxDescFlags)

RX_STATUS_FREE = 0xFF        # nic_queues.h NIC_Q_RX_STATUS_FREE: a record not written yet

_RECORDS = {}


def _record(layout):
    if id(layout) not in _RECORDS:
        _RECORDS[id(layout)] = namedtuple("Record", [name for name, _f in layout])
    return _RECORDS[id(layout)]


def encode(layout, **values):
    """The bytes of a record of `layout` (every field 0 unless given; ValueError when a value
    does not fit its field)."""
    fields = dict(layout)
    bits = 0
    for name, v in values.items():
        if name not in fields:
            raise ValueError(f"no field {name!r} (fields: {', '.join(fields)})")
        f = fields[name]
        v = int(v)
        if not 0 <= v < 1 << f.width:
            raise ValueError(f"{name}={v} does not fit {f.width} bits")
        bits |= v << f.offset
    return bits.to_bytes(layout.size // 8, "little")


def decode(layout, raw):
    """A namedtuple of the fields of `raw` (enum fields as their enum when the value is one)."""
    if len(raw) != layout.size // 8:
        raise ValueError(f"{len(raw)} bytes, the record has {layout.size // 8}")
    bits = int.from_bytes(raw, "little")
    out = []
    for _name, f in layout:
        v = bits >> f.offset & ((1 << f.width) - 1)
        if isinstance(f.shape, type):
            try:
                v = f.shape(v)
            except ValueError:
                pass
        out.append(v)
    return _record(layout)(*out)


def field_span(layout, name):
    """(byte offset, bytes) of a field."""
    f = dict(layout)[name]
    return f.offset // 8, f.width // 8


def encode_tx_desc(addr, length, eop=True, reserved=0):
    return encode(TX_DESC, addr=addr, len=length, flags=TxDescFlags.EOP if eop else 0,
                  reserved=reserved)


def decode_tx_desc(raw):
    return decode(TX_DESC, raw)


def tx_desc_eop(desc):
    return bool(desc.flags & TxDescFlags.EOP)


def encode_tx_wb(cons, errors=0, last_error=0):
    return encode(TX_WB, cons=cons, errors=errors, last_error=last_error)


def decode_tx_wb(raw):
    return decode(TX_WB, raw).cons


def decode_tx_wb_errors(raw):
    """(errors, last_error) of a TX_WB record: the queue's errored frames (16 bits, wrapping)
    and its latest error's TxStatus."""
    w = decode(TX_WB, raw)
    return w.errors, w.last_error


def encode_rx_desc(addr, length, reserved=0):
    return encode(RX_DESC, addr=addr, len=length, reserved=reserved)


def decode_rx_desc(raw):
    return decode(RX_DESC, raw)


def encode_rx_cpl(length, index, status, timestamp=0, queue=0):
    return encode(RX_CPL, len=length, index=index, status=status, queue=queue,
                  timestamp=timestamp)


def decode_rx_cpl(raw):
    return decode(RX_CPL, raw)


# -- register access ---------------------------------------------------------------------------

class PortRegisters:
    """Registers as the datapath's ports, for a testbench stepped once per cycle: write(),
    strobe() and wait() queue operations; step(set, get), called once per cycle while the inputs
    are being set (set(port, value), get(port) -> int), applies the next one (a write or a
    strobe takes a cycle, a satisfied wait none; a strobe's valid drops in the next step).
    timeout: cycles a wait may block (AssertionError after)."""

    def __init__(self, timeout=100_000):
        self.ops = deque()
        self.timeout = timeout
        self._pulse = None
        self._waited = 0

    def write(self, port, value):
        self.ops.append(("write", port, int(value)))

    def strobe(self, stem, **fields):
        self.ops.append(("strobe", stem, {k: int(v) for k, v in fields.items()}))

    def wait(self, cond, what):
        self.ops.append(("wait", cond, what))

    def idle(self):
        return not self.ops and self._pulse is None

    def step(self, set_, get):
        if self._pulse is not None:
            set_(self._pulse + "_valid", 0)
            self._pulse = None
        while self.ops:
            kind, a, b = self.ops[0]
            if kind == "wait":
                if not a(get):
                    self._waited += 1
                    if self._waited > self.timeout:
                        raise AssertionError(f"driver: timeout waiting for {b}")
                    return
                self._waited = 0
                self.ops.popleft()
                continue
            self.ops.popleft()
            if kind == "write":
                set_(a, b)
            else:
                for field, v in b.items():
                    set_(f"{a}_{field}", v)
                set_(a + "_valid", 1)
                self._pulse = a
            return


# -- rings -------------------------------------------------------------------------------------

RxFrame = namedtuple("RxFrame", "data len index status timestamp")


class TxRing:
    """TX queue `queue`: `size` descriptors at ring_base, consumer-index writeback at wb_addr
    (nic_q_open, nic_q_tx_send, nic_q_tx_reclaim)."""

    def __init__(self, mem, regs, queue, ring_base, wb_addr, size_log2, limit=0):
        self.mem, self.regs, self.queue = mem, regs, queue
        self.ring_base, self.wb_addr = ring_base, wb_addr
        self.size_log2, self.size = size_log2, 1 << size_log2
        self.limit = limit or self.size - 1
        self.next_to_use = 0               # producer index
        self.next_to_clean = 0             # consumer index as last read from the writeback
        self.rung = 0                      # producer index of the last doorbell
        self.frames = self.descs = self.doorbells = 0

    def _cfg(self, enable):
        self.regs.strobe("txq_cfg", queue=self.queue, size_log2=self.size_log2,
                         enable=enable, limit=self.limit)

    def _wait_drained(self):
        q = self.queue
        self.regs.wait(lambda get: get("txq_drained") >> q & 1, f"TX queue {q} drained")

    def open(self):
        """Disable (a drained queue is reset by it), wait drained, ring base, writeback
        address, enable."""
        self.mem.write(self.wb_addr, encode_tx_wb(0))
        self._cfg(0)
        self._wait_drained()
        self.regs.write("txe_base_addr", self.ring_base)
        self.regs.strobe("txe_base", queue=self.queue)
        self.regs.write("txq_wb_addr", self.wb_addr)
        self.regs.strobe("txq_wb_addr", queue=self.queue)
        self._cfg(1)

    def close(self):
        self._cfg(0)
        self._wait_drained()

    def set_limit(self, limit):
        self.limit = limit
        self._cfg(1)

    def pending(self):
        return (self.next_to_use - self.next_to_clean) % self.size

    def room(self):
        return self.size - 1 - self.pending()

    def post(self, frags):
        """Post one frame: its buffers [(addr, len), ...] as descriptors, EOP on the last.
        False (nothing posted) if the ring has not room for all of them."""
        if not frags or len(frags) > self.room():
            return False
        for k, (addr, length) in enumerate(frags):
            self.mem.write(self.ring_base + RECORD_BYTES * self.next_to_use,
                           encode_tx_desc(addr, length, eop=k == len(frags) - 1))
            self.next_to_use = (self.next_to_use + 1) % self.size
        self.frames += 1
        self.descs += len(frags)
        return True

    def doorbell(self):
        """One doorbell for everything posted since the last (none if nothing was)."""
        if self.rung != self.next_to_use:
            self.regs.strobe("txq_db", queue=self.queue, index=self.next_to_use)
            self.rung = self.next_to_use
            self.doorbells += 1

    def written_back(self):
        return decode_tx_wb(self.mem.read(self.wb_addr, TX_WB.size // 8)) % self.size

    def written_back_errors(self):
        """(errored frames, latest error's TxStatus) the last writeback carried."""
        return decode_tx_wb_errors(self.mem.read(self.wb_addr, TX_WB.size // 8))

    def reclaim(self):
        """Descriptors completed since the last reclaim, from the writeback in host memory."""
        cons = self.written_back()
        done = (cons - self.next_to_clean) % self.size
        if done > self.pending():
            raise AssertionError(f"TX queue {self.queue}: written-back consumer index {cons} "
                                 f"beyond the {self.pending()} descriptors posted from "
                                 f"{self.next_to_clean}")
        self.next_to_clean = cons
        return done


class RxRing:
    """The RX ring: `size` descriptors at ring_base, completion records at cpl_base, the buffer
    of ring position p at buf_base + p * buf_stride, buf_len bytes (nic_q_open, nic_q_rx_poll,
    nic_q_rx_refill)."""

    def __init__(self, mem, regs, ring_base, cpl_base, buf_base, buf_len, size_log2,
                 buf_stride=None):
        self.mem, self.regs = mem, regs
        self.ring_base, self.cpl_base, self.buf_base = ring_base, cpl_base, buf_base
        self.buf_len, self.buf_stride = buf_len, buf_stride or buf_len
        self.size_log2, self.size = size_log2, 1 << size_log2
        self.prod = 0                      # producer index of the last doorbell
        self.next_cpl = 0
        self.to_repost = 0
        self.frames = self.bad_status = self.doorbells = 0

    def buf(self, p):
        return self.buf_base + p * self.buf_stride

    def open(self):
        """Disable (the engine resets its ring when idle), wait for cons 0, configure, post
        every buffer but one (a ring holds S - 1), enable, one doorbell."""
        self.regs.write("rxe_enable", 0)
        self.regs.wait(lambda get: get("rxe_cons") == 0, "RX ring reset (rxe_cons 0)")
        self.regs.write("rxe_ring_base", self.ring_base)
        self.regs.write("rxe_ring_size_log2", self.size_log2)
        self.regs.write("rxe_cpl_base", self.cpl_base)
        st_off, _ = field_span(RX_CPL, "status")
        for p in range(self.size):
            self.mem.write(self.ring_base + RECORD_BYTES * p,
                           encode_rx_desc(self.buf(p), (self.buf_len + 3) & ~3))
            self.mem.write(self.cpl_base + RECORD_BYTES * p + st_off, bytes([RX_STATUS_FREE]))
        self.regs.write("rxe_enable", 1)
        self.prod = self.size - 1
        self.regs.strobe("rxe_db", index=self.prod)
        self.doorbells += 1

    def close(self):
        self.regs.write("rxe_enable", 0)

    def poll(self, max_frames=None):
        """New completion records, in ring order (RxFrame: the frame's bytes for status OK)."""
        out = []
        st_off, _ = field_span(RX_CPL, "status")
        while max_frames is None or len(out) < max_frames:
            addr = self.cpl_base + RECORD_BYTES * self.next_cpl
            rec = decode_rx_cpl(self.mem.read(addr, RX_CPL.size // 8))
            if rec.status == RX_STATUS_FREE:
                break
            idx = rec.index % self.size
            # Positions up to idx are consumed (descriptors skipped after a read error have no
            # record): they are all to be reposted.
            expect = (self.prod + 1 + self.to_repost) % self.size
            self.to_repost += (idx - expect) % self.size + 1
            data = self.mem.read(self.buf(idx), rec.len) if rec.status == RxStatus.OK else b""
            out.append(RxFrame(data, rec.len, idx, rec.status, rec.timestamp))
            self.mem.write(addr + st_off, bytes([RX_STATUS_FREE]))
            self.next_cpl = (self.next_cpl + 1) % self.size
            self.frames += 1
            self.bad_status += rec.status != RxStatus.OK
        return out

    def refill(self):
        """Repost the buffers of every frame polled so far: one doorbell. Returns how many."""
        n = self.to_repost
        if n:
            self.prod = (self.prod + n) % self.size
            self.to_repost = 0
            self.regs.strobe("rxe_db", index=self.prod)
            self.doorbells += 1
        return n


def coalesce(frames=1, usecs=0, abs_usecs=0, min_interval=0, tick_cycles=1, enable=1):
    """An interrupt coalescing setting (nic_q_coalesce: one per direction)."""
    return dict(enable=enable, frames=frames, usecs=usecs, abs_usecs=abs_usecs,
                min_interval=min_interval, tick_cycles=tick_cycles)


class NicDriver:
    """The datapath's set-up (nic_q_open): FIFOs, coalescing, scheduler, then the rings.
    tx_rings / rx_ring: TxRing and RxRing objects on the same memory and registers."""

    def __init__(self, regs, tx_rings, rx_ring, frame_max=9216):
        self.regs, self.tx, self.rx = regs, list(tx_rings), rx_ring
        self.frame_max = frame_max

    def set_coalesce(self, tx=None, rx=None):
        """Disable while changing, so no half-written setting raises an interrupt."""
        for prefix, c in (("rxirq_", rx), ("txirq_", tx)):
            c = c or coalesce()
            self.regs.write(prefix + "enable", 0)
            for name in ("tick_cycles",) + tuple(n for n in CONFIG if n != "tick_cycles"):
                self.regs.write(prefix + name, c[name])
            self.regs.write(prefix + "enable", c["enable"])

    def open(self, tx_coalesce=None, rx_coalesce=None, sched_mode=0, prio=0, weight=None):
        r = self.regs
        r.write("txfifo_max_len", self.frame_max)
        r.write("txfifo_min_len", 0)
        r.write("txfifo_enable", 1)
        r.write("rxfifo_max_len", self.rx.buf_len)
        r.write("rxfifo_min_len", 0)
        r.write("rxfifo_enable", 1)
        self.set_coalesce(tx_coalesce, rx_coalesce)
        r.write("tx_sched_mode", sched_mode)
        r.write("tx_sched_prio", prio)
        if weight is None:
            weight = sum(1 << 8 * t.queue for t in self.tx)
        r.write("tx_sched_weight", weight)
        for t in self.tx:
            t.open()
        self.rx.open()

    def close(self):
        for t in self.tx:
            t.close()
        self.rx.close()
