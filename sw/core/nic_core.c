// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The shared datapath core (nic_core.h): register-block discovery, ring and descriptor logic,
 * doorbells, queue set-up, coalescing values and the counter table.
 *
 * Compiled as it is into the Linux module (its own object in sw/kernel/Kbuild) and into sw/lib
 * (Makefile CORE_C). Freestanding: nothing but nic_core.h; MMIO through nic_core_rd32/wr32 of
 * the environment (nic_core_osdep.h). The protocol (set-up order, doorbells, reposting on
 * completion records) is that of the cores' header comments (rtl/nic/nic_datapath.py,
 * tx_queue_manager.py, tx_engine.py, rx_engine.py, irq_coalescer.py).
 */
#include "nic_core.h"

#define NIC_CORE_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* --- register blocks ------------------------------------------------------------------------- */

static const struct {
	u32 type;
	u32 version;
	const char *name;
} known[] = {
#define NIC_RB_KNOWN(NAME, name) { NIC_RB_##NAME, NIC_RB_##NAME##_VERSION, #name },
	NIC_RB_BLOCKS(NIC_RB_KNOWN)
#undef NIC_RB_KNOWN
};

static_assert(sizeof(struct nic_core_rb_entry) == NIC_ID_RB_ENTRY_BYTES, "table entry size");

const char *nic_core_rb_name(u32 type)
{
	unsigned int i;

	for (i = 0; i < NIC_CORE_ARRAY_SIZE(known); i++)
		if (known[i].type == type)
			return known[i].name;
	return "?";
}

u32 nic_core_rb_known_version(u32 type)
{
	unsigned int i;

	for (i = 0; i < NIC_CORE_ARRAY_SIZE(known); i++)
		if (known[i].type == type)
			return known[i].version;
	return 0;
}

enum nic_core_rb_status nic_core_rb_discover(struct nic_core_hw *hw, struct nic_core_rb_table *t)
{
	u32 i;

	t->n = 0;
	t->version = 0;
	t->count = 0;
	t->magic = nic_core_rd32(hw, NIC_CSR_INFO_MAGIC_ADDR);
	if (t->magic != NIC_ID_MAGIC)
		return NIC_CORE_RB_BAD_MAGIC;
	t->version = nic_core_rd32(hw, NIC_CSR_INFO_VERSION_ADDR);
	if (((t->version >> NIC_CSR_INFO_VERSION_MAJOR_OFFSET) &
	     ((1u << NIC_CSR_INFO_VERSION_MAJOR_SIZE) - 1)) != NIC_ID_VERSION_MAJOR)
		return NIC_CORE_RB_BAD_MAJOR;
	t->count = nic_core_rd32(hw, NIC_ID_RB_COUNT_ADDR);
	if (t->count == 0 || t->count > NIC_ID_RB_MAX)
		return NIC_CORE_RB_BAD_COUNT;
	for (i = 0; i < t->count; i++) {
		const u32 a = NIC_ID_RB_TABLE_ADDR + i * NIC_ID_RB_ENTRY_BYTES;

		t->e[i].type = nic_core_rd32(hw, a);
		t->e[i].version = nic_core_rd32(hw, a + 4);
		t->e[i].base = nic_core_rd32(hw, a + 8);
		t->e[i].info = nic_core_rd32(hw, a + 12);
	}
	t->n = t->count;
	return NIC_CORE_RB_OK;
}

const struct nic_core_rb_entry *nic_core_rb_lookup(const struct nic_core_rb_table *t, u32 type)
{
	unsigned int i;

	for (i = 0; i < t->n; i++)
		if (t->e[i].type == type)
			return &t->e[i];
	return NULL;
}

enum nic_core_rb_status nic_core_rb_check(const struct nic_core_rb_table *t, u32 type)
{
	const struct nic_core_rb_entry *e = nic_core_rb_lookup(t, type);

	if (!e)
		return NIC_CORE_RB_ABSENT;
	return e->version == nic_core_rb_known_version(type) ? NIC_CORE_RB_OK : NIC_CORE_RB_VERSION;
}

/* --- wide CSRs ------------------------------------------------------------------------------- */

u64 nic_core_csr_read_wide(struct nic_core_hw *hw, u32 addr, unsigned int nwords)
{
	unsigned int attempt, i;
	u64 v, again;

	/*
	 * Most significant word first. A status that counts can carry between the reads: read the
	 * upper words again and retry until they did not change.
	 */
	for (attempt = 0; attempt < 4; attempt++) {
		v = 0;
		again = 0;
		for (i = 0; i < nwords; i++)
			v = (v << 32) | nic_core_rd32(hw, addr + 4u * i);
		if (nwords < 2)
			return v;
		for (i = 0; i + 1 < nwords; i++)
			again = (again << 32) | nic_core_rd32(hw, addr + 4u * i);
		if (again == v >> 32)
			return v;
	}
	v = 0;
	for (i = 0; i < nwords; i++)
		v = (v << 32) | nic_core_rd32(hw, addr + 4u * i);
	return v;
}

void nic_core_csr_write_wide(struct nic_core_hw *hw, u32 addr, unsigned int nwords, u64 value)
{
	unsigned int i;

	for (i = 0; i < nwords; i++) {
		const unsigned int shift = 32u * (nwords - 1 - i);

		nic_core_wr32(hw, addr + 4u * i, (u32)(shift < 64 ? value >> shift : 0));
	}
}

/* --- datapath set-up ------------------------------------------------------------------------ */

void nic_core_fifos(struct nic_core_hw *hw, u32 nic_base, u32 rx_max_len)
{
	nic_core_fifos_min(hw, nic_base, rx_max_len, 0);
}

void nic_core_fifos_min(struct nic_core_hw *hw, u32 nic_base, u32 rx_max_len, u32 rx_min_len)
{
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_TXFIFO_MAX_LEN_ADDR, NIC_Q_FRAME_MAX);
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_TXFIFO_MIN_LEN_ADDR, 0);
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_TXFIFO_ENABLE_ADDR, 1);
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_RXFIFO_MAX_LEN_ADDR, rx_max_len);
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_RXFIFO_MIN_LEN_ADDR, rx_min_len);
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_RXFIFO_ENABLE_ADDR, 1);
}

void nic_core_sched(struct nic_core_hw *hw, u32 nic_base, unsigned int mode, unsigned int hw_txq)
{
	u64 weights = 0;
	unsigned int q;

	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_TX_SCHED_MODE_ADDR, mode);
	nic_core_csr_write_wide(hw, nic_base + NIC_CSR_NIC_TX_SCHED_PRIO_ADDR,
				NIC_CSR_NIC_TX_SCHED_PRIO_SIZE, 0);
	for (q = 0; q < hw_txq && 8 * q < 64; q++)
		weights |= 1ull << (8 * q);
	nic_core_csr_write_wide(hw, nic_base + NIC_CSR_NIC_TX_SCHED_WEIGHT_ADDR,
				NIC_CSR_NIC_TX_SCHED_WEIGHT_SIZE, weights);
}

/* --- TX -------------------------------------------------------------------------------------- */

u32 nic_core_tx_put(struct nic_txq *t, u64 addr, u32 len, bool eop)
{
	const u32 idx = t->next_to_use;

	t->desc[idx] = (struct nic_tx_desc){
		.addr = NIC_CORE_CPU_TO_LE64(addr),
		.len = NIC_CORE_CPU_TO_LE16((u16)len),
		.flags = NIC_CORE_CPU_TO_LE16(eop ? NIC_TX_DESC_FLAGS_EOP : 0),
	};
	t->next_to_use = (idx + 1) & (t->size - 1);
	return idx;
}

bool nic_core_tx_doorbell(struct nic_core_hw *hw, u32 nic_base, struct nic_txq *t, unsigned int q)
{
	if (t->rung == t->next_to_use)
		return false;
	NIC_CORE_WMB(); /* descriptors before the doorbell */
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_TXQ_DB_ADDR,
		      NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_QUEUE, q) |
		      NIC_Q_FIELD(NIC_CSR_NIC_TXQ_DB_INDEX, t->next_to_use));
	t->rung = t->next_to_use;
	t->doorbells++;
	return true;
}

/* Errored frames up to the 16-bit count e (writeback or register): the new ones counted. */
static void tx_errors_to(struct nic_txq *t, u16 e)
{
	t->errors += (u16)(e - t->wb_errors);
	t->wb_errors = e;
}

int nic_core_tx_reclaim(struct nic_txq *t, u32 *cons)
{
	const u32 c = NIC_CORE_LE16_TO_CPU(READ_ONCE(t->wb->cons)) & (t->size - 1);
	const unsigned int done = (c - t->next_to_clean) & (t->size - 1);
	const u16 e = NIC_CORE_LE16_TO_CPU(READ_ONCE(t->wb->errors));

	*cons = c;
	if (e != t->wb_errors) {
		t->last_error = READ_ONCE(t->wb->last_error);
		tx_errors_to(t, e);
	}
	if (done > nic_core_tx_pending(t))
		return -1;
	NIC_CORE_RMB();
	t->next_to_clean = c;
	return (int)done;
}

void nic_core_txq_cfg(struct nic_core_hw *hw, u32 nic_base, unsigned int q,
		      unsigned int size_log2, bool enable, unsigned int limit)
{
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_TXQ_CFG_ADDR,
		      NIC_Q_FIELD(NIC_CSR_NIC_TXQ_CFG_QUEUE, q) |
		      NIC_Q_FIELD(NIC_CSR_NIC_TXQ_CFG_SIZE_LOG2, size_log2) |
		      NIC_Q_FIELD(NIC_CSR_NIC_TXQ_CFG_ENABLE, enable) |
		      NIC_Q_FIELD(NIC_CSR_NIC_TXQ_CFG_LIMIT, limit));
}

bool nic_core_txq_drained(struct nic_core_hw *hw, u32 nic_base, unsigned int q)
{
	u64 drained = nic_core_csr_read_wide(hw, nic_base + NIC_CSR_NIC_TXQ_DRAINED_ADDR,
					     NIC_CSR_NIC_TXQ_DRAINED_SIZE);

	return (drained >> q) & 1;
}

u32 nic_core_txq_cons(struct nic_core_hw *hw, u32 nic_base, unsigned int q)
{
	return nic_core_csr_read_elem(hw, nic_base + NIC_CSR_NIC_TXQ_CONS_ADDR,
				      NIC_CSR_NIC_TXQ_CONS_SIZE, q);
}

u32 nic_core_txq_errors(struct nic_core_hw *hw, u32 nic_base, unsigned int q)
{
	return nic_core_csr_read_elem(hw, nic_base + NIC_CSR_NIC_TXE_Q_ERRORS_ADDR,
				      NIC_CSR_NIC_TXE_Q_ERRORS_SIZE, q);
}

bool nic_core_txq_sync_cons(struct nic_core_hw *hw, u32 nic_base, struct nic_txq *t,
			    unsigned int q)
{
	const u16 c = (u16)nic_core_txq_cons(hw, nic_base, q);
	const u16 e = (u16)nic_core_txq_errors(hw, nic_base, q);
	const bool stale = NIC_CORE_LE16_TO_CPU(READ_ONCE(t->wb->cons)) != c;

	WRITE_ONCE(t->wb->cons, NIC_CORE_CPU_TO_LE16(c));
	/* Errors the lost writeback would have shown: counted here (reclaim sees none then). */
	tx_errors_to(t, e);
	WRITE_ONCE(t->wb->errors, NIC_CORE_CPU_TO_LE16(e));
	t->stale_wb += stale;
	return stale;
}

bool nic_core_addr_ok(u64 bus)
{
	return (bus & (NIC_Q_DESC_BYTES - 1)) == 0;
}

int nic_core_txq_start(struct nic_core_hw *hw, u32 nic_base, struct nic_txq *t, unsigned int q)
{
	/* The device refuses these too (txe_err_base, txq_err_wb_addr): never ask it. */
	if (!nic_core_addr_ok(t->desc_bus) || !nic_core_addr_ok(t->wb_bus))
		return -1;
	t->next_to_use = 0;
	t->next_to_clean = 0;
	t->rung = 0;
	t->wb_errors = (u16)nic_core_txq_errors(hw, nic_base, q);
	WRITE_ONCE(t->wb->errors, NIC_CORE_CPU_TO_LE16(t->wb_errors));
	nic_core_csr_write_wide(hw, nic_base + NIC_CSR_NIC_TXE_BASE_ADDR_ADDR,
				NIC_CSR_NIC_TXE_BASE_ADDR_SIZE, t->desc_bus);
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_TXE_BASE_ADDR,
		      NIC_Q_FIELD(NIC_CSR_NIC_TXE_BASE_QUEUE, q));
	nic_core_csr_write_wide(hw, nic_base + NIC_CSR_NIC_TXQ_WB_ADDR_ADDR,
				NIC_CSR_NIC_TXQ_WB_ADDR_SIZE, t->wb_bus);
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_TXQ_WB_ADDR_QUEUE_ADDR,
		      NIC_Q_FIELD(NIC_CSR_NIC_TXQ_WB_ADDR_QUEUE_QUEUE, q));
	nic_core_txq_cfg(hw, nic_base, q, t->size_log2, true, t->limit);
	return 0;
}

/* --- RX -------------------------------------------------------------------------------------- */

void nic_core_rx_desc(struct nic_rxq *r, unsigned int p, u64 addr, u32 len)
{
	r->desc[p] = (struct nic_rx_desc){
		.addr = NIC_CORE_CPU_TO_LE64(addr),
		.len = NIC_CORE_CPU_TO_LE16((u16)len),
	};
}

void nic_core_rx_cpl_init(struct nic_rxq *r)
{
	unsigned int p;

	for (p = 0; p < r->size; p++)
		WRITE_ONCE(r->cpl[p].status, NIC_Q_RX_STATUS_FREE);
}

bool nic_core_rx_take(struct nic_rxq *r, struct nic_core_rx_rec *rec)
{
	struct nic_rx_cpl *c = &r->cpl[r->next_cpl];
	const u8 status = READ_ONCE(c->status);
	u32 raw, idx, expect, ahead;

	if (status == NIC_Q_RX_STATUS_FREE)
		return false;
	NIC_CORE_RMB();
	/*
	 * Each field read once into a local: the device may write the record again (it is not
	 * trusted). The timestamp is only reported, and is 64 bits (two accesses on a 32-bit CPU).
	 */
	raw = NIC_CORE_LE16_TO_CPU(READ_ONCE(c->index));
	idx = raw & (r->size - 1);
	/*
	 * The buffers the device holds: size - 1 posted, less those consumed and not reposted,
	 * from the first one not consumed yet.
	 */
	expect = (r->prod + 1 + r->to_repost) & (r->size - 1);
	ahead = (idx - expect) & (r->size - 1);
	rec->len = NIC_CORE_LE16_TO_CPU(READ_ONCE(c->len));
	rec->index = idx;
	rec->status = status;
	rec->timestamp = NIC_CORE_LE64_TO_CPU(c->timestamp);
	if (raw >= r->size || ahead >= r->size - 1 - r->to_repost) {
		/*
		 * Not a buffer the device holds (beyond the ring, not posted, or consumed
		 * already): the record is dropped and no position is taken as consumed.
		 */
		rec->len = 0;
		rec->status = NIC_Q_RX_STATUS_BAD_INDEX;
		r->bad_index++;
	} else {
		/*
		 * Positions up to idx are consumed (descriptors skipped after a read error have
		 * no record): they are all to be reposted.
		 */
		r->to_repost += ahead + 1;
		if (status != NIC_RX_STATUS_OK)
			r->bad_status++;
	}
	WRITE_ONCE(c->status, NIC_Q_RX_STATUS_FREE);
	r->next_cpl = (r->next_cpl + 1) & (r->size - 1);
	r->frames++;
	return true;
}

void nic_core_rx_post(struct nic_core_hw *hw, u32 nic_base, struct nic_rxq *r, unsigned int n)
{
	NIC_CORE_WMB();
	r->prod = (r->prod + n) & (r->size - 1);
	r->to_repost -= n;
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_RXE_DB_ADDR,
		      NIC_Q_FIELD(NIC_CSR_NIC_RXE_DB_INDEX, r->prod));
	r->doorbells++;
}

void nic_core_rx_enable(struct nic_core_hw *hw, u32 nic_base, bool on)
{
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_RXE_ENABLE_ADDR, on ? 1 : 0);
}

u32 nic_core_rx_cons(struct nic_core_hw *hw, u32 nic_base)
{
	return nic_core_rd32(hw, nic_base + NIC_CSR_NIC_RXE_CONS_ADDR);
}

int nic_core_rx_setup(struct nic_core_hw *hw, u32 nic_base, struct nic_rxq *r)
{
	/* The device holds a ring with a misaligned base disabled (rxe_err_base): never ask it. */
	if (!nic_core_addr_ok(r->desc_bus) || !nic_core_addr_ok(r->cpl_bus))
		return -1;
	r->prod = 0;
	r->next_cpl = 0;
	r->to_repost = 0;
	nic_core_csr_write_wide(hw, nic_base + NIC_CSR_NIC_RXE_RING_BASE_ADDR,
				NIC_CSR_NIC_RXE_RING_BASE_SIZE, r->desc_bus);
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_RXE_RING_SIZE_LOG2_ADDR, r->size_log2);
	nic_core_csr_write_wide(hw, nic_base + NIC_CSR_NIC_RXE_CPL_BASE_ADDR,
				NIC_CSR_NIC_RXE_CPL_BASE_SIZE, r->cpl_bus);
	return 0;
}

void nic_core_rx_start(struct nic_core_hw *hw, u32 nic_base, struct nic_rxq *r)
{
	NIC_CORE_WMB();
	nic_core_rx_enable(hw, nic_base, true);
	r->prod = r->size - 1;
	nic_core_wr32(hw, nic_base + NIC_CSR_NIC_RXE_DB_ADDR,
		      NIC_Q_FIELD(NIC_CSR_NIC_RXE_DB_INDEX, r->prod));
	r->doorbells++;
}

/* --- coalescing ------------------------------------------------------------------------------ */

const char *const nic_core_coalesce_names[NIC_CORE_COALESCE_NVALUES] = {
	"rx-usecs", "rx-frames", "rx-abs-usecs", "rx-min-interval",
	"tx-usecs", "tx-frames", "tx-abs-usecs", "tx-min-interval",
};

void nic_core_coalesce_values(const struct nic_q_coalesce *c, u32 v[NIC_CORE_COALESCE_NVALUES])
{
	v[0] = c->rx_usecs;
	v[1] = c->rx_frames;
	v[2] = c->rx_abs_usecs;
	v[3] = c->rx_min_interval;
	v[4] = c->tx_usecs;
	v[5] = c->tx_frames;
	v[6] = c->tx_abs_usecs;
	v[7] = c->tx_min_interval;
}

void nic_core_coalesce_defaults(struct nic_q_coalesce *c)
{
	*c = (struct nic_q_coalesce){
		.rx_frames = 1,
		.tx_frames = 1,
		.rx_enable = true,
		.tx_enable = true,
	};
}

int nic_core_coalesce_check(const struct nic_q_coalesce *c)
{
	u32 v[NIC_CORE_COALESCE_NVALUES];
	int i;

	nic_core_coalesce_values(c, v);
	for (i = 0; i < NIC_CORE_COALESCE_NVALUES; i++)
		if (v[i] > NIC_Q_COALESCE_MAX)
			return i;
	return -1;
}

u32 nic_core_tick_cycles(u32 clk_freq_hz)
{
	const u32 t = clk_freq_hz / 1000000u;

	return t >= 1 && t <= NIC_Q_COALESCE_MAX ? t : 0;
}

#define CO(REG) (nic_base + NIC_CSR_NIC_##REG##_ADDR)

void nic_core_coalesce_write(struct nic_core_hw *hw, u32 nic_base,
			     const struct nic_q_coalesce *c, u32 tick_cycles)
{
	/* Disabled while changing, so no half-written configuration raises an interrupt. */
	nic_core_wr32(hw, CO(RXIRQ_ENABLE), 0);
	nic_core_wr32(hw, CO(RXIRQ_TICK_CYCLES), tick_cycles);
	nic_core_wr32(hw, CO(RXIRQ_USECS), c->rx_usecs);
	nic_core_wr32(hw, CO(RXIRQ_FRAMES), c->rx_frames);
	nic_core_wr32(hw, CO(RXIRQ_ABS_USECS), c->rx_abs_usecs);
	nic_core_wr32(hw, CO(RXIRQ_MIN_INTERVAL), c->rx_min_interval);
	nic_core_wr32(hw, CO(RXIRQ_ENABLE), c->rx_enable);
	nic_core_wr32(hw, CO(TXIRQ_ENABLE), 0);
	nic_core_wr32(hw, CO(TXIRQ_TICK_CYCLES), tick_cycles);
	nic_core_wr32(hw, CO(TXIRQ_USECS), c->tx_usecs);
	nic_core_wr32(hw, CO(TXIRQ_FRAMES), c->tx_frames);
	nic_core_wr32(hw, CO(TXIRQ_ABS_USECS), c->tx_abs_usecs);
	nic_core_wr32(hw, CO(TXIRQ_MIN_INTERVAL), c->tx_min_interval);
	nic_core_wr32(hw, CO(TXIRQ_ENABLE), c->tx_enable);
}

bool nic_core_coalesce_read(struct nic_core_hw *hw, u32 nic_base, struct nic_q_coalesce *c,
			    u32 tick_cycles, u32 *rt, u32 *tt)
{
	*rt = nic_core_rd32(hw, CO(RXIRQ_TICK_CYCLES));
	*tt = nic_core_rd32(hw, CO(TXIRQ_TICK_CYCLES));
	if (*rt != tick_cycles || *tt != tick_cycles)
		return false;
	c->rx_usecs = nic_core_rd32(hw, CO(RXIRQ_USECS));
	c->rx_frames = nic_core_rd32(hw, CO(RXIRQ_FRAMES));
	c->rx_abs_usecs = nic_core_rd32(hw, CO(RXIRQ_ABS_USECS));
	c->rx_min_interval = nic_core_rd32(hw, CO(RXIRQ_MIN_INTERVAL));
	c->rx_enable = nic_core_rd32(hw, CO(RXIRQ_ENABLE)) & 1;
	c->tx_usecs = nic_core_rd32(hw, CO(TXIRQ_USECS));
	c->tx_frames = nic_core_rd32(hw, CO(TXIRQ_FRAMES));
	c->tx_abs_usecs = nic_core_rd32(hw, CO(TXIRQ_ABS_USECS));
	c->tx_min_interval = nic_core_rd32(hw, CO(TXIRQ_MIN_INTERVAL));
	c->tx_enable = nic_core_rd32(hw, CO(TXIRQ_ENABLE)) & 1;
	return true;
}

#undef CO

/* --- counters -------------------------------------------------------------------------------- */

#define QC(name, NAME, kind, ethtool, desc) {					\
	#name, NIC_CSR_NIC_##NAME##_ADDR, NIC_CSR_NIC_##NAME##_SIZE,			\
	NIC_QC_##kind, ethtool, desc							\
},
const struct nic_q_counter_def nic_core_counter_defs[] = {
	NIC_CONTRACT_STATUS_REGS(QC)
};

#undef QC
const unsigned int nic_core_ncounters = NIC_CORE_ARRAY_SIZE(nic_core_counter_defs);

void nic_core_counters_read(struct nic_core_hw *hw, u32 nic_base, u64 *v)
{
	unsigned int i;

	for (i = 0; i < nic_core_ncounters; i++)
		v[i] = nic_core_csr_read_wide(hw, nic_base + (u32)nic_core_counter_defs[i].addr,
					      nic_core_counter_defs[i].words);
}
