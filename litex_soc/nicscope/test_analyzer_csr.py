# SPDX-License-Identifier: BSD-2-Clause
# Tests of the analyzer's LiteX register wrapper (litex_soc/nicscope/analyzer_csr.py) that need
# no SoC: WriteOnlyCSRStorage, in a LiteX CSR bank simulated with Migen, takes every write like a
# CSRStorage and reads 0, while an ordinary CSRStorage beside it reads back.
from migen import Module, run_simulation

from litex.soc.interconnect import csr_bus
from litex.soc.interconnect.csr import CSRStorage

from litex_soc.nicscope.analyzer_csr import WriteOnlyCSRStorage


class Bank(Module):
    def __init__(self):
        self.wo = WriteOnlyCSRStorage(64, name="wo")
        self.rw = CSRStorage(64, name="rw")
        self.submodules.bank = csr_bus.CSRBank([self.wo, self.rw],
                                               bus=csr_bus.Interface(data_width=32))


def test_write_only_storage_reads_zero():
    dut = Bank()
    got = {}

    def bench():
        bus = dut.bank.bus
        # 64-bit CSRs are two 32-bit words each, most significant first (ordering "big"):
        # wo at words 0, 1 and rw at words 2, 3.
        for adr, value in ((0, 0x89ABCDEF), (1, 0x01234567), (2, 0x76543210), (3, 0xFEDCBA98)):
            yield from bus.write(adr, value)
        yield
        got["wo"] = yield dut.wo.storage
        got["rw"] = yield dut.rw.storage
        got["reads"] = []
        for adr in range(4):
            # The bank registers its read data: it follows the address one cycle later.
            yield bus.adr.eq(adr)
            yield
            yield
            got["reads"].append((yield bus.dat_r))

    run_simulation(dut, bench())
    assert got["wo"] == 0x89ABCDEF_01234567
    assert got["rw"] == 0x76543210_FEDCBA98
    assert got["reads"] == [0, 0, 0x76543210, 0xFEDCBA98]
