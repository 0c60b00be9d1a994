# SPDX-License-Identifier: BSD-2-Clause
#
# sim_pcie_phy.py: SimPCIePHY, the simulation stand-in for the FPGA's hard PCIe block: a LitePCIe
# PHY with no hard IP behind it. It gives the endpoint the interface LitePCIe's S7PCIEPHY gives
# and puts it on the Verilator top level, where the C++ root-complex model in sw/sim/ plays the
# hard block, the link and the host.
#
# Interfaces: pcie_rx_* (host -> device TLP stream), pcie_tx_* (device -> host), pcie_msi_* (MSI
# requests), the configuration the root complex negotiated and the flow-control credits in use,
# as top-level pins; the S7 PHY's status registers. Pins and stream format: the class docstring.
#
# Parameters: data_width (64 or 128), bar0_size (a power of two), msi_type ("msi" or
# "msi-multi-vector"), with_msix (an MSI-X capability beside MSI: its enable and function mask
# pins), checked at construction. Negotiated MPS/MRRS above what LitePCIe is built for are
# clamped, as the S7 PHY does.

from types import SimpleNamespace

from migen import ClockSignal, If, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRField, CSRStatus

from litepcie.common import get_bar_mask, msi_layout, phy_layout
from litepcie.tlp.common import max_payload_size as LITEPCIE_MAX_PAYLOAD
from litepcie.tlp.common import max_request_size as LITEPCIE_MAX_REQUEST

FC_WIDTH = 12       # bits of each flow-control credit count (pcie_fc_*)


class SimPCIePHY(LiteXModule):
    """A LitePCIe PHY whose streams, MSI and configuration are the top-level pins of `pads`.

    Pins:
      pcie_rx_*   host -> device raw TLP stream (LitePCIe `source`): valid, ready(out), first,
                  last, dat[data_width], be[data_width/8].
      pcie_tx_*   device -> host raw TLP stream (LitePCIe `sink`): valid(out), ready, first,
                  last, dat, be.
      pcie_msi_*  MSI request (LitePCIe `msi`): valid(out), ready, dat[8].
      pcie_id, pcie_max_request_size, pcie_max_payload_size, pcie_link_up, pcie_msi_enable,
      pcie_bus_master_enable: the configuration the root complex negotiated (sizes in bytes).
      pcie_msix_enable, pcie_msix_mask (with_msix): MSI-X Enable and Function Mask as the host
                  set them. While MSI-X is enabled the MSI pins stay idle: an MSI request is
                  taken and dropped (the function uses MSI-X, PCIe 6.8.1.3).
      pcie_fc_ph, pcie_fc_pd, pcie_fc_nph: the transmit credits in use (taken by TLPs sent, not
                  yet returned by the root complex): posted header, posted data (16 bytes
                  each), non-posted header; FC_WIDTH bits. The 7-series block gives the credits
                  available (fc_ph/fc_pd/fc_nph with fc_sel): in use is the limit less those.

    Stream format (the 7-series AXI core's with LitePCIe endianness "big"): a TLP starts at the
    start of a beat, dword i of the TLP sits in dat[32*i%W...], each dword holds TLP bytes in
    big-endian order (TLP byte 0 in bits 31:24 of dword 0), be has 4 bits per dword, 0xf for
    every dword that carries TLP data and 0 past the end of the TLP.

    Parameters:
      data_width  64 or 128 (7-series: 64 bits for Gen1 x4 / Gen2 x2, 128 bits for Gen2 x4), at
                  the sys clock (125 MHz).
      bar0_size   size of BAR0 in bytes (power of two).
      msi_type    "msi-multi-vector" (LitePCIeMSIMultiVector, what the SoC uses: each MSI number
                  is its own vector, sent as the MSI data's low bits on pcie_msi_dat, which the
                  host model reports with each interrupt) or "msi" (LitePCIeMSI: one vector, the
                  host would read PCIE_MSI_VECTOR and write PCIE_MSI_CLEAR; the host library
                  does not drive it).
      with_msix   an MSI-X capability too (nic_soc.py adds LitePCIe's MSI-X block, whose
                  messages are MWr TLPs on the stream; `msix_enable` / `msix_mask` here).
    MPS and MRRS are clamped to the largest LitePCIe is built for (LitePCIe 2024.12: 512 bytes),
    as the S7 PHY does.
    """

    endianness    = "big"
    qword_aligned = False

    def __init__(self, pads, data_width=128, bar0_size=0x100000, msi_type="msi",
                 with_msix=False):
        if data_width not in (64, 128):
            raise ValueError(f"SimPCIePHY: data_width must be 64 or 128, not {data_width}")
        if msi_type not in ("msi", "msi-multi-vector"):
            raise ValueError(f"SimPCIePHY: msi_type must be 'msi' or 'msi-multi-vector', not "
                             f"{msi_type!r} (MSI-X: with_msix=True)")
        if bar0_size & (bar0_size - 1):
            raise ValueError(f"SimPCIePHY: bar0_size must be a power of two, not {bar0_size:#x}")

        self.sink   = stream.Endpoint(phy_layout(data_width))   # device -> host
        self.source = stream.Endpoint(phy_layout(data_width))   # host -> device
        self.msi    = stream.Endpoint(msi_layout())

        self.data_width       = data_width
        self.bar0_size        = bar0_size
        self.bar0_mask        = get_bar_mask(bar0_size)
        self.id               = Signal(16, reset_less=True)
        self.max_request_size = Signal(16, reset_less=True)
        self.max_payload_size = Signal(16, reset_less=True)
        self.fc               = SimpleNamespace(**{k: Signal(FC_WIDTH, name=f"fc_{k}")
                                                   for k in ("ph", "pd", "nph")})
        self.msi_type         = msi_type
        self.with_msix        = with_msix
        self.msix_enable      = Signal()
        self.msix_mask        = Signal()
        self.with_ptm         = False
        # LiteX's add_pcie names phy.cd_pcie.clk in a false-path constraint; we run in sys.
        self.cd_pcie          = SimpleNamespace(clk=ClockSignal("sys"))

        # Registers (the S7 PHY's, so that software written for a board runs unchanged).
        self._link_status = CSRStatus(fields=[
            CSRField("status", size=1, description="Link up (``1``) or down (``0``)."),
            CSRField("rate",   size=1, description="Always 0 in simulation (see the host model)."),
            CSRField("width",  size=2, description="Always 0 in simulation (see the host model)."),
            CSRField("ltssm",  size=6, description="Always 0 in simulation."),
        ])
        self._msi_enable        = CSRStatus(description="MSI Enable Status. ``1``: MSI is enabled.")
        self._msix_enable       = CSRStatus(description="MSI-X Enable Status. ``1``: MSI-X is "
                                            "enabled.")
        self._bus_master_enable = CSRStatus(description="Bus Mastering Status. ``1``: enabled.")
        self._max_request_size  = CSRStatus(16, description="Max Read Request Size in use (bytes), "
            "the negotiated value clamped to what LitePCIe is built for.")
        self._max_payload_size  = CSRStatus(16, description="Max Payload Size in use (bytes), "
            "the negotiated value clamped to what LitePCIe is built for.")

        # # #

        self.comb += [
            # Host -> device.
            self.source.valid.eq(pads.rx_valid),
            pads.rx_ready.eq(self.source.ready),
            self.source.first.eq(pads.rx_first),
            self.source.last.eq(pads.rx_last),
            self.source.dat.eq(pads.rx_dat),
            self.source.be.eq(pads.rx_be),
            # Device -> host.
            pads.tx_valid.eq(self.sink.valid),
            self.sink.ready.eq(pads.tx_ready),
            pads.tx_first.eq(self.sink.first),
            pads.tx_last.eq(self.sink.last),
            pads.tx_dat.eq(self.sink.dat),
            pads.tx_be.eq(self.sink.be),
            # MSI (idle while MSI-X is enabled).
            pads.msi_valid.eq(self.msi.valid & ~self.msix_enable),
            self.msi.ready.eq(pads.msi_ready | self.msix_enable),
            pads.msi_dat.eq(self.msi.dat),
            self._msix_enable.status.eq(self.msix_enable),
            # Configuration.
            self.id.eq(pads.id),
            self.fc.ph.eq(pads.fc_ph), self.fc.pd.eq(pads.fc_pd), self.fc.nph.eq(pads.fc_nph),
            self._link_status.fields.status.eq(pads.link_up),
            self._msi_enable.status.eq(pads.msi_enable),
            self._bus_master_enable.status.eq(pads.bus_master_enable),
            self._max_request_size.status.eq(self.max_request_size),
            self._max_payload_size.status.eq(self.max_payload_size),
        ]
        if with_msix:
            self.comb += [self.msix_enable.eq(pads.msix_enable), self.msix_mask.eq(pads.msix_mask)]
        # Clamp as the S7 PHY does (its convert_size() caps at LitePCIe's build-time maximum),
        # into registers: the sizes change only when the link trains, and every request-size
        # decision in LitePCIe and the NIC then starts from a flip-flop instead of the clamp.
        self.sync += [
            If(pads.max_request_size > LITEPCIE_MAX_REQUEST,
                self.max_request_size.eq(LITEPCIE_MAX_REQUEST)
            ).Else(self.max_request_size.eq(pads.max_request_size)),
            If(pads.max_payload_size > LITEPCIE_MAX_PAYLOAD,
                self.max_payload_size.eq(LITEPCIE_MAX_PAYLOAD)
            ).Else(self.max_payload_size.eq(pads.max_payload_size)),
        ]
