# SPDX-License-Identifier: MIT
"""Instructions per operation of the lab's own trials, counted by valgrind: a cost per operation
that does not drift with the machine, so that per-read costs can be compared exactly on a noisy
2-core machine.

For each scheme, the lab runs one trial of one thread with fixed work (`reclaim-bench --ops N`)
under valgrind twice, with N and 2N operations, and the difference of the two instruction counts
divided by N is the cost of one operation: the process start, the registration of every scheme,
the prefill (same seed, same keys) and the exit cancel out. The trial is the lab's, validated as
any other (its JSON line must say checksum_ok, and that it ran N operations). The operations
include the workload's own (drawing a key and an operation: about 20 instructions), the same for
every scheme: compare schemes, or subtract `none`.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile

from . import ToolError

TOOLS = ("cachegrind", "callgrind")
DEFAULT_BENCH = os.path.join("build", "release", "bench", "reclaim-bench")
# The summary line each tool prints on stderr: "==123== I   refs:      1,234,567" (cachegrind) or
# "==123== Collected : 1234567" (callgrind).
_COUNT = {"cachegrind": re.compile(r"I\s+refs:\s+([\d,]+)"),
          "callgrind": re.compile(r"Collected\s*:\s*(\d+)")}
_TOOL_ARGS = {"cachegrind": ["--tool=cachegrind", "--cache-sim=no",
                             "--cachegrind-out-file=/dev/null"],
              "callgrind": ["--tool=callgrind", "--callgrind-out-file=/dev/null"]}


def parse_count(text, flag):
    """'100K' -> 100000; a positive count with an optional K or M suffix."""
    match = re.fullmatch(r"(\d+)([KM]?)", text or "")
    value = int(match.group(1)) * {"": 1, "K": 1000, "M": 1000000}[match.group(2)] if match else 0
    if value <= 0:
        raise ToolError(f"instructions: {flag}: expected a positive count (suffixes K and M), "
                        f"got '{text}'")
    return value


def _instructions(valgrind, tool, bench, lab_args, ops, workdir):
    """Instructions of one whole run of the lab doing `ops` operations, and its JSON line."""
    out = os.path.join(workdir, f"ops_{ops}.jsonl")
    if os.path.exists(out):
        os.remove(out)
    # --in-process: the trial must run in the process valgrind watches, not in a child.
    command = [valgrind, *_TOOL_ARGS[tool], bench, *lab_args, "--in-process", "--ops", str(ops),
               "--out", out]
    try:
        proc = subprocess.run(command, capture_output=True, text=True)
    except OSError as e:
        raise ToolError(f"instructions: cannot run {valgrind}: {e.strerror}") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise ToolError(f"instructions: the lab under {tool} failed (status {proc.returncode}): "
                        f"{last}")
    match = _COUNT[tool].search(proc.stderr)
    if not match:
        raise ToolError(f"instructions: no instruction count in {tool}'s output (is {valgrind} "
                        "valgrind?)")
    try:
        with open(out, encoding="utf-8") as f:
            line = json.loads(f.readline())
    except (OSError, ValueError):
        raise ToolError(f"instructions: the lab wrote no JSON line to {out}") from None
    return int(match.group(1).replace(",", "")), line


def measure(schemes, ds="lazy_list", keys="1K", insert=0, delete=0, ops="100K",
            tool="cachegrind", bench=DEFAULT_BENCH, valgrind="valgrind", seed=1):
    """[(scheme, instructions per operation)] in the order of `schemes`."""
    if tool not in TOOLS:
        raise ToolError(f"instructions: --tool: unknown tool '{tool}' (accepted: "
                        f"{', '.join(TOOLS)})")
    n = parse_count(ops, "--ops")
    names = [s for s in (schemes or "").split(",") if s]
    if not names:
        raise ToolError("instructions: --scheme: expected a comma list of the lab's schemes")
    if not (os.path.isfile(bench) and os.access(bench, os.X_OK)):
        raise ToolError(f"instructions: --bench: '{bench}' is not the lab's executable (build it: "
                        "cmake --preset release && cmake --build --preset release)")
    if shutil.which(valgrind) is None:
        raise ToolError(f"instructions: --valgrind: '{valgrind}' not found (apt-get install "
                        "valgrind)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="reclaim-instructions-") as workdir:
        for scheme in names:
            lab_args = ["--ds", ds, "--scheme", scheme, "--threads", "1", "--keys", str(keys),
                        "--insert", str(insert), "--delete", str(delete), "--seed", str(seed),
                        "--trials", "1", "--alloc", "glibc"]
            counts = []
            for count in (n, 2 * n):
                instructions, line = _instructions(valgrind, tool, bench, lab_args, count,
                                                   workdir)
                if not line.get("checksum_ok"):
                    raise ToolError(f"instructions: the {ds} x {scheme} trial failed its "
                                    "validation (checksum_ok is false)")
                if line.get("ops") != count or line.get("ops_per_thread") != count:
                    raise ToolError(f"instructions: the {ds} x {scheme} trial ran "
                                    f"{line.get('ops')} operations, not {count} (a lab without "
                                    "--ops?)")
                counts.append(instructions)
            rows.append((scheme, (counts[1] - counts[0]) / n))
    return rows


def table(rows, ds, keys, insert, delete, ops, tool):
    """The measurement as a Markdown table, with ratios to none and to hp where they were run."""
    per_op = dict(rows)
    lines = [f"Instructions per operation, {ds}, {keys} keys, {insert}% inserts, {delete}% "
             f"deletes, 1 thread, {tool} ({ops} and twice as many operations)", "",
             "| scheme | instructions/op |" + (" / none |" if "none" in per_op else "") +
             (" / hp |" if "hp" in per_op else ""),
             "|---|---|" + ("---|" if "none" in per_op else "") + ("---|" if "hp" in per_op else "")]
    for scheme, value in rows:
        line = f"| {scheme} | {value:.0f} |"
        if "none" in per_op:
            line += f" {value / per_op['none']:.2f} |" if per_op["none"] > 0 else " - |"
        if "hp" in per_op:
            line += f" {value / per_op['hp']:.2f} |" if per_op["hp"] > 0 else " - |"
        lines.append(line)
    return "\n".join(lines) + "\n"
