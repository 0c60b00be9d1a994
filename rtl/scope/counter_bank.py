# SPDX-License-Identifier: BSD-2-Clause
#
# counter_bank.py: many wide event counters with snapshot-and-clear, kept in RAM.
#
# What it is: the storage of the bus analyzer's counts: narrow accumulators (flip-flops for the
# counts that can all change on one cycle; distributed RAM for the lanes, groups of counts of
# which at most one changes per cycle) and one scanner that adds them, one entry per cycle,
# into 48-bit totals in block RAM; a snapshot closes every entry's window on the same cycle.
# How: CounterBank's docstring.
#
# Interfaces:
#   inc<i>      in, per entry: the increment this cycle (0..max_inc[i]).
#   snapshot    in: request a snapshot this cycle.
#   taken       out (comb): a window closes this cycle (snapshot and not busy; or the cut that
#               ends the clearing after reset, with lanes).
#   busy        out: a snapshot pass (or the clearing after reset) is in progress.
#   refused     out, 16 bits: snapshot requests refused because busy (wraps).
#   lost        out, 16 bits: cycles on which a lane had more than one increment (wraps; 0 when
#               every lane's sources keep their promise).
#   rd_addr     in: entry to read; rd_data out, 48 bits, one cycle later (valid while not busy).
#
# Parameters:
#   max_inc     list: the largest increment of each entry (its accumulator is sized from it).
#   width       count width (48: 26 days of cycles at 125 MHz before wrapping).
#   lanes       lists of entries, each a run of consecutive entries of which at most one has a
#               nonzero increment per cycle (a histogram's bins): their accumulators are in RAM.

from amaranth import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out


class CounterBank(wiring.Component):
    """Wide counters in block RAM, with an atomic snapshot-and-clear.

    Each entry is a count that adds a per-cycle increment `inc<i>`. One scanner visits the
    entries round-robin, one per cycle, and adds the entry's events since its last visit to
    its total in block RAM (read, add, write back over three cycles): one wide adder for all
    entries, as in Corundum's stats collector. The events wait in narrow accumulators, which
    hold one scan period of increments and so cannot overflow (`max_inc * period` fits).

    Scanned entries (in no lane): a flip-flop accumulator each, which the visit takes (it
    restarts with that cycle's increment). Lane entries: a lane has one update per cycle at
    most, so its accumulators are two banks of distributed RAM (one per snapshot epoch), each
    entry a free-running count modulo 2**lane_width: an increment is a read-modify-write of the
    live bank's entry (a cycle after its cycle, tagged with that cycle's epoch); a visit reads
    the count and adds its difference to the count of the previous visit, which the block RAM
    word keeps beside the total (`last`). A cycle with two increments in one lane counts in
    `lost` (and its update is wrong).

    Snapshot-and-clear, atomic for every entry on one cycle T (`taken`): every scanned
    accumulator moves to a residual register (its events before T not yet in RAM) and restarts
    with cycle T's increment; the lanes' epoch flips (events from T on go to the other bank,
    the closed one keeps every count at T); every entry becomes pending. The scanner's next
    visit of a pending entry (cycles T + 1 .. T + period) writes its closed window (RAM total +
    residual, or + the closed bank's count - last) into the snapshot RAM, restarts the RAM total
    with the events since T and clears the entry in the closed bank. So a snapshot's window is
    every cycle from the previous one, inclusive, to T, exclusive, for every entry alike.
    `busy` is 1 while that pass runs (n + 3 cycles from T at most: the last write lands two
    cycles after the last visit); a snapshot requested while busy is refused (not taken,
    counted in `refused`). After reset (block RAM and distributed RAM keep their contents):
    without lanes the scanner makes the same pass at once with zero windows, which clears the
    RAM totals, so the first window counts from reset; with lanes it first clears the lanes'
    second bank for one scan period, then cuts (`taken`, a window of zeros) and makes that
    pass, so the first window counts from the cut. The snapshot RAM reads 0 until the first
    snapshot.

    Read-out: `rd_data` is the snapshot RAM's entry `rd_addr` of one cycle before.
    """

    # Cycles from a visit to its RAM write: the read (1), the add (1).
    PIPE = 2

    def __init__(self, max_inc, width=48, lanes=()):
        max_inc = list(max_inc)
        if not max_inc or any(m < 1 for m in max_inc):
            raise ValueError(f"CounterBank: max_inc={max_inc}: one positive value per entry")
        self.max_inc, self.width = max_inc, width
        # Scan period: an entry is revisited after `period` cycles, which must exceed the
        # pipeline (a visit's read must see the previous visit's write).
        self.n = n = len(max_inc)
        self.period = max(self.n, self.PIPE + 2)
        self.lanes = [list(lane) for lane in lanes]
        in_lane = [e for lane in self.lanes for e in lane]
        if (len(set(in_lane)) != len(in_lane) or any(not 0 <= e < n for e in in_lane)
                or any(not lane or lane != list(range(lane[0], lane[0] + len(lane)))
                       for lane in self.lanes)):
            raise ValueError(f"CounterBank: lanes {self.lanes}: disjoint runs of consecutive "
                             "entries")
        self.scanned = [i for i in range(n) if i not in set(in_lane)]
        self.acc_widths = {i: (max_inc[i] * self.period).bit_length() for i in self.scanned}
        self.lane_width = max([(max_inc[e] * self.period).bit_length() for e in in_lane],
                              default=0)
        if max([*self.acc_widths.values(), self.lane_width]) > width:
            raise ValueError(f"CounterBank: an increment of {max(max_inc)} per cycle does not "
                             f"fit {width}-bit counts")
        self.addr_width = max(1, (self.period - 1).bit_length())
        super().__init__({
            **{f"inc{i}": In(m.bit_length()) for i, m in enumerate(max_inc)},
            "snapshot": In(1),
            "taken":    Out(1),
            "busy":     Out(1),
            "refused":  Out(16),
            "lost":     Out(16),
            "rd_addr":  In(self.addr_width),
            "rd_data":  Out(width),
        })

    def elaborate(self, platform):
        m = Module()
        n, period, width, wl = self.n, self.period, self.width, self.lane_width
        # A live word: the total, and for a lane entry its accumulator at the last visit.
        m.submodules.live = live = Memory(shape=width + wl, depth=period, init=[])
        m.submodules.snap = snap = Memory(shape=width, depth=period, init=[])
        live_rd, live_wr = live.read_port(), live.write_port()
        snap_rd, snap_wr = snap.read_port(), snap.write_port()
        m.d.comb += [snap_rd.addr.eq(self.rd_addr), self.rd_data.eq(snap_rd.data)]

        # The scanner: entry `idx` is visited this cycle.
        idx = Signal(self.addr_width)
        m.d.sync += idx.eq(Mux0(idx == period - 1, idx + 1))

        # With lanes, after reset: a scan period clearing the lanes' bank 1 (`clearing`), then
        # the cut (`reset_cut`), a snapshot whose window is not kept.
        clearing = Signal(init=int(bool(self.lanes)))
        cut = Signal(name="reset_cut")
        m.d.sync += cut.eq(clearing & (idx == period - 1))
        with m.If(clearing & (idx == period - 1)):
            m.d.sync += clearing.eq(0)

        # The pass: entries still to visit (every entry once, from the cycle after the
        # snapshot); `zero` for the pass after reset, which keeps zero windows.
        remaining = Signal(range(n + 1), init=0 if self.lanes else n)
        zero = Signal(init=1)
        in_flight = Signal(self.PIPE)          # a pass visit in the pipeline's stages 1, 2
        pass0 = Signal()
        m.d.comb += [
            pass0.eq((remaining != 0) & (idx < n)),
            self.busy.eq(clearing | cut | (remaining != 0) | (in_flight != 0)),
            self.taken.eq(self.snapshot & ~self.busy | cut),
        ]
        with m.If(self.snapshot & self.busy):
            m.d.sync += self.refused.eq(self.refused + 1)
        t_idx = Signal.like(idx)               # the entry visited on the snapshot cycle
        with m.If(self.taken):
            m.d.sync += [remaining.eq(n), t_idx.eq(idx)]
        with m.Elif(pass0):
            m.d.sync += remaining.eq(remaining - 1)
        with m.If(self.snapshot & ~self.busy):
            m.d.sync += zero.eq(0)

        # Scanned entries: their visits follow a one-hot token, advanced on each (`kpos` its
        # index, for the visit's multiplexers).
        in_lanes = []
        for lane in self.lanes:
            lo, hi = lane[0], lane[-1] + 1
            flag = Signal(name=f"lane{len(in_lanes)}_visit")
            m.d.comb += flag.eq((idx >= lo) & (idx < hi))
            in_lanes.append(flag)
        in_lane = Signal()
        m.d.comb += in_lane.eq(Cat(*in_lanes).any() if in_lanes else 0)
        ns = len(self.scanned)
        scan_take = Signal(max([*self.acc_widths.values(), 1]))
        scan_res = Signal.like(scan_take)
        if ns:
            is_scan = Signal()
            m.d.comb += is_scan.eq(~in_lane & (idx < n))
            token = Signal(ns, init=1)
            kpos = Signal(range(ns))
            with m.If(is_scan):
                m.d.sync += [token.eq(Cat(token[-1], token[:-1])),
                             kpos.eq(Mux0(kpos == ns - 1, kpos + 1))]
            accs, residuals = [], []
            for k, i in enumerate(self.scanned):
                w = self.acc_widths[i]
                acc, res = Signal(w, name=f"acc{i}"), Signal(w, name=f"res{i}")
                inc = getattr(self, f"inc{i}")
                visit = token[k] & is_scan
                # A visit takes the accumulator; so does a snapshot (into the residual). The
                # entry visited on the snapshot cycle takes its events so far to its RAM total
                # as usual: its residual is ignored (`t_idx`).
                m.d.sync += acc.eq(Mux(visit | self.taken, inc, acc + inc))
                with m.If(self.taken):
                    m.d.sync += res.eq(acc)
                accs.append(acc)
                residuals.append(res)
            # The visited entry's accumulator and residual, selected by `kpos` (a multiplexer:
            # simulated as one case statement, where an AND-OR of every entry costs a simulator
            # every entry every cycle).
            pad = [Const(0, 1)] * (2**len(kpos) - ns)
            m.d.comb += [
                scan_take.eq(Mux(is_scan, Array(accs + pad)[kpos], 0)),
                scan_res.eq(Mux(is_scan & (idx != t_idx), Array(residuals + pad)[kpos], 0)),
            ]

        # Lanes: two banks of accumulators each, `epoch` the live one (`epoch_now` on this
        # cycle: a snapshot's events are the new window's).
        epoch = Signal()
        epoch_now = Signal()
        m.d.comb += epoch_now.eq(epoch ^ self.taken)
        m.d.sync += epoch.eq(epoch_now)
        lane_live = Signal(max(wl, 1))
        lane_closed = Signal(max(wl, 1))
        collisions, live_parts, closed_parts = [], [], []
        for ln, (lane, visit) in enumerate(zip(self.lanes, in_lanes)):
            size = len(lane)
            lw = max(1, (size - 1).bit_length())
            incs = [getattr(self, f"inc{e}") for e in lane]
            nz = Cat(*[inc != 0 for inc in incs])
            # More than one increment: some bit set beside the lowest one.
            collisions.append((nz & (nz - 1)).any())
            # The update, registered with its epoch: its entry and increment (one at most).
            ev_valid, ev_tag = Signal(name=f"lane{ln}_valid"), Signal(name=f"lane{ln}_epoch")
            ev_j = Signal(lw, name=f"lane{ln}_entry")
            ev_v = Signal(wl, name=f"lane{ln}_inc")
            j_or, v_or = Const(0, lw), Const(0, wl)
            for k, inc in enumerate(incs):
                j_or = j_or | Mux(nz[k], k, 0)
                v_or = v_or | inc
            m.d.sync += [ev_valid.eq(nz.any()), ev_tag.eq(epoch_now), ev_j.eq(j_or),
                         ev_v.eq(v_or)]
            local = Signal(lw, name=f"lane{ln}_scan")
            m.d.comb += local.eq(idx - lane[0])
            reads, rmw = [], []
            # One adder per lane: the tagged bank's entry plus the increment.
            upd = Signal(wl, name=f"lane{ln}_sum")
            for b in range(2):
                bank = Memory(shape=wl, depth=size, init=[])
                m.submodules[f"lane{ln}_bank{b}"] = bank
                rmw_rd = bank.read_port(domain="comb")
                scan_rd = bank.read_port(domain="comb")
                wr = bank.write_port()
                ev_here = ev_valid & (ev_tag == b)
                # The closed bank's entry is cleared on its pass visit (bank 1 while clearing).
                clear = visit & (pass0 & (epoch != b) | (clearing if b else 0))
                m.d.comb += [
                    rmw_rd.addr.eq(ev_j), scan_rd.addr.eq(local),
                    wr.addr.eq(Mux(ev_here, ev_j, local)),
                    wr.data.eq(Mux(ev_here, upd, 0)),
                    wr.en.eq(ev_here | clear),
                ]
                reads.append(scan_rd.data)
                rmw.append(rmw_rd.data)
            m.d.comb += upd.eq(Mux(ev_tag, rmw[1], rmw[0]) + ev_v)
            live_parts.append(Mux(visit, Mux(epoch, reads[1], reads[0]), 0))
            closed_parts.append(Mux(visit, Mux(epoch, reads[0], reads[1]), 0))
        if self.lanes:
            m.d.comb += [lane_live.eq(_or(live_parts)), lane_closed.eq(_or(closed_parts))]
        if collisions:
            with m.If(Cat(*collisions).any()):
                m.d.sync += self.lost.eq(self.lost + 1)

        # Stage 0: the visit.
        m.d.comb += live_rd.addr.eq(idx)
        s1_idx = Signal.like(idx)
        s1_take = Signal(max(len(scan_take), wl))
        s1_res = Signal.like(s1_take)
        s1_lane = Signal()
        s1_pass = Signal()
        s1_zero = Signal()
        m.d.sync += [s1_idx.eq(idx), s1_lane.eq(in_lane), s1_pass.eq(pass0), s1_zero.eq(zero),
                     s1_take.eq(Mux(in_lane, lane_live, scan_take)),
                     s1_res.eq(Mux(in_lane, lane_closed, scan_res))]

        # Stage 1: the RAM word is out; add. A lane entry's events are its accumulator's
        # advance since the last visit (since the cut on a pass visit: the bank was cleared).
        total, last = live_rd.data[:width], live_rd.data[width:]
        take, res = Signal(width), Signal(width)
        if wl:
            m.d.comb += [
                take.eq(Mux(s1_lane, (s1_take[:wl] - Mux(s1_pass, 0, last))[:wl], s1_take)),
                res.eq(Mux(s1_lane, (s1_res[:wl] - last)[:wl], s1_res)),
            ]
        else:
            m.d.comb += [take.eq(s1_take), res.eq(s1_res)]
        s2_idx = Signal.like(idx)
        s2_live = Signal(width + wl)
        s2_snap = Signal(width)
        s2_pass = Signal()
        m.d.sync += [
            s2_idx.eq(s1_idx), s2_pass.eq(s1_pass),
            s2_live.eq(Cat(Mux(s1_pass, take, total + take)[:width], s1_take[:wl])),
            s2_snap.eq(Mux0(s1_zero, total + res)),
        ]
        m.d.sync += in_flight.eq(Cat(pass0, s1_pass))

        # Stage 2: write back.
        m.d.comb += [
            live_wr.addr.eq(s2_idx), live_wr.data.eq(s2_live), live_wr.en.eq(1),
            snap_wr.addr.eq(s2_idx), snap_wr.data.eq(s2_snap), snap_wr.en.eq(s2_pass),
        ]
        return m


def _or(values):
    out = values[0]
    for v in values[1:]:
        out = out | v
    return out


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
