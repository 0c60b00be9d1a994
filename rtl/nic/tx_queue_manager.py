# SPDX-License-Identifier: BSD-2-Clause
#
# tx_queue_manager.py: per-queue TX descriptor ring state (e1000/Corundum-style rings in host
# memory): doorbells in, fetch jobs out, completions in, consumer-index writebacks out.
#
# Interfaces: cfg_* (queue set-up, a strobe), db_* (doorbells, a strobe), active (to
# TXScheduler), grant_valid/grant_queue/grant_ready (the scheduler's grant: plain ports), job
# (stream out, to TXEngine), cpl (stream in, from TXEngine; always_ready), wb (stream out:
# consumer-index writebacks), drained, db_range_err; the counters COUNTS
# (rtl/contract/registers.py); the layouts job_layout, cpl_layout, wb_layout.
# Parameters: nqueues (1..64), max_batch (descriptors per job, 1..4096).
# Behaviour, to the cycle: TXQueueManager's docstring.

from amaranth import Array, Cat, Const, Module, Mux, Signal, signed
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from ..contract import registers
from .least import least
from .tx_scheduler import MAX_QUEUES, first_set

SIZE_LOG2_MAX = 12
POS_BITS = 12                     # ring positions 0..4095
CNT_BITS = 13                     # descriptor counts 0..4096
LIMIT_MAX = 4096
COUNTS = registers.counter_names("tx_queue_manager")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def queue_bits(nqueues):
    """Width of a TX queue number."""
    return max(1, ceil_log2(nqueues))


def job_layout(nqueues, max_batch):
    """A fetch job: descriptors index .. index + count - 1 of ring `queue`."""
    return data.StructLayout({"queue": queue_bits(nqueues), "index": POS_BITS,
                              "count": max_batch.bit_length()})


def cpl_layout(nqueues):
    """A completion, from the TX engine: the next `count` descriptors of ring `queue` are done.
    Here with the job, as the queue manager's ring accounting (tx_engine imports both; the
    other way round the imports would be circular)."""
    return data.StructLayout({"queue": queue_bits(nqueues), "count": CNT_BITS})


def wb_layout(nqueues):
    """A consumer-index writeback request: write `cons` of ring `queue` to host memory."""
    return data.StructLayout({"queue": queue_bits(nqueues), "cons": POS_BITS})


class TXQueueManager(wiring.Component):
    """The TX queue manager, in front of rtl/nic/tx_scheduler.py.

    The driver posts descriptors by writing a ring position through a doorbell (the producer
    index, `prod`); this core computes which queues may be fetched from (`active`, to the
    scheduler), turns each scheduler grant into one fetch job (a run of consecutive descriptors of
    one queue) for the descriptor-fetch DMA, takes in-order completions from the TX engine and asks
    for the queue's new consumer index to be written back to host memory. It does no DMA itself.

    Ring state
    ----------
    Per queue q (flip-flops; nqueues <= 64):

    size_log2
        Ring of S = 2**size_log2 descriptors, 0..12.
    enable
        Fetching allowed.
    limit
        Descriptors in flight at most (1..4096; written as 0 it is kept as 1).
    prod
        The driver's producer index, a ring position 0..S-1 (12 bits).
    fetch
        The next descriptor to fetch, a ring position 0..S-1 (12 bits).
    in_flight
        Descriptors fetched (job created) and not yet completed, a counter 0..4096 (13 bits).
        cons, the next descriptor to complete, is not stored: it is (fetch - in_flight) mod S.
    waiting, to_wrap, room
        Kept with the pointers (not computed from them each cycle, so that a job's count is
        two compares from the registers): (prod - fetch) mod S, S - fetch and limit - in_flight
        (negative while a lowered limit is below in_flight).

    Ring positions are kept mod S, as the e1000 does: the descriptors waiting to be fetched are
    waiting = (prod - fetch) mod S, so prod == fetch is empty and a ring holds at most S - 1 posted
    descriptors (a ring of 1 never has one; its only legal doorbell is 0, a no-op). The core trusts
    the driver not to post over descriptors that have not completed (prod - cons mod S <= S - 1):
    it sees ring positions only, so it cannot tell a full lap from none::

        active[q] = enable & (prod != fetch) & (in_flight < limit)

    Cycles
    ------
    Every port is decided from the registers at the start of the cycle (none sees another port's
    effect of the same cycle) and takes effect at the clock edge, so in cycle t+1 the state and
    `active` reflect everything accepted in cycle t. A doorbell (prod), a config write (enable,
    limit) and a completion (in_flight -) of the same queue in the same cycle all take effect, and
    so do a job creation (fetch, in_flight +) and a completion; no grant of a queue is taken in a
    cycle with a doorbell or a config write of that queue. A queue reset (below) cannot coincide
    with any of the others: it needs the queue drained, and then doorbells are refused, no grant is
    accepted and only a completion of 0 descriptors is legal.

    Ports
    -----
    q: queue number, max(1, ceil(log2(nqueues))) bits; numbers >= nqueues are errors.

    cfg_valid, cfg_queue, cfg_size_log2 (4), cfg_enable, cfg_limit (13) : In
        Config write (CSRs), one per cycle. Refused (err_cfg, nothing changes) if the queue
        number, size_log2 > 12 or limit > 4096 is out of range. Otherwise:

        - queue drained (disabled, in_flight == 0 and its last writeback taken: see `drained`; true
          after reset): reset: size_log2, enable, limit are written, prod = fetch = in_flight = 0
          (cons 0) and the queue's db_range_err is cleared. This is how a queue is set up and how
          it is (re-)enabled. Requiring the writeback too (not only in_flight == 0) keeps a stale
          consumer index of the old ring from being written after the reset.
        - queue enabled, or disabled and not yet drained (draining): only enable and limit may
          change, so the write is refused (err_cfg) if cfg_size_log2 differs from the queue's
          size_log2, or if it would re-enable a draining queue (cfg_enable 1 while disabled:
          re-enabling needs the queue drained, and then it is a reset). Otherwise enable and limit
          are written, the pointers kept: a live limit change, or a disable. A limit lowered below
          in_flight only stops new jobs until enough descriptors complete.
    db_valid, db_queue, db_index (16) : In
        Doorbell, prod = db_index. Refused if the queue is disabled (err_db_disabled), else if
        db_index >= S or the queue number is out of range (err_db_range, and the queue's
        db_range_err bit is set); a refused doorbell changes nothing else. db_index == prod is
        legal (counted, nothing else changes).
    active : Out, nqueues bits, from flip-flops
        See above (to TXScheduler.active).
    grant_valid, grant_queue : In
        The scheduler's grant (TXScheduler.grant_valid/grant_queue; plain ports, not a stream: the
        scheduler may change the queue under grant_valid).
    grant_ready : Out
        The grant is taken (to TXScheduler.grant_ready), combinational: grant_ready =
        active[grant_queue] & (~job.valid | job.ready) & ~stale[grant_queue], and no doorbell or
        config write of grant_queue in the cycle (db_valid, cfg_valid). A queue's job count is a
        register, from the queue's registers of the cycle before::

            count = min(max_batch, waiting, S - fetch (descriptors before the ring wraps),
                        limit - in_flight)

        and `stale` (a register) says the queue was inactive in the cycle before or had a job,
        an accepted doorbell or config write in it: a grant waits a cycle after any of those.
        Otherwise only completions can have changed the queue since (more room), so the count is
        >= 1 and within all four. In a cycle with grant_valid & grant_ready a job of `count`
        descriptors from fetch is created and at the edge fetch += count (mod S), in_flight +=
        count, so `active` of cycle t+1 already reflects the job of a grant accepted in cycle t
        (TXScheduler's one-cycle bubble after an acceptance; the core takes no grant of that
        queue in t+1 either). A grant for a queue that is not active in the grant cycle
        (disabled or limit lowered since the scheduler saw it) is not taken; the scheduler
        withdraws it.
    job : Out(stream of job_layout: queue, index (12), count (bit length of max_batch))
        The fetch jobs, to the descriptor fetch DMA (TXEngine.job): descriptors index .. index +
        count - 1 of ring `queue` (never across the ring end). A registered stream: the job is
        presented from the cycle after its grant and held until job.ready. Jobs are counted (jobs,
        descs_fetched) when the DMA takes them.
    cpl : In(stream of cpl_layout: queue, count (13); always_ready)
        Completions, from TXEngine.cpl: the next `count` descriptors of the queue (in order) are
        done: in_flight -= count (cons += count). Refused (err_cpl) if count > in_flight or the
        queue number is out of range. Allowed on a disabled queue (draining). count 0 is legal and
        does nothing. In flight includes a job still waiting in the job register.
    wb : Out(stream of wb_layout: queue, cons (12))
        Consumer-index writeback requests (write cons of ring `queue` to host memory). An accepted
        completion of >= 1 descriptors marks its queue pending; each queue is pending at most once
        (coalescing: completions on a queue already pending add no request, its writeback carries
        the cons at the time it is sent). A registered stream held until wb.ready: when the output
        register is empty or being taken, the next pending queue is chosen round-robin (the first
        pending queue after the last one chosen, wrapping) and loaded with that queue's cons from
        the registers (completions up to the previous cycle); the queue stops being pending, unless
        a completion for it arrives in that same cycle. So a completion in cycle t is in a
        writeback presented from t+2 at the earliest, and the last writeback of a queue always
        carries its final cons. A queue has no writeback left when it is reset.
    drained : Out, nqueues bits, from registers
        The queue is disabled, in_flight == 0 and no writeback of it is pending or presented (its
        host consumer index is final). Disabling stops new jobs at once (active 0 from the next
        cycle); descriptors in flight still complete and are written back.
    db_range_err : Out, nqueues bits
        Sticky, a doorbell with db_index >= S was refused; cleared by a reset of the queue.
    doorbells, jobs, descs_fetched, descs_completed, err_db_range, err_db_disabled, err_cpl,
    err_cfg : Out, 32 bits each (wrapping)
        Accepted doorbells, jobs taken by the DMA, their descriptors, descriptors completed, and
        the refusals above.
    """

    def __init__(self, nqueues, max_batch=8):
        if not _is_int(nqueues) or not 1 <= nqueues <= MAX_QUEUES:
            raise ValueError(f"TXQueueManager: nqueues={nqueues!r} must be an integer "
                             f"1..{MAX_QUEUES}")
        if not _is_int(max_batch) or not 1 <= max_batch <= LIMIT_MAX:
            raise ValueError(f"TXQueueManager: max_batch={max_batch!r} must be an integer "
                             f"1..{LIMIT_MAX}")
        self.nqueues = nqueues
        self.max_batch = max_batch
        self.qbits = qbits = queue_bits(nqueues)
        super().__init__({
            "cfg_valid":       In(1),
            "cfg_queue":       In(qbits),
            "cfg_size_log2":   In(4),
            "cfg_enable":      In(1),
            "cfg_limit":       In(CNT_BITS),
            "db_valid":        In(1),
            "db_queue":        In(qbits),
            "db_index":        In(16),
            "active":          Out(nqueues),
            "grant_valid":     In(1),
            "grant_queue":     In(qbits),
            "grant_ready":     Out(1),
            "job":             Out(stream.Signature(job_layout(nqueues, max_batch))),
            "cpl":             In(stream.Signature(cpl_layout(nqueues), always_ready=True)),
            "wb":              Out(stream.Signature(wb_layout(nqueues))),
            "drained":         Out(nqueues),
            "db_range_err":    Out(nqueues),
            **{s.name: Out(s.width) for s in registers.CORES["tx_queue_manager"].counters},
        })
        # The per-queue registers (attributes, so that tests can look at them).
        n = nqueues
        self.q_size_log2 = [Signal(4, name=f"q{i}_size_log2") for i in range(n)]
        self.q_size = [Signal(CNT_BITS, name=f"q{i}_size", init=1) for i in range(n)]  # 2**log2
        self.q_mask = [Signal(CNT_BITS, name=f"q{i}_mask") for i in range(n)]   # size - 1
        self.q_enable = [Signal(name=f"q{i}_enable") for i in range(n)]
        self.q_limit = [Signal(CNT_BITS, name=f"q{i}_limit", init=1) for i in range(n)]
        self.q_prod = [Signal(POS_BITS, name=f"q{i}_prod") for i in range(n)]
        self.q_fetch = [Signal(POS_BITS, name=f"q{i}_fetch") for i in range(n)]
        self.q_in_flight = [Signal(CNT_BITS, name=f"q{i}_in_flight") for i in range(n)]
        # Kept beside the pointers they follow from, so that a job's count needs no subtraction
        # first: waiting (prod - fetch) mod S, to_wrap S - fetch (1..S), room limit - in_flight
        # (negative while a lowered limit is below in_flight).
        self.q_waiting = [Signal(POS_BITS, name=f"q{i}_waiting") for i in range(n)]
        self.q_to_wrap = [Signal(CNT_BITS, name=f"q{i}_to_wrap", init=1) for i in range(n)]
        self.q_room = [Signal(signed(CNT_BITS + 1), name=f"q{i}_room", init=1) for i in range(n)]
        self.wb_pending = Signal(n)

    def elaborate(self, platform):
        m = Module()
        n, qbits = self.nqueues, self.qbits

        def table(regs):
            """The registers indexed by a queue number; numbers >= nqueues read 0."""
            return Array(regs + [Const(0, len(regs[0]))] * (2**qbits - n))

        enable = table(self.q_enable)
        fetch = table(self.q_fetch)
        in_flight = table(self.q_in_flight)
        pend = self.wb_pending

        def valid_queue(q):
            return Const(1) if n == 2**qbits else q < n

        # -- grant -> job ------------------------------------------------------------------------
        g = self.grant_queue
        # A queue's job count is a register, computed from the queue's registers of the cycle
        # before (q_count_r). It holds for this cycle unless the queue was inactive then or had
        # a job, a doorbell or a config write (`stale`): since then only completions can have
        # changed it, which only add room. No grant of a stale queue is taken, nor one of a
        # queue with a doorbell or a config write in the cycle (a job then never coincides with
        # either, so its next state needs no sum of them). Held back per queue, beside the grant
        # (which arrives later), then selected.
        stale = Signal(n, init=2**n - 1)
        takes = Signal(n)
        m.d.comb += takes.eq(Cat(self.active[i] & ~stale[i] &
                                 ~(self.db_valid & (self.db_queue == i)) &
                                 ~(self.cfg_valid & (self.cfg_queue == i)) for i in range(n)))
        takes_pad = Cat(takes, Const(0, 2**qbits - n)) if 2**qbits > n else takes
        m.d.comb += self.grant_ready.eq(takes_pad.bit_select(g, 1) &
                                        (~self.job.valid | self.job.ready))
        accept = Signal()
        m.d.comb += accept.eq(self.grant_valid & self.grant_ready)

        # Each queue's job size, from its own registers in parallel (a balanced tree of mins),
        # registered; the granted queue's taken.
        q_count, q_wraps = [], []
        for i in range(n):
            # room is >= 1 whenever the queue is active; a count of an inactive queue is unused.
            room = self.q_room[i][:CNT_BITS]
            cnt = least(m, f"q{i}_count", CNT_BITS,
                        least(m, f"q{i}_c1", CNT_BITS, self.q_waiting[i], self.q_to_wrap[i]),
                        least(m, f"q{i}_c2", CNT_BITS, room, Const(self.max_batch, CNT_BITS)))
            # The job reaches the ring's end when to_wrap is the least of the four: compares of
            # registers, not of the count.
            wraps = Signal(name=f"q{i}_wraps")
            m.d.comb += wraps.eq((self.q_to_wrap[i] <= self.q_waiting[i]) &
                                 (self.q_to_wrap[i] <= room) &
                                 (self.q_to_wrap[i] <= self.max_batch))
            cnt_r = Signal(CNT_BITS, name=f"q{i}_count_r")
            wraps_r = Signal(name=f"q{i}_wraps_r")
            m.d.sync += [cnt_r.eq(cnt), wraps_r.eq(wraps)]
            q_count.append(cnt_r)
            q_wraps.append(wraps_r)
        g_fetch = Signal(POS_BITS)
        count = Signal(CNT_BITS)
        m.d.comb += [g_fetch.eq(fetch[g]), count.eq(table(q_count)[g])]
        with m.If(accept):
            m.d.sync += [self.job.valid.eq(1), self.job.p.queue.eq(g),
                         self.job.p.index.eq(g_fetch), self.job.p.count.eq(count)]
        with m.Elif(self.job.ready):
            m.d.sync += self.job.valid.eq(0)
        with m.If(self.job.valid & self.job.ready):
            m.d.sync += [self.jobs.eq(self.jobs + 1),
                         self.descs_fetched.eq(self.descs_fetched + self.job.p.count)]

        # -- doorbell ----------------------------------------------------------------------------
        d = self.db_queue
        d_in = valid_queue(d)
        d_en = Signal()
        in_range = Signal()
        m.d.comb += [d_en.eq(enable[d] & d_in),
                     in_range.eq(self.db_index < table(self.q_size)[d])]
        db_ok = Signal()
        db_dis = Signal()
        db_rng = Signal()
        m.d.comb += [
            db_ok.eq(self.db_valid & d_en & in_range),
            db_dis.eq(self.db_valid & d_in & ~d_en),
            db_rng.eq(self.db_valid & (~d_in | (d_en & ~in_range))),
        ]

        # -- completion --------------------------------------------------------------------------
        c = self.cpl.p.queue
        # Checked against each queue's in_flight in parallel (not the addressed queue's, muxed
        # first): a completion's count reaches the queue's next state one compare deep.
        cpl_hit = Signal(n)
        cpl_ok = Signal()
        m.d.comb += [
            cpl_hit.eq(Cat(self.cpl.valid & (c == i) & (self.cpl.p.count <= self.q_in_flight[i])
                           for i in range(n))),
            cpl_ok.eq(cpl_hit.any()),
        ]

        # -- config ------------------------------------------------------------------------------
        # Decided per queue from its own registers (no mux by the queue number on the way to
        # the queue's next state).
        f = self.cfg_queue
        f_params = Signal()
        cfg_hr = Signal(n)                      # a reset of queue i
        cfg_hu = Signal(n)                      # an enable/limit update of queue i
        cfg_reset = Signal()
        cfg_upd = Signal()
        lim_w = Signal(CNT_BITS)
        m.d.comb += [
            f_params.eq(self.cfg_valid & (self.cfg_size_log2 <= SIZE_LOG2_MAX) &
                        (self.cfg_limit <= LIMIT_MAX)),
            cfg_hr.eq(Cat(f_params & (f == i) & self.drained[i] for i in range(n))),
            cfg_hu.eq(Cat(f_params & (f == i) & ~self.drained[i] &
                          (self.cfg_size_log2 == self.q_size_log2[i]) &
                          (self.q_enable[i] | ~self.cfg_enable) for i in range(n))),
            cfg_reset.eq(cfg_hr.any()),
            cfg_upd.eq(cfg_hu.any()),
            lim_w.eq(Mux(self.cfg_limit == 0, 1, self.cfg_limit)),
        ]

        # -- per-queue next state ----------------------------------------------------------------
        cpl_set = Signal(n)                     # completions that make the queue pending
        for i in range(n):
            hj = accept & (g == i)
            hc = cpl_hit[i]
            hd = db_ok & (d == i)
            hr = cfg_hr[i]
            hu = cfg_hu[i]
            prod_n = Signal(POS_BITS, name=f"q{i}_prod_n")
            fetch_n = Signal(POS_BITS, name=f"q{i}_fetch_n")
            infl_n = Signal(CNT_BITS, name=f"q{i}_in_flight_n")
            en_n = Signal(name=f"q{i}_enable_n")
            lim_n = Signal(CNT_BITS, name=f"q{i}_limit_n")
            infl = self.q_in_flight[i]
            size_m = self.q_mask[i]
            cnt = q_count[i]
            c_in = Mux(hc, self.cpl.p.count, 0)
            c_all = self.cpl.p.count                # added beside the check, then selected
            j_in = Signal(CNT_BITS, name=f"q{i}_job_n")
            m.d.comb += j_in.eq(Mux(hj, cnt, 0))
            infl_c = Signal(CNT_BITS, name=f"q{i}_in_flight_c")    # beside the count
            m.d.comb += infl_c.eq(infl - c_in)
            # The kept differences, each with one subtraction of the job after its count: waiting
            # from the doorbell's or the kept one. room from the kept one with the completion and
            # the job, or (a config update: never with a job) from the written limit; both sums
            # made beside the decisions, which select at the end.
            db_wait = Signal(POS_BITS, name=f"q{i}_db_waiting")
            w_base = Signal(POS_BITS, name=f"q{i}_w_base")
            r_cpl = Signal(signed(CNT_BITS + 2), name=f"q{i}_room_cpl")
            r_keep = Signal(signed(CNT_BITS + 2), name=f"q{i}_room_keep")
            r_lim = Signal(signed(CNT_BITS + 2), name=f"q{i}_room_lim")
            r_upd = Signal(signed(CNT_BITS + 2), name=f"q{i}_room_upd")
            tw_sub = Signal(CNT_BITS, name=f"q{i}_to_wrap_sub")
            m.d.comb += [
                db_wait.eq((self.db_index - self.q_fetch[i]) & size_m),
                w_base.eq(Mux(hd, db_wait, self.q_waiting[i])),
                r_cpl.eq(Mux(hc, self.q_room[i] + c_all, self.q_room[i])),
                r_keep.eq(r_cpl - j_in),
                r_lim.eq(lim_w - infl),
                r_upd.eq(Mux(hc, r_lim + c_all, r_lim)),
                tw_sub.eq(self.q_to_wrap[i] - j_in),
            ]
            # active's terms of the next state, each from registers and inputs in parallel with
            # the count, then selected: work left (waiting != 0) and room left (room > 0). With a
            # job, waiting - count != 0 is count < waiting for the kept waiting (count <=
            # waiting), and room + completed - count > 0 as below.
            work_n = Signal(name=f"q{i}_work_n")
            room_n = Signal(name=f"q{i}_room_n")
            room = self.q_room[i][:CNT_BITS]
            w = self.q_waiting[i]
            with m.If(hr):
                m.d.comb += work_n.eq(0)
            with m.Elif(hj):
                m.d.comb += work_n.eq(cnt < w)
            with m.Else():
                m.d.comb += work_n.eq(Mux(hd, self.db_index, self.q_prod[i]) != self.q_fetch[i])
            with m.If(hr):
                m.d.comb += room_n.eq(1)                        # in_flight 0 < limit >= 1
            with m.Elif(hj):
                # room + completed - count > 0: a completion of >= 1 leaves room (count <=
                # room), without one count < room.
                m.d.comb += room_n.eq(cpl_set[i] | (cnt < room))
            with m.Else():
                m.d.comb += room_n.eq(Mux(hu, r_upd > 0, r_cpl > 0))
            m.d.comb += [
                prod_n.eq(Mux(hr, 0, Mux(hd, self.db_index, self.q_prod[i]))),
                fetch_n.eq(Mux(hr | (hj & q_wraps[i]), 0, self.q_fetch[i] + j_in)),
                infl_n.eq(Mux(hr, 0, infl_c + j_in)),
                en_n.eq(Mux(hr | hu, self.cfg_enable, self.q_enable[i])),
                lim_n.eq(Mux(hr | hu, lim_w, self.q_limit[i])),
                cpl_set[i].eq(hc & (self.cpl.p.count != 0)),
                self.drained[i].eq(~self.q_enable[i] & (infl == 0) & ~pend[i] &
                                   ~(self.wb.valid & (self.wb.p.queue == i))),
            ]
            m.d.sync += [
                self.q_prod[i].eq(prod_n),
                self.q_fetch[i].eq(fetch_n),
                self.q_in_flight[i].eq(infl_n),
                self.q_enable[i].eq(en_n),
                self.q_limit[i].eq(lim_n),
                self.active[i].eq(en_n & work_n & room_n),
                stale[i].eq(hj | hd | hr | hu | ~self.active[i]),
                self.q_waiting[i].eq(Mux(hr, 0, (w_base - j_in) & size_m)),
                self.q_to_wrap[i].eq(Mux(hr, Const(1, CNT_BITS) << self.cfg_size_log2,
                                         Mux(hj & q_wraps[i], self.q_size[i], tw_sub))),
                self.q_room[i].eq(Mux(hr, lim_w, Mux(hu, r_upd, r_keep))),
            ]
            with m.If(hr):
                m.d.sync += [self.q_size_log2[i].eq(self.cfg_size_log2),
                             self.q_size[i].eq(Const(1, CNT_BITS) << self.cfg_size_log2),
                             self.q_mask[i].eq((Const(1, CNT_BITS) << self.cfg_size_log2) - 1),
                             self.db_range_err[i].eq(0)]
            with m.Elif(self.db_valid & d_en & ~in_range & (d == i)):
                m.d.sync += self.db_range_err[i].eq(1)

        # -- writeback ---------------------------------------------------------------------------
        after = Signal(n)                       # the queues after the last one chosen
        any_up, idx_up = first_set(m, pend & after, "wb_up")
        any_all, idx_all = first_set(m, pend, "wb_all")
        sel = Signal(qbits)
        sel_cons = Signal(POS_BITS)
        load = Signal()
        m.d.comb += [
            sel.eq(Mux(any_up, idx_up, idx_all)),
            sel_cons.eq((fetch[sel] - in_flight[sel]) & table(self.q_mask)[sel]),
            load.eq(~self.wb.valid | self.wb.ready),
        ]
        taken = Cat((sel == i) & load & any_all for i in range(n))
        m.d.sync += pend.eq((pend & ~taken) | cpl_set)
        with m.If(load):
            m.d.sync += self.wb.valid.eq(any_all)
            with m.If(any_all):
                m.d.sync += [self.wb.p.queue.eq(sel), self.wb.p.cons.eq(sel_cons),
                             after.eq(Cat(sel < i if i else Const(0) for i in range(n)))]

        # -- counters ----------------------------------------------------------------------------
        # Each count's sum from its register, the event its flip-flops' enable (the event's
        # decision is late in the cycle; a carry chain after it would be later still).
        for count, event, step in ((self.doorbells, db_ok, 1),
                                   (self.descs_completed, cpl_ok, self.cpl.p.count),
                                   (self.err_db_range, db_rng, 1),
                                   (self.err_db_disabled, db_dis, 1),
                                   (self.err_cpl, self.cpl.valid & ~cpl_ok, 1),
                                   (self.err_cfg, self.cfg_valid & ~cfg_reset & ~cfg_upd, 1)):
            with m.If(event):
                m.d.sync += count.eq(count + step)
        return m
