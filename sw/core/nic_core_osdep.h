/*
 * nic_core_osdep.h: the one place the shared datapath core (nic_core.h) meets its environment,
 * as the osdep.h of Intel's shared hardware code: fixed-width types, little-endian conversion,
 * memory barriers and the two MMIO accessors.
 *
 * Environments: the Linux module (__KERNEL__: <linux/types.h>, cpu_to_le*, dma_wmb/dma_rmb) and
 * the user-space library sw/lib (the compiler's freestanding <stdint.h>, <stddef.h>,
 * <stdbool.h>, GCC builtins). The core includes nothing else: no libc, no kernel headers.
 *
 * Interfaces each environment defines (out of line, one definition per program or module):
 *   uint32_t nic_core_rd32(struct nic_core_hw *hw, uint32_t bar0_off);
 *   void     nic_core_wr32(struct nic_core_hw *hw, uint32_t bar0_off, uint32_t v);
 * struct nic_core_hw is opaque to the core: sw/lib passes its struct nic_backend, the module
 * its struct nicdrv_hw (sw/kernel/nicdrv.h).
 */
#ifndef NICCORE_OSDEP_H
#define NICCORE_OSDEP_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#include <asm/byteorder.h>
#include <asm/barrier.h>

/* Descriptor fields are plain integers in the generated formats (nic_contract.h). */
#define NIC_CORE_CPU_TO_LE16(v) ((__force uint16_t)cpu_to_le16(v))
#define NIC_CORE_CPU_TO_LE64(v) ((__force uint64_t)cpu_to_le64(v))
#define NIC_CORE_LE16_TO_CPU(v) le16_to_cpu((__force __le16)(v))
#define NIC_CORE_LE64_TO_CPU(v) le64_to_cpu((__force __le64)(v))
/* Host-memory writes (descriptors) before the doorbell's MMIO write; record reads after the
 * status that announced them. */
#define NIC_CORE_WMB() dma_wmb()
#define NIC_CORE_RMB() dma_rmb()
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NIC_CORE_CPU_TO_LE16(v) __builtin_bswap16((uint16_t)(v))
#define NIC_CORE_CPU_TO_LE64(v) __builtin_bswap64((uint64_t)(v))
#else
#define NIC_CORE_CPU_TO_LE16(v) ((uint16_t)(v))
#define NIC_CORE_CPU_TO_LE64(v) ((uint64_t)(v))
#endif
#define NIC_CORE_LE16_TO_CPU(v) NIC_CORE_CPU_TO_LE16(v)
#define NIC_CORE_LE64_TO_CPU(v) NIC_CORE_CPU_TO_LE64(v)
#define NIC_CORE_WMB() __atomic_thread_fence(__ATOMIC_RELEASE)
#define NIC_CORE_RMB() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#endif

struct nic_core_hw;

uint32_t nic_core_rd32(struct nic_core_hw *hw, uint32_t bar0_off);
void nic_core_wr32(struct nic_core_hw *hw, uint32_t bar0_off, uint32_t v);

#endif /* NICCORE_OSDEP_H */
