# SPDX-License-Identifier: MIT
"""Every command of reclaim_tools, on small synthetic inputs, writes a complete PNG of a plausible
size and prints its path; {ds}/{alloc} in --out write one file per value."""
import os
import unittest

from support import ToolsCase, png_size, sampled_rows, tools, tools_process, write_results


class EveryCommandWritesAPlausiblePng(ToolsCase):

    def check_command(self, *args, out):
        printed = self.assert_ok(tools(*args, "--out", out))
        self.assertEqual(printed, [out])
        self.assert_plausible_png(out)

    def test_throughput_writes_png(self):
        self.check_command("throughput", self.results, out=self.path("tp.png"))

    def test_throughput_filters_to_one_panel(self):
        self.check_command("throughput", self.results, "--ds", "hm_list", "--alloc", "glibc",
                           "--scheme", "none,debra", "--threads", "1,4", out=self.path("tp.png"))

    def test_throughput_out_template_writes_one_file_per_alloc(self):
        printed = self.assert_ok(tools("throughput", self.results, "--out",
                                       self.path("tp-{ds}-{alloc}.png")))
        expected = [self.path("tp-hm_list-glibc.png"), self.path("tp-hm_list-jemalloc.png")]
        self.assertEqual(printed, expected)
        for path in expected:
            self.assert_plausible_png(path)

    def test_throughput_default_out_goes_to_plots_beside_results(self):
        # As a process, the way make bench runs it.
        printed = self.assert_ok(tools_process("throughput", self.results))
        self.assertEqual(printed, [self.path("plots", "results_throughput.png")])
        self.assert_plausible_png(printed[0])

    def test_af_bars_writes_png(self):
        self.check_command("af-bars", self.results, "--threads", "4", out=self.path("af.png"))

    def test_pauses_writes_png(self):
        self.check_command("pauses", self.results, "--threads", "4", "--alloc", "jemalloc",
                           out=self.path("p.png"))

    def test_memory_writes_png(self):
        self.check_command("memory", self.results, "--alloc", "jemalloc", out=self.path("m.png"))

    def test_timeline_of_batch_frees_writes_png(self):
        self.check_command("timeline", self.timeline, "--scheme", "debra", "--threads", "8",
                           out=self.path("tl.png"))

    def test_timeline_of_slow_frees_writes_png(self):
        self.check_command("timeline", self.timeline, "--scheme", "debra_af", "--event",
                           "slow_free", out=self.path("tl.png"))

    def test_timeline_of_token_receipts_writes_png(self):
        self.check_command("timeline", self.timeline, "--scheme", "token_af", "--trial", "1",
                           out=self.path("tl.png"))

    def test_garbage_per_epoch_writes_one_panel_per_scheme(self):
        one, two = self.path("one.png"), self.path("two.png")
        self.check_command("garbage-per-epoch", self.timeline, "--scheme", "debra",
                           "--threads", "8", out=one)
        self.check_command("garbage-per-epoch", self.timeline, "--scheme", "debra", "token_af",
                           "--threads", "2", out=two)
        # Two panels stacked: a taller image than one panel.
        self.assertGreater(png_size(two)[1], png_size(one)[1])

    def check_taller_with_both_stalls(self, command, one_stall, both_stalls):
        """With and without a stalled thread: a row (or panel) each, so a taller image than one."""
        sampled = write_results(self.path("sampled.jsonl"), sampled_rows())
        one, two = self.path(f"{command}1.png"), self.path(f"{command}2.png")
        self.check_command(command, sampled, *one_stall, out=one)
        self.check_command(command, sampled, *both_stalls, out=two)
        self.assertGreater(png_size(two)[1], png_size(one)[1])

    def test_memory_over_time_draws_a_row_per_stall(self):
        self.check_taller_with_both_stalls("memory-over-time", ["--stall", "1"],
                                           ["--scheme", "debra,nbr_plus", "--threads", "4"])

    def test_memory_with_and_without_a_stall_draws_a_row_each(self):
        self.check_taller_with_both_stalls("memory", ["--stall", "0"], [])

    def test_unreclaimed_draws_a_panel_per_stall(self):
        self.check_taller_with_both_stalls("unreclaimed", ["--stall", "1"], [])

    def test_runtime_over_time_writes_png(self):
        sampled = write_results(self.path("sampled.jsonl"), sampled_rows())
        self.check_command("runtime-over-time", sampled, out=self.path("runtime.png"))

    def test_runtime_over_time_needs_counted_operations(self):
        rows = sampled_rows()
        for row in rows:
            for sample in row["samples"]:
                sample["ops"] = 0  # a set's samples: the lab counts no operations there
        uncounted = write_results(self.path("uncounted.jsonl"), rows)
        self.assert_bad_input(tools("runtime-over-time", uncounted, "--out",
                                    self.path("none.png")), "reclaim_tools:",
                              ["counted operations", "guarded_hm_hashmap"])

    def test_reclamation_cost_writes_png(self):
        self.check_command("reclamation-cost", self.results, "--alloc", "glibc",
                           out=self.path("cost.png"))

    def test_no_temporary_files_are_left_beside_the_png(self):
        self.check_command("memory", self.results, out=self.path("clean", "m.png"))
        self.assertEqual(os.listdir(self.path("clean")), ["m.png"])


if __name__ == "__main__":
    unittest.main()
