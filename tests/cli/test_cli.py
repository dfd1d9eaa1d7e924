#!/usr/bin/env python3
"""Command-line tests of reclaim-bench, the lab (DESIGN.md section 5).

Usage: test_cli.py BENCH CHECK, where BENCH is the reclaim-bench executable and CHECK one of:
  bad_input  every kind of bad input exits with status 2 and one line on stderr naming the flag,
             and leaves the --out file alone (not created; an existing one unchanged)
  list       `reclaim-bench list` prints schemes, containers, allocators and the matrix
  run        short valid runs write one parseable, validated JSON line per trial
  alloc      --alloc: a sweep over every allocator records the one detected in each trial; an
             allocator that is not installed (RECLAIM_BENCH_ALLOC_DIR pointed at an empty
             directory) is bad input
Python 3 standard library only.
"""
import json
import os
import subprocess
import sys
import tempfile

BENCH = sys.argv[1]
failures = []

SCHEMES = {"none": "none", "debra": "epoch", "hp": "pointer"}  # name: family
CONTAINERS = ["lazy_list", "hm_list"]
ALLOCATORS = ["glibc", "jemalloc", "tcmalloc", "mimalloc"]
REQUIRED_FIELDS = [
    "ds", "scheme", "alloc", "alloc_version", "alloc_lib", "threads", "trial", "seconds", "keys",
    "insert", "delete", "prefill",
    "seed", "ops", "throughput", "peak_rss_bytes", "rss_bytes", "retired", "freed", "pending",
    "pending_peak", "epochs", "scans", "signals", "free_ns", "final_size", "checksum_ok", "git",
    "cpus", "family",
]


def bench(*args, env=None):
    return subprocess.run([BENCH, *args], capture_output=True, text=True, timeout=60,
                          env=None if env is None else {**os.environ, **env})


def check(condition, what):
    if not condition:
        failures.append(what)
    return condition


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# --- bad input -------------------------------------------------------------------------------

# (arguments, text the one-line error must contain)
BAD_INPUTS = [
    (["--ds", "foo"], "--ds: unknown container 'foo' (accepted: lazy_list, hm_list"),
    (["--ds", "lazy_list,"], "--ds"),
    (["--scheme", "foo"], "--scheme: unknown scheme 'foo' (accepted: none, debra, hp"),
    (["--scheme", "none,foo"], "--scheme: unknown scheme 'foo'"),
    (["--threads", "abc"], "--threads"),
    (["--threads", "-1"], "--threads"),
    (["--threads=-2"], "--threads"),
    (["--threads", "0"], "--threads"),
    (["--threads", "1,0"], "--threads"),
    (["--threads", "1,,2"], "--threads"),
    (["--threads", "1.5"], "--threads"),
    (["--seconds", "0"], "--seconds"),
    (["--seconds", "-1"], "--seconds"),
    (["--seconds", "abc"], "--seconds"),
    (["--seconds", "nan"], "--seconds"),
    (["--trials", "0"], "--trials"),
    (["--trials", "two"], "--trials"),
    (["--keys", "1"], "--keys"),
    (["--keys", "20X"], "--keys"),
    (["--keys", "K"], "--keys"),
    (["--keys", "-5"], "--keys"),
    (["--insert", "101"], "--insert"),
    (["--delete", "150"], "--delete"),
    (["--insert", "-1"], "--insert"),
    (["--insert", "abc"], "--insert"),
    (["--insert", "60", "--delete", "50"], "--insert 60 and --delete 50"),
    (["--seed", "abc"], "--seed"),
    (["--seed", "-1"], "--seed"),
    (["--alloc", "foo"], "--alloc: unknown allocator 'foo' (accepted: glibc, jemalloc, tcmalloc, "
                         "mimalloc)"),
    (["--alloc", "glibc,"], "--alloc"),
    # CLI11's own parse errors
    (["--bogus"], "--bogus"),
    (["--threads", "1", "--threads", "2"], "--threads"),
    (["surplus"], "surplus"),
    (["--threads"], "--threads"),  # missing value: must stay last
]


def expect_refused(args, needle, out, env=None):
    """Runs the lab with args and --out out, and checks the refusal; returns the message."""
    r = bench("--out", out, *args, env=env)
    name = " ".join(args)
    check(r.returncode == 2, f"{name}: exit status {r.returncode}, expected 2")
    check(r.stdout == "", f"{name}: wrote to stdout: {r.stdout!r}")
    lines = r.stderr.splitlines()
    if check(len(lines) == 1 and r.stderr.endswith("\n"), f"{name}: not one line: {r.stderr!r}"):
        check(lines[0].startswith("reclaim-bench: "), f"{name}: no program name: {lines[0]!r}")
        check(needle in lines[0], f"{name}: {lines[0]!r} does not mention {needle!r}")
    return r.stderr


def unsupported_pairs():
    """(container, scheme) pairs that `list` marks "no"."""
    lines = bench("list").stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Applicability"))
    schemes = lines[start + 1].split()
    pairs = []
    for line in lines[start + 2:]:
        cells = line.split()
        if len(cells) != len(schemes) + 1:
            break
        pairs += [(cells[0], s) for s, cell in zip(schemes, cells[1:]) if cell == "no"]
    return pairs


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

    r = bench("--help")
    check(r.returncode == 0 and "--scheme" in r.stdout, f"--help: {r.returncode}")


# --- run -------------------------------------------------------------------------------------

def load_lines(path):
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
    check(rec["family"] == SCHEMES.get(rec["scheme"]), f"{where}: family {rec['family']}")
    check(rec["alloc"] in ALLOCATORS,
          f"{where}: alloc {rec['alloc']}")
    check(isinstance(rec["git"], str) and rec["git"], f"{where}: git {rec['git']!r}")
    check(isinstance(rec["cpus"], int) and rec["cpus"] >= 1, f"{where}: cpus {rec['cpus']}")
    check(rec["peak_rss_bytes"] > 0 and rec["rss_bytes"] > 0, f"{where}: no RSS")
    if rec["scheme"] == "none":
        check(rec["freed"] == 0, f"{where}: none freed {rec['freed']}")


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
    before = read(out)
    r = bench("--ds", "hm_list", "--scheme", "debra", "--threads", "2", "--seconds", "0.05",
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
        check(not os.path.exists(out) or read(out) == "", f"fake jemalloc: wrote {out}")


CHECKS = {"bad_input": test_bad_input, "list": test_list, "run": test_run, "alloc": test_alloc}

if __name__ == "__main__":
    with tempfile.TemporaryDirectory(prefix="reclaim-bench-cli-") as tmp:
        CHECKS[sys.argv[2]](tmp)
    for failure in failures:
        print("FAIL:", failure)
    print(f"{sys.argv[2]}: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    sys.exit(1 if failures else 0)
