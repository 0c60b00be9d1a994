/*
 * nicscope: host tool of the on-chip bus analyzer (litex_soc/scope/bus_analyzer.py): occupancy
 * report and triggered trace capture, on any backend (the Verilated SoC, or a board over VFIO).
 *
 *   nicscope [--backend sim|vfio] [--opts K=V,...] [--json FILE] [--quiet] [--timeout-ms N]
 *            COMMAND [options]
 *   info      the analyzer's probes, sample layout and counters
 *   report    snapshot, run a load, snapshot: per bus % busy / stalled / idle (with an ASCII
 *             bar), bytes, frames, cycles held off by host CSR accesses, TLPs by type in each
 *             direction, the DMA read latency histogram, bus time per Ethernet frame
 *   capture   program the trigger, arm, run a load, read the trace back and write a VCD (and
 *             FST when vcd2fst is present) plus a GTKWave save file
 *   cpu       (builds with the soft CPU) the same registers from the CPU over the SoC bus: the
 *             BIOS, typed at through the crossover UART, closes a window and reads counters;
 *             every value must equal the host's read over BAR0
 * Loads: `dma` moves --bytes in both directions at once (host-to-card into the pattern checker,
 * card-to-host from the pattern generator) and checks the data; `tx` sends --frames frames of
 * --frame-size bytes through the Ethernet MAC (programmed I/O into its slots) and its loopback
 * PHY and checks each on return; `dma+tx` runs both at once; `none` lets --idle-ns pass.
 * Exit status: 0 ok, 1 failure (backend error, data mismatch, trigger not fired), 2 usage.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "nic_backend.h"
#include "nic_console.h"
#include "nic_csr.h"
#include "nic_dev.h"
#include "nic_eth.h"
#include "nic_scope.h"
#include "soc_bus.h"
#include "vcd_writer.h"

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

static const char *const usage_text =
"usage: nicscope [--backend sim|vfio] [--opts K=V,...] [--json FILE] [--quiet]\n"
"                [--timeout-ms N] COMMAND [options]\n"
"\n"
"commands:\n"
"  info                          probes, sample layout, counter selectors\n"
"  report [LOAD] [--bin-min N] [--bin-shift N]\n"
"                                occupancy over one snapshot window around the load\n"
"  capture [LOAD] [--trigger STAGE]... [--pre N] [--post N] [--vcd FILE] [--gtkw FILE]\n"
"                                triggered trace -> VCD (+ FST) and GTKWave save file\n"
"  cpu [LOAD] [--boot-ms N]      read the analyzer from the soft CPU too (CPU=1 builds)\n"
"LOAD: --load dma|tx|dma+tx|none (default dma+tx) --bytes N (DMA, each way, default 64K)\n"
"      --frames N --frame-size N (tx: through the MAC loopback, default 32 x 1514 B)\n"
"      --idle-ns N (none)\n"
"STAGE (up to 4, in sequence): cmp [&|| cmp] [#N] | always[#N]\n"
"  cmp  = [level|rise|fall|change:]probe.signal[==value][,probe.signal[==value]...]\n"
"  e.g. --trigger 'rise:dma_rd_req.valid' --trigger 'pcie_rx.fmt_type==0x4a,pcie_rx.valid#3'\n"
"--pre N   entries kept before the trigger (default 64); --post N cycles after (default 4000)\n"
"\n"
"examples:\n"
"  nicscope report --bytes 256K\n"
"  nicscope --json results/occupancy.json report\n"
"  nicscope capture --trigger 'pcie_tx.fmt_type==0x40,pcie_tx.valid,pcie_tx.first' \\\n"
"           --vcd results/trace.vcd --gtkw results/trace.gtkw\n";

struct ctx {
    const char *kind, *opts, *json_path;
    bool quiet;
    uint64_t timeout_ns;
    struct nic_backend *b;
    struct nic_dev_info info;
    struct bu_json j;
    char failmsg[2048];
};

__attribute__((format(printf, 2, 3))) static int fail(struct ctx *c, const char *fmt, ...)
{
    if (c->failmsg[0])
        return EXIT_FAIL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->failmsg, sizeof c->failmsg, fmt, ap);
    va_end(ap);
    return EXIT_FAIL;
}

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("nicscope: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputs("\n(nicscope --help for usage)\n", stderr);
    va_end(ap);
    return EXIT_USAGE;
}

__attribute__((format(printf, 2, 3))) static void out(struct ctx *c, const char *fmt, ...)
{
    if (c->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
}

static int backend_check(struct ctx *c, const char *what)
{
    const char *e = nic_last_error(c->b);
    return e ? fail(c, "%s: backend error: %s", what, e) : EXIT_OK;
}

/* Reads the counts of the window just closed; fails if the read-out or the backend does, or if a
 * snapshot was refused since CNT_STATUS.REFUSED read `refused0` (read before the window was
 * opened): then a window was not closed where asked. */
static int read_window(struct ctx *c, unsigned refused0, struct nic_scope_counts *k)
{
    char err[256];
    int rc;
    if (nic_scope_read_counts(c->b, k, err, sizeof err) < 0)
        return fail(c, "counter read-out: %s", err);
    if ((rc = backend_check(c, "counter read-out")))
        return rc;
    if (k->snap_refused != refused0)
        return fail(c, "%u snapshot(s) refused (ANALYZER_CNT_STATUS.REFUSED %u -> %u): a "
                    "window was not closed where asked", (k->snap_refused - refused0) & 0xffffu,
                    refused0, k->snap_refused);
    return EXIT_OK;
}

static int open_dev(struct ctx *c)
{
    char err[1024] = "";
    c->b = nic_backend_open(c->kind, c->opts, err, sizeof err);
    if (!c->b)
        return fail(c, "cannot open the %s backend: %s", c->kind, err);
    if (nic_dev_check(c->b, &c->info, err, sizeof err) < 0)
        return fail(c, "bring-up check failed: %s", err);
    if (nic_scope_check(c->b, err, sizeof err) < 0)
        return fail(c, "analyzer check failed: %s", err);
    return backend_check(c, "bring-up");
}

static double period_ns(void) { return 1e9 / (double)CONFIG_CLOCK_FREQUENCY; }

/* --- load -------------------------------------------------------------------------------------- */

struct load {
    const char *kind;               /* "dma", "tx", "dma+tx" or "none" */
    uint64_t bytes, idle_ns;        /* dma: bytes each way; none: time to let pass */
    uint64_t frames, frame_size;    /* tx: frames through the MAC loopback, bytes each */
};

#define LOAD_DEFAULT                                                                            \
    {.kind = NIC_HAS_ETHMAC ? "dma+tx" : "dma", .bytes = 64 * 1024, .idle_ns = 100000,             \
     .frames = 32, .frame_size = 1514}

static bool load_has(const struct load *l, const char *what)
{
    return strstr(l->kind, what) != NULL;
}

static int load_option(int argc, char **argv, int *i, struct load *l, int *rc)
{
    const char *v;
    int m;
    if ((m = bu_opt_value(argc, argv, i, "--load", &v))) {
        if (m < 0 || (strcmp(v, "dma") && strcmp(v, "tx") && strcmp(v, "dma+tx") &&
                      strcmp(v, "none")))
            *rc = usage_error("--load: dma, tx, dma+tx or none");
        l->kind = m < 0 ? "" : v;
        return 1;
    }
    if ((m = bu_opt_value(argc, argv, i, "--bytes", &v))) {
        if (m < 0 || bu_parse_u64(v, &l->bytes) < 0 || l->bytes == 0 || l->bytes % 16 ||
            l->bytes > (64u << 20))
            *rc = usage_error("--bytes: a multiple of 16 up to 64M");
        return 1;
    }
    if ((m = bu_opt_value(argc, argv, i, "--frames", &v))) {
        if (m < 0 || bu_parse_u64(v, &l->frames) < 0 || l->frames == 0 || l->frames > 1000000)
            *rc = usage_error("--frames: 1..1000000");
        return 1;
    }
    if ((m = bu_opt_value(argc, argv, i, "--frame-size", &v))) {
        if (m < 0 || bu_parse_u64(v, &l->frame_size) < 0 || l->frame_size < 14 ||
            l->frame_size > 1514)
            *rc = usage_error("--frame-size: 14..1514 bytes (without FCS)");
        return 1;
    }
    if ((m = bu_opt_value(argc, argv, i, "--idle-ns", &v))) {
        if (m < 0 || bu_parse_u64(v, &l->idle_ns) < 0)
            *rc = usage_error("--idle-ns: a number of ns");
        return 1;
    }
    return 0;
}

/* Both DMA directions at once (host-to-card into the pattern checker, card-to-host from the
 * pattern generator); the data is checked on both sides. Started, then finished, so other
 * traffic can run in between. */
struct dma_load {
    void *h2c, *c2h;
    uint64_t h2c_bus, c2h_bus;
    uint32_t size, want;
};
static const uint32_t seed_h2c = 0x1000, seed_c2h = 0x2000;

static int dma_start(struct ctx *c, uint64_t bytes, struct dma_load *d)
{
    struct nic_backend *b = c->b;
    char err[256];
    memset(d, 0, sizeof *d);
    d->size = (uint32_t)bytes;
    if (d->size > nic_dma_max_len() ||
        nic_dma_desc_check(0, d->size, c->info.data_width / 8, err, sizeof err) < 0)
        return fail(c, "load: %u B is not one DMA descriptor (max %u)", d->size,
                    nic_dma_max_len());
    d->h2c = nic_dma_alloc(b, d->size, &d->h2c_bus);
    d->c2h = nic_dma_alloc(b, d->size, &d->c2h_bus);
    if (!d->h2c || !d->c2h)
        return fail(c, "load: cannot allocate 2 x %u B of DMA memory", d->size);
    nic_pattern_fill(d->h2c, d->size, seed_h2c);
    memset(d->c2h, 0, d->size);
    nic_pattern_chk_restart(b, seed_h2c, d->size);
    nic_dma_stop(b, NIC_DMA_READER);
    nic_dma_set_loop(b, NIC_DMA_READER, false);
    nic_dma_push(b, NIC_DMA_READER, d->h2c_bus, d->size, NIC_DMA_IRQ_DISABLE);
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    if (nic_dma_writer_drain(b, c->timeout_ns) < 0)
        return fail(c, "load: the writer's FIFO does not drain");
    nic_dma_table_reset(b, NIC_DMA_WRITER);
    nic_dma_set_loop(b, NIC_DMA_WRITER, false);
    nic_dma_push(b, NIC_DMA_WRITER, d->c2h_bus, d->size, NIC_DMA_LAST_DISABLE);
    nic_pattern_gen_seed(b, seed_c2h);
    nic_dma_enable(b, NIC_DMA_WRITER, true);
    d->want = nic_msi_bit(DMA_PATTERN_CHECKER_INTERRUPT) | nic_msi_bit(PCIE_DMA0_WRITER_INTERRUPT);
    nic_msi_enable(b, d->want);
    if (nic_irq_drain(b) < 0)
        return fail(c, "load: irq_wait failed");
    nic_msi_ack(b);
    nic_dma_enable(b, NIC_DMA_READER, true);
    nic_pattern_gen_enable(b, true);
    return backend_check(c, "load");
}

static int dma_finish(struct ctx *c, struct dma_load *d)
{
    struct nic_backend *b = c->b;
    uint32_t seen = nic_msi_ack(b);         /* MSIs that came while other traffic ran */
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    while ((seen & d->want) != d->want) {
        if (nic_now_ns(b) > deadline)
            return fail(c, "load: no MSI for %s within %" PRIu64 " ns",
                        seen & nic_msi_bit(DMA_PATTERN_CHECKER_INTERRUPT) ? "the writer"
                                                                         : "the checker",
                        c->timeout_ns);
        const int r = nic_msi_wait_sources(b, 100000, &seen);
        if (r < 0 || nic_last_error(b))
            return backend_check(c, "load") ? EXIT_FAIL : fail(c, "load: irq_wait failed");
    }
    /* The writer's MSI follows its last request; wait for the data to land. */
    const volatile uint32_t *tail = (const volatile uint32_t *)d->c2h + d->size / 4 - 1;
    while (*tail != nic_pattern_word(seed_c2h, d->size / 4 - 1)) {
        if (nic_now_ns(b) > deadline)
            return fail(c, "load: card-to-host data did not arrive");
        nic_idle(b, 8);
    }
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_msi_enable(b, 0);
    size_t first;
    const size_t bad = nic_pattern_check(d->c2h, d->size, seed_c2h, &first);
    const uint64_t got = nic_pattern_chk_bytes(b);
    const uint32_t errors = nic_pattern_chk_errors(b);
    nic_dma_free(b, d->h2c, d->size);
    nic_dma_free(b, d->c2h, d->size);
    if (bad)
        return fail(c, "load: %zu card-to-host words differ from the pattern (first at %zu)",
                    bad, first);
    if (got != d->size || errors)
        return fail(c, "load: the checker counted %" PRIu64 " B and %u bad beats, expected %u B "
                    "and 0", got, errors, d->size);
    return backend_check(c, "load");
}

/* Frames through the MAC and its loopback PHY, each checked byte for byte on return. */
static int eth_run(struct ctx *c, uint64_t frames, size_t size)
{
    struct nic_eth e;
    char err[256];
    if (nic_eth_init(&e, c->b, err, sizeof err) < 0)
        return fail(c, "load tx: %s", err);
    uint8_t tx[1514], rx[2048];
    for (uint64_t n = 0; n < frames; n++) {
        memset(tx, 0xff, 6);                                    /* broadcast */
        const uint8_t src[6] = {0x02, 0x00, 0x4e, 0x49, 0x43, 0x31};
        memcpy(tx + 6, src, 6);
        tx[12] = 0x88;                                          /* local experimental */
        tx[13] = 0xb5;
        for (size_t k = 14; k < size; k++)
            tx[k] = (uint8_t)(n * 7 + k);
        if (nic_eth_send(&e, tx, size, c->timeout_ns, err, sizeof err) < 0)
            return fail(c, "load tx: frame %" PRIu64 ": %s", n, err);
        size_t len = 0;
        if (nic_eth_recv(&e, rx, sizeof rx, &len, c->timeout_ns, err, sizeof err) < 0)
            return fail(c, "load tx: frame %" PRIu64 ": %s", n, err);
        const size_t want = size < 60 ? 60 : size;              /* the MAC pads to 60 */
        if (len != want || memcmp(rx, tx, size) != 0)
            return fail(c, "load tx: frame %" PRIu64 " came back as %zu bytes (sent %zu)%s", n,
                        len, size, len == want ? " with different contents" : "");
    }
    return backend_check(c, "load tx");
}

static int run_load(struct ctx *c, const struct load *l)
{
    struct dma_load d;
    int rc = EXIT_OK;
    if (strcmp(l->kind, "none") == 0) {
        nic_idle(c->b, l->idle_ns);
        return backend_check(c, "idle");
    }
    if (load_has(l, "dma") && (rc = dma_start(c, l->bytes, &d)))
        return rc;
    if (load_has(l, "tx") && (rc = eth_run(c, l->frames, (size_t)l->frame_size)))
        return rc;
    if (load_has(l, "dma"))
        rc = dma_finish(c, &d);
    return rc;
}

static void load_describe(struct ctx *c, const struct load *l)
{
    out(c, "load: %s", l->kind);
    if (load_has(l, "dma"))
        out(c, "; DMA %" PRIu64 " B host-to-card and %" PRIu64 " B card-to-host at once, data "
            "checked", l->bytes, l->bytes);
    if (load_has(l, "tx"))
        out(c, "; %" PRIu64 " frames of %" PRIu64 " B through the MAC and its loopback PHY, "
            "checked", l->frames, l->frame_size);
    out(c, "\n");
}

/* --- info -------------------------------------------------------------------------------------- */

static int cmd_info(struct ctx *c, int argc, char **argv)
{
    if (argc > 0)
        return usage_error("info: unknown option '%s'", argv[0]);
    int rc = open_dev(c);
    if (rc)
        return rc;
    out(c, "bus analyzer: %d probes, %u-bit samples, %u trace entries, %u trigger stages, "
        "%u latency bins, %.3f ns per cycle\n", NIC_SCOPE_NPROBES, NIC_SCOPE_SAMPLE_WIDTH,
        NIC_SCOPE_DEPTH, NIC_SCOPE_NSTAGES, NIC_SCOPE_NBINS, period_ns());
    bu_json_obj_begin(&c->j);
    bu_json_ku64(&c->j, "sample_width", NIC_SCOPE_SAMPLE_WIDTH);
    bu_json_ku64(&c->j, "depth", NIC_SCOPE_DEPTH);
    bu_json_key(&c->j, "signals");
    bu_json_arr_begin(&c->j);
    for (size_t i = 0; i < nic_scope_nsignals; i++) {
        const struct nic_scope_signal *s = &nic_scope_signals[i];
        const struct nic_scope_probe *p = &nic_scope_probes[s->probe];
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
    bu_json_obj_end(&c->j);
    return EXIT_OK;
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

static void report_print(struct ctx *c, const struct nic_scope_counts *k, uint64_t window,
                         uint32_t bin_min, unsigned bin_shift)
{
    const double per = period_ns();
    out(c, "\nBus occupancy over one snapshot window: %" PRIu64 " cycles (%.3f us)\n", window,
        (double)window * per / 1000.0);
    struct bu_table t;
    static const char *const h[] = {"probe", "busy%", "stall%", "idle%", "bytes", "frames",
                                    "held_off_by_csr", "busy # / stalled ! / idle ."};
    bu_table_init(&t, 8, h);
    for (int p = 0; p < NIC_SCOPE_NPROBES; p++) {
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
        const char *row[] = {nic_scope_probes[p].name, cells[0], cells[1], cells[2], cells[3],
                             cells[4], cells[5], b};
        bu_table_row(&t, row);
    }
    if (!c->quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);

    out(c, "\nTLPs by type (counted at the first beat)\n");
    static const char *const ht[] = {"probe", "MRd", "MWr", "CplD", "Cpl", "Msg", "other"};
    bu_table_init(&t, 7, ht);
    for (int p = 0; p < NIC_SCOPE_NPROBES; p++) {
        if (nic_scope_probes[p].tlp < 0)
            continue;
        char cells[6][24];
        for (int i = 0; i < 6; i++)
            snprintf(cells[i], 24, "%" PRIu64, k->tlp[p][i]);
        const char *row[] = {nic_scope_probes[p].name, cells[0], cells[1], cells[2], cells[3],
                             cells[4], cells[5]};
        bu_table_row(&t, row);
    }
    if (!c->quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);

    if (NIC_SCOPE_HAS_LATENCY) {
        const uint64_t *l = k->lat;
        out(c, "\nDMA read latency, request to last completion (%" PRIu64 " reads", l[NS_LAT_COUNT]);
        if (l[NS_LAT_COUNT])
            out(c, "; mean %.1f, min %" PRIu64 ", max %" PRIu64 " cycles = %.1f / %.1f / %.1f ns",
                (double)l[NS_LAT_SUM] / (double)l[NS_LAT_COUNT], l[NS_LAT_MIN], l[NS_LAT_MAX],
                (double)l[NS_LAT_SUM] / (double)l[NS_LAT_COUNT] * per,
                (double)l[NS_LAT_MIN] * per, (double)l[NS_LAT_MAX] * per);
        out(c, ")\n");
        uint64_t peak = 1;
        for (int i = 0; i < NIC_SCOPE_NBINS; i++)
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
        for (int i = 0; i < NIC_SCOPE_NBINS; i++) {
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
        snprintf(r0, sizeof r0, ">= %" PRIu64, bin_min + ((uint64_t)NIC_SCOPE_NBINS << bin_shift));
        snprintf(r1, sizeof r1, ">= %.0f",
                 (double)(bin_min + ((uint64_t)NIC_SCOPE_NBINS << bin_shift)) * per);
        snprintf(r2, sizeof r2, "%" PRIu64, l[NS_LAT_ABOVE]);
        const char *ra[] = {r0, r1, r2, ""};
        bu_table_row(&t, ra);
        if (!c->quiet)
            bu_table_print(&t, stdout, "  ");
        bu_table_free(&t);
        if (l[NS_LAT_LOST] || l[NS_LAT_UNMATCHED])
            out(c, "  lost requests (tracking FIFO full): %" PRIu64 ", unmatched completions: "
                "%" PRIu64 "\n", l[NS_LAT_LOST], l[NS_LAT_UNMATCHED]);
    }

    /* Bus time per Ethernet frame: PCIe busy cycles over MAC frames, when MAC probes exist. */
    const int prx = nic_scope_probe_index("pcie_rx"), ptx = nic_scope_probe_index("pcie_tx");
    const int mtx = nic_scope_probe_index("mac_tx"), mrx = nic_scope_probe_index("mac_rx");
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

static void report_json(struct ctx *c, const struct nic_scope_counts *k, uint64_t window,
                        uint32_t bin_min, unsigned bin_shift, const struct load *l,
                        size_t compared)
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
    for (int p = 0; p < NIC_SCOPE_NPROBES; p++) {
        bu_json_key(j, nic_scope_probes[p].name);
        bu_json_obj_begin(j);
        bu_json_kstr(j, "group", nic_scope_probes[p].group);
        for (int i = 0; i < NIC_SCOPE_NCOUNTS; i++)
            bu_json_ku64(j, nic_scope_count_names[i], k->occ[p][i]);
        bu_json_kdouble(j, "busy_pct", pct(k->occ[p][NS_BUSY], window));
        bu_json_kdouble(j, "stall_pct", pct(k->occ[p][NS_STALL], window));
        bu_json_kdouble(j, "idle_pct", pct(k->occ[p][NS_IDLE], window));
        if (nic_scope_probes[p].tlp >= 0) {
            bu_json_key(j, "tlps");
            bu_json_obj_begin(j);
            for (int i = 0; i < NIC_SCOPE_NTLP_TYPES; i++)
                bu_json_ku64(j, nic_scope_tlp_names[i], k->tlp[p][i]);
            bu_json_obj_end(j);
        }
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
    if (NIC_SCOPE_HAS_LATENCY) {
        bu_json_key(j, "latency");
        bu_json_obj_begin(j);
        bu_json_ku64(j, "bin_min", bin_min);
        bu_json_ku64(j, "bin_shift", bin_shift);
        bu_json_key(j, "bins");
        bu_json_arr_begin(j);
        for (int i = 0; i < NIC_SCOPE_NBINS; i++)
            bu_json_u64(j, k->bins[i]);
        bu_json_arr_end(j);
        for (int i = 0; i < NIC_SCOPE_NLAT; i++)
            bu_json_ku64(j, nic_scope_lat_names[i], k->lat[i]);
        bu_json_obj_end(j);
    }
    bu_json_obj_end(j);
}

/* On a backend that sees the same signals itself (the simulation's probe.an.* counters), every
 * count must be equal. Returns the number of counts compared (0: the backend has none). */
static int crosscheck(struct ctx *c, const struct nic_scope_counts *k, size_t *compared)
{
    char name[128];
    uint64_t v;
    *compared = 0;
    if (nic_counter(c->b, "probe.an.windows", &v) != 0)
        return EXIT_OK;
    size_t n = 0;
    for (int p = 0; p < NIC_SCOPE_NPROBES; p++) {
        for (int i = 0; i < NIC_SCOPE_NCOUNTS; i++) {
            snprintf(name, sizeof name, "probe.an.%s.%s", nic_scope_probes[p].name,
                     nic_scope_count_names[i]);
            if (nic_counter(c->b, name, &v) == 0) {
                if (v != k->occ[p][i])
                    return fail(c, "cross-check: analyzer %s = %" PRIu64 ", simulator %" PRIu64,
                                name + 9, k->occ[p][i], v);
                n++;
            }
        }
        for (int i = 0; nic_scope_probes[p].tlp >= 0 && i < NIC_SCOPE_NTLP_TYPES; i++) {
            snprintf(name, sizeof name, "probe.an.%s.tlp.%s", nic_scope_probes[p].name,
                     nic_scope_tlp_names[i]);
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
    for (size_t i = 0; NIC_SCOPE_HAS_LATENCY && i < sizeof lat / sizeof lat[0]; i++) {
        snprintf(name, sizeof name, "probe.an.latency.%s", lat[i].name);
        if (nic_counter(c->b, name, &v) == 0) {
            if (v != k->lat[lat[i].idx])
                return fail(c, "cross-check: analyzer %s = %" PRIu64 ", simulator %" PRIu64,
                            name + 9, k->lat[lat[i].idx], v);
            n++;
        }
    }
    *compared = n;
    return EXIT_OK;
}

static int cmd_report(struct ctx *c, int argc, char **argv)
{
    struct load l = LOAD_DEFAULT;
    uint64_t bin_min = 0, bin_shift = 5;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m, rc = EXIT_OK;
        if (load_option(argc, argv, &i, &l, &rc)) {
            if (rc)
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--bin-min", &v))) {
            if (m < 0 || bu_parse_u64(v, &bin_min) < 0 || bin_min > UINT32_MAX)
                return usage_error("--bin-min: cycles, 0..2^32-1");
        } else if ((m = bu_opt_value(argc, argv, &i, "--bin-shift", &v))) {
            if (m < 0 || bu_parse_u64(v, &bin_shift) < 0 || bin_shift > 31)
                return usage_error("--bin-shift: 0..31");
        } else {
            return usage_error("report: unknown option '%s'", argv[i]);
        }
    }
    int rc = open_dev(c);
    if (rc)
        return rc;
    nic_scope_set_histogram(c->b, (uint32_t)bin_min, (unsigned)bin_shift);
    unsigned refused0;
    nic_scope_cnt_status(c->b, &refused0);
    nic_scope_snapshot(c->b);               /* opens the window */
    if ((rc = run_load(c, &l)))
        return rc;
    nic_scope_snapshot(c->b);               /* closes it */
    struct nic_scope_counts k;
    if ((rc = read_window(c, refused0, &k)))
        return rc;
    const uint64_t window = k.occ[0][NS_BUSY] + k.occ[0][NS_STALL] + k.occ[0][NS_IDLE];
    for (int p = 1; p < NIC_SCOPE_NPROBES; p++)
        if (k.occ[p][NS_BUSY] + k.occ[p][NS_STALL] + k.occ[p][NS_IDLE] != window)
            return fail(c, "probe %s: busy+stall+idle = %" PRIu64 " cycles, probe %s: %" PRIu64,
                        nic_scope_probes[p].name,
                        k.occ[p][NS_BUSY] + k.occ[p][NS_STALL] + k.occ[p][NS_IDLE],
                        nic_scope_probes[0].name, window);
    load_describe(c, &l);
    report_print(c, &k, window, (uint32_t)bin_min, (unsigned)bin_shift);
    size_t compared = 0;
    if ((rc = crosscheck(c, &k, &compared)))
        return rc;
    if (compared)
        out(c, "cross-check: %zu counts equal the simulator's own cycle-by-cycle count of the "
            "same signals\n", compared);
    report_json(c, &k, window, (uint32_t)bin_min, (unsigned)bin_shift, &l, compared);
    return EXIT_OK;
}

/* --- capture ----------------------------------------------------------------------------------- */

static const char *tlp_name(unsigned ft)
{
    const unsigned fmt = ft >> 5, type = ft & 0x1f;
    if (type == 0 && fmt <= 1)
        return "MRd";
    if (type == 0 && (fmt == 2 || fmt == 3))
        return "MWr";
    if (ft == 0x4a)
        return "CplD";
    if (ft == 0x0a)
        return "Cpl";
    if ((type >> 3) == 2)
        return "Msg";
    return "other";
}

/* The VCD: every sample signal under nic.<group>.<probe>, the decoded TLP type of each TLP
 * probe (a string, "-" between TLPs), and nic.analyzer.trigger. Times in ps. */
static int write_vcd(struct ctx *c, const char *path, const char *gtkw,
                     const struct nic_scope_status *st, const struct nic_scope_change *ch)
{
    const size_t nsig = nic_scope_nsignals;
    struct vcd_var *vars = calloc(nsig + NIC_SCOPE_NPROBES + 1, sizeof *vars);
    char (*scopes)[64] = calloc(NIC_SCOPE_NPROBES + 1, sizeof *scopes);
    int *tlp_var = calloc(NIC_SCOPE_NPROBES, sizeof *tlp_var);
    if (!vars || !scopes || !tlp_var)
        return fail(c, "out of memory");
    for (int p = 0; p < NIC_SCOPE_NPROBES; p++)
        snprintf(scopes[p], 64, "nic.%s.%s", nic_scope_probes[p].group, nic_scope_probes[p].name);
    snprintf(scopes[NIC_SCOPE_NPROBES], 64, "nic.analyzer");
    size_t n = 0;
    for (int p = 0; p < NIC_SCOPE_NPROBES; p++) {
        for (size_t i = 0; i < nsig; i++)
            if (nic_scope_signals[i].probe == p)
                vars[n++] = (struct vcd_var){scopes[p], nic_scope_signals[i].name,
                                             nic_scope_signals[i].width, VCD_WIRE, ""};
        tlp_var[p] = -1;
        if (nic_scope_probes[p].tlp >= 0) {
            tlp_var[p] = (int)n;
            vars[n++] = (struct vcd_var){scopes[p], "tlp", 1, VCD_STRING, ""};
        }
    }
    const size_t trig_var = n;
    vars[n++] = (struct vcd_var){scopes[NIC_SCOPE_NPROBES], "trigger", 1, VCD_WIRE, ""};

    const uint64_t ps = (uint64_t)(period_ns() * 1000.0 + 0.5);
    char comment[256];
    snprintf(comment, sizeof comment, "bus analyzer capture: %u entries, cycles %" PRIu64
             "..%" PRIu64 ", trigger %s%" PRIu64 ", %" PRIu64 " ps per cycle", st->count,
             st->count ? ch[0].cycle : 0, st->end_ts, st->triggered ? "at cycle " : "not fired ",
             st->trig_ts, ps);
    struct vcd_writer w;
    if (vcd_begin(&w, path, "1ps", comment, vars, n) < 0)
        return fail(c, "cannot write %s", path);
    uint32_t prev[NIC_SCOPE_SAMPLE_WORDS] = {0};
    bool trig_on = false;
    for (uint32_t k = 0; k < st->count; k++) {
        /* The trigger marker falls the cycle after the trigger, entry or not. */
        if (trig_on && (k == st->count || ch[k].cycle > st->trig_ts + 1)) {
            vcd_time(&w, (st->trig_ts + 1) * ps);
            vcd_value(&w, &vars[trig_var], 0);
            trig_on = false;
        }
        vcd_time(&w, ch[k].cycle * ps);
        for (size_t i = 0, vi = 0; i < nsig; i++) {
            const struct nic_scope_signal *s = &nic_scope_signals[i];
            while (vars[vi].kind == VCD_STRING || strcmp(vars[vi].name, s->name) != 0 ||
                   vars[vi].scope != scopes[s->probe])
                vi++;
            const uint64_t x = nic_scope_bits(ch[k].v, s->offset, s->width);
            if (k == 0 || x != nic_scope_bits(prev, s->offset, s->width))
                vcd_value(&w, &vars[vi], x);
        }
        for (int p = 0; p < NIC_SCOPE_NPROBES; p++) {
            if (tlp_var[p] < 0)
                continue;
            char key[96];
            snprintf(key, sizeof key, "%s.valid", nic_scope_probes[p].name);
            const struct nic_scope_signal *sv = &nic_scope_signals[nic_scope_signal_index(key)];
            snprintf(key, sizeof key, "%s.first", nic_scope_probes[p].name);
            const struct nic_scope_signal *sf = &nic_scope_signals[nic_scope_signal_index(key)];
            snprintf(key, sizeof key, "%s.fmt_type", nic_scope_probes[p].name);
            const struct nic_scope_signal *sft = &nic_scope_signals[nic_scope_signal_index(key)];
            const char *now = nic_scope_bits(ch[k].v, sv->offset, 1) &&
                                      nic_scope_bits(ch[k].v, sf->offset, 1)
                                  ? tlp_name((unsigned)nic_scope_bits(ch[k].v, sft->offset, 8))
                                  : "-";
            const char *was = k && nic_scope_bits(prev, sv->offset, 1) &&
                                      nic_scope_bits(prev, sf->offset, 1)
                                  ? tlp_name((unsigned)nic_scope_bits(prev, sft->offset, 8))
                                  : "-";
            if (k == 0 || strcmp(now, was) != 0)
                vcd_string(&w, &vars[tlp_var[p]], now);
        }
        if (k == 0 || (st->triggered && ch[k].cycle == st->trig_ts)) {
            trig_on = st->triggered && ch[k].cycle == st->trig_ts;
            vcd_value(&w, &vars[trig_var], trig_on);
        }
        memcpy(prev, ch[k].v, sizeof prev);
    }
    if (trig_on && st->trig_ts + 1 < st->end_ts) {
        vcd_time(&w, (st->trig_ts + 1) * ps);
        vcd_value(&w, &vars[trig_var], 0);
    }
    if (st->count && st->end_ts > ch[st->count - 1].cycle)
        vcd_time(&w, st->end_ts * ps);      /* the end of the covered window */
    int rc = vcd_end(&w) < 0 ? fail(c, "error writing %s", path) : EXIT_OK;
    if (!rc && gtkw && gtkw_write(gtkw, path, vars, n, st->triggered ? st->trig_ts * ps : 0) < 0)
        rc = fail(c, "cannot write %s", gtkw);
    free(vars);
    free(scopes);
    free(tlp_var);
    return rc;
}

static int cmd_capture(struct ctx *c, int argc, char **argv)
{
    struct load l = LOAD_DEFAULT;
    struct nic_scope_stage st[NIC_SCOPE_NSTAGES];
    const char *specs[NIC_SCOPE_NSTAGES];
    unsigned nst = 0;
    uint64_t pre = 64, post = 4000;
    const char *vcd = "nicscope.vcd", *gtkw = NULL;
    char err[1024];
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m, rc = EXIT_OK;
        if (load_option(argc, argv, &i, &l, &rc)) {
            if (rc)
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--trigger", &v))) {
            if (m < 0)
                return usage_error("--trigger needs a stage");
            if (nst == NIC_SCOPE_NSTAGES)
                return usage_error("--trigger: at most %d stages", NIC_SCOPE_NSTAGES);
            if (nic_scope_parse_stage(v, &st[nst], err, sizeof err) < 0)
                return usage_error("--trigger: %s", err);
            specs[nst++] = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--pre", &v))) {
            if (m < 0 || bu_parse_u64(v, &pre) < 0 || pre >= NIC_SCOPE_DEPTH)
                return usage_error("--pre: 0..%d entries", NIC_SCOPE_DEPTH - 1);
        } else if ((m = bu_opt_value(argc, argv, &i, "--post", &v))) {
            if (m < 0 || bu_parse_u64(v, &post) < 0 || post > UINT32_MAX)
                return usage_error("--post: cycles, 0..2^32-1");
        } else if ((m = bu_opt_value(argc, argv, &i, "--vcd", &v))) {
            if (m < 0)
                return usage_error("--vcd needs a file");
            vcd = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--gtkw", &v))) {
            if (m < 0)
                return usage_error("--gtkw needs a file");
            gtkw = v;
        } else {
            return usage_error("capture: unknown option '%s'", argv[i]);
        }
    }
    int rc = open_dev(c);
    if (rc)
        return rc;
    nic_scope_set_trigger(c->b, st, nst);
    nic_scope_arm(c->b, (uint32_t)pre, (uint32_t)post);
    if ((rc = run_load(c, &l)))
        return rc;
    struct nic_scope_status s;
    const uint64_t deadline = nic_now_ns(c->b) + c->timeout_ns;
    for (;;) {
        nic_scope_status(c->b, &s);
        if (s.state == NIC_SCOPE_STATE_DONE || nic_now_ns(c->b) > deadline)
            break;
        nic_idle(c->b, 1000);
    }
    if (s.state != NIC_SCOPE_STATE_DONE) {
        nic_scope_stop(c->b);
        nic_scope_status(c->b, &s);
    }
    struct nic_scope_change *ch = calloc(s.count ? s.count : 1, sizeof *ch);
    if (!ch)
        return fail(c, "out of memory");
    nic_scope_read_trace(c->b, &s, ch);
    if ((rc = backend_check(c, "trace read-out"))) {
        free(ch);
        return rc;
    }
    char gtkw_path[1024];
    if (!gtkw) {
        snprintf(gtkw_path, sizeof gtkw_path, "%s", vcd);
        char *dot = strrchr(gtkw_path, '.');
        if (dot && strcmp(dot, ".vcd") == 0)
            *dot = 0;
        strncat(gtkw_path, ".gtkw", sizeof gtkw_path - strlen(gtkw_path) - 1);
        gtkw = gtkw_path;
    }
    rc = write_vcd(c, vcd, gtkw, &s, ch);
    const uint64_t first = s.count ? ch[0].cycle : 0;
    out(c, "capture: %s, %u entries, cycles %" PRIu64 "..%" PRIu64 " (%" PRIu64 " cycles, "
        "%.3f us)%s\n", nic_scope_state_name(s.state), s.count, first, s.end_ts,
        s.end_ts - first, (double)(s.end_ts - first) * period_ns() / 1000.0,
        s.overflow ? ", OVERFLOW: storage full before the post-trigger window ended" : "");
    if (s.triggered)
        out(c, "trigger: cycle %" PRIu64 " (entry %u; %u entries before it)\n", s.trig_ts,
            (s.trig_index - s.start) % NIC_SCOPE_DEPTH, (s.trig_index - s.start) % NIC_SCOPE_DEPTH);
    out(c, "wrote %s and %s\n", vcd, gtkw);
    /* FST beside the VCD when GTKWave's vcd2fst is there. */
    char cmd[2200];
    snprintf(cmd, sizeof cmd, "command -v vcd2fst >/dev/null 2>&1 && vcd2fst '%s' '%.*s.fst' "
             ">/dev/null 2>&1", vcd, (int)(strlen(vcd) > 4 ? strlen(vcd) - 4 : strlen(vcd)), vcd);
    if (!rc && system(cmd) == 0)
        out(c, "wrote %.*s.fst\n", (int)(strlen(vcd) > 4 ? strlen(vcd) - 4 : strlen(vcd)), vcd);

    struct bu_json *j = &c->j;
    bu_json_obj_begin(j);
    bu_json_kstr(j, "state", nic_scope_state_name(s.state));
    bu_json_key(j, "triggered");
    bu_json_bool(j, s.triggered);
    bu_json_key(j, "overflow");
    bu_json_bool(j, s.overflow);
    bu_json_ku64(j, "entries", s.count);
    bu_json_ku64(j, "first_cycle", first);
    bu_json_ku64(j, "end_cycle", s.end_ts);
    bu_json_ku64(j, "trigger_cycle", s.trig_ts);
    bu_json_ku64(j, "pre", pre);
    bu_json_ku64(j, "post", post);
    bu_json_kdouble(j, "ns_per_cycle", period_ns());
    bu_json_kstr(j, "vcd", vcd);
    bu_json_kstr(j, "gtkw", gtkw);
    bu_json_key(j, "trigger");
    bu_json_arr_begin(j);
    for (unsigned i = 0; i < nst; i++)
        bu_json_str(j, specs[i]);
    bu_json_arr_end(j);
    bu_json_obj_end(j);
    free(ch);
    if (!rc && nst && !s.triggered)
        rc = fail(c, "the trigger did not fire (stage %u of %u reached); what was stored before "
                  "the stop is in %s", s.stage, nst, vcd);
    return rc;
}

/* --- cpu ---------------------------------------------------------------------------------------- */

static int cmd_cpu(struct ctx *c, int argc, char **argv)
{
    struct load l = LOAD_DEFAULT;
    l.bytes = 16 * 1024;
    l.kind = "dma";
    uint64_t boot_ms = 100;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m, rc = EXIT_OK;
        if (load_option(argc, argv, &i, &l, &rc)) {
            if (rc)
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--boot-ms", &v))) {
            if (m < 0 || bu_parse_u64(v, &boot_ms) < 0 || boot_ms == 0 || boot_ms > 100000)
                return usage_error("--boot-ms: 1..100000 ms of backend time");
        } else {
            return usage_error("cpu: unknown option '%s'", argv[i]);
        }
    }
    int rc = open_dev(c);
    if (rc)
        return rc;
#if !NIC_HAS_CONSOLE
    return fail(c, "this build has no soft CPU (build it with make sim CPU=1)");
#else
    struct nic_backend *b = c->b;
    static char log[4096];
    const uint64_t boot_ns = boot_ms * 1000000ull, cmd_ns = c->timeout_ns;
    const uint64_t t0 = nic_now_ns(b);
    if (nic_console_bios_prompt(b, log, sizeof log, boot_ns) < 0)
        return fail(c, "the BIOS prompt did not come within %" PRIu64 " ms; console:\n%s",
                    boot_ms, log);
    out(c, "BIOS prompt after %.3f ms of backend time\n", (double)(nic_now_ns(b) - t0) / 1e6);

    /* The host opens a window, the load runs, the CPU closes it. */
    unsigned refused0;
    nic_scope_cnt_status(b, &refused0);
    nic_scope_snapshot(b);
    if ((rc = run_load(c, &l)))
        return rc;
    const uint64_t base = NIC_SOC_CSR_BUS_BASE;
    if (nic_console_write32(b, base + CSR_ANALYZER_CONTROL_ADDR,
                            1u << CSR_ANALYZER_CONTROL_SNAPSHOT_OFFSET, cmd_ns) < 0)
        return fail(c, "CPU mem_write ANALYZER_CONTROL failed");
    struct nic_scope_counts k;
    if ((rc = read_window(c, refused0, &k)))
        return rc;
    const uint32_t info_host = nic_read32(b, CSR_ANALYZER_INFO_ADDR);

    struct bu_table t;
    static const char *const h[] = {"register", "selector", "host (BAR0)", "CPU (SoC bus)"};
    bu_table_init(&t, 4, h);
    bu_json_obj_begin(&c->j);
    bu_json_key(&c->j, "reads");
    bu_json_arr_begin(&c->j);
    unsigned n = 0, bad = 0;
    uint32_t info_cpu = 0;
    if (nic_console_read32(b, base + CSR_ANALYZER_INFO_ADDR, &info_cpu, cmd_ns) < 0)
        return fail(c, "CPU mem_read ANALYZER_INFO failed");
    struct { const char *what; unsigned sel; uint64_t host; } items[2 * NIC_SCOPE_NPROBES + 2];
    size_t ni = 0;
    for (unsigned p = 0; p < NIC_SCOPE_NPROBES; p++) {
        items[ni++] = (typeof(items[0])){nic_scope_probes[p].name, p * 8 + NS_BUSY,
                                         k.occ[p][NS_BUSY]};
        items[ni++] = (typeof(items[0])){nic_scope_probes[p].name, p * 8 + NS_IDLE,
                                         k.occ[p][NS_IDLE]};
    }
    char hv[32], cv[32], sel[16];
    snprintf(hv, sizeof hv, "%#010x", info_host);
    snprintf(cv, sizeof cv, "%#010x", info_cpu);
    const char *row0[] = {"ANALYZER_INFO", "-", hv, cv};
    bu_table_row(&t, row0);
    n++;
    bad += info_cpu != info_host;
    for (size_t i = 0; i < ni; i++) {
        uint32_t hi, lo;
        if (nic_console_write32(b, base + CSR_ANALYZER_CNT_SEL_ADDR, items[i].sel, cmd_ns) < 0 ||
            nic_console_read32(b, base + CSR_ANALYZER_CNT_VALUE_ADDR, &hi, cmd_ns) < 0 ||
            nic_console_read32(b, base + CSR_ANALYZER_CNT_VALUE_ADDR + 4, &lo, cmd_ns) < 0)
            return fail(c, "CPU read of counter %#x failed", items[i].sel);
        const uint64_t cpu = ((uint64_t)hi << 32) | lo;
        snprintf(sel, sizeof sel, "%#x", items[i].sel);
        snprintf(hv, sizeof hv, "%" PRIu64, items[i].host);
        snprintf(cv, sizeof cv, "%" PRIu64, cpu);
        char what[64];
        snprintf(what, sizeof what, "CNT_VALUE %s.%s", items[i].what,
                 nic_scope_count_names[items[i].sel % 8]);
        const char *row[] = {what, sel, hv, cv};
        bu_table_row(&t, row);
        bu_json_obj_begin(&c->j);
        bu_json_kstr(&c->j, "register", what);
        bu_json_ku64(&c->j, "host", items[i].host);
        bu_json_ku64(&c->j, "cpu", cpu);
        bu_json_obj_end(&c->j);
        n++;
        bad += cpu != items[i].host;
    }
    bu_json_arr_end(&c->j);
    bu_json_ku64(&c->j, "compared", n);
    bu_json_ku64(&c->j, "differ", bad);
    bu_json_obj_end(&c->j);
    out(c, "\nThe window the CPU closed (mem_write ANALYZER_CONTROL.SNAPSHOT), read both ways:\n");
    if (!c->quiet)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    if (bad)
        return fail(c, "%u of %u values differ between the CPU's and the host's reads", bad, n);
    out(c, "%u values equal from the CPU and from the host\n", n);
    return backend_check(c, "cpu");
#endif
}

/* --- main -------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    struct ctx ctx = {.kind = "sim", .opts = "", .timeout_ns = 100000000ull};
    struct ctx *c = &ctx;
    int i = 1;
    for (; i < argc; i++) {
        const char *v;
        int m;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        } else if ((m = bu_opt_value(argc, argv, &i, "--backend", &v))) {
            if (m < 0 || (strcmp(v, "sim") && strcmp(v, "vfio")))
                return usage_error("--backend: sim or vfio");
            c->kind = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--opts", &v))) {
            if (m < 0)
                return usage_error("--opts needs K=V,...");
            c->opts = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--json", &v))) {
            if (m < 0)
                return usage_error("--json needs a file");
            c->json_path = v;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            c->quiet = true;
        } else if ((m = bu_opt_value(argc, argv, &i, "--timeout-ms", &v))) {
            uint64_t ms;
            if (m < 0 || bu_parse_u64(v, &ms) < 0 || ms == 0 || ms > 3600000)
                return usage_error("--timeout-ms: 1..3600000");
            c->timeout_ns = ms * 1000000ull;
        } else if (argv[i][0] == '-') {
            return usage_error("unknown option '%s'", argv[i]);
        } else {
            break;
        }
    }
    if (i >= argc)
        return usage_error("no command given (info, report, capture or cpu)");
    const char *command = argv[i];
    int (*cmd)(struct ctx *, int, char **) = NULL;
    if (strcmp(command, "info") == 0)
        cmd = cmd_info;
    else if (strcmp(command, "report") == 0)
        cmd = cmd_report;
    else if (strcmp(command, "capture") == 0)
        cmd = cmd_capture;
    else if (strcmp(command, "cpu") == 0)
        cmd = cmd_cpu;
    else
        return usage_error("unknown command '%s' (info, report, capture or cpu)", command);
    bu_json_init(&c->j);
    int rc = cmd(c, argc - i - 1, argv + i + 1);
    if (rc == EXIT_OK && c->json_path && c->j.len) {
        /* The document: tool, command line, the backend's parameters, the command's result. */
        struct bu_json d;
        bu_json_init(&d);
        bu_json_obj_begin(&d);
        bu_json_kstr(&d, "tool", "nicscope");
        bu_json_kstr(&d, "command", command);
        bu_json_key(&d, "argv");
        bu_json_arr_begin(&d);
        for (int k = 0; k < argc; k++)
            bu_json_str(&d, argv[k]);
        bu_json_arr_end(&d);
        bu_json_kstr(&d, "backend", c->kind);
        bu_json_key(&d, "params");
        const char *params = c->b ? nic_params_json(c->b) : NULL;
        if (params)
            bu_json_raw(&d, params);
        else
            bu_json_null(&d);
        bu_json_key(&d, "result");
        bu_json_raw(&d, c->j.buf);
        bu_json_obj_end(&d);
        FILE *f = fopen(c->json_path, "w");
        if (!f || fprintf(f, "%.*s\n", (int)d.len, d.buf) < 0 || fclose(f))
            rc = fail(c, "cannot write %s", c->json_path);
        bu_json_free(&d);
    }
    if (c->b)
        nic_close(c->b);
    bu_json_free(&c->j);
    if (rc == EXIT_OK)
        printf("nicscope %s: ok\n", command);
    else if (rc != EXIT_USAGE)
        fprintf(stderr, "nicscope %s: FAILED: %s\n", command, c->failmsg);
    return rc;
}
