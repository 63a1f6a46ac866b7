# SPDX-License-Identifier: GPL-2.0
"""Issue 21's acceptance on a small default-like run (helpers.default_run),
analysed by bench/analyze as a user runs it: the first 40 lines of
report.md hold the headline table with the ram-bounce/ram ratios,
integrity (on a row of each disk's integrity jobs: issue 35) and the
controls line; no row below its smallest effect of interest is counted
as significant there; at most 40 plot files."""
import os
import re
import subprocess
import tempfile
import unittest

import pandas as pd

import helpers as H
from analysis import stats

FIRST_SCREEN = 40
MAX_PLOT_FILES = 40


class DefaultRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.rundir = H.default_run(os.path.join(cls.tmp.name, "default-small"))
        cls.res = subprocess.run(["/usr/bin/python3", H.ANALYZE, "--resamples", "200", cls.rundir],
                                 capture_output=True, text=True, timeout=600)
        with open(os.path.join(cls.rundir, "report.md"), encoding="utf-8") as f:
            cls.report = f.read().splitlines()
        cls.first = cls.report[:FIRST_SCREEN]
        cls.v = pd.read_csv(os.path.join(cls.rundir, "verdict.csv")).fillna(
            {"relevance": "", "note": ""})

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_analyze_ok(self):
        self.assertEqual(self.res.returncode, 0, self.res.stderr)

    def test_early_answer_is_the_headline_table(self):
        # bench/analyze --early: the same table, from the boots in so far
        res = subprocess.run(["/usr/bin/python3", H.ANALYZE, "--early", "--resamples", "200",
                              self.rundir], capture_output=True, text=True, timeout=600)
        self.assertEqual(res.returncode, 0, res.stderr)
        lines = res.stdout.splitlines()
        self.assertTrue(lines[0].startswith("early answer, from the "), lines[0])
        head = next(ln for ln in self.first if ln.startswith("| disk |"))
        self.assertEqual(lines[1], head)
        ratio = [ln for ln in self.first if ln.startswith("| ram-bounce/ram |")][0]
        self.assertIn(ratio, lines)

    def test_headline_table_with_within_boot_ratios(self):
        rows = [ln for ln in self.first if ln.startswith("| ram-bounce/ram |")]
        self.assertTrue(rows, "\n".join(self.first))
        head = next(ln for ln in self.first if ln.startswith("| disk |"))
        for pair in ("post/pre", "post/pre-fixed", "pre/pre-fixed"):
            self.assertIn(f" {pair} |", head)
        # post/pre-fixed of the read job: the copies removed, relevant
        self.assertRegex(rows[0], r"\*\*1\.2\d? \(1\.2\d*–1\.2\d*\) faster\*\*")
        self.assertIn("integrity", head)
        self.assertTrue(any("| refused |" in ln for ln in self.first))

    def test_integrity_cell_on_its_own_row(self):
        # the cell sums a disk's integrity jobs: it stands on a row of its
        # own, never on a performance job's row
        head = next(i for i, ln in enumerate(self.first) if ln.startswith("| disk |"))
        rows, disk, cells = [], None, {}
        for ln in self.first[head + 2:]:
            if not ln.startswith("|"):
                break
            rows.append([c.strip() for c in ln.strip().strip("|").split("|")])
        for r in rows:
            disk = r[0] or disk
            if r[-1]:
                self.assertRegex(r[1], r"integrity job", r)
                self.assertEqual(r[2], "bad of checked blocks")
                cells.setdefault(disk, []).append(r)
        self.assertEqual(sorted(cells), ["ram-bounce", "usb-pio"])
        (ram,) = cells["ram-bounce"]
        self.assertEqual(ram[1], "its 1 integrity job, summed")
        self.assertRegex(ram[-1], r"pre-fixed \*\*\d+\*\* of \d+")
        self.assertEqual(cells["usb-pio"][0][-1], "not run")

    def test_integrity_and_controls_on_first_screen(self):
        self.assertTrue(any(ln.startswith("Integrity: **pre-fixed corrupts data**")
                            for ln in self.first))
        self.assertTrue(any(ln.startswith("controls:") or ln.startswith("**controls:")
                            for ln in self.first))

    def test_nothing_below_its_threshold_counted_as_significant(self):
        v = self.v
        # the run has significant rows below their threshold: the test has teeth
        sig = v[v["verdict"].isin(stats.SIGNIFICANT)]
        small = sig[[stats.effect_pct(r) < t for r, t in zip(sig["ratio"], sig["min_effect_pct"])]]
        self.assertGreater(len(small), 0)
        self.assertTrue((small["relevance"] == stats.NEGLIGIBLE).all())
        screen = "\n".join(self.first)
        # the count of the first screen is the relevant rows only
        m = re.search(r"\*\*(\d+) relevant\*\* of (\d+) tested", screen)
        self.assertIsNotNone(m, screen)
        perf = ~v["job"].str.endswith("+probe") & ~v["job"].str.startswith("integrity-")
        rel = v[perf & v["primary"] & ~v["control"] & (v["relevance"] == stats.RELEVANT)]
        self.assertEqual(int(m.group(1)), len(rel))
        for r, t in zip(rel["ratio"], rel["min_effect_pct"]):
            self.assertGreaterEqual(stats.effect_pct(r), t)
        # every bold (relevant) cell of the headline table is at least 1 % away from 1
        for cell in re.findall(r"\*\*([0-9.]+) \(", screen):
            self.assertGreaterEqual(abs(float(cell) - 1) * 100, 1.0, cell)
        # no "N significant" with N > 0 and no "rows differ" anywhere on it
        self.assertNotRegex(screen, r"[1-9]\d* of \d+ (A/A )?rows (significant|differ)")
        # the control disk's kernel pairs are the kernels' difference, the
        # split halves the instruction-time clock's own check
        self.assertRegex(screen, r"instruction time \(ram, ram-bounce, ram-bounce/ram\): \d+ A/A "
                         r"rows with distinct seeds \(split halves\)")
        self.assertRegex(screen, r"kernel pairs on a control disk \(ram\): 0 of \d+ rows "
                         r"relevant, \d+ negligible")

    def test_at_most_40_plot_files(self):
        d = os.path.join(self.rundir, "plots")
        files = [f for f in os.listdir(d) if f.endswith((".png", ".svg"))]
        self.assertGreater(len(files), 5)
        self.assertLessEqual(len(files), MAX_PLOT_FILES)

    def test_guest_bounds_from_meta(self):
        self.assertIn("Guest bounds: disk wait 20 s, monitor interval 100 ms, "
                      "job timeout 300 s (meta.json).", self.report)

    def test_min_effect_moves_the_line(self):
        strict = stats.relevance(self.v.drop(columns=stats.RELEVANCE_COLUMNS), {"*": 50})
        rel = strict[strict["relevance"] == stats.RELEVANT]
        self.assertLess(len(rel), int((self.v["relevance"] == stats.RELEVANT).sum()))
        self.assertTrue(all(stats.effect_pct(r) >= 50 for r in rel["ratio"]))
        loose = stats.relevance(self.v.drop(columns=stats.RELEVANCE_COLUMNS), {"*": 0})
        self.assertFalse((loose["relevance"] == stats.NEGLIGIBLE).any())


if __name__ == "__main__":
    unittest.main()
