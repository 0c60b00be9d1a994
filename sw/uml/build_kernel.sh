#!/usr/bin/env bash
# build_kernel.sh: the User-Mode Linux guest kernel of the UML test (sw/uml/test_uml.py), built
# once from Debian's linux-source-6.1 with `make ARCH=um defconfig` plus sw/uml/uml.config, and
# cached under build/uml/kernel-<key>/ where <key> hashes the source package's version, the
# config fragment and this script. Prints the kernel tree's path (it holds `linux`, the UML
# binary, and is the KDIR the module is built against) on its last line. sw/uml/patches/*.patch
# are applied to the source first (multiple-message MSI in UML's virt-pci: the SoC's MSI block
# sends one MSI per vector, as the 7-series hard block's MSI capability allows).
#   sw/uml/build_kernel.sh            build if missing (a progress line per step)
#   sw/uml/build_kernel.sh debug      the debug guest: uml.config + uml_debug.config (KASAN,
#                                     lockdep, DEBUG_ATOMIC_SLEEP), cached as
#                                     build/uml/kernel-debug-<key>/ (about 3x the plain build)
# Needs linux-source-6.1, flex, bison, bc (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."
src=/usr/src/linux-source-6.1.tar.xz
[ -f "$src" ] || { echo "build_kernel: $src missing (scripts/setup.sh installs linux-source-6.1)" >&2; exit 1; }
variant=${1:-}
case "$variant" in
    "") fragments=(sw/uml/uml.config); prefix=kernel- ;;
    debug) fragments=(sw/uml/uml.config sw/uml/uml_debug.config); prefix=kernel-debug- ;;
    *) echo "build_kernel: unknown variant '$variant' (none or debug)" >&2; exit 1 ;;
esac
pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.1)
key=$( (echo "$pkgver"; cat sw/uml/uml.config sw/uml/build_kernel.sh sw/uml/patches/*.patch;
        [ -z "$variant" ] || cat sw/uml/uml_debug.config) | sha256sum | cut -c1-12)
out=build/uml/$prefix$key
if [ -x "$out/linux" ] && [ -f "$out/.done" ]; then
    echo "$out"
    exit 0
fi
jobs=$(nproc)
log=build/uml/$prefix$key.log
mkdir -p build/uml
rm -rf "$out" "$out.tmp"
mkdir -p "$out.tmp"
echo "build_kernel: UML ${variant:+$variant }kernel from linux-source-6.1 $pkgver (key $key)," \
     "about ${variant:+1}4 min on 2 cores;" \
     "log in $log" >&2
echo "build_kernel: [1/3] unpacking $src" >&2
tar -xJf "$src" -C "$out.tmp" --strip-components=1
for pf in sw/uml/patches/*.patch; do
    patch -s -d "$out.tmp" -p1 < "$pf" || { echo "build_kernel: $pf does not apply" >&2; exit 1; }
done
echo "build_kernel: [2/3] config: ARCH=um defconfig + ${fragments[*]}" >&2
(cd "$out.tmp" && make ARCH=um defconfig && \
 scripts/kconfig/merge_config.sh -m .config "${fragments[@]/#/../../../}" && \
 make ARCH=um olddefconfig) > "$log" 2>&1 || { tail -30 "$log" >&2; exit 1; }
# Every option of the fragment must have survived olddefconfig (a missing dependency drops one).
while IFS= read -r line; do
    case "$line" in CONFIG_*=n) opt=${line%%=*}
        ! grep -q "^$opt=" "$out.tmp/.config" || { echo "build_kernel: $opt still set" >&2; exit 1; } ;;
    CONFIG_*) grep -qx "$line" "$out.tmp/.config" \
        || { echo "build_kernel: $line not in the final .config" >&2; exit 1; } ;;
    esac
done < <(cat "${fragments[@]}")
echo "build_kernel: [3/3] make ARCH=um -j$jobs (nice): linux, Module.symvers" >&2
(cd "$out.tmp" && nice make ARCH=um -j"$jobs") >> "$log" 2>&1 \
    || { tail -30 "$log" >&2; exit 1; }
touch "$out.tmp/.done"
mv "$out.tmp" "$out"
echo "$out"
