/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcie_link.h: link timing of the PCIe host model, after pcie-bench (Neugebauer et al., SIGCOMM
 * 2018); internal to the model. Link: one direction of the link, a byte-serial pipe of the raw
 * rate that carries TLPs and, on a wall-clock grid, the Ack/UpdateFC DLLPs and SKIP ordered sets
 * that take link time from them. Credits: the posted and non-posted flow-control credits the
 * root complex advertises and gives back. Also the wire sizes LinkParams' rate formulas use.
 * Times are in ps; parameters come from LinkParams (gen, lanes, ack/fc limits, credits).
 */
#ifndef NICSIM_PCIE_LINK_H
#define NICSIM_PCIE_LINK_H

#include <cstdint>

#include "fifo.h"
#include "pcie_tlp.h"

namespace nicsim::detail {

constexpr int kDllBytes = 6;              /* sequence number 2 + LCRC 4 */
constexpr int kAckBytes = 8, kFcBytes = 8; /* a DLLP with its framing */
constexpr int kSkipBytes = 4, kSkipInterval = 1538;

/* Framing + DLL bytes of one TLP on the wire: framing (Gen1/2: 2 B STP/END; Gen3: 4 B, the
 * 128b/130b STP token) + 6 B DLL. pcie-bench charges 8 B at every generation; we differ only
 * for Gen3 (10 B). A TLP's wire size is this + 12/16 B header + payload. */
inline int tlp_overhead_bytes(int gen) { return (gen >= 3 ? 4 : 2) + kDllBytes; }

/*
 * One direction of the link: a byte-serial pipe of the raw rate (as in pcie-bench; the device's
 * stream width and clock only bound how fast it hands TLPs to its TX buffer). DLLPs go on a
 * wall-clock grid: an 8 B Ack every ack_limit byte times, an 8 B UpdateFC every fc_limit byte
 * times, a 4 B SKIP every 1538 byte times. One falling due while the wire is idle is free; one
 * falling due while a TLP (or a DLLP after it) is on the wire is sent right after that TLP and
 * delays the next one. Under saturation this gives pcie-bench's
 * TLP_bw = raw x (1 - 8/ack - 8/fc - 4/1538).
 */
struct Link {
    double bt = 0;                    /* ps per wire byte */
    double ack_iv = 0, fc_iv = 0, skip_iv = 0;
    double next_ack = 0, next_fc = 0, next_skip = 0;
    double free_at = 0;               /* the wire is free from here */
    double busy_ps = 0;
    uint64_t tlp_bytes = 0, dllp_bytes = 0;

    void init(double byte_ps, int ack_limit, int fc_limit);

    /* Put a TLP of `bytes` wire bytes on the wire at s (>= free_at); returns the time its last
     * byte left. DLLPs due meanwhile follow it and keep the wire busy. */
    double send(double s, int bytes);
};

/* Flow-control credits the root complex advertises: posted headers (PH), posted data (PD, 16 B
 * each), non-posted headers (NPH). A device TLP takes its credits when it starts on the wire
 * (it waits at the head of the TX buffer until they are there); they are usable again
 * return_ps after it reached the root complex. */
class Credits {
public:
    void init(int ph, int pd, int nph, double return_ps)
    {
        ph_ = ph_init_ = ph;
        pd_ = pd_init_ = pd;
        nph_ = nph_init_ = nph;
        return_ps_ = return_ps;
    }
    bool enough(int ph, int pd, int nph) const { return ph_ >= ph && pd_ >= pd && nph_ >= nph; }
    void take(int ph, int pd, int nph)
    {
        ph_ -= ph;
        pd_ -= pd;
        nph_ -= nph;
    }
    /* The TLP that took these credits reached the root complex at `arrival`. */
    void release(double arrival, int ph, int pd, int nph)
    {
        if (ph || pd || nph)
            returns_.push_slot() = Return{arrival + return_ps_, ph, pd, nph};
    }
    /* Credits in use: taken by TLPs sent and not yet returned. */
    int ph_used() const { return ph_init_ - ph_; }
    int pd_used() const { return pd_init_ - pd_; }
    int nph_used() const { return nph_init_ - nph_; }
    double next_return() const { return returns_.empty() ? kInf : returns_.front().t; }
    void return_next()
    {
        const Return &r = returns_.front();
        ph_ += r.ph;
        pd_ += r.pd;
        nph_ += r.nph;
        returns_.pop();
    }

private:
    struct Return {
        double t;
        int ph, pd, nph;
    };
    int ph_ = 0, pd_ = 0, nph_ = 0;
    int ph_init_ = 0, pd_init_ = 0, nph_init_ = 0;
    double return_ps_ = 0;
    Fifo<Return> returns_;
};

} /* namespace nicsim::detail */

#endif /* NICSIM_PCIE_LINK_H */
