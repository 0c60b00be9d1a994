// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_iommu_dma.c: the host model's IOMMU against the real SoC (test_iommu_dma.py builds it with
 * a simulator build's objects): raw DMA descriptors of LitePCIe's DMA engine that point outside
 * every DMA allocation, but inside the host memory window, are caught. The writer's (c2h) MWr is
 * an IOMMU fault and writes nothing there; the reader's (h2c) MRd is a fault too. With iommu=0
 * the same write lands. Prints "ok <what>" per check, "FAIL <what>" and exits 1 on a failure.
 *
 * Usage: test_iommu_dma          (default options: the IOMMU on)
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "nic_backend.h"
#include "nic_dev.h"

static int failed;

static void check(bool ok, const char *what, uint64_t v)
{
    printf("%s %s (%" PRIu64 ")\n", ok ? "ok  " : "FAIL", what, v);
    failed |= !ok;
}

static uint64_t model_counter(struct nic_backend *b, const char *name)
{
    uint64_t v = UINT64_MAX;
    char n[64];
    snprintf(n, sizeof n, "model.%s", name);
    if (nic_counter(b, n, &v))
        v = UINT64_MAX;
    return v;
}

/* One raw writer descriptor of 256 B to `stray` (64 KiB past a 4 KiB allocation): returns the
 * IOMMU faults counted and whether host memory there stayed untouched. */
static int stray_write(const char *opts, uint64_t *faults, bool *untouched)
{
    char err[256];
    struct nic_backend *b = nic_backend_open("sim", opts, err, sizeof err);
    if (!b) {
        fprintf(stderr, "open: %s\n", err);
        return -1;
    }
    struct nic_dev_info info;
    if (nic_dev_check(b, &info, err, sizeof err)) {
        fprintf(stderr, "dev_check: %s\n", err);
        return -1;
    }
    uint64_t bus;
    uint8_t *buf = nic_dma_alloc(b, 4096, &bus);
    const uint64_t stray = bus + 0x10000;
    uint8_t *stray_va = buf + 0x10000;          /* the same host memory array */
    memset(stray_va, 0x5a, 256);

    nic_pattern_gen_enable(b, false);
    nic_dma_enable(b, NIC_DMA_WRITER, false);
    nic_dma_table_reset(b, NIC_DMA_WRITER);
    nic_dma_set_loop(b, NIC_DMA_WRITER, false);
    nic_dma_push(b, NIC_DMA_WRITER, stray, 256, NIC_DMA_LAST_DISABLE);
    nic_pattern_gen_seed(b, 1);
    nic_dma_enable(b, NIC_DMA_WRITER, true);
    nic_pattern_gen_enable(b, true);
    nic_idle(b, 20000);
    nic_pattern_gen_enable(b, false);

    *faults = model_counter(b, "iommu_faults");
    *untouched = true;
    for (int i = 0; i < 256; i++)
        *untouched = *untouched && stray_va[i] == 0x5a;

    /* A reader descriptor outside the allocation too (the device's MRd). */
    nic_dma_enable(b, NIC_DMA_READER, false);
    nic_dma_table_reset(b, NIC_DMA_READER);
    nic_dma_set_loop(b, NIC_DMA_READER, false);
    nic_dma_push(b, NIC_DMA_READER, stray + 0x1000, 256, NIC_DMA_IRQ_DISABLE);
    nic_dma_enable(b, NIC_DMA_READER, true);
    nic_idle(b, 20000);
    faults[1] = model_counter(b, "iommu_faults");
    nic_dma_stop(b, NIC_DMA_READER);
    nic_dma_stop(b, NIC_DMA_WRITER);
    nic_close(b);
    return 0;
}

int main(void)
{
    uint64_t faults[2];
    bool untouched;
    if (stray_write("", faults, &untouched))
        return 1;
    check(faults[0] >= 1, "iommu on: the writer's MWr outside every allocation is a fault",
          faults[0]);
    check(untouched, "iommu on: nothing written there", 0);
    check(faults[1] > faults[0], "iommu on: the reader's MRd outside every allocation is a fault",
          faults[1]);
    if (stray_write("iommu=0", faults, &untouched))
        return 1;
    check(faults[0] == 0 && faults[1] == 0, "iommu=0: no fault", faults[1]);
    check(!untouched, "iommu=0: the stray write lands", 0);
    return failed;
}
