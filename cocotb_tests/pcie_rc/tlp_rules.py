# SPDX-License-Identifier: BSD-2-Clause
#
# tlp_rules.py: TlpRules, a checker of the PCIe rules for every TLP an endpoint sends, beyond
# what cocotbext-pcie's Tlp.check() and RootComplex look at. Pure Python (cocotbext-pcie Tlp
# objects), no simulator: test_tlp_rules.py tests it with hand-built TLPs.
#
# Interfaces: TlpRules(ids, mps, mrrs): ids() -> the PcieId the RC assigned, mps() / mrrs() ->
# bytes now in force; host_request(tlp) for every request the host sends the endpoint (so its
# completions can be checked); device_tlp(tlp) for every TLP the endpoint sends;
# host_completion(tlp) for every completion the host sends it (releases read tags).
# violations: [str], one readable message per broken rule; counts: TLPs seen per kind; bytes:
# bytes the endpoint wrote (MWr payload) and requested (MRd length).
# Rules (PCIe Base 3.0 2.2): the adapter's stream framing errors (tlp.framing) and as many
# dwords on the stream as header + payload (tlp.wire_dws); MWr payload <= MPS; MRd length <=
# MRRS; no request crosses 4 KiB; 3DW header below 4 GiB; byte enables (length 1: last BE 0;
# length > 1: both nonzero and, but for QW-aligned length 2, contiguous); read tags unique
# among outstanding reads; requester / completer ID = the assigned one; completions answer an
# outstanding host request (tag, ID), with byte count, lower address and length as 2.2.9 and
# 2.3.1.1 give them for the request's first/last BE (zero-length read: byte count 1, lower
# address bits 1:0 = 00).

from cocotbext.pcie.core.tlp import CplStatus, TlpType

MRD = {TlpType.MEM_READ, TlpType.MEM_READ_64}
MWR = {TlpType.MEM_WRITE, TlpType.MEM_WRITE_64}
CPL = {TlpType.CPL, TlpType.CPL_DATA}
FOUR_DW = {TlpType.MEM_READ_64, TlpType.MEM_WRITE_64}


def first_be_offset(fbe):
    """Byte offset of the first enabled byte of the first dword (0 for BE 0000)."""
    for k in range(4):
        if fbe >> k & 1:
            return k
    return 0


def be_byte_count(length, fbe, lbe):
    """Byte count of a read request's completion (2.3.1.1, table 2-36/2-37)."""
    if length == 1:
        if fbe == 0:
            return 1
        hi = max(k for k in range(4) if fbe >> k & 1)
        return hi - first_be_offset(fbe) + 1
    last = max(k for k in range(4) if lbe >> k & 1) if lbe else -1
    return (length - 2) * 4 + (4 - first_be_offset(fbe)) + last + 1


def _contiguous_first(be):
    return be in (0xF, 0xE, 0xC, 0x8)


def _contiguous_last(be):
    return be in (0xF, 0x7, 0x3, 0x1)


class TlpRules:
    def __init__(self, ids, mps, mrrs):
        self.ids, self.mps, self.mrrs = ids, mps, mrrs
        self.violations = []
        self.counts = {"mwr": 0, "mrd": 0, "cpl": 0, "other": 0}
        self.bytes = {"mwr": 0, "mrd": 0}      # payload written, bytes requested
        self.dev_reads = {}     # tag -> (request, bytes still to come) for the device's reads
        self.host_reads = {}    # (requester id, tag) -> request, for the host's reads

    def _bad(self, tlp, msg):
        self.violations.append(f"{msg}: {tlp!r}")

    # --- what the host sends -----------------------------------------------------------------

    def host_request(self, tlp):
        if tlp.fmt_type in MRD:
            self.host_reads[(int(tlp.requester_id), tlp.tag)] = tlp

    def host_completion(self, tlp):
        req = self.dev_reads.get(tlp.tag)
        if req is None:
            return
        if tlp.status != CplStatus.SC or tlp.fmt_type == TlpType.CPL:
            del self.dev_reads[tlp.tag]
        elif tlp.byte_count <= tlp.length * 4 - (tlp.lower_address & 3):
            del self.dev_reads[tlp.tag]

    # --- what the device sends ---------------------------------------------------------------

    def device_tlp(self, tlp):
        t = tlp.fmt_type
        for f in getattr(tlp, "framing", ()):
            self._bad(tlp, f"stream framing: {f}")
        want = tlp.get_header_size_dw() + (tlp.length if tlp.has_data() else 0)
        wire = getattr(tlp, "wire_dws", want)
        if wire != want:
            self._bad(tlp, f"{wire} dwords on the stream for a TLP of {want} (header "
                      f"{tlp.get_header_size_dw()}, length {tlp.length})")
        if t in MWR or t in MRD:
            self._request(tlp)
        elif t in CPL:
            self.counts["cpl"] += 1
            self._completion(tlp)
        else:
            self.counts["other"] += 1
            self._bad(tlp, f"unexpected TLP type {t}")

    def _request(self, tlp):
        rd = tlp.fmt_type in MRD
        self.counts["mrd" if rd else "mwr"] += 1
        nbytes = tlp.length * 4
        self.bytes["mrd" if rd else "mwr"] += nbytes
        if tlp.requester_id != self.ids():
            self._bad(tlp, f"requester ID {tlp.requester_id} is not the assigned {self.ids()}")
        if rd and nbytes > self.mrrs():
            self._bad(tlp, f"read request of {nbytes} B > MRRS {self.mrrs()}")
        if not rd and nbytes > self.mps():
            self._bad(tlp, f"write payload of {nbytes} B > MPS {self.mps()}")
        if (tlp.address & 0xFFF) + nbytes > 0x1000:
            self._bad(tlp, f"request at {tlp.address:#x} + {nbytes} B crosses a 4 KiB boundary")
        if tlp.fmt_type in FOUR_DW and tlp.address >> 32 == 0:
            self._bad(tlp, "4DW header for an address below 4 GiB")
        if tlp.address & 3:
            self._bad(tlp, f"address {tlp.address:#x} not dword aligned")
        fbe, lbe = tlp.first_be, tlp.last_be
        if tlp.length == 1:
            if lbe != 0:
                self._bad(tlp, f"length 1 with last BE {lbe:#x} (must be 0)")
        else:
            if fbe == 0 or lbe == 0:
                self._bad(tlp, f"length {tlp.length} with first/last BE {fbe:#x}/{lbe:#x} "
                          "(both must be nonzero)")
            qw_aligned_2 = tlp.length == 2 and tlp.address & 7 == 0
            if fbe == 0 or lbe == 0 or qw_aligned_2:
                pass
            elif not (_contiguous_first(fbe) and _contiguous_last(lbe)):
                self._bad(tlp, f"non-contiguous byte enables {fbe:#x}/{lbe:#x} for length "
                          f"{tlp.length} at {tlp.address:#x}")
        if rd:
            if tlp.tag in self.dev_reads:
                self._bad(tlp, f"tag {tlp.tag} already used by an outstanding read")
            self.dev_reads[tlp.tag] = tlp
        elif nbytes and len(tlp.data) != nbytes:
            self._bad(tlp, f"payload {len(tlp.data)} B for length {tlp.length}")

    def _completion(self, tlp):
        if tlp.completer_id != self.ids():
            self._bad(tlp, f"completer ID {tlp.completer_id} is not the assigned {self.ids()}")
        key = (int(tlp.requester_id), tlp.tag)
        req = self.host_reads.pop(key, None)
        if req is None:
            self._bad(tlp, f"completion for no outstanding host read (requester "
                      f"{tlp.requester_id}, tag {tlp.tag})")
            return
        if tlp.status != CplStatus.SC:
            if tlp.fmt_type != TlpType.CPL:
                self._bad(tlp, f"{tlp.status.name} completion with data")
            return
        if tlp.fmt_type != TlpType.CPL_DATA:
            self._bad(tlp, "successful read completion without data")
            return
        bc = be_byte_count(req.length, req.first_be, req.last_be)
        la = (req.address + first_be_offset(req.first_be)) & 0x7F
        if tlp.byte_count != bc:
            self._bad(tlp, f"byte count {tlp.byte_count}, the request's BEs "
                      f"{req.first_be:#x}/{req.last_be:#x} length {req.length} give {bc}")
        if tlp.lower_address != la:
            self._bad(tlp, f"lower address {tlp.lower_address:#x}, the request at "
                      f"{req.address:#x} BE {req.first_be:#x} gives {la:#x}")
        # One completion for the whole request (an MMIO read is far below any RCB split).
        if tlp.length != req.length:
            self._bad(tlp, f"completion length {tlp.length} DW for a {req.length} DW read")
