// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_link_params.cpp: LinkParams: parse(), validate(), the pcie-bench rates, to_json(),
 * and a model that refuses invalid parameters.
 */
#include <cmath>
#include <exception>
#include <string>

#include "test_pcie_host_model.h"

namespace model_test {

/* ---- LinkParams ---- */

void test_params()
{
    LinkParams p;
    std::string err;
    check(p.validate(&err), "params: defaults are valid (%s)", err.c_str());
    check(p.parse("gen=3,lanes=8,mps=0x200,mrrs=1024,rcb=128,strict=1,link_latency_ns=12.5,"
                  "device_id=0x0200,host_mem_size=0x100000,,", &err) &&
              p.gen == 3 && p.lanes == 8 && p.mps == 512 && p.mrrs == 1024 && p.rcb == 128 &&
              p.strict && p.link_latency_ns == 12.5 && p.device_id == 0x200 &&
              p.host_mem_size == 0x100000 && p.validate(&err),
          "params: parse decimal, 0x-hex, bool, double, empty items");
    const LinkParams before = p;
    const struct {
        const char *kv, *word;
    } bad[] = {
        {"foo=1", "foo"},
        {"mps=abc", "mps"},
        {"mps=", "mps"},
        {"strict=2", "strict"},
        {"gen", "gen"},
        {"device_id=0x10000", "device_id"},
        {"lanes=4x", "lanes"},
        {"link_latency_ns=fast", "link_latency_ns"},
        {"bar0_addr=-1", "bar0_addr"},
        {"mps=010x", "mps"},
        {"gen=2,tx_buf_tlps=1.5", "tx_buf_tlps"},
    };
    for (const auto &b : bad) {
        err.clear();
        const bool ok = p.parse(b.kv, &err);
        check(!ok && contains(err, b.word), "params: parse(\"%s\") fails: %s", b.kv, err.c_str());
    }
    check(p.gen == before.gen && p.mps == before.mps && p.tx_buf_tlps == before.tx_buf_tlps,
          "params: a failed parse changes nothing");

    const struct {
        const char *kv, *word;
    } invalid[] = {
        {"mps=300", "mps"},       {"mps=8192", "mps"},        {"mrrs=64", "mrrs"},
        {"gen=4", "gen"},         {"lanes=3", "lanes"},       {"rcb=256", "rcb"},
        {"data_width=32", "data_width"}, {"tx_buf_tlps=0", "tx_buf_tlps"},
        {"ph_credits=0", "ph_credits"},  {"nph_credits=0", "nph_credits"},
        {"pd_credits=4", "pd_credits"},  {"pd_credits=4096", "pd_credits"},
        {"nph_credits=4096", "nph_credits"}, {"dev_mps=100", "dev_mps"},
        {"dev_mrrs=5000", "dev_mrrs"},   {"mem_read_latency_ns=-1", "mem_read_latency_ns"},
        {"link_latency_ns=-5", "link_latency_ns"}, {"credit_return_ns=-1", "credit_return_ns"},
        {"ack_limit=4", "ack_limit"},    {"fc_limit=-1", "fc_limit"},
        {"clk_mhz=0", "clk_mhz"},        {"bar0_size=0x1001", "bar0"},
        {"host_mem_size=0", "host_mem"},
    };
    for (const auto &v : invalid) {
        LinkParams q;
        err.clear();
        const bool parsed = q.parse(v.kv, &err);
        const bool valid = parsed && q.validate(&err);
        check(parsed && !valid && contains(err, v.word), "params: %s is invalid: %s", v.kv,
              err.c_str());
    }

    /* Rates: pcie-bench's numbers. */
    LinkParams g;
    auto near = [](double a, double b) { return std::fabs(a - b) < 1e-6 * std::fabs(b) + 1e-9; };
    g.gen = 2;
    g.lanes = 4;
    g.mps = 256;
    g.mrrs = 512;
    check(near(g.raw_gbps(), 16.0) && g.ack_limit_bytes() == 169 && g.fc_limit_bytes() == 169,
          "params: Gen2 x4: raw 16 Gb/s, Ack/FC limit 169 byte times");
    const double tlp = 16.0 * (1 - 8.0 / 169 - 8.0 / 169 - 4.0 / 1538);
    check(near(g.tlp_gbps(), tlp), "params: Gen2 x4 MPS 256: TLP_bw %.6f (pcie-bench %.6f)",
          g.tlp_gbps(), tlp);
    check(near(g.model_write_gbps(4096), tlp * 4096 / (4096 + 16 * 20)),
          "params: model_write_gbps(4096) = %.6f", g.model_write_gbps(4096));
    check(near(g.model_write_gbps(100), tlp * 100 / 120), "params: model_write_gbps(100)");
    check(near(g.model_read_gbps(4096), tlp * 4096 / (4096 + 16 * 20)),
          "params: model_read_gbps(4096) = %.6f (downstream-bound)", g.model_read_gbps(4096));
    g.gen = 1;
    g.lanes = 1;
    g.mps = 128;
    check(near(g.raw_gbps(), 2.0) && g.ack_limit_bytes() == 237, "params: Gen1 x1: 2 Gb/s, 237");
    g.gen = 3;
    g.lanes = 8;
    g.mps = 512;
    g.ack_limit = 300;
    check(near(g.raw_gbps(), 64.0 * 128 / 130) && g.ack_limit_bytes() == 300 &&
              g.fc_limit_bytes() == 182,
          "params: Gen3 x8: 128b/130b, ack_limit override, FC table 182");
    check(near(g.model_write_gbps(512), g.tlp_gbps() * 512 / (512 + 22)),
          "params: Gen3 TLP overhead 4 + 6 + 12 = 22 B");

    const std::string j = LinkParams().to_json();
    bool keys = j.front() == '{' && j.back() == '}';
    for (const char *k : {"\"gen\":2", "\"lanes\":4", "\"mps\":256", "\"mrrs\":512", "\"rcb\":64",
                          "\"dev_mps\":0", "\"mem_read_latency_ns\":500", "\"credit_return_ns\"",
                          "\"ack_limit\":0", "\"ph_credits\":64", "\"tx_buf_tlps\":8",
                          "\"data_width\":128", "\"clk_mhz\":125", "\"device_id\":256",
                          "\"bar0_addr\":3758096384", "\"host_mem_size\":67108864",
                          "\"strict\":false", "\"raw_gbps\":16", "\"tlp_gbps\":14.44",
                          "\"ack_limit_bytes\":169", "\"fc_limit_bytes\":169"})
        keys = keys && contains(j, k);
    check(keys, "params: to_json has every field and the derived rates: %s", j.c_str());

    bool threw = false;
    try {
        LinkParams q;
        q.mps = 100;
        PcieHostModel m(q);
    } catch (const std::exception &e) {
        threw = contains(e.what(), "mps");
    }
    check(threw, "params: the model refuses invalid parameters");
}

} /* namespace model_test */
