# SPDX-License-Identifier: BSD-2-Clause
# nic_contract.h: the committed copy (sw/include/) is what gen_c writes today, and it compiles
# (C11 and C++17, -Wall -Wextra -Werror -pedantic: its _Static_asserts hold) with the X-macro
# tables listing every nic_* status register once.
import shutil
import subprocess
from pathlib import Path

import pytest

from rtl.contract import gen_c

ROOT = Path(__file__).resolve().parent.parent.parent
COMMITTED = ROOT / "sw" / "include" / "nic_contract.h"

PROGRAM = r"""
#include "nic_contract.h"
#include <stdio.h>
#include <string.h>
struct reg { const char *name, *kind, *ethtool, *desc; };
#define X(n, N, K, e, d) {#n, #K, e, d},
static const struct reg regs[] = {NIC_CONTRACT_STATUS_REGS(X) NIC_CONTRACT_ARRAY_REGS(X)};
int main(void)
{
    for (size_t i = 0; i < sizeof regs / sizeof regs[0]; i++)
        printf("%s %s %s\n", regs[i].name, regs[i].kind, regs[i].ethtool);
    return !(NIC_TX_DESC_FLAGS_EOP == 1 && NIC_RX_STATUS_BAD_ADDR == 2 &&
             sizeof(struct nic_rx_cpl) == NIC_RECORD_BYTES);
}
"""


def test_committed_header_is_current():
    assert COMMITTED.read_text() == gen_c.header_text(), \
        "sw/include/nic_contract.h is stale: python -m rtl.contract.gen_c " \
        "sw/include/nic_contract.h"


@pytest.mark.parametrize("lang", ["c", "c++"])
def test_header_compiles(tmp_path, lang):
    cc = {"c": "gcc", "c++": "g++"}[lang]
    if shutil.which(cc) is None:
        pytest.skip(f"{cc} not installed")
    (tmp_path / "nic_contract.h").write_text(gen_c.header_text())
    src = tmp_path / "t.c"
    src.write_text(PROGRAM)
    std = {"c": "-std=c11", "c++": "-std=c++17"}[lang]
    subprocess.run([cc, "-x", lang, std, "-Wall", "-Wextra", "-Werror", "-pedantic",
                    f"-I{tmp_path}", str(src), "-o", str(tmp_path / "t")], check=True)
    out = subprocess.run([str(tmp_path / "t")], check=True, capture_output=True,
                         text=True).stdout.split("\n")[:-1]
    want = [f"{name} {s.kind.upper()} {s.ethtool.replace('{i}', '%u')}"
            for name, s in gen_c.status_registers()]
    assert sorted(out) == sorted(want) and len(set(out)) == len(out)
