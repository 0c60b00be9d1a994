/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcie_tlp.h: what the parts of the PCIe host model hand each other (internal to the model):
 * the fmt/type and completion status codes of the TLPs it handles; UpTlp, a device TLP from its
 * last beat to the root complex; DnTlp, a root-complex TLP on its way to the device; the
 * byte-enable and byte-order arithmetic of memory requests; kInf, the time of an event that is
 * not due. Dwords are as on the PHY stream: four TLP bytes each, big-endian. Header only.
 */
#ifndef NICSIM_PCIE_TLP_H
#define NICSIM_PCIE_TLP_H

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace nicsim::detail {

constexpr double kInf = std::numeric_limits<double>::infinity();

/* fmt[2:0] type[4:0] (DW0 bits 31..24) of the TLPs handled here. */
constexpr uint8_t kMRd32 = 0x00, kMRd64 = 0x20, kMWr32 = 0x40, kMWr64 = 0x60;
constexpr uint8_t kCpl = 0x0a, kCplD = 0x4a;
constexpr uint32_t kStatusSC = 0, kStatusUR = 1, kStatusCA = 4;

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

/* A host->device TLP on its way to the device, then offered beat by beat. */
struct DnTlp {
    double arr = 0;
    int mmio_id = -1;                 /* MMIO write: done when its last beat is taken */
    bool mmio = false;                /* a host MMIO request (kept when the link goes down) */
    int read_tag = -1;                /* last completion of the device read with this tag */
    std::vector<uint32_t> dw;         /* header + payload */
};

/* Lowest / highest set bit of a non-zero 4-bit byte-enable field (3 / 0 for 0). */
inline int ctz4(unsigned be) { return be & 1 ? 0 : be & 2 ? 1 : be & 4 ? 2 : 3; }
inline int msb4(unsigned be) { return be & 8 ? 3 : be & 4 ? 2 : be & 2 ? 1 : 0; }

/* Bytes a memory request of len_dw dwords covers given its byte enables (PCIe Base Spec,
 * completion Byte Count rules); 1 for a zero-length read (len 1, first BE 0). */
inline uint32_t request_byte_count(uint32_t len_dw, unsigned fbe, unsigned lbe)
{
    if (len_dw == 1)
        return fbe == 0 ? 1 : static_cast<uint32_t>(msb4(fbe) - ctz4(fbe) + 1);
    return len_dw * 4 - ctz4(fbe) - (3 - msb4(lbe));
}

/* Host value <-> payload dword: the host's byte at the lowest address is bits 31..24. */
inline uint32_t bswap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

} /* namespace nicsim::detail */

#endif /* NICSIM_PCIE_TLP_H */
