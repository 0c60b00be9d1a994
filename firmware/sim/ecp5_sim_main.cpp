// SPDX-License-Identifier: BSD-2-Clause
// ecp5_sim_main.cpp: the Verilator harness of the open ECP5 target's SoC
// (litex_soc/targets/ecp5_sim.py): the firmware's console on stdin/stdout, the Ethernet PHY's
// GMII-like pins looped back (what leaves on eth_tx_* enters on eth_rx_* one cycle later).
//
// Usage: ecp5sim [--max-cycles N] [--quiet-exit]
//   stdin -> the UART's sink stream, a byte at a time; the UART's source stream -> stdout,
//   flushed at every newline. Runs until stdin is closed and the console has been silent for
//   2 M cycles, or N cycles (default: no limit). At exit, stderr gets "sim: <cycles> cycles,
//   <seconds> s, <rate> cycles/s".
#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>

#include "Vecp5sim.h"
#include "verilated.h"

int main(int argc, char **argv)
{
    uint64_t max_cycles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-cycles") && i + 1 < argc) {
            max_cycles = strtoull(argv[++i], nullptr, 0);
        } else {
            fprintf(stderr, "usage: %s [--max-cycles N]\n", argv[0]);
            return 2;
        }
    }
    auto ctx = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vecp5sim>(ctx.get());
    std::deque<uint8_t> in;
    bool in_open = true;
    uint64_t cycle = 0, last_out = 0;
    const auto t0 = std::chrono::steady_clock::now();

    top->sys_rst = 1;
    top->serial_source_ready = 1;
    for (;; cycle++) {
        if (cycle == 16)
            top->sys_rst = 0;
        // stdin, without blocking, every 1024 cycles.
        if (in_open && (cycle & 1023) == 0) {
            struct pollfd p = {0, POLLIN, 0};
            if (poll(&p, 1, 0) > 0) {
                uint8_t buf[256];
                const ssize_t n = read(0, buf, sizeof buf);
                if (n <= 0)
                    in_open = false;
                else
                    in.insert(in.end(), buf, buf + n);
            }
        }
        top->serial_sink_valid = !in.empty();
        top->serial_sink_data = in.empty() ? 0 : in.front();
        top->sys_clk = 0;
        top->eval();
        // Sampled before the rising edge: the handshakes of this cycle.
        const bool took = top->serial_sink_valid && top->serial_sink_ready;
        const bool out = top->serial_source_valid && top->serial_source_ready;
        const uint8_t out_byte = top->serial_source_data;
        const uint8_t tx_data = top->eth_tx_data, tx_en = top->eth_tx_en, tx_er = top->eth_tx_er;
        top->sys_clk = 1;
        top->eval();
        // Loopback: the octet sent in this cycle is received in the next one.
        top->eth_rx_data = tx_data;
        top->eth_rx_dv = tx_en;
        top->eth_rx_er = tx_er;
        if (took)
            in.pop_front();
        if (out) {
            putchar(out_byte);
            if (out_byte == '\n')
                fflush(stdout);
            last_out = cycle;
        }
        if (max_cycles && cycle >= max_cycles)
            break;
        if (!in_open && in.empty() && cycle - last_out > 2000000)
            break;
    }
    fflush(stdout);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    fprintf(stderr, "sim: %llu cycles, %.1f s, %.0f cycles/s\n", (unsigned long long)cycle, s,
            cycle / s);
    top->final();
    return 0;
}
