/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * iommu.h: Iommu, the PCIe host model's DMA remapping check (internal to the model), as VFIO with
 * an IOMMU gives a device: the driver's DMA allocations are mappings, whole 4 KiB pages as an
 * IOMMU maps them; a device MWr or MRd must lie within one mapping, else it is a fault, which
 * TlpChecker counts (iommu_faults) and reports with the TLP's header: the write is dropped, the
 * read answered with Unsupported Request.
 * Interfaces: map(addr, size) and unmap(addr, size) (the sim backend's dma_alloc/dma_free),
 * allows(addr, bytes), mappings().
 * Parameters: LinkParams.iommu (the `iommu` --opts key; 0: any access inside the host memory
 * window is allowed, as without an IOMMU).
 */
#ifndef NICSIM_IOMMU_H
#define NICSIM_IOMMU_H

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>

namespace nicsim::detail {

class Iommu {
public:
    static constexpr uint64_t kPage = 4096;

    /* Maps the pages of [addr, addr + size); overlapping or adjacent mappings merge. */
    void map(uint64_t addr, uint64_t size)
    {
        if (size == 0)
            return;
        uint64_t lo = addr & ~(kPage - 1), hi = (addr + size + kPage - 1) & ~(kPage - 1);
        auto it = maps_.upper_bound(lo);
        if (it != maps_.begin() && std::prev(it)->second >= lo)
            --it;
        while (it != maps_.end() && it->first <= hi) {
            lo = std::min(lo, it->first);
            hi = std::max(hi, it->second);
            it = maps_.erase(it);
        }
        maps_[lo] = hi;
    }

    /* Unmaps the pages of [addr, addr + size) (splitting a mapping that extends past them). */
    void unmap(uint64_t addr, uint64_t size)
    {
        if (size == 0)
            return;
        const uint64_t lo = addr & ~(kPage - 1), hi = (addr + size + kPage - 1) & ~(kPage - 1);
        auto it = maps_.upper_bound(lo);
        if (it != maps_.begin())
            --it;
        while (it != maps_.end() && it->first < hi) {
            const uint64_t s = it->first, e = it->second;
            if (e <= lo) {
                ++it;
                continue;
            }
            it = maps_.erase(it);
            if (s < lo)
                maps_[s] = lo;
            if (e > hi)
                maps_[hi] = e;
        }
    }

    /* [addr, addr + bytes) lies within one mapping. */
    bool allows(uint64_t addr, uint64_t bytes) const
    {
        auto it = maps_.upper_bound(addr);
        if (it == maps_.begin())
            return false;
        --it;
        return addr >= it->first && addr + bytes <= it->second && addr + bytes >= addr;
    }

    size_t mappings() const { return maps_.size(); }

private:
    std::map<uint64_t, uint64_t> maps_;   /* page-aligned start -> end, disjoint */
};

} /* namespace nicsim::detail */

#endif /* NICSIM_IOMMU_H */
