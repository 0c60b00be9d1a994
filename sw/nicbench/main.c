/*
 * nicbench.c: the NIC's measurement CLI. Runs on any backend (nic_backend.h): the Verilator
 * simulation ("sim", simulated time and model counters) or a board ("vfio", CLOCK_MONOTONIC).
 *
 *   nicbench [--backend sim|vfio] [--opts K=V,...] [--json FILE] [--quiet] [--timeout-ms N]
 *            <command> [command options]
 *
 * Commands (see usage() for the full text, `nicbench --help`):
 *   info      identification, version, build configuration, scratch test, backend parameters
 *   csr       MMIO write cost and read round trip at idle and under a card-to-host DMA stream;
 *             DMA hold-off caused by CSR reads (sim probes)
 *   dma       DMA throughput vs transfer size, host-to-card and card-to-host, MPS/MRRS sweeps
 *   loopback  reader -> writer loopback of random data at random sizes and offsets, bit-exact
 *   tx        frames through the NIC datapath's descriptor rings (sw/lib/nic_queues.h), the MAC
 *             loopback and the RX ring: throughput, Mpps, doorbells, drops, interrupts, checked
 *             bit-exact (NIC=1 builds only; others fail with "this build has no NIC datapath")
 *   rr        request/response latency between two simulated NIC + host systems back to back
 *             (sim backend with peer=1, NIC=1 builds): RTT distribution per frame size, every
 *             frame checked bit-exact, MMIO reads of each host on the hot path
 *
 * Every result carries the backend's params_json(); figures come from measurements on the
 * backend clock (now_ns) and from backend counters, limits from the backend's model
 * (model_limit_*_kbps counters). The device layer is sw/lib/nic_dev.h; pure helpers (lists,
 * percentiles, JSON, tables) are bench_util.h.
 *
 * Exit status: 0 ok, 1 measurement/verification failure or backend error, 2 usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "nic_backend.h"
#include "nic_dev.h"
#include "nic_queues.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

#define MAX_SIZES 64
#define MAX_PAIRS 16
#define CSR_STREAM_BYTES (64u << 10)     /* csr: the card-to-host loop buffer */
#define CSR_STREAM_DESC (4u << 10)       /* ... in 4 KiB descriptors */
#define DMA_ALIGN_PAGE 4096u             /* no request may cross a 4 KiB boundary */
#define MSI_WAIT_SLICE_NS 10000u         /* irq_wait slice between backend error checks */

static const char *const usage_text =
"NAME\n"
"    nicbench - measure CSR access costs, DMA throughput and DMA correctness of the NIC\n"
"\n"
"SYNOPSIS\n"
"    nicbench [--backend sim|vfio] [--opts K=V,...] [--json FILE] [--quiet] [--timeout-ms N]\n"
"             <command> [command options]\n"
"    nicbench --help\n"
"\n"
"DESCRIPTION\n"
"    Drives the NIC through a backend: `sim` (the Verilated SoC against the C++ PCIe\n"
"    root-complex model; times are simulated ns, model counters are available) or `vfio` (a\n"
"    board; VFIO or sysfs; times are CLOCK_MONOTONIC ns). Every result printed and written to\n"
"    JSON carries the backend's parameters (for sim: every link/model parameter).\n"
"\n"
"GLOBAL OPTIONS\n"
"    --backend sim|vfio   backend (default sim)\n"
"    --opts K=V,...       backend options. sim: model parameters (gen, lanes, mps, mrrs, rcb,\n"
"                         mem_read_latency_ns, data_width, trace=FILE, ...: see\n"
"                         sw/sim/pcie_host_model.h; NIC build: peer=1 two NICs back to back,\n"
"                         pcap=FILE, wire_ns=N: sw/sim/backend_sim.cpp);\n"
"                         vfio: dev=0000:01:00.0[,mode=auto|vfio|sysfs]\n"
"    --json FILE          also write one JSON document: {\"tool\":\"nicbench\", \"command\",\n"
"                         \"backend\", \"params\", \"records\":[...], \"status\", ...}\n"
"    --quiet              print only errors and the final status line\n"
"    --timeout-ms N       longest wait for an MSI or for DMA data, backend time (default 100)\n"
"    -h, --help           this text\n"
"\n"
"COMMANDS\n"
"    info\n"
"        INFO_MAGIC (expects 0x4e494331), version, build configuration, identifier,\n"
"        CTRL_SCRATCH write/read-back, the device's negotiated MPS/MRRS, backend parameters.\n"
"\n"
"    csr [--samples N] [--dma-window-ns N]\n"
"        (a) MMIO write cost (CTRL_SCRATCH) and (b) MMIO read round trip (CTRL_SCRATCH) at\n"
"        idle, as distributions over N samples (default 1000): min / median / p99 / max ns,\n"
"        each call timed with now_ns() before and after. (c) The read distribution while a\n"
"        card-to-host DMA stream runs (writer in loop mode over a 64 KiB buffer, pattern\n"
"        generator on, descriptor IRQs off). (d) DMA hold-off with that stream running:\n"
"        backend counters probe.dma_wr_stall, probe.dma_wr_stall_csr, probe.csr_busy,\n"
"        probe.cycles (sim; n/a on hardware) over a window of back-to-back CSR reads (at least\n"
"        N reads and at least --dma-window-ns ns, default 0) and over an equally long window\n"
"        without CSR access: cycles the DMA write request stream was held off (valid, not\n"
"        ready) per CSR read, and total stall cycles in each window. The PCIe counterpart of\n"
"        \"CSR access inserts PCI STOPs\" (Hughes-Jones et al.).\n"
"\n"
"    dma [--dir h2c|c2h|both] [--sizes LIST] [--min-bytes N] [--mps LIST] [--mrrs LIST]\n"
"        Throughput vs transfer size (default sizes 256..2M: powers of two). Each size runs\n"
"        r = max(3, ceil(min_bytes/size)) times (min_bytes default 4M); printed: median time\n"
"        per transfer, Gb/s and MB/s (10^6 B/s), the model limit (model_limit_*_kbps counter\n"
"        of the backend, n/a when it has none) and measured/limit.\n"
"        h2c: a 4 KiB-aligned buffer holds the checker's pattern; one reader descriptor (IRQ\n"
"          off); timed from the reader enable to DMA_PATTERN_CHECKER_INTERRUPT; checker bytes\n"
"          and errors verified.\n"
"        c2h: the buffer holds a sentinel; one writer descriptor (IRQ on, last off); the\n"
"          writer is enabled, then timed from the generator enable to PCIE_DMA0_WRITER_INTERRUPT\n"
"          and the buffer's last 16 bytes holding the pattern; the whole buffer is verified.\n"
"          (The generator is started after the writer because a disabled writer drops data.)\n"
"        --mps/--mrrs (sim): one backend per (mps, mrrs) pair, reopened with those options;\n"
"          e.g. --mps 128,256,512 --mrrs 128,256,512,1024,2048,4096. Without them the\n"
"          backend's own setting is used (sim model default MPS 256, MRRS 512). On vfio MPS\n"
"          and MRRS are fixed by the platform: the sweep is reported and run once.\n"
"        Sizes must be multiples of the datapath width (16 B at 128 bits, 8 B at 64 bits).\n"
"\n"
"    loopback [--count N] [--seed S] [--max-size N] [--unaligned]\n"
"        PCIE_DMA0_LOOPBACK on: N transfers (default 16) of random data, random sizes\n"
"        (multiples of 16 B up to --max-size, default 64K) at random 4 KiB-aligned offsets\n"
"        (--unaligned: 16 B-aligned offsets, which may make LitePCIe emit requests crossing a\n"
"        4 KiB boundary); writer descriptor to dst, reader descriptor from src, wait for the\n"
"        writer MSI and the data; bit-exact compare. Mismatches are printed.\n"
"\n"
"    tx [--frames N] [--sizes LIST | --size-range LO-HI] [--queues Q] [--ring R] [--batch B]\n"
"       [--inflight LIST] [--rx-ring R] [--poll-ns N]\n"
"       [--coalesce rx-usecs=U,rx-frames=F,tx-usecs=..,...]\n"
"        Needs the NIC datapath build (make sim NIC=1: build/sim_dw<W>_nic/nicbench). Sends N\n"
"        frames (default 10000) per run of each size (--size/--sizes, bytes without FCS,\n"
"        20..9216, default 60) over Q TX queues (default 1; rings of R descriptors, default\n"
"        64, one buffer per slot) through the datapath, LiteEth's MAC and its loopback PHY back\n"
"        into the RX ring (--rx-ring, default 1024 buffers). The host (sw/lib/nic_queues.c) posts\n"
"        B frames per doorbell (default min(32, R-1)), keeps at most --inflight descriptors\n"
"        per queue posted and not completed (default R-1, also the queue's device limit; a\n"
"        list runs each: throughput vs descriptors in flight), reclaims from the\n"
"        consumer-index writeback and reposts RX buffers with one doorbell per B frames: no\n"
"        MMIO read on the hot path. Every frame is checked bit-exact and in order per queue\n"
"        (it carries its queue, run and sequence number). Printed per run: frames, bytes,\n"
"        simulated time from the first doorbell to the last frame received, Gb/s of frame\n"
"        bytes and at the wire (+4 B FCS +20 B preamble and gap, frames padded to 60 B),\n"
"        Mpps, the ratio to the 1 Gb/s line rate, MMIO read TLPs in that window\n"
"        (model.tlps_down_mrd; must be 0), doorbells, drops by cause (every nic_* drop and\n"
"        error counter), interrupts (nic_txirq/rxirq_irqs) and MSIs received (per vector\n"
"        with multi-vector MSI: msis_tx/msis_rx in the JSON; an MSI on any other vector\n"
"        fails the run). Coalescing defaults: frames 1, usecs 0. --size-range LO-HI: one run whose frames have sizes\n"
"        drawn uniformly in LO..HI (per frame, from its queue and sequence number).\n"
"        Fails on any loss, corruption, reordering, drop or hot-path MMIO read.\n"
"\n"
"    rr [--sizes LIST] [--count N] [--poll-ns N]\n"
"        Needs the NIC datapath build and the sim backend opened with peer=1 (two SoCs, each\n"
"        with its own PCIe host model and memory, their GMII pins wired back to back; add\n"
"        pcap=FILE to capture both directions, wire_ns=N for a wire delay). Per frame size\n"
"        (bytes without FCS, default 60,128,512,1514), N round trips (default 200): host A\n"
"        sends a request on TX queue 0 (one doorbell), host B polls its RX ring, checks it and\n"
"        sends a response of the same size, A polls for it and checks it. Round-trip time in\n"
"        simulated ns from before A's send to A's poll seeing the response (polls every\n"
"        --poll-ns, default 8 = one 125 MHz cycle). Printed: count, min / median / p99 / max /\n"
"        mean RTT, half the median RTT, one frame's wire time, MMIO read TLPs of each host\n"
"        over the round trips (model.tlps_down_mrd; must be 0). RX buffers are reposted and TX\n"
"        descriptors reclaimed between round trips, outside the timed path.\n"
"        Fails on any corrupted or missing frame or hot-path MMIO read.\n"
"\n"
"    LIST: comma-separated numbers and ranges; A..B = A, 2A, 4A, ... <= B. Numbers take K, M,\n"
"    G suffixes (binary) and 0x prefixes: 256..2M, 4096,6000,8K, 0x1000.\n"
"\n"
"OUTPUT\n"
"    A table per experiment on stdout (right-aligned; units in the headers), the backend\n"
"    parameters, and for the sim backend the simulator speed (simulated cycles per wall\n"
"    second). The backend's last_error() is checked after every experiment: any backend or\n"
"    model error (malformed TLP, 4 KiB crossing, MPS violation, ...) fails the command.\n"
"\n"
"EXIT STATUS\n"
"    0 success, 1 measurement/verification failure or backend error, 2 usage error.\n"
"\n"
"EXAMPLES\n"
"    nicbench --backend sim --opts gen=2,lanes=4,mps=256,mrrs=512 info\n"
"    nicbench --backend sim --json results/csr.json csr --samples 2000\n"
"    nicbench --backend sim --opts mps=128,mrrs=256 dma --dir c2h --sizes 4096..1M\n"
"    nicbench --json results/dma.json dma --mps 128,256,512 --mrrs 128,256,512,1024,2048,4096\n"
"    nicbench --backend vfio --opts dev=0000:01:00.0 dma --dir both\n"
"    nicbench loopback --count 100 --seed 7 --max-size 32K\n"
"    build/sim_dw128_nic/nicbench --json results/tx.json tx --sizes 60,128,512,1512 --queues 4\n"
"    build/sim_dw128_nic/nicbench tx --size 60 --inflight 1,2,4,8,16,32,63\n"
"    build/sim_dw128_nic/nicbench --opts peer=1,pcap=wire.pcap rr --sizes 60,1514 --count 100\n";

/* --- context, errors, JSON --------------------------------------------------------------------- */

struct ctx {
    /* global options */
    const char *kind, *opts, *json_path, *command;
    bool quiet;
    uint64_t timeout_ns;
    int argc;
    char **argv;
    /* the open backend */
    struct nic_backend *b;
    struct nic_dev_info info;
    uint32_t align;                 /* DMA length/address granule: datapath bytes */
    /* output */
    struct bu_json rec;             /* the records array */
    struct bu_json configs;         /* dma: one object per backend configuration */
    size_t nconfigs;
    char *params;                   /* params_json of the first backend opened */
    char failmsg[2048];
    /* simulator speed */
    bool have_cycles;
    uint64_t cyc0, wall0, sim0;
    uint64_t cycles, wall_ns, sim_ns;
};

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((format(printf, 2, 3))) static int fail(struct ctx *c, const char *fmt, ...)
{
    /* The first failure is the cause; main() prints it. */
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
    fputs("nicbench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs("\nTry 'nicbench --help'.\n", stderr);
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

/* The backend's recorded error, if any, fails the experiment `what`. */
static int backend_check(struct ctx *c, const char *what)
{
    const char *e = c->b ? nic_last_error(c->b) : NULL;
    if (e)
        return fail(c, "%s: backend error: %s", what, e);
    return EXIT_OK;
}

/* Counter or "n/a". */
static bool counter(struct ctx *c, const char *name, uint64_t *v)
{
    return nic_counter(c->b, name, v) == 0;
}

static void json_opt_u64(struct bu_json *j, const char *key, bool have, uint64_t v)
{
    bu_json_key(j, key);
    if (have)
        bu_json_u64(j, v);
    else
        bu_json_null(j);
}

static void json_opt_double(struct bu_json *j, const char *key, bool have, double v)
{
    bu_json_key(j, key);
    if (have)
        bu_json_double(j, v);
    else
        bu_json_null(j);
}

/* --- backend open/close ------------------------------------------------------------------------ */

static void speed_begin(struct ctx *c)
{
    uint64_t v;
    if (counter(c, "probe.cycles", &v)) {
        c->have_cycles = true;
        c->cyc0 = v;
        c->wall0 = wall_ns();
        c->sim0 = nic_now_ns(c->b);
    }
}

static void speed_end(struct ctx *c)
{
    uint64_t v;
    if (c->b && c->have_cycles && counter(c, "probe.cycles", &v)) {
        c->cycles += v - c->cyc0;
        c->wall_ns += wall_ns() - c->wall0;
        c->sim_ns += nic_now_ns(c->b) - c->sim0;
    }
}

/* Stop everything that could still move data: generator, both engines, loopback, MSIs. */
static void quiesce(struct ctx *c)
{
    if (!c->b)
        return;
    nic_pattern_gen_enable(c->b, false);
    nic_dma_stop(c->b, NIC_DMA_READER);
    nic_dma_stop(c->b, NIC_DMA_WRITER);
    nic_dma_loopback(c->b, false);
    nic_msi_enable(c->b, 0);
    nic_msi_ack(c->b);
}

static void close_backend(struct ctx *c)
{
    if (!c->b)
        return;
    speed_end(c);
    nic_close(c->b);
    c->b = NULL;
}

/* Open the backend with opts and run the bring-up check (nic_dev_check). */
static int open_backend(struct ctx *c, const char *opts)
{
    char err[1024] = "";
    c->b = nic_backend_open(c->kind, opts, err, sizeof err);
    if (!c->b)
        return fail(c, "cannot open the %s backend: %s", c->kind, err);
    if (!c->params) {
        const char *p = nic_params_json(c->b);
        c->params = strdup(p ? p : "null");
    }
    speed_begin(c);
    if (nic_dev_check(c->b, &c->info, err, sizeof err) < 0) {
        const char *be = nic_last_error(c->b);
        return fail(c, "bring-up check failed: %s%s%s", err, be ? "; backend error: " : "",
                    be ? be : "");
    }
    c->align = c->info.data_width / 8;
    return backend_check(c, "bring-up check");
}

/* The negotiated MPS/MRRS as the backend reports them (params "mps"/"mrrs"), -1 if absent. */
static int param_int(struct nic_backend *b, const char *key)
{
    double d;
    return bu_json_get_number(nic_params_json(b), key, &d) == 0 ? (int)d : -1;
}

/* The MPS/MRRS the device itself uses (PCIE_PHY_PHY_MAX_*_SIZE), -1 if the SoC lacks them. */
static int dev_mps(struct nic_backend *b)
{
#ifdef CSR_PCIE_PHY_PHY_MAX_PAYLOAD_SIZE_ADDR
    return (int)nic_read32(b, CSR_PCIE_PHY_PHY_MAX_PAYLOAD_SIZE_ADDR);
#else
    (void)b;
    return -1;
#endif
}

static int dev_mrrs(struct nic_backend *b)
{
#ifdef CSR_PCIE_PHY_PHY_MAX_REQUEST_SIZE_ADDR
    return (int)nic_read32(b, CSR_PCIE_PHY_PHY_MAX_REQUEST_SIZE_ADDR);
#else
    (void)b;
    return -1;
#endif
}

static void print_params(struct ctx *c, const char *label)
{
    out(c, "%s%s\n", label, nic_params_json(c->b));
}

/* --- option parsing ---------------------------------------------------------------------------- */

/* argv[*i] is --name VALUE or --name=VALUE: 1 with *val set, 0 if it is not --name, -1 when
 * the value is missing. */
static int missing(const char *name) { return usage_error("option %s needs a value", name); }

static int parse_num(const char *opt, const char *s, uint64_t *v)
{
    if (bu_parse_u64(s, v) < 0)
        return usage_error("%s: '%s' is not a number (e.g. 4096, 4K, 0x1000)", opt, s);
    return EXIT_OK;
}

/* --- info -------------------------------------------------------------------------------------- */

static int cmd_info(struct ctx *c, int argc, char **argv)
{
    (void)argv;
    if (argc > 0)
        return usage_error("info: unknown option '%s'", argv[0]);
    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    const struct nic_dev_info *in = &c->info;
    const int mps = dev_mps(c->b), mrrs = dev_mrrs(c->b);
    if ((rc = backend_check(c, "info")))
        return rc;

    char magic[16], ver[32], cfg[96], scratch[96], dmps[16], dmrrs[16];
    snprintf(magic, sizeof magic, "%#010x", in->magic);
    if (in->magic == NIC_MAGIC)
        strncat(magic, " ok", sizeof magic - strlen(magic) - 1);
    snprintf(ver, sizeof ver, "%u.%u", in->version_major, in->version_minor);
    snprintf(cfg, sizeof cfg, "data_width %u, ndmas %u, sim %d, cpu %d (%#010x)",
             in->data_width, in->ndmas, in->sim, in->cpu, in->config);
    snprintf(scratch, sizeof scratch, "ok: %u patterns read back, reset value %#010x",
             in->scratch_patterns, in->scratch_reset);
    snprintf(dmps, sizeof dmps, mps >= 0 ? "%d" : "n/a", mps);
    snprintf(dmrrs, sizeof dmrrs, mrrs >= 0 ? "%d" : "n/a", mrrs);

    const char *rows[][2] = {
        {"identifier", in->ident},  {"magic", magic},         {"version", ver},
        {"config", cfg},            {"scratch", scratch},     {"device MPS (B)", dmps},
        {"device MRRS (B)", dmrrs}, {"backend", c->b->kind},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++)
        out(c, "%-16s %s\n", rows[k][0], rows[k][1]);
    print_params(c, "params: ");

    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "info");
    char hex[16];
    snprintf(hex, sizeof hex, "%#010x", in->magic);
    bu_json_kstr(&c->rec, "magic", hex);
    bu_json_key(&c->rec, "magic_ok");
    bu_json_bool(&c->rec, in->magic == NIC_MAGIC);
    bu_json_kstr(&c->rec, "version", ver);
    bu_json_ku64(&c->rec, "data_width", in->data_width);
    bu_json_ku64(&c->rec, "ndmas", in->ndmas);
    bu_json_key(&c->rec, "sim");
    bu_json_bool(&c->rec, in->sim);
    bu_json_key(&c->rec, "cpu");
    bu_json_bool(&c->rec, in->cpu);
    bu_json_kstr(&c->rec, "identifier", in->ident);
    bu_json_ku64(&c->rec, "scratch_patterns", in->scratch_patterns);
    snprintf(hex, sizeof hex, "%#010x", in->scratch_reset);
    bu_json_kstr(&c->rec, "scratch_reset", hex);
    json_opt_u64(&c->rec, "dev_mps", mps >= 0, (uint64_t)mps);
    json_opt_u64(&c->rec, "dev_mrrs", mrrs >= 0, (uint64_t)mrrs);
    bu_json_obj_end(&c->rec);
    return backend_check(c, "info");
}

/* --- csr --------------------------------------------------------------------------------------- */

enum csr_access { CSR_WRITE, CSR_READ };

/* n timed accesses to CTRL_SCRATCH; reads check they return the last value written. */
static int time_csr(struct ctx *c, enum csr_access a, uint64_t *samples, size_t n,
                    uint32_t *last_written)
{
    struct nic_backend *b = c->b;
    for (size_t i = 0; i < n; i++) {
        if (a == CSR_WRITE) {
            const uint32_t v = (uint32_t)(0x5ca1ab1eu ^ (i * 0x9e3779b9u));
            const uint64_t t0 = nic_now_ns(b);
            nic_write32(b, CSR_CTRL_SCRATCH_ADDR, v);
            const uint64_t t1 = nic_now_ns(b);
            samples[i] = t1 - t0;
            *last_written = v;
        } else {
            const uint64_t t0 = nic_now_ns(b);
            const uint32_t v = nic_read32(b, CSR_CTRL_SCRATCH_ADDR);
            const uint64_t t1 = nic_now_ns(b);
            samples[i] = t1 - t0;
            if (v != *last_written)
                return fail(c, "CTRL_SCRATCH read %zu returned %#010x, last written %#010x", i,
                            v, *last_written);
        }
    }
    return EXIT_OK;
}

static void dist_row(struct bu_table *t, const char *access, const char *cond,
                     const struct bu_dist *d)
{
    char n[24], mn[24], md[24], p99[24], mx[24], mean[32];
    snprintf(n, sizeof n, "%zu", d->n);
    snprintf(mn, sizeof mn, "%" PRIu64, d->min);
    snprintf(md, sizeof md, "%" PRIu64, d->median);
    snprintf(p99, sizeof p99, "%" PRIu64, d->p99);
    snprintf(mx, sizeof mx, "%" PRIu64, d->max);
    snprintf(mean, sizeof mean, "%.1f", d->mean);
    const char *row[] = {access, cond, n, mn, md, p99, mx, mean};
    bu_table_row(t, row);
}

static void dist_record(struct ctx *c, const char *exp, const char *access, const char *cond,
                        const struct bu_dist *d)
{
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", exp);
    bu_json_kstr(&c->rec, "access", access);
    bu_json_kstr(&c->rec, "condition", cond);
    bu_json_ku64(&c->rec, "samples", d->n);
    bu_json_ku64(&c->rec, "min_ns", d->min);
    bu_json_ku64(&c->rec, "median_ns", d->median);
    bu_json_ku64(&c->rec, "p99_ns", d->p99);
    bu_json_ku64(&c->rec, "max_ns", d->max);
    bu_json_kdouble(&c->rec, "mean_ns", d->mean);
    bu_json_obj_end(&c->rec);
}

/* Probe counters of one window. */
struct probes {
    bool have[5];
    uint64_t v[5];
};
static const char *const probe_names[5] = {
    "probe.cycles", "probe.dma_wr_stall", "probe.dma_wr_stall_csr", "probe.csr_busy",
    "probe.dma_wr_reqs",
};
enum { P_CYCLES, P_STALL, P_STALL_CSR, P_CSR_BUSY, P_WR_REQS };

static void probes_read(struct ctx *c, struct probes *p)
{
    for (int k = 0; k < 5; k++)
        p->have[k] = counter(c, probe_names[k], &p->v[k]);
}

static void probes_delta(const struct probes *a, const struct probes *b, struct probes *d)
{
    for (int k = 0; k < 5; k++) {
        d->have[k] = a->have[k] && b->have[k];
        d->v[k] = d->have[k] ? b->v[k] - a->v[k] : 0;
    }
}

static const char *fmt_opt(char *buf, size_t len, bool have, uint64_t v)
{
    if (have)
        snprintf(buf, len, "%" PRIu64, v);
    else
        snprintf(buf, len, "n/a");
    return buf;
}

static void holdoff_output(struct ctx *c, struct bu_table *t, const char *window,
                           uint64_t duration_ns, uint64_t reads, const struct probes *d)
{
    char dur[24], nr[24], cyc[24], st[24], stc[24], per[32], busy[24], reqs[24];
    snprintf(dur, sizeof dur, "%" PRIu64, duration_ns);
    snprintf(nr, sizeof nr, "%" PRIu64, reads);
    fmt_opt(cyc, sizeof cyc, d->have[P_CYCLES], d->v[P_CYCLES]);
    fmt_opt(st, sizeof st, d->have[P_STALL], d->v[P_STALL]);
    fmt_opt(stc, sizeof stc, d->have[P_STALL_CSR], d->v[P_STALL_CSR]);
    fmt_opt(busy, sizeof busy, d->have[P_CSR_BUSY], d->v[P_CSR_BUSY]);
    fmt_opt(reqs, sizeof reqs, d->have[P_WR_REQS], d->v[P_WR_REQS]);
    const bool have_per = d->have[P_STALL_CSR] && reads > 0;
    const double per_read = have_per ? (double)d->v[P_STALL_CSR] / (double)reads : 0;
    if (have_per)
        snprintf(per, sizeof per, "%.2f", per_read);
    else
        snprintf(per, sizeof per, "n/a");
    const char *row[] = {window, dur, nr, cyc, st, stc, per, busy, reqs};
    bu_table_row(t, row);

    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "csr_dma_holdoff");
    bu_json_kstr(&c->rec, "window", window);
    bu_json_ku64(&c->rec, "duration_ns", duration_ns);
    bu_json_ku64(&c->rec, "csr_reads", reads);
    json_opt_u64(&c->rec, "cycles", d->have[P_CYCLES], d->v[P_CYCLES]);
    json_opt_u64(&c->rec, "dma_wr_stall", d->have[P_STALL], d->v[P_STALL]);
    json_opt_u64(&c->rec, "dma_wr_stall_csr", d->have[P_STALL_CSR], d->v[P_STALL_CSR]);
    json_opt_double(&c->rec, "stall_per_read", have_per, per_read);
    json_opt_u64(&c->rec, "csr_busy", d->have[P_CSR_BUSY], d->v[P_CSR_BUSY]);
    json_opt_u64(&c->rec, "dma_wr_reqs", d->have[P_WR_REQS], d->v[P_WR_REQS]);
    char stream[96];
    snprintf(stream, sizeof stream, "c2h writer loop over %u B in %u B descriptors, IRQs off",
             CSR_STREAM_BYTES, CSR_STREAM_DESC);
    bu_json_kstr(&c->rec, "stream", stream);
    bu_json_obj_end(&c->rec);
}

/* The card-to-host stream of csr (c)/(d): writer ring in loop mode, then the generator. */
static int stream_start(struct ctx *c, struct nic_dma_ring *ring, uint64_t bus)
{
    char err[512];
    struct nic_backend *b = c->b;
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    if (nic_dma_writer_drain(b, c->timeout_ns) < 0)
        return fail(c, "writer buffering FIFO did not drain");
    if (nic_dma_ring_setup(ring, b, NIC_DMA_WRITER, bus, CSR_STREAM_DESC,
                           CSR_STREAM_BYTES / CSR_STREAM_DESC, c->align,
                           NIC_DMA_IRQ_DISABLE | NIC_DMA_LAST_DISABLE, err, sizeof err) < 0)
        return fail(c, "csr: DMA stream: %s", err);
    nic_dma_ring_start(ring, true);
    nic_pattern_gen_seed(b, 0);
    nic_pattern_gen_enable(b, true);
    /* Steady state: wait until the ring wrapped once (TABLE_LOOP_STATUS count). */
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    for (;;) {
        nic_dma_ring_update(ring);
        if (ring->loops >= 1)
            break;
        if (nic_now_ns(b) > deadline)
            return fail(c, "csr: the card-to-host stream did not complete one pass of its "
                        "%u-descriptor ring within %" PRIu64 " ns (loop status index %u)",
                        ring->count, c->timeout_ns, ring->next_to_clean);
        int rc = backend_check(c, "csr: DMA stream start");
        if (rc)
            return rc;
        nic_idle(b, 1000);
    }
    return backend_check(c, "csr: DMA stream start");
}

static int cmd_csr(struct ctx *c, int argc, char **argv)
{
    uint64_t samples = 1000, window_ns = 0;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        int rc;
        if ((m = bu_opt_value(argc, argv, &i, "--samples", &v))) {
            if (m < 0)
                return missing("--samples");
            if ((rc = parse_num("--samples", v, &samples)))
                return rc;
            if (samples == 0 || samples > 100000000)
                return usage_error("--samples: %" PRIu64 " out of range 1..1e8", samples);
        } else if ((m = bu_opt_value(argc, argv, &i, "--dma-window-ns", &v))) {
            if (m < 0)
                return missing("--dma-window-ns");
            if ((rc = parse_num("--dma-window-ns", v, &window_ns)))
                return rc;
        } else {
            return usage_error("csr: unknown option '%s'", argv[i]);
        }
    }
    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    print_params(c, "params: ");
    uint64_t *s = calloc(samples, sizeof *s);
    if (!s)
        return fail(c, "out of memory for %" PRIu64 " samples", samples);

    static const char *const hdr[] = {"access", "condition", "samples", "min_ns", "median_ns",
                                      "p99_ns", "max_ns", "mean_ns"};
    struct bu_table t;
    bu_table_init(&t, 8, hdr);
    struct bu_dist d;
    uint32_t last = 0;

    /* (a) write cost, (b) read round trip, idle. */
    if ((rc = time_csr(c, CSR_WRITE, s, samples, &last)) || (rc = backend_check(c, "csr write")))
        goto out;
    bu_dist_compute(s, samples, &d);
    dist_row(&t, "write CTRL_SCRATCH", "idle", &d);
    dist_record(c, "csr_latency", "write", "idle", &d);
    if ((rc = time_csr(c, CSR_READ, s, samples, &last)) || (rc = backend_check(c, "csr read")))
        goto out;
    bu_dist_compute(s, samples, &d);
    dist_row(&t, "read CTRL_SCRATCH", "idle", &d);
    dist_record(c, "csr_latency", "read", "idle", &d);

    /* (c) read round trip with the card-to-host stream running. */
    uint64_t bus;
    void *buf = nic_dma_alloc(b, CSR_STREAM_BYTES, &bus);
    if (!buf) {
        const char *e = nic_last_error(b);
        rc = fail(c, "csr: cannot allocate %u bytes of DMA memory: %s", CSR_STREAM_BYTES,
                  e ? e : "?");
        goto out;
    }
    if (bus % DMA_ALIGN_PAGE) {
        rc = fail(c, "csr: DMA buffer at bus address %#" PRIx64 " is not 4 KiB aligned", bus);
        goto out;
    }
    struct nic_dma_ring ring;
    if ((rc = stream_start(c, &ring, bus)))
        goto out;
    if ((rc = time_csr(c, CSR_READ, s, samples, &last)) ||
        (rc = backend_check(c, "csr read under DMA")))
        goto out;
    bu_dist_compute(s, samples, &d);
    dist_row(&t, "read CTRL_SCRATCH", "c2h DMA stream", &d);
    dist_record(c, "csr_latency", "read", "c2h DMA stream", &d);
    out(c, "\nMMIO cost on the backend clock (%s), CTRL_SCRATCH, %" PRIu64 " samples each\n",
        b->kind, samples);
    if (!c->quiet)
        bu_table_print(&t, stdout, "  ");

    /* (d) hold-off: a window of CSR reads, then an equally long one without CSR access. */
    struct probes p0, p1, p2, p3, dcsr, didle;
    probes_read(c, &p0);
    const uint64_t t0 = nic_now_ns(b);
    uint64_t reads = 0;
    while (reads < samples || nic_now_ns(b) - t0 < window_ns) {
        const uint32_t v = nic_read32(b, CSR_CTRL_SCRATCH_ADDR);
        reads++;
        if (v != last) {
            rc = fail(c, "CTRL_SCRATCH read returned %#010x, expected %#010x", v, last);
            goto out;
        }
    }
    const uint64_t t1 = nic_now_ns(b);
    probes_read(c, &p1);
    probes_read(c, &p2);
    const uint64_t t2 = nic_now_ns(b);
    nic_idle(b, t1 - t0);
    const uint64_t t3 = nic_now_ns(b);
    probes_read(c, &p3);
    if ((rc = backend_check(c, "csr DMA hold-off")))
        goto out;
    probes_delta(&p0, &p1, &dcsr);
    probes_delta(&p2, &p3, &didle);
    nic_dma_ring_update(&ring);
    const uint32_t loops = ring.loops;

    static const char *const hh[] = {"window", "duration_ns", "csr_reads", "cycles",
                                     "wr_stall_cyc", "wr_stall_in_csr_cyc", "stall_cyc/read",
                                     "csr_busy_cyc", "wr_req_beats"};
    struct bu_table th;
    bu_table_init(&th, 9, hh);
    holdoff_output(c, &th, "csr reads", t1 - t0, reads, &dcsr);
    holdoff_output(c, &th, "no csr access", t3 - t2, 0, &didle);
    out(c, "\nDMA hold-off by CSR reads: card-to-host stream (writer loop, %u x %u B "
        "descriptors, IRQs off, %u ring passes so far)\n", ring.count, ring.size, loops);
    if (!c->quiet)
        bu_table_print(&th, stdout, "  ");
    if (dcsr.have[P_STALL] && didle.have[P_STALL])
        out(c, "  stall cycles: %" PRIu64 " with CSR reads vs %" PRIu64 " without "
            "(difference %" PRId64 ")\n", dcsr.v[P_STALL], didle.v[P_STALL],
            (int64_t)(dcsr.v[P_STALL] - didle.v[P_STALL]));
    else
        out(c, "  stall counters: n/a on the %s backend (no probes)\n", b->kind);
    bu_table_free(&th);

    nic_pattern_gen_enable(b, false);
    nic_dma_ring_stop(&ring);
    rc = backend_check(c, "csr");
out:
    bu_table_free(&t);
    free(s);
    return rc;
}

/* --- dma --------------------------------------------------------------------------------------- */

enum dir { H2C, C2H };
static const char *const dir_name[2] = {"h2c", "c2h"};

struct dma_run {
    void *buf;
    uint64_t bus;
    size_t cap;
    uint32_t seed;                  /* advanced for every transfer */
};

/* Wait for one MSI; fail with what is known when none comes. The wait is cut in slices so a
 * backend error (e.g. a TLP the model rejected, whose data will never come) ends it early;
 * an MSI ends a slice at once, so slicing does not change the measured time. */
/* Wait for the MSI of interrupt `irq` (soc.h *_INTERRUPT). With multi-vector MSI the vector must
 * be irq's; with single-vector MSI every interrupt is vector 0 and PCIE_MSI_VECTOR says which. */
static int wait_msi(struct ctx *c, unsigned irq, const char *what)
{
    const uint64_t deadline = nic_now_ns(c->b) + c->timeout_ns;
    for (;;) {
        const uint64_t now = nic_now_ns(c->b);
        const uint64_t left = deadline > now ? deadline - now : 0;
        unsigned vec = 0;
        const int r = nic_irq_wait_vector(c->b, left < MSI_WAIT_SLICE_NS ? left
                                                                         : MSI_WAIT_SLICE_NS, &vec);
        if (r == 1 && NIC_MSI_MULTI_VECTOR && vec != irq)
            return fail(c, "%s: MSI on vector %u, expected vector %u", what, vec, irq);
        if (r == 1)
            return backend_check(c, what);
        const char *e = nic_last_error(c->b);
        if (r < 0)
            return fail(c, "%s: irq_wait failed: %s", what, e ? e : "?");
        if (e)
            return fail(c, "%s: backend error: %s", what, e);
        if (left == 0)
            return fail(c, "%s: no MSI within %" PRIu64 " ns (MSI vector %#x)", what,
                        c->timeout_ns, nic_msi_vector(c->b));
    }
}

/* Spin (nic_idle 8 ns) until the 16 bytes at p equal want. */
static int wait_tail(struct ctx *c, const volatile uint8_t *p, const uint8_t *want,
                     const char *what)
{
    const uint64_t deadline = nic_now_ns(c->b) + c->timeout_ns;
    for (;;) {
        bool same = true;
        for (int k = 0; k < 16; k++)
            if (p[k] != want[k])
                same = false;
        if (same)
            return EXIT_OK;
        const char *e = nic_last_error(c->b);
        if (e)
            return fail(c, "%s: backend error: %s", what, e);
        if (nic_now_ns(c->b) > deadline) {
            char got[40], exp[40];
            for (int k = 0; k < 16; k++) {
                snprintf(got + 2 * k, 3, "%02x", p[k]);
                snprintf(exp + 2 * k, 3, "%02x", want[k]);
            }
            return fail(c, "%s: the last 16 bytes did not arrive within %" PRIu64 " ns after "
                        "the MSI: they hold %s, expected %s", what, c->timeout_ns, got, exp);
        }
        nic_idle(c->b, 8);
    }
}

static int dma_h2c_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns)
{
    struct nic_backend *b = c->b;
    const uint32_t seed = r->seed++;
    nic_pattern_fill(r->buf, size, seed);
    nic_pattern_chk_restart(b, seed, size);
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_dma_table_reset(b, NIC_DMA_READER);
    nic_dma_set_loop(b, NIC_DMA_READER, false);
    nic_dma_push(b, NIC_DMA_READER, r->bus, size, NIC_DMA_IRQ_DISABLE);
    if (nic_irq_drain(b) < 0)
        return fail(c, "h2c: irq_wait failed while draining MSIs: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");
    nic_msi_ack(b);

    const uint64_t t0 = nic_now_ns(b);
    nic_dma_enable(b, NIC_DMA_READER, true);
    int rc = wait_msi(c, DMA_PATTERN_CHECKER_INTERRUPT, "h2c: checker interrupt");
    const uint64_t t1 = nic_now_ns(b);
    if (rc)
        return rc;
    *ns = t1 - t0;

    const uint64_t got = nic_pattern_chk_bytes(b);
    const uint32_t errors = nic_pattern_chk_errors(b);
    if (got != size || errors != 0)
        return fail(c, "h2c %u B (seed %#x): checker counted %" PRIu64 " bytes and %u "
                    "mismatching beats, expected %u bytes and 0", size, seed, got, errors, size);
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_msi_ack(b);
    return backend_check(c, "h2c transfer");
}

static int dma_c2h_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns)
{
    struct nic_backend *b = c->b;
    const uint32_t seed = r->seed++;
    uint32_t *w = r->buf;
    /* Sentinel: the pattern's complement, so no word already matches. */
    const size_t words = (size + 16 <= r->cap ? size + 16 : size) / 4;
    for (size_t i = 0; i < words; i++)
        w[i] = ~nic_pattern_word(seed, i);
    uint8_t tail[16];
    for (int k = 0; k < 4; k++) {
        const uint32_t v = nic_pattern_word(seed, size / 4 - 4 + (size_t)k);
        for (int j = 0; j < 4; j++)
            tail[4 * k + j] = (uint8_t)(v >> (8 * j));          /* little-endian */
    }

    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    if (nic_dma_writer_drain(b, c->timeout_ns) < 0)
        return fail(c, "c2h: writer buffering FIFO still holds %u bytes",
                    nic_dma_buffering_level(b, NIC_DMA_WRITER));
    nic_dma_table_reset(b, NIC_DMA_WRITER);
    nic_dma_set_loop(b, NIC_DMA_WRITER, false);
    nic_dma_push(b, NIC_DMA_WRITER, r->bus, size, NIC_DMA_LAST_DISABLE);
    nic_pattern_gen_seed(b, seed);
    nic_dma_enable(b, NIC_DMA_WRITER, true);
    if (nic_irq_drain(b) < 0)
        return fail(c, "c2h: irq_wait failed while draining MSIs: %s",
                    nic_last_error(b) ? nic_last_error(b) : "?");
    nic_msi_ack(b);

    const uint64_t t0 = nic_now_ns(b);
    nic_pattern_gen_enable(b, true);
    int rc = wait_msi(c, PCIE_DMA0_WRITER_INTERRUPT, "c2h: writer interrupt");
    if (rc)
        return rc;
    rc = wait_tail(c, (const volatile uint8_t *)r->buf + size - 16, tail, "c2h");
    const uint64_t t1 = nic_now_ns(b);
    if (rc)
        return rc;
    *ns = t1 - t0;

    size_t first = 0;
    const size_t bad = nic_pattern_check(r->buf, size, seed, &first);
    if (bad) {
        const uint32_t got = ((const volatile uint32_t *)r->buf)[first / 4];
        return fail(c, "c2h %u B (seed %#x): %zu of %u words differ from the pattern, first at "
                    "byte %zu: %#010x, expected %#010x", size, seed, bad, size / 4, first, got,
                    nic_pattern_word(seed, first / 4));
    }
    if (words > size / 4) {
        const volatile uint32_t *after = (const volatile uint32_t *)r->buf + size / 4;
        for (size_t i = 0; i < 4; i++)
            if (after[i] != ~nic_pattern_word(seed, size / 4 + i))
                return fail(c, "c2h %u B: the DMA wrote past the end of the buffer (byte %zu)",
                            size, size + 4 * i);
    }
    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    nic_msi_ack(b);
    return backend_check(c, "c2h transfer");
}

struct dma_cfg {
    int mps, mrrs;                  /* link (backend params) */
    int dev_mps, dev_mrrs;          /* what the device uses */
};

static int dma_size(struct ctx *c, struct dma_run *r, enum dir d, uint32_t size,
                    uint64_t min_bytes, const struct dma_cfg *cfg)
{
    struct nic_backend *b = c->b;
    const uint64_t reps64 = bu_ceil_div(min_bytes, size);
    const size_t reps = reps64 > 3 ? (size_t)reps64 : 3;
    uint64_t *t = calloc(reps, sizeof *t);
    if (!t)
        return fail(c, "out of memory");
    int rc = EXIT_OK;
    for (size_t i = 0; i < reps && !rc; i++)
        rc = d == H2C ? dma_h2c_once(c, r, size, &t[i]) : dma_c2h_once(c, r, size, &t[i]);
    if (rc) {
        free(t);
        return rc;
    }
    struct bu_dist dist;
    bu_dist_compute(t, reps, &dist);
    free(t);

    const double ns = (double)dist.median;
    const double gbps = ns > 0 ? (double)size * 8.0 / ns : NAN;
    const double mbps = ns > 0 ? (double)size * 1e3 / ns : NAN;
    char name[64];
    snprintf(name, sizeof name, "model_limit_%s_kbps:%u", dir_name[d], size);
    uint64_t kbps = 0;
    const bool have_limit = counter(c, name, &kbps) && kbps > 0;
    const double limit = have_limit ? (double)kbps / 1e6 : NAN;
    const double ratio = have_limit ? gbps / limit : NAN;

    char sz[24], lim[24], rat[24];
    snprintf(sz, sizeof sz, "%u", size);
    if (have_limit) {
        snprintf(lim, sizeof lim, "%.3f", limit);
        snprintf(rat, sizeof rat, "%.3f", ratio);
    } else {
        snprintf(lim, sizeof lim, "n/a");
        snprintf(rat, sizeof rat, "n/a");
    }
    out(c, "%10s %4s %5d %5d %7zu %12" PRIu64 " %8.3f %9.2f %10s %6s\n", sz, dir_name[d],
        cfg->mps, cfg->mrrs, reps, dist.median, gbps, mbps, lim, rat);
    fflush(stdout);

    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "dma");
    bu_json_kstr(&c->rec, "dir", dir_name[d]);
    bu_json_ku64(&c->rec, "size", size);
    json_opt_u64(&c->rec, "mps", cfg->mps >= 0, (uint64_t)cfg->mps);
    json_opt_u64(&c->rec, "mrrs", cfg->mrrs >= 0, (uint64_t)cfg->mrrs);
    json_opt_u64(&c->rec, "dev_mps", cfg->dev_mps >= 0, (uint64_t)cfg->dev_mps);
    json_opt_u64(&c->rec, "dev_mrrs", cfg->dev_mrrs >= 0, (uint64_t)cfg->dev_mrrs);
    bu_json_ku64(&c->rec, "reps", reps);
    bu_json_ku64(&c->rec, "time_ns", dist.median);
    bu_json_ku64(&c->rec, "time_min_ns", dist.min);
    bu_json_ku64(&c->rec, "time_max_ns", dist.max);
    bu_json_kdouble(&c->rec, "gbps", gbps);
    bu_json_kdouble(&c->rec, "mbps", mbps);
    json_opt_double(&c->rec, "limit_gbps", have_limit, limit);
    json_opt_double(&c->rec, "ratio", have_limit, ratio);
    bu_json_kstr(&c->rec, "clock", b->kind);
    bu_json_obj_end(&c->rec);
    return EXIT_OK;
}

static int dma_config(struct ctx *c, const char *opts, const bool dirs[2], const uint64_t *sizes,
                      size_t nsizes, uint64_t min_bytes)
{
    int rc = open_backend(c, opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    struct dma_cfg cfg = {param_int(b, "mps"), param_int(b, "mrrs"), dev_mps(b), dev_mrrs(b)};
    uint64_t maxsize = 0;
    for (size_t i = 0; i < nsizes; i++) {
        char err[256];
        if (sizes[i] > nic_dma_max_len() || sizes[i] < 16 ||
            nic_dma_desc_check(0, (uint32_t)sizes[i], c->align, err, sizeof err) < 0)
            return fail(c, "dma: size %" PRIu64 " unusable: a multiple of %u bytes (datapath), "
                        "at least 16, at most %u is needed", sizes[i], c->align,
                        nic_dma_max_len());
        if (sizes[i] > maxsize)
            maxsize = sizes[i];
    }
    struct dma_run r = {.seed = 0x1000};
    /* The largest size fills the buffer; smaller ones leave room to detect overruns. One huge
     * page holds it up to 2 MiB (the sysfs fallback needs physically contiguous memory). */
    r.cap = (size_t)maxsize;
    r.buf = nic_dma_alloc(b, r.cap, &r.bus);
    if (!r.buf) {
        const char *e = nic_last_error(b);
        return fail(c, "dma: cannot allocate %zu bytes of DMA memory: %s", r.cap, e ? e : "?");
    }
    char err[256];
    if (r.bus % DMA_ALIGN_PAGE || nic_dma_desc_check(r.bus, (uint32_t)maxsize, c->align, err,
                                                      sizeof err) < 0)
        return fail(c, "dma: DMA buffer at bus address %#" PRIx64 " unusable: %s", r.bus,
                    r.bus % DMA_ALIGN_PAGE ? "not 4 KiB aligned" : err);

    print_params(c, "params: ");
    out(c, "link MPS %d B, MRRS %d B; the device uses MPS %d B, MRRS %d B; times: %s clock\n",
        cfg.mps, cfg.mrrs, cfg.dev_mps, cfg.dev_mrrs, b->kind);
    out(c, "%10s %4s %5s %5s %7s %12s %8s %9s %10s %6s\n", "size_B", "dir", "mps", "mrrs", "reps",
        "time_ns", "Gb/s", "MB/s", "limit_Gb/s", "ratio");

    bu_json_obj_begin(&c->configs);
    bu_json_kstr(&c->configs, "opts", opts);
    json_opt_u64(&c->configs, "mps", cfg.mps >= 0, (uint64_t)cfg.mps);
    json_opt_u64(&c->configs, "mrrs", cfg.mrrs >= 0, (uint64_t)cfg.mrrs);
    json_opt_u64(&c->configs, "dev_mps", cfg.dev_mps >= 0, (uint64_t)cfg.dev_mps);
    json_opt_u64(&c->configs, "dev_mrrs", cfg.dev_mrrs >= 0, (uint64_t)cfg.dev_mrrs);
    bu_json_key(&c->configs, "params");
    bu_json_raw(&c->configs, nic_params_json(b));
    bu_json_obj_end(&c->configs);
    c->nconfigs++;

    for (int d = 0; d < 2 && !rc; d++) {
        if (!dirs[d])
            continue;
        nic_msi_enable(b, d == H2C ? nic_msi_bit(DMA_PATTERN_CHECKER_INTERRUPT)
                                   : nic_msi_bit(PCIE_DMA0_WRITER_INTERRUPT));
        for (size_t i = 0; i < nsizes && !rc; i++)
            rc = dma_size(c, &r, (enum dir)d, (uint32_t)sizes[i], min_bytes, &cfg);
        nic_msi_enable(b, 0);
    }
    if (!rc) {
        quiesce(c);
        nic_dma_free(b, r.buf, r.cap);
        rc = backend_check(c, "dma");
    }
    return rc;
}

static int cmd_dma(struct ctx *c, int argc, char **argv)
{
    bool dirs[2] = {true, true};
    const char *sizes_s = "256..2M", *mps_s = NULL, *mrrs_s = NULL;
    uint64_t min_bytes = 4u << 20;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        int rc;
        if ((m = bu_opt_value(argc, argv, &i, "--dir", &v))) {
            if (m < 0)
                return missing("--dir");
            if (strcmp(v, "h2c") == 0)
                dirs[H2C] = true, dirs[C2H] = false;
            else if (strcmp(v, "c2h") == 0)
                dirs[H2C] = false, dirs[C2H] = true;
            else if (strcmp(v, "both") == 0)
                dirs[H2C] = dirs[C2H] = true;
            else
                return usage_error("--dir: '%s' is not h2c, c2h or both", v);
        } else if ((m = bu_opt_value(argc, argv, &i, "--sizes", &v))) {
            if (m < 0)
                return missing("--sizes");
            sizes_s = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--min-bytes", &v))) {
            if (m < 0)
                return missing("--min-bytes");
            if ((rc = parse_num("--min-bytes", v, &min_bytes)))
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--mps", &v))) {
            if (m < 0)
                return missing("--mps");
            mps_s = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--mrrs", &v))) {
            if (m < 0)
                return missing("--mrrs");
            mrrs_s = v;
        } else {
            return usage_error("dma: unknown option '%s'", argv[i]);
        }
    }
    uint64_t sizes[MAX_SIZES], mps[MAX_PAIRS], mrrs[MAX_PAIRS];
    size_t nsizes, nmps = 0, nmrrs = 0;
    char err[256];
    if (bu_parse_list(sizes_s, sizes, MAX_SIZES, &nsizes, err, sizeof err) < 0)
        return usage_error("--sizes: %s", err);
    for (size_t i = 0; i < nsizes; i++)
        if (sizes[i] > UINT32_MAX || sizes[i] < 16 || sizes[i] % 8)
            return usage_error("--sizes: %" PRIu64 " is not a DMA length (a multiple of the "
                               "datapath width, 8 or 16 B, from 16 B)", sizes[i]);
    if (mps_s && bu_parse_list(mps_s, mps, MAX_PAIRS, &nmps, err, sizeof err) < 0)
        return usage_error("--mps: %s", err);
    if (mrrs_s && bu_parse_list(mrrs_s, mrrs, MAX_PAIRS, &nmrrs, err, sizeof err) < 0)
        return usage_error("--mrrs: %s", err);

    const bool sweep = mps_s || mrrs_s;
    if (!sweep || strcmp(c->kind, "sim") != 0) {
        if (sweep)
            out(c, "note: on the %s backend MPS and MRRS are fixed by the platform (see "
                "params mps/mrrs); running once instead of the requested sweep\n", c->kind);
        return dma_config(c, c->opts, dirs, sizes, nsizes, min_bytes);
    }
    /* A missing list keeps the backend's own value for that parameter. */
    const size_t np = nmps ? nmps : 1, nr = nmrrs ? nmrrs : 1;
    for (size_t i = 0; i < np; i++) {
        for (size_t k = 0; k < nr; k++) {
            char o1[1024], o2[1024], val[32];
            snprintf(o1, sizeof o1, "%s", c->opts);
            if (nmps) {
                snprintf(val, sizeof val, "%" PRIu64, mps[i]);
                if (bu_opts_set(c->opts, "mps", val, o1, sizeof o1) < 0)
                    return usage_error("--opts too long");
            }
            snprintf(o2, sizeof o2, "%s", o1);
            if (nmrrs) {
                snprintf(val, sizeof val, "%" PRIu64, mrrs[k]);
                if (bu_opts_set(o1, "mrrs", val, o2, sizeof o2) < 0)
                    return usage_error("--opts too long");
            }
            out(c, "%s--- backend options: %s\n", i + k ? "\n" : "", o2);
            const int rc = dma_config(c, o2, dirs, sizes, nsizes, min_bytes);
            if (rc)
                return rc;
            close_backend(c);
        }
    }
    return EXIT_OK;
}

/* --- loopback ---------------------------------------------------------------------------------- */

static int cmd_loopback(struct ctx *c, int argc, char **argv)
{
    uint64_t count = 16, seed = 1, max_size = 64u << 10;
    bool unaligned = false;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m;
        int rc;
        if ((m = bu_opt_value(argc, argv, &i, "--count", &v))) {
            if (m < 0)
                return missing("--count");
            if ((rc = parse_num("--count", v, &count)))
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--seed", &v))) {
            if (m < 0)
                return missing("--seed");
            if ((rc = parse_num("--seed", v, &seed)))
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--max-size", &v))) {
            if (m < 0)
                return missing("--max-size");
            if ((rc = parse_num("--max-size", v, &max_size)))
                return rc;
        } else if (strcmp(argv[i], "--unaligned") == 0) {
            unaligned = true;
        } else {
            return usage_error("loopback: unknown option '%s'", argv[i]);
        }
    }
    if (max_size < 16 || max_size % 16)
        return usage_error("--max-size: %" PRIu64 " is not a positive multiple of 16", max_size);
    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    if (max_size > nic_dma_max_len() || max_size % c->align)
        return fail(c, "--max-size %" PRIu64 " unusable: at most %u and a multiple of %u",
                    max_size, nic_dma_max_len(), c->align);
    print_params(c, "params: ");

    /* Two areas of 2 x max_size each: room for random offsets. */
    const size_t area = (size_t)max_size * 2;
    uint64_t src_bus, dst_bus;
    uint8_t *src = nic_dma_alloc(b, area, &src_bus);
    uint8_t *dst = src ? nic_dma_alloc(b, area, &dst_bus) : NULL;
    if (!dst) {
        const char *e = nic_last_error(b);
        return fail(c, "loopback: cannot allocate 2 x %zu bytes of DMA memory: %s", area,
                    e ? e : "?");
    }
    if (src_bus % DMA_ALIGN_PAGE || dst_bus % DMA_ALIGN_PAGE)
        return fail(c, "loopback: DMA buffers not 4 KiB aligned (%#" PRIx64 ", %#" PRIx64 ")",
                    src_bus, dst_bus);

    out(c, "loopback: %" PRIu64 " transfers, sizes 16..%" PRIu64 " B, %s offsets, seed %" PRIu64
        "\n", count, max_size, unaligned ? "16 B-aligned" : "4 KiB-aligned", seed);
    out(c, "%6s %9s %10s %10s %12s %7s\n", "#", "size_B", "src_off", "dst_off", "time_ns",
        "result");
    uint64_t rng = bu_rand_seed(seed);
    const uint64_t gran = unaligned ? 16 : DMA_ALIGN_PAGE;
    uint64_t bad_transfers = 0, bytes = 0;
    nic_dma_stop(b, NIC_DMA_READER);
    nic_dma_stop(b, NIC_DMA_WRITER);
    nic_pattern_gen_enable(b, false);
    nic_dma_loopback(b, true);
    nic_msi_enable(b, nic_msi_bit(PCIE_DMA0_WRITER_INTERRUPT));

    for (uint64_t n = 0; n < count; n++) {
        const uint32_t size = (uint32_t)(16 * (1 + bu_rand(&rng) % (max_size / 16)));
        const uint64_t so = gran * (bu_rand(&rng) % ((area - size) / gran + 1));
        const uint64_t doff = gran * (bu_rand(&rng) % ((area - size) / gran + 1));
        for (uint32_t k = 0; k < size; k += 8) {
            const uint64_t x = bu_rand(&rng);
            memcpy(src + so + k, &x, 8);
        }
        for (uint32_t k = 0; k < size; k++)
            dst[doff + k] = (uint8_t)~src[so + k];

        /* Writer first (it waits for data), then the reader feeds it through the loopback. */
        nic_dma_enable(b, NIC_DMA_WRITER, false);
        nic_dma_table_reset(b, NIC_DMA_WRITER);
        nic_dma_set_loop(b, NIC_DMA_WRITER, false);
        nic_dma_push(b, NIC_DMA_WRITER, dst_bus + doff, size, NIC_DMA_LAST_DISABLE);
        nic_dma_enable(b, NIC_DMA_WRITER, true);
        nic_dma_enable(b, NIC_DMA_READER, false);
        nic_dma_table_reset(b, NIC_DMA_READER);
        nic_dma_set_loop(b, NIC_DMA_READER, false);
        nic_dma_push(b, NIC_DMA_READER, src_bus + so, size, NIC_DMA_IRQ_DISABLE);
        if (nic_irq_drain(b) < 0) {
            rc = fail(c, "loopback: irq drain failed: %s",
                      nic_last_error(b) ? nic_last_error(b) : "?");
            break;
        }
        if ((rc = backend_check(c, "loopback setup")))
            break;
        nic_msi_ack(b);

        char what[96];
        snprintf(what, sizeof what, "loopback transfer %" PRIu64 " (%u B, src +%#" PRIx64
                 ", dst +%#" PRIx64 ")", n, size, so, doff);
        const uint64_t t0 = nic_now_ns(b);
        nic_dma_enable(b, NIC_DMA_READER, true);
        if ((rc = wait_msi(c, PCIE_DMA0_WRITER_INTERRUPT, what)) || (rc = wait_tail(c, dst + doff + size - 16,
                                                        src + so + size - 16, what)))
            break;
        const uint64_t t1 = nic_now_ns(b);

        size_t diff = 0, first = 0;
        for (uint32_t k = 0; k < size; k++)
            if (((const volatile uint8_t *)dst)[doff + k] != src[so + k]) {
                if (!diff)
                    first = k;
                diff++;
            }
        nic_dma_enable(b, NIC_DMA_READER, false);
        nic_dma_enable(b, NIC_DMA_WRITER, false);
        nic_msi_ack(b);
        if ((rc = backend_check(c, what)))
            break;
        bytes += size;
        out(c, "%6" PRIu64 " %9u %#10" PRIx64 " %#10" PRIx64 " %12" PRIu64 " %7s\n", n, size, so,
            doff, t1 - t0, diff ? "BAD" : "ok");
        if (diff) {
            bad_transfers++;
            fprintf(stderr, "nicbench: transfer %" PRIu64 ": %zu of %u bytes differ, first at "
                    "byte %zu: got %#04x, expected %#04x\n", n, diff, size, first,
                    ((const volatile uint8_t *)dst)[doff + first], src[so + first]);
        }
        bu_json_obj_begin(&c->rec);
        bu_json_kstr(&c->rec, "experiment", "loopback");
        bu_json_ku64(&c->rec, "index", n);
        bu_json_ku64(&c->rec, "size", size);
        bu_json_ku64(&c->rec, "src_offset", so);
        bu_json_ku64(&c->rec, "dst_offset", doff);
        bu_json_key(&c->rec, "unaligned");
        bu_json_bool(&c->rec, unaligned);
        bu_json_ku64(&c->rec, "time_ns", t1 - t0);
        bu_json_ku64(&c->rec, "bytes_differing", diff);
        bu_json_kstr(&c->rec, "result", diff ? "mismatch" : "ok");
        bu_json_obj_end(&c->rec);
    }
    if (rc)
        return rc;
    quiesce(c);
    nic_dma_free(b, dst, area);
    nic_dma_free(b, src, area);
    if ((rc = backend_check(c, "loopback")))
        return rc;
    if (bad_transfers) {
        printf("loopback: %" PRIu64 " transfers, %" PRIu64 " with mismatches\n", count,
               bad_transfers);
        return fail(c, "loopback: %" PRIu64 " of %" PRIu64 " transfers differ", bad_transfers,
                    count);
    }
    out(c, "loopback: %" PRIu64 " transfers, %" PRIu64 " bytes, 0 mismatches\n", count, bytes);
    return EXIT_OK;
}

/* --- tx: the NIC datapath (descriptor rings) through the MAC loopback ------------------------- */

#define TX_HDR 20u                       /* Ethernet header + queue, run, sequence number */
#define TX_RX_POLL 64u                   /* completion records taken per poll */
#define TX_MAX_ERR_PRINT 10              /* mismatches printed per run */
#define LINE_BPS 1e9                     /* the MAC's line rate (LiteEth 1 Gb/s) */
#define WIRE_PREAMBLE 8u                 /* preamble + SFD octets before every frame */
#define WIRE_OVERHEAD (WIRE_PREAMBLE + 12u) /* ... and the inter-frame gap (12) */
#define FCS_BYTES 4u

struct tx_params {
    uint64_t frames;
    uint32_t size_hi;                    /* --size-range LO-HI: sizes drawn in LO..HI; 0: fixed */
    unsigned queues, ring, rx_ring, batch;
    uint64_t poll_ns;
    const char *coalesce;
};

struct tx_result {
    uint64_t frames, bytes, wire_bytes, time_ns, received, rx_bytes;
    uint64_t bad_content, bad_len, bad_status, bad_header, out_of_order;
    uint64_t tx_doorbells, rx_doorbells, msis;
    uint64_t msi_vec[NIC_MSI_VECTORS];   /* MSIs received per vector (multi-vector MSI) */
    uint32_t irqs_tx_vec[NIC_Q_NTXIRQ];  /* interrupts per TX vector, device counters */
    bool have_model;
    uint64_t mmio_rd_tlps, mmio_reads, mmio_writes, model_msis;
    uint64_t drops_total;
    uint32_t q_frames[NIC_Q_MAX_TXQ], q_bytes[NIC_Q_MAX_TXQ];   /* per queue, device counters */
    uint64_t q_sent_bytes[NIC_Q_MAX_TXQ];                       /* per queue, host's count */
    uint64_t q_mismatch;                 /* queues whose device counters differ from the host's */
};

#if NIC_HAS_DATAPATH
/* Frame (run, q, seq) of `size` bytes: Ethernet header (locally administered addresses, the
 * source's last byte the queue; EtherType 0x88b5, local experimental), byte 14 the queue, 15 the
 * run, 16..19 the sequence number (LE), then bytes of a PRNG seeded by (run, q, seq). */
static void tx_frame_fill(uint8_t *p, uint32_t size, unsigned run, unsigned q, uint32_t seq)
{
    static const uint8_t hdr[14] = {0x02, 0x4e, 0x49, 0x43, 0x00, 0x01,
                                    0x02, 0x4e, 0x49, 0x43, 0x00, 0x00, 0x88, 0xb5};
    memcpy(p, hdr, sizeof hdr);
    p[11] = (uint8_t)q;
    p[14] = (uint8_t)q;
    p[15] = (uint8_t)run;
    for (int k = 0; k < 4; k++)
        p[16 + k] = (uint8_t)(seq >> (8 * k));
    uint64_t st = bu_rand_seed((uint64_t)run << 40 ^ (uint64_t)q << 32 ^ seq);
    for (uint32_t i = TX_HDR; i < size; i += 8) {
        const uint64_t x = bu_rand(&st);
        for (uint32_t k = 0; k < 8 && i + k < size; k++)
            p[i + k] = (uint8_t)(x >> (8 * k));
    }
}

/* The size of frame (run, q, seq): `lo`, or with --size-range a size drawn uniformly in
 * lo..p->size_hi by a PRNG seeded with (run, q, seq), so the receiver knows it too. */
static uint32_t tx_size(const struct tx_params *p, uint32_t lo, unsigned run, unsigned q,
                        uint32_t seq)
{
    if (!p->size_hi)
        return lo;
    uint64_t st = bu_rand_seed(0x517e000000000000ull ^ (uint64_t)run << 40 ^ (uint64_t)q << 32 ^ seq);
    return lo + (uint32_t)(bu_rand(&st) % (p->size_hi - lo + 1));
}

static uint32_t tx_wire_bytes(uint32_t size)
{
    return (size < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : size) + FCS_BYTES + WIRE_OVERHEAD;
}

static bool model_counter(struct ctx *c, const char *name, uint64_t *v)
{
    char full[64];
    snprintf(full, sizeof full, "model.%s", name);
    return counter(c, full, v);
}

/* One run: `frames` frames of `size` bytes over the queues, at most `inflight` descriptors
 * posted and not completed per queue, a doorbell per `batch` frames. */
static int tx_run(struct ctx *c, struct nic_queues *nq, const struct tx_params *p, unsigned run,
                  uint32_t size, unsigned inflight, struct tx_result *res, uint64_t *cnt_delta)
{
    struct nic_backend *b = c->b;
    char err[512];
    const unsigned Q = p->queues;
    memset(res, 0, sizeof *res);
    for (unsigned q = 0; q < Q; q++)
        if (nic_q_set_limit(nq, q, inflight, err, sizeof err) < 0)
            return fail(c, "tx: %s", err);

    size_t ncnt;
    const struct nic_q_counter_def *defs = nic_q_counter_defs(&ncnt);
    uint64_t *cnt0 = calloc(ncnt * 2 + 1, sizeof *cnt0), *cnt1 = cnt0 + ncnt;
    const uint32_t smax = p->size_hi ? p->size_hi : size;   /* largest frame of the run */
    uint8_t *stage = malloc((size_t)p->batch * smax);
    uint8_t *want = malloc(smax), *got = malloc(NIC_Q_FRAME_MAX);
    struct nic_q_frame *fr = calloc(p->batch, sizeof *fr);
    struct nic_q_rx_frame recs[TX_RX_POLL];
    uint64_t per_q[NIC_Q_MAX_TXQ], sent[NIC_Q_MAX_TXQ] = {0}, next_seq[NIC_Q_MAX_TXQ] = {0};
    uint64_t rx_q[NIC_Q_MAX_TXQ] = {0};
    int rc = EXIT_OK;
    if (!cnt0 || !stage || !want || !got || !fr) {
        rc = fail(c, "tx: out of memory");
        goto out;
    }
    for (unsigned q = 0; q < Q; q++)
        per_q[q] = p->frames / Q + (q < p->frames % Q);
    if (nic_q_counters_read(b, cnt0, ncnt, err, sizeof err) < 0) {
        rc = fail(c, "tx: %s", err);
        goto out;
    }
    uint32_t qf0[NIC_Q_MAX_TXQ], qb0[NIC_Q_MAX_TXQ];
    for (unsigned q = 0; q < Q; q++)
        if (nic_q_tx_queue_stats(b, q, &qf0[q], &qb0[q], err, sizeof err) < 0) {
            rc = fail(c, "tx: %s", err);
            goto out;
        }
    uint32_t vi0[NIC_Q_NTXIRQ];
    for (unsigned g = 0; g < NIC_Q_NTXIRQ; g++)
        if (nic_q_tx_vector_irqs(b, g, &vi0[g], err, sizeof err) < 0) {
            rc = fail(c, "tx: %s", err);
            goto out;
        }
    nic_irq_drain(b);
    const unsigned rx_batch = p->batch < nq->rx.size / 2 ? p->batch : nq->rx.size / 2;
    uint64_t txdb0 = 0, rxdb0 = nq->rx.doorbells;
    for (unsigned q = 0; q < Q; q++)
        txdb0 += nq->tx[q].doorbells;
    uint64_t m0[4] = {0}, m1[4] = {0};
    static const char *const mnames[4] = {"tlps_down_mrd", "mmio_reads", "mmio_writes", "msis"};
    res->have_model = true;
    for (int k = 0; k < 4; k++)
        res->have_model &= model_counter(c, mnames[k], &m0[k]);

    /* ---- hot path: no MMIO read from here to t1 ---- */
    const uint64_t t0 = nic_now_ns(b);
    uint64_t last_progress = t0;
    unsigned rr = 0;
    int printed = 0;
    while (res->received < p->frames) {
        bool progress = false;
        for (unsigned q = 0; q < Q; q++) {
            const int n = nic_q_tx_reclaim(nq, q, err, sizeof err);
            if (n < 0) {
                rc = fail(c, "tx: %s", err);
                goto out;
            }
            progress |= n > 0;
        }
        const int nrx = nic_q_rx_poll(nq, recs, TX_RX_POLL);
        for (int i = 0; i < nrx; i++) {
            const struct nic_q_rx_frame *f = &recs[i];
            res->received++;
            if (f->status != 0) {
                res->bad_status++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: RX completion with status %u (buffer "
                            "%u)\n", run, f->status, f->index);
                continue;
            }
            res->rx_bytes += f->len;
            for (uint32_t k = 0; k < f->len && k < NIC_Q_FRAME_MAX; k++)
                got[k] = f->data[k];
            if (f->len < TX_HDR) {
                res->bad_len++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: RX frame of %u bytes\n", run, f->len);
                continue;
            }
            const unsigned q = got[14];
            if (q < Q)
                tx_frame_fill(want, TX_HDR, run, q, 0);
            if (q >= Q || memcmp(want, got, 16) != 0) {       /* Ethernet header, queue, run */
                res->bad_header++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: RX frame with queue %u run %u\n", run,
                            q, got[15]);
                continue;
            }
            const uint32_t seq = (uint32_t)got[16] | (uint32_t)got[17] << 8 |
                                 (uint32_t)got[18] << 16 | (uint32_t)got[19] << 24;
            if (seq != next_seq[q]) {
                res->out_of_order++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: queue %u: frame %u received, expected "
                            "%" PRIu64 "\n", run, q, seq, next_seq[q]);
            }
            next_seq[q] = (uint64_t)seq + 1;
            rx_q[q]++;
            const uint32_t fsize = tx_size(p, size, run, q, seq);
            const uint32_t rx_len = fsize < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : fsize;
            if (f->len != rx_len) {
                res->bad_len++;
                if (printed++ < TX_MAX_ERR_PRINT)
                    fprintf(stderr, "nicbench: tx run %u: queue %u frame %u: %u bytes, expected "
                            "%u\n", run, q, seq, f->len, rx_len);
                continue;
            }
            tx_frame_fill(want, fsize, run, q, seq);
            if (memcmp(want, got, fsize) != 0) {
                res->bad_content++;
                if (printed++ < TX_MAX_ERR_PRINT) {
                    uint32_t k = 0;
                    while (want[k] == got[k])
                        k++;
                    fprintf(stderr, "nicbench: tx run %u: queue %u frame %u: byte %u is %#04x, "
                            "expected %#04x\n", run, q, seq, k, got[k], want[k]);
                }
            }
        }
        if (nrx > 0)
            progress = true;
        if (nq->rx.to_repost >= rx_batch)
            nic_q_rx_refill(nq);
        for (unsigned k = 0; k < Q; k++) {
            const unsigned q = (rr + k) % Q;
            const uint64_t left = per_q[q] - sent[q];
            if (!left)
                continue;
            const unsigned pend = nic_q_tx_pending(nq, q);
            uint64_t avail = inflight > pend ? inflight - pend : 0;
            if (avail > nic_q_tx_room(nq, q))
                avail = nic_q_tx_room(nq, q);
            if (avail > left)
                avail = left;
            uint64_t thresh = p->batch;
            if (thresh > left)
                thresh = left;
            if (thresh > inflight)
                thresh = inflight;
            if (!avail || avail < thresh)
                continue;
            const unsigned n = (unsigned)(avail < p->batch ? avail : p->batch);
            for (unsigned i = 0; i < n; i++) {
                const uint32_t seq = (uint32_t)(sent[q] + i);
                fr[i].data = stage + (size_t)i * smax;
                fr[i].len = tx_size(p, size, run, q, seq);
                tx_frame_fill(stage + (size_t)i * smax, fr[i].len, run, q, seq);
            }
            const int m = nic_q_tx_send(nq, q, fr, n, err, sizeof err);
            if (m < 0) {
                rc = fail(c, "tx: %s", err);
                goto out;
            }
            for (int i = 0; i < m; i++) {
                res->q_sent_bytes[q] += fr[i].len;
                res->bytes += fr[i].len;
                res->wire_bytes += tx_wire_bytes(fr[i].len);
            }
            sent[q] += (unsigned)m;
            progress |= m > 0;
        }
        rr = (rr + 1) % Q;
        const int irqs = nic_irq_drain_vectors(b, res->msi_vec);
        if (irqs > 0)
            res->msis += (unsigned)irqs;
        const uint64_t now = nic_now_ns(b);
        if (progress) {
            last_progress = now;
        } else if (now - last_progress > c->timeout_ns) {
            break;
        } else {
            nic_idle(b, p->poll_ns);
        }
    }
    const uint64_t t1 = nic_now_ns(b);
    /* ---- end of the hot path ---- */
    if (res->have_model)
        for (int k = 0; k < 4; k++)
            res->have_model &= model_counter(c, mnames[k], &m1[k]);

    const uint64_t rxdb1 = nq->rx.doorbells;
    /* Off the clock: repost what was polled, let the last writebacks land. */
    nic_q_rx_refill(nq);
    const uint64_t deadline = nic_now_ns(b) + c->timeout_ns;
    for (unsigned q = 0; q < Q; q++) {
        while (nic_q_tx_pending(nq, q) && nic_now_ns(b) < deadline) {
            if (nic_q_tx_reclaim(nq, q, err, sizeof err) < 0) {
                rc = fail(c, "tx: %s", err);
                goto out;
            }
            nic_idle(b, 200);
        }
    }
    if (nic_q_counters_read(b, cnt1, ncnt, err, sizeof err) < 0) {
        rc = fail(c, "tx: %s", err);
        goto out;
    }
    for (unsigned q = 0; q < Q; q++) {
        uint32_t f1, b1;
        if (nic_q_tx_queue_stats(b, q, &f1, &b1, err, sizeof err) < 0) {
            rc = fail(c, "tx: %s", err);
            goto out;
        }
        res->q_frames[q] = f1 - qf0[q];
        res->q_bytes[q] = b1 - qb0[q];
        if (res->q_frames[q] != (uint32_t)per_q[q] ||
            res->q_bytes[q] != (uint32_t)res->q_sent_bytes[q]) {
            res->q_mismatch++;
            fprintf(stderr, "nicbench: tx run %u: queue %u: device counted %u frames, %u bytes; "
                    "the host sent %" PRIu64 " frames, %" PRIu64 " bytes\n", run, q,
                    res->q_frames[q], res->q_bytes[q], per_q[q], res->q_sent_bytes[q]);
        }
    }
    for (unsigned g = 0; g < NIC_Q_NTXIRQ; g++) {
        uint32_t v1;
        if (nic_q_tx_vector_irqs(b, g, &v1, err, sizeof err) < 0) {
            rc = fail(c, "tx: %s", err);
            goto out;
        }
        res->irqs_tx_vec[g] = v1 - vi0[g];
    }
    /* The MSIs of interrupts the device counted by now reached the host before the counters'
     * read completions (both are posted upstream in order): take them. */
    const int late_irqs = nic_irq_drain_vectors(b, res->msi_vec);
    if (late_irqs > 0)
        res->msis += (unsigned)late_irqs;
    for (size_t i = 0; i < ncnt; i++) {
        cnt_delta[i] = nic_q_counter_delta(&defs[i], cnt0[i], cnt1[i]);
        if (defs[i].kind == NIC_QC_ERROR)
            res->drops_total += cnt_delta[i];
    }
    res->frames = p->frames;
    res->time_ns = t1 - t0;
    for (unsigned q = 0; q < Q; q++)
        res->tx_doorbells += nq->tx[q].doorbells;
    res->tx_doorbells -= txdb0;
    res->rx_doorbells = rxdb1 - rxdb0;
    if (res->have_model) {
        res->mmio_rd_tlps = m1[0] - m0[0];
        res->mmio_reads = m1[1] - m0[1];
        res->mmio_writes = m1[2] - m0[2];
        res->model_msis = m1[3] - m0[3];
    }
    if (res->received < p->frames) {
        char detail[512] = "";
        size_t len = 0;
        for (unsigned q = 0; q < Q; q++)
            len += (size_t)snprintf(detail + len, len < sizeof detail ? sizeof detail - len : 0,
                                    "%s q%u: %" PRIu64 " posted, %" PRIu64 " received, next "
                                    "expected %" PRIu64, q ? ";" : "", q, sent[q], rx_q[q],
                                    next_seq[q]);
        fprintf(stderr, "nicbench: tx run %u: counter deltas:", run);
        for (size_t i = 0; i < ncnt; i++)
            if (cnt_delta[i])
                fprintf(stderr, " %s=%" PRIu64, defs[i].name, cnt_delta[i]);
        fputc('\n', stderr);
        rc = fail(c, "tx run %u (size %u, inflight %u): %" PRIu64 " of %" PRIu64 " frames "
                  "received, no progress for %" PRIu64 " ns:%s", run, size, inflight,
                  res->received, p->frames, c->timeout_ns, detail);
    }
out:
    free(cnt0);
    free(stage);
    free(want);
    free(got);
    free(fr);
    return rc;
}

#endif /* NIC_HAS_DATAPATH */

/* Parse a --sizes list of Ethernet frame sizes (bytes without FCS) for tx and rr: each must be
 * TX_HDR..NIC_Q_FRAME_MAX. Sets *max_size to the largest. 0, or a usage error's exit code. */
static int frame_sizes(const char *sizes_s, uint64_t *sizes, size_t *nsizes, uint64_t *max_size)
{
    char err[512];
    if (bu_parse_list(sizes_s, sizes, MAX_SIZES, nsizes, err, sizeof err) < 0)
        return usage_error("--sizes: %s", err);
    *max_size = 0;
    for (size_t i = 0; i < *nsizes; i++) {
        if (sizes[i] < TX_HDR || sizes[i] > NIC_Q_FRAME_MAX)
            return usage_error("--sizes: frame of %" PRIu64 " bytes: must be %u..%u (without "
                               "FCS; the MAC pads to %u)", sizes[i], TX_HDR, NIC_Q_FRAME_MAX,
                               NIC_Q_FRAME_MIN);
        if (sizes[i] > *max_size)
            *max_size = sizes[i];
    }
    return 0;
}

static int cmd_tx(struct ctx *c, int argc, char **argv)
{
    struct tx_params p = {.frames = 10000, .queues = 1, .ring = 64, .rx_ring = 1024,
                          .batch = 32, .poll_ns = 64, .coalesce = NULL};
    const char *sizes_s = "60", *inflight_s = NULL, *range_s = NULL;
    bool batch_given = false, sizes_given = false;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m, rc;
        uint64_t x;
        if ((m = bu_opt_value(argc, argv, &i, "--frames", &v))) {
            if (m < 0)
                return missing("--frames");
            if ((rc = parse_num("--frames", v, &p.frames)))
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--size", &v)) ||
                   (m = bu_opt_value(argc, argv, &i, "--sizes", &v))) {
            if (m < 0)
                return missing("--sizes");
            sizes_s = v;
            sizes_given = true;
        } else if ((m = bu_opt_value(argc, argv, &i, "--size-range", &v))) {
            if (m < 0)
                return missing("--size-range");
            range_s = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--inflight", &v))) {
            if (m < 0)
                return missing("--inflight");
            inflight_s = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--coalesce", &v))) {
            if (m < 0)
                return missing("--coalesce");
            p.coalesce = v;
        } else {
            static const char *const names[] = {"--queues", "--ring", "--rx-ring", "--batch",
                                                "--poll-ns"};
            size_t k = 0;
            for (; k < sizeof names / sizeof names[0]; k++)
                if ((m = bu_opt_value(argc, argv, &i, names[k], &v)))
                    break;
            if (k == sizeof names / sizeof names[0])
                return usage_error("tx: unknown option '%s'", argv[i]);
            if (m < 0)
                return missing(names[k]);
            if ((rc = parse_num(names[k], v, &x)))
                return rc;
            if (x > 1000000)
                return usage_error("%s: %" PRIu64 " is too large", names[k], x);
            if (k == 0)
                p.queues = (unsigned)x;
            else if (k == 1)
                p.ring = (unsigned)x;
            else if (k == 2)
                p.rx_ring = (unsigned)x;
            else if (k == 3)
                p.batch = (unsigned)x, batch_given = true;
            else
                p.poll_ns = x;
        }
    }
    char err[512];
    uint64_t sizes[MAX_SIZES], infl[MAX_SIZES];
    size_t nsizes, ninfl = 1;
    uint64_t max_size = 0;
    const int size_rc = frame_sizes(sizes_s, sizes, &nsizes, &max_size);
    if (size_rc)
        return size_rc;
    if (range_s) {
        unsigned lo, hi;
        char end;
        if (sizes_given)
            return usage_error("--size-range and --sizes: give one of them");
        if (sscanf(range_s, "%u-%u%c", &lo, &hi, &end) != 2 || lo < TX_HDR || lo >= hi ||
            hi > NIC_Q_FRAME_MAX)
            return usage_error("--size-range: '%s' is not LO-HI with %u <= LO < HI <= %u",
                               range_s, TX_HDR, NIC_Q_FRAME_MAX);
        sizes[0] = lo;
        nsizes = 1;
        p.size_hi = hi;
        max_size = hi;
    }
    if (p.frames < 1 || p.frames > 100000000)
        return usage_error("--frames: %" PRIu64 " out of range 1..100000000", p.frames);
    if (p.queues < 1 || p.queues > NIC_Q_MAX_TXQ)
        return usage_error("--queues: %u out of range 1..%u (this SoC's NIC_NTXQ%s)", p.queues,
                           (unsigned)NIC_Q_MAX_TXQ, NIC_HAS_DATAPATH ? "" : "; no datapath");
    if (p.ring < 2 || p.ring > NIC_Q_RING_MAX || (p.ring & (p.ring - 1)))
        return usage_error("--ring: %u is not a power of two 2..%u", p.ring, NIC_Q_RING_MAX);
    if (p.rx_ring < 2 || p.rx_ring > NIC_Q_RING_MAX || (p.rx_ring & (p.rx_ring - 1)))
        return usage_error("--rx-ring: %u is not a power of two 2..%u", p.rx_ring,
                           NIC_Q_RING_MAX);
    if (!batch_given && p.batch > p.ring - 1)
        p.batch = p.ring - 1;           /* the default of 32 on a small ring */
    if (p.batch < 1 || p.batch > p.ring - 1)
        return usage_error("--batch: %u out of range 1..%u (ring size - 1)", p.batch,
                           p.ring - 1);
    if (p.poll_ns < 1)
        return usage_error("--poll-ns: must be at least 1");
    if (inflight_s) {
        if (bu_parse_list(inflight_s, infl, MAX_SIZES, &ninfl, err, sizeof err) < 0)
            return usage_error("--inflight: %s", err);
        for (size_t i = 0; i < ninfl; i++)
            if (infl[i] < 1 || infl[i] > p.ring - 1)
                return usage_error("--inflight: %" PRIu64 " out of range 1..%u (ring size - 1)",
                                   infl[i], p.ring - 1);
    } else {
        infl[0] = p.ring - 1;
    }
    struct nic_q_coalesce co;
    nic_q_coalesce_defaults(&co);
    if (p.coalesce && nic_q_coalesce_parse(p.coalesce, &co, err, sizeof err) < 0)
        return usage_error("--coalesce: %s", err);

    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
#if !NIC_HAS_DATAPATH
    (void)b;
    return fail(c, "tx: this build has no NIC datapath (build it with `make sim NIC=1`: "
                "build/sim_dw<W>_nic/nicbench)");
#else
    print_params(c, "params: ");
    struct nic_queues nq;
    const struct nic_q_config qc = {.ntxq = p.queues, .tx_ring = p.ring, .tx_limit = 0,
                                    .rx_ring = p.rx_ring,
                                    .buf_size = (unsigned)(max_size < NIC_Q_FRAME_MIN ?
                                                           NIC_Q_FRAME_MIN : max_size),
                                    .sched_mode = 0};
    if (nic_q_open(&nq, b, &qc, c->timeout_ns, err, sizeof err) < 0) {
        nic_q_close(&nq, c->timeout_ns, NULL, 0);
        return fail(c, "tx: %s", err);
    }
    if (nic_q_coalesce_set(&nq, &co, err, sizeof err) < 0 ||
        nic_q_coalesce_get(&nq, &co, err, sizeof err) < 0) {
        nic_q_close(&nq, c->timeout_ns, NULL, 0);
        return fail(c, "tx: %s", err);
    }
    uint32_t msi_mask = nic_msi_bit(NIC_RX_INTERRUPT);
    for (unsigned g = 0; g < NIC_Q_NTXIRQ; g++)
        msi_mask |= nic_msi_bit(nic_q_tx_vector_msi(g));
    nic_msi_enable(b, msi_mask);
    if ((rc = backend_check(c, "tx setup"))) {
        nic_q_close(&nq, c->timeout_ns, NULL, 0);
        return rc;
    }
    out(c, "tx: %" PRIu64 " frames per run over %u queue(s), ring %u, RX ring %u, a doorbell "
        "per %u frames, poll %" PRIu64 " ns; coalescing rx-usecs=%u rx-frames=%u tx-usecs=%u "
        "tx-frames=%u (each of %u TX vectors: queue q on vector q %% %u); frames through "
        "the MAC loopback, checked bit-exact and in order per queue\n", p.frames, p.queues,
        p.ring, p.rx_ring, p.batch, p.poll_ns, co.rx_usecs, co.rx_frames, co.tx_usecs,
        co.tx_frames, NIC_Q_NTXIRQ, NIC_Q_NTXIRQ);

    static const char *const hdr[] = {"size_B", "queues", "inflight", "frames", "bytes",
                                      "sim_us", "Gb/s", "wire_Gb/s", "Mpps", "line_%",
                                      "mmio_rd", "tx_db", "rx_db", "drops", "irq_tx",
                                      "irq_rx", "msi", "result"};
    struct bu_table t;
    bu_table_init(&t, (int)(sizeof hdr / sizeof hdr[0]), hdr);
    size_t ncnt;
    const struct nic_q_counter_def *defs = nic_q_counter_defs(&ncnt);
    uint64_t *delta = calloc(ncnt + 1, sizeof *delta);
    const int i_txirq = nic_q_counter_index("txirq_irqs");
    const int i_rxirq = nic_q_counter_index("rxirq_irqs");
    const int i_txdb = nic_q_counter_index("txq_doorbells");
    unsigned run = 0;
    bool any_bad = false;
    for (size_t si = 0; si < nsizes && !rc; si++) {
        for (size_t ii = 0; ii < ninfl && !rc; ii++, run++) {
            const uint32_t size = (uint32_t)sizes[si];
            const unsigned inflight = (unsigned)infl[ii];
            struct tx_result r;
            rc = tx_run(c, &nq, &p, run, size, inflight, &r, delta);
            if (!rc)
                rc = backend_check(c, "tx run");
            if (rc)
                break;
            /* Wire bytes per frame: the run's mean with --size-range. */
            const double wire = (double)r.wire_bytes / (double)r.frames;
            const double secs = (double)r.time_ns / 1e9;
            const double gbps = (double)r.bytes * 8 / (double)r.time_ns;
            const double wire_gbps = (double)r.wire_bytes * 8 / (double)r.time_ns;
            const double mpps = (double)r.frames / secs / 1e6;
            const double line_mpps = LINE_BPS / (8.0 * wire) / 1e6;
            const uint64_t irq_tx = i_txirq >= 0 ? delta[i_txirq] : 0;
            const uint64_t irq_rx = i_rxirq >= 0 ? delta[i_rxirq] : 0;
            const uint64_t bad = r.bad_content + r.bad_len + r.bad_status + r.bad_header +
                                 r.out_of_order + (r.frames - r.received) + r.q_mismatch;
            const bool mmio_ok = !r.have_model || r.mmio_rd_tlps == 0;
            /* Multi-vector MSI: every MSI must be on a TX vector or the RX vector. */
            uint64_t msi_tx = 0;
            for (unsigned g = 0; g < NIC_Q_NTXIRQ; g++)
                msi_tx += r.msi_vec[nic_q_tx_vector_msi(g)];
            const uint64_t msi_rx = r.msi_vec[NIC_RX_INTERRUPT];
            const uint64_t msi_other = NIC_MSI_MULTI_VECTOR ? r.msis - msi_tx - msi_rx : 0;
            if (msi_other)
                fprintf(stderr, "nicbench: tx run %u: %" PRIu64 " MSIs on vectors other than "
                        "the %u TX vectors (from %u) and NIC_RX (%u)\n", run, msi_other,
                        NIC_Q_NTXIRQ, nic_q_tx_vector_msi(0), NIC_RX_INTERRUPT);
            const bool ok = bad == 0 && r.drops_total == 0 && mmio_ok && msi_other == 0;
            any_bad |= !ok;
            char cells[18][32];
            if (p.size_hi)
                snprintf(cells[0], 32, "%u-%u", size, p.size_hi);
            else
                snprintf(cells[0], 32, "%u", size);
            snprintf(cells[1], 32, "%u", p.queues);
            snprintf(cells[2], 32, "%u", inflight);
            snprintf(cells[3], 32, "%" PRIu64, r.frames);
            snprintf(cells[4], 32, "%" PRIu64, r.bytes);
            snprintf(cells[5], 32, "%.3f", (double)r.time_ns / 1e3);
            snprintf(cells[6], 32, "%.4f", gbps);
            snprintf(cells[7], 32, "%.4f", wire_gbps);
            snprintf(cells[8], 32, "%.4f", mpps);
            snprintf(cells[9], 32, "%.1f", 100.0 * mpps / line_mpps);
            if (r.have_model)
                snprintf(cells[10], 32, "%" PRIu64, r.mmio_rd_tlps);
            else
                snprintf(cells[10], 32, "n/a");
            snprintf(cells[11], 32, "%" PRIu64, r.tx_doorbells);
            snprintf(cells[12], 32, "%" PRIu64, r.rx_doorbells);
            snprintf(cells[13], 32, "%" PRIu64, r.drops_total);
            snprintf(cells[14], 32, "%" PRIu64, irq_tx);
            snprintf(cells[15], 32, "%" PRIu64, irq_rx);
            snprintf(cells[16], 32, "%" PRIu64, r.msis);
            snprintf(cells[17], 32, "%s", ok ? "ok" : "FAIL");
            const char *row[18];
            for (int k = 0; k < 18; k++)
                row[k] = cells[k];
            bu_table_row(&t, row);
            if (!ok || r.drops_total) {
                fprintf(stderr, "nicbench: tx run %u (size %u, inflight %u): %" PRIu64 " of %"
                        PRIu64 " received; bad content %" PRIu64 ", bad length %" PRIu64 ", bad "
                        "status %" PRIu64 ", bad header %" PRIu64 ", out of order %" PRIu64
                        "; hot-path MMIO read TLPs %" PRIu64 "; drops/errors:", run, size,
                        inflight, r.received, r.frames, r.bad_content, r.bad_len, r.bad_status,
                        r.bad_header, r.out_of_order, r.mmio_rd_tlps);
                for (size_t k = 0; k < ncnt; k++)
                    if (defs[k].kind == NIC_QC_ERROR && delta[k])
                        fprintf(stderr, " %s=%" PRIu64, defs[k].name, delta[k]);
                fputc('\n', stderr);
            }

            struct bu_json *j = &c->rec;
            bu_json_obj_begin(j);
            bu_json_kstr(j, "experiment", "tx");
            bu_json_ku64(j, "run", run);
            bu_json_ku64(j, "size", size);
            bu_json_ku64(j, "size_max", p.size_hi ? p.size_hi : size);
            bu_json_ku64(j, "queues", p.queues);
            bu_json_ku64(j, "ring", p.ring);
            bu_json_ku64(j, "rx_ring", p.rx_ring);
            bu_json_ku64(j, "batch", p.batch);
            bu_json_ku64(j, "inflight", inflight);
            bu_json_ku64(j, "poll_ns", p.poll_ns);
            bu_json_ku64(j, "frames", r.frames);
            bu_json_ku64(j, "bytes", r.bytes);
            bu_json_ku64(j, "wire_bytes", r.wire_bytes);
            bu_json_ku64(j, "time_ns", r.time_ns);
            bu_json_kdouble(j, "gbps", gbps);
            bu_json_kdouble(j, "wire_gbps", wire_gbps);
            bu_json_kdouble(j, "mpps", mpps);
            bu_json_kdouble(j, "line_mpps", line_mpps);
            bu_json_kdouble(j, "line_ratio", mpps / line_mpps);
            json_opt_u64(j, "mmio_read_tlps_hot", r.have_model, r.mmio_rd_tlps);
            json_opt_u64(j, "mmio_reads_hot", r.have_model, r.mmio_reads);
            json_opt_u64(j, "mmio_writes_hot", r.have_model, r.mmio_writes);
            bu_json_ku64(j, "tx_doorbells", r.tx_doorbells);
            bu_json_ku64(j, "rx_doorbells", r.rx_doorbells);
            json_opt_u64(j, "device_tx_doorbells", i_txdb >= 0, i_txdb >= 0 ? delta[i_txdb] : 0);
            bu_json_ku64(j, "irqs_tx", irq_tx);
            bu_json_ku64(j, "irqs_rx", irq_rx);
            bu_json_ku64(j, "msis_received", r.msis);
            json_opt_u64(j, "msis_model", r.have_model, r.model_msis);
            /* Per vector (multi-vector MSI only; null with single-vector MSI). */
            bu_json_kstr(j, "msi_type", NIC_MSI_MULTI_VECTOR ? "msi-multi-vector" : "msi");
            json_opt_u64(j, "msis_tx", NIC_MSI_MULTI_VECTOR, msi_tx);
            json_opt_u64(j, "msis_rx", NIC_MSI_MULTI_VECTOR, msi_rx);
            json_opt_u64(j, "msis_other", NIC_MSI_MULTI_VECTOR, msi_other);
            /* TX queue groups: queue q on TX vector q % tx_vectors; per vector the device's
             * interrupt count and (multi-vector MSI) the MSIs received. */
            bu_json_ku64(j, "tx_vectors", NIC_Q_NTXIRQ);
            bu_json_key(j, "irqs_tx_vec");
            bu_json_arr_begin(j);
            for (unsigned g = 0; g < NIC_Q_NTXIRQ; g++)
                bu_json_u64(j, r.irqs_tx_vec[g]);
            bu_json_arr_end(j);
            bu_json_key(j, "msis_tx_vec");
            if (NIC_MSI_MULTI_VECTOR) {
                bu_json_arr_begin(j);
                for (unsigned g = 0; g < NIC_Q_NTXIRQ; g++)
                    bu_json_u64(j, r.msi_vec[nic_q_tx_vector_msi(g)]);
                bu_json_arr_end(j);
            } else {
                bu_json_null(j);
            }
            bu_json_ku64(j, "received", r.received);
            bu_json_ku64(j, "received_bytes", r.rx_bytes);
            bu_json_ku64(j, "bad_content", r.bad_content);
            bu_json_ku64(j, "bad_length", r.bad_len);
            bu_json_ku64(j, "bad_status", r.bad_status);
            bu_json_ku64(j, "bad_header", r.bad_header);
            bu_json_ku64(j, "out_of_order", r.out_of_order);
            bu_json_ku64(j, "lost", r.frames - r.received);
            bu_json_ku64(j, "drops_total", r.drops_total);
            bu_json_key(j, "per_queue");               /* the device's per-queue counters */
            bu_json_arr_begin(j);
            for (unsigned q = 0; q < p.queues; q++) {
                bu_json_obj_begin(j);
                bu_json_ku64(j, "queue", q);
                bu_json_ku64(j, "frames", r.q_frames[q]);
                bu_json_ku64(j, "bytes", r.q_bytes[q]);
                bu_json_obj_end(j);
            }
            bu_json_arr_end(j);
            bu_json_ku64(j, "per_queue_mismatch", r.q_mismatch);
            bu_json_key(j, "drops");
            bu_json_obj_begin(j);
            for (size_t k = 0; k < ncnt; k++)
                if (defs[k].kind == NIC_QC_ERROR)
                    bu_json_ku64(j, defs[k].name, delta[k]);
            bu_json_obj_end(j);
            bu_json_key(j, "coalesce");
            bu_json_obj_begin(j);
            bu_json_ku64(j, "rx-usecs", co.rx_usecs);
            bu_json_ku64(j, "rx-frames", co.rx_frames);
            bu_json_ku64(j, "rx-abs-usecs", co.rx_abs_usecs);
            bu_json_ku64(j, "rx-min-interval", co.rx_min_interval);
            bu_json_ku64(j, "tx-usecs", co.tx_usecs);
            bu_json_ku64(j, "tx-frames", co.tx_frames);
            bu_json_ku64(j, "tx-abs-usecs", co.tx_abs_usecs);
            bu_json_ku64(j, "tx-min-interval", co.tx_min_interval);
            bu_json_obj_end(j);
            bu_json_key(j, "counters");
            bu_json_obj_begin(j);
            for (size_t k = 0; k < ncnt; k++)
                bu_json_ku64(j, defs[k].name, delta[k]);
            bu_json_obj_end(j);
            bu_json_kstr(j, "result", ok ? "ok" : "fail");
            bu_json_obj_end(j);
        }
    }
    if (!c->quiet && t.nrows)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    free(delta);
    out(c, "  Gb/s: frame bytes (no FCS) per simulated second; wire_Gb/s: with FCS (4 B), "
        "preamble and gap (20 B), frames padded to 60 B; line_%%: Mpps / the 1 Gb/s line rate "
        "(1.488 Mpps at 60 B + FCS); mmio_rd: MMIO read TLPs (model.tlps_down_mrd) from the "
        "first doorbell to the last frame received\n");
    char cerr[512] = "";
    nic_msi_enable(b, 0);
    if (nic_q_close(&nq, c->timeout_ns, cerr, sizeof cerr) < 0 && !rc)
        rc = fail(c, "tx: closing the queues: %s", cerr);
    if (!rc)
        rc = backend_check(c, "tx");
    if (!rc && any_bad)
        rc = fail(c, "tx: frames lost, corrupted, reordered or dropped, or MMIO reads on the "
                  "hot path (see the table and the messages above)");
    return rc;
#endif
}

/* --- rr: request/response between two simulated hosts ----------------------------------------- */

#define RR_MAX_ERR_PRINT 10              /* mismatches printed per size */
#define RR_RING 64u                      /* TX and RX descriptors per ring, each host */

#if NIC_HAS_DATAPATH
struct rr_side {
    const char *name;                    /* "A" or "B" */
    struct nic_backend *b;
    struct nic_queues nq;
    bool open;
    uint64_t m0[3], m1[3];               /* model.tlps_down_mrd, mmio_reads, mmio_writes */
    bool have_model;
};

static const char *const rr_mnames[3] = {"tlps_down_mrd", "mmio_reads", "mmio_writes"};

/* Frame `seq` of `size` bytes: a request (A -> B) or a response (B -> A). Ethernet header
 * (locally administered addresses ending 0a for A, 0b for B; EtherType 0x88b5), byte 14 'Q' or
 * 'R', 15 0, 16..19 the sequence number (LE), then bytes of a PRNG seeded by (kind, size, seq). */
static void rr_frame_fill(uint8_t *p, uint32_t size, bool response, uint32_t seq)
{
    static const uint8_t mac_a[6] = {0x02, 0x4e, 0x49, 0x43, 0x00, 0x0a};
    static const uint8_t mac_b[6] = {0x02, 0x4e, 0x49, 0x43, 0x00, 0x0b};
    memcpy(p, response ? mac_a : mac_b, 6);
    memcpy(p + 6, response ? mac_b : mac_a, 6);
    p[12] = 0x88;
    p[13] = 0xb5;
    p[14] = response ? 'R' : 'Q';
    p[15] = 0;
    for (int k = 0; k < 4; k++)
        p[16 + k] = (uint8_t)(seq >> (8 * k));
    uint64_t st = bu_rand_seed((uint64_t)response << 63 ^ (uint64_t)size << 32 ^ seq);
    for (uint32_t i = TX_HDR; i < size; i += 8) {
        const uint64_t x = bu_rand(&st);
        for (uint32_t k = 0; k < 8 && i + k < size; k++)
            p[i + k] = (uint8_t)(x >> (8 * k));
    }
}

/* Post one frame on queue 0 (one doorbell), waiting for ring room if needed. */
static int rr_send(struct ctx *c, struct rr_side *s, const uint8_t *data, uint32_t size)
{
    char err[512];
    const struct nic_q_frame fr = {.data = data, .len = size};
    const uint64_t t0 = nic_now_ns(s->b);
    for (;;) {
        const int m = nic_q_tx_send(&s->nq, 0, &fr, 1, err, sizeof err);
        if (m < 0)
            return fail(c, "rr: host %s: %s", s->name, err);
        if (m == 1)
            return EXIT_OK;
        if (nic_q_tx_reclaim(&s->nq, 0, err, sizeof err) < 0)
            return fail(c, "rr: host %s: %s", s->name, err);
        if (nic_now_ns(s->b) - t0 > c->timeout_ns)
            return fail(c, "rr: host %s: TX ring full for %" PRIu64 " ns", s->name,
                        c->timeout_ns);
        nic_idle(s->b, 100);
    }
}

/* Poll s's RX ring for one frame (every poll_ns) until it comes or the timeout: 1 with *f and
 * *t_ns (backend time when the poll saw it), 0 on timeout. */
static int rr_wait(struct ctx *c, struct rr_side *s, struct nic_q_rx_frame *f, uint64_t poll_ns,
                   uint64_t *t_ns)
{
    const uint64_t t0 = nic_now_ns(s->b);
    for (;;) {
        if (nic_q_rx_poll(&s->nq, f, 1) == 1) {
            *t_ns = nic_now_ns(s->b);
            return 1;
        }
        if (nic_now_ns(s->b) - t0 > c->timeout_ns)
            return 0;
        nic_idle(s->b, poll_ns);
    }
}

/* A received frame against the frame expected (size bytes, then the MAC's zero padding to
 * 60): 0 when bit-exact, else 1 with a message (the first RR_MAX_ERR_PRINT). */
static int rr_check(const struct nic_q_rx_frame *f, const uint8_t *want, uint32_t size,
                    uint8_t *got, const char *what, uint32_t seq, int *printed)
{
    const uint32_t len = size < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : size;
    char msg[256] = "";
    if (f->status != 0) {
        snprintf(msg, sizeof msg, "completion status %u", f->status);
    } else if (f->len != len) {
        snprintf(msg, sizeof msg, "%u bytes, expected %u", f->len, len);
    } else {
        for (uint32_t k = 0; k < len; k++)
            got[k] = f->data[k];
        for (uint32_t k = 0; k < len && !msg[0]; k++) {
            const uint8_t w = k < size ? want[k] : 0;
            if (got[k] != w)
                snprintf(msg, sizeof msg, "byte %u is %#04x, expected %#04x", k, got[k], w);
        }
    }
    if (!msg[0])
        return 0;
    if ((*printed)++ < RR_MAX_ERR_PRINT)
        fprintf(stderr, "nicbench: rr: size %u: %s %u: %s\n", size, what, seq, msg);
    return 1;
}

static bool rr_model(struct rr_side *s, uint64_t *v)
{
    bool ok = true;
    for (int k = 0; k < 3; k++) {
        char full[64];
        snprintf(full, sizeof full, "model.%s", rr_mnames[k]);
        ok &= nic_counter(s->b, full, &v[k]) == 0;
    }
    return ok;
}

static int rr_backend_check(struct ctx *c, struct rr_side *s, const char *what)
{
    const char *e = nic_last_error(s->b);
    if (e)
        return fail(c, "%s: host %s: backend error: %s", what, s->name, e);
    return EXIT_OK;
}
#endif /* NIC_HAS_DATAPATH */

static int cmd_rr(struct ctx *c, int argc, char **argv)
{
    const char *sizes_s = "60,128,512,1514";
    uint64_t count = 200, poll_ns = 8;
    for (int i = 0; i < argc; i++) {
        const char *v;
        int m, rc;
        if ((m = bu_opt_value(argc, argv, &i, "--sizes", &v)) ||
            (m = bu_opt_value(argc, argv, &i, "--size", &v))) {
            if (m < 0)
                return missing("--sizes");
            sizes_s = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--count", &v))) {
            if (m < 0)
                return missing("--count");
            if ((rc = parse_num("--count", v, &count)))
                return rc;
        } else if ((m = bu_opt_value(argc, argv, &i, "--poll-ns", &v))) {
            if (m < 0)
                return missing("--poll-ns");
            if ((rc = parse_num("--poll-ns", v, &poll_ns)))
                return rc;
        } else {
            return usage_error("rr: unknown option '%s'", argv[i]);
        }
    }
    uint64_t sizes[MAX_SIZES];
    size_t nsizes;
    uint64_t max_size = 0;
    const int size_rc = frame_sizes(sizes_s, sizes, &nsizes, &max_size);
    if (size_rc)
        return size_rc;
    if (count < 1 || count > 1000000)
        return usage_error("--count: %" PRIu64 " out of range 1..1000000", count);
    if (poll_ns < 1 || poll_ns > 1000000)
        return usage_error("--poll-ns: %" PRIu64 " out of range 1..1000000", poll_ns);
#if !NIC_HAS_DATAPATH
    return fail(c, "rr: this build has no NIC datapath (build it with `make sim NIC=1`: "
                "build/sim_dw<W>_nic/nicbench, and open the sim backend with peer=1)");
#else
    char err[512];
    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    struct nic_backend *bb = nic_backend_sim_peer(c->b);
    if (!bb)
        return fail(c, "rr: needs two NICs back to back: the sim backend opened with peer=1 "
                    "(--backend sim --opts ...,peer=1); this %s backend has no peer",
                    c->b->kind);
    struct nic_dev_info info_b;
    if (nic_dev_check(bb, &info_b, err, sizeof err) < 0)
        return fail(c, "rr: host B: bring-up check failed: %s", err);
    print_params(c, "params: ");
    struct rr_side side[2] = {{.name = "A", .b = c->b}, {.name = "B", .b = bb}};
    struct rr_side *A = &side[0], *B = &side[1];
    const struct nic_q_config qc = {.ntxq = 1, .tx_ring = RR_RING, .tx_limit = 0,
                                    .rx_ring = RR_RING,
                                    .buf_size = (unsigned)(max_size < NIC_Q_FRAME_MIN ?
                                                           NIC_Q_FRAME_MIN : max_size),
                                    .sched_mode = 0};
    for (int k = 0; k < 2 && !rc; k++) {
        if (nic_q_open(&side[k].nq, side[k].b, &qc, c->timeout_ns, err, sizeof err) < 0)
            rc = fail(c, "rr: host %s: %s", side[k].name, err);
        else
            side[k].open = true;
        /* polling only: no MSIs */
        nic_msi_enable(side[k].b, 0);
        if (!rc)
            rc = rr_backend_check(c, &side[k], "rr setup");
    }
    uint8_t *want = malloc(NIC_Q_FRAME_MAX), *got = malloc(NIC_Q_FRAME_MAX);
    uint64_t *rtt = calloc(count, sizeof *rtt);
    if (!rc && (!want || !got || !rtt))
        rc = fail(c, "rr: out of memory");
    out(c, "rr: %" PRIu64 " round trips per size between host A and host B (two simulated "
        "NIC + host systems, GMII back to back): A sends a request on TX queue 0 (one "
        "doorbell), B polls its RX ring and sends a response of the same size, A polls and "
        "takes the round-trip time (simulated ns, from before A's send to A's poll seeing the "
        "response; polls every %" PRIu64 " ns); every frame checked bit-exact\n", count,
        poll_ns);

    static const char *const hdr[] = {"size_B", "count", "rtt_min_ns", "rtt_med_ns",
                                      "rtt_p99_ns", "rtt_max_ns", "rtt_mean_ns", "half_rtt_ns",
                                      "frame_wire_ns", "mmio_rd_A", "mmio_rd_B", "bad",
                                      "result"};
    struct bu_table t;
    bu_table_init(&t, (int)(sizeof hdr / sizeof hdr[0]), hdr);
    bool any_bad = false;
    for (size_t si = 0; si < nsizes && !rc; si++) {
        const uint32_t size = (uint32_t)sizes[si];
        uint64_t bad_req = 0, bad_resp = 0, done = 0;
        int printed = 0;
        for (int k = 0; k < 2; k++)
            side[k].have_model = rr_model(&side[k], side[k].m0);
        /* ---- hot path: no MMIO read on either host from here ---- */
        for (uint64_t i = 0; i < count && !rc; i++) {
            const uint32_t seq = (uint32_t)i;
            struct nic_q_rx_frame f;
            uint64_t t_b, t1;
            rr_frame_fill(want, size, false, seq);
            const uint64_t t0 = nic_now_ns(A->b);
            if ((rc = rr_send(c, A, want, size)))
                break;
            if (!rr_wait(c, B, &f, poll_ns, &t_b)) {
                rc = fail(c, "rr: size %u: request %u not received by host B within %" PRIu64
                          " ns", size, seq, c->timeout_ns);
                break;
            }
            bad_req += (uint64_t)rr_check(&f, want, size, got, "request", seq, &printed);
            rr_frame_fill(want, size, true, seq);
            if ((rc = rr_send(c, B, want, size)))
                break;
            if (!rr_wait(c, A, &f, poll_ns, &t1)) {
                rc = fail(c, "rr: size %u: response %u not received by host A within %" PRIu64
                          " ns", size, seq, c->timeout_ns);
                break;
            }
            bad_resp += (uint64_t)rr_check(&f, want, size, got, "response", seq, &printed);
            rtt[done++] = t1 - t0;
            /* Off the timed path (between round trips): repost the RX buffers, reclaim TX. */
            for (int k = 0; k < 2; k++) {
                nic_q_rx_refill(&side[k].nq);
                if (nic_q_tx_reclaim(&side[k].nq, 0, err, sizeof err) < 0) {
                    rc = fail(c, "rr: host %s: %s", side[k].name, err);
                    break;
                }
            }
        }
        /* ---- end of the hot path ---- */
        for (int k = 0; k < 2; k++)
            side[k].have_model &= rr_model(&side[k], side[k].m1);
        for (int k = 0; k < 2 && !rc; k++)
            rc = rr_backend_check(c, &side[k], "rr run");
        if (rc)
            break;
        uint64_t rd[2], rdm[2], wr[2];
        for (int k = 0; k < 2; k++) {
            rd[k] = side[k].m1[0] - side[k].m0[0];
            rdm[k] = side[k].m1[1] - side[k].m0[1];
            wr[k] = side[k].m1[2] - side[k].m0[2];
        }
        const bool have_model = A->have_model && B->have_model;
        const bool mmio_ok = !have_model || (rd[0] == 0 && rd[1] == 0);
        const bool ok = bad_req == 0 && bad_resp == 0 && mmio_ok;
        any_bad |= !ok;
        struct bu_dist d;
        bu_dist_compute(rtt, done, &d);
        const uint32_t padded = size < NIC_Q_FRAME_MIN ? NIC_Q_FRAME_MIN : size;
        const uint64_t frame_wire_ns = (uint64_t)(padded + FCS_BYTES + WIRE_PREAMBLE) * 8u;
        char cells[13][32];
        snprintf(cells[0], 32, "%u", size);
        snprintf(cells[1], 32, "%" PRIu64, done);
        snprintf(cells[2], 32, "%" PRIu64, d.min);
        snprintf(cells[3], 32, "%" PRIu64, d.median);
        snprintf(cells[4], 32, "%" PRIu64, d.p99);
        snprintf(cells[5], 32, "%" PRIu64, d.max);
        snprintf(cells[6], 32, "%.1f", d.mean);
        snprintf(cells[7], 32, "%.1f", (double)d.median / 2.0);
        snprintf(cells[8], 32, "%" PRIu64, frame_wire_ns);
        for (int k = 0; k < 2; k++) {
            if (have_model)
                snprintf(cells[9 + k], 32, "%" PRIu64, rd[k]);
            else
                snprintf(cells[9 + k], 32, "n/a");
        }
        snprintf(cells[11], 32, "%" PRIu64, bad_req + bad_resp);
        snprintf(cells[12], 32, "%s", ok ? "ok" : "FAIL");
        const char *row[13];
        for (int k = 0; k < 13; k++)
            row[k] = cells[k];
        bu_table_row(&t, row);

        struct bu_json *j = &c->rec;
        bu_json_obj_begin(j);
        bu_json_kstr(j, "experiment", "rr");
        bu_json_ku64(j, "size", size);
        bu_json_ku64(j, "wire_frame_bytes", padded + FCS_BYTES);
        bu_json_ku64(j, "count", done);
        bu_json_ku64(j, "poll_ns", poll_ns);
        bu_json_ku64(j, "rtt_min_ns", d.min);
        bu_json_ku64(j, "rtt_median_ns", d.median);
        bu_json_ku64(j, "rtt_p99_ns", d.p99);
        bu_json_ku64(j, "rtt_max_ns", d.max);
        bu_json_kdouble(j, "rtt_mean_ns", d.mean);
        bu_json_kdouble(j, "half_rtt_ns", (double)d.median / 2.0);
        bu_json_ku64(j, "frame_wire_ns", frame_wire_ns);
        for (int k = 0; k < 2; k++) {
            char key[48];
            snprintf(key, sizeof key, "mmio_read_tlps_hot_%c", k ? 'b' : 'a');
            json_opt_u64(j, key, have_model, rd[k]);
            snprintf(key, sizeof key, "mmio_reads_hot_%c", k ? 'b' : 'a');
            json_opt_u64(j, key, have_model, rdm[k]);
            snprintf(key, sizeof key, "mmio_writes_hot_%c", k ? 'b' : 'a');
            json_opt_u64(j, key, have_model, wr[k]);
        }
        bu_json_ku64(j, "bad_requests", bad_req);
        bu_json_ku64(j, "bad_responses", bad_resp);
        bu_json_kstr(j, "result", ok ? "ok" : "fail");
        bu_json_obj_end(j);
        if (!ok)
            fprintf(stderr, "nicbench: rr: size %u: %" PRIu64 " bad requests, %" PRIu64 " bad "
                    "responses, hot-path MMIO read TLPs A %" PRIu64 " B %" PRIu64 "\n", size,
                    bad_req, bad_resp, rd[0], rd[1]);
    }
    if (!c->quiet && t.nrows)
        bu_table_print(&t, stdout, "  ");
    bu_table_free(&t);
    out(c, "  rtt: simulated ns from A's send (descriptor + doorbell) to A's poll seeing the "
        "response; half_rtt_ns: rtt_med / 2 (one-way latency, host to host); frame_wire_ns: one "
        "frame's serialisation at 1 Gb/s (preamble, frame padded to 60 B, FCS); mmio_rd_A/B: "
        "MMIO read TLPs (model.tlps_down_mrd) of each host over the size's round trips\n");
    {
        uint64_t fa, fb, fp;
        if (nic_counter(A->b, "wire.tx_frames", &fa) == 0 &&
            nic_counter(B->b, "wire.tx_frames", &fb) == 0 &&
            nic_counter(A->b, "wire.pcap_frames", &fp) == 0)
            out(c, "  wire: %" PRIu64 " frames A->B, %" PRIu64 " frames B->A, %" PRIu64
                " written to the pcap\n", fa, fb, fp);
    }
    free(want);
    free(got);
    free(rtt);
    for (int k = 1; k >= 0; k--) {
        char cerr[512] = "";
        if (side[k].open && nic_q_close(&side[k].nq, c->timeout_ns, cerr, sizeof cerr) < 0 &&
            !rc)
            rc = fail(c, "rr: host %s: closing the queues: %s", side[k].name, cerr);
        if (!rc)
            rc = rr_backend_check(c, &side[k], "rr");
    }
    nic_close(bb);              /* lists B's model errors; B is freed with A */
    if (!rc && any_bad)
        rc = fail(c, "rr: requests or responses corrupted, or MMIO reads on the hot path (see "
                  "the table and the messages above)");
    return rc;
#endif
}

/* --- main -------------------------------------------------------------------------------------- */

static int write_json(struct ctx *c, int status)
{
    struct bu_json j;
    bu_json_init(&j);
    bu_json_obj_begin(&j);
    bu_json_kstr(&j, "tool", "nicbench");
    bu_json_kstr(&j, "command", c->command);
    bu_json_key(&j, "argv");
    bu_json_arr_begin(&j);
    for (int i = 0; i < c->argc; i++)
        bu_json_str(&j, c->argv[i]);
    bu_json_arr_end(&j);
    bu_json_kstr(&j, "backend", c->kind);
    bu_json_kstr(&j, "opts", c->opts);
    bu_json_key(&j, "params");
    bu_json_raw(&j, c->params);
    bu_json_kstr(&j, "status", status == EXIT_OK ? "ok" : "fail");
    bu_json_kstr(&j, "error", status == EXIT_OK ? NULL : c->failmsg);
    if (c->nconfigs) {
        bu_json_key(&j, "configs");
        bu_json_raw(&j, c->configs.buf);
    }
    bu_json_key(&j, "sim_speed");
    if (c->have_cycles) {
        bu_json_obj_begin(&j);
        bu_json_ku64(&j, "cycles", c->cycles);
        bu_json_ku64(&j, "sim_ns", c->sim_ns);
        bu_json_kdouble(&j, "wall_s", (double)c->wall_ns / 1e9);
        bu_json_kdouble(&j, "cycles_per_wall_s",
                        c->wall_ns ? (double)c->cycles * 1e9 / (double)c->wall_ns : NAN);
        bu_json_obj_end(&j);
    } else {
        bu_json_null(&j);
    }
    bu_json_key(&j, "records");
    bu_json_raw(&j, c->rec.buf ? c->rec.buf : "[]");
    bu_json_obj_end(&j);
    int rc = EXIT_OK;
    if (j.oom) {
        fprintf(stderr, "nicbench: error: out of memory writing JSON\n");
        rc = EXIT_FAIL;
    } else {
        FILE *f = fopen(c->json_path, "w");
        if (!f || fprintf(f, "%s\n", j.buf) < 0 || fclose(f) != 0) {
            fprintf(stderr, "nicbench: error: cannot write %s: %s\n", c->json_path,
                    strerror(errno));
            rc = EXIT_FAIL;
        }
    }
    bu_json_free(&j);
    return rc;
}

int main(int argc, char **argv)
{
    struct ctx ctx = {.kind = "sim", .opts = "", .timeout_ns = 100000000ull};
    struct ctx *c = &ctx;
    c->argc = argc;
    c->argv = argv;
    int i = 1;
    for (; i < argc; i++) {
        const char *v;
        int m;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        } else if ((m = bu_opt_value(argc, argv, &i, "--backend", &v))) {
            if (m < 0)
                return missing("--backend");
            if (strcmp(v, "sim") != 0 && strcmp(v, "vfio") != 0)
                return usage_error("--backend: '%s' is not sim or vfio", v);
            c->kind = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--opts", &v))) {
            if (m < 0)
                return missing("--opts");
            c->opts = v;
        } else if ((m = bu_opt_value(argc, argv, &i, "--json", &v))) {
            if (m < 0)
                return missing("--json");
            c->json_path = v;
        } else if (strcmp(argv[i], "--quiet") == 0) {
            c->quiet = true;
        } else if ((m = bu_opt_value(argc, argv, &i, "--timeout-ms", &v))) {
            if (m < 0)
                return missing("--timeout-ms");
            uint64_t ms;
            int rc = parse_num("--timeout-ms", v, &ms);
            if (rc)
                return rc;
            if (ms == 0 || ms > 3600000)
                return usage_error("--timeout-ms: %" PRIu64 " out of range 1..3600000", ms);
            c->timeout_ns = ms * 1000000ull;
        } else if (argv[i][0] == '-') {
            return usage_error("unknown option '%s'", argv[i]);
        } else {
            break;
        }
    }
    if (i >= argc)
        return usage_error("no command given (info, csr, dma, loopback, tx or rr)");
    c->command = argv[i];
    for (int k = i + 1; k < argc; k++)
        if (strcmp(argv[k], "-h") == 0 || strcmp(argv[k], "--help") == 0) {
            fputs(usage_text, stdout);
            return EXIT_OK;
        }
    int (*cmd)(struct ctx *, int, char **) = NULL;
    if (strcmp(c->command, "info") == 0)
        cmd = cmd_info;
    else if (strcmp(c->command, "csr") == 0)
        cmd = cmd_csr;
    else if (strcmp(c->command, "dma") == 0)
        cmd = cmd_dma;
    else if (strcmp(c->command, "loopback") == 0)
        cmd = cmd_loopback;
    else if (strcmp(c->command, "tx") == 0)
        cmd = cmd_tx;
    else if (strcmp(c->command, "rr") == 0)
        cmd = cmd_rr;
    else
        return usage_error("unknown command '%s' (info, csr, dma, loopback, tx or rr)",
                           c->command);

    bu_json_init(&c->rec);
    bu_json_init(&c->configs);
    bu_json_arr_begin(&c->rec);
    bu_json_arr_begin(&c->configs);
    const uint64_t w0 = wall_ns();
    int rc = cmd(c, argc - i - 1, argv + i + 1);
    bu_json_arr_end(&c->rec);
    bu_json_arr_end(&c->configs);
    if (rc == EXIT_USAGE) {
        close_backend(c);
        bu_json_free(&c->rec);
        bu_json_free(&c->configs);
        free(c->params);
        return rc;
    }
    if (c->b) {
        if (rc)
            quiesce(c);     /* leave no DMA running on a failure */
        close_backend(c);
    }
    if (c->have_cycles && c->wall_ns)
        out(c, "sim speed: %.0f simulated cycles per wall second (%" PRIu64 " cycles, %.3f "
            "simulated ms, %.2f wall s)\n", (double)c->cycles * 1e9 / (double)c->wall_ns,
            c->cycles, (double)c->sim_ns / 1e6, (double)c->wall_ns / 1e9);
    if (c->json_path) {
        const int jr = write_json(c, rc);
        if (!rc)
            rc = jr;
    }
    if (rc == EXIT_OK)
        printf("nicbench %s: ok (%.2f s)\n", c->command, (double)(wall_ns() - w0) / 1e9);
    else
        fprintf(stderr, "nicbench %s: FAILED: %s\n", c->command, c->failmsg);
    bu_json_free(&c->rec);
    bu_json_free(&c->configs);
    free(c->params);
    return rc;
}
