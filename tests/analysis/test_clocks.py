# SPDX-License-Identifier: GPL-2.0
"""Clocks (bench/lab.conf "clock"): which clock each disk of a run ran
under, as meta.json "disk_clocks" records it; the icount of a history row
is its disk's, and report.md says which disks ran under which clock."""
import json
import os
import tempfile
import unittest

import helpers as H
from analysis import headline, history, labconf, report, tidy

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
    H.write_text(os.path.join(root, "meta.json"), json.dumps(meta) + "\n")
    return tidy.load_run(root)


class LabConfClocks(unittest.TestCase):
    def test_disk_clock_from_meta(self):
        meta = {"clock": "host", "disk_clocks": {"ram-bounce": "insn", "ram": "insn",
                                                 "virtio": "host"}}
        self.assertEqual(labconf.disk_clock(meta, LAB, "ram-bounce"), "insn")
        # a within-boot ratio disk takes its first disk's clock
        self.assertEqual(labconf.disk_clock(meta, LAB, "ram-bounce/ram"), "insn")
        self.assertEqual(labconf.disk_clock(meta, LAB, "virtio"), "host")
        # not planned: the run's default clock
        self.assertEqual(labconf.disk_clock(meta, LAB, "usb-pio"), "host")
        self.assertEqual(labconf.disk_icount(meta, LAB, "ram"), "3")
        self.assertEqual(labconf.disk_icount(meta, LAB, "virtio"), "")

    def test_run_from_before_clocks(self):
        # no clock in meta.json: its run-wide icount stands
        self.assertEqual(labconf.disk_clock({"icount": "3"}, LAB, "virtio"), "")
        self.assertEqual(labconf.disk_icount({"icount": "3"}, LAB, "virtio"), "3")
        self.assertEqual(labconf.disk_icount({}, LAB, "virtio"), "")


class RunClocks(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_history_icount_per_disk(self):
        run = clock_run(os.path.join(self.tmp.name, "r"),
                        {"clock": "host", "disk_clocks": {"virtio": "insn", "usb-pio": "host"}})
        rows = history.run_rows(run, n_boot=50)
        icount = set(zip(rows["disk"], rows["icount"]))
        self.assertEqual(icount, {("virtio", "3"), ("usb-pio", "")})

    def test_report_clocks_line(self):
        run = clock_run(os.path.join(self.tmp.name, "r"),
                        {"clock": "host", "disk_clocks": {"virtio": "insn", "usb-pio": "host"}})
        line = report.clocks_line(run)
        self.assertIn("usb-pio: " + LAB["clock"]["host"]["label"], line)
        self.assertIn("virtio: " + LAB["clock"]["insn"]["label"], line)
        old = clock_run(os.path.join(self.tmp.name, "old"), {})
        self.assertIsNone(report.clocks_line(old))


class UnseenBouncePages(unittest.TestCase):
    """A peak of 0 bounce pages on a one-vCPU clock is "not seen": the
    sampler cannot run while a synchronous ram disk I/O holds its page."""

    class FakeRun:
        path = None
        meta = {"clock": "host", "disk_clocks": {"ram-bounce": "insn", "usb-pio": "host"}}

    def test_note(self):
        run = self.FakeRun()
        self.assertIn("not seen, not absent", headline._unseen_note(run, "ram-bounce", 0))
        self.assertEqual(headline._unseen_note(run, "ram-bounce", 3), "")
        self.assertEqual(headline._unseen_note(run, "usb-pio", 0), "")


if __name__ == "__main__":
    unittest.main()
