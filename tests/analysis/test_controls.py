# SPDX-License-Identifier: GPL-2.0
"""Controls that can fire (issue 34): each boot's seed (boots.tsv, else the
plan kept in its results, else its rep); under an exact clock each label's
odd reps against its even reps (split-half A/A rows), a copy of a label
named a control only when its seeds differ; controls in a
Benjamini-Hochberg family of their own, out of the headline counts and
the forest plots."""
import os
import tempfile
import unittest

import numpy as np
import pandas as pd

import helpers as H
from analysis import report, tidy
from analysis.questions import cost
from analysis import stats as S

FLAT = [1.0, 1.0005, 1.0002, 1.0001]


def split_row(v, label, metric="read_iops"):
    r = v[(v["metric"] == metric) & (v["a"] == S.split_label(label, S.ODD))]
    assert len(r) == 1, r
    return r.iloc[0]


class Seeds(unittest.TestCase):
    def test_boots_tsv_then_plan_then_rep(self):
        with tempfile.TemporaryDirectory() as tmp:
            boots = [dict(variant="pre", disk="virtio", pressure="none", rep=r,
                          jobs=[dict(device="virtio", job="j")], **extra)
                     for r, extra in ((1, dict(seed=1001)), (2, dict(plan_seed=7)), (3, {}))]
            run = tidy.load_run(H.make_run(os.path.join(tmp, "r"), boots))
            self.assertEqual(list(run.boots["seed"]), [1001, 7, 3])


class SplitHalves(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        root = H.exact_run(os.path.join(cls.tmp.name, "r"),
                           {"pre": FLAT, "pre.2": FLAT[::-1],
                            "post": [1.2, 1.2004, 1.2001, 1.2003]},
                           seeds={"pre.2": [1001, 1002, 1003, 1004]})
        cls.data = tidy.load_run(root)
        cls.v = S.verdicts(cls.data, n_boot=200)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_rows(self):
        r = split_row(self.v, "pre")
        self.assertEqual((r["a"], r["b"], r["pair_kind"]), ("pre[odd]", "pre[even]", "A/A"))
        self.assertTrue(r["control"] and r["primary"])
        self.assertEqual((r["n_a"], r["n_b"]), (2, 2))
        self.assertTrue(r["analysis"].startswith("exact"))
        self.assertEqual(r["verdict"], S.NO_DIFF)
        self.assertIn("seeds 1, 3 against 2, 4: distinct", r["note"])
        self.assertIn("seeds 1001, 1003 against 1002, 1004: distinct",
                      split_row(self.v, "pre.2")["note"])
        # primary metrics only
        self.assertTrue(self.v[S.is_split(self.v)]["primary"].all())

    def test_halves_that_differ_fire(self):
        # post's even reps 2 % above its odd ones: the seeds move the cell
        # beyond the bound, so none of its pairs is decided on it (pre's
        # halves neither), and 5 reps a half test it (4 would not survive
        # the controls' own Benjamini-Hochberg family): the halves fire
        with tempfile.TemporaryDirectory() as tmp:
            flat = FLAT + FLAT[::-1] + FLAT[:2]
            data = tidy.load_run(H.exact_run(
                os.path.join(tmp, "r"),
                {"pre": flat, "post": [1.2 + 0.024 * (i % 2) + 0.0001 * i for i in range(10)]}))
            v = S.verdicts(data, n_boot=200)
            r = split_row(v, "post")
            self.assertEqual(r["verdict"], "faster")
            self.assertFalse(str(r["analysis"]).startswith("exact"))
            self.assertFalse(str(split_row(v, "pre")["analysis"]).startswith("exact"))
            ok, line = report.controls_line(v, data)
            self.assertFalse(ok)
            self.assertIn("instruction-time verdicts are NOT to be trusted", line)

    def test_copy_with_distinct_seeds_is_a_control(self):
        r = self.v[(self.v["metric"] == "read_iops") & (self.v["a"] == "pre") &
                   (self.v["b"] == "pre.2")].iloc[0]
        self.assertEqual(r["pair_kind"], "A/A")
        self.assertIn("seeds 1, 2, 3, 4 against 1001, 1002, 1003, 1004: distinct", r["note"])
        self.assertIn("split halves, 3 copies of a label)", report.controls_line(self.v, self.data)[1])

    def test_out_of_headline_and_forest(self):
        kernel = self.v[~S.is_split(self.v)]
        self.assertEqual(report.relevance_counts(self.v, self.data),
                         report.relevance_counts(kernel, self.data))
        self.assertEqual(len(report.headline_rows(self.v, self.data)),
                         len(report.headline_rows(kernel, self.data)))
        self.assertFalse(S.is_split(cost.forest_rows(self.data, self.v)).any())
        tables = report.verdict_tables(self.v)
        self.assertIn("## Split-half A/A rows", tables)
        primary = tables.split("## Split-half")[0]
        self.assertNotIn("[odd]", primary)


class OldRuns(unittest.TestCase):
    def test_same_seeds_and_two_reps(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = tidy.load_run(H.exact_run(os.path.join(tmp, "r"),
                                            {"pre": FLAT[:2], "pre.2": FLAT[:2]}))
            v = S.verdicts(run, n_boot=200)
            r = v[(v["metric"] == "read_iops") & (v["a"] == "pre") & (v["b"] == "pre.2")].iloc[0]
            self.assertIn(S.SAME_SEEDS + " (seeds 1, 2 against 1, 2)", r["note"])
            # 1 against 1 on an exact clock: the bound decides whether the
            # seed moves the cell, the control itself
            r = split_row(v, "pre")
            self.assertTrue(r["analysis"].startswith("exact"))
            self.assertEqual(r["verdict"], S.NO_DIFF)
            ok, line = report.controls_line(v, run)
            self.assertTrue(ok)
            self.assertIn("rows of copies with the same seeds (cannot differ", line)


class Families(unittest.TestCase):
    def test_controls_do_not_move_kernel_rows(self):
        rng = np.random.default_rng(1)
        rows = [dict(primary=True, control=c, p_value=p, verdict="faster", note="",
                     analysis="unpaired")
                for c, p in [(False, x) for x in rng.uniform(0, 0.05, 5)] +
                [(True, x) for x in rng.uniform(0, 1, 20)]]
        df = pd.DataFrame(rows).reindex(columns=S.VERDICT_COLUMNS)
        df[["primary", "control"]] = pd.DataFrame(rows)[["primary", "control"]]
        out = S.adjust(df)
        kernel = ~out["control"].astype(bool)
        np.testing.assert_allclose(out.loc[kernel, "p_adjusted"],
                                   S.bh_adjust(df.loc[kernel, "p_value"].to_numpy(float)))

    def test_one_question_does_not_dilute_another(self):
        # run 20261206-080728's shape: four pressure rows at 5 against 5
        # (smallest p 0.0079) beside 27 rows of the cost question
        # at 4 against 4 (0.029 and above); one family of 31 held the
        # pressure rows at 0.0615
        mem = [dict(pressure="full24", p_value=0.007937) for _ in range(4)]
        cost = [dict(pressure="none", p_value=p) for p in [0.028571] * 8 + [0.4] * 19]
        rows = [dict(r, primary=True, control=False, verdict="faster", note="",
                     analysis="unpaired") for r in mem + cost]
        df = pd.DataFrame(rows).reindex(columns=S.VERDICT_COLUMNS)
        df[["primary", "control"]] = pd.DataFrame(rows)[["primary", "control"]]
        out = S.adjust(df)
        under = out["pressure"] == "full24"
        np.testing.assert_allclose(out.loc[under, "p_adjusted"], 0.007937)
        self.assertTrue((out.loc[under, "verdict"] == "faster").all())
        np.testing.assert_allclose(out.loc[~under, "p_adjusted"],
                                   S.bh_adjust(df.loc[~under, "p_value"].to_numpy(float)))
        self.assertEqual(list(S.question(out)), ["memory"] * 4 + ["cost"] * 27)


if __name__ == "__main__":
    unittest.main()
