# SPDX-License-Identifier: BSD-2-Clause
#
# counter_bank_proof.py: formal properties of the bus analyzer's counts: OccupancyCounter's
# register form, and OccupancyCounter's increments kept in a CounterBank as BusAnalyzer keeps them.
#
# What it proves (reset free at every cycle, every probe input and snapshot request free):
#   occupancy_window   (k-induction) the register form's snapshot: busy + stall + idle = the
#                      cycles of its window (previous snapshot inclusive to this one exclusive).
#   counter_bank_snap  (bounded) the bank's snapshot is atomic: any entry k read back (rd_data,
#                      while not busy) equals a reference count of k's increments over the window
#                      closed on the `taken` cycle; k is free, so every entry's window closes on
#                      that one cycle, and busy + stall + idle read from the bank = the window's
#                      cycles (occupancy_window). busy starts the cycle after a snapshot (and at
#                      reset) and lasts period + 2 cycles at most; taken iff asked while not busy.
#   counter_bank_all   (bounded) the same with all six counts (n = period: busy exactly
#                      period + 2 cycles).
#   counter_bank_lane  (bounded) the same with busy, stall and idle as one lane (one of them
#                      counts on each cycle: their accumulators in the bank's distributed RAM,
#                      two epochs): after reset the priming and the cut (`taken` with a window
#                      of zeros), then every entry read back exact; no lane update lost.
#   counter_bank_coded (bounded) the same with that lane coded (given as one update per cycle:
#                      the entry that counts and its increment), as the analyzer gives its
#                      histograms and breakdowns.
# Interfaces: PROOFS (rtl/formal/sby_run.py). Parameters: nbytes_width 2; the bank: entries busy,
# stall, idle (period 4 with one padding entry; counter_bank_all: all six), count width 5 (windows
# of 32 cycles wrap); the register form: count width 8 (its least). The bank's proofs are bounded:
# its RAM is not visible to an induction invariant. counter_bank_snap's depth 22 reads back two
# snapshots (the first after the reset pass), counter_bank_all's 20 one, counter_bank_lane's
# and counter_bank_coded's 27 two (after the priming's period + 1 cycles).

from amaranth import Array, Cat, Module, Mux, Signal
from amaranth.asserts import AnyConst, AnySeq
from amaranth.hdl import Assert, Assume, Elaboratable

from ..nicscope.counter_bank import CounterBank
from ..nicscope.occupancy_counter import COUNTS, OccupancyCounter
from .proof import Proof, implies, peek

W = 5              # the bank's count width
OCC_W = 8          # the register form's count width (OccupancyCounter's least)
NBYTES = 2
BANK_COUNTS = ("busy", "stall", "idle")    # 3 entries: a period of 4, one padding entry


def drive_probe(m, occ):
    """The probed stream, hold and snapshot: free every cycle."""
    for name in ("valid", "ready", "last", "hold", "snapshot"):
        m.d.comb += getattr(occ, name).eq(AnySeq(1))
    m.d.comb += occ.nbytes.eq(AnySeq(NBYTES))


class OccupancyWindow(Elaboratable):
    def elaborate(self, platform):
        m = Module()
        occ = OccupancyCounter(nbytes_width=NBYTES, width=OCC_W, counters=True)
        m.submodules.occ, live = peek(occ, "live_busy", "live_stall", "live_idle")
        drive_probe(m, occ)
        # The open window's cycles (from the last snapshot, inclusive), and the closed one's.
        cyc, win = Signal(OCC_W), Signal(OCC_W)
        with m.If(occ.snapshot):
            m.d.sync += [win.eq(cyc), cyc.eq(1)]
        with m.Else():
            m.d.sync += cyc.eq(cyc + 1)
        m.d.comb += [
            Assert((occ.busy + occ.stall + occ.idle)[:OCC_W] == win,
                   "busy + stall + idle == cycles of the window"),
            # The induction invariant: the live counts cover the open window.
            Assert((live[0] + live[1] + live[2])[:OCC_W] == cyc, "live counts == open window"),
        ]
        return m


class CounterBankSnapshot(Elaboratable):
    def __init__(self, counts, lanes=(), coded=()):
        self.counts, self.lanes, self.coded = counts, lanes, coded

    def elaborate(self, platform):
        m = Module()
        m.submodules.occ = occ = OccupancyCounter(nbytes_width=NBYTES, width=OCC_W, counters=False)
        bank = CounterBank([occ.max_inc[c] for c in self.counts], width=W, lanes=self.lanes,
                           coded=self.coded)
        m.submodules.bank, (cut,) = peek(bank, "reset_cut")
        drive_probe(m, occ)
        n = len(self.counts)
        incs = [getattr(occ, f"inc_{c}") for c in self.counts]
        coded = {e for k in self.coded for e in self.lanes[k]}
        m.d.comb += [getattr(bank, f"inc{i}").eq(inc) for i, inc in enumerate(incs)
                     if i not in coded]
        # A coded lane: its one update (the entry whose increment is nonzero, and that
        # increment), as a source with the entry as an index gives it.
        for k in self.coded:
            lane_incs = [incs[e] for e in self.lanes[k]]
            entry, value = Signal.like(getattr(bank, f"lane{k}_entry")), Signal(W)
            for j, inc in enumerate(lane_incs):
                with m.If(inc != 0):
                    m.d.comb += [entry.eq(j), value.eq(inc)]
            m.d.comb += [getattr(bank, f"lane{k}_valid").eq(Cat(*lane_incs).any()),
                         getattr(bank, f"lane{k}_entry").eq(entry),
                         getattr(bank, f"lane{k}_inc").eq(value)]
        m.d.comb += [bank.snapshot.eq(occ.snapshot), bank.rd_addr.eq(AnySeq(bank.addr_width))]

        # The reference count of one entry, any one (`k`, chosen by the solver): its window closes
        # on the `taken` cycle. As k is free, this holds for every entry: the snapshot is atomic.
        k = Signal.like(bank.rd_addr)
        m.d.comb += [k.eq(AnyConst(bank.addr_width)), Assume(k < n)]
        inc = Array(incs)[k]
        live, snap = Signal(W), Signal(W)
        # The cut after reset (with lanes) closes a window of zeros.
        with m.If(bank.taken):
            m.d.sync += [snap.eq(Mux(cut, 0, live)), live.eq(inc)]
        with m.Else():
            m.d.sync += live.eq(live + inc)

        # Read-back: rd_data is the entry addressed one cycle before, valid when that cycle was
        # not busy and took no snapshot (after reset: the clear pass, busy).
        prev_busy = Signal(init=1)
        prev_taken = Signal()
        prev_addr = Signal.like(bank.rd_addr)
        m.d.sync += [prev_busy.eq(bank.busy), prev_taken.eq(bank.taken),
                     prev_addr.eq(bank.rd_addr)]
        with m.If(~prev_busy & ~prev_taken & (prev_addr == k)):
            m.d.comb += Assert(bank.rd_data == snap,
                               "bank entry == its count over the snapshot's window")

        # busy: the pass, from the cycle after a snapshot (and from reset) for period + 2 cycles
        # at most (exactly when n == period), so a snapshot period + 3 cycles after the previous
        # one is taken (BusAnalyzer.snapshot_cycles()).
        since = Signal(range(bank.period + 4), init=1)
        with m.If(bank.taken):
            m.d.sync += since.eq(1)
        with m.Elif(since <= bank.period + 2):
            m.d.sync += since.eq(since + 1)
        m.d.comb += [
            Assert(implies(since == 1, bank.busy), "busy from the cycle after a snapshot"),
            Assert(implies(bank.busy, since <= bank.period + 2), "busy period + 2 cycles at most"),
            *([Assert(bank.busy == (since <= bank.period + 2), "busy exactly period + 2 cycles")]
              if n == bank.period else []),
            Assert(bank.taken == (bank.snapshot & ~bank.busy | cut),
                   "taken iff asked while not busy, or the cut after reset"),
            Assert(implies(cut, bank.busy), "the cut while busy (no snapshot taken with it)"),
            Assert(bank.lost == 0, "no lane update lost"),
        ]
        return m


PROOFS = [
    Proof("occupancy_window", OccupancyWindow, mode="prove", depth=2, deep_depth=8,
          properties=["busy + stall + idle == cycles of the snapshot's window (register form)"]),
    Proof("counter_bank_snap", lambda: CounterBankSnapshot(BANK_COUNTS), mode="bmc", depth=22,
          deep_depth=28,
          script=["memory_map", "opt -fast"],
          properties=["any bank entry read back (rd_data, not busy) == its count over the window "
                      "closed on the taken cycle: every entry alike (atomic snapshot), so with "
                      "occupancy_window busy + stall + idle read back == the window's cycles",
                      "busy from the cycle after a snapshot (and reset), period + 2 cycles at "
                      "most",
                      "taken iff snapshot asked while not busy"]),
    Proof("counter_bank_all", lambda: CounterBankSnapshot(COUNTS), mode="bmc", depth=20,
          deep_depth=22, script=["memory_map", "opt -fast"],
          properties=["counter_bank_snap's properties with all six OccupancyCounter counts "
                      "(period = n = 6, no padding entry): busy exactly period + 2 cycles"]),
    Proof("counter_bank_lane", lambda: CounterBankSnapshot(BANK_COUNTS, lanes=[[0, 1, 2]]),
          mode="bmc", depth=27, deep_depth=32, script=["memory_map", "opt -fast"],
          properties=["counter_bank_snap's properties with busy, stall and idle as one lane "
                      "(accumulators in two epochs of distributed RAM): every entry read back "
                      "== its count over the window closed on the taken cycle; the cut after "
                      "reset closes a window of zeros; no lane update lost"]),
    Proof("counter_bank_coded",
          lambda: CounterBankSnapshot(BANK_COUNTS, lanes=[[0, 1, 2]], coded=[0]),
          mode="bmc", depth=27, deep_depth=32, script=["memory_map", "opt -fast"],
          properties=["counter_bank_lane's properties with the lane coded (one update per "
                      "cycle: entry index and increment): every entry read back == its count "
                      "over the window closed on the taken cycle; the cut after reset closes "
                      "a window of zeros"]),
]
