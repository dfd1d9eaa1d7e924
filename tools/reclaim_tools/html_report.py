# SPDX-License-Identifier: MIT
"""`report EXPERIMENT.toml`: one self-contained HTML page (plots embedded as PNG data) a person opens
in a browser: the experiment's title and claim, the machine and the run (date, cores, CPU,
allocator, git revision, trials and their validation), each [[plot]] with its caption, and the
tables of `experiment`'s Markdown report.
"""
import base64
import html
import os
import re
import tempfile

from .data import load_results
from .report import draw_plot, load_experiment, point_tables, write_text

STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }
h1 { margin-bottom: 0.2em; }
.machine { color: #555; margin-top: 0; }
.failed { color: #b00; font-weight: bold; }
figure { margin: 1.5em 0; }
figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { margin-top: 0.4em; }
table { border-collapse: collapse; margin: 0.5em 0 1.2em; font-size: 0.92em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; }
code { background: #f3f3f3; padding: 0 0.2em; }
"""


def inline(text):
    """Plain text with `code` spans, escaped for HTML."""
    parts = re.split(r"`([^`]*)`", " ".join(text.split()))
    return "".join(f"<code>{html.escape(p)}</code>" if i % 2 else html.escape(p)
                   for i, p in enumerate(parts))


def block_html(block):
    kind = block[0]
    if kind == "heading":
        return f"<h3>{inline(block[1])}</h3>"
    if kind == "text":
        return f"<p>{inline(block[1])}</p>"
    header, rows = block[1], block[2]
    head = "".join(f"<th>{inline(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def machine(df):
    """One sentence on where and when the trials ran, from the lab's JSON lines."""
    def values(column):
        if column not in df:
            return "unknown"
        return ", ".join(sorted({str(v) for v in df[column].dropna()})) or "unknown"
    started = sorted(df["started"].dropna()) if "started" in df else []
    when = f"{started[0]} to {started[-1]}" if started and started[0] != started[-1] else (
        started[0] if started else "an unknown date")
    failed = int((~df["checksum_ok"].astype(bool)).sum()) if "checksum_ok" in df else 0
    valid = (f'<span class="failed">{failed} of {len(df)} trials FAILED validation</span>'
             if failed else f"all {len(df)} trials validated")
    return (f"Run {html.escape(when)} (UTC) on {html.escape(values('cpus'))} cores "
            f"({html.escape(values('cpu_model'))}), allocator {html.escape(values('alloc'))}, "
            f"git {html.escape(values('git'))}; {valid}.")


def report(path, out=None, results=None):
    """Writes the HTML report of the experiment file (default results/NAME.html beside its results)
    from its `out` results, or from `results` (a run of the file with --out); returns [out]."""
    name, spec = load_experiment(path)
    if results:
        spec["out"] = results
    df = load_results(spec["out"])
    out = out or os.path.join(os.path.dirname(spec["out"]) or ".", f"{name}.html")
    parts = [f"<h1>{inline(spec['title'])}</h1>", f'<p class="machine">{machine(df)}</p>']
    if "paper" in spec:
        parts.append(f"<p>Reproduces: paper {inline(spec['paper'])}.</p>")
    if "claim" in spec:
        parts.append(f"<p>{'The paper' if 'paper' in spec else 'The claim'}: "
                     f"{inline(spec['claim'])}</p>")
    with tempfile.TemporaryDirectory() as tmp:
        for i, plot in enumerate(spec.get("plot", []), 1):
            for file in draw_plot(spec, df, name, plot, i, path, tmp):
                with open(file, "rb") as f:
                    data = base64.b64encode(f.read()).decode("ascii")
                caption = plot.get("caption", "")
                parts.append(f'<figure><img alt="{html.escape(plot["kind"])}" '
                             f'src="data:image/png;base64,{data}">'
                             + (f"<figcaption>{inline(caption)}</figcaption>" if caption else "")
                             + "</figure>")
    parts.append("<h2>Tables</h2>")
    parts += [block_html(b) for b in point_tables(df)]
    page = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(spec['title'])}</title><style>{STYLE}</style></head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
    return [write_text(out, page)]

