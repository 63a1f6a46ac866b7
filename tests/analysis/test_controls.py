# SPDX-License-Identifier: GPL-2.0
"""Controls that can fire (issue 34): each boot's seed (boots.tsv, else the
plan kept in its results, else its rep)."""
import os
import tempfile
import unittest

import helpers as H
from analysis import tidy


class Seeds(unittest.TestCase):
    def test_boots_tsv_then_plan_then_rep(self):
        with tempfile.TemporaryDirectory() as tmp:
            boots = [dict(variant="pre", disk="virtio", pressure="none", rep=r,
                          jobs=[dict(device="virtio", job="j")], **extra)
                     for r, extra in ((1, dict(seed=1001)), (2, dict(plan_seed=7)), (3, {}))]
            run = tidy.load_run(H.make_run(os.path.join(tmp, "r"), boots))
            self.assertEqual(list(run.boots["seed"]), [1001, 7, 3])


if __name__ == "__main__":
    unittest.main()
