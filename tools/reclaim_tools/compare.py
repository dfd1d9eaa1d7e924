# SPDX-License-Identifier: MIT
"""Ratios of throughput between two sets of trials run side by side: two builds of the lab
(scripts/compare-builds.sh), two containers of one run (--match guarded_ms_queue=ms_queue), or our
schemes against a peer library's schemes of the same name (--peer xenium: debra against
xenium:debra, same container), where OTHER and BASE are usually the same run.

A point is data.POINT (container, allocator, workload, stall, scheme, threads). The k-th trial of a
point in OTHER is paired with the k-th trial of the matching point in BASE, in the order the file
holds them: run interleaved (the lab's --interleave, or compare-builds.sh), the two trials of a
pair ran next to each other, so their ratio is what the machine's drift disturbs least.
"""
import statistics

from . import ToolError
from .data import POINT, load_results


def parse_matches(text):
    """'a=b,c=d' -> {'a': 'b', 'c': 'd'}: OTHER's container a is compared with BASE's b."""
    matches = {}
    for item in (text or "").split(","):
        if not item:
            continue
        other, sep, base = item.partition("=")
        if not sep or not other or not base:
            raise ToolError(f"compare: --match: '{item}' is not OTHER_DS=BASE_DS "
                            "(e.g. guarded_ms_queue=ms_queue)")
        matches[other] = base
    return matches


def _trials_by_point(df):
    points = {}
    for row in df.itertuples(index=False):
        key = tuple(getattr(row, field) for field in POINT)
        points.setdefault(key, []).append(row.throughput)
    return points


def parse_peers(text):
    """'xenium,libcds' -> ['xenium', 'libcds']: the libraries whose LIB:SCHEME points are bases."""
    peers = [p for p in (text or "").split(",") if p]
    for p in peers:
        if ":" in p or not p.replace("_", "").isalnum():
            raise ToolError(f"compare: --peer: '{p}' is not a library name (e.g. xenium, libcds)")
    return peers


def compare(base_path, other_path, match=None, peer=None):
    """Rows of (point, base ds, base scheme, base trials, other trials, paired ratios), in
    OTHER's order. With peer, OTHER's point of scheme S is compared with BASE's LIB:S."""
    matches = parse_matches(match)
    peers = parse_peers(peer)
    base = _trials_by_point(load_results(base_path))
    other = _trials_by_point(load_results(other_path))
    ds_index, scheme_index = POINT.index("ds"), POINT.index("scheme")
    rows = []
    for key, trials in other.items():
        if matches and key[ds_index] not in matches:
            continue  # BASE's own points, when both files are one run
        if peers and ":" in key[scheme_index]:
            continue  # a peer's own point
        for base_scheme in [f"{p}:{key[scheme_index]}" for p in peers] or [key[scheme_index]]:
            base_key = list(key)
            base_key[ds_index] = matches.get(key[ds_index], key[ds_index])
            base_key[scheme_index] = base_scheme
            base_trials = base.get(tuple(base_key))
            if not base_trials:
                continue
            pairs = list(zip(base_trials, trials))
            rows.append((dict(zip(POINT, key)), base_key[ds_index], base_scheme, base_trials,
                         trials, [o / b for b, o in pairs if b > 0]))
    if not rows:
        raise ToolError(f"compare: no point of {other_path} has a match in {base_path} (same "
                        "scheme, threads, allocator, workload; --match OTHER_DS=BASE_DS pairs "
                        "containers, --peer LIB pairs SCHEME with LIB:SCHEME)")
    return rows


def table(rows):
    """The comparison as a Markdown table."""
    lines = ["| ds | base ds | alloc | keys | scheme | threads | base Mops/s | other Mops/s | "
             "other / base: min / median / max of pairs | ratio of medians |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for point, base_ds, base_scheme, base_trials, trials, ratios in rows:
        b, o = statistics.median(base_trials) / 1e6, statistics.median(trials) / 1e6
        spread = (f"{min(ratios):.3f} / {statistics.median(ratios):.3f} / {max(ratios):.3f}"
                  if ratios else "-")
        scheme = point["scheme"]
        if base_scheme != scheme:
            scheme = f"{scheme} vs {base_scheme}"
        lines.append(f"| {point['ds']} | {base_ds} | {point['alloc']} | {point['keys']} | "
                     f"{scheme} | {point['threads']} | {b:.3f} | {o:.3f} | {spread} | "
                     f"**{o / b:.3f}** |")
    return "\n".join(lines) + "\n"
