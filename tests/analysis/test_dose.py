# SPDX-License-Identifier: GPL-2.0
"""The dose a pressure job started from (guest/init's dose file,
rawfiles.read_dose): read into metrics beside the job's results, its
watermarks in kB, its offsets from the level's targets (tidy.dose_check),
and a job off its band in either zone, or a hog that did not settle,
excluded from the verdicts and listed, never taken for the level."""
import os
import shutil
import tempfile
import unittest

import helpers as H
from analysis import rawfiles as R, stats, tidy
from lab import labconf as L

JOB = os.path.join(H.HERE, "fixtures", "pressure-run", "boots",
                   "011-pre-fixed-ram-bounce+ram-full24-r1", "guest", "jobs",
                   "01-ram-bounce-pressure-writeback")
DOSE = """frozen LowFree=24388 kB target=24576 kB HighFree=10000 kB children=284 pte_pages=207385
HighFree:          10020 kB
LowFree:           24392 kB
Normal min 935
Normal low 1168
Normal high 1401
HighMem min 128
HighMem low 446
HighMem high 764
"""
# A dose file once both zones are regulated (lowhog -H, guest/init):
# within the band of 512 kB
NEW = """lowhog frozen LowFree=24400 kB target=24576 kB HighFree=19500 kB high_target=19440 kB high_held=20000 kB children=280 pte_pages=5000
target lowfree_kb=24576 highfree_kb=19440 settle_band_kb=256
LowFree:           24400 kB
HighFree:          19500 kB
Normal min 1234
Normal low 1500
Normal high 1800
HighMem min 128
HighMem low 500
HighMem high 860
"""
LAB = L.parse("pressure full24 full 24 x\npressure low24 lowmem 24 x\n"
              "default highfree_target_mb 16\n")


class DoseTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def job(self, dose):
        """A copy of a real pressure job with this dose file."""
        boot = os.path.join(self.tmp.name, "boot")
        d = os.path.join(boot, "guest", "jobs", os.path.basename(JOB))
        shutil.copytree(JOB, d)
        if dose is not None:
            with open(os.path.join(d, "dose"), "w") as f:
                f.write(dose)
        return d

    def read(self, text):
        p = os.path.join(self.tmp.name, "dose")
        with open(p, "w") as f:
            f.write(text)
        return R.read_dose(p)

    def test_read_old(self):
        d = self.read(DOSE)
        self.assertEqual(d["lowfree_kb"], 24392)
        self.assertEqual(d["highfree_kb"], 10020)
        # a "frozen" line without its hog's name is lowhog's
        self.assertEqual(d["hogs"], {"lowhog": {"settled": True, "target_kb": 24576}})
        self.assertEqual(d["target"], {})
        self.assertEqual((d["normal_min_kb"], d["highmem_high_kb"]), (935 * 4, 764 * 4))
        self.assertIsNone(R.read_dose(os.path.join(self.tmp.name, "none")))

    def test_read_both_zones(self):
        d = self.read(NEW.replace(" children=", " unsettled children="))
        self.assertEqual(d["hogs"], {"lowhog": {"settled": False, "target_kb": 24576}})
        self.assertEqual(d["target"], {"lowfree_kb": 24576, "highfree_kb": 19440,
                                       "settle_band_kb": 256})
        self.assertEqual((d["lowfree_kb"], d["highfree_kb"]), (24400, 19500))

    def test_check_against_the_target_line(self):
        off, why = tidy.dose_check(self.read(NEW), LAB, "full24")
        self.assertEqual(off, {"highfree": 60, "lowfree": -176})
        self.assertEqual(why, "")
        off, why = tidy.dose_check(self.read(NEW.replace("HighFree:          19500",
                                                         "HighFree:          20500")), LAB, "full24")
        self.assertEqual(why, "dose off band: HighFree 20,500 kB, 1,060 kB over its target "
                         "19,440 kB (band ±512 kB)")
        # unsettled, but within the band: measured; off it, the reason says both
        unsettled = NEW.replace(" children=", " unsettled children=")
        self.assertEqual(tidy.dose_check(self.read(unsettled), LAB, "full24")[1], "")
        _, why = tidy.dose_check(self.read(unsettled.replace("HighFree:          19500",
                                                             "HighFree:          20500")),
                                 LAB, "full24")
        self.assertEqual(why, "dose off band: HighFree 20,500 kB, 1,060 kB over its target "
                         "19,440 kB (band ±512 kB); lowhog unsettled")
        # HighFree not held (highfree_kb=0): only LowFree is checked
        off, why = tidy.dose_check(self.read(NEW.replace("highfree_kb=19440", "highfree_kb=0")),
                                   LAB, "full24")
        self.assertEqual((off, why), ({"lowfree": -176}, ""))

    def test_check_derives_an_old_files_targets_from_the_level(self):
        # no target line: LowFree the level's 24 MiB, HighFree the HighMem
        # high watermark (764 pages) plus highfree_target_mb
        off, why = tidy.dose_check(self.read(DOSE), LAB, "full24")
        self.assertEqual(off, {"highfree": 10020 - (764 * 4 + 16 * 1024), "lowfree": 24392 - 24576})
        self.assertEqual(why, "dose off band: HighFree 10,020 kB, 9,420 kB under its target "
                         "19,440 kB (band ±512 kB)")
        # a lowmem level: memhog did not run, HighFree is no part of it
        self.assertEqual(tidy.dose_check(self.read(DOSE), LAB, "low24"), ({"lowfree": -184}, ""))
        # the band is the run's lab.conf's where it has one
        wide = L.parse("pressure full24 full 24 x\ndefault highfree_target_mb 16\n"
                       "default dose_band_kb 10000\n")
        self.assertEqual(tidy.dose_check(self.read(DOSE), wide, "full24")[1], "")

    def test_metrics_beside_the_job(self):
        rows, info, _ = tidy.job_metrics(self.job(DOSE))
        got = dict(rows)
        self.assertEqual(got["dose_lowfree_kb"], 24392)
        self.assertEqual(got["dose_highfree_kb"], 10020)
        self.assertEqual(got["dose_normal_min_kb"], 935 * 4)
        self.assertEqual(got["dose_highmem_min_kb"], 128 * 4)
        self.assertFalse(info["warnings"])
        # a writeback job's pressure totals per MiB written
        self.assertIn("allocstall_per_mib_written", got)

    def test_no_file_no_rows(self):
        rows, _, _ = tidy.job_metrics(self.job(None))
        self.assertFalse([m for m, _ in rows if m.startswith("dose_")])

    def run_with(self, dose, rate=None):
        """The pressure fixture run, each job with dose (a text, or
        {variant: text}) and its reader offered rate IOPS."""
        import glob
        import json
        run = tempfile.mkdtemp(dir=self.tmp.name)
        shutil.copytree(os.path.join(H.HERE, "fixtures", "pressure-run"), run, dirs_exist_ok=True)
        for d in glob.glob(os.path.join(run, "boots", "*", "guest", "jobs", "*")):
            variant = d.split(os.sep)[-4].split("-", 1)[1].rsplit("-ram-bounce", 1)[0]
            with open(os.path.join(d, "dose"), "w") as f:
                f.write(dose[variant] if isinstance(dose, dict) else dose)
            if rate:
                fio = H.read_json(os.path.join(d, "fio.json"))
                for j in fio["jobs"]:
                    if j["jobname"] == "reader":
                        j["job options"]["rate_iops"] = str(rate)
                H.write_text(os.path.join(d, "fio.json"), json.dumps(fio))
        return tidy.load_run(run)

    def test_memory_section_says_the_dose_and_the_reader(self):
        from analysis import md
        from analysis.questions import memory
        off = NEW.replace("HighFree:          19500", "HighFree:          18000")
        r = self.run_with({"pre": NEW, "pre-fixed": NEW, "post": off}, rate=1500)
        text = "\n".join(memory.dose_lines(r))
        self.assertIn("| variant | jobs | excluded | HighFree − target | LowFree − target | reader |",
                      text)
        # pre-fixed's reader made 1578 IO/s, pre's fewer
        self.assertIn("| pre-fixed | 1 | 0 | 60 (60 to 60) | -176 (-176 to -176) | "
                      "ram-bounce kept up |", text)
        iops = r.tidy[(r.tidy["variant"] == "pre") & (r.tidy["metric"] == "read_iops")]["value"]
        short = 100 - 100 * float(iops.iloc[0]) / 1500
        self.assertGreater(short, 1)
        self.assertIn(f"| pre | 1 | 0 | 60 (60 to 60) | -176 (-176 to -176) | "
                      f"ram-bounce fell behind by {md.fmt(short, 2)}% |", text)
        # post's job excluded: its dose said, its reader not measured
        self.assertIn("| post | 1 | 1 | -1440 (-1440 to -1440) | -176 (-176 to -176) | "
                      "no rate offered |", text)
        self.assertIn("**1 of 3 jobs were off their band", text)
        within = "\n".join(memory.dose_lines(self.run_with(NEW)))
        self.assertIn("Every job's dose was within ±512 kB of its targets in both zones.", within)

    def test_a_job_within_band_is_measured(self):
        r = self.run_with(NEW)
        self.assertEqual(set(r.jobs["state"]), {"ok"})
        self.assertTrue(r.excluded.empty)
        got = r.tidy[r.tidy["metric"] == "dose_highfree_off_kb"]["value"]
        self.assertEqual(list(got), [60.0] * 3)

    def test_a_job_off_band_is_excluded_and_listed(self):
        # the old guest's doses: HighFree 9 MiB short of the level's
        r = self.run_with(DOSE)
        self.assertEqual(set(r.jobs["state"]), {"excluded"})
        self.assertEqual(list(r.excluded["kind"]), ["excluded job"] * 3)
        self.assertTrue(r.excluded["reason"].str.startswith("dose off band: HighFree 10,020 kB").all())
        # its dose stays, its results do not reach a verdict
        self.assertEqual(set(r.tidy["metric"]), {"dose_lowfree_kb", "dose_highfree_kb",
                                                 "dose_normal_min_kb", "dose_highmem_min_kb",
                                                 "dose_highfree_off_kb", "dose_lowfree_off_kb"})
        v = stats.verdicts(r, n_boot=50)
        self.assertFalse(v["metric"].isin(["write_bw", "read_lat_p99_us"]).any())

    def test_instances_of_a_job_in_a_boot_are_averaged(self):
        """A pressure job run twice in a boot (more writebacks per boot,
        each from its own dose) is one value per boot: their mean."""
        import glob
        import json
        one = self.run_with(NEW)
        bw = lambda r: r.tidy[(r.tidy["metric"] == "write_bw") &
                              (r.tidy["variant"] == "pre-fixed")]["value"]
        first = float(bw(one).iloc[0])
        run = tempfile.mkdtemp(dir=self.tmp.name)
        shutil.copytree(os.path.join(H.HERE, "fixtures", "pressure-run"), run, dirs_exist_ok=True)
        for d in glob.glob(os.path.join(run, "boots", "*", "guest", "jobs", "01-*")):
            H.write_text(os.path.join(d, "dose"), NEW)
            twin = d.replace("/01-", "/02-")
            shutil.copytree(d, twin)
            fio = H.read_json(os.path.join(twin, "fio.json"))
            for j in fio["jobs"]:
                j["write"]["bw_bytes"] *= 2
                j["write"]["bw"] *= 2
            H.write_text(os.path.join(twin, "fio.json"), json.dumps(fio))
        got = bw(tidy.load_run(run))
        self.assertEqual(len(got), 1)
        self.assertAlmostEqual(float(got.iloc[0]), 1.5 * first, places=3)
        # the dose table gives each instance's own dose, not their mean
        from analysis.questions import memory
        for d in glob.glob(os.path.join(run, "boots", "*", "guest", "jobs", "02-*")):
            H.write_text(os.path.join(d, "dose"),
                         NEW.replace("HighFree:          19500", "HighFree:          19700"))
        r = tidy.load_run(run)
        self.assertEqual(sorted(r.jobs["dose_highfree_off_kb"]), [60.0] * 3 + [260.0] * 3)
        self.assertIn("| pre-fixed | 2 | 0 | 160 (60 to 260) |", "\n".join(memory.dose_lines(r)))

    def test_unsettled_within_band_is_measured_with_a_warning(self):
        _, info, _ = tidy.job_metrics(self.job(NEW.replace(" children=", " unsettled children=")),
                                      pressure="full24")
        self.assertEqual(info["dose_off"], "")
        self.assertTrue(any("froze unsettled" in w for w in info["warnings"]))


if __name__ == "__main__":
    unittest.main()
