# SPDX-License-Identifier: BSD-2-Clause
"""The User-Mode Linux guest that drives the Verilator NIC as a PCI device.

Builds (cached under build/uml/, keyed by their inputs, with a progress line each):
  kernel_dir()   the UML kernel (sw/uml/build_kernel.sh); kernel_dir("debug") the debug one
                 (KASAN, lockdep: sw/uml/uml_debug.config), whose guest is guest-debug-<key>
  guest_dir()    nicdrv.ko for ARCH=um from sw/{kernel,core,include} (W=1, no warnings
                 allowed), the traffic tool sw/uml/guest/nictraffic.c (static), and an
                 initramfs (busybox-static, Debian's ethtool and its libraries, both of those)
Runs:
  Guest(script, ...)  starts build/sim_dw<W>/uml_pci_server on a vhost-user socket, boots the
                 UML kernel with the initramfs and that socket (virtio_uml.device=SOCK:1234),
                 runs `script` (sh) in the guest from a hostfs folder and collects the console.
                 The script can stop at `sync NAME` until the host calls back: on_sync[NAME]
                 runs with the Guest (e.g. reads CSRs through the server's control socket).
"""
import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEVICE_ID = 1234                    # CONFIG_UML_PCI_OVER_VIRTIO_DEVICE_ID (uml.config)
# The guest's processes keep glibc off its AVX-512 (EVEX) string functions: under UML 6.1 their
# zmm/mask register state is not kept (on this project's hosts static busybox dies in its TLS
# set-up and printf prints its format), the SSE/AVX2 ones work. An environment variable on the
# kernel command line is init's, and so every process's.
GLIBC_TUNABLES = "GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F,-AVX512VL"

INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /host
echo "UML-BOOTED $(cut -d' ' -f1 /proc/uptime)"
if mount -t hostfs none /host -o "$umltest"; then
    sh /host/run.sh
else
    echo "UML-NO-HOSTFS $umltest"
fi
echo UML-END
poweroff -f
"""

SYNC_FN = r"""sync_host() {
    echo "UML-SYNC $1"
    while [ ! -e /host/sync_$1 ]; do usleep 100000; done
}
"""


def _hash(paths, extra=""):
    h = hashlib.sha256(extra.encode())
    for p in paths:
        for f in sorted(Path(p).rglob("*")) if Path(p).is_dir() else [Path(p)]:
            if f.is_file() and not re.search(r"\.(o|ko|mod|cmd)$|\.mod\.c$", f.name):
                h.update(str(f.relative_to(ROOT) if f.is_relative_to(ROOT) else f).encode())
                h.update(f.read_bytes())
    return h.hexdigest()[:12]


@contextlib.contextmanager
def _build_lock():
    """One build at a time (the bench runs guests in parallel)."""
    (ROOT / "build/uml").mkdir(parents=True, exist_ok=True)
    with open(ROOT / "build/uml/.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def kernel_dir(variant=""):
    with _build_lock():
        return _kernel_dir(variant)


def _kernel_dir(variant=""):
    r = subprocess.run([str(ROOT / "sw/uml/build_kernel.sh")] + ([variant] if variant else []),
                       stdout=subprocess.PIPE, text=True, timeout=3600)
    if r.returncode:
        raise RuntimeError("the UML kernel build failed (see build/uml/kernel-*.log)")
    return ROOT / r.stdout.strip().splitlines()[-1]


def guest_dir(kdir=None):
    """build/uml/guest-<key>/ with nicdrv.ko, nictraffic and initramfs.cpio."""
    kdir = kdir or kernel_dir()
    with _build_lock():
        return _guest_dir(kdir)


def _guest_dir(kdir):
    busybox = shutil.which("busybox") or "/bin/busybox"
    ethtool = shutil.which("ethtool") or "/usr/sbin/ethtool"
    key = _hash([ROOT / "sw/kernel", ROOT / "sw/core", ROOT / "sw/include",
                 ROOT / "sw/uml/guest", Path(__file__), Path(busybox), Path(ethtool)],
                extra=kdir.name)
    prefix = "guest-debug-" if kdir.name.startswith("kernel-debug-") else "guest-"
    out = ROOT / "build/uml" / f"{prefix}{key}"
    if (out / "initramfs.cpio").exists():
        return out
    print(f"uml guest: building nicdrv.ko (ARCH=um), nictraffic and the initramfs into {out}",
          file=sys.stderr, flush=True)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    src = tmp / "src"
    for d in ("kernel", "core", "include"):
        shutil.copytree(ROOT / "sw" / d, src / "sw" / d,
                        ignore=shutil.ignore_patterns("*.o", "*.ko", ".*.cmd", "*.mod*",
                                                      "test_*"))
    r = subprocess.run(["nice", "make", "-C", str(kdir), f"M={src / 'sw/kernel'}", "ARCH=um",
                        "W=1", "modules"], capture_output=True, text=True, timeout=900)
    log = r.stdout + r.stderr
    warnings = [ln for ln in log.splitlines() if re.search(r"\b(warning|error):", ln)]
    if r.returncode or warnings:
        raise RuntimeError("nicdrv.ko for ARCH=um:\n" + log)
    root = tmp / "initramfs"
    for d in ("bin", "proc", "sys", "dev", "tmp", "host"):
        (root / d).mkdir(parents=True)
    shutil.copy(busybox, root / "bin/busybox")
    shutil.copy(src / "sw/kernel/nicdrv.ko", root / "nicdrv.ko")
    shutil.copy(src / "sw/kernel/nicdrv.ko", tmp / "nicdrv.ko")
    subprocess.run(["gcc", "-static", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
                    str(root / "bin/nictraffic"), str(ROOT / "sw/uml/guest/nictraffic.c")],
                   check=True)
    copy_with_libs(ethtool, root)
    (root / "init").write_text(INIT)
    (root / "init").chmod(0o755)
    files = subprocess.run(["find", "."], cwd=root, capture_output=True, text=True,
                           check=True).stdout
    cpio = subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root,
                          input=files.encode(), capture_output=True, check=True).stdout
    (tmp / "initramfs.cpio").write_bytes(cpio)
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    for old in out.parent.glob(prefix + "*"):   # earlier inputs' builds of this kernel kind
        if old != out and (prefix != "guest-" or not old.name.startswith("guest-debug-")):
            shutil.rmtree(old, ignore_errors=True)
    return out


def copy_with_libs(binary, root, dst=None):
    """binary (at dst, or its own path) and the shared libraries ldd lists under root."""
    libs = re.findall(r"(/\S+\.so[.\d]*)", subprocess.run(
        ["ldd", binary], capture_output=True, text=True, check=True).stdout)
    for src, rel in [(binary, dst or binary.lstrip("/"))] + [(p, p.lstrip("/")) for p in libs]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(src, root / rel)


def server_path(width=128):
    return ROOT / "build" / f"sim_dw{width}" / "uml_pci_server"


def inputs_digest(width=128):
    """A digest of what a guest run depends on besides its script: the server binary (the
    Verilated SoC, the host model) and the kernel's and guest's sources."""
    uml = ROOT / "sw/uml"
    return _hash([server_path(width), ROOT / "sw/kernel", ROOT / "sw/core", ROOT / "sw/include",
                  uml / "guest", uml / "patches", uml / "uml.config", uml / "build_kernel.sh",
                  Path(__file__)])


class Guest:
    """One boot of the guest against the server; run() returns the console text."""

    def __init__(self, workdir, script, on_sync=None, opts="", mem="256M", timeout=600,
                 width=128, server_args=(), kernel=""):
        self.dir = Path(workdir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.script = script
        self.on_sync = on_sync or {}
        self.opts = opts
        self.mem = mem
        self.timeout = timeout
        self.width = width
        self.server_args = list(server_args)
        self.kernel = kernel        # build_kernel.sh's variant: "" or "debug"
        self.sock = self.dir / "vhost.sock"
        self.ctl_path = self.dir / "ctl.sock"
        self.stats_path = self.dir / "server_stats.json"
        self.lines = []
        self.times = {}             # marker -> wall seconds from the UML start
        self._ctl = None

    def ctl(self, cmd):
        """One control command to the server (csr OFF | stats); its answer line."""
        if self._ctl is None:
            self._ctl = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._ctl.connect(str(self.ctl_path))
            self._ctl.settimeout(30)
            self._buf = b""
        self._ctl.sendall(cmd.encode() + b"\n")
        while b"\n" not in self._buf:
            chunk = self._ctl.recv(65536)
            if not chunk:
                raise RuntimeError("the server closed its control socket")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def csr(self, off):
        v = self.ctl(f"csr {off:#x}")
        if not v.startswith("0x"):
            raise RuntimeError(f"csr {off:#x}: {v}")
        return int(v, 16)

    def run(self):
        kdir = kernel_dir(self.kernel)
        gdir = guest_dir(kdir)
        (self.dir / "run.sh").write_text(SYNC_FN + self.script)
        for f in self.dir.glob("sync_*"):
            f.unlink()
        server_log = open(self.dir / "server.log", "w")
        server = subprocess.Popen(
            [str(server_path(self.width)), "--socket", str(self.sock), "--ctl",
             str(self.ctl_path), "--stats", str(self.stats_path)]
            + (["--opts", self.opts] if self.opts else []) + self.server_args,
            stdout=server_log, stderr=subprocess.STDOUT)
        uml = None
        try:
            t_end = time.monotonic() + 30
            while not (self.sock.exists() and self.ctl_path.exists()):
                if server.poll() is not None or time.monotonic() > t_end:
                    raise RuntimeError("uml_pci_server did not start:\n"
                                       + (self.dir / "server.log").read_text())
                time.sleep(0.05)
            env = dict(os.environ, TMPDIR=str(self.dir))
            t0 = time.monotonic()
            uml = subprocess.Popen(
                [str(kdir / "linux"), f"mem={self.mem}", f"initrd={gdir / 'initramfs.cpio'}",
                 f"virtio_uml.device={self.sock}:{DEVICE_ID}", "con=null", "con0=null,fd:1",
                 "ssl=null", f"umltest={self.dir}", "panic=-1", GLIBC_TUNABLES],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=env)
            watchdog = threading.Timer(self.timeout, uml.kill)
            watchdog.start()
            # A server that dies leaves the guest waiting on every BAR access: end it too.
            threading.Thread(target=lambda: server.wait() is not None and uml.poll() is None
                             and uml.kill(), daemon=True).start()
            try:
                for raw in uml.stdout:
                    line = raw.decode(errors="replace").rstrip("\r\n")
                    self.lines.append(line)
                    m = re.match(r"(UML-[A-Z-]+)", line)
                    if m and m.group(1) not in self.times:
                        self.times[m.group(1)] = time.monotonic() - t0
                    m = re.match(r"UML-SYNC (\S+)", line)
                    if m:
                        fn = self.on_sync.get(m.group(1))
                        try:
                            if fn:
                                fn(self)
                        finally:
                            (self.dir / f"sync_{m.group(1)}").touch()
                uml.wait()
            finally:
                watchdog.cancel()
            self.times["exit"] = time.monotonic() - t0
        finally:
            if uml and uml.poll() is None:
                uml.kill()
                uml.wait()
            if self._ctl:
                self._ctl.close()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.terminate()
                server.wait()
            server_log.close()
        (self.dir / "console.log").write_text("\n".join(self.lines) + "\n")
        return "\n".join(self.lines)

    def server_stats(self):
        import json
        return json.loads(self.stats_path.read_text())


def csr_map(width=128):
    """LiteX's CSR table of the build: name -> BAR0 offset."""
    regs = {}
    for line in (ROOT / "build" / f"sim_dw{width}" / "csr.csv").read_text().splitlines():
        f = line.split(",")
        if len(f) >= 3 and f[0] == "csr_register":
            regs[f[1]] = int(f[2], 16)
    return regs


if __name__ == "__main__":
    # The builds alone (make test runs this first, so their progress lines are seen).
    print(guest_dir(kernel_dir()))
