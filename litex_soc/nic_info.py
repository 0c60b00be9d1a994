#
# nic_info.py: identification block of the NIC (BAR0), the first thing a driver reads.
#
# What it is: read-only registers a driver checks before it touches anything else: a magic word,
# the design version, and the build-time configuration it must agree with. Together with LiteX's
# ctrl_scratch register they make the bring-up check (read magic, write/read scratch).
#
# Parameters: data_width (PCIe datapath bits), ndmas (LitePCIe DMA channels), sim (1 for the
# simulation target), with_cpu (1 when a soft CPU is built in).

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRField, CSRStatus

NIC_MAGIC = 0x4E494331          # "NIC1"
NIC_VERSION_MAJOR = 0
NIC_VERSION_MINOR = 1


class NICInfo(LiteXModule):
    def __init__(self, data_width, ndmas, sim, with_cpu):
        self.magic = CSRStatus(32, reset=NIC_MAGIC,
            description=f"Identification: reads {NIC_MAGIC:#010x} (\"NIC1\") on this design.")
        self.version = CSRStatus(fields=[
            CSRField("minor", size=16, reset=NIC_VERSION_MINOR, description="Minor version."),
            CSRField("major", size=16, reset=NIC_VERSION_MAJOR, description="Major version."),
        ], description="Design version.")
        self.config = CSRStatus(fields=[
            CSRField("data_width", size=10, reset=data_width,
                     description="PCIe datapath width in bits (64 or 128)."),
            CSRField("ndmas", size=6, reset=ndmas, description="LitePCIe DMA channels."),
            CSRField("sim", size=1, reset=int(sim),
                     description="``1``: simulation target (host model in place of the hard IP)."),
            CSRField("cpu", size=1, reset=int(with_cpu), description="``1``: soft CPU present."),
        ], description="Build-time configuration.")
