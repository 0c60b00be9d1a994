// SPDX-License-Identifier: BSD-2-Clause
/*
 * tlp_checker.cpp: TlpChecker (tlp_checker.h): device TX beats -> checked TLPs.
 */
#include "tlp_checker.h"

#include <algorithm>

#include "pcie_link.h"

namespace nicsim::detail {

namespace {

constexpr int kMaxTlpDw = 4 + 1024;       /* 4DW header + 4 KiB payload */

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

} /* namespace */

TlpChecker::TlpChecker(const LinkParams &lp, ModelLog &l, const Iommu &mmu)
    : p(lp), log(l), c(l.c), iommu(mmu), W(lp.data_width / 32), ovh(tlp_overhead_bytes(lp.gen))
{
    asm_dw.reserve(kMaxTlpDw + W);
    asm_be.reserve(kMaxTlpDw / W + 2);
}

void TlpChecker::take_beat(const PhyIn &in, double now, Fifo<UpTlp> *txq)
{
    if (in.tx_first) {
        if (asm_active)
            log.error(&c.framing_errors, now, asm_dw.data(), std::min<int>(asm_dw.size(), 4),
                      "device TLP cut short: a first beat came before the last beat of this "
                      "one (dropped)");
        asm_active = true;
        asm_orphan = asm_overflow = false;
        asm_dw.clear();
        asm_be.clear();
        asm_beats = 0;
    } else if (!asm_active) {
        if (!asm_orphan)
            log.error(&c.framing_errors, now, nullptr, 0,
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
        finish_tlp(now, txq);
    }
}

/* Check an assembled TLP and put it in the TX buffer; a bad one too, as it still takes
 * wire time, but it is not applied at the RC. */
void TlpChecker::finish_tlp(double now, Fifo<UpTlp> *txq)
{
    UpTlp &t = txq->push_slot();
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
        log.error(&c.unsupported_tlps, now, h, nh, "device TLP with unsupported fmt/type %#04x",
                  ft);
        return;
    }
    const int want_beats = (total + W - 1) / W;
    if (asm_overflow || asm_beats != want_beats || nh < hdr_dw) {
        log.error(&c.length_errors, now, h, nh,
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
            log.error(&c.be_errors, now, h, nh,
                      "device TLP: beat %d has be=%#x, expected %#x for a %d-DW TLP", b,
                      asm_be[b], want, total);
            mark_bad(t);
            return;
        }
    }
    if (dw0 & (1u << 15)) {
        log.error(&c.unsupported_tlps, now, h, nh, "device TLP with TD (ECRC digest) set");
        mark_bad(t);
        return;
    }
    if (dw0 & (1u << 14)) {
        log.error(&c.poisoned_tlps, now, h, nh, "device sent a poisoned (EP) TLP");
        mark_bad(t);
        return;
    }
    if (t.kind == Kind::MWr || t.kind == Kind::MRd)
        check_mem(t, hdr_dw);
    else
        check_cpl(t);
}

void TlpChecker::check_mem(UpTlp &t, int hdr_dw)
{
    const double now = t.enq;         /* its last beat */
    const uint32_t *h = t.hdr;
    const int nh = t.nhdr;
    const bool wr = t.kind == Kind::MWr;
    const char *name = wr ? "MWr" : "MRd";
    decode_request(t);
    const uint64_t bytes = uint64_t(t.len_dw) * 4;
    if (wr) {
        t.ph = 1;
        t.pd = std::min<int>((t.len_dw + 3) / 4, p.pd_credits);
        t.pl.assign(asm_dw.begin() + hdr_dw, asm_dw.begin() + hdr_dw + t.len_dw);
        if (t.addr >= kMsiWindowAddr && t.addr < kMsiWindowAddr + kMsiWindowSize) {
            check_msix(t);
            return;
        }
        c.bytes_up_payload += bytes;
    } else {
        t.nph = 1;
    }
    bool bad = false;
    if (h[hdr_dw - 1] & 3) {
        log.error(&c.unsupported_tlps, now, h, nh, "device %s with address bits 1:0 not 0", name);
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
        log.error(&c.byte_enable_errors, now, h, nh,
                  "device %s of %u DW with invalid byte enables first=%#x last=%#x", name,
                  t.len_dw, fbe, lbe);
        bad = true;
    }
    if (wr && bytes > static_cast<uint64_t>(p.mps)) {
        log.error(&c.mps_violations, now, h, nh, "device MWr of %llu B exceeds MPS %d B",
                  static_cast<unsigned long long>(bytes), p.mps);
        bad = true;
    }
    if (!wr && bytes > static_cast<uint64_t>(p.mrrs)) {
        log.error(&c.mrrs_violations, now, h, nh, "device MRd of %llu B exceeds MRRS %d B",
                  static_cast<unsigned long long>(bytes), p.mrrs);
        bad = true;
    }
    if ((t.addr >> 12) != ((t.addr + bytes - 1) >> 12)) {
        log.error(&c.boundary_violations, now, h, nh,
                  "device %s of %llu B at %#llx crosses a 4 KiB boundary", name,
                  static_cast<unsigned long long>(bytes),
                  static_cast<unsigned long long>(t.addr));
        bad = true;
    }
    if (t.addr < p.host_mem_addr || t.addr + bytes > p.host_mem_addr + p.host_mem_size ||
        t.addr + bytes < t.addr) {
        log.error(&c.bad_address, now, h, nh,
                  "device %s of %llu B at %#llx is outside host memory [%#llx, %#llx)", name,
                  static_cast<unsigned long long>(bytes), static_cast<unsigned long long>(t.addr),
                  static_cast<unsigned long long>(p.host_mem_addr),
                  static_cast<unsigned long long>(p.host_mem_addr + p.host_mem_size));
        bad = true;
    } else if (p.iommu && !iommu.allows(t.addr, bytes)) {
        log.error(&c.iommu_faults, now, h, nh,
                  "IOMMU fault: device %s of %llu B at %#llx is outside every DMA mapping "
                  "(%zu mapped)", name, static_cast<unsigned long long>(bytes),
                  static_cast<unsigned long long>(t.addr), iommu.mappings());
        bad = true;
    }
    t.ok = !bad;
    t.answer_ur = bad && !wr;
}

/* An MWr into the MSI window: an MSI-X message (one DWORD of message data, all bytes
 * enabled), an interrupt with its data's low 8 bits as vector, counted as an MSI, not a
 * write (finish_tlp counted it by its type: moved here) nor as payload; anything else there
 * is refused. */
void TlpChecker::check_msix(UpTlp &t)
{
    const double now = t.enq;
    c.tlps_up_mwr--;
    c.tlps_up_msi++;
    if (t.len_dw != 1 || t.fbe != 0xf || t.lbe != 0 || t.nhdr != 3) {
        log.error(&c.unsupported_tlps, now, t.hdr, t.nhdr,
                  "device MWr into the MSI window at %#llx is not an MSI-X message (%u DW, "
                  "first BE %#x, %d-DW header)", static_cast<unsigned long long>(t.addr),
                  t.len_dw, t.fbe, t.nhdr);
        t.ok = false;
        return;
    }
    /* Payload bytes are big-endian in the dword (host byte A+0 in bits 31..24); the message
     * data is the 32-bit little-endian value at the address. */
    const uint32_t d = t.pl[0];
    const uint32_t data = (d >> 24) | ((d >> 8) & 0xff00) | ((d << 8) & 0xff0000) | (d << 24);
    t.kind = Kind::Msi;
    t.vector = static_cast<uint8_t>(data);
    t.ok = true;
    c.msix_messages++;
}

/* Completions: only their payload here; they are matched to host reads at the RC. */
void TlpChecker::check_cpl(UpTlp &t)
{
    t.req_id = t.hdr[2] >> 16;
    t.tag = (t.hdr[2] >> 8) & 0xff;
    if (t.kind == Kind::CplD) {
        c.bytes_up_payload += uint64_t(t.len_dw) * 4;
        t.pl.assign(asm_dw.begin() + 3, asm_dw.begin() + 3 + t.len_dw);
    }
    t.ok = true;
}

} /* namespace nicsim::detail */
