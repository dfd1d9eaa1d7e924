# SPDX-License-Identifier: MIT
"""Bad input -- a missing file, a malformed line, no rows matching the filters, an unknown kind --
exits with status 2 and one line on stderr naming what was wrong and what is accepted, and writes
no PNG."""
import os
import unittest

from support import ToolsCase, results_rows, sampled_rows, tools, tools_process, write_results


class BadInputExitsTwoWithOneLine(ToolsCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.no_af = write_results(cls.path("no_af.jsonl"),
                                  [r for r in results_rows() if not r["scheme"].endswith("_af")])
        with open(cls.path("bad.jsonl"), "w", encoding="utf-8") as f:
            f.write('{"ds": "hm_list"\n')
        with open(cls.path("short.jsonl"), "w", encoding="utf-8") as f:
            f.write('{"ds": "hm_list", "scheme": "none"}\n')
        with open(cls.path("bad_event.csv"), "w", encoding="utf-8") as f:
            f.write("ds,scheme,alloc,threads,trial,thread,event,start_ns,end_ns,value\n"
                    "hm_list,debra,glibc,1,1,0,coffee_break,0,0,0\n")

    def check_bad(self, *args, says, process=False):
        out = self.path("out", f"{self.id().rsplit('.', 1)[-1]}.png")
        run = tools_process if process else tools
        self.assert_bad_input(run(*args, "--out", out), "reclaim_tools: ", says)
        self.assertFalse(os.path.exists(out), f"{out} written on bad input")
        if os.path.isdir(self.path("out")):
            self.assertEqual(os.listdir(self.path("out")), [])

    def test_missing_results_file(self):
        self.check_bad("throughput", self.path("nope.jsonl"),
                       says=["results: no such file", "nope.jsonl"], process=True)

    def test_malformed_json_line_names_the_line(self):
        self.check_bad("throughput", self.path("bad.jsonl"),
                       says=["bad.jsonl:1: not a JSON object", "reclaim-bench --out"])

    def test_missing_fields_are_named(self):
        self.check_bad("memory", self.path("short.jsonl"),
                       says=["short.jsonl:1: missing field(s) alloc, threads"])

    def test_no_rows_matching_the_filters_names_what_is_present(self):
        self.check_bad("throughput", self.results, "--ds", "skiplist",
                       says=["no rows match ds=skiplist", "(present: ds hm_list)"])
        self.check_bad("memory", self.results, "--threads", "64",
                       says=["no rows match threads=64", "(present: threads 1, 2, 4)"])

    def test_memory_over_time_without_samples_says_how_to_get_them(self):
        self.check_bad("memory-over-time", self.results,
                       says=["no trial of the selection has memory samples", "--sample-ms"])

    def test_no_rows_with_that_many_stalled_threads_names_what_is_present(self):
        sampled = write_results(self.path("sampled.jsonl"), sampled_rows())
        self.check_bad("memory-over-time", sampled, "--stall", "3",
                       says=["no rows match stall=3", "(present: stall 0, 1)"])
        self.check_bad("memory-over-time", sampled, "--stall", "one",
                       says=["--stall: 'one' is not a list of integers"])

    def test_af_bars_without_amortized_schemes(self):
        self.check_bad("af-bars", self.no_af, "--threads", "2",
                       says=["no amortized-free scheme", "none, token_periodic"])

    def test_af_bars_needs_threads(self):
        self.check_bad("af-bars", self.results,
                       says=["af-bars: the following arguments are required: --threads"])

    def test_unknown_command(self):
        self.check_bad("pie", self.results, says=["invalid choice: 'pie'", "throughput"],
                       process=True)

    def test_unknown_event_in_timeline(self):
        self.check_bad("timeline", self.path("bad_event.csv"),
                       says=["unknown event 'coffee_break'", "accepted: batch_free, slow_free"])

    def test_unknown_event_to_draw(self):
        self.check_bad("timeline", self.timeline, "--scheme", "debra", "--event", "epoch_seen",
                       says=["--event", "invalid choice: 'epoch_seen'"])

    def test_ambiguous_timeline_asks_to_choose(self):
        self.check_bad("timeline", self.timeline,
                       says=["several scheme values", "debra, debra_af, token_af",
                             "choose one with --scheme"])
        self.check_bad("timeline", self.timeline, "--scheme", "debra",
                       says=["several threads values (2, 8)", "--threads"])

    def test_garbage_per_epoch_unknown_scheme(self):
        self.check_bad("garbage-per-epoch", self.timeline, "--scheme", "hp",
                       says=["no rows match scheme=hp", "present: scheme debra"])


class BadExperimentExitsTwoWithOneLine(ToolsCase):

    def experiment(self, text, says):
        path = self.path(f"{self.id().rsplit('.', 1)[-1]}.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        proc = tools("experiment", path, "--plots", self.path("plots"))
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        for text in says:
            self.assertIn(text, proc.stderr)
        self.assertFalse(os.path.exists(self.path("plots")), "plots written on bad input")

    def test_missing_experiment_file(self):
        proc = tools("experiment", self.path("none.toml"))
        self.assertEqual(proc.returncode, 2)
        self.assertIn("experiment: no such file", proc.stderr)

    def test_unknown_plot_kind(self):
        self.experiment(f'title = "t"\nout = "{self.results}"\n[[plot]]\nkind = "pie"\n',
                        says=["[[plot]] 1: unknown kind 'pie'",
                              "accepted: throughput, af_bars, timeline, garbage_per_epoch, memory"])

    def test_unknown_plot_key(self):
        self.experiment(f'title = "t"\nout = "{self.results}"\n[[plot]]\nkind = "memory"\n'
                        'colour = "red"\n', says=["unknown key 'colour'",
                                                  "accepted: alloc, caption, delete, ds, file, "
                                                  "insert, keys, scheme, stall, threads"])

    def test_caption_not_a_string(self):
        self.experiment(f'title = "t"\nout = "{self.results}"\n[[plot]]\nkind = "memory"\n'
                        'caption = 3\n', says=["[[plot]] 1 (memory): caption must be a string"])

    def test_missing_title(self):
        self.experiment(f'out = "{self.results}"\n', says=["missing title"])

    def test_invalid_toml(self):
        self.experiment('title = \n', says=["not valid TOML"])

    def test_missing_out_file(self):
        self.experiment('title = "t"\nout = "results/absent.jsonl"\n',
                        says=["results: no such file 'results/absent.jsonl'"])


if __name__ == "__main__":
    unittest.main()
