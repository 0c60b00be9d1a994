// SPDX-License-Identifier: BSD-2-Clause
/*
 * sim_harness.cpp: SimHarness (sim_harness.h): clocking, pin copying, probe counting and
 * tracing around the Verilated SoC. Built once per SoC configuration (SIM_DATA_WIDTH = 64 or
 * 128; SIM_ETH_RATIO = 1, or the soak build's K: Ethernet cycles per system cycle, on the SoC's
 * eth_clk pin). Several harnesses may exist at once (the backend's peer=1): each has its own
 * VerilatedContext and model instance, so nothing is shared between them.
 *
 * Two Verilations of the same SoC are linked (the Makefile's Verilator rule): Vnicsoc without
 * tracing, used unless a trace is asked for, and Vnicsoc_trace with --trace-fst. Tracing compiled
 * in costs about a fifth of the simulation speed even when no trace is open (it keeps every
 * signal a member of the model and marks activity). A build directory made before the split
 * has only Vnicsoc, built with tracing: then it serves both.
 */
#include "sim_harness.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include "nicscope_layout.h"
#include "Vnicsoc.h"
#include "verilated.h"
#include "verilated_fst_c.h"
#if __has_include("Vnicsoc_trace.h")
#include "Vnicsoc_trace.h"
using VnicsocTraced = Vnicsoc_trace;
#else
using VnicsocTraced = Vnicsoc;
#endif

#ifndef SIM_ETH_RATIO
#error "SIM_ETH_RATIO must be defined (the SoC's Ethernet clock / system clock, sim.py --eth-ratio)"
#endif
static_assert(SIM_ETH_RATIO >= 1 && SIM_ETH_RATIO <= nicsim::kMaxEthRatio, "SIM_ETH_RATIO");
#ifndef SIM_DATA_WIDTH
#error "SIM_DATA_WIDTH must be defined (64 or 128) to match the Verilated SoC"
#endif

namespace nicsim {

namespace {

constexpr int kLanes = SIM_DATA_WIDTH / 32;

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

/* The Ethernet pins exist only in the NIC datapath build (litex_soc/targets/sim.py
 * --with-nic): detected from the Verilated class itself, so one harness source serves every
 * build. */
template <class T, class = void>
struct HasEthPins : std::false_type {};
template <class T>
struct HasEthPins<T, std::void_t<decltype(std::declval<T &>().eth_rx_dv),
                                 decltype(std::declval<T &>().eth_tx_en)>> : std::true_type {};

/* The Ethernet side's own clock (sim.py --eth-ratio K > 1: eth_clk); none: it is sys_clk. */
template <class T, class = void>
struct HasEthClk : std::false_type {};
template <class T>
struct HasEthClk<T, std::void_t<decltype(std::declval<T &>().eth_clk)>> : std::true_type {};

template <class T>
void eth_clock(T *top, bool level)
{
    if constexpr (HasEthClk<T>::value)
        top->eth_clk = level;
    else
        (void)top, (void)level;
}

template <class T>
void eth_apply(T *top, const EthOctet &o)
{
    if constexpr (HasEthPins<T>::value) {
        top->eth_rx_data = o.data;
        top->eth_rx_dv = o.en;
        top->eth_rx_er = o.er;
    } else {
        (void)top;
        (void)o;
    }
}

template <class T>
void eth_sample(T *top, EthOctet *o)
{
    if constexpr (HasEthPins<T>::value) {
        o->data = top->eth_tx_data;
        o->en = top->eth_tx_en;
        o->er = top->eth_tx_er;
    } else {
        (void)top;
        (void)o;
    }
}

/* fmt/type byte of TLP header dword 0 (lane 0 of a first beat). */
constexpr uint32_t kFmtTypeMRd32 = 0x00, kFmtTypeMRd64 = 0x20;
constexpr uint32_t kFmtTypeCplD = 0x4a, kFmtTypeCpl = 0x0a;

/* The bus analyzer's layout (generated with the gateware). */
struct ScopeProbe { const char *name, *group; int tlp; };
struct ScopeSignal { int probe; const char *name; unsigned offset, width; };
const ScopeProbe kScopeProbes[NICSCOPE_NPROBES] = {NICSCOPE_PROBES};
const ScopeSignal kScopeSignals[] = {NICSCOPE_SIGNALS};
const char *const kCountNames[NICSCOPE_NCOUNTS] = {NICSCOPE_COUNT_NAMES};
const char *const kTlpNames[NICSCOPE_NTLP_TYPES] = {NICSCOPE_TLP_NAMES};
constexpr int kSampleWords = (NICSCOPE_SAMPLE_WIDTH + 31) / 32;
/* Write classes of the probe pins: the analyzer's write breakdown classes, in its order
 * (litex_soc/nic_soc.py ANALYZER_WBD_CLASSES). */
constexpr unsigned kWriteClasses = NICSCOPE_WBD_NCLASSES;

uint64_t sample_bits(const uint32_t *v, unsigned off, unsigned width)
{
    uint64_t x = 0;
    for (unsigned i = 0; i < width; i++)
        x |= static_cast<uint64_t>((v[(off + i) / 32] >> ((off + i) % 32)) & 1u) << i;
    return x;
}

/* TLP type as the analyzer classifies it (rtl/nicscope/tlp_type_counter.py). */
int tlp_type(uint32_t ft)
{
    const uint32_t fmt = ft >> 5, type = ft & 0x1f;
    if (type == 0 && fmt <= 1)
        return 0;                     /* MRd */
    if (type == 0 && (fmt == 2 || fmt == 3))
        return 1;                     /* MWr */
    if (ft == 0x4a)
        return 2;                     /* CplD */
    if (ft == 0x0a)
        return 3;                     /* Cpl */
    if ((type >> 3) == 2)
        return 4;                     /* Msg */
    return 5;
}

/* The analyzer's counts, recomputed by the harness over the same snapshot windows. */
struct ScopeRef {
    struct Window {
        uint64_t occ[NICSCOPE_NPROBES][NICSCOPE_NCOUNTS] = {};
        uint64_t tlp[NICSCOPE_NPROBES][NICSCOPE_NTLP_TYPES] = {};
        uint64_t lat_count = 0, lat_sum = 0, lat_min = UINT32_MAX, lat_max = 0;
        uint64_t fc_sum[3] = {}, fc_max[3] = {};   /* the fc_ph, fc_pd, fc_nph levels */
        /* The mmio_rd event latency: host MRd on the PHY to its completion's first beat. */
        uint64_t mmio_count = 0, mmio_sum = 0, mmio_min = UINT32_MAX, mmio_max = 0;
    };
    Window live, closed;
    uint64_t windows = 0;
    std::deque<uint64_t> reqs;        /* cycles of outstanding DMA read requests */
    std::deque<uint64_t> mmio;        /* cycles of host MMIO reads waiting for their Cpl */
    /* mmio_rd latencies measured 2 and 1 cycles ago (counted 2 cycles late, as the analyzer). */
    bool mmio_pending[2] = {};
    uint64_t mmio_value[2] = {};
    /* Latencies measured 2 and 1 cycles ago: the analyzer counts one 2 cycles after its
     * completion (its input stage and histogram pipeline; see
     * rtl/nicscope/latency_histogram.py). */
    bool lat_pending[2] = {};
    uint64_t lat_value[2] = {};
    int sig[NICSCOPE_NPROBES][4];     /* valid/ready/first/last signal index per probe */
    enum Kind { kOther, kPcieRx, kPcieTx };
    Kind kind[NICSCOPE_NPROBES];      /* where a probe's handshake is seen: the PHY pins or not */
    int end_sig = -1, req_probe = -1, cpl_probe = -1;

    ScopeRef()
    {
        for (auto &p : sig)
            for (int &x : p)
                x = -1;
        static const char *const hs[4] = {"valid", "ready", "first", "last"};
        for (size_t i = 0; i < sizeof kScopeSignals / sizeof kScopeSignals[0]; i++) {
            const ScopeSignal &s = kScopeSignals[i];
            for (int k = 0; k < 4; k++)
                if (std::strcmp(s.name, hs[k]) == 0)
                    sig[s.probe][k] = static_cast<int>(i);
            if (std::strcmp(s.name, "end") == 0)
                end_sig = static_cast<int>(i);
        }
        for (int p = 0; p < NICSCOPE_NPROBES; p++) {
            const char *name = kScopeProbes[p].name;
            kind[p] = std::strcmp(name, "pcie_rx") == 0   ? kPcieRx
                      : std::strcmp(name, "pcie_tx") == 0 ? kPcieTx
                                                          : kOther;
            if (std::strcmp(name, "dma_rd_req") == 0)
                req_probe = p;
            if (std::strcmp(name, "dma_rd_cpl") == 0)
                cpl_probe = p;
        }
    }

    bool bit(const uint32_t *v, int p, int k) const
    {
        const ScopeSignal &s = kScopeSignals[sig[p][k]];
        return sample_bits(v, s.offset, 1);
    }

    /* One probe's cycle (the handshake decides what happens at the coming edge). */
    void count(int p, bool valid, bool ready, bool first, bool last, uint64_t nbytes, bool hold,
               int ftype)
    {
        uint64_t *o = live.occ[p];
        if (!valid) {
            o[2]++;
        } else if (!ready) {
            o[1]++;
            o[5] += hold;
        } else {
            o[0]++;
            o[3] += nbytes;
            o[4] += last;
            if (first && ftype >= 0)
                live.tlp[p][ftype]++;
        }
    }

    /* The credits in use the PHY pins show this cycle (the analyzer's fc_* levels). */
    void add_credits(const uint16_t fc[3])
    {
        for (int k = 0; k < 3; k++) {
            live.fc_sum[k] += fc[k];
            live.fc_max[k] = std::max<uint64_t>(live.fc_max[k], fc[k]);
        }
    }

    void add_latency(uint64_t lat)
    {
        live.lat_count++;
        live.lat_sum += lat;
        if (lat < live.lat_min)
            live.lat_min = lat;
        if (lat > live.lat_max)
            live.lat_max = lat;
    }

    void snapshot()
    {
        closed = live;
        live = Window();
        windows++;
    }
};

} /* namespace */

/* Everything around the Verilated model: the host model on the PHY pins, the probe counters, the
 * analyzer's reference counts, the Ethernet pins and the sample log. Model<Top, kTrace> adds the
 * model itself (Vnicsoc, or VnicsocTraced when a trace is asked for) and steps it. */
struct SimHarness::Impl {
    PcieHostModel model;
    PhyOut out;
    ProbeCounters probes;
    TraceParams tp;
    uint64_t period_ps;
    /* CSR read service windows: host MRds taken by the device whose CplD has not left yet. */
    int csr_reads_open = 0;
    bool rx_in_tlp = false, tx_in_tlp = false;
    bool tx_tlp_is_cpl = false;
    ScopeRef scope;
    uint64_t cycle = 0;
    FILE *sample_log = nullptr;
    uint32_t last_sample[kSampleWords] = {};
    bool have_sample = false;
    /* TX pins sampled in this cycle's SIM_ETH_RATIO Ethernet cycles; RX pins to apply */
    EthOctet eth_tx[SIM_ETH_RATIO], eth_rx[SIM_ETH_RATIO];
    bool eth_loopback = true;
    /* Device writes: per class, the raised time of the write being offered at its port and
     * those taken there, waiting for the packetizer (in order); the packetizer's granted time
     * of the write being offered; writes taken waiting for their MWr (in order); the stamps by
     * MWr. */
    bool wr_raise_held[kWriteClasses] = {}, wr_pk_held = false;
    uint64_t wr_raise_ps[kWriteClasses] = {}, wr_granted_ps = 0;
    std::deque<uint64_t> wr_raised[kWriteClasses];
    std::deque<WriteStamp> wr_taken;
    std::vector<WriteStamp> wr_log;
    uint64_t wr_count = 0;

    template <class Top, bool kTrace>
    struct Model;

    Impl(const LinkParams &p, const TraceParams &t)
        : model(p), tp(t), period_ps(static_cast<uint64_t>(1e6 / p.clk_mhz + 0.5))
    {
        if (!tp.sample_log.empty()) {
            sample_log = std::fopen(tp.sample_log.c_str(), "w");
            if (!sample_log)
                throw std::runtime_error("sample_log: cannot open " + tp.sample_log);
        }
    }

    virtual ~Impl()
    {
        if (sample_log)
            std::fclose(sample_log);
    }

    Impl(const Impl &) = delete;
    Impl &operator=(const Impl &) = delete;

    virtual void step() = 0;
    virtual void run(uint64_t ncycles) = 0;

    /* Where the trace is written until it is complete (backend_sim.cpp's part_path()). */
    std::string part_path() const { return tp.path + ".part"; }

    bool wants_vcd() const
    {
        return tp.path.size() > 4 && tp.path.compare(tp.path.size() - 4, 4, ".vcd") == 0;
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

    /* One cycle of the write pins at time t: a write's first beat raised at its class's port
     * (bit k of raise_valid/raise_ready: class k), offered to and taken by the packetizer
     * (pk_class: whose); an MWr's first beat taken on the TX pins (the host model times it:
     * WriteTiming) takes the oldest write taken. */
    void write_cycle(const PhyIn &in, uint64_t t, unsigned raise_valid, unsigned raise_ready,
                     bool pk_start, bool pk_ready, unsigned pk_class)
    {
        for (unsigned k = 0; k < kWriteClasses; k++) {
            const bool v = raise_valid >> k & 1, r = raise_ready >> k & 1;
            if (v && !wr_raise_held[k])
                wr_raise_ps[k] = t;
            if (v && r)
                wr_raised[k].push_back(wr_raise_ps[k]);
            wr_raise_held[k] = v && !r;
        }
        if (pk_start && !wr_pk_held)
            wr_granted_ps = t;
        wr_pk_held = pk_start && !pk_ready;
        if (pk_start && pk_ready) {
            WriteStamp w;
            w.cls = pk_class < kWriteClasses ? pk_class : kOtherWrite;
            w.matched = true;
            if (w.cls < kWriteClasses && !wr_raised[w.cls].empty()) {
                w.raised = true;
                w.raised_ps = wr_raised[w.cls].front();
                wr_raised[w.cls].pop_front();
            }
            w.granted_ps = wr_granted_ps;
            w.taken_ps = t;
            wr_taken.push_back(w);
        }
        const uint32_t ft = in.tx_dat[0] >> 24;
        if (in.tx_valid && out.tx_ready && in.tx_first && (ft == 0x40 || ft == 0x60)) {
            WriteStamp w;
            if (!wr_taken.empty()) {
                w = wr_taken.front();
                wr_taken.pop_front();
            }
            if (wr_log.size() < PcieHostModel::kReadLog)
                wr_log.push_back(w);
            else
                wr_log[wr_count % PcieHostModel::kReadLog] = w;
            wr_count++;
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

    /* The analyzer's probes, seen by the harness on this cycle (before the edge): its sample
     * pin v, its time stamp `now`, its snapshot pin and the CSR bridge's busy pin (hold). */
    void scope_cycle(const PhyIn &in, const uint32_t *v, uint64_t now, bool snapshot, bool hold)
    {
        if (sample_log && (!have_sample || std::memcmp(v, last_sample, sizeof last_sample))) {
            std::fprintf(sample_log, "%llu", static_cast<unsigned long long>(now));
            for (int i = 0; i < kSampleWords; i++)
                std::fprintf(sample_log, " %08x", v[i]);
            std::fputc('\n', sample_log);
        }
        std::memcpy(last_sample, v, sizeof last_sample);
        have_sample = true;

        ScopeRef &r = scope;
        if (snapshot)
            r.snapshot();
        if (r.lat_pending[0])
            r.add_latency(r.lat_value[0]);
        r.lat_pending[0] = r.lat_pending[1];
        r.lat_value[0] = r.lat_value[1];
        r.lat_pending[1] = false;
        const uint16_t fc[3] = {out.fc_ph, out.fc_pd, out.fc_nph};
        r.add_credits(fc);
        for (int p = 0; p < NICSCOPE_NPROBES; p++) {
            if (r.kind[p] == ScopeRef::kPcieRx) {
                r.count(p, out.rx_valid, in.rx_ready, out.rx_first, out.rx_last,
                        __builtin_popcount(out.rx_be), hold, tlp_type(out.rx_dat[0] >> 24));
            } else if (r.kind[p] == ScopeRef::kPcieTx) {
                r.count(p, in.tx_valid, out.tx_ready, in.tx_first, in.tx_last,
                        __builtin_popcount(in.tx_be), hold, tlp_type(in.tx_dat[0] >> 24));
            } else {
                r.count(p, r.bit(v, p, 0), r.bit(v, p, 1), r.bit(v, p, 2), r.bit(v, p, 3), 0,
                        hold, -1);
            }
        }
        /* mmio_rd (rtl/nicscope/event_latency.py, depth 4): an end takes the oldest start. */
        if (r.mmio_pending[0]) {
            ScopeRef::Window &w = r.live;
            const uint64_t lat = r.mmio_value[0];
            w.mmio_count++;
            w.mmio_sum += lat;
            w.mmio_min = std::min(w.mmio_min, lat);
            w.mmio_max = std::max(w.mmio_max, lat);
        }
        r.mmio_pending[0] = r.mmio_pending[1];
        r.mmio_value[0] = r.mmio_value[1];
        r.mmio_pending[1] = false;
        const unsigned rx_fmt = out.rx_dat[0] >> 24, tx_fmt = in.tx_dat[0] >> 24;
        bool mrd = out.rx_valid && in.rx_ready && out.rx_first &&
                   (rx_fmt == 0x00 || rx_fmt == 0x20);
        const bool cpl = in.tx_valid && out.tx_ready && in.tx_first &&
                         (tx_fmt == 0x0a || tx_fmt == 0x4a);
        if (cpl && (!r.mmio.empty() || mrd)) {
            r.mmio_pending[1] = true;
            if (r.mmio.empty()) {
                r.mmio_value[1] = 0;
                mrd = false;
            } else {
                r.mmio_value[1] = now - r.mmio.front();
                r.mmio.pop_front();
            }
        }
        if (mrd && r.mmio.size() < 4)
            r.mmio.push_back(now);
        if (r.req_probe >= 0 && r.cpl_probe >= 0) {
            const int q = r.req_probe, c = r.cpl_probe;
            const bool req = r.bit(v, q, 0) && r.bit(v, q, 1) && r.bit(v, q, 2);
            const bool cpl = r.bit(v, c, 0) && r.bit(v, c, 1) && r.bit(v, c, 3) &&
                             sample_bits(v, kScopeSignals[r.end_sig].offset, 1);
            if (cpl && !r.reqs.empty()) {
                r.lat_pending[1] = true;
                r.lat_value[1] = now - r.reqs.front();
                r.reqs.pop_front();
            }
            if (req)
                r.reqs.push_back(now);
        }
        cycle++;
    }
};

/* The Verilated model Top in the harness. kTrace: Top was built with --trace-fst and a trace is
 * asked for (TraceParams::path). */
template <class Top, bool kTrace>
struct SimHarness::Impl::Model final : SimHarness::Impl {
    VerilatedContext ctx;
    std::unique_ptr<Top> top;
    std::unique_ptr<VerilatedFstC> fst;
    std::string fst_path;             /* where FST goes (a temporary when VCD was asked for) */

    Model(const LinkParams &p, const TraceParams &t)
        : Impl(p, t), top(new Top(&ctx, "nicsoc_top"))
    {
        /* The traced model is built with FST tracing; a VCD is converted from it by fst2vcd
         * (GTKWave's) when the trace closes. */
        if constexpr (kTrace) {
            ctx.traceEverOn(true);
            fst_path = part_path() + (wants_vcd() ? ".fst" : "");
            fst.reset(new VerilatedFstC);
            top->trace(fst.get(), 99);
            fst->open(fst_path.c_str());
            if (!fst->isOpen())
                throw std::runtime_error("trace: cannot create " + fst_path + ": " +
                                         std::strerror(errno));
        }
        /* Reset: hold sys_rst for a few cycles with the model's idle pins applied. */
        PhyIn idle_in;
        model.cycle(idle_in, &out);
        eth_apply(top.get(), eth_rx[0]);
        top->sys_rst = 1;
        for (int i = 0; i < 8; i++) {
            top->sys_clk = 0;
            eth_clock(top.get(), false);
            top->eval();
            top->sys_clk = 1;
            eth_clock(top.get(), true);
            top->eval();
        }
        top->sys_rst = 0;
    }

    ~Model() override
    {
        top->final();
        if (!fst)
            return;
        fst->close();
        /* Only a complete trace gets its name: the FST (or the VCD converted from it) is
         * written as FILE.part and renamed when done. */
        if (wants_vcd()) {
            const std::string cmd = "fst2vcd -f '" + fst_path + "' -o '" + part_path() + "'";
            if (std::system(cmd.c_str()) != 0) {
                std::fprintf(stderr, "sim: '%s' failed; no %s; the FST is at %s\n", cmd.c_str(),
                             tp.path.c_str(), fst_path.c_str());
                std::remove(part_path().c_str());
                return;
            }
            std::remove(fst_path.c_str());
        }
        if (std::rename(part_path().c_str(), tp.path.c_str()) != 0)
            std::fprintf(stderr, "sim: trace: cannot rename %s to %s: %s\n",
                         part_path().c_str(), tp.path.c_str(), std::strerror(errno));
    }

    void dump(uint64_t t_ps)
    {
        if constexpr (kTrace) {
            const uint64_t t_ns = t_ps / 1000;
            if (t_ns < tp.start_ns || t_ns > tp.stop_ns)
                return;
            if (fst)
                fst->dump(t_ps);
        } else {
            (void)t_ps;
        }
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
        top->pcie_msix_enable = out.msix_enable;
        top->pcie_msix_mask = out.msix_mask;
        top->pcie_fc_ph = out.fc_ph;
        top->pcie_fc_pd = out.fc_pd;
        top->pcie_fc_nph = out.fc_nph;
        eth_apply(top.get(), eth_rx[0]);
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

    /* One cycle: with sys_clk low the model's pins for this cycle are applied and the design is
     * evaluated; the settled outputs are sampled (they and the applied inputs decide which
     * handshakes happen at the coming rising edge); the model consumes them and computes the
     * pins for the next cycle; then the rising edge is evaluated. The Ethernet RX pins (NIC
     * build) are applied with the PCIe ones and the TX pins sampled with them; in loopback (the
     * default) the TX octet of this cycle becomes the RX octet of the next. Both evaluations are
     * needed: the first settles the outputs on this cycle's inputs, the second is the edge.
     * With eth_clk (SIM_ETH_RATIO K > 1) the cycle holds K Ethernet cycles, each an RX octet
     * applied and a TX octet sampled with eth_clk low, then its rising edge; the last one's
     * edge is the system clock's. */
    void step() override
    {
        const uint64_t t = model.now_ps();
        apply_pins();
        top->sys_clk = 0;
        eth_clock(top.get(), false);
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
        write_cycle(in, t, top->probe_wr_raise_valid, top->probe_wr_raise_ready,
                    top->probe_wr_pk_start, top->probe_wr_pk_ready, top->probe_wr_pk_class);
        track_csr_window(in);
        uint32_t v[kSampleWords + 2] = {};
        get_lanes(top->probe_an_sample, v);
        scope_cycle(in, v, top->probe_an_now, top->probe_an_snapshot, top->probe_csr_busy);
        probes.an_now = top->probe_an_now;
        probes.an_now_ps = t;

        PhyOut next;
        model.cycle(in, &next);

        /* Ethernet cycle j: low from t + j * period / K, its rising edge half an octet time
         * later (the last one's, the system clock's; with K = 1 at t + period / 2). */
        const uint64_t octet_ps = period_ps / SIM_ETH_RATIO;
        for (unsigned j = 0; j < SIM_ETH_RATIO; j++) {
            if (j) {
                eth_clock(top.get(), false);
                eth_apply(top.get(), eth_rx[j]);
                top->eval();
                dump(t + j * octet_ps);
            }
            eth_sample(top.get(), &eth_tx[j]);
            eth_clock(top.get(), true);
            if (j == SIM_ETH_RATIO - 1)
                top->sys_clk = 1;
            top->eval();
            dump(t + j * octet_ps + octet_ps / 2);
        }
        if (eth_loopback)
            std::copy(eth_tx, eth_tx + SIM_ETH_RATIO, eth_rx);
        out = next;
    }

    void run(uint64_t ncycles) override
    {
        for (uint64_t i = 0; i < ncycles; i++)
            step();
    }
};

SimHarness::SimHarness(const LinkParams &p, const TraceParams &t)
{
    if (p.data_width != SIM_DATA_WIDTH)
        throw std::invalid_argument("data_width=" + std::to_string(p.data_width) +
                                    " but this simulator was built for " +
                                    std::to_string(SIM_DATA_WIDTH));
    if (t.path.empty())
        impl_.reset(new Impl::Model<Vnicsoc, false>(p, t));
    else
        impl_.reset(new Impl::Model<VnicsocTraced, true>(p, t));
}

SimHarness::~SimHarness() = default;

void SimHarness::step() { impl_->step(); }

void SimHarness::run(uint64_t ncycles) { impl_->run(ncycles); }

PcieHostModel &SimHarness::model() { return impl_->model; }

const ProbeCounters &SimHarness::probes() const { return impl_->probes; }

uint64_t SimHarness::writes_stamped() const { return impl_->wr_count; }

bool SimHarness::write_stamp(uint64_t i, WriteStamp *w) const
{
    const Impl &m = *impl_;
    if (i >= m.wr_count || m.wr_count - i > PcieHostModel::kReadLog)
        return false;
    *w = m.wr_log[i % PcieHostModel::kReadLog];
    return true;
}

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
        {"an_now", c.an_now},
        {"an_now_ps", c.an_now_ps},
        {"writes_stamped", impl_->wr_count},
    };
}

std::map<std::string, uint64_t> SimHarness::scope_map() const
{
    const auto &r = impl_->scope;
    const auto &w = r.closed;
    std::map<std::string, uint64_t> m;
    for (int p = 0; p < NICSCOPE_NPROBES; p++) {
        const std::string pre = std::string("an.") + kScopeProbes[p].name + ".";
        const bool phy = kScopeProbes[p].tlp >= 0;   /* bytes are known on the PHY pins only */
        for (int k = 0; k < NICSCOPE_NCOUNTS; k++)
            if (phy || std::strcmp(kCountNames[k], "bytes") != 0)
                m[pre + kCountNames[k]] = w.occ[p][k];
        if (kScopeProbes[p].tlp >= 0)
            for (int k = 0; k < NICSCOPE_NTLP_TYPES; k++)
                m[pre + "tlp." + kTlpNames[k]] = w.tlp[p][k];
    }
    m["an.latency.count"] = w.lat_count;
    m["an.latency.sum"] = w.lat_sum;
    m["an.latency.min"] = w.lat_min;
    m["an.latency.max"] = w.lat_max;
    m["an.ev.mmio_rd.count"] = w.mmio_count;
    m["an.ev.mmio_rd.sum"] = w.mmio_sum;
    m["an.ev.mmio_rd.min"] = w.mmio_min;
    m["an.ev.mmio_rd.max"] = w.mmio_max;
    static const char *const fc_names[3] = {"fc_ph", "fc_pd", "fc_nph"};
    for (int k = 0; k < 3; k++) {
        m[std::string("an.level.") + fc_names[k] + ".sum"] = w.fc_sum[k];
        m[std::string("an.level.") + fc_names[k] + ".max"] = w.fc_max[k];
    }
    m["an.windows"] = r.windows;
    return m;
}

int SimHarness::data_width() { return SIM_DATA_WIDTH; }

bool SimHarness::has_eth_pins() { return HasEthPins<Vnicsoc>::value; }

unsigned SimHarness::eth_ratio() { return SIM_ETH_RATIO; }

const EthOctet *SimHarness::eth_tx() const { return impl_->eth_tx; }

void SimHarness::set_eth_rx(unsigned j, const EthOctet &o)
{
    if (j < SIM_ETH_RATIO)
        impl_->eth_rx[j] = o;
}

void SimHarness::set_eth_loopback(bool on) { impl_->eth_loopback = on; }

} /* namespace nicsim */
