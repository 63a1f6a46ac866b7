# SPDX-License-Identifier: GPL-2.0
"""bench/analyze end to end on a copy of the fixture run."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import helpers as H

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def analyze(*args):
    return subprocess.run([H.ANALYZE, *args], capture_output=True, text=True,
                          timeout=600)


def links(report):
    with open(report, encoding="utf-8") as f:
        return LINK.findall(f.read())


class EndToEnd(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.run_dir = os.path.join(cls.tmp.name, "run")
        shutil.copytree(H.FIXTURE_RUN, cls.run_dir)
        cls.res = analyze("--resamples", "200", cls.run_dir)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_exit_and_summary(self):
        self.assertEqual(self.res.returncode, 0, self.res.stderr)
        self.assertIn("bounce path:", self.res.stdout)
        self.assertLess(len(self.res.stdout.splitlines()), 20)

    def test_files(self):
        for name in ("summary.csv", "verdict.csv", "report.md", "jobs.csv", "excluded.csv"):
            self.assertGreater(os.path.getsize(os.path.join(self.run_dir, name)), 0, name)

    def test_report_links_exist(self):
        found = links(os.path.join(self.run_dir, "report.md"))
        self.assertTrue(any(p.endswith(".png") for p in found))
        for rel in found:
            self.assertTrue(os.path.isfile(os.path.join(self.run_dir, rel)), rel)

    def test_report_lists_exclusions(self):
        with open(os.path.join(self.run_dir, "report.md"), encoding="utf-8") as f:
            text = f.read()
        for rel in H.fixture_job_dirs():
            skipped = os.path.join(self.run_dir, rel, "skipped")
            if os.path.exists(skipped):
                with open(skipped, encoding="utf-8") as f:
                    self.assertIn(f.read().strip(), text)
        with open(os.path.join(self.run_dir, "boots.tsv"), encoding="utf-8") as f:
            for line in f.read().splitlines()[1:]:
                status = line.split("\t")[5]
                if status != "ok":
                    self.assertIn(status, text)

    def test_no_plots(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = os.path.join(tmp, "run")
            shutil.copytree(H.FIXTURE_RUN, d)
            # a stale image from an earlier call must not be linked
            H.write_text(os.path.join(d, "plots", "throughput-read_iops.png"), "old")
            res = analyze("--no-plots", "--resamples", "100", d)
            self.assertEqual(res.returncode, 0, res.stderr)
            found = links(os.path.join(d, "report.md"))
            self.assertFalse([p for p in found if p.startswith("plots/")])
            for rel in found:
                self.assertTrue(os.path.isfile(os.path.join(d, rel)), rel)


class CiCheck(unittest.TestCase):
    def test_ci_check(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = H.ab_run(os.path.join(tmp, "run"), ["pre", "post"], 6,
                           [1.0, 1.2], 0.03, seed=3)
            res = analyze("--ci-check", "50", run)
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
            self.assertIn("narrow enough", res.stdout)
            res = analyze("--ci-check", "0.1", run)
            self.assertEqual(res.returncode, 1, res.stdout + res.stderr)
            self.assertIn("too wide", res.stdout)
            self.assertIn("read_iops", res.stdout)
            self.assertFalse(os.path.exists(os.path.join(run, "report.md")))
            res = analyze("--ci-check", "5", os.path.join(tmp, "nope"))
            self.assertEqual(res.returncode, 2)


class BadRunDir(unittest.TestCase):
    def test_missing(self):
        with tempfile.TemporaryDirectory() as tmp:
            res = analyze(os.path.join(tmp, "nope"))
            self.assertNotEqual(res.returncode, 0)
            self.assertIn("no such run folder", res.stderr)

    def test_empty(self):
        with tempfile.TemporaryDirectory() as tmp:
            res = analyze(tmp)
            self.assertNotEqual(res.returncode, 0)
            self.assertIn("no boots.tsv", res.stderr)
            self.assertFalse(os.path.exists(os.path.join(tmp, "report.md")))

    def test_all_boots_failed(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = H.make_run(os.path.join(tmp, "run"), [dict(
                variant="pre", disk="usb-pio", pressure="none", rep=1,
                status="failed: kernel panic", jobs=[])])
            res = analyze("--no-plots", d)
            self.assertEqual(res.returncode, 1)
            with open(os.path.join(d, "report.md"), encoding="utf-8") as f:
                self.assertIn("failed: kernel panic", f.read())


if __name__ == "__main__":
    unittest.main()
