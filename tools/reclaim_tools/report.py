# SPDX-License-Identifier: MIT
"""`experiment EXPERIMENT.toml`: every [[plot]] of an experiment file drawn from its `out` results,
and a one-page Markdown report with the numbers: per (ds, alloc), median throughput (min-max) per
scheme and thread count, ratios to `none` and amortized/original, share of time spent freeing and
objects freed.
"""
import os
import shlex
import tempfile
import tomllib

from . import ToolError
from . import plots
from .data import GROUP, POINT, load_results, load_timeline, summarize

# The filters of the plots of results: the columns of a point.
RESULT_FILTERS = ("ds", "alloc", "scheme", "threads", "keys", "insert", "delete", "stall")
PLOT_KINDS = ["throughput", "af_bars", "timeline", "garbage_per_epoch", "memory",
              "memory_over_time", "pauses", "unreclaimed", "runtime_over_time",
              "reclamation_cost"]
# The filters a [[plot]] may carry, per kind, beside kind and file.
PLOT_KEYS = {
    "throughput": set(RESULT_FILTERS),
    "memory": set(RESULT_FILTERS),
    "memory_over_time": set(RESULT_FILTERS),
    "af_bars": set(RESULT_FILTERS),
    "pauses": set(RESULT_FILTERS),
    "unreclaimed": set(RESULT_FILTERS),
    "runtime_over_time": set(RESULT_FILTERS),
    "reclamation_cost": set(RESULT_FILTERS),
    "timeline": {"timeline", "ds", "alloc", "scheme", "threads", "trial", "event"},
    "garbage_per_epoch": {"timeline", "ds", "alloc", "scheme", "threads", "trial"},
}
# Keys every [[plot]] may carry: its kind, its file name, and the sentence the reports print with
# it (what the panel shows and the paper claim it relates to).
PLOT_COMMON_KEYS = {"kind", "file", "caption"}


def experiment_schemes(path, lab_flags=""):
    """The schemes an experiment file's runs name, in order of first appearance (a run without
    `scheme` runs the lab's default, none), or those of a --scheme in lab_flags, which overrides
    every run's."""
    _, spec = load_experiment(path)
    words = shlex.split(lab_flags)
    given = [w.partition("=")[2] for w in words if w.startswith("--scheme=")]
    given += [words[i + 1] for i, w in enumerate(words[:-1]) if w == "--scheme"]
    if given:
        lists = [given[-1].split(",")]
    else:
        lists = []
        for run in spec.get("run", []):
            value = run.get("scheme", "none")
            lists.append([value] if isinstance(value, str) else list(value))
    names = []
    for name in (n.strip() for names_ in lists for n in names_):
        if name and name not in names:
            names.append(name)
    return names


def load_experiment(path):
    if not os.path.isfile(path):
        raise ToolError(f"experiment: no such file '{path}'")
    try:
        with open(path, "rb") as f:
            spec = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        raise ToolError(f"{path}: not valid TOML ({e})") from None
    if not isinstance(spec.get("title"), str):
        raise ToolError(f"{path}: missing title (a string; required)")
    name = os.path.splitext(os.path.basename(path))[0]
    spec.setdefault("out", f"results/{name}.jsonl")
    for i, plot in enumerate(spec.get("plot", []), 1):
        kind = plot.get("kind")
        if kind not in PLOT_KINDS:
            raise ToolError(f"{path}: [[plot]] {i}: unknown kind '{kind}' (accepted: "
                            f"{', '.join(PLOT_KINDS)})")
        unknown = sorted(set(plot) - PLOT_KEYS[kind] - PLOT_COMMON_KEYS)
        if unknown:
            raise ToolError(f"{path}: [[plot]] {i} ({kind}): unknown key '{unknown[0]}' "
                            "(accepted: "
                            f"{', '.join(sorted(PLOT_KEYS[kind] | PLOT_COMMON_KEYS - {'kind'}))})")
        if not isinstance(plot.get("caption", ""), str):
            raise ToolError(f"{path}: [[plot]] {i} ({kind}): caption must be a string")
    return name, spec


def run_timeline(spec, plot, path, i):
    """The timeline CSV of a timeline plot: its own `timeline`, or the one the runs wrote."""
    if "timeline" in plot:
        return plot["timeline"]
    files = {r["timeline"] for r in spec.get("run", []) if "timeline" in r}
    if len(files) != 1:
        raise ToolError(f"{path}: [[plot]] {i} ({plot['kind']}): say which timeline CSV with "
                        "timeline = \"FILE\" (the runs name "
                        f"{len(files) or 'no'} timeline files)")
    return files.pop()


def draw_plot(spec, df, name, plot, i, path, plots_dir):
    kind = plot["kind"]
    out = os.path.join(plots_dir, plot.get("file", f"{name}_{i}_{kind}.png"))
    if kind in ("throughput", "memory", "memory_over_time", "af_bars", "pauses", "unreclaimed",
                "runtime_over_time", "reclamation_cost"):
        draw = getattr(plots, f"draw_{kind}")
        return draw(df, spec["out"], out, **{k: plot[k] for k in RESULT_FILTERS if k in plot})
    filters = {k: plot[k] for k in ("ds", "alloc", "scheme", "threads") if k in plot}
    csv = run_timeline(spec, plot, path, i)
    tl = load_timeline(csv)
    if kind == "timeline":
        return plots.draw_timeline(tl, csv, out, event=plot.get("event", "batch_free"),
                                   trial=plot.get("trial"), **filters)
    return plots.draw_garbage_per_epoch(tl, csv, out, trial=plot.get("trial"), **filters)


# --- the report's tables --------------------------------------------------------------------------
# point_tables() yields blocks, rendered as Markdown (`experiment`) or HTML (`report`):
#   ("heading", text), ("text", text), ("table", header, rows)

def free_share(df):
    """Per trial: the share of the workers' time spent freeing, free_ns / (threads x seconds)."""
    return df["free_ns"] / (df["threads"] * df["seconds"] * 1e9)


def point_tables(df):
    """The blocks of tables per GROUP (ds, alloc, workload, stall) of a results frame."""
    df = df.assign(free_share=free_share(df))
    tp = summarize(df).set_index(POINT)
    share = summarize(df, "free_share").set_index(POINT)
    freed = summarize(df, "freed").set_index(POINT)
    signals = summarize(df, "signals").set_index(POINT)
    pending = summarize(df, "pending_peak").set_index(POINT)
    any_stall = bool((df["stall"] > 0).any())
    out = []
    for group, part in sorted(df.groupby(GROUP), key=lambda kv: kv[0]):
        schemes = plots.ordered(part["scheme"])
        threads = sorted(part["threads"].unique())
        header = ["scheme"] + [f"{t} thread{'' if t == 1 else 's'}" for t in threads]
        key = lambda s, t: (*group, s, t)  # noqa: E731

        def cells(fmt, frame, s):
            return [fmt(frame.loc[key(s, t)]) if key(s, t) in frame.index else "-"
                    for t in threads]

        def counts(r):  # a count's median (min-max), whole numbers
            return f"{r['median']:.0f} ({r['min']:.0f}-{r['max']:.0f})"

        out.append(("heading", plots.panel_title(group, df)))
        out.append(("text", "Throughput, Mops/s: median (min-max) over "
                            f"{plots.trials_note(summarize(part))}."))
        out.append(("table", header, [[s] + cells(lambda r: f"{r['median'] / 1e6:.3f} "
                                                            f"({r['min'] / 1e6:.3f}-"
                                                            f"{r['max'] / 1e6:.3f})", tp, s)
                                      for s in schemes]))
        if "none" in schemes:
            rows = [[s] + [ratio(tp, key(s, t), key("none", t)) for t in threads]
                    for s in schemes if s != "none"]
            if rows:
                out.append(("text", "Ratio of medians to `none`."))
                out.append(("table", header, rows))
        pairs = [(s, plots.af_variant(s)[0]) for s in schemes
                 if plots.af_variant(s)[1] != "original" and plots.af_variant(s)[0] in schemes]
        if pairs:
            out.append(("text", "Amortized free: ratio of medians to the original scheme."))
            out.append(("table", header, [[f"{s} / {b}"] + [ratio(tp, key(s, t), key(b, t))
                                                             for t in threads]
                                          for s, b in pairs]))
        out.append(("text", "Freeing: share of the workers' time spent freeing, free_ns / "
                            "(threads x seconds), and objects freed; medians over trials."))
        out.append(("table", header,
                    [[s] + [f"{share.loc[key(s, t), 'median'] * 100:.1f}%, "
                            f"{freed.loc[key(s, t), 'median']:.0f} freed"
                            if key(s, t) in share.index else "-" for t in threads]
                     for s in schemes]))
        costs = part.assign(cost=plots.cost_per_node(part)).dropna(subset=["cost"])
        if not costs.empty:
            cost = summarize(costs, "cost").set_index(POINT)
            out.append(("text", "Reclamation cost per node freed, (free_ns + scan_ns) / freed, in "
                                "ns: median (min-max) over the trials that freed anything."))
            out.append(("table", header, [[s] + cells(counts, cost, s) for s in schemes]))
        sampled = (part[part["sample_ms"] > 0] if {"sample_ms", "pending"} <= set(part)
                   else part.iloc[0:0])
        if not sampled.empty:
            end = summarize(sampled.assign(end_share=sampled["pending"]
                                           / sampled["pending_peak"].where(
                                               sampled["pending_peak"] > 0)).fillna(
                {"end_share": 0.0}), "end_share").set_index(POINT)
            out.append(("text", "Unreclaimed at the end of the trial, once every worker had "
                                "exited (`pending`), as a share of the trial's peak "
                                "(`pending_peak`): median (max) over trials."))
            out.append(("table", header, [[s] + cells(lambda r: f"{r['median'] * 100:.1f}% "
                                                                f"({r['max'] * 100:.1f}%)",
                                                      end, s) for s in schemes]))
        if any_stall:  # with a stalled thread and without, side by side
            out.append(("text", "Pending garbage peak (`pending_peak`, objects retired and not "
                                "yet freed): median (min-max) over trials."))
            out.append(("table", header, [[s] + cells(counts, pending, s) for s in schemes]))
        signalling = [s for s in schemes if part.loc[part["scheme"] == s, "signals"].sum() > 0]
        if signalling:
            out.append(("text", "Signals sent (neutralization): median (min-max) over trials; "
                                "schemes that sent none are left out."))
            out.append(("table", header, [[s] + cells(counts, signals, s) for s in signalling]))
    return out


def markdown(block):
    kind = block[0]
    if kind == "heading":
        return f"### {block[1]}"
    if kind == "text":
        return block[1]
    header, rows = block[1], block[2]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def ratio(tp, num, den):
    if num not in tp.index or den not in tp.index or tp.loc[den, "median"] <= 0:
        return "-"
    return f"{tp.loc[num, 'median'] / tp.loc[den, 'median']:.2f}x"


def write_text(path, text):
    directory = os.path.dirname(path) or "."
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".md")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
    return path


def experiment(path, plots_dir="results/plots"):
    """Draws every plot of the experiment file and writes NAME.md beside them; returns the paths."""
    name, spec = load_experiment(path)
    df = load_results(spec["out"])
    written, figures = [], []
    for i, plot in enumerate(spec.get("plot", []), 1):
        files = draw_plot(spec, df, name, plot, i, path, plots_dir)
        written += files
        figures += [(plot["kind"], f, plot.get("caption", "")) for f in files]
    git = ", ".join(sorted(str(g) for g in df["git"].unique())) if "git" in df else "?"
    lines = [f"# {spec['title']}", ""]
    if "paper" in spec:
        lines += [f"Reproduces: paper {spec['paper']}.", ""]
    if "claim" in spec:
        lines += [f"The paper's claim: {spec['claim'].strip()}", ""]
    lines += [f"Data: `{spec['out']}`, {len(df)} trials, git {git}, "
              f"{int(df['cpus'].max())} cpus.", ""]
    for block in point_tables(df):
        lines += [markdown(block), ""]
    for kind, file, caption in figures:
        lines += [f"![{kind}]({os.path.relpath(file, plots_dir)})", ""]
        if caption:
            lines += [" ".join(caption.split()), ""]
    written.append(write_text(os.path.join(plots_dir, f"{name}.md"), "\n".join(lines)))
    return written
