// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_nic_rb.c: unit test of the register-block discovery (nic_rb.c) on a fake device: a BAR0
 * array served by a backend of this file. Prints "ok" or the first failed check.
 */
#include <stdio.h>
#include <string.h>

#include "nic_rb.h"

static uint32_t bar0[0x8000 / 4];
static unsigned reads;

static uint32_t rd(struct nic_backend *b, uint64_t off)
{
    (void)b;
    reads++;
    return off / 4 < sizeof bar0 / 4 ? bar0[off / 4] : 0xffffffffu;
}
static void wr(struct nic_backend *b, uint64_t off, uint32_t v)
{
    (void)b;
    if (off / 4 < sizeof bar0 / 4)
        bar0[off / 4] = v;
}
static const struct nic_backend_ops ops = {.read32 = rd, .write32 = wr};

static int failures;
#define CHECK(cond)                                                                             \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            printf("%s:%d: %s\n", __FILE__, __LINE__, #cond);                                   \
            failures++;                                                                         \
        }                                                                                       \
    } while (0)

static void entry(unsigned i, uint32_t type, uint32_t version, uint32_t base, uint32_t info)
{
    uint32_t *e = &bar0[(NIC_ID_RB_TABLE_ADDR + i * NIC_ID_RB_ENTRY_BYTES) / 4];
    e[0] = type;
    e[1] = version;
    e[2] = base;
    e[3] = info;
}

static void device(unsigned n)
{
    memset(bar0, 0, sizeof bar0);
    bar0[NIC_CSR_INFO_MAGIC_ADDR / 4] = NIC_ID_MAGIC;
    bar0[NIC_CSR_INFO_VERSION_ADDR / 4] = (uint32_t)NIC_ID_VERSION_MAJOR
                                          << NIC_CSR_INFO_VERSION_MAJOR_OFFSET;
    bar0[NIC_ID_RB_COUNT_ADDR / 4] = n;
}

int main(void)
{
    char err[512];
    struct nic_backend b = {.ops = &ops, .kind = "fake"};

    /* A device with the nic block (MSIs 3.., RX and 2 TX vectors, 4 queues) and the analyzer
     * at another layout version than this binary knows. */
    device(2);
    entry(0, NIC_RB_NIC, NIC_RB_NIC_VERSION, 0x2800, 3 | 3u << 8 | 4u << 16);
    entry(1, NIC_RB_ANALYZER, NIC_RB_ANALYZER_VERSION ^ 1, 0x800, NIC_RB_NO_IRQ);
    CHECK(nic_rb_discover(&b, err, sizeof err) == 0);
    CHECK(b.nrb == 2);
    CHECK(nic_rb_find(&b, NIC_RB_NIC) != NULL);
    CHECK(nic_rb_base(&b, NIC_RB_NIC) == 0x2800);
    CHECK(NIC_CSR(&b, NIC, TXQ_DB) == 0x2800 + NIC_CSR_NIC_TXQ_DB_ADDR);
    CHECK(nic_rb_msi(&b, NIC_RB_NIC, 0) == 3 && nic_rb_msi(&b, NIC_RB_NIC, 2) == 5);
    CHECK(nic_rb_msi_count(&b, NIC_RB_NIC) == 3);
    CHECK(nic_rb_param(&b, NIC_RB_NIC) == 4);
    CHECK(nic_rb_find(&b, NIC_RB_ANALYZER) == NULL);
    CHECK(nic_rb_require(&b, NIC_RB_ANALYZER, err, sizeof err) < 0);
    CHECK(strstr(err, "analyzer") && strstr(err, "layout version") && strstr(err, "rebuild"));
    CHECK(nic_rb_require(&b, NIC_RB_PCIE_DMA0, err, sizeof err) < 0);
    CHECK(strstr(err, "no pcie_dma0 block"));
    /* Lookups use the table read once: no MMIO. */
    const unsigned r0 = reads;
    for (int i = 0; i < 100; i++)
        (void)nic_rb_base(&b, NIC_RB_NIC);
    CHECK(reads == r0);

    /* Not this device, or not mapped (all ones), or a table that makes no sense. */
    memset(bar0, 0xff, sizeof bar0);
    CHECK(nic_rb_discover(&b, err, sizeof err) < 0 && strstr(err, "MAGIC"));
    device(0);
    CHECK(nic_rb_discover(&b, err, sizeof err) < 0 && strstr(err, "RB_COUNT"));
    device(NIC_ID_RB_MAX + 1);
    CHECK(nic_rb_discover(&b, err, sizeof err) < 0 && strstr(err, "RB_COUNT"));
    device(1);
    bar0[NIC_CSR_INFO_VERSION_ADDR / 4] = (NIC_ID_VERSION_MAJOR + 1u)
                                          << NIC_CSR_INFO_VERSION_MAJOR_OFFSET;
    CHECK(nic_rb_discover(&b, err, sizeof err) < 0 && strstr(err, "major version"));

    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
