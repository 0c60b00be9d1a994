# SPDX-License-Identifier: BSD-2-Clause
#
# nic_irq.py: the NIC datapath's interrupt vectors as one soft-CPU interrupt, for SoCs whose
# host port is the SoC bus (no MSI): what an MSI per vector is on PCIe.
#
# What it is: a LiteX EventManager with one pulse event per vector (NIC_RX, NIC_TX, NIC_TX1,
# ...): a vector's pulse sets its pending bit, the CPU clears it by writing the bit to
# `nic_irq_pending`; the CPU's interrupt line is any enabled pending bit (`nic_irq_enable`).
# Event i is vector i of `names`, so a vector's NIC_<name>_INTERRUPT constant (nic_soc.py) is
# its bit number.
# Interfaces: `ev` (status, pending, enable CSRs; ev.irq to the CPU), `pulses` (the vectors'
# pulses, for the bus analyzer's msi probe).
# Parameters: names (vector names), pulses (one-cycle signals, in the same order).

from litex.gen import LiteXModule
from litex.soc.interconnect.csr_eventmanager import EventManager, EventSourcePulse


class NICIrq(LiteXModule):
    def __init__(self, names, pulses):
        self.pulses = list(pulses)
        self.ev = EventManager()
        for name, pulse in zip(names, pulses, strict=True):
            src = EventSourcePulse(name=name.lower(), description=f"{name}: the datapath "
                                   "raised this vector's interrupt (coalesced).")
            setattr(self.ev, name.lower(), src)
            self.comb += src.trigger.eq(pulse)
        self.ev.finalize()
