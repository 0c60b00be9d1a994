/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mmio_requester.h: MmioRequester, the host CPU's MMIO to BAR0 (internal to the PCIe host
 * model). request() queues a 4- or 8-byte write (a posted MWr, done when the device took its
 * last beat: write_taken()) or read (an MRd with one of 32 tags, done by its completion:
 * completion(), or after 50 us by a timeout that reads all ones: check_timeouts()). The model
 * sends the queue head with next_tlp() when the downstream link is free. Results stay
 * available by id; errors go to the ModelLog. Parameters: LinkParams (bar0_addr/size, rc_id).
 */
#ifndef NICSIM_MMIO_REQUESTER_H
#define NICSIM_MMIO_REQUESTER_H

#include <cstdint>
#include <vector>

#include "fifo.h"
#include "model_log.h"
#include "pcie_host_model.h"
#include "pcie_tlp.h"

namespace nicsim::detail {

class MmioRequester {
public:
    MmioRequester(const LinkParams &p, ModelLog &log);

    /* A host request at `now` (ps); returns its id. One that is not 4 or 8 bytes, naturally
     * aligned, inside BAR0 is refused: not sent, done at once with status UR. */
    int request(bool write, uint64_t off, uint64_t value, int len, double now);
    /* Its result; an id that is not ours is done and failed (status 0xffff, all ones). */
    MmioResult result(int id) const;
    int outstanding() const { return outstanding_; }

    /* When the queue head may start; kInf when the queue is empty or its head is a read and
     * every tag is in use (it then holds up the requests behind it, like a CPU). */
    double next_ready();
    /* Take the queue head into d: its TLP in d->dw, and for a write its id in d->mmio_id. */
    void next_tlp(DnTlp *d);

    /* The device took the last beat of MMIO write `id` at t. */
    void write_taken(int id, double t);
    /* A device Cpl/CplD that passed the checks reached the root complex (at t.arr). */
    void completion(const UpTlp &t);
    /* Reads issued more than 50 us before `now` and still not done time out. */
    void check_timeouts(double now);

private:
    struct Request {
        int id;
        bool write;
        uint64_t off, value;
        int len;
        double ready;
    };
    struct Info {
        bool write = false;
        int len = 0;
        uint64_t off = 0;
        int tag = -1;
    };
    static constexpr int kTags = 32;  /* tags the RC uses for MMIO reads: 0..31 */

    int free_tag() const;
    void finish_read(int id, double t, uint64_t value, uint16_t status);

    const LinkParams p;
    ModelLog &log;
    Counters &c;
    std::vector<MmioResult> results;
    std::vector<Info> infos;
    int outstanding_ = 0;
    int tag_id[kTags];                /* MMIO read id per tag, -1: free */
    Fifo<Request> mmioq;              /* requests not sent yet */
    Fifo<int> reads;                  /* MMIO read ids in issue order (for timeouts) */
};

} /* namespace nicsim::detail */

#endif /* NICSIM_MMIO_REQUESTER_H */
