// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_report.c: `nicscope report`, snapshot, run a load, snapshot: per bus % busy / stalled /
 * idle, bytes, frames, CSR hold-off, TLPs by type, the DMA read latency histogram, the mean and
 * largest occupancy of each level (tags, credits, descriptors, FIFO fill), the device-side event
 * latencies, bus time per Ethernet frame. Options: the usage text in main.c.
 */
#include "nicscope.h"

static void load_describe(struct ctx *c, const struct load *l)
{
    out(c, "load: %s", l->kind);
    if (load_has(l, "dma"))
        out(c, "; DMA %" PRIu64 " B host-to-card and %" PRIu64 " B card-to-host at once, data "
            "checked", l->bytes, l->bytes);
    if (load_has(l, "tx"))
        out(c, "; %" PRIu64 " frames of %" PRIu64 " B sent on the NIC's TX ring and received "
            "on its RX ring through the MAC loopback (polled, a doorbell per %u frames), "
            "checked", l->frames, l->frame_size, 32u);
    if (load_has(l, "csr"))
        out(c, "; %u host reads of BAR0 offset 0, %u ns apart", CSR_LOAD_READS, CSR_LOAD_GAP_NS);
    out(c, "\n");
}

/* --- report ------------------------------------------------------------------------------------ */

#define BAR 40

/* '#' busy, '!' stalled (held off), '.' idle, in proportion. */
static void bar(char *s, uint64_t busy, uint64_t stall, uint64_t total)
{
    size_t nb = total ? (size_t)((busy * BAR + total / 2) / total) : 0;
    size_t ns = total ? (size_t)(((busy + stall) * BAR + total / 2) / total) : 0;
    if (ns > BAR)
        ns = BAR;
    if (nb > ns)
        nb = ns;
    for (size_t i = 0; i < BAR; i++)
        s[i] = i < nb ? '#' : i < ns ? '!' : '.';
    s[BAR] = 0;
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

static void report_print(struct ctx *c, const struct nicscope_counts *k, uint64_t window,
                         uint32_t bin_min, unsigned bin_shift)
{
    const double per = period_ns();
    out(c, "\nBus occupancy over one snapshot window: %" PRIu64 " cycles (%.3f us)\n", window,
        (double)window * per / 1000.0);
    struct bu_table t;
    static const char *const h[] = {"probe", "busy%", "stall%", "idle%", "bytes", "frames",
                                    "held_off_by_csr", "busy # / stalled ! / idle ."};
    bu_table_init(&t, 8, h);
    for (int p = 0; p < NICSCOPE_NPROBES; p++) {
        const uint64_t *o = k->occ[p];
        char cells[7][32], b[BAR + 3];
        snprintf(cells[0], 32, "%.2f", pct(o[NS_BUSY], window));
        snprintf(cells[1], 32, "%.2f", pct(o[NS_STALL], window));
        snprintf(cells[2], 32, "%.2f", pct(o[NS_IDLE], window));
        snprintf(cells[3], 32, "%" PRIu64, o[NS_BYTES]);
        snprintf(cells[4], 32, "%" PRIu64, o[NS_FRAMES]);
        snprintf(cells[5], 32, "%" PRIu64, o[NS_STALL_HOLD]);
        b[0] = '|';
        bar(b + 1, o[NS_BUSY], o[NS_STALL], window);
        strcat(b, "|");
        const char *row[] = {nicscope_probes[p].name, cells[0], cells[1], cells[2], cells[3],
                             cells[4], cells[5], b};
        bu_table_row(&t, row);
    }
    if (!c->run.quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);

    out(c, "\nTLPs by type (counted at the first beat)\n");
    static const char *const ht[] = {"probe", "MRd", "MWr", "CplD", "Cpl", "Msg", "other"};
    bu_table_init(&t, 7, ht);
    for (int p = 0; p < NICSCOPE_NPROBES; p++) {
        if (nicscope_probes[p].tlp < 0)
            continue;
        char cells[6][24];
        for (int i = 0; i < 6; i++)
            snprintf(cells[i], 24, "%" PRIu64, k->tlp[p][i]);
        const char *row[] = {nicscope_probes[p].name, cells[0], cells[1], cells[2], cells[3],
                             cells[4], cells[5]};
        bu_table_row(&t, row);
    }
    if (!c->run.quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);

    if (NICSCOPE_HAS_LATENCY) {
        const uint64_t *l = k->lat;
        out(c, "\nDMA read latency, request to last completion (%" PRIu64 " reads", l[NS_LAT_COUNT]);
        if (l[NS_LAT_COUNT])
            out(c, "; mean %.1f, min %" PRIu64 ", max %" PRIu64 " cycles = %.1f / %.1f / %.1f ns",
                (double)l[NS_LAT_SUM] / (double)l[NS_LAT_COUNT], l[NS_LAT_MIN], l[NS_LAT_MAX],
                (double)l[NS_LAT_SUM] / (double)l[NS_LAT_COUNT] * per,
                (double)l[NS_LAT_MIN] * per, (double)l[NS_LAT_MAX] * per);
        out(c, ")\n");
        uint64_t peak = 1;
        for (int i = 0; i < NICSCOPE_NBINS; i++)
            if (k->bins[i] > peak)
                peak = k->bins[i];
        static const char *const hl[] = {"cycles", "ns", "reads", ""};
        bu_table_init(&t, 4, hl);
        char r0[40], r1[40], r2[24], r3[BAR + 1];
        snprintf(r0, sizeof r0, "< %u", bin_min);
        snprintf(r1, sizeof r1, "< %.0f", bin_min * per);
        snprintf(r2, sizeof r2, "%" PRIu64, l[NS_LAT_BELOW]);
        const char *rb[] = {r0, r1, r2, ""};
        bu_table_row(&t, rb);
        for (int i = 0; i < NICSCOPE_NBINS; i++) {
            const uint64_t lo = bin_min + ((uint64_t)i << bin_shift);
            const uint64_t hi = lo + (1ull << bin_shift) - 1;
            snprintf(r0, sizeof r0, "%" PRIu64 "..%" PRIu64, lo, hi);
            snprintf(r1, sizeof r1, "%.0f..%.0f", (double)lo * per, (double)(hi + 1) * per);
            snprintf(r2, sizeof r2, "%" PRIu64, k->bins[i]);
            const size_t n = (size_t)((k->bins[i] * BAR + peak - 1) / peak);
            memset(r3, '#', n);
            r3[n] = 0;
            const char *row[] = {r0, r1, r2, r3};
            bu_table_row(&t, row);
        }
        snprintf(r0, sizeof r0, ">= %" PRIu64, bin_min + ((uint64_t)NICSCOPE_NBINS << bin_shift));
        snprintf(r1, sizeof r1, ">= %.0f",
                 (double)(bin_min + ((uint64_t)NICSCOPE_NBINS << bin_shift)) * per);
        snprintf(r2, sizeof r2, "%" PRIu64, l[NS_LAT_ABOVE]);
        const char *ra[] = {r0, r1, r2, ""};
        bu_table_row(&t, ra);
        if (!c->run.quiet)
            bu_table_print(&t, stdout, "  ");
        bu_table_free(&t);
        if (l[NS_LAT_LOST] || l[NS_LAT_UNMATCHED])
            out(c, "  lost requests (tracking FIFO full): %" PRIu64 ", unmatched completions: "
                "%" PRIu64 "\n", l[NS_LAT_LOST], l[NS_LAT_UNMATCHED]);
    }

    /* Bus time per Ethernet frame: PCIe busy cycles over MAC frames, when MAC probes exist. */
    const int prx = nicscope_probe_index("pcie_rx"), ptx = nicscope_probe_index("pcie_tx");
    const int mtx = nicscope_probe_index("mac_tx"), mrx = nicscope_probe_index("mac_rx");
    if (mtx >= 0 && ptx >= 0 && prx >= 0 && k->occ[mtx][NS_FRAMES])
        out(c, "\nPCIe bus time per Ethernet frame sent: %.1f ns (pcie_rx %.1f + pcie_tx %.1f ns "
            "busy per frame; all PCIe traffic of the window over %" PRIu64 " frames)\n",
            (double)(k->occ[ptx][NS_BUSY] + k->occ[prx][NS_BUSY]) * per /
                (double)k->occ[mtx][NS_FRAMES],
            (double)k->occ[prx][NS_BUSY] * per / (double)k->occ[mtx][NS_FRAMES],
            (double)k->occ[ptx][NS_BUSY] * per / (double)k->occ[mtx][NS_FRAMES],
            k->occ[mtx][NS_FRAMES]);
    else if (mrx < 0 && mtx < 0)
        out(c, "\nbus time per Ethernet frame: n/a (this build has no MAC probes)\n");
}

/* Levels: mean occupancy (the integral over the window's cycles) and the largest value. */
static void levels_print(struct ctx *c, const struct nicscope_levels *lv, uint64_t window)
{
    if (!lv->n)
        return;
    out(c, "\nOccupancy (mean over the window and largest value)\n");
    struct bu_table t;
    static const char *const h[] = {"level", "mean", "max", "integral"};
    bu_table_init(&t, 4, h);
    for (unsigned l = 0; l < lv->n; l++) {
        char a[32], b[24], s[24];
        snprintf(a, sizeof a, "%.3f", window ? (double)lv->sum[l] / (double)window : 0.0);
        snprintf(b, sizeof b, "%" PRIu64, lv->max[l]);
        snprintf(s, sizeof s, "%" PRIu64, lv->sum[l]);
        const char *row[] = {nicscope_level_names[l], a, b, s};
        bu_table_row(&t, row);
    }
    if (!c->run.quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    out(c, "(rd_tags: LitePCIe read tags in use; nic_rd: NIC reads outstanding; fc_*: transmit "
        "credits in use, posted header / data (16 B) / non-posted header; txqN_desc: TX queue "
        "N's descriptors fetched, not completed; tx/rx_fifo: frame FIFO bytes)\n");
}

/* Device-side event latencies: count, mean / min / max ns, merged, lost, unmatched. */
static void events_print(struct ctx *c, const struct nicscope_events *e)
{
    if (!e->n)
        return;
    const double per = period_ns();
    out(c, "\nDevice-side latencies (db_desc: TX doorbell write -> next TX descriptor read "
        "request, later reads of one doorbell unmatched; mmio_rd: host MRd on the PHY -> its "
        "completion's first beat; rx_irq_msi: RX coalescer's interrupt -> its MSI request)\n");
    struct bu_table t;
    static const char *const h[] = {"event", "count", "mean ns", "min ns", "max ns", "merged",
                                    "lost", "unmatched"};
    bu_table_init(&t, 8, h);
    for (unsigned k = 0; k < e->n; k++) {
        const struct nicscope_event *v = &e->ev[k];
        char cells[7][32];
        snprintf(cells[0], 32, "%" PRIu64, v->count);
        snprintf(cells[1], 32, "%.1f", v->count ? (double)v->sum / (double)v->count * per : 0.0);
        snprintf(cells[2], 32, "%.1f", v->count ? (double)v->min * per : 0.0);
        snprintf(cells[3], 32, "%.1f", (double)v->max * per);
        snprintf(cells[4], 32, "%" PRIu64, v->merged);
        snprintf(cells[5], 32, "%" PRIu64, v->lost);
        snprintf(cells[6], 32, "%" PRIu64, v->unmatched);
        const char *row[] = {nicscope_ev_names[k], cells[0], cells[1], cells[2], cells[3],
                             cells[4], cells[5], cells[6]};
        bu_table_row(&t, row);
    }
    if (!c->run.quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
}

static void events_json(struct ctx *c, const struct nicscope_events *e)
{
    struct bu_json *j = &c->j;
    bu_json_key(j, "events");
    bu_json_obj_begin(j);
    for (unsigned k = 0; k < e->n; k++) {
        const struct nicscope_event *v = &e->ev[k];
        bu_json_key(j, nicscope_ev_names[k]);
        bu_json_obj_begin(j);
        bu_json_ku64(j, "count", v->count);
        bu_json_ku64(j, "sum", v->sum);
        bu_json_ku64(j, "min", v->count ? v->min : 0);
        bu_json_ku64(j, "max", v->max);
        bu_json_kdouble(j, "mean_ns", v->count ? (double)v->sum / (double)v->count * period_ns()
                                               : 0.0);
        bu_json_ku64(j, "merged", v->merged);
        bu_json_ku64(j, "lost", v->lost);
        bu_json_ku64(j, "unmatched", v->unmatched);
        bu_json_ku64s(j, "bins", v->bins, NICSCOPE_EV_NBINS);
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
}

static void levels_json(struct ctx *c, const struct nicscope_levels *lv, uint64_t window)
{
    struct bu_json *j = &c->j;
    bu_json_key(j, "levels");
    bu_json_obj_begin(j);
    for (unsigned l = 0; l < lv->n; l++) {
        bu_json_key(j, nicscope_level_names[l]);
        bu_json_obj_begin(j);
        bu_json_ku64(j, "sum", lv->sum[l]);
        bu_json_ku64(j, "max", lv->max[l]);
        bu_json_kdouble(j, "mean", window ? (double)lv->sum[l] / (double)window : 0.0);
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
}

/* The NIC datapath's DMA over the window, from its own counters (read before and after the
 * window; it is idle outside the load), beside the analyzer's TLP counts: what the TX and RX
 * engines fetched and wrote per frame, and what that was on the link. */
static const char *const nic_dma_counters[] = {
    "txe_desc_reads", "txe_data_reads", "txq_wb_writes", "rxe_desc_reads", "rxe_frames",
    "rdadp_requests", "rdadp_completions", "wradp_writes", "wradp_tlps",
};
#define N_NIC_DMA (sizeof nic_dma_counters / sizeof nic_dma_counters[0])

struct tlp_per_frame {
    const char *name, *probe;
    int type;                                /* index into nicscope_tlp_names */
};
static const struct tlp_per_frame tlps_per_frame[] = {
    {"device_mrd", "pcie_tx", 0}, {"device_mwr", "pcie_tx", 1}, {"host_cpld", "pcie_rx", 2},
    {"host_mwr", "pcie_rx", 1}, {"host_mrd", "pcie_rx", 0},
};
#define N_TLP_PF (sizeof tlps_per_frame / sizeof tlps_per_frame[0])

static uint64_t tlp_count(const struct nicscope_counts *k, const struct tlp_per_frame *f)
{
    const int p = nicscope_probe_index(f->probe);
    return p >= 0 ? k->tlp[p][f->type] : 0;
}

static void nic_print(struct ctx *c, const struct nicscope_counts *k, uint64_t window,
                      const struct load *l, const struct load_state *s)
{
    const double frames = (double)l->frames;
    out(c, "\nNIC DMA rings over the window: %" PRIu64 " frames of %" PRIu64 " B (%" PRIu64
        " cycles)%s\n", l->frames, l->frame_size, window,
        load_has(l, "dma") ? "; the TLP counts include the DMA load's" : "");
    struct bu_table t;
    static const char *const h[] = {"NIC counter", "total", "per frame"};
    bu_table_init(&t, 3, h);
    for (size_t i = 0; i < N_NIC_DMA; i++) {
        const uint64_t v = load_counter(s, nic_dma_counters[i]);
        char a[24], b[24];
        snprintf(a, sizeof a, "%" PRIu64, v);
        snprintf(b, sizeof b, "%.3f", (double)v / frames);
        const char *row[] = {nic_dma_counters[i], a, b};
        bu_table_row(&t, row);
    }
    for (size_t i = 0; i < N_TLP_PF; i++) {
        const uint64_t v = tlp_count(k, &tlps_per_frame[i]);
        char n[48], a[24], b[24];
        snprintf(n, sizeof n, "TLPs %s", tlps_per_frame[i].name);
        snprintf(a, sizeof a, "%" PRIu64, v);
        snprintf(b, sizeof b, "%.3f", (double)v / frames);
        const char *row[] = {n, a, b};
        bu_table_row(&t, row);
    }
    if (!c->run.quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    out(c, "doorbells rung (TX and RX, MMIO writes): %" PRIu64 " (%.3f per frame)\n",
        s->doorbells, (double)s->doorbells / frames);
    out(c, "(device MRd: descriptor and payload fetches, RX descriptor prefetch; device MWr: RX "
        "data, RX completion records, TX consumer-index writebacks; host MWr: doorbells and the "
        "write that closes the window)\n");
}

static void nic_json(struct ctx *c, const struct nicscope_counts *k, const struct load *l,
                     const struct load_state *s)
{
    struct bu_json *j = &c->j;
    const double frames = (double)l->frames;
    const int prx = nicscope_probe_index("pcie_rx"), ptx = nicscope_probe_index("pcie_tx");
    bu_json_key(j, "nic_dma");
    bu_json_obj_begin(j);
    bu_json_kdouble(j, "pcie_busy_ns_per_frame",
                    (double)(k->occ[prx][NS_BUSY] + k->occ[ptx][NS_BUSY]) * period_ns() / frames);
    bu_json_ku64(j, "doorbells", s->doorbells);
    bu_json_key(j, "counters");
    bu_json_obj_begin(j);
    for (size_t i = 0; i < N_NIC_DMA; i++)
        bu_json_ku64(j, nic_dma_counters[i], load_counter(s, nic_dma_counters[i]));
    bu_json_obj_end(j);
    bu_json_key(j, "tlps");
    bu_json_obj_begin(j);
    for (size_t i = 0; i < N_TLP_PF; i++)
        bu_json_ku64(j, tlps_per_frame[i].name, tlp_count(k, &tlps_per_frame[i]));
    bu_json_obj_end(j);
    bu_json_key(j, "tlps_per_frame");
    bu_json_obj_begin(j);
    for (size_t i = 0; i < N_TLP_PF; i++)
        bu_json_kdouble(j, tlps_per_frame[i].name,
                        (double)tlp_count(k, &tlps_per_frame[i]) / frames);
    bu_json_obj_end(j);
    bu_json_obj_end(j);
}

static void report_json(struct ctx *c, const struct nicscope_counts *k,
                        const struct nicscope_levels *lv, const struct nicscope_events *ev,
                        uint64_t window,
                        uint32_t bin_min, unsigned bin_shift, const struct load *l,
                        const struct load_state *s, size_t compared)
{
    struct bu_json *j = &c->j;
    bu_json_obj_begin(j);
    bu_json_ku64(j, "crosschecked_counts", compared);
    bu_json_ku64(j, "window_cycles", window);
    bu_json_kdouble(j, "ns_per_cycle", period_ns());
    bu_json_kstr(j, "load", l->kind);
    bu_json_ku64(j, "load_bytes", load_has(l, "dma") ? l->bytes : 0);
    bu_json_ku64(j, "load_frames", load_has(l, "tx") ? l->frames : 0);
    bu_json_ku64(j, "load_frame_size", load_has(l, "tx") ? l->frame_size : 0);
    bu_json_key(j, "probes");
    bu_json_obj_begin(j);
    for (int p = 0; p < NICSCOPE_NPROBES; p++) {
        bu_json_key(j, nicscope_probes[p].name);
        bu_json_obj_begin(j);
        bu_json_kstr(j, "group", nicscope_probes[p].group);
        for (int i = 0; i < NICSCOPE_NCOUNTS; i++)
            bu_json_ku64(j, nicscope_count_names[i], k->occ[p][i]);
        bu_json_kdouble(j, "busy_pct", pct(k->occ[p][NS_BUSY], window));
        bu_json_kdouble(j, "stall_pct", pct(k->occ[p][NS_STALL], window));
        bu_json_kdouble(j, "idle_pct", pct(k->occ[p][NS_IDLE], window));
        if (nicscope_probes[p].tlp >= 0) {
            bu_json_key(j, "tlps");
            bu_json_obj_begin(j);
            for (int i = 0; i < NICSCOPE_NTLP_TYPES; i++)
                bu_json_ku64(j, nicscope_tlp_names[i], k->tlp[p][i]);
            bu_json_obj_end(j);
        }
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
    if (load_has(l, "tx"))
        nic_json(c, k, l, s);
    levels_json(c, lv, window);
    events_json(c, ev);
    if (NICSCOPE_HAS_LATENCY) {
        bu_json_key(j, "latency");
        bu_json_obj_begin(j);
        bu_json_ku64(j, "bin_min", bin_min);
        bu_json_ku64(j, "bin_shift", bin_shift);
        bu_json_ku64s(j, "bins", k->bins, NICSCOPE_NBINS);
        for (int i = 0; i < NICSCOPE_NLAT; i++)
            bu_json_ku64(j, nicscope_lat_names[i], k->lat[i]);
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
}

/* On a backend that sees the same signals itself (the simulation's probe.an.* counters), every
 * count must be equal. Returns the number of counts compared (0: the backend has none). */
static int crosscheck(struct ctx *c, const struct nicscope_counts *k,
                      const struct nicscope_levels *lv, const struct nicscope_events *ev,
                      size_t *compared)
{
    char name[128];
    uint64_t v;
    *compared = 0;
    if (nic_counter(c->b, "probe.an.windows", &v) != 0)
        return EXIT_OK;
    size_t n = 0;
    for (int p = 0; p < NICSCOPE_NPROBES; p++) {
        for (int i = 0; i < NICSCOPE_NCOUNTS; i++) {
            snprintf(name, sizeof name, "probe.an.%s.%s", nicscope_probes[p].name,
                     nicscope_count_names[i]);
            if (nic_counter(c->b, name, &v) == 0) {
                if (v != k->occ[p][i])
                    return fail(c, "cross-check: analyzer %s = %" PRIu64 ", simulator %" PRIu64,
                                name + 9, k->occ[p][i], v);
                n++;
            }
        }
        for (int i = 0; nicscope_probes[p].tlp >= 0 && i < NICSCOPE_NTLP_TYPES; i++) {
            snprintf(name, sizeof name, "probe.an.%s.tlp.%s", nicscope_probes[p].name,
                     nicscope_tlp_names[i]);
            if (nic_counter(c->b, name, &v) == 0) {
                if (v != k->tlp[p][i])
                    return fail(c, "cross-check: analyzer %s = %" PRIu64 ", simulator %" PRIu64,
                                name + 9, k->tlp[p][i], v);
                n++;
            }
        }
    }
    static const struct { const char *name; int idx; } lat[] = {
        {"count", NS_LAT_COUNT}, {"sum", NS_LAT_SUM}, {"min", NS_LAT_MIN}, {"max", NS_LAT_MAX}};
    for (size_t i = 0; NICSCOPE_HAS_LATENCY && i < sizeof lat / sizeof lat[0]; i++) {
        snprintf(name, sizeof name, "probe.an.latency.%s", lat[i].name);
        if (nic_counter(c->b, name, &v) == 0) {
            if (v != k->lat[lat[i].idx])
                return fail(c, "cross-check: analyzer %s = %" PRIu64 ", simulator %" PRIu64,
                            name + 9, k->lat[lat[i].idx], v);
            n++;
        }
    }
    for (unsigned l = 0; l < lv->n; l++)
        for (int s = 0; s < 2; s++) {
            snprintf(name, sizeof name, "probe.an.level.%s.%s", nicscope_level_names[l],
                     s ? "max" : "sum");
            const uint64_t got = s ? lv->max[l] : lv->sum[l];
            if (nic_counter(c->b, name, &v) == 0) {
                if (v != got)
                    return fail(c, "cross-check: analyzer %s = %" PRIu64 ", simulator %" PRIu64,
                                name + 9, got, v);
                n++;
            }
        }
    for (unsigned e = 0; e < ev->n; e++) {
        const struct nicscope_event *x = &ev->ev[e];
        const struct { const char *name; uint64_t v; } st[] = {
            {"count", x->count}, {"sum", x->sum}, {"min", x->min}, {"max", x->max}};
        for (size_t s = 0; s < sizeof st / sizeof st[0]; s++) {
            snprintf(name, sizeof name, "probe.an.ev.%s.%s", nicscope_ev_names[e], st[s].name);
            if (nic_counter(c->b, name, &v) == 0) {
                if (v != st[s].v)
                    return fail(c, "cross-check: analyzer %s = %" PRIu64 ", simulator %" PRIu64,
                                name + 9, st[s].v, v);
                n++;
            }
        }
    }
    *compared = n;
    return EXIT_OK;
}

int cmd_report(struct ctx *c, int argc, char **argv)
{
    struct load l = LOAD_DEFAULT;
    uint64_t bin_min = 0, bin_shift = 5;
    static const struct option opts[] = {LOAD_OPTIONS,
                                         {"bin-min", required_argument, NULL, 'm'},
                                         {"bin-shift", required_argument, NULL, 's'},
                                         {NULL, 0, NULL, 0}};
    int o;
    while ((o = next_option("report", argc, argv, opts)) != -1) {
        int rc;
        switch (o) {
        case 'm':
            if (!optarg || bu_parse_u64(optarg, &bin_min) < 0 || bin_min > UINT32_MAX)
                return usage_error("--bin-min: cycles, 0..2^32-1");
            break;
        case 's':
            if (!optarg || bu_parse_u64(optarg, &bin_shift) < 0 || bin_shift > 31)
                return usage_error("--bin-shift: 0..31");
            break;
        default:
            if ((rc = load_option(o, optarg, &l)))
                return rc;
        }
    }
    int rc = open_dev(c);
    if (rc)
        return rc;
    nicscope_set_histogram(c->b, (uint32_t)bin_min, (unsigned)bin_shift);
    static struct load_state ls;
    if ((rc = load_prepare(c, &l, &ls)))
        return rc;
    struct window w;
    window_open(c, &w);
    if ((rc = run_load(c, &l, &ls)))
        return rc;
    window_close(c, &w);
    if ((rc = load_finish(c, &l, &ls)))
        return rc;
    struct nicscope_counts k;
    struct nicscope_levels lv;
    struct nicscope_events ev;
    char err[256];
    if ((rc = read_window(c, w.refused0, &k)))
        return rc;
    if (nicscope_read_levels(c->b, &lv, err, sizeof err) < 0)
        return fail(c, "levels: %s", err);
    if (nicscope_read_events(c->b, &ev, err, sizeof err) < 0)
        return fail(c, "events: %s", err);
    const uint64_t window = k.occ[0][NS_BUSY] + k.occ[0][NS_STALL] + k.occ[0][NS_IDLE];
    for (int p = 1; p < NICSCOPE_NPROBES; p++)
        if (k.occ[p][NS_BUSY] + k.occ[p][NS_STALL] + k.occ[p][NS_IDLE] != window)
            return fail(c, "probe %s: busy+stall+idle = %" PRIu64 " cycles, probe %s: %" PRIu64,
                        nicscope_probes[p].name,
                        k.occ[p][NS_BUSY] + k.occ[p][NS_STALL] + k.occ[p][NS_IDLE],
                        nicscope_probes[0].name, window);
    load_describe(c, &l);
    report_print(c, &k, window, (uint32_t)bin_min, (unsigned)bin_shift);
    levels_print(c, &lv, window);
    events_print(c, &ev);
    if (load_has(&l, "tx"))
        nic_print(c, &k, window, &l, &ls);
    size_t compared = 0;
    if ((rc = crosscheck(c, &k, &lv, &ev, &compared)))
        return rc;
    if (compared)
        out(c, "cross-check: %zu counts equal the simulator's own cycle-by-cycle count of the "
            "same signals\n", compared);
    report_json(c, &k, &lv, &ev, window, (uint32_t)bin_min, (unsigned)bin_shift, &l, &ls, compared);
    return EXIT_OK;
}
