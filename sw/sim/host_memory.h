/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * host_memory.h: HostMemory, the host memory window behind the root complex and its answers to
 * device reads (internal to the PCIe host model). write() applies a device MWr that passed the
 * checks; read() takes a device MRd that reached the root complex and owes it completions, ready
 * mem_read_latency_ns later (an Unsupported Request completion at once for a bad one); the model
 * sends them one TLP at a time with next_completion() when the downstream link is free.
 * Parameters: LinkParams (host_mem_addr/size, mps, rcb, rc_id, mem_read_latency_ns).
 */
#ifndef NICSIM_HOST_MEMORY_H
#define NICSIM_HOST_MEMORY_H

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "fifo.h"
#include "link_params.h"
#include "model_log.h"
#include "pcie_tlp.h"

namespace nicsim::detail {

class HostMemory {
public:
    /* rng: the model's fault generator (LinkParams fault_*: timeouts, UR/CA, poisoned, odd
     * splits and reordering of completions). */
    HostMemory(const LinkParams &p, Counters &c, std::mt19937_64 &rng);

    uint8_t *data() { return base; }   /* bus address host_mem_addr */

    /* A device MWr that passed the checks: its bytes, with its byte enables. */
    void write(const UpTlp &t);

    /* A device MRd that reached the root complex at t.arr: t.ok, answered with the data;
     * else (t.answer_ur) with an Unsupported Request completion. With faults on, a good read
     * may instead be never answered, answered with UR or CA, poisoned, or split oddly. */
    void read(const UpTlp &t);

    /* When the next completion may start; kInf when none is owed. */
    double next_ready() const { return cplq.empty() ? kInf : cplq.front().ready; }

    /* The link went down: every completion still owed is lost. Returns how many reads. */
    uint64_t drop_all();

    /* The next completion of the oldest read into d->dw (header + payload). Completions cover
     * [first enabled byte, last enabled byte] of the request; each ends at the largest
     * RCB-aligned address within MPS bytes of payload from the dword its data starts in (the
     * last one ends where the request does), so an unaligned request's first completion is
     * shorter. lower_address is the address of its first byte, byte_count the bytes left
     * including it (PCIe Base Spec byte-count rules, byte enables included). The read's last
     * completion gets d->read_tag = its tag. With fault_cpl_reorder, the completion may be
     * another read's (ready by `now`) instead of the oldest's. */
    void next_completion(DnTlp *d, double now);

private:
    /* Completions owed for one device MRd: bytes [addr, end) still to send. */
    struct CplJob {
        double ready;
        uint64_t addr, end;
        uint16_t req_id;
        uint8_t tag;
        uint8_t status;               /* kStatusSC, UR or CA (no data) */
        bool ep, split;               /* poisoned CplDs; cut at random RCB boundaries */
        bool injected;                /* status UR/CA by fault injection, not a bad request */
    };

    bool draw(double rate) { return rate > 0 && std::uniform_real_distribution<>(0, 1)(rng) < rate; }

    const LinkParams p;
    Counters &c;
    std::mt19937_64 &rng;
    const double memlat_ps;
    std::vector<uint8_t> mem;         /* the window, unless LinkParams.host_mem_ext gives it */
    uint8_t *base;
    std::deque<CplJob> cplq;
};

} /* namespace nicsim::detail */

#endif /* NICSIM_HOST_MEMORY_H */
