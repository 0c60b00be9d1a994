# SPDX-License-Identifier: BSD-2-Clause
"""The NIC's contract: the one Python source of the names, layouts, enums and counters that the
gateware, the host code and the documentation share. Nothing is built at import: coalesce is
pure Python, formats and registers use amaranth.lib.data/enum only (no elaboration); gen_c
writes sw/include/nic_contract.h from them."""
