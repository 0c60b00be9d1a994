// SPDX-License-Identifier: BSD-2-Clause
/*
 * pci_config.cpp: PciConfig (pci_config.h): the configuration space bytes, their write masks,
 * BAR0 sizing and the MSI capability's message.
 */
#include "pci_config.h"

#include <cstring>

namespace umlpci {

namespace {

constexpr uint32_t kPm = 0x40, kMsi = 0x48, kExp = 0x60, kMsix = 0xa0;

void put(uint8_t *b, uint32_t off, uint64_t v, int size)
{
    for (int i = 0; i < size; i++)
        b[off + i] = static_cast<uint8_t>(v >> (8 * i));
}

int log2_bytes_code(int bytes)    /* 128 -> 0, 256 -> 1, ... */
{
    int c = 0;
    while ((128 << c) < bytes)
        c++;
    return c;
}

} /* namespace */

PciConfig::PciConfig(const nicsim::LinkParams &p)
{
    std::memset(cfg, 0, sizeof(cfg));
    std::memset(wmask, 0, sizeof(wmask));
    bar0_mask = static_cast<uint32_t>(~(p.bar0_size - 1));
    put(cfg, 0x00, kVendor, 2);
    put(cfg, 0x02, kDevice, 2);
    put(cfg, 0x06, 0x0010, 2);        /* status: capability list */
    put(cfg, 0x08, 0x02000000, 4);    /* revision 0, class 02 00 00 */
    put(cfg, 0x10, 0x00000000, 4);    /* BAR0: memory, 32-bit, non-prefetchable */
    put(cfg, 0x2c, kVendor, 2);       /* subsystem vendor / id as the hard block's defaults */
    put(cfg, 0x2e, 0x0007, 2);
    put(cfg, 0x34, kPm, 1);
    put(cfg, 0x3d, 0x01, 1);          /* INTA */
    put(wmask, 0x04, 0x0547, 2);      /* command: IO, MEM, BME, SERR, parity, INTx disable */
    put(wmask, 0x0c, 0xff, 1);        /* cache line size */
    put(wmask, 0x10, bar0_mask, 4);
    put(wmask, 0x3c, 0xff, 1);        /* interrupt line */

    put(cfg, kPm, 0x01 | kMsi << 8, 2);
    put(cfg, kPm + 2, 0x0003, 2);     /* PM 1.2 */
    put(wmask, kPm + 4, 0x0003, 2);   /* power state */

    put(cfg, kMsi, 0x05 | kExp << 8, 2);
    put(cfg, kMsi + 2, 0x0080 | 5 << 1, 2);   /* 64-bit, 32 messages capable */
    put(wmask, kMsi + 2, 0x0071, 2);  /* MSI enable, multiple message enable */
    put(wmask, kMsi + 4, 0xfffffffc, 4);
    put(wmask, kMsi + 8, 0xffffffff, 4);
    put(wmask, kMsi + 12, 0xffff, 2);

    put(cfg, kExp, 0x10, 2);          /* PCI Express, last capability */
    put(cfg, kExp + 2, 0x0002, 2);    /* version 2, endpoint */
    put(cfg, kExp + 4, 0x00008000 | log2_bytes_code(256), 4);  /* devcap: MPS 256, RBER */
    put(cfg, kExp + 8, log2_bytes_code(p.mps) << 5 | log2_bytes_code(p.mrrs) << 12 | 0x10, 2);
    put(wmask, kExp + 8, 0x7cff, 2);  /* devctl: MPS, MRRS, relaxed ordering, ... */
    put(cfg, kExp + 12, p.gen | p.lanes << 4, 4);          /* linkcap: speed, width */
    put(cfg, kExp + 18, p.gen | p.lanes << 4, 2);          /* linkstatus */
    put(wmask, kExp + 16, 0x01c3, 2);
}

uint32_t PciConfig::dw(uint32_t off) const
{
    uint32_t v;
    std::memcpy(&v, cfg + off, 4);
    return v;
}

uint64_t PciConfig::read(uint32_t off, int size) const
{
    uint64_t v = 0;
    if (off >= sizeof(cfg) || size > static_cast<int>(sizeof(cfg) - off))
        return ~0ull;
    for (int i = 0; i < size; i++)
        v |= uint64_t(cfg[off + i]) << (8 * i);
    return v;
}

void PciConfig::write(uint32_t off, int size, uint64_t value)
{
    if (off >= sizeof(cfg) || size > static_cast<int>(sizeof(cfg) - off))
        return;
    for (int i = 0; i < size; i++) {
        const uint8_t m = wmask[off + i];
        cfg[off + i] = static_cast<uint8_t>((cfg[off + i] & ~m) | (value >> (8 * i) & m));
    }
    /* Multiple Message Enable past the capability is clamped to it. */
    uint16_t mc;
    std::memcpy(&mc, cfg + kMsi + 2, 2);
    if (((mc >> 4) & 7) > 5)
        mc = static_cast<uint16_t>((mc & ~0x70) | 5 << 4);
    std::memcpy(cfg + kMsi + 2, &mc, 2);
}

bool PciConfig::msi_enabled() const { return cfg[kMsi + 2] & 1; }

unsigned PciConfig::msi_allocated() const { return 1u << ((cfg[kMsi + 2] >> 4) & 7); }

bool PciConfig::msi_message(unsigned vector, uint64_t *addr, uint16_t *data) const
{
    const unsigned n = msi_allocated();
    if (!msi_enabled() || vector >= n)
        return false;
    *addr = uint64_t(dw(kMsi + 8)) << 32 | dw(kMsi + 4);
    const uint16_t d = static_cast<uint16_t>(cfg[kMsi + 12] | cfg[kMsi + 13] << 8);
    *data = static_cast<uint16_t>((d & ~(n - 1)) | vector);
    return true;
}

void PciConfig::add_msix(uint32_t table_off, uint32_t pba_off, unsigned entries)
{
    msix_entries = entries;
    put(cfg, kExp + 1, kMsix, 1);                 /* PCI Express -> MSI-X */
    put(cfg, kMsix, 0x11, 2);                     /* MSI-X, last capability */
    put(cfg, kMsix + 2, entries - 1, 2);          /* table size - 1 */
    put(wmask, kMsix + 2, 0xc000, 2);             /* MSI-X Enable, Function Mask */
    put(cfg, kMsix + 4, table_off, 4);            /* BIR 0 */
    put(cfg, kMsix + 8, pba_off, 4);
}

bool PciConfig::msix_enabled() const { return msix_entries && (cfg[kMsix + 3] & 0x80); }

bool PciConfig::msix_function_mask() const { return msix_entries && (cfg[kMsix + 3] & 0x40); }

bool PciConfig::bus_master() const { return cfg[0x04] & 0x04; }

int PciConfig::devctl_mps() const { return 128 << ((cfg[kExp + 8] >> 5) & 7); }

int PciConfig::devctl_mrrs() const { return 128 << ((cfg[kExp + 9] >> 4) & 7); }

} /* namespace umlpci */
