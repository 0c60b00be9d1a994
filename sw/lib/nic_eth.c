/*
 * nic_eth.c: the LiteEth MAC by programmed I/O. See nic_eth.h.
 */
#include "nic_eth.h"

#include <stdio.h>
#include <string.h>

#include "nic_dev.h"

#if NIC_HAS_ETHMAC

static uint64_t slot_offset(int tx, unsigned slot)
{
    return ETHMAC_BAR0_OFFSET +
           (uint64_t)((tx ? ETHMAC_RX_SLOTS : 0) + slot) * ETHMAC_SLOT_SIZE;
}

int nic_eth_init(struct nic_eth *e, struct nic_backend *b, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    memset(e, 0, sizeof *e);
    e->b = b;
    nic_write32(b, CSR_ETHMAC_SRAM_WRITER_EV_PENDING_ADDR, 1);
    nic_write32(b, CSR_ETHMAC_SRAM_READER_EV_PENDING_ADDR, 1);
    return 0;
}

int nic_eth_send(struct nic_eth *e, const void *frame, size_t len, uint64_t timeout_ns,
                 char *err, size_t errlen)
{
    struct nic_backend *b = e->b;
    if (len < 14 || len > ETHMAC_SLOT_SIZE)
        return nic_errf(err, errlen, "frame of %zu bytes: 14..%d", len, ETHMAC_SLOT_SIZE);
    const uint64_t deadline = nic_now_ns(b) + timeout_ns;
    while (!(nic_read32(b, CSR_ETHMAC_SRAM_READER_READY_ADDR) & 1)) {
        if (nic_now_ns(b) > deadline)
            return nic_errf(err, errlen, "MAC transmit not ready within %llu ns",
                           (unsigned long long)timeout_ns);
        nic_idle(b, 100);
    }
    const unsigned slot = e->tx_next;
    const uint8_t *p = frame;
    for (size_t i = 0; i < len; i += 4) {
        uint32_t w = 0;
        for (size_t k = 0; k < 4 && i + k < len; k++)
            w |= (uint32_t)p[i + k] << (8 * k);
        nic_write32(b, slot_offset(1, slot) + i, w);
    }
    nic_write32(b, CSR_ETHMAC_SRAM_READER_SLOT_ADDR, slot);
    nic_write32(b, CSR_ETHMAC_SRAM_READER_LENGTH_ADDR, (uint32_t)len);
    nic_write32(b, CSR_ETHMAC_SRAM_READER_START_ADDR, 1);
    e->tx_next = (slot + 1) % ETHMAC_TX_SLOTS;
    e->tx_frames++;
    return 0;
}

int nic_eth_recv(struct nic_eth *e, void *buf, size_t cap, size_t *len, uint64_t timeout_ns,
                 char *err, size_t errlen)
{
    struct nic_backend *b = e->b;
    const uint64_t deadline = nic_now_ns(b) + timeout_ns;
    while (!(nic_read32(b, CSR_ETHMAC_SRAM_WRITER_EV_PENDING_ADDR) & 1)) {
        if (nic_now_ns(b) > deadline)
            return nic_errf(err, errlen, "no frame received within %llu ns",
                           (unsigned long long)timeout_ns);
        nic_idle(b, 100);
    }
    const unsigned slot = nic_read32(b, CSR_ETHMAC_SRAM_WRITER_SLOT_ADDR);
    const uint32_t n = nic_read32(b, CSR_ETHMAC_SRAM_WRITER_LENGTH_ADDR);
    int rc = 0;
    if (slot >= ETHMAC_RX_SLOTS || n > ETHMAC_SLOT_SIZE) {
        rc = nic_errf(err, errlen, "MAC reports slot %u length %u", slot, n);
    } else if (n > cap) {
        rc = nic_errf(err, errlen, "received frame of %u bytes does not fit %zu; released", n,
                     cap);
    } else {
        uint8_t *p = buf;
        for (uint32_t i = 0; i < n; i += 4) {
            const uint32_t w = nic_read32(b, slot_offset(0, slot) + i);
            for (uint32_t k = 0; k < 4 && i + k < n; k++)
                p[i + k] = (uint8_t)(w >> (8 * k));
        }
        *len = n;
        e->rx_frames++;
    }
    nic_write32(b, CSR_ETHMAC_SRAM_WRITER_EV_PENDING_ADDR, 1);     /* release the slot */
    return rc;
}

#else

int nic_eth_init(struct nic_eth *e, struct nic_backend *b, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    e->b = b;
    return nic_errf(err, errlen, "this build has no Ethernet MAC");
}

int nic_eth_send(struct nic_eth *e, const void *frame, size_t len, uint64_t timeout_ns,
                 char *err, size_t errlen)
{
    (void)e, (void)frame, (void)len, (void)timeout_ns;
    return nic_errf(err, errlen, "this build has no Ethernet MAC");
}

int nic_eth_recv(struct nic_eth *e, void *buf, size_t cap, size_t *len, uint64_t timeout_ns,
                 char *err, size_t errlen)
{
    (void)e, (void)buf, (void)cap, (void)len, (void)timeout_ns;
    return nic_errf(err, errlen, "this build has no Ethernet MAC");
}

#endif /* NIC_HAS_ETHMAC */
