# SPDX-License-Identifier: BSD-2-Clause
# bench: the measurement suite behind `make bench`. One module per seed paper under
# experiments/ (its jobs and its report section), the job runner (jobs.py), the vendored papers'
# tables (papers/, papers.py), fits (fit.py), plots (plot.py) and the report (report.py).
# Run: python -m bench --help.
