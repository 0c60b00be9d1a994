/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_fake_device.h: the fake device of the PCIe host model's unit test, on the model's PHY
 * pins: Dev steps the model one cycle at a time, sends TLPs (or hand-made beats) on the TX
 * stream, takes the RX stream (optionally with rx_ready low at times), checks the model's pins,
 * and in bar_mode answers MWr/MRd to BAR0 with a register file (CplDs after `turnaround`
 * cycles, optionally for several MRds in reverse order). mem_req() and cpl() build TLPs as
 * dwords on the stream (big-endian byte order). Header only.
 */
#ifndef TEST_FAKE_DEVICE_H
#define TEST_FAKE_DEVICE_H

#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include "pcie_host_model.h"

namespace model_test {

using namespace nicsim;

/* ---- TLP builders (dwords as on the stream: big-endian byte order) ---- */

inline uint32_t be_dw(const uint8_t *b)
{
    return uint32_t(b[0]) << 24 | b[1] << 16 | b[2] << 8 | b[3];
}

inline std::vector<uint32_t> mem_req(bool write, uint64_t addr, uint32_t len_dw, uint16_t req_id,
                                     uint8_t tag, unsigned fbe, unsigned lbe, bool four_dw = false,
                                     const uint8_t *payload = nullptr)
{
    const uint32_t ft = (write ? 0x40 : 0x00) | (four_dw ? 0x20 : 0x00);
    std::vector<uint32_t> t;
    t.push_back(ft << 24 | (len_dw & 0x3ff));
    t.push_back(uint32_t(req_id) << 16 | uint32_t(tag) << 8 | (lbe & 0xf) << 4 | (fbe & 0xf));
    if (four_dw) {
        t.push_back(static_cast<uint32_t>(addr >> 32));
        t.push_back(static_cast<uint32_t>(addr) & ~3u);
    } else {
        t.push_back(static_cast<uint32_t>(addr) & ~3u);
    }
    if (write)
        for (uint32_t i = 0; i < len_dw; i++)
            t.push_back(payload ? be_dw(payload + 4 * i) : 0x01020304u + i);
    return t;
}

inline std::vector<uint32_t> cpl(uint16_t cpl_id, uint16_t req_id, uint8_t tag, uint32_t lower,
                                 uint32_t byte_count, const std::vector<uint32_t> &data,
                                 unsigned status = 0)
{
    std::vector<uint32_t> t;
    const uint32_t ft = data.empty() ? 0x0a : 0x4a;
    t.push_back(ft << 24 | (data.size() & 0x3ff));
    t.push_back(uint32_t(cpl_id) << 16 | (status & 7) << 13 | (byte_count & 0xfff));
    t.push_back(uint32_t(req_id) << 16 | uint32_t(tag) << 8 | (lower & 0x7f));
    t.insert(t.end(), data.begin(), data.end());
    return t;
}

/* ---- the fake device ---- */

struct Beat {
    uint32_t dat[4] = {0, 0, 0, 0};
    uint16_t be = 0;
    bool first = false, last = false;
    uint64_t not_before = 0;          /* offer from this time (ps) on */
};

struct RxTlp {
    std::vector<uint32_t> dw;
    uint64_t t_first = 0, t_last = 0; /* when its first / last beat was taken */
};

class Dev {
public:
    explicit Dev(PcieHostModel &model) : m(model), W(model.params().data_width / 32)
    {
        PhyIn idle;                   /* as the harness does: pins for cycle 0 */
        m.cycle(idle, &out);
    }

    /* Standard beats for a TLP; extra_beats > 0 appends beats beyond the end (be 0). */
    static std::vector<Beat> beats_of(const std::vector<uint32_t> &tlp, int W)
    {
        std::vector<Beat> v;
        for (size_t i = 0; i < tlp.size(); i += W) {
            Beat b;
            for (int k = 0; k < W && i + k < tlp.size(); k++) {
                b.dat[k] = tlp[i + k];
                b.be |= 0xf << (4 * k);
            }
            b.first = i == 0;
            b.last = i + W >= tlp.size();
            v.push_back(b);
        }
        return v;
    }

    void send(const std::vector<uint32_t> &tlp, uint64_t not_before = 0)
    {
        send_beats(beats_of(tlp, W), not_before);
    }

    void send_beats(std::vector<Beat> beats, uint64_t not_before = 0)
    {
        if (!beats.empty())
            beats[0].not_before = not_before;
        tx.insert(tx.end(), beats.begin(), beats.end());
    }

    void step()
    {
        const uint64_t t = m.now_ps();
        PhyIn in;
        if (!tx.empty() && tx.front().not_before <= t) {
            const Beat &b = tx.front();
            in.tx_valid = true;
            in.tx_first = b.first;
            in.tx_last = b.last;
            std::memcpy(in.tx_dat, b.dat, sizeof in.tx_dat);
            in.tx_be = b.be;
        }
        in.rx_ready = rx_ready ? rx_ready(m.cycles()) : true;
        in.msi_valid = !msi_q.empty();
        in.msi_dat = msi_q.empty() ? 0 : msi_q.front();

        /* Checks on the model's pins: constant config, stable rx beats while held. */
        if (out.id != m.params().device_id || !out.link_up || !out.bus_master_enable ||
            !out.msi_enable)
            pin_errors++;
        if (held && (!out.rx_valid || std::memcmp(out.rx_dat, held_beat.rx_dat, 16) ||
                     out.rx_be != held_beat.rx_be || out.rx_first != held_beat.rx_first ||
                     out.rx_last != held_beat.rx_last))
            hold_violations++;
        held = out.rx_valid && !in.rx_ready;
        held_beat = out;

        if (in.tx_valid && out.tx_ready) {
            if (tx.front().first)
                tx_first_t.push_back(t);
            if (tx.front().last)
                tx_last_t.push_back(t);
            tx.pop_front();
        }
        if (out.rx_valid && in.rx_ready)
            take_rx(t);
        if (in.msi_valid && out.msi_ready) {
            msi_t.push_back(t);
            msi_q.pop_front();
        }
        PhyOut next;
        m.cycle(in, &next);
        out = next;
    }

    void run(uint64_t n)
    {
        for (uint64_t i = 0; i < n; i++)
            step();
    }

    bool run_until(const std::function<bool()> &done, uint64_t max_cycles)
    {
        for (uint64_t i = 0; i < max_cycles; i++) {
            if (done())
                return true;
            step();
        }
        return done();
    }

    MmioResult mmio_wait(int id)
    {
        run_until([&] { return m.mmio_result(id).done; }, 100000);
        return m.mmio_result(id);
    }

    PcieHostModel &m;
    const int W;
    PhyOut out;
    std::deque<Beat> tx;
    std::deque<uint8_t> msi_q;
    std::function<bool(uint64_t)> rx_ready;
    bool bar_mode = true;             /* answer MWr/MRd to BAR0 with the register file */
    int turnaround = 4;               /* cycles from a MRd's last beat to its CplD */
    int reverse_batch = 1;            /* answer MRds in reverse order, this many at a time */
    std::map<uint32_t, uint32_t> regs;/* BAR0 offset -> payload dword as on the wire */
    std::vector<RxTlp> rx;
    std::vector<uint64_t> tx_first_t, tx_last_t, msi_t;
    int hold_violations = 0, pin_errors = 0;

private:
    void take_rx(uint64_t t)
    {
        if (out.rx_first) {
            cur.dw.clear();
            cur.t_first = t;
        }
        for (int k = 0; k < W; k++)
            if ((out.rx_be >> (4 * k)) & 0xf)
                cur.dw.push_back(out.rx_dat[k]);
        if (!out.rx_last)
            return;
        cur.t_last = t;
        rx.push_back(cur);
        if (bar_mode)
            bar_access(cur, t);
    }

    void bar_access(const RxTlp &r, uint64_t t)
    {
        const uint32_t ft = r.dw[0] >> 24, len = r.dw[0] & 0x3ff;
        const uint32_t off = r.dw[2] - static_cast<uint32_t>(m.params().bar0_addr);
        if (ft == 0x40) {
            for (uint32_t i = 0; i < len; i++)
                regs[off + 4 * i] = r.dw[3 + i];
        } else if (ft == 0x00) {
            pending.push_back(r);
            if (static_cast<int>(pending.size()) < reverse_batch)
                return;
            for (auto it = pending.rbegin(); it != pending.rend(); ++it) {
                const uint32_t o = it->dw[2] - static_cast<uint32_t>(m.params().bar0_addr);
                const uint32_t n = it->dw[0] & 0x3ff;
                std::vector<uint32_t> data;
                for (uint32_t i = 0; i < n; i++)
                    data.push_back(regs[o + 4 * i]);
                send(cpl(m.params().device_id, it->dw[1] >> 16, (it->dw[1] >> 8) & 0xff,
                         o & 0x7f, 4 * n, data),
                     t + turnaround * period());
            }
            pending.clear();
        }
    }

    uint64_t period() const { return static_cast<uint64_t>(1e6 / m.params().clk_mhz + 0.5); }

    RxTlp cur;
    std::vector<RxTlp> pending;
    bool held = false;
    PhyOut held_beat;
};

} /* namespace model_test */

#endif /* TEST_FAKE_DEVICE_H */
