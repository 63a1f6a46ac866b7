# SPDX-License-Identifier: GPL-2.0
"""The time budget of one I/O (budget.py): /proc/stat's states per I/O,
their sum against the wall time, and where a bounce's added time went;
only on one-vCPU disks, where the states add up to the wall time."""
import glob
import json
import os
import tempfile
import unittest

import helpers as H
from analysis import budget, tidy

JOB = "lat-randread-4k-qd1"
# (user, system, idle) ticks of /proc/stat over each job, per variant
TICKS = {"pre": (40, 200, 10), "pre-fixed": (60, 260, 12)}


def budget_run(root, clock):
    boots = [dict(variant=v, disk="usb-pio", pressure="none", rep=r,
                  jobs=[dict(device="usb", job=JOB, bounces=0 if v == "pre" else 100)])
             for r in (1, 2) for v in TICKS]
    H.make_run(root, boots)
    for jdir in glob.glob(os.path.join(root, "boots", "*", "guest", "jobs", "*")):
        v = "pre-fixed" if "pre-fixed" in jdir else "pre"
        u, s, i = TICKS[v]
        H.write_text(os.path.join(jdir, "before", "stat"), "cpu 1000 0 2000 3000 0 0 0 0\n")
        H.write_text(os.path.join(jdir, "after", "stat"),
                     f"cpu {1000 + u} 0 {2000 + s} {3000 + i} 0 0 0 0\n")
    meta = {"run_id": "b", "status": "complete", "clock": "host",
            "disk_clocks": {"usb-pio": clock}, "accel": "tcg"}
    H.write_text(os.path.join(root, "meta.json"), json.dumps(meta) + "\n")
    return tidy.load_run(root)


def value(run, variant, metric):
    t = run.tidy
    return float(t[(t["variant"] == variant) & (t["metric"] == metric)]["value"].median())


class Budget(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_states_per_io(self):
        run = budget_run(os.path.join(self.tmp.name, "r"), "insn")
        fio = glob.glob(os.path.join(run.path, "boots", "*-pre-usb-pio-*", "guest", "jobs", "*",
                                     "fio.json"))[0]
        with open(fio, encoding="utf-8") as f:
            ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in json.load(f)["jobs"])
        self.assertAlmostEqual(value(run, "pre", "time_sys_us_per_io"), 200 * 1e4 / ios, places=6)
        self.assertAlmostEqual(value(run, "pre", "time_user_us_per_io"), 40 * 1e4 / ios, places=6)
        self.assertAlmostEqual(value(run, "pre", "time_idle_us_per_io"), 10 * 1e4 / ios, places=6)
        rows = {r[2]: r for r in budget.rows(run)}
        wall, user, sys_, irq, idle, outside = rows["pre"][3:]
        self.assertAlmostEqual(outside, user + sys_ + irq + idle - wall)

    def test_added_time_and_what_the_cpu_measure_sees(self):
        run = budget_run(os.path.join(self.tmp.name, "r"), "insn")
        text = "\n".join(budget.section(run))
        self.assertIn("| usb-pio | lat-randread-4k-qd1 | pre-fixed |", text)
        line = [x for x in budget.section(run) if x.startswith("- usb-pio")][0]
        self.assertIn("pre-fixed adds", line)
        self.assertIn("over pre", line)
        sys_added = value(run, "pre-fixed", "time_sys_us_per_io") - value(run, "pre", "time_sys_us_per_io")
        self.assertIn(f"sees {sys_added:.1f} of it", line)

    def test_no_budget_with_two_vcpus(self):
        run = budget_run(os.path.join(self.tmp.name, "r"), "host")
        self.assertEqual(budget.section(run), [])


if __name__ == "__main__":
    unittest.main()
