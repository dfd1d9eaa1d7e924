# SPDX-License-Identifier: MIT
"""Loading, filtering and summarizing the lab's output: results (JSON Lines) and timelines (CSV).

Every function raises ToolError with one line naming what was wrong and what is accepted.
"""
import json
import os

import pandas as pd

from . import ToolError

# The fields of bench/output.cpp to_json() that the tools read.
RESULT_FIELDS = ["ds", "scheme", "alloc", "threads", "trial", "seconds", "ops", "throughput",
                 "peak_rss_bytes", "retired", "freed", "pending_peak", "free_ns", "cpus"]
TIMELINE_FIELDS = ["ds", "scheme", "alloc", "threads", "trial", "thread", "event", "start_ns",
                   "end_ns", "value"]
EVENTS = ["batch_free", "slow_free", "epoch_advance", "epoch_seen", "token_receipt"]
# One panel of a results plot (and one section of a report): a container, an allocator, a
# workload (key range, insert and delete percentages, push-pop pairs, operations per region,
# prefilled or not) and a number of stalled threads (--stall).
GROUP = ["ds", "alloc", "keys", "insert", "delete", "pairs", "region_ops", "prefill", "stall"]
# One point of a results plot: the trials of a point are summarized together.
POINT = GROUP + ["scheme", "threads"]
# Filters that take integers.
INTEGER_FILTERS = ("threads", "trial", "stall", "keys", "insert", "delete")


def _open(path, what):
    if not os.path.isfile(path):
        raise ToolError(f"{what}: no such file '{path}'")
    return open(path, encoding="utf-8")


def load_results(path):
    """The trials of a JSON Lines results file, one row per trial."""
    rows = []
    with _open(path, "results") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise ToolError(f"{path}:{number}: not a JSON object ({e.msg}); expected the JSON "
                                "Lines of reclaim-bench --out") from None
            if not isinstance(row, dict):
                raise ToolError(f"{path}:{number}: not a JSON object; expected the JSON Lines of "
                                "reclaim-bench --out")
            missing = [k for k in RESULT_FIELDS if k not in row]
            if missing:
                raise ToolError(f"{path}:{number}: missing field(s) {', '.join(missing)}; expected "
                                "the JSON Lines of reclaim-bench --out")
            rows.append(row)
    if not rows:
        raise ToolError(f"{path}: no trials (empty file); expected the JSON Lines of "
                        "reclaim-bench --out")
    df = pd.DataFrame(rows)
    # Lines written before --stall, --signals and wide_cas existed: no stalled thread, no signal, no
    # double-width CAS counted. (keys, insert and delete are always written by the lab; 0 stands
    # for unknown.)
    for column in ("stall", "signals", "keys", "insert", "delete", "wide_cas"):
        if column not in df:
            df[column] = 0
        df[column] = df[column].fillna(0).astype(int)
    # Lines written before --pairs and --region-ops existed: a random mix, a region per operation.
    df["pairs"] = df["pairs"].fillna(False).astype(bool) if "pairs" in df else False
    df["region_ops"] = df["region_ops"].fillna(1).astype(int) if "region_ops" in df else 1
    df["prefill"] = df["prefill"].fillna(True).astype(bool) if "prefill" in df else True
    return df


def load_timeline(path):
    """The events of a timeline CSV (reclaim-bench --timeline), one row per event."""
    with _open(path, "timeline") as f:
        try:
            df = pd.read_csv(f)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
            raise ToolError(f"{path}: not a timeline CSV ({str(e).splitlines()[0]}); expected the "
                            f"header {','.join(TIMELINE_FIELDS)}") from None
    missing = [k for k in TIMELINE_FIELDS if k not in df.columns]
    if missing:
        raise ToolError(f"{path}: missing column(s) {', '.join(missing)}; expected the header "
                        f"{','.join(TIMELINE_FIELDS)}")
    unknown = sorted(set(df["event"]) - set(EVENTS))
    if unknown:
        raise ToolError(f"{path}: unknown event '{unknown[0]}' (accepted: {', '.join(EVENTS)})")
    for column in ["threads", "trial", "thread", "start_ns", "end_ns", "value"]:
        if not pd.api.types.is_integer_dtype(df[column]):
            raise ToolError(f"{path}: column {column} holds a value that is not an integer")
    if df.empty:
        raise ToolError(f"{path}: no events (header only)")
    return df


def as_list(value):
    """A filter value as a list: None stays None; a comma string or a scalar becomes a list."""
    if value is None:
        return None
    if isinstance(value, str):
        return [v for v in value.split(",") if v]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def select(df, path, **filters):
    """The rows of df matching every filter (name: value or list of values; None = any)."""
    described = []
    for column, wanted in filters.items():
        wanted = as_list(wanted)
        if wanted is None:
            continue
        if column in INTEGER_FILTERS:
            try:
                wanted = [int(v) for v in wanted]
            except ValueError:
                raise ToolError(f"--{column}: '{','.join(map(str, wanted))}' is not a list of "
                                "integers") from None
        described.append(f"{column}={','.join(map(str, wanted))}")
        kept = df[df[column].isin(wanted)]
        if kept.empty:
            raise ToolError(f"{path}: no rows match {' '.join(described)} (present: {column} "
                            f"{present(df, column)})")
        df = kept
    return df


def present(df, column):
    """The values of a column, sorted, as text."""
    return ", ".join(str(v) for v in sorted(df[column].unique()))


def summarize(df, value="throughput"):
    """Per POINT: median, min and max of value over trials, and n."""
    g = df.groupby(POINT, sort=True)[value]
    out = g.agg(median="median", min="min", max="max", n="count").reset_index()
    return out


def only(df, column, path, option):
    """The single value of a column in df, or a ToolError asking to choose with option."""
    values = sorted(df[column].unique())
    if len(values) != 1:
        raise ToolError(f"{path}: holds several {column} values ({', '.join(map(str, values))}); "
                        f"choose one with {option}")
    return values[0]
