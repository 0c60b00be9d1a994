/*
 * host_memory.cpp: HostMemory (host_memory.h): device MWr applied to host memory, device MRd
 * answered with completions split at the RCB and MPS.
 */
#include "host_memory.h"

#include <algorithm>

namespace nicsim::detail {

HostMemory::HostMemory(const LinkParams &lp, Counters &counters)
    : p(lp), c(counters), memlat_ps(lp.mem_read_latency_ns * 1000)
{
    if (!p.host_mem_ext)
        mem.assign(p.host_mem_size, 0);
    base = p.host_mem_ext ? p.host_mem_ext : mem.data();
}

void HostMemory::write(const UpTlp &t)
{
    uint8_t *m = base + (t.addr - p.host_mem_addr);
    for (uint32_t i = 0; i < t.len_dw; i++, m += 4) {
        const unsigned be = i == 0 ? t.fbe : i == t.len_dw - 1 ? t.lbe : 0xf;
        const uint32_t d = t.pl[i];
        for (int b = 0; b < 4; b++)
            if (be & (1u << b))
                m[b] = static_cast<uint8_t>(d >> (24 - 8 * b));
    }
}

void HostMemory::read(const UpTlp &t)
{
    const uint64_t start = t.addr + (t.fbe ? ctz4(t.fbe) : 0);
    const uint64_t end = start + request_byte_count(t.len_dw, t.fbe, t.lbe);
    cplq.push_slot() = CplJob{t.ok ? t.arr + memlat_ps : t.arr, start, end, t.req_id, t.tag, !t.ok};
}

void HostMemory::next_completion(DnTlp *d)
{
    CplJob &j = cplq.front();
    const uint32_t bc = static_cast<uint32_t>(j.end - j.addr);
    const uint32_t lower = static_cast<uint32_t>(j.addr & 0x7f);
    const uint32_t dw2 = uint32_t(j.req_id) << 16 | uint32_t(j.tag) << 8 | lower;
    if (j.ur) {
        d->dw.push_back(uint32_t(kCpl) << 24);
        d->dw.push_back(uint32_t(p.rc_id) << 16 | kStatusUR << 13 | (bc & 0xfff));
        d->dw.push_back(dw2);
        c.tlps_down_cpl++;
        c.ur_completions++;
        d->read_tag = j.tag;
        cplq.pop();
        return;
    }
    const uint64_t dstart = j.addr & ~3ull;
    uint64_t e = (dstart + p.mps) / p.rcb * p.rcb;
    if (e <= j.addr)
        e = dstart + p.mps;
    e = std::min(e, j.end);
    const uint32_t ndw = static_cast<uint32_t>((((e + 3) & ~3ull) - dstart) / 4);
    d->dw.push_back(uint32_t(kCplD) << 24 | (ndw & 0x3ff));
    d->dw.push_back(uint32_t(p.rc_id) << 16 | kStatusSC << 13 | (bc & 0xfff));
    d->dw.push_back(dw2);
    const uint8_t *m = base + (dstart - p.host_mem_addr);
    for (uint32_t i = 0; i < ndw; i++, m += 4)
        d->dw.push_back(uint32_t(m[0]) << 24 | uint32_t(m[1]) << 16 | uint32_t(m[2]) << 8 |
                        m[3]);
    c.tlps_down_cpld++;
    c.bytes_down_payload += 4 * ndw;
    j.addr = e;
    if (j.addr >= j.end) {
        d->read_tag = j.tag;
        cplq.pop();
    }
}

} /* namespace nicsim::detail */
