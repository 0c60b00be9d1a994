# SPDX-License-Identifier: BSD-2-Clause
# Unit test of the PCIe host model (sw/sim/pcie_host_model.cpp and its parts): compiles the
# test (test_pcie_host_model.cpp with main(), one test_<part>.cpp per part of the model, a fake
# device driving the model's PHY streams) with the model (g++ -std=c++17 -O2 -Wall -Wextra
# -Werror, as the project builds host code) into a temporary directory and runs it for both PHY
# widths. Needs no simulator build and no device.
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# The model: the sources of SIM_CPP in the Makefile less the harness and the backend.
MODEL = ["pcie_host_model.cpp", "link_params.cpp", "pcie_link.cpp", "tlp_checker.cpp",
         "host_memory.cpp", "mmio_requester.cpp", "model_log.cpp"]
TESTS = ["test_pcie_host_model.cpp", "test_link_params.cpp", "test_pcie_link.cpp",
         "test_tlp_checker.cpp", "test_host_memory.cpp", "test_mmio_requester.cpp"]


@pytest.fixture(scope="module")
def test_binary(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ not installed")
    exe = tmp_path_factory.mktemp("pcie_host_model") / "test_pcie_host_model"
    build = subprocess.run(
        ["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HERE}",
         *(str(HERE / f) for f in TESTS + MODEL), "-o", str(exe)],
        capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    return exe


@pytest.mark.parametrize("data_width", [64, 128])
def test_pcie_host_model(test_binary, data_width):
    run = subprocess.run([str(test_binary), str(data_width)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.splitlines()[-1].startswith("PASS"), run.stdout
