// SPDX-License-Identifier: BSD-2-Clause
/*
 * pcie_link.cpp: Link, one direction of the PCIe link with its DLLP and SKIP schedule
 * (pcie_link.h).
 */
#include "pcie_link.h"

#include <cmath>

namespace nicsim::detail {

namespace {

/* DLLPs that fell due on an idle wire before s went out for free. */
void skip_idle(double *next, double iv, double s)
{
    if (*next < s)
        *next += std::ceil((s - *next) / iv) * iv;
}

bool due(double *next, double iv, double fin)
{
    if (*next >= fin)
        return false;
    *next += iv;
    return true;
}

} /* namespace */

void Link::init(double byte_ps, int ack_limit, int fc_limit)
{
    bt = byte_ps;
    ack_iv = ack_limit * bt;
    fc_iv = fc_limit * bt;
    skip_iv = kSkipInterval * bt;
    next_ack = ack_iv;
    next_fc = fc_iv;
    next_skip = skip_iv;
}

double Link::send(double s, int bytes)
{
    skip_idle(&next_ack, ack_iv, s);
    skip_idle(&next_fc, fc_iv, s);
    skip_idle(&next_skip, skip_iv, s);
    const double end = s + bytes * bt;
    double fin = end;
    for (bool more = true; more;) {
        int n = 0;
        if (due(&next_ack, ack_iv, fin))
            n += kAckBytes;
        if (due(&next_fc, fc_iv, fin))
            n += kFcBytes;
        if (due(&next_skip, skip_iv, fin))
            n += kSkipBytes;
        fin += n * bt;
        dllp_bytes += n;
        more = n > 0;
    }
    free_at = fin;
    busy_ps += fin - s;
    tlp_bytes += bytes;
    return end;
}

} /* namespace nicsim::detail */
