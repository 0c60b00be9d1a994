# SPDX-License-Identifier: BSD-2-Clause
#
# tx_irq_order.py: holds a TX interrupt vector's request until the consumer-index writebacks
# of the completions it announces were taken by the DMA write port.
#
# A TX coalescer decides on TXEngine done pulses; TXQueueManager writes the consumer index back
# later (from 2 cycles after the completion, through the write arbiter). This core sits between
# the coalescers (irq_in, one per vector) and the MSI block (irq_valid/irq_ready), so a driver
# woken by the interrupt finds the consumer index it announces in host memory once the write
# port's writes ahead of the MSI have left (the SoC's MSI ordering, litex_soc/pcie/msi_order.py).
# Interfaces: pend (TXQueueManager.wb_pending), wb_valid/wb_ready/wb_queue (its wb stream),
# irq_in (the coalescers' irq_valid, taken at once), irq_valid/irq_ready (per vector), held
# (interrupts that waited for a writeback, counter).
# Parameters: nqueues (1..64), ngroups (TX vectors: queue q in group q % ngroups).
# Behaviour, to the cycle: TXIrqOrder's docstring.

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2


class TXIrqOrder(wiring.Component):
    """TX interrupt requests ordered after the consumer-index writebacks they announce.

    A coalescer's irq_in[g] in cycle x announces the completions of group g's queues up to cycle
    x - 1 (IRQCoalescer: an event counts from the next cycle). TXQueueManager's registers in
    cycle x hold them: a queue q with pend[q] gets a writeback loaded from cycle x on (a load in
    cycle L reads the cons of cycle L); a queue not pending whose writeback is in the output
    register (wb_valid, wb_queue == q) is covered by that writeback; any other queue's last
    writeback was already taken.

    The decision arms what it waits for: armed[q] for each pending queue of the group; the
    writeback register itself (reg_armed) for a non-pending queue it holds. An armed queue is
    consumed by its next load (the cycle after the load, the register holds it: reg_armed); the
    register is released when taken (wb_valid & wb_ready). irq_valid[g] is presented while
    the vector has a decision (want) and no armed queue of group g and no armed register holding
    a queue of group g is left (registers only: a cycle after the last writeback was taken at the
    earliest), and held until irq_ready[g].

    Decisions while one waits are merged into one more interrupt (again): when the waiting one is
    taken, the group is armed anew with the state of that cycle (which covers every decision
    merged) and presented when that is written back. So every wait ends within two writeback
    rounds of the group's queues, whatever the traffic; at most two interrupts per decision
    pair, never fewer than one after the last decision.

    held counts the interrupts that were not presented in the cycle after their decision (they
    waited for a writeback).
    """

    def __init__(self, nqueues, ngroups):
        if not isinstance(nqueues, int) or not 1 <= nqueues <= 64:
            raise ValueError(f"TXIrqOrder: nqueues={nqueues!r} must be an integer 1..64")
        if not isinstance(ngroups, int) or not 1 <= ngroups <= nqueues:
            raise ValueError(f"TXIrqOrder: ngroups={ngroups!r} must be an integer 1..{nqueues}")
        self.nqueues = nqueues
        self.ngroups = ngroups
        qbits = max(1, ceil_log2(nqueues))
        super().__init__({
            "pend":      In(nqueues),
            "wb_valid":  In(1),
            "wb_ready":  In(1),
            "wb_queue":  In(qbits),
            "irq_in":    In(ngroups),
            "irq_valid": Out(ngroups),
            "irq_ready": In(ngroups),
            "held":      Out(32),
        })

    def elaborate(self, platform):
        m = Module()
        n, G = self.nqueues, self.ngroups
        armed = Signal(n)
        reg_armed = Signal()
        loaded = Signal()                      # the wb register was loaded in the last cycle
        want = Signal(G)
        again = Signal(G)
        fresh = Signal(G)                      # the cycle after a decision armed the group
        taken = Signal()
        m.d.comb += taken.eq(self.wb_valid & self.wb_ready)
        m.d.sync += loaded.eq((~self.wb_valid | self.wb_ready) & (self.pend != 0))

        serve = Signal(G)
        trig = Signal(G)
        m.d.comb += [
            serve.eq(self.irq_valid & self.irq_ready),
            trig.eq((self.irq_in & ~want) | (serve & (again | self.irq_in))),
        ]
        m.d.sync += [
            want.eq(trig | (want & ~serve)),
            again.eq(want & ~serve & (again | self.irq_in)),
            fresh.eq(trig),
        ]

        def group_of(q):
            return q % G

        # The queue in the writeback register, its group, and whether it is pending.
        reg_group = Signal(range(max(G, 2)))
        reg_pend = Signal()
        armed_reg_q = Signal()
        for q in range(n):
            with m.If(self.wb_queue == q):
                m.d.comb += [reg_group.eq(group_of(q)), reg_pend.eq(self.pend[q]),
                             armed_reg_q.eq(armed[q])]

        arm_now = Signal(n)
        consumed = Signal(n)
        m.d.comb += [
            arm_now.eq(Cat(trig[group_of(q)] & self.pend[q] for q in range(n))),
            consumed.eq(Cat(loaded & (self.wb_queue == q) for q in range(n))),
        ]
        m.d.sync += armed.eq((armed & ~consumed & self.pend) | arm_now)
        reg_now = Signal()
        reg_eff = Signal()
        m.d.comb += [
            reg_now.eq(self.wb_valid & ~taken & ~reg_pend & trig.bit_select(reg_group, 1)),
            reg_eff.eq(((loaded & armed_reg_q) | (~loaded & reg_armed)) | reg_now),
        ]
        m.d.sync += reg_armed.eq(reg_eff & ~taken)

        wait = Signal(G)
        for g in range(G):
            mask = sum(1 << q for q in range(n) if group_of(q) == g)
            m.d.comb += wait[g].eq(((armed & mask) != 0) |
                                   (reg_armed & self.wb_valid & (reg_group == g)))
        m.d.comb += self.irq_valid.eq(want & ~wait)
        held_now = Signal()
        m.d.comb += held_now.eq((fresh & wait) != 0)
        m.d.sync += self.held.eq(self.held + held_now)
        return m
