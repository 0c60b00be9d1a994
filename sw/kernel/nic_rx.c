// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_rx.c: the NIC driver's RX ring on the shared core (nic_core_rx_desc/take/post,
 * nic_core_rx_setup/start): page-based buffers and NAPI.
 *
 * Every ring position p owns one page, mapped DMA_FROM_DEVICE once at open and posted as a
 * NICDRV_RX_BUF_LEN buffer at offset 0; a buffer is reposted at its own position (the core's
 * rule). The poll takes completion records (nic_core_rx_take), copies each good frame out of
 * its page into a NAPI skb (dma_sync for the CPU, then back to the device), hands it to GRO
 * and reposts the consumed buffers with one doorbell (nic_core_rx_post). Nothing the device
 * writes is trusted: a record whose index names no buffer it holds (the core refuses it), whose
 * status is not OK, or whose length is below an Ethernet header or above the buffer is dropped
 * and counted (ethtool -S drv_rx_*); the RX FIFO drops runts too (rx_fifo_drop_runt).
 * A lost completion record (a write lost with the link) leaves the poll waiting at its position
 * while the device goes on: the watchdog (nic_netdev.c) finds the ring stalled and the reset
 * work restarts it (nicdrv_rx_restart), as the TX reset path does a queue.
 * Memory: one coherent block, the descriptor ring then the completion ring; the page and
 * mapping arrays.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/iopoll.h>

#include "nicdrv.h"

static void nicdrv_rx_free_pages(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq)
{
	unsigned int p;

	for (p = 0; p < rxq->ring.size; p++) {
		if (!rxq->pages[p])
			continue;
		dma_unmap_page(&priv->pdev->dev, rxq->dma[p], PAGE_SIZE, DMA_FROM_DEVICE);
		__free_page(rxq->pages[p]);
		rxq->pages[p] = NULL;
	}
}

int nicdrv_rx_alloc(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq)
{
	struct device *dev = &priv->pdev->dev;
	struct nic_rxq *r = &rxq->ring;
	const unsigned int size = priv->rx_ring_size;
	const size_t ring_len = (size_t)size * NIC_RX_DESC_BYTES;
	unsigned int p;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->size_log2 = ilog2(size);
	rxq->pages = kcalloc(size, sizeof(*rxq->pages), GFP_KERNEL);
	rxq->dma = kcalloc(size, sizeof(*rxq->dma), GFP_KERNEL);
	rxq->mem_len = ring_len + (size_t)size * NIC_RX_CPL_BYTES;
	rxq->mem = dma_alloc_coherent(dev, rxq->mem_len, &rxq->mem_dma, GFP_KERNEL);
	if (!rxq->pages || !rxq->dma || !rxq->mem)
		goto err;
	r->desc = rxq->mem;
	r->desc_bus = rxq->mem_dma;
	r->cpl = rxq->mem + ring_len;
	r->cpl_bus = rxq->mem_dma + ring_len;
	for (p = 0; p < size; p++) {
		struct page *page = dev_alloc_page();
		dma_addr_t dma;

		if (!page)
			goto err;
		dma = dma_map_page(dev, page, 0, PAGE_SIZE, DMA_FROM_DEVICE);
		if (dma_mapping_error(dev, dma)) {
			__free_page(page);
			goto err;
		}
		rxq->pages[p] = page;
		rxq->dma[p] = dma;
		nic_core_rx_desc(r, p, dma, NICDRV_RX_BUF_LEN);
	}
	return 0;

err:
	nicdrv_rx_free(priv, rxq);
	return -ENOMEM;
}

void nicdrv_rx_free(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq)
{
	if (rxq->pages)
		nicdrv_rx_free_pages(priv, rxq);
	if (rxq->mem)
		dma_free_coherent(&priv->pdev->dev, rxq->mem_len, rxq->mem, rxq->mem_dma);
	rxq->mem = NULL;
	kfree(rxq->pages);
	rxq->pages = NULL;
	kfree(rxq->dma);
	rxq->dma = NULL;
}

/* Disable the engine and wait until it reset its ring (nic_rxe_cons 0). */
static int nicdrv_rx_reset(struct nicdrv_priv *priv)
{
	u32 cons;
	int err;

	nic_core_rx_enable(&priv->hw, priv->nic_base, false);
	err = read_poll_timeout(nic_core_rx_cons, cons, cons == 0, 10, NICDRV_TIMEOUT_US, true,
				&priv->hw, priv->nic_base);
	if (err) {
		priv->drain_failed = true;
		netdev_err(priv->ndev,
			   "the RX engine did not reset its ring (nic_rxe_cons stays %u) within %u us\n",
			   cons, NICDRV_TIMEOUT_US);
	}
	return err;
}

int nicdrv_rx_start(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq)
{
	int err = nicdrv_rx_reset(priv);

	if (err)
		return err;
	if (nic_core_rx_setup(&priv->hw, priv->nic_base, &rxq->ring)) {
		netdev_err(priv->ndev, "RX ring %#llx or completion ring %#llx not 16-byte aligned\n",
			   rxq->ring.desc_bus, rxq->ring.cpl_bus);
		return -EINVAL;
	}
	nic_core_rx_cpl_init(&rxq->ring);
	rxq->wd_stuck = false;
	nic_core_rx_start(&priv->hw, priv->nic_base, &rxq->ring);
	return 0;
}

/* The watchdog's look at the ring: stalled when, at this look and the last, the device has
 * consumed descriptors (nic_rxe_cons) past the buffers whose records the poll took, the next
 * record is not written, and the poll took none in between: that record was lost.
 */
bool nicdrv_rx_stalled(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq)
{
	struct nic_rxq *r = &rxq->ring;
	const u32 next = READ_ONCE(r->next_cpl);
	const u32 expect = (READ_ONCE(r->prod) + 1 + READ_ONCE(r->to_repost)) & (r->size - 1);
	const u32 cons = nic_core_rx_cons(&priv->hw, priv->nic_base);
	const bool stuck = cons < r->size && cons != expect &&
			   READ_ONCE(r->cpl[next].status) == NIC_Q_RX_STATUS_FREE;
	const bool stalled = stuck && rxq->wd_stuck && next == rxq->wd_next;

	if (stalled)
		netdev_err(priv->ndev,
			   "RX ring stalled: no completion record at %u while the device consumed up to %u (from %u); resetting it\n",
			   next, cons, expect);
	rxq->wd_stuck = stuck;
	rxq->wd_next = next;
	return stalled;
}

/* The RX reset path (docs/faults.md), from the reset work under rtnl: the poll off, the engine
 * reset, the records it wrote past the lost one dropped and counted, then the ring started
 * again with every buffer posted.
 */
void nicdrv_rx_restart(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq)
{
	struct nicdrv_vec *vec = &priv->vec[0];
	unsigned int p, dropped = 0;

	if (!rxq->mem)
		return;
	if (vec->irq)
		napi_disable(&vec->napi);
	if (nicdrv_rx_reset(priv))
		goto out;
	for (p = 0; p < rxq->ring.size; p++)
		if (READ_ONCE(rxq->ring.cpl[p].status) != NIC_Q_RX_STATUS_FREE)
			dropped++;
	if (nicdrv_rx_start(priv, rxq))
		goto out;
	u64_stats_update_begin(&rxq->syncp);
	rxq->resets++;
	rxq->reset_dropped += dropped;
	u64_stats_update_end(&rxq->syncp);
	netdev_warn(priv->ndev, "RX ring reset: %u completion records past the lost one dropped\n",
		    dropped);
out:
	if (vec->irq)
		napi_enable(&vec->napi);
}

void nicdrv_rx_stop(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq)
{
	nicdrv_rx_reset(priv);
}

int nicdrv_rx_poll(struct nicdrv_priv *priv, struct napi_struct *napi, int budget)
{
	struct nicdrv_rxq *rxq = &priv->rxq;
	struct device *dev = &priv->pdev->dev;
	struct nic_rxq *r = &rxq->ring;
	struct nic_core_rx_rec rec;
	unsigned int pkts = 0, bytes = 0, runt = 0, oversize = 0, bad_index = 0, bad_status = 0;
	unsigned int no_skb = 0;
	int work = 0;

	while (work < budget && nic_core_rx_take(r, &rec)) {
		struct sk_buff *skb;

		work++;
		/* Status, index and length are the device's: checked before the buffer is read. */
		if (unlikely(rec.status != NIC_RX_STATUS_OK)) {
			if (rec.status == NIC_Q_RX_STATUS_BAD_INDEX)
				bad_index++;
			else
				bad_status++;
			continue;
		}
		if (unlikely(rec.len < ETH_HLEN)) {
			runt++;
			continue;
		}
		if (unlikely(rec.len > NICDRV_RX_BUF_LEN)) {
			oversize++;
			continue;
		}
		skb = napi_alloc_skb(napi, rec.len);
		if (unlikely(!skb)) {
			no_skb++;
			continue;
		}
		dma_sync_single_for_cpu(dev, rxq->dma[rec.index], rec.len, DMA_FROM_DEVICE);
		skb_put_data(skb, page_address(rxq->pages[rec.index]), rec.len);
		dma_sync_single_for_device(dev, rxq->dma[rec.index], rec.len, DMA_FROM_DEVICE);
		skb->protocol = eth_type_trans(skb, priv->ndev);
		pkts++;
		bytes += rec.len;
		napi_gro_receive(napi, skb);
	}
	if (r->to_repost)
		nic_core_rx_post(&priv->hw, priv->nic_base, r, r->to_repost);
	if (work) {
		u64_stats_update_begin(&rxq->syncp);
		rxq->packets += pkts;
		rxq->bytes += bytes;
		rxq->runt += runt;
		rxq->oversize += oversize;
		rxq->bad_index += bad_index;
		rxq->bad_status += bad_status;
		rxq->no_skb += no_skb;
		u64_stats_update_end(&rxq->syncp);
	}
	if (work < budget)
		napi_complete_done(napi, work);
	return work;
}
