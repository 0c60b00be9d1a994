/*
 * pcie_host_model.h: PCIe root complex, link and host memory, as seen from the device's PHY
 * stream interface (LitePCIe's raw TLP streams). Pure C++17, no Verilator dependency: the harness
 * (sim_harness.cpp) copies the RTL's top-level pins into PhyIn every cycle and PhyOut back.
 *
 * Stream format (LitePCIe with the 7-series PHY, endianness "big"): a TLP starts at the start of a
 * beat; dword i of the TLP (header dwords first, then payload dwords) is lane i % W of beat i / W
 * (W = data_width / 32 dwords per beat, lane k = bits 32k+31..32k); each dword holds four TLP
 * bytes big-endian (TLP byte 4i in bits 31..24). Payload byte order is host memory order, so the
 * host byte at address A+0 of a MWr/CplD payload dword is in bits 31..24. `be` has 4 bits per
 * lane: 0xf for lanes carrying TLP dwords, 0 for lanes past the end of the TLP.
 *
 * Timing follows the pcie-bench model (Neugebauer et al., SIGCOMM 2018, and its pcie-model code):
 *   raw rate      GT/s x lanes x encoding (8b/10b for Gen1/2, 128b/130b for Gen3).
 *   per TLP       2 B framing (Gen3: 4) + 6 B DLL (seq + LCRC) + 12/16 B header + payload.
 *   DLLPs         8-byte Ack and UpdateFC DLLPs every ack_limit / fc_limit byte times of link
 *                 time (pcie-bench's table for gen/lanes/MPS), SKIP ordered sets 4 B per 1538;
 *                 both directions. A DLLP due while a TLP is on the wire goes right after it.
 *   credits       posted (PH/PD) and non-posted (NPH) credits advertised by the root complex;
 *                 a device TLP waits at the head of the TX queue until credits are there; they
 *                 come back credit_return_ns after the TLP reached the root complex.
 *   memory        a MRd is answered mem_read_latency_ns after it reached the root complex, with
 *                 completions split at the RCB and at most MPS bytes each.
 * Link traversal adds link_latency_ns in each direction on top of serialisation.
 *
 * Every TLP the device sends is checked; anything malformed or unexpected is an error (counted,
 * message kept, TLP not applied; a bad MRd is answered with an Unsupported Request completion).
 */
#ifndef PCIE_HOST_MODEL_H
#define PCIE_HOST_MODEL_H

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nicsim {

struct LinkParams {
    int gen = 2;                      /* 1, 2, 3 */
    int lanes = 4;                    /* 1, 2, 4, 8, 16 */
    int mps = 256;                    /* negotiated Max Payload Size, bytes: 128..4096 */
    int mrrs = 512;                   /* negotiated Max Read Request Size, bytes: 128..4096 */
    int rcb = 64;                     /* Read Completion Boundary, bytes: 64 or 128 */
    int dev_mps = 0;                  /* MPS told to the device; 0: = mps. Lets a test misconfigure
                                         the device to provoke MPS violations. */
    int dev_mrrs = 0;                 /* MRRS told to the device; 0: = mrrs */
    double mem_read_latency_ns = 500; /* MRd arrival at RC -> first completion ready */
    double link_latency_ns = 0;       /* per direction, on top of serialisation */
    double credit_return_ns = 0;      /* TLP arrival at RC -> its credits are usable again */
    int ack_limit = 0;                /* byte times between Ack DLLPs; 0: pcie-bench table */
    int fc_limit = 0;                 /* byte times between UpdateFC DLLPs; 0: pcie-bench table */
    int ph_credits = 64;              /* posted header credits advertised by the RC */
    int pd_credits = 1024;            /* posted data credits (16 B each) */
    int nph_credits = 32;             /* non-posted header credits */
    int tx_buf_tlps = 8;              /* device-side (hard IP) TX buffer, in TLPs waiting for the
                                         link; tx_ready drops while it is full */
    int data_width = 128;             /* PHY stream width: 64 or 128 */
    double clk_mhz = 125.0;           /* PHY/user clock */
    uint16_t device_id = 0x0100;      /* bus 1, device 0, function 0 */
    uint16_t rc_id = 0x0000;          /* requester id of the root complex */
    uint64_t bar0_addr = 0xe0000000;  /* bus address of BAR0 */
    uint64_t bar0_size = 0x100000;
    uint64_t host_mem_addr = 0x10000000; /* bus address of host memory window */
    uint64_t host_mem_size = 64ull << 20;
    bool strict = false;              /* abort() on the first error (for debugging) */

    /* Parse "key=value,key=value" (keys as the field names above). Unknown keys and bad values
     * are errors: returns false and sets *err. */
    bool parse(const std::string &kv, std::string *err);
    /* Check combinations (mps/mrrs/rcb powers of two in range, gen/lanes known, ...). */
    bool validate(std::string *err) const;
    std::string to_json() const;      /* every field, plus derived raw_gbps and tlp_gbps */

    double raw_gbps() const;          /* GT/s x lanes x encoding */
    double tlp_gbps() const;          /* raw less Ack/FC DLLPs and SKIPs (pcie-bench TLP_bw) */
    int ack_limit_bytes() const;      /* ack_limit or the table value */
    int fc_limit_bytes() const;
    /* pcie-bench model limits, in Gb/s of payload, for a transfer of `size` bytes with 32-bit
     * addressing (3DW headers, as LitePCIe's DMA uses here): */
    double model_write_gbps(uint64_t size) const; /* device writes (card-to-host) */
    double model_read_gbps(uint64_t size) const;  /* device reads (host-to-card) */
};

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
};

struct MmioResult {
    bool done = false;
    uint64_t value = 0;               /* read data (little-endian host view of the BAR bytes) */
    uint16_t status = 0;              /* completion status: 0 SC, 1 UR, 4 CA */
    uint64_t issue_ps = 0, done_ps = 0;
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

    /* Host MMIO to BAR0 (len 4 or 8 bytes, naturally aligned). Writes are posted MWr; reads are
     * MRd whose CplD completes them. Both return an id to poll with mmio_result(). A write is
     * done when its last beat was taken by the device. */
    int mmio_write(uint64_t bar0_off, uint64_t value, int len);
    int mmio_read(uint64_t bar0_off, int len);
    MmioResult mmio_result(int id) const;
    int mmio_outstanding() const;     /* MMIO requests not yet done */

    /* MSIs that reached the host, each with its arrival time. */
    bool irq_pending() const;
    bool irq_pop(uint64_t *arrival_ps, uint8_t *vector);

    /* Errors found in device TLPs (and completion timeouts of host reads). */
    const std::vector<std::string> &errors() const;
    /* Counters: tlps_up_<type>/tlps_down_<type> (mwr, mrd, cpld, cpl, msi; up = device to
     * host), bytes_up_payload, bytes_down_payload, tx_stall_cycles (tx_valid && !tx_ready), rx_stall_cycles (rx_valid &&
     * !rx_ready), link_busy_ps_up / link_busy_ps_down, credit_wait_ps, mmio_reads, mmio_writes,
     * msis, errors, mps_violations, boundary_violations, mrrs_violations, ... */
    std::map<std::string, uint64_t> counters() const;

    const LinkParams &params() const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} /* namespace nicsim */

#endif /* PCIE_HOST_MODEL_H */
