# SPDX-License-Identifier: BSD-2-Clause
# The Linux driver against the RTL in a debug guest kernel: the UML guest of test_uml.py built
# with KASAN (generic) and lockdep (PROVE_LOCKING, which brings PROVE_RCU and the spinlock and
# mutex debugging): sw/uml/uml_debug.config, cached as build/uml/kernel-debug-<key>/. Two boots,
# and in each the guest's dmesg must hold no KASAN, lockdep, BUG or WARNING report (BAD below):
#   1. resets: TX queue 0 disabled by the host behind the driver (`csrw` on the server's control
#      socket), then frames sent: the ring fills, the stack's watchdog calls ndo_tx_timeout, and
#      the reset work drains the queue, takes the final index from nic_txq_cons, drops what was
#      never fetched and restarts the ring while the rest of the frames wait in the qdisc;
#      ITERATIONS times, each followed by traffic and an ethtool -G (close and open); then
#      ethtool -G with frames in flight. Checked: ndo_tx_timeout ran and reset the queue each
#      time, with the device's index taken as it was (no "index beyond what was posted"), frames
#      reached the wire after each reset (the server's count), every frame that came back is
#      byte for byte what was sent (frames dropped by a reset are allowed, a wrong one is not).
#   2. faults: traffic while the host model takes the PCIe link down at random (the lost-write
#      fault: every TLP in flight is lost, among them TX consumer-index writebacks, RX completion
#      records and RX payload writes), then the interface down (the stop path takes the TX
#      index from the device when the last writeback was lost) and the module unloaded.
#      Frames whose payload write was lost while their completion record got through come back
#      wrong: counted and printed, not failed (the driver sees the link-down only at its next
#      watchdog tick, after NAPI may have delivered them).
#   3. link-down: traffic, and the host takes the link down once in the middle of it (the
#      server's `linkdown`). UML's virt-pci has no AER (no root port): the driver's watchdog
#      sees pcie_cpl_link_downs move and runs its pci_error_handlers (error_detected, slot_reset,
#      resume) itself. Checked: each handler ran once, drv_pci_recoveries 1, and traffic after
#      the recovery comes back complete and intact.
#   4. lost RX record: the host loses the next RX completion record the SoC writes (the
#      server's `dropwr` over the completion ring), then traffic: the poll waits at that record
#      while the device goes on. Checked: the driver's watchdog found the ring stalled and reset
#      it once (drv_rx_resets 1), and traffic after it comes back complete and intact.
# Each: the module unloads; lockdep is running (its banner, /proc/lockdep_stats' debug_locks 1
# at the end). The console from the module's load on is scanned (the dmesg buffer wraps); the
# kernel's own reports before it (UML 6.1: a suspicious RCU usage in lib/maple_tree.c at init)
# are printed, not failed. kmemleak is not checked here: with KASAN on UML the module's memory is
# unknown to it ("Adding scan area to unknown object"), which gives false leaks; test_uml.py and
# test_kmod.py check leaks.
# DEBUG_ATOMIC_SLEEP is not in the guest: UML selects ARCH_NO_PREEMPT, on which the kernel does
# not offer it (uml_debug.config).
# Slow (the debug kernel's build, and a KASAN guest): not in `make test`; `make uml-debug` runs
# it (NIC_UML_DEBUG=1).
import json
import os
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import uml_guest  # noqa: E402

ROOT = uml_guest.ROOT
ITERATIONS = 3
SIZE = 1000
# The debug kernel's checkers, required in its .config.
REQUIRED_CONFIG = ("CONFIG_KASAN=y", "CONFIG_PROVE_LOCKING=y", "CONFIG_PROVE_RCU=y",
                   "CONFIG_DEBUG_KMEMLEAK=y")
# The host model's lost-write fault: per device TLP, the link down for 5 us of device time.
FAULT_OPTS = "fault_link_down=0.001,fault_link_down_ns=5000,fault_seed=7"
BAD = re.compile(r"\bBUG\b|KASAN|WARNING:|Oops|general protection|kernel panic|Kernel panic|"
                 r"possible circular locking|inconsistent lock state|possible recursive locking|"
                 r"suspicious RCU usage|lock held when returning|bad unlock balance|"
                 r"sleeping function called from invalid context|scheduling while atomic|"
                 r"turning off the locking correctness validator|INFO: task|refcount_t|"
                 r"list_del corruption|double free|unreferenced object|um virt-pci delay")
TRAFFIC = re.compile(r"sent (\d+) received (\d+) good (\d+) bad (\d+) lost (\d+)")

START = r"""
E=ethtool
IF=eth0
if insmod /nicdrv.ko; then echo UML-INSMOD-OK; fi
# One TX queue (the one the host disables) and the smallest TX ring: it fills at once.
$E -L $IF tx 1
if $E -G $IF rx 256 tx 64; then echo UML-G-OK; fi
echo 1 > /proc/sys/net/ipv6/conf/$IF/disable_ipv6
if ip link set $IF up; then echo UML-UP; fi
"""

RESETS = r"""
i=1
while [ $i -le @ITER@ ]; do
    # The host disables hardware queue 0; the frames fill the ring (it stops with room for a
    # largest skb left) and the rest wait in the qdisc until the watchdog's reset restarts it.
    sync_host stall_$i
    echo "UML-PHASE stall $i"
    nictraffic $IF 200 @SIZE@ 150 15000
    echo "UML-PHASE after $i"
    nictraffic $IF 100 @SIZE@ 16 15000
    sync_host after_$i
    if [ $((i % 2)) = 1 ]; then R=512; else R=256; fi
    if $E -G $IF rx $R tx 64; then echo "UML-G-$i-OK"; fi
    i=$((i + 1))
done
echo "UML-PHASE ringparam"
nictraffic $IF 1000 @SIZE@ 32 20000 &
P=$!
sleep 1
if $E -G $IF rx 512 tx 128; then echo UML-G2-OK; fi
wait $P
echo "UML-PHASE last"
nictraffic $IF 100 @SIZE@ 16 20000
"""

FAULTS = r"""
echo "UML-PHASE faults"
nictraffic $IF 600 @SIZE@ 16 20000
nictraffic $IF 300 @SIZE@ 64 20000
"""

LINKDOWN = r"""
echo "UML-PHASE linkdown"
nictraffic $IF 100 @SIZE@ 16 20000
nictraffic $IF 400 @SIZE@ 16 5000 &
P=$!
usleep 300000
sync_host linkdown
wait $P
# The watchdog's tick (NICDRV_WATCHDOG_MS), then the handlers.
sleep 2
echo "UML-PHASE recovered"
nictraffic $IF 200 @SIZE@ 16 20000
"""

RXDROP = r"""
echo "UML-PHASE rxdrop"
nictraffic $IF 100 @SIZE@ 16 20000
sync_host droprx
nictraffic $IF 100 @SIZE@ 16 3000
# The watchdog's two looks (NICDRV_WATCHDOG_MS), then the reset work.
sleep 2
echo "UML-PHASE rx-after"
nictraffic $IF 200 @SIZE@ 16 20000
"""

END = r"""
DRV="drv_tx_(reset_dropped|lost_wb)|drv_pci|drv_rx_reset"
$E -S $IF | grep -E "$DRV|tx_dropped|rx_length|bad_index"
ip link set $IF down
if rmmod nicdrv; then echo UML-RMMOD-OK; fi
echo "UML-LSMOD $(grep -c nicdrv /proc/modules)"
echo scan > /sys/kernel/debug/kmemleak; sleep 1; echo scan > /sys/kernel/debug/kmemleak
echo "UML-KMEMLEAK $(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)"
echo "UML-DEBUG-LOCKS $(awk '/debug_locks:/ { print $2 }' /proc/lockdep_stats)"
echo UML-DMESG-BEGIN
dmesg
echo UML-DMESG-END
"""

pytestmark = pytest.mark.skipif(os.environ.get("NIC_UML_DEBUG") != "1",
                                reason="the KASAN/lockdep UML guest is slow: make uml-debug "
                                       "(NIC_UML_DEBUG=1) runs it")


def boot(tmp, script, on_sync=None, opts=""):
    g = uml_guest.Guest(tmp, script.replace("@SIZE@", str(SIZE)).replace("@ITER@",
                                                                        str(ITERATIONS)),
                        on_sync=on_sync, opts=opts, timeout=1800, kernel="debug")
    out = g.run()
    assert "UML-END" in out, f"the guest did not finish its script:\n{out[-4000:]}"
    print(f"debug guest ({tmp.name}): boot {g.times.get('UML-BOOTED', 0):.1f} s, whole run "
          f"{g.times['exit']:.1f} s wall")
    return g, out, out[out.index("UML-DMESG-BEGIN"):out.index("UML-DMESG-END")]


@pytest.fixture(scope="module")
def kdir():
    if not uml_guest.server_path().exists():
        pytest.fail("build/sim_dw128/uml_pci_server missing: make sim W=128")
    k = uml_guest.kernel_dir("debug")
    config = (k / ".config").read_text()
    for opt in REQUIRED_CONFIG:
        assert re.search(rf"^{opt}$", config, re.M), f"{opt} not in {k}/.config"
    return k


@pytest.fixture(scope="module")
def resets(kdir, tmp_path_factory):
    cfg = uml_guest.csr_map()["nic_txq_cfg"]
    regs = (ROOT / "sw/include/nic_regs.h").read_text()
    size_off = int(re.search(r"#define NIC_CSR_NIC_TXQ_CFG_SIZE_LOG2_OFFSET (\d+)", regs)[1])
    stalls, wire = [], {}

    def stall(i):
        def fn(g):
            # nic_txq_cfg: queue 0, its size_log2 (6: tx 64; a live queue refuses another),
            # enable 0, limit 0: the hardware queue stops fetching under the driver.
            stalls.append(g.ctl(f"csrw {cfg:#x} {6 << size_off:#x}"))
            wire[f"stall_{i}"] = json.loads(g.ctl("stats")).get("eth_tx_frames", 0)
        return fn

    def after(i):
        def fn(g):
            wire[f"after_{i}"] = json.loads(g.ctl("stats")).get("eth_tx_frames", 0)
        return fn

    on_sync = {f"stall_{i}": stall(i) for i in range(1, ITERATIONS + 1)}
    on_sync.update({f"after_{i}": after(i) for i in range(1, ITERATIONS + 1)})
    g, out, dmesg = boot(tmp_path_factory.mktemp("uml_debug_resets"), START + RESETS + END,
                         on_sync)
    return out, dmesg, stalls, wire


@pytest.fixture(scope="module")
def faults(kdir, tmp_path_factory):
    g, out, dmesg = boot(tmp_path_factory.mktemp("uml_debug_faults"), START + FAULTS + END,
                         opts=FAULT_OPTS)
    return g, out, dmesg


def boot_one_fault(tmp_path_factory, name, script, sync, inject):
    """A boot whose guest script asks, at its sync point `sync`, for one fault: inject(g)'s
    replies are kept with the guest's console and dmesg."""
    replies = []
    g, out, dmesg = boot(tmp_path_factory.mktemp(name), START + script + END,
                         {sync: lambda g: replies.append(inject(g))})
    return g, out, dmesg, replies


@pytest.fixture(scope="module")
def linkdown(kdir, tmp_path_factory):
    return boot_one_fault(tmp_path_factory, "uml_debug_linkdown", LINKDOWN, "linkdown",
                          lambda g: g.ctl("linkdown"))


def drop_rx_record(g):
    """The next completion record the SoC writes is lost: `dropwr` over the ring the driver
    programmed (nic_rxe_cpl_base, nic_rxe_ring_size_log2)."""
    regs = uml_guest.csr_map()
    # A LiteX CSR of two words: the most significant first.
    base = g.csr(regs["nic_rxe_cpl_base"]) << 32 | g.csr(regs["nic_rxe_cpl_base"] + 4)
    size = 1 << g.csr(regs["nic_rxe_ring_size_log2"])
    return g.ctl(f"dropwr {base:#x} {size * 16} 1")


@pytest.fixture(scope="module")
def rxdrop(kdir, tmp_path_factory):
    return boot_one_fault(tmp_path_factory, "uml_debug_rxdrop", RXDROP, "droprx", drop_rx_record)


def check_dmesg(out, dmesg):
    """The guest's kernel messages (its console: the dmesg buffer wraps) from the module's load
    on hold no report; lockdep ran throughout."""
    assert "UML-INSMOD-OK" in out and "UML-UP" in out and "UML-G-OK" in out
    assert "UML-RMMOD-OK" in out and "UML-LSMOD 0" in out
    assert "Lock dependency validator" in out, "lockdep is not running in the guest"
    assert "UML-DEBUG-LOCKS 1" in out, "lockdep turned itself off (debug_locks 0)"
    load = out.index("nicdrv: loading out-of-tree module")
    # The kernel's own reports before the driver is loaded (UML 6.1 at init: a suspicious RCU
    # usage in lib/maple_tree.c) are shown, not failed: they are not the driver's.
    before = [ln for ln in out[:load].splitlines() if BAD.search(ln)]
    if before:
        print("reports before the driver was loaded (the kernel's):\n  " + "\n  ".join(before))
    bad = [ln for ln in out[load:].splitlines() if BAD.search(ln)]
    assert not bad, "\n".join(bad)
    # kmemleak, shown only: with KASAN on UML the module's own memory is unknown to kmemleak
    # ("Adding scan area to unknown object" at load), so what the module's data points to is
    # reported unreferenced. Leaks are checked on the plain guest (test_uml.py) and in QEMU.
    print(re.search(r"UML-KMEMLEAK \d+", out)[0], "(not checked in the debug guest)")


def traffic(out):
    lines = re.findall(r"^nictraffic: .*$", out, re.M)
    for ln in lines:
        print(ln)
    return [(ln, [int(x) for x in TRAFFIC.search(ln).groups()]) for ln in lines]


def show_driver_lines(dmesg):
    for ln in re.findall(r"^nicdrv .*$", dmesg, re.M):
        print(ln)


def one_fault_recovered(boot_run, model_stat, after):
    """A boot with one fault injected on demand: the server took the control command, the
    model counted `model_stat` once, and the last of the three traffic runs came back whole.
    Its console and dmesg."""
    g, out, dmesg, replies = boot_run
    stats = g.server_stats()
    assert replies == ["ok"], replies
    assert stats.get(model_stat) == 1, stats
    show_driver_lines(dmesg)
    runs = traffic(out)
    assert len(runs) == 3, "\n".join(r[0] for r in runs)
    sent, received, good, bad, lost = runs[-1][1]
    assert good == sent and bad == 0, f"traffic after {after}: {runs[-1][0]}"
    return out, dmesg


def test_tx_timeout_resets_under_traffic(resets):
    out, dmesg, stalls, wire = resets
    assert stalls == ["ok"] * ITERATIONS, stalls
    timeouts = re.findall(r"TX queue 0 timed out: .*", dmesg)
    dropped = re.findall(r"TX queue 0 reset: (\d+) descriptors \((\d+) frames\) never fetched",
                         dmesg)
    for ln in timeouts:
        print(ln)
    print(f"ndo_tx_timeout: {len(timeouts)}, resets (descriptors, frames dropped): {dropped}")
    assert len(timeouts) >= ITERATIONS and len(dropped) >= ITERATIONS, dmesg
    assert re.search(r"NETDEV WATCHDOG: .*transmit queue 0 timed out", dmesg), dmesg
    # The device's final index, read as it was: the queue disabled behind the driver is not
    # written again (which would reset its index to 0).
    assert "is beyond the" not in dmesg and "last writeback was lost" not in dmesg, dmesg
    for i in range(1, ITERATIONS + 1):
        flowed = wire[f"after_{i}"] - wire[f"stall_{i}"]
        print(f"iteration {i}: {flowed} frames on the wire after the stall and reset")
        assert flowed > 0, f"no frame left after reset {i}"
        assert f"UML-G-{i}-OK" in out
    assert "UML-G2-OK" in out


def test_resets_frames_not_corrupted(resets):
    out, _, _, _ = resets
    runs = traffic(out)
    assert len(runs) == 2 * ITERATIONS + 2, out[-4000:]
    for ln, (sent, received, good, bad, lost) in runs:
        assert bad == 0 and good == received and received + lost == sent, ln
    last = runs[-1][1]
    assert last[2] == last[0], f"the last run after the reopen lost frames: {runs[-1][0]}"


def test_resets_no_kasan_or_lockdep_report(resets):
    out, dmesg, _, _ = resets
    check_dmesg(out, dmesg)


def test_link_faults_no_kasan_or_lockdep_report(faults):
    g, out, dmesg = faults
    stats = g.server_stats()
    downs = stats.get("model.fault_link_downs", 0)
    runs = traffic(out)
    wrong = sum(r[1][3] for r in runs)
    print(f"link downs injected {downs}, TLPs lost {stats.get('model.fault_link_lost_tlps')}; "
          f"frames back wrong (payload write lost, record not): {wrong}")
    show_driver_lines(dmesg)
    assert downs > 0, "no link-down injected"
    # Frames flowed (a completion record lost with the link can stop the RX ring for good: only
    # a reset of the ring ends that, docs/faults.md, so the later run may get none back).
    assert len(runs) == 2 and runs[0][1][1] > 0, "\n".join(r[0] for r in runs)
    check_dmesg(out, dmesg)


def test_link_down_runs_pci_error_handlers(linkdown):
    out, dmesg = one_fault_recovered(linkdown, "model.fault_link_downs", "the recovery")
    steps = [r"PCIe link went down \(pcie_cpl_link_downs 0 -> 1\)",
             r"PCI error detected \(channel state \d+\): interface detached",
             r"slot reset: device enabled, configuration restored",
             r"PCI error recovery done: interface attached"]
    for step in steps:
        assert len(re.findall(step, dmesg)) == 1, f"not once in dmesg: {step}\n{dmesg[-3000:]}"
    assert re.search(r"^\s+drv_pci_recoveries: 1$", out, re.M), "drv_pci_recoveries is not 1"


def test_link_down_no_kasan_or_lockdep_report(linkdown):
    _, out, dmesg, _ = linkdown
    check_dmesg(out, dmesg)


def test_lost_rx_record_reset_by_watchdog(rxdrop):
    out, dmesg = one_fault_recovered(rxdrop, "model.fault_dropped_writes", "the lost record")
    assert len(re.findall(r"RX ring stalled: no completion record at", dmesg)) == 1, dmesg
    assert len(re.findall(r"RX ring reset: \d+ completion records", dmesg)) == 1, dmesg
    assert re.search(r"^\s+drv_rx_resets: 1$", out, re.M), "drv_rx_resets is not 1"


def test_lost_rx_record_no_kasan_or_lockdep_report(rxdrop):
    _, out, dmesg, _ = rxdrop
    check_dmesg(out, dmesg)
