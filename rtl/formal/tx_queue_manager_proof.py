# SPDX-License-Identifier: BSD-2-Clause
#
# tx_queue_manager_proof.py: formal properties of TXQueueManager (rtl/nic/tx_queue_manager.py).
#
# What it proves (k-induction; reset, config writes, doorbells, grants, job.ready, completions and
# wb.ready free at every cycle):
#   txqm_ranges      for any host and any TX engine: every queue's size_log2 <= 12, prod and
#                    fetch < S, 1 <= limit <= 4096; a job created from a grant has 1 <= count <=
#                    max_batch, count <= waiting ((prod - fetch) mod S: never beyond the doorbell),
#                    index + count <= S (never across the ring end) and in_flight + count <=
#                    limit (in_flight never exceeds the limit by a job); `active`, `drained` and
#                    the kept waiting, to_wrap and room are their documented functions of the
#                    registers.
#   txqm_fetch_once  the same with a scoreboard of every ring position (free, posted, fetched),
#                    under the driver's contract (a doorbell posts only free positions and leaves
#                    one free: the core cannot tell a full lap from none): every descriptor a job
#                    fetches was posted and not yet fetched (none fetched twice or beyond the
#                    doorbell), every completion retires fetched ones in order, in_flight = the
#                    fetched positions.
# Interfaces: PROOFS (rtl/formal/sby_run.py). Parameters: nqueues 3 (queue number 3 is out of
# range), max_batch 2; txqm_fetch_once: rings of up to 4 descriptors (size_log2 <= 2 assumed).

from amaranth import Array, Module, Signal
from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Assume, Elaboratable

from ..nic.tx_queue_manager import CNT_BITS, LIMIT_MAX, POS_BITS, SIZE_LOG2_MAX, TXQueueManager
from .proof import Proof, implies, peek

NQUEUES = 3
MAX_BATCH = 2
SB_SIZE_LOG2 = 2          # txqm_fetch_once: rings of 1, 2 or 4 descriptors
FREE, POSTED, FETCHED = 0, 1, 2


class QueueManagerRules(Elaboratable):
    def __init__(self, contract):
        self.contract = contract

    def elaborate(self, platform):
        m = Module()
        dut = TXQueueManager(NQUEUES, max_batch=MAX_BATCH)
        m.submodules.dut, (count, g_fetch) = peek(dut, "count", "g_fetch")
        for port in ("cfg_valid", "cfg_queue", "cfg_size_log2", "cfg_enable", "cfg_limit",
                     "db_valid", "db_queue", "db_index", "grant_valid", "grant_queue"):
            sig = getattr(dut, port)
            m.d.comb += sig.eq(AnySeq(len(sig)))
        m.d.comb += [dut.job.ready.eq(AnySeq(1)), dut.wb.ready.eq(AnySeq(1)),
                     dut.cpl.valid.eq(AnySeq(1)),
                     dut.cpl.p.queue.eq(AnySeq(dut.qbits)), dut.cpl.p.count.eq(AnySeq(CNT_BITS))]

        n = NQUEUES
        size = [Signal(CNT_BITS, name=f"q{q}_size") for q in range(n)]
        m.d.comb += [size[q].eq(1 << dut.q_size_log2[q]) for q in range(n)]
        g = dut.grant_queue
        accept = dut.grant_valid & dut.grant_ready
        g_size = Array(size)[g]
        waiting = Signal(POS_BITS)                       # (prod - fetch) mod S of the grant
        m.d.comb += waiting.eq((Array(dut.q_prod)[g] - g_fetch) & (g_size - 1))
        m.d.comb += [
            Assert(implies(accept, g < n), "grant: only a queue in range is taken"),
            Assert(implies(accept, (count >= 1) & (count <= MAX_BATCH)), "job: 1..max_batch"),
            Assert(implies(accept, count <= waiting), "job: never beyond the doorbell"),
            Assert(implies(accept, g_fetch + count <= g_size), "job: never across the ring end"),
            Assert(implies(accept, Array(dut.q_in_flight)[g] + count <= Array(dut.q_limit)[g]),
                   "job: in_flight + count <= limit"),
        ]
        created = Signal()
        m.d.sync += created.eq(accept)
        m.d.comb += Assert(implies(created, dut.job.valid), "job: presented after its grant")
        for q in range(n):
            prod, fetch, infl = dut.q_prod[q], dut.q_fetch[q], dut.q_in_flight[q]
            wb_busy = dut.wb.valid & (dut.wb.p.queue == q)
            m.d.comb += [
                Assert(dut.q_size_log2[q] <= SIZE_LOG2_MAX, f"q{q}: size_log2 <= 12"),
                Assert(dut.q_size[q] == size[q], f"q{q}: size = 2**size_log2"),
                Assert(dut.q_mask[q] == size[q] - 1, f"q{q}: mask = size - 1"),
                Assert(prod < size[q], f"q{q}: prod < S"),
                Assert(fetch < size[q], f"q{q}: fetch < S"),
                Assert((dut.q_limit[q] >= 1) & (dut.q_limit[q] <= LIMIT_MAX), f"q{q}: limit"),
                Assert(infl <= LIMIT_MAX, f"q{q}: in_flight <= 4096"),
                Assert(dut.q_waiting[q] == ((prod - fetch) & (size[q] - 1))[:POS_BITS],
                       f"q{q}: waiting = (prod - fetch) mod S"),
                Assert(dut.q_to_wrap[q] == size[q] - fetch, f"q{q}: to_wrap = S - fetch"),
                Assert(dut.q_room[q] == dut.q_limit[q] - infl, f"q{q}: room = limit - in_flight"),
                Assert(dut.active[q] == (dut.q_enable[q] & (prod != fetch) &
                                         (infl < dut.q_limit[q])), f"q{q}: active"),
                Assert(dut.drained[q] == (~dut.q_enable[q] & (infl == 0) & ~dut.wb_pending[q] &
                                          ~wb_busy), f"q{q}: drained"),
            ]
        if self.contract:
            self.scoreboard(m, dut, count, g_fetch, accept, size)
        return m

    def scoreboard(self, m, dut, count, g_fetch, accept, size):
        n, npos = NQUEUES, 2**SB_SIZE_LOG2
        m.d.comb += Assume(dut.cfg_size_log2 <= SB_SIZE_LOG2)

        def dist(a, b, s):
            """(a - b) mod s, s a power of two."""
            return (a - b)[:POS_BITS] & (s - 1)[:POS_BITS]
        f_params = (dut.cfg_size_log2 <= SIZE_LOG2_MAX) & (dut.cfg_limit <= LIMIT_MAX)
        cpl_ok = dut.cpl.valid & (dut.cpl.p.queue < n) & \
            (dut.cpl.p.count <= Array(dut.q_in_flight)[dut.cpl.p.queue])
        for q in range(n):
            s = size[q]
            prod, fetch, infl = dut.q_prod[q], dut.q_fetch[q], dut.q_in_flight[q]
            st = [Signal(2, name=f"sb_q{q}_{i}") for i in range(npos)]
            cons = Signal(POS_BITS, name=f"sb_q{q}_cons")
            reset = dut.cfg_valid & (dut.cfg_queue == q) & f_params & dut.drained[q]
            db = dut.db_valid & (dut.db_queue == q) & dut.q_enable[q] & (dut.db_index < s)
            job = accept & (dut.grant_queue == q)
            cpl = cpl_ok & (dut.cpl.p.queue == q)
            with m.If(reset):
                m.d.sync += cons.eq(0)
            with m.Elif(cpl):
                m.d.sync += cons.eq((cons + dut.cpl.p.count)[:POS_BITS] & (s - 1)[:POS_BITS])
            for i in range(npos):
                in_s = i < s
                in_db = in_s & (dist(i, prod, s) < dist(dut.db_index[:POS_BITS], prod, s))
                # The driver's contract: it posts free positions only and leaves the one at the new
                # prod free too (a ring holds at most S - 1 descriptors: prod == cons is empty).
                new_ok = (dut.db_index[:POS_BITS] == prod) | \
                    (dist(i, prod, s) > dist(dut.db_index[:POS_BITS], prod, s)) | (st[i] == FREE)
                in_job = (g_fetch <= i) & (i < g_fetch + count)
                in_cpl = in_s & (dist(i, cons, s) < dut.cpl.p.count)
                m.d.comb += [
                    Assume(implies(db & in_s, new_ok)),
                    Assert(implies(job & in_job, st[i] == POSTED),
                           f"q{q}: a fetched descriptor was posted and not fetched yet"),
                    Assert(implies(cpl & in_cpl, st[i] == FETCHED),
                           f"q{q}: a completed descriptor was fetched"),
                    # Induction invariants: the positions match the ring registers.
                    Assert(in_s | (st[i] == FREE), f"q{q}: positions past the ring are free"),
                    Assert((st[i] == FETCHED) == (in_s & (dist(i, cons, s) < infl)),
                           f"q{q}: fetched = [cons, cons + in_flight)"),
                    Assert((st[i] == POSTED) == (in_s & (dist(i, fetch, s) < dist(prod, fetch, s))),
                           f"q{q}: posted = [fetch, prod)"),
                ]
                with m.If(reset):
                    m.d.sync += st[i].eq(FREE)
                with m.Elif(db & in_db):
                    m.d.sync += st[i].eq(POSTED)
                with m.Elif(job & in_job):
                    m.d.sync += st[i].eq(FETCHED)
                with m.Elif(cpl & in_cpl):
                    m.d.sync += st[i].eq(FREE)
            m.d.comb += [
                Assert(dut.q_size_log2[q] <= SB_SIZE_LOG2, f"q{q}: a ring the scoreboard holds"),
                Assert(infl + dist(prod, fetch, s) < s, f"q{q}: in_flight + waiting < S"),
                Assert(cons == dist(fetch, infl, s), f"q{q}: cons == fetch - in_flight"),
            ]


PROOFS = [
    Proof("txqm_ranges", lambda: QueueManagerRules(contract=False), mode="prove", depth=5,
          deep_depth=12,
          properties=["size_log2 <= 12, prod < S, fetch < S, 1 <= limit <= 4096, "
                      "in_flight <= 4096 (per queue)",
                      "a created job: 1 <= count <= max_batch, count <= (prod - fetch) mod S "
                      "(never beyond the doorbell), index + count <= S, in_flight + count <= limit",
                      "only an in-range queue's grant is taken; the job is presented next cycle",
                      "active and drained are their documented functions of the registers"]),
    Proof("txqm_fetch_once", lambda: QueueManagerRules(contract=True), mode="prove", depth=5,
          deep_depth=12,
          properties=["all of txqm_ranges, and under the driver's contract (doorbells post "
                      "free positions only and leave one free), on a scoreboard of every ring "
                      "position:",
                      "every descriptor a job fetches is posted and not yet fetched "
                      "(none fetched twice or beyond the doorbell)",
                      "every completion retires fetched descriptors, in order",
                      "fetched = [cons, cons + in_flight), posted = [fetch, prod), "
                      "in_flight + waiting < S, cons = fetch - in_flight"]),
]
