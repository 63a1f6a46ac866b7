# SPDX-License-Identifier: GPL-2.0
"""Controls that can fire (issue 34): each boot's seed (boots.tsv, else the
plan kept in its results, else its rep); controls in a Benjamini-Hochberg
family of their own."""
import os
import tempfile
import unittest

import numpy as np
import pandas as pd

import helpers as H
from analysis import tidy
from analysis import stats as S


class Seeds(unittest.TestCase):
    def test_boots_tsv_then_plan_then_rep(self):
        with tempfile.TemporaryDirectory() as tmp:
            boots = [dict(variant="pre", disk="virtio", pressure="none", rep=r,
                          jobs=[dict(device="virtio", job="j")], **extra)
                     for r, extra in ((1, dict(seed=1001)), (2, dict(plan_seed=7)), (3, {}))]
            run = tidy.load_run(H.make_run(os.path.join(tmp, "r"), boots))
            self.assertEqual(list(run.boots["seed"]), [1001, 7, 3])

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


if __name__ == "__main__":
    unittest.main()
