# SPDX-License-Identifier: MIT
"""Shared by the tools' tests: synthetic inputs with hand-computable numbers, and a runner for
`python -m reclaim_tools`.

The tests need pandas and matplotlib (tools/requirements.txt); without them they fail here, with the
way to get them, rather than skip.
"""
import contextlib
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

try:
    import matplotlib  # noqa: F401
    import pandas  # noqa: F401
except ImportError as e:
    raise ImportError(f"the tools' tests need {e.name} (tools/requirements.txt): run `make test`, "
                      "which creates .venv, or configure with -DRECLAIM_PYTHON=.venv/bin/python "
                      f"(this is {sys.executable})") from None

TOOLS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                      "tools"))
sys.path.insert(0, TOOLS)

# Results: throughput of a trial = BASE[scheme] x threads x TRIAL_FACTOR[trial] Mops/s, so that the
# median over trials is BASE x threads, the minimum 0.9 x that and the maximum 1.2 x that.
BASE = {"none": 3.0, "debra": 2.0, "debra_af": 2.5, "token_periodic": 1.0, "token_af": 1.5}
TRIAL_FACTOR = {1: 1.2, 2: 0.9, 3: 1.0}
# Share of time freeing per trial (median 20%) and objects freed per trial (median 200).
FREE_SHARE = {1: 0.1, 2: 0.3, 3: 0.2}
FREED = {1: 400, 2: 100, 3: 200}
SECONDS = 2.0
THREADS = [1, 2, 4]
CPUS = 2


def results_rows(allocs=("glibc", "jemalloc"), ds="hm_list"):
    rows = []
    for alloc in allocs:
        for threads in THREADS:
            for scheme, base in BASE.items():
                for trial, factor in TRIAL_FACTOR.items():
                    throughput = base * threads * factor * 1e6
                    rows.append({
                        "ds": ds, "scheme": scheme, "family": "epoch", "alloc": alloc,
                        "threads": threads, "trial": trial, "seconds": SECONDS,
                        "ops": int(throughput * SECONDS), "throughput": throughput,
                        "peak_rss_bytes": int((10 + 5 * base * threads) * 1024 * 1024),
                        "retired": 1000, "freed": FREED[trial],
                        "pending_peak": int(100 * base * threads),
                        "free_ns": int(FREE_SHARE[trial] * threads * SECONDS * 1e9),
                        "epochs": 10, "checksum_ok": True, "git": "abc1234", "cpus": CPUS,
                        # Pauses: a batch scheme's a millisecond, an amortized one's 10 us.
                        "longest_pause_ns": int((1e4 if "_af" in scheme else 1e6) * factor),
                        "latency_samples": 1000, "latency_p50_ns": 100, "latency_p99_ns": 1000,
                        "latency_p999_ns": 10000, "latency_max_ns": int(1e6 * factor),
                    })
    return rows


# Memory samples (--sample-ms): dgt_bst, 4 threads, every 10 ms. Sample k of a trial holds
# pending = PENDING_SLOPE[scheme, stall] x k x TRIAL_FACTOR[trial] and rss = (10 + k) MiB x
# TRIAL_FACTOR[trial], so that per sample the median over trials is the factor-1.0 value, the
# minimum 0.9x and the maximum 1.2x. Trial 3 has one sample fewer than the others. NBR+ sends
# 10 x trial signals per trial (median 20), debra none.
SAMPLES = 50
SAMPLE_MS = 10
PENDING_SLOPE = {("debra", 0): 10, ("debra", 1): 1000, ("nbr_plus", 0): 10, ("nbr_plus", 1): 12}


def sampled_rows():
    rows = []
    for (scheme, stall), slope in PENDING_SLOPE.items():
        for trial, factor in TRIAL_FACTOR.items():
            n = SAMPLES - (1 if trial == 3 else 0)
            samples = [{"t_ms": SAMPLE_MS * k + 0.1 * trial,
                        "pending": int(slope * k * factor),
                        "rss_bytes": int((10 + k) * factor * 1024 * 1024),
                        "ops": 1000 * k * k} for k in range(n)]
            rows.append({
                "ds": "dgt_bst", "scheme": scheme, "family": "epoch", "alloc": "jemalloc",
                "threads": 4, "trial": trial, "seconds": SECONDS, "ops": 1000,
                "throughput": 1000 / SECONDS, "peak_rss_bytes": samples[-1]["rss_bytes"],
                "retired": 1000, "freed": 500, "pending_peak": max(x["pending"] for x in samples),
                # Once the workers exited: the stalled runs kept all of it, the others none.
                "pending": max(x["pending"] for x in samples) if stall else 0,
                "free_ns": 0, "signals": 10 * trial if scheme == "nbr_plus" else 0,
                "stall": stall, "sample_ms": SAMPLE_MS, "samples": samples,
                "checksum_ok": True, "git": "abc1234", "cpus": CPUS,
            })
    return rows


def write_results(path, rows=None):
    with open(path, "w", encoding="utf-8") as f:
        for row in rows if rows is not None else results_rows():
            f.write(json.dumps(row) + "\n")
    return path


HEADER = "ds,scheme,alloc,threads,trial,thread,event,start_ns,end_ns,value"
MS = 1_000_000

# A small debra run of 2 threads whose garbage series are computed by hand in test_report.py:
# epoch advances at 3 ms and 6 ms; epoch_seen 0 (t0, 0 ms), 3 (t1, 1 ms), 5 (t0, 3 ms),
# 7 (t1, 4 ms), 2 (t0, 7 ms).
SMALL_DEBRA = [
    (0, "epoch_seen", 0, 0, 0),
    (1, "epoch_seen", 1 * MS, 1 * MS, 3),
    (0, "batch_free", 1 * MS, 2 * MS, 10),
    (0, "epoch_advance", 3 * MS, 3 * MS, 1),
    (0, "epoch_seen", 3 * MS, 3 * MS, 5),
    (1, "epoch_seen", 4 * MS, 4 * MS, 7),
    (1, "slow_free", 5 * MS, 5 * MS + 200_000, 1),
    (1, "epoch_advance", 6 * MS, 6 * MS, 2),
    (0, "epoch_seen", 7 * MS, 7 * MS, 2),
]
# Token-EBR reports token receipts instead: receipts of 4 (t0, 1 ms) and 6 (t1, 2 ms), an advance
# at 2.5 ms, a receipt of 1 (t0, 3 ms).
SMALL_TOKEN = [
    (0, "token_receipt", 1 * MS, 1 * MS, 4),
    (1, "token_receipt", 2 * MS, 2 * MS, 6),
    (0, "batch_free", 2 * MS, 2 * MS + 500_000, 4),
    (1, "epoch_advance", 2 * MS + 500_000, 2 * MS + 500_000, 1),
    (0, "token_receipt", 3 * MS, 3 * MS, 1),
]


def busy_run(threads, scheme, epochs=40, batch=True):
    """A plausible run: each thread frees a batch as each epoch begins, garbage saw-tooths."""
    events = []
    period = 2 * MS
    for e in range(epochs):
        t0 = e * period
        events.append(((e % threads), "epoch_advance", t0, t0, e + 1))
        for thread in range(threads):
            start = t0 + (thread * 37_000) % period + 50_000
            garbage = 500 + (e * 97 + thread * 53) % 400
            events.append((thread, "epoch_seen", start, start, garbage))
            length = 100_000 + (e * 31 + thread * 17) % 7 * 60_000
            if batch:
                events.append((thread, "batch_free", start, start + length, garbage // 2))
            elif (e + thread) % 5 == 0:
                events.append((thread, "slow_free", start, start + length, 1))
    return events


def write_timeline(path, runs=None):
    """runs: list of (scheme, threads, trial, events); events as (thread, event, start, end, v)."""
    if runs is None:
        runs = [("debra", 2, 1, SMALL_DEBRA), ("token_af", 2, 1, SMALL_TOKEN),
                ("debra_af", 8, 1, busy_run(8, "debra_af", batch=False)),
                ("debra", 8, 1, busy_run(8, "debra"))]
    with open(path, "w", encoding="utf-8") as f:
        f.write(HEADER + "\n")
        for scheme, threads, trial, events in runs:
            for thread, event, start, end, value in events:
                f.write(f"hm_list,{scheme},jemalloc,{threads},{trial},{thread},{event},{start},"
                        f"{end},{value}\n")
    return path


def tools(*args, cwd=None):
    """Runs reclaim_tools' main(ARGS) in this process (no interpreter start per call); returns
    (returncode, stdout, stderr) like a CompletedProcess."""
    from reclaim_tools.__main__ import main
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    try:
        if cwd:
            os.chdir(cwd)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(list(args))
            except SystemExit as e:  # --help
                code = e.code
    finally:
        os.chdir(here)
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def tools_process(*args, cwd=None):
    """Runs python -m reclaim_tools ARGS as a process; returns the CompletedProcess."""
    env = {**os.environ, "PYTHONPATH": TOOLS, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run([sys.executable, "-m", "reclaim_tools", *args], capture_output=True,
                          text=True, timeout=120, cwd=cwd, env=env)


def png_size(path):
    """(width, height) from a PNG's IHDR chunk; fails when the file is not a PNG."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        raise AssertionError(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


class ToolsCase(unittest.TestCase):
    """Test cases sharing a temporary directory, per class, that holds the synthetic inputs."""

    @classmethod
    def setUpClass(cls):
        cls._tmp = tempfile.TemporaryDirectory(prefix="reclaim-tools-")
        cls.dir = cls._tmp.name
        cls.results = write_results(os.path.join(cls.dir, "results.jsonl"))
        cls.timeline = write_timeline(os.path.join(cls.dir, "timeline.csv"))

    @classmethod
    def tearDownClass(cls):
        cls._tmp.cleanup()

    @classmethod
    def path(cls, *parts):
        return os.path.join(cls.dir, *parts)

    @classmethod
    def run_on_experiment(cls, command, experiment, text, *written):
        """Writes `text` to the experiment file `experiment` in the class's folder and runs the tool
        `command` on it there; returns the completed process and what the tool wrote at the path
        `written` (its parts below the folder), "" where it failed."""
        with open(cls.path(experiment), "w", encoding="utf-8") as f:
            f.write(text)
        completed = tools(command, experiment, cwd=cls.dir)
        output = ""
        if completed.returncode == 0:
            with open(cls.path(*written), encoding="utf-8") as f:
                output = f.read()
        return completed, output

    def assert_ok(self, proc):
        self.assertEqual(proc.returncode, 0, f"stdout: {proc.stdout}\nstderr: {proc.stderr}")
        return proc.stdout.split()

    def assert_bad_input(self, proc, prefix, says):
        """Bad input: exit status 2, nothing on stdout, one line on stderr that starts with
        `prefix` and contains each of `says`."""
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(proc.stdout, "")
        lines = proc.stderr.splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        self.assertTrue(lines[0].startswith(prefix), lines[0])
        for text in says:
            self.assertIn(text, lines[0])

    def assert_plausible_png(self, path, min_width=600, min_height=400):
        """A complete PNG of a plausible size: large enough to hold axes and text, not huge."""
        self.assertTrue(os.path.isfile(path), f"{path} was not written")
        width, height = png_size(path)
        self.assertGreaterEqual(width, min_width)
        self.assertGreaterEqual(height, min_height)
        self.assertLessEqual(width * height, 4000 * 4000)
        size = os.path.getsize(path)
        self.assertGreater(size, 10_000, f"{path} is only {size} bytes")
        self.assertLess(size, 3_000_000, f"{path} is {size} bytes")
        with open(path, "rb") as f:
            self.assertTrue(f.read().endswith(b"IEND\xaeB`\x82"), f"{path} is truncated")
