/*
 * test_pcie_host_model.cpp: unit tests of the PCIe host model with a fake device written here
 * (no RTL): link throughput against the pcie-bench limit, MMIO latency after a long idle
 * stretch, completion splitting at RCB/MPS, rejection of broken TLPs, option parsing.
 * Prints one line per check; exits 1 on the first failure. Usage: test_pcie_host_model [64|128]
 */
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "pcie_host_model.h"

using namespace nicsim;

static int g_width = 128;

#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                  \
            std::printf(__VA_ARGS__);                                                         \
            std::printf("\n");                                                                \
            std::exit(1);                                                                     \
        }                                                                                     \
    } while (0)

/* A fake device: sends queued TLPs on tx as fast as tx_ready allows, takes every rx beat,
 * answers 1-DW MRds to BAR0 with a CplD carrying `reg`, and records completions it gets. */
struct FakeDevice {
    int lanes = g_width / 32;
    std::deque<std::vector<uint32_t>> txq;
    size_t tx_pos = 0;
    std::vector<uint32_t> rx_cur;
    std::vector<std::vector<uint32_t>> rx_tlps;
    uint32_t reg = 0x11223344;
    PhyOut out;

    explicit FakeDevice(PcieHostModel &m) { m.cycle(PhyIn(), &out); } /* pins for cycle 0 */

    void fill(PhyIn *in)
    {
        *in = PhyIn();
        in->rx_ready = true;
        if (txq.empty())
            return;
        const std::vector<uint32_t> &t = txq.front();
        in->tx_valid = true;
        in->tx_first = tx_pos == 0;
        in->tx_last = tx_pos + lanes >= t.size();
        for (int l = 0; l < lanes; l++)
            if (tx_pos + l < t.size()) {
                in->tx_dat[l] = t[tx_pos + l];
                in->tx_be |= uint16_t(0xf << (4 * l));
            }
    }

    void edge(const PhyIn &in)
    {
        if (in.tx_valid && out.tx_ready) {
            tx_pos += lanes;
            if (tx_pos >= txq.front().size()) {
                txq.pop_front();
                tx_pos = 0;
            }
        }
        if (out.rx_valid) {
            for (int l = 0; l < lanes; l++)
                if ((out.rx_be >> (4 * l)) & 0xf)
                    rx_cur.push_back(out.rx_dat[l]);
            if (out.rx_last) {
                rx_tlps.push_back(rx_cur);
                if ((rx_cur[0] >> 24) == 0x00) { /* MRd to BAR0: answer it */
                    const uint32_t d = reg;
                    txq.push_back({0x4a000001u, (uint32_t(out.id) << 16) | 4u,
                                   (rx_cur[1] & 0xffff0000u) | (rx_cur[1] & 0xff00u) |
                                       (rx_cur[2] & 0x7fu),
                                   ((d & 0xff) << 24) | ((d & 0xff00) << 8) |
                                       ((d >> 8) & 0xff00) | (d >> 24)});
                }
                rx_cur.clear();
            }
        }
    }

    void step(PcieHostModel &m)
    {
        PhyIn in;
        fill(&in);
        edge(in);
        m.cycle(in, &out);
    }
};

static std::vector<uint32_t> mwr(uint32_t addr, uint32_t bytes, uint16_t id, uint32_t seed)
{
    std::vector<uint32_t> t = {0x40000000u | ((bytes / 4) & 0x3ff), (uint32_t(id) << 16) | 0xffu,
                               addr};
    for (uint32_t i = 0; i < bytes / 4; i++)
        t.push_back(seed + i);
    return t;
}

static LinkParams params(const char *extra = "")
{
    LinkParams p;
    std::string err;
    /* 64 bits at 125 MHz is a Gen2 x2 (or Gen1 x4) endpoint's datapath; 128 bits Gen2 x4. */
    const std::string base = g_width == 64 ? "data_width=64,lanes=2," : "data_width=128,lanes=4,";
    CHECK(p.parse(base + extra, &err),
          "parse: %s", err.c_str());
    CHECK(p.validate(&err), "validate: %s", err.c_str());
    return p;
}

static void test_write_throughput_matches_model()
{
    const LinkParams p = params("mps=256");
    PcieHostModel m(p);
    FakeDevice d(m);
    const uint32_t total = 1 << 20;
    for (uint32_t off = 0; off < total; off += 256)
        d.txq.push_back(mwr(uint32_t(p.host_mem_addr) + off, 256, p.device_id, off));
    d.step(m);
    const uint64_t t0 = m.now_ps();
    while (!d.txq.empty() || m.counters().at("bytes_up_payload") < total)
        d.step(m);
    const double gbps = total * 8.0 / ((m.now_ps() - t0) / 1000.0);
    const double limit = p.model_write_gbps(total);
    std::printf("ok   MWr stream: %.4f Gb/s measured, %.4f Gb/s pcie-bench limit\n", gbps, limit);
    CHECK(std::fabs(gbps / limit - 1.0) < 0.005, "throughput %.4f vs limit %.4f", gbps, limit);
    CHECK(m.errors().empty(), "unexpected error: %s", m.errors()[0].c_str());
    /* Memory holds what was written: dword i of the TLP at offset off is seed+i, big-endian. */
    const uint8_t *mem = m.host_mem();
    CHECK(mem[0x1000] == 0 && mem[0x1003] == 0 && mem[0x1007] == 0x01 + 0 &&
              mem[0x1000 + 4 * 7 + 3] == uint8_t(0x1000 + 7),
          "memory content");
    std::printf("ok   MWr payload landed in host memory\n");
}

static void test_mmio_read_latency_after_idle()
{
    const LinkParams p = params();
    PcieHostModel m(p);
    FakeDevice d(m);
    for (int i = 0; i < 10; i++)
        d.step(m);
    int id = m.mmio_read(0x10, 4);
    while (!m.mmio_result(id).done)
        d.step(m);
    const MmioResult a = m.mmio_result(id);
    CHECK(a.value == 0x11223344 && a.status == 0, "read value %#llx status %u",
          (unsigned long long)a.value, a.status);
    const uint64_t lat = a.done_ps - a.issue_ps;
    /* Regression: a long idle stretch must not delay the next TLP (DLLPs due then were sent
     * then). Same latency within one cycle after 2 ms of idle. */
    for (int i = 0; i < 250000; i++)
        d.step(m);
    id = m.mmio_read(0x10, 4);
    while (!m.mmio_result(id).done)
        d.step(m);
    const uint64_t lat2 = m.mmio_result(id).done_ps - m.mmio_result(id).issue_ps;
    std::printf("ok   MMIO read latency %llu ps, after 2 ms idle %llu ps\n",
                (unsigned long long)lat, (unsigned long long)lat2);
    CHECK(lat2 <= lat + 8000 && lat2 + 8000 >= lat, "latency after idle %llu vs %llu",
          (unsigned long long)lat2, (unsigned long long)lat);
}

static void test_read_completions_split()
{
    const LinkParams p = params("mps=256,mrrs=512,rcb=64");
    PcieHostModel m(p);
    FakeDevice d(m);
    uint8_t *mem = m.host_mem();
    for (int i = 0; i < 4096; i++)
        mem[i] = uint8_t(i * 7);
    /* 512 B at an offset 0x40 from a 256 B boundary: 256 + 256 (both end on RCB multiples). */
    const uint32_t a = uint32_t(p.host_mem_addr) + 0x40;
    d.txq.push_back({0x00000000u | 128u, (uint32_t(p.device_id) << 16) | (5u << 8) | 0xffu, a});
    for (int i = 0; i < 2000; i++)
        d.step(m);
    CHECK(d.rx_tlps.size() == 2, "%zu completions, wanted 2", d.rx_tlps.size());
    uint32_t off = 0x40, remaining = 512;
    for (const auto &c : d.rx_tlps) {
        const uint32_t len = c[0] & 0x3ff, bc = c[1] & 0xfff, la = c[2] & 0x7f;
        CHECK((c[0] >> 24) == 0x4a && ((c[2] >> 8) & 0xff) == 5, "CplD header/tag");
        CHECK(bc == (remaining & 0xfff) && la == (off & 0x7f), "byte count %u / lower addr %u",
              bc, la);
        for (uint32_t i = 0; i < len; i++)
            CHECK(c[3 + i] == ((uint32_t(mem[off + 4 * i]) << 24) |
                               (uint32_t(mem[off + 4 * i + 1]) << 16) |
                               (uint32_t(mem[off + 4 * i + 2]) << 8) | mem[off + 4 * i + 3]),
                  "completion data");
        off += len * 4;
        remaining -= len * 4;
    }
    std::printf("ok   MRd 512 B at +0x40: 2 CplDs, byte counts, lower addresses and data right\n");
}

static void test_broken_tlps_rejected()
{
    const LinkParams p = params("mps=128");
    PcieHostModel m(p);
    FakeDevice d(m);
    const uint32_t base = uint32_t(p.host_mem_addr);
    d.txq.push_back(mwr(base, 256, p.device_id, 1));                 /* > MPS */
    d.txq.push_back(mwr(base + 0xff0, 32, p.device_id, 2));          /* crosses 4 KiB */
    d.txq.push_back({0x00000000u | 64u, (uint32_t(p.device_id) << 16) | 0xffu, base + 0xf80});
    d.txq.push_back({0x4a000001u, 0u, 0x00000700u, 0u});               /* no such read */
    d.txq.push_back({0x1f000000u, 0u, 0u});                            /* unknown type */
    for (int i = 0; i < 2000; i++)
        d.step(m);
    const auto c = m.counters();
    CHECK(c.at("mps_violations") == 1, "mps_violations %llu",
          (unsigned long long)c.at("mps_violations"));
    CHECK(c.at("boundary_violations") == 2, "boundary_violations");
    CHECK(c.at("unexpected_completion") == 1 && c.at("malformed") == 1, "completion/malformed");
    CHECK(c.at("errors") == 5 && m.errors().size() == 5, "errors %zu", m.errors().size());
    for (int i = 0; i < 4096; i++)
        CHECK(m.host_mem()[i] == 0, "memory touched by a rejected write at %d", i);
    /* The bad MRd is answered with an Unsupported Request completion. */
    bool ur = false;
    for (const auto &t : d.rx_tlps)
        ur |= (t[0] >> 24) == 0x0a && ((t[1] >> 13) & 7) == 1;
    CHECK(ur, "no UR completion for the bad MRd");
    std::printf("ok   broken TLPs rejected and counted (%s ...)\n", m.errors()[0].c_str());
}

static void test_options()
{
    LinkParams p;
    std::string err;
    CHECK(!p.parse("mps=300x", &err) && err.find("mps") != std::string::npos, "bad number");
    CHECK(!p.parse("frobnicate=1", &err) && err.find("unknown") != std::string::npos, "key");
    CHECK(p.parse("mps=384", &err) && !p.validate(&err) && err.find("mps") != std::string::npos,
          "validate mps");
    LinkParams g3;
    CHECK(g3.parse("gen=3,lanes=8,mps=256", &err) && g3.validate(&err), "gen3");
    CHECK(std::fabs(g3.raw_gbps() - 8.0 * 8 * 128 / 130) < 1e-9, "gen3 raw rate");
    std::printf("ok   options parsed and validated; raw %.1f Gb/s, TLP %.4f Gb/s\n",
                params().raw_gbps(), params().tlp_gbps());
}

int main(int argc, char **argv)
{
    if (argc > 1)
        g_width = std::atoi(argv[1]);
    test_options();
    test_write_throughput_matches_model();
    test_mmio_read_latency_after_idle();
    test_read_completions_split();
    test_broken_tlps_rejected();
    std::printf("all model checks passed (data_width %d)\n", g_width);
    return 0;
}
