/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * link_params.h: LinkParams, every parameter of the PCIe host model (link generation and width,
 * MPS/MRRS/RCB, latencies, DLLP limits, credits, TX buffer, PHY width and clock, ids, BAR0 and
 * the host memory window). Each field is a `--opts` key of the sim backend: parse() reads
 * "key=value,..." (keys: the field names), validate() checks values and combinations, to_json()
 * prints them with the derived rates. raw_gbps() .. model_read_gbps() are pcie-bench's link rate
 * and throughput limit formulas (Neugebauer et al., SIGCOMM 2018) for these parameters.
 */
#ifndef NICSIM_LINK_PARAMS_H
#define NICSIM_LINK_PARAMS_H

#include <cstdint>
#include <string>

namespace nicsim {

/* The host's MSI window (x86's 0xFEEx_xxxx): a device MWr here is an interrupt message (its
 * data's low 8 bits the vector), not a write to memory. */
constexpr uint64_t kMsiWindowAddr = 0xfee00000, kMsiWindowSize = 0x100000;

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
    bool iommu = true;                /* device accesses only within the DMA mappings (the sim
                                         backend's dma_alloc; iommu.h); 0: the whole window */
    bool msix = false;                /* the host enables the device's MSI-X (MSI-X Enable pin
                                         1; the sim backend programs the table): interrupts are
                                         MWr TLPs into the MSI window, not MSI requests */
    uint8_t *host_mem_ext = nullptr;  /* not a --opts key: host memory owned by the caller
                                         (host_mem_size bytes at host_mem_addr, e.g. a UML
                                         guest's, sw/uml/); null: the model's own, zeroed */
    /* Fault injection (docs/faults.md). Rates are probabilities in 0..1, drawn from one
     * generator seeded with fault_seed, so a run replays exactly with the same seed. */
    uint64_t fault_seed = 1;
    double fault_cpl_timeout = 0;     /* per device MRd: never answered (completion timeout) */
    double fault_ur = 0;              /* per device MRd: an Unsupported Request Cpl */
    double fault_ca = 0;              /* per device MRd: a Completer Abort Cpl */
    double fault_ep = 0;              /* per device MRd: its CplDs poisoned (EP, data garbled) */
    double fault_cpl_split = 0;       /* per device MRd: completions cut at random RCB
                                         boundaries (legal, smaller than usual) */
    double fault_cpl_reorder = 0;     /* per completion sent: another tag's goes first */
    double fault_credit_starve = 0;   /* per device TLP: no credit returns (posted and
                                         non-posted) for fault_starve_ns */
    double fault_starve_ns = 20000;
    double fault_link_down = 0;       /* per device TLP: the link goes down, every TLP in flight
                                         is lost, and it comes up fault_link_down_ns later */
    double fault_link_down_ns = 10000;
    double fault_link_down_at_ns = 0; /* also once at this time (a trigger); 0: never */

    bool faults_on() const
    {
        return fault_cpl_timeout > 0 || fault_ur > 0 || fault_ca > 0 || fault_ep > 0 ||
               fault_cpl_split > 0 || fault_cpl_reorder > 0 || fault_credit_starve > 0 ||
               fault_link_down > 0 || fault_link_down_at_ns > 0;
    }

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

} /* namespace nicsim */

#endif /* NICSIM_LINK_PARAMS_H */
