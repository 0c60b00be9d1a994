// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_rx.c: the NIC driver's RX ring on the shared core (nic_core_rx_desc/take/post,
 * nic_core_rx_setup/start): page-based buffers and NAPI.
 *
 * Every ring position p owns one page from the ring's page_pool (PP_FLAG_DMA_MAP: mapped
 * DMA_FROM_DEVICE by the pool, PP_FLAG_DMA_SYNC_DEV: synced for the device up to
 * NICDRV_RX_BUF_LEN when it comes from the pool), posted as a NICDRV_RX_BUF_LEN buffer at
 * offset 0; a buffer is reposted at its own position (the core's rule), so a position whose
 * page went up the stack gets a new page and its descriptor is rewritten before the doorbell.
 * The poll takes completion records (nic_core_rx_take) and, per good frame (dma_sync for the
 * CPU first): up to rx_copybreak bytes (ethtool --set-tunable rx-copybreak, default
 * NICDRV_RX_COPYBREAK, as e1000e's copybreak; never below NICDRV_RX_HDR_LEN, what the skb's
 * head takes anyway) are copied into a NAPI skb and the page stays at its position (synced
 * back to the device); a longer frame keeps its page: its headers (eth_get_headlen, at most
 * NICDRV_RX_HDR_LEN) are copied into the skb's head and the rest is the page as a fragment
 * (skb_add_rx_frag, skb_mark_for_recycle: the stack gives the page back to the pool), as igb's
 * construct_skb; when the pool has no page the frame is copied whole and the page kept
 * (drv_rx_no_page). The skb's head and shared info never lie in a page the device may write
 * (napi_build_skb would put them there). The frames go to GRO and the consumed buffers are
 * reposted with one doorbell (nic_core_rx_post). Nothing the device writes is trusted: a
 * record whose index names no buffer it holds (the core refuses it), whose status is not OK,
 * or whose length is below an Ethernet header or above the buffer is dropped and counted
 * (ethtool -S drv_rx_*); the RX FIFO drops runts too (rx_fifo_drop_runt).
 * A lost completion record (a write lost with the link) leaves the poll waiting at its position
 * while the device goes on: the watchdog (nic_netdev.c) finds the ring stalled and the reset
 * work restarts it (nicdrv_rx_restart), as the TX reset path does a queue; the pages stay at
 * their positions.
 * Memory: one coherent block, the descriptor ring then the completion ring; the page array and
 * the page_pool. At free the ring's pages go back to the pool and the pool is destroyed: pages
 * still in the stack come back to it later, and it unmaps and frees them then.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/iopoll.h>
#include <net/page_pool.h>

#include "nicdrv.h"

#if !IS_ENABLED(CONFIG_PAGE_POOL)
#error "nicdrv's RX needs CONFIG_PAGE_POOL (no prompt: selected by BPF_SYSCALL or a driver)"
#endif

static void nicdrv_rx_free_pages(struct nicdrv_rxq *rxq)
{
	unsigned int p;

	for (p = 0; p < rxq->ring.size; p++) {
		if (!rxq->pages[p])
			continue;
		page_pool_put_full_page(rxq->pool, rxq->pages[p], false);
		rxq->pages[p] = NULL;
	}
}

int nicdrv_rx_alloc(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq)
{
	struct device *dev = &priv->pdev->dev;
	struct nic_rxq *r = &rxq->ring;
	const unsigned int size = priv->rx_ring_size;
	const size_t ring_len = (size_t)size * NIC_RX_DESC_BYTES;
	struct page_pool_params pp = {
		.flags = PP_FLAG_DMA_MAP | PP_FLAG_DMA_SYNC_DEV,
		.pool_size = size,
		.nid = dev_to_node(dev),
		.dev = dev,
		.dma_dir = DMA_FROM_DEVICE,
		.max_len = NICDRV_RX_BUF_LEN,
		.offset = 0,
	};
	struct page_pool *pool;
	unsigned int p;

	memset(r, 0, sizeof(*r));
	r->size = size;
	r->size_log2 = ilog2(size);
	pool = page_pool_create(&pp);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	rxq->pool = pool;
	rxq->pages = kcalloc(size, sizeof(*rxq->pages), GFP_KERNEL);
	rxq->mem_len = ring_len + (size_t)size * NIC_RX_CPL_BYTES;
	rxq->mem = dma_alloc_coherent(dev, rxq->mem_len, &rxq->mem_dma, GFP_KERNEL);
	if (!rxq->pages || !rxq->mem)
		goto err;
	r->desc = rxq->mem;
	r->desc_bus = rxq->mem_dma;
	r->cpl = rxq->mem + ring_len;
	r->cpl_bus = rxq->mem_dma + ring_len;
	for (p = 0; p < size; p++) {
		struct page *page = page_pool_alloc_pages(pool, GFP_KERNEL);

		if (!page)
			goto err;
		rxq->pages[p] = page;
		nic_core_rx_desc(r, p, page_pool_get_dma_addr(page), NICDRV_RX_BUF_LEN);
	}
	return 0;

err:
	nicdrv_rx_free(priv, rxq);
	return -ENOMEM;
}

void nicdrv_rx_free(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq)
{
	if (rxq->pages)
		nicdrv_rx_free_pages(rxq);
	if (rxq->mem)
		dma_free_coherent(&priv->pdev->dev, rxq->mem_len, rxq->mem, rxq->mem_dma);
	rxq->mem = NULL;
	kfree(rxq->pages);
	rxq->pages = NULL;
	/* Pages the stack still holds come back to the pool later: it frees them then. */
	if (rxq->pool)
		page_pool_destroy(rxq->pool);
	rxq->pool = NULL;
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

/*
 * A good frame of len bytes (checked against the buffer) in position p's page: an skb, or NULL
 * (no_skb) with the page kept. A frame above the copybreak takes the page with it when the pool
 * has a new one for position p; else it is copied and the page kept (*no_page).
 */
static struct sk_buff *nicdrv_rx_skb(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq,
				     struct napi_struct *napi, unsigned int p, unsigned int len,
				     unsigned int *no_page)
{
	struct device *dev = &priv->pdev->dev;
	struct page *page = rxq->pages[p], *fresh = NULL;
	const dma_addr_t dma = page_pool_get_dma_addr(page);
	const void *va = page_address(page);
	struct sk_buff *skb;
	unsigned int hlen;

	if (len > max(READ_ONCE(priv->rx_copybreak), NICDRV_RX_HDR_LEN)) {
		fresh = page_pool_dev_alloc_pages(rxq->pool);
		if (unlikely(!fresh))
			(*no_page)++;
	}
	skb = napi_alloc_skb(napi, fresh ? NICDRV_RX_HDR_LEN : len);
	if (unlikely(!skb)) {
		if (fresh)
			page_pool_recycle_direct(rxq->pool, fresh);
		return NULL;
	}
	dma_sync_single_for_cpu(dev, dma, len, DMA_FROM_DEVICE);
	if (!fresh) {
		/* Copied: the page stays at its position, the device's again. */
		skb_put_data(skb, va, len);
		dma_sync_single_for_device(dev, dma, len, DMA_FROM_DEVICE);
		return skb;
	}
	/* The headers into the head (len > NICDRV_RX_HDR_LEN >= hlen), the rest as the page. */
	hlen = eth_get_headlen(priv->ndev, va, NICDRV_RX_HDR_LEN);
	skb_put_data(skb, va, hlen);
	skb_add_rx_frag(skb, 0, page, hlen, len - hlen, PAGE_SIZE);
	skb_mark_for_recycle(skb);
	rxq->pages[p] = fresh;
	nic_core_rx_desc(&rxq->ring, p, page_pool_get_dma_addr(fresh), NICDRV_RX_BUF_LEN);
	return skb;
}

int nicdrv_rx_poll(struct nicdrv_priv *priv, struct napi_struct *napi, int budget)
{
	struct nicdrv_rxq *rxq = &priv->rxq;
	struct nic_rxq *r = &rxq->ring;
	struct nic_core_rx_rec rec;
	unsigned int pkts = 0, bytes = 0, runt = 0, oversize = 0, bad_index = 0, bad_status = 0;
	unsigned int no_skb = 0, no_page = 0;
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
		skb = nicdrv_rx_skb(priv, rxq, napi, rec.index, rec.len, &no_page);
		if (unlikely(!skb)) {
			no_skb++;
			continue;
		}
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
		rxq->no_page += no_page;
		u64_stats_update_end(&rxq->syncp);
	}
	if (work < budget)
		napi_complete_done(napi, work);
	return work;
}
