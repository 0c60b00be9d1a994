# SPDX-License-Identifier: BSD-2-Clause
# CplGuard (cpl_guard.py) alone in Migen's simulator, at both PHY widths: TLPs pass unchanged, a
# poisoned CplD leaves with status CA, a UR Cpl with byte count 0, a read whose data does not
# come within the timeout gets an injected CA Cpl for the controller's head tag between two TLPs,
# and each is counted. The whole SoC under the host model's faults: sw/nicbench/
# test_nicbench_fuzz.py.

import pytest
from migen.sim import run_simulation

from litex_soc.pcie.cpl_guard import CplGuard

REQ_ID = 0x0100


def dwords(dat, w):
    return [(dat >> (32 * i)) & 0xFFFFFFFF for i in range(w // 32)]


def cpl(status=0, ep=False, length=0, bc=0, tag=3, data=True):
    dw0 = (0x4A if data else 0x0A) << 24 | (1 << 14 if ep else 0) | length
    dw1 = 0 << 16 | status << 13 | bc
    dw2 = REQ_ID << 16 | tag << 8
    return [dw0, dw1, dw2] + [0x11111111 * (i + 1) for i in range(length)]


def beats_of(tlp, w):
    n = w // 32
    return [tlp[i:i + n] for i in range(0, len(tlp), n)]


def run(w, tlps, timeout=40, head=None, idle=0):
    dut = CplGuard(w, REQ_ID, timeout=timeout)
    got, counts = [], {}

    def feed():
        if head is not None:
            yield dut.head_valid.eq(1)
            yield dut.head_tag.eq(head)
        for _ in range(idle):
            yield
        for tlp in tlps:
            bs = beats_of(tlp, w)
            for i, b in enumerate(bs):
                yield dut.sink.valid.eq(1)
                yield dut.sink.first.eq(i == 0)
                yield dut.sink.last.eq(i == len(bs) - 1)
                yield dut.sink.dat.eq(sum(d << (32 * k) for k, d in enumerate(b)))
                yield
                while not (yield dut.sink.ready):
                    yield
            yield dut.sink.valid.eq(0)
        for _ in range(8):
            yield
        for name in ("timeouts", "unsupported", "aborts", "poisoned"):
            counts[name] = yield getattr(dut, "_" + name).status

    def take():
        yield dut.source.ready.eq(1)
        cur = []
        for _ in range(400):
            if (yield dut.source.valid):
                cur += dwords((yield dut.source.dat), w)
                if (yield dut.source.last):
                    got.append(cur)
                    cur = []
            yield

    run_simulation(dut, [feed(), take()])
    return got, counts


@pytest.mark.parametrize("w", [64, 128])
def test_good_completion_passes_unchanged(w):
    tlp = cpl(length=4, bc=16)
    got, counts = run(w, [tlp])
    assert got[0][:len(tlp)] == tlp
    assert counts == {"timeouts": 0, "unsupported": 0, "aborts": 0, "poisoned": 0}


@pytest.mark.parametrize("w", [64, 128])
def test_poisoned_and_failed_completions(w):
    ep = cpl(ep=True, length=4, bc=16)
    ur = cpl(status=1, bc=64, data=False)
    ca = cpl(status=4, bc=64, data=False)
    got, counts = run(w, [ep, ur, ca])
    assert (got[0][1] >> 13) & 7 == 4 and got[0][1] & 0xFFF == 16    # EP -> CA, same count
    assert got[0][3:3 + 4] == ep[3:]
    assert (got[1][1] >> 13) & 7 == 1 and got[1][1] & 0xFFF == 0     # UR: byte count 0
    assert (got[2][1] >> 13) & 7 == 4 and got[2][1] & 0xFFF == 0
    assert counts == {"timeouts": 0, "unsupported": 1, "aborts": 1, "poisoned": 1}


@pytest.mark.parametrize("w", [64, 128])
def test_completion_timeout_injects_a_ca_for_the_head_tag(w):
    got, counts = run(w, [], timeout=40, head=5, idle=60)
    assert counts["timeouts"] >= 1
    dw0, dw1, dw2 = got[0][:3]
    assert dw0 >> 24 == 0x0A and dw0 & 0x3FF == 0
    assert (dw1 >> 13) & 7 == 4 and dw1 & 0xFFF == 0
    assert (dw2 >> 8) & 0xFF == 5 and dw2 >> 16 == REQ_ID
