/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pci_config.h: PciConfig, the NIC's PCI configuration space as the 7-series Gen2 hard block
 * (LitePCIe's s7pciephy) presents it to the host: Xilinx's IDs 10ee:7024, class 02 00 00
 * (Ethernet controller), BAR0 a 32-bit non-prefetchable memory BAR of LinkParams.bar0_size, and
 * the capability list PM (0x40) -> MSI (0x48, 64-bit, 32 messages, no per-vector masking) ->
 * PCI Express endpoint (0x60: MPS supported 256, link Gen2 x4 or as LinkParams says) -> MSI-X
 * (0xa0, after add_msix(): its table and PBA in BAR0, where the device has them). The root
 * complex model answers the SoC's own config reads (its id, MPS, MRRS come from LinkParams), so
 * this is the host's view only.
 *
 * Interfaces: read(off, size)/write(off, size, value) as virtio-pcidev's CFG_READ/CFG_WRITE;
 * msi_enabled(), msi_message(vector, &addr, &data) for the MSI capability as the guest set it;
 * msix_enabled(), msix_function_mask() for MSI-X's Message Control;
 * devctl_mps()/devctl_mrrs() what the guest wrote to Device Control.
 * Parameters: LinkParams (BAR0 size, gen, lanes, mps, mrrs).
 */
#ifndef UML_PCI_CONFIG_H
#define UML_PCI_CONFIG_H

#include <cstdint>

#include "link_params.h"

namespace umlpci {

class PciConfig {
public:
    static constexpr uint16_t kVendor = 0x10ee, kDevice = 0x7024;
    static constexpr int kMsiVectors = 32;

    explicit PciConfig(const nicsim::LinkParams &p);
    uint64_t read(uint32_t off, int size) const;
    void write(uint32_t off, int size, uint64_t value);

    bool msi_enabled() const;
    unsigned msi_allocated() const;   /* 1 << Multiple Message Enable */
    /* The MSI the device sends for `vector` (data with the vector in its low bits, PCI spec
     * 6.8.1.6); false when MSI is off or the vector is past the allocated ones. */
    bool msi_message(unsigned vector, uint64_t *addr, uint16_t *data) const;
    /* The MSI-X capability: `entries` table entries at BAR0 offset table_off, the PBA at
     * pba_off (both 8-byte aligned). */
    void add_msix(uint32_t table_off, uint32_t pba_off, unsigned entries);
    bool has_msix() const { return msix_entries != 0; }
    bool msix_enabled() const;
    bool msix_function_mask() const;
    bool bus_master() const;
    int devctl_mps() const;
    int devctl_mrrs() const;

private:
    uint32_t dw(uint32_t off) const;
    uint8_t cfg[4096];
    uint8_t wmask[4096];              /* writable bits of each byte */
    uint32_t bar0_mask;
    unsigned msix_entries = 0;
};

} /* namespace umlpci */

#endif /* UML_PCI_CONFIG_H */
