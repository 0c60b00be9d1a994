/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vhost_user.h: VhostUserDevice, the device side (the "back-end", formerly "slave") of the
 * vhost-user protocol as User-Mode Linux's virtio_uml speaks it (arch/um/drivers/virtio_uml.c),
 * for one device with split virtqueues: feature negotiation (VIRTIO_F_VERSION_1; of the protocol
 * features only SLAVE_REQ, whose fd stays unused), the guest's memory table (SET_MEM_TABLE: each region's fd is mmap()ed), and per
 * queue its size, ring addresses, base, kick and call eventfds.
 *
 * Interfaces: listen()/accept_one() the UNIX socket; handle_message() one front-end message;
 * guest_ptr() a guest physical address -> our mapping of it; queue(i).pop()/push() take a request
 * chain from a ring and give it back used; notify() writes a queue's call eventfd.
 * Parameters: the socket path; the number of queues (virtio-pcidev: 2, cmd and irq).
 */
#ifndef UML_VHOST_USER_H
#define UML_VHOST_USER_H

#include <cstdint>
#include <string>
#include <vector>

namespace umlpci {

/* One buffer of a descriptor chain, mapped. */
struct Buf {
    uint8_t *p;
    uint32_t len;
    bool writable;                    /* device-writable (VRING_DESC_F_WRITE) */
};

/* A descriptor chain taken from the available ring. */
struct Chain {
    uint16_t head = 0;
    std::vector<Buf> bufs;
};

class VhostUserDevice;

/* One split virtqueue, as the front-end set it up. */
class Vring {
public:
    bool ready() const;               /* size, addresses and kick/call set, ring enabled */
    bool pop(Chain *c);               /* the next available chain; false if none (or bad) */
    void push(const Chain &c, uint32_t written);   /* used, then the call eventfd */
    int kick_fd() const { return kick; }
    void drain_kick();                /* read the kick eventfd if it fired */
    uint64_t bad_chains() const { return bad; }

private:
    friend class VhostUserDevice;
    VhostUserDevice *dev = nullptr;
    uint32_t num = 0;
    uint64_t desc_addr = 0, avail_addr = 0, used_addr = 0;
    uint16_t last_avail = 0, used_idx = 0;
    int kick = -1, call = -1;
    bool enabled = true, addr_set = false;
    uint64_t bad = 0;
};

class VhostUserDevice {
public:
    VhostUserDevice(const std::string &path, int nqueues);
    ~VhostUserDevice();
    VhostUserDevice(const VhostUserDevice &) = delete;
    VhostUserDevice &operator=(const VhostUserDevice &) = delete;

    bool accept_one(int timeout_ms);  /* wait for the front-end; false on timeout */
    int sock_fd() const { return conn; }
    /* Handle one message (blocking read). false: the front-end closed or broke the protocol
     * (error() says why). */
    bool handle_message();
    const std::string &error() const { return err; }

    /* Guest physical [gpa, gpa + len) as a pointer into our mapping; null outside every region. */
    uint8_t *guest_ptr(uint64_t gpa, uint64_t len) const;
    /* The (single) memory region: guest physical base, size and our mapping of it. */
    bool mem_ready() const { return !regions.empty(); }
    uint64_t mem_gpa() const { return regions.empty() ? 0 : regions[0].gpa; }
    uint64_t mem_size() const { return regions.empty() ? 0 : regions[0].size; }
    uint8_t *mem_base() const { return regions.empty() ? nullptr : regions[0].host; }
    uint32_t mem_generation() const { return mem_gen; }

    Vring &queue(int i) { return vq[i]; }
    bool features_set() const { return feat_set; }

private:
    struct Region {
        uint64_t gpa, size, user_addr;
        uint8_t *map, *host;
        size_t map_len;
    };
    void unmap_all();
    bool reply_u64(uint32_t req, uint64_t v);

    std::string path, err;
    int lsock = -1, conn = -1, slave_fd = -1;
    std::vector<Region> regions;
    std::vector<Vring> vq;
    uint32_t mem_gen = 0;
    bool feat_set = false;
};

} /* namespace umlpci */

#endif /* UML_VHOST_USER_H */
