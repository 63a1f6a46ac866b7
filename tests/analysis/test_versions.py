# SPDX-License-Identifier: GPL-2.0
"""Kernel versions in the history (analysis/versions.py, analysis/history.py):
Debian version order, the markers, the per-label kernel of a run that
boots four bases (build-info.json of fixtures/versions), and history.csv
files written before the per-label kernel columns
(fixtures/versions/history-old.csv: real rows, written by bench/history
before the base axis)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np
import pandas as pd

import helpers as H
from analysis import history, versions as V

OLD_CSV = os.path.join(H.VERSIONS_FIXTURES, "history-old.csv")
# the history.csv columns before the base axis (the fixture's header)
OLD_COLUMNS = ["run_id", "started", "kernel_source_version", "kernel_release",
               "git_revision", "accel", "icount", "memhog_mb", "variant",
               "kernel_variant", "disk", "job", "pressure", "metric", "unit", "n",
               "median", "ci_low", "ci_high", "values"]
JOB = "lat-randread-4k-qd1"
VERSION_ORDER = ["5.10.262-1", "6.1.192-3", "6.12.118-1~deb12u1", "7.2.13-1"]


def old_rows():
    return pd.read_csv(OLD_CSV, dtype=str, keep_default_na=False)


def write_history(hdir, rows):
    os.makedirs(hdir, exist_ok=True)
    rows.to_csv(history.history_path(hdir), index=False)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Order(unittest.TestCase):
    PAIRS = [("5.10.262-1", "6.1.192-3"), ("6.1.176-1", "6.1.192-3"),
             ("6.1.192-3", "6.12.118-1~deb12u1"), ("6.12.118-1~deb12u1", "6.12.118-1"),
             ("6.12.118-1", "6.12.120-1~deb12u1"), ("6.12.120-1~deb12u1", "7.2.13-1"),
             ("7.2.13-1", "1:4.19.0-1"), ("6.16~rc1-1", "6.16-1"), ("6.16", "6.16.1"),
             ("5.10.262-1", "5.10.262-1+b1")]

    def test_pairs(self):
        for a, b in self.PAIRS:
            self.assertLess(V.compare(a, b), 0, (a, b))
            self.assertGreater(V.compare(b, a), 0, (b, a))
            self.assertEqual(V.compare(a, a), 0)

    @unittest.skipUnless(shutil.which("dpkg"), "no dpkg")
    def test_same_as_dpkg(self):
        for a, b in self.PAIRS:
            res = subprocess.run(["dpkg", "--compare-versions", a, "lt", b])
            self.assertEqual(res.returncode, 0, (a, b))

    def test_sort_is_not_text_order(self):
        shuffled = ["7.2.13-1", "6.12.118-1~deb12u1", "6.9.12-1", "5.10.262-1", "6.1.192-3"]
        want = ["5.10.262-1", "6.1.192-3", "6.9.12-1", "6.12.118-1~deb12u1", "7.2.13-1"]
        self.assertEqual(V.sort_versions(shuffled), want)
        self.assertNotEqual(sorted(shuffled), want)

    def test_upstream_and_package(self):
        self.assertEqual(V.upstream("1:6.12.118-1~deb12u1"), "6.12.118")
        self.assertEqual(V.package_of("", "5.10.262-1"), "linux-source-5.10")
        self.assertEqual(V.package_of("6.1.192", "unknown"), "linux-source-6.1")
        self.assertEqual(V.package_of("", "unknown"), "")


class Markers(unittest.TestCase):
    def test_four_versions(self):
        m = V.markers(VERSION_ORDER)
        self.assertEqual([(x, at) for x, at, _ in m], [(0.5, "5.13"), (2.5, "6.16")])
        self.assertIn("9bb33f24abbd", m[0][2])
        self.assertIn("removed", m[1][2])

    def test_at_the_edges(self):
        m = V.markers(["6.12.118-1~deb12u1", "7.2.13-1"])
        self.assertEqual([x for x, _, _ in m], [-0.5, 0.5])
        m = V.markers(["5.10.262-1", "6.12.118-1"])
        self.assertEqual([x for x, _, _ in m], [0.5, 1.5])


class OldHistory(unittest.TestCase):
    """history.csv written before source_package, source_suite and role."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.hdir = os.path.join(self.tmp.name, "history")
        os.makedirs(self.hdir)
        shutil.copy(OLD_CSV, history.history_path(self.hdir))

    def tearDown(self):
        self.tmp.cleanup()

    def test_fixture_is_old(self):
        self.assertEqual(list(old_rows().columns), OLD_COLUMNS)

    def test_loads_filled(self):
        df = history.load(self.hdir)
        self.assertEqual(list(df.columns), history.HISTORY_COLUMNS)
        self.assertEqual(len(df), len(old_rows()))
        self.assertEqual(set(df["source_package"]), {"linux-source-6.12"})
        self.assertEqual(set(df["source_suite"]), {""})
        roles = dict(zip(df["variant"], df["role"]))
        self.assertEqual(roles, {"pre": "baseline", "pre-fixed": "bounce", "post": "removed"})
        # the old columns keep their values
        old = old_rows()
        self.assertEqual(list(df["kernel_source_version"]), list(old["kernel_source_version"]))
        self.assertTrue(np.allclose(df["median"], pd.to_numeric(old["median"])))

    def test_older_still(self):
        # a table without kernel_release or kernel_variant either
        rows = old_rows().drop(columns=["kernel_release", "kernel_variant", "git_revision"])
        write_history(self.hdir, rows)
        df = history.load(self.hdir)
        self.assertEqual(set(df["kernel_release"]), {""})
        self.assertEqual(list(df["kernel_variant"]), list(df["variant"]))
        self.assertEqual(set(df["git_revision"]), {"unknown"})
        self.assertEqual(set(df["source_package"]), {"linux-source-6.12"})

    def test_required_columns(self):
        write_history(self.hdir, old_rows().drop(columns=["median"]))
        with self.assertRaisesRegex(history.HistoryError, "missing columns median"):
            history.load(self.hdir)

    def test_plot_and_save(self):
        df, _, p = history.plot(self.hdir, n_boot=200)
        self.assertEqual(p.errors, [])
        self.assertTrue(p.figures)
        # saved again (a run added), the table has every column
        history.save(df, self.hdir)
        with open(history.history_path(self.hdir), encoding="utf-8") as f:
            self.assertEqual(f.readline().strip().split(","), history.HISTORY_COLUMNS)


# The run: every base on usb-pio, 2 repetitions, interleaved. label ->
# (bounced bios per job, probe (submit µs, completion µs) or None, bad
# blocks in the integrity job). 7.2/upstream and post have no bounce code.
RUN = {
    "5.10/stock": (300, (9.0, 11.0), 0),
    "6.1/stock": (0, None, 0),
    "6.1/fixed": (300, (10.0, 12.0), 700),
    "pre": (0, None, 0),
    "pre-fixed": (300, (8.0, 13.0), 1792),
    "post": ("absent", "absent", 0),
    "7.2/upstream": ("absent", "absent", 0),
}
RUN_ROLES = {"5.10/stock": "bounce", "6.1/stock": "baseline", "6.1/fixed": "bounce",
             "pre": "baseline", "pre-fixed": "bounce", "post": "removed",
             "7.2/upstream": "removed"}


def versions_run(root, reps=2):
    boots = []
    for rep in range(1, reps + 1):
        for label, (bounces, probe, bad) in RUN.items():
            jobs = [dict(device="usb", job=JOB, bounces=bounces),
                    dict(device="usb", job=JOB, bounces=bounces,
                         probe=(probe + (bounces,)) if isinstance(probe, tuple)
                         else ("absent" if probe == "absent" else ())),
                    dict(device="usb", job="integrity-direct-512-qd8", template="virtio",
                         bounces=bounces, integrity_bad=bad)]
            boots.append(dict(variant=label, disk="usb-pio", pressure="none", rep=rep,
                              jobs=jobs))
    H.make_run(root, boots)
    meta = {"run_id": os.path.basename(root), "status": "complete",
            "started": "2026-12-21T06:00:00Z", "git_revision": "abc1234", "accel": "tcg",
            "icount": "", "memhog_mb": 1088, "roles": RUN_ROLES,
            # the default base: it names no other base's version
            "kernel_source_package": "linux-source-6.12",
            "kernel_source_version": "6.12.118-1~deb12u1"}
    H.write_text(os.path.join(root, "meta.json"), json.dumps(meta) + "\n")
    return root


class VersionsRun(unittest.TestCase):
    """One run folder that boots all four bases (./run.sh versions)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.run_dir = versions_run(os.path.join(cls.tmp.name, "results", "versions-1"))
        cls.hdir = os.path.join(cls.tmp.name, "history")
        cls.add = subprocess.run([os.path.join(H.ROOT, "bench", "history"), "--resamples",
                                  "200", "--history-dir", cls.hdir, "add", cls.run_dir],
                                 capture_output=True, text=True, timeout=600)
        cls.df = history.load(cls.hdir)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_cli(self):
        self.assertEqual(self.add.returncode, 0, self.add.stderr)

    def test_boot_folders(self):
        names = os.listdir(os.path.join(self.run_dir, "boots"))
        self.assertIn("001-5.10_stock-usb-pio-none-r1", names)

    def test_identity_per_label(self):
        ident = self.df.drop_duplicates("variant").set_index("variant")
        expect = {
            "5.10/stock": ("linux-source-5.10", "5.10.262-1", "bullseye-security", "5.10.262"),
            "6.1/fixed": ("linux-source-6.1", "6.1.192-3", "bookworm", "6.1.192"),
            "7.2/upstream": ("linux-source-7.2", "7.2.13-1", "sid", "7.2.13"),
            "pre": ("linux-source-6.12", "6.12.118-1~deb12u1", "", "6.12.118"),
        }
        for label, want in expect.items():
            got = tuple(ident.loc[label, c] for c in ("source_package",
                        "kernel_source_version", "source_suite", "kernel_release"))
            self.assertEqual(got, want, label)
        self.assertEqual(dict(zip(ident.index, ident["role"])), RUN_ROLES)
        self.assertEqual(ident.loc["6.1/stock", "kernel_variant"], "6.1/stock")

    def test_meta_fallback(self):
        # boots without build-info.json: meta.json "kernels", then the
        # run's own version only for a label of the default base's package
        run = os.path.join(self.tmp.name, "nobuild")
        shutil.copytree(self.run_dir, run)
        for b in os.listdir(os.path.join(run, "boots")):
            os.remove(os.path.join(run, "boots", b, "build-info.json"))
        meta = H.read_json(os.path.join(run, "meta.json"))
        meta["kernels"] = {"5.10/stock": H.read_json(H.BUILD_INFO["5.10/stock"])}
        H.write_text(os.path.join(run, "meta.json"), json.dumps(meta) + "\n")
        rows = history.read_run(run, n_boot=100)
        got = rows.drop_duplicates("variant").set_index("variant")["kernel_source_version"]
        self.assertEqual(got["5.10/stock"], "5.10.262-1")
        self.assertEqual(got["pre"], "6.12.118-1~deb12u1")



if __name__ == "__main__":
    unittest.main()
