# SPDX-License-Identifier: MIT
"""reclaim_tools: plots and reports from the lab's output (bench/README.md).

What: reads what `reclaim-bench` writes -- its JSON Lines results (one object per trial, the fields
of bench/output.cpp `to_json()`), its timeline CSV (`--timeline FILE`) and the experiment files
(`experiments/NAME.toml`) -- and draws the figures of the papers the project reproduces: throughput
against threads, original against amortized free, paper 001's timeline graphs and garbage per
epoch, peak memory; `experiment` draws every plot of an experiment file and writes a one-page
Markdown report.

When to use: after a run of the lab, `python -m reclaim_tools COMMAND ...` with PYTHONPATH=tools (or
the package installed from tools/pyproject.toml). `make bench` draws the default comparison.

What it bounds: numbers are summaries over trials, never single trials: the median with the minimum
and maximum as error bars (compare schemes within one run, quote ratios: docs/results.md).

Differences from the paper: paper 001's timeline graphs show a representative window of a trial;
ours show the whole trial of the selected run, times in milliseconds since the trial's measured
start.

Bad input (missing file, malformed line, no rows matching the filters, unknown kind) is a
ToolError: one line on stderr, exit status 2, and no output file written.
"""


class ToolError(Exception):
    """Bad input: reported as one line and exit status 2 by the command line."""
