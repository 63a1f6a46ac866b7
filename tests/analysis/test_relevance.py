# SPDX-License-Identifier: GPL-2.0
"""The relevance label on top of the verdicts, a cost never printed below
zero, and guest bounds read from meta.json only."""
import unittest

import numpy as np
import pandas as pd

import helpers  # noqa: F401  (puts bench/ on the path)
from analysis import report, stats
from analysis.questions import cost as headline


def row(verdict, ratio, mde=np.nan, lo=np.nan, hi=np.nan, metric="read_iops"):
    return dict(metric=metric, verdict=verdict, ratio=ratio, mde_pct=mde,
                ci_low=lo, ci_high=hi)


class Relevance(unittest.TestCase):
    def label(self, r, overrides=None):
        return stats.relevance(pd.DataFrame([r]), overrides)["relevance"].iloc[0]

    def test_four_classes(self):
        self.assertEqual(self.label(row("faster", 1.21)), "relevant")
        self.assertEqual(self.label(row("slower", 0.985)), "relevant")
        self.assertEqual(self.label(row("faster", 1.004)), "negligible")
        self.assertEqual(self.label(row(stats.NO_DIFF, 1.02, mde=3.4)),
                         "no difference, could detect ±3.4%")
        self.assertEqual(self.label(row(stats.NO_DIFF, 1.0, lo=0.98, hi=1.01)),
                         "no difference, could detect ±2%")
        self.assertEqual(self.label(row(f"{stats.TOO_FEW} (min p = 0.1)", 1.3)),
                         "too few repetitions")
        self.assertEqual(self.label(row(stats.NO_DATA, np.nan)), "")

    def test_ci_excluding_1_is_not_no_difference(self):
        # run cold-2, CPU per GiB at 4 reps: 0.869 (0.816-0.912), adjusted
        # p above 0.05: not "no difference", nor "below the noise"
        r = row(stats.NO_DIFF, 0.869, mde=5.6, lo=0.816, hi=0.912, metric="cpu_s_per_gib")
        self.assertEqual(self.label(r), stats.NOT_ADJUSTED)

    def test_threshold_changes(self):
        self.assertEqual(self.label(row("faster", 1.004), {"*": 0.2}), "relevant")
        self.assertEqual(self.label(row("faster", 1.21), {"read_iops": 25}), "negligible")

    def test_pressure_rows_take_ten_percent(self):
        r = dict(row("slower", 0.95, metric="write_bw"), pressure="full24")
        self.assertEqual(self.label(r), "negligible")
        self.assertEqual(self.label(dict(r, pressure="none")), "relevant")
        self.assertEqual(self.label(r, {"*": 2}), "relevant")
        self.assertEqual(stats.relevance(pd.DataFrame([r]))["min_effect_pct"].iloc[0], 10.0)

    def test_ci_within_the_effect_is_an_equivalence(self):
        r = dict(row(stats.NO_DIFF, 1.02, mde=14, lo=0.93, hi=1.09, metric="write_bw"),
                 pressure="full24")
        self.assertEqual(self.label(r), "no relevant difference (CI within ±10%)")
        self.assertTrue(stats.is_decided(self.label(r)))
        # a CI that reaches beyond it says only what it could detect
        self.assertEqual(self.label(dict(r, ci_high=1.12)), "no difference, could detect ±14%")
        self.assertFalse(stats.is_decided(self.label(dict(r, ci_high=1.12))))
        self.assertEqual(self.label(dict(r, pressure="none")), "no difference, could detect ±14%")
        # and the first screen counts it apart, as decided
        v = stats.relevance(pd.DataFrame([dict(r, primary=True, control=False, p_value=0.3,
                                               analysis="unpaired", job="pressure-writeback")]))
        k = report.relevance_counts(v)
        self.assertEqual((k["tested"], k["equivalent"], k["nodiff"]), (1, 1, 0))

    def test_statistics_untouched(self):
        df = pd.DataFrame([row("faster", 1.004), row("cheaper", 0.5, metric="cpu_s_per_gib")])
        out = stats.relevance(df)
        pd.testing.assert_frame_equal(out[df.columns], df)
        self.assertEqual(list(out["min_effect_pct"]), [1.0, 1.0])


class CostBelowNoise(unittest.TestCase):
    def test_gain_is_below_the_noise(self):
        self.assertTrue(headline.cost_text(np.array([1.30, 1.10, 1.25])).startswith(
            "no difference, could detect ±"))
        self.assertEqual(headline.cost_text(np.array([1.2])), "no difference (one boot)")

    def test_noise_reaching_one(self):
        self.assertTrue(headline.cost_text(np.array([0.8, 1.05, 0.95, 1.1])).startswith(
            "no difference"))

    def test_real_cost(self):
        text = headline.cost_text(np.array([0.80, 0.81, 0.79, 0.80, 0.80, 0.81]))
        self.assertTrue(text.startswith("20% (95% CI"), text)
        self.assertIsNone(headline.cost_text(np.array([])))


class GuestBounds(unittest.TestCase):
    class Run:
        def __init__(self, bounds):
            self.guest_bounds = bounds

    def test_recorded(self):
        run = self.Run({"disk_wait_s": 5, "mon_interval_ms": 50, "job_timeout_s": 60})
        self.assertEqual(report.guest_bounds_line(run), "Guest bounds: disk wait 5 s, "
                         "monitor interval 50 ms, job timeout 60 s (meta.json).")
        self.assertEqual(headline.interval(run), "50 ms")

    def test_not_recorded_never_invented(self):
        run = self.Run({})
        self.assertIn("not recorded", report.guest_bounds_line(run))
        self.assertEqual(headline.interval(run), "not recorded")


if __name__ == "__main__":
    unittest.main()
