// SPDX-License-Identifier: BSD-2-Clause
/*
 * link_params.cpp: LinkParams (link_params.h): the "key=value" parser, the checks, the JSON
 * record, and pcie-bench's rate formulas with its Ack/FC limit table.
 */
#include "link_params.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <utility>

#include "pcie_link.h"

namespace nicsim {

using detail::kAckBytes;
using detail::kFcBytes;
using detail::kSkipBytes;
using detail::kSkipInterval;
using detail::tlp_overhead_bytes;

namespace {

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

bool is_pow2(uint64_t v) { return v && !(v & (v - 1)); }

std::string fmt_double(double d)
{
    char b[40];
    std::snprintf(b, sizeof b, "%.12g", d);
    return b;
}

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
    f("iommu", p.iommu);
    f("msix", p.msix);
    f("fault_seed", p.fault_seed);
    f("fault_cpl_timeout", p.fault_cpl_timeout);
    f("fault_ur", p.fault_ur);
    f("fault_ca", p.fault_ca);
    f("fault_ep", p.fault_ep);
    f("fault_cpl_split", p.fault_cpl_split);
    f("fault_cpl_reorder", p.fault_cpl_reorder);
    f("fault_credit_starve", p.fault_credit_starve);
    f("fault_starve_ns", p.fault_starve_ns);
    f("fault_link_down", p.fault_link_down);
    f("fault_link_down_ns", p.fault_link_down_ns);
    f("fault_link_down_at_ns", p.fault_link_down_at_ns);
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
    /* The device sees the credits in use on 12-bit pins (pcie_fc_*). */
    if (ph_credits < 1 || ph_credits > 4095)
        return fail("ph_credits=" + std::to_string(ph_credits) + ": must be in 1..4095");
    if (nph_credits < 1 || nph_credits > 4095)
        return fail("nph_credits=" + std::to_string(nph_credits) + ": must be in 1..4095");
    if (pd_credits > 4095)
        return fail("pd_credits=" + std::to_string(pd_credits) + ": must be at most 4095");
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
    if (host_mem_addr < kMsiWindowAddr + kMsiWindowSize &&
        kMsiWindowAddr < host_mem_addr + host_mem_size)
        return fail("the host memory window overlaps the MSI window 0xfee00000..0xfeefffff");
    if (bar0_addr < kMsiWindowAddr + kMsiWindowSize && kMsiWindowAddr < bar0_addr + bar0_size)
        return fail("BAR0 overlaps the MSI window 0xfee00000..0xfeefffff");
    const std::pair<const char *, double> rates[] = {
        {"fault_cpl_timeout", fault_cpl_timeout}, {"fault_ur", fault_ur},
        {"fault_ca", fault_ca}, {"fault_ep", fault_ep}, {"fault_cpl_split", fault_cpl_split},
        {"fault_cpl_reorder", fault_cpl_reorder}, {"fault_credit_starve", fault_credit_starve},
        {"fault_link_down", fault_link_down},
    };
    for (const auto &r : rates)
        if (!(r.second >= 0) || !(r.second <= 1))
            return fail(std::string(r.first) + "=" + fmt_double(r.second) +
                        ": must be a probability in 0..1");
    if (fault_cpl_timeout + fault_ur + fault_ca + fault_ep > 1)
        return fail("fault_cpl_timeout + fault_ur + fault_ca + fault_ep must be at most 1 (one "
                    "fault per read)");
    if (!(fault_starve_ns >= 0) || !(fault_starve_ns <= 1e9))
        return fail("fault_starve_ns=" + fmt_double(fault_starve_ns) + ": must be in 0..1e9 ns");
    if (!(fault_link_down_at_ns >= 0) || !(fault_link_down_at_ns <= 1e12))
        return fail("fault_link_down_at_ns=" + fmt_double(fault_link_down_at_ns) +
                    ": must be in 0..1e12 ns");
    if (!(fault_link_down_ns >= 0) || !(fault_link_down_ns <= 1e9))
        return fail("fault_link_down_ns=" + fmt_double(fault_link_down_ns) +
                    ": must be in 0..1e9 ns");
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

} /* namespace nicsim */
