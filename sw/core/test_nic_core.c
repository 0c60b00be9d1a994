// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unit test of the shared datapath core (nic_core.c) on a fake device: a BAR0 array behind this
 * file's nic_core_rd32/wr32 (with a log of the writes) and ring memory in plain arrays. Checks
 * ring arithmetic at the wrap, doorbell values and batching, writeback reclaim and its refusal
 * of an impossible index, the reset path's consumer index from the device, RX record taking with
 * skipped descriptors and reposting, queue and RX set-up register writes, coalescing range
 * checks and read-back, the counter table. Prints "ok" or the failed checks. Built by
 * test_nic_core.py (gcc -Wall -Wextra -Werror); the test uses libc, the core does not.
 */
#include <stdio.h>
#include <string.h>

#include "nic_core.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static u32 bar0[0x4000 / 4];
static struct {
	u32 off, v;
} wlog[256];
static unsigned int nw, nr;

u32 nic_core_rd32(struct nic_core_hw *hw, u32 off)
{
	(void)hw;
	nr++;
	return off / 4 < ARRAY_SIZE(bar0) ? bar0[off / 4] : 0xffffffffu;
}

void nic_core_wr32(struct nic_core_hw *hw, u32 off, u32 v)
{
	(void)hw;
	if (nw < ARRAY_SIZE(wlog))
		wlog[nw++] = (typeof(wlog[0])){ off, v };
	if (off / 4 < ARRAY_SIZE(bar0))
		bar0[off / 4] = v;
}

static int failures;

#define CHECK(cond)								\
	do {									\
		if (!(cond)) {							\
			printf("%s:%d: %s\n", __FILE__, __LINE__, #cond);	\
			failures++;						\
		}								\
	} while (0)

#define BASE 0x1000u /* the nic block's base in the fake BAR0 */
#define REG(NAME) (BASE + NIC_CSR_NIC_##NAME##_ADDR)

static u32 field(u32 v, unsigned int off, unsigned int size)
{
	return (v >> off) & ((1u << size) - 1);
}

/* Field F (nic_regs.h NIC_CSR_NIC_F_OFFSET / _SIZE) of a written value. */
#define FIELD(v, F) field(v, NIC_CSR_NIC_##F##_OFFSET, NIC_CSR_NIC_##F##_SIZE)

static void test_tx(struct nic_core_hw *hw)
{
	static struct nic_tx_desc desc[8];
	static struct nic_tx_wb wb;
	struct nic_txq t = {
		.desc = desc, .desc_bus = 0x10000, .wb = &wb, .wb_bus = 0x20000,
		.size = 8, .size_log2 = 3, .limit = 7,
	};
	/*
	 * The device's errored-frame count of queue 3 (not cleared by a queue reset): the
	 * writeback's starting point.
	 */
	const unsigned int q_errors3 =
		(REG(TXE_Q_ERRORS) + 4 * (NIC_CSR_NIC_TXE_Q_ERRORS_SIZE - 1 - 3)) / 4;
	u32 cons;

	bar0[q_errors3] = 0x1fffe;
	/* A ring base or writeback address the device would refuse: refused here, not written. */
	for (unsigned int off = 1; off < NIC_Q_DESC_BYTES; off++) {
		struct nic_txq bad = t;

		bad.desc_bus += off;
		nw = 0;
		CHECK(!nic_core_addr_ok(bad.desc_bus) && nic_core_txq_start(hw, BASE, &bad, 3) < 0);
		bad = t;
		bad.wb_bus += off;
		CHECK(nic_core_txq_start(hw, BASE, &bad, 3) < 0 && nw == 0);
	}
	nw = 0;
	CHECK(nic_core_txq_start(hw, BASE, &t, 3) == 0);
	CHECK(wb.errors == 0xfffe && t.wb_errors == 0xfffe && t.errors == 0);
	CHECK(nw == 2 + 1 + 2 + 1 + 1); /* ring base (2 words), strobe, wb (2), strobe, cfg */
	CHECK(wlog[1].off == REG(TXE_BASE_ADDR) + 4 && wlog[1].v == 0x10000);
	CHECK(wlog[2].off == REG(TXE_BASE) && FIELD(wlog[2].v, TXE_BASE_QUEUE) == 3);
	CHECK(wlog[6].off == REG(TXQ_CFG) && FIELD(wlog[6].v, TXQ_CFG_ENABLE) &&
	      FIELD(wlog[6].v, TXQ_CFG_SIZE_LOG2) == 3 && FIELD(wlog[6].v, TXQ_CFG_LIMIT) == 7);

	/* Nothing posted: no doorbell. A ring holds size - 1. */
	nw = 0;
	CHECK(!nic_core_tx_doorbell(hw, BASE, &t, 3) && nw == 0);
	CHECK(nic_core_tx_room(&t) == 7);
	for (unsigned int i = 0; i < 7; i++)
		CHECK(nic_core_tx_put(&t, 0x30000 + 64 * i, 60 + i, i % 2 == 0) == i);
	CHECK(nic_core_tx_room(&t) == 0 && nic_core_tx_pending(&t) == 7);
	CHECK(desc[2].addr == 0x30080 && desc[2].len == 62 &&
	      desc[2].flags == NIC_TX_DESC_FLAGS_EOP);
	CHECK(desc[1].flags == 0);
	CHECK(nic_core_tx_doorbell(hw, BASE, &t, 3) && nw == 1 && wlog[0].off == REG(TXQ_DB));
	CHECK(FIELD(wlog[0].v, TXQ_DB_QUEUE) == 3);
	CHECK(FIELD(wlog[0].v, TXQ_DB_INDEX) == 7);
	CHECK(!nic_core_tx_doorbell(hw, BASE, &t, 3) && t.doorbells == 1);

	/* Completions through the writeback, then across the wrap. */
	wb.cons = 5;
	CHECK(nic_core_tx_reclaim(&t, &cons) == 5 && cons == 5 && t.next_to_clean == 5);
	CHECK(nic_core_tx_reclaim(&t, &cons) == 0);
	for (unsigned int i = 0; i < 5; i++)
		nic_core_tx_put(&t, 0x40000, 100, true);
	CHECK(t.next_to_use == 4 && nic_core_tx_pending(&t) == 7);
	wb.cons = 2;
	CHECK(nic_core_tx_reclaim(&t, &cons) == 5 && t.next_to_clean == 2);
	/* Errored frames from the writeback, across the 16-bit wrap; the latest status taken. */
	wb.errors = 1;
	wb.last_error = NIC_TX_STATUS_READ;
	CHECK(nic_core_tx_reclaim(&t, &cons) == 0 && t.errors == 3 &&
	      t.last_error == NIC_TX_STATUS_READ);
	/* An index beyond what was posted is refused and changes nothing. */
	wb.cons = 6;
	CHECK(nic_core_tx_reclaim(&t, &cons) == -1 && cons == 6 && t.next_to_clean == 2);

	/*
	 * The reset path: the device's index (nic_txq_cons, queue 3's element) replaces a
	 * writeback that was lost; one that was not changes nothing.
	 */
	wb.cons = 2;
	bar0[(REG(TXQ_CONS) + 4 * (NIC_CSR_NIC_TXQ_CONS_SIZE - 1 - 3)) / 4] = 3;
	CHECK(nic_core_txq_cons(hw, BASE, 3) == 3);
	bar0[q_errors3] = 0x20003; /* two errors more than the last writeback showed */
	CHECK(nic_core_txq_sync_cons(hw, BASE, &t, 3) && wb.cons == 3 && t.stale_wb == 1);
	CHECK(wb.errors == 3 && t.errors == 5);
	CHECK(nic_core_tx_reclaim(&t, &cons) == 1 && t.next_to_clean == 3);
	CHECK(!nic_core_txq_sync_cons(hw, BASE, &t, 3) && wb.cons == 3 && t.stale_wb == 1);
}

static void test_rx(struct nic_core_hw *hw)
{
	static struct nic_rx_desc desc[8];
	static struct nic_rx_cpl cpl[8];
	struct nic_rxq r = {
		.desc = desc, .desc_bus = 0x50000, .cpl = cpl, .cpl_bus = 0x60000,
		.size = 8, .size_log2 = 3,
	};
	struct nic_core_rx_rec rec;

	for (unsigned int p = 0; p < 8; p++)
		nic_core_rx_desc(&r, p, 0x70000 + 4096 * p, 2048);
	CHECK(desc[3].addr == 0x73000 && desc[3].len == 2048);
	nw = 0;
	r.desc_bus += 8;
	CHECK(nic_core_rx_setup(hw, BASE, &r) < 0 && nw == 0);
	r.desc_bus -= 8;
	r.cpl_bus += 4;
	CHECK(nic_core_rx_setup(hw, BASE, &r) < 0 && nw == 0);
	r.cpl_bus -= 4;
	CHECK(nic_core_rx_setup(hw, BASE, &r) == 0);
	CHECK(wlog[2].off == REG(RXE_RING_SIZE_LOG2) && wlog[2].v == 3);
	CHECK(wlog[4].off == REG(RXE_CPL_BASE) + 4 && wlog[4].v == 0x60000);
	nic_core_rx_cpl_init(&r);
	CHECK(!nic_core_rx_take(&r, &rec));
	nw = 0;
	nic_core_rx_start(hw, BASE, &r);
	CHECK(nw == 2 && wlog[0].off == REG(RXE_ENABLE) && wlog[0].v == 1);
	CHECK(wlog[1].off == REG(RXE_DB) && wlog[1].v == 7 && r.prod == 7);

	/* The device fills position 0, skips 1 (a failed read: no record), fills 2 (too big). */
	cpl[0] = (struct nic_rx_cpl){
		.len = 60, .index = 0, .status = NIC_RX_STATUS_OK, .timestamp = 1234,
	};
	cpl[1] = (struct nic_rx_cpl){ .len = 0, .index = 2, .status = NIC_RX_STATUS_TOO_BIG };
	CHECK(nic_core_rx_take(&r, &rec) && rec.len == 60 && rec.index == 0 &&
	      rec.timestamp == 1234 && r.to_repost == 1);
	CHECK(cpl[0].status == NIC_Q_RX_STATUS_FREE);
	CHECK(nic_core_rx_take(&r, &rec) && rec.status == NIC_RX_STATUS_TOO_BIG && rec.index == 2);
	CHECK(r.to_repost == 3 && r.bad_status == 1 && r.frames == 2);
	CHECK(!nic_core_rx_take(&r, &rec));
	nw = 0;
	nic_core_rx_post(hw, BASE, &r, r.to_repost);
	CHECK(r.prod == 2 && r.to_repost == 0 && nw == 1 && wlog[0].v == 2);
	/* Around the completion ring's wrap. */
	for (unsigned int i = 0; i < 8; i++) {
		const unsigned int n = (2 + i) & 7;

		cpl[n] = (struct nic_rx_cpl){ .len = 64, .index = (u16)((3 + i) & 7) };
		CHECK(nic_core_rx_take(&r, &rec) && rec.index == ((3 + i) & 7));
		nic_core_rx_post(hw, BASE, &r, r.to_repost);
	}
	CHECK(r.prod == 2 && r.next_cpl == 2);
}

/*
 * Completion records the driver must not trust: an index outside the buffers posted to the
 * device (the gap position, one already consumed, one beyond the ring) is refused, consumes
 * nothing and is counted; the ring goes on with the next good record.
 */
static void test_rx_untrusted(struct nic_core_hw *hw)
{
	static struct nic_rx_desc desc[8];
	static struct nic_rx_cpl cpl[8];
	struct nic_rxq r = {
		.desc = desc, .desc_bus = 0x50000, .cpl = cpl, .cpl_bus = 0x60000,
		.size = 8, .size_log2 = 3,
	};
	struct nic_core_rx_rec rec;

	CHECK(nic_core_rx_setup(hw, BASE, &r) == 0);
	nic_core_rx_cpl_init(&r);
	nic_core_rx_start(hw, BASE, &r); /* positions 0..6 posted, 7 is the gap */
	cpl[0] = (struct nic_rx_cpl){ .len = 60, .index = 7, .status = NIC_RX_STATUS_OK };
	CHECK(nic_core_rx_take(&r, &rec) && rec.status == NIC_Q_RX_STATUS_BAD_INDEX &&
	      rec.len == 0);
	CHECK(r.to_repost == 0 && r.next_cpl == 1 && cpl[0].status == NIC_Q_RX_STATUS_FREE);
	cpl[1] = (struct nic_rx_cpl){ .len = 60, .index = 0, .status = NIC_RX_STATUS_OK };
	CHECK(nic_core_rx_take(&r, &rec) && rec.status == NIC_RX_STATUS_OK && rec.index == 0);
	CHECK(r.to_repost == 1);
	/* Position 0 again: already consumed, not posted since. */
	cpl[2] = (struct nic_rx_cpl){ .len = 60, .index = 0, .status = NIC_RX_STATUS_OK };
	CHECK(nic_core_rx_take(&r, &rec) && rec.status != NIC_RX_STATUS_OK && r.to_repost == 1);
	/* An index beyond the ring (its low bits would name a posted position). */
	cpl[3] = (struct nic_rx_cpl){ .len = 60, .index = 0x8001, .status = NIC_RX_STATUS_OK };
	CHECK(nic_core_rx_take(&r, &rec) && rec.status != NIC_RX_STATUS_OK && r.to_repost == 1);
	/* The next good record: position 1, nothing skipped. */
	cpl[4] = (struct nic_rx_cpl){ .len = 64, .index = 1, .status = NIC_RX_STATUS_OK };
	CHECK(nic_core_rx_take(&r, &rec) && rec.index == 1 && rec.len == 64 && r.to_repost == 2);
	CHECK(r.frames == 5 && r.bad_index == 3 && r.bad_status == 0);
}

static void test_coalesce(struct nic_core_hw *hw)
{
	struct nic_q_coalesce c, back;
	u32 rt, tt;

	nic_core_coalesce_defaults(&c);
	CHECK(c.rx_frames == 1 && c.tx_frames == 1 && c.rx_enable && c.rx_usecs == 0);
	CHECK(nic_core_coalesce_check(&c) == -1);
	c.tx_abs_usecs = 65536;
	CHECK(nic_core_coalesce_check(&c) == 6);
	CHECK(strcmp(nic_core_coalesce_names[6], "tx-abs-usecs") == 0);
	c = (struct nic_q_coalesce){ 20, 32, 100, 8, 1, 2, 3, 4, true, false };
	CHECK(nic_core_coalesce_check(&c) == -1);
	CHECK(nic_core_tick_cycles(125000000) == 125 && nic_core_tick_cycles(999999) == 0);
	nw = 0;
	nic_core_coalesce_write(hw, BASE, &c, 125);
	CHECK(nw == 14 && wlog[0].off == REG(RXIRQ_ENABLE) && wlog[0].v == 0);
	CHECK(wlog[6].off == REG(RXIRQ_ENABLE) && wlog[6].v == 1);
	CHECK(bar0[REG(RXIRQ_ABS_USECS) / 4] == 100 && bar0[REG(RXIRQ_MIN_INTERVAL) / 4] == 8);
	CHECK(nic_core_coalesce_read(hw, BASE, &back, 125, &rt, &tt));
	CHECK(memcmp(&back, &c, offsetof(struct nic_q_coalesce, rx_enable)) == 0);
	CHECK(back.rx_enable && !back.tx_enable);
	CHECK(!nic_core_coalesce_read(hw, BASE, &back, 100, &rt, &tt) && rt == 125 && tt == 125);
}

static void test_counters(struct nic_core_hw *hw)
{
	u64 v[256];
	unsigned int i;

	CHECK(nic_core_ncounters > 10 && nic_core_ncounters < 256);
	for (i = 0; i < nic_core_ncounters; i++)
		CHECK(nic_core_counter_defs[i].ethtool && nic_core_counter_defs[i].words >= 1);
	bar0[REG(RXE_FRAMES) / 4] = 77;
	nic_core_counters_read(hw, BASE, v);
	for (i = 0; i < nic_core_ncounters; i++)
		if (strcmp(nic_core_counter_defs[i].name, "rxe_frames") == 0)
			break;
	CHECK(i < nic_core_ncounters && v[i] == 77);
	CHECK(strcmp(nic_core_counter_defs[i].ethtool, "rx_frames") == 0);
}

static void test_discovery(struct nic_core_hw *hw)
{
	const struct nic_core_rb_entry *e;
	struct nic_core_rb_table t;

	memset(bar0, 0, sizeof(bar0));
	bar0[NIC_CSR_INFO_MAGIC_ADDR / 4] = NIC_ID_MAGIC;
	bar0[NIC_ID_RB_COUNT_ADDR / 4] = 2;
	bar0[NIC_ID_RB_TABLE_ADDR / 4 + 0] = NIC_RB_NIC;
	bar0[NIC_ID_RB_TABLE_ADDR / 4 + 1] = NIC_RB_NIC_VERSION;
	bar0[NIC_ID_RB_TABLE_ADDR / 4 + 2] = BASE;
	bar0[NIC_ID_RB_TABLE_ADDR / 4 + 3] = 2 | 3u << 8 | 4u << 16;
	bar0[NIC_ID_RB_TABLE_ADDR / 4 + 4] = NIC_RB_PCIE_MSI;
	bar0[NIC_ID_RB_TABLE_ADDR / 4 + 5] = NIC_RB_PCIE_MSI_VERSION + 1;
	nr = 0;
	CHECK(nic_core_rb_discover(hw, &t) == NIC_CORE_RB_OK && t.n == 2);
	CHECK(nr == 3 + 2 * 4);
	CHECK(nic_core_rb_check(&t, NIC_RB_NIC) == NIC_CORE_RB_OK);
	CHECK(nic_core_rb_check(&t, NIC_RB_PCIE_MSI) == NIC_CORE_RB_VERSION);
	CHECK(nic_core_rb_check(&t, NIC_RB_ANALYZER) == NIC_CORE_RB_ABSENT);
	e = nic_core_rb_lookup(&t, NIC_RB_NIC);
	CHECK(e && nic_core_rb_msi(e) == 2 && nic_core_rb_msi_count(e) == 3 &&
	      nic_core_rb_param(e) == 4);
	CHECK(strcmp(nic_core_rb_name(NIC_RB_NIC), "nic") == 0);
	CHECK(strcmp(nic_core_rb_name(0x7777), "?") == 0 && nic_core_rb_known_version(0x7777) == 0);
	bar0[0] = 0x010000ed; /* QEMU's edu device */
	CHECK(nic_core_rb_discover(hw, &t) == NIC_CORE_RB_BAD_MAGIC && t.magic == 0x010000ed);
	CHECK(t.n == 0);
}

int main(void)
{
	struct nic_core_hw *hw = NULL; /* the fake BAR0 is global */

	test_discovery(hw);
	test_tx(hw);
	test_rx(hw);
	test_rx_untrusted(hw);
	test_coalesce(hw);
	test_counters(hw);
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
