# SPDX-License-Identifier: MIT
"""`report`: one self-contained HTML page per experiment file: the title and claim, a line on the
machine and the run (from the lab's JSON lines), every [[plot]] embedded as PNG data with its
caption, and the tables whose numbers test_report.py checks by hand; --results reads another run
of the file; a failed trial is named at the top; bad input exits 2 and writes nothing."""
import base64
import os
import re
import unittest

from support import ToolsCase, png_size, results_rows, sampled_rows, tools, write_results

EXPERIMENT = """
title = "Synthetic <default> comparison"
claim = "Epochs are cheap; `hp` pays per read."
out = "results/synthetic.jsonl"

[[run]]
ds = "hm_list"
scheme = ["none", "debra"]

[[plot]]
kind = "throughput"
alloc = "glibc"
caption = "Short operations: `none` is the baseline."

[[plot]]
kind = "memory_over_time"
ds = "dgt_bst"
stall = 1
caption = "A stalled thread: debra grows."
"""


class HtmlReport(ToolsCase):
    # A failed check prints only its needle, not a page of PNG data.
    def assertIn(self, member, container, msg=None):
        self.assertTrue(member in container, msg or f"not in the page: {member!r}")


    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        rows = results_rows() + sampled_rows()
        for row in rows:
            row["cpu_model"] = "Test CPU 9000"
            row["started"] = "2026-11-24T10:00:00Z"
        os.makedirs(cls.path("results"))
        write_results(cls.path("results", "synthetic.jsonl"), rows)
        failed = [dict(r, checksum_ok=False) if i == 0 else r for i, r in enumerate(rows)]
        write_results(cls.path("results", "other_run.jsonl"), failed)
        cls.completed, cls.page = cls.run_on_experiment("report", "synthetic.toml", EXPERIMENT,
                                                        "results", "synthetic.html")

    def setUp(self):
        self.assertEqual(self.completed.returncode, 0, self.completed.stderr)

    def test_prints_the_page_beside_its_results(self):
        self.assertEqual(self.completed.stdout.split(), [os.path.join("results", "synthetic.html")])

    def test_title_claim_and_machine_are_escaped_and_named(self):
        self.assertIn("<h1>Synthetic &lt;default&gt; comparison</h1>", self.page)
        self.assertIn("Epochs are cheap; <code>hp</code> pays per read.", self.page)
        self.assertIn("Run 2026-11-24T10:00:00Z (UTC) on 2 cores (Test CPU 9000), allocator "
                      "glibc, jemalloc, git abc1234; all 102 trials validated.", self.page)

    def test_every_plot_is_embedded_with_its_caption(self):
        images = re.findall(r'src="data:image/png;base64,([^"]+)"', self.page)
        self.assertEqual(len(images), 2)
        for i, data in enumerate(images):
            png = self.path(f"embedded_{i}.png")
            with open(png, "wb") as f:
                f.write(base64.b64decode(data))
            width, height = png_size(png)
            self.assertGreater(width, 300)
            self.assertGreater(height, 200)
        self.assertIn("<figcaption>Short operations: <code>none</code> is the baseline."
                      "</figcaption>", self.page)
        self.assertIn("<figcaption>A stalled thread: debra grows.</figcaption>", self.page)
        self.assertNotIn("<img src=\"results", self.page)  # nothing outside the page

    def test_tables_hold_the_hand_computed_medians(self):
        # results_rows(): debra at 2.0 Mops/s x threads, trials 1.2, 0.9, 1.0 of that.
        self.assertIn("<h3>hm_list, glibc</h3>", self.page)
        self.assertIn("<tr><td>debra</td><td>2.000 (1.800-2.400)</td><td>4.000 (3.600-4.800)"
                      "</td><td>8.000 (7.200-9.600)</td></tr>", self.page)
        self.assertIn("<tr><td>debra</td><td>0.67x</td>", self.page)

    def test_another_run_of_the_file_and_its_failed_trials(self):
        proc = tools("report", "synthetic.toml", "--results", "results/other_run.jsonl",
                     "--out", "elsewhere/other.html", cwd=self.dir)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        with open(self.path("elsewhere", "other.html"), encoding="utf-8") as f:
            page = f.read()
        self.assertIn('<span class="failed">1 of 102 trials FAILED validation</span>', page)

    def test_bad_input_is_one_line_and_writes_nothing(self):
        for args, says in [
            (("report", "nope.toml"), "no such file"),
            (("report", "synthetic.toml", "--results", "results/nope.jsonl"), "no such file"),
        ]:
            proc = tools(*args, "--out", "bad/page.html", cwd=self.dir)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
            self.assertIn(says, proc.stderr)
            self.assertFalse(os.path.exists(self.path("bad", "page.html")))


if __name__ == "__main__":
    unittest.main()
