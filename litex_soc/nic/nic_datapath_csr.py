# SPDX-License-Identifier: BSD-2-Clause
#
# nic_datapath_csr.py: LiteX wrapper around the Amaranth NIC datapath (rtl/nic/nic_datapath.py):
# its configuration and counters as CSRs, its DMA ports on its host port (host_port.py: LitePCIe
# crossbar master ports, or Wishbone masters on the SoC bus), its
# MAC streams on a LiteEth MAC core, its interrupt vectors (TX queue groups, RX) as MSIs or CPU
# interrupts (the SoC's choice).
#
# What it is: instantiates the emitted NICDatapath Verilog and builds, from the datapath's flat
# port table (NICDatapath.EXPOSED, OWN_PORTS), one CSR per port or strobe group, named
# `<prefix><name>` under this module (LiteX prefixes the module name, `nic_`).
# Interfaces: the CSRs; rdadp, wradp (litex_soc/nic/dma_port_adapter.py), mac (LiteEthMACCore);
# irq_tx[g], irq_rx (the MSI lines); csr_plan() and describe() for the register map.
# Parameters: platform, host_port (host_port.py), eth_phy, build_dir,
# data_width, ntxq, ntxirq (TX interrupt vectors), max_read (MRRS), max_payload (MPS), timeout
# (DMA read timeout, cycles), module_name.
# The CSR rules and the other connections: NICDatapathCSR's docstring.

import os

from migen import Cat, ClockSignal, Instance, ResetSignal, Signal

from amaranth.back import verilog
from amaranth.hdl import Elaboratable, Shape
from amaranth.lib.wiring import Flow

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSRField, CSRStatus, CSRStorage

from liteeth.mac.core import LiteEthMACCore

from rtl.contract import registers
from rtl.nic.nic_datapath import EXPOSED, OWN_PORTS, NICDatapath

LAYOUT_TXQ, LAYOUT_TXIRQ = 16, 8
ADAPTER_COUNTERS = {p: registers.counter_names(registers.BLOCKS[p][0])
                    for p in ("rdadp_", "wradp_")}


def csr_plan(members):
    """[(csr name, [(field, port, width)], strobe port or None)] for the In ports of the
    datapath's exposed table, and [(csr name, port, width)] for its Out ports."""
    ins, outs = [], []
    for prefix, (_attr, in_names, out_names) in EXPOSED.items():
        own_in, own_out = OWN_PORTS.get(prefix, ([], []))
        names = list(in_names) + own_in
        out_names = list(out_names) + own_out
        width = {n: Shape.cast(members[prefix + n].shape).width for n in names}
        done = set()
        for n in names:
            if not n.endswith("_valid"):
                continue
            stem = n[:-len("_valid")]
            group = [c for c in names if c != n and (c == stem or c.startswith(stem + "_"))]
            fields = []
            for c in group:
                field = "value" if c == stem else c[len(stem) + 1:]
                if width[c] > 32:
                    ins.append((prefix + c, [(None, prefix + c, width[c])], None))
                else:
                    fields.append((field, prefix + c, width[c]))
            name = prefix + stem
            if stem in group and width[stem] > 32:    # the bare companion has that name
                name += "_" + "_".join(f for f, _p, _w in fields)
            ins.append((name, fields, prefix + n))
            done |= {n, *group}
        for n in names:
            if n not in done:
                ins.append((prefix + n, [(None, prefix + n, width[n])], None))
        for n in out_names:
            outs.append((prefix + n, prefix + n, Shape.cast(members[prefix + n].shape).width))
    return ins, outs


def _prefix(name):
    return next(p for p in sorted(EXPOSED, key=len, reverse=True) if name.startswith(p))


def describe(port):
    """The description of a nic_* register's port (a datapath port, an adapter counter
    `rdadp_requests`, a LiteEth MAC CSR `mac_preamble_crc`) from the contract: the port's, a
    counter's ethtool -S name, and where the port comes from."""
    prefix = max((p for p in registers.BLOCKS if port.startswith(p)), key=len)
    name = port[len(prefix):]
    e = registers.entry(prefix, name)
    text = e.desc
    if isinstance(e, registers.Stat) and e.kind != registers.STATE:
        eth = e.ethtool.replace("{i}", "<i>")
        text += f" Counter, wraps (ethtool -S {eth})."
    core = registers.BLOCKS[prefix][0]
    if port in registers.DATAPATH_OWN:
        where = "rtl/nic/nic_datapath.py"
    elif prefix in EXPOSED:
        where = f"rtl/nic/{core}.py"
    elif core == "liteeth_mac":
        where = "LiteEth's MAC core"
    else:
        where = "litex_soc/nic/dma_port_adapter.py"
    return f"{text} [``{port}``, {where}]"


def _port_table(**params):
    """The port table of a NICDatapath built only for its port widths (never elaborated)."""
    core = NICDatapath(**params)
    for obj in [core, *vars(core).values()]:
        for o in obj if isinstance(obj, list) else [obj]:
            if isinstance(o, Elaboratable):
                o._MustUse__used = True
    return core.signature.members


def _widest(a, b):
    """Two csr_plan()s of the same registers, with each register and field the wider of the
    two."""
    (ins_a, outs_a), (ins_b, outs_b) = a, b
    ins = [(name, [(f, p, max(w, wb)) for (f, p, w), (_f, _p, wb) in zip(fa, fb)], s)
           for (name, fa, s), (_n, fb, _s) in zip(ins_a, ins_b, strict=True)]
    outs = [(name, p, max(w, wb))
            for (name, p, w), (_n, _p, wb) in zip(outs_a, outs_b, strict=True)]
    return ins, outs


class NICDatapathCSR(LiteXModule):
    """The NIC datapath in a LiteX SoC.

    CSRs, one per port or strobe group of the datapath's flat port table (csr.h has them all,
    nothing is hand-copied):

    - a strobe group: an In port `<stem>_valid` of a prefix with its companion In ports
      `<stem>_<field>` (and `<stem>` itself, as field `value`) of at most 32 bits: one CSRStorage
      `<prefix><stem>` with those fields; writing it is the strobe (one pulse, the fields presented
      in the same cycle, both through a register: the datapath sees the write a cycle later). A
      companion wider than 32 bits (an address) is its own CSRStorage `<prefix><stem>_<field>` (or
      `<prefix><stem>` for the bare one, the strobe CSR then being `<prefix><stem>_<its fields>`),
      written first: e.g. txe_base_addr then txe_base (field queue: the strobe); txq_wb_addr then
      txq_wb_addr_queue.
    - every other In port: a CSRStorage of its width (txfifo_max_len, rxe_ring_base, ...).
    - every Out port: a CSRStatus of its width (counters wrap at 32 bits).

    Every CSR's and field's description is the port's in rtl/contract/registers.py (taken from the
    cores' docstrings; counters with their ethtool -S name), so csr.h/csr.json and
    docs/register_map.md carry them.

    Other connections
    -----------------
    DMA
        rd_* -> the host port's read adapter, wr_* -> its write adapter (host_port.py: on
        PCIe, DMAReadAdapter / DMAWriteAdapter each on its own crossbar master port with the
        PHY's id as requester ID; on the SoC bus, Wishbone masters). Their counters are CSRs
        too: rdadp_<counter>, wradp_<counter> (ADAPTER_COUNTERS, from the contract).
    MAC
        mac_tx/mac_rx <-> LiteEthMACCore(phy, dw=data_width) sink/source: keep (all ones but on the
        last beat, bytes from lane 0) <-> LiteEth's last_be (one-hot, the last valid byte of the
        last beat); an RX frame with any error bit set is marked mac_rx_error on its last beat (the
        RX FrameFIFO drops it). LiteEth's RX source has a ready; the datapath's RX side has none
        (it never back-pressures), so ready is tied to 1; RX passes one register stage on its way
        in (one cycle). The MAC pads TX frames to 60 bytes and appends the FCS; RX frames arrive
        without FCS.
    IRQ
        irq_valid[g] (TX queue group g < ntxirq) and [ntxirq] (RX) are irq_tx[g] and irq_rx, the
        SoC's MSI lines `NIC_TX` (g 0), `NIC_TX1`.. and `NIC_RX` (irq_ready tied to 1: LitePCIe's
        MSI block latches a pulse).
    """

    def port(self, name):
        """The signal on the datapath's output port `name` (what its CSR shows)."""
        return self._ports[f"o_{name}"]

    def __init__(self, platform, host_port, eth_phy, build_dir, data_width=128, ntxq=4,
                 max_read=512, max_payload=256, timeout=2**20, module_name="nic_datapath",
                 ntxirq=1):
        core = NICDatapath(data_width=data_width, ntxq=ntxq, max_read=max_read,
                           max_payload=max_payload, ntxirq=ntxirq)
        self.core = core
        members = core.signature.members
        ports = dict(i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"))
        self._ports = ports

        # -- CSRs --------------------------------------------------------------------------------
        # Laid out for the largest configuration (LAYOUT_TXQ queues, LAYOUT_TXIRQ vectors, each
        # width the wider of the two data widths'), so every register and field sits at the
        # same offset in every build; bits a build does not have read 0, writes ignore them.
        if ntxq > LAYOUT_TXQ or ntxirq > LAYOUT_TXIRQ:
            raise ValueError(f"NICDatapathCSR: at most {LAYOUT_TXQ} TX queues and "
                             f"{LAYOUT_TXIRQ} TX vectors (the register layout's room)")
        plans = [csr_plan(_port_table(data_width=w, ntxq=LAYOUT_TXQ, max_read=max_read,
                                      max_payload=max_payload, ntxirq=LAYOUT_TXIRQ))
                 for w in (64, 128)]

        def port_width(port):
            return Shape.cast(members[port].shape).width

        ins, outs = _widest(*plans)
        # The wide companions of a strobe (own registers, written before the strobe's).
        plain = [fields[0][1] for _n, fields, st in ins if st is None]
        strobe_of = {}
        for name, _fields, st in ins:
            if st is not None:
                stem = st[:-len("_valid")]
                strobe_of.update({p: name for p in plain if p == stem or p.startswith(stem + "_")})
        for csr_name, fields, strobe in ins:
            if strobe is None:
                (_f, port, width), = fields
                desc = describe(port)
                if port in strobe_of:
                    desc += f" Write it before ``{strobe_of[port]}``, whose write takes it."
                csr = CSRStorage(width, name=csr_name, description=desc)
                ports[f"i_{port}"] = csr.storage[:port_width(port)]
            else:
                wide = [f"``{n}``" for n, st in strobe_of.items() if st == csr_name]
                csr = CSRStorage(name=csr_name, description=describe(strobe) + " Writing this "
                                 "register is the strobe: its fields" +
                                 (f" and {', '.join(wide)}" if wide else "") +
                                 " are taken together.",
                                 fields=[CSRField(f, size=w, description=describe(p))
                                         for f, p, w in fields])
                # The strobe and its fields enter the datapath through registers (one cycle
                # after the write, every strobe alike, so writes keep their order): the CSR
                # bank's outputs are far from the cores they set up.
                for f, port, _w in fields:
                    q = Signal(port_width(port), name=f"{port}_q")
                    self.sync += q.eq(getattr(csr.fields, f)[:port_width(port)])
                    ports[f"i_{port}"] = q
                strobe_q = Signal(name=f"{strobe}_q")
                self.sync += strobe_q.eq(csr.re)
                ports[f"i_{strobe}"] = strobe_q
            setattr(self, csr_name, csr)
        for csr_name, port, width in outs:
            csr = CSRStatus(width, name=csr_name, description=describe(port))
            status = Signal(port_width(port), name=f"{csr_name}_port")
            ports[f"o_{port}"] = status
            self.comb += csr.status.eq(status)
            setattr(self, csr_name, csr)

        # -- DMA ---------------------------------------------------------------------------------
        # The engines split at the host port's MRRS and MPS.
        ports.update(i_mrrs=host_port.mrrs(max_read), i_mps=host_port.mps(max_payload))
        self.rdadp = rd = host_port.read_adapter(data_width, max_read, timeout)
        self.wradp = wr = host_port.write_adapter(data_width, max_payload)
        for name, m in members.items():
            if name.startswith("rd_"):
                ports[f"{'i' if m.flow == Flow.In else 'o'}_{name}"] = getattr(rd, name)
            elif name.startswith("wr_"):
                ports[f"{'i' if m.flow == Flow.In else 'o'}_{name}"] = getattr(wr, name)
        for prefix, counters in ADAPTER_COUNTERS.items():
            adapter = rd if prefix == "rdadp_" else wr
            for c in counters:
                csr = CSRStatus(32, name=prefix + c, description=describe(prefix + c))
                self.comb += csr.status.eq(getattr(adapter, c))
                setattr(self, prefix + c, csr)

        # -- MAC ---------------------------------------------------------------------------------
        B = data_width // 8
        self.mac = mac = LiteEthMACCore(eth_phy, dw=data_width)
        for csr in (getattr(mac, "preamble_crc", None),
                    getattr(mac.rx_datapath, "preamble_errors", None),
                    getattr(mac.rx_datapath, "crc_errors", None)):
            if csr is not None:             # LiteEth's CSRs, described from the contract
                csr.description = describe("mac_" + ("" if csr.name == "preamble_crc" else
                                                     "rx_datapath_") + csr.name)
        tx_keep, rx_keep = Signal(B), Signal(B)
        # RX enters the datapath through registers: LiteEth's RX source is its clock-domain
        # FIFO's block RAM read (clock to output about four LUT levels on the ECP5), and the
        # RX FIFO counts each beat's bytes into the frame's length and compares it with max_len
        # before its own input register.
        rx_valid, rx_last, rx_error = Signal(), Signal(), Signal()
        rx_data, rx_keep_q = Signal(8 * B), Signal(B)
        self.sync += [rx_valid.eq(mac.source.valid), rx_data.eq(mac.source.data),
                      rx_keep_q.eq(rx_keep), rx_last.eq(mac.source.last),
                      rx_error.eq(mac.source.last & (mac.source.error != 0))]
        ports.update(o_mac_tx_valid=mac.sink.valid, i_mac_tx_ready=mac.sink.ready,
                     o_mac_tx_data=mac.sink.data, o_mac_tx_keep=tx_keep,
                     o_mac_tx_last=mac.sink.last,
                     i_mac_rx_valid=rx_valid, i_mac_rx_data=rx_data,
                     i_mac_rx_keep=rx_keep_q, i_mac_rx_last=rx_last,
                     i_mac_rx_error=rx_error)
        # keep (a run of ones from lane 0) -> last_be (its top bit, on the last beat only)
        self.comb += [
            mac.sink.last_be.eq(Cat(tx_keep[i] & ~(tx_keep[i + 1] if i + 1 < B else 0)
                                    for i in range(B)) & Cat(*([mac.sink.last] * B))),
            mac.sink.error.eq(0),
            mac.source.ready.eq(1),
        ]
        rx_last_keep = Signal(B)
        for i in range(B):                        # ones up to and including the last_be bit
            self.comb += rx_last_keep[i].eq(mac.source.last_be[i:] != 0)
        self.comb += rx_keep.eq(Cat(*[~mac.source.last | rx_last_keep[i] for i in range(B)]))

        # -- interrupts --------------------------------------------------------------------------
        self.irq_tx = [Signal(name=f"irq_tx{g}") for g in range(ntxirq)]
        self.irq_rx = Signal()
        irq_valid = Signal(ntxirq + 1)
        ports.update(o_irq_valid=irq_valid, i_irq_ready=(1 << (ntxirq + 1)) - 1)

        # -- for the bus analyzer ----------------------------------------------------------------
        self.txq_in_flight = Signal(port_width("txq_in_flight"))
        self.txe_desc_rd = Signal()
        ports.update(o_txq_in_flight=self.txq_in_flight, o_txe_desc_rd=self.txe_desc_rd)
        self.comb += [irq.eq(irq_valid[g]) for g, irq in enumerate(self.irq_tx)]
        self.comb += self.irq_rx.eq(irq_valid[ntxirq])

        # -- Verilog -----------------------------------------------------------------------------
        os.makedirs(build_dir, exist_ok=True)
        path = os.path.join(build_dir, f"{module_name}.v")
        with open(path, "w") as f:
            f.write(verilog.convert(core, name=module_name, emit_src=False))
        platform.add_source(path)
        self.specials += Instance(module_name, **ports)
