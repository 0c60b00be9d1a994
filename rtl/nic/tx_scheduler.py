# SPDX-License-Identifier: BSD-2-Clause
#
# tx_scheduler.py: picks which TX queue sends the next frame (round-robin, strict priority or
# weighted round-robin), as a registered grant to the TX queue manager and engine.
#
# Interfaces: active (in: the queues that may start a frame), prio and weight (per queue,
# ArrayLayout), mode (rtl/contract/formats.py TxSchedMode), grant_valid/grant_queue/
# grant_ready (plain ports, not a stream: the granted queue may change under grant_valid),
# grants (counter); first_set(), the priority encoder the queue manager shares.
# Parameters: nqueues (1..64).
# Behaviour, to the cycle, and the policies: TXScheduler's docstring.

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from ..contract import registers
from ..contract.formats import TxSchedMode

PRIO_BITS = 3
NLEVELS = 2**PRIO_BITS
WEIGHT_BITS = 8
MAX_QUEUES = 64
MODE_RR, MODE_SP, MODE_WRR = TxSchedMode.RR, TxSchedMode.SP, TxSchedMode.WRR
COUNTS = registers.counter_names("tx_scheduler")


def first_set(m, v, name):
    """(any bit set, index of the lowest set bit) of the value v, as a binary tree of muxes.

    The index has max(1, ceil(log2(len(v)))) bits and is meaningless when no bit is set. Each
    tree node is a named comb signal (a node's result feeds its parent three times: as plain
    expressions the tree would be copied over and over in the netlist).
    """
    width = len(v)
    if width == 1:
        return v[0], Const(0, 1)
    if width == 2:
        return v[0] | v[1], ~v[0]
    half = 1 << (ceil_log2(width) - 1)              # the low half: a power of two, >= high half
    any_lo, idx_lo = first_set(m, v[:half], name + "l")
    any_hi, idx_hi = first_set(m, v[half:], name + "h")
    node_any = Signal(name=f"{name}_any")
    node_idx = Signal(ceil_log2(width), name=f"{name}_idx")
    m.d.comb += [node_any.eq(any_lo | any_hi),
                 node_idx.eq(Cat(Mux(any_lo, idx_lo, idx_hi), ~any_lo))]
    return node_any, node_idx


class TXScheduler(wiring.Component):
    """The TX scheduler: the arbiter between the queue manager and the TX engine.

    The queue manager says which queues may start a frame (`active`); the scheduler presents one of
    them on the grant stream and the TX engine accepts the grant (grant_valid and grant_ready) in
    the cycle it starts one frame of that queue. One grant is one frame.

    Timing
    ------
    grant_valid and grant_queue come straight from flip-flops (grant_ready only steers the next
    state), so the scheduler adds no combinational depth to the TX engine. While the grant is not
    accepted (including while grant_valid is 0) the scheduler decides again every cycle from that
    cycle's inputs and presents the decision the next cycle: a queue is presented in cycle t only
    if it was active in cycle t-1, and a queue that goes inactive in cycle t is withdrawn from
    cycle t+1 (replaced by another active queue's grant, or grant_valid 0). The presented queue may
    thus change while grant_valid stays 1 (this is not an AXI-stream "hold until accepted" grant,
    hence plain ports and not an amaranth.lib.stream): the TX engine takes the grant_queue of the
    cycle it asserts grant_ready. grant_queue holds its value while grant_valid is 0.

    After an acceptance in cycle t, grant_valid is 0 in t+1 and the decision made in t+1 is
    presented in t+2 (at most one grant every two cycles). The bubble makes every decision see an
    `active` that already reflects the frames accepted before it, provided the queue manager
    updates `active` in the cycle after an acceptance (its state registers take the acceptance,
    `active` is computed from them): without it a queue's last descriptor could be granted twice.

    The search for the next queue is a masked two-pass priority encoder (candidates at or after the
    pointer first, then all), each pass a binary tree of log2(nqueues) levels; pointers are kept as
    registered masks, and in SP mode a queue competes unless a level above its own is present, so
    no pointer or top-level selection sits in front of the search (its depth and Fmax:
    docs/design.md, the NIC datapath).

    Policies
    --------
    `mode`, read every cycle; a grant is accounted under the policy that chose it.

    0 round-robin
        The first active queue at or after the pointer (wrapping; 0 after reset). Every acceptance
        (of a grant in any mode) moves the pointer to the accepted queue + 1.
    1 strict priority
        Among the active queues only those with the highest `prio` compete, round-robin with one
        pointer per priority level (8): the accepted queue + 1 goes to the pointer of the level it
        was chosen at, so levels above do not disturb a level's rotation.
    2 weighted round-robin
        A queue chosen by the round-robin search (the mode 0 pointer) and accepted gets a credit of
        max(weight, 1) - 1 further frames (weight read in the accept cycle): while it has credit and
        is active it is chosen again without a search, each acceptance using one. Credit is dropped
        in any cycle (other than an accept cycle) in which the queue is inactive or the mode is not
        2, and by an acceptance of a grant chosen in another mode. So with all queues active each
        queue sends weight frames in a row, in queue order.
    3
        Treated as round-robin (0).

    Ports
    -----
    active : In, nqueues bits
        Queue i may start a frame (enabled, a descriptor waiting, in-flight below its limit),
        computed by the queue manager.
    prio : In, nqueues x 3 bits (ArrayLayout, flat in Verilog: queue i at 3i)
        Priority level, higher wins.
    weight : In, nqueues x 8 bits (ArrayLayout)
        WRR frames per round (0 is taken as 1).
    mode : In, 2 bits
        Policy, see above.
    grant_valid : Out
        A grant is presented.
    grant_queue : Out, max(1, ceil(log2(nqueues))) bits
        The granted queue.
    grant_ready : In
        The TX engine accepts the grant (starts a frame of grant_queue).
    grants : Out, 32 bits
        Accepted grants since reset (wraps).
    """

    def __init__(self, nqueues):
        if isinstance(nqueues, bool) or not isinstance(nqueues, int) \
                or not 1 <= nqueues <= MAX_QUEUES:
            raise ValueError(f"TXScheduler: nqueues={nqueues!r} must be an integer 1..{MAX_QUEUES}")
        self.nqueues = nqueues
        self.qbits = max(1, ceil_log2(nqueues))
        super().__init__({
            "active":      In(nqueues),
            "prio":        In(data.ArrayLayout(PRIO_BITS, nqueues)),
            "weight":      In(data.ArrayLayout(WEIGHT_BITS, nqueues)),
            "mode":        In(2),
            "grant_valid": Out(1),
            "grant_queue": Out(self.qbits),
            "grant_ready": In(1),
            **{s.name: Out(s.width) for s in registers.CORES["tx_scheduler"].counters},
        })

    def elaborate(self, platform):
        m = Module()
        n, qbits = self.nqueues, self.qbits

        # The round-robin pointers, kept as masks of the queues at or after the pointer (queue
        # q accepted: the queues after q; after the last queue: none, which searches the same
        # as all): registered, so the pointer adds no logic in front of the search.
        after_rr = Signal(n)                                    # RR / WRR
        after_lvl = [Signal(n, name=f"after_lvl{lv}") for lv in range(NLEVELS)]   # SP levels
        credit = Signal(WEIGHT_BITS)                            # WRR frames left to wrr_q
        wrr_q = Signal(qbits)
        # How the presented grant was chosen.
        g_hold = Signal()                                       # WRR, on credit
        g_wrr = Signal()                                        # WRR, by the search
        g_sp = Signal()                                         # SP, at level g_lvl
        g_lvl = Signal(PRIO_BITS)

        sp = self.mode == MODE_SP
        wrr = self.mode == MODE_WRR

        # Strict priority: the levels present among the active queues; a queue competes if no
        # level above its own is present (found per queue, without waiting for the top level).
        present = Signal(NLEVELS)
        m.d.comb += present.eq(Cat(Cat(self.active[i] & (self.prio[i] == lv)
                                       for i in range(n)).any() for lv in range(NLEVELS)))
        higher = Signal(NLEVELS)                                # a level above lv is present
        m.d.comb += higher.eq(Cat(present[lv + 1:].any() for lv in range(NLEVELS - 1)))
        top_inv = first_set(m, present[::-1], "fs_lvl")[1]
        top = Signal(PRIO_BITS)                                 # for g_lvl only
        m.d.comb += top.eq(NLEVELS - 1 - top_inv)

        # The round-robin search (shared by the modes): the first candidate at or after the
        # pointer, else the first candidate. In SP mode all candidates are at one level, so
        # each queue can take the pointer mask of its own level.
        cand = Signal(n)
        upper = Signal(n)
        for i in range(n):
            prio = self.prio[i]
            m.d.comb += [
                cand[i].eq(self.active[i] & ~(sp & higher.bit_select(prio, 1))),
                upper[i].eq(cand[i] & Mux(sp, Cat(a[i] for a in after_lvl).bit_select(prio, 1),
                                          after_rr[i])),
            ]
        any_up, idx_up = first_set(m, upper, "fs_up")
        any_all, idx_all = first_set(m, cand, "fs_all")
        found = any_all
        pick = Signal(qbits)
        m.d.comb += pick.eq(Mux(any_up, idx_up, idx_all))

        # WRR: the queue with credit keeps the grant while active.
        hold = Signal()
        m.d.comb += hold.eq(wrr & (credit != 0) & self.active.bit_select(wrr_q, 1))

        accept = self.grant_valid & self.grant_ready
        q = self.grant_queue
        after_q = Cat(q < i if i else 0 for i in range(n))
        with m.If(accept):
            m.d.sync += [self.grant_valid.eq(0),                # one idle cycle, see above
                         self.grants.eq(self.grants + 1),
                         after_rr.eq(after_q)]
            for lv in range(NLEVELS):
                with m.If(g_sp & (g_lvl == lv)):
                    m.d.sync += after_lvl[lv].eq(after_q)
            with m.If(g_hold):
                m.d.sync += credit.eq(credit - 1)
            with m.Elif(g_wrr):
                w = self.weight[q]
                m.d.sync += [credit.eq(Mux(w == 0, 0, w - 1)), wrr_q.eq(q)]
            with m.Else():
                m.d.sync += credit.eq(0)
        with m.Else():
            m.d.sync += self.grant_valid.eq(hold | found)
            with m.If(hold):
                m.d.sync += [self.grant_queue.eq(wrr_q), g_hold.eq(1), g_wrr.eq(0), g_sp.eq(0)]
            with m.Elif(found):
                m.d.sync += [self.grant_queue.eq(pick), g_hold.eq(0), g_wrr.eq(wrr),
                             g_sp.eq(sp), g_lvl.eq(top)]
            with m.If(~hold):
                m.d.sync += credit.eq(0)
        return m
