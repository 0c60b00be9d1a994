// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_netdev.c: the NIC driver's net_device: set-up (one kernel TX queue per hardware TX queue
 * in use, netif_set_real_num_tx_queues; one RX queue), open/stop in the datapath's bring-up
 * order (frame FIFOs, coalescing, scheduler, vectors, TX queues, RX ring) and
 * ndo_get_stats64 from the driver's per-queue counters. Stop: queues stopped, vectors released
 * (NAPI disabled), the hardware queues drained and disabled, the last completions reclaimed,
 * then the rings freed. A queue that did not drain or an RX engine that did not reset may
 * still write into them: bus mastering is cleared before they are freed, and set again only
 * by an open that finds the device idle (every TX queue drained, the RX ring reset).
 *
 * While up, a watchdog (process context, every NICDRV_WATCHDOG_MS) reads pcie_cpl_link_downs:
 * a PCIe link-down loses the DMA writes in flight, and all-ones means the device is gone;
 * either runs the PCI error handlers (nic_main.c). It also looks for an RX ring stalled on a
 * lost completion record (nicdrv_rx_stalled), which the reset work restarts.
 *
 * Link: the nic block has no MAC/PHY link status register (sw/include/nic_regs.h), so the
 * carrier is on while the interface is up. MAC address: the SoC has none; a random one.
 * Interfaces: nicdrv_netdev_init (probe), nicdrv_open/stop (also ethtool -G/-L).
 */
#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/iopoll.h>

#include "nicdrv.h"

/* The device's DMA is over: every TX queue drained and the RX engine's ring reset. */
static bool nicdrv_dma_idle(struct nicdrv_priv *priv, u32 *drained, u32 *rx_cons)
{
	const u32 all = GENMASK(priv->hw_txq - 1, 0);

	*drained = (u32)nic_core_csr_read_wide(&priv->hw,
					       priv->nic_base + NIC_CSR_NIC_TXQ_DRAINED_ADDR,
					       NIC_CSR_NIC_TXQ_DRAINED_SIZE);
	*rx_cons = nic_core_rx_cons(&priv->hw, priv->nic_base);
	return (*drained & all) == all && *rx_cons == 0;
}

/* Wait until the device's DMA is over; its reads lost with a link end at its completion timeout. */
int nicdrv_dma_wait_idle(struct nicdrv_priv *priv)
{
	u32 drained, rx_cons;
	bool idle;

	return read_poll_timeout(nicdrv_dma_idle, idle, idle, 1000, NICDRV_IDLE_TIMEOUT_US, false,
				 priv, &drained, &rx_cons);
}

static void nicdrv_free_rings(struct nicdrv_priv *priv)
{
	unsigned int q;

	if (priv->drain_failed && !priv->dma_off) {
		pci_clear_master(priv->pdev);
		priv->dma_off = true;
		netdev_err(priv->ndev,
			   "the device did not stop its DMA: bus mastering off before its rings are freed; the interface opens again once the device is idle\n");
	}
	priv->drain_failed = false;

	for (q = 0; q < NIC_Q_MAX_TXQ; q++)
		nicdrv_tx_free(priv, &priv->txq[q]);
	nicdrv_rx_free(priv, &priv->rxq);
}

/* The register the watchdog reads: pcie_cpl_link_downs, else the identification MAGIC. */
static u32 nicdrv_health_read(struct nicdrv_priv *priv)
{
	return nic_core_rd32(&priv->hw, priv->has_cpl ?
			     priv->cpl_base + NIC_CSR_PCIE_CPL_LINK_DOWNS_ADDR :
			     NIC_CSR_INFO_MAGIC_ADDR);
}

static void nicdrv_watchdog(struct work_struct *work)
{
	struct nicdrv_priv *priv = container_of(to_delayed_work(work), struct nicdrv_priv,
						watchdog);
	u32 v = nicdrv_health_read(priv);

	if (v == ~0u) {
		netdev_err(priv->ndev, "the device reads all-ones: not responding, recovering\n");
		schedule_delayed_work(&priv->recover_work, 0);
		return;
	}
	if (priv->has_cpl && v != priv->link_downs) {
		netdev_err(priv->ndev,
			   "PCIe link went down (pcie_cpl_link_downs %u -> %u): DMA writes in flight are lost, recovering\n",
			   priv->link_downs, v);
		schedule_delayed_work(&priv->recover_work, 0);
		return;
	}
	if (nicdrv_rx_stalled(priv, &priv->rxq)) {
		set_bit(0, &priv->rx_stalled);
		schedule_work(&priv->reset_work);
	}
	schedule_delayed_work(&priv->watchdog, msecs_to_jiffies(NICDRV_WATCHDOG_MS));
}

int nicdrv_open(struct net_device *ndev)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	u32 drained, rx_cons;
	unsigned int q;
	int err;

	if (priv->dma_off) {
		if (!nicdrv_dma_idle(priv, &drained, &rx_cons)) {
			netdev_err(ndev,
				   "not opened: the device has not finished the DMA it was doing when it was stopped (nic_txq_drained 0x%x, nic_rxe_cons %u); reset it or reload the driver\n",
				   drained, rx_cons);
			return -EBUSY;
		}
		pci_set_master(priv->pdev);
		priv->dma_off = false;
	}
	/* Before the rings: a link-down from here on is the watchdog's. */
	if (priv->has_cpl)
		priv->link_downs = nicdrv_health_read(priv);
	for (q = 0; q < priv->ntxq; q++) {
		priv->txq[q].index = q;
		err = nicdrv_tx_alloc(priv, &priv->txq[q]);
		if (err)
			goto err_free;
	}
	err = nicdrv_rx_alloc(priv, &priv->rxq);
	if (err)
		goto err_free;

	nic_core_fifos_min(&priv->hw, priv->nic_base, NICDRV_RX_BUF_LEN, ETH_HLEN);
	nic_core_coalesce_write(&priv->hw, priv->nic_base, &priv->coal, priv->tick_cycles);
	nic_core_sched(&priv->hw, priv->nic_base, NIC_TX_SCHED_MODE_RR, priv->hw_txq);
	/* Vectors and NAPI before the rings: no completion interrupt can find them missing. */
	err = nicdrv_irq_request(priv);
	if (err)
		goto err_free;
	for (q = 0; q < priv->ntxq; q++) {
		err = nicdrv_tx_start(priv, &priv->txq[q]);
		if (err)
			goto err_stop;
	}
	err = nicdrv_rx_start(priv, &priv->rxq);
	if (err)
		goto err_stop;
	priv->up = true;
	netif_carrier_on(ndev);
	netif_tx_start_all_queues(ndev);
	schedule_delayed_work(&priv->watchdog, msecs_to_jiffies(NICDRV_WATCHDOG_MS));
	return 0;

err_stop:
	nicdrv_irq_release(priv);
	for (q = 0; q < priv->ntxq; q++)
		nicdrv_tx_stop(priv, &priv->txq[q]);
	nicdrv_rx_stop(priv, &priv->rxq);
err_free:
	nicdrv_free_rings(priv);
	return err;
}

int nicdrv_stop(struct net_device *ndev)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	unsigned int q;

	if (!priv->up)	/* dev_close after a failed reopen (ethtool -G/-L) */
		return 0;
	priv->up = false;
	cancel_delayed_work_sync(&priv->watchdog);
	bitmap_zero(priv->tx_timed_out, NIC_Q_MAX_TXQ);
	clear_bit(0, &priv->rx_stalled);
	netif_tx_disable(ndev);
	netif_carrier_off(ndev);
	nicdrv_irq_release(priv);
	for (q = 0; q < priv->ntxq; q++)
		nicdrv_tx_stop(priv, &priv->txq[q]);
	nicdrv_rx_stop(priv, &priv->rxq);
	/* Completed frames the last polls did not see, then the rest dropped. */
	for (q = 0; q < priv->ntxq; q++)
		nicdrv_tx_reclaim(priv, &priv->txq[q], 0);
	nicdrv_free_rings(priv);
	return 0;
}

static void nicdrv_txq_stats(struct nicdrv_txq *txq, u64 *packets, u64 *bytes, u64 *errors,
			     u64 *reset_dropped, u64 *lost_wb, u64 *oversize, u64 *map_err)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&txq->syncp);
		*packets = txq->packets;
		*bytes = txq->bytes;
		*errors = txq->errors;
		*reset_dropped = txq->reset_dropped;
		*lost_wb = txq->lost_wb;
	} while (u64_stats_fetch_retry(&txq->syncp, start));
	do {
		start = u64_stats_fetch_begin(&txq->xmit_syncp);
		*oversize = txq->oversize;
		*map_err = txq->map_err;
	} while (u64_stats_fetch_retry(&txq->xmit_syncp, start));
}

static void nicdrv_rxq_stats(struct nicdrv_rxq *rxq, u64 *v, u64 *packets, u64 *bytes)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&rxq->syncp);
		*packets = rxq->packets;
		*bytes = rxq->bytes;
		v[NICDRV_STAT_RX_RUNT] = rxq->runt;
		v[NICDRV_STAT_RX_OVERSIZE] = rxq->oversize;
		v[NICDRV_STAT_RX_BAD_INDEX] = rxq->bad_index;
		v[NICDRV_STAT_RX_BAD_STATUS] = rxq->bad_status;
		v[NICDRV_STAT_RX_NO_SKB] = rxq->no_skb;
		v[NICDRV_STAT_RX_NO_PAGE] = rxq->no_page;
		v[NICDRV_STAT_RX_RESETS] = rxq->resets;
		v[NICDRV_STAT_RX_RESET_DROPPED] = rxq->reset_dropped;
	} while (u64_stats_fetch_retry(&rxq->syncp, start));
}

const char *const nicdrv_stat_names[NICDRV_NSTATS] = {
	[NICDRV_STAT_RX_RUNT] = "drv_rx_runt",
	[NICDRV_STAT_RX_OVERSIZE] = "drv_rx_oversize",
	[NICDRV_STAT_RX_BAD_INDEX] = "drv_rx_bad_index",
	[NICDRV_STAT_RX_BAD_STATUS] = "drv_rx_bad_status",
	[NICDRV_STAT_RX_NO_SKB] = "drv_rx_no_skb",
	[NICDRV_STAT_RX_NO_PAGE] = "drv_rx_no_page",
	[NICDRV_STAT_RX_RESETS] = "drv_rx_resets",
	[NICDRV_STAT_RX_RESET_DROPPED] = "drv_rx_reset_dropped",
	[NICDRV_STAT_TX_OVERSIZE] = "drv_tx_oversize",
	[NICDRV_STAT_TX_MAP_ERR] = "drv_tx_map_err",
	[NICDRV_STAT_TX_RESET_DROPPED] = "drv_tx_reset_dropped",
	[NICDRV_STAT_TX_LOST_WB] = "drv_tx_lost_wb",
	[NICDRV_STAT_PCI_RECOVERIES] = "drv_pci_recoveries",
};

/* The drv_* counts of ethtool -S, TX summed over the queues. */
void nicdrv_stats_read(struct nicdrv_priv *priv, u64 *v)
{
	u64 packets, bytes, errors, reset_dropped, lost_wb, oversize, map_err;
	unsigned int q;

	memset(v, 0, NICDRV_NSTATS * sizeof(*v));
	nicdrv_rxq_stats(&priv->rxq, v, &packets, &bytes);
	for (q = 0; q < NIC_Q_MAX_TXQ; q++) {
		nicdrv_txq_stats(&priv->txq[q], &packets, &bytes, &errors, &reset_dropped, &lost_wb,
				 &oversize, &map_err);
		v[NICDRV_STAT_TX_OVERSIZE] += oversize;
		v[NICDRV_STAT_TX_MAP_ERR] += map_err;
		v[NICDRV_STAT_TX_RESET_DROPPED] += reset_dropped;
		v[NICDRV_STAT_TX_LOST_WB] += lost_wb;
	}
	v[NICDRV_STAT_PCI_RECOVERIES] = priv->pci_recoveries;
}

static void nicdrv_get_stats64(struct net_device *ndev, struct rtnl_link_stats64 *s)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	u64 packets, bytes, errors, reset_dropped, lost_wb, oversize, map_err;
	u64 v[NICDRV_NSTATS];
	unsigned int q;

	for (q = 0; q < NIC_Q_MAX_TXQ; q++) {
		nicdrv_txq_stats(&priv->txq[q], &packets, &bytes, &errors, &reset_dropped, &lost_wb,
				 &oversize, &map_err);
		s->tx_packets += packets;
		s->tx_bytes += bytes;
		s->tx_dropped += reset_dropped + oversize + map_err;
		s->tx_errors += errors;
	}
	nicdrv_rxq_stats(&priv->rxq, v, &packets, &bytes);
	s->rx_packets = packets;
	s->rx_bytes = bytes;
	s->rx_dropped = v[NICDRV_STAT_RX_NO_SKB] + v[NICDRV_STAT_RX_RESET_DROPPED];
	s->rx_length_errors = v[NICDRV_STAT_RX_RUNT] + v[NICDRV_STAT_RX_OVERSIZE];
	s->rx_errors = s->rx_length_errors + v[NICDRV_STAT_RX_BAD_INDEX] +
		       v[NICDRV_STAT_RX_BAD_STATUS];
}

static const struct net_device_ops nicdrv_netdev_ops = {
	.ndo_open = nicdrv_open,
	.ndo_stop = nicdrv_stop,
	.ndo_start_xmit = nicdrv_start_xmit,
	.ndo_get_stats64 = nicdrv_get_stats64,
	.ndo_tx_timeout = nicdrv_tx_timeout,
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

int nicdrv_netdev_init(struct nicdrv_priv *priv)
{
	struct net_device *ndev = priv->ndev;
	unsigned int q;
	int err;

	INIT_WORK(&priv->reset_work, nicdrv_reset_task);
	INIT_DELAYED_WORK(&priv->watchdog, nicdrv_watchdog);
	INIT_DELAYED_WORK(&priv->recover_work, nicdrv_recover_task);
	ndev->netdev_ops = &nicdrv_netdev_ops;
	ndev->ethtool_ops = &nicdrv_ethtool_ops;
	ndev->hw_features = NETIF_F_SG;
	ndev->features = NETIF_F_SG;
	ndev->min_mtu = ETH_MIN_MTU;
	ndev->max_mtu = NICDRV_RX_BUF_LEN - VLAN_ETH_HLEN;
	eth_hw_addr_random(ndev);
	netif_carrier_off(ndev);	/* until open */
	for (q = 0; q < NIC_Q_MAX_TXQ; q++) {
		priv->txq[q].index = q;
		u64_stats_init(&priv->txq[q].syncp);
		u64_stats_init(&priv->txq[q].xmit_syncp);
	}
	u64_stats_init(&priv->rxq.syncp);
	err = netif_set_real_num_tx_queues(ndev, priv->ntxq);
	if (!err)
		err = netif_set_real_num_rx_queues(ndev, 1);
	return err;
}
