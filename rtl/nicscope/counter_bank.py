# SPDX-License-Identifier: BSD-2-Clause
#
# counter_bank.py: many wide event counters with snapshot-and-clear, kept in RAM.
#
# What it is: the storage of the bus analyzer's counts: narrow accumulators (flip-flops for the
# counts that can all change on one cycle; distributed RAM for the lanes, groups of counts of
# which at most one changes per cycle, each lane as wide as its own counts need) and one
# scanner that adds them, one entry per cycle, into 48-bit totals in block RAM; a snapshot
# closes every entry's window on the same cycle.
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
#   lane<k>_valid, lane<k>_entry, lane<k>_inc   in, per coded lane k (in place of its entries'
#               inc<i>): this cycle's one update of the lane, entry `lane<k>_entry` (0-based in
#               the lane) adds `lane<k>_inc` when valid.
#   rd_addr     in: entry to read; rd_data out, 48 bits, one cycle later (valid while not busy).
#
# Parameters:
#   max_inc     list: the largest increment of each entry (its accumulator is sized from it).
#   width       count width (48: 26 days of cycles at 125 MHz before wrapping).
#   lanes       lists of entries, each a run of consecutive entries of which at most one has a
#               nonzero increment per cycle (a histogram's bins): their accumulators are in RAM.
#   coded       indices of lanes given as one update per cycle (lane<k>_*) rather than one
#               increment per entry: a source that has the entry as an index (a class, a bin)
#               saves decoding it and the bank encoding it back, and cannot collide.

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
    most, so its accumulators are one memory of distributed RAM holding two counts per entry,
    one per snapshot epoch, each a free-running count modulo 2**w (w: the lane's own width,
    bits of two scan periods of its largest increment): an increment is a read-modify-write
    of its entry's count of the live epoch (a cycle after its cycle, tagged with that cycle's
    epoch; the read at the write's address, so one port reads and writes); a visit reads one
    of the entry's two counts and adds its advance since that count's previous read, which the
    block RAM word keeps beside the total (`last`, one per epoch). A cycle with two increments
    in one lane counts in `lost` (and its update is wrong).

    Snapshot-and-clear, atomic for every entry on one cycle T (`taken`): every scanned
    accumulator moves to a residual register (its events before T not yet in RAM) and restarts
    with cycle T's increment; the lanes' epoch flips (events from T on count in the other
    epoch, the closed one keeps every count at T); every entry becomes pending. The scanner's
    next visit of a pending entry (cycles T + 1 .. T + period) writes its closed window (RAM
    total + residual, or + the closed epoch's count - its last) into the snapshot RAM and
    restarts the RAM total with the events since T (a lane entry's at 0: its live epoch's
    count advances from its value at T, its last, until the next visit reads it). So a
    snapshot's window is every cycle from the previous one, inclusive, to T, exclusive, for
    every entry alike. `busy` is 1 while that pass runs (n + 3 cycles from T at most: the last
    write lands two cycles after the last visit); a snapshot requested while busy is refused
    (not taken, counted in `refused`). After reset (block RAM and distributed RAM keep their
    contents): without lanes the scanner makes the same pass at once with zero windows, which
    clears the RAM totals, so the first window counts from reset; with lanes it first reads
    every lane entry's epoch-1 count into its last for one scan period (`priming`: epoch 0 is
    live), then cuts (`taken`, a window of zeros) and makes that pass, so the first window
    counts from the cut. The snapshot RAM reads 0 until the first snapshot.

    Read-out: `rd_data` is the snapshot RAM's entry `rd_addr` of one cycle before.
    """

    # Cycles from a visit to its RAM write: the read (1), the add (1).
    PIPE = 2

    def __init__(self, max_inc, width=48, lanes=(), coded=()):
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
        self.coded = sorted(set(coded))
        if any(not 0 <= k < len(self.lanes) for k in self.coded):
            raise ValueError(f"CounterBank: coded lanes {self.coded}: indices into lanes")
        coded_entries = {e for k in self.coded for e in self.lanes[k]}
        self.scanned = [i for i in range(n) if i not in set(in_lane)]
        self.acc_widths = {i: (max_inc[i] * self.period).bit_length() for i in self.scanned}
        # A lane's counts wrap at 2**w, w its own: a visit reads an epoch's count up to the
        # cycle before the one before it, one scan period of increments; but the pass after a
        # snapshot reads the closed epoch's, so the live one's next read (the visit after the
        # pass visit) can take 2 * period - 1 cycles of increments.
        self.lane_widths = [((2 * self.period - 1) * max(max_inc[e] for e in lane)).bit_length()
                            for lane in self.lanes]
        self.lane_width = max(self.lane_widths, default=0)
        if max([*self.acc_widths.values(), self.lane_width]) > width:
            raise ValueError(f"CounterBank: an increment of {max(max_inc)} per cycle does not "
                             f"fit {width}-bit counts")
        self.addr_width = max(1, (self.period - 1).bit_length())
        super().__init__({
            **{f"inc{i}": In(m.bit_length()) for i, m in enumerate(max_inc)
               if i not in coded_entries},
            **{f"lane{k}_{name}": In(w) for k in self.coded for name, w in (
                ("valid", 1), ("entry", max(1, (len(self.lanes[k]) - 1).bit_length())),
                ("inc", max(max_inc[e] for e in self.lanes[k]).bit_length()))},
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
        # A live word: the total, and for a lane entry its two epochs' counts at their last
        # reads (`last`, epoch 0 then 1).
        m.submodules.live = live = Memory(shape=width + 2 * wl, depth=period, init=[])
        m.submodules.snap = snap = Memory(shape=width, depth=period, init=[])
        live_rd, live_wr = live.read_port(), live.write_port()
        snap_rd, snap_wr = snap.read_port(), snap.write_port()
        m.d.comb += [snap_rd.addr.eq(self.rd_addr), self.rd_data.eq(snap_rd.data)]

        # The scanner: entry `idx` is visited this cycle.
        idx = Signal(self.addr_width)
        m.d.sync += idx.eq(Mux0(idx == period - 1, idx + 1))

        # With lanes, after reset: a scan period reading the lanes' epoch-1 counts into their
        # last (`priming`), then the cut (`reset_cut`), a snapshot whose window is not kept.
        priming = Signal(init=int(bool(self.lanes)))
        cut = Signal(name="reset_cut")
        m.d.sync += cut.eq(priming & (idx == period - 1))
        with m.If(priming & (idx == period - 1)):
            m.d.sync += priming.eq(0)

        # The pass: entries still to visit (every entry once, from the cycle after the
        # snapshot); `zero` for the pass after reset, which keeps zero windows.
        remaining = Signal(range(n + 1), init=0 if self.lanes else n)
        zero = Signal(init=1)
        in_flight = Signal(self.PIPE)          # a pass visit in the pipeline's stages 1, 2
        pass0 = Signal()
        m.d.comb += [
            pass0.eq((remaining != 0) & (idx < n)),
            self.busy.eq(priming | cut | (remaining != 0) | (in_flight != 0)),
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

        # Lane visits: a flag per lane, 1 while idx is in the lane (registered: set on the
        # cycle before its first entry, which is the previous lane's last when they adjoin;
        # cleared after its last), and `local`, the visited lane's entry (0 outside lanes).
        nl = len(self.lanes)
        in_lanes = [Signal(name=f"lane{ln}_visit", init=int(lane[0] == 0))
                    for ln, lane in enumerate(self.lanes)]
        local = Signal(max([1, *[(len(lane) - 1).bit_length() for lane in self.lanes]]))
        in_lane = Signal()
        m.d.comb += in_lane.eq(Cat(*in_lanes).any() if nl else 0)
        if nl:
            ends = [flag & (local == len(lane) - 1) for flag, lane in zip(in_lanes, self.lanes)]
            m.d.sync += local.eq(Mux(in_lane & ~Cat(*ends).any(), local + 1, 0))
            for ln, lane in enumerate(self.lanes):
                lo = lane[0]
                prev = [k for k, other in enumerate(self.lanes) if (other[-1] + 1) % period == lo]
                start = ends[prev[0]] if prev else idx == (lo - 1) % period
                m.d.sync += in_lanes[ln].eq(start | in_lanes[ln] & ~ends[ln])

        # Scanned entries: their visits follow a one-hot token, advanced on each (`kpos` its
        # index, for the visit's multiplexers).
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

        # Lanes: each entry's count per epoch, `epoch` the live one (`epoch_now` on this
        # cycle: a snapshot's events are the new window's). A visit reads the live epoch's
        # count; a pass visit (and a priming one) the closed epoch's.
        epoch = Signal()
        epoch_now = Signal()
        m.d.comb += epoch_now.eq(epoch ^ self.taken)
        m.d.sync += epoch.eq(epoch_now)
        rd_epoch = Signal()
        m.d.comb += rd_epoch.eq(Mux(pass0 | priming, ~epoch, epoch))
        lane_cur = Signal(max(wl, 1))
        lane_mask = Signal(max(wl, 1))         # the visited lane's counts' modulus - 1
        collisions, cur_parts, mask_parts = [], [], []
        for ln, (lane, visit) in enumerate(zip(self.lanes, in_lanes)):
            size, lw = len(lane), self.lane_widths[ln]
            jw = max(1, (size - 1).bit_length())
            vw = max(self.max_inc[e] for e in lane).bit_length()
            if ln in self.coded:
                valid, j_in, v_in = (getattr(self, f"lane{ln}_{name}")
                                     for name in ("valid", "entry", "inc"))
            else:
                incs = [getattr(self, f"inc{e}") for e in lane]
                nz = Cat(*[inc != 0 for inc in incs])
                collisions.append(_several(list(nz)))
                valid, j_in, v_in = nz.any(), Const(0, jw), Const(0, vw)
                for k, inc in enumerate(incs):
                    j_in = j_in | Mux(nz[k], k, 0)
                    v_in = v_in | inc
            # The update, registered with its epoch: its entry and increment (one at most).
            ev_valid, ev_tag = Signal(name=f"lane{ln}_upd"), Signal(name=f"lane{ln}_epoch")
            ev_j = Signal(jw, name=f"lane{ln}_j")
            ev_v = Signal(vw, name=f"lane{ln}_v")
            m.d.sync += [ev_valid.eq(valid), ev_tag.eq(epoch_now), ev_j.eq(j_in), ev_v.eq(v_in)]
            # Entry j's count of epoch b at Cat(b, j). The update reads at its write's address.
            mem = Memory(shape=lw, depth=2 * size, init=[])
            m.submodules[f"lane{ln}_counts"] = mem
            rmw_rd = mem.read_port(domain="comb")
            scan_rd = mem.read_port(domain="comb")
            wr = mem.write_port()
            addr = Cat(ev_tag, ev_j)
            m.d.comb += [
                rmw_rd.addr.eq(addr), wr.addr.eq(addr),
                wr.data.eq(rmw_rd.data + ev_v), wr.en.eq(ev_valid),
                scan_rd.addr.eq(Cat(rd_epoch, local[:jw])),
            ]
            cur_parts.append(Mux(visit, scan_rd.data, 0))
            mask_parts.append(Mux(visit, 2**lw - 1, 0))
        if self.lanes:
            m.d.comb += [lane_cur.eq(_or(cur_parts)), lane_mask.eq(_or(mask_parts))]
        if collisions:
            with m.If(Cat(*collisions).any()):
                m.d.sync += self.lost.eq(self.lost + 1)

        # Stage 0: the visit.
        m.d.comb += live_rd.addr.eq(idx)
        s1_idx = Signal.like(idx)
        s1_take = Signal(max(len(scan_take), wl))
        s1_res = Signal.like(scan_res)
        s1_mask = Signal.like(lane_mask)
        s1_lane = Signal()
        s1_pass = Signal()
        s1_zero = Signal()
        s1_epoch = Signal()
        m.d.sync += [s1_idx.eq(idx), s1_lane.eq(in_lane), s1_pass.eq(pass0), s1_zero.eq(zero),
                     s1_take.eq(Mux(in_lane, lane_cur, scan_take)), s1_res.eq(scan_res),
                     s1_mask.eq(lane_mask), s1_epoch.eq(rd_epoch)]

        # Stage 1: the RAM word is out; add. A lane entry's events are its count's advance
        # since its last read (modulo the lane's width); a pass visit's are the closed
        # window's rest, and its total restarts at 0 (the live count's advance since the cut
        # is the next visit's).
        total = live_rd.data[:width]
        last = [live_rd.data[width + b * wl:width + (b + 1) * wl] for b in range(2)]
        take, res = Signal(width), Signal(width)
        if wl:
            adv = Signal(wl)
            m.d.comb += [
                adv.eq((s1_take[:wl] - Mux(s1_epoch, last[1], last[0])) & s1_mask),
                take.eq(Mux(s1_lane, Mux(s1_pass, 0, adv), s1_take)),
                res.eq(Mux(s1_lane, adv, s1_res)),
            ]
        else:
            m.d.comb += [take.eq(s1_take), res.eq(s1_res)]
        s2_idx = Signal.like(idx)
        s2_live = Signal(width + 2 * wl)
        s2_snap = Signal(width)
        s2_pass = Signal()
        # The count read replaces its epoch's last (a scanned entry's are unused).
        new_last = [Mux(s1_epoch == b, s1_take[:wl], last[b]) for b in range(2)] if wl else []
        m.d.sync += [
            s2_idx.eq(s1_idx), s2_pass.eq(s1_pass),
            s2_live.eq(Cat(Mux(s1_pass, take, total + take)[:width], *new_last)),
            s2_snap.eq(Mux0(s1_zero, total + res)),
        ]
        m.d.sync += in_flight.eq(Cat(pass0, s1_pass))

        # Stage 2: write back.
        m.d.comb += [
            live_wr.addr.eq(s2_idx), live_wr.data.eq(s2_live), live_wr.en.eq(1),
            snap_wr.addr.eq(s2_idx), snap_wr.data.eq(s2_snap), snap_wr.en.eq(s2_pass),
        ]
        return m


def _several(bits):
    """More than one of `bits` is 1: a tree of (any, several) pairs over groups of three (no
    carry chain, as `nz & (nz - 1)` would make)."""
    def tree(bits):
        if len(bits) <= 3:
            pairs = [a & b for i, a in enumerate(bits) for b in bits[i + 1:]]
            return _or(bits), (_or(pairs) if pairs else Const(0, 1))
        k = -(-len(bits) // 3)
        parts = [tree(bits[i:i + k]) for i in range(0, len(bits), k)]
        anys = [a for a, _ in parts]
        return _or(anys), _or([s for _, s in parts] + [tree(anys)[1]])
    return tree(bits)[1]


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
