// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * nic_shared.c: the shared datapath core (sw/core/nic_core.c) compiled into the module, the
 * same source sw/lib builds for the simulation tests. Its MMIO accessors are nic_main.c's.
 */
#include "nic_core.c"
