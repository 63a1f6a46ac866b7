# SPDX-License-Identifier: GPL-2.0
"""plots.py and plots/*.gp: every figure is a real PNG of the size asked
for, with an SVG beside it when asked for (--all-plots) and beside the
forest plots always; each script also works on its own."""
import os
import struct
import subprocess
import tempfile
import unittest

import numpy as np
import pandas as pd

import helpers as H
from analysis import plots, questions, stats, tidy
from analysis.questions import cost

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(path):
    """(width, height) from the PNG signature and IHDR chunk."""
    with open(path, "rb") as f:
        head = f.read(24)
    if len(head) < 24 or head[:8] != PNG_SIGNATURE or head[12:16] != b"IHDR":
        raise ValueError(f"{path}: not a PNG")
    return struct.unpack(">II", head[16:24])


# No skip without gnuplot: a missing plotter is a failure (tests/analysis-test.sh
# installs gnuplot-nox).
class Figures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = tidy.load_run(H.FIXTURE_RUN)
        cls.verdicts = stats.verdicts(cls.data, n_boot=200)
        cls.out = os.path.join(cls.tmp.name, "plots")
        cls.p = questions.make_plots(cls.data, cls.verdicts, cls.out, everything=True)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_errors(self):
        self.assertEqual(self.p.errors, [])

    def test_every_kind_made(self):
        kinds = {f["kind"] for f in self.p.figures}
        # the memory figures need pressure boots: test_memory.py makes them;
        # the sweep's needs sweep jobs: test_sweep.py makes it; the counted
        # budget needs instruction counts: test_insnprof.py makes it
        self.assertEqual(kinds, set(plots.SIZES) - {"dose-response", "pressure-timeline",
                                                    "sweep", "budget"})

    def test_png_sizes(self):
        for f in self.p.figures:
            with self.subTest(figure=f["name"]):
                self.assertGreater(os.path.getsize(f["png"]), 1000)
                w, h = png_size(f["png"])
                base_w, base_h = plots.SIZES[f["kind"]]
                self.assertEqual((w, h), (f["width"], f["height"]))
                if f["kind"] == "forest":     # grows with its rows
                    self.assertGreaterEqual(h, base_h)
                else:
                    self.assertEqual(h, base_h)
                self.assertGreaterEqual(w, base_w)

    def test_fixed_size_kinds(self):
        for f in self.p.figures:
            if f["kind"] in ("memory-timeline", "latency-percentiles"):
                self.assertEqual(png_size(f["png"]), plots.SIZES[f["kind"]])

    def test_svg(self):
        for f in self.p.figures:
            with self.subTest(figure=f["name"]):
                with open(f["svg"], encoding="utf-8") as fh:
                    self.assertIn("<svg", fh.read(2000))

    def test_one_timeline_per_measured_job_cell(self):
        ok = self.data.jobs[self.data.jobs["state"] == "ok"]
        cells = ok.groupby(["variant", "disk", "job", "pressure"]).ngroups
        n = sum(f["kind"] == "memory-timeline" for f in self.p.figures)
        self.assertEqual(n, cells)

    def test_data_files_kept(self):
        for f in self.p.figures:
            self.assertTrue(os.path.isfile(os.path.join(self.out, "data", f["name"] + ".dat")))


class DefaultFigures(unittest.TestCase):
    """Without --all-plots: no memory timeline without pressure (flat
    lines), an SVG only beside the forest plots, forests of the first
    screen's rows."""
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = tidy.load_run(H.FIXTURE_RUN)
        cls.verdicts = stats.verdicts(cls.data, n_boot=200)
        cls.p = questions.make_plots(cls.data, cls.verdicts, os.path.join(cls.tmp.name, "plots"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_no_errors(self):
        self.assertEqual(self.p.errors, [])

    def test_bars_of_a_metric_no_job_has(self):
        # a run of read jobs only has no write IOPS: no figure, no error
        with tempfile.TemporaryDirectory() as tmp:
            p = plots.Plotter(tmp)
            cost.metric_bars(self.data, self.verdicts, p, "throughput", "no_such_metric")
            self.assertEqual((p.figures, p.errors), ([], []))

    def test_no_memory_figure_without_pressure(self):
        kinds = [f["kind"] for f in self.p.figures]
        self.assertNotIn("memory-timeline", kinds)
        self.assertNotIn("memory-disk", kinds)

    def test_forests_hold_the_first_screen(self):
        forests = [f for f in self.p.figures if f["kind"] == "forest"]
        self.assertTrue(forests)
        for f in forests:
            self.assertLessEqual(f["height"], 1600)
            with open(os.path.join(os.path.dirname(f["png"]), "data", f["name"] + ".dat"),
                      encoding="utf-8") as fh:
                rows = fh.read().splitlines()
            self.assertFalse([r for r in rows if "(control)" in r or "sweep-" in r])
            self.assertTrue(all(" (n " in r for r in rows), rows)

    def test_forest_keeps_the_largest_effects(self):
        rows, _ = cost.headline_rows(self.data, cost.forest_rows(self.data, self.verdicts))
        self.assertTrue(len(rows))
        many = pd.concat([rows.assign(job=f"lat-x{i}") for i in range(40)], ignore_index=True)
        keep, left = cost.headline_rows(self.data, many)
        self.assertEqual(len(keep), cost.MAX_FOREST_ROWS)
        self.assertEqual(left, len(many) - cost.MAX_FOREST_ROWS)
        size = np.abs(np.log(many["ratio"].astype(float)))
        self.assertGreaterEqual(size[keep.index].min(), size.drop(keep.index).max())

    def test_svg_only_for_forests(self):
        for f in self.p.figures:
            with self.subTest(figure=f["name"]):
                self.assertEqual(f["svg"] is not None, f["kind"] == "forest")

    def test_forest_rows_are_performance_jobs(self):
        rows = cost.forest_rows(self.data, self.verdicts)
        self.assertFalse(rows["job"].str.endswith("+probe").any())
        integrity = set(self.data.jobs.loc[self.data.jobs["job_class"] == "integrity", "job"])
        self.assertFalse(set(rows["job"]) & integrity)


class StandaloneScript(unittest.TestCase):
    def test_percentiles_script_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "d.dat")
            out = os.path.join(tmp, "o.png")
            H.write_text(data, '"a"\n50 0.30103 10\n99 2 30\n\n\n"b"\n50 0.30103 12\n99 2 40\n')
            w, h = 640, 400
            subprocess.run(
                ["gnuplot", "-e", f"datafile='{data}'; outfile='{out}'; nblocks=2; "
                 f"title='t'; width={w}; height={h}",
                 os.path.join(plots.GP_DIR, "latency-percentiles.gp")],
                check=True, capture_output=True)
            self.assertEqual(png_size(out), (w, h))


if __name__ == "__main__":
    unittest.main()
