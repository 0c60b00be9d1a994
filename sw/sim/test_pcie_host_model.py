# Builds and runs the PCIe host model's C++ unit test (test_pcie_host_model.cpp) for both PHY
# widths, with the project's warning flags.
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "test_pcie_host_model"
    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HERE}",
                    str(HERE / "test_pcie_host_model.cpp"), str(HERE / "pcie_host_model.cpp"),
                    "-o", str(out)], check=True)
    return out


@pytest.mark.parametrize("width", [64, 128])
def test_pcie_host_model(binary, width):
    r = subprocess.run([str(binary), str(width)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all model checks passed" in r.stdout
