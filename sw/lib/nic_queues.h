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
 */
#ifndef NICQUEUES_H
#define NICQUEUES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nic_backend.h"
#include "nic_contract.h"
#include "nic_rb.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIC_Q_MAX_TXQ NIC_LAYOUT_TXQ       /* TX queues at most (this SoC's: nic_q_hw_txq()) */
#define NIC_Q_MAX_TXIRQ NIC_LAYOUT_TXIRQ   /* TX vectors at most (this SoC's: nic_q_hw_txirq()) */

#define NIC_Q_RING_MAX 4096u        /* descriptors per ring (12-bit ring positions) */
#define NIC_Q_FRAME_MAX 9216u       /* the TX engine's max_frame, and the TX FIFO's max_len */
#define NIC_Q_FRAME_MIN 60u         /* frame bytes (no FCS) the MAC pads to */
#define NIC_Q_DESC_BYTES NIC_RECORD_BYTES   /* every ring entry (nic_contract.h) */
#define NIC_Q_RX_STATUS_FREE 0xffu  /* completion record not written yet (driver's marker) */

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

#define NIC_Q_RX_BUF_ALIGN 16u      /* RX buffer addresses: multiples of this */

/* TX ring q: `size` descriptors, one payload buffer of buf_size bytes per ring slot (a frame
 * is one descriptor, EOP set) and a writeback slot where the device writes the queue's consumer
 * index. */
struct nic_txq {
    struct nic_tx_desc *desc;       /* ring: size descriptors */
    uint64_t desc_bus;
    uint8_t *buf;                   /* payload buffer of slot i at buf + i * stride (+ the
                                     * frame's offset, nic_q_config.buf_offset*) */
    uint64_t buf_bus;
    volatile struct nic_tx_wb *wb;  /* consumer-index writeback slot */
    uint64_t wb_bus;
    unsigned size, size_log2, limit;
    uint32_t next_to_use;           /* producer index: the next descriptor the host fills */
    uint32_t next_to_clean;         /* consumer index as last read from the writeback */
    uint32_t rung;                  /* producer index of the last doorbell */
    uint64_t frames_sent, doorbells;
};

/* The RX ring: `size` descriptors, one buffer of buf_size bytes per slot (slot p always holds
 * buffer p: a buffer is reposted at its own ring position) and `size` completion records. The
 * driver marks a record it has consumed with status NIC_Q_RX_STATUS_FREE (never written by the
 * device), which is how a new record is recognised. */
struct nic_rxq {
    struct nic_rx_desc *desc;
    uint64_t desc_bus;
    volatile struct nic_rx_cpl *cpl; /* completion records: size of them */
    uint64_t cpl_bus;
    uint8_t *buf;                   /* buffer of ring position p at buf + p * stride + off[p] */
    uint64_t buf_bus;
    uint16_t *off;                  /* per ring position: its buffer's offset in its slot */
    unsigned size, size_log2;
    uint32_t prod;                  /* producer index written to the device (last doorbell) */
    uint32_t next_cpl;              /* next completion record to look at */
    uint32_t to_repost;             /* buffers polled and not reposted yet */
    uint64_t frames, bad_status, doorbells;
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

/* Change the in-flight limit of queue q (live, nic_txq_cfg with the same ring size). */
int nic_q_set_limit(struct nic_queues *nq, unsigned q, unsigned limit, char *err,
                    size_t errlen);

/* Descriptors of queue q posted and not yet completed, and the free ring slots. Ring positions
 * are kept mod the ring size, as the device keeps them: a ring holds at most size - 1. */
static inline unsigned nic_q_tx_pending(const struct nic_queues *nq, unsigned q)
{
    const struct nic_txq *t = &nq->tx[q];
    return (t->next_to_use - t->next_to_clean) & (t->size - 1);
}
static inline unsigned nic_q_tx_room(const struct nic_queues *nq, unsigned q)
{
    return nq->tx[q].size - 1 - nic_q_tx_pending(nq, q);
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

/* Times in microseconds (converted with nic_*irq_tick_cycles = sys clock cycles per us, from
 * INFO_CLK_FREQ), frame counts in completions. Each 0..65535. */
struct nic_q_coalesce {
    uint32_t rx_usecs, rx_frames, rx_abs_usecs, rx_min_interval;
    uint32_t tx_usecs, tx_frames, tx_abs_usecs, tx_min_interval;
    bool rx_enable, tx_enable;
};
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

enum nic_q_counter_kind {
    NIC_QC_COUNT = 0,               /* event counter, 32 bits, wraps: deltas are meaningful */
    NIC_QC_ERROR = 1,               /* a drop or error counter (wraps) */
    NIC_QC_STATE = 2,               /* a level, bitmap or index: the value itself */
};
struct nic_q_counter_def {
    const char *name;               /* CSR name without `nic_`, e.g. rxe_drop_no_buffer */
    uint64_t addr;                  /* offset in the nic block */
    unsigned words;
    enum nic_q_counter_kind kind;
    const char *ethtool;            /* its ethtool -S name, e.g. rx_drop_no_buffer */
    const char *desc;               /* what it counts (rtl/contract/registers.py) */
};
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
