// SPDX-License-Identifier: BSD-2-Clause
/*
 * model_log.cpp: ModelLog::error(), the one place the PCIe host model reports an error
 * (model_log.h).
 */
#include "model_log.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

namespace nicsim::detail {

namespace {

constexpr size_t kMaxErrorMessages = 10000;

} /* namespace */

void ModelLog::error(uint64_t *counter, double t, const uint32_t *hdr, int nhdr,
                     const char *fmt, ...)
{
    c.errors++;
    if (counter)
        (*counter)++;
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char when[48];
    std::snprintf(when, sizeof when, "pcie model: t=%.1f ns: ", t / 1000);
    std::string m = std::string(when) + what;
    if (nhdr > 0) {
        m += " [header";
        for (int i = 0; i < nhdr; i++) {
            char h[12];
            std::snprintf(h, sizeof h, " %08x", hdr[i]);
            m += h;
        }
        m += "]";
    }
    if (strict_) {
        std::fprintf(stderr, "%s\n", m.c_str());
        std::abort();
    }
    if (errs_.size() < kMaxErrorMessages)
        errs_.push_back(m);
    else if (errs_.size() == kMaxErrorMessages)
        errs_.push_back("pcie model: more errors; their messages are not kept (counters are)");
}

} /* namespace nicsim::detail */
