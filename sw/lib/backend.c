// SPDX-License-Identifier: BSD-2-Clause
/*
 * backend.c: nic_backend_open() (nic_backend.h), the one entry point tools use to get a backend.
 *
 *   kind "sim"   -> nic_backend_sim_open(opts)   (sw/sim/backend_sim.cpp, simulation build only)
 *   kind "vfio"  -> nic_backend_vfio_open(opts)  (backend_vfio.c)
 *
 * then reads the device's register-block table (nic_rb_discover), so every tool starts with it.
 *
 * A weak nic_backend_sim_open() stands in when the simulator is not linked (the hardware
 * binaries, build/host/): it fails with "built without the sim backend". The real one in
 * backend_sim.cpp is a strong definition and replaces it at link time; so does
 * nic_backend_sim_peer() (the weak one returns NULL: no peer) and nic_backend_sim_check().
 *
 * nic_backend_check_opts() checks a backend's options without opening it, so a tool can refuse
 * a bad option or an output path it cannot write before it runs anything.
 */
#include <stdio.h>
#include <string.h>

#include "nic_backend.h"
#include "nic_rb.h"

__attribute__((weak)) struct nic_backend *nic_backend_sim_open(const char *opts, char *err,
                                                              size_t errlen)
{
    (void)opts;
    snprintf(err, errlen, "sim backend: this binary was built without the sim backend "
             "(link sw/sim/backend_sim.cpp and the Verilated SoC: `make sim`)");
    return NULL;
}

__attribute__((weak)) struct nic_backend *nic_backend_sim_peer(struct nic_backend *a)
{
    (void)a;
    return NULL;
}

/* Without the simulator the sim options cannot be checked; nic_backend_sim_open() then fails
 * with its own message. */
__attribute__((weak)) int nic_backend_sim_check(const char *opts, char *err, size_t errlen)
{
    (void)opts;
    (void)err;
    (void)errlen;
    return 0;
}

/* nic_backend.h; the sim side is sw/sim/backend_sim.cpp. */
int nic_backend_check_opts(const char *kind, const char *opts, char *err, size_t errlen)
{
    if (kind && strcmp(kind, "sim") == 0)
        return nic_backend_sim_check(opts ? opts : "", err, errlen);
    return 0;
}

struct nic_backend *nic_backend_open(const char *kind, const char *opts, char *err,
                                     size_t errlen)
{
    char dummy[1];
    if (!err || errlen == 0) {
        err = dummy;
        errlen = sizeof dummy;
    }
    err[0] = 0;
    if (!kind) {
        snprintf(err, errlen, "no backend kind given (sim or vfio)");
        return NULL;
    }
    struct nic_backend *b = NULL;
    if (strcmp(kind, "sim") == 0)
        b = nic_backend_sim_open(opts ? opts : "", err, errlen);
    else if (strcmp(kind, "vfio") == 0)
        b = nic_backend_vfio_open(opts ? opts : "", err, errlen);
    else {
        snprintf(err, errlen, "unknown backend '%s' (sim or vfio)", kind);
        return NULL;
    }
    if (!b && err[0] == 0)
        snprintf(err, errlen, "%s backend: open failed (no message)", kind);
    /* (A backend that read the table while it opened, sim with msix=1, is not read again.) */
    if (b && !b->nrb && nic_rb_discover(b, err, errlen) < 0) {
        nic_close(b);
        return NULL;
    }
    return b;
}
