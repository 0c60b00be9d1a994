// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_fake.c: a test double of the SoC for the QEMU test only (built with NICDRV_FAKE=1, never
 * into the driver proper): the module then binds QEMU's `edu` device and serves BAR0 from memory
 * instead of the device, so probe, open/stop, xmit, interrupts, NAPI, BQL and every ethtool
 * operation run in a guest without the FPGA.
 *
 * The model: an identification block listing a nic block (NICDRV_FAKE_TXQ TX queues,
 * NICDRV_FAKE_TXIRQ TX vectors, MSI numbers 0..NICDRV_FAKE_TXIRQ) and a pcie_msi block; TX
 * queues drained while disabled; a TX doorbell sends the descriptors up to its index at once
 * (gathered to EOP, counted in nic_txe_frames/bytes), writes the consumer index back (and into
 * nic_txq_cons) and raises the queue's TX MSI; each frame is looped back into the next posted RX
 * buffer with a completion record and the RX MSI, or counted in nic_rxe_drop_no_buffer. Host
 * memory is reached with phys_to_virt (the guest has no IOMMU).
 * Interrupts are edu's own: an MSI number enabled in pcie_msi ENABLE is raised and acknowledged
 * at once through edu's interrupt registers (0x60, 0x64), which send edu's one MSI message, or
 * pulse its INTx line when MSI is off. edu has one MSI message, so the driver runs on one
 * vector; module parameter fake_no_msi hides edu's MSI capability (pdev->no_msi) so that it
 * falls back to INTx.
 * Interfaces: nicdrv_fake_init/fini, nicdrv_fake_rd32/wr32 (nic_main.c's accessors call them).
 */
#include <linux/io.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/spinlock.h>

#include "nicdrv.h"

#define FAKE_BAR_BYTES 0x2000u
#define FAKE_MSI_BASE 0x0800u
#define FAKE_NIC_BASE 0x1000u
#define FAKE_CLK_HZ 125000000u
#define NICDRV_FAKE_TXQ 4u
#define NICDRV_FAKE_TXIRQ 2u
#define EDU_IRQ_RAISE 0x60u	/* edu: interrupt status |= value, then its MSI or INTx */
#define EDU_IRQ_ACK 0x64u	/* edu: interrupt status &= ~value (INTx low when 0) */

static bool fake_no_msi;
module_param(fake_no_msi, bool, 0444);
MODULE_PARM_DESC(fake_no_msi, "QEMU test: hide edu's MSI capability (the driver takes INTx)");

struct nicdrv_fake {
	spinlock_t lock;	/* the registers and model state: MMIO and debugfs */
	u32 regs[FAKE_BAR_BYTES / 4];
	u64 tx_base[NIC_Q_MAX_TXQ], tx_wb[NIC_Q_MAX_TXQ];
	u32 tx_cons[NIC_Q_MAX_TXQ], tx_size_log2[NIC_Q_MAX_TXQ];
	u32 tx_enabled, rx_cons, rx_cpl, rx_prod;
	u32 flen;
	bool no_msi;		/* pdev->no_msi before fake_no_msi */
	u8 frame[NIC_Q_FRAME_MAX];
};

#define NR(NAME) ((FAKE_NIC_BASE + NIC_CSR_NIC_##NAME##_ADDR) / 4)

static u32 get_field(u32 v, unsigned int off, unsigned int size)
{
	return (v >> off) & (u32)((1ull << size) - 1);
}

static u64 wide(struct nicdrv_fake *f, unsigned int word)
{
	return (u64)f->regs[word] << 32 | f->regs[word + 1];
}

int nicdrv_fake_init(struct nicdrv_priv *priv)
{
	struct nicdrv_fake *f = kzalloc(sizeof(*f), GFP_KERNEL);
	u32 *e;

	if (!f)
		return -ENOMEM;
	spin_lock_init(&f->lock);
	f->regs[NIC_CSR_INFO_MAGIC_ADDR / 4] = NIC_ID_MAGIC;
	f->regs[NIC_CSR_INFO_VERSION_ADDR / 4] = NIC_ID_VERSION_MAJOR
						 << NIC_CSR_INFO_VERSION_MAJOR_OFFSET;
	f->regs[NIC_CSR_INFO_CLK_FREQ_ADDR / 4] = FAKE_CLK_HZ;
	f->regs[NIC_ID_RB_COUNT_ADDR / 4] = 2;
	e = &f->regs[NIC_ID_RB_TABLE_ADDR / 4];
	e[0] = NIC_RB_NIC;
	e[1] = NIC_RB_NIC_VERSION;
	e[2] = FAKE_NIC_BASE;
	e[3] = 0 | (1 + NICDRV_FAKE_TXIRQ) << 8 | NICDRV_FAKE_TXQ << 16;
	e[4] = NIC_RB_PCIE_MSI;
	e[5] = NIC_RB_PCIE_MSI_VERSION;
	e[6] = FAKE_MSI_BASE;
	e[7] = NIC_RB_NO_IRQ;
	f->regs[NR(TXQ_DRAINED)] = (1u << NIC_Q_MAX_TXQ) - 1;
	f->no_msi = priv->pdev->no_msi;
	if (fake_no_msi)
		priv->pdev->no_msi = 1;
	priv->hw.fake = f;
	priv->hw.len = FAKE_BAR_BYTES;
	return 0;
}

void nicdrv_fake_fini(struct nicdrv_priv *priv)
{
	if (!priv->hw.fake)
		return;
	priv->pdev->no_msi = priv->hw.fake->no_msi;
	kfree(priv->hw.fake);
	priv->hw.fake = NULL;
}

u32 nicdrv_fake_rd32(struct nic_core_hw *hw, u32 off)
{
	struct nicdrv_fake *f = hw->fake;
	unsigned long flags;
	u32 v;

	spin_lock_irqsave(&f->lock, flags);
	v = off / 4 < ARRAY_SIZE(f->regs) ? f->regs[off / 4] : ~0u;
	if (off / 4 == NR(RXE_CONS))
		v = f->rx_cons;
	spin_unlock_irqrestore(&f->lock, flags);
	return v;
}

/* MSI number msi, if pcie_msi ENABLE lets it out: edu's interrupt, raised and acknowledged. */
static void fake_irq(struct nicdrv_priv *priv, struct nicdrv_fake *f, unsigned int msi)
{
	if (!(f->regs[(FAKE_MSI_BASE + NIC_CSR_PCIE_MSI_ENABLE_ADDR) / 4] & BIT(msi)))
		return;
	iowrite32(BIT(msi), priv->hw.bar + EDU_IRQ_RAISE);
	iowrite32(BIT(msi), priv->hw.bar + EDU_IRQ_ACK);
}

/* A whole frame from the TX engine: into the next posted RX buffer, as the MAC loopback. */
static void fake_rx(struct nicdrv_priv *priv, struct nicdrv_fake *f)
{
	const u32 mask = (1u << f->regs[NR(RXE_RING_SIZE_LOG2)]) - 1;
	struct nic_rx_desc *d;
	struct nic_rx_cpl *c;
	u32 len;
	u8 status;

	if (!f->regs[NR(RXE_ENABLE)] || f->rx_cons == f->rx_prod) {
		f->regs[NR(RXE_DROP_NO_BUFFER)]++;
		return;
	}
	d = phys_to_virt(wide(f, NR(RXE_RING_BASE)) + (u64)f->rx_cons * NIC_RX_DESC_BYTES);
	c = phys_to_virt(wide(f, NR(RXE_CPL_BASE)) + (u64)f->rx_cpl * NIC_RX_CPL_BYTES);
	len = le16_to_cpu((__force __le16)d->len);
	c->index = (__force u16)cpu_to_le16(f->rx_cons);
	c->timestamp = 0;
	if (f->flen > len) {
		c->len = 0;
		status = NIC_RX_STATUS_TOO_BIG;
		f->regs[NR(RXE_DROP_TOO_BIG)]++;
	} else {
		memcpy(phys_to_virt(le64_to_cpu((__force __le64)d->addr)), f->frame, f->flen);
		c->len = (__force u16)cpu_to_le16(f->flen);
		status = NIC_RX_STATUS_OK;
		f->regs[NR(RXE_FRAMES)]++;
		f->regs[NR(RXE_BYTES)] += f->flen;
	}
	dma_wmb();	/* the record, then its status (what the driver polls) */
	WRITE_ONCE(c->status, status);
	f->rx_cons = (f->rx_cons + 1) & mask;
	f->rx_cpl = (f->rx_cpl + 1) & mask;
	fake_irq(priv, f, 0);
}

static void fake_tx(struct nicdrv_priv *priv, struct nicdrv_fake *f, unsigned int q, u32 index)
{
	const u32 mask = (1u << f->tx_size_log2[q]) - 1;
	struct nic_tx_wb *wb;

	f->regs[NR(TXQ_DOORBELLS)]++;
	if (!(f->tx_enabled & BIT(q)) || index > mask) {
		f->regs[NR(TXQ_ERR_DB_DISABLED)]++;
		return;
	}
	while (f->tx_cons[q] != index) {
		struct nic_tx_desc *d =
			phys_to_virt(f->tx_base[q] + (u64)f->tx_cons[q] * NIC_TX_DESC_BYTES);
		u32 len = le16_to_cpu((__force __le16)d->len);

		if (f->flen + len <= sizeof(f->frame))
			memcpy(f->frame + f->flen,
			       phys_to_virt(le64_to_cpu((__force __le64)d->addr)), len);
		f->flen += len;
		f->regs[NR(TXQ_DESCS_COMPLETED)]++;
		if (le16_to_cpu((__force __le16)d->flags) & NIC_TX_DESC_FLAGS_EOP) {
			if (f->flen <= sizeof(f->frame)) {
				f->regs[NR(TXE_FRAMES)]++;
				f->regs[NR(TXE_BYTES)] += f->flen;
				fake_rx(priv, f);
			} else {
				f->regs[NR(TXE_ERR_FRAME_LEN)]++;
			}
			f->flen = 0;
		}
		f->tx_cons[q] = (f->tx_cons[q] + 1) & mask;
	}
	wb = phys_to_virt(f->tx_wb[q]);
	wb->cons = (__force u16)cpu_to_le16(index);
	f->regs[NR(TXQ_WB_WRITES)]++;
	fake_irq(priv, f, 1 + q % NICDRV_FAKE_TXIRQ);
}

void nicdrv_fake_wr32(struct nic_core_hw *hw, u32 off, u32 v)
{
	struct nicdrv_priv *priv = container_of(hw, struct nicdrv_priv, hw);
	struct nicdrv_fake *f = hw->fake;
	const unsigned int w = off / 4;
	unsigned long flags;
	unsigned int q;

	if (w >= ARRAY_SIZE(f->regs))
		return;
	spin_lock_irqsave(&f->lock, flags);
	f->regs[w] = v;
	if (w == NR(TXQ_CFG)) {
		q = get_field(v, NIC_CSR_NIC_TXQ_CFG_QUEUE_OFFSET, NIC_CSR_NIC_TXQ_CFG_QUEUE_SIZE);
		f->tx_size_log2[q] = get_field(v, NIC_CSR_NIC_TXQ_CFG_SIZE_LOG2_OFFSET,
					       NIC_CSR_NIC_TXQ_CFG_SIZE_LOG2_SIZE);
		f->tx_cons[q] = 0;
		f->flen = 0;
		if (get_field(v, NIC_CSR_NIC_TXQ_CFG_ENABLE_OFFSET,
			      NIC_CSR_NIC_TXQ_CFG_ENABLE_SIZE))
			f->tx_enabled |= BIT(q);
		else
			f->tx_enabled &= ~BIT(q);
		f->regs[NR(TXQ_DRAINED)] = ~f->tx_enabled & ((1u << NIC_Q_MAX_TXQ) - 1);
	} else if (w == NR(TXE_BASE)) {
		q = get_field(v, NIC_CSR_NIC_TXE_BASE_QUEUE_OFFSET,
			      NIC_CSR_NIC_TXE_BASE_QUEUE_SIZE);
		f->tx_base[q] = wide(f, NR(TXE_BASE_ADDR));
	} else if (w == NR(TXQ_WB_ADDR_QUEUE)) {
		q = get_field(v, NIC_CSR_NIC_TXQ_WB_ADDR_QUEUE_QUEUE_OFFSET,
			      NIC_CSR_NIC_TXQ_WB_ADDR_QUEUE_QUEUE_SIZE);
		f->tx_wb[q] = wide(f, NR(TXQ_WB_ADDR));
	} else if (w == NR(TXQ_DB)) {
		fake_tx(priv, f,
			get_field(v, NIC_CSR_NIC_TXQ_DB_QUEUE_OFFSET,
				  NIC_CSR_NIC_TXQ_DB_QUEUE_SIZE),
			get_field(v, NIC_CSR_NIC_TXQ_DB_INDEX_OFFSET,
				  NIC_CSR_NIC_TXQ_DB_INDEX_SIZE));
	} else if (w == NR(RXE_ENABLE) && !v) {
		f->rx_cons = 0;
		f->rx_cpl = 0;
		f->rx_prod = 0;
	} else if (w == NR(RXE_DB)) {
		f->rx_prod = get_field(v, NIC_CSR_NIC_RXE_DB_INDEX_OFFSET,
				       NIC_CSR_NIC_RXE_DB_INDEX_SIZE);
	}
	spin_unlock_irqrestore(&f->lock, flags);
}
