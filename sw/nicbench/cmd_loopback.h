/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * cmd_loopback.h: what the files of `nicbench loopback` share (cmd_loopback.c the command and
 * its random transfers, cmd_loopback_misaligned.c --misaligned). Private to the loopback
 * command; after nicbench.h.
 */
#ifndef CMD_LOOPBACK_H
#define CMD_LOOPBACK_H

#include "nicbench.h"

/* One loopback transfer armed: the writer first (it waits for data), then the reader's
 * descriptor, its engine left disabled for the caller to start after draining interrupts. */
void arm_one(struct nic_backend *b, uint64_t dst, uint64_t src, uint32_t size);
/* loopback --misaligned on the open backend. */
int loopback_misaligned(struct ctx *c);

#endif /* CMD_LOOPBACK_H */
