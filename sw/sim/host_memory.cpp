// SPDX-License-Identifier: BSD-2-Clause
/*
 * host_memory.cpp: HostMemory (host_memory.h): device MWr applied to host memory, device MRd
 * answered with completions split at the RCB and MPS.
 */
#include "host_memory.h"

#include <algorithm>

namespace nicsim::detail {

HostMemory::HostMemory(const LinkParams &lp, Counters &counters, std::mt19937_64 &r)
    : p(lp), c(counters), rng(r), memlat_ps(lp.mem_read_latency_ns * 1000)
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
    CplJob j{t.ok ? t.arr + memlat_ps : t.arr, start, end, t.req_id, t.tag,
             static_cast<uint8_t>(t.ok ? kStatusSC : kStatusUR), false, false, false};
    if (t.ok && p.faults_on()) {
        /* One draw picks at most one of the four read faults. */
        const double u = std::uniform_real_distribution<>(0, 1)(rng);
        double edge = p.fault_cpl_timeout;
        if (u < edge) {
            c.fault_cpl_timeouts++;
            return;                   /* never answered */
        }
        if (u < (edge += p.fault_ur)) {
            j.status = kStatusUR;
            j.injected = true;
            c.fault_ur++;
        } else if (u < (edge += p.fault_ca)) {
            j.status = kStatusCA;
            j.injected = true;
            c.fault_ca++;
        } else if (u < (edge += p.fault_ep)) {
            j.ep = true;
            c.fault_ep_reads++;
        }
        if (j.status == kStatusSC && draw(p.fault_cpl_split)) {
            j.split = true;
            c.fault_split_reads++;
        }
    }
    cplq.push_back(j);
}

uint64_t HostMemory::drop_all()
{
    const uint64_t n = cplq.size();
    cplq.clear();
    return n;
}

void HostMemory::next_completion(DnTlp *d, double now)
{
    /* Completions of different tags may pass each other; those of one tag stay in order. */
    size_t k = 0;
    if (cplq.size() > 1 && draw(p.fault_cpl_reorder)) {
        const size_t pick = 1 + std::uniform_int_distribution<size_t>(0, cplq.size() - 2)(rng);
        if (cplq[pick].ready <= now) {
            k = pick;
            c.fault_reordered++;
        }
    }
    CplJob &j = cplq[k];
    const uint32_t bc = static_cast<uint32_t>(j.end - j.addr);
    const uint32_t lower = static_cast<uint32_t>(j.addr & 0x7f);
    const uint32_t dw2 = uint32_t(j.req_id) << 16 | uint32_t(j.tag) << 8 | lower;
    if (j.status != kStatusSC) {
        d->dw.push_back(uint32_t(kCpl) << 24);
        d->dw.push_back(uint32_t(p.rc_id) << 16 | uint32_t(j.status) << 13 | (bc & 0xfff));
        d->dw.push_back(dw2);
        c.tlps_down_cpl++;
        if (!j.injected)
            c.ur_completions++;       /* a bad device request (model_checks) */
        d->read_tag = j.tag;
        cplq.erase(cplq.begin() + static_cast<long>(k));
        return;
    }
    const uint64_t dstart = j.addr & ~3ull;
    uint64_t e = (dstart + p.mps) / p.rcb * p.rcb;
    if (e <= j.addr)
        e = dstart + p.mps;
    e = std::min(e, j.end);
    if (j.split) {
        /* Any RCB boundary after the first byte is a legal end. */
        const uint64_t b0 = (j.addr / p.rcb + 1) * p.rcb;
        if (b0 < e) {
            const uint64_t n = (e - b0) / p.rcb;
            e = std::min(e, b0 + p.rcb * std::uniform_int_distribution<uint64_t>(0, n)(rng));
        }
    }
    const uint32_t ndw = static_cast<uint32_t>((((e + 3) & ~3ull) - dstart) / 4);
    d->dw.push_back(uint32_t(kCplD) << 24 | (j.ep ? 1u << 14 : 0u) | (ndw & 0x3ff));
    d->dw.push_back(uint32_t(p.rc_id) << 16 | kStatusSC << 13 | (bc & 0xfff));
    d->dw.push_back(dw2);
    const uint8_t *m = base + (dstart - p.host_mem_addr);
    const uint32_t garble = j.ep ? 0xdeadbeefu : 0;
    for (uint32_t i = 0; i < ndw; i++, m += 4)
        d->dw.push_back((uint32_t(m[0]) << 24 | uint32_t(m[1]) << 16 | uint32_t(m[2]) << 8 |
                         m[3]) ^ garble);
    c.tlps_down_cpld++;
    if (j.ep)
        c.fault_ep_tlps++;
    c.bytes_down_payload += 4 * ndw;
    j.addr = e;
    if (j.addr >= j.end) {
        d->read_tag = j.tag;
        cplq.erase(cplq.begin() + static_cast<long>(k));
    }
}

} /* namespace nicsim::detail */
