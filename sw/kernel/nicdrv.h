/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * nicdrv.h: the private header of the NIC's Linux driver (nicdrv.ko), laid out as corundum's
 * modules/mqnic/: nic_main.c (PCI probe/remove, register-block discovery), nic_netdev.c
 * (open/stop, stats), nic_tx.c, nic_rx.c (rings on the shared core, sw/core/nic_core.h),
 * nic_irq.c (MSI/MSI-X vectors, NAPI), nic_ethtool.c.
 *
 * The device: one RX ring with its completion ring, up to NIC_Q_MAX_TXQ TX rings with
 * consumer-index writebacks, and the nic block's MSIs: RX, then one per TX queue group
 * (queue q on TX vector q % hw_txirq). LitePCIe's MSI block sends each MSI number as its own
 * message, so the Linux vector of MSI number m is pci_irq_vector(pdev, m).
 * Parameters: the module parameters of nic_main.c (ring sizes); everything else is read from
 * the device (the register-block table, INFO_CLK_FREQ).
 */
#ifndef NICDRV_H
#define NICDRV_H

#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/u64_stats_sync.h>

#include "nic_core.h"

#define NICDRV_NAME "nicdrv"
/* The SoC's PCI identity: the Xilinx 7-series core's defaults for LitePCIe's Gen2 x4 PHY
 * (cocotb_tests/pcie_rc/soc_pcie_device.py).
 */
#define NICDRV_VENDOR_ID 0x10ee
#define NICDRV_DEVICE_ID 0x7024

#define NICDRV_RING_DEFAULT 512u
#define NICDRV_RING_MIN 64u	/* room for a frame of MAX_SKB_FRAGS + 1 descriptors */
#define NICDRV_RX_BUF_LEN 2048u	/* RX buffer (one page each): the largest frame, no FCS */
#define NICDRV_RX_HDR_LEN 256u	/* skb head of a frame on its page: the headers copied */
#define NICDRV_RX_COPYBREAK 256u	/* default: frames up to this copied, the page kept */
#define NICDRV_TX_DESC_MAX (MAX_SKB_FRAGS + 1)	/* descriptors one skb may take */
#define NICDRV_TIMEOUT_US 10000u		/* drain and reset polls */
#define NICDRV_WATCHDOG_MS 250u			/* the device checks while up */
#define NICDRV_IDLE_TIMEOUT_US 2000000u	/* DMA after a link-down: reads end at a timeout */

/* The shared core's MMIO handle (nic_core_osdep.h): BAR0. */
struct nic_core_hw {
	void __iomem *bar;
	resource_size_t len;
};

/* One TX descriptor's mapping; skb on the frame's last (EOP) descriptor only. */
struct nicdrv_tx_buf {
	struct sk_buff *skb;
	dma_addr_t dma;
	u32 len;
	bool page;	/* a fragment: dma_unmap_page, else dma_unmap_single */
};

struct nicdrv_txq {
	struct nic_txq ring;		/* the shared core's ring state */
	struct nicdrv_tx_buf *bufs;	/* ring.size of them */
	void *mem;			/* coherent: the ring, then the writeback slot */
	dma_addr_t mem_dma;
	size_t mem_len;
	unsigned int index;
	/* Completion side (NAPI; the reset path with NAPI off): syncp. */
	u64 packets, bytes;
	u64 errors;		/* ring.errors: errored frames the device reported */
	u64 reset_dropped;	/* frames a queue reset found never fetched */
	u64 lost_wb;		/* resets that found the last writeback lost */
	struct u64_stats_sync syncp;
	/* Transmit side (under the queue's xmit lock): xmit_syncp. Frames dropped: */
	u64 oversize;		/* longer than the TX engine takes */
	u64 map_err;		/* a DMA mapping failed */
	struct u64_stats_sync xmit_syncp;
};

struct page_pool;

struct nicdrv_rxq {
	struct nic_rxq ring;
	struct page_pool *pool;	/* the ring's pages, mapped by it (page_pool_get_dma_addr) */
	struct page **pages;	/* ring.size pages, position p's buffer at offset 0 */
	void *mem;	/* coherent: descriptors, then completion records */
	dma_addr_t mem_dma;
	size_t mem_len;
	/* Written by the RX poll only. Frames dropped: */
	u64 packets, bytes;
	u64 runt;		/* shorter than an Ethernet header */
	u64 oversize;		/* longer than the buffer */
	u64 bad_index;		/* the record names no buffer the device holds */
	u64 bad_status;		/* a status other than OK (the device's drop) */
	u64 no_skb;		/* no skb to copy into */
	u64 no_page;		/* above the copybreak, copied: the pool had no page (not a drop) */
	/* The reset path (the poll off): */
	u64 resets;		/* ring reset after the watchdog found it stalled */
	u64 reset_dropped;	/* records written past the lost one, dropped by a reset */
	struct u64_stats_sync syncp;
	/* The watchdog's last look (nicdrv_rx_stalled): */
	u32 wd_next;
	bool wd_stuck;
};

/* The driver's own counts in ethtool -S (drv_*), after the device's registers. */
enum nicdrv_stat {
	NICDRV_STAT_RX_RUNT,
	NICDRV_STAT_RX_OVERSIZE,
	NICDRV_STAT_RX_BAD_INDEX,
	NICDRV_STAT_RX_BAD_STATUS,
	NICDRV_STAT_RX_NO_SKB,
	NICDRV_STAT_RX_NO_PAGE,
	NICDRV_STAT_RX_RESETS,
	NICDRV_STAT_RX_RESET_DROPPED,
	NICDRV_STAT_TX_OVERSIZE,
	NICDRV_STAT_TX_MAP_ERR,
	NICDRV_STAT_TX_RESET_DROPPED,
	NICDRV_STAT_TX_LOST_WB,
	NICDRV_STAT_PCI_RECOVERIES,
	NICDRV_NSTATS
};

/* One interrupt vector: RX (vec[0]) or TX queue group g (vec[1 + g]); or the only one. */
struct nicdrv_vec {
	struct napi_struct napi;
	struct nicdrv_priv *priv;
	unsigned int msi;	/* the device's MSI number */
	int irq;		/* its Linux irq, 0 when not requested */
	bool rx;
	bool all_tx;		/* the one vector: every TX queue, then RX */
	unsigned int group;
	char name[IFNAMSIZ + 16];
};

struct nicdrv_priv {
	struct pci_dev *pdev;
	struct net_device *ndev;
	struct nic_core_hw hw;
	struct nic_core_rb_table rb;
	u32 nic_base;					/* the nic block's BAR0 base */
	u32 msi_base;					/* the pcie_msi block's */
	u32 irq_enable;			/* per-vector enable: pcie_msi's or pcie_msix's */
	u32 msi_first;					/* the nic block's first MSI number (RX) */
	u32 cpl_base;					/* the pcie_cpl block's, if has_cpl */
	bool has_cpl;
	u32 design_version;				/* INFO_VERSION */
	u32 tick_cycles;				/* system clock cycles per microsecond */
	unsigned int dma_bits;	/* DMA mask width (pcie_dma0's address width) */
	unsigned int hw_txq, hw_txirq;			/* the SoC's TX queues and TX vectors */
	unsigned int ntxq;				/* TX queues in use (ethtool -L) */
	unsigned int tx_ring_size, rx_ring_size;	/* ethtool -G */
	u32 rx_copybreak;		/* ethtool --set-tunable rx-copybreak (nic_rx.c) */
	unsigned int nvec;				/* 1 (RX) + hw_txirq, or 1 for all */
	unsigned int irq_count;				/* from pci_alloc_irq_vectors */
	bool msix;
	struct nicdrv_txq txq[NIC_Q_MAX_TXQ];
	struct nicdrv_rxq rxq;
	struct nicdrv_vec vec[1 + NIC_Q_MAX_TXIRQ];
	struct nic_q_coalesce coal;			/* ethtool -C, written at every open */
	bool up;		/* rings set up and started by nicdrv_open */
	bool drain_failed;	/* a TX drain or RX reset timed out since the rings were set up */
	bool dma_off;		/* bus mastering cleared for it: set again at an open once idle */
	struct work_struct reset_work;	/* the TX and RX reset paths */
	DECLARE_BITMAP(tx_timed_out, NIC_Q_MAX_TXQ);	/* queues it resets */
	unsigned long rx_stalled;	/* bit 0: it resets the RX ring */
	struct delayed_work watchdog;	/* while up: link-down, dead-device and RX stall checks */
	u32 link_downs;			/* pcie_cpl_link_downs at open */
	struct delayed_work recover_work;	/* the PCI error handlers, after the watchdog */
	u64 pci_recoveries;		/* under rtnl: nicdrv_io_resume */
};

static inline struct nicdrv_priv *nicdrv_priv(struct net_device *ndev)
{
	return netdev_priv(ndev);
}

/* nic_main.c */
int nicdrv_check_block(struct nicdrv_priv *priv, u32 type, u32 *base);
void nicdrv_recover_task(struct work_struct *work);

/* nic_netdev.c */
int nicdrv_netdev_init(struct nicdrv_priv *priv);
int nicdrv_open(struct net_device *ndev);
int nicdrv_stop(struct net_device *ndev);
int nicdrv_dma_wait_idle(struct nicdrv_priv *priv);
extern const char *const nicdrv_stat_names[NICDRV_NSTATS];
void nicdrv_stats_read(struct nicdrv_priv *priv, u64 *v);

/* nic_tx.c */
int nicdrv_tx_alloc(struct nicdrv_priv *priv, struct nicdrv_txq *txq);
void nicdrv_tx_free(struct nicdrv_priv *priv, struct nicdrv_txq *txq);
int nicdrv_tx_start(struct nicdrv_priv *priv, struct nicdrv_txq *txq);
int nicdrv_tx_stop(struct nicdrv_priv *priv, struct nicdrv_txq *txq);
netdev_tx_t nicdrv_start_xmit(struct sk_buff *skb, struct net_device *ndev);
int nicdrv_tx_reclaim(struct nicdrv_priv *priv, struct nicdrv_txq *txq, int budget);
void nicdrv_tx_clean(struct nicdrv_priv *priv, struct nicdrv_txq *txq, int budget);
void nicdrv_tx_timeout(struct net_device *ndev, unsigned int q);
void nicdrv_reset_task(struct work_struct *work);

/* nic_rx.c */
int nicdrv_rx_alloc(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq);
void nicdrv_rx_free(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq);
int nicdrv_rx_start(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq);
void nicdrv_rx_stop(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq);
int nicdrv_rx_poll(struct nicdrv_priv *priv, struct napi_struct *napi, int budget);
bool nicdrv_rx_stalled(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq);
void nicdrv_rx_restart(struct nicdrv_priv *priv, struct nicdrv_rxq *rxq);

/* nic_irq.c */
int nicdrv_irq_init(struct nicdrv_priv *priv);
const char *nicdrv_irq_mode(struct nicdrv_priv *priv);
struct nicdrv_vec *nicdrv_txq_vec(struct nicdrv_priv *priv, unsigned int q);
void nicdrv_irq_fini(struct nicdrv_priv *priv);
int nicdrv_irq_request(struct nicdrv_priv *priv);
void nicdrv_irq_release(struct nicdrv_priv *priv);

/* nic_mmio.c (the driver), or nic_fake.c (the QEMU test's NICDRV_FAKE=1 build): BAR0 mapped
 * into priv->hw for nic_core_rd32/wr32, and given back.
 */
int nicdrv_hw_map(struct nicdrv_priv *priv);
void nicdrv_hw_unmap(struct nicdrv_priv *priv);

/* nic_ethtool.c */
extern const struct ethtool_ops nicdrv_ethtool_ops;

#endif	/* NICDRV_H */
