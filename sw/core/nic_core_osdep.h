/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place the shared datapath core (nic_core.h) meets its environment, as the osdep.h of
 * Intel's shared hardware code: the kernel's fixed-width types, little-endian conversion,
 * memory barriers, READ_ONCE/WRITE_ONCE and the two MMIO accessors.
 *
 * Environments: the Linux module (__KERNEL__: the kernel's own headers) and the user-space
 * library sw/lib and the firmware (the compiler's <stddef.h>, <stdbool.h>, <assert.h>'s
 * static_assert and GCC builtins, under the kernel's names). The core includes nothing else: no
 * libc, no kernel headers.
 *
 * Interfaces each environment defines (out of line, one definition per program or module):
 *   u32  nic_core_rd32(struct nic_core_hw *hw, u32 bar0_off);
 *   void nic_core_wr32(struct nic_core_hw *hw, u32 bar0_off, u32 v);
 * struct nic_core_hw is opaque to the core: sw/lib passes its struct nic_backend, the module
 * its struct nicdrv_hw (sw/kernel/nicdrv.h).
 */
#ifndef NICCORE_OSDEP_H
#define NICCORE_OSDEP_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/compiler.h>
#include <linux/build_bug.h>
#include <asm/byteorder.h>
#include <asm/barrier.h>

/*
 * Descriptor fields are plain integers in the generated formats (nic_contract.h, shared with
 * the RTL's tests): the __le types' conversions with their sparse annotations cast away.
 */
#define NIC_CORE_CPU_TO_LE16(v) ((__force u16)cpu_to_le16(v))
#define NIC_CORE_CPU_TO_LE64(v) ((__force u64)cpu_to_le64(v))
#define NIC_CORE_LE16_TO_CPU(v) le16_to_cpu((__force __le16)(v))
#define NIC_CORE_LE64_TO_CPU(v) le64_to_cpu((__force __le64)(v))
/*
 * Host-memory writes (descriptors) before the doorbell's MMIO write; record reads after the
 * status that announced them.
 */
#define NIC_CORE_WMB() dma_wmb()
#define NIC_CORE_RMB() dma_rmb()
#else
#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel's fixed-width types, from the compiler's own definitions. */
typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;

#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define NIC_CORE_CPU_TO_LE16(v) __builtin_bswap16((u16)(v))
#define NIC_CORE_CPU_TO_LE64(v) __builtin_bswap64((u64)(v))
#else
#define NIC_CORE_CPU_TO_LE16(v) ((u16)(v))
#define NIC_CORE_CPU_TO_LE64(v) ((u64)(v))
#endif
#define NIC_CORE_LE16_TO_CPU(v) NIC_CORE_CPU_TO_LE16(v)
#define NIC_CORE_LE64_TO_CPU(v) NIC_CORE_CPU_TO_LE64(v)
/* The C11 fences the kernel's dma_wmb/dma_rmb give on a coherent host. */
#define NIC_CORE_WMB() __atomic_thread_fence(__ATOMIC_RELEASE)
#define NIC_CORE_RMB() __atomic_thread_fence(__ATOMIC_ACQUIRE)

/*
 * What the kernel's READ_ONCE/WRITE_ONCE promise (one access, not torn, not elided or
 * repeated), as relaxed atomic accesses. Used on 8-, 16- and 32-bit fields only, which a 32-bit
 * target (the firmware's RV32) accesses natively.
 */
#ifndef READ_ONCE
#define READ_ONCE(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#endif
#ifndef WRITE_ONCE
#define WRITE_ONCE(x, val) __atomic_store_n(&(x), (val), __ATOMIC_RELAXED)
#endif
#endif

struct nic_core_hw;

u32 nic_core_rd32(struct nic_core_hw *hw, u32 bar0_off);
void nic_core_wr32(struct nic_core_hw *hw, u32 bar0_off, u32 v);

#endif /* NICCORE_OSDEP_H */
