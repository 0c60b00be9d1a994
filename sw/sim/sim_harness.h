/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * sim_harness.h: SimHarness steps the Verilated NIC SoC (top module `nicsoc`) one clock cycle
 * at a time with the PCIe host model (pcie_host_model.h) on its PHY pins, counts what the SoC's
 * probe pins show, and drives its Ethernet pins (NIC datapath build).
 *
 * Interfaces: step()/run() simulate cycles; model() is the root complex and host memory;
 * probes()/probe_map() the probe counters; scope_map() the bus analyzer's counts as the harness
 * sees them; write_stamp() each MWr's device-side times; eth_tx()/set_eth_rx()/set_eth_loopback() the Ethernet pins.
 * Parameters: LinkParams of the model (data_width must match the build: SIM_DATA_WIDTH) and
 * TraceParams (an optional waveform trace and analyzer sample log).
 */
#ifndef SIM_HARNESS_H
#define SIM_HARNESS_H

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "pcie_host_model.h"

namespace nicsim {

/* What the SoC's probe_* pins show, counted cycle by cycle:
 *   cycles                    cycles simulated since reset
 *   dma_wr_stall, dma_rd_stall  cycles a DMA request stream (writer MWr / reader MRd port of the
 *                             LitePCIe crossbar) was valid but not ready: held off
 *   dma_wr_stall_csr, dma_rd_stall_csr  the same, counted only inside a CSR read service window
 *   dma_wr_reqs, dma_rd_reqs  beats those streams transferred
 *   csr_window                cycles inside a CSR read service window: from the first beat of a
 *                             host MRd taken by the device to the last beat of its CplD leaving it
 *   csr_busy                  cycles the BAR0-to-CSR bridge was not idle */
struct ProbeCounters {
    uint64_t cycles = 0;
    uint64_t dma_wr_stall = 0, dma_rd_stall = 0;
    uint64_t dma_wr_stall_csr = 0, dma_rd_stall_csr = 0;
    uint64_t dma_wr_reqs = 0, dma_rd_reqs = 0;
    uint64_t csr_window = 0, csr_busy = 0;
    /* The analyzer's cycle count (its CAP_NOW) of the last cycle stepped, and that cycle's
     * simulated time: the exact pairing of the device's time base with the host's. */
    uint64_t an_now = 0, an_now_ps = 0;
};

/* One GMII octet time on a wire: data with tx_en/rx_dv (`en`) and tx_er/rx_er (`er`). */
struct EthOctet {
    uint8_t data = 0;
    bool en = false, er = false;
};
/* The most Ethernet cycles a system cycle holds (SIM_ETH_RATIO, the soak's faster wire). */
constexpr unsigned kMaxEthRatio = 16;

/* The device-side times of one MWr (the host model times its first beat on the TX pins:
 * WriteTiming, same index), from the probe pins: cls its class (the analyzer's write classes
 * in its order: 0 LitePCIe's raw DMA writer, 1 the NIC, 2 the analyzer's stream; kOtherWrite:
 * another port's), raised_ps its first beat's first valid cycle at its class's port
 * (`raised`: one was taken there before it), granted_ps its first valid cycle past the
 * crossbar's write arbiter, taken_ps the cycle it was taken there; `matched` false: an
 * MWr with no write taken before it. */
constexpr unsigned kOtherWrite = ~0u;
struct WriteStamp {
    unsigned cls = kOtherWrite;
    bool raised = false, matched = false;
    uint64_t raised_ps = 0, granted_ps = 0, taken_ps = 0;
};

struct TraceParams {
    std::string path;                 /* empty: no trace; FST when it ends in .fst, else VCD */
    uint64_t start_ns = 0;            /* dump from this simulated time */
    uint64_t stop_ns = UINT64_MAX;    /* ... up to this one */
    std::string sample_log;           /* every change of probe_an_sample with probe_an_now;
                                         empty: none */
};

class SimHarness {
public:
    SimHarness(const LinkParams &p, const TraceParams &t);
    ~SimHarness();
    SimHarness(const SimHarness &) = delete;
    SimHarness &operator=(const SimHarness &) = delete;

    void step();                      /* one clock cycle */
    void run(uint64_t ncycles);
    PcieHostModel &model();
    const ProbeCounters &probes() const;
    std::map<std::string, uint64_t> probe_map() const;
    /* The bus analyzer's counts, made again from the harness's own view (the PHY pins for
     * pcie_rx/pcie_tx; the probe_an_sample pin for the other probes; probe_csr_busy for hold)
     * over the analyzer's snapshot windows (probe_an_snapshot), for the last closed one:
     *   an.<probe>.<busy|stall|idle|bytes|frames|stall_hold>   (bytes: PHY probes only)
     *   an.<probe>.tlp.<mrd|mwr|cpld|cpl|msg|other>            (PHY probes)
     *   an.latency.<count|sum|min|max>                         (DMA read latency, cycles)
     *   an.windows                                             snapshots seen */
    std::map<std::string, uint64_t> scope_map() const;
    static int data_width();          /* the width this binary was built for */
    /* Device writes by MWr, in TX order as the host model numbers them (writes_timed(),
     * write_timing()): writes_stamped() counts them; write_stamp(i) gives MWr i while it is
     * among the last PcieHostModel::kReadLog (false otherwise). */
    uint64_t writes_stamped() const;
    bool write_stamp(uint64_t i, WriteStamp *w) const;

    /* Ethernet pins (NIC datapath build only: has_eth_pins()): the SoC's GMII-like eth_tx_*
     * outputs are sampled every Ethernet cycle and its eth_rx_* inputs driven from an
     * EthOctet; a step() holds eth_ratio() Ethernet cycles (1, or the soak build's K: the
     * Ethernet side on its own clock, K times as fast). By default the harness loops them
     * itself: rx in Ethernet cycle j of step n+1 = tx in cycle j of step n. The sim backend
     * turns that off to wire two harnesses back to back, add a wire delay or capture frames
     * (backend_sim.cpp). On builds without the pins these calls do nothing and eth_tx() stays
     * idle. */
    static bool has_eth_pins();       /* the SoC has the eth_* pins (NIC datapath build) */
    static unsigned eth_ratio();      /* Ethernet cycles per step() (SIM_ETH_RATIO) */
    const EthOctet *eth_tx() const;   /* the TX pins of the last step()'s eth_ratio() cycles */
    /* The RX pins in Ethernet cycle j (< eth_ratio()) of the next step() on. */
    void set_eth_rx(unsigned j, const EthOctet &o);
    void set_eth_loopback(bool on);   /* default on (above), done by step() */

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} /* namespace nicsim */

#endif /* SIM_HARNESS_H */
