// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_pcie_link.cpp: link timing (Link, Credits): back-to-back MWr at the pcie-bench
 * rate with DLLPs, and the rate posted credits allow.
 */
#include <cmath>
#include <cstdint>
#include <vector>

#include "test_pcie_host_model.h"

namespace model_test {

/* ---- throughput ---- */

namespace {

/* Stream n MWr of MPS bytes (tx_valid always high); returns the payload rate from the landing
 * of the first to the landing of the last, in Gb/s. */
double stream_mwr(PcieHostModel &m, Dev &d, int n, uint64_t *cycles)
{
    const LinkParams &p = m.params();
    std::vector<uint8_t> pl(p.mps);
    for (int i = 0; i < n; i++) {
        for (int b = 0; b < p.mps; b++)
            pl[b] = static_cast<uint8_t>(1 + ((i * 31 + b) % 251));
        d.send(mem_req(true, p.host_mem_addr + uint64_t(i) * p.mps, p.mps / 4, p.device_id, 0,
                       0xf, 0xf, false, pl.data()));
    }
    const uint8_t *mem = m.host_mem();
    const uint64_t last = uint64_t(n - 1) * p.mps;
    uint64_t t_first = 0, t_last = 0;
    const uint64_t c0 = m.cycles();
    while (m.cycles() - c0 < 10000000) {
        d.step();
        if (!t_first && mem[0])
            t_first = m.now_ps();
        if (mem[last]) {
            t_last = m.now_ps();
            break;
        }
    }
    *cycles = m.cycles() - c0;
    return t_last > t_first ? double(last) * 8 / (double(t_last - t_first) / 1000) : 0;
}

} /* namespace */

void test_throughput(int dw)
{
    {
        LinkParams p = base_params(dw);
        PcieHostModel m(p);
        Dev d(m);
        const int n = (1 << 20) / p.mps;
        uint64_t cyc;
        const double got = stream_mwr(m, d, n, &cyc);
        const double want = p.model_write_gbps(1 << 20);
        check(std::fabs(got / want - 1) < 0.01,
              "dw%d throughput: 1 MiB of MPS-%d MWr, back to back: %.4f Gb/s, model %.4f Gb/s "
              "(%+.3f%%)", dw, p.mps, got, want, 100 * (got / want - 1));
        bool exact = true;
        for (int i = 0; i < n && exact; i++)
            for (int b = 0; b < p.mps; b++)
                exact = exact && m.host_mem()[uint64_t(i) * p.mps + b] ==
                                     static_cast<uint8_t>(1 + ((i * 31 + b) % 251));
        check(exact && m.errors().empty(), "dw%d throughput: 1 MiB landed exactly, no errors",
              dw);
        const auto c = m.counters();
        check(c.at("tx_stall_cycles") > 0 && c.at("dllp_bytes_up") > 0 &&
                  c.at("credit_wait_ps") == 0 &&
                  c.at("bytes_up_wire") == uint64_t(n) * (p.mps + 20),
              "dw%d throughput: link-bound (%llu tx stall cycles), DLLPs %llu B, no credit "
              "waits, wire bytes = n x (MPS + 20)", dw,
              static_cast<unsigned long long>(c.at("tx_stall_cycles")),
              static_cast<unsigned long long>(c.at("dllp_bytes_up")));
        const double busy = double(c.at("link_busy_ps_up")) / 1000;
        check(busy > 0 && busy <= double(cyc * period_ps(p)) / 1000,
              "dw%d throughput: link_busy_ps_up %.0f ns within the run", dw, busy);
    }
    {
        /* Posted credits: one PH, back 1000 ns after arrival: one TLP per
         * (serialisation + link latency + return) at most. */
        LinkParams p = base_params(dw);
        p.ph_credits = 1;
        p.credit_return_ns = 1000;
        p.link_latency_ns = 100;
        PcieHostModel m(p);
        Dev d(m);
        uint64_t cyc;
        const double got = stream_mwr(m, d, 64, &cyc);
        const double per_tlp_ns = (p.mps + 20) * byte_ps(p) / 1000 + 100 + 1000;
        const double want = p.mps * 8 / per_tlp_ns;
        check(std::fabs(got / want - 1) < 0.01,
              "dw%d credits: ph_credits=1, credit_return_ns=1000: %.4f Gb/s, expected %.4f "
              "(one MPS TLP per %.1f ns)", dw, got, want, per_tlp_ns);
        check(counter(m, "credit_wait_ps") > 0 && counter(m, "credit_waits") >= 62,
              "dw%d credits: credit waits counted (%llu ps)", dw,
              static_cast<unsigned long long>(counter(m, "credit_wait_ps")));
    }
}

} /* namespace model_test */
