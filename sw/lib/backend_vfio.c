// SPDX-License-Identifier: BSD-2-Clause
/*
 * backend_vfio.c: the hardware backend of the host library (nic_backend.h), as ixy's: a board
 * through VFIO, or through sysfs when VFIO is not available.
 *
 * Interface: nic_backend_vfio_open(opts), reached by nic_backend_open("vfio", ...). Options
 * (comma-separated key=value):
 *   dev=DDDD:BB:DD.F      the board's PCI address (required; "BB:DD.F" means domain 0000)
 *   mode=auto|vfio|sysfs  auto (default): VFIO, else the sysfs fallback; vfio/sysfs: only that
 *   root=DIR              look for sys/bus/pci/devices/ and dev/vfio/ under DIR instead of /
 *                         (a directory laid out like sysfs: the tests' stand-in for a board,
 *                         sw/lib/test_backend_vfio.py)
 * VFIO (open_vfio, setup_msi): BAR0 mmap'd, DMA memory at IOVAs, one MSI eventfd per vector.
 * sysfs (open_sysfs): BAR0 from resource0, DMA memory from huge pages at their physical
 * addresses (vf_dma_alloc), no interrupts.
 *
 * Time is CLOCK_MONOTONIC; idle() spins; counter() knows no counters (-1). params_json() gives
 * the device, mode, MPS, MRRS, link speed and width. Every failure of open returns NULL with
 * the path or ioctl and errno; later failures are kept for last_error().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/pci_regs.h>
#include <linux/vfio.h>

#include "nic_backend.h"
#include "nic_rb.h"

#define SYSFS_PCI "/sys/bus/pci/devices"
#define DEV_VFIO "/dev/vfio"
#define ROOT_MAX 256                /* root= length limit */
/* IOVAs start here, clear of the low legacy ranges some platforms reserve. */
#define IOVA_BASE 0x10000000ull
#define MAX_IOVA_RANGES 16
#define VF_MAX_MSI 32               /* MSI allows 1..32 vectors */

struct dma_region {
    struct dma_region *next;
    void *va;
    size_t len;                     /* mapped length (page multiple) */
    uint64_t bus;                   /* IOVA (vfio) or physical address (sysfs) */
    bool huge;
};

struct vfio_backend {
    struct nic_backend base;        /* first: the tools see only this */
    char dev[32];
    char sysfs[ROOT_MAX + 32];      /* <root>/sys/bus/pci/devices */
    char devvfio[ROOT_MAX + 16];    /* <root>/dev/vfio */
    bool use_vfio;                  /* false: sysfs fallback */
    char vfio_reason[1024];          /* why VFIO is not used (sysfs mode) */
    int container, group, device;   /* VFIO fds, -1 when unused */
    int group_id;
    uint64_t cfg_offset;            /* VFIO config region offset in the device fd */
    int cfg_fd;                     /* sysfs: .../config */
    int res_fd;                     /* sysfs: .../resource0 */
    volatile uint8_t *bar0;
    size_t bar0_size;
    bool bme_set;                   /* we set Bus Master Enable: clear it on close */
    int irq_fd[VF_MAX_MSI];         /* MSI eventfd per vector */
    unsigned nirq;                  /* vectors set up, 0 when none */
    char irq_reason[1200];
    /* PCIe capability: negotiated values. */
    int mps, mrrs, link_gen, link_width;
    /* DMA memory. */
    struct dma_region *regions;
    size_t huge_page;               /* default huge page size, 0 when unknown */
    struct vfio_iova_range iova[MAX_IOVA_RANGES];
    unsigned niova;
    uint64_t iova_next;
    char params[4096];
    char err[512];
    bool has_err;
};

static struct vfio_backend *vb(struct nic_backend *b) { return (struct vfio_backend *)b; }

__attribute__((format(printf, 2, 3))) static void set_err(struct vfio_backend *v, const char *fmt,
                                                          ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(v->err, sizeof v->err, fmt, ap);
    va_end(ap);
    v->has_err = true;
}

/* --- options -------------------------------------------------------------------------------- */

static int parse_opts(const char *opts, char *dev, size_t devlen, int *mode, char *root,
                      size_t rootlen, char *err, size_t errlen)
{
    /* mode: 0 auto, 1 vfio only, 2 sysfs only */
    *mode = 0;
    dev[0] = 0;
    root[0] = 0;
    const char *p = opts ? opts : "";
    while (*p) {
        const char *comma = strchr(p, ',');
        const size_t ilen = comma ? (size_t)(comma - p) : strlen(p);
        char item[ROOT_MAX + 16];
        if (ilen >= sizeof item) {
            snprintf(err, errlen, "vfio backend: option too long: '%.*s'", (int)ilen, p);
            return -1;
        }
        memcpy(item, p, ilen);
        item[ilen] = 0;
        char *eq = strchr(item, '=');
        if (ilen > 0) {
            if (!eq) {
                snprintf(err, errlen, "vfio backend: option '%s' is not key=value", item);
                return -1;
            }
            *eq = 0;
            const char *val = eq + 1;
            if (strcmp(item, "dev") == 0) {
                /* Only hex digits, ':' and '.': the value becomes a sysfs path. */
                const size_t n = strlen(val);
                if (n == 0 || n + 6 > devlen || strspn(val, "0123456789abcdefABCDEF:.") != n) {
                    snprintf(err, errlen, "vfio backend: bad dev '%s' (want e.g. "
                             "dev=0000:01:00.0)", val);
                    return -1;
                }
                /* "BB:DD.F" has one ':'; add domain 0000. */
                const char *c1 = strchr(val, ':');
                if (c1 && !strchr(c1 + 1, ':'))
                    snprintf(dev, devlen, "0000:%s", val);
                else
                    snprintf(dev, devlen, "%s", val);
            } else if (strcmp(item, "mode") == 0) {
                if (strcmp(val, "auto") == 0)
                    *mode = 0;
                else if (strcmp(val, "vfio") == 0)
                    *mode = 1;
                else if (strcmp(val, "sysfs") == 0)
                    *mode = 2;
                else {
                    snprintf(err, errlen, "vfio backend: bad mode '%s' (auto, vfio or sysfs)",
                             val);
                    return -1;
                }
            } else if (strcmp(item, "root") == 0) {
                /* A directory; "/" and "" mean the real root. */
                if (strlen(val) >= rootlen) {
                    snprintf(err, errlen, "vfio backend: root '%s' is longer than %zu bytes", val,
                             rootlen - 1);
                    return -1;
                }
                snprintf(root, rootlen, "%s", strcmp(val, "/") == 0 ? "" : val);
            } else {
                snprintf(err, errlen, "vfio backend: unknown option '%s' (known: dev, mode, "
                         "root)", item);
                return -1;
            }
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    if (!dev[0]) {
        snprintf(err, errlen, "vfio backend: no device: give --opts dev=0000:01:00.0");
        return -1;
    }
    return 0;
}

/* --- config space (VFIO config region or sysfs config file) ---------------------------------- */

static int cfg_read(struct vfio_backend *v, unsigned off, void *buf, size_t len)
{
    const int fd = v->use_vfio ? v->device : v->cfg_fd;
    const off_t base = v->use_vfio ? (off_t)v->cfg_offset : 0;
    const ssize_t n = pread(fd, buf, len, base + (off_t)off);
    if (n != (ssize_t)len) {
        if (n >= 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

static int cfg_write(struct vfio_backend *v, unsigned off, const void *buf, size_t len)
{
    const int fd = v->use_vfio ? v->device : v->cfg_fd;
    const off_t base = v->use_vfio ? (off_t)v->cfg_offset : 0;
    const ssize_t n = pwrite(fd, buf, len, base + (off_t)off);
    if (n != (ssize_t)len) {
        if (n >= 0)
            errno = EIO;
        return -1;
    }
    return 0;
}

static int cfg_read16(struct vfio_backend *v, unsigned off, uint16_t *val)
{
    uint8_t b[2];
    if (cfg_read(v, off, b, 2) < 0)
        return -1;
    *val = (uint16_t)(b[0] | (b[1] << 8));   /* config space is little-endian */
    return 0;
}

static int cfg_write16(struct vfio_backend *v, unsigned off, uint16_t val)
{
    const uint8_t b[2] = {(uint8_t)(val & 0xff), (uint8_t)(val >> 8)};
    return cfg_write(v, off, b, 2);
}

/* Set (or clear) Memory Space and Bus Master Enable in the Command register. */
static int set_bus_master(struct vfio_backend *v, bool on, char *err, size_t errlen)
{
    uint16_t cmd;
    const char *what = v->use_vfio ? "VFIO config region" : "config";
    if (cfg_read16(v, PCI_COMMAND, &cmd) < 0) {
        snprintf(err, errlen, "vfio backend: %s %s: read PCI_COMMAND: %s", v->dev, what,
                 strerror(errno));
        return -1;
    }
    const uint16_t want = on ? (uint16_t)(cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER)
                             : (uint16_t)(cmd & ~PCI_COMMAND_MASTER);
    if (want != cmd && cfg_write16(v, PCI_COMMAND, want) < 0) {
        snprintf(err, errlen, "vfio backend: %s %s: write PCI_COMMAND %#06x: %s", v->dev, what,
                 want, strerror(errno));
        return -1;
    }
    v->bme_set = on;
    return 0;
}

/* PCIe capability: MPS/MRRS from Device Control, speed/width from Link Status. Leaves 0 when
 * the capability is not found (reported in params as 0). */
static void read_pcie_cap(struct vfio_backend *v)
{
    uint16_t status;
    uint8_t ptr;
    if (cfg_read16(v, PCI_STATUS, &status) < 0 || !(status & PCI_STATUS_CAP_LIST) ||
        cfg_read(v, PCI_CAPABILITY_LIST, &ptr, 1) < 0)
        return;
    for (int guard = 0; ptr >= 0x40 && guard < 48; guard++) {
        uint8_t hdr[2];
        if (cfg_read(v, ptr & ~3u, hdr, 2) < 0)
            return;
        if (hdr[0] == PCI_CAP_ID_EXP) {
            const unsigned cap = ptr & ~3u;
            uint16_t devctl, lnksta;
            if (cfg_read16(v, cap + PCI_EXP_DEVCTL, &devctl) == 0) {
                v->mps = 128 << ((devctl & PCI_EXP_DEVCTL_PAYLOAD) >> 5);
                v->mrrs = 128 << ((devctl & PCI_EXP_DEVCTL_READRQ) >> 12);
            }
            if (cfg_read16(v, cap + PCI_EXP_LNKSTA, &lnksta) == 0) {
                v->link_gen = lnksta & PCI_EXP_LNKSTA_CLS;
                v->link_width = (lnksta & PCI_EXP_LNKSTA_NLW) >> PCI_EXP_LNKSTA_NLW_SHIFT;
            }
            return;
        }
        ptr = hdr[1];
    }
}

/* --- huge pages ----------------------------------------------------------------------------- */

static size_t default_huge_page(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[128];
    size_t kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Hugepagesize: %zu kB", &kb) == 1)
            break;
    fclose(f);
    return kb * 1024;
}

/* --- VFIO ------------------------------------------------------------------------------------ */

/* The IOMMU's valid IOVA ranges (VFIO_IOMMU_GET_INFO capability chain), if it reports them. */
static void read_iova_ranges(struct vfio_backend *v)
{
    struct vfio_iommu_type1_info probe = {.argsz = sizeof probe};
    v->niova = 0;
    if (ioctl(v->container, VFIO_IOMMU_GET_INFO, &probe) < 0 ||
        !(probe.flags & VFIO_IOMMU_INFO_CAPS) || probe.argsz <= sizeof probe)
        return;
    struct vfio_iommu_type1_info *info = calloc(1, probe.argsz);
    if (!info)
        return;
    info->argsz = probe.argsz;
    if (ioctl(v->container, VFIO_IOMMU_GET_INFO, info) == 0 && info->cap_offset) {
        uint32_t off = info->cap_offset;
        for (int guard = 0; off && off + sizeof(struct vfio_info_cap_header) <= probe.argsz &&
                            guard < 32; guard++) {
            const struct vfio_info_cap_header *h =
                (const struct vfio_info_cap_header *)((const uint8_t *)info + off);
            if (h->id == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE) {
                const struct vfio_iommu_type1_info_cap_iova_range *r =
                    (const struct vfio_iommu_type1_info_cap_iova_range *)h;
                for (uint32_t i = 0; i < r->nr_iovas && v->niova < MAX_IOVA_RANGES; i++) {
                    if ((const uint8_t *)&r->iova_ranges[i + 1] >
                        (const uint8_t *)info + probe.argsz)
                        break;
                    v->iova[v->niova++] = r->iova_ranges[i];
                }
                break;
            }
            off = h->next;
        }
    }
    free(info);
}

/* The DMA's address width: LitePCIe's DMA channel's (pcie_dma0's parameter), the narrowest
 * DMA engine of the design; 64 when it is not there. */
static int dma_addr_width(struct vfio_backend *v)
{
    const struct nic_rb_entry *e = nic_rb_find(&v->base, NIC_RB_PCIE_DMA0);
    return e && (e->info >> 16) ? (int)(e->info >> 16) : 64;
}

/* An IOVA for len bytes aligned to align, inside a valid range and below the DMA's reach. */
static int iova_alloc(struct vfio_backend *v, size_t len, size_t align, uint64_t *iova)
{
    const int width = dma_addr_width(v);
    const uint64_t limit = width >= 64 ? UINT64_MAX : (1ull << width);
    struct vfio_iova_range fallback = {IOVA_BASE, limit - 1};
    const struct vfio_iova_range *ranges = v->niova ? v->iova : &fallback;
    const unsigned n = v->niova ? v->niova : 1;
    for (unsigned i = 0; i < n; i++) {
        uint64_t start = v->iova_next > ranges[i].start ? v->iova_next : ranges[i].start;
        if (start < IOVA_BASE)
            start = IOVA_BASE;
        start = (start + align - 1) & ~((uint64_t)align - 1);
        const uint64_t end = start + len;   /* exclusive */
        if (end - 1 <= ranges[i].end && end <= limit && end > start) {
            *iova = start;
            v->iova_next = end;
            return 0;
        }
    }
    return -1;
}

/* The VFIO path (the device bound to vfio-pci, IOMMU on): container /dev/vfio/vfio
 * (VFIO_TYPE1_IOMMU), group /dev/vfio/<n> from /sys/bus/pci/devices/<dev>/iommu_group, device
 * fd; the config-space region (Bus Master Enable, MPS/MRRS and link speed/width), BAR0 mmap'd,
 * the IOMMU's valid IOVA ranges. On a reason to fall back (no IOMMU group, no vfio-pci),
 * returns 1 with v->vfio_reason set; on a hard error -1 with err; 0 when VFIO is up. */
static int open_vfio(struct vfio_backend *v, char *err, size_t errlen)
{
    char path[ROOT_MAX + 128], link[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s/iommu_group", v->sysfs, v->dev);
    const ssize_t n = readlink(path, link, sizeof link - 1);
    if (n < 0) {
        snprintf(v->vfio_reason, sizeof v->vfio_reason,
                 "%s: %s (IOMMU off? boot with intel_iommu=on or amd_iommu=on)", path,
                 strerror(errno));
        return 1;
    }
    link[n] = 0;
    const char *slash = strrchr(link, '/');
    v->group_id = atoi(slash ? slash + 1 : link);

    snprintf(path, sizeof path, "%s/vfio", v->devvfio);
    v->container = open(path, O_RDWR | O_CLOEXEC);
    if (v->container < 0) {
        snprintf(v->vfio_reason, sizeof v->vfio_reason, "%s: %s (modprobe vfio-pci)", path,
                 strerror(errno));
        return 1;
    }
    const int api = ioctl(v->container, VFIO_GET_API_VERSION);
    if (api != VFIO_API_VERSION) {
        snprintf(v->vfio_reason, sizeof v->vfio_reason,
                 "%s: VFIO_GET_API_VERSION %d, expected %d", path, api, VFIO_API_VERSION);
        return 1;
    }
    if (ioctl(v->container, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) != 1) {
        snprintf(v->vfio_reason, sizeof v->vfio_reason,
                 "/dev/vfio/vfio: VFIO_TYPE1_IOMMU not supported");
        return 1;
    }
    snprintf(path, sizeof path, "%s/%d", v->devvfio, v->group_id);
    v->group = open(path, O_RDWR | O_CLOEXEC);
    if (v->group < 0) {
        snprintf(v->vfio_reason, sizeof v->vfio_reason,
                 "%s: %s (bind %s to vfio-pci: echo vfio-pci > " SYSFS_PCI
                 "/%s/driver_override; echo %s > /sys/bus/pci/drivers_probe; docs/boards.md: "
                 "\"Bring-up on a PCIe board\")",
                 path, strerror(errno), v->dev, v->dev, v->dev);
        return 1;
    }
    struct vfio_group_status gs = {.argsz = sizeof gs};
    if (ioctl(v->group, VFIO_GROUP_GET_STATUS, &gs) < 0) {
        snprintf(err, errlen, "vfio backend: %s: VFIO_GROUP_GET_STATUS: %s", path,
                 strerror(errno));
        return -1;
    }
    if (!(gs.flags & VFIO_GROUP_FLAGS_VIABLE)) {
        snprintf(v->vfio_reason, sizeof v->vfio_reason,
                 "%s: group not viable: every device in IOMMU group %d must be bound to "
                 "vfio-pci (ls /sys/kernel/iommu_groups/%d/devices)", path, v->group_id,
                 v->group_id);
        return 1;
    }
    if (ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container) < 0) {
        snprintf(err, errlen, "vfio backend: %s: VFIO_GROUP_SET_CONTAINER: %s", path,
                 strerror(errno));
        return -1;
    }
    if (ioctl(v->container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU) < 0) {
        snprintf(err, errlen, "vfio backend: /dev/vfio/vfio: VFIO_SET_IOMMU(TYPE1): %s",
                 strerror(errno));
        return -1;
    }
    v->device = ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, v->dev);
    if (v->device < 0) {
        snprintf(err, errlen, "vfio backend: %s: VFIO_GROUP_GET_DEVICE_FD(%s): %s", path,
                 v->dev, strerror(errno));
        return -1;
    }
    struct vfio_device_info di = {.argsz = sizeof di};
    if (ioctl(v->device, VFIO_DEVICE_GET_INFO, &di) < 0) {
        snprintf(err, errlen, "vfio backend: %s: VFIO_DEVICE_GET_INFO: %s", v->dev,
                 strerror(errno));
        return -1;
    }
    if (!(di.flags & VFIO_DEVICE_FLAGS_PCI) || di.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX) {
        snprintf(err, errlen, "vfio backend: %s: not a vfio-pci device (flags %#x, %u regions)",
                 v->dev, di.flags, di.num_regions);
        return -1;
    }

    /* Config space region: Bus Master Enable, PCIe capability. */
    struct vfio_region_info cfg = {.argsz = sizeof cfg, .index = VFIO_PCI_CONFIG_REGION_INDEX};
    if (ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, &cfg) < 0) {
        snprintf(err, errlen, "vfio backend: %s: VFIO_DEVICE_GET_REGION_INFO(config): %s",
                 v->dev, strerror(errno));
        return -1;
    }
    v->cfg_offset = cfg.offset;
    v->use_vfio = true;

    /* BAR0 region: mmap. */
    struct vfio_region_info bar = {.argsz = sizeof bar, .index = VFIO_PCI_BAR0_REGION_INDEX};
    if (ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, &bar) < 0) {
        snprintf(err, errlen, "vfio backend: %s: VFIO_DEVICE_GET_REGION_INFO(BAR0): %s", v->dev,
                 strerror(errno));
        return -1;
    }
    if (bar.size == 0 || !(bar.flags & VFIO_REGION_INFO_FLAG_MMAP)) {
        snprintf(err, errlen, "vfio backend: %s: BAR0 is %s (size %llu, flags %#x)", v->dev,
                 bar.size == 0 ? "not implemented" : "not mmap-able", (unsigned long long)bar.size,
                 bar.flags);
        return -1;
    }
    void *p = mmap(NULL, bar.size, PROT_READ | PROT_WRITE, MAP_SHARED, v->device,
                   (off_t)bar.offset);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "vfio backend: %s: mmap BAR0 (%llu bytes): %s", v->dev,
                 (unsigned long long)bar.size, strerror(errno));
        return -1;
    }
    v->bar0 = p;
    v->bar0_size = bar.size;
    read_iova_ranges(v);
    return 0;
}

/* Bind n eventfds to MSI vectors 0..n-1 (VFIO_PCI_MSI_IRQ_INDEX). */
static int set_msi_eventfds(struct vfio_backend *v, const int *fds, unsigned n)
{
    char buf[sizeof(struct vfio_irq_set) + VF_MAX_MSI * sizeof(int32_t)];
    struct vfio_irq_set *set = (struct vfio_irq_set *)buf;
    memset(buf, 0, sizeof buf);
    set->argsz = (uint32_t)(sizeof(struct vfio_irq_set) + n * sizeof(int32_t));
    set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
    set->index = VFIO_PCI_MSI_IRQ_INDEX;
    set->start = 0;
    set->count = n;
    for (unsigned i = 0; i < n; i++) {
        const int32_t efd = fds[i];
        memcpy(set->data + i * sizeof efd, &efd, sizeof efd);
    }
    return ioctl(v->device, VFIO_DEVICE_SET_IRQS, set);
}

/* MSI: an eventfd per vector, as many vectors as the device's MSI capability offers (VFIO's
 * count, at most VF_MAX_MSI); when enabling them all fails, one. With LitePCIe's
 * msi-multi-vector each MSI number is its own vector, so vf_irq_wait() reports which one fired.
 * Failure is not fatal (info and CSR work without it); it is reported by irq_wait(). */
static void setup_msi(struct vfio_backend *v)
{
    struct vfio_irq_info ii = {.argsz = sizeof ii, .index = VFIO_PCI_MSI_IRQ_INDEX};
    if (ioctl(v->device, VFIO_DEVICE_GET_IRQ_INFO, &ii) < 0) {
        snprintf(v->irq_reason, sizeof v->irq_reason, "VFIO_DEVICE_GET_IRQ_INFO(MSI): %s",
                 strerror(errno));
        return;
    }
    if (ii.count < 1 || !(ii.flags & VFIO_IRQ_INFO_EVENTFD)) {
        snprintf(v->irq_reason, sizeof v->irq_reason,
                 "device has no MSI vector usable through an eventfd (count %u, flags %#x)",
                 ii.count, ii.flags);
        return;
    }
    unsigned n = ii.count < VF_MAX_MSI ? ii.count : VF_MAX_MSI;
    int fds[VF_MAX_MSI];
    for (unsigned i = 0; i < n; i++) {
        fds[i] = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK | EFD_SEMAPHORE);
        if (fds[i] < 0) {
            snprintf(v->irq_reason, sizeof v->irq_reason, "eventfd: %s", strerror(errno));
            while (i--)
                close(fds[i]);
            return;
        }
    }
    int r = set_msi_eventfds(v, fds, n);
    if (r < 0 && n > 1) {               /* the OS may grant fewer vectors than offered */
        for (unsigned i = 1; i < n; i++)
            close(fds[i]);
        n = 1;
        r = set_msi_eventfds(v, fds, n);
    }
    if (r < 0) {
        snprintf(v->irq_reason, sizeof v->irq_reason, "VFIO_DEVICE_SET_IRQS(MSI, eventfd): %s",
                 strerror(errno));
        for (unsigned i = 0; i < n; i++)
            close(fds[i]);
        return;
    }
    memcpy(v->irq_fd, fds, n * sizeof fds[0]);
    v->nirq = n;
}

/* --- sysfs fallback -------------------------------------------------------------------------- */

/* The sysfs path (no IOMMU or no vfio-pci; needs root and no driver bound): BAR0 from
 * /sys/bus/pci/devices/<dev>/resource0, config space from .../config. No interrupts: irq_wait()
 * fails with a message saying so. 0, or -1 with err. */
static int open_sysfs(struct vfio_backend *v, char *err, size_t errlen)
{
    char path[ROOT_MAX + 128], link[PATH_MAX];
    v->use_vfio = false;
    snprintf(path, sizeof path, "%s/%s/driver", v->sysfs, v->dev);
    const ssize_t n = readlink(path, link, sizeof link - 1);
    if (n >= 0) {
        link[n] = 0;
        const char *slash = strrchr(link, '/');
        snprintf(err, errlen, "vfio backend: sysfs mode: %s is bound to driver '%s'; unbind it "
                 "first (echo %s > %s/unbind)%s%s", v->dev, slash ? slash + 1 : link, v->dev,
                 path, v->vfio_reason[0] ? "; VFIO not used: " : "", v->vfio_reason);
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s/config", v->sysfs, v->dev);
    v->cfg_fd = open(path, O_RDWR | O_CLOEXEC);
    if (v->cfg_fd < 0) {
        snprintf(err, errlen, "vfio backend: sysfs mode: %s: %s (needs root)%s%s", path,
                 strerror(errno), v->vfio_reason[0] ? "; VFIO not used: " : "", v->vfio_reason);
        return -1;
    }
    snprintf(path, sizeof path, "%s/%s/resource0", v->sysfs, v->dev);
    v->res_fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
    if (v->res_fd < 0) {
        snprintf(err, errlen, "vfio backend: sysfs mode: %s: %s%s%s", path, strerror(errno),
                 v->vfio_reason[0] ? "; VFIO not used: " : "", v->vfio_reason);
        return -1;
    }
    struct stat st;
    if (fstat(v->res_fd, &st) < 0 || st.st_size <= 0) {
        snprintf(err, errlen, "vfio backend: sysfs mode: %s: %s", path,
                 st.st_size <= 0 ? "BAR0 has size 0" : strerror(errno));
        return -1;
    }
    void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, v->res_fd, 0);
    if (p == MAP_FAILED) {
        snprintf(err, errlen, "vfio backend: sysfs mode: mmap %s (%lld bytes): %s", path,
                 (long long)st.st_size, strerror(errno));
        return -1;
    }
    v->bar0 = p;
    v->bar0_size = (size_t)st.st_size;
    snprintf(v->irq_reason, sizeof v->irq_reason,
             "sysfs mode has no interrupts (VFIO not used: %s)",
             v->vfio_reason[0] ? v->vfio_reason : "mode=sysfs");
    return 0;
}

/* Physical address of the page holding va, from /proc/self/pagemap. */
static int virt_to_phys(const void *va, uint64_t *phys, char *err, size_t errlen)
{
    const long pg = sysconf(_SC_PAGESIZE);
    const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "/proc/self/pagemap: %s", strerror(errno));
        return -1;
    }
    uint64_t entry = 0;
    const off_t off = (off_t)((uintptr_t)va / (uintptr_t)pg * sizeof entry);
    const ssize_t n = pread(fd, &entry, sizeof entry, off);
    close(fd);
    if (n != (ssize_t)sizeof entry) {
        snprintf(err, errlen, "/proc/self/pagemap: read: %s", n < 0 ? strerror(errno) : "short");
        return -1;
    }
    const uint64_t pfn = entry & ((1ull << 55) - 1);
    if (!(entry >> 63)) {
        snprintf(err, errlen, "/proc/self/pagemap: page at %p not present", va);
        return -1;
    }
    if (pfn == 0) {
        snprintf(err, errlen, "/proc/self/pagemap: PFN hidden (needs CAP_SYS_ADMIN: run as root)");
        return -1;
    }
    *phys = pfn * (uint64_t)pg + (uintptr_t)va % (uintptr_t)pg;
    return 0;
}

/* --- ops ------------------------------------------------------------------------------------- */

static bool bar_ok(struct vfio_backend *v, uint64_t off, unsigned len)
{
    if (off % len == 0 && off + len <= v->bar0_size)
        return true;
    set_err(v, "BAR0 access at %#" PRIx64 " (%u bytes) outside BAR0 (%zu bytes) or unaligned",
            off, len, v->bar0_size);
    return false;
}

static uint32_t vf_read32(struct nic_backend *b, uint64_t off)
{
    struct vfio_backend *v = vb(b);
    if (!bar_ok(v, off, 4))
        return UINT32_MAX;
    return *(volatile uint32_t *)(v->bar0 + off);
}

static void vf_write32(struct nic_backend *b, uint64_t off, uint32_t value)
{
    struct vfio_backend *v = vb(b);
    if (!bar_ok(v, off, 4))
        return;
    /* Order earlier stores to DMA memory before the doorbell (a compiler barrier on x86,
     * whose uncached MMIO stores are not reordered with earlier stores). */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    *(volatile uint32_t *)(v->bar0 + off) = value;
}

/* 64-bit accesses as two 32-bit ones, lower address first (little-endian view of BAR bytes):
 * LitePCIe's BAR0 bridge takes single-dword requests. */
static uint64_t vf_read64(struct nic_backend *b, uint64_t off)
{
    const uint64_t lo = vf_read32(b, off);
    return lo | ((uint64_t)vf_read32(b, off + 4) << 32);
}

static void vf_write64(struct nic_backend *b, uint64_t off, uint64_t value)
{
    vf_write32(b, off, (uint32_t)value);
    vf_write32(b, off + 4, (uint32_t)(value >> 32));
}

/* DMA memory: anonymous mmap, zero-filled, below 2^dma_addr_width(). VFIO: huge pages when the
 * system has them, else normal pages, mapped with VFIO_IOMMU_MAP_DMA at an IOVA from
 * iova_alloc(). sysfs: huge pages only, locked, bus address = physical address from
 * /proc/self/pagemap (the pages must be physically contiguous). */
static void *vf_dma_alloc(struct nic_backend *b, size_t size, uint64_t *bus_addr)
{
    struct vfio_backend *v = vb(b);
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    if (size == 0) {
        set_err(v, "dma_alloc: size 0");
        return NULL;
    }
    struct dma_region *r = calloc(1, sizeof *r);
    if (!r) {
        set_err(v, "dma_alloc: out of memory");
        return NULL;
    }
    void *va = MAP_FAILED;
    int huge_errno = 0;
    if (v->huge_page) {
        r->len = (size + v->huge_page - 1) / v->huge_page * v->huge_page;
        va = mmap(NULL, r->len, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
        huge_errno = errno;
        r->huge = va != MAP_FAILED;
    }
    if (va == MAP_FAILED) {
        if (!v->use_vfio) {
            /* Physical contiguity needs huge pages. */
            set_err(v, "dma_alloc(%zu): sysfs mode needs huge pages: mmap(MAP_HUGETLB): %s "
                    "(echo 64 > /proc/sys/vm/nr_hugepages)", size,
                    v->huge_page ? strerror(huge_errno) : "no Hugepagesize in /proc/meminfo");
            free(r);
            return NULL;
        }
        r->len = (size + pg - 1) / pg * pg;
        va = mmap(NULL, r->len, PROT_READ | PROT_WRITE,
                  MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
        if (va == MAP_FAILED) {
            set_err(v, "dma_alloc(%zu): mmap: %s", size, strerror(errno));
            free(r);
            return NULL;
        }
    }
    r->va = va;

    if (v->use_vfio) {
        const size_t align = r->huge ? v->huge_page : pg;
        if (iova_alloc(v, r->len, align, &r->bus) < 0) {
            set_err(v, "dma_alloc(%zu): no IOVA space below 2^%d left in the IOMMU's valid "
                    "ranges", size, dma_addr_width(v));
            goto fail;
        }
        struct vfio_iommu_type1_dma_map map = {
            .argsz = sizeof map,
            .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
            .vaddr = (uint64_t)(uintptr_t)va,
            .iova = r->bus,
            .size = r->len,
        };
        if (ioctl(v->container, VFIO_IOMMU_MAP_DMA, &map) < 0) {
            set_err(v, "dma_alloc(%zu): VFIO_IOMMU_MAP_DMA(iova %#" PRIx64 ", %zu bytes): %s "
                    "(RLIMIT_MEMLOCK too low? ulimit -l)", size, r->bus, r->len,
                    strerror(errno));
            goto fail;
        }
    } else {
        char e[256];
        if (mlock(va, r->len) < 0) {
            set_err(v, "dma_alloc(%zu): mlock: %s", size, strerror(errno));
            goto fail;
        }
        if (virt_to_phys(va, &r->bus, e, sizeof e) < 0) {
            set_err(v, "dma_alloc(%zu): %s", size, e);
            goto fail;
        }
        /* Each huge page is contiguous; the allocation is only if they follow each other. */
        for (size_t off = v->huge_page; off < r->len; off += v->huge_page) {
            uint64_t phys;
            if (virt_to_phys((uint8_t *)va + off, &phys, e, sizeof e) < 0) {
                set_err(v, "dma_alloc(%zu): %s", size, e);
                goto fail;
            }
            if (phys != r->bus + off) {
                set_err(v, "dma_alloc(%zu): sysfs mode: the huge pages are not physically "
                        "contiguous; allocate at most %zu bytes at a time", size, v->huge_page);
                goto fail;
            }
        }
        const int width = dma_addr_width(v);
        if (width < 64 && (r->bus + r->len - 1) >> width) {
            set_err(v, "dma_alloc(%zu): sysfs mode: physical address %#" PRIx64 " is above the "
                    "DMA's %d-bit reach (use VFIO, or reserve huge pages early at boot: "
                    "hugepages= on the kernel command line)", size, r->bus, width);
            goto fail;
        }
    }
    memset(va, 0, r->len);
    r->next = v->regions;
    v->regions = r;
    *bus_addr = r->bus;
    return va;

fail:
    munmap(va, r->len);
    free(r);
    return NULL;
}

static void free_region(struct vfio_backend *v, struct dma_region *r)
{
    if (v->use_vfio) {
        struct vfio_iommu_type1_dma_unmap unmap = {
            .argsz = sizeof unmap, .iova = r->bus, .size = r->len};
        if (ioctl(v->container, VFIO_IOMMU_UNMAP_DMA, &unmap) < 0)
            set_err(v, "dma_free: VFIO_IOMMU_UNMAP_DMA(iova %#" PRIx64 "): %s", r->bus,
                    strerror(errno));
    }
    munmap(r->va, r->len);
    free(r);
}

static void vf_dma_free(struct nic_backend *b, void *va, size_t size)
{
    struct vfio_backend *v = vb(b);
    (void)size;
    for (struct dma_region **pp = &v->regions; *pp; pp = &(*pp)->next) {
        if ((*pp)->va == va) {
            struct dma_region *r = *pp;
            *pp = r->next;
            free_region(v, r);
            return;
        }
    }
    set_err(v, "dma_free: %p was not allocated by dma_alloc", va);
}

static uint64_t vf_now_ns(struct nic_backend *b)
{
    (void)b;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int vf_irq_wait(struct nic_backend *b, uint64_t timeout_ns, unsigned *vector)
{
    struct vfio_backend *v = vb(b);
    if (!v->nirq) {
        set_err(v, "irq_wait: no MSI: %s", v->irq_reason);
        return -1;
    }
    const uint64_t deadline = vf_now_ns(b) + timeout_ns;
    for (;;) {
        /* EFD_SEMAPHORE: each read consumes one MSI; the lowest vector first. */
        for (unsigned i = 0; i < v->nirq; i++) {
            uint64_t count;
            if (read(v->irq_fd[i], &count, sizeof count) == (ssize_t)sizeof count) {
                if (vector)
                    *vector = i;
                return 1;
            }
            if (errno != EAGAIN && errno != EINTR) {
                set_err(v, "irq_wait: read eventfd of vector %u: %s", i, strerror(errno));
                return -1;
            }
        }
        const uint64_t now = vf_now_ns(b);
        if (now >= deadline)
            return 0;
        const uint64_t left = deadline - now;
        struct timespec ts = {.tv_sec = (time_t)(left / 1000000000ull),
                              .tv_nsec = (long)(left % 1000000000ull)};
        struct pollfd pfd[VF_MAX_MSI];
        for (unsigned i = 0; i < v->nirq; i++)
            pfd[i] = (struct pollfd){.fd = v->irq_fd[i], .events = POLLIN};
        const int r = ppoll(pfd, v->nirq, &ts, NULL);
        if (r < 0 && errno != EINTR) {
            set_err(v, "irq_wait: ppoll: %s", strerror(errno));
            return -1;
        }
    }
}

static void vf_idle(struct nic_backend *b, uint64_t ns)
{
    const uint64_t until = vf_now_ns(b) + ns;
    while (vf_now_ns(b) < until) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}

static int vf_counter(struct nic_backend *b, const char *name, uint64_t *value)
{
    (void)b;
    (void)name;
    (void)value;
    return -1;
}

static const char *vf_params_json(struct nic_backend *b) { return vb(b)->params; }

static const char *vf_last_error(struct nic_backend *b)
{
    struct vfio_backend *v = vb(b);
    return v->has_err ? v->err : NULL;
}

static void vf_close(struct nic_backend *b)
{
    struct vfio_backend *v = vb(b);
    char e[256];
    /* Stop the device's DMA before its memory goes away. */
    if (v->bme_set)
        set_bus_master(v, false, e, sizeof e);
    if (v->nirq) {
        struct vfio_irq_set set = {.argsz = sizeof set,
                                   .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
                                   .index = VFIO_PCI_MSI_IRQ_INDEX, .start = 0, .count = 0};
        ioctl(v->device, VFIO_DEVICE_SET_IRQS, &set);
        for (unsigned i = 0; i < v->nirq; i++)
            close(v->irq_fd[i]);
    }
    while (v->regions) {
        struct dma_region *r = v->regions;
        v->regions = r->next;
        free_region(v, r);
    }
    if (v->bar0)
        munmap((void *)v->bar0, v->bar0_size);
    if (v->device >= 0)
        close(v->device);
    if (v->group >= 0)
        close(v->group);
    if (v->container >= 0)
        close(v->container);
    if (v->cfg_fd >= 0)
        close(v->cfg_fd);
    if (v->res_fd >= 0)
        close(v->res_fd);
    free(v);
}

static const struct nic_backend_ops vfio_ops = {
    .read32 = vf_read32,
    .write32 = vf_write32,
    .read64 = vf_read64,
    .write64 = vf_write64,
    .dma_alloc = vf_dma_alloc,
    .dma_free = vf_dma_free,
    .irq_wait = vf_irq_wait,
    .now_ns = vf_now_ns,
    .idle = vf_idle,
    .counter = vf_counter,
    .params_json = vf_params_json,
    .last_error = vf_last_error,
    .close = vf_close,
};

/* --- params_json ----------------------------------------------------------------------------- */

static void json_escape_into(char *out, size_t len, const char *s)
{
    size_t n = 0;
    for (; *s && n + 7 < len; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            out[n++] = '\\';
            out[n++] = (char)c;
        } else if (c < 0x20) {
            n += (size_t)snprintf(out + n, len - n, "\\u%04x", c);
        } else {
            out[n++] = (char)c;
        }
    }
    out[n] = 0;
}

static void build_params(struct vfio_backend *v)
{
    /* Link speed: Link Status Current Link Speed 1..5 = 2.5, 5, 8, 16, 32 GT/s. */
    static const double gts[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0};
    const double speed = v->link_gen > 0 && v->link_gen < 6 ? gts[v->link_gen] : 0;
    char reason[1024] = "", irq[1024] = "";
    json_escape_into(reason, sizeof reason, v->vfio_reason);
    json_escape_into(irq, sizeof irq, v->irq_reason);
    snprintf(v->params, sizeof v->params,
             "{\"backend\":\"vfio\",\"mode\":\"%s\",\"device\":\"%s\",\"iommu_group\":%d,"
             "\"bar0_size\":%zu,\"mps\":%d,\"mrrs\":%d,\"link_gen\":%d,\"link_speed_gts\":%.1f,"
             "\"link_width\":%d,\"msi_vectors\":%u,\"msi_error\":\"%s\",\"huge_page\":%zu,"
             "\"iova_ranges\":%u,\"clock\":\"CLOCK_MONOTONIC\","
             "\"vfio_unavailable\":\"%s\"}",
             v->use_vfio ? "vfio" : "sysfs", v->dev, v->use_vfio ? v->group_id : -1,
             v->bar0_size, v->mps, v->mrrs, v->link_gen, speed, v->link_width,
             v->nirq, irq, v->huge_page, v->niova,
             reason);
}

/* --- open ------------------------------------------------------------------------------------ */

struct nic_backend *nic_backend_vfio_open(const char *opts, char *err, size_t errlen)
{
    struct vfio_backend *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errlen, "vfio backend: out of memory");
        return NULL;
    }
    v->container = v->group = v->device = v->cfg_fd = v->res_fd = -1;
    v->base.ops = &vfio_ops;
    v->base.kind = "vfio";

    int mode;
    char root[ROOT_MAX];
    if (parse_opts(opts, v->dev, sizeof v->dev, &mode, root, sizeof root, err, errlen) < 0)
        goto fail;
    snprintf(v->sysfs, sizeof v->sysfs, "%s" SYSFS_PCI, root);
    snprintf(v->devvfio, sizeof v->devvfio, "%s" DEV_VFIO, root);
    char path[ROOT_MAX + 128];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", v->sysfs, v->dev);
    if (stat(path, &st) < 0) {
        snprintf(err, errlen, "vfio backend: no PCI device %s (%s: %s; see lspci -D)", v->dev,
                 path, strerror(errno));
        goto fail;
    }
    v->huge_page = default_huge_page();

    int r = 1;
    if (mode != 2) {
        r = open_vfio(v, err, errlen);
        if (r < 0)
            goto fail;
        if (r > 0 && mode == 1) {
            snprintf(err, errlen, "vfio backend: mode=vfio: %s", v->vfio_reason);
            goto fail;
        }
    }
    if (r > 0) {
        /* Not VFIO: drop what was opened on the way and try the sysfs path. */
        if (v->group >= 0)
            close(v->group);
        if (v->container >= 0)
            close(v->container);
        v->group = v->container = -1;
        if (open_sysfs(v, err, errlen) < 0)
            goto fail;
    }
    if (set_bus_master(v, true, err, errlen) < 0)
        goto fail;
    read_pcie_cap(v);
    if (v->use_vfio)
        setup_msi(v);
    build_params(v);
    return &v->base;

fail:
    vf_close(&v->base);
    return NULL;
}
