/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_dma.h: what the files of `nicbench dma` share (cmd_dma.c the command: a backend
 * configuration, its table and the sweep over MPS and MRRS; cmd_dma_opts.c its options;
 * cmd_dma_once.c one transfer at a time and the latency of single reads; cmd_dma_flight.c
 * descriptors kept queued, --inflight). Private to the dma command; after nicbench.h.
 */
#ifndef CMD_DMA_H
#define CMD_DMA_H

#include "nicbench.h"

#define MAX_PAIRS 16                   /* --mps, --mrrs list entries */
#define MAX_INFLIGHT 16                 /* --inflight list entries */
#define MAX_OFFSETS 512                 /* --offset list entries */
#define DMA_TABLE_DEPTH 256u            /* LitePCIe's descriptor table (LitePCIeDMA default) */
#define RING_BYTES (2u << 20)           /* --inflight > 1: slots of one 2 MiB DMA buffer */
#define LAT_SIZES "64..4K"
/* h2c with descriptors queued: at least this much data in the table, so the host's refill of a
 * slot (once the checker counted it, an MMIO read later) comes before the reader's next lap. */
#define H2C_MIN_LAP (32u << 10)

enum dir { H2C, C2H };
extern const char *const dir_name[2];

struct dma_run {
    void *buf;
    uint64_t bus;
    size_t cap;
    uint32_t seed;                  /* advanced for every transfer */
    uint32_t off;                   /* --offset: bytes past the buffer's (page-aligned) start */
    bool pages;                     /* --offset given: slots are whole pages, each at off */
};

/* The transfer's host memory: the buffer at the current offset. */
static inline uint8_t *run_buf(const struct dma_run *r) { return (uint8_t *)r->buf + r->off; }
static inline uint64_t run_bus(const struct dma_run *r) { return r->bus + r->off; }

/*
 * A run of `reps` transfers of `size` bytes with q descriptors in the engine's table in loop
 * mode: LitePCIe re-queues each descriptor as it completes, so the table always holds q and
 * the engine never waits for the host. Descriptor k points to slot k; transfer j (the j-th the
 * engine runs) uses slot j % q and carries stream bytes [j * size, (j + 1) * size) of the
 * pattern. A slot's stride is size rounded up to a power of two (to 4 KiB multiples above
 * 4 KiB), so no request crosses a 4 KiB boundary; with --offset it is whole pages and each
 * slot starts at the offset in its first page. The host keeps the slots' data one lap
 * ahead: h2c writes transfer j + q's data into a slot once the checker counted transfer j's
 * bytes; c2h checks transfer j's data in place, then puts the sentinel for j + q in its slot.
 */
struct flight {
    uint32_t size, stride, q;
    uint64_t reps;                  /* transfers timed */
    uint64_t total;                 /* transfers the engine ran (h2c: >= reps) */
    uint32_t seed;
    uint64_t run_ns;                /* start to the reps-th transfer's data checked or in place */
};

struct dma_cfg {
    int mps, mrrs;                  /* link (backend params) */
    int dev_mps, dev_mrrs;          /* what the device uses */
};

struct dma_args {
    bool dirs[2];
    uint64_t sizes[MAX_SIZES];
    size_t nsizes;
    uint64_t min_bytes;
    uint64_t inflight[MAX_INFLIGHT];
    size_t ninflight;
    bool latency;
    uint64_t count;                 /* --latency: reads per size */
    uint64_t offsets[MAX_OFFSETS];  /* --offset: bytes past the page-aligned buffer */
    size_t noffsets;
    bool pages;                     /* --offset given */
    uint64_t mps[MAX_PAIRS], mrrs[MAX_PAIRS];   /* --mps, --mrrs: the sweep (sim backend) */
    size_t nmps, nmrrs;
    bool sweep;                     /* --mps or --mrrs given */
};

/* cmd_dma_opts.c: the options into *a (the defaults where not given): EXIT_OK or a usage
 * error. */
int dma_parse(int argc, char **argv, struct dma_args *a);

/* cmd_dma_once.c: one transfer of size bytes at r's offset, its time into *ns (checked: the
 * pattern checker's count for h2c, the data in host memory for c2h); `count` single reads of
 * size bytes, their latency at the PHY, a table row and a JSON record (--latency). */
int dma_h2c_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns);
int dma_c2h_once(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t *ns);
int dma_latency(struct ctx *c, struct dma_run *r, uint32_t size, uint64_t count,
                const struct dma_cfg *cfg);

/* cmd_dma_flight.c: a slot's stride for transfers of size bytes; f->reps transfers with f->q
 * descriptors queued, the time into f->run_ns. */
uint32_t slot_stride(uint32_t size, bool pages);
int dma_h2c_flight(struct ctx *c, struct dma_run *r, struct flight *f);
int dma_c2h_flight(struct ctx *c, struct dma_run *r, struct flight *f);

#endif /* CMD_DMA_H */
