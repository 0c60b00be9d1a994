// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_host_memory.cpp: device MWr into host memory and device MRd answered from it
 * (HostMemory): byte enables, completion splitting at the RCB and MPS, read latency, order.
 */
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "test_pcie_host_model.h"

namespace model_test {

/* ---- device MWr ---- */

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

/* ---- device MRd and completion splitting ---- */

namespace {

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

} /* namespace */

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

} /* namespace model_test */

namespace model_test {

/* ---- fault injection (LinkParams fault_*, docs/faults.md) ---- */

namespace {

/* n MRds of 512 B (tags 10..) under the given faults; the completions the device got. */
std::vector<RxTlp> faulty_reads(int dw, LinkParams p, int n, PcieHostModel **keep = nullptr)
{
    static std::vector<std::unique_ptr<PcieHostModel>> models;
    models.emplace_back(new PcieHostModel(p));
    PcieHostModel &m = *models.back();
    if (keep)
        *keep = &m;
    Dev d(m);
    d.bar_mode = false;
    uint8_t *mem = m.host_mem();
    for (int i = 0; i < 0x4000; i++)
        mem[0x1000 + i] = static_cast<uint8_t>(i * 13 + 5);
    d.run(5);
    for (int i = 0; i < n; i++)
        d.send(mem_req(false, p.host_mem_addr + 0x1000 + 0x200 * i, 128, p.device_id,
                       uint8_t(10 + i), 0xf, 0xf));
    d.run(20000);
    (void)dw;
    return d.rx;
}

} /* namespace */

void test_faults(int dw)
{
    PcieHostModel *m = nullptr;
    for (const uint32_t st : {1u, 4u}) {
        LinkParams p = base_params(dw);
        (st == 1 ? p.fault_ur : p.fault_ca) = 1;
        const auto rx = faulty_reads(dw, p, 2, &m);
        bool ok = rx.size() == 2;
        for (const RxTlp &r : rx)
            ok = ok && r.dw.size() == 3 && (r.dw[0] >> 24) == 0x0a && ((r.dw[1] >> 13) & 7) == st;
        check(ok && counter(*m, st == 1 ? "fault_ur" : "fault_ca") == 2 &&
                  counter(*m, "ur_completions") == 0 && m->errors().empty(),
              "dw%d fault %s: every read answered with one Cpl of that status, counted as "
              "injected (not as a bad request)", dw, st == 1 ? "ur" : "ca");
    }
    {
        LinkParams p = base_params(dw);
        p.fault_cpl_timeout = 1;
        const auto rx = faulty_reads(dw, p, 3, &m);
        check(rx.empty() && counter(*m, "fault_cpl_timeouts") == 3,
              "dw%d fault cpl_timeout: no completion at all, 3 counted", dw);
    }
    {
        LinkParams p = base_params(dw);
        p.fault_ep = 1;
        const auto rx = faulty_reads(dw, p, 1, &m);
        bool ep = rx.size() == 2, garbled = true;
        for (const RxTlp &r : rx) {
            ep = ep && (r.dw[0] >> 24) == 0x4a && (r.dw[0] >> 14 & 1);
            garbled = garbled && r.dw.size() > 3 &&
                      r.dw[3] != be_dw(m->host_mem() + 0x1000 + (&r == &rx[0] ? 0 : 256));
        }
        check(ep && garbled && counter(*m, "fault_ep_tlps") == 2,
              "dw%d fault ep: both CplDs poisoned (EP) with garbled data", dw);
    }
    {
        LinkParams p = base_params(dw);
        p.fault_cpl_split = 1;
        p.fault_seed = 7;
        const auto rx = faulty_reads(dw, p, 4, &m);
        /* per request: RCB-aligned ends, <= MPS, every byte, byte counts consistent */
        bool ok = true;
        uint32_t left[4] = {512, 512, 512, 512};
        for (const RxTlp &r : rx) {
            const int t = ((r.dw[2] >> 8) & 0xff) - 10;
            const uint32_t n = 4 * (r.dw[0] & 0x3ff), bc = r.dw[1] & 0xfff;
            ok = ok && t >= 0 && t < 4 && bc == left[t] && n <= uint32_t(p.mps) &&
                 (n == left[t] || (r.dw[2] & 0x7f) % 64 + n == 64 || n % 64 == 0);
            if (ok)
                left[t] -= n;
        }
        check(ok && !left[0] && !left[1] && !left[2] && !left[3] && rx.size() > 8 &&
                  m->errors().empty(),
              "dw%d fault cpl_split: %zu completions for 4 x 512 B, each within MPS and ending "
              "on the RCB, every byte once", dw, rx.size());
    }
    {
        LinkParams p = base_params(dw);
        p.fault_cpl_reorder = 1;
        p.mem_read_latency_ns = 2000;   /* the four reads are all owed at once */
        const auto rx = faulty_reads(dw, p, 4, &m);
        bool per_tag = rx.size() == 8, reordered = false;
        uint32_t left[4] = {512, 512, 512, 512};
        int prev = -1;
        for (const RxTlp &r : rx) {
            const int t = ((r.dw[2] >> 8) & 0xff) - 10;
            per_tag = per_tag && t >= 0 && t < 4 && (r.dw[1] & 0xfff) == left[t];
            if (per_tag)
                left[t] -= 4 * (r.dw[0] & 0x3ff);
            reordered = reordered || t < prev;
            prev = t;
        }
        check(per_tag && reordered && counter(*m, "fault_reordered") > 0,
              "dw%d fault cpl_reorder: completions across tags out of order, in order per tag",
              dw);
    }
}

} /* namespace model_test */
