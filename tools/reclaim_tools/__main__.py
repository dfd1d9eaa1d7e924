# SPDX-License-Identifier: MIT
"""The command line: python -m reclaim_tools COMMAND ... (see tools/README.md).

Bad input prints one line on stderr and exits with status 2; argparse's own errors are made to do
the same. Each command prints the paths it wrote, one per line.
"""
import argparse
import os
import sys

from . import ToolError


class OneLineParser(argparse.ArgumentParser):
    """argparse, with its usage errors as one line and exit status 2."""

    def error(self, message):
        command = self.prog.partition(" ")[2]
        raise ToolError(f"{command}: {message}" if command else message)


def default_out(results, suffix):
    """results/NAME.jsonl -> results/plots/NAME_SUFFIX.png"""
    stem = os.path.splitext(os.path.basename(results))[0]
    return os.path.join(os.path.dirname(results) or ".", "plots", f"{stem}_{suffix}.png")


def parser():
    p = OneLineParser(prog="reclaim_tools",
                      description="Plots and reports from reclaim-bench's results and timelines.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=OneLineParser,
                           metavar="COMMAND")

    def results_command(name, help_text, suffix):
        c = sub.add_parser(name, help=help_text, description=help_text)
        c.add_argument("results", metavar="RESULTS.jsonl", help="reclaim-bench --out file")
        c.add_argument("--ds", help="containers (comma list)")
        c.add_argument("--alloc", help="allocators (comma list)")
        c.add_argument("--scheme", help="schemes (comma list)")
        c.add_argument("--stall", help="stalled threads (comma list; the lab's --stall)")
        c.add_argument("--keys", help="key ranges (comma list of integers)")
        c.add_argument("--insert", help="insert percentages (comma list)")
        c.add_argument("--delete", help="delete percentages (comma list)")
        c.add_argument("--out", metavar="PNG",
                       help=f"output (default results/plots/NAME_{suffix}.png beside RESULTS); "
                            "{ds} and {alloc} in it write one file per value")
        return c

    results_command("throughput", "throughput vs threads, one line per scheme",
                    "throughput").add_argument("--threads", help="thread counts (comma list)")
    results_command("af-bars", "original vs amortized free (_af, _afa) per scheme",
                    "af_bars").add_argument("--threads", required=True, type=int,
                                            metavar="T", help="the thread count")
    results_command("pauses", "longest reclamation pause and latency percentiles per scheme",
                    "pauses").add_argument("--threads", required=True, type=int,
                                           metavar="T", help="the thread count")
    results_command("memory", "peak RSS and pending_peak vs threads",
                    "memory").add_argument("--threads", help="thread counts (comma list)")
    results_command("memory-over-time",
                    "pending garbage and RSS over the trial (--sample-ms), one line per scheme",
                    "memory_over_time").add_argument("--threads",
                                                     help="thread counts (comma list)")
    results_command("unreclaimed",
                    "unreclaimed nodes over the successive trials (--sample-ms) and after the "
                    "workers exited, one line per scheme (paper 003, Figures 6, 8-11)",
                    "unreclaimed").add_argument("--threads", help="thread counts (comma list)")
    results_command("runtime-over-time",
                    "time per operation over the successive trials, from samples that count "
                    "operations (the cache workload, --sample-ms), one line per scheme (paper "
                    "003, Figure 7)",
                    "runtime_over_time").add_argument("--threads",
                                                      help="thread counts (comma list)")
    results_command("reclamation-cost",
                    "reclamation cost per node freed, (free_ns + scan_ns) / freed, vs threads",
                    "reclamation_cost").add_argument("--threads",
                                                     help="thread counts (comma list)")

    def timeline_command(name, help_text):
        c = sub.add_parser(name, help=help_text, description=help_text)
        c.add_argument("timeline", metavar="TIMELINE.csv", help="reclaim-bench --timeline file")
        c.add_argument("--ds")
        c.add_argument("--alloc")
        c.add_argument("--threads", type=int, metavar="T")
        c.add_argument("--trial", type=int, metavar="N", help="default: the first")
        c.add_argument("--out", metavar="PNG")
        return c

    t = timeline_command("timeline", "paper 001 timeline graph of one run")
    t.add_argument("--scheme", metavar="S")
    t.add_argument("--event", default="batch_free", choices=["batch_free", "slow_free"],
                   help="what the boxes show (default batch_free)")
    g = timeline_command("garbage-per-epoch", "paper 001 Figure 4, one panel per scheme")
    g.add_argument("--scheme", nargs="+", metavar="S", help="schemes (default: all)")

    c = sub.add_parser("compare", help="throughput ratios of OTHER's trials to BASE's, paired",
                       description="throughput ratios of OTHER's trials to BASE's: the k-th trial "
                                   "of each point against BASE's k-th, as a Markdown table")
    c.add_argument("base", metavar="BASE.jsonl")
    c.add_argument("other", metavar="OTHER.jsonl", help="may be BASE itself, with --match")
    c.add_argument("--match", metavar="OTHER_DS=BASE_DS,...",
                   help="compare these containers of OTHER with those of BASE (e.g. "
                        "guarded_ms_queue=ms_queue); only they are compared")
    c.add_argument("--peer", metavar="LIB,...",
                   help="compare each scheme S of OTHER with BASE's LIB:S, a peer library's "
                        "scheme of the same name (e.g. xenium,libcds); peers' own points are "
                        "not compared")
    c.add_argument("--out", metavar="MD", help="also write the table to this file")

    i = sub.add_parser("instructions",
                       help="instructions per operation per scheme: the lab's 1-thread trials "
                            "under valgrind",
                       description="instructions per operation per scheme: one thread of the "
                                   "lab's fixed-work trials (--ops N and 2N) under valgrind, the "
                                   "difference over N, as a Markdown table")
    i.add_argument("--scheme", required=True, help="the lab's schemes (comma list)")
    i.add_argument("--ds", default="lazy_list", help="the container (default lazy_list)")
    i.add_argument("--keys", default="1K", help="key range (default 1K)")
    i.add_argument("--insert", default=0, type=int, help="percent inserts (default 0)")
    i.add_argument("--delete", default=0, type=int, help="percent deletes (default 0)")
    i.add_argument("--ops", default="100K",
                   help="operations of the shorter run (default 100K; the other runs twice as "
                        "many)")
    i.add_argument("--tool", default="cachegrind", help="cachegrind (default) or callgrind")
    i.add_argument("--bench", default=os.path.join("build", "release", "bench", "reclaim-bench"),
                   help="the lab (default build/release/bench/reclaim-bench)")
    i.add_argument("--valgrind", default="valgrind", help="valgrind (default: from PATH)")
    i.add_argument("--out", metavar="MD", help="also write the table to this file")

    h = sub.add_parser("report", help="one self-contained HTML page of an experiment file",
                       description="one self-contained HTML page of an experiment file: its plots "
                                   "(embedded) with their captions, the machine, the tables")
    h.add_argument("experiment", metavar="EXPERIMENT.toml")
    h.add_argument("--results", metavar="RESULTS.jsonl",
                   help="the results of a run of the file with --out (default: the file's out)")
    h.add_argument("--out", metavar="HTML", help="default results/NAME.html beside its results")

    r = sub.add_parser("hlb-trace", help="per-thread store traces from lackey logs (paper 004 HLB)",
                       description="per-thread store traces, hazard publications and clears "
                                   "marked, from valgrind lackey logs of the recording build "
                                   "(scripts/hlb-record.sh)")
    r.add_argument("logs", nargs="+", metavar="LACKEY.log", help="one log per process")
    r.add_argument("--binary", required=True, metavar="RECLAIM_BENCH",
                   help="the recording build's reclaim-bench (debug information, -no-pie)")
    r.add_argument("--out", required=True, metavar="TRACE.npz")

    c = sub.add_parser("hlb-record", help="records store traces of an experiment under lackey",
                       description="runs each point of an experiment's runs (ds, scheme and "
                                   "threads expanded) under valgrind's lackey, one process each, "
                                   "and writes their per-thread store traces (as hlb-trace)")
    c.add_argument("experiment", metavar="EXPERIMENT.toml")
    c.add_argument("--bench", required=True, metavar="RECLAIM_BENCH",
                   help="the recording build's reclaim-bench (debug information, -no-pie)")
    c.add_argument("--out", required=True, metavar="TRACE.npz")
    c.add_argument("--valgrind", default="valgrind", help="the valgrind to run")

    h = sub.add_parser("hlb", help="paper 004 Figure 13: barriers with an HLB, simulated",
                       description="simulates a store buffer and hazard lookaside buffers of "
                                   "each size on traces (hlb-trace): Figure 13, the gap histogram "
                                   "and a Markdown table of barriers per container")
    h.add_argument("traces", nargs="+", metavar="TRACE.npz")
    h.add_argument("--sizes", default="0,1,2,4,8,16,32",
                   help="HLB sizes (comma list, 0 included; default 0,1,2,4,8,16,32)")
    h.add_argument("--store-buffer", default="32", metavar="LINES",
                   help="store buffer size in cache lines (default 32)")
    h.add_argument("--clears-as-hazard", action="store_true",
                   help="hazard clears go to the HLB too (default: regular stores)")
    h.add_argument("--out", metavar="PNG",
                   help="Figure 13 (default plots/NAME_hlb.png beside the first trace)")
    h.add_argument("--gaps-out", metavar="PNG",
                   help="the gap histogram (default plots/NAME_hlb_gaps.png)")
    h.add_argument("--table", metavar="MD", help="also write the table to this file")

    s = sub.add_parser("schemes", help="the lab schemes an experiment file runs (for make bench)",
                       description="the lab's scheme names that an experiment file's runs name, "
                                   "';'-separated (what make bench builds the lab with)")
    s.add_argument("experiment", metavar="EXPERIMENT.toml")
    s.add_argument("--lab-flags", default="", metavar="FLAGS",
                   help="the flags the lab will get with --experiment: a --scheme among them "
                        "replaces every run's schemes")

    e = sub.add_parser("experiment", help="every plot of an experiment file and its report",
                       description="every plot of an experiment file and its Markdown report")
    e.add_argument("experiment", metavar="EXPERIMENT.toml")
    e.add_argument("--plots", default="results/plots", metavar="DIR",
                   help="where the PNGs and NAME.md go (default results/plots)")
    return p


def print_table(text, out):
    """Prints a Markdown table, and writes it to `out` too if given; the paths written."""
    print(text, end="")
    if not out:
        return []
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
    return [out]


def run(args):
    # Imported here so that a usage error costs no matplotlib import.
    from . import plots, report
    from .data import load_results, load_timeline

    if args.command == "experiment":
        return report.experiment(args.experiment, args.plots)
    if args.command == "schemes":
        print(";".join(report.experiment_schemes(args.experiment, args.lab_flags)))
        return []
    if args.command == "instructions":
        from . import instructions
        rows = instructions.measure(args.scheme, ds=args.ds, keys=args.keys, insert=args.insert,
                                    delete=args.delete, ops=args.ops, tool=args.tool,
                                    bench=args.bench, valgrind=args.valgrind)
        return print_table(instructions.table(rows, args.ds, args.keys, args.insert, args.delete,
                                              args.ops, args.tool), args.out)
    if args.command == "report":
        from . import html_report
        return html_report.report(args.experiment, args.out, args.results)
    if args.command in ("hlb-trace", "hlb-record", "hlb"):
        return run_hlb(args)
    if args.command == "compare":
        from . import compare
        return print_table(
            compare.table(compare.compare(args.base, args.other, args.match, args.peer)), args.out)
    if args.command in ("throughput", "af-bars", "pauses", "memory", "memory-over-time",
                        "unreclaimed", "runtime-over-time", "reclamation-cost"):
        df = load_results(args.results)
        kind = args.command.replace("-", "_")
        out = args.out or default_out(args.results, kind)
        draw = getattr(plots, f"draw_{kind}")
        return draw(df, args.results, out, ds=args.ds, alloc=args.alloc, scheme=args.scheme,
                    threads=args.threads, stall=args.stall, keys=args.keys, insert=args.insert,
                    delete=args.delete)
    tl = load_timeline(args.timeline)
    filters = dict(ds=args.ds, alloc=args.alloc, threads=args.threads, trial=args.trial,
                   scheme=args.scheme)
    if args.command == "timeline":
        out = args.out or default_out(args.timeline, f"timeline_{args.event}")
        return plots.draw_timeline(tl, args.timeline, out, event=args.event, **filters)
    out = args.out or default_out(args.timeline, "garbage_per_epoch")
    return plots.draw_garbage_per_epoch(tl, args.timeline, out, **filters)


def counts(text, flag, least):
    """A comma list of integers >= least, in the order given, without repeats."""
    try:
        values = [int(v) for v in text.split(",")]
    except ValueError:
        values = []
    if not values or any(v < least for v in values) or len(set(values)) != len(values):
        raise ToolError(f"{flag}: '{text}' is not a comma list of distinct integers >= {least}")
    return values


def run_hlb(args):
    from . import hlb

    if args.command == "hlb-record":
        hlb.record(args.experiment, args.bench, args.out, args.valgrind)
        return [args.out]
    if args.command == "hlb-trace":
        hlb.convert(args.logs, lambda ips: hlb.symbolize(args.binary, ips), args.out)
        return [args.out]
    sizes = counts(args.sizes, "--sizes", 0)
    store_buffer = counts(args.store_buffer, "--store-buffer", 1)
    if len(store_buffer) != 1:
        raise ToolError(f"--store-buffer: '{args.store_buffer}' is not one integer >= 1")
    results = hlb.simulate_traces(args.traces, sizes, store_buffer[0], args.clears_as_hazard)
    text = hlb.table(results, sizes)
    out = args.out or default_out(args.traces[0], "hlb")
    gaps_out = args.gaps_out or default_out(args.traces[0], "hlb_gaps")
    written = hlb.draw(results, sizes, out, gaps_out, store_buffer[0])
    if args.table:
        try:
            with open(args.table, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise ToolError(f"--table: cannot write '{args.table}': {e.strerror}") from None
        written.append(args.table)
    print(text, end="")
    return written


def main(argv=None):
    try:
        for path in run(parser().parse_args(argv)):
            print(path)
    except ToolError as e:
        print(f"reclaim_tools: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
