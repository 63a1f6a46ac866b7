# SPDX-License-Identifier: GPL-2.0
"""Clocks (bench/lab.conf "clock"): which clock each disk of a run ran
under, as meta.json "disk_clocks" records it; the icount of a history row
is its disk's, and report.md says which disks ran under which clock."""
import os
import tempfile
import unittest

import pandas as pd

import helpers as H
from analysis import report, tidy
from analysis.questions import cost as headline
from analysis import stats as S
from lab import labconf
from tracker import table

LAB = labconf.load()


def clock_run(root, meta_extra):
    """pre and post, 2 reps, on virtio and usb-pio, with meta.json."""
    boots = []
    for rep in (1, 2):
        for v in ("pre", "post"):
            boots.append(dict(variant=v, disk="virtio", pressure="none", rep=rep,
                              jobs=[dict(device="virtio", job="lat-randread-4k-qd1")]))
            boots.append(dict(variant=v, disk="usb-pio", pressure="none", rep=rep,
                              jobs=[dict(device="usb", job="lat-randread-4k-qd1")]))
    H.make_run(root, boots)
    meta = {"run_id": os.path.basename(root), "status": "complete",
            "started": "2026-12-04T10:00:00Z", "accel": "tcg", "memhog_mb": 1088,
            "icount": "", **meta_extra}
    H.write_meta(root, meta)
    return tidy.load_run(root)


class LabConfClocks(unittest.TestCase):
    def test_disk_clock_from_meta(self):
        meta = {"clock": "host", "disk_clocks": {"ram-bounce": "insn", "ram": "insn",
                                                 "virtio": "host"}}
        self.assertEqual(labconf.disk_clock(meta, "ram-bounce"), "insn")
        # a within-boot ratio disk takes its first disk's clock
        self.assertEqual(labconf.disk_clock(meta, "ram-bounce/ram"), "insn")
        self.assertEqual(labconf.disk_clock(meta, "virtio"), "host")
        # not planned: the run's default clock
        self.assertEqual(labconf.disk_clock(meta, "usb-pio"), "host")
        self.assertEqual(labconf.disk_icount(meta, LAB, "ram"), "3")
        self.assertEqual(labconf.disk_icount(meta, LAB, "virtio"), "")

    def test_run_from_before_clocks(self):
        # no clock in meta.json: bench/upgrade-run gives each disk the
        # clock of the run-wide icount (none: the one without)
        with tempfile.TemporaryDirectory() as tmp:
            for icount, clock in (("3", "insn"), ("", "host")):
                run = clock_run(os.path.join(tmp, clock), {"icount": icount})
                self.assertEqual(run.disk_clocks, {"virtio": clock, "usb-pio": clock})
                # QEMU completes both disks' I/O on host time: neither
                # repeats, whatever the clock
                self.assertEqual(run.exact_disks, set())


class RunClocks(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_history_icount_per_disk(self):
        run = clock_run(os.path.join(self.tmp.name, "r"),
                        {"clock": "host", "disk_clocks": {"virtio": "insn", "usb-pio": "host"}})
        rows = table.rows(run, n_boot=50)
        icount = set(zip(rows["disk"], rows["icount"]))
        self.assertEqual(icount, {("virtio", "3"), ("usb-pio", "")})

    def test_report_clocks_line(self):
        run = clock_run(os.path.join(self.tmp.name, "r"),
                        {"clock": "host", "disk_clocks": {"virtio": "insn", "usb-pio": "host"}})
        line = report.clocks_line(run)
        self.assertIn("usb-pio: " + LAB["clock"]["host"]["label"], line)
        self.assertIn("virtio: " + LAB["clock"]["insn"]["label"], line)
        old = clock_run(os.path.join(self.tmp.name, "old"), {})
        self.assertEqual(report.clocks_line(old), "Clocks: usb-pio, virtio: " +
                         LAB["clock"]["host"]["label"] + ".")


class UnseenBouncePages(unittest.TestCase):
    """A peak of 0 bounce pages on a one-vCPU clock is "not seen": the
    sampler cannot run while a synchronous ram disk I/O holds its page."""

    class FakeRun:
        disk_clocks = {"ram-bounce": "insn", "usb-pio": "host"}
        exact_disks = {"ram-bounce"}

    def test_note(self):
        run = self.FakeRun()
        self.assertIn("not seen, not absent", headline.unseen_note(run, "ram-bounce", 0))
        self.assertEqual(headline.unseen_note(run, "ram-bounce", 3), "")
        self.assertEqual(headline.unseen_note(run, "usb-pio", 0), "")


class ControlsByClock(unittest.TestCase):
    """On an instruction-time disk a boot repeats to the instruction: its
    A/A rows are the split halves (and copies of distinct seeds), whose
    difference says the clock's verdicts are not to be trusted; a kernel
    pair on its control disk is the kernels' difference, called real only
    where both kernels' split halves agree. On host time every control row
    is a noise check."""

    class FakeRun:
        exact_disks = {"ram"}
        performance_jobs = question_jobs = {"j"}

    @staticmethod
    def verdicts(rows):
        """rows: (disk, a, b, verdict, ratio, exact, note)."""
        out = []
        for d, a, b, v, r, exact, note in rows:
            out.append(dict(control=True, primary=True, metric="read_iops", job="j",
                            pressure="none", disk=d, a=a, b=b, verdict=v, ratio=r, note=note,
                            pair_kind="A/B" if a.split("[")[0] != b.split("[")[0] else "A/A",
                            analysis="exact: bound ±0.2%" if exact else "unpaired",
                            p_value=float("nan") if exact or S.is_too_few(v) else 0.01,
                            p_adjusted=float("nan") if exact or S.is_too_few(v) else 0.01))
        return S.relevance(pd.DataFrame(out))

    HALVES = [("ram", "pre[odd]", "pre[even]", S.NO_DIFF, 1.0, True, "seeds 1 against 2: distinct"),
              ("ram", "pre-fixed[odd]", "pre-fixed[even]", S.NO_DIFF, 1.0, True,
               "seeds 1 against 2: distinct")]

    def test_exact_difference_real_where_halves_agree(self):
        v = self.verdicts([("ram", "pre", "pre-fixed", "slower", 0.95, True, ""),
                           ("ram", "pre", "pre-fixed", "slower", 0.998, True, ""),
                           ("virtio", "pre", "pre-fixed", S.NO_DIFF, 1.05, False, "")] +
                          self.HALVES)
        ok, line = report.controls_line(v, self.FakeRun())
        self.assertTrue(ok)
        self.assertIn("I/O on host time (virtio): 0 of 1 A/A rows relevant", line)
        self.assertIn("instruction time (ram): 2 A/A rows with distinct seeds (split halves), "
                      "0 relevant", line)
        self.assertIn("kernel pairs on a control disk (ram): 1 of 2 rows relevant (1 up to 5%: "
                      "real differences between the kernels", line)
        self.assertIn("1 negligible (at most 0.2%", line)
        # without the run's clocks: the plain noise check, which fails
        ok, line = report.controls_line(v)
        self.assertFalse(ok)
        self.assertIn("1 of 5 A/A rows relevant, 1 negligible", line)

    def test_undecided_halves_are_not_real(self):
        few = S.TOO_FEW + " (min p = 1)"
        v = self.verdicts([("ram", "pre", "pre-fixed", "slower", 0.95, True, ""),
                           self.HALVES[0],
                           ("ram", "pre-fixed[odd]", "pre-fixed[even]", few, 1.0, False, "")])
        ok, line = report.controls_line(v, self.FakeRun())
        self.assertTrue(ok)
        self.assertIn("0 relevant, 1 too few repetitions", line)
        self.assertIn("1 of 1 rows relevant (1 whose split halves could not be decided: "
                      "not called real)", line)
        self.assertNotIn("real differences", line)

    def test_halves_that_differ(self):
        # the seeds move a cell by 0.4 %: a floor said with its size, the
        # kernel pair of that cell not called real
        v = self.verdicts([("ram", "pre", "pre-fixed", "slower", 0.95, True, ""),
                           ("ram", "pre[odd]", "pre[even]", "faster", 1.004, True, ""),
                           self.HALVES[1]])
        ok, line = report.controls_line(v, self.FakeRun())
        self.assertTrue(ok)
        self.assertIn("0 relevant, 1 negligible (at most 0.4%: what the seeds move those cells "
                      "by, below the smallest effect of interest)", line)
        self.assertIn("(1 whose split halves differ: not called real)", line)
        # by 2 %, beyond the smallest effect of interest: do not trust
        v = self.verdicts([("ram", "pre[odd]", "pre[even]", "faster", 1.02, True, ""),
                           self.HALVES[1]])
        ok, line = report.controls_line(v, self.FakeRun())
        self.assertFalse(ok)
        self.assertIn("1 relevant: the instruction-time verdicts are NOT to be trusted", line)

    def test_same_seeds_are_not_a_control(self):
        v = self.verdicts([("ram", "pre", "pre.2", S.NO_DIFF, 1.0, True,
                            S.SAME_SEEDS + " (seeds 1 against 1)")])
        ok, line = report.controls_line(v, self.FakeRun())
        self.assertIsNone(ok)
        self.assertIn("0 A/A rows with distinct seeds", line)
        self.assertIn("1 rows of copies with the same seeds (cannot differ under an exact "
                      "clock: not counted)", line)

    def test_host_noise_still_fails(self):
        v = self.verdicts([("ram", "pre", "pre-fixed", S.NO_DIFF, 1.0, True, ""),
                           ("virtio", "pre", "pre-fixed", "costlier", 1.23, False, "")])
        ok, line = report.controls_line(v, self.FakeRun())
        self.assertFalse(ok)
        self.assertIn("those verdicts are NOT to be trusted", line)


if __name__ == "__main__":
    unittest.main()
