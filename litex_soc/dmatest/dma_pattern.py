# SPDX-License-Identifier: BSD-2-Clause
#
# dma_pattern.py: LiteX register wrapper around the Amaranth pattern generator and checker.
#
# What it is: the traffic source for card-to-host DMA (PatternGenerator -> DMA writer) and the
# traffic sink for host-to-card DMA (DMA reader -> PatternChecker), with their registers. The
# logic lives in rtl/dmatest/pattern_generator.py and rtl/dmatest/pattern_checker.py; this file
# only exposes it.
#
# Interfaces: `source` (to the DMA writer's sink) and `sink` (from the DMA reader's source), LiteX
# streams with a `data` field; `irq`, a one-cycle pulse when the checker reaches its target.
#
# Parameters: platform (to add the emitted Verilog), data_width, build_dir (where the Verilog
# goes).

import os

from migen import ClockSignal, Instance, ResetSignal, Signal

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRField, CSRStatus, CSRStorage

from litepcie.common import dma_layout

from rtl.dmatest.emit import emit


class DMAPattern(LiteXModule):
    def __init__(self, platform, data_width, build_dir):
        self.source = stream.Endpoint(dma_layout(data_width))
        self.sink   = stream.Endpoint(dma_layout(data_width))
        self.irq    = Signal()

        self.gen_control = CSRStorage(fields=[
            CSRField("enable", size=1, description="``1``: offer pattern data to the DMA writer "
                     "on every cycle. A ``0`` to ``1`` transition restarts the pattern at the "
                     "seed."),
        ], description="Pattern generator control (card-to-host traffic source).")
        self.gen_seed  = CSRStorage(32, description="First 32-bit word of the generated pattern.")
        self.gen_beats = CSRStatus(48, description="Beats the DMA writer took since the restart.")

        self.chk_control = CSRStorage(fields=[
            CSRField("restart", size=1, pulse=True, description="Write ``1`` to clear the "
                     "checker's counts and expect the seed next."),
        ], description="Pattern checker control (host-to-card traffic sink).")
        self.chk_seed   = CSRStorage(32, description="Expected first 32-bit word.")
        self.chk_target = CSRStorage(32, description="Byte count at which the checker raises its "
                                     "interrupt (``0``: never).")
        self.chk_bytes  = CSRStatus(48, description="Bytes received since the restart.")
        self.chk_errors = CSRStatus(32, description="Beats that differed from the pattern since "
                                    "the restart.")

        # # #

        os.makedirs(build_dir, exist_ok=True)
        for core in ("pattern_generator", "pattern_checker"):
            path = os.path.join(build_dir, f"{core}_{data_width}.v")
            emit(core, data_width, path)
            platform.add_source(path)

        self.specials += Instance(f"pattern_generator_{data_width}",
            i_clk            = ClockSignal("sys"),
            i_rst            = ResetSignal("sys"),
            o_source__valid  = self.source.valid,
            i_source__ready  = self.source.ready,
            o_source__payload= self.source.data,
            i_enable         = self.gen_control.fields.enable,
            i_seed           = self.gen_seed.storage,
            o_beats          = self.gen_beats.status,
        )
        self.specials += Instance(f"pattern_checker_{data_width}",
            i_clk            = ClockSignal("sys"),
            i_rst            = ResetSignal("sys"),
            i_sink__valid    = self.sink.valid,
            o_sink__ready    = self.sink.ready,
            i_sink__payload  = self.sink.data,
            i_restart        = self.chk_control.fields.restart,
            i_seed           = self.chk_seed.storage,
            i_target         = self.chk_target.storage,
            o_bytes          = self.chk_bytes.status,
            o_errors         = self.chk_errors.status,
            o_done           = self.irq,
        )
