// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_pci_config.cpp: PciConfig (pci_config.h) as the host's enumeration uses it: the IDs and
 * class, BAR0 sizing (all-ones written, the size mask read back, the address kept), read-only
 * bytes, the capability chain, and the MSI message for each vector under Multiple Message
 * Enable. Built and run by test_uml.py::test_pci_config_unit. Exit 0 when every check holds.
 */
#include <cstdio>

#include "pci_config.h"

static int failures = 0;
#define CHECK(c)                                                                    \
    do {                                                                            \
        if (!(c)) {                                                                 \
            std::fprintf(stderr, "%s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #c); \
            failures++;                                                             \
        }                                                                           \
    } while (0)

int main()
{
    nicsim::LinkParams p;
    umlpci::PciConfig c(p);
    CHECK(c.read(0, 4) == 0x702410eeu);
    CHECK(c.read(0x0a, 2) == 0x0200);                 /* class 02 00 */
    c.write(0, 4, 0);                                 /* IDs are read-only */
    CHECK(c.read(0, 2) == 0x10ee);
    c.write(0x10, 4, 0xffffffff);
    CHECK(c.read(0x10, 4) == static_cast<uint32_t>(~(p.bar0_size - 1)));
    c.write(0x10, 4, 0xf0000000);
    CHECK(c.read(0x10, 4) == 0xf0000000u);
    CHECK(!c.bus_master());
    c.write(0x04, 2, 0x0006);
    CHECK(c.bus_master() && c.read(0x04, 2) == 0x0006);
    /* Capability chain: PM -> MSI -> PCI Express -> end (no MSI-X until add_msix). */
    unsigned at = c.read(0x34, 1), ids[3], n = 0;
    while (at && n < 3) {
        ids[n++] = c.read(at, 1);
        at = c.read(at + 1, 1);
    }
    CHECK(n == 3 && ids[0] == 0x01 && ids[1] == 0x05 && ids[2] == 0x10 && at == 0);
    /* MSI: off -> no message; 8 vectors enabled -> data | vector, vectors past 8 refused. */
    uint64_t addr;
    uint16_t data;
    CHECK(!c.msi_message(0, &addr, &data));
    CHECK(((c.read(0x4a, 2) >> 1) & 7) == 5);       /* 32 messages capable */
    c.write(0x4c, 4, 0xa0000);
    c.write(0x50, 4, 0);
    c.write(0x54, 2, 0x0008);
    c.write(0x4a, 2, 0x0031);                        /* enable, MME 3: 8 vectors */
    CHECK(c.msi_enabled() && c.msi_allocated() == 8);
    CHECK(c.msi_message(3, &addr, &data) && addr == 0xa0000 && data == 0x000b);
    CHECK(!c.msi_message(8, &addr, &data));
    c.write(0x4a, 2, 0x0071);                        /* MME 7 clamped to the capability's 5 */
    CHECK(c.msi_allocated() == 32);
    CHECK(c.devctl_mps() == p.mps && c.devctl_mrrs() == p.mrrs);
    /* MSI-X added: PM -> MSI -> PCI Express -> MSI-X (0xa0), table size - 1, BIR 0 offsets;
     * only Enable and Function Mask are writable. */
    CHECK(!c.has_msix() && !c.msix_enabled());
    c.add_msix(0x6800, 0x7008, 6);
    at = c.read(0x34, 1);
    unsigned chain[4];
    n = 0;
    while (at && n < 4) {
        chain[n++] = c.read(at, 1);
        at = c.read(at + 1, 1);
    }
    CHECK(n == 4 && chain[2] == 0x10 && chain[3] == 0x11 && c.read(0x61, 1) == 0xa0);
    CHECK(c.read(0xa2, 2) == 5 && c.read(0xa4, 4) == 0x6800 && c.read(0xa8, 4) == 0x7008);
    c.write(0xa2, 2, 0xffff);
    CHECK(c.read(0xa2, 2) == 0xc005 && c.msix_enabled() && c.msix_function_mask());
    c.write(0xa2, 2, 0x8000);
    CHECK(c.msix_enabled() && !c.msix_function_mask());
    c.write(0xa4, 4, 0);                             /* table offset read-only */
    CHECK(c.read(0xa4, 4) == 0x6800);
    std::printf("test_pci_config: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
