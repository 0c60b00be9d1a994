/*
 * nic_eth.h: the 1 Gb/s LiteEth MAC through its SRAM slots, by programmed I/O as LiteX's own
 * liteeth driver does it: ETHMAC_SRAM_READER_* (transmit) and ETHMAC_SRAM_WRITER_* (receive)
 * registers of csr.h; the slots at ETHMAC_BAR0_OFFSET of BAR0, ETHMAC_RX_SLOTS receive slots then
 * ETHMAC_TX_SLOTS transmit slots of ETHMAC_SLOT_SIZE bytes (soc.h). The NIC's own DMA datapath
 * (descriptor rings) is to replace this path; the MAC and its PHY stay.
 *
 * Frames are given without FCS (the MAC appends it, pads to 60 bytes and adds preamble and gap);
 * received frames come without preamble; their FCS is checked by the MAC (bad ones are counted in
 * ETHMAC_RX_DATAPATH_CRC_ERRORS and not delivered).
 */
#ifndef NIC_ETH_H
#define NIC_ETH_H

#include <stddef.h>
#include <stdint.h>

#include "nic_backend.h"
#include "nic_csr.h"

#ifdef CSR_ETHMAC_BASE
#define NIC_HAS_ETHMAC 1
#else
#define NIC_HAS_ETHMAC 0
#endif

struct nic_eth {
    struct nic_backend *b;
    unsigned tx_next;               /* next transmit slot */
    uint64_t tx_frames, rx_frames;
};

/* Acknowledge anything pending; 0, or -1 when the build has no MAC. */
int nic_eth_init(struct nic_eth *e, struct nic_backend *b, char *err, size_t errlen);
/* Queue one frame (14..ETHMAC_SLOT_SIZE bytes) in the next transmit slot and start it; waits
 * (backend time) until the MAC can take it. 0, or -1 with a message. */
int nic_eth_send(struct nic_eth *e, const void *frame, size_t len, uint64_t timeout_ns,
                 char *err, size_t errlen);
/* Take one received frame into buf (cap bytes); *len gets its length. 0, or -1 on timeout or a
 * frame larger than cap (the frame is then released, not lost silently: the message says so). */
int nic_eth_recv(struct nic_eth *e, void *buf, size_t cap, size_t *len, uint64_t timeout_ns,
                 char *err, size_t errlen);

#endif /* NIC_ETH_H */
