/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The NIC's shared datapath core: register-block discovery, TX and RX ring state and
 * descriptors, doorbells, queue set-up, the interrupt coalescer's values and the counter table.
 * One C source (nic_core.c) compiled into both the Linux module (sw/kernel/) and the user-space
 * library (sw/lib/nic_rb.c, nic_queues.c), so the code the kernel runs is the code the
 * simulation tests run against the RTL.
 *
 * Freestanding: types, byte order, barriers, READ_ONCE/WRITE_ONCE and MMIO come from
 * nic_core_osdep.h; registers and formats from the generated nic_regs.h and nic_contract.h. No
 * allocation, no waiting, no messages: the callers own memory, time (drain / reset polls) and
 * error text.
 * Parameters: the limits below; the hardware's (queues, vectors, clock) come from the device.
 * Ring positions are kept mod the ring size, as the device keeps them: a ring holds size - 1.
 * Memory the device writes (the TX writeback, the RX completion records) is read and written
 * with READ_ONCE/WRITE_ONCE, each field once.
 */
#ifndef NICCORE_H
#define NICCORE_H

#include "nic_core_osdep.h"
#include "nic_contract.h"
#include "nic_regs.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NIC_Q_MAX_TXQ NIC_LAYOUT_TXQ		/* TX queues at most (the SoC's: its nic block) */
#define NIC_Q_MAX_TXIRQ NIC_LAYOUT_TXIRQ	/* TX vectors at most */
#define NIC_Q_RING_MAX 4096u		/* descriptors per ring (12-bit ring positions) */
#define NIC_Q_FRAME_MAX 9216u		/* the TX engine's max_frame, and the TX FIFO's max_len */
#define NIC_Q_FRAME_MIN 60u		/* frame bytes (no FCS) the MAC pads to */
#define NIC_Q_DESC_BYTES NIC_RECORD_BYTES	/* every ring entry (nic_contract.h) */
#define NIC_Q_RX_STATUS_FREE 0xffu	/* completion record not written yet (driver's marker) */
/*
 * nic_core_rx_take's status for a record whose index names no buffer the device holds (never
 * written by the device: the driver's verdict)
 */
#define NIC_Q_RX_STATUS_BAD_INDEX 0xfeu
#define NIC_Q_RX_BUF_ALIGN 16u		/* RX buffer addresses: multiples of this */
#define NIC_Q_COALESCE_MAX 0xffffu	/* every coalescing value: 16 bits */

/* Field F of a strobe CSR (nic_regs.h F_OFFSET / F_SIZE). */
#define NIC_Q_FIELD(F, v) (((u32)(v) & (u32)((1ull << F##_SIZE) - 1)) << F##_OFFSET)

/* --- register blocks (the identification block's table, rtl/contract/regblocks.py) ---------- */

struct nic_core_rb_entry {
	u32 type, version, base, info;
};

struct nic_core_rb_table {
	u32 magic, version, count;	/* as read, for messages */
	unsigned int n;			/* entries read (0: discovery failed) */
	struct nic_core_rb_entry e[NIC_ID_RB_MAX];
};

enum nic_core_rb_status {
	NIC_CORE_RB_OK = 0,
	NIC_CORE_RB_BAD_MAGIC,		/* INFO_MAGIC is not NIC_ID_MAGIC */
	NIC_CORE_RB_BAD_MAJOR,		/* INFO_VERSION major differs from nic_regs.h's */
	NIC_CORE_RB_BAD_COUNT,		/* RB_COUNT 0 or above NIC_ID_RB_MAX */
	NIC_CORE_RB_ABSENT,		/* no block of that type */
	NIC_CORE_RB_VERSION,		/* the block has another layout version */
};

/* Read MAGIC, VERSION, RB_COUNT and the table (in that order, one MMIO read each). */
enum nic_core_rb_status nic_core_rb_discover(struct nic_core_hw *hw, struct nic_core_rb_table *t);
/* The entry of a type whatever its version, NULL if none. */
const struct nic_core_rb_entry *nic_core_rb_lookup(const struct nic_core_rb_table *t, u32 type);
/* OK, ABSENT or VERSION (the layout nic_regs.h was generated for). */
enum nic_core_rb_status nic_core_rb_check(const struct nic_core_rb_table *t, u32 type);
u32 nic_core_rb_known_version(u32 type);	/* 0: a type nic_regs.h does not list */
const char *nic_core_rb_name(u32 type);		/* "nic", ...; "?" if unknown */

static inline unsigned int nic_core_rb_msi(const struct nic_core_rb_entry *e)
{
	return e->info & 0xff;
}

static inline unsigned int nic_core_rb_msi_count(const struct nic_core_rb_entry *e)
{
	return (e->info & 0xff) == NIC_RB_NO_IRQ ? 0 : (e->info >> 8) & 0xff;
}

static inline unsigned int nic_core_rb_param(const struct nic_core_rb_entry *e)
{
	return e->info >> 16;
}

/* CSRs wider than 32 bits: nwords registers, most significant first. */
u64 nic_core_csr_read_wide(struct nic_core_hw *hw, u32 addr, unsigned int nwords);
void nic_core_csr_write_wide(struct nic_core_hw *hw, u32 addr, unsigned int nwords, u64 value);

/* 32-bit element i (bits 32i..32i+31) of a wide CSR: word nwords - 1 - i. */
static inline u32 nic_core_csr_read_elem(struct nic_core_hw *hw, u32 addr, unsigned int nwords,
					 unsigned int i)
{
	return nic_core_rd32(hw, addr + 4u * (nwords - 1 - i));
}

/* --- datapath set-up ---------------------------------------------------------------------- */

/*
 * Frame FIFOs enabled: TX takes up to NIC_Q_FRAME_MAX (the TX engine's max_frame), RX up to
 * rx_max_len (what an RX buffer holds); no minimum.
 */
void nic_core_fifos(struct nic_core_hw *hw, u32 nic_base, u32 rx_max_len);
/*
 * The same with the RX FIFO dropping (and counting, rx_fifo_drop_runt) frames shorter than
 * rx_min_len: the Linux driver's Ethernet header.
 */
void nic_core_fifos_min(struct nic_core_hw *hw, u32 nic_base, u32 rx_max_len, u32 rx_min_len);
/* TX scheduler: mode (enum nic_tx_sched_mode), every queue at priority 0 with weight 1. */
void nic_core_sched(struct nic_core_hw *hw, u32 nic_base, unsigned int mode,
		    unsigned int hw_txq);

/* --- TX rings ------------------------------------------------------------------------------ */

/*
 * TX ring q: `size` descriptors and a writeback slot where the device writes the queue's
 * consumer index. buf/buf_bus: sw/lib's copy buffers (one per slot); the module maps skbs
 * instead and leaves them NULL.
 */
struct nic_txq {
	struct nic_tx_desc *desc;	/* ring: size descriptors */
	u64 desc_bus;
	u8 *buf;			/* sw/lib: payload buffer of slot i at buf + i * stride */
	u64 buf_bus;
	struct nic_tx_wb *wb;		/* consumer-index writeback slot (the device writes it) */
	u64 wb_bus;
	unsigned int size, size_log2, limit;
	u32 next_to_use;		/* producer index: the next descriptor the host fills */
	u32 next_to_clean;		/* consumer index as last read from the writeback */
	u32 rung;			/* producer index of the last doorbell */
	u64 frames_sent, doorbells;
	u64 stale_wb;			/* resets that found the last writeback missing (lost) */
	/*
	 * Errored frames (TX_WB.errors: the device's nic_txe_q_errors, 16 bits): the value last
	 * read, and the total the queue's writebacks (or, on a reset, the register) showed so far,
	 * with the latest error's TxStatus.
	 */
	u16 wb_errors;
	u64 errors;
	u8 last_error;
};

static inline unsigned int nic_core_tx_pending(const struct nic_txq *t)
{
	return (t->next_to_use - t->next_to_clean) & (t->size - 1);
}

static inline unsigned int nic_core_tx_room(const struct nic_txq *t)
{
	return t->size - 1 - nic_core_tx_pending(t);
}

/* Write the descriptor at next_to_use (addr, len, EOP if eop) and advance; returns its slot. */
u32 nic_core_tx_put(struct nic_txq *t, u64 addr, u32 len, bool eop);
/*
 * Hand the device what was put since the last doorbell (barrier, one MMIO write of
 * nic_txq_db): false, and no write, if nothing was.
 */
bool nic_core_tx_doorbell(struct nic_core_hw *hw, u32 nic_base, struct nic_txq *t,
			  unsigned int q);
/*
 * Consumer index from the writeback: the descriptors from next_to_clean up to it are done.
 * Returns how many (next_to_clean moved past them), or -1 if the index is beyond what was
 * posted (*cons: the index read). The errored frames the writeback shows since the last call
 * are added to t->errors (and last_error taken).
 */
int nic_core_tx_reclaim(struct nic_txq *t, u32 *cons);

/* nic_txq_cfg: queue q's ring size, enable and in-flight limit. */
void nic_core_txq_cfg(struct nic_core_hw *hw, u32 nic_base, unsigned int q,
		      unsigned int size_log2, bool enable, unsigned int limit);
/* nic_txq_drained bit q: disabled, nothing in flight, final index written back. */
bool nic_core_txq_drained(struct nic_core_hw *hw, u32 nic_base, unsigned int q);
/* nic_txq_cons element q: the device's consumer index of queue q (final once drained). */
u32 nic_core_txq_cons(struct nic_core_hw *hw, u32 nic_base, unsigned int q);
/* nic_txe_q_errors element q: queue q's errored frames (the writebacks carry its low 16 bits). */
u32 nic_core_txq_errors(struct nic_core_hw *hw, u32 nic_base, unsigned int q);
/*
 * A drained queue's final consumer index and errored frames, read from the device, into its
 * writeback (for nic_core_tx_reclaim; errors counted): the last writeback is a posted write,
 * lost if the link went down while it was in flight, and an MMIO read is not. True (and
 * stale_wb counted) if it was missing.
 */
bool nic_core_txq_sync_cons(struct nic_core_hw *hw, u32 nic_base, struct nic_txq *t,
			    unsigned int q);
/*
 * True if a ring base or writeback address is one the device takes: a multiple of 16
 * (NIC_Q_DESC_BYTES). The device refuses any other (counted in txe_err_base, txq_err_wb_addr,
 * rxe_err_base; the queue or ring then does not run).
 */
bool nic_core_addr_ok(u64 bus);
/*
 * A drained queue's ring base and writeback address (wide CSR, then its strobe), then the
 * queue enabled with t's size and limit. Ring state reset to 0; the writeback's errors (and
 * wb_errors) set to the device's count, which a queue's reset does not clear. -1, nothing
 * written, if desc_bus or wb_bus is not 16-byte aligned (nic_core_addr_ok).
 */
int nic_core_txq_start(struct nic_core_hw *hw, u32 nic_base, struct nic_txq *t,
		       unsigned int q);

/* --- the RX ring --------------------------------------------------------------------------- */

/*
 * The RX ring: `size` descriptors and `size` completion records. A buffer is reposted at its
 * own ring position. The driver marks a record it consumed NIC_Q_RX_STATUS_FREE (never written
 * by the device), which is how a new record is recognised. buf/buf_bus/off: sw/lib's buffers.
 */
struct nic_rxq {
	struct nic_rx_desc *desc;
	u64 desc_bus;
	struct nic_rx_cpl *cpl;		/* completion records: size of them (the device writes) */
	u64 cpl_bus;
	u8 *buf;			/* sw/lib: position p's buffer: buf + p * stride + off[p] */
	u64 buf_bus;
	u16 *off;			/* sw/lib: per ring position, its buffer's offset */
	unsigned int size, size_log2;
	u32 prod;			/* producer index written to the device (last doorbell) */
	u32 next_cpl;			/* next completion record to look at */
	u32 to_repost;			/* buffers consumed and not reposted yet */
	u64 frames, bad_status, doorbells;
	u64 bad_index;			/* records naming no buffer the device holds: dropped */
};

/* One completion record taken off the ring. */
struct nic_core_rx_rec {
	u32 len;			/* 0 unless status is NIC_RX_STATUS_OK */
	u32 index;			/* ring position of its buffer */
	u32 status;			/* enum nic_rx_status */
	u64 timestamp;			/* device cycle of its first beat */
};

/* Descriptor p: buffer address (16-byte aligned) and length (a multiple of 4). */
void nic_core_rx_desc(struct nic_rxq *r, unsigned int p, u64 addr, u32 len);
/* Mark every completion record free (before the ring is enabled). */
void nic_core_rx_cpl_init(struct nic_rxq *r);
/*
 * Take the next completion record, if the device wrote one: true and *rec filled, the record
 * marked free, to_repost counting every position up to its buffer's. A record whose index is
 * not one of the buffers the device holds (beyond the ring, the unposted gap, or a position
 * consumed already) takes no position: status NIC_Q_RX_STATUS_BAD_INDEX, len 0, counted in
 * bad_index. The length is the device's: the caller checks it against its buffer.
 */
bool nic_core_rx_take(struct nic_rxq *r, struct nic_core_rx_rec *rec);
/* Repost n buffers after prod (their descriptors already written): barrier, one doorbell. */
void nic_core_rx_post(struct nic_core_hw *hw, u32 nic_base, struct nic_rxq *r, unsigned int n);
void nic_core_rx_enable(struct nic_core_hw *hw, u32 nic_base, bool on);
/* nic_rxe_cons: 0 once a disabled engine has reset its ring. */
u32 nic_core_rx_cons(struct nic_core_hw *hw, u32 nic_base);
/*
 * Ring base, size and completion base of a disabled engine (ring state reset to 0). -1, nothing
 * written, if desc_bus or cpl_bus is not 16-byte aligned (nic_core_addr_ok).
 */
int nic_core_rx_setup(struct nic_core_hw *hw, u32 nic_base, struct nic_rxq *r);
/* With every descriptor written: enable, then post size - 1 buffers (one doorbell). */
void nic_core_rx_start(struct nic_core_hw *hw, u32 nic_base, struct nic_rxq *r);

/* --- interrupt coalescing (ethtool -C; rtl/nic/irq_coalescer.py) -------------------------- */

/*
 * Times in microseconds (nic_*irq_tick_cycles = sys clock cycles per us), frame counts in
 * completions, each 0..65535: usecs the delay timer (restarted by every completion), frames the
 * count, abs_usecs the absolute timer (from the first uncovered completion), min_interval the
 * least time between two interrupts.
 */
struct nic_q_coalesce {
	u32 rx_usecs, rx_frames, rx_abs_usecs, rx_min_interval;
	u32 tx_usecs, tx_frames, tx_abs_usecs, tx_min_interval;
	bool rx_enable, tx_enable;
};

#define NIC_CORE_COALESCE_NVALUES 8
/* "rx-usecs", "rx-frames", "rx-abs-usecs", "rx-min-interval", then tx-. */
extern const char *const nic_core_coalesce_names[NIC_CORE_COALESCE_NVALUES];
/* The eight values in nic_core_coalesce_names' order. */
void nic_core_coalesce_values(const struct nic_q_coalesce *c, u32 v[NIC_CORE_COALESCE_NVALUES]);
/* frames 1, every time 0, enabled: one interrupt per completion. */
void nic_core_coalesce_defaults(struct nic_q_coalesce *c);
/* -1 if c fits the hardware, else the index of the first value out of range. */
int nic_core_coalesce_check(const struct nic_q_coalesce *c);
/* Tick of 1 us in cycles from INFO_CLK_FREQ (Hz); 0 if it does not fit tick_cycles. */
u32 nic_core_tick_cycles(u32 clk_freq_hz);
/* Write c (checked) with the tick: each direction disabled while it changes. */
void nic_core_coalesce_write(struct nic_core_hw *hw, u32 nic_base,
			     const struct nic_q_coalesce *c, u32 tick_cycles);
/*
 * Read the configuration back; false if a direction's tick is not tick_cycles (its times
 * would not be microseconds; *rt and *tt the ticks read).
 */
bool nic_core_coalesce_read(struct nic_core_hw *hw, u32 nic_base, struct nic_q_coalesce *c,
			    u32 tick_cycles, u32 *rt, u32 *tt);

/* --- counters: every nic_* status register (nic_contract.h) -------------------------------- */

enum nic_q_counter_kind {
	NIC_QC_COUNT = 0,		/* event counter, 32 bits, wraps: deltas are meaningful */
	NIC_QC_ERROR = 1,		/* a drop or error counter (wraps) */
	NIC_QC_STATE = 2,		/* a level, bitmap or index: the value itself */
};

struct nic_q_counter_def {
	const char *name;		/* CSR name without `nic_`, e.g. rxe_drop_no_buffer */
	u64 addr;			/* offset in the nic block */
	unsigned int words;
	enum nic_q_counter_kind kind;
	const char *ethtool;		/* its ethtool -S name, e.g. rx_drop_no_buffer */
	const char *desc;		/* what it counts (rtl/contract/registers.py) */
};

extern const struct nic_q_counter_def nic_core_counter_defs[];
extern const unsigned int nic_core_ncounters;
/* Read every counter of the table into v[0..nic_core_ncounters-1] (MMIO: not the hot path). */
void nic_core_counters_read(struct nic_core_hw *hw, u32 nic_base, u64 *v);

#ifdef __cplusplus
}
#endif

#endif /* NICCORE_H */
