// SPDX-License-Identifier: BSD-2-Clause
/*
 * nic_rb.c: the register-block table (nic_rb.h): the shared core's discovery
 * (sw/core/nic_core.c) on a backend, with messages, and the core's MMIO accessors.
 */
#include "nic_rb.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

_Static_assert(NIC_ID_RB_MAX <= NIC_BACKEND_RB_MAX, "nic_backend.h has no room for the table");
_Static_assert(NIC_ID_RB_ENTRY_BYTES == sizeof(struct nic_rb_entry), "table entry size");

/* The shared core's MMIO accessors (nic_core_osdep.h) on a backend. */
uint32_t nic_core_rd32(struct nic_core_hw *hw, uint32_t off)
{
    return nic_read32((struct nic_backend *)hw, off);
}

void nic_core_wr32(struct nic_core_hw *hw, uint32_t off, uint32_t v)
{
    nic_write32((struct nic_backend *)hw, off, v);
}

static int rb_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

const char *nic_rb_name(enum nic_rb_type type) { return nic_core_rb_name(type); }

static uint32_t known_version(enum nic_rb_type type) { return nic_core_rb_known_version(type); }

int nic_rb_discover(struct nic_backend *b, char *err, size_t errlen)
{
    struct nic_core_rb_table t;
    switch (nic_core_rb_discover(nic_hw(b), &t)) {
    case NIC_CORE_RB_OK:
        break;
    case NIC_CORE_RB_BAD_MAGIC:
        return rb_err(err, errlen, "identification block: MAGIC (BAR0 0x%04x) reads 0x%08x, "
                      "not 0x%08x: not this NIC, or BAR0 is not mapped",
                      (unsigned)NIC_CSR_INFO_MAGIC_ADDR, t.magic, (unsigned)NIC_ID_MAGIC);
    case NIC_CORE_RB_BAD_MAJOR:
        return rb_err(err, errlen, "identification block: design version %u.%u, this host "
                      "library is for major version %u",
                      NIC_FIELD_GET(t.version, NIC_CSR_INFO_VERSION_MAJOR),
                      NIC_FIELD_GET(t.version, NIC_CSR_INFO_VERSION_MINOR), NIC_ID_VERSION_MAJOR);
    default:
        return rb_err(err, errlen, "identification block: RB_COUNT (BAR0 0x%04x) is %u, "
                      "expected 1..%u", (unsigned)NIC_ID_RB_COUNT_ADDR, t.count,
                      (unsigned)NIC_ID_RB_MAX);
    }
    for (unsigned i = 0; i < t.n; i++)
        b->rb[i] = (struct nic_rb_entry){t.e[i].type, t.e[i].version, t.e[i].base, t.e[i].info};
    b->nrb = t.n;
    return 0;
}

static const struct nic_rb_entry *lookup(struct nic_backend *b, enum nic_rb_type type)
{
    if (!b->nrb) {
        char err[256];
        if (nic_rb_discover(b, err, sizeof err) < 0) {
            fprintf(stderr, "nic_rb: %s\n", err);
            abort();
        }
    }
    for (unsigned i = 0; i < b->nrb; i++)
        if (b->rb[i].type == (uint32_t)type)
            return &b->rb[i];
    return NULL;
}

const struct nic_rb_entry *nic_rb_find(struct nic_backend *b, enum nic_rb_type type)
{
    const struct nic_rb_entry *e = lookup(b, type);
    return e && e->version == known_version(type) ? e : NULL;
}

int nic_rb_require(struct nic_backend *b, enum nic_rb_type type, char *err, size_t errlen)
{
    const struct nic_rb_entry *e = lookup(b, type);
    if (!e)
        return rb_err(err, errlen, "this SoC has no %s block (register block type 0x%04x): "
                      "the gateware was built without it", nic_rb_name(type), (unsigned)type);
    if (e->version != known_version(type))
        return rb_err(err, errlen, "the %s block at BAR0 0x%04x has layout version 0x%08x, "
                      "this host binary knows 0x%08x (sw/include/nic_regs.h): rebuild the host "
                      "tools for this gateware", nic_rb_name(type), e->base, e->version,
                      known_version(type));
    return 0;
}

static const struct nic_rb_entry *must(struct nic_backend *b, enum nic_rb_type type)
{
    const struct nic_rb_entry *e = nic_rb_find(b, type);
    if (!e) {
        char err[256];
        nic_rb_require(b, type, err, sizeof err);
        fprintf(stderr, "nic_rb: %s\n", err);
        abort();
    }
    return e;
}

uint64_t nic_rb_base(struct nic_backend *b, enum nic_rb_type type) { return must(b, type)->base; }

unsigned nic_rb_msi(struct nic_backend *b, enum nic_rb_type type, unsigned i)
{
    return (must(b, type)->info & 0xff) + i;
}

unsigned nic_rb_msi_count(struct nic_backend *b, enum nic_rb_type type)
{
    const uint32_t info = must(b, type)->info;
    return (info & 0xff) == NIC_RB_NO_IRQ ? 0 : (info >> 8) & 0xff;
}

unsigned nic_rb_param(struct nic_backend *b, enum nic_rb_type type)
{
    return must(b, type)->info >> 16;
}
