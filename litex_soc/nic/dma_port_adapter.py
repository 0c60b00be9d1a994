# SPDX-License-Identifier: BSD-2-Clause
#
# dma_port_adapter.py: the NIC cores' DMA ports (rtl/nic/dma_port.py, flat at the NICDatapath
# boundary) on LitePCIe crossbar master ports.
#
# What it is: two Migen/LiteX modules, one per direction, each driving one LitePCIe user master
# port (`endpoint.crossbar.get_master_port(read_only=True)` / `(write_only=True)`), as
# LitePCIeDMAReader / LitePCIeDMAWriter do. Nothing here touches TLPs: LitePCIe's crossbar,
# TLP controller (tags, completion reordering) and packetizer do that.
# Interfaces: DMAReadAdapter: rd_req_*, rd_cpl_* (the core's side) and the counters requests,
# completions, errors, rejected, timeouts, dropped; DMAWriteAdapter: wr_* and the counters
# writes, tlps, rejected; each drives its `port`.
# Parameters: port, data_width (W: 64, 128), req_id (the PHY's id), max_read / max_payload
# (<= 2048), and for the reader timeout (cycles) and max_pending (in-order queue depth).
# The LitePCIe facts relied on, the mappings and the known limits: the docstrings.

"""LitePCIe port facts this relies on (litepcie 2024.12):

- port.source (request_layout): we, adr (the crossbar's address_width, 32 or 64 bits, in
  bytes), len (10 bits, in DWORDS), req_id (the TLP's requester ID: must be the PHY's id), tag
  (overwritten by the controller for reads; 0 for writes as LitePCIeDMAWriter does), dat,
  channel (= port.channel, used to route completions back), user_id (free; a request counter
  here), first/last (one beat for a read; the data beats of a write).
- The packetizer always sends first_be = 0xf and last_be = 0xf (len > 1) / 0x0 (len == 1): only
  DWORD-aligned addresses and whole-DWORD lengths can be expressed, and on a write every beat
  but a len == 1 one is sent with all its byte lanes enabled (a write of n DWORDs must come as
  exactly n*32/W full beats, or the TLP carries more data than its length field). len == 0
  (1024 DWORDs) is mis-handled by the packetizer's last_be logic: lengths are kept <= 2048
  bytes here.
- port.sink (completion_layout): dat, err (completion status != 0), end (this completion TLP is
  the last one of its request: length == byte_count / 4), first/last (one completion TLP), len,
  tag, adr (lower address). LitePCIeTLPController returns completions in request order (a queue
  of tags in issue order; per-tag reorder buffers of 4 * 512 bytes) for all the read ports
  together, so a port sees its own requests' completions in its issue order, each request as
  one or more completion TLPs (RCB splits), the last with end = 1; the first data DWORD of a
  completion is in lane 0.

Parameters (both adapters)
--------------------------
port
    A LitePCIe user master port (LitePCIeMasterPort): read_only for the reader, write_only for
    the writer. Its data width must be data_width (no conversion).
data_width
    W, 64 or 128 (the PHY's data width).
req_id
    Requester ID (int or Signal): in a SoC, `endpoint.phy.id`.
max_read / max_payload
    Largest accepted request in bytes, a multiple of 16, <= 2048 (LitePCIe's PHYs cap MRRS/MPS
    at 512; its reorder buffers hold 2048 bytes a tag).

Known limits
------------
- Byte-granular writes (unaligned address or length) are rejected, not handled (no byte
  enables in LitePCIe's request layout; a realigner + first/last BE would be needed).
- A completion with a non-successful status and no data (UR/CA Cpl: length 0, byte count != 0)
  is not flagged `end` by LitePCIe's depacketizer, so its controller keeps the tag and every
  later read of every port stalls: the timeout only turns this into errors for the core.
- Reads rely on the controller's per-tag buffers (one beat's slice here): rd_cpl_ready low for a
  long time backpressures the PHY's completion path once a tag buffer is full.
- No 4 KiB-crossing check, no data width conversion.
"""

from migen import FSM, Case, If, Mux, NextState, NextValue, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream

__all__ = ["DMAReadAdapter", "DMAWriteAdapter"]


def _counter(module, name, inc):
    """A 32-bit count of `inc`, a cycle late: the event is registered first, so the stream's
    handshake logic behind it ends at one flip-flop."""
    c = Signal(32, name=name)
    q = Signal(name=f"{name}_inc")
    module.sync += [q.eq(inc), If(q, c.eq(c + 1))]
    return c


def _check_common(port, data_width, max_len, what):
    if data_width not in (64, 128):
        raise ValueError(f"data_width must be 64 or 128, not {data_width}")
    if len(port.sink.dat) != data_width:
        raise ValueError(f"port data width {len(port.sink.dat)} != data_width {data_width}")
    if max_len % 16 or not 16 <= max_len <= 2048:
        raise ValueError(f"{what} must be a multiple of 16 in 16..2048, not {max_len}")


def _addr_ok(addr, port_aw):
    """1 when addr (64 bits) is DWORD aligned and fits the port's address width."""
    ok = addr[0:2] == 0
    if port_aw < 64:
        ok = ok & (addr[port_aw:64] == 0)
    return ok


class DMAReadAdapter(LiteXModule):
    """DMAReadAdapter(port, data_width, req_id=0, max_read=512, timeout=2**22, max_pending=16)

    Our side (in/out seen from the adapter):
        rd_req_valid (in), rd_req_ready (out), rd_req_addr (64, in), rd_req_len (13, in, bytes),
        rd_req_desc (in: the read's kind, for the bus analyzer; not used here; port_desc (out)
        is the kind of the request at the port, after the register slice);
        rd_cpl_valid (out), rd_cpl_ready (in), rd_cpl_data (W, out), rd_cpl_last, rd_cpl_err (out).
    Counters (out, 32 bits, wrapping):
        requests (taken on rd_req), completions (requests completed towards the core: last beats),
        errors (of which with rd_cpl_err), rejected (requests refused without a TLP, see below),
        timeouts, dropped (port completion beats thrown away: beyond an overrun request's n beats,
        late data of timed-out requests, beats with no request waiting).

    Request mapping (a valid request -> one port request beat): we = 0, adr = rd_req_addr
    (truncated to the port's address width), len = rd_req_len >> 2 (DWORDS), req_id = req_id, tag
    = 0 (controller's), dat = 0, channel = port.channel, user_id = request count (mod 256), first
    = last = 1.

    A request is REJECTED (not sent; answered locally with ceil(len*8/W) beats, at least 1, of data
    0 and rd_cpl_err on the last) when len == 0, len % 4 != 0, len > max_read, or the address is
    not 4-byte aligned or does not fit the port's address width. The convention (16-byte aligned,
    multiple of 16, <= MRRS, no 4 KiB crossing) is met by the cores; the 4 KiB rule is not checked
    here.

    Completion mapping: every request (sent or rejected) enters an in-order queue with its beat
    count n = ceil(len*8/W); the completions are handed to the core as exactly n beats per request
    whatever the port delivers, so the core's beat accounting never slips:

    - port beats are passed through (rd_cpl_data = dat, backpressure passed back);
    - rd_cpl_err (on the request's last beat) = any port beat of that request had err, or the
      port's request ended early (last & end before n beats: the missing beats are padded with
      data 0), or it had not ended at the n-th beat (the rest of it is dropped), or the request was
      rejected, or it timed out;
    - timeout: no port beat for `timeout` cycles while a sent request is at the head of the queue
      (0: never): the request is completed with padding and err, and the port's data for it,
      should it come later, is dropped (up to its last & end).

    Data correctness needs every completion TLP to be a whole number of W-bit beats: true for
    16-byte aligned requests with W <= 128 and RCB splits (RCB >= 64 bytes).

    max_pending: depth of the in-order queue (>= the crossbar's max_pending_requests, or it
    throttles reads); at most max_pending requests in flight.
    """

    def __init__(self, port, data_width, req_id=0, max_read=512, timeout=2**22, max_pending=16):
        _check_common(port, data_width, max_read, "max_read")
        W, B = data_width, data_width // 8
        shift = B.bit_length() - 1
        self.port = port
        self.data_width = W

        self.rd_req_valid = Signal()
        self.rd_req_ready = Signal()
        self.rd_req_addr = Signal(64)
        self.rd_req_len = Signal(13)
        self.rd_req_desc = Signal()     # the read's kind (bus analyzer only; not used here)
        self.rd_cpl_valid = Signal()
        self.rd_cpl_ready = Signal()
        self.rd_cpl_data = Signal(W)
        self.rd_cpl_last = Signal()
        self.rd_cpl_err = Signal()

        # # #

        req = port.source
        port_aw = len(req.adr)
        nb_w = (4096 // B).bit_length() + 1
        # Completions pass a valid slice first: the controller's reorder buffers are block RAM
        # (clock to output about four LUT levels on the ECP5), read here and in the core
        # behind it in the same cycle otherwise (one cycle more per completion beat).
        self.cpl_buf = cpl_buf = stream.Buffer(port.sink.description, pipe_valid=True)
        self.comb += port.sink.connect(cpl_buf.sink)
        cpl = cpl_buf.source

        # Request side ------------------------------------------------------------------------
        # A register slice (valid and ready registered) first: the cores' request logic and the
        # crossbar's arbitration are then separate paths (one cycle more per read).
        self.req_buf = req_buf = stream.Buffer([("addr", 64), ("len", 13), ("desc", 1)],
                                               pipe_valid=True, pipe_ready=True)
        self.comb += [
            req_buf.sink.valid.eq(self.rd_req_valid),
            self.rd_req_ready.eq(req_buf.sink.ready),
            req_buf.sink.addr.eq(self.rd_req_addr),
            req_buf.sink.len.eq(self.rd_req_len),
            req_buf.sink.desc.eq(self.rd_req_desc),
        ]
        rq = req_buf.source
        # The kind of the request at the port (rd_req_desc, a cycle or more later).
        self.port_desc = rq.desc
        self.queue = queue = stream.SyncFIFO([("nbeats", nb_w), ("rej", 1)], max_pending,
                                             buffered=False)
        length = rq.len
        ok = Signal()
        nbeats = Signal(nb_w)
        self.comb += [
            ok.eq(_addr_ok(rq.addr, port_aw) & (length[0:2] == 0) & (length != 0)
                  & (length <= max_read)),
            nbeats.eq(Mux(length == 0, 1, (length + (B - 1)) >> shift)),
            req.valid.eq(rq.valid & ok & queue.sink.ready),
            rq.ready.eq(queue.sink.ready & (req.ready | ~ok)),
            queue.sink.valid.eq(rq.valid & rq.ready),
            queue.sink.nbeats.eq(nbeats),
            queue.sink.rej.eq(~ok),
            req.first.eq(1),
            req.last.eq(1),
            req.we.eq(0),
            req.adr.eq(rq.addr),
            req.len.eq(length[2:12]),
            req.req_id.eq(req_id),
            req.tag.eq(0),
            req.dat.eq(0),
            req.channel.eq(port.channel),
        ]
        req_taken = Signal()
        self.comb += req_taken.eq(rq.valid & rq.ready)
        user_id = Signal(8)
        self.sync += If(req_taken, user_id.eq(user_id + 1))
        self.comb += req.user_id.eq(user_id)

        # Completion side ---------------------------------------------------------------------
        head = queue.source
        cnt = Signal(nb_w)              # beats handed to the core for the head request
        bad = Signal()                  # head request has an error (so far)
        pad = Signal()                  # head request: the port has nothing more for it
        skip = Signal(8)                # port requests whose remaining beats are to be dropped
        timer = Signal(max=max(timeout, 1) + 1)
        is_last = Signal()
        port_end = Signal()
        drop = Signal()
        fwd = Signal()
        padding = Signal()
        skip_inc = Signal()
        skip_dec = Signal()
        timed_out = Signal()
        self.comb += [
            is_last.eq(cnt == head.nbeats - 1),
            port_end.eq(cpl.last & cpl.end),
            drop.eq(skip != 0),
            padding.eq(head.valid & (head.rej | pad)),
            fwd.eq(head.valid & ~head.rej & ~pad & ~drop),
        ]
        cpl_taken = Signal()
        self.comb += [
            If(padding,
                self.rd_cpl_valid.eq(1),
                self.rd_cpl_data.eq(0),
                self.rd_cpl_last.eq(is_last),
                self.rd_cpl_err.eq(is_last),
            ).Elif(fwd,
                self.rd_cpl_valid.eq(cpl.valid),
                self.rd_cpl_data.eq(cpl.dat),
                self.rd_cpl_last.eq(is_last),
                self.rd_cpl_err.eq(is_last & (bad | cpl.err | ~port_end)),
            ),
            # Port beats: forwarded, dropped (skip), or dropped when no request waits for them.
            If(drop,
                cpl.ready.eq(1),
            ).Elif(fwd,
                cpl.ready.eq(self.rd_cpl_ready),
            ).Elif(~head.valid,
                cpl.ready.eq(1),
            ),
            cpl_taken.eq(self.rd_cpl_valid & self.rd_cpl_ready),
            head.ready.eq(cpl_taken & is_last),
            skip_dec.eq(drop & cpl.valid & port_end),
            # Overrun: the port's request goes on after the core's last beat.
            skip_inc.eq((fwd & cpl_taken & is_last & ~port_end) | timed_out),
        ]
        self.sync += [
            If(cpl_taken,
                If(is_last,
                    cnt.eq(0), bad.eq(0), pad.eq(0),
                ).Else(
                    cnt.eq(cnt + 1),
                    If(fwd,
                        If(cpl.err, bad.eq(1)),
                        # Short: the port's request ended before n beats.
                        If(port_end, pad.eq(1)),
                    ),
                ),
            ),
            skip.eq(skip + skip_inc - skip_dec),
        ]
        if timeout:
            self.comb += timed_out.eq(fwd & ~cpl.valid & (timer == timeout - 1))
            self.sync += [
                If(~fwd | cpl.valid,
                    timer.eq(0),
                ).Else(
                    timer.eq(timer + 1),
                ),
                If(timed_out, pad.eq(1), timer.eq(0)),
            ]

        # Counters ----------------------------------------------------------------------------
        done = Signal()
        self.comb += done.eq(cpl_taken & is_last)
        self.requests = _counter(self, "requests", req_taken)
        self.completions = _counter(self, "completions", done)
        self.errors = _counter(self, "errors", done & self.rd_cpl_err)
        self.rejected = _counter(self, "rejected", req_taken & ~ok)
        self.timeouts = _counter(self, "timeouts", timed_out)
        self.dropped = _counter(self, "dropped", cpl.valid & cpl.ready & (drop | ~head.valid))


class DMAWriteAdapter(LiteXModule):
    """DMAWriteAdapter(port, data_width, req_id=0, max_payload=512)

    Our side:
        wr_valid (in), wr_ready (out), wr_addr (64), wr_len (13, bytes), wr_data (W), wr_first,
        wr_last (in): a write is ceil(wr_len*8/W) beats, addr/len taken on its first beat.
    Counters (out, 32 bits, wrapping):
        writes (writes taken), tlps (MWr requests sent on the port), rejected (writes dropped).

    Mapping of a write of L bytes at A, L = k*(W/8) + 4*r (0 <= r < W/32):

    - k > 0: one request of k beats: we = 1, adr = A, len = k*W/32 DWORDS, dat = wr_data (lane 0
      first, unchanged), first on the first beat, last on the k-th, tag = 0, req_id = req_id,
      channel = port.channel, user_id = write count (mod 256);
    - then r single-DWORD requests (len = 1, first = last = 1) at A + k*(W/8) + 4*i, dat = the
      i-th DWORD of the last input beat shifted to lane 0 (the packetizer only does partial beats
      for len == 1).

    A write is REJECTED (its beats are consumed up to wr_last, nothing sent, rejected += 1) when
    A % 4 != 0, L % 4 != 0, L == 0, L > max_payload, or A does not fit the port's address width.
    MPS and the 4 KiB rule are the core's job (not checked beyond L <= max_payload).
    """

    def __init__(self, port, data_width, req_id=0, max_payload=512):
        _check_common(port, data_width, max_payload, "max_payload")
        W, B = data_width, data_width // 8
        shift = B.bit_length() - 1
        ndw = W // 32
        self.port = port
        self.data_width = W

        self.wr_valid = Signal()
        self.wr_ready = Signal()
        self.wr_addr = Signal(64)
        self.wr_len = Signal(13)
        self.wr_data = Signal(W)
        self.wr_first = Signal()
        self.wr_last = Signal()

        # # #

        # (No slice before the crossbar: the cores and the analyzer's stream count a write as
        # taken by the crossbar when this port takes it, for the ordering of their MSIs and of
        # a CSR read's completion after the writes before it.)
        req = port.source
        port_aw = len(req.adr)
        addr = Signal(64)
        main_beats = Signal(13 - shift + 1)     # k
        tail = Signal(max=ndw)                  # r
        # The beats of the request still to send and whether none was sent: registers, so that
        # first and last are a compare of a register with a constant (last goes on into the
        # crossbar's round robin).
        rem = Signal(13 - shift + 1)
        first = Signal()
        idx = Signal(max=ndw)
        user_id = Signal(8)
        length = self.wr_len
        ok = Signal()
        self.comb += ok.eq(_addr_ok(self.wr_addr, port_aw) & (length[0:2] == 0)
                           & (length != 0) & (length <= max_payload))

        common = [
            req.we.eq(1),
            req.req_id.eq(req_id),
            req.tag.eq(0),
            req.channel.eq(port.channel),
            req.user_id.eq(user_id),
        ]
        self.comb += common

        tlp_sent = Signal()
        write_in = Signal()
        write_bad = Signal()
        self.comb += tlp_sent.eq(req.valid & req.ready & req.last)

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            If(self.wr_valid,
                write_in.eq(1),
                NextValue(addr, self.wr_addr),
                NextValue(main_beats, length >> shift),
                NextValue(rem, length >> shift),
                NextValue(first, 1),
                NextValue(tail, length[2:shift]),
                NextValue(idx, 0),
                If(~ok,
                    write_bad.eq(1),
                    NextState("DROP"),
                ).Elif((length >> shift) != 0,
                    NextState("MAIN"),
                ).Else(
                    NextState("TAIL"),
                ),
            ),
        )
        fsm.act("DROP",
            self.wr_ready.eq(1),
            If(self.wr_valid & self.wr_last,
                NextState("IDLE"),
            ),
        )
        fsm.act("MAIN",
            req.valid.eq(self.wr_valid),
            req.first.eq(first),
            req.last.eq(rem == 1),
            req.adr.eq(addr),
            req.len.eq(main_beats << (shift - 2)),
            req.dat.eq(self.wr_data),
            self.wr_ready.eq(req.ready),
            If(req.valid & req.ready,
                NextValue(rem, rem - 1),
                NextValue(first, 0),
                If(req.last,
                    If(tail != 0,
                        NextState("TAIL"),
                    ).Else(
                        NextValue(user_id, user_id + 1),
                        NextState("IDLE"),
                    ),
                ),
            ),
        )
        dword = Signal(32)
        self.comb += Case(idx, {i: dword.eq(self.wr_data[32 * i:32 * i + 32])
                                for i in range(ndw)})
        tail_last = Signal()
        self.comb += tail_last.eq(idx == tail - 1)
        fsm.act("TAIL",
            req.valid.eq(self.wr_valid),
            req.first.eq(1),
            req.last.eq(1),
            req.adr.eq(addr + (main_beats << shift) + (idx << 2)),
            req.len.eq(1),
            req.dat.eq(dword),
            self.wr_ready.eq(req.ready & tail_last),
            If(req.valid & req.ready,
                NextValue(idx, idx + 1),
                If(tail_last,
                    NextValue(user_id, user_id + 1),
                    NextState("IDLE"),
                ),
            ),
        )

        self.writes = _counter(self, "writes", write_in)
        self.tlps = _counter(self, "tlps", tlp_sent)
        self.rejected = _counter(self, "rejected", write_bad)

