# SPDX-License-Identifier: BSD-2-Clause
#
# soc_pcie_device.py: the SoC (build/sim_dw<W>/gateware/nicsoc.v) as a cocotbext-pcie device,
# so that cocotbext-pcie's RootComplex enumerates it and talks to it. The adapter plays the
# Xilinx 7-series hard block the SoC's SimPCIePHY stands for (litex_soc/targets/sim_pcie_phy.py).
#
# Interfaces: SocPcieDevice(dut, ...), a cocotbext.pcie.core.Device with one SocFunction (type 0
# config space: vendor/device id, class code, BAR0 32-bit non-prefetchable, PM, MSI (64-bit,
# multiple message) and PCIe (MPS supported 512, 5-bit tags) capabilities). Connect it with
# rc.make_port().connect(dev). It drives the SoC's pins: pcie_rx_* (memory requests to BAR0 and
# completions for the SoC's reads, as raw TLP beats), pcie_id / max_payload_size /
# max_request_size / msi_enable / bus_master_enable / link_up (from the config space the RC
# wrote), pcie_tx_ready and pcie_msi_ready; it takes the SoC's pcie_tx_* TLPs to the RC (each
# first through `on_tx`, the rule checker's hook; what goes to the SoC through `on_rx`) and
# turns pcie_msi_valid/dat into the MSI MWr (programmed address, data | vector), in order with
# the SoC's TLPs.
# Parameters: bar0_size, msi_log2 (multiple message capable), tx_ready_prob / rx_gap_prob
# (backpressure on the SoC's TX stream, idle beats in its RX stream; 0: none), rng.
# Stream format (SimPCIePHY): TLP dword i in dat[32*i % W], big-endian bytes, be 4 bits/dword.

import random

import cocotb
from cocotb.queue import Queue
from cocotb.triggers import RisingEdge

from cocotbext.pcie.core import Device, Endpoint
from cocotbext.pcie.core.caps import MsiCapability
from cocotbext.pcie.core.tlp import Tlp, TlpType

XILINX_VENDOR_ID = 0x10EE
DEVICE_ID = 0x7024            # the 7-series core's default for Gen2 x4 (LitePCIe's S7 PHY)
CLASS_ETHERNET = 0x020000

_CPL_TYPES = {TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED, TlpType.CPL_LOCKED_DATA}
_MEM_TYPES = {TlpType.MEM_READ, TlpType.MEM_READ_64, TlpType.MEM_WRITE, TlpType.MEM_WRITE_64}


class SocFunction(Endpoint):
    """The endpoint's config space, laid out as the 7-series core's (PM 0x40, MSI 0x48, PCIe
    0x60); calls on_config() after every config write."""

    def __init__(self, bar0_size, msi_log2, on_config=None):
        super().__init__()
        self.on_config = on_config
        self.vendor_id = XILINX_VENDOR_ID
        self.device_id = DEVICE_ID
        self.subsystem_vendor_id = XILINX_VENDOR_ID
        self.subsystem_id = 0x0007
        self.class_code = CLASS_ETHERNET
        self.configure_bar(0, bar0_size)
        self.register_capability(self.pm_cap, offset=0x10)
        self.msi_cap = MsiCapability()
        self.msi_cap.msi_64bit_address_capable = 1
        self.msi_cap.msi_multiple_message_capable = msi_log2
        self.register_capability(self.msi_cap, offset=0x12)
        self.pcie_cap.max_payload_size_supported = 2          # 512 bytes
        self.pcie_cap.extended_tag_supported = False
        self.register_capability(self.pcie_cap, offset=0x18)

    async def write_config_register(self, reg, data, mask):
        await super().write_config_register(reg, data, mask)
        if self.on_config:
            self.on_config()


class SocPcieDevice(Device):
    """The SoC behind a 7-series-like hard block (see the file header)."""

    def __init__(self, dut, bar0_size=0x100000, msi_log2=5, tx_ready_prob=0.0, rx_gap_prob=0.0,
                 rng=None, on_tx=None, on_rx=None):
        self.fn = SocFunction(bar0_size, msi_log2, on_config=self._drive_config)
        super().__init__(self.fn)
        self.dut = dut
        self.width = len(dut.pcie_rx_dat)
        self.dws = self.width // 32
        self.rng = rng or random.Random(0)
        self.tx_ready_prob, self.rx_gap_prob = tx_ready_prob, rx_gap_prob
        self.on_tx, self.on_rx = on_tx, on_rx
        self.rx_queue = Queue()                  # TLPs to the SoC
        self.tx_queue = Queue()                  # TLPs from the SoC (and MSIs) to the RC
        self.tx_tlps = self.rx_tlps = self.rx_cpls = self.msis = 0
        self.msi_per_vector = {}
        self.lib_check_failures = []             # TLPs whose Tlp.check() failed
        for name, v in (("rx_valid", 0), ("rx_first", 0), ("rx_last", 0), ("rx_dat", 0),
                        ("rx_be", 0), ("tx_ready", 0), ("msi_ready", 0), ("link_up", 1),
                        ("id", 0), ("max_payload_size", 128), ("max_request_size", 128),
                        ("msi_enable", 0), ("bus_master_enable", 0)):
            getattr(dut, "pcie_" + name).value = v
        cocotb.start_soon(self._rx_logic())
        cocotb.start_soon(self._tx_logic())
        cocotb.start_soon(self._send_logic())

    # --- configuration pins --------------------------------------------------------------

    @property
    def mps(self):
        return 128 << self.fn.pcie_cap.max_payload_size

    @property
    def mrrs(self):
        return 128 << self.fn.pcie_cap.max_read_request_size

    def _drive_config(self):
        d, fn = self.dut, self.fn
        d.pcie_id.value = int(fn.pcie_id)
        d.pcie_max_payload_size.value = self.mps
        d.pcie_max_request_size.value = self.mrrs
        d.pcie_msi_enable.value = int(bool(fn.msi_cap.msi_enable))
        d.pcie_bus_master_enable.value = int(bool(fn.bus_master_enable))

    # --- RC -> SoC ---------------------------------------------------------------------------

    async def upstream_recv(self, tlp):
        """Config requests: the config space; memory requests to BAR0 and completions for
        this function: the SoC's RX stream; anything else: the library's Device (UR)."""
        if ((tlp.fmt_type in _MEM_TYPES and self.fn.match_bar(tlp.address))
                or (tlp.fmt_type in _CPL_TYPES and tlp.requester_id == self.fn.pcie_id)):
            tlp.release_fc()
            self.rx_cpls += tlp.fmt_type in _CPL_TYPES
            if self.on_rx:
                self.on_rx(tlp)
            self.rx_queue.put_nowait(tlp)
            return
        await super().upstream_recv(tlp)
        self._drive_config()

    def _beats(self, tlp):
        raw = tlp.pack()
        dws = [int.from_bytes(raw[i:i + 4], "big") for i in range(0, len(raw), 4)]
        for b in range(0, len(dws), self.dws):
            chunk = dws[b:b + self.dws]
            dat = sum(v << (32 * k) for k, v in enumerate(chunk))
            be = sum(0xF << (4 * k) for k in range(len(chunk)))
            yield dat, be, b == 0, b + self.dws >= len(dws)

    async def _rx_logic(self):
        d = self.dut
        clk = RisingEdge(d.sys_clk)
        while True:
            tlp = await self.rx_queue.get()
            self.rx_tlps += 1
            for dat, be, first, last in self._beats(tlp):
                while self.rx_gap_prob and self.rng.random() < self.rx_gap_prob:
                    d.pcie_rx_valid.value = 0
                    await clk
                d.pcie_rx_dat.value = dat
                d.pcie_rx_be.value = be
                d.pcie_rx_first.value = int(first)
                d.pcie_rx_last.value = int(last)
                d.pcie_rx_valid.value = 1
                await clk
                while not d.pcie_rx_ready.value:
                    await clk
            if self.rx_queue.empty():
                d.pcie_rx_valid.value = 0

    # --- SoC -> RC ---------------------------------------------------------------------------

    async def _tx_logic(self):
        """Samples the SoC's TX stream and MSI requests every cycle; drives the readies."""
        d = self.dut
        clk = RisingEdge(d.sys_clk)
        dws, framing, beats = [], [], 0
        p = self.tx_ready_prob
        full = (1 << (4 * self.dws)) - 1
        d.pcie_tx_ready.value = 1
        d.pcie_msi_ready.value = 1
        while True:
            await clk
            if d.pcie_tx_valid.value and d.pcie_tx_ready.value:
                dat, be = int(d.pcie_tx_dat.value), int(d.pcie_tx_be.value)
                last = bool(d.pcie_tx_last.value)
                if bool(d.pcie_tx_first.value) != (beats == 0):
                    framing.append(f"beat {beats}: first={int(d.pcie_tx_first.value)}")
                # be: 0xf per dword of the TLP, from dword 0, zeros only past its end.
                if be not in [full >> (4 * k) for k in range(self.dws)] or (be != full
                                                                             and not last):
                    framing.append(f"beat {beats}: be {be:#x}{'' if last else ' (not last)'}")
                beats += 1
                dws += [(dat >> (32 * k)) & 0xFFFFFFFF for k in range(self.dws)
                        if (be >> (4 * k)) & 0xF]
                if last:
                    raw = b"".join(v.to_bytes(4, "big") for v in dws)
                    tlp = Tlp.unpack(raw)
                    tlp.wire_dws = len(dws)          # dwords the stream marked valid
                    tlp.framing = framing            # stream format errors, for the checker
                    dws, framing, beats = [], [], 0
                    self.tx_queue.put_nowait(tlp)
            if d.pcie_msi_valid.value and d.pcie_msi_ready.value:
                self.tx_queue.put_nowait(self._msi_tlp(int(d.pcie_msi_dat.value)))
            if p:
                d.pcie_tx_ready.value = int(self.rng.random() >= p)

    def _msi_tlp(self, vector):
        """The MSI MWr as multiple-message MSI sends it: the vector in the data's low bits
        (MsiCapability.issue_msi_interrupt's rule), from this function, in TLP order."""
        cap = self.fn.msi_cap
        self.msis += 1
        self.msi_per_vector[vector] = self.msi_per_vector.get(vector, 0) + 1
        n = 1 << min(cap.msi_multiple_message_enable, cap.msi_multiple_message_capable)
        if not cap.msi_enable or vector >= n:
            raise AssertionError(f"MSI vector {vector} sent with MSI enable {cap.msi_enable}, "
                                 f"{n} messages enabled")
        data = (cap.msi_message_data & 0xFFFF & ~(n - 1)) | vector
        tlp = Tlp()
        tlp.fmt_type = TlpType.MEM_WRITE_64 if cap.msi_message_address >> 32 else TlpType.MEM_WRITE
        tlp.requester_id = self.fn.pcie_id
        tlp.set_addr_be_data(cap.msi_message_address, data.to_bytes(4, "little"))
        tlp.is_msi = True
        return tlp

    async def _send_logic(self):
        while True:
            tlp = await self.tx_queue.get()
            if not getattr(tlp, "is_msi", False):
                self.tx_tlps += 1
                if self.on_tx:
                    self.on_tx(tlp)
            if not tlp.check():
                self.lib_check_failures.append(repr(tlp))
                continue
            await self.send(tlp)
