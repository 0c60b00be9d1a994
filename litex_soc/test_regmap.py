# SPDX-License-Identifier: BSD-2-Clause
# The committed register map (docs/register_map.md) must be what the default simulation build
# (`python -m litex_soc.targets.sim`, whatever it builds by default) generates today, and the
# generated headers must carry the registers the host code relies on. With the NIC datapath in
# that build, every nic_* register and field carries its description from rtl/contract/, and
# host_include/nic_contract.h is the committed sw/include/nic_contract.h.
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    subprocess.run([sys.executable, "-m", "litex_soc.targets.sim", "--output-dir", str(out)],
                   cwd=ROOT, check=True, capture_output=True, text=True)
    return out


def test_register_map_is_current(build):
    generated = (build / "register_map.md").read_text()
    committed = (ROOT / "docs" / "register_map.md").read_text()
    assert generated == committed, \
        "docs/register_map.md is stale: python -m litex_soc.targets.sim --output-dir DIR, " \
        "then copy DIR/register_map.md over it"
    csr_h = (build / "host_include" / "csr.h").read_text()
    for symbol in ("CSR_CTRL_SCRATCH_ADDR", "CSR_INFO_MAGIC_ADDR", "CSR_PCIE_MSI_ENABLE_ADDR",
                   "CSR_PCIE_DMA0_READER_ENABLE_ADDR", "CSR_PCIE_DMA0_WRITER_TABLE_VALUE_ADDR",
                   "CSR_DMA_PATTERN_CHK_BYTES_ADDR"):
        assert f"#define {symbol} " in csr_h
    # Host headers must not carry CPU access functions (they would need the CPU's hw/common.h).
    assert "csr_read_simple" not in csr_h
    # The Verilog names its memory init files by absolute path (sim runs from any directory).
    verilog = (build / "gateware" / "nicsoc.v").read_text()
    assert '$readmemh("/' in verilog


def test_nic_registers_described(build):
    csr_h = (build / "host_include" / "csr.h").read_text()
    if "#define CSR_NIC_TXQ_CFG_ADDR " not in csr_h:
        pytest.skip("the default build has no NIC datapath")
    assert (build / "host_include" / "nic_contract.h").read_text() == \
        (ROOT / "sw" / "include" / "nic_contract.h").read_text()
    rows = [line for line in (build / "register_map.md").read_text().splitlines()
            if re.match(r"\| (0x[0-9a-f]+ \| `nic_|\| `\.)", line)]
    nic = [r for r in rows if "`nic_" in r]
    assert len(nic) > 100
    for row in rows:
        desc = row.rstrip(" |").rsplit(" | ", 1)[1]
        assert "NICDatapath port" not in desc, row
    for row in nic:
        assert "[``" in row, row        # a contract description names its port
    assert any("ethtool -S rx_drop_no_buffer" in r for r in nic)
