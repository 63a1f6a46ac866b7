# SPDX-License-Identifier: GPL-2.0
"""Monitors come in pairs: a guest piece guest/monitors/NN-NAME.sh and a
reader bench/analysis/monitors/NAME.py. Fails when one of a pair is
missing, when a piece defines a hook /init does not call, when a reader
gives a metric metrics.py does not define (or another reader gives too),
and when a reader strays from what it declares or turns a missing file
into a number."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import helpers as H
from analysis import metrics as M
from analysis import monitors as MON
from analysis import rawfiles as R
from analysis import tidy

GUEST_DIR = os.path.join(H.ROOT, "guest", "monitors")
INIT = os.path.join(H.ROOT, "guest", "init")
HOOKS = ("boot", "setup", "pressure", "before", "start", "stop", "after", "end")
PIECE = re.compile(r"^(\d\d)-([a-z0-9]+(?:-[a-z0-9]+)*)\.sh$")


def _pieces():
    return sorted(f for f in os.listdir(GUEST_DIR) if f.endswith(".sh"))


class Pairs(unittest.TestCase):
    def test_every_piece_has_a_reader_and_every_reader_a_piece(self):
        lonely, orphans = MON.unpaired(GUEST_DIR)
        self.assertEqual(lonely, [], "guest pieces without a reader "
                         "(bench/analysis/monitors/NAME.py)")
        self.assertEqual(orphans, [], "readers without their guest piece "
                         "(guest/monitors/NN-NAME.sh)")
        self.assertEqual(len(MON.READERS), len(_pieces()))
        self.assertGreaterEqual(len(MON.READERS), 6)

    def test_the_check_catches_a_lonely_piece_and_an_orphan_reader(self):
        with tempfile.TemporaryDirectory() as tmp:
            for f in _pieces():
                shutil.copy(os.path.join(GUEST_DIR, f), tmp)
            open(os.path.join(tmp, "70-new-thing.sh"), "w").close()
            os.remove(os.path.join(tmp, "30-labmon.sh"))
            lonely, orphans = MON.unpaired(tmp)
        self.assertEqual(lonely, ["70-new-thing.sh"])
        self.assertEqual(orphans, ["labmon"])

    def test_readers_run_in_the_order_of_their_pieces(self):
        self.assertEqual([r.GUEST for r in MON.READERS], _pieces())


class GuestPieces(unittest.TestCase):
    def test_names_and_order_numbers(self):
        numbers = []
        for f in _pieces():
            m = PIECE.match(f)
            self.assertIsNotNone(m, f"{f}: not NN-NAME.sh (lower case, digits, -)")
            numbers.append(m.group(1))
        self.assertEqual(len(numbers), len(set(numbers)), "two pieces share an NN")

    def test_init_calls_these_hooks(self):
        with open(INIT, encoding="utf-8") as f:
            m = re.search(r"^MONITOR_HOOKS='([^']*)'", f.read(), re.M)
        self.assertIsNotNone(m)
        self.assertEqual(tuple(m.group(1).split()), HOOKS)

    def test_pieces_define_hooks_of_their_own_name_only(self):
        for f in _pieces():
            fn_prefix = MON.name_of_piece(f).replace("-", "_") + "_"
            with open(os.path.join(GUEST_DIR, f), encoding="utf-8") as fh:
                text = fh.read()
            funcs = re.findall(r"^([A-Za-z_][A-Za-z0-9_]*)\(\)", text, re.M)
            hooks = [fn for fn in funcs if fn[len(fn_prefix):] in HOOKS]
            self.assertTrue(hooks, f"{f}: defines none of {fn_prefix}{{{','.join(HOOKS)}}}")
            for fn in funcs:
                self.assertTrue(fn.startswith(fn_prefix),
                                f"{f}: function {fn} is not {fn_prefix}...")
            # its top level only defines: no command runs when it is sourced
            self.assertIn("# SPDX-License-Identifier: GPL-2.0", text)
            self.assertRegex(text, r"(?m)^# Monitor \"" + re.escape(MON.name_of_piece(f)),
                             f"{f}: no contract header")

    def test_pieces_parse(self):
        for f in _pieces():
            r = subprocess.run(["sh", "-n", os.path.join(GUEST_DIR, f)],
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, f"{f}: {r.stderr}")


class Readers(unittest.TestCase):
    def test_metrics_defined_once_in_the_registry(self):
        seen = {}
        for r in MON.READERS:
            for key in r.METRICS:
                self.assertIn(key, M.METRICS, f"{MON.name(r)}: {key} not in metrics.py")
                self.assertNotIn(key, seen, f"{key}: {seen.get(key)} and {MON.name(r)}")
                seen[key] = MON.name(r)

    def test_missing_files_give_no_metric(self):
        with tempfile.TemporaryDirectory() as tmp:
            jdir = os.path.join(tmp, "boot", "guest", "jobs", "01-ram-x")
            os.makedirs(jdir)
            job = MON.Job(jdir)
            for r in MON.READERS:
                self.assertEqual(r.read(job), {}, f"{MON.name(r)} on an empty job")
            self.assertEqual(job.info.get("occupancy"), "missing")
            self.assertEqual(job.info.get("bounce_trace"), "missing")
            boot = MON.read_boot(os.path.join(tmp, "boot"))
            self.assertTrue(all(v != v for v in boot.values()),  # NaN, never 0
                            f"boot columns without files: {boot}")

    def test_on_the_fixture_run_readers_give_what_they_declare(self):
        given = set()
        jobs = 0
        for root, dirs, _ in os.walk(os.path.join(H.FIXTURE_RUN, "boots")):
            if os.path.basename(root) != "jobs":
                continue
            for d in sorted(dirs):
                jdir = os.path.join(root, d)
                if tidy.job_state(jdir)[0] != "ok":
                    continue
                job = MON.Job(jdir)
                for r in MON.READERS:
                    got = r.read(job)
                    self.assertLessEqual(set(got), set(r.METRICS), f"{MON.name(r)} on {d}")
                    given |= set(got)
                jobs += 1
        self.assertGreater(jobs, 0)
        # the fixture run measures bounces, labmon and the /proc counters
        self.assertTrue({"bounces", "lowfree_min_kb", "pgscan"} <= given, given)

    def test_a_reader_may_read_the_boot_folder(self):
        # a monitor whose data a recorder outside the guest wrote into the
        # boot folder (a QEMU plugin): its reader finds it through job.boot
        with tempfile.TemporaryDirectory() as tmp:
            jdir = os.path.join(tmp, "007-post", "guest", "jobs", "03-ram-lat")
            os.makedirs(jdir)
            job = MON.Job(jdir)
            self.assertEqual(job.boot.dir, os.path.join(tmp, "007-post"))
            self.assertEqual(job.index, 3)
            self.assertEqual(job.name, "03-ram-lat")
            with open(job.boot.path("host-side.tsv"), "w") as f:
                f.write("3 12345\n")
            self.assertEqual(R.read_text(job.boot.path("host-side.tsv")), "3 12345")


if __name__ == "__main__":
    unittest.main()
