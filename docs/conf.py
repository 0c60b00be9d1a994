# SPDX-License-Identifier: BSD-2-Clause
#
# conf.py: Sphinx configuration of the manual (make docs: build/docs/html/index.html). The
# pages are Markdown (myst-parser); docs/gen_pages.py writes the generated ones into
# docs/_generated/ before Sphinx reads the sources. tests/test_docs.py builds it with -W.

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_pages  # noqa: E402

gen_pages.write_all()

project = "open FPGA NIC"
copyright = "the open FPGA NIC authors, BSD-2-Clause"
extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
# docs/experiments.md is read by gen_pages.py, one page per date.
exclude_patterns = ["experiments.md"]
myst_heading_anchors = 3
# Indented blocks are commands and their output, not Python.
highlight_language = "none"
html_theme = "alabaster"
html_theme_options = {"page_width": "1100px", "sidebar_width": "260px"}
html_static_path = []
