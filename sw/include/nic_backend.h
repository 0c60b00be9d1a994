/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nic_backend.h: the host library's backend interface (one struct of function pointers, as ixy's
 * device.h), with inline accessors. Every tool is written against this and runs on every backend.
 *
 *   sim   the Verilated SoC stepped in-process with the PCIe root-complex model (sw/sim/).
 *         Time is simulated: now_ns() is the simulation clock, and the model's counters are
 *         readable through counter(). With peer=1, two of them back to back over Ethernet:
 *         nic_backend_sim_peer() gives the second.
 *   vfio  a board behind VFIO (or sysfs resource0 mmap + hugepage DMA memory, as ixy does).
 *         Time is CLOCK_MONOTONIC; counter() knows no model counters.
 *
 * Registers are found at run time: nic_rb.h (the register-block table) and nic_regs.h.
 */
#ifndef NICBACKEND_H
#define NICBACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nic_backend;

struct nic_backend_ops {
    uint32_t (*read32)(struct nic_backend *b, uint64_t bar0_off);
    void (*write32)(struct nic_backend *b, uint64_t bar0_off, uint32_t value);
    uint64_t (*read64)(struct nic_backend *b, uint64_t bar0_off);
    void (*write64)(struct nic_backend *b, uint64_t bar0_off, uint64_t value);
    /* DMA-able memory: returns the CPU pointer and sets *bus_addr to the address the device
     * uses. Zero-filled. NULL on failure. */
    void *(*dma_alloc)(struct nic_backend *b, size_t size, uint64_t *bus_addr);
    void (*dma_free)(struct nic_backend *b, void *va, size_t size);
    /* Wait for an MSI. 1: one arrived (consumed), 0: timeout, <0: error. On 1, *vector (when
     * not NULL) is its vector: the MSI data's low bits in simulation, the eventfd's index on
     * VFIO; LitePCIe's msi-multi-vector block sends each MSI number as its own vector, so it
     * is the MSI number, as nic_rb_msi() gives it for a register block. */
    int (*irq_wait)(struct nic_backend *b, uint64_t timeout_ns, unsigned *vector);
    /* Nanoseconds on the backend's clock (simulated time for sim). */
    uint64_t (*now_ns)(struct nic_backend *b);
    /* Let `ns` pass with the host doing nothing (sim: step the model; hw: spin). */
    void (*idle)(struct nic_backend *b, uint64_t ns);
    /* A named counter of the backend (sim: host model and harness probes). 0 and *value set
     * when known, -1 when the backend has no such counter. */
    int (*counter)(struct nic_backend *b, const char *name, uint64_t *value);
    /* The backend's parameters as a JSON object (sim: every link/model parameter). */
    const char *(*params_json)(struct nic_backend *b);
    /* The most recent error the backend recorded (e.g. a malformed TLP seen by the model), or
     * NULL when there is none. */
    const char *(*last_error)(struct nic_backend *b);
    void (*close)(struct nic_backend *b);
};

/* One entry of the identification block's register-block table (sw/lib/nic_rb.h). */
struct nic_rb_entry {
    uint32_t type, version, base, info;
};
#define NIC_BACKEND_RB_MAX 16

struct nic_backend {
    const struct nic_backend_ops *ops;
    const char *kind;
    /* The host enabled the device's MSI-X (sim: msix=1): nic_msi_enable() sets the pcie_msix
     * block's per-vector enables as well as pcie_msi's. */
    bool msix;
    /* The device's register blocks, read once by nic_rb_discover() (nrb 0: not read yet). */
    unsigned nrb;
    struct nic_rb_entry rb[NIC_BACKEND_RB_MAX];
};

/* Open a backend. kind: "sim" or "vfio". opts: comma-separated key=value pairs (sim: model
 * parameters, e.g. "gen=2,lanes=4,mps=256,mrrs=512"; vfio: "dev=0000:01:00.0"). On failure
 * returns NULL and writes a message to err. */
struct nic_backend *nic_backend_open(const char *kind, const char *opts, char *err,
                                     size_t errlen);
struct nic_backend *nic_backend_sim_open(const char *opts, char *err, size_t errlen);
/* Check a backend's options without opening it (sim: every key and value, and that every
 * output file they ask for can be created), so a tool refuses them before any run: 0, or -1
 * with a message in err. vfio options are checked when the device opens. */
int nic_backend_check_opts(const char *kind, const char *opts, char *err, size_t errlen);
struct nic_backend *nic_backend_vfio_open(const char *opts, char *err, size_t errlen);
/* The sim backend opened with peer=1 simulates two NIC + host systems back to back (their
 * Ethernet pins wired together): `a` (what nic_backend_open returned) acts on instance A, and
 * this returns the backend of instance B: its own MMIO, DMA memory, irq and counters, the same
 * clock (now_ns equal; MMIO, idle or irq_wait on either advances both). B is freed with A (close
 * A last; closing B only lists B's model errors). NULL when `a` is not a sim backend opened with
 * peer=1 (and on builds without the sim backend). */
struct nic_backend *nic_backend_sim_peer(struct nic_backend *a);

static inline uint32_t nic_read32(struct nic_backend *b, uint64_t off)
{
    return b->ops->read32(b, off);
}
static inline void nic_write32(struct nic_backend *b, uint64_t off, uint32_t v)
{
    b->ops->write32(b, off, v);
}
static inline uint64_t nic_now_ns(struct nic_backend *b) { return b->ops->now_ns(b); }
static inline int nic_irq_wait(struct nic_backend *b, uint64_t timeout_ns)
{
    return b->ops->irq_wait(b, timeout_ns, NULL);
}
static inline int nic_irq_wait_vector(struct nic_backend *b, uint64_t timeout_ns,
                                      unsigned *vector)
{
    return b->ops->irq_wait(b, timeout_ns, vector);
}
static inline void nic_idle(struct nic_backend *b, uint64_t ns) { b->ops->idle(b, ns); }
static inline int nic_counter(struct nic_backend *b, const char *name, uint64_t *v)
{
    return b->ops->counter(b, name, v);
}
static inline void nic_close(struct nic_backend *b) { b->ops->close(b); }

#ifdef __cplusplus
}
#endif

#endif /* NICBACKEND_H */
