// SPDX-License-Identifier: BSD-2-Clause
/*
 * cmd_info.c: `nicbench info`, identification, version, build configuration, scratch test, backend
 * parameters and the register blocks. Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

/* --- info -------------------------------------------------------------------------------------- */

/* The identification block's register-block table, one line and one JSON record each. */
static void print_blocks(struct ctx *c)
{
    struct nic_backend *b = c->b;
    out(c, "register blocks (%u):\n", b->nrb);
    out(c, "  %-15s %6s %10s %6s %8s %5s  %s\n", "block", "type", "version", "base", "MSIs",
        "param", "layout");
    bu_json_obj_begin(&c->rec);
    bu_json_kstr(&c->rec, "experiment", "register_blocks");
    bu_json_key(&c->rec, "blocks");
    bu_json_arr_begin(&c->rec);
    for (unsigned i = 0; i < b->nrb; i++) {
        const struct nic_rb_entry *e = &b->rb[i];
        const bool known = nic_rb_find(b, (enum nic_rb_type)e->type) == e;
        const unsigned first = e->info & 0xff, n = (e->info >> 8) & 0xff;
        char msis[24] = "-";
        if (first != NIC_RB_NO_IRQ && n)
            snprintf(msis, sizeof msis, n > 1 ? "%u..%u" : "%u", first, first + n - 1);
        out(c, "  %-15s %#6x %#010x %#6x %8s %5u  %s\n", nic_rb_name((enum nic_rb_type)e->type),
            e->type, e->version, e->base, msis, e->info >> 16,
            known ? "known" : "not this binary's: unusable");
        bu_json_obj_begin(&c->rec);
        bu_json_kstr(&c->rec, "name", nic_rb_name((enum nic_rb_type)e->type));
        bu_json_ku64(&c->rec, "type", e->type);
        bu_json_ku64(&c->rec, "version", e->version);
        bu_json_ku64(&c->rec, "base", e->base);
        bu_json_ku64(&c->rec, "info", e->info);
        bu_json_key(&c->rec, "known");
        bu_json_bool(&c->rec, known);
        bu_json_obj_end(&c->rec);
    }
    bu_json_arr_end(&c->rec);
    bu_json_obj_end(&c->rec);
}

int cmd_info(struct ctx *c, int argc, char **argv)
{
    static const struct option opts[] = {{NULL, 0, NULL, 0}};
    if (next_option("info", argc, argv, opts) != -1)
        return EXIT_USAGE;
    int rc = open_backend(c, c->opts);
    if (rc)
        return rc;
    const struct nic_dev_info *in = &c->info;
    const int mps = dev_mps(c->b), mrrs = dev_mrrs(c->b);
    if ((rc = backend_check(c, "info")))
        return rc;

    char magic[16], ver[32], cfg[96], scratch[96], dmps[16], dmrrs[16];
    snprintf(magic, sizeof magic, "%#010x", in->magic);
    if (in->magic == NIC_ID_MAGIC)
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
    bu_json_bool(&c->rec, in->magic == NIC_ID_MAGIC);
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
    print_blocks(c);
    return backend_check(c, "info");
}
