#
# counter_bank.py: many wide event counters with snapshot-and-clear, kept in block RAM.
#
# What it is: the storage of the bus analyzer's counts: a narrow accumulator per entry and one
# scanner that adds them, one entry per cycle, into 48-bit totals in block RAM; a snapshot closes
# every entry's window on the same cycle. How: CounterBank's docstring.
#
# Interfaces:
#   inc<i>      in, per entry: the increment this cycle (0..max_inc[i]).
#   snapshot    in: request a snapshot this cycle.
#   taken       out (comb): the snapshot is taken this cycle (snapshot and not busy).
#   busy        out: a snapshot (or the reset clear) pass is in progress.
#   refused     out, 16 bits: snapshot requests refused because busy (wraps).
#   rd_addr     in: entry to read; rd_data out, 48 bits, one cycle later (valid while not busy).
#
# Parameters:
#   max_inc     list: the largest increment of each entry (its accumulator is sized from it).
#   width       count width (48: 26 days of cycles at 125 MHz before wrapping).

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out


class CounterBank(wiring.Component):
    """Wide counters in block RAM, with an atomic snapshot-and-clear.

    Each entry is a count that adds a per-cycle increment `inc<i>`. Every entry has a narrow
    accumulator, and one scanner visits the entries round-robin, one per cycle: it takes the
    entry's accumulator (which restarts with that cycle's increment) and adds it to the entry's
    total in block RAM (read, add, write back over three cycles). As in Corundum's stats
    collector, this needs one wide adder for all entries instead of a wide register, a snapshot
    copy and an adder per count. The accumulator only holds one scan period of increments, so it
    cannot overflow: `max_inc * n` fits its width by construction.

    Snapshot-and-clear, atomic for every entry on one cycle T (`snapshot` while not `busy`):
    every accumulator moves to a residual register (the events before T not yet in RAM) and
    restarts with cycle T's increment, and every entry is marked pending. The scanner's next
    visit of a pending entry writes its closed window (RAM total + residual) into the snapshot
    RAM and restarts the RAM total with the events since T; after one scan period every entry
    has been visited once. So the window of a snapshot is every cycle from the previous one,
    inclusive, to T, exclusive, for every entry alike. `busy` is 1 while that pass runs (n + 3
    cycles from T: the last write lands two cycles after the last visit); a snapshot requested
    while busy is refused (not taken, counted in `refused`): the residuals hold one pending
    window only. After reset the scanner makes the same pass with zero windows, which clears the
    RAM totals (block RAM keeps its contents through a reset): the first window is counted from
    reset, and the snapshot RAM reads 0 until the first snapshot.

    Read-out: `rd_data` is the snapshot RAM's entry `rd_addr` of one cycle before.
    """

    # Cycles from a visit to its RAM write: the read (1), the add (1).
    PIPE = 2

    def __init__(self, max_inc, width=48):
        max_inc = list(max_inc)
        if not max_inc or any(m < 1 for m in max_inc):
            raise ValueError(f"CounterBank: max_inc={max_inc}: one positive value per entry")
        self.max_inc, self.width = max_inc, width
        # Scan period: an entry is revisited after `period` cycles, which must exceed the
        # pipeline (a visit's read must see the previous visit's write).
        self.n = len(max_inc)
        self.period = max(self.n, self.PIPE + 2)
        self.acc_widths = [(m * self.period).bit_length() for m in max_inc]
        if max(self.acc_widths) > width:
            raise ValueError(f"CounterBank: an increment of {max(max_inc)} per cycle does not "
                             f"fit {width}-bit counts")
        self.addr_width = max(1, (self.period - 1).bit_length())
        super().__init__({
            **{f"inc{i}": In(m.bit_length()) for i, m in enumerate(max_inc)},
            "snapshot": In(1),
            "taken":    Out(1),
            "busy":     Out(1),
            "refused":  Out(16),
            "rd_addr":  In(self.addr_width),
            "rd_data":  Out(width),
        })

    def elaborate(self, platform):
        m = Module()
        n, period, width = self.n, self.period, self.width
        m.submodules.live = live = Memory(shape=width, depth=period, init=[])
        m.submodules.snap = snap = Memory(shape=width, depth=period, init=[])
        live_rd, live_wr = live.read_port(), live.write_port()
        snap_rd, snap_wr = snap.read_port(), snap.write_port()
        m.d.comb += [snap_rd.addr.eq(self.rd_addr), self.rd_data.eq(snap_rd.data)]

        # The scanner: entry `idx` is visited this cycle (`token` is its one-hot form).
        idx = Signal(self.addr_width)
        token = Signal(period, init=1)
        m.d.sync += [idx.eq(Mux0(idx == period - 1, idx + 1)),
                     token.eq(Cat(token[-1], token[:-1]))]

        # Pending entries of the pass in progress; after reset, all (the clear pass, `zero`).
        pending = Signal(period, init=(1 << n) - 1)
        zero = Signal(init=1)
        in_flight = Signal(self.PIPE)          # a pass visit in the pipeline's stages 1, 2
        m.d.comb += [
            self.busy.eq((pending != 0) | (in_flight != 0)),
            self.taken.eq(self.snapshot & ~self.busy),
        ]
        with m.If(self.snapshot & self.busy):
            m.d.sync += self.refused.eq(self.refused + 1)

        accs = [Signal(w, name=f"acc{i}") for i, w in enumerate(self.acc_widths)]
        residuals = [Signal(w, name=f"res{i}") for i, w in enumerate(self.acc_widths)]
        for i, (acc, res) in enumerate(zip(accs, residuals)):
            inc = getattr(self, f"inc{i}")
            visit = token[i]
            # A visit takes the accumulator; so does a snapshot (into the residual). The entry
            # visited on the snapshot cycle takes its events so far to its RAM total as usual:
            # its residual is ignored (`t_idx` below).
            # (Written as a restart with the increment, the clear maps to the flip-flops'
            # synchronous reset above the increment's bits.)
            m.d.sync += acc.eq(Mux(visit | self.taken, inc, acc + inc))
            with m.If(self.taken):
                m.d.sync += res.eq(acc)
        # On a snapshot every entry is pending, the one visited on that cycle too: that visit
        # puts the old window's last events in its RAM total, its pass visit comes a period later.
        t_idx = Signal.like(idx)               # the entry visited on the snapshot cycle
        with m.If(self.taken):
            m.d.sync += [pending.eq(Const((1 << n) - 1, period)), zero.eq(0), t_idx.eq(idx)]
        with m.Else():
            m.d.sync += pending.eq(pending & ~token)

        # Stage 0: the visit. The visited entry's accumulator and residual are selected by its
        # index (a multiplexer: simulated as one case statement, where an AND-OR of every
        # entry costs a simulator every entry every cycle), over every value of the index. The
        # padding entries read 0 and are never pending.
        def select(regs):
            return Array(list(regs) + [Const(0, 1)] * (2**self.addr_width - n))[idx]

        pass0 = Signal()
        m.d.comb += [pass0.eq((pending & token) != 0), live_rd.addr.eq(idx)]
        s1_idx = Signal.like(idx)
        s1_take = Signal(max(self.acc_widths))
        s1_res = Signal(max(self.acc_widths))
        s1_pass = Signal()
        s1_zero = Signal()
        m.d.sync += [s1_idx.eq(idx), s1_take.eq(select(accs)),
                     s1_res.eq(Mux0(idx == t_idx, select(residuals))),
                     s1_pass.eq(pass0), s1_zero.eq(zero)]

        # Stage 1: the RAM total is out; add.
        s2_idx = Signal.like(idx)
        s2_live = Signal(width)
        s2_snap = Signal(width)
        s2_pass = Signal()
        m.d.sync += [
            s2_idx.eq(s1_idx), s2_pass.eq(s1_pass),
            s2_live.eq(Mux(s1_pass, s1_take, live_rd.data + s1_take)),
            s2_snap.eq(Mux0(s1_zero, live_rd.data + s1_res)),
        ]
        m.d.sync += in_flight.eq(Cat(pass0, s1_pass))

        # Stage 2: write back.
        m.d.comb += [
            live_wr.addr.eq(s2_idx), live_wr.data.eq(s2_live), live_wr.en.eq(1),
            snap_wr.addr.eq(s2_idx), snap_wr.data.eq(s2_snap), snap_wr.en.eq(s2_pass),
        ]
        return m


def Mux0(sel, value):
    """`value`, or 0 when `sel`."""
    return Mux(sel, 0, value)


def register_counters(m, snapshot, incs, outs):
    """The register form of the same counts, for a core used on its own (its unit tests):
    per count a live register and its snapshot copy. `incs` and `outs`: name -> signal."""
    for name, inc in incs.items():
        out = outs[name]
        live = Signal.like(out, name=f"live_{name}")
        with m.If(snapshot):
            m.d.sync += [out.eq(live), live.eq(inc)]
        with m.Else():
            m.d.sync += live.eq(live + inc)
