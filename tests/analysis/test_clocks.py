# SPDX-License-Identifier: GPL-2.0
"""Clocks (bench/lab.conf "clock"): which clock each disk of a run ran
under, as meta.json "disk_clocks" records it; the icount of a history row
is its disk's, and report.md says which disks ran under which clock."""
import os
import tempfile
import unittest

import pandas as pd

import helpers as H
from analysis import headline, report, tidy
from lab import labconf
from analysis.history import runs

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
                self.assertEqual(run.exact_disks, {"virtio", "usb-pio"} if icount else set())


class RunClocks(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_history_icount_per_disk(self):
        run = clock_run(os.path.join(self.tmp.name, "r"),
                        {"clock": "host", "disk_clocks": {"virtio": "insn", "usb-pio": "host"}})
        rows = runs.rows(run, n_boot=50)
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
        self.assertIn("not seen, not absent", headline._unseen_note(run, "ram-bounce", 0))
        self.assertEqual(headline._unseen_note(run, "ram-bounce", 3), "")
        self.assertEqual(headline._unseen_note(run, "usb-pio", 0), "")


class ControlsByClock(unittest.TestCase):
    """A control pair on an instruction-time disk has no noise: a
    significant row there is the kernels' difference, named with its size
    (relevant or negligible, never "significant" below its smallest effect
    of interest); the noise check is about host-time rows only."""

    class FakeRun:
        exact_disks = {"ram"}

    @staticmethod
    def verdicts(rows):
        return pd.DataFrame([dict(control=True, primary=True, p_adjusted=p, verdict=v,
                                  ratio=r, disk=d) for d, v, r, p in rows])

    def test_exact_difference_is_not_noise(self):
        v = self.verdicts([("ram", "slower", 0.998, 0.01), ("ram", "no significant difference",
                                                             1.0, 1.0),
                           ("virtio", "no significant difference", 1.05, 0.8)])
        ok, line = report.controls_line(v, self.FakeRun())
        self.assertTrue(ok)
        self.assertIn("host time: 0 of 1 A/A rows relevant", line)
        self.assertIn("instruction time (ram): 0 of 2 rows relevant, 1 negligible "
                      "(at most 0.2%", line)
        # without the run's clocks: the plain noise check, which fails
        ok, line = report.controls_line(v)
        self.assertFalse(ok)
        self.assertIn("0 of 3 A/A rows relevant, 1 negligible", line)

    def test_exact_relevant_difference_named(self):
        v = self.verdicts([("ram", "slower", 0.95, 0.01),
                           ("virtio", "no significant difference", 1.05, 0.8)])
        ok, line = report.controls_line(v, self.FakeRun())
        self.assertTrue(ok)
        self.assertIn("1 of 1 rows relevant (up to 5%: real differences", line)

    def test_host_noise_still_fails(self):
        v = self.verdicts([("ram", "no significant difference", 1.0, 1.0),
                           ("virtio", "costlier", 1.23, 0.03)])
        ok, line = report.controls_line(v, self.FakeRun())
        self.assertFalse(ok)
        self.assertIn("host-time verdicts are NOT to be trusted", line)


if __name__ == "__main__":
    unittest.main()
