# SPDX-License-Identifier: BSD-2-Clause
# The Linux driver against the RTL: a User-Mode Linux guest (uml_guest.py) drives the Verilator
# NIC SoC as a PCI device through virt-pci and uml_pci_server. In the guest: nicdrv probes and
# finds its register blocks; ethtool -i/-g/-G/-l/-L/-c/-C/-d; `ip link set up`; rx-usecs 0 with
# 1000 frames through the MAC loopback (the SoC's simulated PHY), then 20 and 80 with 300 each;
# ethtool -S; the interface down, the module unloaded, kmemleak scanned. On the host, at each
# sync point, the RTL's own registers read through the server (the same PCIe model, outside the
# guest) and the server's own counts (frames at the MAC's pins, MSIs per vector). Checked:
#   - ethtool -C changes the coalescer: nic_rxirq_usecs/frames read back as set;
#   - every frame comes back byte for byte (nictraffic), and the MAC pins saw exactly them;
#   - every ethtool -S counter equals its RTL register (register_map.md names it);
#   - /proc/interrupts per vector = the coalescer's nic_rxirq_irqs/nic_txirq_irqs = the MSIs the
#     server delivered, per rx-usecs step; one RX interrupt per frame at rx-usecs 0 rx-frames 1,
#     fewer than frames at 20 and 80 with rx-frames 64;
#   - rmmod clean, kmemleak reports nothing, no oops/BUG/WARNING in dmesg.
# The server offers MSI-X (the SoC's table) beside MSI, so the driver runs on MSI-X;
# test_driver_on_msi boots again with MSI-X hidden (--msix 0): the driver falls back to MSI and
# every interrupt still arrives.
# Prints the guest's boot time and the frames per wall second through the guest.
# test_pci_config_unit: the configuration space alone (test_pci_config.cpp).
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import uml_guest  # noqa: E402

ROOT = uml_guest.ROOT
FRAMES = 1000
STEP_FRAMES = 300
SIZE = 1000
BAD = re.compile(r"\bBUG\b|WARNING:|Oops|general protection|kernel panic|Kernel panic|"
                 r"refcount_t|list_del corruption|double free|unreferenced object|"
                 r"um virt-pci delay")

SCRIPT = r"""
E=ethtool
IF=eth0
irqs() { awk -v n="$IF-$1" '$NF == n { print $2 }' /proc/interrupts; }
if insmod /nicdrv.ko; then echo UML-INSMOD-OK; fi
echo "UML-NETDEVS $(ls /sys/class/net | tr '\n' ' ')"
$E -i $IF
if $E -G $IF rx 1024 tx 128; then echo UML-G-OK; fi
$E -g $IF
if $E -L $IF tx 1; then echo UML-L-OK; fi
$E -l $IF
echo "UML-REGS $($E -d $IF raw on | wc -c)"
if ip link set $IF up; then echo UML-UP; fi
sync_host before_c
if $E -C $IF rx-usecs 0 rx-frames 1; then echo UML-C0-OK; fi
$E -c $IF
sync_host usecs0_start
nictraffic $IF @FRAMES@ @SIZE@ 16 10000
echo "UML-IRQS usecs0 rx $(irqs rx) tx0 $(irqs tx0) tx1 $(irqs tx1)"
sync_host usecs0_end
for u in 20 80; do
    if $E -C $IF rx-usecs $u rx-frames 64; then echo UML-C$u-OK; fi
    sync_host usecs${u}_start
    nictraffic $IF @STEP@ @SIZE@ 32 10000
    echo "UML-IRQS usecs$u rx $(irqs rx) tx0 $(irqs tx0) tx1 $(irqs tx1)"
    sync_host usecs${u}_end
done
echo UML-STATS-BEGIN
$E -S $IF
echo UML-STATS-END
sync_host stats
cat /proc/interrupts
ip link set $IF down
if rmmod nicdrv; then echo UML-RMMOD-OK; fi
echo "UML-LSMOD $(grep -c nicdrv /proc/modules)"
if [ -e /sys/kernel/debug/kmemleak ]; then echo UML-KMEMLEAK-ON; fi
echo scan > /sys/kernel/debug/kmemleak; sleep 1; echo scan > /sys/kernel/debug/kmemleak
echo "UML-KMEMLEAK $(grep -c 'unreferenced object' /sys/kernel/debug/kmemleak)"
echo UML-DMESG-BEGIN
dmesg
echo UML-DMESG-END
"""


def ethtool_counters():
    """ethtool -S name -> (BAR0 offset, bits) from the build's register map."""
    out = {}
    regmap = (ROOT / "build/sim_dw128/register_map.md").read_text()
    row = r"^\| (0x[0-9a-f]+) \| `(\w+)` \| (\d+) \| ro \|.*\(ethtool -S (\w+(?:<i>\w*)?)\)"
    for m in re.finditer(row, regmap, re.M):
        off, bits, name = int(m.group(1), 16), int(m.group(3)), m.group(4)
        if "<i>" in name:
            # LiteX CSRs wider than 32 bits: most significant word first.
            n = bits // 32
            for i in range(n):
                out[name.replace("<i>", str(i))] = off + 4 * (n - 1 - i)
        elif bits == 32:
            out[name] = off
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    for tool in ("busybox", "ethtool", "cpio", "flex", "bison"):
        if not uml_guest.shutil.which(tool):
            pytest.fail(f"{tool} missing: run scripts/setup.sh")
    if not uml_guest.server_path().exists():
        pytest.fail("build/sim_dw128/uml_pci_server missing: make sim W=128")
    regs = uml_guest.csr_map()
    counters = ethtool_counters()
    snaps = {}

    def snap(name):
        def fn(g):
            s = {k: g.csr(regs[k]) for k in ("nic_rxirq_usecs", "nic_rxirq_frames",
                                             "nic_rxirq_irqs", "nic_txirq_irqs",
                                             "nic_txe_frames", "nic_rxe_frames")}
            if name == "stats":
                s["counters"] = {n: g.csr(off) for n, off in counters.items()}
            s["server"] = json.loads(g.ctl("stats"))
            snaps[name] = s
        return fn

    names = ["before_c", "usecs0_start", "usecs0_end", "usecs20_start", "usecs20_end",
             "usecs80_start", "usecs80_end", "stats"]
    script = (SCRIPT.replace("@FRAMES@", str(FRAMES)).replace("@STEP@", str(STEP_FRAMES))
              .replace("@SIZE@", str(SIZE)))
    g = uml_guest.Guest(tmp_path_factory.mktemp("uml"), script,
                        on_sync={n: snap(n) for n in names}, timeout=900)
    out = g.run()
    assert "UML-END" in out, f"the guest did not finish its script:\n{out[-4000:]}"
    return g, out, snaps


def test_probe_and_ethtool(run):
    g, out, snaps = run
    print(f"guest boot (UML start to init): {g.times['UML-BOOTED']:.2f} s wall")
    assert "UML-INSMOD-OK" in out
    # The server offers MSI-X beside MSI (the SoC has its table): the driver takes MSI-X.
    assert re.search(r"nicdrv 0000:00:00.0 eth0: NIC design \d+\.\d+: \d+ TX queues, "
                     r"\d+ TX vectors, MSI-X \d+ vectors", out), out
    assert re.search(r"UML-NETDEVS .*\beth0\b", out)
    assert "UML-G-OK" in out and re.search(r"^RX:\s+1024\s*$", out, re.M)
    assert "UML-L-OK" in out and re.search(r"^TX:\s+1\s*$", out, re.M)
    assert re.search(r"UML-REGS [1-9]", out)
    assert "UML-UP" in out


def test_coalescer_follows_ethtool(run):
    _, out, snaps = run
    for step, usecs, frames in (("usecs0_start", 0, 1), ("usecs20_start", 20, 64),
                                ("usecs80_start", 80, 64)):
        s = snaps[step]
        print(f"{step}: nic_rxirq_usecs {s['nic_rxirq_usecs']} nic_rxirq_frames "
              f"{s['nic_rxirq_frames']}")
        assert (s["nic_rxirq_usecs"], s["nic_rxirq_frames"]) == (usecs, frames)
    assert "UML-C20-OK" in out and "UML-C80-OK" in out


def test_frames_through_loopback(run):
    g, out, snaps = run
    lines = re.findall(r"^nictraffic: .*$", out, re.M)
    for ln in lines:
        print(ln)
    assert len(lines) == 3
    total = 0
    for ln, n in zip(lines, (FRAMES, STEP_FRAMES, STEP_FRAMES)):
        m = re.search(r"sent (\d+) received (\d+) good (\d+) bad (\d+) lost (\d+)", ln)
        assert m and [int(x) for x in m.groups()] == [n, n, n, 0, 0], ln
        total += n
    s = snaps["stats"]
    # The MAC's TX pins (counted by the server, not by the RTL) saw exactly those frames.
    assert s["server"]["eth_tx_frames"] == total
    assert s["nic_txe_frames"] == total and s["nic_rxe_frames"] == total
    fps = float(re.search(r"frames_per_s ([\d.]+)", lines[0]).group(1))
    print(f"frames per wall second through the guest ({FRAMES} x {SIZE} B, window 16): "
          f"{fps}")


def test_ethtool_counters_equal_rtl(run):
    _, out, snaps = run
    text = out[out.index("UML-STATS-BEGIN"):out.index("UML-STATS-END")]
    shown = dict((k, int(v)) for k, v in re.findall(r"^\s+(\w+): (\d+)\s*$", text, re.M))
    rtl = snaps["stats"]["counters"]
    compared = [n for n in rtl if n in shown]
    print(f"ethtool -S counters compared with their RTL registers: {len(compared)} of "
          f"{len(shown)} shown")
    assert len(compared) >= 40
    diff = {n: (shown[n], rtl[n]) for n in compared if shown[n] != rtl[n]}
    assert not diff, f"ethtool -S != RTL register: {diff}"
    assert shown["tx_frames"] == FRAMES + 2 * STEP_FRAMES


def test_interrupts_match_coalescer(run):
    _, out, snaps = run
    seen = {m.group(1): tuple(int(x) for x in m.groups()[1:])
            for m in re.finditer(r"UML-IRQS (\w+) rx (\d+) tx0 (\d+) tx1 (\d+)", out)}
    prev_proc = (0, 0, 0)
    for step, frames in (("usecs0", FRAMES), ("usecs20", STEP_FRAMES),
                         ("usecs80", STEP_FRAMES)):
        a, b = snaps[f"{step}_start"], snaps[f"{step}_end"]
        rtl_rx = b["nic_rxirq_irqs"] - a["nic_rxirq_irqs"]
        rtl_tx = b["nic_txirq_irqs"] - a["nic_txirq_irqs"]
        srv_rx = b["server"].get("msi_vec1", 0) - a["server"].get("msi_vec1", 0)
        proc = seen[step]
        proc_rx = proc[0] - prev_proc[0]
        proc_tx = proc[1] + proc[2] - prev_proc[1] - prev_proc[2]
        prev_proc = proc
        print(f"rx-usecs {step[5:]}: {frames} frames, RX interrupts /proc {proc_rx} "
              f"coalescer {rtl_rx} MSIs delivered {srv_rx}; TX /proc {proc_tx} "
              f"coalescer {rtl_tx}")
        assert proc_rx == rtl_rx == srv_rx
        assert proc_tx == rtl_tx
        assert b["server"].get("msix_delivered", 0) > a["server"].get("msix_delivered", 0)
        if step == "usecs0":
            assert rtl_rx == frames, "rx-frames 1: one RX interrupt per frame"
        else:
            assert 0 < rtl_rx < frames, "rx-frames 64 and a timer: fewer interrupts than frames"


def test_unload_clean(run):
    _, out, _ = run
    assert "UML-RMMOD-OK" in out and "UML-LSMOD 0" in out
    assert "UML-KMEMLEAK-ON" in out, "no /sys/kernel/debug/kmemleak in the guest"
    assert "UML-KMEMLEAK 0" in out, "kmemleak reported unreferenced objects"
    dmesg = out[out.index("UML-DMESG-BEGIN"):out.index("UML-DMESG-END")]
    bad = [ln for ln in dmesg.splitlines() if BAD.search(ln)]
    assert not bad, "\n".join(bad)


MSI_SCRIPT = r"""
IF=eth0
if insmod /nicdrv.ko; then echo UML-INSMOD-OK; fi
ip link set $IF up
sync_host start
nictraffic $IF 200 @SIZE@ 16 10000
awk -v n="$IF-rx" '$NF == n { print "UML-IRQS-RX", $2 }' /proc/interrupts
sync_host end
ip link set $IF down
if rmmod nicdrv; then echo UML-RMMOD-OK; fi
echo UML-DMESG-BEGIN
dmesg
echo UML-DMESG-END
"""


def test_driver_on_msi(tmp_path):
    """MSI-X hidden (--msix 0): the driver takes multiple-message MSI and every RX interrupt
    the coalescer raised reaches /proc/interrupts as an MSI, none as MSI-X."""
    if not uml_guest.server_path().exists():
        pytest.fail("build/sim_dw128/uml_pci_server missing: make sim W=128")
    regs = uml_guest.csr_map()
    snaps = {}

    def snap(name):
        def fn(g):
            snaps[name] = {"irqs": g.csr(regs["nic_rxirq_irqs"]),
                           "server": json.loads(g.ctl("stats"))}
        return fn

    g = uml_guest.Guest(tmp_path, MSI_SCRIPT.replace("@SIZE@", str(SIZE)),
                        on_sync={n: snap(n) for n in ("start", "end")}, timeout=600,
                        server_args=["--msix", "0"])
    out = g.run()
    assert "UML-END" in out, f"the guest did not finish its script:\n{out[-4000:]}"
    assert re.search(r"eth0: NIC design .* TX vectors, MSI \d+ vectors", out), out
    m = re.search(r"sent (\d+) received (\d+) good (\d+) bad (\d+) lost (\d+)", out)
    assert m and [int(x) for x in m.groups()] == [200, 200, 200, 0, 0], out[-3000:]
    proc_rx = int(re.search(r"UML-IRQS-RX (\d+)", out).group(1))
    a, b = snaps["start"], snaps["end"]
    rtl_rx = b["irqs"] - a["irqs"]
    srv_rx = b["server"].get("msi_vec1", 0) - a["server"].get("msi_vec1", 0)
    print(f"MSI: 200 frames, RX interrupts /proc {proc_rx} coalescer {rtl_rx} MSIs {srv_rx}")
    assert proc_rx == rtl_rx == srv_rx > 0
    assert b["server"].get("msix_delivered", 0) == 0
    assert "UML-RMMOD-OK" in out
    dmesg = out[out.index("UML-DMESG-BEGIN"):out.index("UML-DMESG-END")]
    bad = [ln for ln in dmesg.splitlines() if BAD.search(ln)]
    assert not bad, "\n".join(bad)


def test_pci_config_unit(tmp_path):
    """The configuration space alone (test_pci_config.cpp): BAR sizing, capabilities, MSI."""
    exe = tmp_path / "test_pci_config"
    here = Path(__file__).resolve().parent
    subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror",
                    f"-I{ROOT / 'sw/sim'}", f"-I{here}", "-o", str(exe),
                    str(here / "test_pci_config.cpp"), str(here / "pci_config.cpp")], check=True)
    r = subprocess.run([str(exe)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
