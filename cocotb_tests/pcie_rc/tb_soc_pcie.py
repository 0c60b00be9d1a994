# SPDX-License-Identifier: BSD-2-Clause
#
# tb_soc_pcie.py: cocotb testbench of the whole SoC (nicsoc) under cocotbext-pcie's RootComplex,
# through soc_pcie_device.SocPcieDevice; every TLP the SoC sends goes through tlp_rules.TlpRules.
#
# Tests: test_enumerate (config space, BAR0, MSI, bus mastering, the identification block and its
# register-block table), test_mmio (reads of every byte-enable pattern, zero-length and 8-byte
# reads, partial and multi-dword writes on CTRL_SCRATCH: the project's BAR0 policy), test_dma
# (LitePCIe's DMA with the pattern generator / checker, both directions, random 16-byte aligned
# offsets and lengths), test_nic_rings (the NIC's TX and RX rings through the MAC loopback,
# via nicmodels/nic_driver.py, TX buffers at random byte offsets, RX buffers at random
# 16-byte offsets, many across 4 KiB; every frame compared), test_dma_misaligned (LitePCIe's DMA
# given descriptors at 1..12-byte offsets and odd lengths: each moved exactly or refused with
# its counter, no TLP, guard bytes around every buffer intact), test_nic_rx_misaligned (RX
# buffers at 1..12-byte offsets and of odd lengths: BAD_ADDR / TOO_BIG / the frame exactly,
# counted, nothing written outside a buffer), test_dma_one (one transfer, its
# request counts to PCIE_RC_OUT for the comparison with the C++ model). Each ends asserting no
# rule violation, no cocotbext-pcie check failure and no cocotbext-pcie warning.
# Parameters: environment variable PCIE_RC_CFG (JSON): mps, mrrs (bytes the RC programs),
# tx_ready_prob, rx_gap_prob (backpressure on the SoC's TX, gaps in its RX), split_rcb (the RC
# splits read completions at every RCB), seed, dma_cases, nic_frames, one.
# Registers: block types and in-block offsets from sw/include/nic_regs.h (build-independent);
# block bases from the table at BAR0 offset 0, read at run time.

import logging
import os
import random
import re
from pathlib import Path

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge

from cocotb_tests.pcie_rc.soc_pcie_device import SocPcieDevice
from cocotb_tests.pcie_rc.tlp_rules import TlpRules
from cocotbext.pcie.core import RootComplex
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpType

REPO = Path(__file__).resolve().parents[2]
NIC_REGS = REPO / "sw" / "include" / "nic_regs.h"
MAGIC = 0x4E494331
# BAR0 reads longer than 1 DW: refused with an Unsupported Request completion (LitePCIe patch
# 0002, docs/register_map.md).
MULTI_DW_READ_STATUS = CplStatus.UR
TIMEOUT_US = 20


def parse_regs(path=NIC_REGS):
    """({block: type}, {(block, reg): (offset, words)}, {(block, reg, field): (shift, width)})"""
    text = path.read_text()
    types = {m[0]: int(m[1], 16) for m in re.findall(r"NIC_RB_(\w+) = (0x[0-9a-f]+),", text)}
    addrs = dict(re.findall(r"#define NIC_CSR_(\w+)_ADDR (0x[0-9a-f]+)u", text))
    sizes = dict(re.findall(r"#define NIC_CSR_(\w+)_SIZE (\d+)\n", text))
    offs = dict(re.findall(r"#define NIC_CSR_(\w+)_OFFSET (\d+)", text))
    regs, fields = {}, {}
    for blk in [*types, "INFO"]:
        for name, a in addrs.items():
            if name.startswith(blk + "_"):
                regs[(blk, name[len(blk) + 1:])] = (int(a, 16), int(sizes.get(name, 1)))
    for name, o in offs.items():
        for (blk, reg) in regs:
            stem = f"{blk}_{reg}_"
            if name.startswith(stem) and name in sizes:
                fields[(blk, reg, name[len(stem):])] = (int(o), int(sizes[name]))
    return types, regs, fields


class LogCounter(logging.Handler):
    """Counts cocotbext-pcie's warnings and errors (every logger under cocotb.pcie)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        self.records.append(record.getMessage())


def _not_scan(record):
    """Drops the RC's warnings about its scan of device numbers 1..31 on the SoC's bus (no
    function there: expected)."""
    return not record.getMessage().startswith("Failed to route config type 0 TLP")


class TB:
    def __init__(self, dut, cfg):
        self.dut, self.cfg = dut, cfg
        self.log = logging.getLogger("cocotb.tb")
        self.rng = random.Random(cfg["seed"])
        self.types, self.regs, self.fields = parse_regs()
        self.rc = RootComplex()
        self.rc.max_payload_size = (cfg["mps"] // 128).bit_length() - 1
        self.rc.split_on_all_rcb = cfg.get("split_rcb", False)
        self.rules = TlpRules(lambda: self.dev.fn.pcie_id, lambda: self.dev.mps,
                              lambda: self.dev.mrrs)
        self.dev = SocPcieDevice(dut, tx_ready_prob=cfg.get("tx_ready_prob", 0),
                                 rx_gap_prob=cfg.get("rx_gap_prob", 0), rng=self.rng,
                                 on_tx=self.rules.device_tlp, on_rx=self._on_rx)
        self.rc.make_port().connect(self.dev)
        self.rc.log.addFilter(_not_scan)
        self.logs = LogCounter()
        pcie_log = logging.getLogger("cocotb.pcie")
        for h in [h for h in pcie_log.handlers if isinstance(h, LogCounter)]:
            pcie_log.removeHandler(h)           # a previous test's
        pcie_log.addHandler(self.logs)
        logging.getLogger("cocotb.pcie").setLevel(logging.WARNING)
        self.msi_count = {}
        self.blocks = {}

    def _on_rx(self, tlp):
        if tlp.fmt_type in {TlpType.CPL, TlpType.CPL_DATA}:
            self.rules.host_completion(tlp)
        else:
            self.rules.host_request(tlp)

    async def init(self):
        d = self.dut
        cocotb.start_soon(Clock(d.sys_clk, 8, "ns").start())
        d.eth_rx_data.value = 0
        d.eth_rx_dv.value = 0
        d.eth_rx_er.value = 0
        d.sys_rst.value = 1
        await ClockCycles(d.sys_clk, 10)
        d.sys_rst.value = 0
        await ClockCycles(d.sys_clk, 10)
        cocotb.start_soon(self._eth_loopback())
        await self.rc.enumerate()
        self.pdev = self.rc.find_device(self.dev.fn.pcie_id)
        await self.pdev.enable_device()
        await self.pdev.set_master()
        await self.pdev.set_readrq((self.cfg["mrrs"] // 128).bit_length() - 1)
        nvec = await self.pdev.alloc_irq_vectors(1, 32)
        assert nvec == 32, f"MSI vectors: {nvec}"
        for k in range(nvec):
            self.pdev.request_irq(k, self._irq_handler(k))
        self.bar0 = self.pdev.bar_window[0]
        self.bar0_addr = self.pdev.bar_addr[0]
        await self.discover()

    def _irq_handler(self, k):
        async def handler():
            self.msi_count[k] = self.msi_count.get(k, 0) + 1
        return handler

    async def _eth_loopback(self):
        """The Verilator harness's loopback: the TX pins sampled each cycle drive RX."""
        d = self.dut
        clk = RisingEdge(d.sys_clk)
        while True:
            await clk
            d.eth_rx_data.value = d.eth_tx_data.value
            d.eth_rx_dv.value = d.eth_tx_en.value
            d.eth_rx_er.value = d.eth_tx_er.value

    # --- MMIO --------------------------------------------------------------------------------

    async def rd(self, off, n=4):
        return await self.bar0.read(off, n, timeout=TIMEOUT_US, timeout_unit="us")

    async def rd32(self, off):
        return int.from_bytes(await self.rd(off, 4), "little")

    async def wr32(self, off, v):
        await self.bar0.write(off, int(v & 0xFFFFFFFF).to_bytes(4, "little"))

    async def discover(self):
        """The identification block and its register-block table: {type: (base, info)}."""
        assert await self.rd32(0) == MAGIC
        count = await self.rd32(self.regs[("INFO", "RB_COUNT")][0]) & 0xFF
        table = self.regs[("INFO", "RB0_TYPE")][0]
        for i in range(count):
            t, _ver, base, info = [await self.rd32(table + 16 * i + 4 * k) for k in range(4)]
            self.blocks[t] = (base, info)

    def addr(self, blk, reg):
        base, _ = self.blocks[self.types[blk]]
        return base + self.regs[(blk, reg)][0]

    async def read_reg(self, blk, reg):
        a, words = self.addr(blk, reg), self.regs[(blk, reg)][1]
        v = 0
        for i in range(words):
            v = (v << 32) | await self.rd32(a + 4 * i)
        return v

    async def write_reg(self, blk, reg, value):
        a, words = self.addr(blk, reg), self.regs[(blk, reg)][1]
        for i in range(words):
            await self.wr32(a + 4 * i, value >> (32 * (words - 1 - i)))

    def field(self, blk, reg, name, v):
        shift, width = self.fields[(blk, reg, name)]
        assert 0 <= v < 1 << width, (blk, reg, name, v)
        return v << shift

    def msi_of(self, blk, k=0):
        _, info = self.blocks[self.types[blk]]
        assert info & 0xFF != 0xFF and k < (info >> 8) & 0xFF, (blk, hex(info))
        return (info & 0xFF) + k

    async def raw_read(self, off, length, fbe, lbe):
        """One MRd of `length` DW to BAR0+off with the given BEs: the completions."""
        req = Tlp()
        req.fmt_type = TlpType.MEM_READ
        req.requester_id = self.rc.pcie_id if hasattr(self.rc, "pcie_id") else req.requester_id
        req.address = self.bar0_addr + off
        req.length, req.first_be, req.last_be = length, fbe, lbe
        return await self.rc.perform_nonposted_operation(req, TIMEOUT_US, "us")

    async def raw_write(self, off, data_dws, fbe, lbe):
        req = Tlp()
        req.fmt_type = TlpType.MEM_WRITE
        req.address = self.bar0_addr + off
        req.set_data(b"".join(v.to_bytes(4, "little") for v in data_dws))
        req.length, req.first_be, req.last_be = len(data_dws), fbe, lbe
        await self.rc.perform_posted_operation(req)

    # --- verdict -----------------------------------------------------------------------------

    def check_clean(self, fails=()):
        """Asserts no test failure (`fails`), no rule violation, no cocotbext-pcie check
        failure or warning, with every message."""
        problems = (list(fails) + self.rules.violations + [f"cocotbext-pcie Tlp.check failed: {t}"
                                             for t in self.dev.lib_check_failures]
                    + [f"cocotbext-pcie: {m}" for m in self.logs.records])
        self.log.info("TLPs from the SoC: %s; to it: %d; MSIs: %s", self.rules.counts,
                      self.dev.rx_tlps, dict(sorted(self.dev.msi_per_vector.items())))
        assert not problems, (f"{len(fails)} failures, {len(problems) - len(fails)} rule "
                              "violations:\n" + "\n".join(problems[:40]))


def config():
    import json
    return json.loads(os.environ["PCIE_RC_CFG"])


# --- a. enumeration and the identification block ---------------------------------------------

@cocotb.test()
async def test_enumerate(dut):
    tb = TB(dut, config())
    await tb.init()
    fn, d = tb.dev.fn, tb.dut
    assert tb.pdev.vendor_id == fn.vendor_id and tb.pdev.device_id == fn.device_id
    assert tb.pdev.bar_size[0] == 0x100000 and tb.bar0_addr & 0xFFFFF == 0
    assert fn.bus_master_enable and fn.memory_space_enable and fn.msi_cap.msi_enable
    assert int(d.pcie_id.value) == int(fn.pcie_id) and int(fn.pcie_id) != 0
    assert int(d.pcie_max_payload_size.value) == tb.cfg["mps"] == tb.dev.mps
    assert int(d.pcie_max_request_size.value) == tb.cfg["mrrs"] == tb.dev.mrrs
    assert int(d.pcie_msi_enable.value) == 1 and int(d.pcie_bus_master_enable.value) == 1
    # Every block the contract names is in the table, at distinct 4-byte aligned bases.
    want = {"CTRL", "PCIE_PHY", "PCIE_MSI", "PCIE_DMA0", "DMA_PATTERN", "NIC"}
    assert {tb.types[b] for b in want} <= set(tb.blocks), tb.blocks
    bases = [b for b, _ in tb.blocks.values()]
    assert len(set(bases)) == len(bases) and all(b % 4 == 0 and b < 0x100000 for b in bases)
    # The SoC sees what the RC programmed (the PHY's status registers).
    assert await tb.read_reg("PCIE_PHY", "PHY_MAX_PAYLOAD_SIZE") == tb.cfg["mps"]
    assert await tb.read_reg("PCIE_PHY", "PHY_MAX_REQUEST_SIZE") == tb.cfg["mrrs"]
    assert await tb.read_reg("PCIE_PHY", "PHY_BUS_MASTER_ENABLE") == 1
    assert await tb.read_reg("PCIE_PHY", "PHY_MSI_ENABLE") == 1
    tb.log.info("blocks: %s", {hex(t): hex(b) for t, (b, _i) in tb.blocks.items()})
    tb.check_clean()


# --- b. MMIO: byte enables, zero-length, multi-dword; the partial-write policy ----------------

def _counter(tb, words):
    """The BAR0 error counter whose name has one of `words` (PCIE_BAR's PARTIAL_WRITES,
    UNSUPPORTED), if this build has it: (block, register) or None."""
    for (blk, reg) in tb.regs:
        if any(w in reg for w in words) and tb.types.get(blk) in tb.blocks:
            return blk, reg
    return None


@cocotb.test()
async def test_mmio(dut):
    tb = TB(dut, config())
    await tb.init()
    scratch = tb.addr("CTRL", "SCRATCH")
    fails = []
    value = tb.rng.getrandbits(32)
    await tb.wr32(scratch, value)
    raw = value.to_bytes(4, "little")
    ncases = 0
    # Reads: every (offset, length) within the dword, through the library's read (it builds the
    # BEs and checks byte count per completion), and the checker on the completion.
    for off in range(4):
        for n in range(1, 5 - off):
            ncases += 1
            try:
                got = await tb.rd(scratch + off, n)
                if got != raw[off:off + n]:
                    fails.append(f"read {n} B at +{off}: {got.hex()}, want {raw[off:off+n].hex()}")
            except Exception as e:
                fails.append(f"read {n} B at +{off}: {type(e).__name__} {e}")
    # The zero-length read (the library's: first BE 0, byte count 1 asserted per completion).
    ncases += 1
    try:
        await tb.rd(scratch, 0)
    except Exception as e:
        fails.append(f"zero-length read: {type(e).__name__} {e}")
    # Every first-BE pattern of a 1-DW read (non-contiguous ones too): the enabled bytes.
    for fbe in range(16):
        ncases += 1
        cpls = await tb.raw_read(scratch, 1, fbe, 0)
        if len(cpls) != 1 or cpls[0].status != CplStatus.SC:
            fails.append(f"1-DW read BE {fbe:#x}: completions {cpls!r}")
            continue
        d = cpls[0].get_data()
        for k in range(4):
            if fbe >> k & 1 and d[k] != raw[k]:
                fails.append(f"1-DW read BE {fbe:#x}: byte {k} {d[k]:#x}, want {raw[k]:#x}")
    # The BAR0 error counters (PCIE_BAR: partial writes, requests longer than 1 DW).
    drops = _counter(tb, ("PARTIAL", "MMIO_DROP"))
    unsup = _counter(tb, ("UNSUPPORTED",))
    drop0 = await tb.read_reg(*drops) if drops else None
    unsup0 = await tb.read_reg(*unsup) if unsup else None
    # 8-byte reads (2 DW) at the scratch and every dword-aligned neighbour: the policy's abort.
    for off in (scratch - 4, scratch):
        ncases += 1
        cpls = await tb.raw_read(off, 2, 0xF, 0xF)
        if len(cpls) != 1 or cpls[0].status != MULTI_DW_READ_STATUS:
            fails.append(f"8-byte read at {off:#x}: want one {MULTI_DW_READ_STATUS.name} "
                         f"completion, got {cpls!r}")
    # Writes: only whole-dword writes take; partial ones are dropped (and counted).
    ndropped, nunsup = 0, 2
    for fbe in range(1, 15):
        ncases += 1
        new = tb.rng.getrandbits(32)
        await tb.raw_write(scratch, [new], fbe, 0)
        ndropped += 1
        got = await tb.rd32(scratch)
        if got != value:
            fails.append(f"partial write BE {fbe:#x} of {new:#010x}: scratch {got:#010x}, "
                         f"want {value:#010x} (dropped)")
            value = got
    # The zero-length write: no access, not counted.
    ncases += 1
    await tb.raw_write(scratch, [tb.rng.getrandbits(32)], 0x0, 0)
    got = await tb.rd32(scratch)
    if got != value:
        fails.append(f"zero-length write: scratch {got:#010x}, want {value:#010x}")
        value = got
    ncases += 1
    await tb.raw_write(scratch, [tb.rng.getrandbits(32), tb.rng.getrandbits(32)], 0xF, 0xF)
    nunsup += 1
    got = await tb.rd32(scratch)
    if got != value:
        fails.append(f"2-DW write at scratch: scratch {got:#010x}, want {value:#010x} (dropped)")
    ncases += 1
    new = tb.rng.getrandbits(32)
    await tb.wr32(scratch, new)
    if await tb.rd32(scratch) != new:
        fails.append("full-dword write did not take")
    for ctr, c0, want in ((drops, drop0, ndropped), (unsup, unsup0, nunsup)):
        if ctr:
            got = await tb.read_reg(*ctr) - c0
            if got != want:
                fails.append(f"{ctr[0]}_{ctr[1]}: counted {got}, want {want}")
        else:
            tb.log.warning("no BAR0 error counter in nic_regs.h: not checked")
    tb.log.info("MMIO cases: %d", ncases)
    tb.check_clean(fails)


# --- c. raw DMA with the pattern generator / checker ------------------------------------------

LAST_DISABLE, IRQ_DISABLE = "LAST_DISABLE", "IRQ_DISABLE"


async def dma_push(tb, eng, addr, size, flag):
    value = (tb.field("PCIE_DMA0", f"{eng}_TABLE_VALUE", "ADDRESS_LSB", addr & 0xFFFFFFFF)
             | tb.field("PCIE_DMA0", f"{eng}_TABLE_VALUE", "LENGTH", size)
             | tb.field("PCIE_DMA0", f"{eng}_TABLE_VALUE", flag, 1))
    await tb.write_reg("PCIE_DMA0", f"{eng}_TABLE_VALUE", value)
    await tb.write_reg("PCIE_DMA0", f"{eng}_TABLE_WE", addr >> 32)


async def dma_setup(tb, eng):
    await tb.write_reg("PCIE_DMA0", f"{eng}_ENABLE", 0)
    await tb.write_reg("PCIE_DMA0", f"{eng}_TABLE_RESET", 1)
    await tb.write_reg("PCIE_DMA0", f"{eng}_TABLE_LOOP_PROG_N", 0)


async def wait_until(tb, cond, what, cycles=200_000, step=64):
    for _ in range(cycles // step):
        if await cond():
            return
        await ClockCycles(tb.dut.sys_clk, step)
    raise AssertionError(f"timeout waiting for {what}")


def words(seed, n):
    return b"".join(((seed + i) & 0xFFFFFFFF).to_bytes(4, "little") for i in range(n))


async def dma_c2h(tb, mem, base, off, size, seed):
    """Card-to-host: the pattern generator through the DMA writer to base+off."""
    mem[off:off + size + 16] = bytes(b ^ 0xFF for b in words(seed, size // 4 + 4))
    await tb.write_reg("DMA_PATTERN", "GEN_CONTROL", 0)
    await dma_setup(tb, "WRITER")

    async def drained():
        st = await tb.read_reg("PCIE_DMA0", "BUFFERING_WRITER_FIFO_STATUS")
        shift, width = tb.fields[("PCIE_DMA0", "BUFFERING_WRITER_FIFO_STATUS", "LEVEL")]
        return (st >> shift) & ((1 << width) - 1) == 0
    await wait_until(tb, drained, "the writer's buffering FIFO to drain")
    await dma_push(tb, "WRITER", base + off, size, LAST_DISABLE)
    await tb.write_reg("DMA_PATTERN", "GEN_SEED", seed)
    await tb.write_reg("PCIE_DMA0", "WRITER_ENABLE", 1)
    vec = tb.msi_of("PCIE_DMA0", 1)
    msis = tb.msi_count.get(vec, 0)
    await tb.write_reg("DMA_PATTERN", "GEN_CONTROL",
                       tb.field("DMA_PATTERN", "GEN_CONTROL", "ENABLE", 1))
    want = words(seed, size // 4)
    sentinel = bytes(mem[off + size - 16:off + size])

    async def done():
        return tb.msi_count.get(vec, 0) > msis and mem[off + size - 16:off + size] != sentinel
    await wait_until(tb, done, f"c2h {size} B at +{off:#x}: writer MSI and the last bytes")
    await tb.write_reg("DMA_PATTERN", "GEN_CONTROL", 0)
    await tb.write_reg("PCIE_DMA0", "WRITER_ENABLE", 0)
    got = bytes(mem[off:off + size])
    bad = [i for i in range(0, size, 4) if got[i:i + 4] != want[i:i + 4]]
    after = bytes(mem[off + size:off + size + 16])
    errs = []
    if bad:
        b = bad[0]
        errs.append(f"c2h {size} B at +{off:#x} seed {seed:#x}: {len(bad)} words differ, first "
                    f"at +{b}: {got[b:b + 4].hex()} want {want[b:b + 4].hex()}")
    if after != bytes(b ^ 0xFF for b in words(seed + size // 4, 4)):
        errs.append(f"c2h {size} B at +{off:#x}: wrote past the end")
    return errs


async def dma_h2c(tb, mem, base, off, size, seed):
    """Host-to-card: base+off through the DMA reader into the pattern checker."""
    mem[off:off + size] = words(seed, size // 4)
    await tb.write_reg("DMA_PATTERN", "CHK_SEED", seed)
    await tb.write_reg("DMA_PATTERN", "CHK_TARGET", size)
    await tb.write_reg("DMA_PATTERN", "CHK_CONTROL",
                       tb.field("DMA_PATTERN", "CHK_CONTROL", "RESTART", 1))
    await dma_setup(tb, "READER")
    await dma_push(tb, "READER", base + off, size, IRQ_DISABLE)
    vec = tb.msi_of("DMA_PATTERN", 0)
    msis = tb.msi_count.get(vec, 0)
    await tb.write_reg("PCIE_DMA0", "READER_ENABLE", 1)

    async def done():
        return tb.msi_count.get(vec, 0) > msis
    await wait_until(tb, done, f"h2c {size} B at +{off:#x}: the checker's MSI")
    got = await tb.read_reg("DMA_PATTERN", "CHK_BYTES")
    errors = await tb.read_reg("DMA_PATTERN", "CHK_ERRORS")
    await tb.write_reg("PCIE_DMA0", "READER_ENABLE", 0)
    if got != size or errors:
        return [f"h2c {size} B at +{off:#x} seed {seed:#x}: checker counted {got} B and "
                f"{errors} bad beats, want {size} and 0"]
    return []


def dma_cases(rng, n, buf_size):
    """n random (direction, offset, size): 16-byte multiples, offsets often near a 4 KiB
    boundary (page + 0x40 and the like) so transfers cross pages."""
    out = []
    for _ in range(n):
        size = 16 * rng.randint(1, rng.choice([8, 64, 600]))
        page = rng.randrange(0, (buf_size - size - 0x1000 - 32) // 0x1000)
        inpage = rng.choice([0x40, 0x1000 - 0x40, 16 * rng.randrange(256)])
        out.append((rng.choice(["c2h", "h2c"]), page * 0x1000 + inpage, size))
    return out


@cocotb.test()
async def test_dma(dut):
    tb = TB(dut, config())
    await tb.init()
    await tb.write_reg("PCIE_MSI", "ENABLE", 0xFFFFFFFF)
    await tb.write_reg("PCIE_DMA0", "LOOPBACK_ENABLE", 0)
    buf_size = 1 << 20
    base, mem = tb.rc.alloc_region(buf_size)
    assert base % 0x1000 == 0
    cases = dma_cases(tb.rng, tb.cfg["dma_cases"], buf_size)
    tb.log.info("DMA cases: %d (seed %d)", len(cases), tb.cfg["seed"])
    errs = []
    for k, (direction, off, size) in enumerate(cases):
        seed = tb.rng.getrandbits(32)
        tb.log.info("DMA %d: %s %d B at +%#x", k, direction, size, off)
        f = dma_c2h if direction == "c2h" else dma_h2c
        errs += await f(tb, mem, base, off, size, seed)
    tb.check_clean(errs)


@cocotb.test()
async def test_dma_one(dut):
    """One transfer cfg["one"] = {dir, size, offset} at a 4 KiB-aligned buffer + offset, as
    `nicbench dma --latency` makes it; writes the SoC's read requests, the bytes they ask
    for and the completions the RC sent to PCIE_RC_OUT (JSON) for test_soc_pcie.py to compare
    with the C++ host model."""
    import json
    tb = TB(dut, config())
    await tb.init()
    await tb.write_reg("PCIE_MSI", "ENABLE", 0xFFFFFFFF)
    one = tb.cfg["one"]
    base, mem = tb.rc.alloc_region(1 << 16)
    mrd0, bytes0, rx0 = tb.rules.counts["mrd"], tb.rules.bytes["mrd"], tb.dev.rx_cpls
    f = dma_c2h if one["dir"] == "c2h" else dma_h2c
    errs = await f(tb, mem, base, one["offset"], one["size"], tb.rng.getrandbits(32))
    out = dict(requests=tb.rules.counts["mrd"] - mrd0, bytes=tb.rules.bytes["mrd"] - bytes0,
               completions=tb.dev.rx_cpls - rx0)
    tb.log.info("one transfer %s: %s", one, out)
    Path(os.environ["PCIE_RC_OUT"]).write_text(json.dumps(out))
    tb.check_clean(errs)


# --- c2. descriptors the DMA cannot move: moved exactly, or refused without a TLP -----------

MISALIGNED_OFFSETS = (0, 1, 2, 3, 4, 8, 12)
MISALIGNED_SIZES = (64, 36, 17, 1, 0)
GUARD = 64                                  # guard bytes before and after every buffer


async def refused(tb, eng):
    """PCIE_DMA0_GUARD_<eng>_REFUSED, or None when the SoC has no such block."""
    if tb.types["PCIE_DMA0_GUARD"] not in tb.blocks:
        return None
    return await tb.read_reg("PCIE_DMA0_GUARD", f"{eng}_REFUSED")


async def misaligned_case(tb, mem, base, direction, off, size, seed):
    """One descriptor at base + off (off: past a 4 KiB page boundary, the buffer's guard bytes
    around it): either moved exactly (c2h: the buffer holds the generator's bytes; h2c: the
    checker counted size bytes, none bad) or refused (its engine's counter + 1, no TLP of its
    kind, no MSI); the other engine's counter unchanged; the guard bytes (and for a refusal
    the buffer) untouched. Returns the errors."""
    eng, other = ("WRITER", "READER") if direction == "c2h" else ("READER", "WRITER")
    kind = "mwr" if direction == "c2h" else "mrd"
    what = f"{direction} {size} B at +{off:#x}"
    lo, hi = off - GUARD, off + size + GUARD
    before = bytes((seed + 31 * i) & 0xFF for i in range(hi - lo))
    if direction == "h2c":                   # the buffer holds what the checker expects
        before = before[:GUARD] + words(seed, size // 4 + 1)[:size] + before[GUARD + size:]
    mem[lo:hi] = before
    r0, o0 = await refused(tb, eng), await refused(tb, other)
    tlps0 = tb.rules.counts[kind]
    if direction == "c2h":
        await tb.write_reg("DMA_PATTERN", "GEN_CONTROL", 0)
        await dma_setup(tb, "WRITER")

        async def drained():
            st = await tb.read_reg("PCIE_DMA0", "BUFFERING_WRITER_FIFO_STATUS")
            shift, width = tb.fields[("PCIE_DMA0", "BUFFERING_WRITER_FIFO_STATUS", "LEVEL")]
            return (st >> shift) & ((1 << width) - 1) == 0
        await wait_until(tb, drained, "the writer's buffering FIFO to drain")
        await dma_push(tb, "WRITER", base + off, size, LAST_DISABLE)
        await tb.write_reg("DMA_PATTERN", "GEN_SEED", seed)
        vec = tb.msi_of("PCIE_DMA0", 1)
    else:
        await tb.write_reg("DMA_PATTERN", "CHK_SEED", seed)
        await tb.write_reg("DMA_PATTERN", "CHK_TARGET", size)
        await tb.write_reg("DMA_PATTERN", "CHK_CONTROL",
                           tb.field("DMA_PATTERN", "CHK_CONTROL", "RESTART", 1))
        await dma_setup(tb, "READER")
        await dma_push(tb, "READER", base + off, size, IRQ_DISABLE)
        vec = tb.msi_of("DMA_PATTERN", 0)
    msis = tb.msi_count.get(vec, 0)
    await tb.write_reg("PCIE_DMA0", f"{eng}_ENABLE", 1)
    if direction == "c2h":
        await tb.write_reg("DMA_PATTERN", "GEN_CONTROL",
                           tb.field("DMA_PATTERN", "GEN_CONTROL", "ENABLE", 1))

    async def decided():
        r = await refused(tb, eng)
        return tb.msi_count.get(vec, 0) > msis or (r is not None and r != r0)
    errs = []
    try:
        await wait_until(tb, decided, f"{what}: its MSI or its refusal", cycles=40_000)
    except AssertionError as e:
        errs.append(f"{what}: neither moved nor refused ({e})")
    if direction == "c2h":
        await tb.write_reg("DMA_PATTERN", "GEN_CONTROL", 0)
    await ClockCycles(tb.dut.sys_clk, 2000)          # writes in flight land
    await tb.write_reg("PCIE_DMA0", f"{eng}_ENABLE", 0)
    r1, o1 = await refused(tb, eng), await refused(tb, other)
    after = bytes(mem[lo:hi])
    if r0 is None:
        errs.append(f"{what}: the SoC has no PCIE_DMA0_GUARD block (no refusal counter)")
    elif o1 != o0:
        errs.append(f"{what}: {other}_REFUSED moved {o0} -> {o1}")
    if r0 is not None and r1 != r0:
        if r1 != r0 + 1:
            errs.append(f"{what}: {eng}_REFUSED {r0} -> {r1}, want + 1")
        if tb.rules.counts[kind] != tlps0:
            errs.append(f"{what}: refused, yet {tb.rules.counts[kind] - tlps0} {kind} TLPs")
        if tb.msi_count.get(vec, 0) != msis:
            errs.append(f"{what}: refused, yet its MSI came")
        if after != before:
            errs.append(f"{what}: refused, yet host memory changed")
        return errs
    # Not refused: moved exactly, guard bytes untouched.
    if after[:GUARD] != before[:GUARD]:
        k = next(i for i in range(GUARD) if after[i] != before[i])
        errs.append(f"{what}: guard byte at -{GUARD - k} overwritten "
                    f"({before[k]:#04x} -> {after[k]:#04x})")
    if after[GUARD + size:] != before[GUARD + size:]:
        k = next(i for i in range(GUARD) if after[GUARD + size + i] != before[GUARD + size + i])
        errs.append(f"{what}: guard byte at end+{k} overwritten")
    if direction == "c2h":
        want = words(seed, size // 4 + 1)[:size]
        if after[GUARD:GUARD + size] != want:
            errs.append(f"{what}: not refused and the buffer is not the generator's bytes")
    else:
        got = await tb.read_reg("DMA_PATTERN", "CHK_BYTES")
        bad = await tb.read_reg("DMA_PATTERN", "CHK_ERRORS")
        if got != size or bad:
            errs.append(f"{what}: not refused and the checker counted {got} B, {bad} bad "
                        f"beats (want {size}, 0)")
    return errs


@cocotb.test()
async def test_dma_misaligned(dut):
    """Descriptors at offsets 0, 1, 2, 3, 4, 8, 12 past a page boundary (and, cfg["near_4k"],
    just before the next one) of lengths 64, 36, 17, 1 and 0, both directions, each through
    misaligned_case; then an aligned transfer each way still works (test_dma's checks)."""
    tb = TB(dut, config())
    await tb.init()
    await tb.write_reg("PCIE_MSI", "ENABLE", 0xFFFFFFFF)
    await tb.write_reg("PCIE_DMA0", "LOOPBACK_ENABLE", 0)
    base, mem = tb.rc.alloc_region(1 << 16)
    errs = []
    k = 0
    for direction in ("c2h", "h2c"):
        for off in MISALIGNED_OFFSETS:
            for size in MISALIGNED_SIZES:
                page = 0x1000 * (1 + k % 8)
                if tb.cfg.get("near_4k") and k % 2:
                    page += 0x1000 - 32          # the buffer crosses the next 4 KiB boundary
                k += 1
                e = await misaligned_case(tb, mem, base, direction, page + off, size,
                                          tb.rng.getrandbits(32))
                tb.log.info("%s %d B at +%#x: %s", direction, size, page + off,
                            "; ".join(e) or "ok")
                errs += e
    errs += await dma_c2h(tb, mem, base, 0xA000, 256, tb.rng.getrandbits(32))
    errs += await dma_h2c(tb, mem, base, 0xB000, 256, tb.rng.getrandbits(32))
    tb.check_clean(errs)


# --- d. the NIC's TX and RX rings through the MAC loopback -------------------------------------

class MmioRegisters:
    """nic_driver's Registers interface over BAR0: a port's CSR is the NIC block's register of
    its upper-case name (nic_datapath_csr.py's naming); a strobe writes the register of its stem
    (or `<stem>_<field>`) with the fields packed; ops run in order in run()."""

    def __init__(self, tb):
        self.tb, self.ops = tb, []

    def write(self, port, value):
        self.ops.append(("write", port.upper(), int(value)))

    def strobe(self, stem, **fields):
        self.ops.append(("strobe", stem.upper(), fields))

    def wait(self, cond, what):
        self.ops.append(("wait", cond, what))

    def _strobe_reg(self, stem, fields):
        for reg in [stem] + [f"{stem}_{f.upper()}" for f in fields]:
            if ("NIC", reg) in self.tb.regs and all(
                    ("NIC", reg, f.upper()) in self.tb.fields for f in fields):
                return reg
        raise KeyError(f"no NIC register for strobe {stem} {fields}")

    async def run(self):
        tb = self.tb
        while self.ops:
            kind, a, b = self.ops.pop(0)
            if kind == "write":
                await tb.write_reg("NIC", a, b)
            elif kind == "strobe":
                reg = self._strobe_reg(a, b)
                await tb.write_reg("NIC", reg, sum(tb.field("NIC", reg, f.upper(), v)
                                                   for f, v in b.items()))
            else:
                names = []
                a(lambda p: names.append(p) or 0)

                async def ok():
                    vals = {p: await tb.read_reg("NIC", p.upper()) for p in names}
                    return a(lambda p: vals[p])
                await wait_until(tb, ok, b)


class HostMem:
    def __init__(self, base, mem):
        self.base, self.mem = base, mem

    def read(self, addr, n):
        return bytes(self.mem[addr - self.base:addr - self.base + n])

    def write(self, addr, data):
        self.mem[addr - self.base:addr - self.base + len(data)] = data


RX_BUF_ALIGN = 16           # sw/lib/nic_queues.h NIC_Q_RX_BUF_ALIGN: the RX engine's


def _offset_rx_ring():
    from nicmodels.nic_driver import RxRing

    class OffsetRxRing(RxRing):
        """An RxRing whose buffer p sits at a random RX_BUF_ALIGN multiple in its page-sized
        slot (as nic_queues.c's buf_offset_random), many crossing a 4 KiB boundary."""

        def __init__(self, *args, rng, **kwargs):
            super().__init__(*args, **kwargs)
            room = self.buf_stride - ((self.buf_len + 3) & ~3)
            self.offs = [RX_BUF_ALIGN * rng.randrange(room // RX_BUF_ALIGN + 1)
                         for _ in range(self.size)]

        def buf(self, p):
            return super().buf(p) + self.offs[p]
    return OffsetRxRing


@cocotb.test()
async def test_nic_rings(dut):
    from nicmodels.nic_driver import NicDriver, TxRing
    OffsetRxRing = _offset_rx_ring()
    tb = TB(dut, config())
    await tb.init()
    await tb.write_reg("PCIE_MSI", "ENABLE", 0xFFFFFFFF)
    base, mem = tb.rc.alloc_region(1 << 20)
    hm, regs = HostMem(base, mem), MmioRegisters(tb)
    buf_len = 2048
    tx = TxRing(hm, regs, 0, base + 0x0000, base + 0x1000, 6)
    rx = OffsetRxRing(hm, regs, base + 0x2000, base + 0x3000, base + 0x10000, buf_len, 6,
                      buf_stride=0x2000, rng=tb.rng)
    drv = NicDriver(regs, [tx], rx)
    drv.open()
    await regs.run()
    nframes = tb.cfg["nic_frames"]
    tb.log.info("NIC frames: %d (seed %d)", nframes, tb.cfg["seed"])
    sent, got = [], []
    tx_area = base + 0xA0000              # after the RX buffers (64 slots of 8 KiB)
    for k in range(nframes):
        n = tb.rng.randint(60, 1514)
        data = bytes(tb.rng.getrandbits(8) for _ in range(n))
        addr = tx_area + k * 0x800 + tb.rng.randrange(0, 0x800 - n if n < 0x800 else 1)
        # A random byte offset; one or two fragments.
        if n > 200 and tb.rng.random() < 0.5:
            cut = tb.rng.randint(1, n - 1)
            hm.write(addr, data[:cut])
            addr2 = tx_area + 0x20000 + k * 0x800 + tb.rng.randrange(0, 0x800 - (n - cut))
            hm.write(addr2, data[cut:])
            frags = [(addr, cut), (addr2, n - cut)]
        else:
            hm.write(addr, data)
            frags = [(addr, n)]
        assert tx.post(frags)
        tx.doorbell()
        await regs.run()
        sent.append(data)

        async def some():
            got.extend(rx.poll())
            rx.refill()
            await regs.run()
            tx.reclaim()
            return len(got) >= len(sent) - 2
        await wait_until(tb, some, "RX frames", step=256)

    async def all_back():
        got.extend(rx.poll())
        rx.refill()
        await regs.run()
        return len(got) >= len(sent)
    await wait_until(tb, all_back, f"all {nframes} frames back")
    errs = [] if len(got) == len(sent) else [f"{len(sent)} frames sent, {len(got)} back"]
    for i, (s, f) in enumerate(zip(sent, got)):
        if f.status != 0 or f.len != len(s) or f.data != s:
            errs.append(f"frame {i}: {len(s)} B sent, got status {f.status} len {f.len}"
                        f"{'' if f.data == s else ', data differs'}")
    tb.check_clean(errs)


# RX buffers the RX engine cannot take (address not 16-byte aligned: status BAD_ADDR) or too
# small (roundup4(frame) > length: TOO_BIG) beside good ones of odd lengths, some within 1..3
# bytes of the frame: (buffer offset, buffer length, frame length).
RX_MISALIGNED = [(1, 2048, 60), (2, 2048, 61), (3, 2048, 1514), (4, 2048, 63), (8, 2048, 100),
                 (12, 2048, 1000), (0, 1517, 1514), (0, 1515, 1514), (16, 61, 61),
                 (0, 63, 60), (32, 1, 60), (0, 2048, 1513), (4, 61, 60), (0, 1513, 1509),
                 (16, 1514, 1511)]
RX_GUARD_SLOT = 0x1000


@cocotb.test()
async def test_nic_rx_misaligned(dut):
    """The RX ring given buffers at byte offsets 1..12 and of odd lengths (RX_MISALIGNED), one
    frame (TX, MAC loopback) per buffer: a misaligned buffer gets status BAD_ADDR and
    rxe_drop_bad_desc + 1, one too small TOO_BIG, the others the frame exactly; nothing
    written outside a buffer (rounded up to 4 bytes within its length): the rest of every
    4 KiB slot, guard bytes around each buffer, keeps its fill."""
    from nicmodels.nic_driver import NicDriver, RxRing, TxRing, encode_rx_desc
    from rtl.contract.formats import RxStatus

    class MisalignedRxRing(RxRing):
        def buf(self, p):
            return super().buf(p) + 64 + RX_MISALIGNED[p % len(RX_MISALIGNED)][0]

        def open(self):
            super().open()
            for p in range(self.size):       # the lengths, before any frame is sent
                length = RX_MISALIGNED[p % len(RX_MISALIGNED)][1]
                self.mem.write(self.ring_base + 16 * p, encode_rx_desc(self.buf(p), length))

    tb = TB(dut, config())
    await tb.init()
    await tb.write_reg("PCIE_MSI", "ENABLE", 0xFFFFFFFF)
    base, mem = tb.rc.alloc_region(1 << 20)
    hm, regs = HostMem(base, mem), MmioRegisters(tb)
    slots = base + 0x10000
    fill = bytes((0xA5 + 7 * i) & 0xFF for i in range(RX_GUARD_SLOT * 16))
    hm.write(slots, fill)
    tx = TxRing(hm, regs, 0, base + 0x0000, base + 0x1000, 6)
    rx = MisalignedRxRing(hm, regs, base + 0x2000, base + 0x3000, slots, 2048, 4,
                          buf_stride=RX_GUARD_SLOT)
    drv = NicDriver(regs, [tx], rx)
    drv.open()
    await regs.run()
    bad0 = await tb.read_reg("NIC", "RXE_DROP_BAD_DESC")
    big0 = await tb.read_reg("NIC", "RXE_DROP_TOO_BIG")
    sent, got = [], []
    n_cases = rx.size - 1                    # the buffers posted by open()
    for k in range(n_cases):
        n = RX_MISALIGNED[k][2]
        data = bytes(tb.rng.getrandbits(8) for _ in range(n))
        addr = base + 0xA0000 + k * 0x800 + tb.rng.randrange(0, 0x800 - n)
        hm.write(addr, data)
        assert tx.post([(addr, n)])
        tx.doorbell()
        await regs.run()
        sent.append(data)

        async def back():
            got.extend(rx.poll())
            tx.reclaim()
            await regs.run()
            return len(got) > k
        await wait_until(tb, back, f"RX record of frame {k}", step=256)
    errs, n_bad, n_big = [], 0, 0
    for k, (s, f) in enumerate(zip(sent, got)):
        off, length, _n = RX_MISALIGNED[k]
        want = (RxStatus.BAD_ADDR if off % 16 else
                RxStatus.TOO_BIG if (len(s) + 3) & ~3 > length else RxStatus.OK)
        n_bad += want == RxStatus.BAD_ADDR
        n_big += want == RxStatus.TOO_BIG
        if f.status != want or (want == RxStatus.OK and (f.len != len(s) or f.data != s)):
            errs.append(f"RX buffer +{off} len {length}, frame {len(s)} B: status {f.status} "
                        f"len {f.len}, want {want}{'' if f.data == s else ', data differs'}")
        # Outside the buffer, the slot keeps its fill; a refused buffer keeps it entirely.
        lo = 64 + off
        hi = lo + (0 if want != RxStatus.OK else length)
        slot = hm.read(slots + k * RX_GUARD_SLOT, RX_GUARD_SLOT)
        ref = fill[k * RX_GUARD_SLOT:(k + 1) * RX_GUARD_SLOT]
        outside = [i for i in range(RX_GUARD_SLOT) if not lo <= i < hi and slot[i] != ref[i]]
        if outside:
            errs.append(f"RX buffer +{off} len {length} ({want.name}): {len(outside)} bytes "
                        f"written outside it, first at slot +{outside[0]:#x}")
    bad = await tb.read_reg("NIC", "RXE_DROP_BAD_DESC") - bad0
    big = await tb.read_reg("NIC", "RXE_DROP_TOO_BIG") - big0
    if (bad, big) != (n_bad, n_big):
        errs.append(f"rxe_drop_bad_desc +{bad}, rxe_drop_too_big +{big}: want +{n_bad}, "
                    f"+{n_big}")
    if (n_bad, n_big) != (7, 3):
        errs.append(f"the cases cover {n_bad} misaligned and {n_big} too small buffers")
    tb.check_clean(errs)


# Host addresses a NIC register or the deep capture takes, at byte offsets (issue 37): each
# refused in hardware or moved exactly. (kind, register(s), counter, status register, bit).
ADDR_KINDS = {
    "txe_base": ("TXE_ERR_BASE", "TXE_BASE_BAD", 0),
    "txq_wb": ("TXQ_ERR_WB_ADDR", "TXQ_WB_BAD", 0),
    "rxe_ring": ("RXE_ERR_BASE", "RXE_BASE_BAD", 0),
    "rxe_cpl": ("RXE_ERR_BASE", "RXE_BASE_BAD", 1),
    "stream": ("STREAM_REFUSED", "STREAM_STATUS", None),
}
ADDR_OFFSETS = {"stream": (0, 16, 2048)}     # the stream's base: 4 KiB aligned
STREAM_ENTRY_BYTES = int(re.search(r"#define NICSCOPE_STREAM_ENTRY_BYTES (\d+)", (
    REPO / "sw" / "include" / "nicscope_layout.h").read_text())[1])
NIC_ADDR_OFFSETS = (0, 1, 4, 12)


@cocotb.test()
async def test_nic_addr_misaligned(dut):
    """The TX ring base and writeback address, the RX ring and completion bases and the
    analyzer's stream base, each written straight to its register at byte offsets: offset 0
    moves (the frame sent and written back, the RX ring read, entries streamed), any other is
    refused in hardware: its counter + 1 and status bit, no TLP from the SoC at all, and not a
    byte of the 256 KiB region (rings, buffers, everything around them) changed; every TLP
    through the rule checks."""
    tb = TB(dut, config())
    await tb.init()
    base, mem = tb.rc.alloc_region(1 << 18)
    fill = bytes((0x5A + 13 * i) & 0xFF for i in range(1 << 18))
    tx_ring, wb, tx_buf = base + 0x1000, base + 0x2040, base + 0x3000
    rx_ring, rx_cpl, rx_buf, st_ring = base + 0x4000, base + 0x5000, base + 0x6000, base + 0x8000
    from nicmodels.nic_driver import encode_rx_desc, encode_tx_desc
    mem[:] = fill
    mem[0x1000:0x1010] = encode_tx_desc(tx_buf, 60)
    mem[0x4000:0x4010] = encode_rx_desc(rx_buf, 2048)
    before = bytes(mem)
    for fifo in ("TXFIFO", "RXFIFO"):
        await tb.write_reg("NIC", f"{fifo}_MAX_LEN", 2048)
        await tb.write_reg("NIC", f"{fifo}_ENABLE", 1)
    has_stream = tb.types["ANALYZER"] in tb.blocks and ("ANALYZER", "STREAM_BASE") in tb.regs

    async def reg(blk, name):
        return await tb.read_reg(blk, name)

    async def txq(enable, db=False):
        await tb.write_reg("NIC", "TXQ_CFG", tb.field("NIC", "TXQ_CFG", "SIZE_LOG2", 4) +
                           tb.field("NIC", "TXQ_CFG", "ENABLE", enable) +
                           tb.field("NIC", "TXQ_CFG", "LIMIT", 15))
        if db:
            await tb.write_reg("NIC", "TXQ_DB", tb.field("NIC", "TXQ_DB", "INDEX", 1))
        if not enable:
            async def drained():
                return await reg("NIC", "TXQ_DRAINED") & 1
            await wait_until(tb, drained, "TX queue 0 drained")

    async def tx_addrs(ring, wbaddr):
        await tb.write_reg("NIC", "TXE_BASE_ADDR", ring)
        await tb.write_reg("NIC", "TXE_BASE", tb.field("NIC", "TXE_BASE", "QUEUE", 0))
        await tb.write_reg("NIC", "TXQ_WB_ADDR", wbaddr)
        await tb.write_reg("NIC", "TXQ_WB_ADDR_QUEUE",
                           tb.field("NIC", "TXQ_WB_ADDR_QUEUE", "QUEUE", 0))

    async def rx_stop():
        await tb.write_reg("NIC", "RXE_ENABLE", 0)

        async def reset():
            return await reg("NIC", "RXE_CONS") == 0
        await wait_until(tb, reset, "the RX ring reset")

    async def counts(kind):
        cnt, st, bit = ADDR_KINDS[kind]
        blk = "ANALYZER" if kind == "stream" else "NIC"
        c, s = await reg(blk, cnt), await reg(blk, st)
        if kind == "stream":
            shift, _w = tb.fields[("ANALYZER", "STREAM_STATUS", "REFUSED")]
            return c, (s >> shift) & 1
        return c, (s >> bit) & 1

    errs = []
    kinds = [k for k in ADDR_KINDS if k != "stream" or has_stream]
    for kind in kinds:
        for off in ADDR_OFFSETS.get(kind, NIC_ADDR_OFFSETS):
            mem[:] = before
            c0, _ = await counts(kind)
            tlps0 = dict(tb.rules.counts)
            frames0 = await reg("NIC", "TXE_FRAMES")
            if kind in ("txe_base", "txq_wb"):
                await tx_addrs(tx_ring + off * (kind == "txe_base"),
                               wb + off * (kind == "txq_wb"))
                await txq(1, db=True)
            elif kind in ("rxe_ring", "rxe_cpl"):
                await tb.write_reg("NIC", "RXE_RING_BASE", rx_ring + off * (kind == "rxe_ring"))
                await tb.write_reg("NIC", "RXE_RING_SIZE_LOG2", 4)
                await tb.write_reg("NIC", "RXE_CPL_BASE", rx_cpl + off * (kind == "rxe_cpl"))
                await tb.write_reg("NIC", "RXE_ENABLE", 1)
                await tb.write_reg("NIC", "RXE_DB", tb.field("NIC", "RXE_DB", "INDEX", 1))
            else:
                await tb.write_reg("ANALYZER", "STREAM_BASE", st_ring + off)
                await tb.write_reg("ANALYZER", "STREAM_SIZE_LOG2", 4)
                await tb.write_reg("ANALYZER", "STREAM_CONS", 0)
                await tb.write_reg("ANALYZER", "STREAM_CTRL", 1)
            await ClockCycles(dut.sys_clk, 3000)
            c1, bit = await counts(kind)
            prod = await reg("ANALYZER", "STREAM_PROD") if kind == "stream" else 0
            if kind in ("txe_base", "txq_wb"):
                await txq(0)
            elif kind == "stream":
                await tb.write_reg("ANALYZER", "STREAM_CTRL", 0)

                async def idle():
                    await tb.write_reg("ANALYZER", "STREAM_CONS",
                                       await reg("ANALYZER", "STREAM_PROD"))
                    shift, _w = tb.fields[("ANALYZER", "STREAM_STATUS", "BUSY")]
                    return not (await reg("ANALYZER", "STREAM_STATUS") >> shift) & 1
                await wait_until(tb, idle, "the stream to stop")
            else:
                await rx_stop()
            frames = await reg("NIC", "TXE_FRAMES") - frames0
            d = {k: tb.rules.counts[k] - tlps0[k] for k in ("mrd", "mwr")}
            allowed = []                      # what a case that moves may write
            if off == 0 and kind in ("txe_base", "txq_wb"):
                allowed = [(0x2040, 0x2050)]
            elif off == 0 and kind == "stream":
                allowed = [(0x8000, 0x8000 + 16 * STREAM_ENTRY_BYTES)]
            changed = [i for i in range(len(mem)) if mem[i] != before[i]
                       and not any(lo <= i < hi for lo, hi in allowed)]
            what = f"{kind} +{off}"
            tb.log.info("%s: counter +%d, status %d, TLPs %s, %d bytes changed, %d frames",
                        what, c1 - c0, bit, d, len(changed), frames)
            if changed:
                errs.append(f"{what}: {len(changed)} bytes written outside what it may write, "
                            f"the first at region +{changed[0]:#x}")
            if off:
                if (c1 - c0, bit) != (1, 1):
                    errs.append(f"{what}: not refused (counter +{c1 - c0}, status bit {bit})")
                if d != {"mrd": 0, "mwr": 0} or frames or prod:
                    errs.append(f"{what}: TLPs {d}, {frames} frames, {prod} "
                                "entries")
            else:
                if c1 != c0 or bit:
                    errs.append(f"{what}: aligned, yet refused")
                if kind in ("txe_base", "txq_wb") and (frames != 1 or not d["mwr"] or
                                                       mem[0x2040] != 1):
                    errs.append(f"{what}: {frames} frames, {d} TLPs, writeback cons "
                                f"{mem[0x2040]}")
                if kind in ("rxe_ring", "rxe_cpl") and not d["mrd"]:
                    errs.append(f"{what}: the RX ring was not read")
                if kind == "stream" and (not prod or not d["mwr"]):
                    errs.append(f"{what}: {prod} entries streamed, {d} TLPs")
    tb.check_clean(errs)
