#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# vfio_bringup.sh: after `make flash`, makes a board's NIC usable by the host tools through
# VFIO (docs/boards.md, "Bring-up on a PCIe board"): finds the NIC on the PCI bus (10ee:7024),
# removed and rescanned so the kernel reads the new bitstream's BARs, checks its IOMMU group,
# binds it to vfio-pci and runs `build/host/nicbench --backend vfio info` on it. Needs root.
#
# Usage: sudo scripts/vfio_bringup.sh [DDDD:BB:DD.F]
#   with no address: the one 10ee:7024 device after a rescan (more than one: name it).
# Exit status: 0 bound (and nicbench info passed when build/host/nicbench is built), 1 otherwise,
# with what to do next.
set -euo pipefail
cd "$(dirname "$0")/.."

ID_VENDOR=0x10ee
ID_DEVICE=0x7024
PCI=/sys/bus/pci
die() { echo "vfio_bringup: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "needs root (sysfs writes, vfio-pci binding): sudo $0 $*"

find_nics() {
    for d in "$PCI"/devices/*; do
        [ "$(cat "$d/vendor")" = "$ID_VENDOR" ] && [ "$(cat "$d/device")" = "$ID_DEVICE" ] \
            && basename "$d"
    done
    return 0
}

dev=${1:-}
# A device from before the load has the old bitstream's BARs: remove it, then rescan.
for d in ${dev:-$(find_nics)}; do
    [ -e "$PCI/devices/$d" ] && echo 1 > "$PCI/devices/$d/remove"
done
echo 1 > "$PCI/rescan"
if [ -z "$dev" ]; then
    nics=$(find_nics)
    [ -n "$nics" ] || die "no ${ID_VENDOR#0x}:${ID_DEVICE#0x} device after a rescan. Is the bitstream \
loaded (make flash)? Some hosts train the link only at power-on: write the flash (make flash \
FLASH=1) and power-cycle the host."
    [ "$(echo "$nics" | wc -l)" -eq 1 ] || die "several NICs: name one of: $(echo $nics)"
    dev=$nics
fi
[ -e "$PCI/devices/$dev" ] || die "no PCI device $dev after a rescan (lspci -D)"
echo "vfio_bringup: NIC at $dev"
command -v lspci > /dev/null && lspci -s "$dev" -vv 2>/dev/null | grep -E "LnkSta:|Region 0" || true

if [ ! -e "$PCI/devices/$dev/iommu_group" ]; then
    die "$dev has no IOMMU group: boot with intel_iommu=on (or amd_iommu=on) iommu=pt for VFIO. \
Without it nicbench uses sysfs mode (--opts dev=$dev,mode=sysfs: no interrupts, DMA memory from \
huge pages: echo 64 > /proc/sys/vm/nr_hugepages)."
fi
group=$(basename "$(readlink "$PCI/devices/$dev/iommu_group")")

modprobe vfio-pci
if [ -e "$PCI/devices/$dev/driver" ]; then
    drv=$(basename "$(readlink "$PCI/devices/$dev/driver")")
    [ "$drv" = vfio-pci ] || echo "$dev" > "$PCI/devices/$dev/driver/unbind"
fi
echo vfio-pci > "$PCI/devices/$dev/driver_override"
echo "$dev" > "$PCI/drivers_probe"
[ -e "/dev/vfio/$group" ] || die "/dev/vfio/$group missing after binding: every device of \
IOMMU group $group must be bound to vfio-pci (ls /sys/kernel/iommu_groups/$group/devices)"
echo "vfio_bringup: $dev bound to vfio-pci, IOMMU group $group (/dev/vfio/$group)"

if [ -x build/host/nicbench ]; then
    build/host/nicbench --backend vfio --opts "dev=$dev" info
else
    echo "vfio_bringup: make tools, then: build/host/nicbench --backend vfio --opts dev=$dev info"
fi
