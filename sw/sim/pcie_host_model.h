/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcie_host_model.h: PcieHostModel, the PCIe root complex, link and host memory as seen from the
 * device's PHY stream interface (LitePCIe's raw TLP streams); the header users include. Pure
 * C++17, no Verilator dependency: the harness (sim_harness.cpp) copies the RTL's top-level pins
 * into PhyIn every cycle and PhyOut back.
 *
 * Interfaces: cycle() steps one PHY clock; host_mem() is the memory the device reads and writes;
 * mmio_read()/mmio_write() are host MMIO to BAR0; irq_pop() gives the MSIs that reached the
 * host; errors() and counters() what the model saw. Every device TLP is checked: a bad one is
 * counted, reported with its header and not applied; with the IOMMU on (LinkParams.iommu, the
 * default) that includes any access outside the mappings iommu_map() made.
 * Parameters: LinkParams (link_params.h; the sim backend's --opts keys). The stream format and
 * the timing model (pcie-bench's) are in docs/design.md, "Design notes: full-system simulation".
 */
#ifndef PCIE_HOST_MODEL_H
#define PCIE_HOST_MODEL_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "link_params.h"

namespace nicsim {

/* The PHY streams (LitePCIe with the 7-series PHY, endianness "big"): a TLP starts at the start
 * of a beat; dword i of the TLP (header dwords first, then payload dwords) is lane i % W of beat
 * i / W (W = data_width / 32 dwords per beat, lane k = bits 32k+31..32k of tx_dat/rx_dat); each
 * dword holds four TLP bytes big-endian (TLP byte 4i in bits 31..24). Payload byte order is
 * host memory order: the host byte at address A+0 of a MWr/CplD payload dword is in bits
 * 31..24. `be` has 4 bits per lane: 0xf for lanes carrying TLP dwords, 0 for lanes past the end
 * of the TLP. */

/* Device outputs, sampled after the falling-edge eval, before the rising edge. */
struct PhyIn {
    bool tx_valid = false, tx_first = false, tx_last = false;
    uint32_t tx_dat[4] = {0, 0, 0, 0};
    uint16_t tx_be = 0;
    bool rx_ready = false;
    bool msi_valid = false;
    uint8_t msi_dat = 0;
};

/* Model outputs (device inputs) for the coming cycle. */
struct PhyOut {
    bool rx_valid = false, rx_first = false, rx_last = false;
    uint32_t rx_dat[4] = {0, 0, 0, 0};
    uint16_t rx_be = 0;
    bool tx_ready = false;
    bool msi_ready = false;
    uint16_t id = 0, max_request_size = 0, max_payload_size = 0;
    bool link_up = false, msi_enable = false, bus_master_enable = false;
    bool msix_enable = false, msix_mask = false; /* MSI-X Enable, Function Mask */
    uint16_t fc_ph = 0, fc_pd = 0, fc_nph = 0;   /* transmit credits in use (pcie_fc_*) */
};

struct MmioResult {
    bool done = false;
    uint64_t value = 0;               /* read data (little-endian host view of the BAR bytes) */
    uint16_t status = 0;              /* completion status: 0 SC, 1 UR, 4 CA */
    uint64_t issue_ps = 0, done_ps = 0;
};

/* A device memory read timed at the PHY boundary: from the first beat of its MRd taken on the
 * TX stream (start), through the first beat of its first completion taken by the device on the
 * RX stream (first_cpl), to the last beat of its last completion (end). bytes: the MRd's length
 * field in bytes; addr: its address. */
struct ReadTiming {
    uint64_t start_ps = 0, first_cpl_ps = 0, end_ps = 0, addr = 0;
    uint32_t bytes = 0;
    uint8_t tag = 0;
};

/* A device memory write timed at the PHY boundary: the first beat of its MWr taken on the TX
 * stream (start); bytes: its length field in bytes. */
struct WriteTiming {
    uint64_t start_ps = 0;
    uint32_t bytes = 0;
};

class PcieHostModel {
public:
    explicit PcieHostModel(const LinkParams &p);
    ~PcieHostModel();

    /* One clock cycle. A tx beat transfers when in.tx_valid and the previous PhyOut's tx_ready
     * were both 1; an rx beat when the previous PhyOut's rx_valid and in.rx_ready were both 1;
     * an MSI when in.msi_valid and the previous msi_ready. Then time advances by one period and
     * *out gets the pins for the next cycle. */
    void cycle(const PhyIn &in, PhyOut *out);
    uint64_t now_ps() const;
    uint64_t cycles() const;

    /* Host memory: bus addresses [host_mem_addr, host_mem_addr + host_mem_size). */
    uint8_t *host_mem();
    uint64_t host_mem_addr() const;
    uint64_t host_mem_size() const;

    /* The IOMMU (LinkParams.iommu): the driver's DMA mappings, whole 4 KiB pages. A device
     * access outside every mapping is counted (iommu_faults), reported with its header and not
     * applied (a read is answered with Unsupported Request). */
    void iommu_map(uint64_t bus_addr, uint64_t size);
    void iommu_unmap(uint64_t bus_addr, uint64_t size);

    /* Host MMIO to BAR0 (len 4 or 8 bytes, naturally aligned). Writes are posted MWr; reads are
     * MRd whose CplD completes them. Both return an id to poll with mmio_result(). A write is
     * done when its last beat was taken by the device. */
    int mmio_write(uint64_t bar0_off, uint64_t value, int len);
    int mmio_read(uint64_t bar0_off, int len);
    MmioResult mmio_result(int id) const;
    int mmio_outstanding() const;     /* MMIO requests not yet done */

    /* Faults on demand (a test's, between cycles): the fault_link_down fault at once; the next
     * n device MWr overlapping [addr, addr + len) lost on their way to host memory
     * (fault_dropped_writes). */
    void link_down_now();
    void drop_writes(uint64_t addr, uint64_t len, unsigned n);

    /* MSI-X Enable and Function Mask as the host set them (initially LinkParams.msix, 0). */
    void set_msix(bool enable, bool function_mask);

    /* MSIs (MSI requests and MSI-X messages) that reached the host, each with its arrival
     * time. */
    bool irq_pending() const;
    bool irq_pop(uint64_t *arrival_ps, uint8_t *vector);

    /* Device reads timed at the PHY (ReadTiming), numbered 0, 1, ... in completion order:
     * reads_timed() counts them; read_timing(i) gives read i while it is among the last
     * kReadLog (false otherwise). */
    static constexpr uint64_t kReadLog = 65536;
    uint64_t reads_timed() const;
    bool read_timing(uint64_t i, ReadTiming *r) const;
    /* Device writes timed at the PHY (WriteTiming), numbered 0, 1, ... in TX order, the last
     * kReadLog kept: writes_timed() counts them. */
    uint64_t writes_timed() const;
    bool write_timing(uint64_t i, WriteTiming *w) const;

    /* Errors found in device TLPs (and completion timeouts of host reads). */
    const std::vector<std::string> &errors() const;
    /* Counters: tlps_up_<type>/tlps_down_<type> (mwr, mrd, cpld, cpl, msi; up = device to
     * host), bytes_up_payload, bytes_down_payload, tx_stall_cycles (tx_valid && !tx_ready),
     * rx_stall_cycles (rx_valid && !rx_ready), link_busy_ps_up / link_busy_ps_down,
     * credit_wait_ps, mmio_reads, mmio_writes, msis (MSI and MSI-X), msix_messages (MSI-X
     * MWr into the MSI window, counted as tlps_up_msi, not mwr), errors, mps_violations,
     * boundary_violations, mrrs_violations, iommu_faults, iommu_mappings, reads_timed,
     * writes_timed, ... */
    std::map<std::string, uint64_t> counters() const;

    const LinkParams &params() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} /* namespace nicsim */

#endif /* PCIE_HOST_MODEL_H */
