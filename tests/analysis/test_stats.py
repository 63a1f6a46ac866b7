# SPDX-License-Identifier: GPL-2.0
"""stats.py on synthetic runs with a known effect, A/A pairs, too few reps
and a bounce path that did not run."""
import os
import tempfile
import unittest

import numpy as np

import helpers as H
from analysis import roles  # noqa: E402
from analysis import stats as S
from analysis import tidy

EFFECT = 1.2        # B is 20 % faster
REPS = 10
SIGMA = 0.03        # run-to-run noise, lognormal


def row(v, metric, a, b, disk=None):
    sel = v[(v["metric"] == metric) & (v["a"] == a) & (v["b"] == b)]
    if disk:
        sel = sel[sel["disk"] == disk]
    assert len(sel) == 1, (metric, a, b, disk, len(sel))
    return sel.iloc[0]


class KnownEffect(unittest.TestCase):
    """pre-fixed (bouncing, baseline), post 20 % faster, and "pre-again",
    a second label for the pre-fixed kernel: an A/A pair."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        run = H.ab_run(os.path.join(cls.tmp.name, "run"),
                       ["pre-fixed", "post", "pre-again"], REPS,
                       [1.0, EFFECT, 1.0], SIGMA, seed=7, disk="usb-pio",
                       bounces={"pre-fixed": 554, "pre-again": 554},
                       kernels={"pre-again": "pre-fixed"})
        cls.data = tidy.load_run(run)
        cls.v = S.verdicts(cls.data)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_detects_known_difference(self):
        r = row(self.v, "read_iops", "pre-fixed", "post")
        self.assertEqual((r["n_a"], r["n_b"]), (REPS, REPS))
        self.assertGreater(r["ci_low"], 1.0)
        self.assertLess(r["ci_low"], EFFECT)
        self.assertGreater(r["ci_high"], EFFECT)
        self.assertEqual(r["verdict"], "faster")
        self.assertEqual(r["pair_kind"], "A/B")
        # the latency of the same I/O fell by the same factor: also faster
        lat = row(self.v, "read_clat_mean_us", "pre-fixed", "post")
        self.assertLess(lat["ci_high"], 1.0)
        self.assertEqual(lat["verdict"], "faster")

    def test_reverse_direction_is_slower(self):
        # post is the baseline of no pair, so compare the A/A label with post
        r = row(self.v, "read_iops", "pre-again", "post")
        self.assertEqual(r["verdict"], "faster")
        r = S.compare("read_iops", [EFFECT] * 3 + [EFFECT * 1.01] * 3, [1.0, 1.01] * 3)
        self.assertEqual(r["verdict"], "slower")

    def test_aa_pair_not_significant(self):
        r = row(self.v, "read_iops", "pre-fixed", "pre-again")
        self.assertEqual(r["pair_kind"], "A/A")
        self.assertLessEqual(r["ci_low"], 1.0)
        self.assertGreaterEqual(r["ci_high"], 1.0)
        self.assertEqual(r["verdict"], S.NO_DIFF)
        # an effect this small hides; the MDE says how large one must be
        self.assertGreater(r["mde_pct"], 0)
        self.assertLess(r["mde_pct"], (EFFECT - 1) * 100)

    def test_bounce_metrics_compared_where_counted(self):
        r = row(self.v, "bounces", "pre-fixed", "pre-again")
        self.assertEqual(r["verdict"], S.NO_DIFF)
        r = row(self.v, "bounces", "pre-fixed", "post")
        self.assertEqual(r["verdict"], S.NO_DATA)
        self.assertIn("no block_bio_bounce tracepoint", r["note"])

    def test_reproducible(self):
        again = S.verdicts(self.data)
        cols = ["ratio", "ci_low", "ci_high", "mde_pct"]
        np.testing.assert_array_equal(self.v[cols].to_numpy(), again[cols].to_numpy())

    def test_baseline_order(self):
        pairs = set(zip(self.v["a"], self.v["b"]))
        self.assertIn(("pre-fixed", "post"), pairs)
        self.assertNotIn(("post", "pre-fixed"), pairs)


class RunnerLabels(unittest.TestCase):
    def test_repeated_variant_is_aa(self):
        # bench/compare labels a variant named twice "pre.2"
        with tempfile.TemporaryDirectory() as tmp:
            run = H.ab_run(os.path.join(tmp, "run"), ["pre", "pre.2", "post"], 5,
                           [1.0, 1.0, EFFECT], SIGMA, seed=5,
                           kernels={"pre.2": "pre"})
            data = tidy.load_run(run)
            self.assertEqual(data.in_pair_order(["post", "pre.2", "pre"]),
                             ["pre", "pre.2", "post"])
            v = S.verdicts(data)
            r = row(v, "read_iops", "pre", "pre.2")
            self.assertEqual(r["pair_kind"], "A/A")
            self.assertEqual(r["verdict"], S.NO_DIFF)
            self.assertEqual(row(v, "read_iops", "pre", "post")["pair_kind"], "A/B")


class SmallSamples(unittest.TestCase):
    """compare() on hand-made samples (the error rates are measured in
    test_calibration.py)."""

    def test_ci_consistent_with_p(self):
        rng = np.random.default_rng(11)
        for t in range(40):
            n = 5 + t % 4
            a = rng.lognormal(0, SIGMA, n)
            b = rng.lognormal(0, SIGMA, n) * (1.0 + 0.01 * (t % 7))
            r = S.compare("read_iops", a, b, seed=t, blocks_a=range(n),
                          blocks_b=range(n))
            excludes = r["ci_low"] > 1 or r["ci_high"] < 1
            self.assertEqual(excludes, r["p_value"] <= S.ALPHA, r)
            self.assertLessEqual(r["ci_low"], r["ratio"])
            self.assertGreaterEqual(r["ci_high"], r["ratio"])

    def test_three_reps_no_verdict(self):
        r = S.compare("read_iops", [1.0, 1.01, 0.99], [2.0, 2.02, 1.98])
        self.assertTrue(S.is_too_few(r["verdict"]))
        self.assertIn("min p = 0.1", r["verdict"])
        self.assertTrue(np.isnan(r["mde_pct"]))

    def test_ties_mde_na(self):
        r = S.compare("read_clat_p99_us", [4000.0] * 5, [4000.0] * 5)
        self.assertEqual(r["verdict"], S.NO_DIFF)
        self.assertTrue(np.isnan(r["mde_pct"]))
        r = S.compare("read_clat_p99_us", [4000.0, 8000.0] * 3, [4000.0] * 6)
        self.assertTrue(np.isnan(r["mde_pct"]))

    def test_t_quantiles(self):
        for q, df, t in ((0.975, 1, 12.7062), (0.975, 4, 2.7764),
                         (0.975, 8, 2.3060), (0.8, 8, 0.8889), (0.975, 30, 2.0423)):
            self.assertAlmostEqual(S.t_quantile(q, df), t, places=3)

    def test_bh(self):
        p = np.array([0.01, 0.04, 0.03, 0.2, np.nan])
        adj = S.bh_adjust(p)
        np.testing.assert_allclose(adj[:4], [0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.2])
        self.assertTrue(np.isnan(adj[4]))
        np.testing.assert_allclose(S.bh_adjust_rows(p[None, :4])[0], adj[:4])

    def test_mde_shrinks_with_reps(self):
        rng = np.random.default_rng(3)
        mdes = []
        for n in (4, 16, 64):
            a, b = rng.lognormal(0, SIGMA, n), rng.lognormal(0, SIGMA, n)
            mdes.append(S.compare("read_iops", a, b)["mde_pct"])
        self.assertGreater(mdes[0], mdes[1])
        self.assertGreater(mdes[1], mdes[2])

    def test_zeros(self):
        r = S.compare("allocstall", [0] * 5, [0] * 5)
        self.assertEqual((r["ratio"], r["verdict"]), (1.0, S.NO_DIFF))
        r = S.compare("bounces", [554, 560, 549, 551, 557], [0] * 5)
        self.assertEqual((r["ratio"], r["verdict"]), (0.0, "lower"))
        self.assertTrue(np.isnan(r["ci_low"]))
        r = S.compare("allocstall", [0] * 5, [3, 4, 5, 4, 3])
        self.assertEqual(r["verdict"], "higher")


class TooFew(unittest.TestCase):
    def test_one_rep(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = H.ab_run(os.path.join(tmp, "run"), ["pre", "post"], 1,
                           [1.0, EFFECT], SIGMA)
            v = S.verdicts(tidy.load_run(run))
            r = row(v, "read_iops", "pre", "post")
            self.assertTrue(S.is_too_few(r["verdict"]), r["verdict"])
            self.assertTrue(np.isfinite(r["ratio"]))
            self.assertTrue(np.isnan(r["ci_low"]))

    def test_fixture_run(self):
        v = S.verdicts(tidy.load_run(H.FIXTURE_RUN))
        self.assertTrue(len(v))
        measured = v[v["verdict"] != S.NO_DATA]
        self.assertTrue((measured[["n_a", "n_b"]].min(axis=1) < S.MIN_REPS).all())
        self.assertTrue(measured["verdict"].map(S.is_too_few).all())


class BouncePath(unittest.TestCase):
    def test_not_exercised(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = H.ab_run(os.path.join(tmp, "run"), ["pre-fixed", "pre", "post"], 4,
                           [1.0, 1.0, EFFECT], SIGMA, disk="usb-pio",
                           bounces={"pre-fixed": 0, "pre": 0})
            v = S.verdicts(tidy.load_run(run))
            for b in ("pre", "post"):
                pair = v[(v["a"] == "pre-fixed") & (v["b"] == b)]
                # rows where a side has no value at all stay "no data"
                pair = pair[pair["verdict"] != S.NO_DATA]
                self.assertIn("read_iops", set(pair["metric"]))
                self.assertEqual(set(pair["verdict"]), {S.NOT_EXERCISED})
                self.assertTrue(pair["ratio"].isna().all())
                self.assertTrue(pair["note"].str.contains("0 bounced bios").all())
            # pairs without pre-fixed are not about bounce cost
            r = row(v, "read_iops", "pre", "post")
            self.assertEqual(r["verdict"], "faster")

    def test_only_on_usb_pio(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = H.ab_run(os.path.join(tmp, "run"), ["pre-fixed", "post"], 4,
                           [1.0, EFFECT], SIGMA, disk="usb-dma",
                           bounces={"pre-fixed": 0})
            v = S.verdicts(tidy.load_run(run))
            self.assertNotIn(S.NOT_EXERCISED, set(v["verdict"]))

    def test_exercised_in_fixture(self):
        data = tidy.load_run(H.FIXTURE_RUN)
        v = S.verdicts(data)
        pio = v[v["disk"].map(lambda d: roles.is_candidate(data, d)) &
                v["a"].map(lambda a: roles.is_bounce(data, a))]
        self.assertTrue(len(pio))
        self.assertNotIn(S.NOT_EXERCISED, set(pio["verdict"]))


if __name__ == "__main__":
    unittest.main()
