// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_main.c: the NIC driver's module and PCI glue: binds the SoC by vendor/device ID
 * (NICDRV_VENDOR_ID/DEVICE_ID, nicdrv.h), enables it, maps BAR0 and finds the register blocks at
 * run time with the shared core's discovery (nic_core_rb_discover), then sets the DMA mask: the
 * SoC's DMA address width (the pcie_dma0 block's parameter: the PCIe crossbar the nic block's
 * DMA shares, 32 bits in litex_soc/nic_soc.py; 64 if the table says so), 32 if that is refused.
 * A device whose identification, nic or pcie_msi block this driver does not know (MAGIC, major
 * version, absent block, other layout version) is refused with a dev_err naming what differs,
 * and everything taken so far is given back.
 *
 * PCI errors (pci_error_handlers, as igb/ixgbe): error_detected detaches the interface and
 * stops it (NAPI, queues, rings) and disables the device; slot_reset enables it again,
 * restores its saved configuration and bus mastering; resume opens the interface and attaches
 * it. The PCI core calls them on AER; the driver's watchdog (nic_netdev.c) calls them too, from
 * nicdrv_recover_task, on a link-down the device counted (pcie_cpl_link_downs) or all-ones
 * reads, which no AER reports where the platform has none.
 *
 * Interfaces: the PCI driver; BAR0 through nicdrv_hw_map/unmap and nic_core_rd32/wr32
 * (nic_mmio.c; in the QEMU test's NICDRV_FAKE=1 build nic_fake.c's model of the SoC instead,
 * bound to QEMU's edu device through new_id). No module parameters: the rings start at
 * NICDRV_RING_DEFAULT descriptors and ethtool -G alone sizes them.
 */
#include <linux/etherdevice.h>
#include <linux/module.h>
#include <linux/rtnetlink.h>

#include "nicdrv.h"

/* The blocks this driver uses: there, and with the layout nic_regs.h was generated for. */
int nicdrv_check_block(struct nicdrv_priv *priv, u32 type, u32 *base)
{
	struct device *dev = &priv->pdev->dev;
	const struct nic_core_rb_entry *e = nic_core_rb_lookup(&priv->rb, type);

	switch (nic_core_rb_check(&priv->rb, type)) {
	case NIC_CORE_RB_OK:
		break;
	case NIC_CORE_RB_ABSENT:
		dev_err(dev,
			"no %s block (register block type 0x%04x) in the table: not a NIC build this driver supports\n",
			nic_core_rb_name(type), type);
		return -ENODEV;
	default:
		dev_err(dev,
			"%s block at BAR0 0x%04x has layout version 0x%08x, this driver knows 0x%08x (sw/include/nic_regs.h): rebuild the driver for this gateware\n",
			nic_core_rb_name(type), e->base, e->version,
			nic_core_rb_known_version(type));
		return -ENODEV;
	}
	if ((resource_size_t)e->base >= priv->hw.len) {
		dev_err(dev, "%s block base 0x%x is beyond BAR0 (%pa bytes)\n",
			nic_core_rb_name(type), e->base, &priv->hw.len);
		return -ENODEV;
	}
	*base = e->base;
	return 0;
}

static int nicdrv_identify(struct nicdrv_priv *priv)
{
	struct device *dev = &priv->pdev->dev;
	const struct nic_core_rb_entry *nic, *dma, *cpl;
	int err;

	switch (nic_core_rb_discover(&priv->hw, &priv->rb)) {
	case NIC_CORE_RB_OK:
		break;
	case NIC_CORE_RB_BAD_MAGIC:
		dev_err(dev,
			"identification MAGIC (BAR0 0x%04x) reads 0x%08x, not 0x%08x: not this NIC\n",
			NIC_CSR_INFO_MAGIC_ADDR, priv->rb.magic, NIC_ID_MAGIC);
		return -ENODEV;
	case NIC_CORE_RB_BAD_MAJOR:
		dev_err(dev, "design version 0x%08x: this driver knows major version %u only\n",
			priv->rb.version, NIC_ID_VERSION_MAJOR);
		return -ENODEV;
	default:
		dev_err(dev, "register-block count %u: expected 1..%u\n", priv->rb.count,
			NIC_ID_RB_MAX);
		return -ENODEV;
	}
	priv->design_version = priv->rb.version;
	err = nicdrv_check_block(priv, NIC_RB_NIC, &priv->nic_base);
	if (!err)
		err = nicdrv_check_block(priv, NIC_RB_PCIE_MSI, &priv->msi_base);
	if (err)
		return err;

	/* pcie_cpl (link-downs) where the table has a block this driver knows. */
	cpl = nic_core_rb_lookup(&priv->rb, NIC_RB_PCIE_CPL);
	priv->has_cpl = cpl && nic_core_rb_check(&priv->rb, NIC_RB_PCIE_CPL) == NIC_CORE_RB_OK &&
			(resource_size_t)cpl->base + NIC_CSR_PCIE_CPL_LINK_DOWNS_ADDR + 4 <=
			priv->hw.len;
	if (priv->has_cpl)
		priv->cpl_base = cpl->base;

	nic = nic_core_rb_lookup(&priv->rb, NIC_RB_NIC);
	priv->hw_txq = nic_core_rb_param(nic);
	priv->hw_txirq = nic_core_rb_msi_count(nic) ? nic_core_rb_msi_count(nic) - 1 : 0;
	if (priv->hw_txq < 1 || priv->hw_txq > NIC_Q_MAX_TXQ || priv->hw_txirq < 1 ||
	    priv->hw_txirq > NIC_Q_MAX_TXIRQ) {
		dev_err(dev,
			"nic block reports %u TX queues and %u TX vectors: expected 1..%u and 1..%u\n",
			priv->hw_txq, priv->hw_txirq, NIC_Q_MAX_TXQ, NIC_Q_MAX_TXIRQ);
		return -ENODEV;
	}
	/* The DMA address width: pcie_dma0's parameter where the table has a block it knows. */
	dma = nic_core_rb_lookup(&priv->rb, NIC_RB_PCIE_DMA0);
	priv->dma_bits = 32;
	if (dma && nic_core_rb_check(&priv->rb, NIC_RB_PCIE_DMA0) == NIC_CORE_RB_OK &&
	    nic_core_rb_param(dma) >= 32 && nic_core_rb_param(dma) <= 64)
		priv->dma_bits = nic_core_rb_param(dma);
	priv->tick_cycles =
		nic_core_tick_cycles(nic_core_rd32(&priv->hw, NIC_CSR_INFO_CLK_FREQ_ADDR));
	if (!priv->tick_cycles) {
		dev_err(dev, "INFO_CLK_FREQ gives no coalescing tick of 1 us\n");
		return -ENODEV;
	}
	return 0;
}

static int nicdrv_probe(struct pci_dev *pdev, const struct pci_device_id *id)
{
	struct net_device *ndev;
	struct nicdrv_priv *priv;
	int err;

	err = pci_enable_device_mem(pdev);
	if (err)
		return err;
	err = pci_request_mem_regions(pdev, NICDRV_NAME);
	if (err)
		goto err_disable;

	ndev = alloc_etherdev_mqs(sizeof(*priv), NIC_Q_MAX_TXQ, 1);
	if (!ndev) {
		err = -ENOMEM;
		goto err_release;
	}
	SET_NETDEV_DEV(ndev, &pdev->dev);
	priv = netdev_priv(ndev);
	priv->pdev = pdev;
	priv->ndev = ndev;
	pci_set_drvdata(pdev, priv);

	err = nicdrv_hw_map(priv);
	if (err)
		goto err_free;
	err = nicdrv_identify(priv);
	if (err)
		goto err_unmap;
	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(priv->dma_bits));
	if (err && priv->dma_bits > 32) {
		priv->dma_bits = 32;
		err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(32));
	}
	if (err) {
		dev_err(&pdev->dev, "no usable DMA mask (%u or 32 bits)\n", priv->dma_bits);
		goto err_unmap;
	}

	pci_set_master(pdev);
	priv->tx_ring_size = NICDRV_RING_DEFAULT;
	priv->rx_ring_size = NICDRV_RING_DEFAULT;
	priv->rx_copybreak = NICDRV_RX_COPYBREAK;
	priv->ntxq = priv->hw_txq;
	nic_core_coalesce_defaults(&priv->coal);

	err = nicdrv_irq_init(priv);
	if (err)
		goto err_master;
	err = nicdrv_netdev_init(priv);
	if (err)
		goto err_irq;
	err = register_netdev(ndev);
	if (err)
		goto err_irq;
	pci_save_state(pdev);	/* slot_reset restores it */
	netdev_info(ndev,
		    "NIC design %u.%u: %u TX queues, %u TX vectors, %s %u vectors%s, %u-bit DMA\n",
		    priv->design_version >> 16, priv->design_version & 0xffff, priv->hw_txq,
		    priv->hw_txirq, nicdrv_irq_mode(priv), priv->irq_count,
		    priv->nvec == 1 ? " (one for all queues)" : "", priv->dma_bits);
	return 0;

err_irq:
	nicdrv_irq_fini(priv);
err_master:
	pci_clear_master(pdev);
err_unmap:
	nicdrv_hw_unmap(priv);
err_free:
	free_netdev(ndev);
err_release:
	pci_release_mem_regions(pdev);
err_disable:
	pci_disable_device(pdev);
	return err;
}

static void nicdrv_remove(struct pci_dev *pdev)
{
	struct nicdrv_priv *priv = pci_get_drvdata(pdev);

	unregister_netdev(priv->ndev);
	cancel_work_sync(&priv->reset_work);
	cancel_delayed_work_sync(&priv->recover_work);
	nicdrv_irq_fini(priv);
	pci_clear_master(pdev);
	nicdrv_hw_unmap(priv);
	free_netdev(priv->ndev);
	pci_release_mem_regions(pdev);
	if (pci_is_enabled(pdev))	/* not after a failed slot_reset */
		pci_disable_device(pdev);
}

static pci_ers_result_t nicdrv_io_error_detected(struct pci_dev *pdev,
						 pci_channel_state_t state)
{
	struct nicdrv_priv *priv = pci_get_drvdata(pdev);
	struct net_device *ndev = priv->ndev;

	netdev_err(ndev, "PCI error detected (channel state %d): interface detached\n", state);
	rtnl_lock();
	netif_device_detach(ndev);
	if (netif_running(ndev))
		nicdrv_stop(ndev);
	rtnl_unlock();
	if (state == pci_channel_io_perm_failure)
		return PCI_ERS_RESULT_DISCONNECT;
	if (pci_is_enabled(pdev))
		pci_disable_device(pdev);
	return PCI_ERS_RESULT_NEED_RESET;
}

static pci_ers_result_t nicdrv_io_slot_reset(struct pci_dev *pdev)
{
	struct nicdrv_priv *priv = pci_get_drvdata(pdev);
	u32 magic;

	if (pci_enable_device_mem(pdev)) {
		dev_err(&pdev->dev, "slot reset: cannot enable the device again\n");
		return PCI_ERS_RESULT_DISCONNECT;
	}
	pci_restore_state(pdev);
	pci_save_state(pdev);
	pci_clear_master(pdev);
	magic = nic_core_rd32(&priv->hw, NIC_CSR_INFO_MAGIC_ADDR);
	if (magic != NIC_ID_MAGIC) {
		dev_err(&pdev->dev, "slot reset: identification MAGIC reads 0x%08x\n", magic);
		return PCI_ERS_RESULT_DISCONNECT;
	}
	/* Bus mastering again once nothing can still write into the rings the stop freed. */
	if (priv->dma_off) {
		if (nicdrv_dma_wait_idle(priv)) {
			dev_err(&pdev->dev, "slot reset: the device's DMA did not stop within %u us\n",
				NICDRV_IDLE_TIMEOUT_US);
			return PCI_ERS_RESULT_DISCONNECT;
		}
		priv->dma_off = false;
	}
	pci_set_master(pdev);
	dev_info(&pdev->dev, "slot reset: device enabled, configuration restored\n");
	return PCI_ERS_RESULT_RECOVERED;
}

static void nicdrv_io_resume(struct pci_dev *pdev)
{
	struct nicdrv_priv *priv = pci_get_drvdata(pdev);
	struct net_device *ndev = priv->ndev;
	int err;

	rtnl_lock();
	if (netif_running(ndev)) {
		err = nicdrv_open(ndev);
		if (err) {
			netdev_err(ndev, "resume: cannot open (%d): interface left down\n", err);
			dev_close(ndev);
		}
	}
	netif_device_attach(ndev);
	priv->pci_recoveries++;
	rtnl_unlock();
	netdev_info(ndev, "PCI error recovery done: interface attached\n");
}

/* The handlers in the PCI core's order, under the device lock as it takes it (remove holds it
 * while it cancels this work: then this one gives way).
 */
void nicdrv_recover_task(struct work_struct *work)
{
	struct nicdrv_priv *priv = container_of(to_delayed_work(work), struct nicdrv_priv,
						recover_work);
	struct pci_dev *pdev = priv->pdev;
	pci_ers_result_t res;

	if (!device_trylock(&pdev->dev)) {
		schedule_delayed_work(&priv->recover_work, msecs_to_jiffies(NICDRV_WATCHDOG_MS));
		return;
	}
	res = nicdrv_io_error_detected(pdev, pci_channel_io_frozen);
	if (res == PCI_ERS_RESULT_NEED_RESET)
		res = nicdrv_io_slot_reset(pdev);
	if (res == PCI_ERS_RESULT_RECOVERED)
		nicdrv_io_resume(pdev);
	else
		dev_err(&pdev->dev, "not recovered: interface left detached\n");
	device_unlock(&pdev->dev);
}

static const struct pci_error_handlers nicdrv_err_handler = {
	.error_detected = nicdrv_io_error_detected,
	.slot_reset = nicdrv_io_slot_reset,
	.resume = nicdrv_io_resume,
};

static const struct pci_device_id nicdrv_ids[] = {
	{ PCI_DEVICE(NICDRV_VENDOR_ID, NICDRV_DEVICE_ID) },
	{}
};
MODULE_DEVICE_TABLE(pci, nicdrv_ids);

static struct pci_driver nicdrv_driver = {
	.name = NICDRV_NAME,
	.id_table = nicdrv_ids,
	.probe = nicdrv_probe,
	.remove = nicdrv_remove,
	.err_handler = &nicdrv_err_handler,
};
module_pci_driver(nicdrv_driver);

MODULE_DESCRIPTION("Open FPGA NIC (LitePCIe SoC) network driver");
MODULE_LICENSE("Dual BSD/GPL");
