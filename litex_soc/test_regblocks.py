# SPDX-License-Identifier: BSD-2-Clause
# Tests of the register blocks (litex_soc/regblocks.py): the committed sw/include/nic_regs.h is
# what the default SoC generates, the other configurations `make test` builds (W=64, soft CPU)
# lay their blocks out the same way, and the identification block's table says where each is.
import logging
from pathlib import Path

import pytest

from litex_soc import regblocks
from litex_soc.targets.sim_headers import build_soc
from rtl.contract import regblocks as rb

ROOT = Path(__file__).resolve().parent.parent
HEADER = ROOT / "sw" / "include" / "nic_regs.h"


@pytest.fixture(scope="module")
def socs(tmp_path_factory):
    logging.disable(logging.INFO)
    out = tmp_path_factory.mktemp("regblocks")
    return {(w, cpu): build_soc(data_width=w, with_cpu=cpu,
                                build_dir=str(out / f"dw{w}_cpu{int(cpu)}"))
            for w, cpu in ((128, False), (64, False), (128, True))}


def test_header_is_current(socs):
    assert HEADER.read_text() == regblocks.c_header([socs[128, False], socs[128, True]]), (
        "sw/include/nic_regs.h is stale: run `.venv/bin/python -m litex_soc.targets.sim_headers "
        "sw/include/nic_regs.h --nicscope-layout sw/include/nicscope_layout.h`")


def test_nicscope_layout_is_current(socs):
    """The analyzer's sample layout and counter map are the same in every build, and the
    committed copy is what they generate."""
    committed = (ROOT / "sw" / "include" / "nicscope_layout.h").read_text()
    for cfg, soc in socs.items():
        assert soc.analyzer.layout_header == committed, (
            f"sw/include/nicscope_layout.h differs from the {cfg} build's: regenerate it with "
            "`.venv/bin/python -m litex_soc.targets.sim_headers sw/include/nic_regs.h "
            "--nicscope-layout sw/include/nicscope_layout.h`")


def test_every_build_has_the_same_block_layouts(socs):
    ref = {n: regblocks.layout(r) for n, r in regblocks.blocks(socs[128, False])}
    for cfg, soc in socs.items():
        for name, region in regblocks.blocks(soc):
            if name in ref:
                assert regblocks.layout(region) == ref[name], f"{name} differs in {cfg}"
        assert regblocks.layout(soc.csr.regions["info"]) == \
            regblocks.layout(socs[128, False].csr.regions["info"])


def test_table_entries(socs):
    soc = socs[128, True]
    entries = {t: (v, base, info) for t, v, base, info in regblocks.table(soc)}
    names = dict(regblocks.blocks(soc))
    assert set(entries) == {rb.TYPES[n] for n in names}
    assert "uart" in names and "nic" in names and "analyzer" in names
    csr_base = soc.bus.regions["csr"].origin
    for name, region in names.items():
        version, base, info = entries[rb.TYPES[name]]
        assert base == region.origin - csr_base
        assert version >> 16 == rb.BLOCKS[name][1]
        assert version & 0xFFFF == regblocks.layout_crc(regblocks.layout(region))
    c = {k: getattr(v, "value", v) for k, v in soc.constants.items()}
    _v, _b, nic = entries[rb.TYPES["nic"]]
    assert nic & 0xFF == c["NIC_RX_INTERRUPT"] == c["NIC_TX_INTERRUPT"] - 1
    assert (nic >> 8) & 0xFF == 1 + c["NIC_NTXIRQ"]
    assert nic >> 16 == c["NIC_NTXQ"]
    _v, _b, dma = entries[rb.TYPES["pcie_dma0"]]
    assert (dma & 0xFF, (dma >> 8) & 0xFF) == (c["PCIE_DMA0_READER_INTERRUPT"], 2)
    _v, _b, ctrl = entries[rb.TYPES["ctrl"]]
    assert ctrl & 0xFFFF == (0 << 8) | rb.NO_IRQ
    # The table is in the identification block's registers, as constants.
    info = soc.info
    assert info.rb_count.status.reset.value == len(entries)
    assert info.rb0_type.status.reset.value == min(
        (region.origin, rb.TYPES[n]) for n, region in names.items())[1]
