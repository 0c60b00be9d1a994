/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * model_log.h: what the PCIe host model counts and the errors it found (internal to the
 * model). Counters: every event count PcieHostModel::counters() reports. ModelLog: the counters
 * plus error(), which counts an error in device TLPs or host requests and keeps its message,
 * with the simulated time and the offending header (the first 10000 messages; all counts).
 * Parameter: strict (LinkParams::strict): print the first error and abort().
 */
#ifndef NICSIM_MODEL_LOG_H
#define NICSIM_MODEL_LOG_H

#include <cstdint>
#include <string>
#include <vector>

namespace nicsim::detail {

struct Counters {
    uint64_t tlps_up_mwr = 0, tlps_up_mrd = 0, tlps_up_cpld = 0, tlps_up_cpl = 0,
             tlps_up_msi = 0, tlps_up_bad = 0;
    uint64_t tlps_down_mwr = 0, tlps_down_mrd = 0, tlps_down_cpld = 0, tlps_down_cpl = 0;
    uint64_t bytes_up_payload = 0, bytes_down_payload = 0;
    uint64_t tx_stall_cycles = 0, rx_stall_cycles = 0;
    double credit_wait_ps = 0;
    uint64_t credit_waits = 0;
    uint64_t mmio_reads = 0, mmio_writes = 0, msis = 0, msix_messages = 0, errors = 0;
    uint64_t mps_violations = 0, mrrs_violations = 0, boundary_violations = 0, bad_address = 0;
    uint64_t unexpected_completion = 0, completion_timeouts = 0;
    uint64_t unsupported_tlps = 0, length_errors = 0, be_errors = 0, framing_errors = 0;
    uint64_t byte_enable_errors = 0, poisoned_tlps = 0, bad_mmio = 0, ur_completions = 0;
    uint64_t iommu_faults = 0;
    /* Faults injected (LinkParams fault_*). */
    uint64_t fault_cpl_timeouts = 0, fault_ur = 0, fault_ca = 0, fault_ep_reads = 0;
    uint64_t fault_ep_tlps = 0, fault_split_reads = 0, fault_reordered = 0;
    uint64_t fault_starves = 0, fault_link_downs = 0, fault_link_lost_tlps = 0;
    uint64_t fault_link_lost_reads = 0;
    uint64_t fault_dropped_writes = 0;   /* drop_writes() */
};

class ModelLog {
public:
    explicit ModelLog(bool strict) : strict_(strict) {}

    Counters c;

    /* One error at simulated time t (ps): counts it in c.errors and in *counter (if given),
     * keeps "pcie model: t=<ns> ns: <message> [header <nhdr dwords of hdr>]". */
    [[gnu::format(printf, 6, 7)]] void error(uint64_t *counter, double t, const uint32_t *hdr,
                                             int nhdr, const char *fmt, ...);
    const std::vector<std::string> &messages() const { return errs_; }

private:
    bool strict_;
    std::vector<std::string> errs_;
};

} /* namespace nicsim::detail */

#endif /* NICSIM_MODEL_LOG_H */
