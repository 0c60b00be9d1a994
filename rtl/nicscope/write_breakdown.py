# SPDX-License-Identifier: BSD-2-Clause
#
# write_breakdown.py: per-request DMA write latency, broken into the stages between hand-offs.
#
# What it is: timestamps of every posted write at each hand-off on its way (raised by its
# engine, granted by the crossbar's write arbiter, taken past it, its MWr's first beat on the
# PHY) and per write class, per stage, the sum, min, max and a log2 histogram of the
# stage's cycles (rtl/nicscope/stage_stats.py, as the read breakdown); plus per class the writes
# raised and the integral of writes outstanding (Little's law). Class docstring: to the cycle.
#
# Interfaces (levels, as the SoC's streams carry them; see the docstring):
#   raised[c], granted[c]   in: {valid, ready} of class c's write's first beat, at its engine's
#                           port / past the crossbar's write arbiter.
#   other                   in: {valid, ready} a write of no class past that arbiter.
#   tx                      in: {valid, ready, first, fmt_type} the PHY's TX stream.
#   snapshot                in: pulse; inc_* out (see the docstring).
#   rd_cls                  in: a class; rd_min[s], rd_max[s] out (comb): its closed window's
#                           min and max per stage (rtl/nicscope/stage_stats.py's StageStats).
#
# Parameters: nclasses (1..3), nslots (writes followed from the packetizer to the PHY, a power
# of two), nbins (log2 bins, 2..16), ts_width (timestamp bits), counters (True: counts in
# registers here, for tests; False: increments for the bus analyzer's CounterBank, `max_inc`
# their largest values).

from amaranth import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .counter_bank import register_counters
from .latency_breakdown import CLASS_COUNTS, handshake
from .stage_stats import stage_counters, stage_counts, stage_ports

# Stage s is timestamp s+1 minus timestamp s; "total" is the last minus the first.
WR_STAGES = ("queue", "credit", "phy", "total")
WR_NSTAGES = len(WR_STAGES)
MWR_TYPES = (0x40, 0x60)

wr_tx_layout = data.StructLayout({"valid": 1, "ready": 1, "first": 1, "fmt_type": 8})


class WriteBreakdown(wiring.Component):
    """DMA write latency per request and per stage.

    Timestamps (cycles of a free-running counter) of each write (one TLP):
      t0 raised:  the first cycle its engine's first beat is valid (`raised[c]`: valid, after
                  a cycle without a pending first beat; pending while valid & ~ready);
      t1 granted: the first cycle it is valid past the crossbar's write arbiter (`granted[c]`:
                  it has won that arbiter);
      t2 taken:   the cycle its first beat moves there (into the slice before the crossbar's
                  last arbiter, litex_soc/pcie/tlp_slices.py);
      t3 on PHY:  the first beat of its MWr moves on `tx`.
    Stages t1-t0 (queue), t2-t1 (credit: held off after the write arbiter, by the slice, the
    last arbiter, the packetizer or the PHY's flow control), t3-t2 (phy: through the slice,
    the last arbiter and the packetizer) and the total t3-t0.

    A class's writes reach the packetizer one at a time in the order they were raised (a
    stream holds its write until it is taken), so t0 and t1 are kept per class; t0, t1 and t2
    may be one cycle. Writes are posted and leave in the order the packetizer took them: each
    taken write (of a class, or `other`) gets a slot in that order and the next MWr on `tx`
    ends the oldest; MRd and completion TLPs on `tx` are not MWr and are ignored. An MWr with
    no slot (nothing taken before it), or a write taken while all nslots are waiting, is
    counted in `mismatch`.

    Counting: each write of a class is counted two cycles after t3: per class `count`, per
    stage `sum`, min, max and bin min(bit_length(cycles), nbins - 1). `raises` counts t0 events
    on their cycle; `occupancy` adds, every cycle, the class's writes with t0 <= cycle < t3, so
    over a window holding whole writes its sum equals the total's sum. An event counted on a
    snapshot cycle goes to the new window; min and max read 2**ts_width-1 and 0 for a window
    without writes.
    """

    def __init__(self, nclasses=2, nslots=8, nbins=16, ts_width=32, counters=True):
        if not 1 <= nclasses <= 3:
            raise ValueError(f"WriteBreakdown: nclasses={nclasses}, 1..3")
        if nslots < 2 or nslots & (nslots - 1) or nslots > 64:
            raise ValueError(f"WriteBreakdown: nslots={nslots}, a power of two, 2..64")
        if not 2 <= nbins <= 16:
            raise ValueError(f"WriteBreakdown: nbins={nbins}, 2..16")
        self.nclasses, self.nslots, self.nbins = nclasses, nslots, nbins
        self.ts_width, self.counters = ts_width, counters
        self.occ_width = (nslots + 1).bit_length()
        self.max_inc = {"count": 1, "raises": 1, "occupancy": nslots + 1,
                        "sum": 2**ts_width - 1, "bin": 1, "mismatch": 1}
        self.cls_width = 2                  # class index; nclasses (or 3): `other`
        counts = {
            "sum": Out(data.ArrayLayout(data.ArrayLayout(48, WR_NSTAGES), nclasses)),
            "bins": Out(data.ArrayLayout(data.ArrayLayout(data.ArrayLayout(32, nbins),
                                                          WR_NSTAGES), nclasses)),
            **{n: Out(data.ArrayLayout(48, nclasses)) for n in CLASS_COUNTS},
            "mismatch": Out(48),
        } if counters else {}
        super().__init__({
            "raised":   In(data.ArrayLayout(handshake, nclasses)),
            "granted":  In(data.ArrayLayout(handshake, nclasses)),
            "other":    In(handshake),
            "tx":       In(wr_tx_layout),
            "snapshot": In(1),
            **stage_ports(nclasses, WR_NSTAGES, nbins, ts_width, self.cls_width, counters),
            "inc_raises": Out(nclasses),
            "inc_occupancy": Out(data.ArrayLayout(self.occ_width, nclasses)),
            "inc_mismatch": Out(1),
            "rd_cls":   In(max(1, (nclasses - 1).bit_length())),
            "rd_min":   Out(data.ArrayLayout(ts_width, WR_NSTAGES)),
            "rd_max":   Out(data.ArrayLayout(ts_width, WR_NSTAGES)),
            **counts,
        })

    def elaborate(self, platform):
        m = Module()
        tw, nc, ns = self.ts_width, self.nclasses, self.nslots
        sw = (ns - 1).bit_length()
        cw = 2                          # class index; nc (or 3): `other`
        now = Signal(tw)
        m.d.sync += now.eq(now + 1)

        def new(name, hs):
            """First cycle of a write on a stream: valid, and none pending the cycle before."""
            held = Signal(name=f"{name}_held")
            m.d.sync += held.eq(hs.valid & ~hs.ready)
            return hs.valid & ~held

        # Per class: t0 and t1 of the write not yet taken (this cycle's when new now).
        rec_layout = data.StructLayout({"cls": cw, "t": data.ArrayLayout(tw, 3)})
        push = Signal()
        pushed = Signal(rec_layout)
        raise_new = Signal(nc)
        m.d.comb += pushed.cls.eq(3)
        for c in range(nc):
            t0c, t1c = Signal(tw, name=f"t0_c{c}"), Signal(tw, name=f"t1_c{c}")
            grant_new = Signal(name=f"grant_new{c}")
            m.d.comb += [raise_new[c].eq(new(f"raise{c}", self.raised[c])),
                         grant_new.eq(new(f"grant{c}", self.granted[c]))]
            with m.If(raise_new[c]):
                m.d.sync += t0c.eq(now)
            with m.If(grant_new):
                m.d.sync += t1c.eq(now)
            g = self.granted[c]
            with m.If(g.valid & g.ready):
                m.d.comb += [pushed.cls.eq(c), pushed.t[0].eq(Mux(raise_new[c], now, t0c)),
                             pushed.t[1].eq(Mux(grant_new, now, t1c)), pushed.t[2].eq(now)]
        m.d.comb += push.eq(sum(g.valid & g.ready for g in self.granted)
                            + (self.other.valid & self.other.ready) != 0)

        # Slots in the order taken: a ring of ns in distributed RAM, `level` of them waiting for
        # their MWr.
        m.submodules.slots = slots = Memory(shape=rec_layout, depth=ns, init=[])
        slot_wr, slot_rd = slots.write_port(), slots.read_port(domain="comb")
        wp, rp = Signal(sw), Signal(sw)
        level = Signal(range(ns + 1))
        tx = self.tx
        mwr = (tx.valid & tx.ready & tx.first
               & ((tx.fmt_type == MWR_TYPES[0]) | (tx.fmt_type == MWR_TYPES[1])))
        oldest = Signal(rec_layout)
        m.d.comb += [slot_rd.addr.eq(rp), oldest.eq(slot_rd.data)]
        # An MWr on the cycle its write is taken with no other waiting takes it directly.
        bypass = (level == 0) & push
        pop = mwr & ((level != 0) | push)
        stored = push & ~bypass | push & bypass & ~mwr
        full = level == ns
        keep = stored & ~(full & ~pop)
        m.d.comb += [slot_wr.addr.eq(wp), slot_wr.data.eq(pushed), slot_wr.en.eq(keep)]
        with m.If(keep):
            m.d.sync += wp.eq(wp + 1)
        with m.If(pop & ~bypass):
            m.d.sync += rp.eq(rp + 1)
        m.d.sync += level.eq(level + keep - (pop & ~bypass))
        lost = (mwr & ~pop) | (stored & full & ~pop)
        r = Signal(rec_layout)
        m.d.comb += r.eq(Mux(bypass, pushed, oldest))

        # Stage A: the differences.
        done = Signal(nc)
        for c in range(nc):
            m.d.comb += done[c].eq(pop & (r.cls == c))
        ts = [r.t[0], r.t[1], r.t[2], now]
        da = [Signal(tw, name=f"d_{s}") for s in WR_STAGES]
        va, cla = Signal(), Signal(cw)
        m.d.sync += [va.eq(done.any()), cla.eq(r.cls)]
        m.d.sync += [da[s].eq(ts[s + 1] - ts[s]) for s in range(3)]
        m.d.sync += da[3].eq(now - r.t[0])
        mism = Signal()
        m.d.sync += mism.eq(lost)

        # Writes outstanding per class: counted from t0 to t3 - 1.
        for c in range(nc):
            out = Signal(self.occ_width, name=f"outstanding_c{c}")
            cur = Signal(self.occ_width + 1, name=f"occ_c{c}")
            m.d.comb += cur.eq(out + raise_new[c] - done[c])
            m.d.sync += out.eq(cur)
            m.d.comb += [self.inc_occupancy[c].eq(cur), self.inc_raises[c].eq(raise_new[c])]

        # Stage B: bins, min and max; the increments.
        mb = Signal()
        m.d.sync += mb.eq(mism)
        m.d.comb += self.inc_mismatch.eq(mb)
        stage_counts(m, self, va, cla, da, self.snapshot, nc, self.nbins, tw, WR_STAGES,
                     self.counters)

        if self.counters:
            incs, outs = stage_counters(self, nc, WR_NSTAGES, self.nbins, CLASS_COUNTS)
            incs["mismatch"], outs["mismatch"] = self.inc_mismatch, self.mismatch
            register_counters(m, self.snapshot, incs, outs)
        return m
