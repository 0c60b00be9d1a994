# SPDX-License-Identifier: BSD-2-Clause
#
# test_firmware_sim.py: the firmware (firmware/) on the open ECP5 target's SoC in Verilator
# (`make ecp5-sim`: litex_soc/targets/ecp5_sim.py, the MAC looped back by the harness), driven
# through its console as a user at the board's UART would: every command's JSON records are
# checked against each other and against what the analyzer counted, as sw/nicbench's tests check
# nicbench's.
#
# One simulator run for the module (the console commands in order, about a minute of CPU).

import json
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SIM = ROOT / "build" / "ecp5_sim" / "obj" / "ecp5sim"
CLK_HZ = 50_000_000


def wire_bytes(size):
    return 8 + max(size, 60) + 4 + 12


class Console:
    """The simulator with its UART on pipes: run(cmd) sends a line and returns the output
    lines up to the command's final "ok" or "error: ..." line."""

    def __init__(self):
        self.proc = subprocess.Popen([str(SIM)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1)
        self.lines = []
        self.cv = threading.Condition()
        threading.Thread(target=self._reader, daemon=True).start()
        self.wait_for(lambda line: line.startswith("nicfw: ") and "register blocks" in line,
                      60)

    def _reader(self):
        for line in self.proc.stdout:
            with self.cv:
                self.lines.append(line.rstrip("\r\n"))
                self.cv.notify_all()
        with self.cv:
            self.lines.append(None)
            self.cv.notify_all()

    def wait_for(self, pred, timeout, start=0):
        end = time.monotonic() + timeout
        with self.cv:
            while True:
                for i in range(start, len(self.lines)):
                    if self.lines[i] is None:
                        raise AssertionError("simulator ended:\n" + "\n".join(
                            str(x) for x in self.lines[:i]) + self.proc.stderr.read())
                    if pred(self.lines[i]):
                        return i
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError("console timeout; output:\n" +
                                         "\n".join(map(str, self.lines[start:])))
                self.cv.wait(left)

    def run(self, cmd, timeout=120):
        with self.cv:
            start = len(self.lines)
        self.proc.stdin.write(cmd + "\n")
        self.proc.stdin.flush()
        echo = self.wait_for(lambda line: line.endswith("nicfw> " + cmd), timeout, start)
        end = self.wait_for(lambda line: line == "ok" or line.startswith("error:"), timeout,
                            echo + 1)
        with self.cv:
            return self.lines[echo + 1:end + 1]

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        return self.proc.stderr.read()


def occupancy(lines):
    """The scope command's probe records by probe name."""
    return {r["probe"]: r for r in records(lines) if r["experiment"] == "scope_occupancy"}


def records(lines):
    return [json.loads(x) for x in lines if x.startswith("{")]


@pytest.fixture(scope="module")
def con():
    subprocess.run(["make", "-s", "ecp5-sim"], cwd=ROOT, check=True)
    c = Console()
    yield c
    c.close()


def test_selftest(con):
    out = con.run("selftest")
    assert out[-1] == "ok" and "selftest: PASS" in out, "\n".join(out)
    (rec,) = records(out)
    assert rec["received"] == rec["frames"] == 9 and rec["bad"] == 0 and rec["errors"] == 0
    # Every frame: a descriptor and a payload read, an RX data and a completion write.
    assert rec["dma_reads"] >= 2 * rec["frames"] and rec["dma_writes"] >= 2 * rec["frames"]


def test_info_discovers_the_blocks(con):
    out = con.run("info")
    assert out[-1] == "ok"
    text = "\n".join(out)
    assert "magic 0x4e494331" in text and f"clk_freq {CLK_HZ}" in text
    for block in ("nic", "ctrl", "analyzer"):
        assert re.search(rf"block {block} .*", text), text
    assert re.search(r"block nic .* layout ok", text) and re.search(r"block ctrl .* layout ok",
                                                                    text)


@pytest.mark.parametrize("frames,size", [(48, 60), (24, 1514)])
def test_tx_benchmark_against_the_analyzer(con, frames, size):
    con.run("scope")                        # opens the analyzer's window
    out = con.run(f"tx {frames} {size}")
    assert out[-1] == "ok", "\n".join(out)
    (r,) = records(out)
    scope = occupancy(con.run("scope"))
    assert r["experiment"] == "tx" and r["size"] == size and r["queues"] == 1
    assert r["frames"] == r["sent"] == frames and r["lost"] == 0 and r["bad"] == 0
    assert r["out_of_order"] == 0 and r["checked"] == 1
    assert r["bytes"] == frames * size and r["wire_bytes"] == frames * wire_bytes(size)
    ns = r["time_ns"]
    assert ns == r["cycles"] * 10**9 // CLK_HZ
    assert r["mbps"] == pytest.approx(r["bytes"] * 1e3 / ns, abs=1e-3)
    assert r["mpps"] == pytest.approx(frames * 1e3 / ns, abs=1e-6)
    assert r["line_mpps"] == pytest.approx(1e3 / (8 * wire_bytes(size)), abs=1e-6)
    assert r["line_ratio"] == pytest.approx(r["mpps"] / r["line_mpps"], rel=1e-3, abs=1e-4)
    # The simulated PHY moves an octet per cycle: the frames cannot have taken less.
    assert r["cycles"] >= frames * (wire_bytes(size) - 12)
    # The analyzer saw the same frames on the MAC both ways, preamble and FCS included.
    for probe in ("mac_tx", "mac_rx"):
        assert scope[probe]["frames"] == frames, scope[probe]
        assert scope[probe]["bytes"] == frames * (8 + max(size, 60) + 4), scope[probe]
    # No PCIe in this SoC: its probes saw nothing. Interrupt events: one per RX frame and one
    # per TX frame (the default coalescing, which selftest set: rx-frames 1, tx-frames 1).
    for probe in ("pcie_rx", "pcie_tx", "dma_rd_req", "dma_wr_req"):
        assert scope[probe]["busy"] == scope[probe]["frames"] == 0
    assert scope["msi"]["frames"] == 2 * frames
    assert 1 <= r["rx_irqs"] <= frames and 1 <= r["tx_irqs"] <= frames
    assert scope["nic_rd_cpl"]["bytes"] >= frames * size
    assert scope["nic_wr"]["bytes"] >= frames * size


def test_breakdowns_on_the_soc_bus(con):
    """The read and write latency breakdowns of the NIC's DMA on Wishbone (the hand-offs:
    litex_soc/nicscope/socbus_handoffs.py), read by the firmware as nicscope reads them."""
    con.run("scope")
    assert con.run("tx 48 60")[-1] == "ok"
    out = con.run("scope breakdown", timeout=600)     # 56 records over the UART
    assert out[-1] == "ok", "\n".join(out)
    scope = occupancy(out)
    bd = {(r["path"], r["class"], r["stage"]): r for r in records(out)
          if r["experiment"] == "scope_breakdown"}
    stages = {"h2c": ("queue", "tag", "credit", "phy", "rtt", "cpl", "reorder"),
              "c2h": ("queue", "credit", "phy")}
    classes = {"h2c": ("nic_desc", "nic_payload"), "c2h": ("nic",)}
    for path in ("h2c", "c2h"):
        assert bd[(path, "raw_dma", "total")]["raises"] == 0      # no LitePCIe DMA here
        for cls in classes[path]:
            total = bd[(path, cls, "total")]
            assert total["mismatch"] == 0 and total["count"] == total["raises"] > 0, total
            # Little's law, exact: the window holds whole requests.
            assert total["occupancy"] == total["sum"], total
            assert sum(bd[(path, cls, s)]["sum"] for s in stages[path]) == total["sum"]
            assert total["min"] <= total["sum"] // total["count"] <= total["max"]
            # By construction on Wishbone: issue a cycle after the adapter took the request,
            # "on the PHY" a cycle after the issue (or after a write's first beat ended).
            for s in ("tag", "phy") if path == "h2c" else ("phy",):
                assert bd[(path, cls, s)]["min"] == bd[(path, cls, s)]["max"] == 1
    # Every request and write the probes saw, each counted once.
    assert sum(bd[("h2c", c, "total")]["count"] for c in classes["h2c"]) == \
        scope["nic_rd_req"]["frames"]
    assert bd[("c2h", "nic", "total")]["count"] == scope["nic_wr"]["frames"]
    # 48 frames: a payload read each; a data write, a completion write each, and writebacks.
    assert bd[("h2c", "nic_payload", "total")]["count"] == 48
    assert bd[("c2h", "nic", "total")]["count"] >= 2 * 48
    # The bus's latency to the first beat (arbitration, the width converter, the RAM).
    assert bd[("h2c", "nic_payload", "rtt")]["min"] >= 2


def test_deep_capture_into_main_ram(con):
    """The deep capture's entries, written by its Wishbone master into main RAM, taken by the
    CPU as they come: each of the CPU's CSR reads while streaming is in them, none lost."""
    out = con.run("stream 200", timeout=600)
    assert out[-1] == "ok", "\n".join(out)
    (r,) = records(out)
    assert r["reads"] == 1 + 2 * 200 and r["reads_seen"] == r["reads"], r
    assert r["taken"] == r["prod"] == r["entries"] > r["reads"], r
    assert r["lost"] == r["gaps"] == r["backwards"] == 0, r


def test_csr_cost(con):
    out = con.run("csr 64")
    assert out[-1] == "ok", "\n".join(out)
    recs = {r["access"]: r for r in records(out)}
    for access in ("read", "write"):
        r = recs[access]
        assert r["experiment"] == "csr_latency" and r["samples"] == 64 and r["batch"] == 16
        assert 0 < r["min_ns"] <= r["median_ns"] <= r["p99_ns"] <= r["max_ns"]
        assert r["min_ns"] <= r["mean_ns"] <= r["max_ns"] + 1
        # A CSR access through the registered Wishbone-to-CSR bridge takes a few cycles (the
        # bridge's and the bank's registers, the bus's ack), not one and not hundreds.
        assert 2 <= r["min_cycles"] <= 50, r
        assert r["min_ns"] == pytest.approx(r["min_cycles"] * 10**9 / CLK_HZ, abs=1), r


def test_coalesce_round_trip(con):
    out = con.run("coalesce rx-usecs 20 rx-frames 0 tx-frames 4")
    assert out[-1] == "ok", "\n".join(out)
    (r,) = records(out)
    assert (r["rx-usecs"], r["rx-frames"], r["tx-frames"]) == (20, 0, 4)
    assert r["tick_cycles"] == CLK_HZ // 10**6
    (r,) = records(con.run("coalesce"))
    assert (r["rx-usecs"], r["rx-frames"], r["tx-frames"]) == (20, 0, 4)
    out = con.run("coalesce rx-usecs 70000")
    assert out[-1].startswith("error:") and "rx-usecs" in out[-1]
    # The settings hold for the next run: RX interrupts every 100 us instead of per frame
    # (frames come about every 25 us here), TX's per 4 frames; the analyzer counts them.
    con.run("coalesce rx-usecs 100 rx-frames 0 tx-frames 4")
    con.run("scope")
    (r,) = records(con.run("tx 64 60"))
    irqs = occupancy(con.run("scope"))["msi"]["frames"]
    assert r["frames"] == 64 and 64 // 4 + 2 <= irqs <= 64 // 4 + 64 // 2, (irqs, r)
    con.run("coalesce rx-usecs 0 rx-frames 1 tx-frames 1")


@pytest.mark.parametrize("cmd,why", [("bogus", "unknown command"), ("tx 0 60", "FRAMES"),
                                     ("tx 10 59", "SIZE"), ("tx 10 60 16", "INFLIGHT"),
                                     ("csr 1", "usage"), ("coalesce rx-usecs", "usage"),
                                     ("stream 0", "READS"), ("scope bogus", "usage")])
def test_bad_input_gets_a_clear_error(con, cmd, why):
    out = con.run(cmd)
    assert out[-1].startswith("error:") and why in out[-1], out
