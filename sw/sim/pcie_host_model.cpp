/*
 * pcie_host_model.cpp: the PCIe root complex, link and host memory behind the device's raw TLP
 * streams (see pcie_host_model.h for the stream format and the timing model).
 *
 * Structure. Time is in picoseconds; cycle k of the PHY clock is at k * period (the period is
 * rounded to a whole ps, as the harness does). Each cycle() first does the handshakes of the
 * edge at `now` (device TX beat, device RX beat, MSI), then advances `now` by one period and
 * runs every link/host event up to the new `now` in time order, then drives the pins.
 *
 *   upstream (device -> RC)   beats are assembled into a TLP; its last beat puts it, checked, in
 *                             the device-side TX buffer (tx_buf_tlps). The head starts on the
 *                             wire when the link is free and the RC has PH/PD/NPH credits; it
 *                             reaches the RC link_latency_ns after its last wire byte, where it
 *                             is applied (MWr), answered (MRd), matched (Cpl/CplD) or becomes
 *                             an interrupt (MSI); its credits come back credit_return_ns later.
 *   downstream (RC -> device) host MMIO requests and completions to device reads share one
 *                             serialiser: of the two queue heads the one ready first goes
 *                             (MMIO: when issued; completions: mem_read_latency_ns after the
 *                             MRd arrived). A TLP is offered to the device, beat by beat, from
 *                             its arrival (last wire byte + link latency) on.
 *
 * Wire cost of a TLP: framing (Gen1/2: 2 B STP/END; Gen3: 4 B, the 128b/130b STP token) + 6 B DLL
 * (2 B sequence number + 4 B LCRC) + 12/16 B header + payload. pcie-bench charges 8 B for framing
 * + DLL at every generation; we differ only for Gen3 (10 B). DLLPs: per direction, an 8 B Ack
 * every ack_limit byte times, an 8 B UpdateFC every fc_limit byte times, a 4 B SKIP every 1538
 * byte times, on a wall-clock grid; one falling due while the wire is idle is free, one falling
 * due while a TLP (or a DLLP after it) is on the wire is sent right after that TLP and delays the
 * next one. Under saturation this gives pcie-bench's TLP_bw = raw x (1 - 8/ack - 8/fc - 4/1538).
 * A link is one byte-serial pipe of the raw rate (as in pcie-bench); the device's stream width
 * and clock only bound how fast it hands TLPs to the TX buffer.
 *
 * Completions to a device MRd cover [first enabled byte, last enabled byte] of the request; each
 * ends at the largest RCB-aligned address within MPS bytes of payload from the dword its data
 * starts in (the last one ends where the request does), so an unaligned request's first
 * completion is shorter. lower_address is the address of its first byte, byte_count the bytes
 * left including it (PCIe Base Spec byte-count rules, byte enables included).
 */
#include "pcie_host_model.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace nicsim {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kDllBytes = 6;              /* sequence number 2 + LCRC 4 */
constexpr int kAckBytes = 8, kFcBytes = 8; /* a DLLP with its framing */
constexpr int kSkipBytes = 4, kSkipInterval = 1538;
constexpr double kCplTimeoutPs = 50e6;    /* host MMIO read completion timeout: 50 us */
constexpr int kTags = 32;                 /* tags the RC uses for MMIO reads: 0..31 */
constexpr int kMaxTlpDw = 4 + 1024;       /* 4DW header + 4 KiB payload */
constexpr size_t kMaxErrorMessages = 10000;

/* fmt[2:0] type[4:0] (DW0 bits 31..24) of the TLPs handled here. */
constexpr uint8_t kMRd32 = 0x00, kMRd64 = 0x20, kMWr32 = 0x40, kMWr64 = 0x60;
constexpr uint8_t kCpl = 0x0a, kCplD = 0x4a;
constexpr uint32_t kStatusSC = 0, kStatusUR = 1;

/* Ack_Limits / FC_Guide of pcie-bench's model/pcie.py (identical tables there), byte times,
 * indexed [gen-1][lanes x1,x2,x4,x8,x16][MPS 128..4096]. */
constexpr int kAckFcTable[3][5][6] = {
    {{237, 416, 559, 1071, 2095, 4143},
     {128, 217, 289, 545, 1057, 2081},
     {73, 118, 154, 282, 538, 1050},
     {67, 107, 86, 150, 278, 534},
     {48, 72, 86, 150, 278, 534}},
    {{288, 467, 610, 1122, 2146, 4194},
     {179, 268, 340, 596, 1108, 2132},
     {124, 169, 205, 333, 589, 1101},
     {118, 158, 137, 201, 329, 585},
     {99, 123, 137, 201, 329, 585}},
    {{333, 512, 655, 1167, 2191, 4239},
     {224, 313, 385, 641, 1153, 2177},
     {169, 214, 250, 378, 634, 1146},
     {163, 203, 182, 246, 374, 630},
     {144, 168, 182, 246, 374, 630}},
};

int size_index(int bytes)
{
    for (int i = 0, s = 128; i < 6; i++, s *= 2)
        if (bytes == s)
            return i;
    return -1;
}

int lanes_index(int lanes)
{
    for (int i = 0, l = 1; i < 5; i++, l *= 2)
        if (lanes == l)
            return i;
    return -1;
}

int table_limit(const LinkParams &p)
{
    const int li = lanes_index(p.lanes), si = size_index(p.mps);
    if (p.gen < 1 || p.gen > 3 || li < 0 || si < 0)
        return 0;
    return kAckFcTable[p.gen - 1][li][si];
}

/* Framing + DLL bytes of one TLP on the wire. */
int tlp_overhead_bytes(int gen) { return (gen >= 3 ? 4 : 2) + kDllBytes; }

/* Lowest / highest set bit of a non-zero 4-bit byte-enable field (3 / 0 for 0). */
int ctz4(unsigned be) { return be & 1 ? 0 : be & 2 ? 1 : be & 4 ? 2 : 3; }
int msb4(unsigned be) { return be & 8 ? 3 : be & 4 ? 2 : be & 2 ? 1 : 0; }

/* Bytes a memory request of len_dw dwords covers given its byte enables (PCIe Base Spec,
 * completion Byte Count rules); 1 for a zero-length read (len 1, first BE 0). */
uint32_t request_byte_count(uint32_t len_dw, unsigned fbe, unsigned lbe)
{
    if (len_dw == 1)
        return fbe == 0 ? 1 : static_cast<uint32_t>(msb4(fbe) - ctz4(fbe) + 1);
    return len_dw * 4 - ctz4(fbe) - (3 - msb4(lbe));
}

/* Host value <-> payload dword: the host's byte at the lowest address is bits 31..24. */
uint32_t bswap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

std::string fmt_double(double d)
{
    char b[40];
    std::snprintf(b, sizeof b, "%.12g", d);
    return b;
}

/* A FIFO on a power-of-two ring. push_slot() hands back a recycled element (with whatever
 * capacity its vectors had): the caller resets it. Steady-state traffic allocates nothing. */
template <class T>
class Fifo {
public:
    bool empty() const { return n_ == 0; }
    size_t size() const { return n_; }
    T &front() { return buf_[head_]; }
    const T &front() const { return buf_[head_]; }
    T &push_slot()
    {
        if (n_ == buf_.size())
            grow();
        T &s = buf_[(head_ + n_) & (buf_.size() - 1)];
        n_++;
        return s;
    }
    void pop()
    {
        head_ = (head_ + 1) & (buf_.size() - 1);
        n_--;
    }

private:
    void grow()
    {
        std::vector<T> nb(buf_.empty() ? 16 : buf_.size() * 2);
        for (size_t i = 0; i < buf_.size(); i++)
            nb[i] = std::move(buf_[(head_ + i) & (buf_.size() - 1)]);
        buf_.swap(nb);
        head_ = 0;
    }
    std::vector<T> buf_;
    size_t head_ = 0, n_ = 0;
};

/* One direction of the link: a byte-serial pipe with DLLPs on a wall-clock grid. */
struct Link {
    double bt = 0;                    /* ps per wire byte */
    double ack_iv = 0, fc_iv = 0, skip_iv = 0;
    double next_ack = 0, next_fc = 0, next_skip = 0;
    double free_at = 0;               /* the wire is free from here */
    double busy_ps = 0;
    uint64_t tlp_bytes = 0, dllp_bytes = 0;

    void init(double byte_ps, int ack_limit, int fc_limit)
    {
        bt = byte_ps;
        ack_iv = ack_limit * bt;
        fc_iv = fc_limit * bt;
        skip_iv = kSkipInterval * bt;
        next_ack = ack_iv;
        next_fc = fc_iv;
        next_skip = skip_iv;
    }

    /* DLLPs that fell due on an idle wire before s went out for free. */
    static void skip_idle(double *next, double iv, double s)
    {
        if (*next < s)
            *next += std::ceil((s - *next) / iv) * iv;
    }

    static bool due(double *next, double iv, double fin)
    {
        if (*next >= fin)
            return false;
        *next += iv;
        return true;
    }

    /* Put a TLP of `bytes` wire bytes on the wire at s (>= free_at); returns the time its last
     * byte left. DLLPs due meanwhile follow it and keep the wire busy. */
    double send(double s, int bytes)
    {
        skip_idle(&next_ack, ack_iv, s);
        skip_idle(&next_fc, fc_iv, s);
        skip_idle(&next_skip, skip_iv, s);
        const double end = s + bytes * bt;
        double fin = end;
        for (bool more = true; more;) {
            int n = 0;
            if (due(&next_ack, ack_iv, fin))
                n += kAckBytes;
            if (due(&next_fc, fc_iv, fin))
                n += kFcBytes;
            if (due(&next_skip, skip_iv, fin))
                n += kSkipBytes;
            fin += n * bt;
            dllp_bytes += n;
            more = n > 0;
        }
        free_at = fin;
        busy_ps += fin - s;
        tlp_bytes += bytes;
        return end;
    }
};

enum class Kind : uint8_t { Bad, MWr, MRd, CplD, Cpl, Msi };

/* A device TLP between its last beat and its arrival at the root complex. */
struct UpTlp {
    Kind kind = Kind::Bad;
    bool ok = false;                  /* passed the checks: apply at the RC */
    bool answer_ur = false;           /* bad MRd: answer with an UR completion */
    uint32_t hdr[4] = {0, 0, 0, 0};
    int nhdr = 0;                     /* header dwords kept (for messages) */
    uint32_t len_dw = 0;              /* length field, 0 read as 1024 */
    uint64_t addr = 0;
    uint16_t req_id = 0;
    uint8_t tag = 0, fbe = 0, lbe = 0, vector = 0;
    int wire = 0;                     /* bytes on the wire */
    int ph = 0, pd = 0, nph = 0;      /* credits it takes */
    double enq = 0, arr = 0;
    std::vector<uint32_t> pl;         /* payload dwords (MWr, CplD) */

    void reset()
    {
        kind = Kind::Bad;
        ok = answer_ur = false;
        std::fill(hdr, hdr + 4, 0u);
        nhdr = 0;
        len_dw = 0;
        addr = 0;
        req_id = 0;
        tag = fbe = lbe = vector = 0;
        wire = ph = pd = nph = 0;
        enq = arr = 0;
        pl.clear();
    }
};

struct CreditReturn {
    double t;
    int ph, pd, nph;
};

struct MmioReq {
    int id;
    bool write;
    uint64_t off, value;
    int len;
    double ready;
};

/* Completions owed for one device MRd: bytes [addr, end) still to send. */
struct CplJob {
    double ready;
    uint64_t addr, end;
    uint16_t req_id;
    uint8_t tag;
    bool ur;
};

/* A host->device TLP on its way to the device, then offered beat by beat. */
struct DnTlp {
    double arr = 0;
    int mmio_id = -1;                 /* MMIO write: done when its last beat is taken */
    std::vector<uint32_t> dw;         /* header + payload */
};

struct MmioInfo {
    bool write = false;
    int len = 0;
    uint64_t off = 0;
    int tag = -1;
};

struct Irq {
    uint64_t t;
    uint8_t vector;
};

struct Counters {
    uint64_t tlps_up_mwr = 0, tlps_up_mrd = 0, tlps_up_cpld = 0, tlps_up_cpl = 0,
             tlps_up_msi = 0, tlps_up_bad = 0;
    uint64_t tlps_down_mwr = 0, tlps_down_mrd = 0, tlps_down_cpld = 0, tlps_down_cpl = 0;
    uint64_t bytes_up_payload = 0, bytes_down_payload = 0;
    uint64_t tx_stall_cycles = 0, rx_stall_cycles = 0;
    double credit_wait_ps = 0;
    uint64_t credit_waits = 0;
    uint64_t mmio_reads = 0, mmio_writes = 0, msis = 0, errors = 0;
    uint64_t mps_violations = 0, mrrs_violations = 0, boundary_violations = 0, bad_address = 0;
    uint64_t unexpected_completion = 0, completion_timeouts = 0;
    uint64_t unsupported_tlps = 0, length_errors = 0, be_errors = 0, framing_errors = 0;
    uint64_t byte_enable_errors = 0, poisoned_tlps = 0, bad_mmio = 0, ur_completions = 0;
};

/* Calls f(name, field) for every LinkParams field, in declaration order. */
template <class P, class F>
void visit_fields(P &p, F &&f)
{
    f("gen", p.gen);
    f("lanes", p.lanes);
    f("mps", p.mps);
    f("mrrs", p.mrrs);
    f("rcb", p.rcb);
    f("dev_mps", p.dev_mps);
    f("dev_mrrs", p.dev_mrrs);
    f("mem_read_latency_ns", p.mem_read_latency_ns);
    f("link_latency_ns", p.link_latency_ns);
    f("credit_return_ns", p.credit_return_ns);
    f("ack_limit", p.ack_limit);
    f("fc_limit", p.fc_limit);
    f("ph_credits", p.ph_credits);
    f("pd_credits", p.pd_credits);
    f("nph_credits", p.nph_credits);
    f("tx_buf_tlps", p.tx_buf_tlps);
    f("data_width", p.data_width);
    f("clk_mhz", p.clk_mhz);
    f("device_id", p.device_id);
    f("rc_id", p.rc_id);
    f("bar0_addr", p.bar0_addr);
    f("bar0_size", p.bar0_size);
    f("host_mem_addr", p.host_mem_addr);
    f("host_mem_size", p.host_mem_size);
    f("strict", p.strict);
}

/* Unsigned: decimal or 0x-hex, nothing else (no sign, no spaces, no octal). */
bool parse_u64(const std::string &s, uint64_t *v)
{
    const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
    const std::string digits = s.substr(hex ? 2 : 0);
    if (digits.empty() ||
        digits.find_first_not_of(hex ? "0123456789abcdefABCDEF" : "0123456789") !=
            std::string::npos)
        return false;
    errno = 0;
    const unsigned long long r = std::strtoull(digits.c_str(), nullptr, hex ? 16 : 10);
    if (errno)
        return false;
    *v = r;
    return true;
}

bool parse_value(const std::string &s, int *v, std::string *expect)
{
    *expect = "an integer (decimal or 0x-hex)";
    const bool neg = !s.empty() && s[0] == '-';
    uint64_t u;
    if (!parse_u64(neg ? s.substr(1) : s, &u) || u > static_cast<uint64_t>(INT32_MAX))
        return false;
    *v = neg ? -static_cast<int>(u) : static_cast<int>(u);
    return true;
}

bool parse_value(const std::string &s, uint16_t *v, std::string *expect)
{
    *expect = "an integer in 0..0xffff";
    uint64_t u;
    if (!parse_u64(s, &u) || u > 0xffff)
        return false;
    *v = static_cast<uint16_t>(u);
    return true;
}

bool parse_value(const std::string &s, uint64_t *v, std::string *expect)
{
    *expect = "an unsigned integer (decimal or 0x-hex)";
    return parse_u64(s, v);
}

bool parse_value(const std::string &s, double *v, std::string *expect)
{
    *expect = "a number";
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0])))
        return false;
    char *end = nullptr;
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    if (errno || *end || !std::isfinite(d))
        return false;
    *v = d;
    return true;
}

bool parse_value(const std::string &s, bool *v, std::string *expect)
{
    *expect = "0 or 1";
    if (s != "0" && s != "1")
        return false;
    *v = s == "1";
    return true;
}

} /* namespace */

/* ------------------------------------------------------------------------------------------ */
/* LinkParams                                                                                  */

bool LinkParams::parse(const std::string &kv, std::string *err)
{
    LinkParams tmp = *this;           /* all or nothing */
    size_t pos = 0;
    while (pos <= kv.size()) {
        size_t comma = kv.find(',', pos);
        if (comma == std::string::npos)
            comma = kv.size();
        const std::string item = kv.substr(pos, comma - pos);
        pos = comma + 1;
        if (item.empty())
            continue;
        const size_t eq = item.find('=');
        if (eq == std::string::npos) {
            *err = "'" + item + "': expected key=value";
            return false;
        }
        const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
        bool found = false, good = false;
        std::string expect, known;
        visit_fields(tmp, [&](const char *name, auto &field) {
            known += known.empty() ? name : std::string(", ") + name;
            if (found || key != name)
                return;
            found = true;
            good = parse_value(val, &field, &expect);
        });
        if (!found) {
            *err = "unknown key '" + key + "' (known: " + known + ")";
            return false;
        }
        if (!good) {
            *err = "bad value for " + key + ": '" + val + "' (expected " + expect + ")";
            return false;
        }
    }
    *this = tmp;
    return true;
}

bool LinkParams::validate(std::string *err) const
{
    auto fail = [&](const std::string &m) {
        *err = m;
        return false;
    };
    auto size_ok = [](int v) { return size_index(v) >= 0; };
    const std::string pow2 = "a power of two in 128..4096";
    if (gen < 1 || gen > 3)
        return fail("gen=" + std::to_string(gen) + ": must be 1, 2 or 3");
    if (lanes_index(lanes) < 0)
        return fail("lanes=" + std::to_string(lanes) + ": must be 1, 2, 4, 8 or 16");
    if (!size_ok(mps))
        return fail("mps=" + std::to_string(mps) + ": must be " + pow2);
    if (!size_ok(mrrs))
        return fail("mrrs=" + std::to_string(mrrs) + ": must be " + pow2);
    if (rcb != 64 && rcb != 128)
        return fail("rcb=" + std::to_string(rcb) + ": must be 64 or 128");
    if (dev_mps != 0 && !size_ok(dev_mps))
        return fail("dev_mps=" + std::to_string(dev_mps) + ": must be 0 (= mps) or " + pow2);
    if (dev_mrrs != 0 && !size_ok(dev_mrrs))
        return fail("dev_mrrs=" + std::to_string(dev_mrrs) + ": must be 0 (= mrrs) or " + pow2);
    const std::pair<const char *, double> lats[] = {
        {"mem_read_latency_ns", mem_read_latency_ns},
        {"link_latency_ns", link_latency_ns},
        {"credit_return_ns", credit_return_ns},
    };
    for (const auto &l : lats)
        if (!(l.second >= 0) || !(l.second <= 1e9))
            return fail(std::string(l.first) + "=" + fmt_double(l.second) +
                        ": must be in 0..1e9 ns");
    if (ack_limit < 0 || (ack_limit != 0 && ack_limit <= kAckBytes))
        return fail("ack_limit=" + std::to_string(ack_limit) +
                    ": must be 0 (pcie-bench table) or more than the 8-byte Ack DLLP");
    if (fc_limit < 0 || (fc_limit != 0 && fc_limit <= kFcBytes))
        return fail("fc_limit=" + std::to_string(fc_limit) +
                    ": must be 0 (pcie-bench table) or more than the 8-byte UpdateFC DLLP");
    if (!(tlp_gbps() > 0))
        return fail("ack_limit/fc_limit leave no link time for TLPs (tlp_gbps <= 0)");
    if (ph_credits < 1)
        return fail("ph_credits=" + std::to_string(ph_credits) + ": must be >= 1");
    if (nph_credits < 1)
        return fail("nph_credits=" + std::to_string(nph_credits) + ": must be >= 1");
    if (pd_credits < mps / 16)
        return fail("pd_credits=" + std::to_string(pd_credits) + ": must be >= mps/16 = " +
                    std::to_string(mps / 16) + " (room for one MPS payload)");
    if (tx_buf_tlps < 1)
        return fail("tx_buf_tlps=" + std::to_string(tx_buf_tlps) + ": must be >= 1");
    if (data_width != 64 && data_width != 128)
        return fail("data_width=" + std::to_string(data_width) + ": must be 64 or 128");
    if (!(clk_mhz >= 1) || !(clk_mhz <= 1000))
        return fail("clk_mhz=" + fmt_double(clk_mhz) + ": must be in 1..1000");
    if (!is_pow2(bar0_size) || bar0_size < 16 || (bar0_addr & (bar0_size - 1)) ||
        bar0_addr + bar0_size > (1ull << 32))
        return fail("bar0_addr/bar0_size: BAR0 must be a power of two >= 16 bytes, aligned to "
                    "its size, below 4 GiB (host MMIO uses 3DW requests)");
    if (host_mem_size == 0 || host_mem_size > (1ull << 32) || (host_mem_addr & 0xfff) ||
        host_mem_addr + host_mem_size < host_mem_addr)
        return fail("host_mem_addr/host_mem_size: the window must be 4 KiB aligned and 1 byte "
                    "to 4 GiB long");
    if (host_mem_addr < bar0_addr + bar0_size && bar0_addr < host_mem_addr + host_mem_size)
        return fail("the host memory window overlaps BAR0");
    return true;
}

double LinkParams::raw_gbps() const
{
    const double gts = gen == 1 ? 2.5 : gen == 2 ? 5.0 : 8.0;
    const double enc = gen >= 3 ? 128.0 / 130.0 : 8.0 / 10.0;
    return gts * lanes * enc;
}

int LinkParams::ack_limit_bytes() const { return ack_limit ? ack_limit : table_limit(*this); }

int LinkParams::fc_limit_bytes() const { return fc_limit ? fc_limit : table_limit(*this); }

double LinkParams::tlp_gbps() const
{
    const int ack = ack_limit_bytes(), fc = fc_limit_bytes();
    if (ack <= 0 || fc <= 0)
        return 0;
    const double overhead = double(kAckBytes) / ack + double(kFcBytes) / fc +
                            double(kSkipBytes) / kSkipInterval;
    return raw_gbps() * (1.0 - overhead);
}

double LinkParams::model_write_gbps(uint64_t size) const
{
    if (size == 0 || mps <= 0)
        return 0;
    const uint64_t tlps = (size + mps - 1) / mps;
    const double raw_bytes = double(size) + double(tlps) * (tlp_overhead_bytes(gen) + 12);
    return tlp_gbps() * double(size) / raw_bytes;
}

double LinkParams::model_read_gbps(uint64_t size) const
{
    /* pcie-bench mem_bw.read(), BW_RAW = TLP_bw both ways, MPS-sized completions. */
    if (size == 0 || mps <= 0 || mrrs <= 0)
        return 0;
    const double hdr = tlp_overhead_bytes(gen) + 12;
    const double bw = tlp_gbps();
    const double raw_tx = double((size + mrrs - 1) / mrrs) * hdr;             /* MRds up */
    const double raw_rx = double((size + mps - 1) / mps) * hdr + double(size); /* CplDs down */
    double rx_bw = bw;                /* completions fill the downstream link ... */
    if (bw / raw_rx * raw_tx > bw)    /* ... unless their requests do not fit upstream */
        rx_bw = bw / raw_tx * raw_rx;
    return double(size) * rx_bw / raw_rx;
}

std::string LinkParams::to_json() const
{
    std::string j = "{";
    visit_fields(*this, [&](const char *name, const auto &field) {
        using T = std::decay_t<decltype(field)>;
        j += "\"" + std::string(name) + "\":";
        if constexpr (std::is_same_v<T, bool>)
            j += field ? "true" : "false";
        else if constexpr (std::is_same_v<T, double>)
            j += fmt_double(field);
        else
            j += std::to_string(field);
        j += ",";
    });
    j += "\"raw_gbps\":" + fmt_double(raw_gbps()) + ",\"tlp_gbps\":" + fmt_double(tlp_gbps()) +
         ",\"ack_limit_bytes\":" + std::to_string(ack_limit_bytes()) +
         ",\"fc_limit_bytes\":" + std::to_string(fc_limit_bytes()) +
         ",\"tlp_overhead_bytes\":" + std::to_string(tlp_overhead_bytes(gen)) + "}";
    return j;
}

/* ------------------------------------------------------------------------------------------ */
/* The model                                                                                   */

struct PcieHostModel::Impl {
    LinkParams p;
    int W;                            /* dwords per beat */
    uint64_t period;                  /* ps */
    uint64_t ncycles = 0;
    double now = 0;                   /* ncycles * period */
    double ev = 0;                    /* time of the last event processed (monotonic) */
    double lat_ps, memlat_ps, cret_ps;
    int ovh;                          /* framing + DLL bytes per TLP */
    std::vector<uint8_t> mem;
    Link up, dn;
    Counters c;
    std::vector<std::string> errs;

    /* Pins of the previous cycle: with this cycle's inputs they decide the handshakes. */
    bool prev_tx_ready = false, prev_rx_valid = false, prev_msi_ready = false;

    /* Upstream: assembly, TX buffer, TLPs on the wire / in flight, credits. */
    std::vector<uint32_t> asm_dw;
    std::vector<uint16_t> asm_be;
    bool asm_active = false, asm_orphan = false, asm_overflow = false;
    int asm_beats = 0;
    Fifo<UpTlp> txq, upq;
    Fifo<CreditReturn> cret;
    int ph_avail, pd_avail, nph_avail;

    /* Downstream. */
    Fifo<MmioReq> mmioq;
    Fifo<CplJob> cplq;
    Fifo<DnTlp> dnq;
    int rx_beat = 0;

    /* Host side. */
    std::vector<MmioResult> results;
    std::vector<MmioInfo> infos;
    int outstanding = 0;
    int tag_id[kTags];                /* MMIO read id per tag, -1: free */
    Fifo<int> reads;                  /* MMIO read ids in issue order (for timeouts) */
    Fifo<Irq> irqs;

    explicit Impl(const LinkParams &lp) : p(lp)
    {
        std::string e;
        if (!p.validate(&e))
            throw std::invalid_argument("PcieHostModel: " + e);
        W = p.data_width / 32;
        period = static_cast<uint64_t>(1e6 / p.clk_mhz + 0.5);
        lat_ps = p.link_latency_ns * 1000;
        memlat_ps = p.mem_read_latency_ns * 1000;
        cret_ps = p.credit_return_ns * 1000;
        ovh = tlp_overhead_bytes(p.gen);
        mem.assign(p.host_mem_size, 0);
        const double bt = 8000.0 / p.raw_gbps();
        up.init(bt, p.ack_limit_bytes(), p.fc_limit_bytes());
        dn.init(bt, p.ack_limit_bytes(), p.fc_limit_bytes());
        asm_dw.reserve(kMaxTlpDw + W);
        asm_be.reserve(kMaxTlpDw / W + 2);
        ph_avail = p.ph_credits;
        pd_avail = p.pd_credits;
        nph_avail = p.nph_credits;
        std::fill(tag_id, tag_id + kTags, -1);
    }

    /* ---- errors ---- */

    [[gnu::format(printf, 6, 7)]] void error(uint64_t *counter, double t, const uint32_t *hdr,
                                             int nhdr, const char *fmt, ...)
    {
        c.errors++;
        if (counter)
            (*counter)++;
        char what[400];
        va_list ap;
        va_start(ap, fmt);
        std::vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        char when[48];
        std::snprintf(when, sizeof when, "pcie model: t=%.1f ns: ", t / 1000);
        std::string m = std::string(when) + what;
        if (nhdr > 0) {
            m += " [header";
            for (int i = 0; i < nhdr; i++) {
                char h[12];
                std::snprintf(h, sizeof h, " %08x", hdr[i]);
                m += h;
            }
            m += "]";
        }
        if (p.strict) {
            std::fprintf(stderr, "%s\n", m.c_str());
            std::abort();
        }
        if (errs.size() < kMaxErrorMessages)
            errs.push_back(m);
        else if (errs.size() == kMaxErrorMessages)
            errs.push_back("pcie model: more errors; their messages are not kept (counters are)");
    }

    /* ---- upstream: beats -> TLPs ---- */

    void take_tx_beat(const PhyIn &in)
    {
        if (in.tx_first) {
            if (asm_active)
                error(&c.framing_errors, now, asm_dw.data(), std::min<int>(asm_dw.size(), 4),
                      "device TLP cut short: a first beat came before the last beat of this "
                      "one (dropped)");
            asm_active = true;
            asm_orphan = asm_overflow = false;
            asm_dw.clear();
            asm_be.clear();
            asm_beats = 0;
        } else if (!asm_active) {
            if (!asm_orphan)
                error(&c.framing_errors, now, nullptr, 0,
                      "device TX beat without first outside a TLP (dropped up to its last)");
            asm_orphan = !in.tx_last;
            return;
        }
        asm_beats++;
        if (asm_dw.size() < static_cast<size_t>(kMaxTlpDw)) {
            for (int k = 0; k < W; k++)
                asm_dw.push_back(in.tx_dat[k]);
            asm_be.push_back(in.tx_be & ((1u << (4 * W)) - 1));
        } else {
            asm_overflow = true;
        }
        if (in.tx_last) {
            asm_active = false;
            finish_tlp();
        }
    }

    /* Check an assembled TLP and put it in the TX buffer; a bad one too, as it still takes
     * wire time, but it is not applied at the RC. */
    void finish_tlp()
    {
        UpTlp &t = txq.push_slot();
        t.reset();
        t.enq = now;
        const uint32_t dw0 = asm_dw[0];
        const uint8_t ft = dw0 >> 24;
        const int hdr_dw = (ft & 0x20) ? 4 : 3;
        const bool with_data = ft & 0x40;
        t.nhdr = std::min<int>({static_cast<int>(asm_dw.size()), hdr_dw});
        std::copy(asm_dw.begin(), asm_dw.begin() + t.nhdr, t.hdr);
        const uint32_t *h = t.hdr;
        const int nh = t.nhdr;
        t.len_dw = (dw0 & 0x3ff) ? (dw0 & 0x3ff) : 1024;
        const int total = hdr_dw + (with_data ? static_cast<int>(t.len_dw) : 0);

        switch (ft) {
        case kMWr32: case kMWr64: t.kind = Kind::MWr; c.tlps_up_mwr++; break;
        case kMRd32: case kMRd64: t.kind = Kind::MRd; c.tlps_up_mrd++; break;
        case kCplD: t.kind = Kind::CplD; c.tlps_up_cpld++; break;
        case kCpl: t.kind = Kind::Cpl; c.tlps_up_cpl++; break;
        default: t.kind = Kind::Bad; c.tlps_up_bad++; break;
        }

        /* Wire size: from the header when it is understood, else what the be lanes show. */
        int be_dw = 0;
        for (uint16_t be : asm_be)
            for (int k = 0; k < W; k++)
                be_dw += ((be >> (4 * k)) & 0xf) != 0;
        t.wire = ovh + 4 * (t.kind == Kind::Bad ? be_dw : total);

        if (t.kind == Kind::Bad) {
            error(&c.unsupported_tlps, now, h, nh, "device TLP with unsupported fmt/type %#04x",
                  ft);
            return;
        }
        const int want_beats = (total + W - 1) / W;
        if (asm_overflow || asm_beats != want_beats || nh < hdr_dw) {
            error(&c.length_errors, now, h, nh,
                  "device TLP: length field %u DW (%d DW with the header, %d beats) but it came "
                  "in %d beats", t.len_dw, total, want_beats, asm_beats);
            mark_bad(t);
            return;
        }
        for (int b = 0; b < asm_beats; b++) {
            unsigned want = 0;
            for (int k = 0; k < W; k++)
                if (b * W + k < total)
                    want |= 0xfu << (4 * k);
            if (asm_be[b] != want) {
                error(&c.be_errors, now, h, nh,
                      "device TLP: beat %d has be=%#x, expected %#x for a %d-DW TLP", b,
                      asm_be[b], want, total);
                mark_bad(t);
                return;
            }
        }
        if (dw0 & (1u << 15)) {
            error(&c.unsupported_tlps, now, h, nh, "device TLP with TD (ECRC digest) set");
            mark_bad(t);
            return;
        }
        if (dw0 & (1u << 14)) {
            error(&c.poisoned_tlps, now, h, nh, "device sent a poisoned (EP) TLP");
            mark_bad(t);
            return;
        }
        if (t.kind == Kind::MWr || t.kind == Kind::MRd)
            check_mem(t, hdr_dw);
        else
            check_cpl(t);
    }

    void decode_request(UpTlp &t)
    {
        const uint32_t *h = t.hdr;
        t.req_id = h[1] >> 16;
        t.tag = (h[1] >> 8) & 0xff;
        t.fbe = h[1] & 0xf;
        t.lbe = (h[1] >> 4) & 0xf;
        t.addr = t.nhdr == 4 ? (uint64_t(h[2]) << 32 | (h[3] & ~3u)) : (h[2] & ~3u);
    }

    /* A malformed TLP: not applied; a MRd with a readable header gets an UR completion. */
    void mark_bad(UpTlp &t)
    {
        t.ok = false;
        if (t.kind == Kind::MRd && t.nhdr >= 3) {
            decode_request(t);
            t.answer_ur = true;
            t.nph = 1;
        } else if (t.kind == Kind::MWr) {
            t.ph = 1;
        }
    }

    void check_mem(UpTlp &t, int hdr_dw)
    {
        const uint32_t *h = t.hdr;
        const int nh = t.nhdr;
        const bool wr = t.kind == Kind::MWr;
        const char *name = wr ? "MWr" : "MRd";
        decode_request(t);
        const uint64_t bytes = uint64_t(t.len_dw) * 4;
        if (wr) {
            t.ph = 1;
            t.pd = std::min<int>((t.len_dw + 3) / 4, p.pd_credits);
            c.bytes_up_payload += bytes;
            t.pl.assign(asm_dw.begin() + hdr_dw, asm_dw.begin() + hdr_dw + t.len_dw);
        } else {
            t.nph = 1;
        }
        bool bad = false;
        if (h[hdr_dw - 1] & 3) {
            error(&c.unsupported_tlps, now, h, nh, "device %s with address bits 1:0 not 0", name);
            bad = true;
        }
        /* Byte enables (PCIe Base Spec 2.2.5): 1 DW: last BE 0; longer: both non-zero, and
         * contiguous unless it is a QW-aligned 2 DW request. */
        const unsigned fbe = t.fbe, lbe = t.lbe;
        const bool contig_needed = t.len_dw > 2 || (t.len_dw == 2 && (t.addr & 4));
        const bool fbe_contig = fbe && (fbe >> ctz4(fbe)) == (0xfu >> ctz4(fbe));
        const bool lbe_contig = lbe && (lbe & (lbe + 1)) == 0;
        if ((t.len_dw == 1 && lbe != 0) || (t.len_dw > 1 && (fbe == 0 || lbe == 0)) ||
            (contig_needed && (!fbe_contig || !lbe_contig))) {
            error(&c.byte_enable_errors, now, h, nh,
                  "device %s of %u DW with invalid byte enables first=%#x last=%#x", name,
                  t.len_dw, fbe, lbe);
            bad = true;
        }
        if (wr && bytes > static_cast<uint64_t>(p.mps)) {
            error(&c.mps_violations, now, h, nh, "device MWr of %llu B exceeds MPS %d B",
                  static_cast<unsigned long long>(bytes), p.mps);
            bad = true;
        }
        if (!wr && bytes > static_cast<uint64_t>(p.mrrs)) {
            error(&c.mrrs_violations, now, h, nh, "device MRd of %llu B exceeds MRRS %d B",
                  static_cast<unsigned long long>(bytes), p.mrrs);
            bad = true;
        }
        if ((t.addr >> 12) != ((t.addr + bytes - 1) >> 12)) {
            error(&c.boundary_violations, now, h, nh,
                  "device %s of %llu B at %#llx crosses a 4 KiB boundary", name,
                  static_cast<unsigned long long>(bytes),
                  static_cast<unsigned long long>(t.addr));
            bad = true;
        }
        if (t.addr < p.host_mem_addr || t.addr + bytes > p.host_mem_addr + p.host_mem_size ||
            t.addr + bytes < t.addr) {
            error(&c.bad_address, now, h, nh,
                  "device %s of %llu B at %#llx is outside host memory [%#llx, %#llx)", name,
                  static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(t.addr),
                  static_cast<unsigned long long>(p.host_mem_addr),
                  static_cast<unsigned long long>(p.host_mem_addr + p.host_mem_size));
            bad = true;
        }
        t.ok = !bad;
        t.answer_ur = bad && !wr;
    }

    /* Completions: only their payload here; they are matched to host reads at the RC. */
    void check_cpl(UpTlp &t)
    {
        t.req_id = t.hdr[2] >> 16;
        t.tag = (t.hdr[2] >> 8) & 0xff;
        if (t.kind == Kind::CplD) {
            c.bytes_up_payload += uint64_t(t.len_dw) * 4;
            t.pl.assign(asm_dw.begin() + 3, asm_dw.begin() + 3 + t.len_dw);
        }
        t.ok = true;
    }

    /* ---- upstream: TX buffer -> wire -> RC ---- */

    double up_start_time() const
    {
        if (txq.empty())
            return kInf;
        const UpTlp &t = txq.front();
        if (ph_avail < t.ph || pd_avail < t.pd || nph_avail < t.nph)
            return kInf;              /* a credit return will wake it */
        return std::max({t.enq, up.free_at, ev});
    }

    void up_start(double s)
    {
        UpTlp &t = txq.front();
        const double could = std::max(t.enq, up.free_at);
        if (s > could) {
            c.credit_wait_ps += s - could;
            c.credit_waits++;
        }
        ph_avail -= t.ph;
        pd_avail -= t.pd;
        nph_avail -= t.nph;
        t.arr = up.send(s, t.wire) + lat_ps;
        std::swap(upq.push_slot(), t);
        txq.pop();
    }

    void arrive()
    {
        UpTlp &t = upq.front();
        if (t.ph || t.pd || t.nph)
            cret.push_slot() = CreditReturn{t.arr + cret_ps, t.ph, t.pd, t.nph};
        switch (t.kind) {
        case Kind::MWr:
            if (t.ok)
                apply_mwr(t);
            break;
        case Kind::MRd:
            if (t.ok || t.answer_ur) {
                const uint64_t start = t.addr + (t.fbe ? ctz4(t.fbe) : 0);
                const uint64_t end = start + request_byte_count(t.len_dw, t.fbe, t.lbe);
                cplq.push_slot() =
                    CplJob{t.ok ? t.arr + memlat_ps : t.arr, start, end, t.req_id, t.tag, !t.ok};
            }
            break;
        case Kind::CplD:
        case Kind::Cpl:
            if (t.ok)
                complete_mmio(t);
            break;
        case Kind::Msi:
            irqs.push_slot() = Irq{static_cast<uint64_t>(std::llround(t.arr)), t.vector};
            c.msis++;
            break;
        case Kind::Bad:
            break;
        }
        upq.pop();
    }

    void apply_mwr(const UpTlp &t)
    {
        uint8_t *m = mem.data() + (t.addr - p.host_mem_addr);
        for (uint32_t i = 0; i < t.len_dw; i++, m += 4) {
            const unsigned be = i == 0 ? t.fbe : i == t.len_dw - 1 ? t.lbe : 0xf;
            const uint32_t d = t.pl[i];
            for (int b = 0; b < 4; b++)
                if (be & (1u << b))
                    m[b] = static_cast<uint8_t>(d >> (24 - 8 * b));
        }
    }

    void complete_mmio(const UpTlp &t)
    {
        const uint32_t *h = t.hdr;
        const uint32_t status = (h[1] >> 13) & 7;
        const uint32_t bc = (h[1] & 0xfff) ? (h[1] & 0xfff) : 4096;
        const int id = t.tag < kTags ? tag_id[t.tag] : -1;
        const char *name = t.kind == Kind::CplD ? "CplD" : "Cpl";
        if (id < 0) {
            error(&c.unexpected_completion, t.arr, h, 3,
                  "device %s with tag %u: no host read is outstanding with that tag", name,
                  t.tag);
            return;
        }
        if (t.req_id != p.rc_id) {
            error(&c.unexpected_completion, t.arr, h, 3,
                  "device %s with requester id %#06x, expected the RC's %#06x", name, t.req_id,
                  p.rc_id);
            return;
        }
        const MmioInfo &info = infos[id];
        if (status != kStatusSC) {
            /* The read is over, as on real hardware: all ones, with the status. */
            error(&c.unexpected_completion, t.arr, h, 3,
                  "device %s with status %u for the host read of %d B at BAR0+%#llx", name,
                  status, info.len, static_cast<unsigned long long>(info.off));
            finish_read(id, t.arr, ~0ull, static_cast<uint16_t>(status));
            return;
        }
        const uint32_t want_dw = info.len / 4;
        if (t.kind != Kind::CplD || t.len_dw != want_dw || bc != uint32_t(info.len)) {
            error(&c.unexpected_completion, t.arr, h, 3,
                  "device %s for the host read of %d B at BAR0+%#llx: length %u DW, byte count "
                  "%u; expected a CplD of %u DW, byte count %d", name, info.len,
                  static_cast<unsigned long long>(info.off), t.kind == Kind::CplD ? t.len_dw : 0,
                  bc, want_dw, info.len);
            return;
        }
        uint64_t v = bswap32(t.pl[0]);
        if (want_dw == 2)
            v |= uint64_t(bswap32(t.pl[1])) << 32;
        finish_read(id, t.arr, v, kStatusSC);
    }

    void finish_read(int id, double t, uint64_t value, uint16_t status)
    {
        MmioResult &r = results[id];
        MmioInfo &info = infos[id];
        r.done = true;
        r.value = info.len == 4 ? value & 0xffffffffull : value;
        r.status = status;
        r.done_ps = static_cast<uint64_t>(std::llround(t));
        if (info.tag >= 0)
            tag_id[info.tag] = -1;
        info.tag = -1;
        outstanding--;
    }

    void check_timeouts()
    {
        while (!reads.empty()) {
            const int id = reads.front();
            if (results[id].done) {
                reads.pop();
                continue;
            }
            if (now - double(results[id].issue_ps) <= kCplTimeoutPs)
                break;
            c.completion_timeouts++;
            error(nullptr, now, nullptr, 0,
                  "host read %d of %d B at BAR0+%#llx: completion timeout (no completion in "
                  "50 us); it reads all ones", id, infos[id].len,
                  static_cast<unsigned long long>(infos[id].off));
            finish_read(id, now, ~0ull, 0xffff);
            reads.pop();
        }
    }

    /* ---- downstream ---- */

    int free_tag() const
    {
        for (int i = 0; i < kTags; i++)
            if (tag_id[i] < 0)
                return i;
        return -1;
    }

    /* Earliest start of the next downstream TLP; *from_mmio tells which queue it comes from.
     * A read waits for a free tag (and holds up the MMIO queue behind it, like a CPU). */
    double dn_start_time(bool *from_mmio)
    {
        while (!mmioq.empty() && results[mmioq.front().id].done)  /* timed out while queued */
            mmioq.pop();
        double rm = kInf, rc = kInf;
        if (!mmioq.empty() && (mmioq.front().write || free_tag() >= 0))
            rm = mmioq.front().ready;
        if (!cplq.empty())
            rc = cplq.front().ready;
        if (rm == kInf && rc == kInf)
            return kInf;
        *from_mmio = rm < rc;
        return std::max({std::min(rm, rc), dn.free_at, ev});
    }

    DnTlp &dn_send(double s, int wire)
    {
        DnTlp &d = dnq.push_slot();
        d.arr = dn.send(s, wire) + lat_ps;
        d.mmio_id = -1;
        d.dw.clear();
        return d;
    }

    void dn_start_mmio(double s)
    {
        const MmioReq q = mmioq.front();
        mmioq.pop();
        const uint32_t ndw = q.len / 4;
        const uint32_t addr = static_cast<uint32_t>(p.bar0_addr + q.off);
        const uint32_t lbe = ndw > 1 ? 0xf : 0;
        DnTlp &d = dn_send(s, ovh + 12 + (q.write ? q.len : 0));
        if (q.write) {
            d.mmio_id = q.id;
            d.dw.push_back(uint32_t(kMWr32) << 24 | ndw);
            d.dw.push_back(uint32_t(p.rc_id) << 16 | lbe << 4 | 0xf);
            d.dw.push_back(addr);
            d.dw.push_back(bswap32(static_cast<uint32_t>(q.value)));
            if (ndw == 2)
                d.dw.push_back(bswap32(static_cast<uint32_t>(q.value >> 32)));
            c.tlps_down_mwr++;
            c.bytes_down_payload += q.len;
        } else {
            const int tag = free_tag();
            tag_id[tag] = q.id;
            infos[q.id].tag = tag;
            d.dw.push_back(uint32_t(kMRd32) << 24 | ndw);
            d.dw.push_back(uint32_t(p.rc_id) << 16 | uint32_t(tag) << 8 | lbe << 4 | 0xf);
            d.dw.push_back(addr);
            c.tlps_down_mrd++;
        }
    }

    /* The next completion of the head job (see the top of the file for the split rule). */
    void dn_start_cpl(double s)
    {
        CplJob &j = cplq.front();
        const uint32_t bc = static_cast<uint32_t>(j.end - j.addr);
        const uint32_t lower = static_cast<uint32_t>(j.addr & 0x7f);
        const uint32_t dw2 = uint32_t(j.req_id) << 16 | uint32_t(j.tag) << 8 | lower;
        if (j.ur) {
            DnTlp &d = dn_send(s, ovh + 12);
            d.dw.push_back(uint32_t(kCpl) << 24);
            d.dw.push_back(uint32_t(p.rc_id) << 16 | kStatusUR << 13 | (bc & 0xfff));
            d.dw.push_back(dw2);
            c.tlps_down_cpl++;
            c.ur_completions++;
            cplq.pop();
            return;
        }
        const uint64_t dstart = j.addr & ~3ull;
        uint64_t e = (dstart + p.mps) / p.rcb * p.rcb;
        if (e <= j.addr)
            e = dstart + p.mps;
        e = std::min(e, j.end);
        const uint32_t ndw = static_cast<uint32_t>((((e + 3) & ~3ull) - dstart) / 4);
        DnTlp &d = dn_send(s, ovh + 12 + 4 * ndw);
        d.dw.push_back(uint32_t(kCplD) << 24 | (ndw & 0x3ff));
        d.dw.push_back(uint32_t(p.rc_id) << 16 | kStatusSC << 13 | (bc & 0xfff));
        d.dw.push_back(dw2);
        const uint8_t *m = mem.data() + (dstart - p.host_mem_addr);
        for (uint32_t i = 0; i < ndw; i++, m += 4)
            d.dw.push_back(uint32_t(m[0]) << 24 | uint32_t(m[1]) << 16 | uint32_t(m[2]) << 8 |
                           m[3]);
        c.tlps_down_cpld++;
        c.bytes_down_payload += 4 * ndw;
        j.addr = e;
        if (j.addr >= j.end)
            cplq.pop();
    }

    /* ---- event loop: everything due up to t_end, in time order ---- */

    void run_until(double t_end)
    {
        for (;;) {
            const double t_cr = cret.empty() ? kInf : cret.front().t;
            const double t_arr = upq.empty() ? kInf : upq.front().arr;
            const double t_up = up_start_time();
            bool from_mmio = false;
            const double t_dn = dn_start_time(&from_mmio);
            const double t = std::min({t_cr, t_arr, t_up, t_dn});
            if (!(t <= t_end))
                break;
            ev = std::max(ev, t);
            if (t_cr == t) {
                const CreditReturn &r = cret.front();
                ph_avail += r.ph;
                pd_avail += r.pd;
                nph_avail += r.nph;
                cret.pop();
            } else if (t_arr == t) {
                arrive();
            } else if (t_up == t) {
                up_start(t);
            } else if (from_mmio) {
                dn_start_mmio(t);
            } else {
                dn_start_cpl(t);
            }
        }
    }

    /* ---- the clock ---- */

    void cycle(const PhyIn &in, PhyOut *out)
    {
        /* Handshakes at the edge at `now`. */
        if (in.tx_valid) {
            if (prev_tx_ready)
                take_tx_beat(in);
            else
                c.tx_stall_cycles++;
        }
        if (prev_rx_valid) {
            if (in.rx_ready) {
                DnTlp &d = dnq.front();
                if (++rx_beat * W >= static_cast<int>(d.dw.size())) {
                    if (d.mmio_id >= 0) {
                        MmioResult &r = results[d.mmio_id];
                        r.done = true;
                        r.done_ps = static_cast<uint64_t>(now);
                        outstanding--;
                    }
                    rx_beat = 0;
                    dnq.pop();
                }
            } else {
                c.rx_stall_cycles++;
            }
        }
        if (in.msi_valid && prev_msi_ready) {
            /* A 1-DW posted MWr behind the TLPs already in the TX buffer. */
            UpTlp &t = txq.push_slot();
            t.reset();
            t.kind = Kind::Msi;
            t.ok = true;
            t.vector = in.msi_dat;
            t.enq = now;
            t.wire = ovh + 12 + 4;
            t.ph = 1;
            t.pd = 1;
            c.tlps_up_msi++;
        }

        ncycles++;
        now = double(ncycles * period);
        run_until(now);
        if (!reads.empty())
            check_timeouts();

        /* Pins for the next cycle. */
        out->id = p.device_id;
        out->max_payload_size = static_cast<uint16_t>(p.dev_mps ? p.dev_mps : p.mps);
        out->max_request_size = static_cast<uint16_t>(p.dev_mrrs ? p.dev_mrrs : p.mrrs);
        out->link_up = out->msi_enable = out->bus_master_enable = true;
        out->msi_ready = true;
        out->tx_ready = txq.size() < static_cast<size_t>(p.tx_buf_tlps);
        out->rx_valid = out->rx_first = out->rx_last = false;
        out->rx_be = 0;
        std::fill(out->rx_dat, out->rx_dat + 4, 0u);
        if (!dnq.empty() && dnq.front().arr <= now) {
            const DnTlp &d = dnq.front();
            const int n = static_cast<int>(d.dw.size());
            const int base = rx_beat * W;
            out->rx_valid = true;
            out->rx_first = rx_beat == 0;
            out->rx_last = base + W >= n;
            for (int k = 0; k < W && base + k < n; k++) {
                out->rx_dat[k] = d.dw[base + k];
                out->rx_be |= 0xf << (4 * k);
            }
        }
        prev_tx_ready = out->tx_ready;
        prev_rx_valid = out->rx_valid;
        prev_msi_ready = out->msi_ready;
    }

    /* ---- host MMIO ---- */

    int new_request(bool write, uint64_t off, uint64_t value, int len)
    {
        const int id = static_cast<int>(results.size());
        MmioResult r;
        r.issue_ps = static_cast<uint64_t>(now);
        r.value = write ? value : 0;
        results.push_back(r);
        MmioInfo info;
        info.write = write;
        info.len = len;
        info.off = off;
        infos.push_back(info);
        if ((len != 4 && len != 8) || (off & (len - 1)) || off + len > p.bar0_size ||
            off + len < off) {
            error(&c.bad_mmio, now, nullptr, 0,
                  "host MMIO %s of %d B at BAR0+%#llx: must be 4 or 8 B, naturally aligned, "
                  "inside BAR0 (%#llx B); not sent, done with status UR",
                  write ? "write" : "read", len, static_cast<unsigned long long>(off),
                  static_cast<unsigned long long>(p.bar0_size));
            MmioResult &rr = results[id];
            rr.done = true;
            rr.status = kStatusUR;
            rr.value = ~0ull;
            rr.done_ps = rr.issue_ps;
            return id;
        }
        outstanding++;
        (write ? c.mmio_writes : c.mmio_reads)++;
        mmioq.push_slot() = MmioReq{id, write, off, value, len, now};
        if (!write)
            reads.push_slot() = id;
        return id;
    }
};

PcieHostModel::PcieHostModel(const LinkParams &p) : impl_(new Impl(p)) {}

PcieHostModel::~PcieHostModel() = default;

void PcieHostModel::cycle(const PhyIn &in, PhyOut *out) { impl_->cycle(in, out); }

uint64_t PcieHostModel::now_ps() const { return impl_->ncycles * impl_->period; }

uint64_t PcieHostModel::cycles() const { return impl_->ncycles; }

uint8_t *PcieHostModel::host_mem() { return impl_->mem.data(); }

uint64_t PcieHostModel::host_mem_addr() const { return impl_->p.host_mem_addr; }

uint64_t PcieHostModel::host_mem_size() const { return impl_->p.host_mem_size; }

int PcieHostModel::mmio_write(uint64_t bar0_off, uint64_t value, int len)
{
    return impl_->new_request(true, bar0_off, len == 4 ? value & 0xffffffffull : value, len);
}

int PcieHostModel::mmio_read(uint64_t bar0_off, int len)
{
    return impl_->new_request(false, bar0_off, 0, len);
}

MmioResult PcieHostModel::mmio_result(int id) const
{
    if (id < 0 || static_cast<size_t>(id) >= impl_->results.size()) {
        /* Not one of our ids: finished and failed, so that no caller waits for it forever. */
        MmioResult r;
        r.done = true;
        r.status = 0xffff;
        r.value = ~0ull;
        return r;
    }
    return impl_->results[id];
}

int PcieHostModel::mmio_outstanding() const { return impl_->outstanding; }

bool PcieHostModel::irq_pending() const { return !impl_->irqs.empty(); }

bool PcieHostModel::irq_pop(uint64_t *arrival_ps, uint8_t *vector)
{
    if (impl_->irqs.empty())
        return false;
    const Irq &i = impl_->irqs.front();
    if (arrival_ps)
        *arrival_ps = i.t;
    if (vector)
        *vector = i.vector;
    impl_->irqs.pop();
    return true;
}

const std::vector<std::string> &PcieHostModel::errors() const { return impl_->errs; }

std::map<std::string, uint64_t> PcieHostModel::counters() const
{
    const Impl &m = *impl_;
    const Counters &c = m.c;
    auto ps = [](double v) { return static_cast<uint64_t>(std::llround(v)); };
    return {
        {"tlps_up_mwr", c.tlps_up_mwr},
        {"tlps_up_mrd", c.tlps_up_mrd},
        {"tlps_up_cpld", c.tlps_up_cpld},
        {"tlps_up_cpl", c.tlps_up_cpl},
        {"tlps_up_msi", c.tlps_up_msi},
        {"tlps_up_bad", c.tlps_up_bad},
        {"tlps_down_mwr", c.tlps_down_mwr},
        {"tlps_down_mrd", c.tlps_down_mrd},
        {"tlps_down_cpld", c.tlps_down_cpld},
        {"tlps_down_cpl", c.tlps_down_cpl},
        {"bytes_up_payload", c.bytes_up_payload},
        {"bytes_down_payload", c.bytes_down_payload},
        {"bytes_up_wire", m.up.tlp_bytes},
        {"bytes_down_wire", m.dn.tlp_bytes},
        {"dllp_bytes_up", m.up.dllp_bytes},
        {"dllp_bytes_down", m.dn.dllp_bytes},
        {"link_busy_ps_up", ps(m.up.busy_ps)},
        {"link_busy_ps_down", ps(m.dn.busy_ps)},
        {"tx_stall_cycles", c.tx_stall_cycles},
        {"rx_stall_cycles", c.rx_stall_cycles},
        {"credit_wait_ps", ps(c.credit_wait_ps)},
        {"credit_waits", c.credit_waits},
        {"mmio_reads", c.mmio_reads},
        {"mmio_writes", c.mmio_writes},
        {"msis", c.msis},
        {"errors", c.errors},
        {"mps_violations", c.mps_violations},
        {"mrrs_violations", c.mrrs_violations},
        {"boundary_violations", c.boundary_violations},
        {"bad_address", c.bad_address},
        {"unexpected_completion", c.unexpected_completion},
        {"completion_timeouts", c.completion_timeouts},
        {"unsupported_tlps", c.unsupported_tlps},
        {"length_errors", c.length_errors},
        {"be_errors", c.be_errors},
        {"framing_errors", c.framing_errors},
        {"byte_enable_errors", c.byte_enable_errors},
        {"poisoned_tlps", c.poisoned_tlps},
        {"bad_mmio", c.bad_mmio},
        {"ur_completions", c.ur_completions},
        {"cycles", m.ncycles},
    };
}

const LinkParams &PcieHostModel::params() const { return impl_->p; }

} /* namespace nicsim */
