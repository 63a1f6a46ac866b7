# SPDX-License-Identifier: GPL-2.0
"""The dose a pressure job started from (guest/init's dose file,
rawfiles.read_dose): read into metrics beside the job's results, its
watermarks in kB, and a freeze outside lowhog's band warned about,
never taken for the target."""
import os
import shutil
import tempfile
import unittest

import helpers as H
from analysis import rawfiles as R, tidy

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

    def test_read(self):
        p = os.path.join(self.tmp.name, "dose")
        with open(p, "w") as f:
            f.write(DOSE)
        d = R.read_dose(p)
        self.assertEqual(d["lowfree_kb"], 24392)
        self.assertEqual(d["highfree_kb"], 10020)
        self.assertIs(d["settled"], True)
        self.assertEqual((d["normal_min_kb"], d["highmem_high_kb"]), (935 * 4, 764 * 4))
        self.assertIsNone(R.read_dose(os.path.join(self.tmp.name, "none")))

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

    def test_a_run_with_doses_loads(self):
        # the job's state is read apart from its metrics: a dose file must
        # not break it (a run of pressure boots)
        import glob
        run = os.path.join(self.tmp.name, "run")
        shutil.copytree(os.path.join(H.HERE, "fixtures", "pressure-run"), run)
        for d in glob.glob(os.path.join(run, "boots", "*", "guest", "jobs", "*")):
            with open(os.path.join(d, "dose"), "w") as f:
                f.write(DOSE)
        r = tidy.load_run(run)
        got = r.tidy[r.tidy["metric"] == "dose_lowfree_kb"]["value"]
        self.assertEqual(len(got), 3)
        self.assertTrue((got == 24392).all())

    def test_unsettled_is_warned(self):
        _, info, _ = tidy.job_metrics(self.job(DOSE.replace(" children=", " unsettled children=")))
        self.assertTrue(any("unsettled" in w for w in info["warnings"]), info["warnings"])


if __name__ == "__main__":
    unittest.main()
