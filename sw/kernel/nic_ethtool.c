// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_ethtool.c: the NIC driver's ethtool operations (as e1000e's ethtool.c for the coalescing
 * and statistics ones).
 *
 *   -c/-C   the interrupt coalescer (rtl/nic/irq_coalescer.py), one setting per direction:
 *             rx/tx-usecs       nic_{rx,tx}irq_usecs         delay timer (restarted per frame)
 *             rx/tx-frames      nic_{rx,tx}irq_frames        frame count
 *             rx/tx-usecs-irq   nic_{rx,tx}irq_abs_usecs     absolute timer (from the first
 *                                                            frame not yet covered)
 *             rx/tx-usecs-high  nic_{rx,tx}irq_min_interval  least time between interrupts
 *           each 0..65535; anything else (adaptive, *-frames-irq, *-low, rates) is refused
 *           by the ethtool core (supported_coalesce_params), a value out of range with -EINVAL.
 *   -S      every nic_* status register (the generated table, nic_core_counter_defs), then the
 *           per TX queue and per TX vector counters (NIC_CONTRACT_ARRAY_REGS), then the
 *           driver's own drops (drv_*: nicdrv_stat_names).
 *   -g/-G   ring sizes (powers of two, NICDRV_RING_MIN..4096); -l/-L TX queues (1 RX).
 *   --get/set-tunable rx-copybreak: RX frames up to it copied, their page kept (nic_rx.c),
 *           0..NICDRV_RX_BUF_LEN (all copied), taken by the next poll.
 *   -i      driver, design version, PCI address; -d the nic block's registers.
 *   -T      software timestamps (skb_tx_timestamp in start_xmit, the stack's on receive); the
 *           RX completion's device timestamp is not a PTP clock: no hardware timestamping.
 */
#include <linux/ethtool.h>
#include <linux/netlink.h>

#include "nicdrv.h"

struct nicdrv_array_reg {
	const char *fmt;	/* ethtool -S name, a format of the element */
	u32 addr;		/* in the nic block */
	unsigned int words;
};

#define NICDRV_ARRAY_REG(name, NAME, kind, fmt, desc) \
	{ fmt, NIC_CSR_NIC_##NAME##_ADDR, NIC_CSR_NIC_##NAME##_SIZE },

static const struct nicdrv_array_reg queue_regs[] = { NIC_CONTRACT_QUEUE_REGS(NICDRV_ARRAY_REG) };
static const struct nicdrv_array_reg vector_regs[] = { NIC_CONTRACT_VECTOR_REGS(NICDRV_ARRAY_REG) };
#undef NICDRV_ARRAY_REG

static void nicdrv_get_drvinfo(struct net_device *ndev, struct ethtool_drvinfo *info)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);

	strscpy(info->driver, NICDRV_NAME, sizeof(info->driver));
	snprintf(info->fw_version, sizeof(info->fw_version), "design %u.%u",
		 priv->design_version >> 16, priv->design_version & 0xffff);
	strscpy(info->bus_info, pci_name(priv->pdev), sizeof(info->bus_info));
}

/* --- -d: the nic block, from 0 to its last status register ---------------------------------- */

static u32 nicdrv_regs_bytes(void)
{
	u32 end = 0, e;
	unsigned int i;

	for (i = 0; i < nic_core_ncounters; i++) {
		e = (u32)nic_core_counter_defs[i].addr + 4 * nic_core_counter_defs[i].words;
		end = max(end, e);
	}
	for (i = 0; i < ARRAY_SIZE(queue_regs); i++)
		end = max(end, queue_regs[i].addr + 4 * queue_regs[i].words);
	for (i = 0; i < ARRAY_SIZE(vector_regs); i++)
		end = max(end, vector_regs[i].addr + 4 * vector_regs[i].words);
	return end;
}

static int nicdrv_get_regs_len(struct net_device *ndev)
{
	return nicdrv_regs_bytes();
}

static void nicdrv_get_regs(struct net_device *ndev, struct ethtool_regs *regs, void *p)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	u32 *v = p, off;

	regs->version = NIC_RB_NIC_VERSION;
	for (off = 0; off < nicdrv_regs_bytes(); off += 4)
		*v++ = nic_core_rd32(&priv->hw, priv->nic_base + off);
}

/* --- -S -------------------------------------------------------------------------------------- */

static int nicdrv_get_sset_count(struct net_device *ndev, int sset)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return nic_core_ncounters + ARRAY_SIZE(queue_regs) * priv->hw_txq +
	       ARRAY_SIZE(vector_regs) * priv->hw_txirq + NICDRV_NSTATS;
}

static void nicdrv_get_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	unsigned int i, q;

	if (sset != ETH_SS_STATS)
		return;
	for (i = 0; i < nic_core_ncounters; i++)
		ethtool_sprintf(&data, "%s", nic_core_counter_defs[i].ethtool);
	for (i = 0; i < ARRAY_SIZE(queue_regs); i++)
		for (q = 0; q < priv->hw_txq; q++)
			ethtool_sprintf(&data, queue_regs[i].fmt, q);
	for (i = 0; i < ARRAY_SIZE(vector_regs); i++)
		for (q = 0; q < priv->hw_txirq; q++)
			ethtool_sprintf(&data, vector_regs[i].fmt, q);
	for (i = 0; i < NICDRV_NSTATS; i++)
		ethtool_sprintf(&data, "%s", nicdrv_stat_names[i]);
}

static void nicdrv_get_ethtool_stats(struct net_device *ndev, struct ethtool_stats *stats,
				     u64 *data)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	unsigned int i, q;

	nic_core_counters_read(&priv->hw, priv->nic_base, data);
	data += nic_core_ncounters;
	for (i = 0; i < ARRAY_SIZE(queue_regs); i++)
		for (q = 0; q < priv->hw_txq; q++)
			*data++ = nic_core_csr_read_elem(&priv->hw,
							 priv->nic_base + queue_regs[i].addr,
							 queue_regs[i].words, q);
	for (i = 0; i < ARRAY_SIZE(vector_regs); i++)
		for (q = 0; q < priv->hw_txirq; q++)
			*data++ = nic_core_csr_read_elem(&priv->hw,
							 priv->nic_base + vector_regs[i].addr,
							 vector_regs[i].words, q);
	nicdrv_stats_read(priv, data);
}

/* --- -c/-C ----------------------------------------------------------------------------------- */

static int nicdrv_get_coalesce(struct net_device *ndev, struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec, struct netlink_ext_ack *extack)
{
	const struct nic_q_coalesce *c = &nicdrv_priv(ndev)->coal;

	ec->rx_coalesce_usecs = c->rx_usecs;
	ec->rx_max_coalesced_frames = c->rx_frames;
	ec->rx_coalesce_usecs_irq = c->rx_abs_usecs;
	ec->rx_coalesce_usecs_high = c->rx_min_interval;
	ec->tx_coalesce_usecs = c->tx_usecs;
	ec->tx_max_coalesced_frames = c->tx_frames;
	ec->tx_coalesce_usecs_irq = c->tx_abs_usecs;
	ec->tx_coalesce_usecs_high = c->tx_min_interval;
	return 0;
}

static int nicdrv_set_coalesce(struct net_device *ndev, struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec, struct netlink_ext_ack *extack)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	struct nic_q_coalesce c = priv->coal;
	u32 v[NIC_CORE_COALESCE_NVALUES];
	int bad;

	c.rx_usecs = ec->rx_coalesce_usecs;
	c.rx_frames = ec->rx_max_coalesced_frames;
	c.rx_abs_usecs = ec->rx_coalesce_usecs_irq;
	c.rx_min_interval = ec->rx_coalesce_usecs_high;
	c.tx_usecs = ec->tx_coalesce_usecs;
	c.tx_frames = ec->tx_max_coalesced_frames;
	c.tx_abs_usecs = ec->tx_coalesce_usecs_irq;
	c.tx_min_interval = ec->tx_coalesce_usecs_high;
	bad = nic_core_coalesce_check(&c);
	if (bad >= 0) {
		nic_core_coalesce_values(&c, v);
		NL_SET_ERR_MSG_MOD(extack, "coalescing values are 16 bits: 0..65535");
		netdev_err(ndev, "coalescing %s=%u: out of range 0..65535\n",
			   nic_core_coalesce_names[bad], v[bad]);
		return -EINVAL;
	}
	priv->coal = c;
	if (netif_running(ndev))
		nic_core_coalesce_write(&priv->hw, priv->nic_base, &c, priv->tick_cycles);
	return 0;
}

/* --- -g/-G, -l/-L: applied by closing and opening a running interface ------------------------ */

static void nicdrv_get_ringparam(struct net_device *ndev, struct ethtool_ringparam *ring,
				 struct kernel_ethtool_ringparam *kring,
				 struct netlink_ext_ack *extack)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);

	ring->rx_max_pending = NIC_Q_RING_MAX;
	ring->tx_max_pending = NIC_Q_RING_MAX;
	ring->rx_pending = priv->rx_ring_size;
	ring->tx_pending = priv->tx_ring_size;
}

static int nicdrv_reopen(struct net_device *ndev, int (*change)(struct nicdrv_priv *, u32, u32),
			 u32 a, u32 b)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	const bool running = netif_running(ndev);
	int err;

	if (running)
		nicdrv_stop(ndev);
	err = change(priv, a, b);
	if (running) {
		int oerr = nicdrv_open(ndev);

		if (oerr) {
			/* Not up without rings: the stack would transmit into freed memory. */
			netdev_err(ndev, "cannot open again after the change (%d): interface left down\n",
				   oerr);
			dev_close(ndev);
		}
		err = err ? err : oerr;
	}
	return err;
}

static int nicdrv_change_rings(struct nicdrv_priv *priv, u32 rx, u32 tx)
{
	priv->rx_ring_size = rx;
	priv->tx_ring_size = tx;
	return 0;
}

static bool nicdrv_ring_ok(u32 n)
{
	return is_power_of_2(n) && n >= NICDRV_RING_MIN && n <= NIC_Q_RING_MAX;
}

static int nicdrv_set_ringparam(struct net_device *ndev, struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);

	if (!nicdrv_ring_ok(ring->rx_pending) || !nicdrv_ring_ok(ring->tx_pending)) {
		NL_SET_ERR_MSG_MOD(extack, "ring sizes are powers of two, 64..4096");
		return -EINVAL;
	}
	if (ring->rx_pending == priv->rx_ring_size && ring->tx_pending == priv->tx_ring_size)
		return 0;
	return nicdrv_reopen(ndev, nicdrv_change_rings, ring->rx_pending, ring->tx_pending);
}

static void nicdrv_get_channels(struct net_device *ndev, struct ethtool_channels *ch)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);

	ch->max_rx = 1;
	ch->max_tx = priv->hw_txq;
	ch->rx_count = 1;
	ch->tx_count = priv->ntxq;
}

static int nicdrv_change_channels(struct nicdrv_priv *priv, u32 ntxq, u32 unused)
{
	int err = netif_set_real_num_tx_queues(priv->ndev, ntxq);

	if (!err)
		priv->ntxq = ntxq;
	return err;
}

static int nicdrv_set_channels(struct net_device *ndev, struct ethtool_channels *ch)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);

	/* The ethtool core refused counts above the maxima (combined and other: 0). */
	if (ch->rx_count != 1 || ch->tx_count < 1) {
		netdev_err(ndev, "channels: one RX queue, 1..%u TX queues\n", priv->hw_txq);
		return -EINVAL;
	}
	if (ch->tx_count == priv->ntxq)
		return 0;
	return nicdrv_reopen(ndev, nicdrv_change_channels, ch->tx_count, 0);
}

/* --- tunables: rx-copybreak ---------------------------------------------------------------- */

static int nicdrv_get_tunable(struct net_device *ndev, const struct ethtool_tunable *t,
			      void *data)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);

	if (t->id != ETHTOOL_RX_COPYBREAK)
		return -EOPNOTSUPP;
	*(u32 *)data = priv->rx_copybreak;
	return 0;
}

static int nicdrv_set_tunable(struct net_device *ndev, const struct ethtool_tunable *t,
			      const void *data)
{
	struct nicdrv_priv *priv = nicdrv_priv(ndev);
	const u32 v = *(const u32 *)data;

	if (t->id != ETHTOOL_RX_COPYBREAK)
		return -EOPNOTSUPP;
	if (v > NICDRV_RX_BUF_LEN)
		return -EINVAL;
	WRITE_ONCE(priv->rx_copybreak, v);
	return 0;
}

const struct ethtool_ops nicdrv_ethtool_ops = {
	.supported_coalesce_params = ETHTOOL_COALESCE_USECS | ETHTOOL_COALESCE_MAX_FRAMES |
				     ETHTOOL_COALESCE_USECS_IRQ | ETHTOOL_COALESCE_RX_USECS_HIGH |
				     ETHTOOL_COALESCE_TX_USECS_HIGH,
	.get_drvinfo = nicdrv_get_drvinfo,
	.get_regs_len = nicdrv_get_regs_len,
	.get_regs = nicdrv_get_regs,
	.get_link = ethtool_op_get_link,
	.get_ts_info = ethtool_op_get_ts_info,
	.get_coalesce = nicdrv_get_coalesce,
	.set_coalesce = nicdrv_set_coalesce,
	.get_ringparam = nicdrv_get_ringparam,
	.set_ringparam = nicdrv_set_ringparam,
	.get_channels = nicdrv_get_channels,
	.set_channels = nicdrv_set_channels,
	.get_strings = nicdrv_get_strings,
	.get_ethtool_stats = nicdrv_get_ethtool_stats,
	.get_sset_count = nicdrv_get_sset_count,
	.get_tunable = nicdrv_get_tunable,
	.set_tunable = nicdrv_set_tunable,
};
