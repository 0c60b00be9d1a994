# Unit test of the PCIe host model (sw/sim/pcie_host_model.cpp): compiles
# sw/sim/test_pcie_host_model.cpp, a fake device driving the model's PHY streams, with the model
# (g++ -std=c++17 -O2 -Wall -Wextra -Werror, as the project builds host code) into a temporary
# directory and runs it for both PHY widths. Needs no simulator build and no device.
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def test_binary(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    exe = tmp_path_factory.mktemp("pcie_host_model") / "test_pcie_host_model"
    build = subprocess.run(
        ["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HERE}",
         str(HERE / "test_pcie_host_model.cpp"), str(HERE / "pcie_host_model.cpp"),
         "-o", str(exe)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    return exe


@pytest.mark.parametrize("data_width", [64, 128])
def test_pcie_host_model(test_binary, data_width):
    run = subprocess.run([str(test_binary), str(data_width)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1].startswith("PASS"), run.stdout
