# SPDX-License-Identifier: BSD-2-Clause
#
# test_tlp_rules.py: tests of the TLP rule checker (tlp_rules.py) with hand-built cocotbext-pcie
# TLPs, no simulator: every good TLP passes, every broken rule is reported (one message each),
# and the byte count / lower address table against the PCIe Base spec's (2.3.1.1) examples.
# Parameters: the device is 01:00.0 with MPS 256, MRRS 512.

import pytest

from cocotb_tests.pcie_rc.tlp_rules import TlpRules, be_byte_count
from cocotbext.pcie.core.tlp import CplStatus, Tlp, TlpType
from cocotbext.pcie.core.utils import PcieId

DEV, HOST = PcieId(1, 0, 0), PcieId(0, 0, 0)


def rules():
    return TlpRules(lambda: DEV, lambda: 256, lambda: 512)


def mwr(addr, nbytes, fbe=None, lbe=None, rid=DEV, fmt=TlpType.MEM_WRITE):
    t = Tlp()
    t.fmt_type, t.requester_id = fmt, rid
    t.set_addr_be_data(addr, bytes(nbytes))
    if fbe is not None:
        t.first_be = fbe
    if lbe is not None:
        t.last_be = lbe
    return t


def mrd(addr, length, fbe=0xF, lbe=0xF, tag=0, rid=DEV):
    t = Tlp()
    t.fmt_type, t.requester_id, t.tag = TlpType.MEM_READ, rid, tag
    t.address, t.length, t.first_be, t.last_be = addr, length, fbe, lbe if length > 1 else 0
    return t


def cpld(req, byte_count, lower_address, length=None, cid=DEV, status=CplStatus.SC):
    t = Tlp.create_completion_data_for_tlp(req, cid)
    t.set_data(bytes(4 * (req.length if length is None else length)))
    t.byte_count, t.lower_address, t.status = byte_count, lower_address, status
    return t


def one(r, tlp):
    """The violations device_tlp(tlp) adds."""
    n = len(r.violations)
    r.device_tlp(tlp)
    return r.violations[n:]


@pytest.mark.parametrize("length,fbe,lbe,want", [
    (1, 0x0, 0, 1), (1, 0x1, 0, 1), (1, 0x8, 0, 1), (1, 0x9, 0, 4), (1, 0xF, 0, 4),
    (1, 0x5, 0, 3), (1, 0xA, 0, 3), (1, 0x3, 0, 2), (1, 0x6, 0, 2), (1, 0xC, 0, 2),
    (2, 0xF, 0xF, 8), (2, 0xE, 0x1, 4), (2, 0x8, 0x1, 2), (3, 0xC, 0x3, 8)])
def test_byte_count_table(length, fbe, lbe, want):
    assert be_byte_count(length, fbe, lbe) == want


def test_good_tlps_pass():
    r = rules()
    assert one(r, mwr(0x1000_0000, 256)) == []
    assert one(r, mwr(0x1000_0ffc, 4)) == []
    assert one(r, mwr(0x1000_0001, 2)) == []                     # BE 0x6, length 1
    assert one(r, mrd(0x1000_0e00, 128, tag=1)) == []            # 512 B, ends at the page end
    assert one(r, mrd(0x1000_2000, 2, 0x5, 0xA, tag=2)) == []    # QW aligned: any BEs
    # MMIO read completions: byte count / lower address per the request's BEs.
    for fbe, la, bc in ((0xF, 0x10, 4), (0x2, 0x11, 1), (0xC, 0x12, 2), (0x0, 0x10, 1)):
        req = mrd(0xE000_0010, 1, fbe, tag=7, rid=HOST)
        r.host_request(req)
        assert one(r, cpld(req, bc, la)) == [], (fbe, la, bc)
    ca = Tlp.create_ca_completion_for_tlp(mrd(0xE000_0000, 2, tag=8, rid=HOST), DEV)
    r.host_request(mrd(0xE000_0000, 2, tag=8, rid=HOST))
    assert one(r, ca) == []
    assert r.counts == {"mwr": 3, "mrd": 2, "cpl": 5, "other": 0}


@pytest.mark.parametrize("make,words", [
    (lambda r: mwr(0x1000_0000, 512), "MPS"),
    (lambda r: mrd(0x1000_0000, 256), "MRRS"),
    (lambda r: mwr(0x1000_0fc0, 128), "4 KiB"),
    (lambda r: mrd(0x1000_0ff0, 8), "4 KiB"),
    (lambda r: mwr(0x1000_0000, 8, fmt=TlpType.MEM_WRITE_64), "4DW header"),
    (lambda r: mwr(0x1000_0000, 4, rid=PcieId(2, 0, 0)), "requester ID"),
    (lambda r: mwr(0x1000_0000, 4, lbe=0xF), "last BE"),
    (lambda r: mwr(0x1000_0000, 8, lbe=0x0), "nonzero"),
    (lambda r: mrd(0x1000_0000, 3, 0x0, 0xF), "nonzero"),
    (lambda r: mrd(0x1000_0004, 2, 0x5, 0xF), "non-contiguous"),   # not QW aligned
    (lambda r: mrd(0x1000_0000, 3, 0xF, 0x5), "non-contiguous"),
])
def test_request_rules(make, words):
    r = rules()
    v = one(r, make(r))
    assert len(v) == 1 and words in v[0], v


def test_read_tags():
    r = rules()
    assert one(r, mrd(0x1000_0000, 4, tag=3)) == []
    v = one(r, mrd(0x1000_1000, 4, tag=3))
    assert len(v) == 1 and "tag 3" in v[0]
    # The host's completions release the tag: split in two, the first does not.
    r = rules()
    req = mrd(0x1000_0000, 32, tag=5)
    r.device_tlp(req)
    first = cpld(req, 128, 0x00, length=16)
    r.host_completion(first)
    assert one(r, mrd(0x1000_1000, 1, tag=5)) != []
    r = rules()
    r.device_tlp(req)
    r.host_completion(first)
    r.host_completion(cpld(req, 64, 0x40, length=16))
    assert one(r, mrd(0x1000_1000, 1, tag=5)) == []


@pytest.mark.parametrize("fbe,bc,la,length,cid,words", [
    (0x2, 4, 0x11, 1, DEV, "byte count"),
    (0x2, 1, 0x10, 1, DEV, "lower address"),
    (0x0, 0, 0x10, 1, DEV, "byte count"),            # zero-length read: byte count 1
    (0x0, 1, 0x13, 1, DEV, "lower address"),         # ... and lower address bits 00
    (0xF, 4, 0x10, 2, DEV, "length"),
    (0xF, 4, 0x10, 1, PcieId(1, 0, 1), "completer ID"),
])
def test_completion_rules(fbe, bc, la, length, cid, words):
    r = rules()
    req = mrd(0xE000_0010, 1, fbe, tag=9, rid=HOST)
    r.host_request(req)
    v = one(r, cpld(req, bc, la, length=length, cid=cid))
    assert len(v) == 1 and words in v[0], v


def test_completion_without_request_and_framing():
    r = rules()
    req = mrd(0xE000_0010, 1, tag=9, rid=HOST)
    v = one(r, cpld(req, 4, 0x10))
    assert len(v) == 1 and "no outstanding" in v[0]
    r.host_request(req)
    r.device_tlp(cpld(req, 4, 0x10))
    assert one(r, cpld(req, 4, 0x10)) != []              # answered already
    ca = Tlp.create_ca_completion_for_tlp(req, DEV)
    ca.wire_dws = 4                                        # a padding dword marked valid
    r.host_request(req)
    v = one(r, ca)
    assert len(v) == 1 and "4 dwords" in v[0], v
    w = mwr(0x1000_0000, 4)
    w.framing = ["beat 0: first=0"]
    v = one(r, w)
    assert len(v) == 1 and "framing" in v[0], v
    bad = cpld(req, 4, 0x10, status=CplStatus.UR)
    r.host_request(req)
    v = one(r, bad)
    assert len(v) == 1 and "with data" in v[0], v
