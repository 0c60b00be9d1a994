// SPDX-License-Identifier: BSD-2-Clause
/*
 * test_backend_vfio.c: unit test of the hardware backend (backend_vfio.c) without a board: its
 * option parsing, config-space handling (Command register, the PCIe capability's MPS, MRRS,
 * link speed and width), BAR0 mapping and bounds, and the messages of its fallbacks and
 * refusals, against a directory laid out like sysfs (the backend's root= option): a device
 * directory with a config file (a config space image) and resource0 (a BAR0 image, mmap'd as
 * the kernel's resource file is). VFIO's ioctls need the kernel: only the reasons the backend
 * gives for not using VFIO are checked. Usage: test_backend_vfio DIR (empty, writable). Prints
 * "ok" or the failed checks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/pci_regs.h>

#include "nic_backend.h"

#define DEV "0000:01:00.0"
#define BAR0_SIZE (1u << 20)
#define PM_CAP 0x40
#define EXP_CAP 0x60

static int failures;
#define CHECK(cond)                                                                             \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            printf("%s:%d: %s\n", __FILE__, __LINE__, #cond);                                   \
            failures++;                                                                         \
        }                                                                                       \
    } while (0)
#define CHECK_HAS(str, sub)                                                                     \
    do {                                                                                        \
        const char *s_ = (str);                                                                 \
        if (!s_ || !strstr(s_, (sub))) {                                                        \
            printf("%s:%d: '%s' does not contain '%s'\n", __FILE__, __LINE__,                   \
                   s_ ? s_ : "(null)", (sub));                                                  \
            failures++;                                                                         \
        }                                                                                       \
    } while (0)

static char root[PATH_MAX], devdir[PATH_MAX + 64], path[PATH_MAX + 128];

static void mkdirs(const char *p)
{
    char buf[PATH_MAX + 128];
    snprintf(buf, sizeof buf, "%s", p);
    for (char *s = buf + 1; *s; s++) {
        if (*s == '/') {
            *s = 0;
            mkdir(buf, 0755);
            *s = '/';
        }
    }
    mkdir(buf, 0755);
}

static void put16(uint8_t *cfg, unsigned off, uint16_t v)
{
    cfg[off] = (uint8_t)v;
    cfg[off + 1] = (uint8_t)(v >> 8);
}

static uint16_t file16(const char *name, unsigned off)
{
    uint8_t b[2] = {0xff, 0xff};
    snprintf(path, sizeof path, "%s/%s", devdir, name);
    const int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        if (pread(fd, b, 2, off) != 2)
            b[0] = b[1] = 0xff;
        close(fd);
    }
    return (uint16_t)(b[0] | (b[1] << 8));
}

static uint32_t file32(const char *name, unsigned off)
{
    uint32_t v = 0xffffffffu;
    snprintf(path, sizeof path, "%s/%s", devdir, name);
    const int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        if (pread(fd, &v, 4, off) != 4)
            v = 0xffffffffu;
        close(fd);
    }
    return v;
}

/* The device: config space of a PCIe endpoint (10ee:7024, a PM capability, then the PCIe
 * capability with MPS 256, MRRS 512, link 5 GT/s x4 unless with_exp is false) and a 1 MiB BAR0
 * with two known words. */
static void make_device(bool with_exp)
{
    mkdirs(devdir);
    uint8_t cfg[4096] = {0};
    put16(cfg, PCI_VENDOR_ID, 0x10ee);
    put16(cfg, PCI_DEVICE_ID, 0x7024);
    put16(cfg, PCI_COMMAND, 0);
    if (with_exp) {
        put16(cfg, PCI_STATUS, PCI_STATUS_CAP_LIST);
        cfg[PCI_CAPABILITY_LIST] = PM_CAP;
        cfg[PM_CAP] = PCI_CAP_ID_PM;
        cfg[PM_CAP + 1] = EXP_CAP;
        cfg[EXP_CAP] = PCI_CAP_ID_EXP;
        cfg[EXP_CAP + 1] = 0;
        /* MPS field 1 (256 B), MRRS field 2 (512 B). */
        put16(cfg, EXP_CAP + PCI_EXP_DEVCTL, (1 << 5) | (2 << 12));
        put16(cfg, EXP_CAP + PCI_EXP_LNKSTA, (4 << PCI_EXP_LNKSTA_NLW_SHIFT) | 2);
    }
    snprintf(path, sizeof path, "%s/config", devdir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && write(fd, cfg, sizeof cfg) == (ssize_t)sizeof cfg);
    close(fd);
    snprintf(path, sizeof path, "%s/resource0", devdir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0 && ftruncate(fd, BAR0_SIZE) == 0);
    const uint32_t w0 = 0x4e494330u, w1 = 0x00010002u;
    CHECK(pwrite(fd, &w0, 4, 0) == 4 && pwrite(fd, &w1, 4, 4) == 4);
    close(fd);
}

static struct nic_backend *open_dev(const char *extra, char *err, size_t errlen)
{
    char opts[PATH_MAX + 256];
    snprintf(opts, sizeof opts, "dev=01:00.0,root=%s%s%s", root, extra[0] ? "," : "", extra);
    return nic_backend_vfio_open(opts, err, errlen);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    snprintf(root, sizeof root, "%s", argv[1]);
    snprintf(devdir, sizeof devdir, "%s/sys/bus/pci/devices/" DEV, root);
    char err[2048];

    /* No such device; bad options. */
    CHECK(!open_dev("", err, sizeof err));
    CHECK_HAS(err, "no PCI device " DEV);
    CHECK(!nic_backend_vfio_open("dev=01:00.0,colour=blue", err, sizeof err));
    CHECK_HAS(err, "unknown option 'colour' (known: dev, mode, root)");
    CHECK(!nic_backend_vfio_open("dev=01:00.0,mode=fast", err, sizeof err));
    CHECK_HAS(err, "bad mode 'fast'");
    CHECK(!nic_backend_vfio_open("dev=../../etc", err, sizeof err));
    CHECK_HAS(err, "bad dev '../../etc'");

    make_device(true);

    /* mode=vfio without an IOMMU group: refused, saying why. */
    CHECK(!open_dev("mode=vfio", err, sizeof err));
    CHECK_HAS(err, "mode=vfio: ");
    CHECK_HAS(err, DEV "/iommu_group: No such file or directory (IOMMU off?");

    /* An IOMMU group but no VFIO device nodes: the reason names <root>/dev/vfio/vfio. */
    snprintf(path, sizeof path, "%s/iommu_group", devdir);
    CHECK(symlink("../../../../kernel/iommu_groups/7", path) == 0);
    CHECK(!open_dev("mode=vfio", err, sizeof err));
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s/dev/vfio/vfio: No such file or directory (modprobe vfio-pci)",
             root);
    CHECK_HAS(err, want);

    /* mode=auto falls back to sysfs and says why in its parameters. */
    struct nic_backend *b = open_dev("", err, sizeof err);
    CHECK(b != NULL);
    if (b) {
        const char *p = b->ops->params_json(b);
        CHECK_HAS(p, "\"mode\":\"sysfs\"");
        CHECK_HAS(p, "modprobe vfio-pci");
        b->ops->close(b);
    }

    /* mode=sysfs: config space and BAR0. */
    b = open_dev("mode=sysfs", err, sizeof err);
    CHECK(b != NULL);
    if (!b) {
        printf("open: %s\n", err);
        return 1;
    }
    const char *p = b->ops->params_json(b);
    CHECK_HAS(p, "\"device\":\"" DEV "\"");
    CHECK_HAS(p, "\"bar0_size\":1048576");
    CHECK_HAS(p, "\"mps\":256,\"mrrs\":512,\"link_gen\":2,\"link_speed_gts\":5.0,"
                 "\"link_width\":4");
    CHECK_HAS(p, "\"msi_vectors\":0");
    /* Memory Space and Bus Master Enable set in the Command register. */
    CHECK(file16("config", PCI_COMMAND) == (PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER));
    /* BAR0 reads and writes go to resource0. */
    CHECK(b->ops->read32(b, 0) == 0x4e494330u);
    CHECK(b->ops->read64(b, 0) == 0x000100024e494330ull);
    b->ops->write32(b, 0x1000, 0xa5a5f00du);
    b->ops->write64(b, BAR0_SIZE - 8, 0x1122334455667788ull);
    CHECK(file32("resource0", 0x1000) == 0xa5a5f00du);
    CHECK(file32("resource0", BAR0_SIZE - 8) == 0x55667788u);
    CHECK(file32("resource0", BAR0_SIZE - 4) == 0x11223344u);
    CHECK(b->ops->last_error(b) == NULL);
    /* Outside BAR0 or unaligned: refused with a message, nothing written. */
    CHECK(b->ops->read32(b, BAR0_SIZE) == 0xffffffffu);
    CHECK_HAS(b->ops->last_error(b), "outside BAR0 (1048576 bytes) or unaligned");
    b->ops->write32(b, 0x1002, 0);
    CHECK(file32("resource0", 0x1000) == 0xa5a5f00du);
    /* No interrupts in sysfs mode. */
    unsigned vec;
    CHECK(b->ops->irq_wait(b, 1000, &vec) == -1);
    CHECK_HAS(b->ops->last_error(b), "sysfs mode has no interrupts");
    b->ops->close(b);
    /* Closing clears Bus Master Enable (the device's DMA stops), Memory Space stays. */
    CHECK(file16("config", PCI_COMMAND) == PCI_COMMAND_MEMORY);

    /* A config space without a PCIe capability: the link figures are 0, the rest works. */
    make_device(false);
    b = open_dev("mode=sysfs", err, sizeof err);
    CHECK(b != NULL);
    if (b) {
        CHECK_HAS(b->ops->params_json(b), "\"mps\":0,\"mrrs\":0,\"link_gen\":0");
        b->ops->close(b);
    }

    /* A device bound to a driver: sysfs mode refuses it and says how to unbind. */
    snprintf(path, sizeof path, "%s/driver", devdir);
    CHECK(symlink("../../../../bus/pci/drivers/nicdrv", path) == 0);
    CHECK(!open_dev("mode=sysfs", err, sizeof err));
    CHECK_HAS(err, "is bound to driver 'nicdrv'; unbind it first");

    if (failures)
        return 1;
    printf("ok\n");
    return 0;
}
