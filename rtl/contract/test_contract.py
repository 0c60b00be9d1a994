# SPDX-License-Identifier: BSD-2-Clause
# The contract against the cores: every format whole and byte-aligned, every counter and status
# output a port of its core with the contract's width, every port the datapath exposes described,
# the ethtool names unique, and the cores' COUNTS tuples the contract's.
import gc
import re

import pytest
from amaranth.hdl import Shape
from amaranth.lib.wiring import Flow

from rtl.contract import formats, registers
from rtl.contract.coalesce import CONFIG, REASONS
from rtl.nic import (dma_read_arbiter, frame_fifo, irq_coalescer, rx_engine, tx_engine,
                     tx_queue_manager, tx_scheduler)
from rtl.nic.nic_datapath import EXPOSED, OWN_PORTS, NICDatapath

CORE_CLASSES = {
    "tx_scheduler": lambda: tx_scheduler.TXScheduler(4),
    "tx_queue_manager": lambda: tx_queue_manager.TXQueueManager(4),
    "tx_engine": lambda: tx_engine.TXEngine(),
    "frame_fifo": lambda: frame_fifo.FrameFIFO(data_width=16, depth=4096),
    "rx_engine": lambda: rx_engine.RXEngine(),
    "irq_coalescer": lambda: irq_coalescer.IRQCoalescer(),
    "dma_read_arbiter": lambda: dma_read_arbiter.DMAReadArbiter(),
}


def test_formats():
    for name, (layout, doc, fields) in formats.FORMATS.items():
        assert layout.size == 8 * formats.RECORD_BYTES, name
        end = 0
        for fname, field in layout:
            assert field.offset == end and field.offset % 8 == 0 and field.width % 8 == 0, \
                (name, fname)
            end += field.width
            assert fields[fname], (name, fname)
        assert end == layout.size and doc
    for name, (enum, doc, members) in formats.ENUMS.items():
        assert set(members) == set(enum.__members__), name
    assert formats.flag_bit(formats.TxDescFlags.EOP) == 0
    with pytest.raises(ValueError):
        formats.flag_bit(3)


def test_host_formats_as_documented():
    """The byte offsets every driver relies on (sw/lib/nic_queues.c, rtl/nic docstrings)."""
    def offsets(layout):
        return {n: (f.offset // 8, f.width // 8) for n, f in layout}
    assert offsets(formats.TX_DESC) == dict(addr=(0, 8), len=(8, 2), flags=(10, 2),
                                            reserved=(12, 4))
    assert offsets(formats.TX_WB) == dict(cons=(0, 2), errors=(2, 2), last_error=(4, 1),
                                          reserved=(5, 11))
    assert offsets(formats.RX_DESC) == dict(addr=(0, 8), len=(8, 2), reserved=(10, 6))
    assert offsets(formats.RX_CPL) == dict(len=(0, 2), index=(2, 2), status=(4, 1),
                                           queue=(5, 1), reserved=(6, 2), timestamp=(8, 8))


@pytest.mark.filterwarnings("ignore:.*created but never used")
@pytest.mark.parametrize("core", list(CORE_CLASSES))
def test_core_ports(core):
    dut = CORE_CLASSES[core]()
    members = dut.signature.members
    c = registers.CORES[core]
    for cfg in c.config:
        assert members[cfg.name].flow == Flow.In, cfg.name
    for s in c.counters + c.arrays + c.status:
        assert members[s.name].flow == Flow.Out, s.name
        if s.width is not None and not s.per:
            assert Shape.cast(members[s.name].shape).width == s.width, s.name
    module = {"tx_scheduler": tx_scheduler, "tx_queue_manager": tx_queue_manager,
              "tx_engine": tx_engine, "frame_fifo": frame_fifo, "rx_engine": rx_engine,
              "irq_coalescer": irq_coalescer, "dma_read_arbiter": dma_read_arbiter}[core]
    assert module.COUNTS == registers.counter_names(core)
    del dut
    gc.collect()                  # the UnusedElaboratable warnings here, where they are ignored


def test_irq_names():
    assert registers.counter_names("irq_coalescer") == ("irqs",) + REASONS
    assert [c.name for c in registers.CORES["irq_coalescer"].config] == ["enable", *CONFIG]


@pytest.mark.filterwarnings("ignore:.*created but never used")
def test_every_exposed_port_described():
    dp = NICDatapath()
    files = {"sched": "tx_scheduler", "txq": "tx_queue_manager", "txe": "tx_engine",
             "txfifo": "frame_fifo", "rxfifo": "frame_fifo", "rxe": "rx_engine",
             "txirq": "irq_coalescer", "rxirq": "irq_coalescer", "rdarb": "dma_read_arbiter"}
    for prefix, (attr, ins, outs) in EXPOSED.items():
        assert registers.BLOCKS[prefix][0] == files[attr]
        own_in, own_out = OWN_PORTS.get(prefix, ([], []))
        for name in ins + own_in:
            e = registers.entry(prefix, name)
            assert isinstance(e, registers.Config) and e.desc and "{" not in e.desc
        for name in outs + own_out:
            e = registers.entry(prefix, name)
            assert isinstance(e, registers.Stat) and e.desc and e.kind in (
                registers.COUNT, registers.ERROR, registers.STATE)
            assert prefix + name in dp.signature.members
    del dp
    gc.collect()


def test_ethtool_names():
    seen = {}
    for prefix, (core, _dir) in registers.BLOCKS.items():
        c = registers.CORES[core]
        own = [k[len(prefix):] for k in registers.DATAPATH_OWN if k.startswith(prefix)]
        for name in [s.name for s in c.counters + c.arrays + c.status] + own:
            e = registers.entry(prefix, name)
            if isinstance(e, registers.Config):
                continue
            assert ("{i}" in e.ethtool) == bool(e.per), e
            n = registers.ethtool_name(prefix, name, 0)
            assert re.fullmatch(r"[a-z][a-z0-9_]*", n), n
            assert n not in seen, (n, prefix + name, seen.get(n))
            seen[n] = prefix + name
    assert seen["tx_frames"] == "txe_frames"
    assert seen["rx_drop_no_buffer"] == "rxe_drop_no_buffer"
    assert seen["tx_queue_0_packets"] == "txe_q_frames"
