# SPDX-License-Identifier: BSD-2-Clause
# Root pytest plugin: lines a test asks to show in the session's summary (record_property with a
# "summary" key), also from pytest-xdist workers, whose own output is not shown. The CLI fuzz
# test prints its seed and case count this way.

_SUMMARY = []


def pytest_runtest_logreport(report):
    if report.when == "call":
        _SUMMARY.extend(v for k, v in report.user_properties if k == "summary")


def pytest_terminal_summary(terminalreporter):
    for line in _SUMMARY:
        terminalreporter.write_line(line)
