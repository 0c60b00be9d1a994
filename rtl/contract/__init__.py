"""The NIC's contract: the one Python source of the names, layouts, enums and counters that the
gateware, the host code and the documentation share. Pure Python at import (no Amaranth)."""
