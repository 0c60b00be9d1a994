/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_pcie_host_model.h: what the files of the PCIe host model's unit test share: check()
 * (prints "ok ..." or "FAIL ...", counts failures), counter() and last_error() of a model, the
 * base configuration of a 7-series part for a PHY width, and the test functions, one per part
 * of the model (main() in test_pcie_host_model.cpp runs them all for one width).
 */
#ifndef TEST_PCIE_HOST_MODEL_H
#define TEST_PCIE_HOST_MODEL_H

#include <cstdint>
#include <string>

#include "pcie_host_model.h"
#include "test_fake_device.h"

namespace model_test {

[[gnu::format(printf, 2, 3)]] bool check(bool ok, const char *fmt, ...);

inline bool contains(const std::string &s, const char *sub)
{
    return s.find(sub) != std::string::npos;
}

inline uint32_t bswap32(uint32_t v)
{
    return (v >> 24) | ((v >> 8) & 0xff00) | ((v << 8) & 0xff0000) | (v << 24);
}

LinkParams base_params(int dw);
inline double byte_ps(const LinkParams &p) { return 8000.0 / p.raw_gbps(); }
inline uint64_t period_ps(const LinkParams &p)
{
    return static_cast<uint64_t>(1e6 / p.clk_mhz + 0.5);
}
uint64_t counter(PcieHostModel &m, const char *name);
std::string last_error(PcieHostModel &m);

void test_params();               /* test_link_params.cpp */
void test_mmio(int dw);           /* test_mmio_requester.cpp */
void test_mmio_timeout(int dw);
void test_mmio_lower_address(int dw);
void test_mmio_link_down(int dw);
void test_mwr(int dw);            /* test_host_memory.cpp */
void test_mrd(int dw);
void test_faults(int dw);        /* test_host_memory.cpp: fault injection */
void test_broken(int dw);         /* test_tlp_checker.cpp */
void test_iommu(int dw);
void test_throughput(int dw);     /* test_pcie_link.cpp */
void test_msi(int dw);            /* test_pcie_host_model.cpp */
void test_read_timing(int dw);
void test_write_timing(int dw);
void test_on_demand_faults(int dw);

} /* namespace model_test */

#endif /* TEST_PCIE_HOST_MODEL_H */
