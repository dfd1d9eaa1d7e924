# SPDX-License-Identifier: MIT
"""The numbers: `experiment` draws every [[plot]] and writes a report whose medians, min-max, ratios
and freeing shares match values computed by hand from the synthetic trials (support.py); the
timeline series (garbage over time, garbage per epoch) match hand-computed ones."""
import os
import unittest

from support import (SMALL_DEBRA, SMALL_TOKEN, MS, SAMPLES, ToolsCase, sampled_rows, tools,
                     write_results, write_timeline)
from reclaim_tools import plots, report
from reclaim_tools.data import load_results, load_timeline

EXPERIMENT = """
title = "Synthetic AF comparison"
paper = "001, Figure 11"
claim = "Amortized free is faster."
out = "results/synthetic.jsonl"

[[run]]
ds = ["hm_list"]
scheme = ["none", "debra", "debra_af", "token_periodic", "token_af"]
threads = [1, 2, 4]
alloc = ["glibc", "jemalloc"]
timeline = "results/timeline.csv"

[[plot]]
kind = "throughput"
alloc = "glibc"
file = "tp.png"
[[plot]]
kind = "af_bars"
threads = 4
[[plot]]
kind = "timeline"
scheme = "debra"
threads = 2
[[plot]]
kind = "garbage_per_epoch"
scheme = ["debra", "token_af"]
threads = 2
[[plot]]
kind = "memory"
"""


class ExperimentReport(ToolsCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        os.makedirs(cls.path("results"))
        os.rename(cls.results, cls.path("results", "synthetic.jsonl"))
        os.rename(cls.timeline, cls.path("results", "timeline.csv"))
        cls.completed, cls.report = cls.run_on_experiment("experiment", "synthetic.toml", EXPERIMENT,
                                                          "results", "plots", "synthetic.md")

    def setUp(self):
        self.printed = self.assert_ok(self.completed)

    def section(self, ds_alloc):
        start = self.report.index(f"### {ds_alloc}")
        end = self.report.find("### ", start + 4)
        return self.report[start:end if end >= 0 else len(self.report)]

    def test_every_plot_is_drawn_and_embedded(self):
        pngs = ["tp.png", "synthetic_2_af_bars.png", "synthetic_3_timeline.png",
                "synthetic_4_garbage_per_epoch.png", "synthetic_5_memory.png"]
        self.assertEqual(self.printed, [os.path.join("results", "plots", p) for p in pngs]
                         + [os.path.join("results", "plots", "synthetic.md")])
        for png in pngs:
            self.assert_plausible_png(self.path("results", "plots", png))
            self.assertIn(f"]({png})", self.report)

    def test_report_names_title_paper_claim_and_data(self):
        self.assertTrue(self.report.startswith("# Synthetic AF comparison\n"))
        self.assertIn("paper 001, Figure 11", self.report)
        self.assertIn("Amortized free is faster.", self.report)
        self.assertIn("90 trials, git abc1234, 2 cpus", self.report)

    def test_medians_and_min_max_match_hand_computed_values(self):
        glibc = self.section("hm_list, glibc")
        self.assertIn("| scheme | 1 thread | 2 threads | 4 threads |", glibc)
        # debra: 2.0 Mops/s x threads x (1.2, 0.9, 1.0) -> median 2 x threads, min 0.9x, max 1.2x
        self.assertIn("| debra | 2.000 (1.800-2.400) | 4.000 (3.600-4.800) | "
                      "8.000 (7.200-9.600) |", glibc)
        self.assertIn("| none | 3.000 (2.700-3.600) | 6.000 (5.400-7.200) | "
                      "12.000 (10.800-14.400) |", glibc)
        self.assertIn("### hm_list, jemalloc", self.report)

    def test_ratios_to_none_and_af_to_original_match_hand_computed_values(self):
        glibc = self.section("hm_list, glibc")
        self.assertIn("| debra | 0.67x | 0.67x | 0.67x |", glibc)        # 2.0 / 3.0
        self.assertIn("| token_af | 0.50x | 0.50x | 0.50x |", glibc)     # 1.5 / 3.0
        self.assertIn("| debra_af / debra | 1.25x | 1.25x | 1.25x |", glibc)  # 2.5 / 2.0
        # token_af pairs with token_periodic: 1.5 / 1.0
        self.assertIn("| token_af / token_periodic | 1.50x | 1.50x | 1.50x |", glibc)
        self.assertNotIn("| none | 1.00x", glibc)

    def test_no_signal_or_stall_tables_without_signals_or_stalls(self):
        # Lines without `signals` and `stall` (older results) read as none sent, none stalled.
        self.assertNotIn("Signals sent", self.report)
        self.assertNotIn("Pending garbage peak", self.report)
        self.assertNotIn("stalled", self.report)

    def test_cost_per_node_matches_hand_computed_values(self):
        # free_ns / freed per trial: t x (0.1 x 2e9 / 400, 0.3 x 2e9 / 100, 0.2 x 2e9 / 200) ns =
        # t x (500000, 6000000, 2000000): median 2e6 x t, min 5e5 x t, max 6e6 x t (no scan_ns).
        self.assertIn("| debra | 2000000 (500000-6000000) | 4000000 (1000000-12000000) | "
                      "8000000 (2000000-24000000) |", self.section("hm_list, glibc"))

    def test_free_share_and_freed_match_hand_computed_values(self):
        # free_ns = share x threads x seconds x 1e9 with shares 10%, 30%, 20%; freed 400, 100, 200
        self.assertIn("| debra_af | 20.0%, 200 freed | 20.0%, 200 freed | 20.0%, 200 freed |",
                      self.section("hm_list, jemalloc"))


class TimelineSeries(ToolsCase):

    def run_of(self, scheme):
        tl = load_timeline(write_timeline(self.path("small.csv"),
                                          [("debra", 2, 1, SMALL_DEBRA),
                                           ("token_af", 2, 1, SMALL_TOKEN)]))
        return plots.one_run(tl, "small.csv", scheme=scheme)

    def test_garbage_per_epoch_sums_what_threads_held_when_they_began_each_epoch(self):
        # Advances at 3 and 6 ms: epoch 0 holds 0 + 3, epoch 1 holds 5 + 7 (5 is seen at the
        # very time of the advance, so in the new epoch), epoch 2 holds 2.
        per_epoch = plots.garbage_per_epoch(self.run_of("debra"))
        self.assertEqual(per_epoch.to_dict(), {0: 3, 1: 12, 2: 2})

    def test_garbage_per_epoch_of_a_token_scheme_uses_token_receipts(self):
        # Advance at 2.5 ms: epoch 0 holds 4 + 6, epoch 1 holds 1.
        self.assertEqual(plots.garbage_per_epoch(self.run_of("token_af")).to_dict(),
                         {0: 10, 1: 1})

    def test_garbage_over_time_sums_each_threads_latest_report(self):
        times, totals = plots.garbage_over_time(self.run_of("debra"))
        self.assertEqual(times, [0, 1 * MS, 3 * MS, 4 * MS, 7 * MS])
        self.assertEqual(totals, [0, 3, 8, 12, 9])

    def test_the_trial_defaults_to_the_first(self):
        tl = load_timeline(write_timeline(self.path("two.csv"),
                                          [("debra", 2, 2, SMALL_TOKEN),
                                           ("debra", 2, 1, SMALL_DEBRA)]))
        self.assertEqual(set(plots.one_run(tl, "two.csv")["trial"]), {1})


STALL_EXPERIMENT = """
title = "Synthetic stalled thread"
paper = "000, Figure 4c and 4d"
out = "results/stall.jsonl"

[[run]]
ds = "dgt_bst"
scheme = ["debra", "nbr_plus"]
threads = 4
stall = 1
sample_ms = 10

[[plot]]
kind = "memory_over_time"
[[plot]]
kind = "memory"
stall = 1
[[plot]]
kind = "throughput"
stall = 0
"""


class MemoryOverTime(ToolsCase):
    """The numbers behind memory-over-time and the report of an experiment with stalled threads,
    from support.sampled_rows(): per sample k, pending = slope x k x (1.2, 0.9, 1.0) over the three
    trials, rss = (10 + k) MiB x the same factors; trial 3 one sample shorter."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sampled = load_results(write_results(cls.path("sampled.jsonl"), sampled_rows()))
        os.makedirs(cls.path("results"))
        write_results(cls.path("results", "stall.jsonl"), sampled_rows())
        cls.completed, cls.report = cls.run_on_experiment("experiment", "stall.toml", STALL_EXPERIMENT,
                                                          "results", "plots", "stall.md")

    def series(self, scheme, stall):
        rows = self.sampled
        return plots.memory_series(rows[(rows["scheme"] == scheme) & (rows["stall"] == stall)])

    def test_series_is_the_median_min_and_max_over_trials_per_sample(self):
        s = self.series("debra", 1)
        row = s.iloc[10]
        self.assertAlmostEqual(row["t_ms"], 100.2)  # 100.1, 100.2, 100.3
        self.assertEqual((row["pending"], row["pending_min"], row["pending_max"]),
                         (10000, 9000, 12000))
        mib = 1024 * 1024
        self.assertEqual((row["rss_bytes"] / mib, row["rss_bytes_min"] / mib,
                          row["rss_bytes_max"] / mib), (20, 18, 24))

    def test_series_is_as_long_as_the_shortest_trial(self):
        self.assertEqual(len(self.series("nbr_plus", 0)), SAMPLES - 1)

    def test_a_stalled_thread_shows_as_growth_in_the_series(self):
        # What E2 reads from the plot: debra's garbage with a stall ends 100x higher than without.
        self.assertEqual(self.series("debra", 1)["pending"].iloc[-1],
                         100 * self.series("debra", 0)["pending"].iloc[-1])

    def test_experiment_draws_memory_over_time_and_sections_per_stall(self):
        printed = self.assert_ok(self.completed)
        pngs = ["stall_1_memory_over_time.png", "stall_2_memory.png", "stall_3_throughput.png"]
        self.assertEqual(printed, [os.path.join("results", "plots", p) for p in pngs]
                         + [os.path.join("results", "plots", "stall.md")])
        for png in pngs:
            self.assert_plausible_png(self.path("results", "plots", png))
        self.assertIn("### dgt_bst, jemalloc\n", self.report)
        self.assertIn("### dgt_bst, jemalloc, 1 stalled thread\n", self.report)

    def section(self, title):
        start = self.report.index(f"### {title}\n")
        end = self.report.find("### ", start + 4)
        return self.report[start:end if end >= 0 else len(self.report)]

    def test_report_gives_pending_peaks_with_and_without_a_stall(self):
        self.assert_ok(self.completed)
        # pending_peak of a trial is its last sample: slope x 49 x (1.2, 0.9) and slope x 48.
        self.assertIn("| debra | 48000 (44100-58800) |",
                      self.section("dgt_bst, jemalloc, 1 stalled thread"))
        self.assertIn("| debra | 480 (441-588) |", self.section("dgt_bst, jemalloc"))

    def test_report_gives_what_is_left_once_the_workers_exited(self):
        self.assert_ok(self.completed)
        self.assertIn("| debra | 100.0% (100.0%) |",
                      self.section("dgt_bst, jemalloc, 1 stalled thread"))
        self.assertIn("| nbr_plus | 0.0% (0.0%) |", self.section("dgt_bst, jemalloc"))

    def test_report_shows_signals_of_the_schemes_that_sent_any(self):
        self.assert_ok(self.completed)
        section = self.section("dgt_bst, jemalloc")
        self.assertIn("Signals sent", section)
        self.assertIn("| nbr_plus | 20 (10-30) |", section)  # 10, 20, 30 over the trials
        signals = section[section.index("Signals sent"):]
        self.assertNotIn("| debra |", signals)


class WorkloadsAreSectionsOfTheirOwn(ToolsCase):

    def test_two_mixes_of_one_container_are_two_sections_with_their_own_medians(self):
        from support import results_rows
        heavy = [dict(r, keys=20000, insert=50, delete=50) for r in results_rows(("glibc",))]
        light = [dict(r, keys=20000, insert=5, delete=5, throughput=r["throughput"] * 2)
                 for r in results_rows(("glibc",))]
        df = load_results(write_results(self.path("mixes.jsonl"), heavy + light))
        text = "\n".join(report.markdown(b) for b in report.point_tables(df))
        sections = {part.split("\n")[0]: part for part in text.split("### ")[1:]}
        self.assertEqual(sorted(sections), ["hm_list, glibc, 50i-50d", "hm_list, glibc, 5i-5d"])
        heavy_section = sections["hm_list, glibc, 50i-50d"]
        light_section = sections["hm_list, glibc, 5i-5d"]
        # debra: median 2.0 x threads Mops/s, doubled in the read-mostly mix; never mixed.
        self.assertIn("| debra | 2.000 (1.800-2.400) |", heavy_section)
        self.assertIn("| debra | 4.000 (3.600-4.800) |", light_section)


class AfPairing(unittest.TestCase):

    def test_scheme_names_pair_with_their_originals(self):
        self.assertEqual(plots.af_variant("debra"), ("debra", "original"))
        self.assertEqual(plots.af_variant("debra_af"), ("debra", "af"))
        self.assertEqual(plots.af_variant("hp_afa"), ("hp", "afa"))
        self.assertEqual(plots.af_variant("token_af"), ("token_periodic", "af"))


class ExperimentSchemes(ToolsCase):
    """`schemes FILE`: what make bench builds the lab with."""

    def write(self, text):
        path = self.path("schemes.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def test_every_run_s_schemes_once_in_order_and_none_for_a_run_without(self):
        path = self.write('title = "t"\n[[run]]\nscheme = ["debra", "hp"]\n[[run]]\n'
                          'scheme = "hp"\n[[run]]\nds = "hm_list"\n[[run]]\nscheme = "ebr"\n')
        self.assertEqual(report.experiment_schemes(path), ["debra", "hp", "none", "ebr"])
        done = tools("schemes", path)
        self.assertEqual((done.returncode, done.stdout), (0, "debra;hp;none;ebr\n"))

    def test_a_scheme_flag_replaces_the_files(self):
        path = self.write('title = "t"\n[[run]]\nscheme = ["debra", "hp"]\n')
        for flags in ("--seconds 0.2 --scheme qsbr,rcu", "--scheme=qsbr,rcu --trials 1"):
            self.assertEqual(report.experiment_schemes(path, flags), ["qsbr", "rcu"])

    def test_a_missing_file_is_one_line(self):
        done = tools("schemes", self.path("absent.toml"))
        self.assertEqual(done.returncode, 2)
        self.assertIn("no such file", done.stderr)
        self.assertEqual(done.stderr.count("\n"), 1)


if __name__ == "__main__":
    unittest.main()
