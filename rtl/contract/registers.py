# SPDX-License-Identifier: BSD-2-Clause
#
# registers.py: the register-level contract of the NIC datapath: per core, its configuration
# inputs and its counters and status outputs, with their descriptions and ethtool -S names.
#
# What it is: the one source of the cores' counter tuples (rtl/nic/*.py COUNTS), of the LiteX
# CSR descriptions of the `nic_*` registers (litex_soc/nic/nic_datapath_csr.py), and of the C
# counter table of sw/include/nic_contract.h (gen_c.py). Descriptions come from the cores'
# docstrings.
#
# Interfaces:
#   CORES         core name (rtl/nic/<core>.py, or an external block) -> Core(config, counters,
#                 arrays, status): config = (Config(name, desc), ...), the others (Stat, ...).
#   BLOCKS        CSR prefix of an instance in the datapath -> (core, direction): the direction
#                 fills the `{dir}` of the ethtool names (txfifo_ and rxfifo_ share frame_fifo).
#   DATAPATH_OWN  NICDatapath's own ports (full names, e.g. txq_wb_addr): Config or Stat.
#   counter_names(core), port_doc(prefix, name), stat_of(prefix, name), ethtool_name(...).
# Kinds: COUNT (an event counter, wraps), ERROR (a drop or error counter, wraps), STATE (a
# level, bitmap or index). Counters are 32 bits unless `width` says otherwise.

from dataclasses import dataclass

from .coalesce import ABS, FRAMES, IMMEDIATE, USECS
from .formats import TxStatus

COUNT, ERROR, STATE = "count", "error", "state"


@dataclass(frozen=True)
class Config:
    name: str
    desc: str


@dataclass(frozen=True)
class Stat:
    name: str
    kind: str
    ethtool: str            # "{dir}": the block's direction, "{i}": the element of an array
    desc: str
    width: int | None = 32  # None: set by the core's parameters
    per: str | None = None  # "queue" / "vector": an array, element i at bits width * i


@dataclass(frozen=True)
class Core:
    config: tuple = ()
    counters: tuple = ()    # the core's COUNTS, in order
    arrays: tuple = ()      # per-queue / per-vector counters
    status: tuple = ()      # STATE outputs


def _c(name, ethtool, desc):
    return Stat(name, COUNT, ethtool, desc)


def _e(name, ethtool, desc):
    return Stat(name, ERROR, ethtool, desc)


def _s(name, ethtool, desc, width=None):
    return Stat(name, STATE, ethtool, desc, width)


_TXQ = "TX queue number (0..ntxq-1)"

CORES = {
    "tx_scheduler": Core(
        config=(
            Config("prio", "Priority level of each TX queue, 3 bits per queue (queue i at bits "
                           "3i..3i+2): in strict-priority mode only the active queues of the "
                           "highest level compete."),
            Config("weight", "Weight of each TX queue, 8 bits per queue (queue i at bits "
                             "8i..8i+7): in weighted round-robin mode the frames a queue sends "
                             "in a row (0 is taken as 1)."),
            Config("mode", "TX scheduling policy: 0 round-robin, 1 strict priority, 2 weighted "
                           "round-robin (3 acts as 0)."),
        ),
        counters=(_c("grants", "tx_sched_grants", "Scheduler grants accepted (one per TX "
                                                  "fetch job)."),),
    ),
    "tx_queue_manager": Core(
        config=(
            Config("cfg_valid", "TX queue configuration write. On a drained queue (disabled, "
                                "nothing in flight, last writeback written) it resets the "
                                "queue: ring size, enable and limit written, producer, fetch "
                                "and consumer indexes 0. On a live queue only enable and limit "
                                "change (same size_log2; a disabled queue is re-enabled only "
                                "once drained). Refused writes count in txq_err_cfg."),
            Config("cfg_queue", _TXQ + "."),
            Config("cfg_size_log2", "Ring size: 2**size_log2 descriptors, 0..12."),
            Config("cfg_enable", "1: the queue fetches descriptors. 0 disables it: descriptors "
                                 "in flight still complete and are written back (see "
                                 "txq_drained)."),
            Config("cfg_limit", "Descriptors in flight in the device at most, 1..4096 (0 is "
                                "kept as 1)."),
            Config("db_valid", "TX doorbell: the driver's producer index of a queue. Refused "
                               "if the queue is disabled (txq_err_db_disabled) or the index is "
                               ">= the ring size (txq_err_db_range, txq_db_range_err)."),
            Config("db_queue", _TXQ + "."),
            Config("db_index", "Producer index: the ring position after the last descriptor "
                               "posted (ring doorbells at frame boundaries)."),
        ),
        counters=(
            _c("doorbells", "tx_doorbells", "TX doorbells accepted."),
            _c("jobs", "tx_fetch_jobs", "Descriptor fetch jobs taken by the TX engine."),
            _c("descs_fetched", "tx_descs_fetched", "Descriptors of those jobs."),
            _c("descs_completed", "tx_descs_completed", "Descriptors completed by the TX "
                                                        "engine."),
            _e("err_db_range", "tx_err_db_range", "TX doorbells refused: index >= ring size or "
                                                  "queue number out of range."),
            _e("err_db_disabled", "tx_err_db_disabled", "TX doorbells refused: queue "
                                                        "disabled."),
            _e("err_cpl", "tx_err_cpl", "Completions refused (more than in flight): a device "
                                        "error."),
            _e("err_cfg", "tx_err_cfg", "TX queue configuration writes refused (bad "
                                        "parameters, ring size changed on a live queue, or "
                                        "re-enabled before drained)."),
        ),
        status=(
            _s("active", "tx_queues_active", "Bit q: TX queue q may be fetched from (enabled, "
                                             "descriptors posted, in flight below its limit)."),
            _s("drained", "tx_queues_drained", "Bit q: TX queue q is disabled, has nothing in "
                                               "flight and its final consumer index is written "
                                               "back (and no frame of it is open in the TX "
                                               "engine): it may be reconfigured."),
            _s("db_range_err", "tx_queues_db_range_err", "Bit q: sticky, a doorbell of queue q "
                                                         "was >= its ring size; cleared when "
                                                         "the queue is reset."),
        ),
    ),
    "tx_engine": Core(
        config=(
            Config("base_valid", "Sets the descriptor ring base address of a TX queue (change "
                                 "it only while the queue has nothing in the engine)."),
            Config("base_queue", _TXQ + " (>= ntxq: ignored)."),
            Config("base_addr", "Ring base address, 16-byte aligned. A write with bits 3..0 "
                                "not 0 is refused (counted in txe_err_base): the queue keeps no "
                                "base and is not fetched from (txe_base_bad) until a 16-byte "
                                "aligned base is written."),
        ),
        counters=(
            _c("frames", "tx_frames", "Good frames sent to the TX FIFO."),
            _c("bytes", "tx_bytes", "Bytes of those frames."),
            _c("desc_reads", "tx_desc_reads", "DMA read requests for TX descriptors."),
            _c("data_reads", "tx_data_reads", "DMA read requests for TX payload."),
            _e("err_desc_len0", "tx_err_desc_len0", "TX frames dropped: a descriptor of length "
                                                    "0 (status DESC_LEN0)."),
            _e("err_desc_len", "tx_err_desc_len", "TX frames dropped: a descriptor longer than "
                                                  "max_frame (DESC_LEN)."),
            _e("err_frame_len", "tx_err_frame_len", "TX frames dropped: frame longer than "
                                                    "max_frame (FRAME_LEN)."),
            _e("err_read", "tx_err_read", "TX frames dropped: a payload read failed (READ)."),
            _e("err_no_eop", "tx_err_no_eop", "TX frames aborted: queue disabled with the frame "
                                              "open (NO_EOP)."),
            _e("err_desc_read", "tx_err_desc_read", "TX descriptor fetch jobs that failed "
                                                    "(DESC_READ; the frame they were in is "
                                                    "dropped)."),
            _e("err_base", "tx_err_base", "TX ring base writes refused: the address was not "
                                          "16-byte aligned (the queue is not fetched from, "
                                          "txe_base_bad)."),
        ),
        arrays=(
            Stat("q_frames", COUNT, "tx_queue_{i}_packets", "Good frames sent per TX queue, 32 "
                                                            "bits per queue (queue i at bits "
                                                            "32i..).", per="queue"),
            Stat("q_bytes", COUNT, "tx_queue_{i}_bytes", "Bytes of those frames per TX queue, "
                                                         "32 bits per queue.", per="queue"),
            Stat("q_errors", ERROR, "tx_queue_{i}_errors", "Errored TX frames per queue (a done "
                                                           "record with a status other than OK, "
                                                           "any cause), 32 bits per queue; its "
                                                           "low 16 bits are in the queue's "
                                                           "writebacks (TX_WB.errors).",
                 per="queue"),
        ),
        status=(
            _s("base_bad", "tx_queues_base_bad", "Bit q: TX queue q has no ring base: its last "
                                                 "base write was refused (not 16-byte "
                                                 "aligned). The queue is not scheduled, and a "
                                                 "job of it already made fails without a read "
                                                 "(DESC_READ); cleared by an aligned base "
                                                 "write."),
        ),
    ),
    "frame_fifo": Core(
        config=(
            Config("max_len", "Largest frame kept, in bytes: longer frames are dropped "
                              "(drop_oversize)."),
            Config("min_len", "Shortest frame kept, in bytes: shorter frames are dropped "
                              "(drop_runt)."),
            Config("enable", "1: frames are taken in; 0: frames that start are dropped "
                             "(drop_disabled); committed frames still drain."),
        ),
        counters=(
            _c("frames_in", "{dir}_fifo_frames_in", "Frames into the FIFO (their last beat): "
                                                    "frames_in = frames_out + drops + "
                                                    "frames_queued."),
            _c("frames_out", "{dir}_fifo_frames_out", "Frames out of the FIFO."),
            _c("bytes_out", "{dir}_fifo_bytes_out", "Bytes out of the FIFO."),
            _e("drop_error", "{dir}_fifo_drop_error", "Frames dropped: marked bad on their last "
                                                      "beat (TX: an errored frame of the TX "
                                                      "engine; RX: a MAC error)."),
            _e("drop_oversize", "{dir}_fifo_drop_oversize", "Frames dropped: longer than "
                                                            "max_len."),
            _e("drop_runt", "{dir}_fifo_drop_runt", "Frames dropped: shorter than min_len."),
            _e("drop_full", "{dir}_fifo_drop_full", "Frames dropped: the FIFO was full."),
            _e("drop_disabled", "{dir}_fifo_drop_disabled", "Frames dropped: the FIFO was "
                                                            "disabled."),
        ),
        status=(
            _s("level", "{dir}_fifo_level", "Bytes of committed frames not yet out."),
            _s("frames_queued", "{dir}_fifo_frames_queued", "Committed frames not yet out."),
        ),
    ),
    "rx_engine": Core(
        config=(
            Config("ring_base", "RX descriptor ring base address, 16-byte aligned: else the "
                                "ring does not run (rxe_base_bad bit 0; enable is taken as 0, "
                                "counted in rxe_err_base)."),
            Config("ring_size_log2", "RX ring size: 2**ring_size_log2 descriptors and "
                                     "completion records, 0..12 (more acts as enable 0)."),
            Config("cpl_base", "RX completion ring base address, 16-byte aligned: else the "
                               "ring does not run (rxe_base_bad bit 1; enable is taken as 0, "
                               "counted in rxe_err_base)."),
            Config("enable", "1: RX runs. 0: no descriptor reads, frames dropped (no buffer), "
                             "doorbells ignored; once idle the ring is reset (all indexes 0). "
                             "Configure the ring with enable 0."),
            Config("db_valid", "RX doorbell: the driver's producer index (ignored while "
                               "disabled; refused if >= the ring size, rxe_err_db_range)."),
            Config("db_index", "Producer index: the ring position after the last buffer "
                               "posted."),
        ),
        counters=(
            _c("frames", "rx_frames", "Frames written into RX buffers."),
            _c("bytes", "rx_bytes", "Bytes of those frames."),
            _e("drop_no_buffer", "rx_drop_no_buffer", "RX frames dropped: no buffer posted (or "
                                                      "RX disabled)."),
            _e("drop_too_big", "rx_drop_too_big", "RX frames dropped: longer than the buffer "
                                                  "(status TOO_BIG)."),
            _e("drop_bad_desc", "rx_drop_bad_desc", "RX frames dropped: buffer address not "
                                                    "16-byte aligned (status BAD_ADDR)."),
            _c("desc_reads", "rx_desc_reads", "DMA read requests for RX descriptors."),
            _e("err_db_range", "rx_err_db_range", "RX doorbells refused: index >= ring size."),
            _e("err_read", "rx_err_read", "RX descriptors skipped after a failed read (no "
                                          "completion record)."),
            _e("err_base", "rx_err_base", "RX ring starts refused: enable set while ring_base "
                                          "or cpl_base was not 16-byte aligned (rxe_base_bad); "
                                          "the ring stays disabled, nothing is read or "
                                          "written."),
        ),
        status=(
            _s("cons", "rx_cons", "Ring position of the next RX descriptor to consume.",
               width=12),
            _s("base_bad", "rx_base_bad", "Bit 0: ring_base, bit 1: cpl_base is not 16-byte "
                                          "aligned; while either is set the ring is held "
                                          "disabled (enable taken as 0).", width=2),
        ),
    ),
    "irq_coalescer": Core(
        config=(
            Config("enable", "1: interrupts may be raised; 0: none is raised (completions are "
                             "still counted and the timers run)."),
            Config("frames", "ethtool {dir}-frames: interrupt once this many completions are "
                             "pending (1: every completion; 0: rule off)."),
            Config("usecs", "ethtool {dir}-usecs: interrupt this many ticks after the last "
                            "completion (a completion restarts it; 0: rule off)."),
            Config("abs_usecs", "Interrupt at most this many ticks after the first pending "
                                "completion (0: rule off)."),
            Config("min_interval", "Ticks between two interrupts at least (0: no limit)."),
            Config("tick_cycles", "Clock cycles per tick (0 acts as 1): the system clock in "
                                  "MHz makes ticks microseconds."),
        ),
        counters=(
            _c("irqs", "{dir}_irqs", "Interrupts raised (accepted by the MSI block)."),
            _c(IMMEDIATE, "{dir}_irq_" + IMMEDIATE, "Interrupts raised with coalescing off "
                                                    "(frames 1, or all rules 0)."),
            _c(FRAMES, "{dir}_irq_" + FRAMES, "Interrupts raised by the frames rule."),
            _c(USECS, "{dir}_irq_" + USECS, "Interrupts raised by the usecs rule."),
            _c(ABS, "{dir}_irq_" + ABS, "Interrupts raised by the abs_usecs rule."),
        ),
        status=(
            _s("pending", "{dir}_irq_pending", "Completions not yet covered by an interrupt."),
        ),
    ),
    "dma_read_arbiter": Core(
        counters=(_c("requests", "dma_rd_arb_requests", "DMA read requests of the TX and RX "
                                                        "engines taken by the DMA port."),),
        status=(_s("outstanding", "dma_rd_outstanding", "DMA read requests whose completion is "
                                                        "not yet all in."),),
    ),
    # litex_soc/nic/dma_port_adapter.py (the DMA ports on LitePCIe).
    "dma_read_adapter": Core(counters=(
        _c("requests", "dma_rd_requests", "DMA read requests taken by the read adapter."),
        _c("completions", "dma_rd_completions", "DMA read requests completed towards the "
                                                "datapath."),
        _e("errors", "dma_rd_errors", "DMA read requests completed with an error."),
        _e("rejected", "dma_rd_rejected", "DMA read requests refused without a TLP (bad "
                                          "length or address)."),
        _e("timeouts", "dma_rd_timeouts", "DMA read requests that timed out."),
        _e("dropped", "dma_rd_dropped", "PCIe completion beats thrown away (overrun, late or "
                                        "unexpected)."),
    )),
    "dma_write_adapter": Core(counters=(
        _c("writes", "dma_wr_writes", "DMA writes taken by the write adapter."),
        _c("tlps", "dma_wr_tlps", "PCIe memory write requests sent."),
        _e("rejected", "dma_wr_rejected", "DMA writes dropped (bad length or address)."),
    )),
    # LiteEth's MAC core (its own CSRs, under nic_mac_).
    "liteeth_mac": Core(
        counters=(
            _e("rx_datapath_preamble_errors", "rx_preamble_errors", "RX frames with a bad "
                                                                    "preamble."),
            _e("rx_datapath_crc_errors", "rx_crc_errors", "RX frames with a bad FCS."),
        ),
        status=(_s("preamble_crc", "mac_preamble_crc", "1: the MAC inserts and checks "
                                                       "preamble and FCS.", width=1),),
    ),
}

# CSR prefix -> (core, direction): the order of the nic_* status registers.
BLOCKS = {
    "tx_sched_": ("tx_scheduler", "tx"),
    "txq_": ("tx_queue_manager", "tx"),
    "txe_": ("tx_engine", "tx"),
    "txfifo_": ("frame_fifo", "tx"),
    "rxfifo_": ("frame_fifo", "rx"),
    "rxe_": ("rx_engine", "rx"),
    "txirq_": ("irq_coalescer", "tx"),
    "rxirq_": ("irq_coalescer", "rx"),
    "rdarb_": ("dma_read_arbiter", "dma"),
    "rdadp_": ("dma_read_adapter", "dma"),
    "wradp_": ("dma_write_adapter", "dma"),
    "mac_": ("liteeth_mac", "rx"),
}

# NICDatapath's own ports (rtl/nic/nic_datapath.py OWN_PORTS), by full port name.
DATAPATH_OWN = {
    "txq_wb_addr_valid": Config("txq_wb_addr_valid", "Sets the consumer-index writeback "
                                                     "address of a TX queue (change it only "
                                                     "while the queue is drained)."),
    "txq_wb_addr_queue": Config("txq_wb_addr_queue", _TXQ + " (>= ntxq: ignored)."),
    "txq_wb_addr": Config("txq_wb_addr", "Writeback address, 16-byte aligned: the device "
                                         "writes the queue's consumer index there (format "
                                         "TX_WB). A write with bits 3..0 not 0 is refused "
                                         "(counted in txq_err_wb_addr): the queue keeps no "
                                         "writeback address (txq_wb_bad), is not scheduled and "
                                         "its writebacks are dropped until a 16-byte aligned "
                                         "address is written."),
    "txq_wb_writes": _c("txq_wb_writes", "tx_wb_writes", "TX consumer-index writebacks "
                                                         "written."),
    "txq_wb_bad": Stat("txq_wb_bad", STATE, "tx_queues_wb_bad", "Bit q: TX queue q has no "
                                                                "writeback address: its last "
                                                                "write was refused (not "
                                                                "16-byte aligned); cleared by "
                                                                "an aligned one.", None),
    "txq_err_wb_addr": _e("txq_err_wb_addr", "tx_err_wb_addr", "TX writeback address writes "
                                                               "refused: not 16-byte aligned "
                                                               "(the queue is not scheduled, "
                                                               "txq_wb_bad)."),
    "txq_cons": Stat("txq_cons", STATE, "tx_queue_{i}_cons", "Consumer index of each TX queue, "
                                                           "32 bits per queue (queue i at bits "
                                                           "32i..): the next descriptor to "
                                                           "complete, the value its writeback "
                                                           "carries (final once drained).",
                     per="queue"),
    "txirq_vec_irqs": Stat("txirq_vec_irqs", COUNT, "tx_vec{i}_irqs", "Interrupts raised per "
                                                                      "TX vector (queue group "
                                                                      "g = queues q % ntxirq "
                                                                      "== g), 32 bits per "
                                                                      "vector (g at bits "
                                                                      "32g..).", per="vector"),
    "txirq_wb_held": _c("txirq_wb_held", "tx_irq_wb_held", "TX interrupts held until the "
                                                           "consumer-index writebacks they "
                                                           "announce were taken by the DMA "
                                                           "write port."),
}

# TXEngine: the counter of each error status (DESC_READ counts failed jobs, not frames).
TX_STATUS_COUNTER = {
    TxStatus.DESC_LEN0: "err_desc_len0",
    TxStatus.DESC_LEN: "err_desc_len",
    TxStatus.FRAME_LEN: "err_frame_len",
    TxStatus.READ: "err_read",
    TxStatus.NO_EOP: "err_no_eop",
    TxStatus.DESC_READ: "err_desc_read",
}


def counter_names(core):
    """The core's COUNTS: the names of its scalar counters, in order."""
    return tuple(s.name for s in CORES[core].counters)


def array_names(core):
    return tuple(s.name for s in CORES[core].arrays)


def _entries(core):
    c = CORES[core]
    return {e.name: e for e in c.config + c.counters + c.arrays + c.status}


def entry(prefix, name):
    """The Config or Stat of port `name` of the block `prefix` (NICDatapath's own ports
    included), its `{dir}` filled in; KeyError if the contract does not know it."""
    core, direction = BLOCKS[prefix]
    e = DATAPATH_OWN.get(prefix + name) or _entries(core)[name]
    if isinstance(e, Config):
        return Config(e.name, e.desc.format(dir=direction))
    return Stat(e.name, e.kind, e.ethtool.replace("{dir}", direction), e.desc, e.width, e.per)


def port_doc(prefix, name):
    """The description of port `name` of block `prefix`."""
    return entry(prefix, name).desc


def ethtool_name(prefix, name, i=None):
    """The ethtool -S name of a counter or status output (element i of an array)."""
    e = entry(prefix, name)
    return e.ethtool.format(i=i) if e.per else e.ethtool
