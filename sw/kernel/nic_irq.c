// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_irq.c: the NIC driver's interrupt vectors and NAPI polls.
 *
 * The nic block's MSIs (its register-block table entry) are RX, then TX queue group
 * 0..hw_txirq-1; LitePCIe's MSI block sends MSI number m as message m (data | m), so every
 * message up to the nic block's last is allocated with pci_alloc_irq_vectors (MSI-X if the
 * device has it, else multiple-message MSI) and vector i of the driver is Linux irq
 * pci_irq_vector(pdev, its MSI number). The ENABLE mask of the block that sends them (pcie_msix
 * on MSI-X, table entry m for MSI number m; else pcie_msi) has the nic block's MSI numbers set
 * while the interface is up. One NAPI context per vector: RX's polls the RX ring, TX group g's
 * reclaims the TX queues q with q % hw_txirq == g.
 *
 * Where the platform does not give that many (no multiple-message MSI, too few vectors, no
 * MSI at all), one vector serves everything: a single MSI message (the device sends every MSI
 * number as that message: with one message enabled it may not change the data), or the INTx
 * line where the device has one (shared). Its one NAPI context reclaims every TX queue, then
 * polls the RX ring. MSI-X is not used for it: MSI number m goes through table entry m, which
 * a one-entry allocation does not program.
 * Interfaces: nicdrv_irq_init/fini (probe/remove), nicdrv_irq_request/release (open/stop),
 * nicdrv_txq_vec (the vector whose NAPI reclaims a TX queue).
 */
#include <linux/interrupt.h>

#include "nicdrv.h"

static irqreturn_t nicdrv_irq(int irq, void *data)
{
	struct nicdrv_vec *vec = data;

	/* INTx (shared): the device has no interrupt status register to tell whether it asked. */
	napi_schedule_irqoff(&vec->napi);
	return IRQ_HANDLED;
}

struct nicdrv_vec *nicdrv_txq_vec(struct nicdrv_priv *priv, unsigned int q)
{
	return priv->nvec == 1 ? &priv->vec[0] : &priv->vec[1 + q % priv->hw_txirq];
}

static int nicdrv_poll(struct napi_struct *napi, int budget)
{
	struct nicdrv_vec *vec = container_of(napi, struct nicdrv_vec, napi);
	struct nicdrv_priv *priv = vec->priv;
	unsigned int q;

	if (vec->all_tx)
		for (q = 0; q < priv->ntxq; q++)
			nicdrv_tx_clean(priv, &priv->txq[q], budget);
	if (vec->rx)
		return nicdrv_rx_poll(priv, napi, budget);
	for (q = vec->group; q < priv->ntxq; q += priv->hw_txirq)
		nicdrv_tx_clean(priv, &priv->txq[q], budget);
	if (budget) /* netpoll (budget 0) must not complete */
		napi_complete_done(napi, 0);
	return 0;
}

int nicdrv_irq_init(struct nicdrv_priv *priv)
{
	const struct nic_core_rb_entry *nic = nic_core_rb_lookup(&priv->rb, NIC_RB_NIC);
	struct pci_dev *pdev = priv->pdev;
	unsigned int first = nic_core_rb_msi(nic), need, flags, i;
	int n;

	if (first == NIC_RB_NO_IRQ || first + 1 + priv->hw_txirq > 32) {
		dev_err(&pdev->dev, "the nic block's MSI numbers (first %u, %u of them) are not 0..31\n",
			first, 1 + priv->hw_txirq);
		return -ENODEV;
	}
	priv->msi_first = first;
	priv->nvec = 1 + priv->hw_txirq;
	need = first + priv->nvec;
	n = pci_alloc_irq_vectors(pdev, need, need, PCI_IRQ_MSIX | PCI_IRQ_MSI);
	if (n < 0) {
		flags = PCI_IRQ_MSI;
		if (pdev->pin)
			flags |= PCI_IRQ_LEGACY;
		n = pci_alloc_irq_vectors(pdev, 1, 1, flags);
		if (n < 0) {
			dev_err(&pdev->dev, "no interrupt: neither %u MSI/MSI-X vectors (the nic block's MSI numbers are %u..%u) nor one MSI%s: %d\n",
				need, first, need - 1, pdev->pin ? " or INTx" : "", n);
			return n;
		}
		priv->nvec = 1;
		dev_warn(&pdev->dev, "%u MSI/MSI-X vectors not available: one %s vector for RX and every TX queue\n",
			 need, pdev->msi_enabled ? "MSI" : "INTx");
	}
	priv->irq_count = n;
	priv->msix = pdev->msix_enabled;
	priv->irq_enable = priv->msi_base + NIC_CSR_PCIE_MSI_ENABLE_ADDR;
	if (priv->msix) {
		u32 msix_base;
		int err = nicdrv_check_block(priv, NIC_RB_PCIE_MSIX, &msix_base);

		if (err) {
			pci_free_irq_vectors(pdev);
			priv->irq_count = 0;
			return err;
		}
		priv->irq_enable = msix_base + NIC_CSR_PCIE_MSIX_ENABLE_ADDR;
	}
	for (i = 0; i < priv->nvec; i++) {
		struct nicdrv_vec *vec = &priv->vec[i];

		vec->priv = priv;
		vec->msi = first + i;
		vec->rx = i == 0;
		vec->all_tx = priv->nvec == 1;
		vec->group = i ? i - 1 : 0;
		vec->irq = 0;
		netif_napi_add(priv->ndev, &vec->napi, nicdrv_poll);
	}
	return 0;
}

const char *nicdrv_irq_mode(struct nicdrv_priv *priv)
{
	if (priv->pdev->msix_enabled)
		return "MSI-X";
	return priv->pdev->msi_enabled ? "MSI" : "INTx";
}

void nicdrv_irq_fini(struct nicdrv_priv *priv)
{
	unsigned int i;

	for (i = 0; i < priv->nvec; i++)
		netif_napi_del(&priv->vec[i].napi);
	priv->nvec = 0;
	if (priv->irq_count)
		pci_free_irq_vectors(priv->pdev);
	priv->irq_count = 0;
}

/* Every MSI number of the nic block, whichever vector takes it. */
static u32 nicdrv_msi_mask(struct nicdrv_priv *priv)
{
	return GENMASK(priv->msi_first + priv->hw_txirq, priv->msi_first);
}

int nicdrv_irq_request(struct nicdrv_priv *priv)
{
	struct pci_dev *pdev = priv->pdev;
	const unsigned long flags = pdev->msi_enabled || pdev->msix_enabled ? 0 : IRQF_SHARED;
	unsigned int i;
	int err;
	u32 en;

	for (i = 0; i < priv->nvec; i++) {
		struct nicdrv_vec *vec = &priv->vec[i];
		int irq = pci_irq_vector(pdev, priv->nvec == 1 ? 0 : vec->msi);

		if (vec->all_tx)
			snprintf(vec->name, sizeof(vec->name), "%s-txrx", priv->ndev->name);
		else if (vec->rx)
			snprintf(vec->name, sizeof(vec->name), "%s-rx", priv->ndev->name);
		else
			snprintf(vec->name, sizeof(vec->name), "%s-tx%u", priv->ndev->name,
				 vec->group);
		if (irq < 0) {
			err = irq;
			goto err_free;
		}
		err = request_irq(irq, nicdrv_irq, flags, vec->name, vec);
		if (err)
			goto err_free;
		vec->irq = irq;
		napi_enable(&vec->napi);
	}
	en = nic_core_rd32(&priv->hw, priv->irq_enable);
	nic_core_wr32(&priv->hw, priv->irq_enable, en | nicdrv_msi_mask(priv));
	return 0;

err_free:
	netdev_err(priv->ndev, "cannot request the interrupt of vector %u (MSI %u): %d\n", i,
		   priv->vec[i].msi, err);
	nicdrv_irq_release(priv);
	return err;
}

void nicdrv_irq_release(struct nicdrv_priv *priv)
{
	u32 en = nic_core_rd32(&priv->hw, priv->irq_enable);
	unsigned int i;

	nic_core_wr32(&priv->hw, priv->irq_enable, en & ~nicdrv_msi_mask(priv));
	for (i = 0; i < priv->nvec; i++) {
		struct nicdrv_vec *vec = &priv->vec[i];

		if (!vec->irq)
			continue;
		free_irq(vec->irq, vec);
		napi_disable(&vec->napi);
		vec->irq = 0;
	}
}
