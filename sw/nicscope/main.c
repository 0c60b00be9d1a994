// SPDX-License-Identifier: BSD-2-Clause
/*
 * main.c: nicscope, the host tool of the on-chip bus analyzer (litex_soc/nicscope/analyzer_csr.py):
 * occupancy report and triggered trace capture, on any backend (the Verilated SoC, or a board
 * over VFIO).
 *
 *   nicscope [--backend sim|vfio] [--opts K=V,...] [--json FILE] [--quiet] [--timeout-ms N]
 *            info | report | capture | cpu | breakdown [options]
 *
 * Each command is cmd_<name>.c; this file holds option parsing, the usage text (every option),
 * the JSON document and what the commands share (nicscope.h): opening the device, snapshot
 * windows and the loads run inside them (struct load). Exit status: 0 ok, 1 failure (backend
 * error, data mismatch, trigger not fired), 2 usage.
 */
#include "nicscope.h"

#include <errno.h>

static const char *const usage_text =
"usage: nicscope [--backend sim|vfio] [--opts K=V,...] [--json FILE] [--quiet]\n"
"                [--timeout-ms N] COMMAND [options]\n"
"\n"
"commands:\n"
"  info                          probes, sample layout, counter selectors, the deep capture's\n"
"                                status (streams refused: ring base not 4 KiB aligned)\n"
"  report [LOAD] [--bin-min N] [--bin-shift N]\n"
"                                occupancy over one snapshot window around the load\n"
"  capture [LOAD] [--trigger STAGE]... [--trigger-figure FIG]... [--track LEVEL]...\n"
"          [--pre N] [--post N] [--vcd FILE] [--gtkw FILE]\n"
"                                triggered trace -> VCD (+ FST) and GTKWave save file\n"
"                                (default nicscope.vcd, and FILE.gtkw beside the VCD)\n"
"  capture --stream [LOAD] [--ring-log2 N] [--throttle-ns N] [--vcd FILE] [--gtkw FILE]\n"
"                                deep capture: every change, streamed by DMA into a ring of\n"
"                                2**N entries in host memory (default 16) while the load runs;\n"
"                                the host drains it at most every --throttle-ns (default 0:\n"
"                                whenever it can); entries it did not take in time are\n"
"                                counted and each gap marked in the VCD (nic.analyzer.gap)\n"
"  cpu [LOAD] [--boot-ms N]      read the analyzer from the soft CPU too (CPU=1 builds)\n"
"  breakdown [--path dma|c2h|tx] [--sizes LIST] [--count N] [--stream]\n"
"                                per-request DMA read and write latency by stage, per size\n"
"                                (dma: h2c transfers of each size, default 64,256,1024,4096;\n"
"                                c2h: the same on the raw DMA writer; tx: NIC frames, default\n"
"                                64,256,1024,1514; N each, default 16); --stream: the deep\n"
"                                capture runs through each window (its writes: class scope)\n"
"LOAD: --load dma|tx|dma+tx|csr|none (default dma+tx) --bytes N (DMA, each way, default 64K)\n"
"      --frames N --frame-size N (tx: through the MAC loopback, default 32 x 1514 B)\n"
"      --irq (tx: the RX vector raises MSIs, default coalescing; else polled, no MSI)\n"
"      --idle-ns N (none); csr: 32 host reads of BAR0 offset 0, 500 ns apart, nothing else\n"
"STAGE (up to 4, in sequence): cmp [&|| cmp] [#N] | always[#N]\n"
"  cmp  = [level|rise|fall|change:]probe.signal[==value][,probe.signal[==value]...]\n"
"  e.g. --trigger 'rise:dma_rd_req.valid' --trigger 'pcie_rx.fmt_type==0x4a,pcie_rx.valid#3'\n"
"  a term may be figN: figure comparator N's hit (--trigger-figure)\n"
"--trigger-figure FIG  (up to 2) FIG = figure>value or figure<value: comparator N (in order)\n"
"          hits when the figure crosses the value; without --trigger, each adds a stage on its\n"
"          hit (a level: rise, 2 cycles after it crossed; a latency: the hand-off + 4 cycles\n"
"          of the first request past it). Figures (`nicscope info`): level.NAME (its units),\n"
"          bd.CLASS.STAGE (a DMA read's breakdown stage, e.g. bd.raw_dma.total; classes\n"
"          raw_dma, nic_desc, nic_payload), ev.NAME\n"
"          (a device-side latency); latencies in cycles, or with ns/us. e.g.\n"
"          --trigger-figure 'bd.raw_dma.total>2us' --trigger-figure 'level.tx_fifo>16000'\n"
"--track LEVEL  (up to 2) a level stored beside the sample, drawn in GTKWave as a waveform\n"
"          (nic.levels.LEVEL); a change of it writes an entry (default: the levels of\n"
"          --trigger-figure, then rd_tags, nic_rd; --track none: no tracks)\n"
"--pre N   entries kept before the trigger (default depth/16)\n"
"--post N  cycles captured after the trigger (default depth - pre - 1: the entries left after\n"
"          the pre ones and the trigger's, so the window ends before the storage is full even\n"
"          if the sample changes on every cycle). depth: the capture storage in entries, read\n"
"          from the analyzer (ANALYZER_INFO.DEPTH_LOG2); this build: %d, so pre %d, post %d.\n"
"          A larger --post may end early with OVERFLOW (storage full).\n"
"outputs: --json, --vcd, --gtkw and the sim backend's trace=, sample_log=, pcap= are created\n"
"  before the run (one that cannot be written: error, exit 2, nothing run), written as\n"
"  FILE.part and renamed to FILE when complete: a run that fails first leaves none (--json\n"
"  is written only when the command succeeds).\n"
"\n"
"examples:\n"
"  nicscope report --bytes 256K\n"
"  nicscope --json results/occupancy.json report\n"
"  nicscope capture --trigger 'pcie_tx.fmt_type==0x40,pcie_tx.valid,pcie_tx.first' \\\n"
"           --vcd results/trace.vcd --gtkw results/trace.gtkw\n";

static void print_usage(void)
{
    printf(usage_text, NICSCOPE_DEPTH, NICSCOPE_DEPTH / 16,
           NICSCOPE_DEPTH - NICSCOPE_DEPTH / 16 - 1);
}

void window_open(struct ctx *c, struct window *w)
{
    /* After reset the counter bank clears its lanes, then writes zero windows: busy for about
     * twice NICSCOPE_SNAPSHOT_CYCLES cycles, when a snapshot would be refused. An MMIO read
     * takes at least a cycle; if it is still busy, read_window() reports the refusal. */
    for (unsigned tries = 0; nicscope_cnt_status(c->b, &w->refused0) &&
                             tries < 2 * NICSCOPE_SNAPSHOT_CYCLES; tries++)
        ;
    nicscope_snapshot(c->b);
    w->close_after_ns = nic_now_ns(c->b) + 2 * nicscope_pass_ns(period_ns());
}

void window_close(struct ctx *c, const struct window *w)
{
    nicscope_snapshot_close(c->b, w->close_after_ns);
}

/* Reads the counts of the window just closed; fails if the read-out or the backend does, or if a
 * snapshot was refused since CNT_STATUS.REFUSED read `refused0` (read before the window was
 * opened): then a window was not closed where asked. */
int read_window(struct ctx *c, unsigned refused0, struct nicscope_counts *k)
{
    char err[256];
    int rc;
    if (nicscope_read_counts(c->b, k, err, sizeof err) < 0)
        return fail(c, "counter read-out: %s", err);
    if ((rc = backend_check(c, "counter read-out")))
        return rc;
    if (k->snap_refused != refused0)
        return fail(c, "%u snapshot(s) refused (ANALYZER_CNT_STATUS.REFUSED %u -> %u): a "
                    "window was not closed where asked", (k->snap_refused - refused0) & 0xffffu,
                    refused0, k->snap_refused);
    return EXIT_OK;
}

/* --- output files ------------------------------------------------------------------------------ */

int out_create(struct ctx *c, const char *opt, const char *path, struct out_file **o)
{
    if (c->nouts == MAX_OUT_FILES)
        return usage_error("%s: too many output files", opt);
    struct out_file *f = &c->outs[c->nouts];
    *f = (struct out_file){.path = path};
    for (unsigned k = 0; k < c->nouts; k++)
        if (strcmp(c->outs[k].path, path) == 0) {
            fprintf(stderr, "nicscope: %s: cannot create %s: named twice\n", opt, path);
            return EXIT_USAGE;
        }
    const int r = cli_part_create(opt, path, f->part, sizeof f->part);
    if (r)
        return r;
    c->nouts++;
    *o = f;
    return EXIT_OK;
}

int out_commit(struct ctx *c, struct out_file *o)
{
    if (rename(o->part, o->path) != 0)
        return fail(c, "cannot write %s: %s", o->path, strerror(errno));
    o->done = true;
    return EXIT_OK;
}

/* Remove the part of every output not committed. */
static void out_discard_all(struct ctx *c)
{
    for (unsigned k = 0; k < c->nouts; k++)
        if (!c->outs[k].done)
            remove(c->outs[k].part);
}

static double clk_hz;              /* INFO_CLK_FREQ, read by open_dev() */

int open_dev(struct ctx *c)
{
    char err[1024] = "";
    c->b = nic_backend_open(c->kind, c->opts, err, sizeof err);
    if (!c->b)
        return fail(c, "cannot open the %s backend: %s", c->kind, err);
    if (nic_dev_check(c->b, &c->info, err, sizeof err) < 0)
        return fail(c, "bring-up check failed: %s", err);
    if (nicscope_check(c->b, err, sizeof err) < 0)
        return fail(c, "analyzer check failed: %s", err);
    clk_hz = (double)nic_read32(c->b, NIC_CSR_INFO_CLK_FREQ_ADDR);
    return backend_check(c, "bring-up");
}

double period_ns(void) { return 1e9 / clk_hz; }

/* --- load -------------------------------------------------------------------------------------- */

void load_poll(struct ctx *c)
{
    if (c->poll)
        c->poll(c);
}

bool load_has(const struct load *l, const char *what)
{
    return strstr(l->kind, what) != NULL;
}

int load_option(int opt, const char *v, struct load *l)
{
    switch (opt) {
    case OPT_LOAD:
        if (!v || (strcmp(v, "dma") && strcmp(v, "tx") && strcmp(v, "dma+tx") &&
                   strcmp(v, "csr") && strcmp(v, "none")))
            return usage_error("--load: dma, tx, dma+tx, csr or none");
        l->kind = v;
        return EXIT_OK;
    case OPT_BYTES:
        if (!v || bu_parse_u64(v, &l->bytes) < 0 || l->bytes == 0 || l->bytes % 16 ||
            l->bytes > (64u << 20))
            return usage_error("--bytes: a multiple of 16 up to 64M");
        return EXIT_OK;
    case OPT_FRAMES:
        if (!v || bu_parse_u64(v, &l->frames) < 0 || l->frames == 0 || l->frames > 1000000)
            return usage_error("--frames: 1..1000000");
        return EXIT_OK;
    case OPT_FRAME_SIZE:
        if (!v || bu_parse_u64(v, &l->frame_size) < 0 || l->frame_size < 14 ||
            l->frame_size > 1514)
            return usage_error("--frame-size: 14..1514 bytes (without FCS)");
        return EXIT_OK;
    case OPT_IDLE_NS:
        if (!v || bu_parse_u64(v, &l->idle_ns) < 0)
            return usage_error("--idle-ns: a number of ns");
        return EXIT_OK;
    case OPT_IRQ:
        l->irq = true;
        return EXIT_OK;
    default:
        return EXIT_USAGE;
    }
}

/* Both DMA directions at once (host-to-card into the pattern checker, card-to-host from the
 * pattern generator); the data is checked on both sides. Started, then finished, so other
 * traffic can run in between. */
struct dma_load {
    void *h2c, *c2h;
    uint64_t h2c_bus, c2h_bus;
    uint32_t size, want;
    uint32_t keep;                  /* MSIs of the other load left enabled (the tx load's) */
};
static const uint32_t seed_h2c = 0x1000, seed_c2h = 0x2000;

static int dma_start(struct ctx *c, uint64_t bytes, struct dma_load *d)
{
    struct nic_backend *b = c->b;
    char err[256];
    const uint32_t keep = d->keep;
    memset(d, 0, sizeof *d);
    d->keep = keep;
    d->size = (uint32_t)bytes;
    if (d->size > nic_dma_max_len() ||
        nic_dma_desc_check(b, 0, d->size, c->info.data_width / 8, err, sizeof err) < 0)
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
    d->want = nic_msi_bit(nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0)) | nic_msi_bit(nic_rb_msi(b, NIC_RB_PCIE_DMA0, 1));
    nic_msi_enable(b, d->want | d->keep);
    if (nic_irq_drain(b) < 0)
        return fail(c, "load: irq_wait failed");
    nic_dma_enable(b, NIC_DMA_READER, true);
    nic_pattern_gen_enable(b, true);
    return backend_check(c, "load");
}

static int dma_finish(struct ctx *c, struct dma_load *d)
{
    struct nic_backend *b = c->b;
    uint32_t seen = 0;
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    while ((seen & d->want) != d->want) {
        if (nic_now_ns(b) > deadline)
            return fail(c, "load: no MSI for %s within %" PRIu64 " ns",
                        seen & nic_msi_bit(nic_rb_msi(b, NIC_RB_DMA_PATTERN, 0)) ? "the writer"
                                                                         : "the checker",
                        c->timeout_ns);
        load_poll(c);
        const int r = nic_msi_wait_sources(b, c->poll ? 2000 : 100000, &seen);
        if (r < 0 || nic_last_error(b))
            return backend_check(c, "load") ? EXIT_FAIL : fail(c, "load: irq_wait failed");
    }
    /* The writer's MSI follows its last request; wait for the data to land. */
    const volatile uint32_t *tail = (const volatile uint32_t *)d->c2h + d->size / 4 - 1;
    while (*tail != nic_pattern_word(seed_c2h, d->size / 4 - 1)) {
        if (nic_now_ns(b) > deadline)
            return fail(c, "load: card-to-host data did not arrive");
        nic_idle(b, 8);
        load_poll(c);
    }
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_msi_enable(b, d->keep);
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

/* Frames sent on TX queue 0 and received on the RX ring through the MAC loopback, as a polling
 * driver does it (ixy-style: no interrupts): a doorbell per batch of TX_BATCH frames, completion
 * records polled from host memory and the buffers reposted with one doorbell per poll, each
 * frame checked byte for byte. Frame n: broadcast, source 02:00:4e:49:43:31, EtherType 0x88b5,
 * then bytes (n * 7 + k). */
#define TX_BATCH 32u
#define TX_RING 64u
#define RX_RING 256u

static void tx_fill(uint8_t *p, size_t size, uint64_t n)
{
    static const uint8_t src[6] = {0x02, 0x00, 0x4e, 0x49, 0x43, 0x31};
    memset(p, 0xff, 6);
    memcpy(p + 6, src, 6);
    p[12] = 0x88;
    p[13] = 0xb5;
    for (size_t k = 14; k < size; k++)
        p[k] = (uint8_t)(n * 7 + k);
}

static int tx_check(struct ctx *c, const struct nic_q_rx_frame *r, size_t size, uint64_t n)
{
    uint8_t want[NIC_Q_FRAME_MAX];
    const size_t len = size < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : size;    /* the MAC pads */
    if (r->status != 0)
        return fail(c, "load tx: frame %" PRIu64 ": RX completion status %u", n, r->status);
    if (r->len != len)
        return fail(c, "load tx: frame %" PRIu64 " came back as %u bytes (sent %zu)", n, r->len,
                    size);
    tx_fill(want, size, n);
    for (size_t k = 0; k < size; k++)
        if (r->data[k] != want[k])
            return fail(c, "load tx: frame %" PRIu64 " byte %zu is %#04x, sent %#04x", n, k,
                        r->data[k], want[k]);
    return EXIT_OK;
}

static int tx_prepare(struct ctx *c, const struct load *l, struct load_state *s)
{
    char err[512];
    const struct nic_q_config qc = {.ntxq = 1, .tx_ring = TX_RING, .tx_limit = 0,
                                    .rx_ring = RX_RING,
                                    .buf_size = (unsigned)(l->frame_size < NIC_Q_FRAME_MIN ?
                                                           NIC_Q_FRAME_MIN : l->frame_size),
                                    .sched_mode = 0};
    if (nic_q_open(&s->nq, c->b, &qc, c->timeout_ns, err, sizeof err) < 0) {
        nic_q_close(&s->nq, c->timeout_ns, NULL, 0);
        return fail(c, "load tx: %s", err);
    }
    s->nq_open = true;
    s->desc_lo[0] = s->nq.tx[0].desc_bus;
    s->desc_hi[0] = s->desc_lo[0] + s->nq.tx[0].size * sizeof(struct nic_tx_desc);
    s->desc_lo[1] = s->nq.rx.desc_bus;
    s->desc_hi[1] = s->desc_lo[1] + s->nq.rx.size * sizeof(struct nic_rx_desc);
    if (l->irq) {                   /* the RX vector's MSIs, at the default coalescing */
        struct nic_q_coalesce co;
        nic_q_coalesce_defaults(&co);
        if (nic_q_coalesce_set(&s->nq, &co, err, sizeof err) < 0)
            return fail(c, "load tx: %s", err);
        nic_msi_enable(c->b, nic_msi_bit(nic_q_rx_msi(c->b)));
    } else {
        nic_msi_enable(c->b, 0);    /* polled: no MSI traffic */
    }
    if (nic_irq_drain(c->b) < 0)
        return fail(c, "load tx: interrupt drain failed");
    return backend_check(c, "load tx setup");
}

bool load_desc_addr(const struct load_state *s, uint64_t addr)
{
    for (size_t i = 0; i < 2; i++)
        if (addr >= s->desc_lo[i] && addr < s->desc_hi[i])
            return true;
    return false;
}

static uint64_t doorbells(const struct nic_queues *nq)
{
    return nq->tx[0].doorbells + nq->rx.doorbells;
}

static int tx_run(struct ctx *c, const struct load *l, struct load_state *s)
{
    struct nic_queues *nq = &s->nq;
    const uint64_t db0 = doorbells(nq);
    struct nic_backend *b = c->b;
    const size_t size = (size_t)l->frame_size;
    static uint8_t buf[TX_BATCH][NIC_Q_FRAME_MAX];
    struct nic_q_frame fr[TX_BATCH];
    struct nic_q_rx_frame recs[TX_BATCH];
    char err[256];
    uint64_t sent = 0, got = 0;
    uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    while (got < l->frames) {
        bool progress = false;
        unsigned n = nic_q_tx_room(nq, 0);
        if (n > TX_BATCH)
            n = TX_BATCH;
        if (n > l->frames - sent)
            n = (unsigned)(l->frames - sent);
        if (n && sent - got + n <= RX_RING - 1) {
            for (unsigned i = 0; i < n; i++) {
                tx_fill(buf[i], size, sent + i);
                fr[i] = (struct nic_q_frame){buf[i], (uint32_t)size};
            }
            if (s->ntx_db < LOAD_MAX_HOST_EVENTS)      /* host time of the doorbell write */
                s->tx_db_ns[s->ntx_db++] = nic_now_ns(b);
            if (nic_q_tx_send(nq, 0, fr, n, err, sizeof err) != (int)n)
                return fail(c, "load tx: frame %" PRIu64 ": %s", sent, err);
            sent += n;
            progress = true;
        }
        const int k = nic_q_rx_poll(nq, recs, TX_BATCH);
        for (int i = 0; i < k; i++) {
            int rc = tx_check(c, &recs[i], size, got);
            if (rc)
                return rc;
            got++;
        }
        if (k > 0) {
            nic_q_rx_refill(nq);
            progress = true;
        }
        if (nic_q_tx_reclaim(nq, 0, err, sizeof err) < 0)
            return fail(c, "load tx: %s", err);
        if (progress) {
            deadline = nic_now_ns(b) + c->timeout_ns;
        } else {
            if (nic_now_ns(b) > deadline)
                return fail(c, "load tx: %" PRIu64 " of %" PRIu64 " frames came back within "
                            "%" PRIu64 " ns of the last progress (%" PRIu64 " sent)", got,
                            l->frames, c->timeout_ns, sent);
            nic_idle(b, 64);
        }
        load_poll(c);
    }
    s->doorbells = doorbells(nq) - db0;
    return backend_check(c, "load tx");
}

static int read_nic_counters(struct ctx *c, uint64_t *v)
{
    char err[256];
    if (nic_q_counters_read(c->b, v, LOAD_MAX_COUNTERS, err, sizeof err) < 0)
        return fail(c, "load: %s", err);
    return EXIT_OK;
}

int load_prepare(struct ctx *c, const struct load *l, struct load_state *s)
{
    memset(s, 0, sizeof *s);
    nic_q_counter_defs(&s->ncnt);
    if (s->ncnt > LOAD_MAX_COUNTERS)
        return fail(c, "load: %zu NIC counters, room for %d", s->ncnt, LOAD_MAX_COUNTERS);
    int rc;
    if (load_has(l, "tx") && (rc = tx_prepare(c, l, s)))
        return rc;
    if (nic_rb_find(c->b, NIC_RB_NIC) && (rc = read_nic_counters(c, s->nic_cnt0)))
        return rc;
    return EXIT_OK;
}

int run_load(struct ctx *c, const struct load *l, struct load_state *s)
{
    struct dma_load d = {.keep = l->irq && load_has(l, "tx") ?
                                     nic_msi_bit(nic_q_rx_msi(c->b)) : 0};
    int rc = EXIT_OK;
    if (strcmp(l->kind, "none") == 0) {
        for (uint64_t t = 0; t < l->idle_ns; t += 1000) {
            nic_idle(c->b, l->idle_ns - t < 1000 ? l->idle_ns - t : 1000);
            load_poll(c);
        }
        return backend_check(c, "idle");
    }
    if (strcmp(l->kind, "csr") == 0) {   /* idle but for host reads of the identification */
        for (unsigned i = 0; i < CSR_LOAD_READS; i++) {
            (void)nic_read32(c->b, 0);
            nic_idle(c->b, CSR_LOAD_GAP_NS);
            load_poll(c);
        }
        return backend_check(c, "csr");
    }
    if (load_has(l, "dma") && (rc = dma_start(c, l->bytes, &d)))
        return rc;
    if (load_has(l, "tx") && (rc = tx_run(c, l, s)))
        return rc;
    if (load_has(l, "dma"))
        rc = dma_finish(c, &d);
    return rc;
}

int load_finish(struct ctx *c, const struct load *l, struct load_state *s)
{
    int rc = EXIT_OK;
    if (nic_rb_find(c->b, NIC_RB_NIC))
        rc = read_nic_counters(c, s->nic_cnt1);
    if (l->irq) {
        nic_msi_enable(c->b, 0);
        if (nic_irq_drain(c->b) < 0 && !rc)
            rc = fail(c, "load: interrupt drain failed");
    }
    if (s->nq_open) {
        char err[256];
        if (nic_q_close(&s->nq, c->timeout_ns, err, sizeof err) < 0 && !rc)
            rc = fail(c, "load tx: %s", err);
        s->nq_open = false;
    }
    return rc ? rc : backend_check(c, "load finish");
}

int64_t *load_host_cycles(struct ctx *c, const struct load_state *s,
                          struct nicscope_timebase *tb)
{
    nicscope_timebase(c->b, period_ns(), tb);
    int64_t *host = calloc(s->ntx_db + 1, sizeof *host);
    for (size_t i = 0; host && i < s->ntx_db; i++)
        host[i] = nicscope_cycle_at(tb, (double)s->tx_db_ns[i]);
    return host;
}

uint64_t load_counter(const struct load_state *s, const char *name)
{
    size_t n;
    const struct nic_q_counter_def *d = nic_q_counter_defs(&n);
    const int i = nic_q_counter_index(name);
    if (i < 0 || (size_t)i >= s->ncnt)
        return 0;
    return nic_q_counter_delta(&d[i], s->nic_cnt0[i], s->nic_cnt1[i]);
}

/* --- main -------------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    struct ctx ctx = {0};                  /* the global options fill it below */
    struct ctx *c = &ctx;
    cli_init("nicscope", "(nicscope --help for usage)");
    struct global_opts g;
    const int i = global_opts_parse(argc, argv, &g, usage_error);
    if (i < 0)
        return EXIT_USAGE;
    if (g.help) {
        print_usage();
        return EXIT_OK;
    }
    c->kind = g.kind;
    c->opts = g.opts;
    c->json_path = g.json_path;
    c->run.quiet = g.quiet;
    c->timeout_ns = g.timeout_ns;
    if (i >= argc)
        return usage_error("no command given (info, report, capture, cpu or breakdown)");
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
    else if (strcmp(command, "breakdown") == 0)
        cmd = cmd_breakdown;
    else
        return usage_error("unknown command '%s' (info, report, capture, cpu or breakdown)",
                           command);
    /* Everything the run is to write must be writable before it starts. */
    char err[1024] = "";
    if (nic_backend_check_opts(c->kind, c->opts, err, sizeof err) < 0) {
        fprintf(stderr, "nicscope: --opts: %s\n", err);
        return EXIT_USAGE;
    }
    struct out_file *json = NULL;
    if (c->json_path) {
        const int jr = out_create(c, "--json", c->json_path, &json);
        if (jr)
            return jr;
    }
    bu_json_init(&c->j);
    /* The command parses its own argv, argv[0] its name, from the start: optind = 0 makes
     * getopt_long reinitialise. */
    optind = 0;
    int rc = cmd(c, argc - i, argv + i);
    if (rc == EXIT_OK && c->json_path && c->j.len) {
        /* The document: tool, command line, the backend's parameters, the command's result. */
        struct bu_json d;
        bu_json_init(&d);
        bu_json_obj_begin(&d);
        bu_json_kstr(&d, "tool", "nicscope");
        bu_json_kstr(&d, "command", command);
        bu_json_kstrs(&d, "argv", (const char *const *)argv, (size_t)argc);
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
        FILE *f = fopen(json->part, "w");
        if (!f || fprintf(f, "%.*s\n", (int)d.len, d.buf) < 0 || ferror(f)) {
            rc = fail(c, "cannot write %s: %s", c->json_path, strerror(errno));
            if (f)
                fclose(f);
        } else if (fclose(f) != 0) {
            rc = fail(c, "cannot write %s: %s", c->json_path, strerror(errno));
        } else {
            rc = out_commit(c, json);
        }
        bu_json_free(&d);
    }
    if (c->b)
        nic_close(c->b);
    out_discard_all(c);
    bu_json_free(&c->j);
    if (rc == EXIT_OK)
        printf("nicscope %s: ok\n", command);
    else if (rc != EXIT_USAGE)
        fprintf(stderr, "nicscope %s: FAILED: %s\n", command, c->run.failmsg);
    return rc;
}
