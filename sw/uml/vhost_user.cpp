// SPDX-License-Identifier: BSD-2-Clause
/*
 * vhost_user.cpp: VhostUserDevice (vhost_user.h): the vhost-user messages virtio_uml sends, the
 * memory table mapped with mmap(), and split virtqueue access (virtio 1.x, section 2.7).
 */
#include "vhost_user.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

namespace umlpci {

namespace {

enum : uint32_t {
    kGetFeatures = 1, kSetFeatures = 2, kSetOwner = 3, kResetOwner = 4, kSetMemTable = 5,
    kSetVringNum = 8, kSetVringAddr = 9, kSetVringBase = 10, kGetVringBase = 11,
    kSetVringKick = 12, kSetVringCall = 13, kSetVringErr = 14, kGetProtocolFeatures = 15,
    kSetProtocolFeatures = 16, kGetQueueNum = 17, kSetVringEnable = 18, kSetSlaveReqFd = 21,
};
constexpr uint32_t kVersion = 1, kFlagReply = 1u << 2, kFlagNeedReply = 1u << 3;
constexpr uint64_t kFeatureVersion1 = 1ull << 32, kFeatureProtocol = 1ull << 30;
/* SLAVE_REQ: virtio_uml allocates its interrupt for the device's call fds only with it. */
constexpr uint64_t kProtocolSlaveReq = 1ull << 5;
constexpr uint32_t kVringIndexMask = 0xff, kVringNoFd = 1u << 8;
constexpr int kMaxRegions = 8;
constexpr uint16_t kDescNext = 1, kDescWrite = 2, kDescIndirect = 4;

struct Header {
    uint32_t request, flags, size;
};
struct MemRegionMsg {
    uint64_t gpa, size, user_addr, mmap_offset;
};
struct VringAddrMsg {
    uint32_t index, flags;
    uint64_t desc, used, avail, log;
};
struct Desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

bool read_full(int fd, void *buf, size_t n)
{
    auto *p = static_cast<uint8_t *>(buf);
    while (n) {
        const ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return false;
        p += r;
        n -= static_cast<size_t>(r);
    }
    return true;
}

} /* namespace */

VhostUserDevice::VhostUserDevice(const std::string &p, int nqueues) : path(p), vq(nqueues)
{
    for (auto &q : vq)
        q.dev = this;
    lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (lsock < 0 || path.size() >= sizeof(a.sun_path))
        throw std::runtime_error("vhost-user: cannot make a socket for " + path);
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    unlink(path.c_str());
    if (bind(lsock, reinterpret_cast<sockaddr *>(&a), sizeof(a)) < 0 || listen(lsock, 1) < 0)
        throw std::runtime_error("vhost-user: cannot listen on " + path + ": " +
                                 std::strerror(errno));
}

VhostUserDevice::~VhostUserDevice()
{
    unmap_all();
    for (auto &q : vq) {
        if (q.kick >= 0)
            close(q.kick);
        if (q.call >= 0)
            close(q.call);
    }
    if (conn >= 0)
        close(conn);
    if (slave_fd >= 0)
        close(slave_fd);
    if (lsock >= 0) {
        close(lsock);
        unlink(path.c_str());
    }
}

bool VhostUserDevice::accept_one(int timeout_ms)
{
    pollfd pf{lsock, POLLIN, 0};
    if (poll(&pf, 1, timeout_ms) <= 0)
        return false;
    conn = accept4(lsock, nullptr, nullptr, SOCK_CLOEXEC);
    return conn >= 0;
}

void VhostUserDevice::unmap_all()
{
    for (auto &r : regions)
        munmap(r.map, r.map_len);
    regions.clear();
}

bool VhostUserDevice::reply_u64(uint32_t req, uint64_t v)
{
    struct {
        Header h;
        uint64_t v;
    } __attribute__((packed)) m{{req, kVersion | kFlagReply, 8}, v};
    return write(conn, &m, sizeof(m)) == static_cast<ssize_t>(sizeof(m));
}

bool VhostUserDevice::handle_message()
{
    Header h;
    uint8_t pl[512];
    int fds[kMaxRegions];
    int nfds = 0;
    char cbuf[CMSG_SPACE(sizeof(fds))];
    iovec iov{&h, sizeof(h)};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof(cbuf);
    ssize_t r;
    do
        r = recvmsg(conn, &mh, MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    if (r == 0) {
        err = "the front-end closed the socket";
        return false;
    }
    if (r != static_cast<ssize_t>(sizeof(h)) && !read_full(conn, reinterpret_cast<uint8_t *>(&h) + r,
                                                          sizeof(h) - static_cast<size_t>(r))) {
        err = "short vhost-user header";
        return false;
    }
    for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            nfds = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
            std::memcpy(fds, CMSG_DATA(c), sizeof(int) * static_cast<size_t>(nfds));
        }
    if (h.size > sizeof(pl) || !read_full(conn, pl, h.size)) {
        err = "vhost-user payload of " + std::to_string(h.size) + " bytes refused";
        return false;
    }
    auto u64 = [&]() {
        uint64_t v = 0;
        std::memcpy(&v, pl, std::min<size_t>(8, h.size));
        return v;
    };
    auto u32pair = [&](uint32_t *a, uint32_t *b) {
        std::memcpy(a, pl, 4);
        std::memcpy(b, pl + 4, 4);
    };
    bool ok = true;
    switch (h.request) {
    case kGetFeatures:
        return reply_u64(h.request, kFeatureVersion1 | kFeatureProtocol);
    case kSetFeatures:
        feat_set = true;
        if (u64() & ~(kFeatureVersion1 | kFeatureProtocol)) {
            err = "front-end set features we did not offer";
            return false;
        }
        break;
    case kGetProtocolFeatures:
        return reply_u64(h.request, kProtocolSlaveReq);
    case kSetSlaveReqFd:              /* no device-initiated requests: kept open, unused */
        if (nfds > 0) {
            if (slave_fd >= 0)
                close(slave_fd);
            slave_fd = fds[0];
            nfds = 0;
        }
        break;
    case kSetProtocolFeatures:
    case kSetOwner:
    case kResetOwner:
        break;
    case kGetQueueNum:
        return reply_u64(h.request, vq.size());
    case kSetMemTable: {
        uint32_t num, pad;
        u32pair(&num, &pad);
        if (num == 0 || num > kMaxRegions || static_cast<int>(num) != nfds ||
            h.size < 8 + num * sizeof(MemRegionMsg)) {
            err = "SET_MEM_TABLE with " + std::to_string(num) + " regions and " +
                  std::to_string(nfds) + " fds refused";
            return false;
        }
        unmap_all();
        for (uint32_t i = 0; i < num; i++) {
            MemRegionMsg m;
            std::memcpy(&m, pl + 8 + i * sizeof(m), sizeof(m));
            const size_t len = m.size + m.mmap_offset;
            void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[i], 0);
            close(fds[i]);
            if (p == MAP_FAILED) {
                err = "cannot mmap the guest's memory region " + std::to_string(i) + ": " +
                      std::strerror(errno);
                return false;
            }
            auto *b = static_cast<uint8_t *>(p);
            regions.push_back(Region{m.gpa, m.size, m.user_addr, b, b + m.mmap_offset, len});
        }
        nfds = 0;
        mem_gen++;
        break;
    }
    case kSetVringNum:
    case kSetVringBase:
    case kSetVringEnable:
    case kGetVringBase: {
        uint32_t idx, num;
        u32pair(&idx, &num);
        if (idx >= vq.size()) {
            err = "vring index " + std::to_string(idx) + " out of range";
            return false;
        }
        Vring &q = vq[idx];
        if (h.request == kSetVringNum) {
            if (num == 0 || num > 32768 || (num & (num - 1))) {
                err = "vring size " + std::to_string(num) + " refused";
                return false;
            }
            q.num = num;
        } else if (h.request == kSetVringBase) {
            q.last_avail = q.used_idx = static_cast<uint16_t>(num);
        } else if (h.request == kSetVringEnable) {
            q.enabled = num != 0;
        } else {
            q.addr_set = false;       /* the ring is stopped until set up again */
            struct {
                Header h;
                uint32_t idx, num;
            } __attribute__((packed)) m{{h.request, kVersion | kFlagReply, 8}, idx, q.last_avail};
            return write(conn, &m, sizeof(m)) == static_cast<ssize_t>(sizeof(m));
        }
        break;
    }
    case kSetVringAddr: {
        VringAddrMsg a;
        std::memcpy(&a, pl, sizeof(a));
        if (a.index >= vq.size()) {
            err = "vring index out of range";
            return false;
        }
        Vring &q = vq[a.index];
        /* virtio_uml gives user addresses equal to guest physical ones (its region table says
         * user_addr == gpa), so one translation serves both. */
        q.desc_addr = a.desc;
        q.avail_addr = a.avail;
        q.used_addr = a.used;
        q.addr_set = true;
        break;
    }
    case kSetVringKick:
    case kSetVringCall:
    case kSetVringErr: {
        const uint64_t v = u64();
        const uint32_t idx = v & kVringIndexMask;
        if (idx >= vq.size()) {
            err = "vring index out of range";
            return false;
        }
        const int fd = (v & kVringNoFd) || nfds < 1 ? -1 : fds[0];
        nfds = 0;
        if (h.request == kSetVringErr) {
            if (fd >= 0)
                close(fd);
            break;
        }
        int &slot = h.request == kSetVringKick ? vq[idx].kick : vq[idx].call;
        if (slot >= 0)
            close(slot);
        slot = fd;
        /* virtio_uml's call fd is a pipe: never block on a full one (a notification is pending
         * then anyway). */
        if (fd >= 0)
            fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
        break;
    }
    default:
        err = "vhost-user request " + std::to_string(h.request) + " not supported";
        ok = false;
    }
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
    if (ok && (h.flags & kFlagNeedReply))
        return reply_u64(h.request, 0);
    return ok;
}

uint8_t *VhostUserDevice::guest_ptr(uint64_t gpa, uint64_t len) const
{
    for (const auto &r : regions)
        if (gpa >= r.gpa && len <= r.size && gpa - r.gpa <= r.size - len)
            return r.host + (gpa - r.gpa);
    return nullptr;
}

bool Vring::ready() const
{
    return num && addr_set && enabled && dev->mem_ready();
}

bool Vring::pop(Chain *c)
{
    if (!ready())
        return false;
    auto *avail = reinterpret_cast<uint16_t *>(dev->guest_ptr(avail_addr, 4 + 2 * num));
    auto *desc = reinterpret_cast<Desc *>(dev->guest_ptr(desc_addr, 16ull * num));
    if (!avail || !desc) {
        bad++;
        return false;
    }
    const uint16_t idx = __atomic_load_n(&avail[1], __ATOMIC_ACQUIRE);
    if (idx == last_avail)
        return false;
    c->head = avail[2 + last_avail % num];
    c->bufs.clear();
    last_avail++;
    uint16_t i = c->head;
    for (uint32_t n = 0; n < num; n++) {
        if (i >= num) {
            bad++;
            return false;
        }
        const Desc d = desc[i];
        uint8_t *p = dev->guest_ptr(d.addr, d.len);
        if (!p || (d.flags & kDescIndirect)) {
            bad++;
            push(*c, 0);
            return false;
        }
        c->bufs.push_back(Buf{p, d.len, (d.flags & kDescWrite) != 0});
        if (!(d.flags & kDescNext))
            return true;
        i = d.next;
    }
    bad++;
    return false;
}

void Vring::push(const Chain &c, uint32_t written)
{
    auto *used = dev->guest_ptr(used_addr, 4 + 8ull * num);
    if (!used) {
        bad++;
        return;
    }
    uint8_t *e = used + 4 + 8 * (used_idx % num);
    const uint32_t id = c.head;
    std::memcpy(e, &id, 4);
    std::memcpy(e + 4, &written, 4);
    used_idx++;
    __atomic_store_n(reinterpret_cast<uint16_t *>(used + 2), used_idx, __ATOMIC_RELEASE);
    if (call >= 0) {
        const uint64_t one = 1;
        if (write(call, &one, sizeof(one)) < 0 && errno != EAGAIN)
            bad++;
    }
}

void Vring::drain_kick()
{
    if (kick < 0)
        return;
    pollfd pf{kick, POLLIN, 0};
    uint64_t v;
    if (poll(&pf, 1, 0) > 0 && read(kick, &v, sizeof(v)) < 0)
        bad++;
}

} /* namespace umlpci */
