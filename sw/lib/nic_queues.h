/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * nic_queues.h: the NIC datapath's driver (rtl/nic/nic_datapath.py behind the nic register
 * block), in the spirit of ixy's and e1000e's: one TX descriptor ring per TX queue with
 * consumer-index writebacks, one RX descriptor ring with its completion ring, doorbells,
 * interrupt coalescing (ethtool -C) and the datapath's counters (ethtool -S).
 *
 * The formats, flags, status codes and the counter table come from nic_contract.h, generated
 * from rtl/contract/. The nic block is found at run time (nic_rb.h): nic_q_open() fails with a
 * message on a device without it. Parameters: struct nic_q_config. The hot path reads no MMIO:
 * nic_q_tx_send() (nic_q_tx_post() + nic_q_tx_doorbell()), nic_q_tx_reclaim(), nic_q_rx_poll(),
 * nic_q_rx_refill(). Every function returns 0 (or a count) on success and -1 with a message in
 * err on failure.
 *
 * The ring state (struct nic_txq, nic_rxq), descriptors, doorbells, the coalescing values and
 * the counter table are the shared datapath core's (sw/core/nic_core.h), which the Linux module
 * (sw/kernel/) compiles too; this file adds the copy buffers, waits and messages.
 */
#ifndef NICQUEUES_H
#define NICQUEUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nic_backend.h"
#include "nic_contract.h"
#include "nic_core.h"
#include "nic_rb.h"

#ifdef __cplusplus
extern "C" {
#endif

struct nic_q_config {
    unsigned ntxq;                  /* TX queues used, 1..nic_q_hw_txq() */
    unsigned tx_ring;               /* descriptors per TX ring: a power of two, 2..4096 */
    unsigned tx_limit;              /* descriptors in flight per queue, 1..4096; 0: tx_ring - 1 */
    unsigned rx_ring;               /* RX descriptors (and completion records), as tx_ring */
    unsigned buf_size;              /* bytes per TX and RX buffer, 60..9216: the largest frame
                                     * (no FCS) */
    unsigned sched_mode;            /* enum nic_tx_sched_mode: 0 round-robin, 1 strict priority,
                                     * 2 WRR */
    /* Where buffers start in their pages, as a kernel driver's skbs do: 0 and not random, the
     * default, packs buffers 64 B apart. Otherwise every buffer has a page-aligned slot of
     * its own and starts buf_offset bytes into it (0..4095), or, with buf_offset_random, at an
     * offset drawn from buf_offset_seed for each TX frame posted and each RX buffer posted.
     * RX offsets are rounded down to 16 B (an RX buffer must be 16-byte aligned,
     * rtl/contract/formats.py); TX offsets take any byte. */
    unsigned buf_offset;
    bool buf_offset_random;
    uint64_t buf_offset_seed;
};

/* The driver's state; its rings and buffers are one block of DMA memory from the backend
 * (nic_dma_alloc), which nic_q_close() gives back. */
struct nic_queues {
    struct nic_backend *b;
    struct nic_q_config cfg;
    struct nic_txq tx[NIC_Q_MAX_TXQ];
    struct nic_rxq rx;
    uint64_t nic_base;              /* the nic block's BAR0 base */
    uint32_t tick_cycles;           /* system clock cycles per microsecond (INFO_CLK_FREQ) */
    void *mem;                      /* the one DMA block */
    size_t mem_size;
    size_t stride;                  /* bytes between buffer slots */
    uint64_t rng;                   /* buf_offset_random: offsets drawn from it */
    bool open;
};

/* One frame handed to nic_q_tx_send(). */
struct nic_q_frame {
    const void *data;
    uint32_t len;                   /* 1..buf_size bytes, without FCS */
};

/* One received frame (nic_q_rx_poll()). data points into the ring's buffer: valid until the
 * next nic_q_rx_refill(). */
struct nic_q_rx_frame {
    const volatile uint8_t *data;
    uint32_t len;                   /* 0 unless status is 0 */
    uint32_t index;                 /* RX ring position of its buffer */
    uint32_t status;                /* enum nic_rx_status (rtl/nic/rx_engine.py) */
    uint64_t timestamp;             /* device cycle of its first beat */
};

/* Set up the datapath and allocate the rings: FIFOs, coalescing defaults, queues reset and
 * enabled, ring bases, writeback addresses, RX buffers posted. Multi-word CSRs (ring bases,
 * writeback addresses) are written with nic_csr_write_wide() before the strobe CSR whose write
 * takes them. Fails on bad parameters with a message naming it, or if a queue does not drain or
 * the RX engine does not report its reset (timeout_ns of backend time). */
int nic_q_open(struct nic_queues *nq, struct nic_backend *b, const struct nic_q_config *cfg,
               uint64_t timeout_ns, char *err, size_t errlen);
/* Disable the queues (waiting up to timeout_ns for them to drain) and the RX engine, free the
 * memory. Safe on a closed or failed nic_queues. */
int nic_q_close(struct nic_queues *nq, uint64_t timeout_ns, char *err, size_t errlen);

/* The reset path (docs/faults.md), after an error, a stall or a link-down: queue q disabled,
 * waited drained (its in-flight descriptors complete, the rest are dropped: *dropped says how
 * many the device's final consumer index, read from nic_txq_cons, did not pass: its last
 * writeback may have been lost with the link), then restarted empty at index 0. The RX
 * ring in two steps: nic_q_rx_stop() disables the engine and waits until it is idle and has
 * reset its ring (frames arriving from then on are dropped and counted, rxe_drop_no_buffer);
 * the records it wrote are still in host memory: poll them (nic_q_rx_poll()); then
 * nic_q_rx_restart() marks every record free, posts every buffer again and enables it. */
int nic_q_tx_reset(struct nic_queues *nq, unsigned q, uint64_t timeout_ns, unsigned *dropped,
                   char *err, size_t errlen);
int nic_q_rx_stop(struct nic_queues *nq, uint64_t timeout_ns, char *err, size_t errlen);
void nic_q_rx_restart(struct nic_queues *nq);

/* Change the in-flight limit of queue q (live, nic_txq_cfg with the same ring size). */
int nic_q_set_limit(struct nic_queues *nq, unsigned q, unsigned limit, char *err,
                    size_t errlen);

/* Descriptors of queue q posted and not yet completed, and the free ring slots. Ring positions
 * are kept mod the ring size, as the device keeps them: a ring holds at most size - 1. */
static inline unsigned nic_q_tx_pending(const struct nic_queues *nq, unsigned q)
{
    return nic_core_tx_pending(&nq->tx[q]);
}
static inline unsigned nic_q_tx_room(const struct nic_queues *nq, unsigned q)
{
    return nic_core_tx_room(&nq->tx[q]);
}

/* Copy frames[0..n-1] into queue q's ring, one descriptor each (EOP), and ring one doorbell
 * (nic_txq_db: the queue and its producer index): nic_q_tx_post() then nic_q_tx_doorbell().
 * Returns how many were posted (n if they all fit: min(n, room)); none posted rings no
 * doorbell. -1 with a message on a bad queue or frame length. */
int nic_q_tx_send(struct nic_queues *nq, unsigned q, const struct nic_q_frame *frames,
                  unsigned n, char *err, size_t errlen);
/* The two halves of nic_q_tx_send(): post copies the frames and writes their descriptors in
 * host memory only (no register access; the device sees nothing yet), as many as fit; the
 * doorbell hands the device everything posted since the last doorbell (none if nothing was),
 * its one MMIO write. */
int nic_q_tx_post(struct nic_queues *nq, unsigned q, const struct nic_q_frame *frames,
                  unsigned n, char *err, size_t errlen);
void nic_q_tx_doorbell(struct nic_queues *nq, unsigned q);
/* Free the descriptors queue q completed (consumer index from the writeback in host memory).
 * Returns how many were freed, -1 if the written-back index is impossible (beyond what was
 * posted). */
int nic_q_tx_reclaim(struct nic_queues *nq, unsigned q, char *err, size_t errlen);

/* Up to max new completion records, in ring order, into out (read from host memory, no
 * doorbell). Returns how many. */
int nic_q_rx_poll(struct nic_queues *nq, struct nic_q_rx_frame *out, unsigned max);
/* Repost the buffers of every frame polled so far: one doorbell (nic_rxe_db). Returns how
 * many. */
int nic_q_rx_refill(struct nic_queues *nq);

/* --- interrupt coalescing (ethtool -C) ----------------------------------------------------- */

/* struct nic_q_coalesce: nic_core.h. */
/* The defaults nic_q_open() sets: frames 1, every time 0, enabled (one interrupt per
 * completion). */
void nic_q_coalesce_defaults(struct nic_q_coalesce *c);
/* Parse "rx-usecs=8,rx-frames=16,tx-usecs=..." (names: rx-usecs, rx-frames, rx-abs-usecs,
 * rx-min-interval, tx-..., rx-enable, tx-enable) over the values already in c. */
int nic_q_coalesce_parse(const char *s, struct nic_q_coalesce *c, char *err, size_t errlen);
int nic_q_coalesce_set(struct nic_queues *nq, const struct nic_q_coalesce *c, char *err,
                       size_t errlen);
/* Reads the configuration back from the CSRs. */
int nic_q_coalesce_get(struct nic_queues *nq, struct nic_q_coalesce *c, char *err,
                       size_t errlen);

/* --- counters: every nic_* status register -------------------------------------------------- */

/* enum nic_q_counter_kind, struct nic_q_counter_def: nic_core.h. */
/* The table (nic_contract.h NIC_CONTRACT_STATUS_REGS) and its length. */
const struct nic_q_counter_def *nic_q_counter_defs(size_t *n);
/* Index of a counter by name, -1 if the table has none. */
int nic_q_counter_index(const char *name);
/* Read every counter of the table into v (nic_q_counter_defs() entries). MMIO reads: never call
 * it on the hot path. */
int nic_q_counters_read(struct nic_backend *b, uint64_t *v, size_t n, char *err, size_t errlen);
/* Per TX queue counters (ethtool -S tx_queue_<q>_packets / _bytes): the good frames and their
 * bytes the TX engine sent from queue q (nic_txe_q_frames / nic_txe_q_bytes, 32 bits, wrapping).
 * Two MMIO reads each: not for the hot path. */
int nic_q_tx_queue_stats(struct nic_backend *b, unsigned q, uint32_t *frames, uint32_t *bytes,
                         char *err, size_t errlen);
/* Errored frames of TX queue q < nic_q_hw_txq() (ethtool -S tx_queue_<q>_errors,
 * nic_txe_q_errors, 32 bits, wrapping; its writebacks carry the low 16 bits). */
uint32_t nic_q_tx_queue_errors(struct nic_backend *b, unsigned q);
/* The device's consumer index and errored frames of open TX queue q into its writeback and
 * counts, as the reset path does (nic_core_txq_sync_cons): true if the last writeback was
 * missing (lost with the link). */
bool nic_q_tx_sync(struct nic_queues *nq, unsigned q);
/* The SoC's TX queues and TX interrupt vectors (the nic block's table entry). */
unsigned nic_q_hw_txq(struct nic_backend *b);
unsigned nic_q_hw_txirq(struct nic_backend *b);
/* TX queue groups: queue q's TX interrupt vector is q % nic_q_hw_txirq(), raised as the MSI
 * nic_q_tx_vector_msi(b, g); RX's is nic_q_rx_msi(b) (the nic block's MSIs: RX, then TX 0..).
 * The interrupts TX vector g raised (nic_txirq_vec_irqs, 32 bits, wrapping): one MMIO read.
 * The coalescing settings (tx-*) apply to every TX vector alike; each coalesces its own
 * frames. */
unsigned nic_q_rx_msi(struct nic_backend *b);
unsigned nic_q_tx_vector_msi(struct nic_backend *b, unsigned g);
int nic_q_tx_vector_irqs(struct nic_backend *b, unsigned g, uint32_t *irqs, char *err,
                         size_t errlen);
/* after - before for a counter of the given kind: mod 2^32 for counters, after for state. */
uint64_t nic_q_counter_delta(const struct nic_q_counter_def *d, uint64_t before, uint64_t after);

#ifdef __cplusplus
}
#endif

#endif /* NICQUEUES_H */
