/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* stddef.h for the module build: the generated headers (sw/include/nic_contract.h) include the
 * C library's stddef.h; in the kernel the same types come from linux/types.h and linux/stddef.h. */
#ifndef NICDRV_COMPAT_STDDEF_H
#define NICDRV_COMPAT_STDDEF_H
#include <linux/types.h>
#include <linux/stddef.h>
#endif
