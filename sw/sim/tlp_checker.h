/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tlp_checker.h: TlpChecker, the PCIe host model's receiver of the device's TX stream (internal
 * to the model). It assembles the beats into TLPs, checks each (framing, length against beats
 * and be lanes, TD/EP, byte enables, MPS, MRRS, 4 KiB boundary, host memory window) and appends
 * it to the device-side TX buffer as an UpTlp with its wire size and credits. With the IOMMU on
 * (LinkParams.iommu), a MWr or MRd outside every DMA mapping (iommu.h) is an IOMMU fault. A bad TLP is
 * counted and reported (ModelLog) and still takes wire time, but is not applied at the root
 * complex; a bad MRd with a readable header is marked to be answered with an Unsupported Request.
 * Parameters: LinkParams (data_width, gen, mps, mrrs, pd_credits, host memory window).
 */
#ifndef NICSIM_TLP_CHECKER_H
#define NICSIM_TLP_CHECKER_H

#include <cstdint>
#include <vector>

#include "fifo.h"
#include "iommu.h"
#include "model_log.h"
#include "pcie_host_model.h"
#include "pcie_tlp.h"

namespace nicsim::detail {

class TlpChecker {
public:
    TlpChecker(const LinkParams &p, ModelLog &log, const Iommu &iommu);

    /* A TX beat the device handed over at `now` (ps). The last beat of a TLP appends it,
     * checked, to *txq; beats outside a TLP are dropped (a framing error). */
    void take_beat(const PhyIn &in, double now, Fifo<UpTlp> *txq);

private:
    void finish_tlp(double now, Fifo<UpTlp> *txq);
    void check_mem(UpTlp &t, int hdr_dw);
    void check_msix(UpTlp &t);
    void check_cpl(UpTlp &t);

    const LinkParams p;
    ModelLog &log;
    Counters &c;
    const Iommu &iommu;
    const int W;                      /* dwords per beat */
    const int ovh;                    /* framing + DLL bytes per TLP */
    std::vector<uint32_t> asm_dw;     /* the TLP being assembled */
    std::vector<uint16_t> asm_be;     /* be of each of its beats */
    bool asm_active = false, asm_orphan = false, asm_overflow = false;
    int asm_beats = 0;
};

} /* namespace nicsim::detail */

#endif /* NICSIM_TLP_CHECKER_H */
