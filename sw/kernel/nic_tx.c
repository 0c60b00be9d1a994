// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_tx.c: the NIC driver's TX queues on the shared core (nic_core_tx_put/doorbell/reclaim,
 * nic_core_txq_cfg/drained/start): one kernel TX queue per hardware TX queue.
 *
 * An skb takes one descriptor per piece (head, then each page fragment; EOP on the last), all
 * mapped for DMA; the doorbell is rung when the stack has no more frames for the queue
 * (netdev_xmit_more() false, also when that last frame is dropped), when BQL says so
 * (__netdev_tx_sent_queue) or when the queue stops. Completions come from the queue's
 * consumer-index writeback in host memory, read by the TX vector's NAPI poll (nic_irq.c), and
 * are reported to BQL (netdev_tx_completed_queue). Memory: per queue one coherent block, the
 * descriptor ring then the 16-byte writeback slot, and the per-descriptor mapping array.
 */
#include <linux/dma-mapping.h>
#include <linux/iopoll.h>
#include <linux/rtnetlink.h>

#include "nicdrv.h"

int nicdrv_tx_alloc(struct nicdrv_priv *priv, struct nicdrv_txq *txq)
{
	struct nic_txq *t = &txq->ring;
	const unsigned int size = priv->tx_ring_size;

	txq->bufs = kcalloc(size, sizeof(*txq->bufs), GFP_KERNEL);
	if (!txq->bufs)
		return -ENOMEM;
	txq->mem_len = ALIGN(size * NIC_TX_DESC_BYTES, 64) + NIC_TX_WB_BYTES;
	txq->mem = dma_alloc_coherent(&priv->pdev->dev, txq->mem_len, &txq->mem_dma, GFP_KERNEL);
	if (!txq->mem) {
		kfree(txq->bufs);
		txq->bufs = NULL;
		return -ENOMEM;
	}
	memset(t, 0, sizeof(*t));
	t->size = size;
	t->size_log2 = ilog2(size);
	t->limit = size - 1;
	t->desc = txq->mem;
	t->desc_bus = txq->mem_dma;
	t->wb = txq->mem + ALIGN(size * NIC_TX_DESC_BYTES, 64);
	t->wb_bus = txq->mem_dma + ALIGN(size * NIC_TX_DESC_BYTES, 64);
	return 0;
}

static void nicdrv_tx_unmap(struct nicdrv_priv *priv, struct nicdrv_tx_buf *b)
{
	if (b->page)
		dma_unmap_page(&priv->pdev->dev, b->dma, b->len, DMA_TO_DEVICE);
	else
		dma_unmap_single(&priv->pdev->dev, b->dma, b->len, DMA_TO_DEVICE);
	b->len = 0;
}

void nicdrv_tx_free(struct nicdrv_priv *priv, struct nicdrv_txq *txq)
{
	struct nic_txq *t = &txq->ring;
	unsigned int i;

	if (!txq->mem)
		return;
	/* Whatever the device did not complete: unmapped and dropped. */
	for (i = t->next_to_clean; i != t->next_to_use; i = (i + 1) & (t->size - 1)) {
		struct nicdrv_tx_buf *b = &txq->bufs[i];

		if (b->len)
			nicdrv_tx_unmap(priv, b);
		if (b->skb)
			dev_kfree_skb_any(b->skb);
		b->skb = NULL;
	}
	netdev_tx_reset_queue(netdev_get_tx_queue(priv->ndev, txq->index));
	dma_free_coherent(&priv->pdev->dev, txq->mem_len, txq->mem, txq->mem_dma);
	txq->mem = NULL;
	kfree(txq->bufs);
	txq->bufs = NULL;
}

/* Disable and wait until drained. A queue found drained already (disabled behind the driver:
 * a device fault or reset) is not written: a configuration write resets a drained queue, and
 * with it the final consumer index the reset path reads from nic_txq_cons.
 */
int nicdrv_tx_stop(struct nicdrv_priv *priv, struct nicdrv_txq *txq)
{
	struct nic_txq *t = &txq->ring;
	bool drained;
	int err;

	if (!nic_core_txq_drained(&priv->hw, priv->nic_base, txq->index))
		nic_core_txq_cfg(&priv->hw, priv->nic_base, txq->index, t->size_log2, false,
				 t->limit);
	err = read_poll_timeout(nic_core_txq_drained, drained, drained, 10, NICDRV_TIMEOUT_US,
				false, &priv->hw, priv->nic_base, txq->index);
	if (err) {
		priv->drain_failed = true;
		netdev_err(priv->ndev, "TX queue %u did not drain within %u us (nic_txq_drained)\n",
			   txq->index, NICDRV_TIMEOUT_US);
	}
	return err;
}

int nicdrv_tx_start(struct nicdrv_priv *priv, struct nicdrv_txq *txq)
{
	int err = nicdrv_tx_stop(priv, txq);

	if (err)
		return err;
	WRITE_ONCE(txq->ring.wb->cons, 0);
	if (nic_core_txq_start(&priv->hw, priv->nic_base, &txq->ring, txq->index)) {
		netdev_err(priv->ndev, "TX queue %u: ring %#llx or writeback %#llx not 16-byte aligned\n",
			   txq->index, txq->ring.desc_bus, txq->ring.wb_bus);
		return -EINVAL;
	}
	return 0;
}

netdev_tx_t nicdrv_start_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	struct nicdrv_txq *txq = &priv->txq[skb_get_queue_mapping(skb)];
	struct netdev_queue *nq = netdev_get_tx_queue(ndev, txq->index);
	struct device *dev = &priv->pdev->dev;
	struct nic_txq *t = &txq->ring;
	const unsigned int nfrags = skb_shinfo(skb)->nr_frags;
	const u32 first = t->next_to_use;
	unsigned int i, len;
	dma_addr_t dma;
	u32 idx;
	bool ring, oversize;

	if (unlikely(nic_core_tx_room(t) < nfrags + 1)) {
		/* Not reached: the queue stops (and rings) while room for a whole skb is left. */
		netif_tx_stop_queue(nq);
		nic_core_tx_doorbell(&priv->hw, priv->nic_base, t, txq->index);
		return NETDEV_TX_BUSY;
	}
	if (unlikely(skb->len > NIC_Q_FRAME_MAX))
		goto drop;

	len = skb_headlen(skb);
	dma = dma_map_single(dev, skb->data, len, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, dma))
		goto drop;
	idx = nic_core_tx_put(t, dma, len, nfrags == 0);
	txq->bufs[idx] = (struct nicdrv_tx_buf){ .dma = dma, .len = len, .page = false };
	for (i = 0; i < nfrags; i++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[i];

		len = skb_frag_size(frag);
		dma = skb_frag_dma_map(dev, frag, 0, len, DMA_TO_DEVICE);
		if (dma_mapping_error(dev, dma))
			goto unmap;
		idx = nic_core_tx_put(t, dma, len, i + 1 == nfrags);
		txq->bufs[idx] = (struct nicdrv_tx_buf){ .dma = dma, .len = len, .page = true };
	}
	txq->bufs[idx].skb = skb;
	skb_tx_timestamp(skb);

	ring = __netdev_tx_sent_queue(nq, skb->len, netdev_xmit_more());
	if (unlikely(nic_core_tx_room(t) < NICDRV_TX_DESC_MAX)) {
		netif_tx_stop_queue(nq);
		ring = true;
		/* A completion may have freed room meanwhile (nicdrv_tx_clean's barrier pairs). */
		smp_mb();
		if (nic_core_tx_room(t) >= NICDRV_TX_DESC_MAX)
			netif_tx_start_queue(nq);
	}
	if (ring)
		nic_core_tx_doorbell(&priv->hw, priv->nic_base, t, txq->index);
	return NETDEV_TX_OK;

unmap:
	for (idx = first; idx != t->next_to_use; idx = (idx + 1) & (t->size - 1))
		nicdrv_tx_unmap(priv, &txq->bufs[idx]);
	t->next_to_use = first;
drop:
	oversize = skb->len > NIC_Q_FRAME_MAX;
	dev_kfree_skb_any(skb);
	u64_stats_update_begin(&txq->xmit_syncp);
	if (oversize)
		txq->oversize++;
	else
		txq->map_err++;
	u64_stats_update_end(&txq->xmit_syncp);
	/* Frames posted with xmit_more before this one wait for the doorbell it would have rung. */
	if (!netdev_xmit_more())
		nic_core_tx_doorbell(&priv->hw, priv->nic_base, t, txq->index);
	return NETDEV_TX_OK;
}

/* The stack's watchdog: a queue stopped too long. Its ring state for the log, then the reset
 * path (docs/faults.md) in process context: the watchdog runs in softirq, the drain sleeps.
 */
void nicdrv_tx_timeout(struct net_device *ndev, unsigned int q)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	struct nic_txq *t = &priv->txq[q].ring;

	netdev_err(ndev,
		   "TX queue %u timed out: next_to_use %u, next_to_clean %u, rung %u, written-back index %u, nic_txq_active 0x%x, nic_txq_drained 0x%x; resetting it\n",
		   q, t->next_to_use, t->next_to_clean, t->rung,
		   t->wb ? NIC_CORE_LE16_TO_CPU(READ_ONCE(t->wb->cons)) : 0,
		   nic_core_rd32(&priv->hw, priv->nic_base + NIC_CSR_NIC_TXQ_ACTIVE_ADDR),
		   nic_core_rd32(&priv->hw, priv->nic_base + NIC_CSR_NIC_TXQ_DRAINED_ADDR));
	set_bit(q, priv->tx_timed_out);
	schedule_work(&priv->reset_work);
}

/* The TX reset path of one queue, as the host library's nic_q_tx_reset: its NAPI and kernel
 * queue stopped (under the queue's xmit lock, so no start_xmit is still posting); the hardware
 * queue disabled and waited drained (descriptors in flight complete, an open frame ends with
 * NO_EOP); the completions the device's final consumer index shows reclaimed (read from
 * nic_txq_cons: the last writeback may have been lost with the link); the descriptors it did
 * not pass were never fetched: unmapped, their skbs dropped and counted (tx_dropped,
 * drv_tx_reset_dropped); then ring base and writeback address again and enable (the ring
 * restarts empty at index 0), and only then the queue woken: nothing posts to the ring, nor
 * reads its indices, while it is rebuilt. A queue that does not drain stays stopped (logged
 * by nicdrv_tx_stop).
 */
static void nicdrv_tx_reset(struct nicdrv_priv *priv, struct nicdrv_txq *txq)
{
	struct netdev_queue *nq = netdev_get_tx_queue(priv->ndev, txq->index);
	struct nicdrv_vec *vec = nicdrv_txq_vec(priv, txq->index);
	struct nic_txq *t = &txq->ring;
	unsigned int descs = 0, frames = 0;
	u32 i;

	if (!txq->mem)
		return;
	if (vec->irq)
		napi_disable(&vec->napi);
	__netif_tx_lock_bh(nq);
	netif_tx_stop_queue(nq);
	__netif_tx_unlock_bh(nq);
	if (nicdrv_tx_stop(priv, txq))
		goto out;
	if (nic_core_txq_sync_cons(&priv->hw, priv->nic_base, t, txq->index))
		netdev_warn(priv->ndev,
			    "TX queue %u: its last writeback was lost, consumer index %u taken from nic_txq_cons\n",
			    txq->index, NIC_CORE_LE16_TO_CPU(READ_ONCE(t->wb->cons)));
	nicdrv_tx_reclaim(priv, txq, 0);	/* the queue stays stopped until restarted */
	for (i = t->next_to_clean; i != t->next_to_use; i = (i + 1) & (t->size - 1)) {
		struct nicdrv_tx_buf *b = &txq->bufs[i];

		descs++;
		if (b->len)
			nicdrv_tx_unmap(priv, b);
		if (b->skb) {
			frames++;
			dev_kfree_skb_any(b->skb);
			b->skb = NULL;
		}
	}
	netdev_tx_reset_queue(nq);
	u64_stats_update_begin(&txq->syncp);
	txq->reset_dropped += frames;
	txq->lost_wb = t->stale_wb;
	txq->errors = t->errors;
	u64_stats_update_end(&txq->syncp);
	WRITE_ONCE(t->wb->cons, 0);
	if (nic_core_txq_start(&priv->hw, priv->nic_base, t, txq->index)) {
		netdev_err(priv->ndev, "TX queue %u not restarted: ring or writeback not 16-byte aligned\n",
			   txq->index);
		goto out;
	}
	netdev_warn(priv->ndev,
		    "TX queue %u reset: %u descriptors (%u frames) never fetched, dropped\n",
		    txq->index, descs, frames);
	netif_tx_wake_queue(nq);
out:
	if (vec->irq)
		napi_enable(&vec->napi);
}

void nicdrv_reset_task(struct work_struct *work)
{
	struct nicdrv_priv *priv = container_of(work, struct nicdrv_priv, reset_work);
	unsigned int q;

	rtnl_lock();
	for (q = 0; q < NIC_Q_MAX_TXQ; q++)
		if (test_and_clear_bit(q, priv->tx_timed_out) && priv->up && q < priv->ntxq)
			nicdrv_tx_reset(priv, &priv->txq[q]);
	if (test_and_clear_bit(0, &priv->rx_stalled) && priv->up)
		nicdrv_rx_restart(priv, &priv->rxq);
	rtnl_unlock();
}

/* Unmap and free what the device completed, count it, report it to BQL; the number of
 * descriptors reclaimed. Never wakes the queue: the reset and stop paths hold it stopped.
 */
int nicdrv_tx_reclaim(struct nicdrv_priv *priv, struct nicdrv_txq *txq, int budget)
{
	struct netdev_queue *nq = netdev_get_tx_queue(priv->ndev, txq->index);
	struct nic_txq *t = &txq->ring;
	unsigned int pkts = 0, bytes = 0;
	u32 from = t->next_to_clean, cons, i;
	int done;

	if (!txq->mem)
		return 0;
	done = nic_core_tx_reclaim(t, &cons);
	if (unlikely(done < 0)) {
		netdev_err_once(priv->ndev,
				"TX queue %u: written-back index %u is beyond the %u descriptors posted from %u\n",
				txq->index, cons, nic_core_tx_pending(t), from);
		return 0;
	}
	for (i = 0; i < (u32)done; i++) {
		struct nicdrv_tx_buf *b = &txq->bufs[(from + i) & (t->size - 1)];

		nicdrv_tx_unmap(priv, b);
		if (b->skb) {
			pkts++;
			bytes += b->skb->len;
			napi_consume_skb(b->skb, budget);
			b->skb = NULL;
		}
	}
	if (!done)
		return 0;
	u64_stats_update_begin(&txq->syncp);
	txq->packets += pkts;
	txq->bytes += bytes;
	txq->errors = t->errors;
	u64_stats_update_end(&txq->syncp);
	netdev_tx_completed_queue(nq, pkts, bytes);
	return done;
}

/* The NAPI poll's TX work: reclaim, then wake a queue stopped for room once there is. */
void nicdrv_tx_clean(struct nicdrv_priv *priv, struct nicdrv_txq *txq, int budget)
{
	struct netdev_queue *nq = netdev_get_tx_queue(priv->ndev, txq->index);

	if (!nicdrv_tx_reclaim(priv, txq, budget))
		return;
	/* next_to_clean before the stopped test (nicdrv_start_xmit's barrier pairs). */
	smp_mb();
	if (netif_tx_queue_stopped(nq) && nic_core_tx_room(&txq->ring) >= NICDRV_TX_DESC_MAX &&
	    netif_running(priv->ndev))
		netif_tx_wake_queue(nq);
}
