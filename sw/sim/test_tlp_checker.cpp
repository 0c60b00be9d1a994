// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_tlp_checker.cpp: broken device TLPs (TlpChecker, and completions that match no
 * host read): each is counted, reported with its header, not applied; a bad MRd gets an
 * Unsupported Request completion. The IOMMU: accesses outside the DMA mappings are faults.
 */
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "iommu.h"
#include "test_pcie_host_model.h"

namespace model_test {

/* ---- broken TLPs ---- */

void test_broken(int dw)
{
    LinkParams p = base_params(dw);
    const uint64_t H = p.host_mem_addr;
    uint8_t pl[1024];
    for (int i = 0; i < 1024; i++)
        pl[i] = static_cast<uint8_t>(0x80 | i);

    auto run_case = [&](const char *name, const char *ctr, const char *keyword,
                        const std::function<void(PcieHostModel &, Dev &)> &send,
                        bool expect_ur, uint8_t ur_tag) {
        PcieHostModel m(p);
        Dev d(m);
        d.bar_mode = false;
        send(m, d);
        d.run(3000);
        const std::string e = last_error(m);
        check(counter(m, ctr) == 1 && counter(m, "errors") == 1,
              "dw%d broken %s: %s = %llu, errors = %llu", dw, name, ctr,
              static_cast<unsigned long long>(counter(m, ctr)),
              static_cast<unsigned long long>(counter(m, "errors")));
        check(m.errors().size() == 1 && contains(e, keyword) && contains(e, " ns") &&
                  (contains(e, "[header") || !strcmp(ctr, "framing_errors")),
              "dw%d broken %s: message with time and header: \"%s\"", dw, name, e.c_str());
        bool untouched = true;
        for (uint64_t i = 0; i < 0x3000; i++)
            untouched = untouched && m.host_mem()[i] == 0;
        check(untouched, "dw%d broken %s: host memory untouched", dw, name);
        if (expect_ur) {
            const bool ur = d.rx.size() == 1 && d.rx[0].dw.size() == 3 &&
                            (d.rx[0].dw[0] >> 24) == 0x0a && ((d.rx[0].dw[1] >> 13) & 7) == 1 &&
                            (d.rx[0].dw[2] >> 16) == p.device_id &&
                            ((d.rx[0].dw[2] >> 8) & 0xff) == ur_tag;
            check(ur, "dw%d broken %s: answered with a Cpl, status UR, tag %u", dw, name,
                  ur_tag);
        } else {
            check(d.rx.empty(), "dw%d broken %s: nothing sent to the device", dw, name);
        }
    };

    run_case("MWr > MPS", "mps_violations", "MPS", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(true, H + 0x1000, 128, p.device_id, 0, 0xf, 0xf, false, pl));
    }, false, 0);
    run_case("MRd > MRRS", "mrrs_violations", "MRRS", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(false, H + 0x1000, 256, p.device_id, 3, 0xf, 0xf));
    }, true, 3);
    run_case("MRd crossing 4 KiB", "boundary_violations", "4 KiB", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(false, H + 0x1f80, 64, p.device_id, 4, 0xf, 0xf));
    }, true, 4);
    run_case("MWr crossing 4 KiB", "boundary_violations", "4 KiB", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(true, H + 0x1fc0, 32, p.device_id, 0, 0xf, 0xf, false, pl));
    }, false, 0);
    run_case("MWr outside host memory", "bad_address", "outside", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(true, H - 0x100, 16, p.device_id, 0, 0xf, 0xf, false, pl));
    }, false, 0);
    run_case("MRd outside host memory", "bad_address", "outside", [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(false, H + p.host_mem_size, 16, p.device_id, 6, 0xf, 0xf));
    }, true, 6);
    run_case("bad fmt/type", "unsupported_tlps", "fmt/type", [&](PcieHostModel &, Dev &d) {
        std::vector<uint32_t> t = mem_req(true, H + 0x100, 4, p.device_id, 0, 0xf, 0xf, false,
                                          pl);
        t[0] = (t[0] & 0x00ffffff) | 0x74u << 24;   /* a message with data */
        d.send(t);
    }, false, 0);
    run_case("MWr length mismatch", "length_errors", "length", [&](PcieHostModel &, Dev &d) {
        std::vector<uint32_t> t = mem_req(true, H + 0x100, 8, p.device_id, 0, 0xf, 0xf, false,
                                          pl);
        t.resize(3 + 4);              /* header says 8 DW, 4 come */
        d.send(t);
    }, false, 0);
    run_case("MRd length mismatch", "length_errors", "length", [&](PcieHostModel &, Dev &d) {
        std::vector<uint32_t> t = mem_req(false, H + 0x100, 8, p.device_id, 9, 0xf, 0xf);
        t.insert(t.end(), {1, 2, 3, 4, 5, 6});  /* a read with data beats */
        d.send(t);
    }, true, 9);
    run_case("MWr with inconsistent be", "be_errors", "be=", [&](PcieHostModel &, Dev &d) {
        std::vector<Beat> b = Dev::beats_of(mem_req(true, H + 0x100, 6, p.device_id, 0, 0xf,
                                                    0xf, false, pl), d.W);
        b.back().be = static_cast<uint16_t>((1u << (4 * d.W)) - 1);  /* lanes past the end */
        d.send_beats(b);
    }, false, 0);
    run_case("MWr with bad byte enables", "byte_enable_errors", "byte enables",
             [&](PcieHostModel &, Dev &d) {
        d.send(mem_req(true, H + 0x100, 4, p.device_id, 0, 0xf, 0x0, false, pl));
    }, false, 0);
    run_case("unexpected CplD", "unexpected_completion", "tag", [&](PcieHostModel &, Dev &d) {
        d.send(cpl(p.device_id, p.rc_id, 7, 0, 4, {0x12345678}));
    }, false, 0);
    /* A host read of 4 B at BAR0+0x40, answered with a CplD of this requester id and byte
     * count. */
    auto answer_read = [&](PcieHostModel &m, Dev &d, uint16_t req_id, uint32_t byte_count) {
        m.mmio_read(0x40, 4);
        d.run_until([&] { return !d.rx.empty(); }, 1000);
        const uint8_t tag = (d.rx[0].dw[1] >> 8) & 0xff;
        d.send(cpl(p.device_id, req_id, tag, 0x40, byte_count, {0x12345678}));
        d.rx.clear();
    };
    run_case("CplD with wrong requester id", "unexpected_completion", "requester",
             [&](PcieHostModel &m, Dev &d) { answer_read(m, d, 0x1234, 4); }, false, 0);
    run_case("CplD with wrong byte count", "unexpected_completion", "byte count",
             [&](PcieHostModel &m, Dev &d) { answer_read(m, d, p.rc_id, 8); }, false, 0);
    run_case("TX beat without first", "framing_errors", "without first",
             [&](PcieHostModel &, Dev &d) {
        std::vector<Beat> b = Dev::beats_of(mem_req(true, H + 0x100, 4, p.device_id, 0, 0xf,
                                                    0xf, false, pl), d.W);
        b[0].first = false;
        d.send_beats(b);
    }, false, 0);

    /* A good TLP after a bad one is applied; a device UR completes the read with all ones. */
    {
        PcieHostModel m(p);
        Dev d(m);
        d.bar_mode = false;
        d.send(mem_req(true, H + 0x1000, 128, p.device_id, 0, 0xf, 0xf, false, pl));
        d.send(mem_req(true, H + 0x2000, 4, p.device_id, 0, 0xf, 0xf, false, pl));
        const int id = m.mmio_read(0x8, 4);
        d.run_until([&] { return !d.rx.empty(); }, 1000);
        const uint8_t tag = (d.rx[0].dw[1] >> 8) & 0xff;
        d.send(cpl(p.device_id, p.rc_id, tag, 0x8, 4, {}, 1));
        const MmioResult r = d.mmio_wait(id);
        check(std::memcmp(m.host_mem() + 0x2000, pl, 16) == 0 && m.host_mem()[0x1000] == 0,
              "dw%d broken: the good MWr after a bad one is applied", dw);
        check(r.done && r.status == 1 && r.value == 0xffffffffull &&
                  counter(m, "unexpected_completion") == 1,
              "dw%d broken: a device Cpl with status UR ends the read: all ones, status 1", dw);
    }
}

/* ---- the IOMMU ---- */

void test_iommu(int dw)
{
    LinkParams p = base_params(dw);
    p.iommu = true;
    const uint64_t H = p.host_mem_addr;
    uint8_t pl[256];
    for (int i = 0; i < 256; i++)
        pl[i] = static_cast<uint8_t>(0x40 | i);
    PcieHostModel m(p);
    Dev d(m);
    d.bar_mode = false;
    m.iommu_map(H + 0x1000, 0x1800);  /* pages 0x1000..0x2fff, as dma_alloc(0x1800) would */
    m.iommu_map(H + 0x5000, 0x1000);
    d.send(mem_req(true, H + 0x1000, 16, p.device_id, 0, 0xf, 0xf, false, pl));
    d.send(mem_req(true, H + 0x2fc0, 16, p.device_id, 0, 0xf, 0xf, false, pl));
    d.send(mem_req(false, H + 0x5000, 16, p.device_id, 3, 0xf, 0xf));
    d.run(3000);
    check(m.errors().empty() && counter(m, "iommu_faults") == 0 &&
              counter(m, "iommu_mappings") == 2 && m.host_mem()[0x1000] == pl[0] &&
              m.host_mem()[0x2fc0] == pl[0] && d.rx.size() == 1 &&
              ((d.rx[0].dw[1] >> 13) & 7) == 0,
          "dw%d iommu: accesses inside the mappings (to a mapping's last page) are applied",
          dw);

    /* A write past the mapping's last page, one before the first, a read between mappings. */
    d.rx.clear();
    d.send(mem_req(true, H + 0x3000, 16, p.device_id, 0, 0xf, 0xf, false, pl));
    d.send(mem_req(true, H + 0x0fc0, 16, p.device_id, 0, 0xf, 0xf, false, pl));
    d.send(mem_req(false, H + 0x4000, 16, p.device_id, 7, 0xf, 0xf));
    d.run(3000);
    const std::string e = last_error(m);
    check(counter(m, "iommu_faults") == 3 && counter(m, "errors") == 3,
          "dw%d iommu: 3 accesses outside every mapping, 3 faults counted (%llu)", dw,
          static_cast<unsigned long long>(counter(m, "iommu_faults")));
    check(contains(e, "IOMMU fault") && contains(e, "MRd") && contains(e, "[header"),
          "dw%d iommu: reported with the TLP's header: \"%s\"", dw, e.c_str());
    check(m.host_mem()[0x3000] == 0 && m.host_mem()[0x0fc0] == 0,
          "dw%d iommu: the faulting writes are not applied", dw);
    check(d.rx.size() == 1 && ((d.rx[0].dw[1] >> 13) & 7) == 1 &&
              ((d.rx[0].dw[2] >> 8) & 0xff) == 7,
          "dw%d iommu: the faulting read is answered with Unsupported Request", dw);

    /* dma_free unmaps: the device may not use freed memory. */
    m.iommu_unmap(H + 0x5000, 0x1000);
    d.send(mem_req(true, H + 0x5000, 4, p.device_id, 0, 0xf, 0xf, false, pl));
    d.run(2000);
    check(counter(m, "iommu_faults") == 4 && counter(m, "iommu_mappings") == 1 &&
              m.host_mem()[0x5000] == 0,
          "dw%d iommu: a write to unmapped (freed) memory is a fault", dw);

    /* iommu=0: the whole window, as before. */
    LinkParams q = base_params(dw);
    PcieHostModel m0(q);
    Dev d0(m0);
    d0.bar_mode = false;
    d0.send(mem_req(true, H + 0x3000, 16, q.device_id, 0, 0xf, 0xf, false, pl));
    d0.run(2000);
    check(m0.errors().empty() && counter(m0, "iommu_faults") == 0 &&
              m0.host_mem()[0x3000] == pl[0],
          "dw%d iommu=0: an access anywhere in the window is applied", dw);
    std::string err;
    LinkParams r;
    check(r.iommu && r.parse("iommu=0", &err) && !r.iommu, "iommu: on by default, iommu=0 parses");

    /* The mapping table: pages, merging, and an unmap that splits a mapping. */
    nicsim::detail::Iommu mmu;
    mmu.map(0x10001010, 0x10);         /* one byte range -> its whole page */
    mmu.map(0x10002000, 0x2000);       /* adjacent: merges into 0x10001000..0x10004000 */
    const bool merged = mmu.mappings() == 1 && mmu.allows(0x10001000, 4) &&
                        mmu.allows(0x10003ffc, 4) && !mmu.allows(0x10003ffc, 8) &&
                        !mmu.allows(0x10000ffc, 4);
    mmu.unmap(0x10002000, 0x1000);     /* the middle page */
    const bool split = mmu.mappings() == 2 && mmu.allows(0x10001000, 0x1000) &&
                       !mmu.allows(0x10002000, 4) && mmu.allows(0x10003000, 0x1000);
    mmu.unmap(0x10000000, 0x10000);
    check(merged && split && mmu.mappings() == 0 && !mmu.allows(0x10001000, 4),
          "iommu: whole pages; adjacent mappings merge, a partial unmap splits one");
}

} /* namespace model_test */
