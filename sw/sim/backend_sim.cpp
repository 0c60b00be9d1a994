/*
 * backend_sim.cpp: the `sim` backend of the host library (nic_backend.h). It owns a SimHarness
 * (Verilated SoC + PCIe host model) and steps it in-process: an MMIO read returns when its
 * completion reached the root complex, a write when the device took its last beat, irq_wait
 * steps until an MSI arrived, now_ns() is simulated time.
 *
 * Options (comma-separated key=value): every LinkParams key (see pcie_host_model.h), plus
 *   trace=FILE            dump the whole design (FST if FILE ends in .fst, else VCD)
 *   trace_start_ns=N      first simulated ns to dump (default 0)
 *   trace_stop_ns=N       last simulated ns to dump (default: end)
 *   sample_log=FILE       write every change of the analyzer's sample vector, with its cycle
 *                         counter, one "cycle hexwords" line per change (for cross-checks)
 * The environment variable NIC_TRACE=FILE sets trace= when the options do not.
 *
 * Counters: "model.<name>" (host model, e.g. model.tlps_up_mwr), "probe.<name>" (harness probes,
 * e.g. probe.dma_wr_stall_csr; probe.an.* is the harness's own count of what the bus analyzer
 * counts, over the analyzer's last closed snapshot window: see sim_harness.h), and the pcie-bench limits for a transfer of N bytes:
 * "model_limit_c2h_kbps:N" (device writes) and "model_limit_h2c_kbps:N" (device reads), in kb/s.
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "nic_backend.h"
#include "pcie_host_model.h"
#include "sim_harness.h"

using nicsim::LinkParams;
using nicsim::MmioResult;
using nicsim::SimHarness;
using nicsim::TraceParams;

namespace {

struct SimBackend {
    struct nic_backend base;          /* first: the C side sees only this */
    std::unique_ptr<SimHarness> h;
    LinkParams params;
    TraceParams trace;
    std::string params_json;
    std::string last_error;
    size_t errors_seen = 0;
    uint64_t alloc_next = 0;          /* bump allocator offset in host memory */
};

SimBackend *sim(struct nic_backend *b) { return reinterpret_cast<SimBackend *>(b); }

void collect_errors(SimBackend *s)
{
    const std::vector<std::string> &errs = s->h->model().errors();
    if (errs.size() > s->errors_seen) {
        s->last_error = errs.back();
        s->errors_seen = errs.size();
    }
}

MmioResult wait_mmio(SimBackend *s, int id)
{
    nicsim::PcieHostModel &m = s->h->model();
    MmioResult r = m.mmio_result(id);
    while (!r.done) {
        s->h->step();
        r = m.mmio_result(id);
    }
    if (r.status != 0) {
        char msg[128];
        std::snprintf(msg, sizeof msg, "MMIO request %d completed with status %#x", id,
                      static_cast<unsigned>(r.status));
        s->last_error = msg;
    }
    collect_errors(s);
    return r;
}

uint32_t sim_read32(struct nic_backend *b, uint64_t off)
{
    SimBackend *s = sim(b);
    return static_cast<uint32_t>(wait_mmio(s, s->h->model().mmio_read(off, 4)).value);
}

void sim_write32(struct nic_backend *b, uint64_t off, uint32_t v)
{
    SimBackend *s = sim(b);
    wait_mmio(s, s->h->model().mmio_write(off, v, 4));
}

uint64_t sim_read64(struct nic_backend *b, uint64_t off)
{
    SimBackend *s = sim(b);
    return wait_mmio(s, s->h->model().mmio_read(off, 8)).value;
}

void sim_write64(struct nic_backend *b, uint64_t off, uint64_t v)
{
    SimBackend *s = sim(b);
    wait_mmio(s, s->h->model().mmio_write(off, v, 8));
}

void *sim_dma_alloc(struct nic_backend *b, size_t size, uint64_t *bus_addr)
{
    SimBackend *s = sim(b);
    nicsim::PcieHostModel &m = s->h->model();
    const uint64_t off = (s->alloc_next + 4095) & ~uint64_t(4095);
    if (size == 0 || off + size > m.host_mem_size()) {
        s->last_error = "dma_alloc: host memory window exhausted (host_mem_size=" +
                        std::to_string(m.host_mem_size()) + ")";
        return nullptr;
    }
    s->alloc_next = off + size;
    uint8_t *va = m.host_mem() + off;
    std::memset(va, 0, size);
    *bus_addr = m.host_mem_addr() + off;
    return va;
}

void sim_dma_free(struct nic_backend *b, void *va, size_t size)
{
    /* Bump allocator: memory is returned when the most recent allocation is freed. */
    SimBackend *s = sim(b);
    const uint64_t off = static_cast<uint8_t *>(va) - s->h->model().host_mem();
    if (off + size == s->alloc_next)
        s->alloc_next = off;
}

int sim_irq_wait(struct nic_backend *b, uint64_t timeout_ns)
{
    SimBackend *s = sim(b);
    nicsim::PcieHostModel &m = s->h->model();
    const uint64_t deadline_ps = m.now_ps() + timeout_ns * 1000;
    while (!m.irq_pending()) {
        if (m.now_ps() >= deadline_ps) {
            collect_errors(s);
            return 0;
        }
        s->h->step();
    }
    uint64_t t;
    uint8_t vec;
    m.irq_pop(&t, &vec);
    collect_errors(s);
    return 1;
}

uint64_t sim_now_ns(struct nic_backend *b) { return sim(b)->h->model().now_ps() / 1000; }

void sim_idle(struct nic_backend *b, uint64_t ns)
{
    SimBackend *s = sim(b);
    nicsim::PcieHostModel &m = s->h->model();
    const uint64_t until = m.now_ps() + ns * 1000;
    while (m.now_ps() < until)
        s->h->step();
    collect_errors(s);
}

int sim_counter(struct nic_backend *b, const char *name, uint64_t *value)
{
    SimBackend *s = sim(b);
    const std::string n(name);
    auto lookup = [&](const std::map<std::string, uint64_t> &map, const std::string &key) {
        auto it = map.find(key);
        if (it == map.end())
            return -1;
        *value = it->second;
        return 0;
    };
    if (n.rfind("model.", 0) == 0)
        return lookup(s->h->model().counters(), n.substr(6));
    if (n.rfind("probe.an.", 0) == 0)
        return lookup(s->h->scope_map(), n.substr(6));
    if (n.rfind("probe.", 0) == 0)
        return lookup(s->h->probe_map(), n.substr(6));
    const std::string c2h = "model_limit_c2h_kbps:", h2c = "model_limit_h2c_kbps:";
    const bool is_c2h = n.rfind(c2h, 0) == 0, is_h2c = n.rfind(h2c, 0) == 0;
    if (is_c2h || is_h2c) {
        const uint64_t size = std::strtoull(n.c_str() + c2h.size(), nullptr, 0);
        if (size == 0)
            return -1;
        const double gbps = is_c2h ? s->params.model_write_gbps(size)
                                   : s->params.model_read_gbps(size);
        *value = static_cast<uint64_t>(gbps * 1e6 + 0.5);
        return 0;
    }
    return -1;
}

const char *sim_params_json(struct nic_backend *b) { return sim(b)->params_json.c_str(); }

const char *sim_last_error(struct nic_backend *b)
{
    SimBackend *s = sim(b);
    collect_errors(s);
    return s->last_error.empty() ? nullptr : s->last_error.c_str();
}

/* Errors are never dropped silently: whatever the model recorded is listed on close. */
void sim_close(struct nic_backend *b)
{
    SimBackend *s = sim(b);
    const std::vector<std::string> &errs = s->h->model().errors();
    const size_t shown = std::min<size_t>(errs.size(), 20);
    for (size_t i = 0; i < shown; i++)
        std::fprintf(stderr, "sim: model error %zu/%zu: %s\n", i + 1, errs.size(),
                     errs[i].c_str());
    delete s;
}

const struct nic_backend_ops sim_ops = {
    sim_read32, sim_write32, sim_read64, sim_write64, sim_dma_alloc, sim_dma_free,
    sim_irq_wait, sim_now_ns, sim_idle, sim_counter, sim_params_json, sim_last_error,
    sim_close,
};

/* Split off the harness's own keys; the rest goes to LinkParams::parse(). */
bool split_opts(const std::string &opts, std::string *link, TraceParams *tp, std::string *err)
{
    std::stringstream ss(opts);
    std::string item;
    while (std::getline(ss, item, ',')) {
        if (item.empty())
            continue;
        const size_t eq = item.find('=');
        const std::string key = item.substr(0, eq);
        const std::string val = eq == std::string::npos ? "" : item.substr(eq + 1);
        if (key == "trace") {
            tp->path = val;
        } else if (key == "sample_log") {
            tp->sample_log = val;
        } else if (key == "trace_start_ns" || key == "trace_stop_ns") {
            char *end = nullptr;
            const uint64_t v = std::strtoull(val.c_str(), &end, 0);
            if (val.empty() || *end) {
                *err = "bad value for " + key + ": '" + val + "'";
                return false;
            }
            (key == "trace_start_ns" ? tp->start_ns : tp->stop_ns) = v;
        } else {
            if (!link->empty())
                *link += ",";
            *link += item;
        }
    }
    return true;
}

} /* namespace */

extern "C" struct nic_backend *nic_backend_sim_open(const char *opts, char *err, size_t errlen)
{
    std::unique_ptr<SimBackend> s(new SimBackend);
    std::string link, e;
    s->params.data_width = SimHarness::data_width();
    if (const char *env = std::getenv("NIC_TRACE"))
        s->trace.path = env;
    if (!split_opts(opts ? opts : "", &link, &s->trace, &e) || !s->params.parse(link, &e) ||
        !s->params.validate(&e)) {
        std::snprintf(err, errlen, "sim backend: %s", e.c_str());
        return nullptr;
    }
    try {
        s->h.reset(new SimHarness(s->params, s->trace));
    } catch (const std::exception &ex) {
        std::snprintf(err, errlen, "sim backend: %s", ex.what());
        return nullptr;
    }
    std::string pj = s->params.to_json();
    /* Add the harness's own parameters to the model's JSON object. */
    const size_t close = pj.rfind('}');
    std::string extra = ",\"backend\":\"sim\",\"trace\":\"" + s->trace.path + "\"";
    pj.insert(close == std::string::npos ? pj.size() : close, extra);
    s->params_json = pj;
    s->base.ops = &sim_ops;
    s->base.kind = "sim";
    return &s.release()->base;
}
