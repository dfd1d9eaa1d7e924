# SPDX-License-Identifier: MIT
"""The plots. Each draw_* function selects its rows (raising ToolError when none match), draws with
matplotlib's Agg backend and writes PNG files atomically (a temporary file renamed into place), so
that bad input never leaves a half-written PNG. Each returns the paths it wrote.

The series behind the timeline plots (garbage over time, garbage per epoch) are separate functions
so that the tests can check their numbers.
"""
import os
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FixedLocator, MaxNLocator, NullLocator  # noqa: E402

from . import ToolError  # noqa: E402
from .data import GROUP, as_list, only, present, select, summarize  # noqa: E402

MEBI = 1024.0 * 1024.0
# Paper 001 compares Token-EBR's amortized variant with its periodic variant, not with a plain
# "token": the one pairing that the name does not give.
AF_PAIRED = {"token_af": "token_periodic"}
VARIANTS = [("original", "original"), ("af", "amortized free (_af)"),
            ("afa", "adaptive amortized free (_afa)")]
FIGURE_DPI = 120


def af_variant(scheme):
    """(base scheme, variant) of a scheme name: X -> (X, original), X_af -> (X, af),
    X_afa -> (X, afa); token_af -> (token_periodic, af)."""
    if scheme in AF_PAIRED:
        return AF_PAIRED[scheme], "af"
    if scheme.endswith("_afa"):
        return scheme[:-4], "afa"
    if scheme.endswith("_af"):
        return scheme[:-3], "af"
    return scheme, "original"


# --- output ------------------------------------------------------------------------------------

def save(fig, out):
    """Writes fig to out as PNG: to a temporary file beside it, renamed into place."""
    directory = os.path.dirname(out) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".png")
    except OSError as e:
        plt.close(fig)
        raise ToolError(f"--out: cannot write in '{directory}': {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png", dpi=FIGURE_DPI)
        os.replace(tmp, out)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return out


def split_for_files(df, out):
    """(path, rows) per file: an out holding {ds} and/or {alloc} names one file per value."""
    keys = [k for k in ("ds", "alloc") if "{" + k + "}" in out]
    if not keys:
        return [(out, df)]
    return [(out.format(**dict(zip(keys, values if isinstance(values, tuple) else (values,)))),
             rows)
            for values, rows in df.groupby(keys if len(keys) > 1 else keys[0], sort=True)]


LEGEND_WIDTH = 2.8  # inches right of the panels for figure_legend


def panels(groups, ncols, width=6.4, height=4.2, **kwargs):
    """A figure with one row per group and ncols axes per row, and room for figure_legend on the
    right; axes as a 2-D array."""
    fig, axes = plt.subplots(len(groups), ncols,
                             figsize=(width * ncols + LEGEND_WIDTH, height * len(groups)),
                             squeeze=False, layout="constrained", **kwargs)
    return fig, axes


def figure_legend(fig, axes, title=None):
    """One legend for the whole figure, right of the panels so that it hides no data: the union of
    the panels' entries in order of first appearance."""
    entries = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    fig.legend(entries.values(), entries.keys(), loc="outside right center", fontsize="small",
               title=title, title_fontsize="small")


def ordered(values):
    """The distinct values in order of first appearance (the order the lab ran them)."""
    return list(dict.fromkeys(values))


def threads_axis(ax, threads):
    """log2 x axis with a tick at every thread count present."""
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(sorted(threads)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([str(t) for t in sorted(threads)])
    ax.set_xlabel("threads (log2 scale)")


def cores_line(ax, cpus, threads):
    """A dashed vertical line at the core count: oversubscription starts beyond it."""
    if min(threads) <= cpus < max(threads):
        ax.axvline(cpus, color="grey", linestyle="--", linewidth=1,
                   label=f"{cpus} cores: oversubscribed beyond")


def error_lines(ax, summary, scale, schemes):
    """One line per scheme: median with min-max error bars."""
    for scheme in schemes:
        s = summary[summary["scheme"] == scheme].sort_values("threads")
        if s.empty:
            continue
        m = s["median"] / scale
        ax.errorbar(s["threads"], m, yerr=[m - s["min"] / scale, s["max"] / scale - m],
                    marker="o", markersize=4, capsize=3, linewidth=1.2, label=scheme)


def panel_groups(rows, extra=()):
    """The values of GROUP (+ extra columns) of each panel, sorted: trials of different workloads,
    or with a stalled thread (--stall) and without, never share a point."""
    return sorted(rows.groupby(GROUP + list(extra)).groups)


def panel_rows(rows, group, extra=()):
    mask = np.ones(len(rows), dtype=bool)
    for column, value in zip(GROUP + list(extra), group):
        mask &= (rows[column] == value).to_numpy()
    return rows[mask]


def panel_title(group, rows):
    """"ds, alloc", then the workload where it varies among `rows` (the whole selection), and the
    stalled threads where there are any."""
    g = dict(zip(GROUP, group))
    parts = [str(g["ds"]), str(g["alloc"])]
    if rows["keys"].nunique() > 1:
        parts.append(f"{g['keys']} keys")
    if g["pairs"]:
        parts.append("push-pop pairs")
    elif rows.groupby(["insert", "delete"]).ngroups > 1:
        parts.append(f"{g['insert']}i-{g['delete']}d")
    if g["region_ops"] > 1:
        parts.append(f"{g['region_ops']} ops per region")
    if not g["prefill"]:
        parts.append("not prefilled")
    if g["stall"]:
        parts.append(f"{g['stall']} stalled thread{'' if g['stall'] == 1 else 's'}")
    return ", ".join(parts)


def from_zero(axes):
    """y axes from 0, once every panel is drawn: a limit set earlier would freeze the scale that
    rows sharing it (sharey="col") had before the later rows' data."""
    for ax in axes.flat:
        ax.set_ylim(bottom=0)


def trials_note(summary):
    n = summary["n"]
    return f"{n.min()} trials" if n.min() == n.max() else f"{n.min()}-{n.max()} trials"


# --- throughput ----------------------------------------------------------------------------------

def draw_throughput(df, path, out, **filters):
    """Throughput against threads, one line per scheme, one panel per GROUP (ds, alloc,
    workload, stall). filters: column=value(s), as select()."""
    sel = select(df, path, **filters)
    written = []
    for file, rows in split_for_files(sel, out):
        schemes = ordered(rows["scheme"])
        summary = summarize(rows)
        groups = panel_groups(rows)
        fig, axes = panels(groups, 1)
        for group, ax in zip(groups, axes[:, 0]):
            part = panel_rows(rows, group)
            error_lines(ax, summarize(part), 1e6, schemes)
            threads_axis(ax, part["threads"].unique())
            cores_line(ax, int(part["cpus"].max()), part["threads"].unique())
            ax.set_ylabel("throughput (Mops/s)")
            ax.set_ylim(bottom=0)
            ax.set_title(panel_title(group, sel))
            ax.grid(True, alpha=0.3)
        fig.suptitle(f"throughput: median and min-max over {trials_note(summary)}")
        figure_legend(fig, axes, "scheme")
        written.append(save(fig, file))
    return written


# --- original vs amortized free ------------------------------------------------------------

def at_one_thread_count(df, path, command, threads, filters):
    """The trials of one thread count and one workload, for a plot of bars per scheme: (rows,
    the thread count)."""
    if threads is None:
        raise ToolError(f"{command}: --threads T is required (one thread count)")
    sel = select(df, path, threads=threads, **filters)
    for column in ("keys", "insert", "delete", "stall"):
        only(sel, column, path, f"--{column}")
    return sel, only(sel, "threads", path, "--threads")


def draw_af_bars(df, path, out, threads=None, **filters):
    """Grouped bars at one thread count: per scheme, the original and its _af (and _afa)."""
    sel, t = at_one_thread_count(df, path, "af-bars", threads, filters)
    sel = sel.assign(base=[af_variant(s)[0] for s in sel["scheme"]],
                     variant=[af_variant(s)[1] for s in sel["scheme"]])
    bases = ordered(sel.loc[sel["variant"] != "original", "base"])
    if not bases:
        raise ToolError(f"{path}: no amortized-free scheme (NAME_af, NAME_afa, token_af) among "
                        f"the schemes {present(sel, 'scheme')} at {t} threads")
    written = []
    for file, rows in split_for_files(sel, out):
        summary = summarize(rows)
        groups = sorted(rows.groupby(["ds", "alloc"]).groups)
        fig, axes = panels(groups, 1, width=max(7.0, 1.6 * len(bases) + 2))
        for (d, a), ax in zip(groups, axes[:, 0]):
            s = summary[(summary["ds"] == d) & (summary["alloc"] == a)]
            variants = [(v, label) for v, label in VARIANTS
                        if any(af_variant(x)[1] == v for x in s["scheme"])]
            width = 0.8 / len(variants)
            for i, (v, label) in enumerate(variants):
                xs, ms, lo, hi, names = [], [], [], [], []
                for j, base in enumerate(bases):
                    row = s[[af_variant(x) == (base, v) for x in s["scheme"]]]
                    if row.empty:
                        continue
                    row = row.iloc[0]
                    xs.append(j + (i - (len(variants) - 1) / 2) * width)
                    ms.append(row["median"] / 1e6)
                    lo.append((row["median"] - row["min"]) / 1e6)
                    hi.append((row["max"] - row["median"]) / 1e6)
                    names.append(row["scheme"])
                ax.bar(xs, ms, width, yerr=[lo, hi], capsize=3, label=label)
                if v != "original":
                    ratio_labels(ax, s, xs, ms, [m + h for m, h in zip(ms, hi)], names)
            ax.set_xticks(range(len(bases)))
            ax.set_xticklabels([base_label(b) for b in bases])
            ax.set_ylabel("throughput (Mops/s)")
            ax.set_title(f"{d}, {a}")
            ax.margins(y=0.15)
            ax.grid(True, axis="y", alpha=0.3)
        fig.suptitle(f"original vs amortized free, {t} threads: median and min-max over "
                     f"{trials_note(summary)}\n(above the bars: ratio of medians to the original)")
        figure_legend(fig, axes, af_legend_title(bases))
        written.append(save(fig, file))
    return written


def base_label(base):
    paired = [af for af, b in AF_PAIRED.items() if b == base]
    return f"{base}\n(vs {', '.join(paired)})" if paired else base


def af_legend_title(bases):
    notes = [f"{af} is paired\nwith {b}" for af, b in AF_PAIRED.items() if b in bases]
    return "\n".join(notes) if notes else None


def ratio_labels(ax, summary, xs, medians, tops, names):
    """Above each amortized bar's error bar: its median as a ratio to the original's."""
    for x, m, top, name in zip(xs, medians, tops, names):
        base = af_variant(name)[0]
        original = summary.loc[summary["scheme"] == base, "median"]
        if original.empty or original.iloc[0] <= 0:
            continue
        ax.annotate(f"{m * 1e6 / original.iloc[0]:.2f}x", (x, top), textcoords="offset points",
                    xytext=(0, 3), ha="center", fontsize="x-small")


# --- pauses and latency -------------------------------------------------------------------------

LATENCY = [("latency_p50_ns", "p50"), ("latency_p99_ns", "p99"), ("latency_p999_ns", "p99.9"),
           ("latency_max_ns", "max")]


def draw_pauses(df, path, out, threads=None, **filters):
    """At one thread count, per (ds, alloc): the longest reclamation pause of each scheme (one
    batch free or amortized step; left) and its sampled operation latency percentiles (right), as
    bars on log scales, medians over trials with min-max; originals beside their _af variants."""
    sel, t = at_one_thread_count(df, path, "pauses", threads, filters)
    missing = [c for c in ["longest_pause_ns"] + [c for c, _ in LATENCY] if c not in sel]
    if missing:
        raise ToolError(f"{path}: no {missing[0]} in the results: they come from a lab that "
                        "records pauses and latency (reclaim-bench of issue 14 or later)")
    written = []
    for file, rows in split_for_files(sel, out):
        schemes = sorted(ordered(rows["scheme"]), key=lambda s: (af_variant(s)[0], s))
        groups = sorted(rows.groupby(["ds", "alloc"]).groups)
        fig, axes = panels(groups, 2, width=max(6.4, 0.9 * len(schemes) + 2))
        for (d, a), (left, right) in zip(groups, axes):
            part = rows[(rows["ds"] == d) & (rows["alloc"] == a)]
            names = [s for s in schemes if (part["scheme"] == s).any()]
            xs = np.arange(len(names))
            s = summarize(part, "longest_pause_ns").set_index("scheme")
            m = np.array([s.loc[n, "median"] for n in names]) / 1e6
            lo = m - np.array([s.loc[n, "min"] for n in names]) / 1e6
            hi = np.array([s.loc[n, "max"] for n in names]) / 1e6 - m
            left.bar(xs, m, 0.7, yerr=[lo, hi], capsize=3, color="tab:red")
            left.set_ylabel("longest pause (ms)")
            left.set_title(f"{d}, {a}: longest reclamation pause", fontsize="medium")
            width = 0.8 / len(LATENCY)
            for i, (column, label) in enumerate(LATENCY):
                s = summarize(part, column).set_index("scheme")
                right.bar(xs + (i - (len(LATENCY) - 1) / 2) * width,
                          [s.loc[n, "median"] / 1e3 for n in names], width, label=label)
            right.set_ylabel("operation latency (us, sampled)")
            right.set_title(f"{d}, {a}: latency percentiles", fontsize="medium")
            right.legend(fontsize="x-small")
            for ax in (left, right):
                ax.set_yscale("log")
                ax.set_xticks(xs)
                ax.set_xticklabels(names, rotation=45, ha="right", fontsize="small")
                ax.grid(True, axis="y", alpha=0.3)
        fig.suptitle(f"pauses and latency at {t} threads: medians over "
                     f"{trials_note(summarize(rows))}")
        written.append(save(fig, file))
    return written


# --- memory ---------------------------------------------------------------------------------------

def draw_memory(df, path, out, **filters):
    """Peak RSS and pending_peak against threads, one line per scheme; a row per GROUP (ds,
    alloc, workload, stall), the rows sharing each column's y scale so that a stall shows at a
    glance."""
    sel = select(df, path, **filters)
    written = []
    for file, rows in split_for_files(sel, out):
        schemes = ordered(rows["scheme"])
        groups = panel_groups(rows)
        fig, axes = panels(groups, 2, sharey="col")
        for group, (left, right) in zip(groups, axes):
            part = panel_rows(rows, group)
            for ax, value, scale, label in [
                    (left, "peak_rss_bytes", MEBI, "peak RSS (MiB)"),
                    (right, "pending_peak", 1.0, "pending peak (retired, not yet freed)")]:
                s = summarize(part, value)
                error_lines(ax, s, scale, schemes)
                threads_axis(ax, part["threads"].unique())
                cores_line(ax, int(part["cpus"].max()), part["threads"].unique())
                ax.set_ylabel(label)
                ax.set_title(f"{panel_title(group, sel)}: {label.split(' (')[0]}",
                             fontsize="medium")
                ax.grid(True, alpha=0.3)
        from_zero(axes)
        fig.suptitle(f"memory: median and min-max over {trials_note(summarize(rows))}")
        figure_legend(fig, axes, "scheme")
        written.append(save(fig, file))
    return written


# --- memory over time (--sample-ms) ----------------------------------------------------------------

def memory_series(trials):
    """The memory samples of the trials of one point, summarized per sample index over trials:
    a frame with t_ms and the median, min and max of pending and rss_bytes. Trials of a point
    sample on the same grid (sample k at about k x sample_ms), so index k is the same moment in
    each; the series is as long as the shortest trial's."""
    lists = [s for s in trials["samples"] if isinstance(s, list) and s]
    n = min(len(s) for s in lists)
    columns = {}
    for field in ("t_ms", "pending", "rss_bytes"):
        values = np.array([[sample[field] for sample in s[:n]] for s in lists], dtype=float)
        columns[field] = np.median(values, axis=0)
        if field != "t_ms":
            columns[f"{field}_min"] = values.min(axis=0)
            columns[f"{field}_max"] = values.max(axis=0)
    return pd.DataFrame(columns)


def with_samples(sel, path):
    """The rows of sel whose trials carry memory samples, or a ToolError saying how to get them."""
    if "samples" in sel:
        has = sel["samples"].map(lambda s: isinstance(s, list) and len(s) > 0)
        if has.any():
            return sel[has]
    raise ToolError(f"{path}: no trial of the selection has memory samples (`samples`); run the "
                    "lab with --sample-ms MS (or sample_ms in the experiment's [[run]])")


def draw_memory_over_time(df, path, out, **filters):
    """Pending garbage and RSS over the measured interval, one line per scheme (median over
    trials per sample, min-max shaded); a row of two panels per GROUP and thread count, the rows
    sharing each column's y scale."""
    sel = with_samples(select(df, path, **filters), path)
    written = []
    for file, rows in split_for_files(sel, out):
        schemes = ordered(rows["scheme"])
        groups = panel_groups(rows, extra=["threads"])
        fig, axes = panels(groups, 2, sharey="col")
        for group, (left, right) in zip(groups, axes):
            part = panel_rows(rows, group, extra=["threads"])
            t = group[-1]
            title = f"{panel_title(group[:-1], sel)}, {t} thread{'' if t == 1 else 's'}"
            for scheme in schemes:
                trials = part[part["scheme"] == scheme]
                if trials.empty:
                    continue
                series = memory_series(trials)
                seconds = series["t_ms"] / 1e3
                for ax, field, scale in [(left, "pending", 1.0), (right, "rss_bytes", MEBI)]:
                    line, = ax.plot(seconds, series[field] / scale, linewidth=1.2, label=scheme)
                    ax.fill_between(seconds, series[f"{field}_min"] / scale,
                                    series[f"{field}_max"] / scale, color=line.get_color(),
                                    alpha=0.15, linewidth=0)
            for ax, label in [(left, "pending garbage (retired, not yet freed)"),
                              (right, "RSS (MiB)")]:
                ax.set_ylabel(label)
                ax.set_xlabel("time since the trial's measured start (s)")
                ax.set_xlim(left=0)
                ax.set_title(f"{title}: {label.split(' (')[0]}", fontsize="medium")
                ax.grid(True, alpha=0.3)
        from_zero(axes)
        fig.suptitle("memory over time: median over "
                     f"{trials_note(summarize(rows))} per sample, min-max shaded")
        figure_legend(fig, axes, "scheme")
        written.append(save(fig, file))
    return written


def draw_over_successive_trials(sel, out, points, ylabel, suptitle, ends=False):
    """Each point's successive trials set one after another on one time axis, one line per scheme,
    from points(trial row) -> [(t_ms, y), ...]; with `ends`, a diamond after each trial at its
    `pending` once every worker had exited. A panel per GROUP and thread count."""
    written = []
    for file, rows in split_for_files(sel, out):
        schemes = ordered(rows["scheme"])
        groups = panel_groups(rows, extra=["threads"])
        fig, axes = panels(groups, 1)
        for group, ax in zip(groups, axes[:, 0]):
            part = panel_rows(rows, group, extra=["threads"])
            t = group[-1]
            for scheme in schemes:
                trials = part[part["scheme"] == scheme].sort_values("trial")
                if trials.empty:
                    continue
                xs, ys, ends_x, ends_y = [], [], [], []
                offset = 0.0
                for _, trial in trials.iterrows():
                    for t_ms, y in points(trial):
                        xs.append(offset + t_ms / 1e3)
                        ys.append(y)
                    xs.append(np.nan)
                    ys.append(np.nan)
                    ends_x.append(offset + trial["seconds"])
                    ends_y.append(trial["pending"])
                    offset += trial["seconds"]
                line, = ax.plot(xs, ys, linewidth=1.0, label=scheme)
                if ends:
                    ax.plot(ends_x, ends_y, linestyle="none", marker="D", markersize=4,
                            color=line.get_color())
            ax.set_title(f"{panel_title(group[:-1], sel)}, {t} thread{'' if t == 1 else 's'}",
                         fontsize="medium")
            ax.set_xlabel("time over the point's successive trials (s)"
                          + ("; diamonds: after the workers exited" if ends else ""))
            ax.set_ylabel(ylabel)
            ax.set_xlim(left=0)
            ax.grid(True, alpha=0.3)
        from_zero(axes)
        fig.suptitle(suptitle)
        figure_legend(fig, axes, "scheme")
        written.append(save(fig, file))
    return written


def draw_unreclaimed(df, path, out, **filters):
    """Paper 003, Figures 6 and 8-11: unreclaimed nodes (pending garbage) over the successive
    trials of each point, one after another on one time axis, one line per scheme; after each
    trial's samples, its value once every worker had exited (`pending`, a diamond), to show
    whether the scheme frees everything when the threads stop. A panel per GROUP and thread count."""
    sel = with_samples(select(df, path, **filters), path)
    return draw_over_successive_trials(
        sel, out, lambda trial: [(s["t_ms"], s["pending"]) for s in trial["samples"]],
        "unreclaimed nodes (retired, not freed)", "unreclaimed nodes over successive trials",
        ends=True)


def time_per_operation(trial):
    """[(t_ms, us)]: between consecutive samples that counted operations (`ops`), the time a
    worker took per operation, threads x elapsed / operations done (paper 003's runtime per
    operation), at the second sample's time."""
    points = []
    samples = trial["samples"]
    for a, b in zip(samples, samples[1:]):
        done = b.get("ops", 0) - a.get("ops", 0)
        if done > 0:
            points.append((b["t_ms"], trial["threads"] * (b["t_ms"] - a["t_ms"]) * 1e3 / done))
    return points


def draw_runtime_over_time(df, path, out, **filters):
    """Paper 003, Figure 7: the time per operation over the successive trials of each point, from
    samples that count operations (a cache workload's), one line per scheme."""
    sel = with_samples(select(df, path, **filters), path)
    counted = sel[sel["samples"].map(lambda s: any(x.get("ops", 0) > 0 for x in s))]
    if counted.empty:
        raise ToolError(f"{path}: no trial of the selection counted operations in its samples "
                        "(`ops`); the cache workload (guarded_hm_hashmap) does, with --sample-ms")
    return draw_over_successive_trials(
        counted, out, time_per_operation, "time per operation and thread (us)",
        "runtime per operation over successive trials")


def cost_per_node(df):
    """Reclamation cost per node freed, (free_ns + scan_ns) / freed, per trial (NaN where a trial
    freed nothing); free_ns and scan_ns are sampled timings (core/stats.hpp)."""
    scan = df["scan_ns"] if "scan_ns" in df else 0
    freed = df["freed"].where(df["freed"] > 0)
    return (df["free_ns"] + scan) / freed


def draw_reclamation_cost(df, path, out, **filters):
    """Reclamation cost per node freed against threads, one line per scheme (median, min-max), one
    panel per GROUP: paper 003's claim that Stamp-it's cost per node does not grow with threads."""
    sel = select(df, path, **filters)
    sel = sel.assign(cost=cost_per_node(sel)).dropna(subset=["cost"])
    if sel.empty:
        raise ToolError(f"{path}: no trial of the selection freed anything: no cost per node")
    written = []
    for file, rows in split_for_files(sel, out):
        schemes = ordered(rows["scheme"])
        groups = panel_groups(rows)
        fig, axes = panels(groups, 1)
        for group, ax in zip(groups, axes[:, 0]):
            part = panel_rows(rows, group)
            error_lines(ax, summarize(part, "cost"), 1.0, schemes)
            threads_axis(ax, part["threads"].unique())
            cores_line(ax, int(part["cpus"].max()), part["threads"].unique())
            ax.set_yscale("log")
            ax.set_ylabel("ns per node freed (free + scan)")
            ax.set_title(panel_title(group, sel))
            ax.grid(True, alpha=0.3, which="both")
        fig.suptitle(f"reclamation cost per node: median and min-max over "
                     f"{trials_note(summarize(rows, 'cost'))}")
        figure_legend(fig, axes, "scheme")
        written.append(save(fig, file))
    return written


# --- timelines (paper 001) -----------------------------------------------------------------

def one_run(tl, path, ds=None, alloc=None, scheme=None, threads=None, trial=None):
    """The events of one trial of one run: filters narrow it; what stays ambiguous is an error,
    except the trial, which defaults to the first."""
    sel = select(tl, path, ds=ds, alloc=alloc, scheme=scheme, threads=threads, trial=trial)
    for column, option in [("ds", "--ds"), ("alloc", "--alloc"), ("scheme", "--scheme"),
                           ("threads", "--threads")]:
        only(sel, column, path, option)
    return sel[sel["trial"] == sel["trial"].min()]


def garbage_over_time(run):
    """(times in ns, total garbage): after each epoch_seen / token_receipt event, the sum over
    threads of the garbage each thread last reported."""
    events = run[run["event"].isin(["epoch_seen", "token_receipt"])].sort_values(
        "start_ns", kind="stable")
    held = {}
    times, totals = [], []
    total = 0
    for thread, t, value in zip(events["thread"], events["start_ns"], events["value"]):
        total += int(value) - held.get(thread, 0)
        held[thread] = int(value)
        times.append(int(t))
        totals.append(total)
    return times, totals


def garbage_per_epoch(run):
    """Paper 001 Figure 4: per epoch index, the sum over threads of the garbage each held when it
    began that epoch. An event's epoch is the number of epoch_advance events (of any thread) at or
    before its time; token schemes, which report token_receipt rather than epoch_seen, use those."""
    advances = np.sort(run.loc[run["event"] == "epoch_advance", "start_ns"].to_numpy())
    source = "epoch_seen" if (run["event"] == "epoch_seen").any() else "token_receipt"
    seen = run[run["event"] == source]
    if seen.empty:
        return None
    epochs = np.searchsorted(advances, seen["start_ns"].to_numpy(), side="right")
    return seen["value"].groupby(epochs).sum().rename_axis("epoch")


def draw_timeline(tl, path, out, event="batch_free", ds=None, alloc=None, scheme=None,
                  threads=None, trial=None):
    """Paper 001 Figures 2, 3, 6-9: boxes per thread for each batch (or slow) free, epoch advances
    and token receipts as dots; below, garbage over time summed over threads."""
    if event not in ("batch_free", "slow_free"):
        raise ToolError(f"--event: unknown event '{event}' (accepted: batch_free, slow_free)")
    run = one_run(tl, path, ds=ds, alloc=alloc, scheme=scheme, threads=threads, trial=trial)
    first = run.iloc[0]
    nthreads = int(first["threads"])
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 3 + 0.25 * min(nthreads, 64)),
                                      sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    boxes = run[run["event"] == event]
    color = "tab:orange" if event == "batch_free" else "tab:red"
    for thread, rows in boxes.groupby("thread"):
        spans = list(zip(rows["start_ns"] / 1e6, (rows["end_ns"] - rows["start_ns"]) / 1e6))
        # An edge as wide as a line keeps boxes shorter than a pixel visible.
        top.broken_barh(spans, (thread - 0.4, 0.8), facecolor=color, edgecolor=color,
                        linewidth=0.6)
    top.plot([], [], color=color, linewidth=6,
             label=f"{event.replace('_', ' ')} ({len(boxes)}): box from start to end")
    for name, marker, dot_color in [("epoch_advance", "o", "tab:blue"),
                                     ("token_receipt", "d", "tab:green")]:
        dots = run[run["event"] == name]
        if not dots.empty:
            top.plot(dots["start_ns"] / 1e6, dots["thread"], linestyle="none", marker=marker,
                     markersize=3, color=dot_color,
                     label=f"{name.replace('_', ' ')} ({len(dots)})")
    top.set_ylim(-0.7, nthreads - 0.3)
    top.invert_yaxis()
    top.yaxis.set_major_locator(MaxNLocator(integer=True, nbins=min(nthreads, 16)))
    top.set_ylabel("thread")
    top.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncol=3, fontsize="small",
               frameon=False)
    top.grid(True, axis="x", alpha=0.3)
    top.set_title(f"{first['scheme']}: {first['ds']}, {first['alloc']}, {nthreads} threads, "
                  f"trial {first['trial']}", pad=24)
    times, totals = garbage_over_time(run)
    if times:
        bottom.step(np.array(times) / 1e6, totals, where="post", color="tab:purple",
                    linewidth=1)
    else:
        bottom.text(0.5, 0.5, "no epoch_seen or token_receipt events", ha="center",
                    va="center", transform=bottom.transAxes)
    bottom.set_ylabel("garbage\n(objects, all threads)")
    bottom.set_ylim(bottom=0)
    bottom.set_xlabel("time since the trial's measured start (ms)")
    bottom.grid(True, alpha=0.3)
    fig.tight_layout()
    return [save(fig, out)]


def draw_garbage_per_epoch(tl, path, out, scheme=None, ds=None, alloc=None, threads=None,
                           trial=None):
    """Paper 001 Figure 4: garbage per epoch, one panel per scheme (shared y scale)."""
    sel = select(tl, path, scheme=scheme, ds=ds, alloc=alloc, threads=threads, trial=trial)
    schemes = scheme and [s for s in ordered(as_list(scheme)) if s in set(sel["scheme"])]
    schemes = schemes or ordered(sel["scheme"])
    series = []
    for s in schemes:
        run = one_run(sel, path, scheme=s)
        per_epoch = garbage_per_epoch(run)
        if per_epoch is None:
            raise ToolError(f"{path}: scheme {s} has no epoch_seen or token_receipt events; "
                            "garbage per epoch needs them")
        series.append((run.iloc[0], per_epoch))
    fig, axes = plt.subplots(len(series), 1, figsize=(10, 2.8 * len(series) + 0.6),
                             squeeze=False, sharey=True)
    for (first, per_epoch), ax in zip(series, axes[:, 0]):
        ax.plot(per_epoch.index, per_epoch.to_numpy(), linewidth=0.9, marker=".",
                markersize=3 if len(per_epoch) < 400 else 0)
        ax.set_title(f"{first['scheme']}: {first['ds']}, {first['alloc']}, {first['threads']} "
                     f"threads, trial {first['trial']}", fontsize="medium")
        ax.set_ylabel("garbage (objects)")
        ax.set_ylim(bottom=0)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("epoch index")
    fig.suptitle("garbage per epoch: sum over threads of what each held when it began the epoch",
                 fontsize="medium")
    fig.tight_layout()
    return [save(fig, out)]

