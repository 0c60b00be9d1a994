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
#include <vector>

#include "fifo.h"
#include "link_params.h"
#include "model_log.h"
#include "pcie_tlp.h"

namespace nicsim::detail {

class HostMemory {
public:
    HostMemory(const LinkParams &p, Counters &c);

    uint8_t *data() { return base; }   /* bus address host_mem_addr */

    /* A device MWr that passed the checks: its bytes, with its byte enables. */
    void write(const UpTlp &t);

    /* A device MRd that reached the root complex at t.arr: t.ok, answered with the data;
     * else (t.answer_ur) with an Unsupported Request completion. */
    void read(const UpTlp &t);

    /* When the next completion may start; kInf when none is owed. */
    double next_ready() const { return cplq.empty() ? kInf : cplq.front().ready; }

    /* The next completion of the oldest read into d->dw (header + payload). Completions cover
     * [first enabled byte, last enabled byte] of the request; each ends at the largest
     * RCB-aligned address within MPS bytes of payload from the dword its data starts in (the
     * last one ends where the request does), so an unaligned request's first completion is
     * shorter. lower_address is the address of its first byte, byte_count the bytes left
     * including it (PCIe Base Spec byte-count rules, byte enables included). The read's last
     * completion gets d->read_tag = its tag. */
    void next_completion(DnTlp *d);

private:
    /* Completions owed for one device MRd: bytes [addr, end) still to send. */
    struct CplJob {
        double ready;
        uint64_t addr, end;
        uint16_t req_id;
        uint8_t tag;
        bool ur;
    };

    const LinkParams p;
    Counters &c;
    const double memlat_ps;
    std::vector<uint8_t> mem;         /* the window, unless LinkParams.host_mem_ext gives it */
    uint8_t *base;
    Fifo<CplJob> cplq;
};

} /* namespace nicsim::detail */

#endif /* NICSIM_HOST_MEMORY_H */
