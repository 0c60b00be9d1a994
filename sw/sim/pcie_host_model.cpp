/*
 * pcie_host_model.cpp: PCIe root complex, link and host memory for the Verilated SoC. See
 * pcie_host_model.h for the stream format, the timing model (pcie-bench) and the checks.
 *
 * Structure, device -> host ("up"):  tx beats -> TLP assembly + checks -> device TX buffer
 * (tx_buf_tlps) -> link serialiser (credits, DLLPs) -> arrival at the RC -> memory write / read
 * job / completion of a host read / interrupt.
 * Host -> device ("down"): host MMIO TLPs and completions of read jobs -> link serialiser ->
 * arrival -> presented beat by beat on rx.
 * Link times are doubles in picoseconds; the clock advances in whole cycles.
 */
#include "pcie_host_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace nicsim {

namespace {

/* Ack_Limits / FC_Guide of pcie-bench (PCIe spec tables), byte times; [gen-1][lanes][mps]. */
const int kLanes[] = {1, 2, 4, 8, 16};
const int kMps[] = {128, 256, 512, 1024, 2048, 4096};
const int kAckTable[3][5][6] = {
    {{237, 416, 559, 1071, 2095, 4143}, {128, 217, 289, 545, 1057, 2081},
     {73, 118, 154, 282, 538, 1050}, {67, 107, 86, 150, 278, 534}, {48, 72, 86, 150, 278, 534}},
    {{288, 467, 610, 1122, 2146, 4194}, {179, 268, 340, 596, 1108, 2132},
     {124, 169, 205, 333, 589, 1101}, {118, 158, 137, 201, 329, 585},
     {99, 123, 137, 201, 329, 585}},
    {{333, 512, 655, 1167, 2191, 4239}, {224, 313, 385, 641, 1153, 2177},
     {169, 214, 250, 378, 634, 1146}, {163, 203, 182, 246, 374, 630},
     {144, 168, 182, 246, 374, 630}},
};
constexpr int kDllpBytes = 8;         /* 2 B framing + 4 B DLLP + 2 B CRC */
constexpr int kSkipBytes = 4;
constexpr int kSkipInterval = 1538;
constexpr int kDllOverhead = 6;       /* sequence number + LCRC */
constexpr double kCplTimeoutPs = 50e6; /* 50 us */

int table_index(const int *vals, int n, int v)
{
    for (int i = 0; i < n; i++)
        if (vals[i] == v)
            return i;
    return -1;
}

bool pow2_in(int v, int lo, int hi) { return v >= lo && v <= hi && (v & (v - 1)) == 0; }

enum Kind { MWR, MRD, CPLD, CPL, MSI, BAD };

const char *kind_name(Kind k)
{
    switch (k) {
    case MWR: return "mwr";
    case MRD: return "mrd";
    case CPLD: return "cpld";
    case CPL: return "cpl";
    case MSI: return "msi";
    default: return "bad";
    }
}

struct Tlp {
    std::vector<uint32_t> dw;         /* header + payload dwords */
    Kind kind = BAD;
    int mmio_id = -1;                 /* host MMIO write: completes when consumed by the device */
    double ready_ps = 0;              /* may start on the link from this time */
    double arrival_ps = 0;
    int ph = 0, pd = 0, nph = 0;      /* credits it uses (upstream) */
    uint8_t msi_vector = 0;
};

struct ReadJob {
    uint16_t req_id;
    uint8_t tag;
    uint64_t addr;                    /* dword-aligned start */
    uint32_t len;                     /* bytes, dword multiple */
    uint32_t lead, trail;             /* disabled bytes by first_be / last_be */
    double ready_ps;
};

struct HostRead {
    bool active = false;
    int id = -1;
    int len = 4;
};

/* One direction of the link: serialiser with pcie-bench's DLLP and SKIP overheads. */
struct Link {
    double ppb = 500;                 /* ps per byte */
    double free_ps = 0;
    double due[3] = {0, 0, 0};        /* next Ack, UpdateFC, SKIP */
    double iv[3] = {1, 1, 1};
    double sz[3] = {kDllpBytes, kDllpBytes, kSkipBytes};
    uint64_t busy_ps = 0, dllp_bytes = 0, tlp_bytes = 0;

    void init(double ppb_, int ack, int fc)
    {
        ppb = ppb_;
        iv[0] = ack * ppb;
        iv[1] = fc * ppb;
        iv[2] = kSkipInterval * ppb;
        for (int k = 0; k < 3; k++)
            due[k] = iv[k];
    }

    /* Send `bytes` no earlier than `ready`; returns the end of serialisation. */
    double send(double ready, uint32_t bytes)
    {
        /* DLLPs that fell due while the previous TLP was on the wire go right after it. */
        for (bool more = true; more;) {
            more = false;
            for (int k = 0; k < 3; k++) {
                if (due[k] <= free_ps) {
                    free_ps += sz[k] * ppb;
                    busy_ps += static_cast<uint64_t>(sz[k] * ppb);
                    dllp_bytes += static_cast<uint64_t>(sz[k]);
                    due[k] += iv[k];
                    more = true;
                }
            }
        }
        double start = std::max(ready, free_ps);
        /* Those due in the idle stretch before `start` went out then, at no cost, unless the
         * last one is still on the wire at `start`. */
        for (int k = 0; k < 3; k++) {
            if (due[k] >= start)
                continue;
            const double n = std::ceil((start - due[k]) / iv[k]);
            const double last = due[k] + (n - 1) * iv[k];
            due[k] += n * iv[k];
            dllp_bytes += static_cast<uint64_t>(n * sz[k]);
            busy_ps += static_cast<uint64_t>(n * sz[k] * ppb);
            start = std::max(start, last + sz[k] * ppb);
        }
        const double end = start + bytes * ppb;
        free_ps = end;
        busy_ps += static_cast<uint64_t>(bytes * ppb);
        tlp_bytes += bytes;
        return end;
    }
};

} /* namespace */

/* --- LinkParams ------------------------------------------------------------------------------ */

bool LinkParams::parse(const std::string &kv, std::string *err)
{
    std::stringstream ss(kv);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty())
            continue;
        const size_t eq = item.find('=');
        if (eq == std::string::npos) {
            *err = "option '" + item + "' has no value (key=value)";
            return false;
        }
        const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
        char *end = nullptr;
        const double d = std::strtod(val.c_str(), &end);
        const bool num_ok = !val.empty() && *end == '\0';
        const unsigned long long u = std::strtoull(val.c_str(), &end, 0);
        const bool int_ok = !val.empty() && *end == '\0' && val[0] != '-';
        auto need_int = [&](auto *field) {
            if (!int_ok) {
                *err = "bad value for " + key + ": '" + val + "' (an unsigned integer)";
                return false;
            }
            *field = static_cast<std::remove_pointer_t<decltype(field)>>(u);
            return true;
        };
        auto need_num = [&](double *field) {
            if (!num_ok || d < 0) {
                *err = "bad value for " + key + ": '" + val + "' (a number >= 0)";
                return false;
            }
            *field = d;
            return true;
        };
        bool ok;
        if (key == "gen") ok = need_int(&gen);
        else if (key == "lanes") ok = need_int(&lanes);
        else if (key == "mps") ok = need_int(&mps);
        else if (key == "mrrs") ok = need_int(&mrrs);
        else if (key == "rcb") ok = need_int(&rcb);
        else if (key == "dev_mps") ok = need_int(&dev_mps);
        else if (key == "dev_mrrs") ok = need_int(&dev_mrrs);
        else if (key == "mem_read_latency_ns") ok = need_num(&mem_read_latency_ns);
        else if (key == "link_latency_ns") ok = need_num(&link_latency_ns);
        else if (key == "credit_return_ns") ok = need_num(&credit_return_ns);
        else if (key == "ack_limit") ok = need_int(&ack_limit);
        else if (key == "fc_limit") ok = need_int(&fc_limit);
        else if (key == "ph_credits") ok = need_int(&ph_credits);
        else if (key == "pd_credits") ok = need_int(&pd_credits);
        else if (key == "nph_credits") ok = need_int(&nph_credits);
        else if (key == "tx_buf_tlps") ok = need_int(&tx_buf_tlps);
        else if (key == "data_width") ok = need_int(&data_width);
        else if (key == "clk_mhz") ok = need_num(&clk_mhz);
        else if (key == "device_id") ok = need_int(&device_id);
        else if (key == "rc_id") ok = need_int(&rc_id);
        else if (key == "bar0_addr") ok = need_int(&bar0_addr);
        else if (key == "bar0_size") ok = need_int(&bar0_size);
        else if (key == "host_mem_addr") ok = need_int(&host_mem_addr);
        else if (key == "host_mem_size") ok = need_int(&host_mem_size);
        else if (key == "strict") {
            int v = 0;
            ok = need_int(&v);
            strict = v != 0;
        } else {
            *err = "unknown option '" + key + "'";
            return false;
        }
        if (!ok)
            return false;
    }
    return true;
}

bool LinkParams::validate(std::string *err) const
{
    std::ostringstream e;
    if (gen < 1 || gen > 3)
        e << "gen must be 1, 2 or 3 (not " << gen << "); ";
    if (table_index(kLanes, 5, lanes) < 0)
        e << "lanes must be 1, 2, 4, 8 or 16 (not " << lanes << "); ";
    if (!pow2_in(mps, 128, 4096))
        e << "mps must be a power of two in 128..4096 (not " << mps << "); ";
    if (!pow2_in(mrrs, 128, 4096))
        e << "mrrs must be a power of two in 128..4096 (not " << mrrs << "); ";
    if (dev_mps && !pow2_in(dev_mps, 128, 4096))
        e << "dev_mps must be 0 or a power of two in 128..4096; ";
    if (dev_mrrs && !pow2_in(dev_mrrs, 128, 4096))
        e << "dev_mrrs must be 0 or a power of two in 128..4096; ";
    if (rcb != 64 && rcb != 128)
        e << "rcb must be 64 or 128 (not " << rcb << "); ";
    if (data_width != 64 && data_width != 128)
        e << "data_width must be 64 or 128; ";
    if (clk_mhz <= 0)
        e << "clk_mhz must be > 0; ";
    if (ack_limit < 0 || fc_limit < 0)
        e << "ack_limit/fc_limit must be >= 0; ";
    if (ph_credits < 1 || pd_credits < 1 || nph_credits < 1)
        e << "ph/pd/nph credits must be >= 1; ";
    if (pd_credits * 16 < mps)
        e << "pd_credits x 16 B must hold one MPS payload; ";
    if (tx_buf_tlps < 1)
        e << "tx_buf_tlps must be >= 1; ";
    if (host_mem_size == 0 || host_mem_size > (1ull << 32) ||
        host_mem_addr + host_mem_size > (1ull << 32))
        e << "host memory window must be non-empty and below 4 GiB (32-bit DMA); ";
    if (bar0_size == 0 || (bar0_size & (bar0_size - 1)) || (bar0_addr & (bar0_size - 1)))
        e << "bar0_size must be a power of two and bar0_addr aligned to it; ";
    if (bar0_addr < host_mem_addr + host_mem_size && host_mem_addr < bar0_addr + bar0_size)
        e << "BAR0 overlaps host memory; ";
    *err = e.str();
    if (!err->empty())
        err->resize(err->size() - 2);
    return err->empty();
}

double LinkParams::raw_gbps() const
{
    const double gts = gen == 1 ? 2.5 : gen == 2 ? 5.0 : 8.0;
    const double enc = gen <= 2 ? 8.0 / 10.0 : 128.0 / 130.0;
    return gts * enc * lanes;
}

int LinkParams::ack_limit_bytes() const
{
    if (ack_limit)
        return ack_limit;
    const int li = table_index(kLanes, 5, lanes), mi = table_index(kMps, 6, mps);
    return (li < 0 || mi < 0 || gen < 1 || gen > 3) ? 0 : kAckTable[gen - 1][li][mi];
}

int LinkParams::fc_limit_bytes() const
{
    /* pcie-bench's FC_Guide equals its Ack_Limits table. */
    return fc_limit ? fc_limit : ack_limit_bytes();
}

double LinkParams::tlp_gbps() const
{
    const double over = double(kDllpBytes) / ack_limit_bytes() +
                        double(kDllpBytes) / fc_limit_bytes() +
                        double(kSkipBytes) / kSkipInterval;
    return raw_gbps() * (1.0 - over);
}

static int tlp_overhead(int gen, int hdr_bytes) { return (gen >= 3 ? 4 : 2) + kDllOverhead + hdr_bytes; }

double LinkParams::model_write_gbps(uint64_t size) const
{
    const double ntlp = std::ceil(double(size) / mps);
    return tlp_gbps() * size / (size + ntlp * tlp_overhead(gen, 12));
}

double LinkParams::model_read_gbps(uint64_t size) const
{
    const double rx_bytes = size + std::ceil(double(size) / mps) * tlp_overhead(gen, 12);
    const double tx_bytes = std::ceil(double(size) / mrrs) * tlp_overhead(gen, 12);
    return tlp_gbps() * size / std::max(rx_bytes, tx_bytes);
}

std::string LinkParams::to_json() const
{
    std::ostringstream j;
    j << "{\"gen\":" << gen << ",\"lanes\":" << lanes << ",\"mps\":" << mps << ",\"mrrs\":" << mrrs
      << ",\"rcb\":" << rcb << ",\"dev_mps\":" << dev_mps << ",\"dev_mrrs\":" << dev_mrrs
      << ",\"mem_read_latency_ns\":" << mem_read_latency_ns
      << ",\"link_latency_ns\":" << link_latency_ns
      << ",\"credit_return_ns\":" << credit_return_ns << ",\"ack_limit\":" << ack_limit
      << ",\"fc_limit\":" << fc_limit << ",\"ph_credits\":" << ph_credits
      << ",\"pd_credits\":" << pd_credits << ",\"nph_credits\":" << nph_credits
      << ",\"tx_buf_tlps\":" << tx_buf_tlps << ",\"data_width\":" << data_width
      << ",\"clk_mhz\":" << clk_mhz << ",\"device_id\":" << device_id << ",\"rc_id\":" << rc_id
      << ",\"bar0_addr\":" << bar0_addr << ",\"bar0_size\":" << bar0_size
      << ",\"host_mem_addr\":" << host_mem_addr << ",\"host_mem_size\":" << host_mem_size
      << ",\"strict\":" << (strict ? 1 : 0) << ",\"addressing\":32"
      << ",\"raw_gbps\":" << raw_gbps() << ",\"tlp_gbps\":" << tlp_gbps()
      << ",\"ack_limit_bytes\":" << ack_limit_bytes()
      << ",\"fc_limit_bytes\":" << fc_limit_bytes() << "}";
    return j.str();
}

/* --- The model ------------------------------------------------------------------------------- */

struct PcieHostModel::Impl {
    LinkParams p;
    int lanes_per_beat;
    uint64_t period_ps;
    uint64_t cyc = 0;
    std::vector<uint8_t> mem;
    PhyOut out;                       /* pins driven during the current cycle */

    Link up, down;
    int ph, pd, nph;                  /* credits available at the RC */
    std::deque<std::pair<double, Tlp>> credit_returns;

    std::vector<uint32_t> asm_dw;     /* upstream TLP being assembled */
    bool asm_active = false;
    std::deque<Tlp> tx_buf;           /* device-side TX buffer */
    std::deque<Tlp> up_wire;          /* on the link, by arrival time */
    std::deque<ReadJob> jobs;         /* device reads waiting for memory */
    std::deque<Tlp> down_q;           /* waiting for the downstream link */
    std::deque<Tlp> down_wire;        /* on the link / arrived, by arrival time */
    size_t rx_beat = 0;               /* beat of down_wire.front() being presented */

    std::vector<MmioResult> mmio;
    HostRead host_reads[32];
    int mmio_open = 0;
    std::deque<std::pair<uint64_t, uint8_t>> irqs;
    std::vector<std::string> errs;
    std::map<std::string, uint64_t> cnt;

    explicit Impl(const LinkParams &lp)
        : p(lp), lanes_per_beat(lp.data_width / 32),
          period_ps(static_cast<uint64_t>(1e6 / lp.clk_mhz + 0.5)), mem(lp.host_mem_size, 0),
          ph(lp.ph_credits), pd(lp.pd_credits), nph(lp.nph_credits)
    {
        const double ppb = 8000.0 / lp.raw_gbps();
        up.init(ppb, lp.ack_limit_bytes(), lp.fc_limit_bytes());
        down.init(ppb, lp.ack_limit_bytes(), lp.fc_limit_bytes());
        out.id = lp.device_id;
        out.max_payload_size = static_cast<uint16_t>(lp.dev_mps ? lp.dev_mps : lp.mps);
        out.max_request_size = static_cast<uint16_t>(lp.dev_mrrs ? lp.dev_mrrs : lp.mrrs);
        out.link_up = out.msi_enable = out.bus_master_enable = true;
        out.msi_ready = true;
        out.tx_ready = true;
        for (const char *k :
             {"tlps_up_mwr", "tlps_up_mrd", "tlps_up_cpld", "tlps_up_cpl", "tlps_up_msi",
              "tlps_down_mwr", "tlps_down_mrd", "tlps_down_cpld", "tlps_down_cpl",
              "bytes_up_payload", "bytes_down_payload", "tx_stall_cycles", "rx_stall_cycles",
              "credit_wait_ps", "mmio_reads", "mmio_writes", "msis", "errors", "mps_violations",
              "mrrs_violations", "boundary_violations", "bad_address", "malformed",
              "unexpected_completion", "completion_timeouts", "ur_completions"})
            cnt[k] = 0;
    }

    double now() const { return double(cyc) * period_ps; }
    int wire_bytes(const Tlp &t) const { return (p.gen >= 3 ? 4 : 2) + kDllOverhead + int(t.dw.size()) * 4; }

    void error(const char *counter, const std::string &msg, const std::vector<uint32_t> &dw)
    {
        std::ostringstream m;
        char h[16];
        m << "t=" << uint64_t(now() / 1000) << " ns: " << msg << " [hdr";
        for (size_t i = 0; i < std::min<size_t>(4, dw.size()); i++) {
            std::snprintf(h, sizeof h, " %08x", dw[i]);
            m << h;
        }
        m << "]";
        errs.push_back(m.str());
        cnt["errors"]++;
        cnt[counter]++;
        if (p.strict) {
            std::fprintf(stderr, "pcie model (strict): %s\n", m.str().c_str());
            std::abort();
        }
    }

    /* Header helpers. */
    static int fmt(uint32_t dw0) { return (dw0 >> 29) & 7; }
    static int type(uint32_t dw0) { return (dw0 >> 24) & 0x1f; }
    static uint32_t len_dw(uint32_t dw0) { return (dw0 & 0x3ff) ? (dw0 & 0x3ff) : 1024; }
    uint64_t req_addr(const std::vector<uint32_t> &dw) const
    {
        return (fmt(dw[0]) & 1) ? ((uint64_t(dw[2]) << 32) | (dw[3] & ~3u)) : (dw[2] & ~3u);
    }
    bool in_host_mem(uint64_t a, uint64_t n) const
    {
        return a >= p.host_mem_addr && a + n <= p.host_mem_addr + p.host_mem_size;
    }

    Tlp make_cpl(uint16_t req_id, uint8_t tag, uint16_t status, uint32_t bc, uint8_t la,
                 const uint8_t *data, uint32_t ndw)
    {
        Tlp t;
        t.kind = data ? CPLD : CPL;
        t.dw.push_back((data ? 0x4a000000u : 0x0a000000u) | (ndw & 0x3ff));
        t.dw.push_back((uint32_t(p.rc_id) << 16) | (uint32_t(status & 7) << 13) | (bc & 0xfff));
        t.dw.push_back((uint32_t(req_id) << 16) | (uint32_t(tag) << 8) | (la & 0x7f));
        for (uint32_t i = 0; data && i < ndw; i++)
            t.dw.push_back((uint32_t(data[4 * i]) << 24) | (uint32_t(data[4 * i + 1]) << 16) |
                           (uint32_t(data[4 * i + 2]) << 8) | data[4 * i + 3]);
        return t;
    }

    /* --- Upstream: a TLP the device finished sending. Checked here, applied on arrival. --- */
    void tlp_from_device(std::vector<uint32_t> &dw)
    {
        if (dw.size() < 3) {
            error("malformed", "TLP shorter than a header (" + std::to_string(dw.size()) + " DW)", dw);
            return;
        }
        const uint32_t d0 = dw[0];
        const int f = fmt(d0), ty = type(d0);
        const int hdr = (f & 1) ? 4 : 3;
        const uint32_t len = len_dw(d0);
        const bool data = f & 2;
        Tlp t;
        if (ty == 0 && (f == 0 || f == 1)) t.kind = MRD;
        else if (ty == 0 && (f == 2 || f == 3)) t.kind = MWR;
        else if (ty == 0x0a && f == 2) t.kind = CPLD;
        else if (ty == 0x0a && f == 0) t.kind = CPL;
        else {
            error("malformed", "unknown TLP fmt/type " + std::to_string(f) + "/" + std::to_string(ty), dw);
            return;
        }
        if (dw.size() != size_t(hdr) + (data ? len : 0) || int(dw.size()) < hdr) {
            error("malformed", "length field says " + std::to_string(len) + " DW but the TLP carries " +
                  std::to_string(int(dw.size()) - hdr) + " DW of payload", dw);
            if (t.kind == MRD)
                queue_ur(dw);
            return;
        }
        if (t.kind == MRD || t.kind == MWR) {
            const uint64_t a = req_addr(dw);
            const uint16_t rid = dw[1] >> 16;
            const uint32_t bytes = len * 4;
            bool ok = true;
            if (rid != p.device_id) {
                error("malformed", "requester id " + std::to_string(rid) + " is not the device's", dw);
                ok = false;
            }
            if (t.kind == MWR && bytes > uint32_t(p.mps)) {
                error("mps_violations", "MWr of " + std::to_string(bytes) + " B exceeds MPS " +
                      std::to_string(p.mps), dw);
                ok = false;
            }
            if (t.kind == MRD && bytes > uint32_t(p.mrrs)) {
                error("mrrs_violations", "MRd of " + std::to_string(bytes) + " B exceeds MRRS " +
                      std::to_string(p.mrrs), dw);
                ok = false;
            }
            if ((a & 0xfff) + bytes > 4096) {
                error("boundary_violations", std::string(t.kind == MWR ? "MWr" : "MRd") +
                      " crosses a 4 KiB boundary", dw);
                ok = false;
            }
            if (ok && !in_host_mem(a, bytes)) {
                error("bad_address", "address outside host memory", dw);
                ok = false;
            }
            if (!ok) {
                if (t.kind == MRD)
                    queue_ur(dw);
                return;
            }
            if (t.kind == MWR) {
                t.ph = 1;
                t.pd = int((bytes + 15) / 16);
            } else {
                t.nph = 1;
            }
        } else {
            /* Completion for a host MMIO read. */
            const uint8_t tag = (dw[2] >> 8) & 0xff;
            const uint16_t rid = dw[2] >> 16;
            const int status = (dw[1] >> 13) & 7;
            if (tag >= 32 || !host_reads[tag].active) {
                error("unexpected_completion", "completion for tag " + std::to_string(tag) +
                      " with no outstanding host read", dw);
                return;
            }
            if (rid != p.rc_id || status != 0 ||
                (t.kind == CPLD && len * 4 != uint32_t(host_reads[tag].len)) ||
                (t.kind == CPL && status == 0)) {
                error("unexpected_completion", "completion does not match host read (requester " +
                      std::to_string(rid) + ", status " + std::to_string(status) + ", " +
                      std::to_string(len) + " DW)", dw);
            }
        }
        t.dw.swap(dw);
        tx_buf.push_back(std::move(t));
    }

    void queue_ur(const std::vector<uint32_t> &dw)
    {
        Tlp c = make_cpl(dw[1] >> 16, (dw[1] >> 8) & 0xff, 1, 4, dw.size() > 2 ? dw[2] & 0x7f : 0,
                         nullptr, 0);
        c.ready_ps = now() + p.mem_read_latency_ns * 1000;
        cnt["ur_completions"]++;
        down_q.push_back(std::move(c));
    }

    /* Device TX buffer -> upstream link, respecting RC credits. */
    void serialise_up()
    {
        const double t_now = now();
        while (!credit_returns.empty() && credit_returns.front().first <= t_now) {
            const Tlp &r = credit_returns.front().second;
            ph += r.ph;
            pd += r.pd;
            nph += r.nph;
            credit_returns.pop_front();
        }
        while (!tx_buf.empty() && up.free_ps < t_now + period_ps) {
            Tlp &t = tx_buf.front();
            if (t.ph > ph || t.pd > pd || t.nph > nph) {
                cnt["credit_wait_ps"] += period_ps;
                break;
            }
            ph -= t.ph;
            pd -= t.pd;
            nph -= t.nph;
            const double end = up.send(std::max(t_now, t.ready_ps), wire_bytes(t));
            t.arrival_ps = end + p.link_latency_ns * 1000;
            cnt[std::string("tlps_up_") + kind_name(t.kind)]++;
            up_wire.push_back(std::move(t));
            tx_buf.pop_front();
        }
    }

    /* TLPs that reached the RC. */
    void arrive_up()
    {
        const double t_now = now();
        while (!up_wire.empty() && up_wire.front().arrival_ps <= t_now) {
            Tlp t = std::move(up_wire.front());
            up_wire.pop_front();
            const std::vector<uint32_t> &dw = t.dw;
            const int hdr = (fmt(dw[0]) & 1) ? 4 : 3;
            if (t.ph || t.pd || t.nph) {
                Tlp ret;
                ret.ph = t.ph;
                ret.pd = t.pd;
                ret.nph = t.nph;
                credit_returns.emplace_back(t.arrival_ps + p.credit_return_ns * 1000, std::move(ret));
            }
            if (t.kind == MSI) {
                irqs.emplace_back(static_cast<uint64_t>(t.arrival_ps), t.msi_vector);
                cnt["msis"]++;
            } else if (t.kind == MWR) {
                const uint64_t a = req_addr(dw) - p.host_mem_addr;
                const uint32_t n = len_dw(dw[0]);
                const int fbe = dw[1] & 0xf, lbe = (dw[1] >> 4) & 0xf;
                for (uint32_t i = 0; i < n; i++) {
                    const int be = i == 0 ? fbe : (i == n - 1 ? lbe : 0xf);
                    const uint32_t v = dw[hdr + i];
                    for (int b = 0; b < 4; b++)
                        if (be & (1 << b))
                            mem[a + 4 * i + b] = uint8_t(v >> (24 - 8 * b));
                }
                cnt["bytes_up_payload"] += n * 4;
            } else if (t.kind == MRD) {
                ReadJob j;
                const uint32_t n = len_dw(dw[0]);
                const int fbe = dw[1] & 0xf, lbe = n == 1 ? 0 : (dw[1] >> 4) & 0xf;
                j.req_id = dw[1] >> 16;
                j.tag = (dw[1] >> 8) & 0xff;
                j.addr = req_addr(dw);
                j.len = n * 4;
                j.lead = fbe ? __builtin_ctz(fbe) : 0;
                const int last = n == 1 ? fbe : lbe;
                j.trail = last ? 3 - (31 - __builtin_clz(unsigned(last))) : 0;
                j.ready_ps = t.arrival_ps + p.mem_read_latency_ns * 1000;
                jobs.push_back(j);
            } else {
                const uint8_t tag = (dw[2] >> 8) & 0xff;
                HostRead &hr = host_reads[tag];
                if (tag < 32 && hr.active) {
                    MmioResult &r = mmio[hr.id];
                    r.status = (dw[1] >> 13) & 7;
                    uint64_t v = 0;
                    for (size_t i = 3; i < dw.size() && i < 5; i++) {
                        const uint32_t d = dw[i];
                        const uint64_t le = (d >> 24) | ((d >> 8) & 0xff00) | ((d << 8) & 0xff0000) |
                                            (uint64_t(d & 0xff) << 24);
                        v |= le << (32 * (i - 3));
                    }
                    r.value = r.status ? ~uint64_t(0) : v;
                    r.done = true;
                    r.done_ps = static_cast<uint64_t>(t.arrival_ps);
                    hr.active = false;
                    mmio_open--;
                    cnt["bytes_up_payload"] += (dw.size() - 3) * 4;
                }
            }
        }
    }

    /* Read jobs whose data is ready -> completions split at RCB and MPS. */
    void complete_reads()
    {
        while (!jobs.empty() && jobs.front().ready_ps < now() + period_ps) {
            const ReadJob j = jobs.front();
            jobs.pop_front();
            const uint64_t end = j.addr + j.len;
            uint64_t cur = j.addr;
            uint32_t remaining = j.len - j.lead - j.trail;
            bool first = true;
            while (cur < end) {
                uint64_t next = std::min<uint64_t>(end, cur + p.mps);
                if (next < end) {
                    const uint64_t al = next - next % p.rcb;
                    if (al > cur)
                        next = al;
                }
                const uint32_t ndw = uint32_t((next - cur) / 4);
                const uint8_t la = uint8_t((cur + (first ? j.lead : 0)) & 0x7f);
                Tlp c = make_cpl(j.req_id, j.tag, 0, remaining & 0xfff, la,
                                 &mem[cur - p.host_mem_addr], ndw);
                c.ready_ps = j.ready_ps;
                remaining -= uint32_t(next - cur) - (first ? j.lead : 0) -
                             (next == end ? j.trail : 0);
                down_q.push_back(std::move(c));
                cur = next;
                first = false;
            }
        }
    }

    void serialise_down()
    {
        const double t_now = now();
        while (!down_q.empty() && down.free_ps < t_now + period_ps &&
               down_q.front().ready_ps < t_now + period_ps) {
            Tlp &t = down_q.front();
            const double end = down.send(std::max(t_now, t.ready_ps), wire_bytes(t));
            t.arrival_ps = end + p.link_latency_ns * 1000;
            cnt[std::string("tlps_down_") + kind_name(t.kind)]++;
            if (t.kind == MWR || t.kind == CPLD)
                cnt["bytes_down_payload"] += (t.dw.size() - 3) * 4;
            down_wire.push_back(std::move(t));
            down_q.pop_front();
        }
    }

    void present_rx(PhyOut *o)
    {
        o->rx_valid = o->rx_first = o->rx_last = false;
        o->rx_be = 0;
        std::memset(o->rx_dat, 0, sizeof o->rx_dat);
        if (down_wire.empty() || down_wire.front().arrival_ps > now())
            return;
        const Tlp &t = down_wire.front();
        const size_t base = rx_beat * lanes_per_beat;
        o->rx_valid = true;
        o->rx_first = rx_beat == 0;
        o->rx_last = base + lanes_per_beat >= t.dw.size();
        for (int l = 0; l < lanes_per_beat; l++) {
            if (base + l < t.dw.size()) {
                o->rx_dat[l] = t.dw[base + l];
                o->rx_be |= uint16_t(0xf << (4 * l));
            }
        }
    }

    void check_timeouts()
    {
        if (!mmio_open)
            return;
        for (HostRead &hr : host_reads) {
            if (!hr.active)
                continue;
            MmioResult &r = mmio[hr.id];
            if (now() - double(r.issue_ps) > kCplTimeoutPs) {
                r.done = true;
                r.status = 0xffff;
                r.value = ~uint64_t(0);
                r.done_ps = uint64_t(now());
                hr.active = false;
                mmio_open--;
                error("completion_timeouts", "host MMIO read " + std::to_string(hr.id) +
                      " got no completion in 50 us", {});
            }
        }
    }

    void cycle(const PhyIn &in, PhyOut *o)
    {
        /* Handshakes at this edge, decided by the pins driven during this cycle (out). */
        if (in.tx_valid && out.tx_ready) {
            if (in.tx_first || !asm_active) {
                if (asm_active && in.tx_first)
                    error("malformed", "new TLP started before the previous one ended", asm_dw);
                asm_dw.clear();
                asm_active = true;
            }
            for (int l = 0; l < lanes_per_beat; l++)
                if ((in.tx_be >> (4 * l)) & 0xf)
                    asm_dw.push_back(in.tx_dat[l]);
            if (in.tx_last) {
                asm_active = false;
                tlp_from_device(asm_dw);
            }
        } else if (in.tx_valid) {
            cnt["tx_stall_cycles"]++;
        }
        if (in.msi_valid && out.msi_ready) {
            Tlp m;
            m.kind = MSI;
            m.msi_vector = in.msi_dat;
            m.dw.assign(4, 0);        /* 3DW MWr header + 1 DW of message data */
            m.ph = 1;
            m.pd = 1;
            tx_buf.push_back(std::move(m));
        }
        if (out.rx_valid) {
            if (in.rx_ready) {
                Tlp &t = down_wire.front();
                rx_beat++;
                if (rx_beat * lanes_per_beat >= t.dw.size()) {
                    if (t.mmio_id >= 0 && t.kind == MWR) {
                        MmioResult &r = mmio[t.mmio_id];
                        r.done = true;
                        r.done_ps = uint64_t(now());
                        mmio_open--;
                    }
                    down_wire.pop_front();
                    rx_beat = 0;
                }
            } else {
                cnt["rx_stall_cycles"]++;
            }
        }

        cyc++;
        serialise_up();
        arrive_up();
        complete_reads();
        serialise_down();
        check_timeouts();

        out.tx_ready = tx_buf.size() < size_t(p.tx_buf_tlps);
        present_rx(&out);
        *o = out;
    }

    int mmio_request(uint64_t off, uint64_t value, int len, bool write)
    {
        const int id = int(mmio.size());
        MmioResult r;
        r.issue_ps = uint64_t(now());
        mmio.push_back(r);
        if ((len != 4 && len != 8) || (off & (len - 1)) || off + len > p.bar0_size) {
            MmioResult &m = mmio.back();
            m.done = true;
            m.status = 0xffff;
            m.value = ~uint64_t(0);
            error("bad_address", "host MMIO of " + std::to_string(len) + " B at BAR0 offset " +
                  std::to_string(off) + " is not a naturally aligned 4/8-byte access inside BAR0", {});
            return id;
        }
        Tlp t;
        t.kind = write ? MWR : MRD;
        t.mmio_id = id;
        t.ready_ps = now();
        const uint32_t ndw = uint32_t(len / 4);
        int tag = 0;
        if (!write) {
            while (tag < 32 && host_reads[tag].active)
                tag++;
            if (tag == 32) {
                mmio.back().done = true;
                mmio.back().status = 0xffff;
                error("malformed", "more than 32 host MMIO reads outstanding", {});
                return id;
            }
            host_reads[tag].active = true;
            host_reads[tag].id = id;
            host_reads[tag].len = len;
        }
        t.dw.push_back((write ? 0x40000000u : 0u) | ndw);
        t.dw.push_back((uint32_t(p.rc_id) << 16) | (uint32_t(tag) << 8) |
                       (ndw == 2 ? 0xf0u : 0u) | 0xfu);
        t.dw.push_back(uint32_t(p.bar0_addr + off));
        for (uint32_t i = 0; write && i < ndw; i++) {
            const uint32_t v = uint32_t(value >> (32 * i));
            t.dw.push_back(((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >> 8) & 0xff00) | (v >> 24));
        }
        cnt[write ? "mmio_writes" : "mmio_reads"]++;
        mmio_open++;
        down_q.push_back(std::move(t));
        return id;
    }
};

PcieHostModel::PcieHostModel(const LinkParams &p) : impl_(new Impl(p)) {}
PcieHostModel::~PcieHostModel() = default;
void PcieHostModel::cycle(const PhyIn &in, PhyOut *out) { impl_->cycle(in, out); }
uint64_t PcieHostModel::now_ps() const { return impl_->cyc * impl_->period_ps; }
uint64_t PcieHostModel::cycles() const { return impl_->cyc; }
uint8_t *PcieHostModel::host_mem() { return impl_->mem.data(); }
uint64_t PcieHostModel::host_mem_addr() const { return impl_->p.host_mem_addr; }
uint64_t PcieHostModel::host_mem_size() const { return impl_->p.host_mem_size; }
int PcieHostModel::mmio_write(uint64_t off, uint64_t v, int len)
{
    return impl_->mmio_request(off, v, len, true);
}
int PcieHostModel::mmio_read(uint64_t off, int len) { return impl_->mmio_request(off, 0, len, false); }
MmioResult PcieHostModel::mmio_result(int id) const
{
    return (id >= 0 && size_t(id) < impl_->mmio.size()) ? impl_->mmio[id] : MmioResult{};
}
int PcieHostModel::mmio_outstanding() const { return impl_->mmio_open; }
bool PcieHostModel::irq_pending() const { return !impl_->irqs.empty(); }
bool PcieHostModel::irq_pop(uint64_t *t, uint8_t *v)
{
    if (impl_->irqs.empty())
        return false;
    *t = impl_->irqs.front().first;
    *v = impl_->irqs.front().second;
    impl_->irqs.pop_front();
    return true;
}
const std::vector<std::string> &PcieHostModel::errors() const { return impl_->errs; }
std::map<std::string, uint64_t> PcieHostModel::counters() const
{
    std::map<std::string, uint64_t> c = impl_->cnt;
    c["cycles"] = impl_->cyc;
    c["link_busy_ps_up"] = impl_->up.busy_ps;
    c["link_busy_ps_down"] = impl_->down.busy_ps;
    c["dllp_bytes_up"] = impl_->up.dllp_bytes;
    c["dllp_bytes_down"] = impl_->down.dllp_bytes;
    c["bytes_up_wire"] = impl_->up.tlp_bytes;
    c["bytes_down_wire"] = impl_->down.tlp_bytes;
    return c;
}
const LinkParams &PcieHostModel::params() const { return impl_->p; }

} /* namespace nicsim */
