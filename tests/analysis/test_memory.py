# SPDX-License-Identifier: GPL-2.0
"""memory.py on a real pressure run (fixtures/pressure-run: one boot each
of pre, pre-fixed and post under full24, the ram-bounce job only): the
footprint, the pool, the per-level table and its figures (the
dose-response only with two levels)."""
import copy
import os
import tempfile
import unittest

import pandas as pd

import helpers as H
from analysis import plots, questions, stats, tidy
from analysis.questions import memory

PRESSURE_RUN = os.path.join(H.HERE, "fixtures", "pressure-run")


class PressureRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = tidy.load_run(PRESSURE_RUN)
        cls.verdicts = stats.verdicts(cls.data, n_boot=200)
        cls.p = questions.make_plots(cls.data, cls.verdicts, os.path.join(cls.tmp.name, "plots"))
        cls.text = "\n".join(memory.section(cls.data, cls.verdicts))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def peak(self, variant):
        t = self.data.tidy
        return t[(t["variant"] == variant) & (t["metric"] == "bounce_pages_peak")]["value"]

    def test_levels_mildest_first(self):
        self.assertEqual(self.data.levels, ["full24"])

    def test_exact_peak_counted_where_it_bounces(self):
        self.assertGreater(self.peak("pre-fixed").max(), 0)
        self.assertEqual(list(self.peak("pre")), [0.0])
        self.assertTrue(self.peak("post").empty)     # no bounce code: no row

    def test_pool_reserve_from_the_kernel(self):
        self.assertIn("pre 256 KiB, pre-fixed 256 KiB; post: none (no bounce code)", self.text)

    def test_level_table_has_each_kernel_and_the_pair_columns(self):
        self.assertIn("**full24** (LowFree target 24 MiB", self.text)
        self.assertIn("| metric | disk | pre-fixed | pre | post | pre-fixed/pre | pre-fixed/post |",
                      self.text)
        # one boot each: the lab says it cannot tell, never a verdict
        self.assertIn("too few repetitions", self.text)
        self.assertNotIn("faster", self.text)

    def test_hogs_idle(self):
        t = self.data.tidy
        hog = t[t["metric"] == "hog_cpu_s"]["value"]
        self.assertEqual(len(hog), 3)
        self.assertEqual(float(hog.max()), 0.0)
        self.assertIn("pressure hogs' CPU during the job, most (must be 0) | all | 0 s", self.text)

    def test_first_screen_sentence(self):
        lines = memory.first_screen_lines(self.data, self.verdicts)
        self.assertEqual(len(lines), 1, lines)   # one shape: one line
        line = lines[0]
        self.assertTrue(line.startswith("Memory, under full24 (ram-bounce, pressure-writeback): "
                                        "pre-fixed holds up to "), line)
        self.assertIn("its write bandwidth is ", line)
        self.assertIn("x post's (too few repetitions", line)
        self.assertIn("and its reader's mean latency is ", line)

    def test_first_screen_a_line_per_shape(self):
        # a second pressure job, the same cells under another name: its
        # own line, in the run's order of pressure jobs
        data = copy.copy(self.data)
        t = data.tidy
        twin = t[t["job"] == "pressure-writeback"].assign(job="pressure-direct-write")
        data.tidy = pd.concat([t, twin], ignore_index=True)
        data.meta = dict(data.meta, pressure_jobs="pressure-writeback pressure-direct-write")
        tidy.resolve(data, data.lab)
        v = self.verdicts
        v = pd.concat([v, v[v["job"] == "pressure-writeback"].assign(job="pressure-direct-write")],
                      ignore_index=True)
        lines = memory.first_screen_lines(data, v)
        self.assertEqual([x.split(":")[0] for x in lines],
                         ["Memory, under full24 (ram-bounce, pressure-writeback)",
                          "Memory, under full24 (ram-bounce, pressure-direct-write)"])

    def test_mechanism_per_shape(self):
        self.assertIn("The mechanism, per shape: what pre-fixed did with bounce pages", self.text)
        row = [x for x in self.text.splitlines()
               if x.startswith("| pressure-writeback | full24 | ram-bounce | ")]
        self.assertEqual(len(row), 1, row)
        # a count per column: nothing left empty
        self.assertEqual(row[0].count("|"), 3 + len(memory.MECHANISM) + 3)

    def test_undecided_rows_say_what_would_decide_them(self):
        rows = memory.undecided_rows(self.data, self.verdicts)
        # one boot each: every primary writeback row of pre-fixed against
        # each other kernel is undecided
        self.assertIn(("write_bw", "post", rows[0][2], "pressure-writeback"),
                      [r for r in rows if r[0] == "write_bw"])
        self.assertEqual({r[1] for r in rows}, {"pre", "post"})
        line = memory.undecided_line(self.data, self.verdicts)
        self.assertIn("`./run.sh compare --set writeback` decides them tighter (36 pressure boots", line)
        # a row decided to within the bound is not listed
        v = self.verdicts.copy()
        sel = (v["metric"] == "write_bw") & v["primary"].astype(bool)
        v.loc[sel, "verdict"] = stats.NO_DIFF
        v.loc[sel, "mde_pct"] = 8.0
        self.assertNotIn("write_bw", {r[0] for r in memory.undecided_rows(self.data, v)})
        # so is one whose CI lies within ±its smallest effect of interest
        sel = (v["metric"] == "pgsteal_per_mib_written") & v["primary"].astype(bool)
        v.loc[sel, "relevance"] = "no relevant difference (CI within ±10%)"
        self.assertNotIn("pgsteal_per_mib_written",
                         {r[0] for r in memory.undecided_rows(self.data, v)})

    def test_undecided_leaves_out_a_metric_no_boot_counted(self):
        # a direct writer reclaims nothing: 0 in every boot of every
        # kernel is nothing to decide, not "could detect"
        m = "pgsteal_per_mib_written"
        self.assertIn(m, {r[0] for r in memory.undecided_rows(self.data, self.verdicts)})
        data = copy.copy(self.data)
        t = data.tidy.copy()
        t.loc[t["metric"] == m, "value"] = 0.0
        data.tidy = t
        self.assertNotIn(m, {r[0] for r in memory.undecided_rows(data, self.verdicts)})

    def test_undecided_at_the_deciding_sets_reps_says_the_reps_needed(self):
        # a run with the writeback set's 16 reps a side does not send the
        # reader to that set again: ±20% at 16 reps is ±10% at 64
        v = self.verdicts.copy()
        sel = v["primary"].astype(bool)
        v.loc[sel, "verdict"] = stats.NO_DIFF
        v.loc[sel, "mde_pct"] = 20.0
        real = memory.pressure_reps
        memory.pressure_reps = lambda run: 16
        try:
            line = memory.undecided_line(self.data, v)
        finally:
            memory.pressure_reps = real
        self.assertIn("at 16 reps a side; the widest would take about 64 reps a side", line)
        self.assertNotIn("--set writeback", line)

    def test_the_timeline_made_and_linked(self):
        kinds = {f["kind"] for f in self.p.figures}
        self.assertIn("pressure-timeline", kinds)
        self.assertEqual(self.p.errors, [])
        # the report shows it in the memory section
        (fig,) = [f for f in self.p.figures if f["kind"] == "pressure-timeline"]
        self.assertEqual((fig["question"], fig["name"]),
                         ("memory", "memory-pressure-timeline-full24"))

    def test_level_table_rows_as_wide_as_its_header(self):
        # a second boot of each kernel (its rows copied, 2 % faster): the
        # spread row appears; it and the hog row fill every column
        two = copy.copy(self.data)
        t = self.data.tidy
        again = t[t["pressure"] == "full24"].assign(rep=2, boot=t["boot"] + 1000,
                                                    value=t["value"] * 1.02)
        two.tidy = pd.concat([t, again], ignore_index=True)
        tidy.resolve(two, two.lab)
        text = "\n".join(memory.section(two, self.verdicts))
        self.assertIn("spread of repeated boots", text)
        for block in text.split("\n\n"):
            rows = [r for r in block.splitlines() if r.startswith("|")]
            for row in rows:
                self.assertEqual(row.count("|"), rows[0].count("|"), row)

    def test_no_dose_response_of_one_level(self):
        # one level is one point a kernel: no response to draw
        self.assertNotIn("dose-response", {f["kind"] for f in self.p.figures})
        self.assertNotIn("memory-dose-response", self.text)

    def test_dose_data_is_the_pressure_job(self):
        # the same boots at a second level (their rows copied as full12):
        # two points a kernel, the figure is drawn
        two = copy.copy(self.data)
        t = self.data.tidy
        two.tidy = pd.concat([t, t[t["pressure"] == "full24"].assign(pressure="full12")],
                             ignore_index=True)
        tidy.resolve(two, two.lab)
        with tempfile.TemporaryDirectory() as tmp:
            p = plots.Plotter(tmp, plots.GP_DIR)
            memory.dose_response(two, p)
            self.assertEqual([f["kind"] for f in p.figures], ["dose-response"])
            with open(os.path.join(tmp, "data", "memory-dose-response-ram-bounce.dat"),
                      encoding="utf-8") as f:
                blocks = [b for b in f.read().split("\n\n\n") if b.strip()]
        # 4 panels x 3 variants; write_bw of pre-fixed at 24 MiB, in MB/s
        self.assertEqual(len(blocks), 12)
        bw = t[(t["variant"] == "pre-fixed") & (t["metric"] == "write_bw")]["value"].iloc[0]
        self.assertIn(f"24 {bw * 1e-6:.6g}", blocks[1])
        self.assertEqual(len(blocks[1].splitlines()), 3)   # the comment, two levels
