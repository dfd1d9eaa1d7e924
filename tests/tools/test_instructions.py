# SPDX-License-Identifier: MIT
"""`instructions`: instructions per operation from two fixed-work runs of the lab under valgrind,
their difference over N, with the lab's validation checked. A stand-in for valgrind (a script
that writes the lab's JSON line and prints a cachegrind or callgrind summary with a count of
BASE + COST[scheme] x N) makes the numbers exact; the real thing is what the command runs by
default (docs/results.md has its tables)."""
import os
import stat
import unittest

from support import ToolsCase, tools

COST = {"none": 1500, "hp": 5800, "hp_asym": 1550}
FAKE_VALGRIND = r'''#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
tool = [a for a in args if a.startswith("--tool=")][0].split("=")[1]
value = lambda flag: args[args.index(flag) + 1]
scheme, ops = value("--scheme"), int(value("--ops"))
cost = {cost}
ok = scheme != "broken"
ran = ops if scheme != "timed" else ops + 1
with open(value("--out"), "a") as f:
    f.write(json.dumps({{"scheme": scheme, "ops": ran, "ops_per_thread": ops,
                        "checksum_ok": ok}}) + "\n")
count = 123456 + cost.get(scheme, 100) * ops
if tool == "cachegrind":
    print(f"==7== I   refs:      {{count:,}}", file=sys.stderr)
else:
    print(f"==7== Collected : {{count}}", file=sys.stderr)
'''


class Instructions(ToolsCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.valgrind = cls.path("fake-valgrind")
        with open(cls.valgrind, "w", encoding="utf-8") as f:
            f.write(FAKE_VALGRIND.format(cost=repr(COST)))
        cls.bench = cls.path("fake-bench")
        with open(cls.bench, "w", encoding="utf-8") as f:
            f.write("#!/bin/sh\nexit 0\n")
        for path in (cls.valgrind, cls.bench):
            os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)

    def run_tool(self, *args):
        return tools("instructions", "--bench", self.bench, "--valgrind", self.valgrind, *args)

    def test_the_difference_over_n_is_the_cost_per_operation(self):
        for tool in ("cachegrind", "callgrind"):
            proc = self.run_tool("--scheme", "none,hp,hp_asym", "--ops", "10K", "--tool", tool)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            rows = [line for line in proc.stdout.splitlines() if line.startswith("| ")]
            self.assertEqual(rows[0], "| scheme | instructions/op | / none | / hp |")
            self.assertEqual(rows[1], "| none | 1500 | 1.00 | 0.26 |")
            self.assertEqual(rows[2], "| hp | 5800 | 3.87 | 1.00 |")
            self.assertEqual(rows[3], "| hp_asym | 1550 | 1.03 | 0.27 |")
            self.assertIn("lazy_list, 1K keys, 0% inserts, 0% deletes, 1 thread, " + tool,
                          proc.stdout)

    def test_the_table_is_written_to_out(self):
        out = self.path("instructions.md")
        proc = self.run_tool("--scheme", "hp", "--ops", "1K", "--out", out)
        self.assertEqual(self.assert_ok(proc)[-1], out)
        with open(out, encoding="utf-8") as f:
            self.assertIn("| hp | 5800 |", f.read())

    def check_bad(self, *args, says):
        self.assert_bad_input(self.run_tool(*args), "reclaim_tools: instructions: ", says)

    def test_a_trial_that_fails_validation_is_an_error(self):
        self.check_bad("--scheme", "none,broken", "--ops", "1K",
                       says=["lazy_list x broken", "checksum_ok is false"])

    def test_a_trial_that_did_not_run_the_fixed_work_is_an_error(self):
        self.check_bad("--scheme", "timed", "--ops", "1K", says=["ran 1001 operations, not 1000"])

    def test_bad_arguments_are_named(self):
        self.check_bad("--scheme", "hp", "--ops", "0", says=["--ops", "got '0'"])
        self.check_bad("--scheme", "hp", "--tool", "lackey",
                       says=["--tool: unknown tool 'lackey'", "cachegrind, callgrind"])
        self.check_bad("--scheme", ",", says=["--scheme: expected a comma list"])
        proc = tools("instructions", "--scheme", "hp", "--bench", self.path("nope"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--bench: ", proc.stderr)
        self.assertIn("is not the lab's executable", proc.stderr)
        proc = tools("instructions", "--scheme", "hp", "--bench", self.bench, "--valgrind",
                     self.path("no-valgrind"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("--valgrind: ", proc.stderr)


if __name__ == "__main__":
    unittest.main()
