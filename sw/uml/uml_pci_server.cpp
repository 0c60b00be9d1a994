// SPDX-License-Identifier: BSD-2-Clause
/*
 * uml_pci_server.cpp: the NIC SoC in Verilator as a PCI device of a User-Mode Linux guest
 * (CONFIG_UML_PCI_OVER_VIRTIO). A vhost-user back-end (vhost_user.h) serves virtio-pcidev's two
 * queues (include/uapi/linux/virtio_pcidev.h): on "cmd", configuration reads/writes are answered
 * from PciConfig and BAR0 reads/writes become MRd/MWr TLPs of the PCIe host model (the benches'
 * SimHarness + PcieHostModel, timing model included); the SoC's DMA reads and writes go to the
 * guest's memory (the vhost-user memory table is the host model's memory window, no IOMMU); the
 * SoC's MSIs go back on "irq" as VIRTIO_PCIDEV_OP_MSI with the message the guest programmed.
 *
 * MSI-X: where the SoC has an MSI-X table (its pcie_msix_table block, found in the register
 * block table when the SoC starts), the configuration space offers MSI-X too (--msix 0 hides
 * it). The guest's table writes reach the SoC with the host model's MSI window address and the
 * entry's index as data (kept here as the guest wrote them, and read back so), so the SoC's
 * MSI-X MWr is an interrupt of the host model with the entry as vector; it goes to the guest
 * as OP_MSI with the entry's address and data.
 *
 *   uml_pci_server --socket PATH [--ctl PATH] [--opts k=v,...] [--idle-cycles N]
 *                  [--irq-latency-ns N] [--stats FILE] [--accept-timeout S] [--msix 0|1]
 *
 * Time: the simulation is not coupled to the guest's clock (no time-travel). It steps as fast as
 * it can while the device is busy, and stops after --idle-cycles cycles (default 200000) with no
 * guest request, TLP, MSI or Ethernet activity until the guest's next request. A guest BAR read
 * blocks the guest until its completion is back (virt-pci polls the queue). An MSI is given to the
 * guest --irq-latency-ns (default 1000) of simulated time after it reached the root complex: a
 * host's MSI-to-handler latency, which a guest running at wall-clock speed against a slow
 * simulation would not have (the SoC's TX interrupt is not ordered after its consumer-index
 * writeback MWr; with 0 the guest can read the index before the write lands, sw/uml/README.md).
 * --ctl: a line-oriented control socket for tests: `csr OFF` (BAR0 read through the same model,
 * between guest requests) -> value; `csrw OFF VALUE` (a posted BAR0 write, a fault the test
 * injects behind the driver) -> ok; `linkdown` (the model's link-down fault now, for
 * fault_link_down_ns) -> ok; `dropwr ADDR LEN N` (the next N device writes into guest memory
 * [ADDR, ADDR + LEN) lost, e.g. RX completion records) -> ok; `stats` -> one JSON line; `quit`.
 * Exit: when the guest closes the socket, with the statistics (--stats FILE, and on stderr).
 */
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <stdexcept>
#include <poll.h>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

extern "C" {                          /* (its OS layer's MMIO hooks are C) */
#include "nic_core.h"
}
#include "pci_config.h"
#include "sim_harness.h"
#include "vhost_user.h"

using nicsim::LinkParams;
using nicsim::MmioResult;
using nicsim::SimHarness;
using nicsim::TraceParams;
using umlpci::Buf;
using umlpci::Chain;
using umlpci::PciConfig;
using umlpci::VhostUserDevice;

namespace {

/* include/uapi/linux/virtio_pcidev.h */
enum : uint8_t {
    kOpCfgRead = 1, kOpCfgWrite = 2, kOpMmioRead = 3, kOpMmioWrite = 4, kOpMmioMemset = 5,
    kOpInt = 6, kOpMsi = 7,
};
struct PcidevMsg {
    uint8_t op, bar;
    uint16_t reserved;
    uint32_t size;
    uint64_t addr;
} __attribute__((packed));
constexpr int kCmdQ = 0, kIrqQ = 1;

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

struct Stats {
    std::map<std::string, uint64_t> c;
    uint64_t &operator[](const std::string &k) { return c[k]; }
};

/* The control socket: one client at a time, line commands. */
class Ctl {
public:
    explicit Ctl(const std::string &p) : path(p)
    {
        if (path.empty())
            return;
        lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
        unlink(path.c_str());
        if (lsock < 0 || bind(lsock, reinterpret_cast<sockaddr *>(&a), sizeof(a)) < 0 ||
            listen(lsock, 4) < 0)
            throw std::runtime_error("cannot listen on " + path);
    }
    ~Ctl()
    {
        if (conn >= 0)
            close(conn);
        if (lsock >= 0) {
            close(lsock);
            unlink(path.c_str());
        }
    }
    void add_fds(std::vector<pollfd> *v) const
    {
        if (lsock >= 0)
            v->push_back(pollfd{lsock, POLLIN, 0});
        if (conn >= 0)
            v->push_back(pollfd{conn, POLLIN, 0});
    }
    /* Accept and read what is there; complete lines go to `lines`. */
    void service(std::deque<std::string> *lines)
    {
        if (lsock < 0)
            return;
        if (conn < 0)
            conn = accept4(lsock, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (conn < 0)
            return;
        char b[256];
        for (;;) {
            const ssize_t r = read(conn, b, sizeof(b));
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                close(conn);
                conn = -1;
                buf.clear();
                return;
            }
            if (r < 0)
                return;
            buf.append(b, static_cast<size_t>(r));
            size_t nl;
            while ((nl = buf.find('\n')) != std::string::npos) {
                lines->push_back(buf.substr(0, nl));
                buf.erase(0, nl + 1);
            }
        }
    }
    void reply(const std::string &s)
    {
        if (conn < 0)
            return;
        const std::string l = s + "\n";
        size_t off = 0;
        while (off < l.size()) {
            const ssize_t r = write(conn, l.data() + off, l.size() - off);
            if (r < 0 && (errno == EAGAIN || errno == EINTR)) {
                pollfd pf{conn, POLLOUT, 0};
                poll(&pf, 1, 100);
                continue;
            }
            if (r <= 0)
                return;
            off += static_cast<size_t>(r);
        }
    }

private:
    std::string path, buf;
    int lsock = -1, conn = -1;
};

/* The guest's view of one MSI-X table entry (what it wrote). */
struct MsixEntry {
    uint32_t addr = 0, upper = 0, data = 0;
};

class Server {
public:
    Server(VhostUserDevice &v, Ctl &c, const LinkParams &lp, uint64_t idle, uint64_t irq_lat_ps,
           bool msix)
        : vu(v), ctl(c), p(lp), cfg(lp), idle_cycles(idle), irq_latency_ps(irq_lat_ps),
          offer_msix(msix)
    {
        t0 = std::chrono::steady_clock::now();
    }
    int run();
    std::string stats_json();
    uint32_t read_now(uint32_t off);  /* (sw/core's discovery reads through it) */

private:
    void start_harness();
    void find_msix();
    bool msix_access(const PcidevMsg &m, uint64_t v, uint64_t *answer);
    bool start_request(const Chain &ch);
    void step_batch();
    void deliver_msis();
    void ctl_command(const std::string &l);
    void activity() { active_until = cycles() + idle_cycles; }
    uint64_t cycles() const { return h ? h->probes().cycles : 0; }

    VhostUserDevice &vu;
    Ctl &ctl;
    LinkParams p;
    PciConfig cfg;
    uint64_t idle_cycles, irq_latency_ps, active_until = 0;
    bool offer_msix;
    uint32_t msix_table = 0;          /* BAR0 offset of the MSI-X table (0: none) */
    std::vector<MsixEntry> msix;
    std::unique_ptr<SimHarness> h;
    Stats st;
    /* The request in flight on the model: a guest BAR read or a control CSR read. */
    enum class Busy { kNone, kGuestRead, kCtlRead } busy = Busy::kNone;
    int mmio_id = -1;
    Chain read_chain;
    uint32_t read_size = 0;
    std::deque<std::string> ctl_lines;
    std::deque<std::pair<uint64_t, uint8_t>> arrived;  /* MSIs at the RC: (due ps, vector) */
    std::deque<uint32_t> msi_q;       /* MSI/MSI-X data waiting for an irq buffer */
    std::deque<uint64_t> msi_addr_q;
    bool eth_en = false;
    uint64_t last_dma = 0;
    std::chrono::steady_clock::time_point t0;
};

void Server::start_harness()
{
    p.host_mem_addr = vu.mem_gpa();
    p.host_mem_size = vu.mem_size();
    p.host_mem_ext = vu.mem_base();
    p.iommu = false;
    std::string e;
    if (!p.validate(&e))
        throw std::runtime_error("the guest's memory as the host model's window: " + e);
    p.msix = false;                   /* the guest enables it in the configuration space */
    h.reset(new SimHarness(p, TraceParams{}));
    std::fprintf(stderr, "uml_pci_server: guest memory 0x%llx..0x%llx mapped; SoC reset\n",
                 static_cast<unsigned long long>(p.host_mem_addr),
                 static_cast<unsigned long long>(p.host_mem_addr + p.host_mem_size));
    if (offer_msix)
        find_msix();
}

/* A BAR0 read through the model, waited for (before the guest's first request). */
uint32_t Server::read_now(uint32_t off)
{
    const int id = h->model().mmio_read(off, 4);
    MmioResult r = h->model().mmio_result(id);
    while (!r.done) {
        h->step();
        r = h->model().mmio_result(id);
    }
    return r.status ? ~0u : static_cast<uint32_t>(r.value);
}

} /* namespace */

extern "C" u32 nic_core_rd32(struct nic_core_hw *hw, u32 off)
{
    return reinterpret_cast<Server *>(hw)->read_now(off);
}

extern "C" void nic_core_wr32(struct nic_core_hw *, u32, u32) {}

namespace {

/* The SoC's MSI-X table and PBA from its register-block table (sw/core's discovery). */
void Server::find_msix()
{
    nic_core_rb_table t;
    if (nic_core_rb_discover(reinterpret_cast<nic_core_hw *>(this), &t) != NIC_CORE_RB_OK ||
        nic_core_rb_check(&t, NIC_RB_PCIE_MSIX_TABLE) != NIC_CORE_RB_OK ||
        nic_core_rb_check(&t, NIC_RB_PCIE_MSIX) != NIC_CORE_RB_OK) {
        std::fprintf(stderr, "uml_pci_server: the SoC has no MSI-X table: MSI only\n");
        return;
    }
    const unsigned n = NIC_CSR_PCIE_MSIX_TABLE_MEM_SIZE / 4;
    msix_table = nic_core_rb_lookup(&t, NIC_RB_PCIE_MSIX_TABLE)->base +
                 NIC_CSR_PCIE_MSIX_TABLE_MEM_ADDR;
    const uint32_t pba = nic_core_rb_lookup(&t, NIC_RB_PCIE_MSIX)->base +
                         NIC_CSR_PCIE_MSIX_PBA_ADDR;
    msix.assign(n, MsixEntry{});
    cfg.add_msix(msix_table, pba, n);
    std::fprintf(stderr, "uml_pci_server: MSI-X: %u entries, table at BAR0+0x%x, PBA at "
                 "BAR0+0x%x\n", n, msix_table, pba);
}

/* A guest access to the MSI-X table's address and data words: true when it is one (then
 * *answer is a read's value). Writes reach the SoC as the MSI window's address and the entry's
 * index; reads return what the guest wrote. Vector Control passes through. */
bool Server::msix_access(const PcidevMsg &m, uint64_t v, uint64_t *answer)
{
    if (!msix_table || m.addr < msix_table || m.addr >= msix_table + 16ull * msix.size())
        return false;
    const uint32_t i = static_cast<uint32_t>(m.addr - msix_table) / 16;
    const uint32_t k = static_cast<uint32_t>(m.addr - msix_table) / 4 % 4;
    if (k == 3)
        return false;
    if (m.size != 4) {
        st["msix_table_access_refused"]++;
        std::fprintf(stderr, "uml_pci_server: %u-byte MSI-X table access at BAR0+0x%llx refused "
                     "(4-byte accesses only; counted)\n", m.size,
                     static_cast<unsigned long long>(m.addr));
        *answer = ~0ull;
        return true;
    }
    uint32_t *word = k == 0 ? &msix[i].addr : k == 1 ? &msix[i].upper : &msix[i].data;
    if (m.op == kOpMmioRead) {
        *answer = *word;
        return true;
    }
    *word = static_cast<uint32_t>(v);
    st["msix_table_writes"]++;
    const uint32_t to_soc = k == 0 ? static_cast<uint32_t>(nicsim::kMsiWindowAddr) : k == 1 ? 0 : i;
    h->model().mmio_write(m.addr, to_soc, 4);
    *answer = 0;
    return true;
}

/* Gathers a chain's device-readable bytes (header, then data for writes). */
std::vector<uint8_t> readable(const Chain &ch, Buf **out)
{
    std::vector<uint8_t> v;
    *out = nullptr;
    for (const Buf &b : ch.bufs) {
        if (b.writable) {
            if (!*out)
                *out = const_cast<Buf *>(&b);
            continue;
        }
        v.insert(v.end(), b.p, b.p + b.len);
    }
    return v;
}

/* One cmd-queue request; true when it completed at once (else it is the guest read in flight). */
bool Server::start_request(const Chain &ch)
{
    Buf *out;
    const std::vector<uint8_t> in = readable(ch, &out);
    PcidevMsg m;
    if (in.size() < sizeof(m)) {
        st["cmd_bad"]++;
        vu.queue(kCmdQ).push(ch, 0);
        return true;
    }
    std::memcpy(&m, in.data(), sizeof(m));
    const uint8_t *data = in.data() + sizeof(m);
    const size_t dlen = in.size() - sizeof(m);
    uint64_t v = 0;
    std::memcpy(&v, data, std::min<size_t>(dlen, 8));
    auto answer = [&](uint64_t val, uint32_t n) {
        uint32_t w = 0;
        if (out) {
            w = std::min<uint32_t>(n, out->len);
            std::memcpy(out->p, &val, w);
        }
        vu.queue(kCmdQ).push(ch, w);
    };
    switch (m.op) {
    case kOpCfgRead:
        st["cfg_reads"]++;
        answer(cfg.read(static_cast<uint32_t>(m.addr), static_cast<int>(m.size)), m.size);
        return true;
    case kOpCfgWrite:
        st["cfg_writes"]++;
        cfg.write(static_cast<uint32_t>(m.addr), static_cast<int>(m.size), v);
        h->model().set_msix(cfg.msix_enabled(), cfg.msix_function_mask());
        answer(0, 0);
        return true;
    case kOpMmioWrite:
    case kOpMmioRead:
        break;
    default:
        st["cmd_unsupported"]++;
        std::fprintf(stderr, "uml_pci_server: virtio-pcidev op %u refused (counted)\n", m.op);
        answer(~0ull, m.size);
        return true;
    }
    const bool aligned = (m.size == 4 || m.size == 8) && m.addr % m.size == 0 &&
                         m.addr + m.size <= p.bar0_size;
    if (m.bar != 0 || !aligned || (m.op == kOpMmioWrite && dlen < m.size)) {
        st[m.op == kOpMmioRead ? "mmio_reads_refused" : "mmio_writes_refused"]++;
        std::fprintf(stderr, "uml_pci_server: BAR%u %s of %u bytes at 0x%llx refused (the SoC "
                     "takes 4- and 8-byte aligned BAR0 accesses; counted)\n", m.bar,
                     m.op == kOpMmioRead ? "read" : "write", m.size,
                     static_cast<unsigned long long>(m.addr));
        answer(~0ull, m.size);
        return true;
    }
    activity();
    uint64_t msix_answer;
    if (msix_access(m, v, &msix_answer)) {
        answer(msix_answer, m.op == kOpMmioRead ? m.size : 0);
        return true;
    }
    if (m.op == kOpMmioWrite) {
        st["mmio_writes"]++;
        h->model().mmio_write(m.addr, v, static_cast<int>(m.size));
        answer(0, 0);                 /* posted */
        return true;
    }
    st["mmio_reads"]++;
    mmio_id = h->model().mmio_read(m.addr, static_cast<int>(m.size));
    read_chain = ch;
    read_size = m.size;
    busy = Busy::kGuestRead;
    return false;
}

void Server::ctl_command(const std::string &l)
{
    unsigned long long off, val, n;
    if (l == "stats") {
        ctl.reply(stats_json());
    } else if (std::sscanf(l.c_str(), "csr %lli", &off) == 1 && off % 4 == 0 &&
               off + 4 <= p.bar0_size) {
        if (!h) {
            ctl.reply("error: no device yet");
            return;
        }
        activity();
        mmio_id = h->model().mmio_read(off, 4);
        busy = Busy::kCtlRead;
    } else if (std::sscanf(l.c_str(), "csrw %lli %lli", &off, &val) == 2 && off % 4 == 0 &&
               off + 4 <= p.bar0_size && val <= 0xffffffffull) {
        /* A posted BAR0 write behind the guest's back (a fault a test injects, e.g. a TX queue
         * disabled under the driver): into the model's queue at once, as the guest's are. */
        if (!h) {
            ctl.reply("error: no device yet");
            return;
        }
        activity();
        st["ctl_writes"]++;
        h->model().mmio_write(off, val, 4);
        ctl.reply("ok");
    } else if (l == "linkdown") {
        if (!h) {
            ctl.reply("error: no device yet");
            return;
        }
        activity();
        h->model().link_down_now();
        ctl.reply("ok");
    } else if (std::sscanf(l.c_str(), "dropwr %lli %lli %lli", &off, &val, &n) == 3 &&
               val > 0 && n > 0) {
        if (!h) {
            ctl.reply("error: no device yet");
            return;
        }
        h->model().drop_writes(off, val, static_cast<unsigned>(n));
        ctl.reply("ok");
    } else if (l == "quit") {
        g_stop = 1;
    } else {
        ctl.reply("error: commands: csr OFF | csrw OFF VALUE | linkdown | dropwr ADDR LEN N | "
                  "stats | quit");
    }
}

void Server::deliver_msis()
{
    uint64_t at;
    uint8_t vec;
    while (h->model().irq_pop(&at, &vec)) {
        activity();
        st["msi_from_soc"]++;
        arrived.push_back({at + irq_latency_ps, vec});
    }
    /* The host's interrupt latency: an MSI reaches the guest irq_latency_ps after it reached
     * the root complex (simulated time). */
    const uint64_t now = h->model().now_ps();
    while (!arrived.empty() && arrived.front().first <= now) {
        const uint8_t v = arrived.front().second;
        arrived.pop_front();
        uint64_t addr;
        uint16_t data;
        if (cfg.msix_enabled()) {
            /* An MSI-X message: the entry the SoC sent (its data is the entry's index). */
            if (v >= msix.size()) {
                st["msix_bad_entry"]++;
                continue;
            }
            st["msi_vec" + std::to_string(v)]++;       /* by MSI number, either kind */
            st["msix_delivered"]++;
            msi_q.push_back(msix[v].data);
            msi_addr_q.push_back(uint64_t(msix[v].upper) << 32 | msix[v].addr);
            continue;
        }
        if (!cfg.msi_message(v, &addr, &data)) {
            st["msi_dropped_disabled"]++;
            continue;
        }
        st["msi_vec" + std::to_string(v)]++;
        msi_q.push_back(data);
        msi_addr_q.push_back(addr);
    }
    if (!arrived.empty())
        activity();
    auto &q = vu.queue(kIrqQ);
    while (!msi_q.empty()) {
        Chain ch;
        if (!q.pop(&ch))
            break;
        Buf *out;
        readable(ch, &out);
        /* MSI data is 16 bits, MSI-X's 32 (virt-pci takes either size). */
        const uint32_t n = cfg.msix_enabled() ? 4 : 2;
        if (!out || out->len < sizeof(PcidevMsg) + n) {
            st["irq_buf_bad"]++;
            q.push(ch, 0);
            continue;
        }
        PcidevMsg m{kOpMsi, 0, 0, n, msi_addr_q.front()};
        std::memcpy(out->p, &m, sizeof(m));
        std::memcpy(out->p + sizeof(m), &msi_q.front(), n);
        q.push(ch, sizeof(m) + n);
        msi_q.pop_front();
        msi_addr_q.pop_front();
        st["msi_sent"]++;
    }
    if (msi_q.size() > st["msi_queue_max"])
        st["msi_queue_max"] = msi_q.size();
}

void Server::step_batch()
{
    for (int i = 0; i < 64; i++) {
        h->step();
        const nicsim::EthOctet *tx = h->eth_tx();
        for (unsigned j = 0; j < nicsim::SimHarness::eth_ratio(); j++) {
            const nicsim::EthOctet &o = tx[j];
            if (o.en && !eth_en)
                st["eth_tx_frames"]++;
            if (o.en)
                st["eth_tx_octets"]++;
            if (o.en)
                activity();
            eth_en = o.en;
        }
        if (busy != Busy::kNone) {
            const MmioResult r = h->model().mmio_result(mmio_id);
            if (!r.done)
                continue;
            uint64_t v = r.value;
            if (r.status) {
                v = ~0ull;
                st["mmio_read_errors"]++;
            }
            if (busy == Busy::kGuestRead) {
                Buf *out;
                readable(read_chain, &out);
                uint32_t w = 0;
                if (out) {
                    w = std::min(read_size, out->len);
                    std::memcpy(out->p, &v, w);
                }
                vu.queue(kCmdQ).push(read_chain, w);
            } else {
                char b[32];
                std::snprintf(b, sizeof(b), "0x%08llx", static_cast<unsigned long long>(v));
                ctl.reply(b);
            }
            busy = Busy::kNone;
            activity();
            return;                   /* serve the next request at once */
        }
    }
    const nicsim::ProbeCounters &pc = h->probes();
    const uint64_t dma = pc.dma_wr_reqs + pc.dma_rd_reqs;
    if (dma != last_dma || h->model().mmio_outstanding())
        activity();
    last_dma = dma;
}

std::string Server::stats_json()
{
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string s = "{";
    char b[128];
    std::snprintf(b, sizeof(b), "\"wall_s\": %.3f, \"cycles\": %llu, \"sim_ns\": %llu", wall,
                  static_cast<unsigned long long>(cycles()),
                  static_cast<unsigned long long>(h ? h->model().now_ps() / 1000 : 0));
    s += b;
    for (const auto &kv : st.c)
        s += ", \"" + kv.first + "\": " + std::to_string(kv.second);
    if (h) {
        for (const auto &kv : h->model().counters())
            s += ", \"model." + kv.first + "\": " + std::to_string(kv.second);
        s += ", \"model.errors_text\": " + std::to_string(h->model().errors().size());
    }
    s += ", \"cmd_bad_chains\": " + std::to_string(vu.queue(kCmdQ).bad_chains());
    s += ", \"irq_bad_chains\": " + std::to_string(vu.queue(kIrqQ).bad_chains());
    s += ", \"devctl_mps\": " + std::to_string(cfg.devctl_mps());
    s += ", \"devctl_mrrs\": " + std::to_string(cfg.devctl_mrrs());
    s += "}";
    return s;
}

int Server::run()
{
    while (!g_stop) {
        const bool running = h && cycles() < active_until;
        std::vector<pollfd> fds{pollfd{vu.sock_fd(), POLLIN, 0}};
        ctl.add_fds(&fds);
        for (int q = 0; q < 2; q++)
            if (vu.queue(q).kick_fd() >= 0)
                fds.push_back(pollfd{vu.queue(q).kick_fd(), POLLIN, 0});
        /* Idle: sleep until the guest or the control socket says something. Running: look
         * without waiting, every 64 cycles. */
        const int n = poll(fds.data(), fds.size(), running || busy != Busy::kNone ? 0 : 20);
        if (n < 0 && errno != EINTR)
            break;
        if (!running && n == 0 && busy == Busy::kNone && ctl_lines.empty())
            st["idle_polls"]++;
        if (fds[0].revents & (POLLIN | POLLHUP)) {
            if (!vu.handle_message()) {
                std::fprintf(stderr, "uml_pci_server: %s\n", vu.error().c_str());
                break;
            }
            if (vu.mem_ready() && !h)
                start_harness();
            activity();
        }
        ctl.service(&ctl_lines);
        for (int q = 0; q < 2; q++)
            vu.queue(q).drain_kick();
        if (!h)
            continue;
        while (busy == Busy::kNone) {
            Chain ch;
            if (vu.queue(kCmdQ).pop(&ch)) {
                activity();
                start_request(ch);
                continue;
            }
            if (!ctl_lines.empty()) {
                const std::string l = ctl_lines.front();
                ctl_lines.pop_front();
                ctl_command(l);
                continue;
            }
            break;
        }
        if (cycles() < active_until || busy != Busy::kNone)
            step_batch();
        deliver_msis();
    }
    return 0;
}

void usage()
{
    std::fprintf(stderr, "usage: uml_pci_server --socket PATH [--ctl PATH] [--opts k=v,...] "
                 "[--idle-cycles N] [--irq-latency-ns N] [--stats FILE] [--accept-timeout S] "
                 "[--msix 0|1]\n");
}

} /* namespace */

int main(int argc, char **argv)
{
    std::string sock, ctlp, opts, stats;
    uint64_t idle = 200000, irq_latency_ns = 1000;
    int accept_s = 120;
    bool msix = true;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            usage();
            return 2;
        }
        const std::string v = argv[++i];
        if (a == "--socket")
            sock = v;
        else if (a == "--ctl")
            ctlp = v;
        else if (a == "--opts")
            opts = v;
        else if (a == "--stats")
            stats = v;
        else if (a == "--idle-cycles")
            idle = std::stoull(v);
        else if (a == "--irq-latency-ns")
            irq_latency_ns = std::stoull(v);
        else if (a == "--accept-timeout")
            accept_s = std::stoi(v);
        else if (a == "--msix")
            msix = v != "0";
        else {
            usage();
            return 2;
        }
    }
    if (sock.empty()) {
        usage();
        return 2;
    }
    LinkParams lp;
    lp.data_width = SimHarness::data_width();
    std::string e;
    if (!opts.empty() && !lp.parse(opts, &e)) {
        std::fprintf(stderr, "uml_pci_server: --opts: %s\n", e.c_str());
        return 2;
    }
    std::signal(SIGINT, on_signal);
    std::signal(SIGTERM, on_signal);
    std::signal(SIGPIPE, SIG_IGN);
    try {
        VhostUserDevice vu(sock, 2);
        Ctl ctl(ctlp);
        std::fprintf(stderr, "uml_pci_server: listening on %s\n", sock.c_str());
        if (!vu.accept_one(accept_s * 1000)) {
            std::fprintf(stderr, "uml_pci_server: no guest connected within %d s\n", accept_s);
            return 1;
        }
        Server s(vu, ctl, lp, idle, irq_latency_ns * 1000, msix);
        s.run();
        const std::string j = s.stats_json();
        std::fprintf(stderr, "uml_pci_server: stats %s\n", j.c_str());
        if (!stats.empty()) {
            FILE *f = std::fopen(stats.c_str(), "w");
            if (f) {
                std::fprintf(f, "%s\n", j.c_str());
                std::fclose(f);
            }
        }
    } catch (const std::exception &ex) {
        std::fprintf(stderr, "uml_pci_server: %s\n", ex.what());
        return 1;
    }
    return 0;
}
