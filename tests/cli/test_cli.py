#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Command-line tests of reclaim-bench, the lab (bench/README.md).

Usage: test_cli.py BENCH CHECK, where BENCH is the reclaim-bench executable and CHECK one of:
  bad_input  every kind of bad input (a value listed twice included) exits with status 2 and one
             line on stderr naming the flag, and leaves the --out file alone (not created; an
             existing one unchanged)
  list       `reclaim-bench list` prints schemes, containers, allocators and the matrix;
             docs/applicability.md holds the matrix exactly as `list --markdown` prints it
  run        short valid runs write one parseable, validated JSON line per trial
  alloc      --alloc: a sweep over every allocator records the one detected in each trial; an
             allocator that is not installed (RECLAIM_BENCH_ALLOC_DIR pointed at an empty
             directory) is bad input
  timeline   --timeline: short trials (in the lab's process and in a child) write one CSV with
             the header once and each trial's events, consistent with the JSON lines
  stall      --stall and --sample-ms: with a thread stalled inside an operation, debra's pending
             garbage grows over the trial while hp's stays bounded; the samples are in time order
             and within the trial; both flags reach a child process and an experiment's sweeps
  experiment --experiment FILE: a small file runs its sweeps into its `out` (one valid JSON line
             per trial, directories made, a run's timeline), flags override its values,
             --dry-run runs nothing, every bad file exits 2 with one line naming the file and
             writes nothing, and every file in experiments/ passes --dry-run in 10 minutes
  output_paths  --out and --timeline (and an experiment's out and timelines) that are a
             directory, a device node, a FIFO, the same file as each other (by any name), or in a
             missing directory are refused before the first trial, and left as they were
  write_errors  a JSON line cut short (the file size limit) is rolled back: the file holds whole
             lines only, and the run stops with one line naming the cause; so does a timeline
             that cannot be written, which leaves the old one; an --out file whose last line is
             incomplete is refused
  lazy_out   no --out file is created when no trial ran (every trial not run, a dry run), and no
             timeline is replaced
  skip_pairs a sweep skips the (ds, scheme) pairs that do not apply, with a note on stderr each,
             on the command line, in a dry run and in an experiment; none applying is bad input
  cleanup    SIGINT or SIGTERM in the middle of a run (in the lab's process, with a child) leaves
             no temporary timeline file, no child process, and ends the lab by the signal; what a
             killed run left is removed by the next one once its process has ended
  thread_failure  a worker or stalled thread that cannot be created (RLIMIT_AS) fails its trial
             with one line naming it, quickly (no hang on the start latch), in the lab's process
             and in a child, and the run goes on
  ops        --ops N: every worker runs exactly N operations (a set, a queue, a child process, with
             a stalled thread and the sampler), validated, with ops_per_thread in the JSON line;
             --ops with --seconds and bad counts are refused; an experiment's `ops` key and the
             command line's replacement of either
  pools      the stack and queue workloads (treiber_stack, ms_queue): runs validate (each value
             popped once, nothing lost, per-producer FIFO for the queue), all pushes or all pops
             give the exact size and retire count, and a push/pop mix with lookups is refused
  memory     a run whose trial surely cannot fit (MemAvailable, RLIMIT_AS) is refused up front,
             naming the flags and the estimate; an allocation that fails in a trial fails that
             trial on one line (no std::terminate)
  latency    every JSON line has sampled latency percentiles in order (p50 <= p99 <= p99.9 <=
             max) from about one operation in 64, and the longest reclamation pause: none under
             `none`, some wherever something was freed; in the lab's process and in a child
  rc         issue 30's counted-pointer containers (rc_config, rc_config_snapshot, raw_config,
             rc_stack, persistent_map) and the std:* peers: listed, validated runs (every config
             destroyed exactly once), refused under nbr and with deletes in a config
  peers      the peer schemes built in (xenium:*, libcds:*, urcu:*, ck:*; none when their
             packages are missing) run their containers through the same validation and JSON
             line, are skipped on containers they do not offer, cannot be stalled, and stay out
             of the applicability matrix
Python 3 standard library only.
"""
import csv
import json
import os
import re
import resource
import signal
import stat
import subprocess
import sys
import tempfile
import time

BENCH = sys.argv[1]
failures = []

SCHEMES = {"none": "none", "debra": "epoch", "hp": "pointer"}  # name: family
FAMILIES = {**SCHEMES, "qsbr": "epoch", "stamp_it": "epoch",  # of every scheme a check runs
            "lfrc": "reference counting", "std:atomic_shared_ptr": "reference counting",
            "std:atomic_load": "reference counting"}
CONTAINERS = ["lazy_list", "hm_list"]
POOLS = {"treiber_stack": "stack", "ms_queue": "queue"}  # name: workload
ALLOCATORS = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]
REQUIRED_FIELDS = [
    "ds", "scheme", "alloc", "alloc_version", "alloc_lib", "threads", "trial", "seconds", "keys",
    "insert", "delete", "prefill",
    "seed", "ops", "throughput", "peak_rss_bytes", "rss_bytes", "retired", "freed", "pending",
    "pending_peak", "epochs", "scans", "signals", "free_ns", "final_size", "checksum_ok", "git",
    "cpus", "family", "scan_ns", "pairs", "region_ops", "wide_cas", "wide_cas_failed",
]


def bench(*args, env=None, timeout=60, cwd=None, preexec_fn=None):
    """Runs the lab; a run still going after `timeout` seconds is killed, with its child processes
    (it runs in a process group of its own), and is a failure (the returned status is None)."""
    with subprocess.Popen([os.path.abspath(BENCH), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, cwd=cwd, preexec_fn=preexec_fn,
                          start_new_session=True,
                          env=None if env is None else {**os.environ, **env}) as lab:
        try:
            stdout, stderr = lab.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(lab.pid, signal.SIGKILL)
            stdout, stderr = lab.communicate()
            failures.append(f"{' '.join(args)}: still running after {timeout} s (killed)")
            return subprocess.CompletedProcess(lab.args, None, stdout, stderr)
        return subprocess.CompletedProcess(lab.args, lab.returncode, stdout, stderr)


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# --- bad input -------------------------------------------------------------------------------

# Values an option refuses where the one-line error need only name the option.
REFUSED_VALUES = {
    "--ds": ["lazy_list,"],
    "--threads": ["abc", "-1", "0", "1,0", "1,,2", "1.5"],
    "--seconds": ["0", "-1", "abc", "nan"],
    "--trials": ["0", "two"],
    "--keys": ["1", "20X", "K", "-5"],
    "--insert": ["101", "-1", "abc"],
    "--delete": ["150"],
    "--seed": ["abc", "-1"],
    "--alloc": ["glibc,"],
    "--stall": ["one", "1.5"],
    "--sample-ms": ["0.5", "abc"],
}

# (arguments, text the one-line error must contain)
BAD_INPUTS = [
    *(([option, value], option) for option, values in REFUSED_VALUES.items()
      for value in values),
    (["--ds", "foo"], "--ds: unknown container 'foo' (accepted: lazy_list, hm_list"),
    (["--scheme", "foo"], "--scheme: unknown scheme 'foo' (accepted: none, debra, hp"),
    (["--scheme", "none,foo"], "--scheme: unknown scheme 'foo'"),
    (["--threads=-2"], "--threads"),
    (["--insert", "60", "--delete", "50"], "--insert 60 and --delete 50"),
    # A stack or a queue has no lookups: pushes and pops must make up every operation.
    (["--ds", "ms_queue", "--insert", "30", "--delete", "30"],
     "--insert 30 and --delete 30 add up to 60 percent, but ms_queue is a queue: its operations "
     "are pushes (--insert) and pops (--delete), which must add up to 100"),
    (["--ds", "lazy_list,treiber_stack", "--insert", "10", "--delete", "10"],
     "but treiber_stack is a stack"),
    (["--alloc", "foo"], "--alloc: unknown allocator 'foo' (accepted: glibc, jemalloc, tcmalloc, "
                         "mimalloc)"),
    (["--timeline-capacity", "1K"], "--timeline-capacity: needs --timeline"),
    (["--slow-free-us", "5"], "--slow-free-us: needs --timeline"),
    (["--stall", "-1"], "--stall: expected a number of stalled threads from 0 to 64"),
    (["--stall", "65"], "--stall: expected a number of stalled threads from 0 to 64"),
    (["--sample-ms", "-5"], "--sample-ms: expected whole milliseconds from 0 (off) to 60000"),
    (["--sample-ms", "60001"], "--sample-ms: expected whole milliseconds"),
    # A value listed twice would run its points twice under the same trial numbers.
    (["--scheme", "debra,debra"], "--scheme: 'debra' is listed twice (each value runs once"),
    (["--ds", "hm_list,lazy_list,hm_list"], "--ds: 'hm_list' is listed twice"),
    (["--threads", "1,2,01"], "--threads: '1' is listed twice"),
    (["--alloc", "glibc,glibc"], "--alloc: 'glibc' is listed twice"),
    # CLI11's own parse errors
    (["--bogus"], "--bogus"),
    (["--threads", "1", "--threads", "2"], "--threads"),
    (["surplus"], "surplus"),
    (["--threads"], "--threads"),  # missing value: must stay last
]


def check_refusal(r, name, needle):
    """Checks a refusal: exit status 2, nothing on stdout, and one line on stderr that names the
    program and contains needle; returns that line, or None where stderr was not one line."""
    check(r.returncode == 2, f"{name}: exit status {r.returncode}, expected 2")
    check(r.stdout == "", f"{name}: wrote to stdout: {r.stdout!r}")
    lines = r.stderr.splitlines()
    if not check(len(lines) == 1 and r.stderr.endswith("\n"), f"{name}: not one line: {r.stderr!r}"):
        return None
    check(lines[0].startswith("reclaim-bench: "), f"{name}: no program name: {lines[0]!r}")
    check(needle in lines[0], f"{name}: {lines[0]!r} does not mention {needle!r}")
    return lines[0]


def expect_refused(args, needle, out, env=None):
    """Runs the lab with args and --out out, and checks the refusal; returns the message."""
    r = bench("--out", out, *args, env=env)
    check_refusal(r, " ".join(args), needle)
    return r.stderr


def applicability():
    """{(container, scheme): True if `list` marks the pair "yes"}."""
    lines = bench("list").stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Applicability"))
    schemes = lines[start + 1].split()
    pairs = {}
    for line in lines[start + 2:]:
        cells = line.split()
        if len(cells) != len(schemes) + 1:
            break
        pairs.update({(cells[0], s): cell == "yes" for s, cell in zip(schemes, cells[1:])})
    return pairs


def listed_names():
    """The first word of every indented line of `list`: schemes, peers, containers, ..."""
    return {line.split()[0] for line in bench("list").stdout.splitlines() if line.startswith("  ")}


def unsupported_pairs():
    """(container, scheme) pairs that `list` marks "no"."""
    return [pair for pair, applies in applicability().items() if not applies]


def test_bad_input(tmp):
    absent = os.path.join(tmp, "absent.jsonl")
    present = os.path.join(tmp, "present.jsonl")
    sentinel = '{"sentinel": true}\n'
    with open(present, "w", encoding="utf-8") as f:
        f.write(sentinel)

    cases = list(BAD_INPUTS)
    pairs = unsupported_pairs()
    for ds, scheme in pairs:
        cases.append((["--ds", ds, "--scheme", scheme], f"{ds} does not support {scheme}: "))
    if not pairs:
        print("note: every container supports every scheme; the refused-pair case is not exercised")

    # A scheme this build leaves out says how to get it: a peer of a library not installed, a
    # defaults-sweep variant without -DRECLAIM_BENCH_SWEEP=ON (when this build has the sweep, the
    # variant runs: no case).
    listed = listed_names()
    for library in ("xenium", "libcds", "urcu", "ck"):
        if not any(name.startswith(f"{library}:") for name in listed):
            cases.append((["--scheme", f"{library}:debra"], "a peer's scheme"))
    if "ebr_k4" not in listed:
        cases.append((["--scheme", "debra,ebr_k4"],
                      "configure the lab with -DRECLAIM_BENCH_SWEEP=ON"))

    for args, needle in cases:
        expect_refused(args, needle, absent)
        check(not os.path.exists(absent), f"{' '.join(args)}: created the --out file")
        expect_refused(args, needle, present)
        check(read(present) == sentinel, f"{' '.join(args)}: modified the --out file")

    # An --out file that cannot be opened is bad input too, and so is an empty name.
    r = bench("--out", os.path.join(tmp, "no", "such", "dir.jsonl"))
    check(r.returncode == 2 and r.stderr.startswith("reclaim-bench: --out: cannot open")
          and r.stderr.count("\n") == 1, f"unopenable --out: {r.returncode} {r.stderr!r}")
    r = bench("--out", "")
    check(r.returncode == 2 and "--out" in r.stderr and r.stderr.count("\n") == 1,
          f"empty --out: {r.returncode} {r.stderr!r}")

    # --timeline: bad values refused before anything is written, the timeline file included.
    timeline_dir = os.path.join(tmp, "timeline")
    os.mkdir(timeline_dir)
    timeline = os.path.join(timeline_dir, "t.csv")
    timeline_refuses = {"--timeline-capacity": ["0", "5X", "11M", "-1"],
                        "--slow-free-us": ["-1", "1.5", "abc"], "--threads": ["0"]}
    for option, values in timeline_refuses.items():
        for value in values:
            expect_refused(["--timeline", timeline, option, value], option, absent)
            check(os.listdir(timeline_dir) == [] and not os.path.exists(absent),
                  f"--timeline {option} {value}: wrote {os.listdir(timeline_dir)}")
    expect_refused(["--timeline", ""], "--timeline", absent)
    expect_refused(["--timeline", os.path.join(tmp, "no", "such", "t.csv")],
                   "--timeline: cannot create", absent)
    check(not os.path.exists(absent), "--timeline unwritable: created the --out file")


# --- list ------------------------------------------------------------------------------------

def test_list(_tmp):
    r = bench("list")
    check(r.returncode == 0, f"list: exit status {r.returncode}: {r.stderr}")
    lines = r.stdout.splitlines()
    for name, family in SCHEMES.items():
        check(any(line.split()[:2] == [name, family] for line in lines if line.strip()),
              f"list: no scheme line for {name} ({family})")
    check("Allocators" in lines, "list: no allocator section")
    check(sum("(in effect" in line for line in lines) == 1,
          "list: not exactly one allocator in effect")

    start = next((i for i, line in enumerate(lines) if line.startswith("Applicability")), None)
    if not check(start is not None, "list: no applicability matrix"):
        return
    columns = lines[start + 1].split()
    check(set(SCHEMES) <= set(columns), f"list: matrix columns {columns}")
    rows = {}
    for line in lines[start + 2:]:
        cells = line.split()
        if len(cells) != len(columns) + 1:
            break
        rows[cells[0]] = cells[1:]
    check(set(CONTAINERS) <= set(rows), f"list: matrix rows {sorted(rows)}")
    check(all(cell in ("yes", "no") for cells in rows.values() for cell in cells),
          f"list: matrix cells {rows}")
    refused = sum(cells.count("no") for cells in rows.values())
    reasons = sum(" does not support " in line for line in lines)
    check(refused == reasons, f"list: {refused} refused pairs but {reasons} reasons")
    for ds, kind in POOLS.items():
        check(ds in rows, f"list: no matrix row for {ds}")
        check(any(line.split() == [ds, kind] for line in lines),
              f"list: {ds} not listed as a {kind} in the Containers section")

    # docs/applicability.md shows the matrix as `list --markdown` prints it, between markers.
    r = bench("list", "--markdown")
    check(r.returncode == 0 and r.stdout.startswith("| container |"),
          f"list --markdown: exit status {r.returncode}: {r.stdout[:200]} {r.stderr}")
    doc = read(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                            "applicability.md"))
    marker = "reclaim-bench list --markdown -->\n"
    shown = doc.split("<!-- begin: " + marker, 1)[-1].split("<!-- end: " + marker, 1)[0]
    check(shown == r.stdout, "docs/applicability.md: the matrix differs from `reclaim-bench list "
          "--markdown`; paste the command's output between the markers")

    r = bench("--help")
    check(r.returncode == 0 and "--scheme" in r.stdout, f"--help: {r.returncode}")


# --- run -------------------------------------------------------------------------------------

def load_lines(path):
    if not check(os.path.exists(path), f"{path}: no such file"):
        return []
    records = []
    for number, line in enumerate(read(path).splitlines(), 1):
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            failures.append(f"{path}:{number}: not JSON ({e}): {line!r}")
    return records


def check_record(rec, where):
    missing = [f for f in REQUIRED_FIELDS if f not in rec]
    if not check(not missing, f"{where}: missing fields {missing}"):
        return
    check(rec["checksum_ok"] is True, f"{where}: checksum_ok is {rec['checksum_ok']}")
    check(rec["freed"] <= rec["retired"],
          f"{where}: freed {rec['freed']} > retired {rec['retired']}")
    check(rec["ops"] > 0 and rec["throughput"] > 0, f"{where}: no operations")
    check(abs(rec["throughput"] * rec["seconds"] - rec["ops"]) <= 1e-6 * rec["ops"] + 1,
          f"{where}: throughput is not ops / seconds")
    check(rec["family"] == FAMILIES.get(rec["scheme"]), f"{where}: family {rec['family']}")
    check(rec["alloc"] in ALLOCATORS,
          f"{where}: alloc {rec['alloc']}")
    check(isinstance(rec["git"], str) and rec["git"], f"{where}: git {rec['git']!r}")
    check(isinstance(rec["cpus"], int) and rec["cpus"] >= 1, f"{where}: cpus {rec['cpus']}")
    check(rec["peak_rss_bytes"] > 0 and rec["rss_bytes"] > 0, f"{where}: no RSS")
    if rec["scheme"] == "none":
        check(rec["freed"] == 0, f"{where}: none freed {rec['freed']}")


def check_validated(rec, where):
    """check_record, and the container held exactly what the successful operations left."""
    check_record(rec, where)
    check(rec.get("well_formed") is True and rec.get("final_size") == rec.get("expected_size")
          and rec.get("final_key_sum") == rec.get("expected_key_sum"), f"{where}: {rec}")


def test_run(tmp):
    out = os.path.join(tmp, "sweep.jsonl")
    r = bench("--ds", "lazy_list,hm_list", "--scheme", "none,debra,hp", "--threads", "1,2",
              "--seconds", "0.2", "--keys", "1K", "--out", out)
    check(r.returncode == 0, f"sweep: exit status {r.returncode}: {r.stderr}")
    check(r.stderr == "", f"sweep: stderr not empty (no progress off a terminal): {r.stderr!r}")
    check("Summary" in r.stdout and "vs none" in r.stdout, "sweep: no summary table")
    records = load_lines(out)
    check(len(records) == 12, f"sweep: {len(records)} JSON lines, expected 12")
    points = set()
    for rec in records:
        where = f"sweep {rec.get('ds')} {rec.get('scheme')} threads={rec.get('threads')}"
        check_record(rec, where)
        points.add((rec.get("ds"), rec.get("scheme"), rec.get("threads")))
        check(rec.get("keys") == 1000 and rec.get("prefill") is True and rec.get("seed") == 1
              and rec.get("insert") == 50 and rec.get("delete") == 50 and rec.get("trial") == 1,
              f"{where}: configuration not recorded")
        check(rec.get("seconds", 0) >= 0.2, f"{where}: measured {rec.get('seconds')} s")
        # Half the range is the equilibrium of 50% inserts and 50% deletes over uniform keys.
        check(abs(rec.get("final_size", -1000) - 500) <= 150,
              f"{where}: final size {rec.get('final_size')}")
    expected = {(d, s, t) for d in CONTAINERS for s in SCHEMES for t in (1, 2)}
    check(points == expected, f"sweep: ran {sorted(points)}")

    # Appending: earlier lines stay as they were. Lookups only: the size is exactly the prefill.
    # 0.2 s, as above: in 0.05 s a loaded machine (ctest runs compilations beside it) once let
    # neither worker finish an operation.
    before = read(out)
    r = bench("--ds", "hm_list", "--scheme", "debra", "--threads", "2", "--seconds", "0.2",
              "--trials", "2", "--keys", "100", "--insert", "0", "--delete", "0", "--out", out)
    check(r.returncode == 0, f"append: exit status {r.returncode}: {r.stderr}")
    after = read(out)
    check(after.startswith(before), "append: earlier lines changed")
    added = load_lines(out)[12:]
    check(len(added) == 2, f"append: {len(added)} lines added, expected 2")
    for rec in added:
        check_record(rec, "append")
        check(rec.get("final_size") == 50 and rec.get("retired") == 0, f"append: {rec}")
    check([rec.get("trial") for rec in added] == [1, 2], "append: trials not numbered 1, 2")

    # --interleave runs the trials round-robin: trial 1 of every point, then trial 2. The dry run
    # lists that order, the run keeps it, and an experiment file may ask for it.
    args = ["--ds", "hm_list", "--scheme", "none,debra", "--seconds", "0.05", "--trials", "2",
            "--keys", "100", "--interleave"]
    r = bench(*args, "--dry-run")
    listed = [line.split()[1] + " " + line.split()[-1] for line in r.stdout.splitlines()
              if " threads=" in line]
    check(listed == ["none 1/2", "debra 1/2", "none 2/2", "debra 2/2"],
          f"interleave dry run: {r.stdout!r}")
    out = os.path.join(tmp, "interleaved.jsonl")
    r = bench(*args, "--out", out)
    check(r.returncode == 0, f"interleave: exit status {r.returncode}: {r.stderr}")
    check([(rec.get("scheme"), rec.get("trial")) for rec in load_lines(out)]
          == [("none", 1), ("debra", 1), ("none", 2), ("debra", 2)], "interleave: trial order")
    experiment = os.path.join(tmp, "interleave.toml")
    write(experiment, 'title = "t"\n[[run]]\nds = "hm_list"\nscheme = ["none", "debra"]\n'
                      'trials = 2\nseconds = 0.05\ninterleave = true\n')
    r = bench("--experiment", experiment, "--dry-run")
    listed = [line.split()[1] + " " + line.split()[-1] for line in r.stdout.splitlines()
              if " threads=" in line]
    check(listed == ["none 1/2", "debra 1/2", "none 2/2", "debra 2/2"],
          f"interleave in an experiment: {r.stdout!r} {r.stderr!r}")

    # No prefill, lookups only: the structure stays empty; the seed is recorded as given.
    out = os.path.join(tmp, "empty.jsonl")
    r = bench("--no-prefill", "--insert", "0", "--delete", "0", "--seconds", "0.05", "--keys", "2",
              "--seed", "18446744073709551615", "--out", out)
    check(r.returncode == 0, f"no-prefill: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out)
    if check(len(records) == 1, f"no-prefill: {len(records)} lines"):
        rec = records[0]
        check_record(rec, "no-prefill")
        check(rec.get("final_size") == 0 and rec.get("prefill") is False
              and rec.get("seed") == 18446744073709551615 and rec.get("keys") == 2,
              f"no-prefill: {rec}")


# --- alloc -----------------------------------------------------------------------------------

def allocator_lines():
    """name: the rest of its line in the Allocators section of `list`."""
    lines = bench("list").stdout.splitlines()
    start = lines.index("Allocators")
    found = {}
    for line in lines[start + 1:]:
        if not line.strip():
            break
        name, _, rest = line.strip().partition(" ")
        found[name] = rest.strip()
    return found


def test_alloc(tmp):
    listed = allocator_lines()
    check(sorted(listed) == sorted(ALLOCATORS), f"list: allocators {sorted(listed)}")
    unusable = {name: rest for name, rest in listed.items() if not rest.startswith("/")}
    if "sanitizer" in " ".join(unusable.values()):
        print("note: sanitizer build: only glibc can run; the other allocators are checked to be "
              "refused")
        for name in unusable:
            expect_refused(["--alloc", name], f"--alloc: {name} cannot be preloaded",
                           os.path.join(tmp, "absent.jsonl"))
        runnable = ["glibc"]
    else:
        check(not unusable, f"list: allocators not installed: {unusable} "
              "(scripts/deps.sh test installs them)")
        runnable = ALLOCATORS

    # One trial per allocator, each under the allocator it asked for, verified by the lab.
    out = os.path.join(tmp, "alloc.jsonl")
    r = bench("--ds", "hm_list", "--scheme", "debra", "--threads", "1", "--seconds", "0.1",
              "--keys", "1K", "--alloc", ",".join(runnable), "--out", out)
    check(r.returncode == 0, f"alloc sweep: exit status {r.returncode}: {r.stderr}")
    check(r.stderr == "", f"alloc sweep: stderr not empty: {r.stderr!r}")
    records = load_lines(out)
    check([rec.get("alloc") for rec in records] == runnable,
          f"alloc sweep: allocators {[rec.get('alloc') for rec in records]}, expected {runnable}")
    for rec in records:
        where = f"alloc sweep {rec.get('alloc')}"
        check_record(rec, where)
        check(isinstance(rec.get("alloc_lib"), str) and rec["alloc_lib"].startswith("/"),
              f"{where}: alloc_lib {rec.get('alloc_lib')!r}")
        if rec.get("alloc") == "tcmalloc":
            check("tcmalloc_minimal" in rec["alloc_lib"], f"{where}: not the minimal tcmalloc")
        elif rec.get("alloc") != "glibc":
            check(rec["alloc"] in rec["alloc_lib"], f"{where}: alloc_lib {rec['alloc_lib']}")
    check(all(a in r.stdout for a in runnable), "alloc sweep: allocator missing from the table")

    # An allocator that is not installed: the lookup is pointed at an empty directory.
    empty = os.path.join(tmp, "no-allocators")
    os.mkdir(empty)
    env = {"RECLAIM_BENCH_ALLOC_DIR": empty}
    present = os.path.join(tmp, "present.jsonl")
    sentinel = '{"sentinel": true}\n'
    with open(present, "w", encoding="utf-8") as f:
        f.write(sentinel)
    for name, package in [("jemalloc", "libjemalloc2"), ("tcmalloc", "libtcmalloc-minimal4"),
                          ("mimalloc", "libmimalloc2.0")]:
        if name not in runnable:
            continue
        needle = f"--alloc: {name} is not installed (apt-get install {package})"
        expect_refused(["--alloc", f"glibc,{name}"], needle, present, env=env)
        check(read(present) == sentinel, f"--alloc {name} not installed: modified the --out file")
        absent = os.path.join(tmp, "absent.jsonl")
        expect_refused(["--alloc", name], needle, absent, env=env)
        check(not os.path.exists(absent), f"--alloc {name} not installed: created the --out file")
    if runnable == ALLOCATORS:
        r = bench("list", env=env)
        check(r.returncode == 0 and r.stdout.count("is not installed (apt-get install") == 3,
              f"list without allocators: {r.returncode} {r.stdout!r}")

    # A trial whose allocator is not the one asked for does not run, loudly: a user preload of
    # jemalloc under --alloc glibc (run in process) and --alloc mimalloc (in a child).
    jemalloc = listed.get("jemalloc", "").split(" ")[0]
    if "jemalloc" in runnable and "mimalloc" in runnable:
        out = os.path.join(tmp, "mismatch.jsonl")
        r = bench("--seconds", "0.05", "--keys", "100", "--alloc", "glibc,mimalloc", "--out", out,
                  env={"LD_PRELOAD": jemalloc})
        check(r.returncode == 1, f"mismatch: exit status {r.returncode}")
        check(r.stderr.count("TRIAL NOT RUN") == 1 and "requested glibc" in r.stderr
              and "in effect is jemalloc" in r.stderr, f"mismatch: {r.stderr!r}")
        # mimalloc is preloaded first, so it is the one in effect in its child.
        check([rec.get("alloc") for rec in load_lines(out)] == ["mimalloc"],
              f"mismatch: {read(out)!r}")

        # The child checks too: a "jemalloc" that is really mimalloc is caught there.
        fake = os.path.join(tmp, "fake-allocators")
        os.mkdir(fake)
        os.symlink(listed["mimalloc"].split(" ")[0], os.path.join(fake, "libjemalloc.so.2"))
        out = os.path.join(tmp, "fake.jsonl")
        r = bench("--seconds", "0.05", "--keys", "100", "--alloc", "jemalloc", "--out", out,
                  env={"RECLAIM_BENCH_ALLOC_DIR": fake})
        check(r.returncode == 1 and "requested jemalloc, but the allocator in effect is mimalloc"
              in r.stderr, f"fake jemalloc: {r.returncode} {r.stderr!r}")
        check(not os.path.exists(out), f"fake jemalloc: created {out}")


# --- timeline --------------------------------------------------------------------------------

TIMELINE_HEADER = ["ds", "scheme", "alloc", "threads", "trial", "thread", "event", "start_ns",
                   "end_ns", "value"]
TIMELINE_EVENTS = {"batch_free", "slow_free", "epoch_advance", "epoch_seen", "token_receipt"}


def read_timeline(path):
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    check(rows and rows[0] == TIMELINE_HEADER, f"{path}: header {rows[:1]}")
    return [dict(zip(TIMELINE_HEADER, row)) for row in rows[1:]]


def check_timeline(rows, records, where):
    """Rows against the JSON lines of the same run: per trial, as many rows as timeline_events."""
    by_trial = {}
    for row in rows:
        by_trial.setdefault((row["alloc"], int(row["trial"])), []).append(row)
    for rec in records:
        key = (rec["alloc"], rec["trial"])
        mine = by_trial.pop(key, [])
        check("timeline_events" in rec and "timeline_dropped" in rec,
              f"{where} {key}: no timeline counts in the JSON line")
        check(len(mine) == rec.get("timeline_events"),
              f"{where} {key}: {len(mine)} rows, JSON says {rec.get('timeline_events')}")
        limit = (rec["seconds"] + 5) * 1e9
        advances = []
        for row in mine:
            check(row["ds"] == rec["ds"] and row["scheme"] == rec["scheme"]
                  and int(row["threads"]) == rec["threads"], f"{where}: row {row}")
            check(0 <= int(row["thread"]) < rec["threads"], f"{where}: thread in {row}")
            check(row["event"] in TIMELINE_EVENTS, f"{where}: event in {row}")
            start, end, value = int(row["start_ns"]), int(row["end_ns"]), int(row["value"])
            check(0 <= start <= end <= limit, f"{where}: times in {row}")
            if row["event"] in ("epoch_advance", "epoch_seen", "token_receipt"):
                check(start == end, f"{where}: instantaneous event with a duration: {row}")
            if row["event"] == "batch_free":
                check(value > 0, f"{where}: empty batch: {row}")
            if row["event"] == "epoch_advance":
                advances.append(value)
        # Each value of the global epoch is installed by exactly one successful advance.
        check(len(advances) == len(set(advances)), f"{where} {key}: an epoch advanced twice")
        if rec.get("timeline_dropped") == 0:
            check(len(advances) == rec["epochs"],
                  f"{where} {key}: {len(advances)} epoch_advance rows, {rec['epochs']} epochs")
            check(any(row["event"] == "batch_free" for row in mine),
                  f"{where} {key}: no batch_free")
    check(not by_trial, f"{where}: rows of trials without a JSON line: {sorted(by_trial)}")


def test_timeline(tmp):
    listed = allocator_lines()
    allocs = ["glibc"] + [a for a in ("jemalloc", "mimalloc") if listed.get(a, "").startswith("/")]
    timeline = os.path.join(tmp, "t.csv")
    with open(timeline, "w", encoding="utf-8") as f:
        f.write("old contents\n")  # replaced, not appended to
    out = os.path.join(tmp, "t.jsonl")
    # Several allocators: every trial runs in a child, which hands its rows to the lab.
    r = bench("--ds", "hm_list", "--scheme", "debra", "--threads", "2", "--seconds", "0.2",
              "--keys", "100", "--trials", "2", "--alloc", ",".join(allocs), "--timeline", timeline,
              "--out", out)
    check(r.returncode == 0, f"timeline: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out)
    check(len(records) == 2 * len(allocs), f"timeline: {len(records)} JSON lines")
    check_timeline(read_timeline(timeline), records, "timeline (children)")
    check(sorted(os.listdir(tmp)) == ["t.csv", "t.jsonl"], f"timeline: left {os.listdir(tmp)}")

    # In the lab's own process, with a tiny buffer: events past it are dropped and counted.
    out2 = os.path.join(tmp, "t2.jsonl")
    r = bench("--ds", "lazy_list", "--scheme", "debra", "--threads", "2", "--seconds", "0.2",
              "--keys", "100", "--timeline", timeline, "--timeline-capacity", "10",
              "--slow-free-us", "0", "--out", out2)
    check(r.returncode == 0, f"timeline capacity: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out2)
    if check(len(records) == 1, f"timeline capacity: {len(records)} JSON lines"):
        rec = records[0]
        check(rec.get("timeline_events", 0) <= 20 and rec.get("timeline_dropped", 0) > 0,
              f"timeline capacity: {rec.get('timeline_events')} events, "
              f"{rec.get('timeline_dropped')} dropped")
        check_timeline(read_timeline(timeline), records, "timeline (capacity 10)")

    # Without --timeline, no timeline fields.
    out3 = os.path.join(tmp, "t3.jsonl")
    r = bench("--seconds", "0.05", "--keys", "100", "--out", out3)
    check(r.returncode == 0 and all("timeline_events" not in rec for rec in load_lines(out3)),
          "no --timeline: timeline fields in the JSON line")


# --- stall -----------------------------------------------------------------------------------

# The gauge behind `pending` is flushed per thread every 64 retires or frees (core/stats.hpp), so
# a sample may lag by up to that much per thread, workers and stalled threads alike.
FLUSH_SLACK = 64


def check_samples(rec, where):
    """The samples of a --sample-ms trial: present, in time order, within the measured interval,
    and the first at its start. Returns the pending series."""
    samples = rec.get("samples")
    if not check(isinstance(samples, list) and len(samples) >= 2, f"{where}: samples {samples!r}"):
        return []
    times = [s["t_ms"] for s in samples]
    check(all(a < b for a, b in zip(times, times[1:])), f"{where}: samples not in time order")
    # The first sample is due at the start; on a loaded 2-core machine the sampling thread may be
    # scheduled a few periods late (25 ms seen with ctest running three tests at once).
    check(0 <= times[0] < 5 * rec["sample_ms"] and times[-1] <= rec["seconds"] * 1000,
          f"{where}: samples outside the trial: {times[0]}..{times[-1]} ms of "
          f"{rec['seconds']} s")
    check(all(s["rss_bytes"] > 0 for s in samples), f"{where}: a sample without RSS")
    check(max(s["pending"] for s in samples) <= rec["pending_peak"] + FLUSH_SLACK * 3,
          f"{where}: a sample above pending_peak {rec['pending_peak']}")
    return [s["pending"] for s in samples]


def test_stall(tmp):
    out = os.path.join(tmp, "stall.jsonl")
    r = bench("--ds", "lazy_list", "--scheme", "debra,hp", "--threads", "2", "--seconds", "0.5",
              "--keys", "1K", "--stall", "1", "--sample-ms", "20", "--out", out)
    check(r.returncode == 0, f"stall: exit status {r.returncode}: {r.stderr}")
    records = {rec.get("scheme"): rec for rec in load_lines(out)}
    if not check(sorted(records) == ["debra", "hp"], f"stall: schemes {sorted(records)}"):
        return
    series = {}
    for scheme, rec in records.items():
        where = f"stall {scheme}"
        check_record(rec, where)
        check(rec.get("stall") == 1 and rec.get("sample_ms") == 20, f"{where}: {rec}")
        # 0.5 s every 20 ms: 25 samples, give or take one for timing.
        series[scheme] = check_samples(rec, where)
        check(24 <= len(series[scheme]) <= 26, f"{where}: {len(series[scheme])} samples")
    debra, hp = series["debra"], series["hp"]
    if not (debra and hp):
        return
    slack = FLUSH_SLACK * 3  # two workers and the stalled thread
    # debra: the stalled thread's announced epoch stops reclamation, so garbage only grows.
    check(all(b >= a - slack for a, b in zip(debra, debra[1:])),
          f"stall debra: pending fell while a thread was stalled: {debra}")
    half = len(debra) // 2
    check(debra[-1] >= 1.5 * debra[half] and debra[-1] > 1000,
          f"stall debra: pending did not grow over the trial: {debra}")
    check(records["debra"]["freed"] <= records["debra"]["retired"] // 10,
          f"stall debra: freed {records['debra']['freed']} of {records['debra']['retired']}")
    # hp: the stalled thread holds no hazard pointer, so garbage stays bounded: the second half of
    # the trial peaks no higher than about the first, and far below debra's.
    check(max(hp[half:]) <= 2 * max(hp[:half]) + slack,
          f"stall hp: pending grew over the trial: {hp}")
    check(max(hp) <= debra[-1] // 4, f"stall hp: pending {max(hp)} not bounded (debra "
                                     f"{debra[-1]})")
    check(records["hp"]["freed"] > 0, "stall hp: freed nothing")

    # Without --sample-ms: no samples; without --stall: stall 0.
    out2 = os.path.join(tmp, "plain.jsonl")
    r = bench("--seconds", "0.05", "--keys", "100", "--out", out2)
    rec = (load_lines(out2) or [{}])[0]
    check(r.returncode == 0 and rec.get("stall") == 0 and rec.get("sample_ms") == 0
          and "samples" not in rec, f"no --stall, no --sample-ms: {rec}")

    # Through a child process (two allocators: every trial runs in one) and an experiment file.
    listed = allocator_lines()
    allocs = ["glibc"] + [a for a in ("jemalloc",) if listed.get(a, "").startswith("/")]
    out3 = os.path.join(tmp, "child.jsonl")
    r = bench("--ds", "hm_list", "--scheme", "debra", "--threads", "1", "--seconds", "0.2",
              "--keys", "1K", "--stall", "2", "--sample-ms", "50", "--alloc", ",".join(allocs),
              "--out", out3)
    check(r.returncode == 0, f"stall child: exit status {r.returncode}: {r.stderr}")
    for rec in load_lines(out3):
        where = f"stall child {rec.get('alloc')}"
        check(rec.get("stall") == 2 and rec.get("sample_ms") == 50, f"{where}: {rec}")
        check(3 <= len(check_samples(rec, where)) <= 5, f"{where}: {len(rec.get('samples'))}")
    experiment = os.path.join(tmp, "stall.toml")
    out4 = os.path.join(tmp, "experiment.jsonl")
    write(experiment, f'title = "stall"\nout = {toml_string(out4)}\n[[run]]\nds = "hm_list"\n'
                      'scheme = "debra"\nseconds = 0.1\nkeys = 100\nstall = 1\nsample_ms = 10\n')
    r = bench("--experiment", experiment, "--dry-run")
    check(r.returncode == 0 and "1 stalled, memory sampled every 10 ms" in r.stdout,
          f"stall experiment dry run: {r.returncode} {r.stdout!r} {r.stderr!r}")
    r = bench("--experiment", experiment, "--stall", "3")
    check(r.returncode == 0, f"stall experiment: exit status {r.returncode}: {r.stderr}")
    for rec in load_lines(out4):
        check(rec.get("stall") == 3 and rec.get("sample_ms") == 10,
              f"stall experiment: the file's sample_ms and the command line's --stall: {rec}")
        check_samples(rec, "stall experiment")


# --- experiment ------------------------------------------------------------------------------

EXPERIMENTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "experiments")

# Two sweeps: 4 trials, then 2 (no prefill, lookups only: the structure stays empty).
EXPERIMENT = """\
title = "CLI test"
paper = "none"
claim = "a test"
out = {out}

[[run]]
ds = "hm_list"
scheme = ["none", "debra"]
threads = [1, 2]
seconds = 0.1
keys = "1K"

[[run]]
ds = ["lazy_list"]
scheme = "debra"
seconds = 0.1
trials = 2
keys = 500
insert = 0
delete = 0
prefill = false
seed = 7
timeline = {timeline}

[[plot]]
kind = "throughput"
"""


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def toml_string(text):
    return json.dumps(text)  # a JSON string without escapes is a TOML basic string


def test_experiment(tmp):
    out = os.path.join(tmp, "e-results", "sub", "e.jsonl")
    timeline = os.path.join(tmp, "timelines", "e.csv")
    experiment = os.path.join(tmp, "e.toml")
    write(experiment, EXPERIMENT.format(out=toml_string(out), timeline=toml_string(timeline)))

    # --dry-run lists the 6 trials and their 0.6 s, and creates nothing.
    r = bench("--experiment", experiment, "--dry-run")
    check(r.returncode == 0, f"dry run: exit status {r.returncode}: {r.stderr}")
    trials = [line for line in r.stdout.splitlines() if " threads=" in line]
    check(len(trials) == 6, f"dry run: {len(trials)} trial lines: {r.stdout!r}")
    check("lazy_list debra glibc threads=1 trial 2/2" in r.stdout, f"dry run: {r.stdout!r}")
    check("6 trials, 0.6 s measured" in r.stdout, f"dry run: no estimate: {r.stdout!r}")
    check(sorted(os.listdir(tmp)) == ["e.toml"], f"dry run: created {os.listdir(tmp)}")

    # The run: one valid JSON line per trial, each with its sweep's settings; directories made;
    # the second sweep's timeline in its own file.
    r = bench("--experiment", experiment)
    check(r.returncode == 0, f"experiment: exit status {r.returncode}: {r.stderr}")
    check(r.stdout.count("Summary") == 2, "experiment: not one summary per sweep")
    records = load_lines(out) if os.path.exists(out) else []
    check(len(records) == 6, f"experiment: {len(records)} JSON lines, expected 6")
    for rec in records[:4]:
        check_record(rec, "experiment run 1")
        check(rec.get("ds") == "hm_list" and rec.get("keys") == 1000 and rec.get("prefill") is True
              and rec.get("seed") == 1 and rec.get("seconds_requested") == 0.1,
              f"experiment run 1: {rec}")
    check(sorted((rec.get("scheme"), rec.get("threads")) for rec in records[:4])
          == [("debra", 1), ("debra", 2), ("none", 1), ("none", 2)],
          "experiment run 1: not the sweep of the file")
    for rec in records[4:]:
        check_record(rec, "experiment run 2")
        check(rec.get("ds") == "lazy_list" and rec.get("keys") == 500 and rec.get("prefill") is False
              and rec.get("seed") == 7 and rec.get("final_size") == 0 and rec.get("threads") == 1,
              f"experiment run 2: {rec}")
    check([rec.get("trial") for rec in records[4:]] == [1, 2], "experiment run 2: trials")
    if check(os.path.exists(timeline), "experiment: no timeline file"):
        rows = read(timeline).splitlines()
        check(rows[0].startswith("ds,scheme,") and len(rows) > 1
              and all(row.startswith("lazy_list,debra,") for row in rows[1:]),
              f"experiment: timeline rows {rows[:3]}")

    # Overrides: the command line's flags replace the file's values in every sweep.
    other = os.path.join(tmp, "other.jsonl")
    before = read(out)
    r = bench("--experiment", experiment, "--seconds", "0.05", "--trials", "1", "--threads", "2",
              "--prefill", "--seed", "9", "--out", other)
    check(r.returncode == 0, f"overrides: exit status {r.returncode}: {r.stderr}")
    check(read(out) == before, "overrides: wrote to the file's out instead of --out")
    records = load_lines(other) if os.path.exists(other) else []
    check(len(records) == 3, f"overrides: {len(records)} JSON lines, expected 3")
    for rec in records:
        check_record(rec, "overrides")
        check(rec.get("threads") == 2 and rec.get("trial") == 1 and rec.get("prefill") is True
              and rec.get("seed") == 9 and rec.get("seconds_requested") == 0.05,
              f"overrides: {rec}")
    check([rec.get("keys") for rec in records] == [1000, 1000, 500],
          "overrides: a value not overridden changed")

    test_experiment_bad_input(tmp)

    # Every experiment of the project is valid and takes at most 10 minutes of measured time. Run
    # from tmp: a dry run creates nothing, so results/ must not appear there.
    files = sorted(f for f in os.listdir(EXPERIMENTS) if f.endswith(".toml"))
    check(files, f"no experiment files in {EXPERIMENTS}")
    for name in files:
        r = subprocess.run([os.path.abspath(BENCH), "--experiment", os.path.join(EXPERIMENTS, name),
                            "--dry-run"],
                           capture_output=True, text=True, timeout=60, cwd=tmp)
        # A file that runs what this build leaves out (peers whose packages are missing, the
        # defaults sweep's variants) says so, and how to get them.
        if r.returncode == 2 and "is not in this build of the lab" in r.stderr:
            print(f"experiments/{name}: not checked: {r.stderr.strip()}")
            continue
        if not check(r.returncode == 0, f"experiments/{name}: --dry-run: {r.stderr.strip()}"):
            continue
        total = [line for line in r.stdout.splitlines() if line.startswith("Dry run: ")]
        seconds = float(total[0].split(", ")[1].split(" s ")[0]) if total else 1e9
        check(seconds <= 600, f"experiments/{name}: {seconds} s measured, more than 10 minutes")
    check(not os.path.exists(os.path.join(tmp, "results")), "experiments --dry-run: created results/")


# (file contents after the title and a valid first run, text the one-line error must contain)
BAD_EXPERIMENTS = [
    ("[[run]]\nthread = 2\n", "[[run]] 2: unknown key 'thread' (accepted: ds, scheme, threads"),
    ("bogus = 1\n", "unknown key 'bogus' (accepted: title, paper, claim, out, run, plot)"),
    ("[[run]]\nthreads = \"2\"\n",
     "[[run]] 2: threads: expected an integer or an array of integers, got a string"),
    ("[[run]]\nthreads = [1, 2.5]\n", "[[run]] 2: threads: expected an integer or an array"),
    ("[[run]]\nseconds = true\n", "[[run]] 2: seconds: expected a number, got a boolean"),
    ("[[run]]\nprefill = 1\n", "[[run]] 2: prefill: expected true or false, got an integer"),
    ("[[run]]\nscheme = []\n", "[[run]] 2: scheme: expected a string or an array of strings, "
                               "got an empty array"),
    ("[[run]]\nscheme = [\"none\", \"foo\"]\n",
     "[[run]] 2: scheme: unknown scheme 'foo' (accepted: none, debra, hp"),
    ("[[run]]\nds = \"foo\"\n", "[[run]] 2: ds: unknown container 'foo' (accepted: lazy_list"),
    ("[[run]]\nscheme = [\"debra\", \"debra\"]\n", "[[run]] 2: scheme: 'debra' is listed twice"),
    ("[[run]]\nalloc = \"foo\"\n",
     "[[run]] 2: alloc: unknown allocator 'foo' (accepted: glibc, jemalloc"),
    ("[[run]]\nthreads = 0\n", "[[run]] 2: threads: expected a positive integer"),
    ("[[run]]\nthreads = -1\n", "[[run]] 2: threads: expected a positive integer"),
    ("[[run]]\nkeys = \"20X\"\n", "[[run]] 2: keys: expected a number of keys"),
    ("[[run]]\nseconds = 0\n", "[[run]] 2: seconds: expected a positive number"),
    ("[[run]]\ninsert = 60\ndelete = 50\n", "add up to 110 percent"),
    ("[[run]]\ntimeline_capacity = \"1K\"\n", "needs --timeline"),
    ("[[run]]\nstall = \"1\"\n", "[[run]] 2: stall: expected an integer, got a string"),
    ("[[run]]\nstall = 100\n", "[[run]] 2: stall: expected a number of stalled threads"),
    ("[[run]]\nsample_ms = 1.5\n", "[[run]] 2: sample_ms: expected an integer, got a float"),
    ("[[run]]\nsample_ms = -1\n", "[[run]] 2: sample_ms: expected whole milliseconds"),
    ("[[run]]\nout = \"x.jsonl\"\n", "[[run]] 2: unknown key 'out'"),
    ("plot = 1\n", "plot: expected an array of tables"),
    ("paper = 1\n", "paper: expected a string, got an integer"),
    ("[[run]\n", "not valid TOML"),
]


def test_experiment_bad_input(tmp):
    bad = os.path.join(tmp, "bad.toml")
    absent_dir = os.path.join(tmp, "bad-results")
    absent = os.path.join(absent_dir, "x.jsonl")
    present = os.path.join(tmp, "present.jsonl")
    sentinel = '{"sentinel": true}\n'
    good_run = '[[run]]\nds = "hm_list"\nseconds = 0.05\nkeys = 100\n'

    def refused(text, needle, args=(), path=bad):
        write(bad, text)
        r = bench("--experiment", path, *args)
        name = f"experiment {needle!r}"
        line = check_refusal(r, name, needle)
        if line is not None:
            check(path in line or needle.startswith("--"), f"{name}: file not named: {line!r}")
        check(not os.path.exists(absent_dir), f"{name}: created {absent_dir}")

    cases = list(BAD_EXPERIMENTS)
    for ds, scheme in unsupported_pairs():
        cases.append((f'[[run]]\nds = "{ds}"\nscheme = "{scheme}"\n',
                      f"[[run]] 2: {ds} does not support {scheme}: "))
    for tail, needle in cases:  # top-level keys before the first [[run]], tables after it
        first, last = (good_run, tail) if tail.startswith("[[") else (tail, good_run)
        refused(f'title = "t"\nout = {toml_string(absent)}\n{first}{last}', needle)
    refused(f"out = {toml_string(absent)}\n{good_run}", "title: required")
    refused(f'title = "t"\nout = {toml_string(absent)}\n', "no [[run]]")
    refused(f'title = "t"\nout = {toml_string(absent)}\nrun = 1\n', "run: expected an array of tables")
    refused(f'title = "t"\nout = ""\n{good_run}', "out: expected a file name")
    # An existing output file stays as it was.
    write(present, sentinel)
    refused(f'title = "t"\nout = {toml_string(present)}\n{good_run}[[run]]\nthreads = 0\n',
            "threads: expected a positive integer")
    check(read(present) == sentinel, "experiment bad input: modified the existing out file")
    # The command line: its own bad values, and overrides that make a sweep of the file bad.
    text = f'title = "t"\nout = {toml_string(absent)}\n{good_run}'
    refused(text, "--threads: expected a positive integer", ["--threads", "0"])
    refused(text + "insert = 60\n", "add up to 110 percent", ["--delete", "50"])
    refused(text, "[[run]] 1: --timeline-capacity: needs --timeline (from the command line)",
            ["--timeline-capacity", "1K"])
    refused(text, "--experiment: cannot read", path=os.path.join(tmp, "no-such.toml"))
    refused(text, "--experiment: not with `list`", ["list"])


# --- output paths ------------------------------------------------------------------------------

SENTINEL = '{"sentinel": true}\n'
QUICK = ["--seconds", "0.05", "--keys", "100"]  # a trial that takes no time


def check_one_line(r, status, name, needle):
    """r ended with `status` and one line on stderr that names the program and contains needle."""
    check(r.returncode == status, f"{name}: exit status {r.returncode}, expected {status}: "
                                  f"{r.stderr!r}")
    lines = r.stderr.splitlines()
    if check(len(lines) == 1 and r.stderr.endswith("\n"), f"{name}: not one line: {r.stderr!r}"):
        check(lines[0].startswith("reclaim-bench: "), f"{name}: no program name: {lines[0]!r}")
        check(needle in lines[0], f"{name}: {lines[0]!r} does not mention {needle!r}")


def test_output_paths(tmp):
    out = os.path.join(tmp, "out.jsonl")
    write(out, SENTINEL)

    def refused(args, needle, cwd=None):
        r = bench(*QUICK, *args, cwd=cwd, timeout=20)
        name = " ".join(args)
        check_one_line(r, 2, name, needle)
        check(r.stdout == "", f"{name}: ran trials before refusing: {r.stdout!r}")
        check(read(out) == SENTINEL, f"{name}: modified {out}")

    # A directory, refused before the first trial (not after every trial ran).
    directory = os.path.join(tmp, "dir")
    os.mkdir(directory)
    refused(["--out", directory], f"--out: '{directory}' is a directory, not a regular file")
    refused(["--out", out, "--timeline", directory],
            f"--timeline: '{directory}' is a directory, not a regular file")
    check(os.listdir(directory) == [], f"directory: wrote {os.listdir(directory)}")

    # Files that are not regular files: the lab would block opening a FIFO, or rename over it.
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    refused(["--out", fifo], f"--out: '{fifo}' is a FIFO, not a regular file")
    refused(["--out", out, "--timeline", fifo], f"--timeline: '{fifo}' is a FIFO")
    check(stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced")
    # /dev/full only as --out: an old lab renamed the timeline over it.
    refused(["--out", "/dev/full"], "--out: '/dev/full' is a character device, not a regular file")
    full_link = os.path.join(tmp, "full-link")
    os.symlink("/dev/full", full_link)
    refused(["--out", full_link], "is a character device")
    node = os.path.join(tmp, "full")  # a device node of our own: /dev/full's numbers
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except OSError:
        node = None  # not root, or no CAP_MKNOD
    if node:
        refused(["--out", out, "--timeline", node], f"--timeline: '{node}' is a character device")
        check(stat.S_ISCHR(os.stat(node).st_mode), "the device node was replaced")

    # The timeline is the --out file: the same path, relative, through a symbolic or a hard link.
    os.symlink(out, os.path.join(tmp, "sym.jsonl"))
    os.link(out, os.path.join(tmp, "hard.jsonl"))
    for timeline in [out, "out.jsonl", "./sub/../out.jsonl", "sym.jsonl", "hard.jsonl"]:
        os.makedirs(os.path.join(tmp, "sub"), exist_ok=True)
        refused(["--out", out, "--timeline", timeline], "is the same file as the JSON Lines output",
                cwd=tmp)
    # ... and before either exists.
    new = os.path.join(tmp, "new.jsonl")
    refused(["--out", new, "--timeline", os.path.join(tmp, "sub", "..", "new.jsonl")],
            "is the same file as the JSON Lines output")
    check(not os.path.exists(new), "same file: created the --out file")

    # A missing or unusable directory.
    refused(["--out", os.path.join(out, "x.jsonl")], "--out: cannot open")  # under a file
    refused(["--out", out, "--timeline", os.path.join(tmp, "no", "t.csv")],
            "--timeline: cannot create")

    # Experiment files: their out and each run's timeline, with the file and line.
    experiment = os.path.join(tmp, "paths.toml")
    good_run = '[[run]]\nds = "hm_list"\nseconds = 0.05\nkeys = 100\n'
    for text, needle in [
            (f'title = "t"\nout = {toml_string(directory)}\n{good_run}',
             f"paths.toml:2: [[run]] 1: out: '{directory}' is a directory"),
            (f'title = "t"\nout = {toml_string(out)}\n{good_run}timeline = {toml_string(fifo)}\n',
             f"paths.toml:7: [[run]] 1: timeline: '{fifo}' is a FIFO"),
            (f'title = "t"\nout = {toml_string(out)}\n{good_run}{good_run}'
             f'timeline = {toml_string(out)}\n',
             "paths.toml:11: [[run]] 2: timeline: "),
            (f'title = "t"\nout = {toml_string(new)}\n{good_run}timeline = "new.jsonl"\n',
             "is the same file as the JSON Lines output")]:
        write(experiment, text)
        r = bench("--experiment", experiment, cwd=tmp, timeout=20)
        check_one_line(r, 2, f"experiment {needle!r}", needle)
        check(read(out) == SENTINEL and not os.path.exists(new), f"experiment {needle!r}: wrote")
    # Directories an experiment creates count as creatable.
    write(experiment, f'title = "t"\nout = {toml_string(os.path.join(tmp, "a", "b", "o.jsonl"))}'
                      f'\n{good_run}')
    r = bench("--experiment", experiment, "--dry-run")
    check(r.returncode == 0 and not os.path.exists(os.path.join(tmp, "a")),
          f"experiment in new directories, dry run: {r.returncode} {r.stderr!r}")


# --- write errors ------------------------------------------------------------------------------

def limit_file_size(size):
    """A preexec_fn: files may grow to `size` bytes; a write past it is cut short, the next one
    fails with EFBIG (SIGXFSZ ignored: it would kill the lab instead)."""
    def preexec():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return preexec


def test_write_errors(tmp):
    # The file size limit falls in the middle of the second line: the first is written, the second
    # is cut short and must be rolled back, and the run stops there with the cause.
    probe = os.path.join(tmp, "probe.jsonl")
    r = bench(*QUICK, "--out", probe)
    line = len(read(probe).splitlines()[0]) + 1 if r.returncode == 0 else 1000
    out = os.path.join(tmp, "out.jsonl")
    write(out, SENTINEL)
    limit = len(SENTINEL) + line + line // 2
    r = bench(*QUICK, "--trials", "3", "--out", out, preexec_fn=limit_file_size(limit))
    check_one_line(r, 1, "file size limit", "File too large")
    check(f"'{out}'" in r.stderr and "the partial line was removed" in r.stderr,
          f"file size limit: the error does not name the file or the rollback: {r.stderr!r}")
    text = read(out)
    check(text.startswith(SENTINEL) and text.endswith("\n"),
          f"file size limit: a partial line left: {text[-80:]!r}")
    records = load_lines(out)
    check(len(records) == 2,
          f"file size limit: {len(records)} lines, expected the sentinel and one")
    check(r.stdout.count("lazy_list ") == 1 and "Summary" not in r.stdout,
          f"file size limit: the run did not stop at the failed write: {r.stdout!r}")

    # The timeline: the error names its file; the temporary file goes, the old timeline stays.
    timeline = os.path.join(tmp, "t.csv")
    write(timeline, "old timeline\n")
    r = bench("--seconds", "0.2", "--keys", "100", "--scheme", "debra", "--threads", "2",
              "--timeline", timeline, "--slow-free-us", "0", preexec_fn=limit_file_size(4096))
    check_one_line(r, 1, "timeline, file size limit",
                   f"error: writing '{timeline}.tmp")
    check("File too large" in r.stderr, f"timeline, file size limit: no cause: {r.stderr!r}")
    check(read(timeline) == "old timeline\n"
          and not [f for f in os.listdir(tmp) if ".tmp" in f],
          f"timeline, file size limit: left {os.listdir(tmp)}")

    # A file whose last line is incomplete (an older lab, a crash) is refused, untouched.
    partial = SENTINEL + '{"ds": "lazy_list", "thr'
    write(out, partial)
    r = bench(*QUICK, "--out", out)
    check_one_line(r, 2, "incomplete last line",
                   f"--out: the last line of '{out}' is incomplete")
    check(r.stdout == "" and read(out) == partial, "incomplete last line: ran or wrote")


# --- lazy --out ----------------------------------------------------------------------------------

def test_lazy_out(tmp):
    # No trial ran: no --out file, not even an empty one; from the command line and an experiment.
    listed = allocator_lines()
    preload = next((listed[a].split(" ")[0] for a in ("jemalloc", "mimalloc")
                    if listed.get(a, "").startswith("/")), None)
    if preload:
        out = os.path.join(tmp, "not-run.jsonl")
        r = bench(*QUICK, "--trials", "2", "--out", out, env={"LD_PRELOAD": preload})
        check(r.returncode == 1 and r.stderr.count("TRIAL NOT RUN") == 2,
              f"every trial not run: {r.returncode} {r.stderr!r}")
        check(not os.path.exists(out), "every trial not run: created the --out file")
        # Nor does it replace a timeline with one that has no trial.
        timeline = os.path.join(tmp, "t.csv")
        write(timeline, "old timeline\n")
        r = bench(*QUICK, "--timeline", timeline, env={"LD_PRELOAD": preload})
        check(r.returncode == 1 and read(timeline) == "old timeline\n",
              f"every trial not run: replaced the timeline: {read(timeline)[:80]!r}")
        out = os.path.join(tmp, "experiment.jsonl")
        experiment = os.path.join(tmp, "e.toml")
        write(experiment, f'title = "t"\nout = {toml_string(out)}\n[[run]]\nseconds = 0.05\n'
                          'keys = 100\n')
        r = bench("--experiment", experiment, env={"LD_PRELOAD": preload})
        check(r.returncode == 1 and not os.path.exists(out),
              f"experiment, every trial not run: {r.returncode}, created the out file")
    else:
        print("note: neither jemalloc nor mimalloc is installed; the not-run case is skipped")
    # A dry run creates nothing either.
    out = os.path.join(tmp, "dry.jsonl")
    r = bench(*QUICK, "--dry-run", "--out", out)
    check(r.returncode == 0 and not os.path.exists(out), "dry run: created the --out file")
    # The first line creates the file.
    r = bench(*QUICK, "--out", out)
    check(r.returncode == 0 and len(load_lines(out)) == 1, f"one trial: {r.returncode}")


# --- pairs that do not apply ------------------------------------------------------------------

def test_skip_pairs(tmp):
    matrix = applicability()
    containers = list(dict.fromkeys(ds for ds, _ in matrix))  # in the order of `list`
    # A scheme that two containers refuse and a third one runs; `none` runs beside it, so only
    # containers that `none` runs count (not the rc containers, which none cannot serve).
    scheme = next((s for _, s in matrix
                   if s != "none"
                   and sum(not matrix[(d, s)] and matrix[(d, "none")] for d in containers) >= 2
                   and any(matrix[(d, s)] for d in containers)), None)
    if scheme is None:
        print("note: no scheme is refused by two containers; the skipping checks do not apply")
        return
    refused = [d for d in containers if not matrix[(d, scheme)] and matrix[(d, "none")]][:2]
    runs = next(d for d in containers if matrix[(d, scheme)])
    notes = [f"reclaim-bench: skipping {d} x {scheme}: " for d in refused]

    # The pairs that apply run; each one that does not is a note on stderr.
    out = os.path.join(tmp, "skip.jsonl")
    ds = ",".join([refused[0], runs, refused[1]])
    r = bench(*QUICK, "--ds", ds, "--scheme", f"none,{scheme}", "--out", out)
    check(r.returncode == 0, f"skip: exit status {r.returncode}: {r.stderr!r}")
    lines = r.stderr.splitlines()
    check(len(lines) == 2 and all(line.startswith(n) for line, n in zip(lines, notes)),
          f"skip: notes {r.stderr!r}")
    ran = [(rec.get("ds"), rec.get("scheme")) for rec in load_lines(out)]
    check(ran == [(refused[0], "none"), (runs, "none"), (runs, scheme), (refused[1], "none")],
          f"skip: ran {ran}")
    # The dry run counts the same trials and gives the same notes.
    r = bench(*QUICK, "--ds", ds, "--scheme", f"none,{scheme}", "--dry-run")
    check(r.returncode == 0 and "Dry run: 4 trials" in r.stdout
          and sum(" threads=" in line for line in r.stdout.splitlines()) == 4
          and r.stderr.splitlines() == lines, f"skip dry run: {r.stdout!r} {r.stderr!r}")
    # An experiment too.
    experiment = os.path.join(tmp, "skip.toml")
    out2 = os.path.join(tmp, "experiment.jsonl")
    write(experiment, f'title = "t"\nout = {toml_string(out2)}\n[[run]]\n'
                      f'ds = {json.dumps([refused[0], runs])}\nscheme = {json.dumps(scheme)}\n'
                      'seconds = 0.05\nkeys = 100\n')
    r = bench("--experiment", experiment, "--dry-run")
    check(r.returncode == 0 and "Dry run: 1 trials" in r.stdout and notes[0] in r.stderr,
          f"skip experiment dry run: {r.returncode} {r.stdout!r} {r.stderr!r}")
    r = bench("--experiment", experiment)
    check(r.returncode == 0 and [rec.get("ds") for rec in load_lines(out2)] == [runs],
          f"skip experiment: {r.returncode} {r.stderr!r}")

    # No pair applies: bad input, all of them named; one named pair as before.
    absent = os.path.join(tmp, "absent.jsonl")
    expect_refused(["--ds", ",".join(refused), "--scheme", scheme],
                   f"no pair of --ds and --scheme applies: {refused[0]} does not support "
                   f"{scheme}: ", absent)
    expect_refused(["--ds", refused[0], "--scheme", scheme],
                   f"{refused[0]} does not support {scheme}: ", absent)
    check(not os.path.exists(absent), "no pair applies: created the --out file")


# --- temporary files ---------------------------------------------------------------------------

def default_signals():
    """A preexec_fn: the signals the lab handles at their default action, whatever ran the test."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def wait_for(condition, seconds):
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def interrupt(directory, args, sig, where):
    """Starts a run with a timeline in `directory`, sends `sig` to the lab (not to its children)
    while a trial runs, and checks that it ended by that signal and left no temporary file."""
    timeline = os.path.join(directory, "t.csv")
    lab = subprocess.Popen([os.path.abspath(BENCH), "--seconds", "1", "--trials", "4", "--keys",
                            "100", "--timeline", timeline, "--out",
                            os.path.join(directory, "o.jsonl"), *args],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           preexec_fn=default_signals)
    try:
        started = wait_for(lambda: os.path.exists(f"{timeline}.tmp{lab.pid}"), 20)
        check(started, f"{where}: no temporary timeline file {timeline}.tmp{lab.pid}")
        time.sleep(0.4)  # inside the first trial
        lab.send_signal(sig)
        _, stderr = lab.communicate(timeout=20)
    finally:
        lab.kill()
        lab.wait()
    check(lab.returncode == -sig, f"{where}: exit status {lab.returncode}, expected {-sig} "
                                  f"(ended by the signal): {stderr!r}")
    # A child process of the lab that ran on would write its rows file later: it must be gone.
    def children():
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if directory.encode() in f.read():
                        found.append(pid)
            except OSError:
                pass
        return found
    check(wait_for(lambda: not children(), 5), f"{where}: a child process ran on: {children()}")
    left = [f for f in os.listdir(directory) if ".tmp" in f]
    check(not left, f"{where}: left {left}")
    check(not os.path.exists(timeline), f"{where}: wrote the timeline of an interrupted run")
    out = os.path.join(directory, "o.jsonl")
    if os.path.exists(out):
        load_lines(out)
        check(read(out).endswith("\n"), f"{where}: a partial JSON line, or an empty file")


def test_cleanup(tmp):
    # SIGINT during a trial in the lab's own process.
    os.mkdir(os.path.join(tmp, "int"))
    interrupt(os.path.join(tmp, "int"), [], signal.SIGINT, "SIGINT")
    # SIGTERM to the lab while a child process runs a trial (two allocators: each in a child).
    listed = allocator_lines()
    other = next((a for a in ("jemalloc", "mimalloc", "tcmalloc")
                  if listed.get(a, "").startswith("/")), None)
    if other:
        os.mkdir(os.path.join(tmp, "term"))
        interrupt(os.path.join(tmp, "term"), ["--alloc", f"glibc,{other}"], signal.SIGTERM,
                  "SIGTERM with a child")
    else:
        print("note: no allocator besides glibc; the child case is skipped")

    # What a killed run left (SIGKILL cannot be caught) is removed by the next run, if its process
    # has ended; a live process's files, and other names, are left alone.
    stale = os.path.join(tmp, "stale")
    os.mkdir(stale)
    ended = subprocess.Popen(["true"])
    ended.wait()
    dead, live = ended.pid, os.getpid()
    gone = [f"t.csv.tmp{dead}", f"t.csv.tmp{dead}.child"]
    kept = [f"t.csv.tmp{live}", f"t.csv.tmp{live}.child", f"t.csv.tmp{dead}.old",
            f"u.csv.tmp{dead}", f"t.csv.tmpx{dead}"]
    for name in gone + kept:
        write(os.path.join(stale, name), "partial,row")
    r = bench(*QUICK, "--timeline", os.path.join(stale, "t.csv"))
    check(r.returncode == 0, f"stale: exit status {r.returncode}: {r.stderr!r}")
    check(sorted(os.listdir(stale)) == sorted(kept + ["t.csv"]),
          f"stale: left {sorted(os.listdir(stale))}, expected {sorted(kept + ['t.csv'])}")
    check(r.stderr.count(f"left by process {dead}, which has ended") == 2,
          f"stale: no note of the files removed: {r.stderr!r}")


# --- threads that cannot be created --------------------------------------------------------------

def limit_address_space(mib):
    """A preexec_fn: at most `mib` MiB of address space (RLIMIT_AS), enforced for root too. A few
    hundred MiB start the lab but not 64 thread stacks of 8 MiB."""
    def preexec():
        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))
    return preexec


def check_trial_failures(r, name, pattern, trials):
    """r ran `trials` trials, each of which failed with one line matching `pattern`, and went on:
    status 1, and no std::terminate."""
    check(r.returncode == 1, f"{name}: exit status {r.returncode}, expected 1: {r.stderr!r}")
    failed = [m for line in r.stderr.splitlines()
              if (m := re.search(r"^reclaim-bench: TRIAL NOT RUN: .*: " + pattern, line))]
    check(len(failed) == trials and f"{trials} of {trials} trials did NOT RUN" in r.stderr
          and "terminate" not in r.stderr, f"{name}: {r.stderr!r}")
    return failed


def test_thread_failure(tmp):
    # Workers: the threads that started are released and joined, the trial fails, the run goes on.
    r = bench(*QUICK, "--threads", "200", "--trials", "2", preexec_fn=limit_address_space(400),
              timeout=30)
    for m in check_trial_failures(r, "workers", r"cannot create worker thread (\d+) of 200: "
                                  r"Resource temporarily unavailable$", 2):
        check(1 < int(m.group(1)) <= 200, f"workers: failed at thread {m.group(1)}")
    # Stalled threads (--stall).
    r = bench(*QUICK, "--stall", "64", preexec_fn=limit_address_space(300), timeout=30)
    check_trial_failures(r, "stalled", r"cannot create stalled thread \d+ of 64: ", 1)
    # In a child process: its reply carries the same line.
    listed = allocator_lines()
    other = next((a for a in ("jemalloc", "tcmalloc") if listed.get(a, "").startswith("/")), None)
    if other:
        r = bench(*QUICK, "--threads", "200", "--alloc", other,
                  preexec_fn=limit_address_space(400), timeout=30)
        check_trial_failures(r, f"{other} child", r"cannot create worker thread \d+ of 200: ", 1)
    else:
        print("note: neither jemalloc nor tcmalloc is installed; the child case is skipped")


# --- memory -----------------------------------------------------------------------------------

def mem_available():
    """MemAvailable of /proc/meminfo in bytes."""
    with open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def test_memory(tmp):
    available = mem_available()
    out = os.path.join(tmp, "absent.jsonl")
    timeline = os.path.join(tmp, "t.csv")
    # Runs that surely exceed the memory available are refused up front, naming the flags. Under
    # an address space limit of half of it, so that a lab that does start cannot take the machine.
    half = limit_address_space(available // 2 >> 20)
    for args, bytes_needed, needles in [
            (["--ds", "dgt_bst", "--keys", "1000M"], 500e6 * 112, ["--keys 1000M: "]),
            (["--timeline", timeline, "--timeline-capacity", "10M", "--threads", "1024"],
             10e6 * 24 * 1024, ["--timeline-capacity 10M x --threads 1024 x 24 bytes"])]:
        name = " ".join(args)
        if bytes_needed <= available:
            print(f"note: {name} fits in this machine's memory; not checked")
            continue
        r = bench(*args, "--seconds", "0.05", "--out", out, preexec_fn=half, timeout=20)
        check_one_line(r, 2, name, "a trial needs at least ")
        check(all(n in r.stderr for n in needles) and "(MemAvailable in /proc/meminfo)"
              in r.stderr, f"{name}: does not name the flags and the limit: {r.stderr!r}")
        check(r.stdout == "" and os.listdir(tmp) == [], f"{name}: ran or wrote {os.listdir(tmp)}")
    # The address space RLIMIT_AS leaves: 50M prefilled hash map keys are at least 1.6 GB.
    if available > 2e9:
        r = bench("--ds", "hm_hashmap", "--keys", "100M", "--out", out,
                  preexec_fn=limit_address_space(1024), timeout=20)
        check_one_line(r, 2, "RLIMIT_AS", "a trial needs at least 1.6 GB (--keys 100M: ")
        check("RLIMIT_AS (ulimit -v)" in r.stderr and not os.path.exists(out),
              f"RLIMIT_AS: {r.stderr!r}")
    # An address space that lets the run start but not the prefill: the trial fails on one line,
    # not std::terminate, and the run exits 1. How far glibc's malloc gets under a limit varies
    # with its arenas (and the smallest limit may not leave room for the thread's stack, which
    # fails the trial on one line too), so a few limits are tried: each fits or fails that way.
    out_of_memory = 0
    for mib in (48, 64, 96):
        out = os.path.join(tmp, f"as-{mib}.jsonl")
        r = bench("--ds", "hm_hashmap", "--keys", "200K", "--threads", "1", "--seconds", "0.05",
                  "--out", out, preexec_fn=limit_address_space(mib), timeout=30)
        if r.returncode == 0:
            continue
        failed = check_trial_failures(
            r, f"RLIMIT_AS {mib} MiB", r"(prefill thread 1 of 1: out of memory \(std::bad_alloc\)"
            r"|cannot create prefill thread 1 of 1: .*)$", 1)
        out_of_memory += sum("bad_alloc" in m.group(0) for m in failed)
        check(not os.path.exists(out), f"RLIMIT_AS {mib} MiB: wrote a line for a failed trial")
    check(out_of_memory > 0, "no address space limit made an allocation of the prefill fail")


# --- pools: the stack and queue workloads ---------------------------------------------------

def test_pools(tmp):
    out = os.path.join(tmp, "pools.jsonl")
    r = bench("--ds", ",".join(POOLS), "--scheme", "none,debra,hp", "--threads", "1,2",
              "--seconds", "0.1", "--keys", "1K", "--out", out)
    check(r.returncode == 0, f"pools: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out)
    check(len(records) == 12, f"pools: {len(records)} JSON lines, expected 12")
    for rec in records:
        where = f"pools {rec.get('ds')} {rec.get('scheme')} threads={rec.get('threads')}"
        check_validated(rec, where)
    check({(rec.get("ds"), rec.get("threads")) for rec in records}
          == {(d, t) for d in POOLS for t in (1, 2)}, "pools: not every point ran")

    # Pushes only: nothing is retired and everything pushed is there. Pops only: the 500 values of
    # the prefill come out, each retiring one node, and the container ends empty.
    for share, what in (("100", "pushes"), ("0", "pops")):
        out = os.path.join(tmp, f"{what}.jsonl")
        r = bench("--ds", ",".join(POOLS), "--scheme", "debra", "--threads", "2", "--seconds",
                  "0.05", "--keys", "1K", "--insert", share, "--delete", str(100 - int(share)),
                  "--out", out)
        check(r.returncode == 0, f"{what} only: exit status {r.returncode}: {r.stderr}")
        for rec in load_lines(out):
            where = f"{what} only, {rec.get('ds')}"
            check_record(rec, where)
            if what == "pushes":
                check(rec.get("retired") == 0 and rec.get("final_size") > 500, f"{where}: {rec}")
            else:
                check(rec.get("retired") == 500 and rec.get("final_size") == 0, f"{where}: {rec}")

    # Push-pop pairs (--pairs): every worker pushes then pops, so the size stays the prefill's (a
    # pop may take another worker's value, but each pair puts one in and takes at most one out),
    # a pair's two operations count as two, and the trial is marked; with jemalloc the child gets
    # the flag too.
    out = os.path.join(tmp, "pairs.jsonl")
    r = bench("--ds", ",".join(POOLS), "--scheme", "debra,hp", "--threads", "1,2", "--ops", "2K",
              "--keys", "1K", "--pairs", "--alloc", "glibc,jemalloc", "--out", out)
    check(r.returncode == 0, f"pairs: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out)
    check(len(records) == 16, f"pairs: {len(records)} JSON lines, expected 16")
    for rec in records:
        where = f"pairs {rec.get('ds')} {rec.get('scheme')} {rec.get('alloc')} " \
                f"threads={rec.get('threads')}"
        check_record(rec, where)
        check(rec.get("pairs") is True and rec.get("ops") == 2000 * rec.get("threads")
              and rec.get("expected_size") == 500 and rec.get("final_size") == 500
              and rec.get("retired") == 1000 * rec.get("threads"), f"{where}: {rec}")
    for args, needle in ((["--ds", "lazy_list", "--pairs"], "--pairs: lazy_list is a set"),
                         (["--ds", "ms_queue", "--pairs", "--insert", "60", "--delete", "40"],
                          "--pairs with --insert 60 and --delete 40")):
        expect_refused(args, needle, os.path.join(tmp, "absent.jsonl"))

    # Without a prefill the containers start empty, and nbr protects both.
    out = os.path.join(tmp, "empty.jsonl")
    r = bench("--ds", ",".join(POOLS), "--scheme", "nbr", "--threads", "2", "--seconds", "0.05",
              "--no-prefill", "--out", out)
    check(r.returncode == 0, f"pools without prefill: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out)
    check(len(records) == 2 and all(rec.get("checksum_ok") is True for rec in records),
          f"pools without prefill: {records}")


# --- regions across operations -------------------------------------------------------------------

def test_regions(tmp):
    # One region across all of a worker's operations: debra's thread never leaves its operation,
    # so the epoch cannot pass it and its garbage piles up while the trial runs (the peak is about
    # all it retired), then the last thread out frees all of it; a region per operation (the
    # default) frees as it goes. Under hp a region is nothing: it frees either way. A queue in
    # pairs and the JSON line say what ran.
    out = os.path.join(tmp, "regions.jsonl")
    for ops_per_region in ("1", "20000"):
        r = bench("--ds", "hm_list", "--scheme", "debra,hp", "--threads", "1", "--ops", "20K",
                  "--keys", "256", "--region-ops", ops_per_region, "--out", out)
        check(r.returncode == 0, f"regions {ops_per_region}: exit status {r.returncode}: "
                                 f"{r.stderr}")
    records = {(rec.get("scheme"), rec.get("region_ops")): rec for rec in load_lines(out)}
    for rec in records.values():
        check_record(rec, f"regions {rec.get('scheme')} {rec.get('region_ops')}")
    for key in (("debra", 1), ("hp", 1), ("hp", 20000)):
        rec = records.get(key, {})
        check(rec.get("retired", 0) > 1000 and rec.get("freed", 0) > 0, f"regions {key}: {rec}")
    one_region, per_operation = records.get(("debra", 20000), {}), records.get(("debra", 1), {})
    check(one_region.get("retired", 0) > 1000
          and one_region.get("pending_peak", 0) > 0.9 * one_region["retired"]
          and one_region.get("freed") == one_region["retired"],
          f"regions: debra in one region froze nothing, or left garbage: {one_region}")
    check(per_operation.get("pending_peak", 0) < 0.5 * per_operation.get("retired", 0),
          f"regions: debra with a region per operation did not free as it went: {per_operation}")
    pairs = os.path.join(tmp, "region_pairs.jsonl")
    r = bench("--ds", "ms_queue", "--scheme", "stamp_it,qsbr", "--threads", "2", "--ops", "4K",
              "--keys", "1K", "--pairs", "--region-ops", "100", "--out", pairs)
    check(r.returncode == 0, f"regions, queue pairs: exit status {r.returncode}: {r.stderr}")
    for rec in load_lines(pairs):
        check_record(rec, f"regions, queue pairs, {rec.get('scheme')}")
        check(rec.get("region_ops") == 100 and rec.get("final_size") == 500, f"{rec}")
    absent = os.path.join(tmp, "absent.jsonl")
    for value in ("0", "abc", "1000001"):
        expect_refused(["--region-ops", value], "--region-ops", absent)
    if any(name.startswith("xenium:") for name in listed_names()):
        expect_refused(["--ds", "hm_list", "--scheme", "xenium:ebr", "--region-ops", "100"],
                       "is a peer's scheme", absent)


def test_cache(tmp):
    # Paper 003's HashMap benchmark (bench/cache_workload.hpp): simulations on guarded_hm_hashmap
    # that reuse or compute 1 KiB results and hold them. Started empty or prefilled to its bound
    # (a third of --keys), the map ends holding what the successful inserts left after the
    # evictions, within its bound, with every held result intact (well_formed); under the schemes
    # whose last thread out frees the orphans (the epoch schemes, stamp_it) and under lfrc,
    # everything retired is freed once the workers are gone. (hp's exiting threads scan, but two
    # threads exiting together can each find a node the other still protected and orphan it:
    # docs/schemes.md, "The last thread out frees".)
    out = os.path.join(tmp, "cache.jsonl")
    for prefill in ("--prefill", "--no-prefill"):
        r = bench("--ds", "guarded_hm_hashmap", "--scheme", "none,debra,qsbr,hp,stamp_it,lfrc",
                  "--threads", "1,3", "--ops", "3K", "--keys", "3K", prefill, "--out", out)
        check(r.returncode == 0, f"cache {prefill}: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out)
    check(len(records) == 24, f"cache: {len(records)} JSON lines, expected 24")
    for rec in records:
        where = f"cache {rec.get('scheme')} threads={rec.get('threads')} prefill={rec.get('prefill')}"
        check_validated(rec, where)
        check(rec.get("ops") == 3000 * rec.get("threads", 0), f"{where}: ops {rec.get('ops')}")
        # 3K keys: the map holds at most 1,000 results (and one eviction per worker pending).
        check(0 < rec.get("final_size", 0) <= 1000 + rec.get("threads", 0), f"{where}: {rec}")
        check(rec.get("retired", 0) > 0, f"{where}: the evictions retired nothing")
        if rec.get("scheme") not in ("none", "hp"):
            check(rec.get("freed") == rec.get("retired"), f"{where}: left garbage: {rec}")
    # Sampled, the cache counts its results (`ops`, for the runtime over time): never decreasing,
    # never beyond what the trial ran; a set's samples count none.
    sampled = os.path.join(tmp, "cache_sampled.jsonl")
    r = bench("--ds", "guarded_hm_hashmap,lazy_list", "--scheme", "debra", "--threads", "2",
              "--seconds", "0.3", "--keys", "3K", "--sample-ms", "20", "--out", sampled)
    check(r.returncode == 0, f"cache sampled: exit status {r.returncode}: {r.stderr}")
    for rec in load_lines(sampled):
        counted = [sample.get("ops") for sample in rec.get("samples", [])]
        where = f"cache sampled, {rec.get('ds')}"
        check(len(counted) >= 5, f"{where}: {len(counted)} samples")
        if rec.get("ds") == "guarded_hm_hashmap":
            check(counted == sorted(counted) and 0 < counted[-1] <= rec.get("ops", 0),
                  f"{where}: sampled ops {counted}, ops {rec.get('ops')}")
        else:
            check(set(counted) == {0}, f"{where}: a set counted {counted}")
    absent = os.path.join(tmp, "cache_absent.jsonl")
    expect_refused(["--ds", "guarded_hm_hashmap", "--insert", "20", "--delete", "20"],
                   "HashMap benchmark", absent)
    expect_refused(["--ds", "guarded_hm_hashmap", "--pairs"], "is a cache", absent)
    expect_refused(["--ds", "guarded_hm_hashmap", "--scheme", "nbr"],
                   "neutralization cannot serve", absent)


# --- latency and pauses ----------------------------------------------------------------------

LATENCY_FIELDS = ["latency_samples", "latency_p50_ns", "latency_p99_ns", "latency_p999_ns",
                  "latency_max_ns", "longest_pause_ns"]


def test_latency(tmp):
    out = os.path.join(tmp, "latency.jsonl")
    r = bench("--ds", "hm_list", "--scheme", "none,debra,hp", "--threads", "2",
              "--seconds", "0.3", "--keys", "1K", "--alloc", "glibc,jemalloc", "--out", out)
    check(r.returncode == 0, f"latency: exit status {r.returncode}: {r.stderr}")
    check("p99.9 us" in r.stdout and "pause ms" in r.stdout, "latency: no table columns")
    records = load_lines(out)
    check(len(records) == 6, f"latency: {len(records)} JSON lines, expected 6")
    for rec in records:
        where = f"latency {rec.get('scheme')} {rec.get('alloc')}"
        missing = [f for f in LATENCY_FIELDS if f not in rec]
        if not check(not missing, f"{where}: missing {missing}"):
            continue
        check_record(rec, where)
        # About one operation in 64 is timed.
        check(rec["ops"] / 256 < rec["latency_samples"] < rec["ops"] / 16,
              f"{where}: {rec['latency_samples']} samples of {rec['ops']} operations")
        p = [rec[f] for f in LATENCY_FIELDS[1:5]]
        check(0 < p[0] <= p[1] <= p[2] <= p[3], f"{where}: percentiles {p}")
        check(rec["longest_pause_ns"] <= rec["seconds"] * 1e9, f"{where}: pause {rec}")
        if rec["scheme"] == "none":
            check(rec["longest_pause_ns"] == 0, f"{where}: none paused {rec['longest_pause_ns']}")
        else:
            check(rec["freed"] == 0 or rec["longest_pause_ns"] > 0,
                  f"{where}: freed {rec['freed']} without a pause")


# --- peers ---------------------------------------------------------------------------------------

def test_peers(tmp):
    lines = bench("list").stdout.splitlines()
    if "Peers (other libraries' schemes with their own containers; bench/peers.hpp)" not in lines:
        print("peers: none built in (libxenium-dev, libcds-dev, liburcu-dev, libck-dev not "
              "installed): nothing to check")
        return
    start = lines.index("Peers (other libraries' schemes with their own containers; "
                        "bench/peers.hpp)")
    peers = {}
    for line in lines[start + 2:]:
        if not line.strip():
            break
        name, family, containers = line.split(None, 2)
        peers[name] = (family, containers.split(", "))
    check(peers and all(":" in name for name in peers), f"peers: listed {peers}")
    matrix = next(line for line in lines if line.startswith("Applicability"))
    columns = lines[lines.index(matrix) + 1].split()
    check(not any(":" in c for c in columns), f"peers: in the matrix columns {columns}")

    # One scheme of each library built in; every scheme of the C libraries (liburcu, Concurrency
    # Kit), whose containers are the lab's peers_hm.hpp over their APIs.
    names = [n for n in ("xenium:debra", "xenium:hp", "libcds:hp", "urcu:memb", "urcu:qsbr",
                         "urcu:bp", "urcu:rculfhash", "ck:epoch", "ck:hp") if n in peers]
    if not names:
        print("peers: only the standard library's built in (checked by cli.rc)")
        return
    out = os.path.join(tmp, "peers.jsonl")
    r = bench("--ds", "hm_list,hm_hashmap,lazy_list", "--scheme", ",".join(names),
              "--threads", "2", "--seconds", "0.2", "--keys", "1K", "--out", out)
    check(r.returncode == 0, f"peers: exit status {r.returncode}: {r.stderr}")
    skipped = [line for line in r.stderr.splitlines() if line.startswith("reclaim-bench: skipping")]
    expected = [(ds, n) for n in names for ds in ("hm_list", "hm_hashmap", "lazy_list")
                if ds in peers[n][1]]
    check(len(skipped) == 3 * len(names) - len(expected), f"peers: skipped {skipped}")
    records = load_lines(out)
    check(sorted((rec.get("ds"), rec.get("scheme")) for rec in records) == sorted(expected),
          f"peers: ran {[(rec.get('ds'), rec.get('scheme')) for rec in records]}")
    for rec in records:
        where = f"peers {rec.get('ds')} {rec.get('scheme')}"
        check(rec.get("checksum_ok") is True and rec.get("ops", 0) > 0
              and abs(rec.get("final_size", -1000) - 500) <= 150, f"{where}: {rec}")
        check(rec.get("family") == peers[rec["scheme"]][0], f"{where}: family {rec.get('family')}")
    # Under jemalloc, in a child process.
    r = bench("--ds", "hm_list", "--scheme", names[0], "--seconds", "0.1", "--keys", "100",
              "--alloc", "jemalloc", "--out", out)
    check(r.returncode == 0 and load_lines(out)[-1].get("alloc") == "jemalloc",
          f"peers: jemalloc: {r.returncode} {r.stderr}")
    r = bench("--ds", "hm_list", "--scheme", names[0], "--stall", "1", "--seconds", "0.1")
    check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and "--stall" in r.stderr,
          f"peers: --stall: {r.returncode} {r.stderr!r}")


# --- counted pointers ----------------------------------------------------------------------

RC = {"rc_config": "config", "rc_config_snapshot": "config", "raw_config": "config",
      "rc_stack": "stack", "persistent_map": "set"}  # name: workload
STD_PEERS = {"std:atomic_shared_ptr": ["rc_config", "rc_stack", "persistent_map"],
             "std:atomic_load": ["rc_config"]}


def test_rc(tmp):
    # Issue 30's containers and the standard library's peers (bench/README.md, "Counted
    # pointers"): listed, run validated, refused where atomic_rc_ptr cannot serve.
    lines = bench("list").stdout.splitlines()
    for ds, kind in RC.items():
        check(any(line.split() == [ds, kind] for line in lines), f"rc: {ds} not listed as {kind}")
    for name, offered in STD_PEERS.items():
        row = next((line for line in lines if line.split()[:1] == [name]), "")
        check(row.endswith(", ".join(offered)), f"rc: peer {name}: {row!r}")
    schemes = ["debra", "hp"] + list(STD_PEERS)

    # The configs: every config made destroyed exactly once (counts and version sums), no torn read.
    out = os.path.join(tmp, "config.jsonl")
    # --ops, not --seconds: on a loaded machine a short trial may see its workers barely run.
    r = bench("--ds", "rc_config,rc_config_snapshot,raw_config", "--scheme", ",".join(schemes),
              "--threads", "2", "--ops", "2000", "--insert", "20", "--out", out)
    check(r.returncode == 0, f"rc config: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out)
    expected = {(ds, s) for ds in ("rc_config", "rc_config_snapshot", "raw_config")
                for s in schemes if ":" not in s or ds in STD_PEERS[s]}
    check({(rec.get("ds"), rec.get("scheme")) for rec in records} == expected,
          f"rc config: ran {[(rec.get('ds'), rec.get('scheme')) for rec in records]}")
    for rec in records:
        where = f"rc {rec.get('ds')} {rec.get('scheme')}"
        check_validated(rec, where)
        check(rec.get("delete") == 0 and rec.get("expected_size", 0) > 1, f"{where}: {rec}")

    # The stack and the persistent map, ours and over std::atomic<std::shared_ptr>.
    out = os.path.join(tmp, "containers.jsonl")
    r = bench("--ds", "rc_stack,persistent_map", "--scheme", "debra,hp,std:atomic_shared_ptr",
              "--threads", "2", "--seconds", "0.05", "--keys", "1K", "--out", out)
    check(r.returncode == 0, f"rc containers: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out)
    check(len(records) == 6, f"rc containers: {len(records)} JSON lines, expected 6")
    for rec in records:
        check_validated(rec, f"rc {rec.get('ds')} {rec.get('scheme')}")

    absent = os.path.join(tmp, "absent.jsonl")
    expect_refused(["--ds", "rc_config", "--scheme", "nbr"], "cannot serve neutralization", absent)
    expect_refused(["--ds", "rc_config", "--insert", "10", "--delete", "10"], "give --delete 0",
                   absent)


# --- ops -------------------------------------------------------------------------------------

def test_ops(tmp):
    absent = os.path.join(tmp, "absent.jsonl")
    for args, needle in [(["--ops", "0"], "--ops: expected a positive number of operations"),
                         (["--ops", "abc"], "--ops"), (["--ops", "-3"], "--ops"),
                         (["--ops", "1.5"], "--ops"), (["--ops", "2000000M"], "--ops"),
                         (["--ops", "1K", "--seconds", "1"], "--ops and --seconds: give one")]:
        expect_refused(args, needle, absent)
        check(not os.path.exists(absent), f"{' '.join(args)}: created the --out file")

    # Every worker runs exactly N operations, validated, and the line says so; a set, a queue,
    # a child process (jemalloc), and a stalled thread with the sampler.
    out = os.path.join(tmp, "ops.jsonl")
    runs = [["--ds", "lazy_list", "--scheme", "none,hp", "--threads", "1,3", "--keys", "1K"],
            ["--ds", "ms_queue", "--scheme", "debra", "--threads", "2", "--keys", "1K"],
            ["--ds", "hm_list", "--scheme", "hp", "--threads", "2", "--alloc", "jemalloc"],
            ["--ds", "hm_list", "--scheme", "debra", "--threads", "2", "--stall", "1",
             "--sample-ms", "1"]]
    for args in runs:
        r = bench(*args, "--ops", "2K", "--out", out)
        check(r.returncode == 0, f"--ops {' '.join(args)}: exit status {r.returncode}: {r.stderr}")
    records = load_lines(out)
    check(len(records) == 7, f"--ops: {len(records)} JSON lines, expected 7")
    for rec in records:
        where = f"--ops {rec.get('ds')} {rec.get('scheme')} threads={rec.get('threads')}"
        check_record(rec, where)
        check(rec.get("ops") == 2000 * rec.get("threads", 0) and rec.get("ops_per_thread") == 2000
              and rec.get("seconds_requested") == 0 and rec.get("seconds", 0) > 0,
              f"{where}: ops {rec.get('ops')}, ops_per_thread {rec.get('ops_per_thread')}, "
              f"seconds {rec.get('seconds')} (requested {rec.get('seconds_requested')})")
    check(any(rec.get("samples") for rec in records), "--ops with --sample-ms: no samples")

    # A timed trial says 0; the dry run names the work.
    r = bench("--seconds", "0.05", "--out", out)
    check(r.returncode == 0 and load_lines(out)[-1].get("ops_per_thread") == 0,
          f"timed: ops_per_thread {load_lines(out)[-1].get('ops_per_thread')}")
    r = bench("--ops", "5K", "--trials", "2", "--dry-run")
    check("2 trials x 5000 operations per worker" in r.stdout and "fixed work" in r.stdout,
          f"--ops dry run: {r.stdout!r}")

    # In an experiment file `ops` is a run's key; either flag on the command line replaces it.
    experiment = os.path.join(tmp, "ops.toml")
    write(experiment, 'title = "t"\n[[run]]\nds = "hm_list"\nscheme = "debra"\nops = "1K"\n')
    r = bench("--experiment", experiment, "--dry-run")
    check("1000 operations per worker" in r.stdout, f"ops in a file: {r.stdout!r} {r.stderr!r}")
    r = bench("--experiment", experiment, "--seconds", "0.05", "--dry-run")
    check(r.returncode == 0 and "x 0.05 s" in r.stdout,
          f"--seconds over a file's ops: {r.stdout!r} {r.stderr!r}")
    write(experiment, 'title = "t"\n[[run]]\nds = "hm_list"\nscheme = "debra"\nseconds = 1\n')
    r = bench("--experiment", experiment, "--ops", "3K", "--dry-run")
    check(r.returncode == 0 and "3000 operations per worker" in r.stdout,
          f"--ops over a file's seconds: {r.stdout!r} {r.stderr!r}")


CHECKS = {"bad_input": test_bad_input, "list": test_list, "run": test_run, "alloc": test_alloc,
          "timeline": test_timeline, "stall": test_stall, "experiment": test_experiment,
          "output_paths": test_output_paths, "write_errors": test_write_errors,
          "lazy_out": test_lazy_out, "skip_pairs": test_skip_pairs,
          "cleanup": test_cleanup, "thread_failure": test_thread_failure,
          "pools": test_pools, "memory": test_memory, "latency": test_latency,
          "peers": test_peers, "ops": test_ops, "regions": test_regions,
          "cache": test_cache, "rc": test_rc}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="reclaim-bench-cli-") as tmp:
        CHECKS[sys.argv[2]](tmp)
    for failure in failures:
        print("FAIL:", failure)
    print(f"{sys.argv[2]}: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    sys.exit(1 if failures else 0)
