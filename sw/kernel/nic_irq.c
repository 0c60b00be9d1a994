// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_irq.c: the NIC driver's interrupt vectors and NAPI polls.
 *
 * The nic block's MSIs (its register-block table entry) are RX, then TX queue group
 * 0..hw_txirq-1; LitePCIe's MSI block sends MSI number m as message m (data | m), so every
 * message up to the nic block's last is allocated with pci_alloc_irq_vectors (MSI-X if the
 * device has it, else multiple-message MSI) and vector i of the driver is Linux irq
 * pci_irq_vector(pdev, its MSI number). The pcie_msi block's ENABLE mask has the nic block's
 * MSI numbers set while the interface is up. One NAPI context per vector: RX's polls the RX
 * ring, TX group g's reclaims the TX queues q with q % hw_txirq == g.
 * Interfaces: nicdrv_irq_init/fini (probe/remove), nicdrv_irq_request/release (open/stop).
 */
#include <linux/interrupt.h>

#include "nicdrv.h"

static irqreturn_t nicdrv_irq(int irq, void *data)
{
	struct nicdrv_vec *vec = data;

	napi_schedule_irqoff(&vec->napi);
	return IRQ_HANDLED;
}

static int nicdrv_poll(struct napi_struct *napi, int budget)
{
	struct nicdrv_vec *vec = container_of(napi, struct nicdrv_vec, napi);
	struct nicdrv_priv *priv = vec->priv;
	unsigned int q;
	int done;

	if (vec->rx)
		return nicdrv_rx_poll(priv, napi, budget);
	for (q = vec->group; q < priv->ntxq; q += priv->hw_txirq)
		nicdrv_tx_clean(priv, &priv->txq[q], budget);
	done = 0;
	if (budget)	/* netpoll (budget 0) must not complete */
		napi_complete_done(napi, done);
	return done;
}

int nicdrv_irq_init(struct nicdrv_priv *priv)
{
	const struct nic_core_rb_entry *nic = nic_core_rb_lookup(&priv->rb, NIC_RB_NIC);
	struct pci_dev *pdev = priv->pdev;
	unsigned int first = nic_core_rb_msi(nic), need, i;
	int n;

	if (first == NIC_RB_NO_IRQ) {
		dev_err(&pdev->dev, "the nic block has no MSI numbers\n");
		return -ENODEV;
	}
	priv->nvec = 1 + priv->hw_txirq;
	need = first + priv->nvec;
#ifdef NICDRV_FAKE
	n = 0 * need;	/* the model schedules the NAPI contexts itself */
#else
	n = pci_alloc_irq_vectors(pdev, need, need, PCI_IRQ_MSIX | PCI_IRQ_MSI);
	if (n < 0) {
		dev_err(&pdev->dev,
			"cannot allocate %u MSI/MSI-X vectors (the nic block's MSI numbers are %u..%u): %d\n",
			need, first, need - 1, n);
		return n;
	}
#endif
	priv->irq_count = n;
	priv->msix = pdev->msix_enabled;
	for (i = 0; i < priv->nvec; i++) {
		struct nicdrv_vec *vec = &priv->vec[i];

		vec->priv = priv;
		vec->msi = first + i;
		vec->rx = i == 0;
		vec->group = i ? i - 1 : 0;
		vec->irq = 0;
		netif_napi_add(priv->ndev, &vec->napi, nicdrv_poll);
	}
	return 0;
}

void nicdrv_irq_fini(struct nicdrv_priv *priv)
{
	unsigned int i;

	for (i = 0; i < priv->nvec; i++)
		netif_napi_del(&priv->vec[i].napi);
	priv->nvec = 0;
	if (priv->irq_count)
		pci_free_irq_vectors(priv->pdev);
}

static u32 nicdrv_msi_mask(struct nicdrv_priv *priv)
{
	u32 mask = 0;
	unsigned int i;

	for (i = 0; i < priv->nvec; i++)
		if (priv->vec[i].msi < 32)
			mask |= BIT(priv->vec[i].msi);
	return mask;
}

int nicdrv_irq_request(struct nicdrv_priv *priv)
{
	u32 en;
	unsigned int i;
	int err;

	for (i = 0; i < priv->nvec; i++) {
		struct nicdrv_vec *vec = &priv->vec[i];
		int irq = pci_irq_vector(priv->pdev, vec->msi);

		if (vec->rx)
			snprintf(vec->name, sizeof(vec->name), "%s-rx", priv->ndev->name);
		else
			snprintf(vec->name, sizeof(vec->name), "%s-tx%u", priv->ndev->name,
				 vec->group);
#ifdef NICDRV_FAKE
		irq = -1;	/* no interrupt: NAPI only */
		napi_enable(&vec->napi);
		vec->irq = irq;
		continue;
#endif
		if (irq < 0) {
			err = irq;
			goto err_free;
		}
		err = request_irq(irq, nicdrv_irq, 0, vec->name, vec);
		if (err)
			goto err_free;
		vec->irq = irq;
		napi_enable(&vec->napi);
	}
	en = nic_core_rd32(&priv->hw, priv->msi_base + NIC_CSR_PCIE_MSI_ENABLE_ADDR);
	nic_core_wr32(&priv->hw, priv->msi_base + NIC_CSR_PCIE_MSI_ENABLE_ADDR,
		      en | nicdrv_msi_mask(priv));
	return 0;

err_free:
	netdev_err(priv->ndev, "cannot request the interrupt of vector %u (MSI %u): %d\n", i,
		   priv->vec[i].msi, err);
	nicdrv_irq_release(priv);
	return err;
}

void nicdrv_irq_release(struct nicdrv_priv *priv)
{
	u32 en = nic_core_rd32(&priv->hw, priv->msi_base + NIC_CSR_PCIE_MSI_ENABLE_ADDR);
	unsigned int i;

	nic_core_wr32(&priv->hw, priv->msi_base + NIC_CSR_PCIE_MSI_ENABLE_ADDR,
		      en & ~nicdrv_msi_mask(priv));
	for (i = 0; i < priv->nvec; i++) {
		struct nicdrv_vec *vec = &priv->vec[i];

		if (!vec->irq)
			continue;
		if (vec->irq > 0)
			free_irq(vec->irq, vec);
		napi_disable(&vec->napi);
		vec->irq = 0;
	}
}
