// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_mmio_requester.cpp: host MMIO to BAR0 (MmioRequester): writes and reads of 4 and 8
 * bytes, their TLPs, latency, several reads outstanding, stalls, refused requests, completion
 * timeouts.
 */
#include <cstdint>
#include <map>

#include "test_pcie_host_model.h"

namespace model_test {

/* ---- MMIO ---- */

void test_mmio(int dw)
{
    LinkParams p = base_params(dw);
    p.link_latency_ns = 100;
    PcieHostModel m(p);
    Dev d(m);
    const uint64_t P = period_ps(p);
    const double bt = byte_ps(p);

    check(d.out.max_payload_size == 256 && d.out.max_request_size == 512 && d.out.tx_ready &&
              d.out.msi_ready, "dw%d mmio: device pins (MPS 256, MRRS 512, tx_ready, msi_ready)",
          dw);

    /* 4-byte write: 1 DW MWr, first BE f, last BE 0, payload = host bytes 44 33 22 11. */
    int id = m.mmio_write(0x10, 0x11223344, 4);
    check(m.mmio_outstanding() == 1, "dw%d mmio: write outstanding", dw);
    MmioResult r = d.mmio_wait(id);
    check(r.done && r.status == 0, "dw%d mmio: write done", dw);
    check(!d.rx.empty() && d.rx.back().dw.size() == 4 && d.rx.back().dw[0] == 0x40000001 &&
              d.rx.back().dw[1] == (uint32_t(p.rc_id) << 16 | 0x0f) &&
              d.rx.back().dw[2] == p.bar0_addr + 0x10,
          "dw%d mmio: MWr header 40000001 %04x000f %08llx", dw, p.rc_id,
          static_cast<unsigned long long>(p.bar0_addr + 0x10));
    check(d.regs[0x10] == 0x44332211, "dw%d mmio: write 0x11223344 -> payload dword %08x "
          "(want 44332211)", dw, d.regs[0x10]);
    check(r.done_ps == d.rx.back().t_last, "dw%d mmio: write done when the device took its "
          "last beat (%llu ps)", dw, static_cast<unsigned long long>(r.done_ps));

    /* 4-byte read back, and its latency at idle. */
    const uint64_t t0 = m.now_ps();
    id = m.mmio_read(0x10, 4);
    r = d.mmio_wait(id);
    check(r.done && r.status == 0 && r.value == 0x11223344,
          "dw%d mmio: read back 0x%llx (want 0x11223344)", dw,
          static_cast<unsigned long long>(r.value));
    check(r.issue_ps == t0, "dw%d mmio: issue_ps is the time of the call", dw);
    const RxTlp &req = d.rx.back();
    check(req.dw.size() == 3 && req.dw[0] == 0x00000001 &&
              (req.dw[1] & 0xffff00ff) == (uint32_t(p.rc_id) << 16 | 0x0f) &&
              req.dw[2] == p.bar0_addr + 0x10, "dw%d mmio: MRd header %08x %08x %08x", dw,
          req.dw[0], req.dw[1], req.dw[2]);
    const uint64_t t_cpl = d.tx_last_t.back();
    const double analytic = (20 * bt + 100e3) + double(t_cpl - req.t_first) +
                            (24 * bt + 100e3);
    const double measured = double(r.done_ps - r.issue_ps);
    check(measured >= analytic - 1 && measured < analytic + P,
          "dw%d mmio: idle read latency %.0f ps = analytic %.0f ps (down 20 B + 100 ns, "
          "device %llu ps, up 24 B + 100 ns) within a cycle", dw, measured, analytic,
          static_cast<unsigned long long>(t_cpl - req.t_first));

    /* Regression: after 2 ms of idle link the next read costs the same (Ack/UpdateFC DLLPs
     * and SKIPs that fell due while idle went out then, not one by one before the TLP). */
    d.run(static_cast<uint64_t>(2e9 / double(period_ps(p))));
    id = m.mmio_read(0x10, 4);
    r = d.mmio_wait(id);
    const double after_idle = double(r.done_ps - r.issue_ps);
    check(r.done && after_idle < measured + P && after_idle > measured - P,
          "dw%d mmio: read latency after 2 ms idle %.0f ps = %.0f ps within a cycle", dw,
          after_idle, measured);

    /* 8-byte write and read: 2 DW, both BEs f, low word first. */
    id = m.mmio_write(0x20, 0x1122334455667788ull, 8);
    d.mmio_wait(id);
    check(d.regs[0x20] == 0x88776655 && d.regs[0x24] == 0x44332211 &&
              d.rx.back().dw[0] == 0x40000002 && (d.rx.back().dw[1] & 0xff) == 0xff,
          "dw%d mmio: 8-byte write payload %08x %08x, BEs ff", dw, d.regs[0x20], d.regs[0x24]);
    id = m.mmio_read(0x20, 8);
    r = d.mmio_wait(id);
    check(r.done && r.value == 0x1122334455667788ull, "dw%d mmio: 8-byte read back 0x%llx", dw,
          static_cast<unsigned long long>(r.value));

    /* Several reads outstanding, answered in reverse order: distinct tags, right values. */
    d.reverse_batch = 4;
    int ids[4];
    for (int i = 0; i < 4; i++) {
        d.regs[0x100 + 4 * i] = bswap32(0xa0 + i);
        ids[i] = m.mmio_read(0x100 + 4 * i, 4);
    }
    const size_t nrx = d.rx.size();
    check(m.mmio_outstanding() == 4, "dw%d mmio: 4 reads outstanding", dw);
    bool all = true;
    for (int i = 0; i < 4; i++) {
        r = d.mmio_wait(ids[i]);
        all = all && r.done && r.status == 0 && r.value == uint64_t(0xa0 + i);
    }
    check(all, "dw%d mmio: 4 reads completed out of order, each with its own value", dw);
    std::map<uint32_t, int> tags;
    for (size_t i = nrx - 4; i < d.rx.size(); i++)
        tags[(d.rx[i].dw[1] >> 8) & 0xff]++;
    check(tags.size() == 4, "dw%d mmio: the 4 reads used 4 distinct tags", dw);
    d.reverse_batch = 1;
    check(m.mmio_outstanding() == 0 && m.errors().empty(), "dw%d mmio: nothing outstanding, "
          "no errors", dw);
    /* 7 reads: 1 at idle, 1 after the long idle, 1 of 8 bytes, 4 in a batch. */
    check(counter(m, "mmio_reads") == 7 && counter(m, "mmio_writes") == 2 &&
              counter(m, "tlps_down_mrd") == 7 && counter(m, "tlps_down_mwr") == 2 &&
              counter(m, "tlps_up_cpld") == 7, "dw%d mmio: counters", dw);

    /* Device slow to take beats: stalls counted, beats held stable. */
    d.rx_ready = [](uint64_t c) { return c % 3 == 0; };
    id = m.mmio_write(0x30, 0xdeadbeef, 8);
    d.mmio_wait(id);
    id = m.mmio_read(0x30, 8);
    r = d.mmio_wait(id);
    check(r.value == 0xdeadbeef && counter(m, "rx_stall_cycles") > 0 && d.hold_violations == 0,
          "dw%d mmio: rx_ready low at times: %llu stall cycles, beats held stable", dw,
          static_cast<unsigned long long>(counter(m, "rx_stall_cycles")));
    d.rx_ready = nullptr;

    /* Bad host requests are refused, not sent. */
    r = m.mmio_result(m.mmio_read(0x2, 4));
    check(r.done && r.status == 1 && counter(m, "bad_mmio") == 1,
          "dw%d mmio: unaligned read refused with status UR", dw);
    check(d.pin_errors == 0, "dw%d mmio: config pins constant", dw);
}

/* Completion timeout: the device never answers. */
void test_mmio_timeout(int dw)
{
    const LinkParams p = base_params(dw);
    PcieHostModel m(p);
    Dev d(m);
    d.bar_mode = false;
    const int id = m.mmio_read(0x44, 4);
    d.run(static_cast<uint64_t>(49e6 / double(period_ps(p))));
    check(!m.mmio_result(id).done, "dw%d timeout: read still outstanding after 49 us", dw);
    d.run(static_cast<uint64_t>(2e6 / double(period_ps(p))));
    const MmioResult r = m.mmio_result(id);
    check(r.done && r.status == 0xffff && r.value == 0xffffffffull &&
              counter(m, "completion_timeouts") == 1 && counter(m, "errors") == 1 &&
              contains(last_error(m), "timeout") && m.mmio_outstanding() == 0,
          "dw%d timeout: done after 50 us with status 0xffff, all ones, counted (%s)", dw,
          last_error(m).c_str());
    /* A late completion is unexpected now. */
    const uint8_t tag = (d.rx[0].dw[1] >> 8) & 0xff;
    d.send(cpl(p.device_id, p.rc_id, tag, 0x44, 4, {0x1}));
    d.run(200);
    check(counter(m, "unexpected_completion") == 1, "dw%d timeout: a late CplD is an "
          "unexpected completion", dw);
}

/* The link goes down while a host write and read wait in the downstream queue (the device holds
 * rx_ready low): both are kept, reach the device once the link is up again and the read ends
 * with its data, not with a completion timeout. */
void test_mmio_link_down(int dw)
{
    LinkParams p = base_params(dw);
    p.fault_link_down_at_ns = 1000;
    p.fault_link_down_ns = 5000;
    PcieHostModel m(p);
    Dev d(m);
    const uint64_t hold = static_cast<uint64_t>(2e6 / double(period_ps(p)));
    d.rx_ready = [hold](uint64_t cyc) { return cyc >= hold; };
    d.run(10);
    const int wid = m.mmio_write(0x20, 0x5a5a1234, 4);
    const int rid = m.mmio_read(0x20, 4);
    d.run_until([&] { return m.mmio_result(rid).done; }, 100000);
    const MmioResult w = m.mmio_result(wid), r = m.mmio_result(rid);
    check(counter(m, "fault_link_downs") == 1 && w.done && w.status == 0 && r.done &&
              r.status == 0 && r.value == 0x5a5a1234 && r.done_ps > 6000000 &&
              counter(m, "fault_link_lost_tlps") == 0 &&
              counter(m, "completion_timeouts") == 0 && m.errors().empty(),
          "dw%d link down: a queued host write and read survive it; the read ends at %llu ps "
          "with 0x%llx (%s)", dw, static_cast<unsigned long long>(r.done_ps),
          static_cast<unsigned long long>(r.value), last_error(m).c_str());
}

/* A CplD whose lower address is not the read's (LitePCIe's dword-aligned one for a read at
 * +0x46 would say 0x44) is refused: the read then times out. */
void test_mmio_lower_address(int dw)
{
    const LinkParams p = base_params(dw);
    PcieHostModel m(p);
    Dev d(m);
    d.bar_mode = false;
    const int id = m.mmio_read(0x48, 4);
    d.run(100);
    const uint8_t tag = (d.rx[0].dw[1] >> 8) & 0xff;
    d.send(cpl(p.device_id, p.rc_id, tag, 0x40, 4, {0x1}));
    d.run(200);
    check(!m.mmio_result(id).done && counter(m, "unexpected_completion") == 1 &&
              contains(last_error(m), "lower address 0x40") &&
              contains(last_error(m), "lower address 0x48"),
          "dw%d lower address: a CplD with lower address 0x40 for a read at 0x48 is refused "
          "(%s)", dw, last_error(m).c_str());
}

} /* namespace model_test */
