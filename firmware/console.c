// SPDX-License-Identifier: BSD-2-Clause
/*
 * console.c: the firmware's UART console (LiteX UART, generated csr.h): blocking output, line
 * input without echo (the host program types commands), printf through picolibc's vsnprintf,
 * and JSON records one per line (the keys nicbench's --json records use).
 */
#include <stdio.h>
#include <string.h>

#include <generated/csr.h>

#include "fw.h"

void con_putc(char c)
{
    if (c == '\n')
        con_putc('\r');
    while (uart_txfull_read())
        ;
    uart_rxtx_write((uint8_t)c);
}

void con_puts(const char *s)
{
    while (*s)
        con_putc(*s++);
}

void con_printf(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    con_puts(buf);
}

static char con_getc(void)
{
    while (uart_rxempty_read())
        ;
    const char c = (char)uart_rxtx_read();
    uart_ev_pending_write(1u << CSR_UART_EV_PENDING_RX_OFFSET);
    return c;
}

unsigned con_getline(char *buf, unsigned size)
{
    unsigned n = 0;
    for (;;) {
        const char c = con_getc();
        if (c == '\r' || c == '\n') {
            if (n == 0)
                continue;
            break;
        }
        if (n + 1 < size)
            buf[n++] = c;
    }
    buf[n] = 0;
    return n;
}

/* --- JSON ------------------------------------------------------------------------------------ */

static bool json_first;

void json_begin(void)
{
    con_puts("{");
    json_first = true;
}

static void json_key(const char *key)
{
    con_printf("%s\"%s\": ", json_first ? "" : ", ", key);
    json_first = false;
}

void json_str(const char *key, const char *v)
{
    json_key(key);
    con_printf("\"%s\"", v);
}

void json_u64(const char *key, uint64_t v)
{
    json_key(key);
    con_printf("%llu", (unsigned long long)v);
}

void json_fix(const char *key, uint64_t num, uint64_t den, unsigned decimals)
{
    json_key(key);
    if (den == 0) {
        con_puts("null");
        return;
    }
    uint64_t scale = 1;
    for (unsigned i = 0; i < decimals; i++)
        scale *= 10;
    const uint64_t v = (num * scale + den / 2) / den;
    if (decimals)
        con_printf("%llu.%0*llu", (unsigned long long)(v / scale), (int)decimals,
                   (unsigned long long)(v % scale));
    else
        con_printf("%llu", (unsigned long long)v);
}

void json_end(void)
{
    con_puts("}\n");
}

bool fw_parse_u32(const char *s, uint32_t *v)
{
    uint32_t x = 0;
    if (!*s)
        return false;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || x > 429496728u)
            return false;
        x = x * 10 + (uint32_t)(*s - '0');
    }
    *v = x;
    return true;
}
