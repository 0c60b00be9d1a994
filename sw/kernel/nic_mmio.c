// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_mmio.c: BAR0 for the driver proper: mapped at probe, and the shared core's two MMIO
 * accessors (nic_core_osdep.h), bounds-checked against BAR0's length. The QEMU test's build
 * (NICDRV_FAKE=1) links nic_fake.c instead, whose model of the SoC serves BAR0.
 */
#include <linux/io.h>

#include "nicdrv.h"

int nicdrv_hw_map(struct nicdrv_priv *priv)
{
	priv->hw.len = pci_resource_len(priv->pdev, 0);
	priv->hw.bar = pci_iomap(priv->pdev, 0, 0);
	if (!priv->hw.bar) {
		dev_err(&priv->pdev->dev, "cannot map BAR0\n");
		return -ENOMEM;
	}
	return 0;
}

void nicdrv_hw_unmap(struct nicdrv_priv *priv)
{
	pci_iounmap(priv->pdev, priv->hw.bar);
	priv->hw.bar = NULL;
}

u32 nic_core_rd32(struct nic_core_hw *hw, u32 off)
{
	if ((resource_size_t)off + 4 > hw->len)
		return ~0u;
	return ioread32(hw->bar + off);
}

void nic_core_wr32(struct nic_core_hw *hw, u32 off, u32 v)
{
	if ((resource_size_t)off + 4 <= hw->len)
		iowrite32(v, hw->bar + off);
}
