// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_info.c: `nicscope info`, the analyzer's probes, sample layout, levels, figures, tracks,
 * and the deep capture's status (its refused streams).
 * Options: the usage text in main.c.
 */
#include "nicscope.h"

/* --- info -------------------------------------------------------------------------------------- */

int cmd_info(struct ctx *c, int argc, char **argv)
{
    static const struct option opts[] = {{NULL, 0, NULL, 0}};
    if (next_option("info", argc, argv, opts) != -1)
        return EXIT_USAGE;
    int rc = open_dev(c);
    if (rc)
        return rc;
    out(c, "bus analyzer: %d probes, %u-bit samples, %u trace entries, %u trigger stages, "
        "%u latency bins, %.3f ns per cycle\n", NICSCOPE_NPROBES, NICSCOPE_SAMPLE_WIDTH,
        NICSCOPE_DEPTH, NICSCOPE_NSTAGES, NICSCOPE_NBINS, period_ns());
    bu_json_obj_begin(&c->j);
    bu_json_ku64(&c->j, "sample_width", NICSCOPE_SAMPLE_WIDTH);
    bu_json_ku64(&c->j, "depth", NICSCOPE_DEPTH);
    bu_json_key(&c->j, "signals");
    bu_json_arr_begin(&c->j);
    for (size_t i = 0; i < nicscope_nsignals; i++) {
        const struct nicscope_signal *s = &nicscope_signals[i];
        const struct nicscope_probe *p = &nicscope_probes[s->probe];
        out(c, "  %-5s %-12s %-9s bits %2u..%-2u\n", p->group, p->name, s->name, s->offset,
            s->offset + s->width - 1);
        bu_json_obj_begin(&c->j);
        bu_json_kstr(&c->j, "probe", p->name);
        bu_json_kstr(&c->j, "signal", s->name);
        bu_json_ku64(&c->j, "offset", s->offset);
        bu_json_ku64(&c->j, "width", s->width);
        bu_json_obj_end(&c->j);
    }
    bu_json_arr_end(&c->j);
    struct nicscope_levels lv;
    char err[256];
    if (nicscope_read_levels(c->b, &lv, err, sizeof err) < 0)
        return fail(c, "levels: %s", err);
    out(c, "levels (occupancy integral and maximum):");
    bu_json_key(&c->j, "levels");
    bu_json_arr_begin(&c->j);
    for (unsigned l = 0; l < lv.n; l++) {
        out(c, " %s", nicscope_level_names[l]);
        bu_json_str(&c->j, nicscope_level_names[l]);
    }
    bu_json_arr_end(&c->j);
    out(c, "%s\n", lv.n ? "" : " none built");
    unsigned nfig, ntrk;
    if (nicscope_figures_info(c->b, &nfig, &ntrk, err, sizeof err) < 0)
        return fail(c, "figures: %s", err);
    out(c, "figures (%u trigger comparators, capture --trigger-figure):", nfig);
    bu_json_ku64(&c->j, "figure_comparators", nfig);
    bu_json_ku64(&c->j, "tracks", ntrk);
    bu_json_key(&c->j, "figures");
    bu_json_arr_begin(&c->j);
    for (unsigned i = 0; nfig && i < NICSCOPE_NFIG_SOURCES; i++) {
        out(c, " %s", nicscope_fig_names[i]);
        bu_json_str(&c->j, nicscope_fig_names[i]);
    }
    bu_json_arr_end(&c->j);
    out(c, "%s\n", nfig ? "" : " none built");
    out(c, "capture tracks (levels beside the sample, capture --track): %u\n", ntrk);
    /* The deep capture's status: a stream the device refused (its ring base not 4 KiB
     * aligned) shows here, with the count of refused starts. */
    bool refused;
    uint32_t nrefused;
    bu_json_key(&c->j, "stream");
    if (nicscope_stream_refused(c->b, &refused, &nrefused) == 0) {
        uint32_t entries, lost, prod;
        nicscope_stream_counts(c->b, &entries, &lost, &prod);
        const bool busy = nicscope_stream_busy(c->b);
        out(c, "deep capture (capture --stream): %u B entries; last stream %s, %u entries "
            "written, %u lost%s; %u streams refused (ring base not 4 KiB aligned)\n",
            NICSCOPE_STREAM_ENTRY_BYTES, refused ? "REFUSED" : "taken", prod, lost,
            busy ? ", busy" : "", nrefused);
        bu_json_obj_begin(&c->j);
        bu_json_ku64(&c->j, "entry_bytes", NICSCOPE_STREAM_ENTRY_BYTES);
        bu_json_key(&c->j, "refused");
        bu_json_bool(&c->j, refused);
        bu_json_ku64(&c->j, "refused_count", nrefused);
        bu_json_ku64(&c->j, "entries", entries);
        bu_json_ku64(&c->j, "lost", lost);
        bu_json_ku64(&c->j, "prod", prod);
        bu_json_key(&c->j, "busy");
        bu_json_bool(&c->j, busy);
        bu_json_obj_end(&c->j);
    } else {
        out(c, "deep capture: not built\n");
        bu_json_null(&c->j);
    }
    bu_json_obj_end(&c->j);
    return EXIT_OK;
}
