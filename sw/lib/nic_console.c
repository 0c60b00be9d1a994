// SPDX-License-Identifier: BSD-2-Clause
/*
 * nic_console.c: the soft CPU's BIOS console through the crossover UART. See nic_console.h.
 */
#include "nic_console.h"

#include "nic_dev.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The BIOS prompt is "litex> " with colour codes around "litex": its end is what is matched. */
#define NIC_BIOS_PROMPT_END "> "

int nic_console_getc(struct nic_backend *b)
{
    if (nic_read32(b, NIC_CSR(b, UART, XOVER_RXEMPTY)) & 1)
        return -1;
    /* The crossover side pops its FIFO on this read (rx_fifo_rx_we). */
    return (int)(nic_read32(b, NIC_CSR(b, UART, XOVER_RXTX)) & 0xff);
}

void nic_console_puts(struct nic_backend *b, const char *s)
{
    for (; *s; s++) {
        while (nic_read32(b, NIC_CSR(b, UART, XOVER_TXFULL)) & 1)
            nic_idle(b, 1000);
        nic_write32(b, NIC_CSR(b, UART, XOVER_RXTX), (uint8_t)*s);
    }
}

static void log_append(char *log, size_t loglen, size_t *n, char ch)
{
    if (!log || loglen < 2)
        return;
    if (*n + 1 >= loglen) {             /* keep the tail */
        memmove(log, log + loglen / 2, *n - loglen / 2);
        *n -= loglen / 2;
    }
    log[(*n)++] = ch;
    log[*n] = 0;
}

int nic_console_expect(struct nic_backend *b, const char *pattern, char *log, size_t loglen,
                       uint64_t timeout_ns)
{
    const size_t plen = strlen(pattern);
    size_t matched = 0, n = 0;
    if (log && loglen)
        log[0] = 0;
    const uint64_t deadline = nic_now_ns(b) + timeout_ns;
    while (matched < plen) {
        const int ch = nic_console_getc(b);
        if (ch < 0) {
            if (nic_now_ns(b) > deadline || nic_last_error(b))
                return -1;
            nic_idle(b, 2000);
            continue;
        }
        log_append(log, loglen, &n, (char)ch);
        if (ch == pattern[matched])
            matched++;
        else
            matched = ch == pattern[0] ? 1 : 0;
    }
    return 0;
}

int nic_console_bios_prompt(struct nic_backend *b, char *log, size_t loglen,
                            uint64_t timeout_ns)
{
    /* The BIOS offers serial boot with this magic and waits for an answer: 'Q' cancels it. */
    if (nic_console_expect(b, "sL5DdSMmkekro", log, loglen, timeout_ns) < 0)
        return -1;
    nic_console_puts(b, "Q");
    return nic_console_expect(b, NIC_BIOS_PROMPT_END, log, loglen, timeout_ns);
}

/* Discard what the CPU printed that nobody waited for (e.g. a second prompt). */
static void drain(struct nic_backend *b)
{
    for (int quiet = 0; quiet < 20;) {
        if (nic_console_getc(b) < 0) {
            quiet++;
            nic_idle(b, 2000);
        } else {
            quiet = 0;
        }
    }
}

int nic_console_command(struct nic_backend *b, const char *cmd, char *out, size_t outlen,
                        uint64_t timeout_ns)
{
    drain(b);
    nic_console_puts(b, cmd);
    nic_console_puts(b, "\n");
    return nic_console_expect(b, NIC_BIOS_PROMPT_END, out, outlen, timeout_ns);
}

int nic_console_read32(struct nic_backend *b, uint64_t addr, uint32_t *v, uint64_t timeout_ns)
{
    char cmd[64], out[512];
    snprintf(cmd, sizeof cmd, "mem_read 0x%08" PRIx64 " 4", addr);
    if (nic_console_command(b, cmd, out, sizeof out, timeout_ns) < 0)
        return -1;
    /* "Memory dump:\n0xADDRESS  b0 b1 b2 b3  ....": bytes in memory order (little-endian). */
    char want[16];
    snprintf(want, sizeof want, "0x%08" PRIx64, addr);
    const char *p = strstr(out, "Memory dump:");
    p = p ? strstr(p, want) : NULL;
    if (!p) {
        if (getenv("NIC_CONSOLE_DEBUG"))
            fprintf(stderr, "console: no dump of %s in:\n%s\n", want, out);
        return -1;
    }
    p += strlen(want);
    uint32_t x = 0;
    for (int i = 0; i < 4; i++) {
        char *end;
        const unsigned long byte = strtoul(p, &end, 16);
        if (end == p || byte > 0xff)
            return -1;
        x |= (uint32_t)byte << (8 * i);
        p = end;
    }
    *v = x;
    return 0;
}

int nic_console_write32(struct nic_backend *b, uint64_t addr, uint32_t v, uint64_t timeout_ns)
{
    char cmd[64], out[256];
    snprintf(cmd, sizeof cmd, "mem_write 0x%08" PRIx64 " 0x%08x", addr, v);
    return nic_console_command(b, cmd, out, sizeof out, timeout_ns);
}

