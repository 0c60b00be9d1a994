/*
 * test_pcie_host_model.cpp: unit test of the PCIe host model (sw/sim/pcie_host_model.{h,cpp})
 * with a small fake device, written here, on its PHY streams: a BAR0 register file that answers
 * MWr/MRd, and a TLP source that plays DMA (MWr, MRd), completions, MSIs and broken TLPs.
 *
 * Usage: test_pcie_host_model [64|128]   (the PHY data width; default 128)
 * Prints one line per check ("ok ..." or "FAIL ..."); exits 1 if any check failed.
 */
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "pcie_host_model.h"

using namespace nicsim;

namespace {

int g_failed = 0, g_checks = 0;

[[gnu::format(printf, 2, 3)]] bool check(bool ok, const char *fmt, ...)
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

bool contains(const std::string &s, const char *sub) { return s.find(sub) != std::string::npos; }

uint32_t bswap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

/* ---- TLP builders (dwords as on the stream: big-endian byte order) ---- */

uint32_t be_dw(const uint8_t *b) { return uint32_t(b[0]) << 24 | b[1] << 16 | b[2] << 8 | b[3]; }

std::vector<uint32_t> mem_req(bool write, uint64_t addr, uint32_t len_dw, uint16_t req_id,
                              uint8_t tag, unsigned fbe, unsigned lbe, bool four_dw = false,
                              const uint8_t *payload = nullptr)
{
    const uint32_t ft = (write ? 0x40 : 0x00) | (four_dw ? 0x20 : 0x00);
    std::vector<uint32_t> t;
    t.push_back(ft << 24 | (len_dw & 0x3ff));
    t.push_back(uint32_t(req_id) << 16 | uint32_t(tag) << 8 | (lbe & 0xf) << 4 | (fbe & 0xf));
    if (four_dw) {
        t.push_back(static_cast<uint32_t>(addr >> 32));
        t.push_back(static_cast<uint32_t>(addr) & ~3u);
    } else {
        t.push_back(static_cast<uint32_t>(addr) & ~3u);
    }
    if (write)
        for (uint32_t i = 0; i < len_dw; i++)
            t.push_back(payload ? be_dw(payload + 4 * i) : 0x01020304u + i);
    return t;
}

std::vector<uint32_t> cpl(uint16_t cpl_id, uint16_t req_id, uint8_t tag, uint32_t lower,
                          uint32_t byte_count, const std::vector<uint32_t> &data,
                          unsigned status = 0)
{
    std::vector<uint32_t> t;
    const uint32_t ft = data.empty() ? 0x0a : 0x4a;
    t.push_back(ft << 24 | (data.size() & 0x3ff));
    t.push_back(uint32_t(cpl_id) << 16 | (status & 7) << 13 | (byte_count & 0xfff));
    t.push_back(uint32_t(req_id) << 16 | uint32_t(tag) << 8 | (lower & 0x7f));
    t.insert(t.end(), data.begin(), data.end());
    return t;
}

/* ---- the fake device ---- */

struct Beat {
    uint32_t dat[4] = {0, 0, 0, 0};
    uint16_t be = 0;
    bool first = false, last = false;
    uint64_t not_before = 0;          /* offer from this time (ps) on */
};

struct RxTlp {
    std::vector<uint32_t> dw;
    uint64_t t_first = 0, t_last = 0; /* when its first / last beat was taken */
};

class Dev {
public:
    explicit Dev(PcieHostModel &model) : m(model), W(model.params().data_width / 32)
    {
        PhyIn idle;                   /* as the harness does: pins for cycle 0 */
        m.cycle(idle, &out);
    }

    /* Standard beats for a TLP; extra_beats > 0 appends beats beyond the end (be 0). */
    static std::vector<Beat> beats_of(const std::vector<uint32_t> &tlp, int W)
    {
        std::vector<Beat> v;
        for (size_t i = 0; i < tlp.size(); i += W) {
            Beat b;
            for (int k = 0; k < W && i + k < tlp.size(); k++) {
                b.dat[k] = tlp[i + k];
                b.be |= 0xf << (4 * k);
            }
            b.first = i == 0;
            b.last = i + W >= tlp.size();
            v.push_back(b);
        }
        return v;
    }

    void send(const std::vector<uint32_t> &tlp, uint64_t not_before = 0)
    {
        send_beats(beats_of(tlp, W), not_before);
    }

    void send_beats(std::vector<Beat> beats, uint64_t not_before = 0)
    {
        if (!beats.empty())
            beats[0].not_before = not_before;
        tx.insert(tx.end(), beats.begin(), beats.end());
    }

    void step()
    {
        const uint64_t t = m.now_ps();
        PhyIn in;
        if (!tx.empty() && tx.front().not_before <= t) {
            const Beat &b = tx.front();
            in.tx_valid = true;
            in.tx_first = b.first;
            in.tx_last = b.last;
            std::memcpy(in.tx_dat, b.dat, sizeof in.tx_dat);
            in.tx_be = b.be;
        }
        in.rx_ready = rx_ready ? rx_ready(m.cycles()) : true;
        in.msi_valid = !msi_q.empty();
        in.msi_dat = msi_q.empty() ? 0 : msi_q.front();

        /* Checks on the model's pins: constant config, stable rx beats while held. */
        if (out.id != m.params().device_id || !out.link_up || !out.bus_master_enable ||
            !out.msi_enable)
            pin_errors++;
        if (held && (!out.rx_valid || std::memcmp(out.rx_dat, held_beat.rx_dat, 16) ||
                     out.rx_be != held_beat.rx_be || out.rx_first != held_beat.rx_first ||
                     out.rx_last != held_beat.rx_last))
            hold_violations++;
        held = out.rx_valid && !in.rx_ready;
        held_beat = out;

        if (in.tx_valid && out.tx_ready) {
            if (tx.front().last)
                tx_last_t.push_back(t);
            tx.pop_front();
        }
        if (out.rx_valid && in.rx_ready)
            take_rx(t);
        if (in.msi_valid && out.msi_ready) {
            msi_t.push_back(t);
            msi_q.pop_front();
        }
        PhyOut next;
        m.cycle(in, &next);
        out = next;
    }

    void run(uint64_t n)
    {
        for (uint64_t i = 0; i < n; i++)
            step();
    }

    bool run_until(const std::function<bool()> &done, uint64_t max_cycles)
    {
        for (uint64_t i = 0; i < max_cycles; i++) {
            if (done())
                return true;
            step();
        }
        return done();
    }

    MmioResult mmio_wait(int id)
    {
        run_until([&] { return m.mmio_result(id).done; }, 100000);
        return m.mmio_result(id);
    }

    PcieHostModel &m;
    const int W;
    PhyOut out;
    std::deque<Beat> tx;
    std::deque<uint8_t> msi_q;
    std::function<bool(uint64_t)> rx_ready;
    bool bar_mode = true;             /* answer MWr/MRd to BAR0 with the register file */
    int turnaround = 4;               /* cycles from a MRd's last beat to its CplD */
    int reverse_batch = 1;            /* answer MRds in reverse order, this many at a time */
    std::map<uint32_t, uint32_t> regs;/* BAR0 offset -> payload dword as on the wire */
    std::vector<RxTlp> rx;
    std::vector<uint64_t> tx_last_t, msi_t;
    int hold_violations = 0, pin_errors = 0;

private:
    void take_rx(uint64_t t)
    {
        if (out.rx_first) {
            cur.dw.clear();
            cur.t_first = t;
        }
        for (int k = 0; k < W; k++)
            if ((out.rx_be >> (4 * k)) & 0xf)
                cur.dw.push_back(out.rx_dat[k]);
        if (!out.rx_last)
            return;
        cur.t_last = t;
        rx.push_back(cur);
        if (bar_mode)
            bar_access(cur, t);
    }

    void bar_access(const RxTlp &r, uint64_t t)
    {
        const uint32_t ft = r.dw[0] >> 24, len = r.dw[0] & 0x3ff;
        const uint32_t off = r.dw[2] - static_cast<uint32_t>(m.params().bar0_addr);
        if (ft == 0x40) {
            for (uint32_t i = 0; i < len; i++)
                regs[off + 4 * i] = r.dw[3 + i];
        } else if (ft == 0x00) {
            pending.push_back(r);
            if (static_cast<int>(pending.size()) < reverse_batch)
                return;
            for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
                const uint32_t o = it->dw[2] - static_cast<uint32_t>(m.params().bar0_addr);
                const uint32_t n = it->dw[0] & 0x3ff;
                std::vector<uint32_t> data;
                for (uint32_t i = 0; i < n; i++)
                    data.push_back(regs[o + 4 * i]);
                send(cpl(m.params().device_id, it->dw[1] >> 16, (it->dw[1] >> 8) & 0xff,
                         o & 0x7f, 4 * n, data),
                     t + turnaround * period());
            }
            pending.clear();
        }
    }

    uint64_t period() const { return static_cast<uint64_t>(1e6 / m.params().clk_mhz + 0.5); }

    RxTlp cur;
    std::vector<RxTlp> pending;
    bool held = false;
    PhyOut held_beat;
};

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

double byte_ps(const LinkParams &p) { return 8000.0 / p.raw_gbps(); }

uint64_t period_ps(const LinkParams &p) { return static_cast<uint64_t>(1e6 / p.clk_mhz + 0.5); }

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

/* ---- 1. MMIO ---- */

void test_mmio(int dw)
{
    LinkParams p = base_params(dw);
    p.link_latency_ns = 100;
    PcieHostModel m(p);
    Dev d(m);
    const uint64_t P = period_ps(p);
    const double bt = byte_ps(p);

    check(d.out.max_payload_size == 256 && d.out.max_request_size == 512 && d.out.tx_ready &&
              d.out.msi_ready, "dw%d mmio: device pins (MPS 256, MRRS 512, tx_ready, msi_ready)",
          dw);

    /* 4-byte write: 1 DW MWr, first BE f, last BE 0, payload = host bytes 44 33 22 11. */
    int id = m.mmio_write(0x10, 0x11223344, 4);
    check(m.mmio_outstanding() == 1, "dw%d mmio: write outstanding", dw);
    MmioResult r = d.mmio_wait(id);
    check(r.done && r.status == 0, "dw%d mmio: write done", dw);
    check(!d.rx.empty() && d.rx.back().dw.size() == 4 && d.rx.back().dw[0] == 0x40000001 &&
              d.rx.back().dw[1] == (uint32_t(p.rc_id) << 16 | 0x0f) &&
              d.rx.back().dw[2] == p.bar0_addr + 0x10,
          "dw%d mmio: MWr header 40000001 %04x000f %08llx", dw, p.rc_id,
          static_cast<unsigned long long>(p.bar0_addr + 0x10));
    check(d.regs[0x10] == 0x44332211, "dw%d mmio: write 0x11223344 -> payload dword %08x "
          "(want 44332211)", dw, d.regs[0x10]);
    check(r.done_ps == d.rx.back().t_last, "dw%d mmio: write done when the device took its "
          "last beat (%llu ps)", dw, static_cast<unsigned long long>(r.done_ps));

    /* 4-byte read back, and its latency at idle. */
    const uint64_t t0 = m.now_ps();
    id = m.mmio_read(0x10, 4);
    r = d.mmio_wait(id);
    check(r.done && r.status == 0 && r.value == 0x11223344,
          "dw%d mmio: read back 0x%llx (want 0x11223344)", dw,
          static_cast<unsigned long long>(r.value));
    check(r.issue_ps == t0, "dw%d mmio: issue_ps is the time of the call", dw);
    const RxTlp &req = d.rx.back();
    check(req.dw.size() == 3 && req.dw[0] == 0x00000001 &&
              (req.dw[1] & 0xffff00ff) == (uint32_t(p.rc_id) << 16 | 0x0f) &&
              req.dw[2] == p.bar0_addr + 0x10, "dw%d mmio: MRd header %08x %08x %08x", dw,
          req.dw[0], req.dw[1], req.dw[2]);
    const uint64_t t_cpl = d.tx_last_t.back();
    const double analytic = (20 * bt + 100e3) + double(t_cpl - req.t_first) +
                            (24 * bt + 100e3);
    const double measured = double(r.done_ps - r.issue_ps);
    check(measured >= analytic - 1 && measured < analytic + P,
          "dw%d mmio: idle read latency %.0f ps = analytic %.0f ps (down 20 B + 100 ns, "
          "device %llu ps, up 24 B + 100 ns) within a cycle", dw, measured, analytic,
          static_cast<unsigned long long>(t_cpl - req.t_first));

    /* Regression: after 2 ms of idle link the next read costs the same (Ack/UpdateFC DLLPs
     * and SKIPs that fell due while idle went out then, not one by one before the TLP). */
    d.run(static_cast<uint64_t>(2e9 / double(period_ps(p))));
    id = m.mmio_read(0x10, 4);
    r = d.mmio_wait(id);
    const double after_idle = double(r.done_ps - r.issue_ps);
    check(r.done && after_idle < measured + P && after_idle > measured - P,
          "dw%d mmio: read latency after 2 ms idle %.0f ps = %.0f ps within a cycle", dw,
          after_idle, measured);

    /* 8-byte write and read: 2 DW, both BEs f, low word first. */
    id = m.mmio_write(0x20, 0x1122334455667788ull, 8);
    d.mmio_wait(id);
    check(d.regs[0x20] == 0x88776655 && d.regs[0x24] == 0x44332211 &&
              d.rx.back().dw[0] == 0x40000002 && (d.rx.back().dw[1] & 0xff) == 0xff,
          "dw%d mmio: 8-byte write payload %08x %08x, BEs ff", dw, d.regs[0x20], d.regs[0x24]);
    id = m.mmio_read(0x20, 8);
    r = d.mmio_wait(id);
    check(r.done && r.value == 0x1122334455667788ull, "dw%d mmio: 8-byte read back 0x%llx", dw,
          static_cast<unsigned long long>(r.value));

    /* Several reads outstanding, answered in reverse order: distinct tags, right values. */
    d.reverse_batch = 4;
    int ids[4];
    for (int i = 0; i < 4; i++) {
        d.regs[0x100 + 4 * i] = bswap32(0xa0 + i);
        ids[i] = m.mmio_read(0x100 + 4 * i, 4);
    }
    const size_t nrx = d.rx.size();
    check(m.mmio_outstanding() == 4, "dw%d mmio: 4 reads outstanding", dw);
    bool all = true;
    for (int i = 0; i < 4; i++) {
        r = d.mmio_wait(ids[i]);
        all = all && r.done && r.status == 0 && r.value == uint64_t(0xa0 + i);
    }
    check(all, "dw%d mmio: 4 reads completed out of order, each with its own value", dw);
    std::map<uint32_t, int> tags;
    for (size_t i = nrx - 4; i < d.rx.size(); i++)
        tags[(d.rx[i].dw[1] >> 8) & 0xff]++;
    check(tags.size() == 4, "dw%d mmio: the 4 reads used 4 distinct tags", dw);
    d.reverse_batch = 1;
    check(m.mmio_outstanding() == 0 && m.errors().empty(), "dw%d mmio: nothing outstanding, "
          "no errors", dw);
    /* 7 reads: 1 at idle, 1 after the long idle, 1 of 8 bytes, 4 in a batch. */
    check(counter(m, "mmio_reads") == 7 && counter(m, "mmio_writes") == 2 &&
              counter(m, "tlps_down_mrd") == 7 && counter(m, "tlps_down_mwr") == 2 &&
              counter(m, "tlps_up_cpld") == 7, "dw%d mmio: counters", dw);

    /* Device slow to take beats: stalls counted, beats held stable. */
    d.rx_ready = [](uint64_t c) { return c % 3 == 0; };
    id = m.mmio_write(0x30, 0xdeadbeef, 8);
    d.mmio_wait(id);
    id = m.mmio_read(0x30, 8);
    r = d.mmio_wait(id);
    check(r.value == 0xdeadbeef && counter(m, "rx_stall_cycles") > 0 && d.hold_violations == 0,
          "dw%d mmio: rx_ready low at times: %llu stall cycles, beats held stable", dw,
          static_cast<unsigned long long>(counter(m, "rx_stall_cycles")));
    d.rx_ready = nullptr;

    /* Bad host requests are refused, not sent. */
    r = m.mmio_result(m.mmio_read(0x2, 4));
    check(r.done && r.status == 1 && counter(m, "bad_mmio") == 1,
          "dw%d mmio: unaligned read refused with status UR", dw);
    check(d.pin_errors == 0, "dw%d mmio: config pins constant", dw);
}

/* ---- 2. device MWr ---- */

void test_mwr(int dw)
{
    LinkParams p = base_params(dw);
    PcieHostModel m(p);
    Dev d(m);
    const uint64_t base = p.host_mem_addr;
    const size_t span = 0x4000;
    std::vector<uint8_t> ref(span, 0);
    uint8_t src[4096];
    for (int i = 0; i < 4096; i++)
        src[i] = static_cast<uint8_t>(i * 7 + 3);
    struct W {
        uint64_t off;
        uint32_t len_dw;
        unsigned fbe, lbe;
        bool four_dw;
    };
    const W ws[] = {
        {0x0000, 1, 0xf, 0x0, false},   /* 1 DW */
        {0x0100, 64, 0xf, 0xf, false},  /* MPS */
        {0x1004, 3, 0xf, 0xf, false},   /* unaligned, 3 DW */
        {0x1040, 5, 0xf, 0xf, false},   /* 5 DW: TLP ends mid-beat */
        {0x2000, 16, 0xe, 0x3, false},  /* partial first and last dwords */
        {0x2100, 1, 0x9, 0x0, false},   /* non-contiguous 1 DW */
        {0x2200, 1, 0x0, 0x0, false},   /* zero-length write */
        {0x2300, 2, 0xd, 0xb, false},   /* QW-aligned 2 DW: non-contiguous allowed */
        {0x3000, 32, 0xf, 0xf, true},   /* 4DW header (64-bit address form) */
        {0x3ffc, 1, 0xf, 0x0, false},   /* last dword before 4 KiB */
    };
    int n = 0;
    for (const W &w : ws) {
        const uint8_t *pl = src + (n * 52) % 1024;
        d.send(mem_req(true, base + w.off, w.len_dw, p.device_id, 0, w.fbe, w.lbe, w.four_dw, pl));
        for (uint32_t i = 0; i < w.len_dw; i++) {
            const unsigned be = w.len_dw == 1 ? w.fbe : i == 0 ? w.fbe
                                : i + 1 == w.len_dw ? w.lbe : 0xf;
            for (int b = 0; b < 4; b++)
                if (be & (1u << b))
                    ref[w.off + 4 * i + b] = pl[4 * i + b];
        }
        n++;
    }
    d.run(3000);
    check(std::memcmp(m.host_mem(), ref.data(), span) == 0,
          "dw%d mwr: %d writes (1..64 DW, partial/non-contiguous BEs, zero-length, 4DW) land "
          "byte-exact in host memory", dw, n);
    check(m.errors().empty() && counter(m, "tlps_up_mwr") == uint64_t(n),
          "dw%d mwr: no errors, %d MWr counted", dw, n);
    uint64_t pl_bytes = 0;
    for (const W &w : ws)
        pl_bytes += 4 * w.len_dw;
    check(counter(m, "bytes_up_payload") == pl_bytes, "dw%d mwr: bytes_up_payload %llu", dw,
          static_cast<unsigned long long>(pl_bytes));
}

/* ---- 3. device MRd and completion splitting ---- */

struct CplSeen {
    uint32_t bytes, byte_count, lower;
};

/* Send a MRd; collect its completions; check their fields and the data. */
void mrd_case(int dw, int rcb, uint64_t off, uint32_t len_dw, unsigned fbe, unsigned lbe,
              const std::vector<uint32_t> &want_sizes)
{
    LinkParams p = base_params(dw);
    p.rcb = rcb;
    p.link_latency_ns = 50;
    PcieHostModel m(p);
    Dev d(m);
    d.bar_mode = false;
    uint8_t *mem = m.host_mem();
    for (int i = 0; i < 0x4000; i++)
        mem[i] = static_cast<uint8_t>(i * 13 + 5);
    const uint64_t A = p.host_mem_addr + off;
    const uint8_t tag = 0x5a;
    d.send(mem_req(false, A, len_dw, p.device_id, tag, fbe, lbe));
    const uint32_t first_skip = fbe ? (fbe & 1 ? 0 : fbe & 2 ? 1 : fbe & 4 ? 2 : 3) : 0;
    uint32_t total;
    if (len_dw == 1)
        total = fbe == 0 ? 1 : [&] {
            int lo = -1, hi = -1;
            for (int b = 0; b < 4; b++)
                if (fbe & (1u << b)) {
                    if (lo < 0)
                        lo = b;
                    hi = b;
                }
            return uint32_t(hi - lo + 1);
        }();
    else
        total = 4 * len_dw - first_skip - (lbe & 8 ? 0 : lbe & 4 ? 1 : lbe & 2 ? 2 : 3);
    d.run_until([&] {
        uint32_t got = 0;
        for (const RxTlp &r : d.rx)
            got += 4 * (r.dw[0] & 0x3ff);
        return d.rx.size() >= want_sizes.size() && got > 0 &&
               (d.rx.back().dw[1] & 0xfff) <= d.rx.back().dw.size() * 4;
    }, 20000);
    d.run(200);

    char what[96];
    std::snprintf(what, sizeof what, "dw%d mrd rcb=%d A=+%#llx len=%u DW be=%x/%x", dw, rcb,
                  static_cast<unsigned long long>(off), len_dw, fbe, lbe);
    std::vector<uint32_t> sizes;
    bool fields = true, data = true;
    uint64_t addr = A + first_skip;    /* first byte the next completion covers */
    uint32_t left = total;
    for (const RxTlp &r : d.rx) {
        const uint32_t n = r.dw[0] & 0x3ff;
        const uint32_t bc = r.dw[1] & 0xfff;
        const uint32_t lower = r.dw[2] & 0x7f;
        fields = fields && (r.dw[0] >> 24) == 0x4a && (r.dw[1] >> 16) == p.rc_id &&
                 ((r.dw[1] >> 13) & 7) == 0 && (r.dw[2] >> 16) == p.device_id &&
                 ((r.dw[2] >> 8) & 0xff) == tag && r.dw.size() == 3 + n &&
                 (bc ? bc : 4096) == left && lower == (addr & 0x7f);
        const uint64_t dstart = addr & ~3ull;
        for (uint32_t i = 0; i < n; i++)
            data = data && r.dw[3 + i] == be_dw(mem + (dstart - p.host_mem_addr) + 4 * i);
        const uint64_t end = std::min<uint64_t>(dstart + 4 * n, addr + left);
        sizes.push_back(static_cast<uint32_t>(4 * n));
        left -= static_cast<uint32_t>(end - addr);
        /* every completion but the last ends on the RCB */
        if (left)
            fields = fields && (end % rcb) == 0 && 4 * n <= uint32_t(p.mps);
        addr = end;
    }
    std::string s;
    for (uint32_t v : sizes)
        s += (s.empty() ? "" : "+") + std::to_string(v);
    std::string w;
    for (uint32_t v : want_sizes)
        w += (w.empty() ? "" : "+") + std::to_string(v);
    check(sizes == want_sizes, "%s: completions %s B (want %s)", what, s.c_str(), w.c_str());
    check(fields && left == 0, "%s: CplD headers (ids, tag, status, byte_count, lower_address, "
          "RCB ends, <= MPS)", what);
    check(data, "%s: completion data = host memory", what);
    check(m.errors().empty(), "%s: no errors", what);
}

void test_mrd(int dw)
{
    mrd_case(dw, 64, 0x1000, 128, 0xf, 0xf, {256, 256});       /* aligned 512 B */
    mrd_case(dw, 64, 0x1040, 128, 0xf, 0xf, {256, 256});       /* RCB-aligned start */
    mrd_case(dw, 128, 0x1040, 128, 0xf, 0xf, {192, 256, 64});  /* RCB-unaligned start */
    mrd_case(dw, 64, 0x10c4, 128, 0xf, 0xf, {252, 256, 4});    /* dword-aligned only */
    mrd_case(dw, 64, 0x2000, 1, 0xf, 0x0, {4});                 /* 1 DW */
    mrd_case(dw, 64, 0x2008, 2, 0xc, 0x1, {8});                 /* byte enables: 3 bytes */
    mrd_case(dw, 64, 0x2010, 1, 0x6, 0x0, {4});                 /* 2 bytes in the middle */
    mrd_case(dw, 64, 0x2020, 1, 0x0, 0x0, {4});                 /* zero-length read */

    /* Latency of a MRd at idle: request up, memory, completion down. */
    LinkParams p = base_params(dw);
    p.link_latency_ns = 80;
    p.mem_read_latency_ns = 400;
    PcieHostModel m(p);
    Dev d(m);
    d.bar_mode = false;
    d.run(5);
    d.send(mem_req(false, p.host_mem_addr + 0x100, 16, p.device_id, 1, 0xf, 0xf));
    d.run_until([&] { return !d.rx.empty(); }, 10000);
    const double bt = byte_ps(p);
    const double expect = 20 * bt + 80e3 + 400e3 + (20 + 64) * bt + 80e3;
    const double got = double(d.rx[0].t_first - d.tx_last_t[0]);
    check(got >= expect && got < expect + double(period_ps(p)),
          "dw%d mrd: idle read latency %.0f ps = analytic %.0f ps (MRd 20 B + 80 ns + 400 ns + "
          "CplD 84 B + 80 ns) within a cycle", dw, got, expect);

    /* Back-to-back MRds: completions in request order, tags kept. */
    d.rx.clear();
    for (int i = 0; i < 4; i++)
        d.send(mem_req(false, p.host_mem_addr + 0x1000 + 0x200 * i, 128, p.device_id,
                       uint8_t(10 + i), 0xf, 0xf));
    d.run_until([&] { return d.rx.size() >= 8; }, 20000);
    bool order = d.rx.size() == 8;
    for (size_t i = 0; order && i < 8; i++)
        order = ((d.rx[i].dw[2] >> 8) & 0xff) == 10 + i / 2;
    check(order, "dw%d mrd: 4 MRds of 512 B -> 8 CplDs in request order", dw);
    check(counter(m, "tlps_down_cpld") == 9 && counter(m, "tlps_up_mrd") == 5 &&
              counter(m, "bytes_down_payload") == 64 + 2048,
          "dw%d mrd: counters (cpld, mrd, payload)", dw);
}

/* ---- 4. broken TLPs ---- */

struct BrokenCase {
    const char *name;
    const char *counter;
    const char *keyword;
};

void test_broken(int dw)
{
    LinkParams p = base_params(dw);
    const uint64_t H = p.host_mem_addr;
    uint8_t pl[1024];
    for (int i = 0; i < 1024; i++)
        pl[i] = static_cast<uint8_t>(0x80 | i);

    auto run_case = [&](const char *name, const char *ctr, const char *keyword,
                        const std::function<void(PcieHostModel &, Dev &)> &send,
                        bool expect_ur, uint8_t ur_tag) {
        PcieHostModel m(p);
        Dev d(m);
        d.bar_mode = false;
        send(m, d);
        d.run(3000);
        const std::string e = last_error(m);
        check(counter(m, ctr) == 1 && counter(m, "errors") == 1,
              "dw%d broken %s: %s = %llu, errors = %llu", dw, name, ctr,
              static_cast<unsigned long long>(counter(m, ctr)),
              static_cast<unsigned long long>(counter(m, "errors")));
        check(m.errors().size() == 1 && contains(e, keyword) && contains(e, " ns") &&
                  (contains(e, "[header") || !strcmp(ctr, "framing_errors")),
              "dw%d broken %s: message with time and header: \"%s\"", dw, name, e.c_str());
        bool untouched = true;
        for (uint64_t i = 0; i < 0x3000; i++)
            untouched = untouched && m.host_mem()[i] == 0;
        check(untouched, "dw%d broken %s: host memory untouched", dw, name);
        if (expect_ur) {
            const bool ur = d.rx.size() == 1 && d.rx[0].dw.size() == 3 &&
                            (d.rx[0].dw[0] >> 24) == 0x0a && ((d.rx[0].dw[1] >> 13) & 7) == 1 &&
                            (d.rx[0].dw[2] >> 16) == p.device_id &&
                            ((d.rx[0].dw[2] >> 8) & 0xff) == ur_tag;
            check(ur, "dw%d broken %s: answered with a Cpl, status UR, tag %u", dw, name,
                  ur_tag);
        } else {
            check(d.rx.empty(), "dw%d broken %s: nothing sent to the device", dw, name);
        }
    };

    run_case("MWr > MPS", "mps_violations", "MPS", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(true, H + 0x1000, 128, p.device_id, 0, 0xf, 0xf, false, pl));
    }, false, 0);
    run_case("MRd > MRRS", "mrrs_violations", "MRRS", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(false, H + 0x1000, 256, p.device_id, 3, 0xf, 0xf));
    }, true, 3);
    run_case("MRd crossing 4 KiB", "boundary_violations", "4 KiB", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(false, H + 0x1f80, 64, p.device_id, 4, 0xf, 0xf));
    }, true, 4);
    run_case("MWr crossing 4 KiB", "boundary_violations", "4 KiB", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(true, H + 0x1fc0, 32, p.device_id, 0, 0xf, 0xf, false, pl));
    }, false, 0);
    run_case("MWr outside host memory", "bad_address", "outside", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(true, H - 0x100, 16, p.device_id, 0, 0xf, 0xf, false, pl));
    }, false, 0);
    run_case("MRd outside host memory", "bad_address", "outside", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(false, H + p.host_mem_size, 16, p.device_id, 6, 0xf, 0xf));
    }, true, 6);
    run_case("bad fmt/type", "unsupported_tlps", "fmt/type", [&](PcieHostModel &, Dev &d) {
        std::vector<uint32_t> t = mem_req(true, H + 0x100, 4, p.device_id, 0, 0xf, 0xf, false,
                                          pl);
        t[0] = (t[0] & 0x00ffffff) | 0x74u << 24;   /* a message with data */
        d.send(t);
    }, false, 0);
    run_case("MWr length mismatch", "length_errors", "length", [&](PcieHostModel &, Dev &d) {
        std::vector<uint32_t> t = mem_req(true, H + 0x100, 8, p.device_id, 0, 0xf, 0xf, false,
                                          pl);
        t.resize(3 + 4);              /* header says 8 DW, 4 come */
        d.send(t);
    }, false, 0);
    run_case("MRd length mismatch", "length_errors", "length", [&](PcieHostModel &, Dev &d) {
        std::vector<uint32_t> t = mem_req(false, H + 0x100, 8, p.device_id, 9, 0xf, 0xf);
        t.insert(t.end(), {1, 2, 3, 4, 5, 6});  /* a read with data beats */
        d.send(t);
    }, true, 9);
    run_case("MWr with inconsistent be", "be_errors", "be=", [&](PcieHostModel &, Dev &d) {
        std::vector<Beat> b = Dev::beats_of(mem_req(true, H + 0x100, 6, p.device_id, 0, 0xf,
                                                    0xf, false, pl), d.W);
        b.back().be = static_cast<uint16_t>((1u << (4 * d.W)) - 1);  /* lanes past the end */
        d.send_beats(b);
    }, false, 0);
    run_case("MWr with bad byte enables", "byte_enable_errors", "byte enables",
             [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(true, H + 0x100, 4, p.device_id, 0, 0xf, 0x0, false, pl));
    }, false, 0);
    run_case("unexpected CplD", "unexpected_completion", "tag", [&](PcieHostModel &, Dev &d) {
        d.send(cpl(p.device_id, p.rc_id, 7, 0, 4, {0x12345678}));
    }, false, 0);
    run_case("CplD with wrong requester id", "unexpected_completion", "requester",
             [&](PcieHostModel &m, Dev &d) {
        m.mmio_read(0x40, 4);
        d.run_until([&] { return !d.rx.empty(); }, 1000);
        const uint8_t tag = (d.rx[0].dw[1] >> 8) & 0xff;
        d.send(cpl(p.device_id, 0x1234, tag, 0x40, 4, {0x12345678}));
        d.rx.clear();
    }, false, 0);
    run_case("CplD with wrong byte count", "unexpected_completion", "byte count",
             [&](PcieHostModel &m, Dev &d) {
        m.mmio_read(0x40, 4);
        d.run_until([&] { return !d.rx.empty(); }, 1000);
        const uint8_t tag = (d.rx[0].dw[1] >> 8) & 0xff;
        d.send(cpl(p.device_id, p.rc_id, tag, 0x40, 8, {0x12345678}));
        d.rx.clear();
    }, false, 0);
    run_case("TX beat without first", "framing_errors", "without first",
             [&](PcieHostModel &, Dev &d) {
        std::vector<Beat> b = Dev::beats_of(mem_req(true, H + 0x100, 4, p.device_id, 0, 0xf,
                                                    0xf, false, pl), d.W);
        b[0].first = false;
        d.send_beats(b);
    }, false, 0);

    /* A good TLP after a bad one is applied; a device UR completes the read with all ones. */
    {
        PcieHostModel m(p);
        Dev d(m);
        d.bar_mode = false;
        d.send(mem_req(true, H + 0x1000, 128, p.device_id, 0, 0xf, 0xf, false, pl));
        d.send(mem_req(true, H + 0x2000, 4, p.device_id, 0, 0xf, 0xf, false, pl));
        const int id = m.mmio_read(0x8, 4);
        d.run_until([&] { return !d.rx.empty(); }, 1000);
        const uint8_t tag = (d.rx[0].dw[1] >> 8) & 0xff;
        d.send(cpl(p.device_id, p.rc_id, tag, 0x8, 4, {}, 1));
        const MmioResult r = d.mmio_wait(id);
        check(std::memcmp(m.host_mem() + 0x2000, pl, 16) == 0 && m.host_mem()[0x1000] == 0,
              "dw%d broken: the good MWr after a bad one is applied", dw);
        check(r.done && r.status == 1 && r.value == 0xffffffffull &&
                  counter(m, "unexpected_completion") == 1,
              "dw%d broken: a device Cpl with status UR ends the read: all ones, status 1", dw);
    }

    /* Completion timeout: the device never answers. */
    {
        PcieHostModel m(p);
        Dev d(m);
        d.bar_mode = false;
        const int id = m.mmio_read(0x44, 4);
        d.run(static_cast<uint64_t>(49e6 / double(period_ps(p))));
        check(!m.mmio_result(id).done, "dw%d timeout: read still outstanding after 49 us", dw);
        d.run(static_cast<uint64_t>(2e6 / double(period_ps(p))));
        const MmioResult r = m.mmio_result(id);
        check(r.done && r.status == 0xffff && r.value == 0xffffffffull &&
                  counter(m, "completion_timeouts") == 1 && counter(m, "errors") == 1 &&
                  contains(last_error(m), "timeout") && m.mmio_outstanding() == 0,
              "dw%d timeout: done after 50 us with status 0xffff, all ones, counted (%s)", dw,
              last_error(m).c_str());
        /* A late completion is unexpected now. */
        const uint8_t tag = (d.rx[0].dw[1] >> 8) & 0xff;
        d.send(cpl(p.device_id, p.rc_id, tag, 0x44, 4, {0x1}));
        d.run(200);
        check(counter(m, "unexpected_completion") == 1, "dw%d timeout: a late CplD is an "
              "unexpected completion", dw);
    }
}

/* ---- 5. throughput ---- */

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

/* ---- 6. MSI ---- */

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

/* ---- 7. LinkParams ---- */

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
        {"pd_credits=4", "pd_credits"},  {"dev_mps=100", "dev_mps"},
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

} /* namespace */

int main(int argc, char **argv)
{
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
    test_msi(dw);
    test_throughput(dw);
    std::printf("%s: %d checks, %d failed (data_width %d)\n", g_failed ? "FAIL" : "PASS",
                g_checks, g_failed, dw);
    return g_failed ? 1 : 0;
}
