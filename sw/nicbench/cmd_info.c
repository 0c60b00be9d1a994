/*
 * cmd_info.c: `nicbench info`, identification, version, build configuration, scratch test, backend
 * parameters. Options: the usage text in main.c.
 */
#define _GNU_SOURCE
#include "nicbench.h"

/* --- info -------------------------------------------------------------------------------------- */

int cmd_info(struct ctx *c, int argc, char **argv)
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
    return backend_check(c, "info");
}
