// SPDX-License-Identifier: BSD-2-Clause
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
    p.iommu = false;                  /* the tests send TLPs without a driver's mappings;
                                         test_iommu() turns it on */
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

/* ---- device reads timed at the PHY ---- */

void test_read_timing(int dw)
{
    LinkParams p = base_params(dw);
    p.link_latency_ns = 80;
    p.mem_read_latency_ns = 400;
    PcieHostModel m(p);
    Dev d(m);
    d.bar_mode = false;
    d.run(5);
    d.send(mem_req(false, p.host_mem_addr + 0x1000, 128, p.device_id, 7, 0xf, 0xf));
    d.run_until([&] { return m.reads_timed() == 1; }, 20000);
    ReadTiming r;
    const bool got = m.read_timing(0, &r);
    check(got && d.rx.size() == 2 && r.start_ps == d.tx_first_t.at(0) &&
              r.first_cpl_ps == d.rx.front().t_first && r.end_ps == d.rx.back().t_last &&
              r.bytes == 512 && r.tag == 7 && r.addr == p.host_mem_addr + 0x1000,
          "dw%d read timing: 512 B MRd from its first beat (%llu ps) to the last beat of its "
          "second CplD (%llu ps)", dw, static_cast<unsigned long long>(r.start_ps),
          static_cast<unsigned long long>(r.end_ps));

    /* Two reads in flight, the device holding rx_ready low at times: each ends at its own last
     * completion beat as the device took it. */
    d.rx.clear();
    d.rx_ready = [](uint64_t cyc) { return cyc % 3 != 0; };
    const size_t nf = d.tx_first_t.size();
    d.send(mem_req(false, p.host_mem_addr + 0x2000, 64, p.device_id, 1, 0xf, 0xf));
    d.send(mem_req(false, p.host_mem_addr + 0x3000, 16, p.device_id, 2, 0xf, 0xf));
    d.run_until([&] { return m.reads_timed() == 3; }, 20000);
    ReadTiming a, b;
    const bool both = m.read_timing(1, &a) && m.read_timing(2, &b);
    check(both && d.rx.size() == 2 && a.tag == 1 && b.tag == 2 &&
              a.start_ps == d.tx_first_t.at(nf) && b.start_ps == d.tx_first_t.at(nf + 1) &&
              a.first_cpl_ps == d.rx[0].t_first && b.first_cpl_ps == d.rx[1].t_first &&
              a.end_ps == d.rx[0].t_last && b.end_ps == d.rx[1].t_last && a.bytes == 256 &&
              b.bytes == 64 && a.addr == p.host_mem_addr + 0x2000 &&
              b.addr == p.host_mem_addr + 0x3000,
          "dw%d read timing: two reads in flight, rx_ready low at times, each timed to its "
          "own completion", dw);
    check(!m.read_timing(3, &r) && counter(m, "reads_timed") == 3,
          "dw%d read timing: 3 reads counted, none beyond", dw);
}

/* Device writes timed at the PHY: each MWr at its first beat, in TX order; an MRd between
 * them is not a write. */
void test_write_timing(int dw)
{
    LinkParams p = base_params(dw);
    PcieHostModel m(p);
    Dev d(m);
    d.bar_mode = false;
    d.run(5);
    uint8_t pl[256] = {};
    const size_t nf = d.tx_first_t.size();
    d.send(mem_req(true, p.host_mem_addr + 0x800, 64, p.device_id, 0, 0xf, 0xf, false, pl));
    d.send(mem_req(false, p.host_mem_addr + 0x1000, 16, p.device_id, 3, 0xf, 0xf));
    d.send(mem_req(true, p.host_mem_addr + 0x900, 4, p.device_id, 0, 0xf, 0xf, false, pl));
    d.run_until([&] { return d.tx_first_t.size() == nf + 3; }, 20000);
    WriteTiming a, b, x;
    const bool got = m.write_timing(0, &a) && m.write_timing(1, &b);
    check(got && m.writes_timed() == 2 && a.start_ps == d.tx_first_t.at(nf) &&
              b.start_ps == d.tx_first_t.at(nf + 2) && a.bytes == 256 && b.bytes == 16 &&
              !m.write_timing(2, &x) && counter(m, "writes_timed") == 2,
          "dw%d write timing: two MWrs timed at their first beat (%llu, %llu ps), the MRd "
          "between them not", dw, static_cast<unsigned long long>(a.start_ps),
          static_cast<unsigned long long>(b.start_ps));
}

/* Faults on demand: drop_writes loses the next n MWr into its range, no other; link_down_now
 * takes the link down at once. */
void test_on_demand_faults(int dw)
{
    LinkParams p = base_params(dw);
    PcieHostModel m(p);
    Dev d(m);
    d.bar_mode = false;
    d.run(5);
    const uint64_t base = p.host_mem_addr;
    uint8_t pl[64];
    std::memset(pl, 0xa5, sizeof(pl));
    m.drop_writes(base + 0x1000, 0x100, 1);
    d.send(mem_req(true, base + 0x0800, 4, p.device_id, 0, 0xf, 0xf, false, pl));
    d.send(mem_req(true, base + 0x10f0, 4, p.device_id, 0, 0xf, 0xf, false, pl));
    d.send(mem_req(true, base + 0x1040, 4, p.device_id, 0, 0xf, 0xf, false, pl));
    d.run(3000);
    const uint8_t *h = m.host_mem();
    check(h[0x800] == 0xa5 && h[0x10f0] == 0 && h[0x1040] == 0xa5 &&
              counter(m, "fault_dropped_writes") == 1 && m.errors().empty(),
          "dw%d drop_writes: the first MWr into the range lost, the next one and one outside "
          "land", dw);
    m.link_down_now();
    d.run(10);
    check(counter(m, "fault_link_downs") == 1, "dw%d link_down_now: one link-down", dw);
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
    test_faults(dw);
    test_broken(dw);
    test_iommu(dw);
    test_mmio_timeout(dw);
    test_mmio_lower_address(dw);
    test_mmio_link_down(dw);
    test_msi(dw);
    test_read_timing(dw);
    test_write_timing(dw);
    test_on_demand_faults(dw);
    test_throughput(dw);
    std::printf("%s: %d checks, %d failed (data_width %d)\n", g_failed ? "FAIL" : "PASS",
                g_checks, g_failed, dw);
    return g_failed ? 1 : 0;
}
