/*
 * sim_harness.cpp: clocking, pin copying, probe counting and tracing around the Verilated SoC.
 * See sim_harness.h. Built once per SoC configuration (NIC_DATA_WIDTH = 64 or 128).
 *
 * Per cycle: with sys_clk low the model's pins for this cycle are applied and the design is
 * evaluated; the settled outputs are sampled (they and the applied inputs decide which
 * handshakes happen at the coming rising edge); the model consumes them and computes the pins
 * for the next cycle; then the rising edge is evaluated.
 */
#include "sim_harness.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "Vnicsoc.h"
#include "verilated.h"
#include "verilated_fst_c.h"

#ifndef NIC_DATA_WIDTH
#error "NIC_DATA_WIDTH must be defined (64 or 128) to match the Verilated SoC"
#endif

namespace nicsim {

namespace {

constexpr int kLanes = NIC_DATA_WIDTH / 32;

/* 128-bit pins are VlWide<4>, 64-bit ones QData: one pair of helpers per kind. */
template <std::size_t N>
void put_lanes(VlWide<N> &pin, const uint32_t *d)
{
    for (std::size_t i = 0; i < N; i++)
        pin[i] = d[i];
}
inline void put_lanes(QData &pin, const uint32_t *d)
{
    pin = static_cast<QData>(d[0]) | (static_cast<QData>(d[1]) << 32);
}
template <std::size_t N>
void get_lanes(const VlWide<N> &pin, uint32_t *d)
{
    for (std::size_t i = 0; i < N; i++)
        d[i] = pin[i];
}
inline void get_lanes(const QData &pin, uint32_t *d)
{
    d[0] = static_cast<uint32_t>(pin);
    d[1] = static_cast<uint32_t>(pin >> 32);
}

/* fmt/type byte of TLP header dword 0 (lane 0 of a first beat). */
constexpr uint32_t kFmtTypeMRd32 = 0x00, kFmtTypeMRd64 = 0x20;
constexpr uint32_t kFmtTypeCplD = 0x4a, kFmtTypeCpl = 0x0a;

} /* namespace */

struct SimHarness::Impl {
    VerilatedContext ctx;
    std::unique_ptr<Vnicsoc> top;
    PcieHostModel model;
    PhyOut out;
    ProbeCounters probes;
    TraceParams tp;
    std::unique_ptr<VerilatedFstC> fst;
    std::string fst_path;             /* where FST goes (a temporary when VCD was asked for) */
    uint64_t period_ps;
    /* CSR read service windows: host MRds taken by the device whose CplD has not left yet. */
    int csr_reads_open = 0;
    bool rx_in_tlp = false, tx_in_tlp = false;
    bool tx_tlp_is_cpl = false;

    Impl(const LinkParams &p, const TraceParams &t)
        : top(new Vnicsoc(&ctx, "nicsoc_top")), model(p), tp(t),
          period_ps(static_cast<uint64_t>(1e6 / p.clk_mhz + 0.5))
    {
        /* The model is built with FST tracing; a VCD is converted from it by fst2vcd (GTKWave's)
         * when the trace closes. */
        if (!tp.path.empty()) {
            ctx.traceEverOn(true);
            fst_path = wants_vcd() ? tp.path + ".tmp.fst" : tp.path;
            fst.reset(new VerilatedFstC);
            top->trace(fst.get(), 99);
            fst->open(fst_path.c_str());
        }
        /* Reset: hold sys_rst for a few cycles with the model's idle pins applied. */
        PhyIn idle_in;
        model.cycle(idle_in, &out);
        top->sys_rst = 1;
        for (int i = 0; i < 8; i++) {
            top->sys_clk = 0;
            top->eval();
            top->sys_clk = 1;
            top->eval();
        }
        top->sys_rst = 0;
    }

    bool wants_vcd() const
    {
        return tp.path.size() > 4 && tp.path.compare(tp.path.size() - 4, 4, ".vcd") == 0;
    }

    ~Impl()
    {
        top->final();
        if (!fst)
            return;
        fst->close();
        if (wants_vcd()) {
            const std::string cmd = "fst2vcd -f '" + fst_path + "' -o '" + tp.path + "'";
            if (std::system(cmd.c_str()) != 0)
                std::fprintf(stderr, "sim: '%s' failed; the FST is at %s\n", cmd.c_str(),
                             fst_path.c_str());
            else
                std::remove(fst_path.c_str());
        }
    }

    void dump(uint64_t t_ps)
    {
        const uint64_t t_ns = t_ps / 1000;
        if (t_ns < tp.start_ns || t_ns > tp.stop_ns)
            return;
        if (fst)
            fst->dump(t_ps);
    }

    void apply_pins()
    {
        top->pcie_rx_valid = out.rx_valid;
        top->pcie_rx_first = out.rx_first;
        top->pcie_rx_last = out.rx_last;
        put_lanes(top->pcie_rx_dat, out.rx_dat);
        top->pcie_rx_be = out.rx_be;
        top->pcie_tx_ready = out.tx_ready;
        top->pcie_msi_ready = out.msi_ready;
        top->pcie_id = out.id;
        top->pcie_max_request_size = out.max_request_size;
        top->pcie_max_payload_size = out.max_payload_size;
        top->pcie_link_up = out.link_up;
        top->pcie_msi_enable = out.msi_enable;
        top->pcie_bus_master_enable = out.bus_master_enable;
    }

    void sample_pins(PhyIn *in)
    {
        in->tx_valid = top->pcie_tx_valid;
        in->tx_first = top->pcie_tx_first;
        in->tx_last = top->pcie_tx_last;
        get_lanes(top->pcie_tx_dat, in->tx_dat);
        in->tx_be = top->pcie_tx_be;
        in->rx_ready = top->pcie_rx_ready;
        in->msi_valid = top->pcie_msi_valid;
        in->msi_dat = top->pcie_msi_dat;
    }

    /* Track CSR read service windows from the TLPs crossing the PHY at this edge. */
    void track_csr_window(const PhyIn &in)
    {
        if (out.rx_valid && in.rx_ready) {
            if (!rx_in_tlp) {
                const uint32_t ft = out.rx_dat[0] >> 24;
                if (ft == kFmtTypeMRd32 || ft == kFmtTypeMRd64)
                    csr_reads_open++;
            }
            rx_in_tlp = !out.rx_last;
        }
        if (in.tx_valid && out.tx_ready) {
            if (!tx_in_tlp) {
                const uint32_t ft = in.tx_dat[0] >> 24;
                tx_tlp_is_cpl = (ft == kFmtTypeCplD || ft == kFmtTypeCpl);
            }
            tx_in_tlp = !in.tx_last;
            if (in.tx_last && tx_tlp_is_cpl && csr_reads_open > 0)
                csr_reads_open--;
        }
    }

    /* A stream probe: a transfer, or a cycle held off (valid, not ready), inside a CSR read
     * service window or not. */
    static void count_stream(bool valid, bool ready, bool in_csr, uint64_t *xfers,
                             uint64_t *stalls, uint64_t *stalls_csr)
    {
        if (!valid)
            return;
        if (ready) {
            (*xfers)++;
        } else {
            (*stalls)++;
            *stalls_csr += in_csr;
        }
    }

    void step()
    {
        const uint64_t t = model.now_ps();
        apply_pins();
        top->sys_clk = 0;
        top->eval();
        dump(t);

        PhyIn in;
        sample_pins(&in);

        /* Probes: which handshakes happen at the coming edge. */
        const bool in_csr = csr_reads_open > 0;
        probes.cycles++;
        count_stream(top->probe_dma_wr_valid, top->probe_dma_wr_ready, in_csr,
                     &probes.dma_wr_reqs, &probes.dma_wr_stall, &probes.dma_wr_stall_csr);
        count_stream(top->probe_dma_rd_valid, top->probe_dma_rd_ready, in_csr,
                     &probes.dma_rd_reqs, &probes.dma_rd_stall, &probes.dma_rd_stall_csr);
        probes.csr_window += in_csr;
        probes.csr_busy += top->probe_csr_busy;
        track_csr_window(in);

        PhyOut next;
        model.cycle(in, &next);

        top->sys_clk = 1;
        top->eval();
        dump(t + period_ps / 2);
        out = next;
    }
};

SimHarness::SimHarness(const LinkParams &p, const TraceParams &t)
{
    if (p.data_width != NIC_DATA_WIDTH)
        throw std::invalid_argument("data_width=" + std::to_string(p.data_width) +
                                    " but this simulator was built for " +
                                    std::to_string(NIC_DATA_WIDTH));
    impl_.reset(new Impl(p, t));
}

SimHarness::~SimHarness() = default;

void SimHarness::step() { impl_->step(); }

void SimHarness::run(uint64_t ncycles)
{
    for (uint64_t i = 0; i < ncycles; i++)
        impl_->step();
}

PcieHostModel &SimHarness::model() { return impl_->model; }

const ProbeCounters &SimHarness::probes() const { return impl_->probes; }

std::map<std::string, uint64_t> SimHarness::probe_map() const
{
    const ProbeCounters &c = impl_->probes;
    return {
        {"cycles", c.cycles},
        {"dma_wr_stall", c.dma_wr_stall},
        {"dma_rd_stall", c.dma_rd_stall},
        {"dma_wr_stall_csr", c.dma_wr_stall_csr},
        {"dma_rd_stall_csr", c.dma_rd_stall_csr},
        {"dma_wr_reqs", c.dma_wr_reqs},
        {"dma_rd_reqs", c.dma_rd_reqs},
        {"csr_window", c.csr_window},
        {"csr_busy", c.csr_busy},
    };
}

int SimHarness::data_width() { return NIC_DATA_WIDTH; }

} /* namespace nicsim */
