# SPDX-License-Identifier: BSD-2-Clause
#
# test_nic_driver.py: the driver model (nicmodels/nic_driver.py) on its own: its
# records are byte for byte what C code filling the structs of sw/include/nic_contract.h writes
# (compiled with gcc), encode/decode round-trip and refuse values that do not fit, and the rings
# follow nic_queues.c's protocol against a register log (no simulator).
import shutil
import subprocess
from pathlib import Path

import pytest

from nicmodels import nic_driver as nd
from rtl.contract.formats import RX_CPL, RxStatus

ROOT = Path(__file__).resolve().parent.parent

C_PROGRAM = r"""
#define _DEFAULT_SOURCE
#include <endian.h>
#include <stdio.h>
#include <string.h>
#include "nic_contract.h"
static void dump(const void *p)
{
    for (int i = 0; i < 16; i++)
        printf("%02x", ((const unsigned char *)p)[i]);
    printf("\n");
}
int main(void)
{
    struct nic_tx_desc t;
    memset(&t, 0, sizeof t);
    t.addr = htole64(0x0123456789abcdefull);
    t.len = htole16(1514);
    t.flags = htole16(NIC_TX_DESC_FLAGS_EOP);
    dump(&t);
    struct nic_tx_wb w;
    memset(&w, 0, sizeof w);
    w.cons = htole16(4095);
    dump(&w);
    struct nic_rx_desc r;
    memset(&r, 0, sizeof r);
    r.addr = htole64(0x5a3c7e0000010000ull);
    r.len = htole16(2048);
    dump(&r);
    struct nic_rx_cpl c;
    memset(&c, 0, sizeof c);
    c.len = htole16(60);
    c.index = htole16(17);
    c.status = NIC_RX_STATUS_TOO_BIG;
    c.timestamp = htole64(0x1122334455667788ull);
    dump(&c);
    return 0;
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_records_match_c(tmp_path):
    src = tmp_path / "t.c"
    src.write_text(C_PROGRAM)
    subprocess.run(["gcc", "-std=gnu11", "-Wall", "-Wextra", "-Werror",
                    f"-I{ROOT / 'sw' / 'include'}", str(src), "-o", str(tmp_path / "t")],
                   check=True)
    out = subprocess.run([str(tmp_path / "t")], check=True, capture_output=True,
                         text=True).stdout.split()
    assert out == [
        nd.encode_tx_desc(0x0123456789ABCDEF, 1514, eop=True).hex(),
        nd.encode_tx_wb(4095).hex(),
        nd.encode_rx_desc(0x5A3C7E0000010000, 2048).hex(),
        nd.encode_rx_cpl(60, 17, RxStatus.TOO_BIG, timestamp=0x1122334455667788).hex(),
    ]


def test_round_trip():
    raw = nd.encode_tx_desc(0xFFFF_0000_0000_0010, 9216, eop=False, reserved=7)
    d = nd.decode_tx_desc(raw)
    assert (d.addr, d.len, nd.tx_desc_eop(d), d.reserved) == (0xFFFF_0000_0000_0010, 9216,
                                                              False, 7)
    c = nd.decode_rx_cpl(nd.encode_rx_cpl(100, 3, RxStatus.BAD_ADDR, timestamp=21))
    assert c == (100, 3, RxStatus.BAD_ADDR, 0, 0, 21) and c.status is RxStatus.BAD_ADDR
    free = bytearray(16)
    free[nd.field_span(RX_CPL, "status")[0]] = nd.RX_STATUS_FREE
    assert nd.decode_rx_cpl(bytes(free)).status == nd.RX_STATUS_FREE
    assert nd.decode_tx_wb(nd.encode_tx_wb(12)) == 12
    for bad in (dict(length=1 << 16), dict(addr=1 << 64), dict(addr=-1)):
        kw = dict(addr=0, length=1) | bad
        with pytest.raises(ValueError):
            nd.encode_tx_desc(kw["addr"], kw["length"])
    with pytest.raises(ValueError):
        nd.encode(RX_CPL, bogus=1)


class Mem:
    def __init__(self):
        self.mem = bytearray(1 << 16)

    def read(self, addr, n):
        return bytes(self.mem[addr:addr + n])

    def write(self, addr, data):
        self.mem[addr:addr + len(data)] = data


def run_ops(regs, get=lambda name: 0, cycles=100):
    log = []
    for _ in range(cycles):
        regs.step(lambda n, v: log.append((n, v)), get)
    return log


def test_tx_ring_protocol():
    mem, regs = Mem(), nd.PortRegisters()
    t = nd.TxRing(mem, regs, 2, 0x1000, 0x800, 3)
    t.open()
    log = run_ops(regs, get=lambda name: {"txq_drained": 0b100}[name])
    # disable (reset), wait drained, base, writeback address, enable: one access per cycle
    assert [e for e in log if not e[0].endswith("_valid") or e[1]] == [
        ("txq_cfg_queue", 2), ("txq_cfg_size_log2", 3), ("txq_cfg_enable", 0),
        ("txq_cfg_limit", 7), ("txq_cfg_valid", 1),
        ("txe_base_addr", 0x1000), ("txe_base_queue", 2), ("txe_base_valid", 1),
        ("txq_wb_addr", 0x800), ("txq_wb_addr_queue", 2), ("txq_wb_addr_valid", 1),
        ("txq_cfg_queue", 2), ("txq_cfg_size_log2", 3), ("txq_cfg_enable", 1),
        ("txq_cfg_limit", 7), ("txq_cfg_valid", 1)]
    assert t.post([(0x4000, 60), (0x5003, 40)]) and t.post([(0x6000, 1000)])
    assert not t.post([(0, 1)] * 5)                 # 3 posted, room for 4 in a ring of 8
    t.doorbell()
    t.doorbell()                                   # nothing new: no second doorbell
    assert [e for e in run_ops(regs) if e[1]] == [("txq_db_queue", 2), ("txq_db_index", 3),
                                                  ("txq_db_valid", 1)]
    d = [nd.decode_tx_desc(mem.read(0x1000 + 16 * i, 16)) for i in range(3)]
    assert [(x.addr, x.len, nd.tx_desc_eop(x)) for x in d] == [
        (0x4000, 60, False), (0x5003, 40, True), (0x6000, 1000, True)]
    mem.write(0x800, nd.encode_tx_wb(2))
    assert t.reclaim() == 2 and t.pending() == 1
    mem.write(0x800, nd.encode_tx_wb(6))
    with pytest.raises(AssertionError):
        t.reclaim()


def test_rx_ring_protocol():
    mem, regs = Mem(), nd.PortRegisters()
    r = nd.RxRing(mem, regs, 0x1000, 0x2000, 0x8000, 1024, 2)
    r.open()
    log = run_ops(regs, get=lambda name: {"rxe_cons": 0}[name])
    assert [e for e in log if e[1] or e[0] == "rxe_enable"] == [
        ("rxe_enable", 0), ("rxe_ring_base", 0x1000), ("rxe_ring_size_log2", 2),
        ("rxe_cpl_base", 0x2000), ("rxe_enable", 1), ("rxe_db_index", 3), ("rxe_db_valid", 1)]
    assert [nd.decode_rx_desc(mem.read(0x1000 + 16 * p, 16))[:2] for p in range(4)] == [
        (0x8000 + 1024 * p, 1024) for p in range(4)]
    assert r.poll() == []
    mem.write(0x8400, b"abc")
    mem.write(0x2000, nd.encode_rx_cpl(3, 1, RxStatus.OK, timestamp=9))   # position 0 skipped
    frames = r.poll()
    assert frames == [nd.RxFrame(b"abc", 3, 1, RxStatus.OK, 9)]
    assert nd.decode_rx_cpl(mem.read(0x2000, 16)).status == nd.RX_STATUS_FREE
    assert r.refill() == 2 and r.refill() == 0
    assert [e for e in run_ops(regs) if e[1]] == [("rxe_db_index", 1), ("rxe_db_valid", 1)]
