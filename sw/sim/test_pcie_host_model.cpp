/*
 * test_pcie_host_model.cpp: unit test of the PCIe host model (pcie_host_model.h and its parts)
 * with a fake device on its PHY streams (test_fake_device.h): a BAR0 register file that answers
 * MWr/MRd, and a TLP source that plays DMA (MWr, MRd), completions, MSIs and broken TLPs. This
 * file has main(), the shared helpers and the test of the top level (MSIs through the TX
 * buffer); test_<part>.cpp test the parts.
 *
 * Usage: test_pcie_host_model [64|128]   (the PHY data width; default 128)
 * Prints one line per check ("ok ..." or "FAIL ..."); exits 1 if any check failed.
 */
#include "test_pcie_host_model.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace model_test {

namespace {

int g_failed = 0, g_checks = 0;

} /* namespace */

bool check(bool ok, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", msg);
    g_checks++;
    g_failed += !ok;
    return ok;
}

/* ---- configurations ---- */

LinkParams base_params(int dw)
{
    LinkParams p;
    p.data_width = dw;
    p.gen = dw == 128 ? 2 : 1;        /* a 7-series part: Gen2 x4 at 128 bits, Gen1 x4 at 64 */
    p.lanes = 4;
    p.mps = 256;
    p.mrrs = 512;
    p.rcb = 64;
    return p;
}

uint64_t counter(PcieHostModel &m, const char *name)
{
    const auto c = m.counters();
    const auto it = c.find(name);
    if (it == c.end()) {
        check(false, "counter %s exists", name);
        return 0;
    }
    return it->second;
}

std::string last_error(PcieHostModel &m)
{
    return m.errors().empty() ? std::string() : m.errors().back();
}

/* ---- MSI ---- */

void test_msi(int dw)
{
    LinkParams p = base_params(dw);
    p.link_latency_ns = 150;
    PcieHostModel m(p);
    Dev d(m);
    const double bt = byte_ps(p);
    d.run(10);
    d.msi_q.push_back(5);
    d.run_until([&] { return m.irq_pending(); }, 10000);
    uint64_t t = 0;
    uint8_t vec = 0;
    const bool popped = m.irq_pop(&t, &vec);
    const double want = double(d.msi_t.at(0)) + 24 * bt + 150e3;
    check(popped && vec == 5 && std::fabs(double(t) - want) <= 1,
          "dw%d msi: vector %u arrives at %llu ps = taken + 24 B + 150 ns (%.0f)", dw, vec,
          static_cast<unsigned long long>(t), want);
    check(!m.irq_pending() && !m.irq_pop(&t, &vec), "dw%d msi: queue empty after pop", dw);

    /* Behind a MWr: the interrupt comes after the data. */
    uint8_t pl[256];
    for (int i = 0; i < 256; i++)
        pl[i] = static_cast<uint8_t>(i + 1);
    d.send(mem_req(true, p.host_mem_addr + 0x800, 64, p.device_id, 0, 0xf, 0xf, false, pl));
    const size_t ntx = d.tx_last_t.size();
    d.run_until([&] { return d.tx_last_t.size() > ntx; }, 1000);
    d.msi_q.push_back(9);
    const uint64_t t_mwr_taken = d.tx_last_t.back();
    bool data_first = true;
    d.run_until([&] {
        if (m.irq_pending())
            return true;
        return false;
    }, 10000);
    data_first = std::memcmp(m.host_mem() + 0x800, pl, 256) == 0;
    m.irq_pop(&t, &vec);
    const double mwr_end = double(t_mwr_taken) + 276 * bt;
    check(vec == 9 && data_first && double(t) >= mwr_end + 24 * bt + 150e3 - 1,
          "dw%d msi: after a MWr the interrupt (at %llu ps) finds the data in memory, MSI "
          "serialised after the MWr", dw, static_cast<unsigned long long>(t));
    check(counter(m, "msis") == 2 && counter(m, "tlps_up_msi") == 2 && m.errors().empty(),
          "dw%d msi: counted, no errors", dw);
}

} /* namespace model_test */

int main(int argc, char **argv)
{
    using namespace model_test;
    const int dw = argc > 1 ? std::atoi(argv[1]) : 128;
    if (dw != 64 && dw != 128) {
        std::fprintf(stderr, "usage: %s [64|128]\n", argv[0]);
        return 2;
    }
    test_params();
    test_mmio(dw);
    test_mwr(dw);
    test_mrd(dw);
    test_broken(dw);
    test_mmio_timeout(dw);
    test_msi(dw);
    test_throughput(dw);
    std::printf("%s: %d checks, %d failed (data_width %d)\n", g_failed ? "FAIL" : "PASS",
                g_checks, g_failed, dw);
    return g_failed ? 1 : 0;
}
