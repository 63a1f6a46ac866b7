# SPDX-License-Identifier: GPL-2.0
"""Exact-clock cells (determinism.py): 2 reps that repeat within the bound
decide a cell, its verdict comes from the bound, not a test; a cell that
spreads is named for more reps (bench/analyze --determinism-check) and
keeps the permutation test."""
import os
import tempfile
import unittest

import helpers as H
from analysis import cells as C
from analysis import determinism as D
from analysis import stats as S
from analysis import tidy

JOB = "lat-randread-4k-qd1"


def run_with(root, scales, clock="insn", probe=None, disk="ram"):
    return tidy.load_run(H.exact_run(root, scales, clock, probe, disk=disk))


def row(v, metric, a, b, disk="ram"):
    r = v[(v["metric"] == metric) & (v["a"] == a) & (v["b"] == b) & (v["disk"] == disk)]
    assert len(r) == 1, r
    return r.iloc[0]


class Spread(unittest.TestCase):
    def test_spread(self):
        self.assertAlmostEqual(D.spread_pct([100.0, 100.1]), 0.09995, places=4)
        self.assertTrue(D.spread_pct([5.0]) != D.spread_pct([5.0]))    # NaN
        self.assertEqual(D.spread_pct([0.0, 0.0]), 0.0)
        self.assertTrue(D.is_deterministic([100.0, 100.15], 0.2))
        self.assertFalse(D.is_deterministic([100.0, 100.3], 0.2))
        self.assertFalse(D.is_deterministic([100.0], 0.2))

    def test_percentile_bound_is_a_bucket(self):
        # fio's histogram: 64 buckets per power of two; a p99 one bucket
        # off (run cold-2: 0.95 %) is not a spread
        self.assertAlmostEqual(D.metric_bound("read_lat_p99_us", 0.2), 100 / 64)
        self.assertAlmostEqual(D.metric_bound("write_clat_p99.9_us", 0.2), 100 / 64)
        self.assertEqual(D.metric_bound("read_iops", 0.2), 0.2)
        self.assertEqual(D.metric_bound("read_lat_mean_us", 0.2), 0.2)
        self.assertEqual(D.metric_bound("read_lat_p99_us", 3.0), 3.0)
        # a within-boot ratio of percentiles: a bucket on each side
        self.assertAlmostEqual(D.metric_bound("read_lat_p99_us", 0.2, "ram-bounce/ram"), 200 / 64)
        self.assertAlmostEqual(D.metric_bound("read_lat_p99_us", 0.2, "ram-bounce"), 100 / 64)
        self.assertAlmostEqual(D.metric_bound("read_iops", 0.2, "ram-bounce/ram"), 0.4)
        self.assertEqual(D.metric_bound("read_iops", 0.2, "ram-bounce"), 0.2)


class ExactCells(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_two_exact_reps_decide(self):
        run = run_with(os.path.join(self.tmp.name, "r"),
                       {"pre": [1.0, 1.0005], "pre.2": [1.0003, 1.0],
                        "post": [1.2, 1.2004]})
        self.assertEqual(run.bound_pct, 0.2)     # lab.conf's
        self.assertTrue(D.undecided(run).empty)
        v = S.verdicts(run, n_boot=200)
        r = row(v, "read_iops", "pre", "post")
        self.assertTrue(r["analysis"].startswith(D.EXACT))
        self.assertEqual(r["verdict"], "faster")
        self.assertAlmostEqual(r["ratio"], 1.2, places=3)
        self.assertAlmostEqual(r["ci_high"] / r["ci_low"], 1.002 ** 2, places=6)
        # 2 against 2 could never reach a test's verdict: the bound decides
        self.assertTrue(r["p_value"] != r["p_value"])
        # the A/A pair: no difference within the bound, and a tested control
        aa = row(v, "read_iops", "pre", "pre.2")
        self.assertEqual(aa["verdict"], S.NO_DIFF)
        self.assertTrue(aa["analysis"].startswith(D.EXACT))
        self.assertGreaterEqual(len(S.control_rows(v)), 1)
        self.assertEqual(S.controls(v)[0], 0)

    def test_spread_cell_needs_more_reps(self):
        run = run_with(os.path.join(self.tmp.name, "r"),
                       {"pre": [1.0, 1.0005], "post": [1.2, 1.26]})
        bad = D.undecided(run)
        self.assertIn(("post", "ram", "none"),
                      set(zip(bad["variant"], bad["boot_disk"], bad["pressure"])))
        self.assertNotIn("pre", set(bad["variant"]))
        # the post cell spreads 5 %: the permutation test, too few at 2 reps
        r = row(S.verdicts(run, n_boot=200), "read_iops", "pre", "post")
        self.assertFalse(str(r["analysis"]).startswith(D.EXACT))
        self.assertTrue(S.is_too_few(r["verdict"]))

    def test_a_cell_repeats_only_if_every_label_does(self):
        # pre and its copy repeat, post's seeds move it 5 %: what moves one
        # kernel's cell may move another's, so no pair of it is decided on
        # the bound
        run = run_with(os.path.join(self.tmp.name, "r"),
                       {"pre": [1.0, 1.0005], "pre.2": [1.0003, 1.0], "post": [1.2, 1.26]})
        v = S.verdicts(run, n_boot=200)
        self.assertFalse(str(row(v, "read_iops", "pre", "pre.2")["analysis"]).startswith(D.EXACT))
        self.assertFalse(S.is_exact(v[v["metric"] == "read_iops"]).any())

    def test_probed_twin_does_not_decide(self):
        run = run_with(os.path.join(self.tmp.name, "r"),
                       {"pre": [1.0, 1.0005], "post": [1.2, 1.26]}, probe=())
        self.assertEqual(set(D.cells(run)["job"]), {JOB + C.PROBED})
        self.assertFalse(D.cells(run)["deterministic"].all())
        self.assertTrue(D.undecided(run).empty)

    def test_disk_qemu_completes_is_never_exact(self):
        # usb-pio under insn: QEMU completes its I/O on a host thread, so
        # two reps the same to the digit are luck, never a decision (run
        # default-6: its split halves "differed" by 0.4 % on pre's
        # CPU per GiB); the permutation test decides it, as on host time
        for disk in ("usb-pio", "virtio"):
            run = run_with(os.path.join(self.tmp.name, disk),
                           {"pre": [1.0, 1.0005, 1.0, 1.0005],
                            "post": [1.2, 1.2004, 1.2, 1.2004]}, disk=disk)
            self.assertEqual(run.disk_clocks[disk], "insn")
            self.assertEqual(run.exact_disks, set())
            self.assertTrue(D.cells(run).empty)
            r = row(S.verdicts(run, n_boot=200), "read_iops", "pre", "post", disk)
            self.assertFalse(str(r["analysis"]).startswith(D.EXACT))
            self.assertTrue(r["p_value"] == r["p_value"])

    def test_host_time_is_never_exact(self):
        run = run_with(os.path.join(self.tmp.name, "r"),
                       {"pre": [1.0, 1.0], "post": [1.2, 1.2]}, clock="host")
        self.assertEqual(run.exact_disks, set())
        self.assertTrue(D.cells(run).empty)
        v = S.verdicts(run, n_boot=200)
        self.assertFalse(S.is_exact(v).any())


if __name__ == "__main__":
    unittest.main()
