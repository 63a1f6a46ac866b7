# SPDX-License-Identifier: GPL-2.0
"""stats.py on synthetic runs with a known effect, A/A pairs, too few reps
and a bounce path that did not run."""
import os
import tempfile
import unittest

import numpy as np

import helpers as H
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
            self.assertEqual(S.pair_order(data, ["post", "pre.2", "pre"]),
                             ["pre", "pre.2", "post"])
            v = S.verdicts(data)
            r = row(v, "read_iops", "pre", "pre.2")
            self.assertEqual(r["pair_kind"], "A/A")
            self.assertEqual(r["verdict"], S.NO_DIFF)
            self.assertEqual(row(v, "read_iops", "pre", "post")["pair_kind"], "A/B")


class Calibration(unittest.TestCase):
    """The bootstrap CI on many synthetic data sets: A/A pairs are rarely
    called significant, a 20 % change nearly always is."""
    TRIALS = 100
    N = 8

    def test_false_positives_and_power(self):
        rng = np.random.default_rng(11)
        fp = hits = 0
        for t in range(self.TRIALS):
            a = rng.lognormal(0, SIGMA, self.N)
            b = rng.lognormal(0, SIGMA, self.N)
            fp += S.compare("read_iops", a, b, seed=t)["verdict"] != S.NO_DIFF
            c = rng.lognormal(0, SIGMA, self.N) * EFFECT
            hits += S.compare("read_iops", a, c, seed=t)["verdict"] == "faster"
        self.assertLessEqual(fp / self.TRIALS, 0.10)
        self.assertGreaterEqual(hits / self.TRIALS, 0.95)

    def test_mde_shrinks_with_reps(self):
        rng = np.random.default_rng(3)
        mdes = []
        for n in (4, 16, 64):
            a, b = rng.lognormal(0, SIGMA, n), rng.lognormal(0, SIGMA, n)
            mdes.append(S.compare("read_iops", a, b)["mde_pct"])
        self.assertGreater(mdes[0], mdes[1])
        self.assertGreater(mdes[1], mdes[2])

    def test_zeros(self):
        r = S.compare("allocstall", [0, 0, 0], [0, 0, 0])
        self.assertEqual((r["ratio"], r["verdict"]), (1.0, S.NO_DIFF))
        r = S.compare("bounces", [554, 560, 549], [0, 0, 0])
        self.assertEqual((r["ratio"], r["verdict"]), (0.0, "lower"))
        r = S.compare("allocstall", [0, 0, 0], [3, 4, 5])
        self.assertEqual(r["verdict"], "higher")


class TooFew(unittest.TestCase):
    def test_one_rep(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = H.ab_run(os.path.join(tmp, "run"), ["pre", "post"], 1,
                           [1.0, EFFECT], SIGMA)
            v = S.verdicts(tidy.load_run(run))
            r = row(v, "read_iops", "pre", "post")
            self.assertEqual(r["verdict"], S.TOO_FEW)
            self.assertTrue(np.isfinite(r["ratio"]))
            self.assertTrue(np.isnan(r["ci_low"]))

    def test_fixture_run(self):
        v = S.verdicts(tidy.load_run(H.FIXTURE_RUN))
        self.assertTrue(len(v))
        measured = v[v["verdict"] != S.NO_DATA]
        self.assertTrue((measured[["n_a", "n_b"]].min(axis=1) < S.MIN_REPS).all())
        self.assertEqual(set(measured["verdict"]), {S.TOO_FEW})


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
        pio = v[(v["disk"] == S.BOUNCE_DISK) & (v["a"] == S.BOUNCE_VARIANT)]
        self.assertTrue(len(pio))
        self.assertNotIn(S.NOT_EXERCISED, set(pio["verdict"]))


if __name__ == "__main__":
    unittest.main()
