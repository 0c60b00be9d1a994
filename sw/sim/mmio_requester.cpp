// SPDX-License-Identifier: BSD-2-Clause
/*
 * mmio_requester.cpp: MmioRequester (mmio_requester.h): host MMIO requests to BAR0, their
 * tags, completions and timeouts.
 */
#include "mmio_requester.h"

#include <algorithm>
#include <cmath>

namespace nicsim::detail {

namespace {

constexpr double kCplTimeoutPs = 50e6;    /* host MMIO read completion timeout: 50 us */

} /* namespace */

MmioRequester::MmioRequester(const LinkParams &lp, ModelLog &l) : p(lp), log(l), c(l.c)
{
    std::fill(tag_id, tag_id + kTags, -1);
}

int MmioRequester::request(bool write, uint64_t off, uint64_t value, int len, double now)
{
    const int id = static_cast<int>(results.size());
    MmioResult r;
    r.issue_ps = static_cast<uint64_t>(now);
    r.value = write ? value : 0;
    results.push_back(r);
    Info info;
    info.write = write;
    info.len = len;
    info.off = off;
    infos.push_back(info);
    if ((len != 4 && len != 8) || (off & (len - 1)) || off + len > p.bar0_size ||
        off + len < off) {
        log.error(&c.bad_mmio, now, nullptr, 0,
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
    outstanding_++;
    (write ? c.mmio_writes : c.mmio_reads)++;
    mmioq.push_slot() = Request{id, write, off, value, len, now};
    if (!write)
        reads.push_slot() = id;
    return id;
}

MmioResult MmioRequester::result(int id) const
{
    if (id < 0 || static_cast<size_t>(id) >= results.size()) {
        /* Not one of our ids: finished and failed, so that no caller waits for it forever. */
        MmioResult r;
        r.done = true;
        r.status = 0xffff;
        r.value = ~0ull;
        return r;
    }
    return results[id];
}

int MmioRequester::free_tag() const
{
    for (int i = 0; i < kTags; i++)
        if (tag_id[i] < 0)
            return i;
    return -1;
}

double MmioRequester::next_ready()
{
    while (!mmioq.empty() && results[mmioq.front().id].done)  /* timed out while queued */
        mmioq.pop();
    if (!mmioq.empty() && (mmioq.front().write || free_tag() >= 0))
        return mmioq.front().ready;
    return kInf;
}

void MmioRequester::next_tlp(DnTlp *d)
{
    const Request q = mmioq.front();
    mmioq.pop();
    const uint32_t ndw = q.len / 4;
    const uint32_t addr = static_cast<uint32_t>(p.bar0_addr + q.off);
    const uint32_t lbe = ndw > 1 ? 0xf : 0;
    d->mmio = true;
    if (q.write) {
        d->mmio_id = q.id;
        d->dw.push_back(uint32_t(kMWr32) << 24 | ndw);
        d->dw.push_back(uint32_t(p.rc_id) << 16 | lbe << 4 | 0xf);
        d->dw.push_back(addr);
        d->dw.push_back(bswap32(static_cast<uint32_t>(q.value)));
        if (ndw == 2)
            d->dw.push_back(bswap32(static_cast<uint32_t>(q.value >> 32)));
        c.tlps_down_mwr++;
        c.bytes_down_payload += q.len;
    } else {
        const int tag = free_tag();
        tag_id[tag] = q.id;
        infos[q.id].tag = tag;
        d->dw.push_back(uint32_t(kMRd32) << 24 | ndw);
        d->dw.push_back(uint32_t(p.rc_id) << 16 | uint32_t(tag) << 8 | lbe << 4 | 0xf);
        d->dw.push_back(addr);
        c.tlps_down_mrd++;
    }
}

void MmioRequester::write_taken(int id, double t)
{
    MmioResult &r = results[id];
    r.done = true;
    r.done_ps = static_cast<uint64_t>(t);
    outstanding_--;
}

void MmioRequester::completion(const UpTlp &t)
{
    const uint32_t *h = t.hdr;
    const uint32_t status = (h[1] >> 13) & 7;
    const uint32_t bc = (h[1] & 0xfff) ? (h[1] & 0xfff) : 4096;
    const int id = t.tag < kTags ? tag_id[t.tag] : -1;
    const char *name = t.kind == Kind::CplD ? "CplD" : "Cpl";
    if (id < 0) {
        log.error(&c.unexpected_completion, t.arr, h, 3,
                  "device %s with tag %u: no host read is outstanding with that tag", name,
                  t.tag);
        return;
    }
    if (t.req_id != p.rc_id) {
        log.error(&c.unexpected_completion, t.arr, h, 3,
                  "device %s with requester id %#06x, expected the RC's %#06x", name, t.req_id,
                  p.rc_id);
        return;
    }
    const Info &info = infos[id];
    if (status != kStatusSC) {
        /* The read is over, as on real hardware: all ones, with the status. */
        log.error(&c.unexpected_completion, t.arr, h, 3,
                  "device %s with status %u for the host read of %d B at BAR0+%#llx", name,
                  status, info.len, static_cast<unsigned long long>(info.off));
        finish_read(id, t.arr, ~0ull, static_cast<uint16_t>(status));
        return;
    }
    const uint32_t want_dw = info.len / 4;
    const uint32_t la = h[2] & 0x7f, want_la = info.off & 0x7f;
    if (t.kind != Kind::CplD || t.len_dw != want_dw || bc != uint32_t(info.len) || la != want_la) {
        log.error(&c.unexpected_completion, t.arr, h, 3,
                  "device %s for the host read of %d B at BAR0+%#llx: length %u DW, byte count "
                  "%u, lower address %#x; expected a CplD of %u DW, byte count %d, lower address "
                  "%#x", name, info.len, static_cast<unsigned long long>(info.off),
                  t.kind == Kind::CplD ? t.len_dw : 0, bc, la, want_dw, info.len, want_la);
        return;
    }
    uint64_t v = bswap32(t.pl[0]);
    if (want_dw == 2)
        v |= uint64_t(bswap32(t.pl[1])) << 32;
    finish_read(id, t.arr, v, kStatusSC);
}

void MmioRequester::finish_read(int id, double t, uint64_t value, uint16_t status)
{
    MmioResult &r = results[id];
    Info &info = infos[id];
    r.done = true;
    r.value = info.len == 4 ? value & 0xffffffffull : value;
    r.status = status;
    r.done_ps = static_cast<uint64_t>(std::llround(t));
    if (info.tag >= 0)
        tag_id[info.tag] = -1;
    info.tag = -1;
    outstanding_--;
}

void MmioRequester::check_timeouts(double now)
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
        log.error(nullptr, now, nullptr, 0,
                  "host read %d of %d B at BAR0+%#llx: completion timeout (no completion in "
                  "50 us); it reads all ones", id, infos[id].len,
                  static_cast<unsigned long long>(infos[id].off));
        finish_read(id, now, ~0ull, 0xffff);
        reads.pop();
    }
}

} /* namespace nicsim::detail */
