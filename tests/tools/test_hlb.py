# SPDX-License-Identifier: MIT
"""The HLB simulation of paper 004 (tools/reclaim_tools/hlb.py): barriers and gaps counted by hand
on small traces, lackey logs parsed into per-thread stores, stores classified by their
instruction's inlined frames (through addr2line on a small program built here), traces written and
read back, and the `hlb-trace` and `hlb` commands with their bad input."""
import os
import subprocess
import unittest

from support import ToolsCase, tools

from reclaim_tools import hlb
from reclaim_tools.hlb import CLEAR, PUBLISH, REGULAR

LINE = hlb.LINE_BYTES
SLOTS = 0x10_000  # a hazard table line: slots at SLOTS, SLOTS + 8, ...


def publish(slot):
    return (SLOTS + 8 * slot) << 2 | PUBLISH


def clear(slot):
    return (SLOTS + 8 * slot) << 2 | CLEAR


def store(line):
    return (0x100_000 + LINE * line) << 2 | REGULAR


class Simulation(unittest.TestCase):

    def test_a_list_traversal_needs_two_entries(self):
        # pred and curr alternate in two slots of one line, with a stack store between: no HLB
        # fences each publication, one entry fences all but the first, two absorb them all.
        events = []
        for i in range(100):
            events += [publish(i % 2), store(0)]
        self.assertEqual(hlb.simulate(events, 0), (100, 100, 0))
        self.assertEqual(hlb.simulate(events, 1), (99, 99, 0))
        self.assertEqual(hlb.simulate(events, 2), (0, 0, 0))
        self.assertEqual(hlb.simulate(events, 32), (0, 0, 0))

    def test_a_full_store_buffer_fences_and_empties_the_hlb(self):
        # 33 lines after a publication: the 33rd finds the 32-line buffer full (the publication's
        # line is one of the 32). Then the slot must enter the HLB again.
        events = [publish(0)] + [store(i) for i in range(32)] + [publish(1), publish(0)]
        self.assertEqual(hlb.simulate(events, 2), (1, 0, 1))
        # Without an HLB the publication's own fence emptied the buffer: 32 lines fit.
        self.assertEqual(hlb.simulate(events, 0), (3, 3, 0))
        self.assertEqual(hlb.simulate(events, 2, store_buffer=64), (0, 0, 0))
        # An HLB of one: the first fence is the buffer's, the next publication of another slot
        # finds the HLB full (the buffer's fence emptied slot 0, slot 1 entered), then slot 0.
        self.assertEqual(hlb.simulate(events, 1), (2, 1, 1))

    def test_stores_before_the_first_publication_are_not_simulated(self):
        events = [store(i) for i in range(100)] + [publish(0)] + [store(i) for i in range(31)]
        self.assertEqual(hlb.simulate(events, 1), (0, 0, 0))
        self.assertEqual(hlb.simulate(events, 0), (1, 1, 0))

    def test_a_rewritten_slot_is_absorbed(self):
        events = [publish(3)] * 50
        self.assertEqual(hlb.simulate(events, 1), (0, 0, 0))
        self.assertEqual(hlb.simulate(events, 0), (50, 50, 0))

    def test_clears_are_regular_stores_unless_asked(self):
        events = [publish(0), clear(1), clear(2), clear(3)]
        self.assertEqual(hlb.simulate(events, 2), (0, 0, 0))
        self.assertEqual(hlb.simulate(events, 2, clears_as_hazard=True), (1, 1, 0))
        self.assertEqual(hlb.simulate(events, 0, clears_as_hazard=True), (4, 4, 0))

    def test_gaps_count_the_lines_between_publications(self):
        events = [store(9), publish(0), store(1), store(1), store(2), publish(1), publish(0),
                  clear(0), store(5), publish(1)]
        self.assertEqual(hlb.gaps(events), [2, 0, 2])  # the clear's line counts: it is regular
        self.assertEqual(hlb.gaps(events, clears_as_hazard=True), [2, 0, 0, 1])


LOG = """\
==4242== Lackey, an example Valgrind tool
==4242== Command: reclaim-bench --ds lazy_skiplist --scheme hp --alloc glibc --threads 2 \
--seconds 0.1 --keys 1000 --insert 25 --delete 25 --prefill --child-trial 3 --child-fd 5
I  00401000,3
 S 7ff000010,8
--4242--   SCHED[2]:  acquired lock (thread_wrapper(starting new thread))
I  00402000,4
 L 00600000,8
 M 00600040,8
I  00402010,5
 S 00600078,16
--4242--   SCHED[3]:  acquired lock (thread_wrapper(starting new thread))
I  00402000,4
 M 00600048,8
--4242--   SCHED[2]: releasing lock (VG_(scheduler):timeslice) -> VgTs_Yielding
--4242--   SCHED[2]:  acquired lock (VG_(scheduler):timeslice)
I  00403000,3
 S 00600040,8
--4242--   SCHED[3]:  acquired lock (thread_wrapper(starting new thread))
I  00402000,4
 M 00600050,8
"""


class Lackey(ToolsCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(cls.path("lackey.4242.log"), "w", encoding="utf-8") as f:
            f.write(LOG)

    def frames(self, ips):
        names = {0x401000: ["main"],
                 0x402000: ["std::atomic<void const*>::store(void const*, std::memory_order)",
                            "void reclaim::core::symmetric_fence::publish<void const*>(...)",
                            "reclaim::hp<>::domain::publish_validated<...>(...)"],
                 0x402010: ["do_something_else()"],
                 0x403000: ["std::atomic<void const*>::store(void const*, std::memory_order)",
                            "reclaim::hp<>::domain::clear_slot(std::atomic<void const*>&)"]}
        return {ip: names[ip] for ip in ips}

    def test_stores_are_attributed_to_the_thread_that_runs(self):
        log = hlb.read_lackey(self.path("lackey.4242.log"))
        # Thread id 3 is given to a second thread once the first exited: two threads.
        self.assertEqual(sorted(log.threads), [(1, 0), (2, 1), (3, 1), (3, 2)])
        by_thread = {t: [(log.ips[i], a, s) for i, a, s in zip(*log.threads[t])]
                     for t in log.threads}
        self.assertEqual(by_thread[1, 0], [(0x401000, 0x7ff000010, 8)])
        self.assertEqual(by_thread[2, 1], [(0x402000, 0x600040, 8), (0x402010, 0x600078, 16),
                                           (0x403000, 0x600040, 8)])
        self.assertEqual(by_thread[3, 1], [(0x402000, 0x600048, 8)])
        self.assertEqual(by_thread[3, 2], [(0x402000, 0x600050, 8)])
        self.assertEqual(log.trial(), {"ds": "lazy_skiplist", "scheme": "hp", "threads": "2",
                                       "keys": "1000", "insert": "25", "delete": "25",
                                       "child-trial": "3"})

    def test_publications_and_clears_are_told_by_their_frames(self):
        log = hlb.read_lackey(self.path("lackey.4242.log"))
        kinds = hlb.classify([log], self.frames)
        self.assertEqual(kinds, {0x401000: REGULAR, 0x402000: PUBLISH, 0x402010: REGULAR,
                                 0x403000: CLEAR})
        # The 16-byte store at 0x600078 straddles two lines: two regular events.
        self.assertEqual(list(hlb.trace_events(log, (2, 1), kinds)),
                         [0x600040 << 2 | PUBLISH, 0x600078 << 2 | REGULAR,
                          0x600080 << 2 | REGULAR, 0x600040 << 2 | CLEAR])

    def test_logs_without_a_hazard_publication_are_refused(self):
        with self.assertRaisesRegex(hlb.ToolError, "no store in the logs publishes a hazard"):
            hlb.convert([self.path("lackey.4242.log")], lambda ips: {ip: ["main"] for ip in ips},
                        self.path("none.npz"))
        self.assertFalse(os.path.exists(self.path("none.npz")))

    def test_a_trace_is_written_read_back_and_simulated_by_the_command(self):
        threads = hlb.convert([self.path("lackey.4242.log")], self.frames, self.path("t.npz"))
        # The main thread never published a hazard: it is left out.
        self.assertEqual([t["thread"] for t in threads], [[2, 1], [3, 1], [3, 2]])
        back = hlb.load_trace(self.path("t.npz"))
        self.assertEqual([t["thread"] for t, _ in back], [[2, 1], [3, 1], [3, 2]])
        self.assertEqual(back[1][1], [0x600048 << 2 | PUBLISH])
        self.assertEqual(back[0][0]["stores"], {"regular": 2, "hazard publication": 1,
                                                "hazard clear": 1})
        out, gaps_out = self.path("plots", "fig13.png"), self.path("plots", "gaps.png")
        proc = tools("hlb", self.path("t.npz"), "--out", out, "--gaps-out", gaps_out,
                     "--table", self.path("t.md"))
        self.assert_ok(proc)
        self.assertIn("| lazy_skiplist | 0 | 3 | 3 | 0 | 1.0000 |", proc.stdout)
        self.assertIn("| lazy_skiplist | 1 | 0 | 0 | 0 | 0.0000 |", proc.stdout)
        self.assertIn("3 threads (2 threads, 25% inserts, 25% deletes), 3 hazard publications",
                      proc.stdout)
        self.assert_plausible_png(out)
        self.assert_plausible_png(gaps_out)
        with open(self.path("t.md"), encoding="utf-8") as f:
            self.assertIn("| lazy_skiplist | 32 |", f.read())

    def test_addr2line_names_the_inlined_frames_of_an_instruction(self):
        source = self.path("probe.cpp")
        with open(source, "w", encoding="utf-8") as f:
            f.write("#include <atomic>\n"
                    "namespace reclaim::core { struct symmetric_fence {\n"
                    "  [[gnu::noinline]] static void publish(std::atomic<void*>& s, void* p) {\n"
                    "    s.store(p, std::memory_order_seq_cst); } }; }\n"
                    "std::atomic<void*> slot;\n"
                    "int main() { reclaim::core::symmetric_fence::publish(slot, &slot); }\n")
        binary = self.path("probe")
        subprocess.run(["g++", "-std=c++20", "-O2", "-g", "-no-pie", source, "-o", binary],
                       check=True)
        symbols = subprocess.run(["nm", "-C", "--defined-only", binary], capture_output=True,
                                 text=True, check=True).stdout
        address = {}
        for line in symbols.splitlines():  # "ADDRESS TYPE NAME"
            value, _, name = line.split(" ", 2)
            address[name] = int(value, 16)
        publish = next(a for n, a in address.items() if "symmetric_fence::publish" in n)
        frames = hlb.symbolize(binary, {publish, address["main"]})
        self.assertTrue(any("symmetric_fence::publish" in n for n in frames[publish]),
                        frames[publish])
        self.assertTrue(any(n.startswith("main") for n in frames[address["main"]]))


class BadInput(ToolsCase):

    def check_bad(self, *args, says):
        proc = tools(*args)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(proc.stdout, "")
        lines = proc.stderr.splitlines()
        self.assertEqual(len(lines), 1, proc.stderr)
        for text in says:
            self.assertIn(text, lines[0])

    def test_a_missing_trace(self):
        self.check_bad("hlb", self.path("nope.npz"), "--out", self.path("x.png"),
                       says=["trace: no such file", "nope.npz"])
        self.assertFalse(os.path.exists(self.path("x.png")))

    def test_a_file_that_is_not_a_trace(self):
        self.check_bad("hlb", self.results, says=["is not a trace written by hlb-trace"])

    def test_sizes_without_the_baseline_or_malformed(self):
        self.check_bad("hlb", self.results, "--sizes", "1,2", says=["--sizes: must include 0"])
        self.check_bad("hlb", self.results, "--sizes", "0,x",
                       says=["--sizes: '0,x' is not a comma list of distinct integers >= 0"])
        self.check_bad("hlb", self.results, "--store-buffer", "0",
                       says=["--store-buffer: '0' is not a comma list of distinct integers >= 1"])

    def test_a_log_that_is_not_from_lackey(self):
        self.check_bad("hlb-trace", self.results, "--binary", self.results, "--out",
                       self.path("t.npz"), says=["not a lackey log", "--trace-mem=yes"])
        self.assertFalse(os.path.exists(self.path("t.npz")))

    def test_a_missing_binary(self):
        with open(self.path("plain.log"), "w", encoding="utf-8") as f:
            f.write("==1== Lackey, an example Valgrind tool\nI  00401000,3\n S 7ff000010,8\n")
        self.check_bad("hlb-trace", self.path("plain.log"), "--binary", self.path("none"),
                       "--out", self.path("t.npz"), says=["--binary: no such file"])


if __name__ == "__main__":
    unittest.main()
