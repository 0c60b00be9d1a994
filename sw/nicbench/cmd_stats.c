// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_stats.c: `nicbench stats`, the NIC's counters by their ethtool -S names (the contract's,
 * sw/include/nic_contract.h), with per TX queue and per TX vector counts. Options: the usage
 * text in main.c.
 */
#include "nicbench.h"

#define QUEUE_REG(name, NAME, KIND, ethtool, desc) \
    {ethtool, desc, NIC_CSR_NIC_##NAME##_ADDR, NIC_CSR_NIC_##NAME##_SIZE, false},
#define VECTOR_REG(name, NAME, KIND, ethtool, desc) \
    {ethtool, desc, NIC_CSR_NIC_##NAME##_ADDR, NIC_CSR_NIC_##NAME##_SIZE, true},
static const struct {
    const char *ethtool, *desc;
    uint32_t addr;
    unsigned words;
    bool per_vector;                /* element i is TX vector i, else TX queue i */
} arrays[] = {NIC_CONTRACT_QUEUE_REGS(QUEUE_REG) NIC_CONTRACT_VECTOR_REGS(VECTOR_REG)};
#undef QUEUE_REG
#undef VECTOR_REG

static void stat_row(struct ctx *c, const char *name, uint64_t v, const char *desc)
{
    out(c, "  %-28s %12" PRIu64 "  %s\n", name, v, desc);
    bu_json_ku64(&c->rec, name, v);
}

int cmd_stats(struct ctx *c, int argc, char **argv)
{
    static const struct option opts[] = {{"all", no_argument, NULL, 'a'}, {NULL, 0, NULL, 0}};
    bool all = false;
    int o;
    while ((o = next_option("stats", argc, argv, opts)) != -1) {
        if (o != 'a')
            return EXIT_USAGE;
        all = true;
    }
    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    struct nic_backend *b = c->b;
    char err[256];
    if (nic_rb_require(b, NIC_RB_NIC, err, sizeof err) < 0)
        return fail(c, "stats: %s", err);
    size_t n;
    const struct nic_q_counter_def *d = nic_q_counter_defs(&n);
    uint64_t *v = calloc(n, sizeof *v);
    if (!v)
        return fail(c, "stats: out of memory");
    if (nic_q_counters_read(b, v, n, err, sizeof err) < 0) {
        free(v);
        return fail(c, "stats: %s", err);
    }
    out(c, "NIC statistics:\n");
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "stats");
    bu_json_key(&c->rec, "stats");
    bu_json_obj_begin(&c->rec);
    for (size_t i = 0; i < n; i++)
        if (all || (v[i] && d[i].kind != NIC_QC_STATE))
            stat_row(c, d[i].ethtool, v[i], d[i].desc);
    free(v);
    /* The per-queue and per-vector registers. */
    const uint64_t base = nic_rb_base(b, NIC_RB_NIC);
    for (size_t r = 0; r < sizeof arrays / sizeof arrays[0]; r++) {
        const unsigned count = arrays[r].per_vector ? nic_q_hw_txirq(b) : nic_q_hw_txq(b);
        for (unsigned i = 0; i < count && i < arrays[r].words; i++) {
            const uint32_t x = nic_csr_read_elem(b, base + arrays[r].addr, arrays[r].words, i);
            if (!all && !x)
                continue;
            char name[64];
            snprintf(name, sizeof name, arrays[r].ethtool, i);
            stat_row(c, name, x, arrays[r].desc);
        }
    }
    /* BAR0 accesses the SoC refused (the pcie_bar block, when the build has it). */
    if (nic_rb_find(b, NIC_RB_PCIE_BAR)) {
        const uint32_t partial = nic_read32(b, NIC_CSR(b, PCIE_BAR, PARTIAL_WRITES));
        const uint32_t longer = nic_read32(b, NIC_CSR(b, PCIE_BAR, UNSUPPORTED));
        if (all || partial)
            stat_row(c, "bar_partial_writes", partial, "BAR0 partial writes dropped");
        if (all || longer)
            stat_row(c, "bar_unsupported", longer, "BAR0 requests longer than 1 DW refused");
    }
    /* DMA descriptors the raw DMA engine refused (the pcie_dma0_guard block). */
    if (nic_rb_find(b, NIC_RB_PCIE_DMA0_GUARD)) {
        const uint32_t rd = nic_dma_refused(b, NIC_DMA_READER);
        const uint32_t wr = nic_dma_refused(b, NIC_DMA_WRITER);
        if (all || rd)
            stat_row(c, "dma_reader_refused", rd, "DMA reader descriptors refused (misaligned, "
                     "odd length or 0)");
        if (all || wr)
            stat_row(c, "dma_writer_refused", wr, "DMA writer descriptors refused (misaligned, "
                     "odd length or 0)");
    }
    bu_json_obj_end(&c->rec);
    bu_json_obj_end(&c->rec);
    return backend_check(c, "stats");
}
