# SPDX-License-Identifier: GPL-2.0
"""explain.py and bench/explain on a counted run (test_insnprof's: pre
and pre-fixed on ram-bounce under insn, two reps, the bounce's symbols
known per I/O): the symbols that differ, the total against the counted
delta, and the errors."""
import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import helpers as H
import test_insnprof as P
from analysis import explain as E
from tracker import changes

EXPLAIN = os.path.join(H.ROOT, "bench", "explain")


def with_jobs_csv(run):
    """The run's jobs.csv, as the analysis writes it."""
    run.jobs.to_csv(os.path.join(run.path, "jobs.csv"), index=False)
    return run.path


class Differ(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = with_jobs_csv(P.counted_run(os.path.join(cls.tmp.name, "r")))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def explain(self, top=20, a="pre", b="pre-fixed"):
        sa = E.load_side(self.root, a, "ram-bounce", "lat-randread-4k-qd1")
        sb = E.load_side(self.root, b, sa.disk, sa.job, sa.pressure)
        return sa, sb, *E.differ(sa, sb, top)

    def test_the_bounce_symbols_and_the_total(self):
        _, _, rows, summary = self.explain()
        by = rows.set_index("symbol")
        for sym, (count, calls, _copy) in P.BOUNCE.items():
            self.assertAlmostEqual(by.loc[sym, "delta"], count, places=6)
            self.assertAlmostEqual(by.loc[sym, "calls_b"] - by.loc[sym, "calls_a"], calls)
            self.assertAlmostEqual(by.loc[sym, "lo"], count, places=6)   # both reps
        self.assertEqual(by.loc["__blk_queue_bounce", "part"], "bio clone")
        self.assertAlmostEqual(by.loc["__blk_queue_bounce", "us"], 312 * P.NS / 1000.0)
        total = sum(c for c, _, _ in P.BOUNCE.values())
        self.assertAlmostEqual(by.loc["total", "delta"], total, places=6)
        self.assertAlmostEqual(summary["counted"], total, places=6)
        self.assertLess(summary["gap"], 0.001)
        self.assertTrue(summary["exact"])
        # the largest first
        self.assertEqual(rows["symbol"].iloc[0], "bounce_end_io_read")

    def test_the_rest_keeps_the_sum(self):
        _, _, rows, summary = self.explain(top=2)
        self.assertEqual(list(rows["symbol"][:2]), ["bounce_end_io_read", "get_page_from_freelist"])
        self.assertTrue(rows["symbol"].iloc[2].startswith("rest ("))
        self.assertAlmostEqual(rows["delta"].iloc[:-1].sum(), summary["counted"], places=6)

    def test_render_says_exact_and_the_gap(self):
        sa, sb, rows, summary = self.explain()
        text = E.render(sa, sb, rows, summary)
        self.assertIn("pre-fixed against pre: ram-bounce, lat-randread-4k-qd1 (pressure none)",
                      text)
        self.assertIn("each delta is a count", text)
        self.assertIn("the total is the counted delta within", text)

    def test_a_counter_on_one_side_only_is_said(self):
        sa, sb, rows, summary = self.explain()
        self.assertEqual(E.instruments_note(sa, sb), "")
        # the counter ran in pre-fixed's window only (no probed twin)
        sa.counter, sb.counter = {"off"}, {E.COUNTED}
        note = E.instruments_note(sa, sb)
        self.assertIn("the bounce-page counter ran in r:pre-fixed's windows and not in "
                      "r:pre's", note)
        self.assertIn(note, E.render(sa, sb, rows, summary))
        sa.counter = {E.COUNTED}
        self.assertEqual(E.instruments_note(sa, sb), "")

    def test_cli_two_labels_and_two_runs(self):
        r = subprocess.run([EXPLAIN, self.root, "pre", "pre-fixed"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("bounce_end_io_read", r.stdout)
        other = os.path.join(self.tmp.name, "other")
        shutil.copytree(self.root, other, dirs_exist_ok=True)
        r = subprocess.run([EXPLAIN, f"{self.root}:pre", f"{other}:pre"], capture_output=True,
                           text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("other:pre against r:pre", r.stdout)
        self.assertRegex(r.stdout, r"\ntotal +\+0\.0 ")

    def test_cli_refuses_what_it_does_not_know(self):
        for args, said in [
                (["nosuchrun", "pre", "pre-fixed"], "unknown run 'nosuchrun'"),
                ([self.root, "pre", "nosuch"], "unknown variant 'nosuch'"),
                ([self.root, "pre", "pre-fixed", "--disk", "usb-pio"], "unknown disk 'usb-pio'"),
                ([self.root, "pre", "pre-fixed", "--job", "nojob"], "unknown job 'nojob'"),
                ([self.root, "pre"], "usage: bench/explain")]:
            r = subprocess.run([EXPLAIN] + args, capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, (args, r.stdout, r.stderr))
            self.assertIn(said, r.stderr)

    def test_no_counts_is_an_error_not_a_zero(self):
        bare = os.path.join(self.tmp.name, "bare")
        shutil.copytree(self.root, bare, dirs_exist_ok=True)
        for dirpath, _dirs, files in os.walk(bare):
            if "insnprof.txt" in files:
                os.remove(os.path.join(dirpath, "insnprof.txt"))
        r = subprocess.run([EXPLAIN, bare, "pre", "pre-fixed"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("has no instruction counts", r.stderr)


def plant(run_dir, variant, symbol, per_io, ios=1000):
    """Add per_io instructions a call of symbol to every window of
    variant's boots in run_dir (a planted regression)."""
    for bdir in glob.glob(os.path.join(run_dir, "boots", "*")):
        # NNN-VARIANT-DISK-...: the fixture's disk is ram-bounce
        if not re.match(rf"\d+-{re.escape(variant)}-ram", os.path.basename(bdir)):
            continue
        path = os.path.join(bdir, "insnprof.txt")
        out = []
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for line in text.splitlines():
            p = line.split()
            if p and p[0] == "window":
                kern = int(p[3].split("=")[1]) + per_io * ios
                line = f"{p[0]} {p[1]} {p[2]} kernel={kern}"
            if p and p[0] == "end":
                out.append(f"sym {symbol} {per_io * ios} {ios} 0")
            out.append(line)
        H.write_text(path, "\n".join(out) + "\n")


class HistoryCheck(unittest.TestCase):
    """changes.symbol_lines: under a moved pair, where its instructions
    went between its two runs."""

    def test_a_planted_symbol_is_named_first(self):
        with tempfile.TemporaryDirectory() as tmp:
            a = with_jobs_csv(P.counted_run(os.path.join(tmp, "run-a")))
            b = os.path.join(tmp, "run-b")
            shutil.copytree(a, b)
            plant(b, "pre", "lab_planted_work", 7000)
            r = dict(run_a="run-a", run_b="run-b", variant="pre", disk="ram-bounce",
                     job="lat-randread-4k-qd1", pressure="none")
            lines = changes.symbol_lines(r, tmp)
            self.assertIn("(counted, exact): instructions per I/O", lines[0])
            self.assertIn("(+7000)", lines[0])
            self.assertEqual(lines[1].split(":")[0].strip(), "lab_planted_work (other kernel)")
            self.assertIn("+7000, calls per I/O 0.00 -> 1.00", lines[1])
            # the same run twice: nothing moved, every line +0
            same = changes.symbol_lines(dict(r, run_b="run-a"), tmp)
            self.assertIn("(+0)", same[0])
            # a run that is not there: nothing to say, no error
            self.assertEqual(changes.symbol_lines(dict(r, run_b="gone"), tmp), [])


if __name__ == "__main__":
    unittest.main()
