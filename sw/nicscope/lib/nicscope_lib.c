// SPDX-License-Identifier: BSD-2-Clause
/*
 * nicscope_lib.c: the bus analyzer's driver. See nicscope_lib.h.
 */
#include "nicscope_lib.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nic_dev.h"

const struct nicscope_probe nicscope_probes[NICSCOPE_NPROBES] = {NICSCOPE_PROBES};
const struct nicscope_signal nicscope_signals[] = {NICSCOPE_SIGNALS};
const size_t nicscope_nsignals = sizeof nicscope_signals / sizeof nicscope_signals[0];
const char *const nicscope_count_names[NICSCOPE_NCOUNTS] = {NICSCOPE_COUNT_NAMES};
const char *const nicscope_tlp_names[NICSCOPE_NTLP_TYPES] = {NICSCOPE_TLP_NAMES};
const char *const nicscope_lat_names[NICSCOPE_NLAT] = {NICSCOPE_LAT_NAMES};

int nicscope_probe_index(const char *name)
{
    for (int i = 0; i < NICSCOPE_NPROBES; i++)
        if (strcmp(nicscope_probes[i].name, name) == 0)
            return i;
    return -1;
}

int nicscope_signal_index(const char *pds)
{
    const char *dot = strchr(pds, '.');
    if (!dot)
        return -1;
    char probe[64];
    const size_t n = (size_t)(dot - pds);
    if (n >= sizeof probe)
        return -1;
    memcpy(probe, pds, n);
    probe[n] = 0;
    const int p = nicscope_probe_index(probe);
    for (size_t i = 0; p >= 0 && i < nicscope_nsignals; i++)
        if (nicscope_signals[i].probe == p && strcmp(nicscope_signals[i].name, dot + 1) == 0)
            return (int)i;
    return -1;
}

uint64_t nicscope_bits(const uint32_t *v, unsigned offset, unsigned width)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < width; i++) {
        const unsigned bit = offset + i;
        x |= (uint64_t)((v[bit / 32] >> (bit % 32)) & 1u) << i;
    }
    return x;
}

void nicscope_set_bits(uint32_t *v, unsigned offset, unsigned width, uint64_t x)
{
    for (unsigned i = 0; i < width; i++) {
        const unsigned bit = offset + i;
        const uint32_t m = 1u << (bit % 32);
        if ((x >> i) & 1u)
            v[bit / 32] |= m;
        else
            v[bit / 32] &= ~m;
    }
}

/* LiteX CSRs wider than 32 bits: SIZE words, most significant first. */
static void write_words(struct nic_backend *b, uint64_t addr, unsigned nwords, const uint32_t *v)
{
    for (unsigned i = 0; i < nwords; i++)
        nic_write32(b, addr + 4u * i, v[nwords - 1 - i]);
}

static void read_words(struct nic_backend *b, uint64_t addr, unsigned nwords, uint32_t *v)
{
    for (unsigned i = 0; i < nwords; i++)
        v[nwords - 1 - i] = nic_read32(b, addr + 4u * i);
}

/* --- 1. ANALYZER_INFO ------------------------------------------------------------------------ */

static unsigned field(uint32_t reg, unsigned offset, unsigned size)
{
    return (reg >> offset) & ((1u << size) - 1u);
}

int nicscope_check(struct nic_backend *b, char *err, size_t errlen)
{
    if (nic_rb_require(b, NIC_RB_ANALYZER, err, errlen) < 0)
        return -1;
    const uint32_t info = nic_read32(b, NIC_CSR(b, ANALYZER, INFO));
#define CHECK(F, want)                                                                          \
    do {                                                                                        \
        const unsigned got = field(info, NIC_CSR_ANALYZER_INFO_##F##_OFFSET,                    \
                                   NIC_CSR_ANALYZER_INFO_##F##_SIZE);                           \
        if (got != (unsigned)(want))                                                            \
            return nic_errf(err, errlen, "ANALYZER_INFO (%#010x): " #F " is %u, nicscope_layout.h " \
                        "says %u: host software and gateware are from different builds", info, \
                        got, (unsigned)(want));                                                 \
    } while (0)
    CHECK(NPROBES, NICSCOPE_NPROBES);
    CHECK(NBINS, NICSCOPE_NBINS);
    CHECK(NSTAGES, NICSCOPE_NSTAGES);
    CHECK(LATENCY, NICSCOPE_HAS_LATENCY);
    CHECK(SAMPLE_WIDTH, NICSCOPE_SAMPLE_WIDTH);
    if ((1u << field(info, NIC_CSR_ANALYZER_INFO_DEPTH_LOG2_OFFSET,
                     NIC_CSR_ANALYZER_INFO_DEPTH_LOG2_SIZE)) != NICSCOPE_DEPTH)
        return nic_errf(err, errlen, "ANALYZER_INFO (%#010x): depth differs from nicscope_layout.h "
                    "(%u)", info, NICSCOPE_DEPTH);
#undef CHECK
    return 0;
}

/* --- 2. Counters --------------------------------------------------------------------------- */

void nicscope_snapshot(struct nic_backend *b)
{
    nic_write32(b, NIC_CSR(b, ANALYZER, CONTROL), 1u << NIC_CSR_ANALYZER_CONTROL_SNAPSHOT_OFFSET);
}

void nicscope_snapshot_close(struct nic_backend *b, uint64_t not_before_ns)
{
    const uint64_t now = nic_now_ns(b);
    if (now < not_before_ns)
        nic_idle(b, not_before_ns - now);
    nicscope_snapshot(b);
}

uint64_t nicscope_counter(struct nic_backend *b, unsigned sel)
{
    nic_write32(b, NIC_CSR(b, ANALYZER, CNT_SEL), sel);
    /* CNT_VALUE follows two cycles after the write; a CSR read takes longer than that. */
    return nic_csr_read_wide(b, NIC_CSR(b, ANALYZER, CNT_VALUE), NIC_CSR_ANALYZER_CNT_VALUE_SIZE);
}

uint32_t nicscope_cnt_status(struct nic_backend *b, unsigned *refused)
{
    const uint32_t st = nic_read32(b, NIC_CSR(b, ANALYZER, CNT_STATUS));
    if (refused)
        *refused = field(st, NIC_CSR_ANALYZER_CNT_STATUS_REFUSED_OFFSET,
                         NIC_CSR_ANALYZER_CNT_STATUS_REFUSED_SIZE);
    return field(st, NIC_CSR_ANALYZER_CNT_STATUS_BUSY_OFFSET, NIC_CSR_ANALYZER_CNT_STATUS_BUSY_SIZE);
}

int nicscope_read_counts(struct nic_backend *b, struct nicscope_counts *c, char *err,
                         size_t errlen)
{
    memset(c, 0, sizeof *c);
    /* The pass takes NICSCOPE_SNAPSHOT_CYCLES cycles; an MMIO read takes at least one, so
     * that many reads still busy means the analyzer is stuck. */
    unsigned tries = 0;
    while (nicscope_cnt_status(b, &c->snap_refused))
        if (++tries == NICSCOPE_SNAPSHOT_CYCLES)
            return nic_errf(err, errlen, "ANALYZER_CNT_STATUS.BUSY still 1 after %u reads",
                            tries);
    /* Updates the counter bank could not count (two in one lane on a cycle): 0, or no count
     * is exact. */
    const uint64_t lost = nicscope_counter(b, NICSCOPE_SEL_BANK_LOST);
    if (lost)
        return nic_errf(err, errlen, "the analyzer's counter bank lost %llu update(s) since "
                        "reset: its counts are not exact", (unsigned long long)lost);
    for (unsigned p = 0; p < NICSCOPE_NPROBES; p++) {
        for (unsigned k = 0; k < NICSCOPE_NCOUNTS; k++)
            c->occ[p][k] = nicscope_counter(b, p * 8 + k);
        const int t = nicscope_probes[p].tlp;
        for (unsigned k = 0; t >= 0 && k < NICSCOPE_NTLP_TYPES; k++)
            c->tlp[p][k] = nicscope_counter(b, NICSCOPE_SEL_TLP + (unsigned)t * 8 + k);
    }
    if (!NICSCOPE_HAS_LATENCY)
        return 0;
    for (unsigned i = 0; i < NICSCOPE_NBINS; i++)
        c->bins[i] = nicscope_counter(b, NICSCOPE_SEL_BIN + i);
    for (unsigned k = 0; k < NICSCOPE_NLAT; k++)
        c->lat[k] = nicscope_counter(b, NICSCOPE_SEL_LAT + k);
    return 0;
}

/* One breakdown class (read or write) at counter selector `base`: its three counts at
 * base + counts, then per stage the log2 bins and sum/min/max (both breakdowns' stage layout). */
static void read_class(struct nic_backend *b, unsigned base, unsigned counts, uint64_t *count,
                       uint64_t *raises, uint64_t *occupancy, struct nicscope_bd_stage *st,
                       unsigned nstages)
{
    *count = nicscope_counter(b, base + counts + 0);
    *raises = nicscope_counter(b, base + counts + 1);
    *occupancy = nicscope_counter(b, base + counts + 2);
    for (unsigned s = 0; s < nstages; s++, st++) {
        const unsigned sb = base + s * NICSCOPE_BD_STAGE_STRIDE;
        st->sum = nicscope_counter(b, sb + NICSCOPE_BD_SUM);
        st->min = nicscope_counter(b, sb + NICSCOPE_BD_SUM + 1);
        st->max = nicscope_counter(b, sb + NICSCOPE_BD_SUM + 2);
        for (unsigned i = 0; i < NICSCOPE_BD_NBINS; i++)
            st->bins[i] = nicscope_counter(b, sb + i);
    }
}

const char *const nicscope_bd_stage_names[NICSCOPE_BD_NSTAGES] = {NICSCOPE_BD_STAGE_NAMES};
const char *const nicscope_bd_class_names[] = {NICSCOPE_BD_CLASS_NAMES};

int nicscope_read_breakdown(struct nic_backend *b, struct nicscope_bd *bd, char *err,
                            size_t errlen)
{
    memset(bd, 0, sizeof *bd);
    const uint32_t info = nic_read32(b, NIC_CSR(b, ANALYZER, BD_INFO));
    bd->nclasses = field(info, NIC_CSR_ANALYZER_BD_INFO_NCLASSES_OFFSET,
                         NIC_CSR_ANALYZER_BD_INFO_NCLASSES_SIZE);
    bd->nslots = field(info, NIC_CSR_ANALYZER_BD_INFO_NSLOTS_OFFSET,
                       NIC_CSR_ANALYZER_BD_INFO_NSLOTS_SIZE);
    const unsigned nstages = field(info, NIC_CSR_ANALYZER_BD_INFO_NSTAGES_OFFSET,
                                   NIC_CSR_ANALYZER_BD_INFO_NSTAGES_SIZE);
    if (bd->nclasses == 0)
        return 0;
    if (bd->nclasses != NICSCOPE_BD_NCLASSES || nstages != NICSCOPE_BD_NSTAGES)
        return nic_errf(err, errlen, "ANALYZER_BD_INFO: %u classes, %u stages; "
                        "nicscope_layout.h: %d, %d", bd->nclasses, nstages,
                        NICSCOPE_BD_NCLASSES, NICSCOPE_BD_NSTAGES);
    for (unsigned c = 0; c < bd->nclasses; c++) {
        struct nicscope_bd_class *k = &bd->cls[c];
        read_class(b, NICSCOPE_SEL_BD + c * NICSCOPE_BD_CLASS_STRIDE,
                   NICSCOPE_BD_CLASS_COUNTS, &k->count, &k->raises, &k->occupancy, k->st,
                   NICSCOPE_BD_NSTAGES);
    }
    bd->mismatch = nicscope_counter(b, NICSCOPE_SEL_BD_MISMATCH);
    for (unsigned i = 0; i < bd->nslots && i < NICSCOPE_BD_NSLOTS; i++)
        bd->reorder[i] = nicscope_counter(b, NICSCOPE_SEL_BD_REORDER + i);
    return 0;
}

const char *const nicscope_wbd_stage_names[NICSCOPE_WBD_NSTAGES] = {
    NICSCOPE_WBD_STAGE_NAMES};
const char *const nicscope_wbd_class_names[] = {NICSCOPE_WBD_CLASS_NAMES};

int nicscope_read_wr_breakdown(struct nic_backend *b, struct nicscope_wbd *wb, char *err,
                               size_t errlen)
{
    memset(wb, 0, sizeof *wb);
    const uint32_t info = nic_read32(b, NIC_CSR(b, ANALYZER, WBD_INFO));
    wb->nclasses = field(info, NIC_CSR_ANALYZER_WBD_INFO_NCLASSES_OFFSET,
                         NIC_CSR_ANALYZER_WBD_INFO_NCLASSES_SIZE);
    wb->nslots = field(info, NIC_CSR_ANALYZER_WBD_INFO_NSLOTS_OFFSET,
                       NIC_CSR_ANALYZER_WBD_INFO_NSLOTS_SIZE);
    const unsigned nstages = field(info, NIC_CSR_ANALYZER_WBD_INFO_NSTAGES_OFFSET,
                                   NIC_CSR_ANALYZER_WBD_INFO_NSTAGES_SIZE);
    if (wb->nclasses == 0)
        return 0;
    if (wb->nclasses != NICSCOPE_WBD_NCLASSES || nstages != NICSCOPE_WBD_NSTAGES)
        return nic_errf(err, errlen, "ANALYZER_WBD_INFO: %u classes, %u stages; "
                        "nicscope_layout.h: %d, %d", wb->nclasses, nstages,
                        NICSCOPE_WBD_NCLASSES, NICSCOPE_WBD_NSTAGES);
    for (unsigned c = 0; c < wb->nclasses; c++) {
        struct nicscope_wbd_class *k = &wb->cls[c];
        read_class(b, NICSCOPE_SEL_WBD + c * NICSCOPE_WBD_CLASS_STRIDE,
                   NICSCOPE_WBD_CLASS_COUNTS, &k->count, &k->raises, &k->occupancy, k->st,
                   NICSCOPE_WBD_NSTAGES);
    }
    wb->mismatch = nicscope_counter(b, NICSCOPE_SEL_WBD_MISMATCH);
    return 0;
}

/* A count of ANALYZER_LEVELS_INFO (the field at offset/size): 0 (not built) or the header's
 * `want`; -1 with a message otherwise. */
static int levels_info_count(struct nic_backend *b, unsigned offset, unsigned size,
                             unsigned want, const char *what, unsigned *n, char *err,
                             size_t errlen)
{
    *n = field(nic_read32(b, NIC_CSR(b, ANALYZER, LEVELS_INFO)), offset, size);
    if (*n && *n != want)
        return nic_errf(err, errlen, "ANALYZER_LEVELS_INFO: %u %s; nicscope_layout.h: %u", *n,
                        what, want);
    return 0;
}

const char *const nicscope_level_names[] = {NICSCOPE_LEVEL_NAMES};

int nicscope_level_index(const char *name)
{
    for (unsigned l = 0; l < NICSCOPE_NLEVELS; l++)
        if (strcmp(nicscope_level_names[l], name) == 0)
            return (int)l;
    return -1;
}

int nicscope_read_levels(struct nic_backend *b, struct nicscope_levels *lv, char *err,
                         size_t errlen)
{
    memset(lv, 0, sizeof *lv);
    if (levels_info_count(b, NIC_CSR_ANALYZER_LEVELS_INFO_NLEVELS_OFFSET,
                          NIC_CSR_ANALYZER_LEVELS_INFO_NLEVELS_SIZE, NICSCOPE_NLEVELS, "levels",
                          &lv->n, err, errlen) < 0)
        return -1;
    for (unsigned l = 0; l < lv->n; l++) {
        lv->sum[l] = nicscope_counter(b, NICSCOPE_SEL_LEVEL + 2 * l);
        lv->max[l] = nicscope_counter(b, NICSCOPE_SEL_LEVEL + 2 * l + 1);
    }
    return 0;
}

const char *const nicscope_ev_names[] = {NICSCOPE_EV_NAMES};

int nicscope_ev_index(const char *name)
{
    for (unsigned e = 0; e < NICSCOPE_NEVENTS; e++)
        if (strcmp(nicscope_ev_names[e], name) == 0)
            return (int)e;
    return -1;
}

int nicscope_read_events(struct nic_backend *b, struct nicscope_events *e, char *err,
                         size_t errlen)
{
    memset(e, 0, sizeof *e);
    if (levels_info_count(b, NIC_CSR_ANALYZER_LEVELS_INFO_NEVENTS_OFFSET,
                          NIC_CSR_ANALYZER_LEVELS_INFO_NEVENTS_SIZE, NICSCOPE_NEVENTS, "events",
                          &e->n, err, errlen) < 0)
        return -1;
    for (unsigned k = 0; k < e->n; k++) {
        struct nicscope_event *v = &e->ev[k];
        const unsigned base = NICSCOPE_SEL_EV + k * NICSCOPE_EV_STRIDE;
        uint64_t *stat[] = {&v->count, &v->sum, &v->merged, &v->lost, &v->unmatched, &v->min,
                            &v->max};
        for (unsigned s = 0; s < sizeof stat / sizeof stat[0]; s++)
            *stat[s] = nicscope_counter(b, base + 0x10 + s);
        for (unsigned i = 0; i < NICSCOPE_EV_NBINS; i++)
            v->bins[i] = nicscope_counter(b, base + i);
    }
    return 0;
}

void nicscope_set_histogram(struct nic_backend *b, uint32_t bin_min, unsigned bin_shift)
{
    nic_write32(b, NIC_CSR(b, ANALYZER, BIN_MIN), bin_min);
    nic_write32(b, NIC_CSR(b, ANALYZER, BIN_SHIFT), bin_shift);
}

/* --- 3. Trigger and capture ---------------------------------------------------------------- */

static const char *const mode_names[] = {"level", "rise", "fall", "change"};

static int parse_cmp(const char *s, size_t len, struct nicscope_cmp *c, char *err,
                     size_t errlen)
{
    char buf[256];
    if (len == 0 || len >= sizeof buf)
        return nic_errf(err, errlen, "empty or too long comparator");
    memcpy(buf, s, len);
    buf[len] = 0;
    memset(c, 0, sizeof *c);
    c->mode = NICSCOPE_MODE_LEVEL;
    char *terms = buf;
    char *colon = strchr(buf, ':');
    if (colon) {
        *colon = 0;
        unsigned m = 0;
        while (m < 4 && strcmp(mode_names[m], buf) != 0)
            m++;
        if (m == 4)
            return nic_errf(err, errlen, "'%s': unknown mode (level, rise, fall, change)", buf);
        c->mode = m;
        terms = colon + 1;
    }
    for (char *save = NULL, *t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *eq = strstr(t, "==");
        uint64_t value = 1;
        if (eq) {
            *eq = 0;
            char *end;
            value = strtoull(eq + 2, &end, 0);
            if (*end || end == eq + 2)
                return nic_errf(err, errlen, "'%s': not a number", eq + 2);
        }
        if (t[0] == 'f' && t[1] == 'i' && t[2] == 'g' && t[3] >= '0' && t[3] <= '9' && !t[4]) {
            const unsigned i = (unsigned)(t[3] - '0');
            if (i >= NICSCOPE_NFIGURES)
                return nic_errf(err, errlen, "'%s': the analyzer has %d figure comparators", t,
                                NICSCOPE_NFIGURES);
            if (value > 1)
                return nic_errf(err, errlen, "'%s': a hit is one bit", t);
            nicscope_set_bits(c->mask, NICSCOPE_SAMPLE_WIDTH + i, 1, 1);
            nicscope_set_bits(c->value, NICSCOPE_SAMPLE_WIDTH + i, 1, value);
            continue;
        }
        const int si = nicscope_signal_index(t);
        if (si < 0) {
            char names[1024] = "";
            size_t off = 0;
            for (size_t i = 0; i < nicscope_nsignals && off + 64 < sizeof names; i++)
                off += (size_t)snprintf(names + off, sizeof names - off, "%s%s.%s",
                                        i ? ", " : "",
                                        nicscope_probes[nicscope_signals[i].probe].name,
                                        nicscope_signals[i].name);
            return nic_errf(err, errlen, "'%s': no such signal; signals: %s", t, names);
        }
        const struct nicscope_signal *sg = &nicscope_signals[si];
        if (sg->width < 64 && value >> sg->width)
            return nic_errf(err, errlen, "'%s': value %#" PRIx64 " does not fit in %u bits", t,
                        value, sg->width);
        nicscope_set_bits(c->mask, sg->offset, sg->width, ~0ull);
        nicscope_set_bits(c->value, sg->offset, sg->width, value);
    }
    return 0;
}

int nicscope_parse_stage(const char *spec, struct nicscope_stage *st, char *err,
                         size_t errlen)
{
    memset(st, 0, sizeof *st);
    st->count = 1;
    size_t len = strlen(spec);
    const char *hash = strchr(spec, '#');
    if (hash) {
        char *end;
        const unsigned long n = strtoul(hash + 1, &end, 0);
        if (*end || end == hash + 1 || n < 1 || n > 0xFFFF)
            return nic_errf(err, errlen, "'%s': the count after '#' must be 1..65535", spec);
        st->count = (unsigned)n;
        len = (size_t)(hash - spec);
    }
    if (len == 6 && strncmp(spec, "always", 6) == 0) {
        st->op = NICSCOPE_OP_ALWAYS;
        return 0;
    }
    const char *and_ = memchr(spec, '&', len), *or_ = memchr(spec, '|', len);
    if (and_ && or_)
        return nic_errf(err, errlen, "'%s': one '&' or one '|' per stage", spec);
    const char *op = and_ ? and_ : or_;
    char e[512];
    if (!op) {
        st->op = NICSCOPE_OP_A;
        if (parse_cmp(spec, len, &st->a, e, sizeof e))
            return nic_errf(err, errlen, "stage '%s': %s", spec, e);
        return 0;
    }
    st->op = and_ ? NICSCOPE_OP_A_AND_B : NICSCOPE_OP_A_OR_B;
    if (parse_cmp(spec, (size_t)(op - spec), &st->a, e, sizeof e) ||
        parse_cmp(op + 1, len - (size_t)(op - spec) - 1, &st->b, e, sizeof e))
        return nic_errf(err, errlen, "stage '%s': %s", spec, e);
    return 0;
}

struct stage_regs {
    uint64_t mask_a, value_a, mask_b, value_b, config;
};
static const struct stage_regs stage_regs[NICSCOPE_NSTAGES] = {
#define STAGE(s)                                                                                \
    {NIC_CSR_ANALYZER_TRIG##s##_MASK_A_ADDR, NIC_CSR_ANALYZER_TRIG##s##_VALUE_A_ADDR,         \
     NIC_CSR_ANALYZER_TRIG##s##_MASK_B_ADDR, NIC_CSR_ANALYZER_TRIG##s##_VALUE_B_ADDR,         \
     NIC_CSR_ANALYZER_TRIG##s##_CONFIG_ADDR}
    STAGE(0), STAGE(1), STAGE(2), STAGE(3),
#undef STAGE
};

void nicscope_set_trigger(struct nic_backend *b, const struct nicscope_stage *st, unsigned n)
{
    const unsigned words = NIC_CSR_ANALYZER_TRIG0_MASK_A_SIZE;
    const uint64_t base = nic_rb_base(b, NIC_RB_ANALYZER);
    for (unsigned s = 0; s < n && s < NICSCOPE_NSTAGES; s++) {
        const struct stage_regs *r = &stage_regs[s];
        write_words(b, base + r->mask_a, words, st[s].a.mask);
        write_words(b, base + r->value_a, words, st[s].a.value);
        write_words(b, base + r->mask_b, words, st[s].b.mask);
        write_words(b, base + r->value_b, words, st[s].b.value);
        nic_write32(b, base + r->config,
                    (st[s].a.mode << NIC_CSR_ANALYZER_TRIG0_CONFIG_MODE_A_OFFSET) |
                    (st[s].b.mode << NIC_CSR_ANALYZER_TRIG0_CONFIG_MODE_B_OFFSET) |
                    (st[s].op << NIC_CSR_ANALYZER_TRIG0_CONFIG_OP_OFFSET) |
                    (st[s].count << NIC_CSR_ANALYZER_TRIG0_CONFIG_COUNT_OFFSET));
    }
    nic_write32(b, NIC_CSR(b, ANALYZER, TRIG_NSTAGES), n);
}

const char *const nicscope_fig_names[] = {NICSCOPE_FIG_SOURCES};

int nicscope_fig_index(const char *name)
{
    for (unsigned i = 0; i < NICSCOPE_NFIG_SOURCES; i++)
        if (strcmp(nicscope_fig_names[i], name) == 0)
            return (int)i;
    return -1;
}

int nicscope_figures_info(struct nic_backend *b, unsigned *nfigures, unsigned *ntracks,
                          char *err, size_t errlen)
{
    if (levels_info_count(b, NIC_CSR_ANALYZER_LEVELS_INFO_NFIGURES_OFFSET,
                          NIC_CSR_ANALYZER_LEVELS_INFO_NFIGURES_SIZE, NICSCOPE_NFIGURES,
                          "figure comparators", nfigures, err, errlen) < 0)
        return -1;
    return levels_info_count(b, NIC_CSR_ANALYZER_LEVELS_INFO_NTRACKS_OFFSET,
                             NIC_CSR_ANALYZER_LEVELS_INFO_NTRACKS_SIZE, NICSCOPE_NTRACKS,
                             "capture tracks", ntracks, err, errlen);
}

struct fig_regs {
    uint64_t config, threshold, value;
};
static const struct fig_regs fig_regs[] = {
    {NIC_CSR_ANALYZER_FIG0_CONFIG_ADDR, NIC_CSR_ANALYZER_FIG0_THRESHOLD_ADDR,
     NIC_CSR_ANALYZER_FIG0_VALUE_ADDR},
    {NIC_CSR_ANALYZER_FIG1_CONFIG_ADDR, NIC_CSR_ANALYZER_FIG1_THRESHOLD_ADDR,
     NIC_CSR_ANALYZER_FIG1_VALUE_ADDR},
};

void nicscope_set_figure(struct nic_backend *b, unsigned i, unsigned src, bool below,
                         uint32_t threshold)
{
    if (i >= sizeof fig_regs / sizeof fig_regs[0])
        return;
    const uint64_t base = nic_rb_base(b, NIC_RB_ANALYZER);
    nic_write32(b, base + fig_regs[i].config,
                (src << NIC_CSR_ANALYZER_FIG0_CONFIG_SEL_OFFSET) |
                ((uint32_t)below << NIC_CSR_ANALYZER_FIG0_CONFIG_BELOW_OFFSET));
    nic_write32(b, base + fig_regs[i].threshold, threshold);
}

uint32_t nicscope_fig_value(struct nic_backend *b, unsigned i)
{
    if (i >= sizeof fig_regs / sizeof fig_regs[0])
        return 0;
    return nic_read32(b, nic_rb_base(b, NIC_RB_ANALYZER) + fig_regs[i].value);
}

void nicscope_set_tracks(struct nic_backend *b, const int *level, unsigned n)
{
    uint32_t v = 0;
    for (unsigned i = 0; i < n && i < NICSCOPE_NTRACKS; i++)
        if (level[i] >= 0)
            v |= (uint32_t)(level[i] + 1) << (NIC_CSR_ANALYZER_TRK_SEL_SEL1_OFFSET * i);
    nic_write32(b, NIC_CSR(b, ANALYZER, TRK_SEL), v);
}

void nicscope_arm(struct nic_backend *b, uint32_t pre, uint32_t post)
{
    nic_write32(b, NIC_CSR(b, ANALYZER, CAP_PRE), pre);
    nic_write32(b, NIC_CSR(b, ANALYZER, CAP_POST), post);
    nic_write32(b, NIC_CSR(b, ANALYZER, CONTROL), 1u << NIC_CSR_ANALYZER_CONTROL_ARM_OFFSET);
}

void nicscope_stop(struct nic_backend *b)
{
    nic_write32(b, NIC_CSR(b, ANALYZER, CONTROL), 1u << NIC_CSR_ANALYZER_CONTROL_STOP_OFFSET);
}

void nicscope_status(struct nic_backend *b, struct nicscope_status *s)
{
    const uint32_t st = nic_read32(b, NIC_CSR(b, ANALYZER, CAP_STATUS));
    s->state = field(st, NIC_CSR_ANALYZER_CAP_STATUS_STATE_OFFSET, NIC_CSR_ANALYZER_CAP_STATUS_STATE_SIZE);
    s->triggered = field(st, NIC_CSR_ANALYZER_CAP_STATUS_TRIGGERED_OFFSET,
                         NIC_CSR_ANALYZER_CAP_STATUS_TRIGGERED_SIZE);
    s->overflow = field(st, NIC_CSR_ANALYZER_CAP_STATUS_OVERFLOW_OFFSET,
                        NIC_CSR_ANALYZER_CAP_STATUS_OVERFLOW_SIZE);
    s->stage = field(st, NIC_CSR_ANALYZER_CAP_STATUS_STAGE_OFFSET, NIC_CSR_ANALYZER_CAP_STATUS_STAGE_SIZE);
    s->start = nic_read32(b, NIC_CSR(b, ANALYZER, CAP_START));
    s->count = nic_read32(b, NIC_CSR(b, ANALYZER, CAP_COUNT));
    s->trig_index = nic_read32(b, NIC_CSR(b, ANALYZER, CAP_TRIG_INDEX));
    s->trig_ts = nic_csr_read_wide(b, NIC_CSR(b, ANALYZER, CAP_TRIG_TS), NIC_CSR_ANALYZER_CAP_TRIG_TS_SIZE);
    s->end_ts = nic_csr_read_wide(b, NIC_CSR(b, ANALYZER, CAP_END_TS), NIC_CSR_ANALYZER_CAP_END_TS_SIZE);
    s->last_ts = nic_csr_read_wide(b, NIC_CSR(b, ANALYZER, CAP_LAST_TS), NIC_CSR_ANALYZER_CAP_LAST_TS_SIZE);
    s->now = nic_csr_read_wide(b, NIC_CSR(b, ANALYZER, CAP_NOW), NIC_CSR_ANALYZER_CAP_NOW_SIZE);
}

const char *nicscope_state_name(unsigned state)
{
    static const char *const names[] = {"idle", "armed", "triggered", "done"};
    return state < 4 ? names[state] : "?";
}

/* --- 4. Read-out ----------------------------------------------------------------------------- */

void nicscope_decode(const uint32_t *entries, uint32_t count, uint64_t last_ts,
                     struct nicscope_change *out)
{
    /* Walk from the newest entry back: consecutive entries are less than 2**32 cycles apart
     * (the capture writes an entry whenever the low 32 bits of its counter are 0). */
    uint64_t t = last_ts;
    for (uint32_t k = count; k-- > 0;) {
        const uint32_t *e = entries + (size_t)k * NICSCOPE_ENTRY_WORDS;
        const uint32_t ts = (uint32_t)nicscope_bits(e, NICSCOPE_CAPTURE_WIDTH, 32);
        if (k + 1 < count) {
            const uint32_t next = (uint32_t)out[k + 1].cycle;
            t -= (uint32_t)(next - ts);
        }
        out[k].cycle = t;
        memset(out[k].v, 0, sizeof out[k].v);
        memset(out[k].trk, 0, sizeof out[k].trk);
        for (unsigned i = 0; i < NICSCOPE_NTRACKS; i++)
            out[k].trk[i] = (uint16_t)nicscope_bits(
                e, NICSCOPE_SAMPLE_WIDTH + i * NICSCOPE_TRACK_WIDTH, NICSCOPE_TRACK_WIDTH);
        for (unsigned bit = 0; bit < NICSCOPE_SAMPLE_WIDTH; bit += 32) {
            const unsigned w = NICSCOPE_SAMPLE_WIDTH - bit < 32 ? NICSCOPE_SAMPLE_WIDTH - bit : 32;
            nicscope_set_bits(out[k].v, bit, w, nicscope_bits(e, bit, w));
        }
    }
}

void nicscope_read_trace(struct nic_backend *b, const struct nicscope_status *s,
                         struct nicscope_change *out)
{
    uint32_t *raw = calloc((size_t)s->count * NICSCOPE_ENTRY_WORDS + 1, sizeof *raw);
    if (!raw)
        return;
    for (uint32_t k = 0; k < s->count; k++) {
        nic_write32(b, NIC_CSR(b, ANALYZER, CAP_RD_ADDR), (s->start + k) % NICSCOPE_DEPTH);
        read_words(b, NIC_CSR(b, ANALYZER, CAP_RD_DATA), NIC_CSR_ANALYZER_CAP_RD_DATA_SIZE,
                   raw + (size_t)k * NICSCOPE_ENTRY_WORDS);
    }
    nicscope_decode(raw, s->count, s->last_ts, out);
    free(raw);
}

/* --- Time base ------------------------------------------------------------------------------ */

void nicscope_timebase(struct nic_backend *b, double ns_per_cycle,
                       struct nicscope_timebase *tb)
{
    uint64_t cyc, ps;
    tb->ns_per_cycle = ns_per_cycle;
    if (nic_counter(b, "probe.an_now", &cyc) == 0 && nic_counter(b, "probe.an_now_ps", &ps) == 0) {
        *tb = (struct nicscope_timebase){cyc, (double)ps / 1000.0, ns_per_cycle, 0.0, true};
        return;
    }
    const uint64_t t0 = nic_now_ns(b);
    cyc = nic_csr_read_wide(b, NIC_CSR(b, ANALYZER, CAP_NOW), NIC_CSR_ANALYZER_CAP_NOW_SIZE);
    const uint64_t t1 = nic_now_ns(b);
    *tb = (struct nicscope_timebase){cyc, ((double)t0 + (double)t1) / 2, ns_per_cycle,
                                      ((double)t1 - (double)t0) / 2, false};
}

/* --- 5. Deep capture ------------------------------------------------------------------------- */


static void stream_enable(struct nic_backend *b, bool on)
{
    nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_CTRL),
                (uint32_t)on << NIC_CSR_ANALYZER_STREAM_CTRL_ENABLE_OFFSET);
}

bool nicscope_stream_busy(struct nic_backend *b)
{
    return field(nic_read32(b, NIC_CSR(b, ANALYZER, STREAM_STATUS)),
                 NIC_CSR_ANALYZER_STREAM_STATUS_BUSY_OFFSET,
                 NIC_CSR_ANALYZER_STREAM_STATUS_BUSY_SIZE) != 0;
}

int nicscope_stream_refused(struct nic_backend *b, bool *refused, uint32_t *count)
{
    *refused = false;
    *count = 0;
    if (!NICSCOPE_HAS_STREAM || !nic_rb_find(b, NIC_RB_ANALYZER))
        return -1;
    *refused = field(nic_read32(b, NIC_CSR(b, ANALYZER, STREAM_STATUS)),
                     NIC_CSR_ANALYZER_STREAM_STATUS_REFUSED_OFFSET,
                     NIC_CSR_ANALYZER_STREAM_STATUS_REFUSED_SIZE) != 0;
    *count = nic_read32(b, NIC_CSR(b, ANALYZER, STREAM_REFUSED));
    return 0;
}

void nicscope_stream_counts(struct nic_backend *b, uint32_t *entries, uint32_t *lost,
                            uint32_t *prod)
{
    *entries = nic_read32(b, NIC_CSR(b, ANALYZER, STREAM_ENTRIES));
    *lost = nic_read32(b, NIC_CSR(b, ANALYZER, STREAM_LOST));
    *prod = nic_read32(b, NIC_CSR(b, ANALYZER, STREAM_PROD));
}

int nicscope_stream_start(struct nic_backend *b, struct nicscope_stream *s,
                          unsigned size_log2, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    if (!NICSCOPE_HAS_STREAM)
        return nic_errf(err, errlen, "this analyzer has no deep capture (with_stream)");
    if (size_log2 < 4 || size_log2 > 24)
        return nic_errf(err, errlen, "ring of 2**%u entries: 2**4 .. 2**24", size_log2);
    stream_enable(b, false);
    if (nicscope_stream_busy(b))
        return nic_errf(err, errlen, "the deep capture is still writing an earlier stream");
    s->b = b;
    s->size_log2 = size_log2;
    s->bytes = (size_t)NICSCOPE_STREAM_ENTRY_BYTES << size_log2;
    s->ring = nic_dma_alloc(b, s->bytes, &s->bus);
    if (!s->ring)
        return nic_errf(err, errlen, "cannot allocate %zu B of DMA memory for the ring", s->bytes);
    if (s->bus & 4095) {
        nicscope_stream_free(s);
        return nic_errf(err, errlen, "the ring at %#" PRIx64 " is not 4 KiB aligned", s->bus);
    }
    nic_csr_write_wide(b, NIC_CSR(b, ANALYZER, STREAM_BASE), NIC_CSR_ANALYZER_STREAM_BASE_SIZE,
                       s->bus);
    nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_SIZE_LOG2), size_log2);
    nic_write32(b, NIC_CSR(b, ANALYZER, STREAM_CONS), 0);
    /* Timestamps unwrap from the analyzer's count now: the first entry is a little later. */
    s->last_cycle = nic_csr_read_wide(b, NIC_CSR(b, ANALYZER, CAP_NOW),
                                      NIC_CSR_ANALYZER_CAP_NOW_SIZE);
    stream_enable(b, true);
    /* The device checks the base too (a register read after the enable's write). */
    bool refused;
    uint32_t count;
    if (nicscope_stream_refused(b, &refused, &count) == 0 && refused) {
        stream_enable(b, false);
        nicscope_stream_free(s);
        return nic_errf(err, errlen, "the device refused the ring at %#" PRIx64 " "
                        "(STREAM_STATUS.REFUSED, %u streams refused)", s->bus, count);
    }
    return 0;
}

uint32_t nicscope_stream_take(struct nicscope_stream *s,
                              void (*fn)(const struct nicscope_change *ch, bool gap,
                                         void *arg),
                              void *arg)
{
    const uint32_t prod = nic_read32(s->b, NIC_CSR(s->b, ANALYZER, STREAM_PROD));
    const uint32_t mask = (1u << s->size_log2) - 1, n = prod - s->cons;
    struct nicscope_change ch;
    for (uint32_t k = 0; k < n; k++) {
        const uint32_t *e = (const uint32_t *)(s->ring + (size_t)((s->cons + k) & mask) *
                                               NICSCOPE_STREAM_ENTRY_BYTES);
        const uint32_t ts = (uint32_t)nicscope_bits(e, NICSCOPE_SAMPLE_WIDTH, 32);
        s->last_cycle += (uint32_t)(ts - (uint32_t)s->last_cycle);
        ch.cycle = s->last_cycle;
        memset(ch.v, 0, sizeof ch.v);
        memset(ch.trk, 0, sizeof ch.trk);
        for (unsigned bit = 0; bit < NICSCOPE_SAMPLE_WIDTH; bit += 32) {
            const unsigned w = NICSCOPE_SAMPLE_WIDTH - bit < 32 ? NICSCOPE_SAMPLE_WIDTH - bit : 32;
            nicscope_set_bits(ch.v, bit, w, nicscope_bits(e, bit, w));
        }
        fn(&ch, nicscope_bits(e, NICSCOPE_STREAM_ENTRY_BYTES * 8 - 1, 1) != 0, arg);
    }
    s->cons = prod;
    if (n)
        nic_write32(s->b, NIC_CSR(s->b, ANALYZER, STREAM_CONS), prod);
    return n;
}

void nicscope_stream_stop(struct nicscope_stream *s) { stream_enable(s->b, false); }

void nicscope_stream_free(struct nicscope_stream *s)
{
    if (s->ring)
        nic_dma_free(s->b, s->ring, s->bytes);
    s->ring = NULL;
}
