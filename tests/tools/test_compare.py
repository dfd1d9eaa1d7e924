# SPDX-License-Identifier: MIT
"""`compare`: the k-th trial of each point of OTHER against the k-th of BASE's matching point, with
the min / median / max of those ratios and the ratio of the medians, computed by hand here from
the synthetic trials (support.py); --match pairs two containers of one file; bad input exits 2."""
import unittest

from support import BASE, TRIAL_FACTOR, ToolsCase, results_rows, tools, write_results


def scaled(rows, scheme_factor):
    """The rows with each trial's throughput times scheme_factor[scheme][trial]."""
    out = []
    for row in rows:
        row = dict(row)
        row["throughput"] *= scheme_factor.get(row["scheme"], {}).get(row["trial"], 1.0)
        out.append(row)
    return out


# In OTHER, debra's trials run at 0.9, 1.0 and 1.1 of BASE's: paired ratios 0.9 / 1.0 / 1.1,
# medians 2.0 x 1.0 (BASE, trials 1.2, 0.9, 1.0) against 2.0 x median(1.08, 0.9, 1.1) = 2.16.
DEBRA_FACTOR = {1: 0.9, 2: 1.0, 3: 1.1}


class Compare(ToolsCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        rows = results_rows(allocs=("glibc",))
        cls.base = write_results(cls.path("base.jsonl"), rows)
        cls.other = write_results(cls.path("other.jsonl"),
                                  scaled(rows, {"debra": DEBRA_FACTOR}))
        guarded = [dict(r, ds="guarded_hm_list") for r in scaled(rows, {"none": {1: 0.5, 2: 0.5,
                                                                                   3: 0.5}})]
        cls.both = write_results(cls.path("both.jsonl"), rows + guarded)

    def row(self, text, ds, scheme, threads):
        for line in text.splitlines():
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0] == ds and cells[4] == scheme and cells[5] == str(threads):
                return cells
        self.fail(f"no row for {ds} {scheme} {threads} in\n{text}")

    def test_paired_ratios_and_ratio_of_medians(self):
        proc = tools("compare", self.base, self.other, "--out", self.path("c.md"))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        cells = self.row(proc.stdout, "hm_list", "debra", 2)
        self.assertEqual(cells[6], f"{BASE['debra'] * 2:.3f}")
        other_median = sorted(BASE["debra"] * 2 * TRIAL_FACTOR[t] * DEBRA_FACTOR[t]
                              for t in TRIAL_FACTOR)[1]
        self.assertEqual(cells[7], f"{other_median:.3f}")
        self.assertEqual(cells[8], "0.900 / 1.000 / 1.100")
        self.assertEqual(cells[9], f"**{other_median / (BASE['debra'] * 2):.3f}**")
        self.assertEqual(self.row(proc.stdout, "hm_list", "none", 4)[8], "1.000 / 1.000 / 1.000")
        with open(self.path("c.md"), encoding="utf-8") as f:  # then its path, as every command
            self.assertEqual(f.read() + self.path("c.md") + "\n", proc.stdout)

    def test_match_compares_two_containers_of_one_run(self):
        proc = tools("compare", self.both, self.both, "--match", "guarded_hm_list=hm_list")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        cells = self.row(proc.stdout, "guarded_hm_list", "none", 1)
        self.assertEqual(cells[1], "hm_list")
        self.assertEqual(cells[8], "0.500 / 0.500 / 0.500")
        self.assertNotIn("| hm_list | hm_list |", proc.stdout)

    def test_peer_compares_each_scheme_with_the_peers_scheme_of_that_name(self):
        # xenium:debra runs at half of debra's speed in every trial: ours / peer is 2.
        peer = [dict(r, scheme="xenium:debra", throughput=r["throughput"] / 2)
                for r in results_rows(allocs=("glibc",)) if r["scheme"] == "debra"]
        run = write_results(self.path("peers.jsonl"), results_rows(allocs=("glibc",)) + peer)
        proc = tools("compare", run, run, "--peer", "xenium,libcds")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        cells = self.row(proc.stdout, "hm_list", "debra vs xenium:debra", 2)
        self.assertEqual(cells[8], "2.000 / 2.000 / 2.000")
        self.assertEqual(cells[9], "**2.000**")
        # Schemes without a peer point, and the peer's own points, make no row.
        self.assertNotIn("| none", proc.stdout)
        self.assertNotIn("| xenium:debra |", proc.stdout)

    def test_bad_input_is_one_line(self):
        for args, says in [
            (("compare", self.base, self.path("nope.jsonl")), "no such file"),
            (("compare", self.base, self.other, "--match", "guarded"), "is not OTHER_DS=BASE_DS"),
            (("compare", self.base, self.other, "--match", "x=y"), "no point of"),
            (("compare", self.base, self.other, "--peer", "xenium:debra"), "not a library name"),
            (("compare", self.base, self.other, "--peer", "xenium"), "no point of"),
        ]:
            proc = tools(*args)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
            self.assertIn(says, proc.stderr)


if __name__ == "__main__":
    unittest.main()
