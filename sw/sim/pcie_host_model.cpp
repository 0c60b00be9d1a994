// SPDX-License-Identifier: BSD-2-Clause
/*
 * pcie_host_model.cpp: PcieHostModel (pcie_host_model.h), the top level of the PCIe host model:
 * it steps the clock, does the PHY handshakes, and runs the link and host events in time order
 * between its parts: TlpChecker (device TX stream -> checked TLPs), Link and Credits (link
 * timing), HostMemory (device MWr/MRd), MmioRequester (host MMIO), ModelLog (counts, errors).
 * Time is in picoseconds; cycle k of the PHY clock is at k * period (the period rounded to a
 * whole ps, as the harness does).
 */
#include "pcie_host_model.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <utility>

#include "fifo.h"
#include "host_memory.h"
#include "mmio_requester.h"
#include "model_log.h"
#include "pcie_link.h"
#include "pcie_tlp.h"
#include "tlp_checker.h"

namespace nicsim {

using namespace detail;

namespace {

struct Irq {
    uint64_t t;
    uint8_t vector;
};

const LinkParams &validated(const LinkParams &p)
{
    std::string e;
    if (!p.validate(&e))
        throw std::invalid_argument("PcieHostModel: " + e);
    return p;
}

} /* namespace */

/*
 * Each cycle() first does the handshakes of the edge at `now` (device TX beat, device RX beat,
 * MSI), then advances `now` by one period and runs every link/host event up to the new `now` in
 * time order (run_until), then drives the pins.
 *
 *   upstream (device -> RC)   the TlpChecker assembles beats into a TLP; its last beat puts it,
 *                             checked, in the device-side TX buffer (txq, tx_buf_tlps). The head
 *                             starts on the wire when the link is free and the RC has its
 *                             credits; it reaches the RC link_latency_ns after its last wire
 *                             byte (upq), where it is applied (MWr), answered (MRd), matched
 *                             (Cpl/CplD) or becomes an interrupt (MSI); its credits come back
 *                             credit_return_ns later.
 *   downstream (RC -> device) host MMIO requests and completions to device reads share one
 *                             serialiser: of the two queue heads the one ready first goes
 *                             (MMIO: when issued; completions: mem_read_latency_ns after the
 *                             MRd arrived). A TLP is offered to the device (dnq), beat by beat,
 *                             from its arrival (last wire byte + link latency) on.
 */
struct PcieHostModel::Impl {
    LinkParams p;
    int W;                            /* dwords per beat */
    uint64_t period;                  /* ps */
    uint64_t ncycles = 0;
    double now = 0;                   /* ncycles * period */
    double ev = 0;                    /* time of the last event processed (monotonic) */
    double lat_ps;
    int ovh;                          /* framing + DLL bytes per TLP */
    ModelLog log;
    Counters &c;
    Link up, dn;
    Credits credits;
    Iommu iommu;                      /* the driver's DMA mappings (LinkParams.iommu) */
    TlpChecker checker;
    std::mt19937_64 rng;              /* fault injection (LinkParams fault_*) */
    HostMemory host;
    MmioRequester mmio;

    bool msix_enable, msix_mask = false;  /* set_msix() */

    /* Pins of the previous cycle: with this cycle's inputs they decide the handshakes. */
    bool prev_tx_ready = false, prev_rx_valid = false, prev_msi_ready = false;

    Fifo<UpTlp> txq, upq;             /* upstream: TX buffer; on the wire / in flight */
    Fifo<DnTlp> dnq;                  /* downstream: on the wire / offered to the device */
    int rx_beat = 0;                  /* beats of dnq's head the device took */
    Fifo<Irq> irqs;                   /* MSIs that reached the host */

    /* Device reads: start time and bytes by tag while open; the timed ones (a ring). */
    uint64_t rd_start[256] = {}, rd_first[256] = {};
    uint32_t rd_bytes[256] = {};
    uint64_t rd_addr[256] = {};
    bool rd_open[256] = {}, rd_seen[256] = {};
    std::vector<ReadTiming> rd_log;
    uint64_t rd_count = 0;
    /* Device writes: the timed ones (a ring). */
    std::vector<WriteTiming> wr_log;
    uint64_t wr_count = 0;

    /* Faults: no credit returns before starve_until; the link is down before link_up_at. */
    double starve_until = 0, link_up_at = 0;
    bool link_trigger_done = false;   /* fault_link_down_at_ns happened */
    /* drop_writes(): device writes into [drop_addr, drop_end) lost while drop_left > 0. */
    uint64_t drop_addr = 0, drop_end = 0;
    unsigned drop_left = 0;

    explicit Impl(const LinkParams &lp)
        : p(validated(lp)), log(p.strict), c(log.c), checker(p, log, iommu), rng(p.fault_seed),
          host(p, log.c, rng),
          mmio(p, log), msix_enable(p.msix)
    {
        W = p.data_width / 32;
        period = static_cast<uint64_t>(1e6 / p.clk_mhz + 0.5);
        lat_ps = p.link_latency_ns * 1000;
        ovh = tlp_overhead_bytes(p.gen);
        const double bt = 8000.0 / p.raw_gbps();
        up.init(bt, p.ack_limit_bytes(), p.fc_limit_bytes());
        dn.init(bt, p.ack_limit_bytes(), p.fc_limit_bytes());
        credits.init(p.ph_credits, p.pd_credits, p.nph_credits, p.credit_return_ns * 1000);
    }

    /* ---- upstream: TX buffer -> wire -> RC ---- */

    double up_start_time() const
    {
        if (txq.empty())
            return kInf;
        const UpTlp &t = txq.front();
        if (!credits.enough(t.ph, t.pd, t.nph))
            return kInf;              /* a credit return will wake it */
        return std::max({t.enq, up.free_at, ev, link_up_at});
    }

    bool draw(double rate)
    {
        return rate > 0 && std::uniform_real_distribution<>(0, 1)(rng) < rate;
    }

    /* The link goes down at t: the TLPs in flight both ways are lost (host MMIO requests and
     * the device's completions to them are kept, so host reads still end), and so are the
     * completions the host still owed; the link is up again fault_link_down_ns later. */
    void link_down(double t)
    {
        c.fault_link_downs++;
        link_up_at = t + p.fault_link_down_ns * 1000;
        auto keep_up = [](const UpTlp &u) { return u.kind == Kind::Cpl || u.kind == Kind::CplD; };
        for (Fifo<UpTlp> *q : {&txq, &upq}) {
            Fifo<UpTlp> kept;
            const bool sent = q == &upq;
            while (!q->empty()) {
                UpTlp &u = q->front();
                if (keep_up(u)) {
                    std::swap(kept.push_slot(), u);
                } else {
                    c.fault_link_lost_tlps++;
                    if (u.kind == Kind::MRd)
                        c.fault_link_lost_reads++;
                    if (sent)
                        credits.release(t, u.ph, u.pd, u.nph);
                }
                q->pop();
            }
            std::swap(*q, kept);
        }
        c.fault_link_lost_reads += host.drop_all();
        Fifo<DnTlp> kept;
        bool first = true;
        while (!dnq.empty()) {
            DnTlp &d = dnq.front();
            if (d.mmio || (first && rx_beat > 0))
                std::swap(kept.push_slot(), d);
            else
                c.fault_link_lost_tlps++;
            first = false;
            dnq.pop();
        }
        std::swap(dnq, kept);
    }

    void up_start(double s)
    {
        UpTlp &t = txq.front();
        const double could = std::max(t.enq, up.free_at);
        if (s > could) {
            c.credit_wait_ps += s - could;
            c.credit_waits++;
        }
        credits.take(t.ph, t.pd, t.nph);
        t.arr = up.send(s, t.wire) + lat_ps;
        std::swap(upq.push_slot(), t);
        txq.pop();
        if (draw(p.fault_credit_starve)) {
            starve_until = std::max(starve_until, s + p.fault_starve_ns * 1000);
            c.fault_starves++;
        }
        if (draw(p.fault_link_down))
            link_down(s);
    }

    void arrive()
    {
        UpTlp &t = upq.front();
        credits.release(t.arr, t.ph, t.pd, t.nph);
        switch (t.kind) {
        case Kind::MWr:
            if (drop_left && t.addr < drop_end && t.addr + 4ull * (t.len_dw ? t.len_dw : 1024) > drop_addr) {
                drop_left--;
                c.fault_dropped_writes++;
                break;
            }
            if (t.ok)
                host.write(t);
            break;
        case Kind::MRd:
            if (t.ok || t.answer_ur)
                host.read(t);
            break;
        case Kind::CplD:
        case Kind::Cpl:
            if (t.ok)
                mmio.completion(t);
            break;
        case Kind::Msi:
            irqs.push_slot() = Irq{static_cast<uint64_t>(std::llround(t.arr)), t.vector};
            c.msis++;
            break;
        case Kind::Bad:
            break;
        }
        upq.pop();
    }

    /* ---- downstream ---- */

    /* Earliest start of the next downstream TLP; *from_mmio tells which queue it comes from. */
    double dn_start_time(bool *from_mmio)
    {
        const double rm = mmio.next_ready(), rc = host.next_ready();
        if (rm == kInf && rc == kInf)
            return kInf;
        *from_mmio = rm < rc;
        return std::max({std::min(rm, rc), dn.free_at, ev, link_up_at});
    }

    void dn_start(double s, bool from_mmio)
    {
        DnTlp &d = dnq.push_slot();
        d.mmio_id = -1;
        d.mmio = false;
        d.read_tag = -1;
        d.dw.clear();
        if (from_mmio)
            mmio.next_tlp(&d);
        else
            host.next_completion(&d, s);
        d.arr = dn.send(s, ovh + 4 * static_cast<int>(d.dw.size())) + lat_ps;
    }

    /* ---- event loop: everything due up to t_end, in time order ---- */

    void run_until(double t_end)
    {
        for (;;) {
            double t_cr = credits.next_return();
            if (t_cr < starve_until)
                t_cr = starve_until;
            const double t_arr = upq.empty() ? kInf : upq.front().arr;
            const double t_up = up_start_time();
            bool from_mmio = false;
            const double t_dn = dn_start_time(&from_mmio);
            const double t = std::min({t_cr, t_arr, t_up, t_dn});
            if (!(t <= t_end))
                break;
            ev = std::max(ev, t);
            if (t_cr == t)
                credits.return_next();
            else if (t_arr == t)
                arrive();
            else if (t_up == t)
                up_start(t);
            else
                dn_start(t, from_mmio);
        }
    }

    /* ---- device reads timed at the PHY ---- */

    /* A TLP's first beat taken from the TX stream: a MRd opens its tag (dwords 0 and 1 are in
     * the first beat at both widths). */
    void read_started(const PhyIn &in)
    {
        const uint8_t ft = static_cast<uint8_t>(in.tx_dat[0] >> 24);
        if (ft != kMRd32 && ft != kMRd64)
            return;
        const uint8_t tag = static_cast<uint8_t>(in.tx_dat[1] >> 8);
        const uint32_t len = in.tx_dat[0] & 0x3ff;
        rd_start[tag] = ncycles * period;
        rd_bytes[tag] = 4 * (len ? len : 1024);
        rd_open[tag] = true;
        rd_seen[tag] = false;
    }

    /* A TLP's first beat taken from the TX stream: a MWr is timed (in TX order). */
    void write_started(const PhyIn &in)
    {
        const uint8_t ft = static_cast<uint8_t>(in.tx_dat[0] >> 24);
        if (ft != kMWr32 && ft != kMWr64)
            return;
        const uint32_t len = in.tx_dat[0] & 0x3ff;
        WriteTiming w;
        w.start_ps = ncycles * period;
        w.bytes = 4 * (len ? len : 1024);
        if (wr_log.size() < kReadLog)
            wr_log.push_back(w);
        else
            wr_log[wr_count % kReadLog] = w;
        wr_count++;
    }

    /* A TLP's first beat taken by the device: a completion of an open read (tag in dword 2)
     * times its first. */
    void read_first_cpl(const DnTlp &d)
    {
        if (d.dw.size() < 3)
            return;
        const uint8_t ft = static_cast<uint8_t>(d.dw[0] >> 24);
        if (ft != kCpl && ft != kCplD)
            return;
        const uint8_t tag = static_cast<uint8_t>(d.dw[2] >> 8);
        if (rd_open[tag] && !rd_seen[tag]) {
            rd_first[tag] = ncycles * period;
            rd_seen[tag] = true;
        }
    }

    /* The last beat of a read's last completion taken by the device. */
    void read_done(uint8_t tag)
    {
        if (!rd_open[tag])
            return;
        rd_open[tag] = false;
        ReadTiming r;
        r.start_ps = rd_start[tag];
        r.first_cpl_ps = rd_first[tag];
        r.end_ps = ncycles * period;
        r.bytes = rd_bytes[tag];
        r.addr = rd_addr[tag];
        r.tag = tag;
        if (rd_log.size() < kReadLog)
            rd_log.push_back(r);
        else
            rd_log[rd_count % kReadLog] = r;
        rd_count++;
    }

    /* ---- the clock ---- */

    void cycle(const PhyIn &in, PhyOut *out)
    {
        /* Handshakes at the edge at `now`. */
        if (in.tx_valid) {
            if (prev_tx_ready) {
                if (in.tx_first) {
                    read_started(in);
                    write_started(in);
                }
                const size_t queued = txq.size();
                checker.take_beat(in, now, &txq);
                /* A MRd's address, from its whole header (its last beat). */
                if (txq.size() > queued && txq.back().kind == Kind::MRd)
                    rd_addr[txq.back().tag] = txq.back().addr;
            } else {
                c.tx_stall_cycles++;
            }
        }
        if (prev_rx_valid) {
            if (in.rx_ready) {
                DnTlp &d = dnq.front();
                if (rx_beat == 0)
                    read_first_cpl(d);
                if (++rx_beat * W >= static_cast<int>(d.dw.size())) {
                    if (d.mmio_id >= 0)
                        mmio.write_taken(d.mmio_id, now);
                    if (d.read_tag >= 0)
                        read_done(static_cast<uint8_t>(d.read_tag));
                    rx_beat = 0;
                    dnq.pop();
                }
            } else {
                c.rx_stall_cycles++;
            }
        }
        if (in.msi_valid && prev_msi_ready) {
            /* A 1-DW posted MWr behind the TLPs already in the TX buffer. */
            UpTlp &t = txq.push_slot();
            t.reset();
            t.kind = Kind::Msi;
            t.ok = true;
            t.vector = in.msi_dat;
            t.enq = now;
            t.wire = ovh + 12 + 4;
            t.ph = 1;
            t.pd = 1;
            c.tlps_up_msi++;
        }

        ncycles++;
        now = double(ncycles * period);
        if (!link_trigger_done && p.fault_link_down_at_ns > 0 &&
            now >= p.fault_link_down_at_ns * 1000) {
            link_trigger_done = true;
            link_down(now);
        }
        run_until(now);
        mmio.check_timeouts(now);

        /* Pins for the next cycle. */
        out->id = p.device_id;
        out->max_payload_size = static_cast<uint16_t>(p.dev_mps ? p.dev_mps : p.mps);
        out->max_request_size = static_cast<uint16_t>(p.dev_mrrs ? p.dev_mrrs : p.mrrs);
        const bool up_now = now >= link_up_at;
        out->link_up = up_now;
        out->msi_enable = out->bus_master_enable = true;
        out->msix_enable = msix_enable;
        out->msix_mask = msix_mask;
        out->msi_ready = up_now;
        out->tx_ready = up_now && txq.size() < static_cast<size_t>(p.tx_buf_tlps);
        out->fc_ph = static_cast<uint16_t>(credits.ph_used());
        out->fc_pd = static_cast<uint16_t>(credits.pd_used());
        out->fc_nph = static_cast<uint16_t>(credits.nph_used());
        out->rx_valid = out->rx_first = out->rx_last = false;
        out->rx_be = 0;
        std::fill(out->rx_dat, out->rx_dat + 4, 0u);
        if (!dnq.empty() && dnq.front().arr <= now && (up_now || rx_beat > 0)) {
            const DnTlp &d = dnq.front();
            const int n = static_cast<int>(d.dw.size());
            const int base = rx_beat * W;
            out->rx_valid = true;
            out->rx_first = rx_beat == 0;
            out->rx_last = base + W >= n;
            for (int k = 0; k < W && base + k < n; k++) {
                out->rx_dat[k] = d.dw[base + k];
                out->rx_be |= 0xf << (4 * k);
            }
        }
        prev_tx_ready = out->tx_ready;
        prev_rx_valid = out->rx_valid;
        prev_msi_ready = out->msi_ready;
    }
};

PcieHostModel::PcieHostModel(const LinkParams &p) : impl_(new Impl(p)) {}

PcieHostModel::~PcieHostModel() = default;

void PcieHostModel::cycle(const PhyIn &in, PhyOut *out) { impl_->cycle(in, out); }

void PcieHostModel::set_msix(bool enable, bool function_mask)
{
    impl_->msix_enable = enable;
    impl_->msix_mask = function_mask;
}

uint64_t PcieHostModel::now_ps() const { return impl_->ncycles * impl_->period; }

uint64_t PcieHostModel::cycles() const { return impl_->ncycles; }

uint8_t *PcieHostModel::host_mem() { return impl_->host.data(); }

uint64_t PcieHostModel::host_mem_addr() const { return impl_->p.host_mem_addr; }

uint64_t PcieHostModel::host_mem_size() const { return impl_->p.host_mem_size; }

void PcieHostModel::link_down_now() { impl_->link_down(impl_->now); }

void PcieHostModel::drop_writes(uint64_t addr, uint64_t len, unsigned n)
{
    impl_->drop_addr = addr;
    impl_->drop_end = addr + len;
    impl_->drop_left = n;
}

void PcieHostModel::iommu_map(uint64_t bus_addr, uint64_t size)
{
    impl_->iommu.map(bus_addr, size);
}

void PcieHostModel::iommu_unmap(uint64_t bus_addr, uint64_t size)
{
    impl_->iommu.unmap(bus_addr, size);
}

int PcieHostModel::mmio_write(uint64_t bar0_off, uint64_t value, int len)
{
    return impl_->mmio.request(true, bar0_off, len == 4 ? value & 0xffffffffull : value, len,
                               impl_->now);
}

int PcieHostModel::mmio_read(uint64_t bar0_off, int len)
{
    return impl_->mmio.request(false, bar0_off, 0, len, impl_->now);
}

MmioResult PcieHostModel::mmio_result(int id) const { return impl_->mmio.result(id); }

int PcieHostModel::mmio_outstanding() const { return impl_->mmio.outstanding(); }

bool PcieHostModel::irq_pending() const { return !impl_->irqs.empty(); }

bool PcieHostModel::irq_pop(uint64_t *arrival_ps, uint8_t *vector)
{
    if (impl_->irqs.empty())
        return false;
    const Irq &i = impl_->irqs.front();
    if (arrival_ps)
        *arrival_ps = i.t;
    if (vector)
        *vector = i.vector;
    impl_->irqs.pop();
    return true;
}

uint64_t PcieHostModel::reads_timed() const { return impl_->rd_count; }

bool PcieHostModel::read_timing(uint64_t i, ReadTiming *r) const
{
    const Impl &m = *impl_;
    if (i >= m.rd_count || m.rd_count - i > kReadLog)
        return false;
    *r = m.rd_log[i % kReadLog];
    return true;
}

uint64_t PcieHostModel::writes_timed() const { return impl_->wr_count; }

bool PcieHostModel::write_timing(uint64_t i, WriteTiming *w) const
{
    const Impl &m = *impl_;
    if (i >= m.wr_count || m.wr_count - i > kReadLog)
        return false;
    *w = m.wr_log[i % kReadLog];
    return true;
}

const std::vector<std::string> &PcieHostModel::errors() const { return impl_->log.messages(); }

std::map<std::string, uint64_t> PcieHostModel::counters() const
{
    const Impl &m = *impl_;
    const Counters &c = m.c;
    auto ps = [](double v) { return static_cast<uint64_t>(std::llround(v)); };
    return {
        {"tlps_up_mwr", c.tlps_up_mwr},
        {"tlps_up_mrd", c.tlps_up_mrd},
        {"tlps_up_cpld", c.tlps_up_cpld},
        {"tlps_up_cpl", c.tlps_up_cpl},
        {"tlps_up_msi", c.tlps_up_msi},
        {"tlps_up_bad", c.tlps_up_bad},
        {"tlps_down_mwr", c.tlps_down_mwr},
        {"tlps_down_mrd", c.tlps_down_mrd},
        {"tlps_down_cpld", c.tlps_down_cpld},
        {"tlps_down_cpl", c.tlps_down_cpl},
        {"bytes_up_payload", c.bytes_up_payload},
        {"bytes_down_payload", c.bytes_down_payload},
        {"bytes_up_wire", m.up.tlp_bytes},
        {"bytes_down_wire", m.dn.tlp_bytes},
        {"dllp_bytes_up", m.up.dllp_bytes},
        {"dllp_bytes_down", m.dn.dllp_bytes},
        {"link_busy_ps_up", ps(m.up.busy_ps)},
        {"link_busy_ps_down", ps(m.dn.busy_ps)},
        {"tx_stall_cycles", c.tx_stall_cycles},
        {"rx_stall_cycles", c.rx_stall_cycles},
        {"credit_wait_ps", ps(c.credit_wait_ps)},
        {"credit_waits", c.credit_waits},
        {"mmio_reads", c.mmio_reads},
        {"mmio_writes", c.mmio_writes},
        {"msis", c.msis},
        {"msix_messages", c.msix_messages},
        {"errors", c.errors},
        {"mps_violations", c.mps_violations},
        {"mrrs_violations", c.mrrs_violations},
        {"boundary_violations", c.boundary_violations},
        {"bad_address", c.bad_address},
        {"unexpected_completion", c.unexpected_completion},
        {"completion_timeouts", c.completion_timeouts},
        {"unsupported_tlps", c.unsupported_tlps},
        {"length_errors", c.length_errors},
        {"be_errors", c.be_errors},
        {"framing_errors", c.framing_errors},
        {"byte_enable_errors", c.byte_enable_errors},
        {"poisoned_tlps", c.poisoned_tlps},
        {"bad_mmio", c.bad_mmio},
        {"ur_completions", c.ur_completions},
        {"iommu_faults", c.iommu_faults},
        {"iommu_mappings", m.iommu.mappings()},
        {"fault_cpl_timeouts", c.fault_cpl_timeouts},
        {"fault_ur", c.fault_ur},
        {"fault_ca", c.fault_ca},
        {"fault_ep_reads", c.fault_ep_reads},
        {"fault_ep_tlps", c.fault_ep_tlps},
        {"fault_split_reads", c.fault_split_reads},
        {"fault_reordered", c.fault_reordered},
        {"fault_starves", c.fault_starves},
        {"fault_link_downs", c.fault_link_downs},
        {"fault_link_lost_tlps", c.fault_link_lost_tlps},
        {"fault_link_lost_reads", c.fault_link_lost_reads},
        {"fault_dropped_writes", c.fault_dropped_writes},
        {"reads_timed", m.rd_count},
        {"writes_timed", m.wr_count},
        {"cycles", m.ncycles},
    };
}

const LinkParams &PcieHostModel::params() const { return impl_->p; }

} /* namespace nicsim */
