# SPDX-License-Identifier: GPL-2.0
"""Calibration of the verdicts (stats.test_pvalues, the analysis
stats.verdicts runs, and stats.bh_adjust_rows) on synthetic lognormal data
with a fixed seed: per-row false-positive rate, run-level false discovery
rate and power for a 10 % change at 5 % CV, at stats.DEFAULT_REPS
repetitions a side and around it. Prints the table."""
import math
import sys
import unittest

import numpy as np

import helpers  # noqa: F401  (puts bench/ on the path)
from analysis import stats as S

SEED = 20250517
CV = 0.05
SIGMA = math.sqrt(math.log(1 + CV ** 2))
EFFECT = 1.10
TRIALS = 6000           # A/A rows and effect rows per n and scenario
RUN_ROWS = 40           # primary rows of a synthetic run
RUN_TRUE = 10           # of which carry the 10 % change
DRIFT = 2.0             # the second scenario: per-rep drift, in units of the noise
NS = sorted({3, 4, 5, 6, 8, S.DEFAULT_REPS})


def draw(rng, n, shift, drift):
    """TRIALS pairs of n reps: log values, a block (rep) effect of sd
    drift * SIGMA shared by A and B of a rep, iid noise of sd SIGMA."""
    block = rng.normal(0, drift * SIGMA, (TRIALS, n))
    a = block + rng.normal(0, SIGMA, (TRIALS, n))
    b = block + rng.normal(0, SIGMA, (TRIALS, n)) + shift
    return a, b


def simulate(n, drift, rng):
    a, b = draw(rng, n, 0.0, drift)
    p0, paired0 = S.test_pvalues(a, b)
    a, b = draw(rng, n, math.log(EFFECT), drift)
    p1, paired1 = S.test_pvalues(a, b)
    right = (b.mean(1) - a.mean(1)) > 0
    hit1 = (p1 <= S.ALPHA) & right
    # runs: RUN_ROWS - RUN_TRUE null rows and RUN_TRUE rows with the change
    n_null = RUN_ROWS - RUN_TRUE
    runs = min(TRIALS // n_null, TRIALS // RUN_TRUE)
    p = np.concatenate([p0[:runs * n_null].reshape(runs, n_null),
                        p1[:runs * RUN_TRUE].reshape(runs, RUN_TRUE)], axis=1)
    ok = np.concatenate([np.zeros((runs, n_null), bool),
                         right[:runs * RUN_TRUE].reshape(runs, RUN_TRUE)], axis=1)
    rej = S.bh_adjust_rows(p) <= S.ALPHA
    false = (rej & ~ok).sum(1)
    fdr = float(np.mean(false / np.maximum(rej.sum(1), 1)))
    power_bh = float((rej[:, n_null:] & ok[:, n_null:]).sum() / (runs * RUN_TRUE))
    # runs of A/A rows only: any discovery is a false one (FDR = FWER)
    aa_runs = TRIALS // RUN_ROWS
    aa = S.bh_adjust_rows(p0[:aa_runs * RUN_ROWS].reshape(aa_runs, RUN_ROWS)) <= S.ALPHA
    return dict(n=n, drift=drift, fpr=float(np.mean(p0 <= S.ALPHA)), fdr=fdr,
                fdr_aa=float(aa.any(1).mean()), power=float(hit1.mean()),
                power_bh=power_bh, paired=float(np.mean(np.r_[paired0, paired1])),
                runs=runs, aa_runs=aa_runs)


class Calibration(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rng = np.random.default_rng(SEED)
        cls.rows = [simulate(n, drift, rng) for drift in (0.0, DRIFT) for n in NS]
        lines = [
            "",
            f"calibration: lognormal noise CV {CV:.0%}, change {EFFECT - 1:.0%}, "
            f"{TRIALS} A/A and {TRIALS} changed rows per line; runs of {RUN_ROWS} "
            f"primary rows ({RUN_TRUE} changed), BH at {S.ALPHA:g}; "
            f"DEFAULT_REPS = {S.DEFAULT_REPS}",
            "  drift: sd of a per-rep (block) effect shared by A and B, in units of the noise",
            "   n drift    FPR   FDR(mixed)  FDR(A/A run)  power  power(BH)  paired",
        ]
        for r in cls.rows:
            lines.append(f"  {r['n']:2d}  {r['drift']:3.1f}  {r['fpr']:6.3f}  {r['fdr']:9.3f}  "
                         f"{r['fdr_aa']:11.3f}  {r['power']:6.3f}  {r['power_bh']:8.3f}  "
                         f"{r['paired']:6.2f}")
        print("\n".join(lines), file=sys.stderr)

    def at(self, n, drift):
        return next(r for r in self.rows if r["n"] == n and r["drift"] == drift)

    @staticmethod
    def slack(rate, count):
        """Two standard errors of a rate estimated from count draws."""
        return 2 * math.sqrt(rate * (1 - rate) / count)

    def test_false_positive_rate(self):
        for r in self.rows:
            with self.subTest(n=r["n"], drift=r["drift"]):
                self.assertLessEqual(r["fpr"], S.ALPHA + self.slack(S.ALPHA, TRIALS))

    def test_false_discovery_rate(self):
        for r in self.rows:
            with self.subTest(n=r["n"], drift=r["drift"]):
                self.assertLessEqual(r["fdr"], S.ALPHA + self.slack(S.ALPHA, r["runs"]))
                self.assertLessEqual(r["fdr_aa"], S.ALPHA + self.slack(S.ALPHA, r["aa_runs"]))

    def test_power_at_default_reps(self):
        r = self.at(S.DEFAULT_REPS, 0.0)
        self.assertGreaterEqual(r["power"], 0.80)

    def test_no_verdict_at_three(self):
        self.assertEqual(self.at(3, 0.0)["fpr"], 0.0)
        self.assertEqual(self.at(3, 0.0)["power"], 0.0)

    def test_pairing_used_when_blocks_drift(self):
        big = max(NS)
        self.assertGreater(self.at(big, DRIFT)["paired"], 0.5)


if __name__ == "__main__":
    unittest.main()
