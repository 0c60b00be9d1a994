// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_csr.c: `csr [SAMPLES]`: what a CSR access costs the CPU, from the cycle counter. SAMPLES
 * (default 256, at most 1024) samples of BATCH back-to-back reads, then writes, of the SoC
 * controller's scratch register; the counter's own cost (the same timing around no access, its
 * minimum) is taken off, the rest divided by BATCH. In batches because the CPU does not wait
 * for a write's acknowledge until its next bus access: one write timed alone shows only its
 * issue. Prints nicbench csr's csr_latency records (experiment, access, condition, samples,
 * min/median/p99/max ns, mean_ns, per access) with the same in cycles (2 decimals).
 */
#include "fw.h"

#define MAX_SAMPLES 1024u
#define BATCH 16u
#define REP16(x) x; x; x; x; x; x; x; x; x; x; x; x; x; x; x; x

static uint32_t samples[MAX_SAMPLES];

static void sort(uint32_t *v, unsigned n)
{
    for (unsigned i = 1; i < n; i++) {
        const uint32_t x = v[i];
        unsigned j = i;
        for (; j > 0 && v[j - 1] > x; j--)
            v[j] = v[j - 1];
        v[j] = x;
    }
}

static void record(const char *access, unsigned n)
{
    sort(samples, n);
    uint64_t sum = 0;
    for (unsigned i = 0; i < n; i++)
        sum += samples[i];
    const uint32_t mn = samples[0], md = samples[n / 2], p99 = samples[(n * 99) / 100];
    const uint32_t mx = samples[n - 1];
    json_begin();
    json_str("experiment", "csr_latency");
    json_str("access", access);
    json_str("condition", "idle");
    json_str("backend", "soc-bus");
    json_u64("samples", n);
    json_u64("batch", BATCH);
    json_u64("min_ns", fw_cycles_to_ns(mn) / BATCH);
    json_u64("median_ns", fw_cycles_to_ns(md) / BATCH);
    json_u64("p99_ns", fw_cycles_to_ns(p99) / BATCH);
    json_u64("max_ns", fw_cycles_to_ns(mx) / BATCH);
    json_fix("mean_ns", sum * 1000000000ull, (uint64_t)n * BATCH * fw_clk_hz(), 1);
    json_fix("min_cycles", mn, BATCH, 2);
    json_fix("median_cycles", md, BATCH, 2);
    json_fix("max_cycles", mx, BATCH, 2);
    json_end();
}

int cmd_csr(int argc, char **argv)
{
    uint32_t n = 256;
    if ((argc > 1 && !fw_parse_u32(argv[1], &n)) || n < 2 || n > MAX_SAMPLES) {
        con_printf("error: usage: csr [SAMPLES 2..%u]\n", MAX_SAMPLES);
        return -1;
    }
    struct fw_nic *n_ = &fw_nic;
    if (!n_->ctrl_base && fw_nic_discover(n_) < 0)
        return -1;
    volatile uint32_t *scratch = (volatile uint32_t *)(n_->hw.base + n_->ctrl_base +
                                                       NIC_CSR_CTRL_SCRATCH_ADDR);
    uint64_t overhead = ~0ull;
    for (unsigned i = 0; i < 64; i++) {
        const uint64_t t0 = fw_cycles();
        const uint64_t t1 = fw_cycles();
        if (t1 - t0 < overhead)
            overhead = t1 - t0;
    }
    uint32_t last = 0;
    for (unsigned i = 0; i < n; i++) {
        uint32_t v = 0;
        const uint64_t t0 = fw_cycles();
        REP16(v ^= *scratch);
        const uint64_t t1 = fw_cycles();
        samples[i] = (uint32_t)(t1 - t0 - overhead);
        last ^= v;
    }
    record("read", n);
    for (unsigned i = 0; i < n; i++) {
        const uint32_t x = i ^ last;
        const uint64_t t0 = fw_cycles();
        REP16(*scratch = x);
        const uint64_t t1 = fw_cycles();
        samples[i] = (uint32_t)(t1 - t0 - overhead);
    }
    if (*scratch != ((n - 1) ^ last)) {
        con_puts("error: csr: the scratch register does not hold the last value written\n");
        return -1;
    }
    record("write", n);
    con_printf("csr: cycle counter overhead %llu cycles (taken off every sample)\n",
               (unsigned long long)overhead);
    return 0;
}
