# SPDX-License-Identifier: MIT
"""The hazard lookaside buffer (HLB) of paper 004 (Dice, Herlihy, Kogan, ISMM 2016), section 6, by
trace-driven simulation as its section 7.3 did with Pin.

Traces. `reclaim-bench` runs under valgrind's lackey (`--trace-mem=yes --trace-sched=yes`, one log
file per process: scripts/hlb-record.sh), which prints every instruction (`I addr,size`) and every
store (` S addr,size`; ` M` for a read-modify-write) of every thread, and each switch of the thread
that runs (`SCHED[tid]: acquired lock`; valgrind runs one thread at a time, each in its own program
order). `read_lackey` turns a log into per-thread stores, each with the instruction that made it.
`classify` tells hazard-table stores from the others by the source of that instruction, from the
recording build's debug information (addr2line, inlined frames included): a store made inside a
fence policy's `publish` (hp's protect: the store that the HLB's `hstore` replaces, together with
the fence after it) publishes a hazard; one made inside hp's `clear_slot` clears one. Every other
store is regular. `write_trace` keeps, per thread, the stores with their kind, in an .npz file.

Simulation (section 7.3). Each thread has its own core with a store buffer of 32 cache lines and an
HLB of 0, 1, 2, 4, ..., 32 entries. Addresses are divided by 64 into cache lines. A thread's
stores are simulated from its first hazard publication on. A regular store goes to the store
buffer (write absorption: a line already there takes no entry). A hazard publication goes to the
store buffer and to the HLB, whose entries are hazard slots (an entry is a pointer and the table
address it goes to: two slots in one line are two entries; a slot already there is absorbed).
When a store finds its buffer full, a memory fence empties both buffers first (a barrier); with no
HLB, every publication is followed by a fence, as in Figure 1. Barriers are counted for each size
and divided by the count without an HLB.
A gap is the number of different cache lines that regular stores touch between two successive
publications: where gaps times the HLB size exceed the store buffer, the store buffer fills first
and the HLB costs nothing; otherwise the HLB does.
Hazard clears (hp empties a guard's slots when it ends) are regular stores by default: the HLB's
hstore replaces the store and fence of a publication (lines 7-8 of Figure 1), and a cleared slot
needs no fence. With `clears_as_hazard` they go to the HLB as well.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from array import array
from collections import defaultdict

from . import ToolError

LINE_BYTES = 64
STORE_BUFFER_LINES = 32
HLB_SIZES = (0, 1, 2, 4, 8, 16, 32)

REGULAR, PUBLISH, CLEAR = 0, 1, 2
KIND_NAMES = {REGULAR: "regular", PUBLISH: "hazard publication", CLEAR: "hazard clear"}
# Inlined frames that make a store a hazard publication or a clear (hp.hpp, core/fence.hpp).
PUBLISH_FRAME = re.compile(r"fence\w*::publish\b|publish_validated")
CLEAR_FRAME = re.compile(r"\bclear_slot\b")

# The lab's flags that describe a trial, read back from the command line valgrind logs.
TRIAL_FLAGS = ("ds", "scheme", "threads", "keys", "insert", "delete", "child-trial")


# --- lackey logs -------------------------------------------------------------------------------

class LackeyLog:
    """One process's stores: per thread, the store's instruction (an index into `ips`), data
    address and size (arrays 'I', 'Q' and 'B'), and the process's command line. A thread is
    (valgrind thread id, n): valgrind gives the id of a thread that exited to the next one it
    starts, so the n-th thread started under an id is told apart from the others (the main
    thread is (1, 0))."""

    def __init__(self, path):
        self.path = path
        self.command = []
        self.ips = []      # instruction addresses, by index
        self.threads = {}  # (tid, n) -> (instruction indices, addresses, sizes)

    def trial(self):
        """The lab's trial flags of this process, {flag: value}, from its command line."""
        found = {}
        for i, arg in enumerate(self.command[:-1]):
            if arg.startswith("--") and arg[2:] in TRIAL_FLAGS:
                found[arg[2:]] = self.command[i + 1]
        return found


def read_lackey(path):
    """Parses a lackey log (--trace-mem=yes --trace-sched=yes) into a LackeyLog."""
    log = LackeyLog(path)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise ToolError(f"lackey log: cannot read '{path}': {e.strerror}") from None
    thread = (1, 0)
    started = defaultdict(int)  # tid -> threads started under it
    last_instruction = None
    current = None
    index_of = {}  # raw instruction address text -> index into log.ips
    seen_lackey = False
    with f:
        for number, line in enumerate(f, 1):
            first = line[:1]
            if first == b"I":
                last_instruction = line
            elif first == b" ":
                kind = line[1:2]
                if kind != b"S" and kind != b"M":
                    continue
                if last_instruction is None:
                    raise ToolError(f"{path}:{number}: a store before any instruction line: not a "
                                    "lackey --trace-mem=yes log")
                try:
                    comma = line.index(b",", 3)
                    addr = int(line[3:comma], 16)
                    size = min(int(line[comma + 1:]), 255)
                    ip_text = last_instruction[1:last_instruction.index(b",")]
                    index = index_of.get(ip_text)
                    if index is None:
                        index = index_of[ip_text] = len(log.ips)
                        log.ips.append(int(ip_text, 16))
                except ValueError:
                    raise ToolError(f"{path}:{number}: not a lackey store line: "
                                    f"{line.decode(errors='replace').strip()!r}") from None
                if current is None:
                    current = log.threads.setdefault(thread, (array("I"), array("Q"), array("B")))
                current[0].append(index)
                current[1].append(addr)
                current[2].append(size)
            elif first == b"=" or first == b"-":
                text = line.decode(errors="replace")
                if "SCHED[" in text and "acquired lock" in text:
                    at = text.index("SCHED[") + 6
                    tid = int(text[at:text.index("]", at)])
                    if "starting new thread" in text:
                        started[tid] += 1
                    thread = (tid, started[tid])
                    current = None
                elif "Command: " in text and not log.command:
                    log.command = text.split("Command: ", 1)[1].split()
                elif "Lackey" in text:
                    seen_lackey = True
    if not seen_lackey:
        raise ToolError(f"{path}: not a lackey log (valgrind --tool=lackey --trace-mem=yes "
                        "--trace-sched=yes --log-file=...)")
    return log


# --- classification ----------------------------------------------------------------------------

def symbolize(binary, ips):
    """{ip: [function names of its inlined frames, innermost first]} from addr2line on binary
    (a non-PIE executable with debug information, so that run-time addresses are its own)."""
    if not os.path.isfile(binary):
        raise ToolError(f"--binary: no such file '{binary}' (the recording build's reclaim-bench: "
                        "scripts/hlb-record.sh)")
    frames = {}
    ips = sorted(ips)
    for start in range(0, len(ips), 2000):
        chunk = ips[start:start + 2000]
        try:
            out = subprocess.run(["addr2line", "-a", "-f", "-i", "-C", "-e", binary] +
                                 [hex(ip) for ip in chunk],
                                 capture_output=True, text=True, check=True).stdout
        except FileNotFoundError:
            raise ToolError("addr2line not found (binutils): it tells hazard stores from the "
                            "others") from None
        except subprocess.CalledProcessError as e:
            raise ToolError(f"addr2line failed on '{binary}': {e.stderr.strip()}") from None
        current = None
        lines = out.splitlines()
        i = 0
        while i < len(lines):
            if lines[i].startswith("0x"):
                current = int(lines[i], 16)
                frames[current] = []
                i += 1
            else:  # a function name, then its file:line
                frames[current].append(lines[i])
                i += 2
    return frames


def classify(logs, frames_of):
    """{ip: kind} for every instruction that stored in the logs, given frames_of(ips) -> {ip:
    [inlined function names]} (symbolize, or a stand-in in tests). A store whose frames include a
    fence policy's publish is a publication, hp's clear_slot a clear; every other one regular."""
    ips = set()
    for log in logs:
        ips.update(log.ips)
    kinds = {}
    for ip, names in frames_of(ips).items():
        if any(PUBLISH_FRAME.search(n) for n in names):
            kinds[ip] = PUBLISH
        elif any(CLEAR_FRAME.search(n) for n in names):
            kinds[ip] = CLEAR
        else:
            kinds[ip] = REGULAR
    return kinds


def trace_events(log, thread, kinds):
    """One thread's stores as events: address << 2 | kind, one per cache line a store touches (a
    regular store that straddles two lines is two)."""
    indices, addrs, sizes = log.threads[thread]
    kind_of = [kinds.get(ip, REGULAR) for ip in log.ips]
    events = array("Q")
    for index, addr, size in zip(indices, addrs, sizes):
        kind = kind_of[index]
        events.append(addr << 2 | kind)
        if kind == REGULAR and (addr + size - 1) // LINE_BYTES != addr // LINE_BYTES:
            events.append(((addr // LINE_BYTES + 1) * LINE_BYTES) << 2 | REGULAR)
    return events


def log_threads(log, kinds):
    """The threads of a log that published a hazard: [(description, events)], the description a
    dict of the log, the thread id, the trial (its flags) and its counts of each kind of store."""
    threads = []
    for thread in sorted(log.threads):
        events = trace_events(log, thread, kinds)
        counts = defaultdict(int)
        for e in events:
            counts[e & 3] += 1
        if counts[PUBLISH] == 0:
            continue  # a thread that never protected a node: nothing to simulate
        threads.append(({"log": os.path.basename(log.path), "thread": list(thread),
                         "trial": log.trial(),
                         "stores": {KIND_NAMES[k]: counts[k] for k in sorted(counts)}}, events))
    return threads


def save_trace(threads, out):
    """Writes [(description, events)] to the .npz file out (one array per thread, and the
    descriptions as JSON), through a temporary file renamed into place."""
    import numpy as np

    arrays, described = {}, []
    for i, (description, events) in enumerate(threads):
        arrays[f"thread{i}"] = np.frombuffer(events, dtype=np.uint64)
        described.append({"array": f"thread{i}", **description})
    arrays["threads"] = np.array(json.dumps(described))
    directory = os.path.dirname(out) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".npz")
    except OSError as e:
        raise ToolError(f"--out: cannot write in '{directory}': {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(f, **arrays)
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return described


def convert(log_paths, frames_of, out):
    """hlb-trace: the logs, one at a time (a log may hold tens of millions of stores), into one
    trace file. frames_of(ips) is asked once per instruction address across the logs."""
    known = {}

    def cached(ips):
        missing = set(ips) - known.keys()
        if missing:
            known.update(frames_of(missing))
        return {ip: known[ip] for ip in ips}

    threads = []
    for path in log_paths:
        log = read_lackey(path)
        threads += log_threads(log, classify([log], cached))  # none from the lab's parent
    if not threads:
        raise ToolError("no store in the logs publishes a hazard: trace a run of hp on the "
                        "recording build (debug information, -no-pie: scripts/hlb-record.sh)")
    return save_trace(threads, out)


# --- recording --------------------------------------------------------------------------------

# The keys of an experiment's [[run]] that hlb-record passes to the lab, and those it expands.
RUN_FLAGS = ("ds", "scheme", "threads", "keys", "insert", "delete", "seconds", "trials", "seed",
             "prefill")
SWEPT = ("ds", "scheme", "threads")


def record_points(spec, path):
    """The lab command lines (flags) of an experiment's runs, one per point: the lab runs a
    glibc-only sweep in its own process, so each point is traced in a process of its own, whose
    logged command line says what it ran. ds, scheme and threads may be lists (expanded); the
    other keys are passed as they are."""
    points = []
    for i, run in enumerate(spec.get("run", []), 1):
        unknown = sorted(set(run) - set(RUN_FLAGS))
        if unknown:
            raise ToolError(f"{path}: [[run]] {i}: hlb-record does not take '{unknown[0]}' "
                            f"(accepted: {', '.join(RUN_FLAGS)})")
        if "ds" not in run:
            raise ToolError(f"{path}: [[run]] {i}: missing ds")
        fixed = []
        for key in RUN_FLAGS:
            if key in SWEPT or key not in run:
                continue
            if key == "prefill":
                fixed.append("--prefill" if run[key] else "--no-prefill")
            else:
                fixed += [f"--{key}", str(run[key])]
        swept = [run.get(key, "hp" if key == "scheme" else 1) for key in SWEPT]
        swept = [v if isinstance(v, list) else [v] for v in swept]
        for ds in swept[0]:
            for scheme in swept[1]:
                for threads in swept[2]:
                    points.append(["--ds", str(ds), "--scheme", str(scheme), "--threads",
                                   str(threads), *fixed])
    if not points:
        raise ToolError(f"{path}: no [[run]] to record")
    return points


def record(experiment, bench, out, valgrind="valgrind"):
    """hlb-record: runs every point of the experiment under lackey (one process each), turns
    each log into per-thread traces as soon as it is written (a log takes hundreds of MB), and
    writes them all to out. Returns the threads' descriptions."""
    from .report import load_experiment

    _, spec = load_experiment(experiment)
    points = record_points(spec, experiment)
    if not os.path.isfile(bench):
        raise ToolError(f"--bench: no such file '{bench}' (the recording build: "
                        "scripts/hlb-record.sh)")
    known = {}

    def frames_of(ips):
        missing = set(ips) - known.keys()
        if missing:
            known.update(symbolize(bench, missing))
        return {ip: known[ip] for ip in ips}

    threads = []
    with tempfile.TemporaryDirectory(prefix="reclaim-hlb-") as work:
        for n, flags in enumerate(points, 1):
            log = os.path.join(work, f"point{n}.log")
            command = [valgrind, "--tool=lackey", "--trace-mem=yes", "--trace-sched=yes",
                       f"--log-file={log}", bench, *flags, "--in-process",  # traced: not a child
                       "--out", os.path.join(work, "trials.jsonl")]
            print(f"hlb-record: {n}/{len(points)}: {' '.join(flags)}", file=sys.stderr,
                  flush=True)
            try:
                done = subprocess.run(command, capture_output=True, text=True)
            except FileNotFoundError:
                raise ToolError(f"valgrind not found ('{valgrind}'): apt-get install "
                                "valgrind") from None
            if done.returncode != 0:
                last = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
                raise ToolError(f"{' '.join(flags)}: the lab under lackey exited with status "
                                f"{done.returncode}: {last}")
            parsed = read_lackey(log)
            threads += log_threads(parsed, classify([parsed], frames_of))
            os.unlink(log)
    if not threads:
        raise ToolError("no store in the logs publishes a hazard: record runs of hp")
    return save_trace(threads, out)


def load_trace(path):
    """[(description, events as a list of ints)] of every thread of an .npz trace."""
    import numpy as np

    try:
        with np.load(path) as data:
            threads = json.loads(str(data["threads"]))
            return [(t, data[t["array"]].tolist()) for t in threads]
    except FileNotFoundError:
        raise ToolError(f"trace: no such file '{path}'") from None
    except (OSError, ValueError, KeyError) as e:
        raise ToolError(f"trace: '{path}' is not a trace written by hlb-trace ({e})") from None


# --- simulation --------------------------------------------------------------------------------

def simulate(events, hlb_size, store_buffer=STORE_BUFFER_LINES, clears_as_hazard=False):
    """Barriers one thread's events cause with an HLB of hlb_size entries (0: none, every
    publication fenced), as (total, hazard-induced, store-buffer-full)."""
    hazard_kinds = (PUBLISH, CLEAR) if clears_as_hazard else (PUBLISH,)
    lines, slots = set(), set()
    hazard_fences = capacity_fences = 0
    started = False
    for e in events:
        kind = e & 3
        addr = e >> 2
        if not started:
            if kind != PUBLISH:
                continue
            started = True
        line = addr // LINE_BYTES
        hazard = kind in hazard_kinds
        if hazard and hlb_size == 0:
            hazard_fences += 1  # the store, then the fence of Figure 1: both buffers drain
            lines.clear()
            continue
        hlb_full = hazard and addr not in slots and len(slots) >= hlb_size
        buffer_full = line not in lines and len(lines) >= store_buffer
        if hlb_full or buffer_full:  # a fence empties both buffers before the store enters
            if hlb_full:
                hazard_fences += 1
            else:
                capacity_fences += 1
            lines.clear()
            slots.clear()
        lines.add(line)
        if hazard:
            slots.add(addr)
    return hazard_fences + capacity_fences, hazard_fences, capacity_fences


def gaps(events, clears_as_hazard=False):
    """The gaps of one thread's events: for each two successive hazard-table stores (publications,
    and clears with clears_as_hazard), the number of different cache lines that the regular stores
    between them touched."""
    hazard_kinds = (PUBLISH, CLEAR) if clears_as_hazard else (PUBLISH,)
    found = []
    between = None  # lines since the last hazard store; None before the first publication
    for e in events:
        kind = e & 3
        if kind in hazard_kinds:
            if between is not None:
                found.append(len(between))
                between = set()
            elif kind == PUBLISH:
                between = set()
        elif between is not None:
            between.add((e >> 2) // LINE_BYTES)
    return found


def label_of(thread):
    trial = thread["trial"]
    return trial.get("ds", "?")


def simulate_traces(paths, sizes=HLB_SIZES, store_buffer=STORE_BUFFER_LINES,
                    clears_as_hazard=False):
    """Per container (the trial's ds): barriers summed over its threads for each HLB size, the
    gaps of all its threads, and what was traced. Returns {ds: {"barriers": {size: (total,
    hazard, capacity)}, "gaps": [...], "threads": n, "publications": n, "trials": [...]}}."""
    if 0 not in sizes:
        raise ToolError("--sizes: must include 0, the baseline every size is compared with")
    out = {}
    for path in paths:
        for thread, events in load_trace(path):
            ds = label_of(thread)
            entry = out.setdefault(ds, {"barriers": {s: (0, 0, 0) for s in sizes}, "gaps": [],
                                        "threads": 0, "publications": 0, "trials": set()})
            for s in sizes:
                got = simulate(events, s, store_buffer, clears_as_hazard)
                entry["barriers"][s] = tuple(a + b for a, b in zip(entry["barriers"][s], got))
            entry["gaps"].extend(gaps(events, clears_as_hazard))
            entry["threads"] += 1
            entry["publications"] += thread["stores"].get(KIND_NAMES[PUBLISH], 0)
            trial = thread["trial"]
            entry["trials"].add(f"{trial.get('threads', '?')} threads, "
                                f"{trial.get('insert', '?')}% inserts, "
                                f"{trial.get('delete', '?')}% deletes")
    for entry in out.values():
        entry["trials"] = sorted(entry["trials"])
    return out


def table(results, sizes):
    """A Markdown table: per container, barriers and their ratio to no HLB for each size."""
    rows = ["| container | HLB size | barriers | hazard-induced | store buffer full | "
            "ratio to no HLB |", "|---|---:|---:|---:|---:|---:|"]
    for ds, entry in sorted(results.items()):
        base = entry["barriers"][0][0] or 1
        for s in sizes:
            total, hazard, capacity = entry["barriers"][s]
            rows.append(f"| {ds} | {s} | {total} | {hazard} | {capacity} | {total / base:.4f} |")
    lines = ["\n".join(rows), ""]
    for ds, entry in sorted(results.items()):
        g = entry["gaps"]
        small = sum(1 for x in g if x < STORE_BUFFER_LINES) / len(g) if g else 0.0
        lines.append(f"{ds}: {entry['threads']} threads ({'; '.join(entry['trials'])}), "
                     f"{entry['publications']} hazard publications, {len(g)} gaps, "
                     f"{100 * small:.2f}% below {STORE_BUFFER_LINES} lines, "
                     f"median {sorted(g)[len(g) // 2] if g else 0}")
    return "\n".join(lines) + "\n"


def draw(results, sizes, out, gaps_out, store_buffer=STORE_BUFFER_LINES):
    """Figure 13 (barriers relative to no HLB against the HLB size, one line per container) into
    out, and the gap histogram (share of gaps per size, one series per container) into gaps_out."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .plots import save

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for ds, entry in sorted(results.items()):
        base = entry["barriers"][0][0] or 1
        ratios = [max(entry["barriers"][s][0] / base, 1e-7) for s in sizes]
        ax.plot(range(len(sizes)), ratios, marker="o", label=ds)
    ax.set_yscale("log")
    ax.set_xticks(range(len(sizes)))
    ax.set_xticklabels([str(s) for s in sizes])
    ax.set_xlabel("HLB entries (0: a fence after every hazard publication)")
    ax.set_ylabel("memory barriers relative to no HLB")
    ax.set_title(f"Barriers with an HLB ({store_buffer}-line store buffer)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    save(fig, out)

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    limit = 2 * store_buffer
    width = 0.8 / max(1, len(results))
    for i, (ds, entry) in enumerate(sorted(results.items())):
        g = entry["gaps"]
        counts = [0] * (limit + 1)
        for x in g:
            counts[min(x, limit)] += 1
        shares = [c / len(g) if g else 0 for c in counts]
        ax.bar([x + i * width for x in range(limit + 1)], shares, width=width, label=ds)
    ax.axvline(store_buffer, color="black", linestyle="--", linewidth=1,
               label=f"store buffer ({store_buffer} lines)")
    ax.set_yscale("log")
    ax.set_xlabel(f"gap: cache lines written between two hazard publications ({limit}: or more)")
    ax.set_ylabel("share of gaps")
    ax.set_title("Gaps between hazard publications")
    ax.legend()
    fig.tight_layout()
    save(fig, gaps_out)
    return [out, gaps_out]
