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
from tracker import changes, table
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


class SameSeeds(unittest.TestCase):
    """Exact-clock runs of one boot a kernel (seed 1): the history compares
    them seed by seed, as counts; a kernel built under another name is
    filed under the variant it stands for (add --as)."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.results = os.path.join(self.tmp.name, "results")
        self.hdir = os.path.join(self.results, "history")

    def tearDown(self):
        self.tmp.cleanup()

    def run_of(self, rid, label, scale, seed=1, disk="ram"):
        # "planted" boots a build of pre-fixed's sources, as it does
        H.exact_run(os.path.join(self.results, rid), {label: [scale]},
                    seeds={label: [seed]}, disk=disk, kernels={"planted": "pre-fixed"})
        return os.path.join(self.results, rid)

    def add(self, *args):
        res = cli("--history-dir", self.hdir, "add", *args)
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)

    def check(self):
        return cli("--history-dir", self.hdir, "check")

    def test_unchanged_then_planted(self):
        # two boots of one kernel and seed: the same counts, nothing moved
        self.add(self.run_of("20261201-060000", "pre-fixed", 1.0))
        self.add(self.run_of("20261202-060000", "pre-fixed", 1.0))
        res = self.check()
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        ch = changes.compute(table.load(self.hdir), int(RESAMPLES))
        iops = ch[ch["metric"] == "read_iops"].iloc[0]
        self.assertEqual(iops["analysis"], "exact: same seeds")
        self.assertEqual(iops["ratio"], 1.0)
        self.assertEqual(iops["verdict"], "no significant difference")
        # 1.2 % more time an I/O, one boot: a count, so it moved
        self.add("--as", "planted=pre-fixed",
                 self.run_of("20261203-060000", "planted", 1 / 1.012))
        res = self.check()
        self.assertEqual(res.returncode, 3, res.stdout + res.stderr)
        moved = [l for l in res.stdout.splitlines()
                 if l.startswith("history: moved: read_iops ")]
        self.assertEqual(len(moved), 1, res.stdout)
        self.assertIn("variant pre-fixed, filed from labels pre-fixed -> planted", moved[0])
        self.assertIn(", exact: same seeds): ", moved[0])
        self.assertIn("slower, ratio 0.988", moved[0])
        df = table.load(self.hdir)
        planted = df[df["run_id"] == "20261203-060000"]
        self.assertEqual(set(planted["variant"]), {"pre-fixed"})
        self.assertEqual(set(planted["label"]), {"planted"})
        self.assertEqual(set(planted["role"]), {"bounce"})

    def test_below_smallest_effect(self):
        # exact, but 0.5 %: below the 1 % that matters
        self.add(self.run_of("20261201-060000", "pre-fixed", 1.0))
        self.add(self.run_of("20261202-060000", "pre-fixed", 1 / 1.005))
        res = self.check()
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        ch = changes.compute(table.load(self.hdir), int(RESAMPLES))
        self.assertEqual(ch[ch["metric"] == "read_iops"].iloc[0]["verdict"], "slower")

    def test_other_seeds_are_tested(self):
        # seed 1 against seed 2: not counts of one trajectory; one boot a
        # side is too few for the test
        self.add(self.run_of("20261201-060000", "pre-fixed", 1.0, seed=1))
        self.add(self.run_of("20261202-060000", "pre-fixed", 1 / 1.05, seed=2))
        self.assertEqual(self.check().returncode, 0)
        ch = changes.compute(table.load(self.hdir), int(RESAMPLES))
        r = ch[ch["metric"] == "read_iops"].iloc[0]
        self.assertNotEqual(r["analysis"], "exact: same seeds")
        self.assertIn("too few", r["verdict"])

    def test_deterministic_cells_without_seeds(self):
        # other seeds, but two reps a side within the determinism bound:
        # the ratio is known to the bound, as in a run
        a = os.path.join(self.results, "20261201-060000")
        b = os.path.join(self.results, "20261202-060000")
        H.exact_run(a, {"pre-fixed": [1.0, 1.0]}, seeds={"pre-fixed": [1, 2]})
        H.exact_run(b, {"pre-fixed": [1 / 1.03, 1 / 1.03]}, seeds={"pre-fixed": [3, 4]})
        self.add(a)
        self.add(b)
        res = self.check()
        self.assertEqual(res.returncode, 3, res.stdout + res.stderr)
        self.assertIn(", exact: bound ±0.2%): ", res.stdout)

    def test_history_md_opens_with_what_moved(self):
        self.add(self.run_of("20261201-060000", "pre-fixed", 1.0))
        self.add(self.run_of("20261202-060000", "pre-fixed", 1 / 1.05))
        res = cli("--history-dir", self.hdir, "plot")
        self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        with open(os.path.join(self.hdir, "history.md"), encoding="utf-8") as f:
            text = f.read()
        heads = [ln for ln in text.splitlines() if ln.startswith("## ")]
        self.assertEqual(heads[0], "## What moved")
        moved = text.split("## What moved", 1)[1].split("\n## ", 1)[0]
        self.assertIn("The newest run, 20261202-060000, against the previous run", moved)
        self.assertIn("- read_iops lat-randread-4k-qd1 ram none, variant pre-fixed", moved)

    def test_pressure_and_host_time_are_tested(self):
        a = dict(icount="3", pressure="none", seeds="1", values="100")
        self.assertTrue(changes.same_seeds(a, dict(a), exact=True))
        self.assertFalse(changes.same_seeds(a, dict(a), exact=False))
        self.assertFalse(changes.same_seeds(dict(a, pressure="full24"),
                                            dict(a, pressure="full24"), exact=True))
        self.assertFalse(changes.same_seeds(dict(a, icount=""), dict(a, icount=""), True))
        self.assertFalse(changes.same_seeds(a, dict(a, icount="4"), exact=True))
        self.assertFalse(changes.same_seeds(dict(a, seeds=""), dict(a, seeds=""), True))

    def test_as_refused(self):
        path = self.run_of("20261201-060000", "planted", 1.0)
        for arg, want in (("nosuch=pre-fixed", "the run has no label 'nosuch'"),
                          ("planted=pre-fixed=x", None)):
            res = cli("--history-dir", self.hdir, "add", "--as", arg, path)
            if want:
                self.assertEqual(res.returncode, 1, res.stderr)
                self.assertIn(want, res.stderr)
        res = cli("--history-dir", self.hdir, "add", "--as", "planted", path)
        self.assertEqual(res.returncode, 2)
        self.assertIn("expected LABEL=VARIANT", res.stderr)

    def test_older_table_loads(self):
        # a history.csv from before the label and seeds columns
        self.add(self.run_of("20261201-060000", "pre-fixed", 1.0))
        path = table.history_path(self.hdir)
        old = table.load(self.hdir).drop(columns=list(table.PAIRING_COLUMNS))
        old.to_csv(path, index=False)
        df = table.load(self.hdir)
        self.assertEqual(set(df["label"]), {"pre-fixed"})
        self.assertEqual(set(df["seeds"]), {""})


if __name__ == "__main__":
    unittest.main()
