// SPDX-License-Identifier: BSD-2-Clause
/*
 * backend_sim.cpp: the `sim` backend of the host library (nic_backend.h). It owns a SimHarness
 * (Verilated SoC + PCIe host model) and steps it in-process: an MMIO read returns when its
 * completion reached the root complex, a write when the device took its last beat, irq_wait
 * steps until an MSI arrived, now_ns() is simulated time. With peer=1 it owns two harnesses:
 * two complete NIC + host systems back to back over their Ethernet pins (SimWorld).
 *
 * Interfaces: nic_backend_sim_open() and nic_backend_sim_peer() (instance B with peer=1); the
 * backend ops, with the counters of sim_counter().
 * Parameters: the options string, "key=value,...": every LinkParams key (link_params.h) and
 * the harness's and the wiring's own keys (split_opts()).
 */
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>

#include "nic_backend.h"
#include "nic_rb.h"
#include "nic_regs.h"
#include "pcie_host_model.h"
#include "sim_harness.h"

using nicsim::EthOctet;
using nicsim::LinkParams;
using nicsim::MmioResult;
using nicsim::SimHarness;
using nicsim::TraceParams;

namespace {

/* Where an output file is written until it is complete (then renamed to its name); the
 * harness's trace uses the same name (sim_harness.cpp). */
std::string part_path(const std::string &path) { return path + ".part"; }

/*
 * PcapWriter: frames as pcapng, in host byte order (readers go by the byte-order magic): a
 * Section Header Block; one Interface Description Block with LINKTYPE_ETHERNET (1), snaplen
 * 65535, if_tsresol 9 (timestamps in ns) and if_fcslen 4 (every frame ends with its 4-byte FCS,
 * which Wireshark then dissects as the FCS, not as payload); one Enhanced Packet Block per frame
 * (interface 0, 64-bit simulated time in ns, captured and original length, data). Frames are
 * written without preamble and SFD and with their FCS, padded as the MAC padded them (60 bytes
 * + FCS at least). A frame's timestamp is the simulated time of the cycle in which the sending
 * SoC's TX pins showed its first preamble octet; frames are written in timestamp order across
 * both directions (SimWorld::flush_pending).
 */
struct PcapWriter {
    FILE *f = nullptr;
    uint64_t frames = 0;
    std::string path;                 /* written as path.part, renamed to path when closed */

    template <typename T> static void put(std::vector<uint8_t> &b, T x)
    {
        const auto *p = reinterpret_cast<const uint8_t *>(&x);
        b.insert(b.end(), p, p + sizeof x);
    }

    /* A one-octet option: code, length 1, value padded to 32 bits. */
    static void option(std::vector<uint8_t> &b, uint16_t code, uint8_t value)
    {
        put<uint16_t>(b, code);
        put<uint16_t>(b, 1);
        b.insert(b.end(), {value, 0, 0, 0});
    }

    /* A block: type, total length, body padded to 32 bits, total length. */
    void block(uint32_t type, std::vector<uint8_t> body)
    {
        body.resize((body.size() + 3) & ~size_t{3}, 0);
        const uint32_t total = static_cast<uint32_t>(body.size() + 12);
        std::fwrite(&type, 4, 1, f);
        std::fwrite(&total, 4, 1, f);
        std::fwrite(body.data(), 1, body.size(), f);
        std::fwrite(&total, 4, 1, f);
    }

    bool open(const std::string &p, std::string *err)
    {
        path = p;
        f = std::fopen(part_path(path).c_str(), "wb");
        if (!f) {
            *err = "pcap: cannot create " + path + ": " + std::strerror(errno);
            return false;
        }
        std::vector<uint8_t> shb;
        put<uint32_t>(shb, 0x1a2b3c4du);  /* byte-order magic */
        put<uint16_t>(shb, 1);            /* version 1.0 */
        put<uint16_t>(shb, 0);
        put<int64_t>(shb, -1);            /* section length: not given */
        block(0x0a0d0d0au, shb);
        std::vector<uint8_t> idb;
        put<uint16_t>(idb, 1);            /* LINKTYPE_ETHERNET */
        put<uint16_t>(idb, 0);
        put<uint32_t>(idb, 65535);        /* snaplen */
        option(idb, 9, 9);                /* if_tsresol: 10^-9 s */
        option(idb, 13, 4);               /* if_fcslen: 4 octets */
        put<uint32_t>(idb, 0);            /* opt_endofopt */
        block(1, idb);
        return true;
    }

    void write(uint64_t t_ns, const std::vector<uint8_t> &data)
    {
        if (!f)
            return;
        const uint32_t len = static_cast<uint32_t>(std::min<size_t>(data.size(), 65535));
        std::vector<uint8_t> epb;
        put<uint32_t>(epb, 0);            /* interface */
        put<uint32_t>(epb, static_cast<uint32_t>(t_ns >> 32));
        put<uint32_t>(epb, static_cast<uint32_t>(t_ns));
        put<uint32_t>(epb, len);
        put<uint32_t>(epb, static_cast<uint32_t>(data.size()));
        epb.insert(epb.end(), data.begin(), data.begin() + len);
        block(6, std::move(epb));
        frames++;
    }

    /* The file is complete: flushed, closed and under its name. A write that failed leaves
     * no file (the part is removed) and says so on stderr, the one channel close has. */
    ~PcapWriter()
    {
        if (!f)
            return;
        const std::string part = part_path(path);
        const bool ok = !std::ferror(f) && std::fclose(f) == 0;
        if (ok && std::rename(part.c_str(), path.c_str()) == 0)
            return;
        std::fprintf(stderr, "sim: pcap: cannot write %s: %s\n", path.c_str(),
                     std::strerror(errno));
        std::remove(part.c_str());
    }
};

/*
 * Wire: one direction, from harness `from`'s eth_tx pins to harness `to`'s eth_rx pins (from ==
 * to: the loop of a single instance), `delay` extra cycles on top of the one the harness
 * register adds. It also reassembles the frames the TX pins send (tx_en high), for the pcap and
 * the wire.* counters: the preamble (0x55 octets) and the SFD (0xd5) are stripped; a frame
 * without them is kept whole and counted as bad_preamble.
 */
struct Wire {
    int from = 0, to = 0;
    std::vector<EthOctet> line;       /* delay line (empty: no extra delay) */
    size_t pos = 0;
    bool in_frame = false, er = false;
    uint64_t start_ns = 0;
    std::vector<uint8_t> octets;
    uint64_t frames = 0, bad_preamble = 0, er_frames = 0;
    /* wire_fuzz: what the RX pins get instead of a frame (docs/faults.md) */
    double fuzz = 0;
    std::mt19937_64 rng;
    enum Mangle { NONE, BAD_FCS, RUNT, GARBAGE, OVERSIZE } mangle = NONE;
    unsigned n_out = 0, garbage_left = 0;  /* octets of this frame sent on; garbage to send */
    uint64_t fuzz_bad_fcs = 0, fuzz_runts = 0, fuzz_garbage = 0;
    /* OVERSIZE (wire_fuzz_oversize=N): the frame, then filler octets up to N octets after the
     * SFD, then an FCS over all of them (a good frame of N octets without its FCS), then 12
     * octets of gap; frames the TX pins start meanwhile never reach the RX pins (swallowed). */
    unsigned oversize = 0;
    uint32_t crc = 0;
    unsigned ext_len = 0, ext_fcs = 0, ext_gap = 0;
    bool extending = false, swallowing = false;
    uint64_t fuzz_oversize = 0, fuzz_swallowed = 0;

    static uint32_t crc_step(uint32_t c, uint8_t b)
    {
        c ^= b;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
        return c;
    }

    /* The RX pins' octet while an oversized frame is drawn out past the TX frame. */
    EthOctet extend_octet(const EthOctet &o)
    {
        EthOctet r{};
        if (o.en && !in_frame)
            fuzz_swallowed++;
        if (ext_len < oversize) {
            r.en = true;
            r.data = static_cast<uint8_t>(rng());
            crc = crc_step(crc, r.data);
            ext_len++;
        } else if (ext_fcs < 4) {
            r.en = true;
            r.data = static_cast<uint8_t>(~crc >> (8 * ext_fcs));
            ext_fcs++;
        } else if (++ext_gap >= 12) {
            extending = false;
            swallowing = o.en;      /* the TX frame under way is lost up to its end */
        }
        return r;
    }

    /* The octet the RX pins get for o (TX pins now), frames mangled at random. */
    EthOctet mangle_octet(const EthOctet &o)
    {
        EthOctet r = o;
        if (fuzz <= 0)
            return r;
        if (extending)
            return extend_octet(o);
        if (swallowing) {
            if (o.en)
                return EthOctet{};
            swallowing = false;
        }
        if (o.en && !in_frame) {        /* a frame starts: mangle it? */
            n_out = 0;
            mangle = NONE;
            if (std::uniform_real_distribution<>(0, 1)(rng) < fuzz) {
                mangle = static_cast<Mangle>(1 + rng() % (oversize ? 4 : 3));
                (mangle == BAD_FCS ? fuzz_bad_fcs : mangle == RUNT ? fuzz_runts
                 : mangle == GARBAGE ? fuzz_garbage : fuzz_oversize)++;
                crc = 0xFFFFFFFFu;
                ext_len = ext_fcs = ext_gap = 0;
            }
        }
        if (o.en) {
            n_out++;
            if (mangle == OVERSIZE && n_out > 8) {         /* after preamble and SFD */
                crc = crc_step(crc, o.data);
                ext_len++;
            }
            if (mangle == BAD_FCS && n_out == 30)      /* a data octet: the FCS fails */
                r.data ^= 0x10;
            if (mangle == RUNT && n_out > 28)          /* preamble + 20 octets, then cut */
                r.en = false, r.data = 0;
        } else if (in_frame && mangle == GARBAGE) {    /* the frame ended: 4 random octets */
            garbage_left = 4;
            mangle = NONE;
        } else if (in_frame && mangle == OVERSIZE) {   /* the frame ended: draw it out */
            mangle = NONE;
            extending = true;
            return extend_octet(o);
        }
        if (!o.en && garbage_left) {
            garbage_left--;
            r.en = true;
            r.data = static_cast<uint8_t>(rng());
        }
        return r;
    }
};

struct PendingFrame {
    uint64_t start_ns;
    std::vector<uint8_t> data;
};

struct SimBackend;

/*
 * What one open of the backend steps: 1 or 2 harnesses and the wires between them. With peer=1
 * it has two (two SoCs, each with its own host model and memory), A and B, stepped in lockstep
 * (every step advances both by one cycle) with A's Ethernet TX pins wired to B's RX pins and
 * B's to A's. The backend that nic_backend_sim_open() returns is A; nic_backend_sim_peer(A)
 * returns B, a second nic_backend whose MMIO, DMA memory, irq and counters act on B, on the
 * same clock (now_ns() is the same on both; MMIO, idle and irq_wait on either step both).
 * Closing B only lists B's model errors; B lives until A is closed, which frees both.
 */
struct SimWorld {
    std::vector<std::unique_ptr<SimHarness>> h;
    std::vector<Wire> wires;          /* empty: the harness loops its own pins (the default) */
    bool peer = false;
    uint64_t wire_ns = 0, wire_cycles = 0;
    uint64_t period_ps = 8000;        /* the system clock's */
    std::string pcap_path;
    PcapWriter pcap;
    std::vector<PendingFrame> pending;    /* finished frames not written yet (time order) */
    std::unique_ptr<SimBackend> b;    /* instance B's backend (peer=1) */

    void frame_done(Wire &w)
    {
        w.in_frame = false;
        w.frames++;
        w.er_frames += w.er;
        size_t k = 0;
        while (k < w.octets.size() && w.octets[k] == 0x55)
            k++;
        if (k > 0 && k < w.octets.size() && w.octets[k] == 0xd5)
            k++;
        else {
            w.bad_preamble++;
            k = 0;
        }
        if (pcap.f)
            pending.push_back({w.start_ns, std::vector<uint8_t>(w.octets.begin() + k,
                                                                w.octets.end())});
    }

    /* Write the finished frames that started before every frame still on a wire began, in
     * start order, so the file is in time order across both directions. */
    void flush_pending(bool all)
    {
        if (pending.empty())
            return;
        uint64_t limit = UINT64_MAX;
        if (!all)
            for (const Wire &w : wires)
                if (w.in_frame)
                    limit = std::min(limit, w.start_ns);
        std::stable_sort(pending.begin(), pending.end(),
                         [](const PendingFrame &a, const PendingFrame &b) {
                             return a.start_ns < b.start_ns;
                         });
        size_t n = 0;
        while (n < pending.size() && pending[n].start_ns <= limit)
            pcap.write(pending[n].start_ns, pending[n].data), n++;
        pending.erase(pending.begin(), pending.begin() + static_cast<long>(n));
    }

    void step()
    {
        if (wires.empty()) {          /* the default: one harness looping its own pins */
            h[0]->step();
            return;
        }
        const uint64_t t_ps = h[0]->model().now_ps();   /* this cycle's start */
        const unsigned k = SimHarness::eth_ratio();
        const uint64_t octet_ps = period_ps / k;
        for (auto &x : h)
            x->step();
        bool done = false;
        for (Wire &w : wires) {
            const EthOctet *txs = h[w.from]->eth_tx();
            for (unsigned j = 0; j < k; j++) {
                const EthOctet &tx = txs[j];
                const EthOctet o = w.mangle_octet(tx);
                if (tx.en) {
                    if (!w.in_frame) {
                        w.in_frame = true;
                        w.er = false;
                        w.start_ns = (t_ps + j * octet_ps) / 1000;
                        w.octets.clear();
                    }
                    w.octets.push_back(tx.data);
                    w.er |= tx.er;
                } else if (w.in_frame) {
                    frame_done(w);
                    done = true;
                }
                if (w.line.empty()) {
                    h[w.to]->set_eth_rx(j, o);
                } else {
                    h[w.to]->set_eth_rx(j, w.line[w.pos]);
                    w.line[w.pos] = o;
                    w.pos = (w.pos + 1) % w.line.size();
                }
            }
        }
        if (done)
            flush_pending(false);
    }

    ~SimWorld();
};

struct SimBackend {
    struct nic_backend base;          /* first: the C side sees only this */
    SimWorld *w = nullptr;            /* shared by A and B; owned by A */
    std::unique_ptr<SimWorld> world;  /* A only */
    SimHarness *h = nullptr;          /* this instance */
    int index = 0;                    /* 0: A, 1: B */
    bool closed = false;              /* B: nic_close() was called */
    LinkParams params;
    TraceParams trace;
    std::string params_json;
    std::string last_error;
    size_t errors_seen = 0;
    uint64_t alloc_next = 0;          /* bump allocator offset in host memory */
};

SimBackend *sim(struct nic_backend *b) { return reinterpret_cast<SimBackend *>(b); }

SimWorld::~SimWorld() { flush_pending(true); }

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
        s->w->step();
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
    m.iommu_map(*bus_addr, size);     /* the device may use it from now on */
    return va;
}

void sim_dma_free(struct nic_backend *b, void *va, size_t size)
{
    /* Bump allocator: memory is returned when the most recent allocation is freed. */
    SimBackend *s = sim(b);
    nicsim::PcieHostModel &m = s->h->model();
    const uint64_t off = static_cast<uint8_t *>(va) - m.host_mem();
    m.iommu_unmap(m.host_mem_addr() + off, size);
    if (off + size == s->alloc_next)
        s->alloc_next = off;
}

int sim_irq_wait(struct nic_backend *b, uint64_t timeout_ns, unsigned *vector)
{
    SimBackend *s = sim(b);
    nicsim::PcieHostModel &m = s->h->model();
    const uint64_t deadline_ps = m.now_ps() + timeout_ns * 1000;
    while (!m.irq_pending()) {
        if (m.now_ps() >= deadline_ps) {
            collect_errors(s);
            return 0;
        }
        s->w->step();
    }
    uint64_t t;
    uint8_t vec;
    m.irq_pop(&t, &vec);
    if (vector)
        *vector = vec;
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
        s->w->step();
    collect_errors(s);
}

/* Counters: "model.<name>" (host model, e.g. model.tlps_up_mwr), "probe.<name>" (harness
 * probes, e.g. probe.dma_wr_stall_csr; probe.an.* is the harness's own count of what the bus
 * analyzer counts, over the analyzer's last closed snapshot window: see sim_harness.h), and the
 * pcie-bench limits for a transfer of N bytes: "model_limit_c2h_kbps:N" (device writes) and
 * "model_limit_h2c_kbps:N" (device reads), in kb/s. Device reads timed at the PHY (ReadTiming,
 * pcie_host_model.h): "model.reads_timed" counts them; read I (0-based, completion order, the
 * last 65536 kept) is "model_read_start_ps:I", "model_read_first_cpl_ps:I", "model_read_end_ps:I",
 * "model_read_bytes:I", "model_read_addr:I" (its MRd's bus address). Device writes timed at
 * the PHY (WriteTiming): "model.writes_timed" counts them; MWr I (0-based, TX order, the last
 * 65536 kept) is "model_write_start_ps:I", "model_write_bytes:I", and its device-side times
 * from the probe pins (WriteStamp, sim_harness.h) "probe_write_class:I",
 * "probe_write_matched:I", "probe_write_raised:I", "probe_write_raised_ps:I",
 * "probe_write_granted_ps:I", "probe_write_taken_ps:I" ("probe.writes_stamped" counts them).
 * With peer=1, wire_ns or pcap:
 * "wire.tx_frames", "wire.tx_bad_preamble", "wire.tx_er_frames" (frames this instance's TX pins
 * sent, those without a 0x55..0xd5 preamble, those with tx_er), "wire.pcap_frames" (records
 * written so far) and, with wire_fuzz, "wire.fuzz_bad_fcs", "wire.fuzz_runts",
 * "wire.fuzz_garbage", "wire.fuzz_oversize" (frames mangled on the way to the RX pins) and
 * "wire.fuzz_swallowed" (frames the TX pins sent while an oversized one was drawn out). */
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
    if (n.rfind("wire.", 0) == 0) {
        for (const Wire &w : s->w->wires)
            if (w.from == s->index) {
                std::map<std::string, uint64_t> m = {
                    {"tx_frames", w.frames}, {"tx_bad_preamble", w.bad_preamble},
                    {"tx_er_frames", w.er_frames}, {"pcap_frames", s->w->pcap.frames},
                    {"fuzz_bad_fcs", w.fuzz_bad_fcs}, {"fuzz_runts", w.fuzz_runts},
                    {"fuzz_garbage", w.fuzz_garbage}, {"fuzz_oversize", w.fuzz_oversize},
                    {"fuzz_swallowed", w.fuzz_swallowed}};
                return lookup(m, n.substr(5));
            }
        return -1;
    }
    if (n.rfind("model_read_", 0) == 0) {
        const size_t colon = n.find(':');
        if (colon == std::string::npos)
            return -1;
        const std::string field = n.substr(11, colon - 11);
        char *end = nullptr;
        const uint64_t i = std::strtoull(n.c_str() + colon + 1, &end, 10);
        nicsim::ReadTiming r;
        if (end == n.c_str() + colon + 1 || *end || !s->h->model().read_timing(i, &r))
            return -1;
        if (field == "start_ps")
            *value = r.start_ps;
        else if (field == "end_ps")
            *value = r.end_ps;
        else if (field == "first_cpl_ps")
            *value = r.first_cpl_ps;
        else if (field == "bytes")
            *value = r.bytes;
        else if (field == "addr")
            *value = r.addr;
        else
            return -1;
        return 0;
    }
    if (n.rfind("model_write_", 0) == 0 || n.rfind("probe_write_", 0) == 0) {
        const size_t colon = n.find(':');
        if (colon == std::string::npos)
            return -1;
        const std::string field = n.substr(12, colon - 12);
        char *end = nullptr;
        const uint64_t i = std::strtoull(n.c_str() + colon + 1, &end, 10);
        if (end == n.c_str() + colon + 1 || *end)
            return -1;
        if (n[0] == 'm') {
            nicsim::WriteTiming w;
            if (!s->h->model().write_timing(i, &w))
                return -1;
            if (field == "start_ps")
                *value = w.start_ps;
            else if (field == "bytes")
                *value = w.bytes;
            else
                return -1;
            return 0;
        }
        nicsim::WriteStamp w;
        if (!s->h->write_stamp(i, &w))
            return -1;
        if (field == "class")
            *value = w.cls;
        else if (field == "raised")
            *value = w.raised;
        else if (field == "matched")
            *value = w.matched;
        else if (field == "raised_ps")
            *value = w.raised_ps;
        else if (field == "granted_ps")
            *value = w.granted_ps;
        else if (field == "taken_ps")
            *value = w.taken_ps;
        else
            return -1;
        return 0;
    }
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
void list_errors(SimBackend *s)
{
    const std::vector<std::string> &errs = s->h->model().errors();
    const size_t shown = std::min<size_t>(errs.size(), 20);
    const char *who = s->w->peer ? (s->index ? " (B)" : " (A)") : "";
    for (size_t i = 0; i < shown; i++)
        std::fprintf(stderr, "sim%s: model error %zu/%zu: %s\n", who, i + 1, errs.size(),
                     errs[i].c_str());
}

/* A: lists its errors and B's (unless B was closed), frees both. B: lists its errors only. */
void sim_close(struct nic_backend *b)
{
    SimBackend *s = sim(b);
    if (s->closed)
        return;
    list_errors(s);
    s->closed = true;
    if (s->index != 0)
        return;
    if (s->w->b && !s->w->b->closed)
        list_errors(s->w->b.get());
    delete s;
}

/* msix=1: the host OS's part of MSI-X, as the kernel does it for a VFIO user: every entry of
 * the device's table (the pcie_msix_table block) gets the MSI window's address and its own
 * index as data, so the host model reports MSI number m as vector m, as with MSI; entries
 * unmasked. 0, or -1 with a message. */
int msix_setup(SimBackend *s, char *err, size_t errlen)
{
    struct nic_backend *b = &s->base;
    b->msix = s->params.msix;
    if (!s->params.msix)
        return 0;
    if (nic_rb_discover(b, err, errlen) < 0)
        return -1;
    char why[256];
    if (nic_rb_require(b, NIC_RB_PCIE_MSIX_TABLE, why, sizeof why) < 0) {
        std::snprintf(err, errlen, "sim backend: msix=1 needs the device's MSI-X table: %s", why);
        return -1;
    }
    const uint64_t table = nic_rb_base(b, NIC_RB_PCIE_MSIX_TABLE) +
                           NIC_CSR_PCIE_MSIX_TABLE_MEM_ADDR;
    for (unsigned i = 0; i < NIC_CSR_PCIE_MSIX_TABLE_MEM_SIZE / 4; i++) {
        const uint64_t e = table + 16 * i;
        sim_write32(b, e + 0, static_cast<uint32_t>(nicsim::kMsiWindowAddr));
        sim_write32(b, e + 4, 0);
        sim_write32(b, e + 8, i);
        sim_write32(b, e + 12, 0);
    }
    return 0;
}

const struct nic_backend_ops sim_ops = {
    sim_read32, sim_write32, sim_read64, sim_write64, sim_dma_alloc, sim_dma_free,
    sim_irq_wait, sim_now_ns, sim_idle, sim_counter, sim_params_json, sim_last_error,
    sim_close,
};

struct WireOpts {
    bool peer = false;
    bool wire_ns_given = false;
    uint64_t wire_ns = 0;
    std::string pcap;
    double wire_fuzz = 0;
    uint64_t wire_fuzz_seed = 1;
    uint64_t wire_fuzz_oversize = 0;
};

bool parse_u64(const std::string &key, const std::string &val, uint64_t *v, std::string *err)
{
    char *end = nullptr;
    *v = std::strtoull(val.c_str(), &end, 0);
    if (val.empty() || *end) {
        *err = "bad value for " + key + ": '" + val + "'";
        return false;
    }
    return true;
}

/*
 * Split off the harness's and the wiring's own keys; the rest goes to LinkParams::parse().
 *   trace=FILE            dump the whole design (FST if FILE ends in .fst, else VCD)
 *   trace_start_ns=N      first simulated ns to dump (default 0)
 *   trace_stop_ns=N       last simulated ns to dump (default: end)
 *   sample_log=FILE       write every change of the analyzer's sample vector, with its cycle
 *                         counter, one "cycle hexwords" line per change (for cross-checks)
 *   peer=1                two SoCs back to back over their GMII pins (SimWorld); NIC build only.
 *                         trace= and sample_log= then apply to both, B's file named with ".b"
 *                         before the extension.
 *   wire_ns=N             wire delay per direction, rounded to whole cycles (default 0: the RX
 *                         pins take in cycle n+1 what the TX pins showed in cycle n). NIC build.
 *   wire_fuzz=P           each frame on the wire(s), with probability P, reaches the RX pins
 *                         with a bad FCS (a data bit flipped), cut to a runt (preamble + 20
 *                         octets), or followed by 4 octets of garbage (no preamble) before the
 *                         next; wire_fuzz_seed=N (default 1) seeds it. NIC build.
 *                         wire_fuzz_oversize=N (60..65535; default 0: off) adds a fourth
 *                         kind: the frame drawn out with random octets to N octets after
 *                         the SFD, with a good FCS over them (an oversized frame); frames the
 *                         TX pins start meanwhile are swallowed (counted).
 *   pcap=FILE             every frame seen on the wire(s) (both directions with peer=1; the
 *                         loop otherwise) into a pcapng file (LINKTYPE_ETHERNET, ns
 *                         timestamps, FCS included and declared), NIC build only: see PcapWriter.
 * The environment variable NIC_TRACE=FILE sets trace= when the options do not
 * (nic_backend_sim_open()).
 */
bool split_opts(const std::string &opts, std::string *link, TraceParams *tp, WireOpts *wo,
                std::string *err)
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
            uint64_t v;
            if (!parse_u64(key, val, &v, err))
                return false;
            (key == "trace_start_ns" ? tp->start_ns : tp->stop_ns) = v;
        } else if (key == "peer") {
            uint64_t v;
            if (!parse_u64(key, val, &v, err))
                return false;
            if (v > 1) {
                *err = "peer: 0 or 1, not '" + val + "'";
                return false;
            }
            wo->peer = v == 1;
        } else if (key == "wire_ns") {
            if (!parse_u64(key, val, &wo->wire_ns, err))
                return false;
            if (wo->wire_ns > 1000000000u) {
                *err = "wire_ns: " + val + " is more than a second";
                return false;
            }
            wo->wire_ns_given = true;
        } else if (key == "wire_fuzz") {
            char *end = nullptr;
            wo->wire_fuzz = std::strtod(val.c_str(), &end);
            if (val.empty() || *end || !(wo->wire_fuzz >= 0 && wo->wire_fuzz <= 1)) {
                *err = "wire_fuzz: a probability in 0..1, not '" + val + "'";
                return false;
            }
        } else if (key == "wire_fuzz_seed") {
            if (!parse_u64(key, val, &wo->wire_fuzz_seed, err))
                return false;
        } else if (key == "wire_fuzz_oversize") {
            if (!parse_u64(key, val, &wo->wire_fuzz_oversize, err))
                return false;
            if (wo->wire_fuzz_oversize &&
                (wo->wire_fuzz_oversize < 60 || wo->wire_fuzz_oversize > 65535)) {
                *err = "wire_fuzz_oversize: octets 60..65535 (0: off), not '" + val + "'";
                return false;
            }
        } else if (key == "pcap") {
            if (val.empty()) {
                *err = "pcap: needs a file name";
                return false;
            }
            wo->pcap = val;
        } else {
            if (!link->empty())
                *link += ",";
            *link += item;
        }
    }
    return true;
}

/* FILE.ext -> FILE.b.ext (B's trace and sample log with peer=1). */
std::string peer_path(const std::string &p)
{
    if (p.empty())
        return p;
    const size_t slash = p.rfind('/'), dot = p.rfind('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
        return p + ".b";
    return p.substr(0, dot) + ".b" + p.substr(dot);
}

/* An output the options ask for can be written: `path` is not a directory and its part file
 * (part_path()) can be created in its folder. The probe is removed again. */
bool output_ok(const char *what, const std::string &path, std::string *err)
{
    if (path.empty())
        return true;
    struct stat sb;
    if (stat(path.c_str(), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        *err = std::string(what) + ": " + path + " is a directory";
        return false;
    }
    const std::string probe = part_path(path);
    FILE *f = std::fopen(probe.c_str(), "w");
    if (!f) {
        *err = std::string(what) + ": cannot create " + path + ": " + std::strerror(errno);
        return false;
    }
    std::fclose(f);
    std::remove(probe.c_str());
    return true;
}

/* The options (and NIC_TRACE) into the model's parameters, the trace and the wiring, checked
 * as far as can be without a model: every key and value, the Ethernet pins the wiring needs,
 * and that every output file (trace, sample_log, pcap; B's with peer=1) can be created. */
bool read_opts(const char *opts, LinkParams *params, TraceParams *trace, WireOpts *wo,
               std::string *err)
{
    std::string link;
    params->data_width = SimHarness::data_width();
    if (const char *env = std::getenv("NIC_TRACE"))
        trace->path = env;
    if (!split_opts(opts ? opts : "", &link, trace, wo, err) || !params->parse(link, err) ||
        !params->validate(err))
        return false;
    const bool wired = wo->peer || wo->wire_ns_given || !wo->pcap.empty() || wo->wire_fuzz > 0;
    if (wired && !SimHarness::has_eth_pins()) {
        *err = std::string(wo->peer ? "peer=1" : !wo->pcap.empty() ? "pcap=" : "wire_ns=") +
               " needs the SoC's Ethernet pins, which only the NIC datapath build has (make "
               "sim NIC=1: build/sim_dw<W>_nic/)";
        return false;
    }
    if (!output_ok("trace", trace->path, err) || !output_ok("sample_log", trace->sample_log, err) ||
        !output_ok("pcap", wo->pcap, err))
        return false;
    return !wo->peer || (output_ok("trace", peer_path(trace->path), err) &&
                         output_ok("sample_log", peer_path(trace->sample_log), err));
}

std::string make_params_json(const SimBackend *s, const SimWorld *w)
{
    std::string pj = s->params.to_json();
    /* Add the harness's own parameters to the model's JSON object. */
    const size_t close = pj.rfind('}');
    std::string extra = ",\"backend\":\"sim\",\"trace\":\"" + s->trace.path + "\"" +
                        ",\"eth_ratio\":" + std::to_string(SimHarness::eth_ratio());
    if (!w->wires.empty()) {
        extra += ",\"peer\":" + std::to_string(w->peer ? 1 : 0) +
                 ",\"instance\":\"" + (s->index ? "b" : "a") + "\"" +
                 ",\"wire_ns\":" + std::to_string(w->wire_ns) +
                 ",\"wire_delay_cycles\":" + std::to_string(w->wire_cycles) +
                 ",\"pcap\":\"" + w->pcap_path + "\"";
    }
    pj.insert(close == std::string::npos ? pj.size() : close, extra);
    return pj;
}

} /* namespace */

extern "C" struct nic_backend *nic_backend_sim_open(const char *opts, char *err, size_t errlen)
{
    std::unique_ptr<SimBackend> s(new SimBackend);
    std::unique_ptr<SimWorld> w(new SimWorld);
    std::string e;
    WireOpts wo;
    if (!read_opts(opts, &s->params, &s->trace, &wo, &e)) {
        std::snprintf(err, errlen, "sim backend: %s", e.c_str());
        return nullptr;
    }
    const bool wired = wo.peer || wo.wire_ns_given || !wo.pcap.empty() || wo.wire_fuzz > 0;
    try {
        w->h.emplace_back(new SimHarness(s->params, s->trace));
        if (wo.peer) {
            TraceParams tb = s->trace;
            tb.path = peer_path(tb.path);
            tb.sample_log = peer_path(tb.sample_log);
            w->h.emplace_back(new SimHarness(s->params, tb));
        }
    } catch (const std::exception &ex) {
        std::snprintf(err, errlen, "sim backend: %s", ex.what());
        return nullptr;
    }
    if (wired) {
        w->peer = wo.peer;
        w->wire_ns = wo.wire_ns;
        w->wire_cycles = static_cast<uint64_t>(
            std::llround(static_cast<double>(wo.wire_ns) * s->params.clk_mhz / 1000.0));
        w->period_ps = static_cast<uint64_t>(1e6 / s->params.clk_mhz + 0.5);
        w->pcap_path = wo.pcap;
        if (!wo.pcap.empty() && !w->pcap.open(wo.pcap, &e)) {
            std::snprintf(err, errlen, "sim backend: %s", e.c_str());
            return nullptr;
        }
        const int n = static_cast<int>(w->h.size());
        for (int i = 0; i < n; i++) {
            Wire wire;
            wire.from = i;
            wire.to = n == 2 ? 1 - i : i;
            wire.line.resize(w->wire_cycles * SimHarness::eth_ratio());   /* octets */
            wire.fuzz = wo.wire_fuzz;
            wire.oversize = static_cast<unsigned>(wo.wire_fuzz_oversize);
            wire.rng.seed(wo.wire_fuzz_seed + static_cast<uint64_t>(i));
            w->wires.push_back(std::move(wire));
            w->h[i]->set_eth_loopback(false);
        }
    }
    s->h = w->h[0].get();
    s->w = w.get();
    s->params_json = make_params_json(s.get(), w.get());
    s->base.ops = &sim_ops;
    s->base.kind = "sim";
    s->base.nrb = 0;
    if (wo.peer) {
        std::unique_ptr<SimBackend> p(new SimBackend);
        p->w = w.get();
        p->h = w->h[1].get();
        p->index = 1;
        p->params = s->params;
        p->trace = s->trace;
        p->trace.path = peer_path(p->trace.path);
        p->params_json = make_params_json(p.get(), w.get());
        p->base.ops = &sim_ops;
        p->base.kind = "sim";
        p->base.nrb = 0;
        w->b = std::move(p);
    }
    s->world = std::move(w);
    if (msix_setup(s.get(), err, errlen) < 0 ||
        (s->world->b && msix_setup(s->world->b.get(), err, errlen) < 0)) {
        sim_close(&s.release()->base);
        return nullptr;
    }
    return &s.release()->base;
}

/* The options checked as nic_backend_sim_open() would (read_opts()) without building a model:
 * 0, or -1 with the message. Tools call it (nic_backend_check_opts(), backend.c) before they
 * run anything, so a bad option or an output that cannot be written costs no simulated time. */
extern "C" int nic_backend_sim_check(const char *opts, char *err, size_t errlen)
{
    LinkParams params;
    TraceParams trace;
    WireOpts wo;
    std::string e;
    if (read_opts(opts, &params, &trace, &wo, &e))
        return 0;
    std::snprintf(err, errlen, "sim backend: %s", e.c_str());
    return -1;
}

extern "C" struct nic_backend *nic_backend_sim_peer(struct nic_backend *a)
{
    if (!a || a->ops != &sim_ops)
        return nullptr;
    SimBackend *s = sim(a);
    if (s->index != 0 || !s->w->b || s->w->b->closed)
        return nullptr;
    return &s->w->b->base;
}
