/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vcd_writer.h: writes a Value Change Dump (IEEE 1364 VCD) with nested scopes, bit-vector wires
 * and GTKWave's string variables, and the GTKWave save file (.gtkw) that shows them grouped.
 *
 * Use: fill an array of vcd_var (scope as "a.b.c", name, width, kind), vcd_begin(), then for
 * each time vcd_time() followed by vcd_value()/vcd_string() of the variables that changed;
 * vcd_end(). gtkw_write() lists the same variables, one GTKWave group per scope, and opens on
 * the captured window.
 */
#ifndef VCD_WRITER_H
#define VCD_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* VCD_INTEGER: an integer variable, drawn by the GTKWave save file as an analog waveform (a
 * step per change, four rows high). */
enum vcd_kind { VCD_WIRE, VCD_STRING, VCD_INTEGER };

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
 * 1-bit wires in binary, wider ones in hex, integers as analog steps; the view starts at
 * `start` and is zoomed so that `start..end` fills the waveform area (gtkw_zoom()), the
 * primary marker at `marker` (none if negative). Times in the dump's units. 0 or -1 (errno). */
int gtkw_write(const char *path, const char *dump, const struct vcd_var *vars, size_t n,
               uint64_t start, uint64_t end, int64_t marker);

/* The window the save file sets, and the width of the waveform area that the zoom is computed
 * for: GTKWave 3.3 lays out about 1000 pixels for it in that window, beside its signal tree and
 * the 300-pixel signal list; a little less is assumed, so that the span surely fits. */
#define GTKW_WIDTH 1600
#define GTKW_HEIGHT 900
#define GTKW_SIGNALS_WIDTH 300
#define GTKW_WAVE_PIXELS 960

/* GTKWave's zoom z shows 2^-z time units per 200 pixels: the z that shows `span` units in
 * GTKW_WAVE_PIXELS (at most 0, GTKWave's closest zoom, as its "zoom best fit" does). */
double gtkw_zoom(uint64_t span);

#endif /* VCD_WRITER_H */
