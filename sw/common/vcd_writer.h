/*
 * vcd_writer.h: writes a Value Change Dump (IEEE 1364 VCD) with nested scopes, bit-vector wires
 * and GTKWave's string variables, and the GTKWave save file (.gtkw) that shows them grouped.
 *
 * Use: fill an array of vcd_var (scope as "a.b.c", name, width, kind), vcd_begin(), then for
 * each time vcd_time() followed by vcd_value()/vcd_string() of the variables that changed;
 * vcd_end(). gtkw_write() lists the same variables, one GTKWave group per scope.
 */
#ifndef VCD_WRITER_H
#define VCD_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum vcd_kind { VCD_WIRE, VCD_STRING };

struct vcd_var {
    const char *scope;              /* dotted path, e.g. "nic.pcie.pcie_rx" */
    const char *name;
    unsigned width;                 /* 1..64 for wires */
    enum vcd_kind kind;
    char id[8];                     /* set by vcd_begin() */
};

struct vcd_writer {
    FILE *f;
    uint64_t t;
    int have_t;
};

/* timescale e.g. "1ns"; comment goes in a $comment section (may be NULL). 0 or -1 (errno). */
int vcd_begin(struct vcd_writer *w, const char *path, const char *timescale, const char *comment,
              struct vcd_var *vars, size_t n);
void vcd_time(struct vcd_writer *w, uint64_t t);
void vcd_value(struct vcd_writer *w, const struct vcd_var *v, uint64_t x);
void vcd_string(struct vcd_writer *w, const struct vcd_var *v, const char *s);
int vcd_end(struct vcd_writer *w);

/* A GTKWave save file for `dump` (the VCD/FST path): every variable, one group per scope,
 * 1-bit wires in binary, wider ones in hex. 0 or -1 (errno). */
int gtkw_write(const char *path, const char *dump, const struct vcd_var *vars, size_t n,
               uint64_t marker);

#endif /* VCD_WRITER_H */
