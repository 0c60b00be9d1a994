# SPDX-License-Identifier: BSD-2-Clause
#
# formats.py: the host-memory formats of the NIC datapath (descriptors, writebacks, completion
# records) as amaranth.lib.data layouts, and their enums (amaranth.lib.enum).
#
# What it is: the one definition the cores (rtl/nic/tx_engine.py, rx_engine.py,
# nic_datapath.py), the C header generator (gen_c.py -> sw/include/nic_contract.h) and the
# Python driver model (nicmodels/nic_driver.py) take these formats from. Every format
# is 16 bytes, little-endian: bit i of a layout is bit i % 8 of byte i // 8 in host memory, so a
# field's byte offset is its bit offset / 8 (every field is byte-aligned).
#
# Interfaces: TX_DESC, TX_WB, RX_DESC, RX_CPL (data.StructLayout); TxDescFlags (IntFlag),
# TxStatus (IntEnum, TXEngine's done_status), RxStatus (IntEnum, RX_CPL.status), TxSchedMode
# (IntEnum, TXScheduler's mode); RECORD_BYTES (16), flag_bit(flag); FORMATS and
# ENUMS (name -> (object, description, {member/field: description})) for the generators.
# Imports amaranth.lib only (no elaboration, nothing built).

from amaranth.lib import data, enum


class TxDescFlags(enum.IntFlag, shape=16):
    EOP = 1 << 0


class TxStatus(enum.IntEnum, shape=3):
    OK = 0
    DESC_LEN0 = 1
    DESC_LEN = 2
    FRAME_LEN = 3
    READ = 4
    NO_EOP = 5
    DESC_READ = 6


class RxStatus(enum.IntEnum, shape=8):
    OK = 0
    TOO_BIG = 1
    BAD_ADDR = 2


class TxSchedMode(enum.IntEnum, shape=2):
    RR = 0
    SP = 1
    WRR = 2


TX_DESC = data.StructLayout({"addr": 64, "len": 16, "flags": TxDescFlags, "reserved": 32})
TX_WB = data.StructLayout({"cons": 16, "errors": 16, "last_error": 8, "reserved": 88})
RX_DESC = data.StructLayout({"addr": 64, "len": 16, "reserved": 48})
RX_CPL = data.StructLayout({"len": 16, "index": 16, "status": RxStatus, "queue": 8,
                            "reserved": 16, "timestamp": 64})
RECORD_BYTES = 16               # every format: descriptor rings and completion rings step by it


def flag_bit(flag):
    """The bit number of a one-bit flag (TxDescFlags.EOP -> 0)."""
    if not flag or flag & (flag - 1):
        raise ValueError(f"{flag!r} is not a single flag")
    return int(flag).bit_length() - 1

FORMATS = {
    "tx_desc": (TX_DESC, "TX descriptor, one per buffer of a frame, in TX ring q at its ring base "
                "+ 16 * ring position (rtl/nic/tx_engine.py). A frame is the run of descriptors "
                "up to and including one with EOP (scatter-gather).", {
                    "addr": "buffer address (any byte alignment)",
                    "len": "buffer length in bytes, 1..max_frame (0 is an error: DESC_LEN0)",
                    "flags": "flags",
                    "reserved": "ignored by the device (write 0)",
                }),
    "tx_wb": (TX_WB, "TX consumer-index writeback, written by the device to queue q's writeback "
              "address after descriptors complete (rtl/nic/nic_datapath.py).", {
                  "cons": "consumer index: the ring position of the next descriptor to complete "
                          "(the ones before it are done; 12 bits, zero-extended)",
                  "errors": "errored frames of the queue so far (the low 16 bits of its "
                            "tx_queue_<i>_errors counter, nic_txe_q_errors; wraps): the frames "
                            "the device dropped with a status other than OK, any cause",
                  "last_error": "the TxStatus of the queue's latest errored frame (0: none yet); "
                                "meaningful when errors has moved",
                  "reserved": "written as 0",
              }),
    "rx_desc": (RX_DESC, "RX descriptor: a buffer posted on the RX ring at its ring base + 16 * "
                "ring position (rtl/nic/rx_engine.py).", {
                    "addr": "buffer address, 16-byte aligned (else the frame is dropped with "
                            "status BAD_ADDR)",
                    "len": "buffer length in bytes: holds a frame of roundup4(length) bytes",
                    "reserved": "ignored by the device",
                }),
    "rx_cpl": (RX_CPL, "RX completion record, written by the device at the completion ring base "
               "+ 16 * completion index, one per descriptor a frame consumed "
               "(rtl/nic/rx_engine.py).", {
                   "len": "frame length in bytes (0 unless status is OK)",
                   "index": "ring position of the descriptor whose buffer holds the frame",
                   "status": "how the frame was handled",
                   "queue": "RX queue (0)",
                   "reserved": "written as 0",
                   "timestamp": "device cycle (free-running, 0 after reset) in which the frame's "
                                "first beat was accepted",
               }),
}

ENUMS = {
    "tx_desc_flags": (TxDescFlags, "TX descriptor flags (TX_DESC.flags).", {
        "EOP": "end of packet: the last descriptor of a frame",
    }),
    "tx_status": (TxStatus, "Status of a TX frame (TXEngine done_status): the first error "
                  "detected in the frame; each error status has its counter (txe_err_*).", {
                      "OK": "sent",
                      "DESC_LEN0": "a descriptor of length 0",
                      "DESC_LEN": "a descriptor longer than max_frame",
                      "FRAME_LEN": "the frame longer than max_frame",
                      "READ": "a payload read failed",
                      "NO_EOP": "the queue was disabled with the frame open (no EOP posted)",
                      "DESC_READ": "a descriptor fetch failed",
                  }),
    "rx_status": (RxStatus, "Status of an RX completion record (RX_CPL.status).", {
        "OK": "the frame is in the buffer",
        "TOO_BIG": "the frame does not fit the buffer: nothing written, the buffer consumed",
        "BAD_ADDR": "the buffer address is not 16-byte aligned: nothing written, the buffer "
                    "consumed",
    }),
    "tx_sched_mode": (TxSchedMode, "TX scheduling policy (the nic_tx_sched_mode register; 3 "
                      "acts as RR).", {
                          "RR": "round-robin",
                          "SP": "strict priority (tx_sched_prio), round-robin within a level",
                          "WRR": "weighted round-robin (tx_sched_weight frames in a row)",
                      }),
}

for _layout, _doc, _fields in FORMATS.values():
    assert _layout.size == 8 * RECORD_BYTES and set(_fields) == {n for n, _ in _layout}
