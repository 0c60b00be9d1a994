# The committed register map (docs/register_map.md) must be what the SoC generates today, and the
# generated headers must carry the registers the host code relies on.
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_register_map_is_current(tmp_path):
    subprocess.run([sys.executable, "-m", "litex_soc.targets.sim", "--data-width", "128",
                    "--output-dir", str(tmp_path)], cwd=ROOT, check=True,
                   capture_output=True, text=True)
    generated = (tmp_path / "register_map.md").read_text()
    committed = (ROOT / "docs" / "register_map.md").read_text()
    assert generated == committed, \
        "docs/register_map.md is stale: copy build/sim_dw128/register_map.md over it"
    csr_h = (tmp_path / "host_include" / "csr.h").read_text()
    for symbol in ("CSR_CTRL_SCRATCH_ADDR", "CSR_INFO_MAGIC_ADDR",
                   "CSR_PCIE_DMA0_READER_ENABLE_ADDR", "CSR_PCIE_DMA0_WRITER_TABLE_VALUE_ADDR",
                   "CSR_PCIE_MSI_VECTOR_ADDR", "CSR_DMA_PATTERN_CHK_BYTES_ADDR"):
        assert f"#define {symbol} " in csr_h
    # Host headers must not carry CPU access functions (they would need the CPU's hw/common.h).
    assert "csr_read_simple" not in csr_h
    # The Verilog names its memory init files by absolute path (sim runs from any directory).
    verilog = (tmp_path / "gateware" / "nicsoc.v").read_text()
    assert '$readmemh("/' in verilog
