# SPDX-License-Identifier: GPL-2.0
"""bench/history check and ./run.sh history --check: the newest run
against the previous run of each variant, on synthetic pairs of runs
(test_history.history_run: pre-fixed and post, 5 reps, the post kernel
scaled): a regression fails, an A/A pair passes, and a significant change
below the metric's smallest effect of interest (1 %) passes."""
import os
import subprocess
import tempfile
import unittest

import helpers as H
from analysis.history import changes, table
from test_history import DISK, JOB, RESAMPLES, cli, history_run

RUN_SH = os.path.join(H.ROOT, "run.sh")
OLD = ("6.12.118-1~deb12u1", "2026-12-01T06:00:00Z")
NEW = ("6.12.120-1~deb12u1", "2026-12-08T06:00:00Z")


class Check(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = os.path.join(self.tmp.name, "results")

    def tearDown(self):
        self.tmp.cleanup()

    def pair(self, post_scale, seeds=(1, 1), sigma=0.03, tag="pair"):
        """run-a (post as pre-fixed) then run-b (post scaled by post_scale)
        in a fresh results folder (self.results, named tag) and history;
        returns bench/history check's result."""
        self.results = os.path.join(self.tmp.name, tag)
        hdir = os.path.join(self.results, "history")
        for rid, (version, started), scale, seed in (("run-a", OLD, 1.0, seeds[0]),
                                                     ("run-b", NEW, post_scale, seeds[1])):
            history_run(os.path.join(self.results, rid), version, started, scale,
                        seed=seed, sigma=sigma)
        # added newest first: the check's "newest" is by date, not by order
        res = cli("--history-dir", hdir, "add", os.path.join(self.results, "run-b"),
                  os.path.join(self.results, "run-a"))
        self.assertEqual(res.returncode, 0, res.stderr)
        return cli("--history-dir", hdir, "check")

    def test_regression_fails(self):
        res = self.pair(1 / 1.5)
        self.assertEqual(res.returncode, 3, res.stdout + res.stderr)
        moved = [l for l in res.stdout.splitlines() if l.startswith("history: moved: ")]
        head = (f"history: moved: read_iops {JOB} {DISK} none, variant post "
                f"({OLD[0]} -> {NEW[0]}): ")
        iops = [l for l in moved if l.startswith(head)]
        self.assertEqual(len(iops), 1, res.stdout)
        self.assertIn(", slower, ratio 0.667", iops[0])
        self.assertIn("% >= its smallest effect of interest 1 % (runs run-a -> run-b",
                      iops[0])
        self.assertTrue(any(l.startswith("history: moved: read_lat_p99_us ") for l in moved))
        # the unchanged kernel did not move
        self.assertFalse([l for l in moved if "variant pre-fixed" in l], res.stdout)
        self.assertIn("headline cell(s) moved beyond their smallest effect of interest",
                      res.stderr)

    def test_aa_passes(self):
        # the same kernels, other noise: no headline metric moved
        res = self.pair(1.0, seeds=(1, 2))
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("history: check: newest run run-b: ", res.stdout)
        self.assertIn("no headline metric moved beyond its smallest effect of interest",
                      res.stdout)
        self.assertNotIn("history: moved:", res.stdout)

    def test_below_smallest_effect_passes(self):
        # 0.5 % on 0.05 % noise: significant, but below 1 %; 2 % is not
        for scale, rc in ((1.005, 0), (1.02, 3)):
            with self.subTest(scale=scale):
                res = self.pair(scale, sigma=0.0005, tag=f"scale-{scale}")
                self.assertEqual(res.returncode, rc, res.stdout + res.stderr)
                # the history's own test calls it: the threshold decided
                ch = changes.compute(table.load(os.path.join(self.results, "history")),
                                     int(RESAMPLES))
                r = ch[(ch["variant"] == "post") & (ch["metric"] == "read_iops")].iloc[0]
                self.assertEqual(r["verdict"], "faster")

    def test_first_run_passes(self):
        hdir = os.path.join(self.results, "history")
        history_run(os.path.join(self.results, "run-a"), *OLD, 1.0)
        cli("--history-dir", hdir, "add", os.path.join(self.results, "run-a"))
        res = cli("--history-dir", hdir, "check")
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertIn("(no earlier run of its variants)", res.stdout)

    def test_no_history(self):
        res = cli("--history-dir", os.path.join(self.results, "history"), "check")
        self.assertEqual(res.returncode, 1)
        self.assertIn("history.csv yet", res.stderr)

    def test_run_sh_history_check(self):
        # ./run.sh history --check RUN: adds the run, plots, exits as check
        hdir = os.path.join(self.results, "history")
        history_run(os.path.join(self.results, "run-a"), *OLD, 1.0)
        history_run(os.path.join(self.results, "run-b"), *NEW, 1 / 1.5)
        env = dict(os.environ, BOUNCELAB_RESULTS=self.results)
        subprocess.run([RUN_SH, "history", os.path.join(self.results, "run-a")], env=env,
                       capture_output=True, timeout=600, check=True)
        res = subprocess.run([RUN_SH, "history", "--check",
                              os.path.join(self.results, "run-b")],
                             env=env, capture_output=True, text=True, timeout=600)
        self.assertEqual(res.returncode, 3, res.stdout + res.stderr)
        self.assertIn("history: moved: read_iops", res.stdout)
        self.assertTrue(os.path.isfile(os.path.join(hdir, "history.md")))


if __name__ == "__main__":
    unittest.main()
