# SPDX-License-Identifier: BSD-2-Clause
#
# latency_breakdown.py: per-request DMA read latency, broken into the stages between hand-offs.
#
# What it is: timestamps of every read request at each hand-off on its way (raised by its
# engine, granted by the crossbar's arbiter, issued with a tag by the TLP controller, taken
# by the packetizer, its MRd's first beat on the PHY, its first and last completion beats on
# the PHY, handed to the engine in request order), and per request class, per stage, the sum,
# min, max and a log2 histogram of the stage's cycles; plus per class the requests raised and
# handed and the integral of requests outstanding (for Little's law); the reorder distance of
# every request (how many requests issued before it still lacked their last completion when its
# own came) as a histogram. Class docstring: to the cycle.
#
# Interfaces (levels, as the SoC's streams carry them; see the docstring):
#   raised[c], granted[c]   in: {valid, ready} of class c's request, at its engine / the arbiter.
#   issue                   in: {valid, ready, cls, tag} the TLP controller's request output.
#   tx                      in: {valid, ready, first, fmt_type, tag} the PHY's TX stream.
#   rx                      in: {valid, ready, first, last, fmt_type, length, byte_count, tag}.
#   handoff                 in: {valid, tag} a request's last completion beat to its engine.
#   snapshot                in: pulse; inc_* out (see the docstring); inc_reorder out: a
#                           request's reorder distance, one-hot (inc_reorder_valid and
#                           inc_reorder_dist: the same as an index).
#   rd_cls                  in: a class; rd_min[s], rd_max[s] out (comb): its closed window's
#                           min and max per stage (rtl/nicscope/stage_stats.py's StageStats).
#
# Parameters: nclasses (1..4), nslots (requests followed from issue to hand-off, a power of
# two), nbins (log2 bins, 2..16), ts_width (timestamp bits), tag_beat (PHY beat of a completion
# holding its tag: 0 at 128 bits, 1 at 64), counters (True: counts in registers here, for
# tests; False: increments for the bus analyzer's CounterBank, `max_inc` their largest values).

from amaranth import Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .counter_bank import register_counters
from .stage_stats import stage_counters, stage_counts, stage_ports

# Stage s is timestamp s+1 minus timestamp s; "total" is the last minus the first.
STAGES = ("queue", "tag", "credit", "phy", "rtt", "cpl", "reorder", "total")
NSTAGES = len(STAGES)
# Per-class counts beside the stages.
CLASS_COUNTS = ("count", "raises", "occupancy")
MRD_TYPES = (0x00, 0x20)
CPL_TYPES = (0x0A, 0x4A)

handshake = data.StructLayout({"valid": 1, "ready": 1})


def issue_layout(nclasses):
    return data.StructLayout({"valid": 1, "ready": 1, "cls": max(1, (nclasses - 1).bit_length()),
                              "tag": 8})


tx_layout = data.StructLayout({"valid": 1, "ready": 1, "first": 1, "fmt_type": 8, "tag": 8})
rx_layout = data.StructLayout({"valid": 1, "ready": 1, "first": 1, "last": 1, "fmt_type": 8,
                               "length": 10, "byte_count": 12, "tag": 8})
handoff_layout = data.StructLayout({"valid": 1, "tag": 8})


def bin_of(v, nbins):
    """Log2 bin of v: i for bit_length(v) == i, the last bin for all longer."""
    return min(v.bit_length(), nbins - 1)


class LatencyBreakdown(wiring.Component):
    """DMA read latency per request and per stage.

    Timestamps (cycles of a free-running counter) of each read request:
      t0 raised:  the first cycle its engine's request is valid (`raised[c]`: valid, after a
                  cycle without a pending request; a request is pending while valid & ~ready);
      t1 granted: the first cycle it is valid at the TLP controller's input (`granted[c]`);
      t2 issued:  the first cycle the controller presents it with a tag (`issue`);
      t3 taken:   the cycle `issue` moves (valid & ready): the packetizer took it;
      t4 on PHY:  its MRd's first beat moves on `tx` (matched by tag);
      t5 first completion beat moves on `rx` (the first beat of its first completion, by tag);
      t6 last completion beat: the last beat of the completion whose length is byte_count / 4;
      t7 handed:  `handoff.valid` (its last completion beat with `end` moves to the engine).
    Stages t1-t0 .. t7-t6 (queue, tag, credit, phy, rtt, cpl, reorder) and the total t7-t0.

    Requests of one class reach `issue` in the order they were raised, one at a time (a
    stream holds its request until the controller takes it), so t0 and t1 are kept per class;
    from `issue` on a request has a slot, in issue order (the controller hands completions
    back in issue order); a tag maps to its slot from `issue` to its last completion beat.
    A `handoff` whose tag is not its slot's is counted in `mismatch`.

    Counting: each handed request is counted two cycles after `handoff` (the subtractions,
    then the bins and min/max): per class `count`, per stage `sum`, min, max and bin
    min(bit_length(cycles), nbins - 1). `raises` counts t0 events on their cycle;
    `occupancy` adds, every cycle, the class's requests with t0 <= cycle < t7, so over a
    window holding whole requests its sum equals the total's sum (Little's law). Reorder
    distance: when a request's last completion beat moves (t6), the requests issued before it
    whose last completion beat has not moved yet; counted three cycles after t6 in
    `inc_reorder` bin `distance` (at most nslots - 1). An event
    counted on a snapshot cycle goes to the new window; min and max (per stage, of class
    `rd_cls`, in RAM: StageStats) read 2**ts_width-1 and 0 for a window without requests.
    """

    def __init__(self, nclasses=2, nslots=8, nbins=16, ts_width=32, tag_beat=0, counters=True):
        if not 1 <= nclasses <= 4:
            raise ValueError(f"LatencyBreakdown: nclasses={nclasses}, 1..4")
        if nslots < 1 or nslots & (nslots - 1) or nslots > 256:
            raise ValueError(f"LatencyBreakdown: nslots={nslots}, a power of two up to 256")
        if not 2 <= nbins <= 16:
            raise ValueError(f"LatencyBreakdown: nbins={nbins}, 2..16")
        if tag_beat not in (0, 1):
            raise ValueError(f"LatencyBreakdown: tag_beat={tag_beat}, 0 or 1")
        self.nclasses, self.nslots, self.nbins = nclasses, nslots, nbins
        self.ts_width, self.tag_beat, self.counters = ts_width, tag_beat, counters
        self.occ_width = (nslots + 1).bit_length()
        self.max_inc = {"count": 1, "raises": 1, "occupancy": nslots + 1,
                        "sum": 2**ts_width - 1, "bin": 1, "mismatch": 1}
        self.cls_width = max(1, (nclasses - 1).bit_length())
        counts = {
            "sum": Out(data.ArrayLayout(data.ArrayLayout(48, NSTAGES), nclasses)),
            "bins": Out(data.ArrayLayout(data.ArrayLayout(data.ArrayLayout(32, nbins),
                                                          NSTAGES), nclasses)),
            **{n: Out(data.ArrayLayout(48, nclasses)) for n in CLASS_COUNTS},
            "mismatch": Out(48),
            "reorder": Out(data.ArrayLayout(48, nslots)),
        } if counters else {}
        super().__init__({
            "raised":   In(data.ArrayLayout(handshake, nclasses)),
            "granted":  In(data.ArrayLayout(handshake, nclasses)),
            "issue":    In(issue_layout(nclasses)),
            "tx":       In(tx_layout),
            "rx":       In(rx_layout),
            "handoff":  In(handoff_layout),
            "snapshot": In(1),
            **stage_ports(nclasses, NSTAGES, nbins, ts_width, self.cls_width, counters),
            "inc_raises": Out(nclasses),
            "inc_occupancy": Out(data.ArrayLayout(self.occ_width, nclasses)),
            "inc_mismatch": Out(1),
            "inc_reorder": Out(nslots),
            "inc_reorder_valid": Out(1),
            "inc_reorder_dist": Out(range(nslots)),
            "rd_cls":   In(max(1, (nclasses - 1).bit_length())),
            "rd_min":   Out(data.ArrayLayout(ts_width, NSTAGES)),
            "rd_max":   Out(data.ArrayLayout(ts_width, NSTAGES)),
            **counts,
        })

    def elaborate(self, platform):
        m = Module()
        tw, nc, ns = self.ts_width, self.nclasses, self.nslots
        sw = max(1, (ns - 1).bit_length())
        now = Signal(tw)
        m.d.sync += now.eq(now + 1)

        def new(name, hs):
            """First cycle of a request on a stream: valid, and none pending the cycle before."""
            held = Signal(name=f"{name}_held")
            m.d.sync += held.eq(hs.valid & ~hs.ready)
            return hs.valid & ~held

        # Per class: t0 and t1 of the request not yet issued.
        t0c = [Signal(tw, name=f"t0_c{c}") for c in range(nc)]
        t1c = [Signal(tw, name=f"t1_c{c}") for c in range(nc)]
        raise_new = Signal(nc)
        for c in range(nc):
            m.d.comb += raise_new[c].eq(new(f"raise{c}", self.raised[c]))
            with m.If(raise_new[c]):
                m.d.sync += t0c[c].eq(now)
            with m.If(new(f"grant{c}", self.granted[c])):
                m.d.sync += t1c[c].eq(now)

        # Slots in issue order, in distributed RAM: class, tag and t0..t2 written at issue, t3..t6
        # each in a RAM of its own (one write per cycle each), all read at the oldest slot
        # (`hcnt`); whether a completion beat was seen and the last one moved, in registers.
        iss_layout = data.StructLayout({"cls": len(self.issue.cls), "tag": 8,
                                        "t": data.ArrayLayout(tw, 3)})
        rec_layout = data.StructLayout({"cls": len(self.issue.cls), "tag": 8,
                                        "t": data.ArrayLayout(tw, 7)})
        seen, done = Signal(ns), Signal(ns)
        tag_slot = [Signal(sw, name=f"tag_slot{t}") for t in range(ns)]
        icnt, hcnt = Signal(sw), Signal(sw)
        r = Signal(rec_layout)
        m.submodules.slots_issue = slots_issue = Memory(shape=iss_layout, depth=ns, init=[])
        iss_wr, iss_rd = slots_issue.write_port(), slots_issue.read_port(domain="comb")
        m.d.comb += [iss_rd.addr.eq(hcnt), r.cls.eq(iss_rd.data.cls), r.tag.eq(iss_rd.data.tag)]
        m.d.comb += [r.t[k].eq(iss_rd.data.t[k]) for k in range(3)]
        t_wr = {}
        for k in range(3, 7):
            mem = Memory(shape=tw, depth=ns, init=[])
            m.submodules[f"slots_t{k}"] = mem
            t_wr[k], rd = mem.write_port(), mem.read_port(domain="comb")
            m.d.comb += [rd.addr.eq(hcnt), r.t[k].eq(rd.data)]

        def set_t(slot, k, value, en):
            m.d.comb += [t_wr[k].addr.eq(slot), t_wr[k].data.eq(value), t_wr[k].en.eq(en)]

        def slot_of(tag):
            s = Signal(sw)
            with m.Switch(tag[:sw]):
                for t in range(ns):
                    with m.Case(t):
                        m.d.comb += s.eq(tag_slot[t])
            return s

        iss = self.issue
        issue_new = Signal()
        m.d.comb += issue_new.eq(new("issue", iss))
        m.d.comb += [iss_wr.addr.eq(icnt), iss_wr.en.eq(issue_new),
                     iss_wr.data.cls.eq(iss.cls), iss_wr.data.tag.eq(iss.tag),
                     iss_wr.data.t[2].eq(now)]
        with m.Switch(iss.cls):
            for c in range(nc):
                with m.Case(c):
                    m.d.comb += [iss_wr.data.t[0].eq(t0c[c]), iss_wr.data.t[1].eq(t1c[c])]
            with m.Default():                      # no such class; Verilator's CASEINCOMPLETE
                m.d.comb += [iss_wr.data.t[0].eq(0), iss_wr.data.t[1].eq(0)]
        with m.If(issue_new):
            m.d.sync += icnt.eq(icnt + 1)
            m.d.sync += [seen.bit_select(icnt, 1).eq(0), done.bit_select(icnt, 1).eq(0)]
            for t in range(ns):
                with m.If(iss.tag[:sw] == t):
                    m.d.sync += tag_slot[t].eq(icnt)
        set_t(Mux(issue_new, icnt, (icnt - 1)[:sw]), 3, now, iss.valid & iss.ready)

        tx = self.tx
        is_mrd = (tx.fmt_type == MRD_TYPES[0]) | (tx.fmt_type == MRD_TYPES[1])
        set_t(slot_of(tx.tag), 4, now, tx.valid & tx.ready & tx.first & is_mrd)

        # Completions: the first beat's cycle, type and end flag are kept until the beat with
        # the tag (the first at 128 bits, the second at 64).
        rx = self.rx
        rx_move = rx.valid & rx.ready
        first_ts, first_cpl, first_end = Signal(tw), Signal(), Signal()
        is_cpl = (rx.fmt_type == CPL_TYPES[0]) | (rx.fmt_type == CPL_TYPES[1])
        is_end = rx.byte_count[2:] == rx.length
        with m.If(rx_move & rx.first):
            m.d.sync += [first_ts.eq(now), first_cpl.eq(is_cpl), first_end.eq(is_end)]
        beat1 = Signal()          # the next beat to move is the second of its TLP
        with m.If(rx_move):
            m.d.sync += beat1.eq(rx.first & ~rx.last)
        if self.tag_beat == 0:
            tag_ev = rx_move & rx.first
            ev_cpl, ev_end, ev_ts = is_cpl, is_end, now
        else:
            tag_ev = rx_move & beat1 & ~rx.first
            ev_cpl, ev_end, ev_ts = first_cpl, first_end, first_ts
        cur_slot, cur_cpl, cur_end = Signal(sw), Signal(), Signal()
        ev_slot = slot_of(rx.tag)
        first_cpl_ev = tag_ev & ev_cpl & ~seen.bit_select(ev_slot, 1)
        set_t(ev_slot, 5, ev_ts, first_cpl_ev)
        with m.If(tag_ev):
            m.d.sync += [cur_slot.eq(ev_slot), cur_cpl.eq(ev_cpl), cur_end.eq(ev_end)]
        with m.If(first_cpl_ev):
            m.d.sync += seen.bit_select(ev_slot, 1).eq(1)
        last_slot = Mux(tag_ev, ev_slot, cur_slot)
        last_cpl_end = Mux(tag_ev, ev_cpl & ev_end, cur_cpl & cur_end)
        last_ev = rx_move & rx.last & last_cpl_end
        set_t(last_slot, 6, now, last_ev)
        with m.If(last_ev):
            m.d.sync += done.bit_select(last_slot, 1).eq(1)

        # Hand-off: the oldest slot. Stage A: the differences.
        hv = self.handoff.valid
        with m.If(hv):
            m.d.sync += hcnt.eq(hcnt + 1)
        ts = [r.t[k] for k in range(7)] + [now]
        da = [Signal(tw, name=f"d_{s}") for s in STAGES]
        va, cla = Signal(), Signal.like(r.cls)
        m.d.sync += [va.eq(hv), cla.eq(r.cls)]
        m.d.sync += [da[s].eq(ts[s + 1] - ts[s]) for s in range(7)]
        m.d.sync += da[7].eq(now - r.t[0])
        mism = Signal()
        m.d.sync += mism.eq(hv & (r.tag != self.handoff.tag))

        # Requests outstanding per class: counted from t0 to t7 - 1.
        for c in range(nc):
            out = Signal(self.occ_width, name=f"outstanding_c{c}")
            cur = Signal(self.occ_width + 1, name=f"occ_c{c}")
            m.d.comb += cur.eq(out + raise_new[c] - (hv & (r.cls == c)))
            m.d.sync += out.eq(cur)
            m.d.comb += [self.inc_occupancy[c].eq(cur), self.inc_raises[c].eq(raise_new[c])]

        # Stage B: bins, min and max; the increments.
        mb = Signal()
        m.d.sync += mb.eq(mism)
        stage_counts(m, self, va, cla, da, self.snapshot, nc, self.nbins, tw, STAGES,
                     self.counters)
        m.d.comb += self.inc_mismatch.eq(mb)

        # Reorder distance: a cycle after t6 the older slots (from the oldest not handed, hcnt,
        # up to the request's) without their last beat; their count's bin a cycle later.
        rv, rslot = Signal(), Signal(sw)
        m.d.sync += [rv.eq(last_ev), rslot.eq(last_slot)]
        span = Signal(sw)
        m.d.comb += span.eq(rslot - hcnt)
        older = Signal(ns)
        for i in range(ns):
            rel = Signal(sw, name=f"rel{i}")
            m.d.comb += [rel.eq(i - hcnt), older[i].eq((rel < span) & ~done[i])]
        dist = Signal(range(ns + 1))
        m.d.comb += dist.eq(sum(older[i] for i in range(ns)))
        rvalid, rdist = Signal(), Signal(range(ns))
        m.d.sync += [rvalid.eq(rv), rdist.eq(dist)]
        m.d.comb += [self.inc_reorder.eq(Mux(rvalid, Const(1, ns) << rdist, 0)),
                     self.inc_reorder_valid.eq(rvalid), self.inc_reorder_dist.eq(rdist)]

        if self.counters:
            incs, outs = {"mismatch": self.inc_mismatch}, {"mismatch": self.mismatch}
            for i in range(ns):
                incs[f"reorder{i}"] = self.inc_reorder[i]
                outs[f"reorder{i}"] = self.reorder[i]
            more = stage_counters(self, nc, NSTAGES, self.nbins, CLASS_COUNTS)
            incs.update(more[0])
            outs.update(more[1])
            register_counters(m, self.snapshot, incs, outs)
        return m
