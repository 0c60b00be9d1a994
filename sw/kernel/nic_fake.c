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
 *
 * Faults, for the test (debugfs nicdrv_fake/ctl, one command per write):
 *   rx LEN STATUS [INDEX]  a completion record as a faulty device would write it: LEN and
 *                          STATUS as given; without INDEX for the next posted buffer (LEN bytes,
 *                          at most the buffer's, written into it), with INDEX naming any position
 *                          and consuming none
 *   rx_stale LEN STATUS    the same naming the position consumed last (not posted again)
 *   tx_lose_wb Q           queue Q's consumer-index writebacks and TX MSIs are lost (frames are
 *                          sent, nic_txq_cons moves) until the queue is disabled
 *   stuck_tx Q, stuck_rx   TX queue Q / the RX engine does not drain once disabled (the RX engine
 *                          holds the buffer it was writing); `unstick` ends it: the RX engine
 *                          then finishes that write (a late DMA, done only with bus mastering on,
 *                          and refused with a message when the page was freed meanwhile)
 *   xmit_more_drop N       N minimal frames handed to ndo_start_xmit on queue 0 with xmit_more,
 *                          then one longer than the TX engine takes without it (as the stack's
 *                          bulk dequeue would), under the queue's xmit lock
 *   xmit N                 N minimal frames on queue 0, each without xmit_more, until the
 *                          queue stops
 * and one check of the driver: a TX queue re-enabled while the interface has carrier must have
 * its kernel queue stopped (nothing may post to a ring being reset); else a message.
 * Interfaces: nicdrv_hw_map/unmap and nic_core_rd32/wr32, in place of nic_mmio.c's: the model
 * of one edu device at a time (fake_dev), refusing any other device.
 */
#include <linux/debugfs.h>
#include <linux/etherdevice.h>
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
	u32 tx_lose_wb;		/* bit q: queue q's writebacks and MSIs lost until disabled */
	u32 tx_stuck;		/* bit q: queue q does not drain */
	bool rx_stuck;		/* the RX engine does not reset its ring once disabled */
	bool rx_busy;		/* disabled while stuck: still writing rx_late */
	u64 rx_late;		/* the buffer (bus address) it was writing */
	struct dentry *dir;	/* debugfs nicdrv_fake/ */
	u8 frame[NIC_Q_FRAME_MAX];
};

static struct nicdrv_fake *fake_dev;	/* the one device modelled */

#define NR(NAME) ((FAKE_NIC_BASE + NIC_CSR_NIC_##NAME##_ADDR) / 4)

static u32 get_field(u32 v, unsigned int off, unsigned int size)
{
	return (v >> off) & (u32)((1ull << size) - 1);
}

static void fake_set_cons(struct nicdrv_fake *f, unsigned int q, u32 cons)
{
	f->tx_cons[q] = cons;
	/* nic_txq_cons: element q of a wide CSR, most significant word first */
	f->regs[NR(TXQ_CONS) + NIC_CSR_NIC_TXQ_CONS_SIZE - 1 - q] = cons;
}

static void fake_set_drained(struct nicdrv_fake *f)
{
	f->regs[NR(TXQ_DRAINED)] = ~(f->tx_enabled | f->tx_stuck) & ((1u << NIC_Q_MAX_TXQ) - 1);
}

static u64 wide(struct nicdrv_fake *f, unsigned int word)
{
	return (u64)f->regs[word] << 32 | f->regs[word + 1];
}

u32 nic_core_rd32(struct nic_core_hw *hw, u32 off)
{
	struct nicdrv_fake *f = fake_dev;
	unsigned long flags;
	u32 v;

	spin_lock_irqsave(&f->lock, flags);
	v = off / 4 < ARRAY_SIZE(f->regs) ? f->regs[off / 4] : ~0u;
	if (off / 4 == NR(RXE_CONS))
		v = f->rx_busy ? f->rx_cons | 0x800 : f->rx_cons;	/* busy: not reset */
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
		fake_set_cons(f, q, (f->tx_cons[q] + 1) & mask);
	}
	if (f->tx_lose_wb & BIT(q))
		return;
	wb = phys_to_virt(f->tx_wb[q]);
	wb->cons = (__force u16)cpu_to_le16(index);
	f->regs[NR(TXQ_WB_WRITES)]++;
	fake_irq(priv, f, 1 + q % NICDRV_FAKE_TXIRQ);
}

/* The driver's reset must hold the kernel queue stopped while the ring is rebuilt. */
static void fake_check_stopped(struct nicdrv_priv *priv, unsigned int q)
{
	if (q < priv->ndev->real_num_tx_queues && netif_carrier_ok(priv->ndev) &&
	    !netif_tx_queue_stopped(netdev_get_tx_queue(priv->ndev, q)))
		pr_err("nicdrv_fake: TX queue %u re-enabled while its kernel queue is awake: xmit can race the ring's reset\n",
		       q);
}

/* Disabled while stuck: the engine keeps the buffer at rx_cons (if one was posted). */
static void fake_rx_hang(struct nicdrv_fake *f)
{
	struct nic_rx_desc *d;

	if (f->rx_busy || f->rx_cons == f->rx_prod)
		return;
	d = phys_to_virt(wide(f, NR(RXE_RING_BASE)) + (u64)f->rx_cons * NIC_RX_DESC_BYTES);
	f->rx_late = le64_to_cpu((__force __le64)d->addr);
	f->rx_busy = true;
}

void nic_core_wr32(struct nic_core_hw *hw, u32 off, u32 v)
{
	struct nicdrv_priv *priv = container_of(hw, struct nicdrv_priv, hw);
	struct nicdrv_fake *f = fake_dev;
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
		f->flen = 0;
		if (get_field(v, NIC_CSR_NIC_TXQ_CFG_ENABLE_OFFSET,
			      NIC_CSR_NIC_TXQ_CFG_ENABLE_SIZE)) {
			fake_check_stopped(priv, q);
			fake_set_cons(f, q, 0);	/* restarts at 0: the final index kept till then */
			f->tx_enabled |= BIT(q);
		} else {
			f->tx_enabled &= ~BIT(q);
			f->tx_lose_wb &= ~BIT(q);
		}
		fake_set_drained(f);
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
	} else if (w == NR(RXE_ENABLE) && !v && f->rx_stuck) {
		fake_rx_hang(f);
	} else if (w == NR(RXE_ENABLE) && !v && !f->rx_busy) {
		f->rx_cons = 0;
		f->rx_cpl = 0;
		f->rx_prod = 0;
	} else if (w == NR(RXE_DB)) {
		f->rx_prod = get_field(v, NIC_CSR_NIC_RXE_DB_INDEX_OFFSET,
				       NIC_CSR_NIC_RXE_DB_INDEX_SIZE);
	}
	spin_unlock_irqrestore(&f->lock, flags);
}

static void fake_fill(struct nicdrv_priv *priv, void *buf, u32 len)
{
	struct ethhdr *eh = buf;

	memset(buf, 0xa5, len);
	if (len < ETH_HLEN)
		return;
	eth_broadcast_addr(eh->h_dest);
	ether_addr_copy(eh->h_source, priv->ndev->dev_addr);
	eh->h_proto = htons(ETH_P_802_EX1);	/* local experimental: no protocol takes it */
}

/* rx LEN STATUS [INDEX] */
static int fake_rx_record(struct nicdrv_priv *priv, struct nicdrv_fake *f, u32 len, u32 status,
			  bool has_index, u32 index)
{
	const u32 mask = (1u << f->regs[NR(RXE_RING_SIZE_LOG2)]) - 1;
	struct nic_rx_desc *d;
	struct nic_rx_cpl *c;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&f->lock, flags);
	if (!f->regs[NR(RXE_ENABLE)] || f->rx_busy || (!has_index && f->rx_cons == f->rx_prod)) {
		err = -EAGAIN;
		goto out;
	}
	c = phys_to_virt(wide(f, NR(RXE_CPL_BASE)) + (u64)f->rx_cpl * NIC_RX_CPL_BYTES);
	if (has_index && index == U32_MAX)
		index = (f->rx_cons - 1) & mask;	/* rx_stale */
	if (!has_index) {
		d = phys_to_virt(wide(f, NR(RXE_RING_BASE)) + (u64)f->rx_cons * NIC_RX_DESC_BYTES);
		fake_fill(priv, phys_to_virt(le64_to_cpu((__force __le64)d->addr)),
			  min_t(u32, len, le16_to_cpu((__force __le16)d->len)));
		index = f->rx_cons;
		f->rx_cons = (f->rx_cons + 1) & mask;
	}
	c->len = (__force u16)cpu_to_le16(len);
	c->index = (__force u16)cpu_to_le16(index);
	c->queue = 0;
	c->timestamp = 0;
	dma_wmb();
	WRITE_ONCE(c->status, status);
	f->rx_cpl = (f->rx_cpl + 1) & mask;
	fake_irq(priv, f, 0);
out:
	spin_unlock_irqrestore(&f->lock, flags);
	return err;
}

/* The stuck engines let go; the RX engine's late write lands only with bus mastering on. */
static void fake_unstick(struct nicdrv_priv *priv, struct nicdrv_fake *f)
{
	unsigned long flags;
	bool busy, master, done = false;
	struct page *page;
	u16 cmd;
	u64 late;

	pci_read_config_word(priv->pdev, PCI_COMMAND, &cmd);
	master = cmd & PCI_COMMAND_MASTER;
	spin_lock_irqsave(&f->lock, flags);
	busy = f->rx_busy;
	late = f->rx_late;
	if (busy && master) {
		page = virt_to_page(phys_to_virt(late));
		if (!page_ref_count(page))
			pr_err("nicdrv_fake: late RX DMA into freed memory at %#llx: the driver freed a buffer the device still held\n",
			       late);
		else
			memset(phys_to_virt(late), 0x5a, 64);
		done = page_ref_count(page);
	}
	f->rx_busy = false;
	f->rx_stuck = false;
	f->rx_cons = 0;
	f->rx_cpl = 0;
	f->rx_prod = 0;
	f->tx_stuck = 0;
	fake_set_drained(f);
	spin_unlock_irqrestore(&f->lock, flags);
	if (busy && !(master && !done))
		pr_info("nicdrv_fake: the RX engine's late write %s\n",
			done ? "done (bus mastering on, the buffer still the driver's)" :
			"not done: bus mastering off");
}

/* xmit_more_drop N: N frames with xmit_more, then one the driver must drop, without it;
 * xmit N (more false): N frames, each rung, until the stack would stop.
 */
static int fake_xmit(struct nicdrv_priv *priv, unsigned int n, bool more_drop)
{
	struct net_device *ndev = priv->ndev;
	struct netdev_queue *nq = netdev_get_tx_queue(ndev, 0);
	unsigned int i;
	int sent = 0;

	if (!netif_running(ndev) || !netif_carrier_ok(ndev))
		return -ENETDOWN;
	local_bh_disable();
	__netif_tx_lock(nq, smp_processor_id());
	for (i = 0; i < n + more_drop; i++) {
		const bool last = i == n;
		const unsigned int len = last ? NIC_Q_FRAME_MAX + 64 : ETH_ZLEN;
		struct sk_buff *skb;

		if (more_drop ? netif_xmit_frozen_or_drv_stopped(nq) :
				netif_xmit_frozen_or_stopped(nq))
			break;
		skb = alloc_skb(len, GFP_ATOMIC);
		if (!skb)
			break;
		fake_fill(priv, skb_put(skb, len), len);
		skb->dev = ndev;
		skb->protocol = htons(ETH_P_802_EX1);
		skb_set_queue_mapping(skb, 0);
		if (netdev_start_xmit(skb, ndev, nq, more_drop && !last) != NETDEV_TX_OK) {
			kfree_skb(skb);
			break;
		}
		sent++;
	}
	__netif_tx_unlock(nq);
	local_bh_enable();
	return sent;
}

static ssize_t fake_ctl_write(struct file *file, const char __user *ubuf, size_t count,
			      loff_t *ppos)
{
	struct nicdrv_priv *priv = file->private_data;
	struct nicdrv_fake *f = fake_dev;
	unsigned long flags;
	char buf[64];
	u32 a, b, c;
	int n, err = 0;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = 0;
	if (sscanf(buf, "rx %u %u %u", &a, &b, &c) == 3) {
		err = fake_rx_record(priv, f, a, b, true, c);
	} else if (sscanf(buf, "rx %u %u", &a, &b) == 2) {
		err = fake_rx_record(priv, f, a, b, false, 0);
	} else if (sscanf(buf, "rx_stale %u %u", &a, &b) == 2) {
		err = fake_rx_record(priv, f, a, b, true, U32_MAX);
	} else if (sscanf(buf, "tx_lose_wb %u", &a) == 1 && a < NIC_Q_MAX_TXQ) {
		spin_lock_irqsave(&f->lock, flags);
		f->tx_lose_wb |= BIT(a);
		spin_unlock_irqrestore(&f->lock, flags);
	} else if (sscanf(buf, "stuck_tx %u", &a) == 1 && a < NIC_Q_MAX_TXQ) {
		spin_lock_irqsave(&f->lock, flags);
		f->tx_stuck |= BIT(a);
		fake_set_drained(f);
		spin_unlock_irqrestore(&f->lock, flags);
	} else if (!strcmp(strim(buf), "stuck_rx")) {
		spin_lock_irqsave(&f->lock, flags);
		f->rx_stuck = true;
		spin_unlock_irqrestore(&f->lock, flags);
	} else if (!strcmp(strim(buf), "unstick")) {
		fake_unstick(priv, f);
	} else if (sscanf(buf, "xmit_more_drop %u", &a) == 1 && a < 64) {
		n = fake_xmit(priv, a, true);
		if (n < 0)
			err = n;
		else
			pr_info("nicdrv_fake: xmit_more_drop: %d frames handed to the driver\n", n);
	} else if (sscanf(buf, "xmit %u", &a) == 1 && a <= 4096) {
		n = fake_xmit(priv, a, false);
		if (n < 0)
			err = n;
		else
			pr_info("nicdrv_fake: xmit: %d frames handed to the driver\n", n);
	} else {
		err = -EINVAL;
	}
	return err ? err : count;
}

static const struct file_operations fake_ctl_fops = {
	.owner = THIS_MODULE,
	.open = simple_open,
	.write = fake_ctl_write,
	.llseek = no_llseek,
};

int nicdrv_hw_map(struct nicdrv_priv *priv)
{
	struct pci_dev *pdev = priv->pdev;
	struct nicdrv_fake *f;
	u32 *e;

	if (pdev->vendor != 0x1234 || pdev->device != 0x11e8 || fake_dev) {
		dev_err(&pdev->dev, "the QEMU test's build (NICDRV_FAKE=1) models one edu device only\n");
		return -ENODEV;
	}
	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return -ENOMEM;
	/* edu's own BAR0: its interrupt registers raise the model's MSIs. */
	priv->hw.bar = pci_iomap(pdev, 0, 0);
	if (!priv->hw.bar) {
		kfree(f);
		return -ENOMEM;
	}
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
	f->no_msi = pdev->no_msi;
	if (fake_no_msi)
		pdev->no_msi = 1;
	priv->hw.len = FAKE_BAR_BYTES;
	fake_dev = f;
	f->dir = debugfs_create_dir("nicdrv_fake", NULL);
	debugfs_create_file("ctl", 0200, f->dir, priv, &fake_ctl_fops);
	return 0;
}

void nicdrv_hw_unmap(struct nicdrv_priv *priv)
{
	struct nicdrv_fake *f = fake_dev;

	debugfs_remove_recursive(f->dir);
	priv->pdev->no_msi = f->no_msi;
	fake_dev = NULL;
	kfree(f);
	pci_iounmap(priv->pdev, priv->hw.bar);
	priv->hw.bar = NULL;
}
