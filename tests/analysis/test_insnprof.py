# SPDX-License-Identifier: GPL-2.0
"""The insnprof counts (insnprof.py) and what a bounce costs, counted
(insnbudget.py): the plugin's file and the guest's window notes read
right, a window's time split exactly into user, kernel parts and idle,
the bounces of an unprobed twin taken from the plugin, and the budget's
parts summing to the added time per I/O."""
import glob
import json
import os
import tempfile
import unittest

import helpers as H
from analysis import insnprof as X, plots, rawfiles, stats, tidy
from analysis.questions import counted as insnbudget, usbpio

NS = 8      # the insn clock: -icount shift=3
# per I/O, in instructions: user, then kernel by symbol (count, calls,
# rep movs iterations); pre-fixed adds a bounce to every I/O
BASE = {"blk_mq_submit_bio": (15000, 1, 0), "sg_copy_buffer": (5000, 1, 4096)}
BOUNCE = {"__blk_queue_bounce": (312, 1, 0), "bounce_end_io_read": (1187, 1, 1025),
          "mempool_alloc_noprof": (99, 1, 0), "get_page_from_freelist": (600, 1, 0),
          "bio_alloc_bioset": (550, 1, 0), "__kmap_local_pfn_prot": (-336, 0, 0)}
USER = 4900


def profile_text(windows, vcpus=1):
    """insnprof.txt of {window: {symbol: (count, calls, copy)}}, user
    instructions USER per I/O times the window's ios."""
    out = [f"insnprof 1 vcpus={vcpus} kbase=0xc0000000 symbols=9"]
    for w, (ios, syms) in windows.items():
        kern = {s: tuple(x * ios for x in v) for s, v in syms.items()}
        out.append(f"window {w} user={USER * ios} kernel={sum(c for c, _, _ in kern.values())}")
        out += [f"sym {s} {c} {n} {k}" for s, (c, n, k) in kern.items()]
        out.append(f"end {w}")
    return "\n".join(out) + "\n"


def kernel_syms(variant, weight=1):
    """The kernel's symbols per I/O; weight: each bounce that many times
    the instructions of BOUNCE (its calls the same)."""
    syms = dict(BASE)
    if variant == "pre-fixed":
        for s, (n, calls, copy) in BOUNCE.items():
            c = syms.get(s, (0, 0, 0))
            syms[s] = (c[0] + n * weight, c[1] + calls, c[2] + copy * weight)
    return syms


def counted_run(root, numjobs=1, weight=1, group_reporting=False):
    """pre and pre-fixed on ram-bounce under insn, two reps, one job and
    its probed twin; each window's time is exactly its instructions.
    numjobs > 1: each job's fio.json as fio reports that many processes
    (helpers.fio_as_numjobs); weight: a bounce that many times heavier."""
    boots = [dict(variant=v, disk="ram-bounce", pressure="none", rep=r,
                  jobs=[dict(device="ram-bounce", template="ram", job="lat-randread-4k-qd1",
                             bounces=100 if v == "pre-fixed" else 0, probe=None),
                        dict(device="ram-bounce", template="ram", job="lat-randread-4k-qd1",
                             bounces=0)])
             for r in (1, 2) for v in ("pre", "pre-fixed")]
    H.make_run(root, boots)
    for bdir in glob.glob(os.path.join(root, "boots", "*")):
        v = "pre-fixed" if "pre-fixed" in bdir else "pre"
        H.write_text(os.path.join(bdir, "clock"), "insn\n")
        windows = {}
        for n, jdir in enumerate(sorted(glob.glob(os.path.join(bdir, "guest", "jobs", "*"))), 1):
            syms = kernel_syms(v, weight)
            ios = 1000
            per_io = USER + sum(c for c, _, _ in syms.values())
            # fio's IOPS from the instruction count: 1 / IOPS is the time
            # of one I/O, the window 0.1 % longer (fio's clock inside it)
            fio = H.read_json(os.path.join(jdir, "fio.json"))
            fio["jobs"] = fio["jobs"][:1]
            for j in fio["jobs"]:
                j["read"]["total_ios"], j["write"]["total_ios"] = ios, 0
                j["read"]["iops"], j["write"]["iops"] = 1e9 / (per_io * NS), 0
            H.write_text(os.path.join(jdir, "fio.json"), json.dumps(fio) + "\n")
            if numjobs > 1:
                H.fio_as_numjobs(os.path.join(jdir, "fio.json"), numjobs, group_reporting)
            H.write_text(os.path.join(jdir, "insn-window"),
                         f"open {n} 1000\nclose {n} {1000 + int(ios * per_io * NS * 1.001)}\n")
            if n == 2:
                H.write_text(os.path.join(jdir, "bounces"), "insnprof\n")
                os.remove(os.path.join(jdir, "bounce-hist.txt"))
            windows[n] = (ios, syms)
        H.write_text(os.path.join(bdir, "insnprof.txt"), profile_text(windows))
    meta = {"run_id": "c", "status": "complete", "clock": "host",
            "disk_clocks": {"ram-bounce": "insn"}, "accel": "tcg"}
    H.write_meta(root, meta)
    return tidy.load_run(root)


class Reader(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        H.write_text(path, text)
        return path

    def test_windows_closed_only(self):
        text = profile_text({1: (10, BASE)}) + "window 2 user=5 kernel=5\nsym x 5 1 0\n"
        got = X.read_profile(self.write("p.txt", text))
        self.assertEqual(sorted(got), [1])
        self.assertEqual(got[1]["syms"]["sg_copy_buffer"], (50000, 10, 40960))
        self.assertEqual(got[1]["user"], USER * 10)

    def test_racing_counters_not_read(self):
        path = self.write("p.txt", profile_text({1: (10, BASE)}, vcpus=2))
        self.assertEqual(X.read_profile(path), {})

    def test_missing_is_not_zero(self):
        self.assertEqual(X.read_profile(os.path.join(self.dir, "none")), {})
        self.assertIsNone(X.read_window(self.write("w", "open 3 10\n")))
        self.assertIsNone(X.read_window(self.write("w2", "open 3 10\nclose 4 20\n")))
        self.assertEqual(X.read_window(self.write("w3", "open 3 10\nclose 3 25\n")), (3, 10, 25))

    def test_parts(self):
        self.assertEqual(X.part_of("trace_graph_entry"), "instruments")
        self.assertEqual(X.part_of("mempool_alloc_noprof"), "bounce page")
        self.assertEqual(X.part_of("__blk_queue_bounce"), "bio clone")
        self.assertEqual(X.part_of("kunmap_local_indexed"), "kmap")
        self.assertEqual(X.part_of("bounce_end_io_read"), "completion")
        self.assertEqual(X.part_of("schedule"), X.OTHER)
        # the ring buffer is an instrument, lib/rbtree and ptrace are not
        self.assertEqual(X.part_of("rb_reserve_next_event"), "instruments")
        self.assertEqual(X.part_of("rb_commit.part.0"), "instruments")
        self.assertEqual(X.part_of("rb_erase"), X.OTHER)
        self.assertEqual(X.part_of("rb_insert_color"), X.OTHER)
        self.assertEqual(X.part_of("ptrace_may_access"), X.OTHER)

    def test_rows_split_the_window_exactly(self):
        counts = X.read_profile(self.write("p.txt", profile_text({1: (10, kernel_syms("pre-fixed"))})))[1]
        insns = counts["user"] + counts["kernel"]
        rows = dict(X.job_rows(counts, insns * NS + 800, 10, NS))
        self.assertAlmostEqual(rows["insn_idle_us_per_io"], 0.08)
        self.assertAlmostEqual(rows["insn_user_us_per_io"] + rows["insn_kernel_us_per_io"]
                               + rows["insn_idle_us_per_io"], rows["insn_window_us_per_io"])
        parts = sum(rows[X.metric_key(p)] for p in X.PART_NAMES)
        self.assertAlmostEqual(parts, rows["insn_kernel_us_per_io"])
        self.assertAlmostEqual(rows[X.metric_key("copy")], (4096 + 1025) * NS / 1000)
        self.assertEqual(rows["insn_bounces_per_io"], 1)


class Budget(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.counted = counted_run(cls.tmp.name)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_unprobed_twin_bounces_from_the_plugin(self):
        j = self.counted.jobs
        twin = j[(j["variant"] == "pre-fixed") & (j["dir"].str.contains("/02-"))]
        self.assertTrue((twin["bounce_trace"] == "counted").all())
        self.assertTrue((twin["bounces"] == 1000).all())

    def test_plugin_counts_zero_where_the_code_ran_no_bounce(self):
        # "insnprof" comes only from a kernel with the event: no
        # completion in the window is 0 bounces, not "absent"
        j = self.counted.jobs
        twin = j[(j["variant"] == "pre") & (j["dir"].str.contains("/02-"))]
        self.assertEqual(len(twin), 2)
        self.assertTrue((twin["bounce_trace"] == "counted").all())
        self.assertTrue((twin["bounces"] == 0).all())

    def test_instruments_that_differ_between_kernels_are_flagged(self):
        job, w = "lat-randread-4k-qd1", "insn_window_us_per_io"

        def rows(pre, post, name=job):
            return [("ram", name, v, {insnbudget.INSTRUMENTS: x, w: 200.0})
                    for v, x in (("pre", pre), ("post", post))]
        # a sampled hist on the kernel that has the event: 0.65 % apart
        (gap,) = insnbudget.instrument_gaps(self.counted, rows(1.3, 0.0))
        self.assertAlmostEqual(gap[3], 0.65)
        text = "\n".join(insnbudget.instrument_lines(self.counted, rows(1.3, 0.0)))
        self.assertIn("instruments differ between kernels** on ram " + job, text)
        text = "\n".join(insnbudget.instrument_lines(self.counted, rows(0.011, 0.0)))
        self.assertIn("below the 0.2% determinism bound", text)
        # a probed twin measures its probes by design
        self.assertEqual(insnbudget.instrument_gaps(self.counted, rows(9, 0, job + "+probe")), [])

    def test_budget_figure_stacks_the_parts(self):
        # one bar a job, each part a box, the boxes end to end (shrinking
        # parts below zero): the stack spans what the parts add up to
        with tempfile.TemporaryDirectory() as tmp:
            p = plots.Plotter(tmp)
            insnbudget.figures(self.counted, None, p, False)
            self.assertEqual(p.errors, [])
            self.assertEqual([(f["kind"], f["question"]) for f in p.figures], [("budget", "")])
            with open(os.path.join(tmp, "data", "budget.dat"), encoding="utf-8") as f:
                blocks = f.read().split("\n\n\n")
        (_d, _j, _v, _b, vals), = [r for r in insnbudget.pairs(self.counted)]
        parts, user, idle, total, _wall = insnbudget.budget(vals)
        boxes = [list(map(float, r.split())) for b in blocks[:-1] for r in b.splitlines()
                 if r and "?" not in r]
        self.assertAlmostEqual(sum(hi - lo for _x, lo, hi in boxes),
                               sum(abs(d) for _n, d in parts) + abs(user) + abs(idle), places=3)
        self.assertAlmostEqual(max(hi for _x, _lo, hi in boxes) + min(lo for _x, lo, _hi in boxes),
                               total, places=3)

    def test_parts_sum_to_the_added_time(self):
        rows = insnbudget.pairs(self.counted)
        self.assertTrue(rows)
        for _disk, _job, v, b, vals in rows:
            self.assertEqual((v, b), ("pre-fixed", "pre"))
            parts, user, idle, total, wall = insnbudget.budget(vals)
            added = sum(c for c, _, _ in BOUNCE.values()) * NS / 1000
            self.assertAlmostEqual(wall, added, places=3)
            self.assertLess(abs(total - wall) / wall, 0.05)
            self.assertAlmostEqual(dict(parts)["copy"], 1025 * NS / 1000, places=6)
            self.assertAlmostEqual(user, 0, places=6)

    def test_consistency_and_section(self):
        for *_, vals in insnbudget.pairs(self.counted):
            time, cpu, funcs, _tick, bad = insnbudget.consistency(vals)
            self.assertEqual(bad, [])
            self.assertAlmostEqual(funcs, time, places=3)
        text = "\n".join(insnbudget.section(self.counted))
        self.assertIn("The three agree within 10%", text)
        self.assertIn("1.000 bounces per I/O", text)

    def test_section_names_the_symbols_that_moved(self):
        text = "\n".join(insnbudget.section(self.counted))
        self.assertIn("Where the instructions of a read go (ram-bounce lat-randread-4k-qd1)",
                      text)
        self.assertIn("| bounce_end_io_read | completion | +1187 | +1025 | 0.00 → 1.00 | "
                      f"{1187 * NS / 1000:+.2f} | +1187 to +1187 |", text)
        total = sum(c for c, _, _ in BOUNCE.values())
        self.assertIn(f"| total |  | +{total} |", text)
        self.assertIn("exact: every boot of both within the determinism bound", text)

    def test_per_bounce_parts_exact_where_the_boots_repeat(self):
        (row,) = usbpio.per_bounce(self.counted)
        disk, job, v, b, per_io, parts, share = row
        self.assertEqual((disk, v, b, per_io), ("ram-bounce", "pre-fixed", "pre", 1))
        parts = {name: rest for name, *rest in parts}
        delta, (lo, hi), half, exact = parts["copy"]
        self.assertAlmostEqual(delta, 1025 * NS / 1000, places=6)
        self.assertAlmostEqual(lo, hi, places=6)
        self.assertTrue(exact)
        funcs = sum(parts[p][0] for p in insnbudget.PER_BOUNCE_PARTS)
        self.assertAlmostEqual(share, funcs / (1e6 / self.iops("pre-fixed")) * 100, places=3)
        # an exact disk's time per I/O says it itself: no share line
        self.assertEqual(usbpio.share_lines(self.counted, stats.verdicts(self.counted)), [])

    def iops(self, variant):
        t = self.counted.tidy
        v = t[(t["variant"] == variant) & (t["metric"] == "read_iops") &
              (t["disk"] == "ram-bounce") & (t["job"] == "lat-randread-4k-qd1")]["value"]
        return float(v.median())

    def test_share_where_the_time_does_not_repeat(self):
        # one pre-fixed boot 5 % slower (a disk the host completes): the
        # time per I/O is tested, the parts still counted
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        run = counted_run(tmp.name)
        (slow,) = [d for d in glob.glob(os.path.join(tmp.name, "boots", "*pre-fixed*r2*",
                                                     "guest", "jobs", "01-*"))]
        fio = H.read_json(os.path.join(slow, "fio.json"))
        fio["jobs"][0]["read"]["iops"] *= 0.95
        H.write_text(os.path.join(slow, "fio.json"), json.dumps(fio) + "\n")
        run = tidy.load_run(tmp.name)
        (line,) = usbpio.share_lines(run, stats.verdicts(run))
        self.assertIn("ram-bounce lat-randread-4k-qd1, counted: one bounce adds +", line)
        self.assertIn("copy +8.2", line)
        self.assertIn("of pre-fixed's time per I/O", line)



def slow_one_boot(root, factor=0.95):
    """One pre-fixed boot's fio IOPS times factor (a disk the host
    completes): the time per I/O is tested, the parts still counted."""
    (slow,) = glob.glob(os.path.join(root, "boots", "*pre-fixed*r2*", "guest", "jobs", "01-*"))
    fio = H.read_json(os.path.join(slow, "fio.json"))
    for j in fio["jobs"]:
        j["read"]["iops"] *= factor
    H.write_text(os.path.join(slow, "fio.json"), json.dumps(fio) + "\n")
    return tidy.load_run(root)


class NumJobs(unittest.TestCase):
    """A job of numjobs=4 (fio's examples/cross-stripe-verify.fio): fio's
    IOPS add up over its processes, the counted cost is per I/O of one of
    them. Its share is of one process's time per I/O, and a share above
    100% is never printed."""
    JOB = "lat-randread-4k-qd1"

    def run_of(self, **kw):
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        counted_run(tmp.name, **kw)
        return slow_one_boot(tmp.name)

    def wall(self, run):
        """1 / the summed IOPS, µs (median of boots)."""
        t = run.tidy
        return float(t[(t["variant"] == "pre-fixed") & (t["metric"] == insnbudget.WALL) &
                       (t["disk"] == "ram-bounce") & (t["job"] == self.JOB)]["value"].median())

    def check_per_job(self, run):
        self.assertTrue((run.jobs["numjobs"] == 4).all())
        (row,) = usbpio.per_bounce(run)
        _disk, _job, v, _b, per_io, parts, share = row
        funcs = sum(d for n, d, *_ in parts if n in insnbudget.PER_BOUNCE_PARTS) * per_io
        wall = self.wall(run)
        # what the lab printed before: 1 / the summed IOPS as the time per I/O
        self.assertGreater(funcs / wall * 100, 100)
        self.assertAlmostEqual(share, funcs / (4 * wall) * 100, places=6)
        self.assertLessEqual(share, 100)
        (line,) = usbpio.share_lines(run, stats.verdicts(run))
        self.assertIn(f"{share:.2f}% of pre-fixed's time per I/O of one of its 4 jobs", line)
        text = "\n".join(usbpio.section(run, None))
        self.assertIn(f"{share:.2f}% of pre-fixed's time per I/O of one of its 4 jobs", text)

    def test_numjobs_from_fio_output(self):
        fio = {"jobs": [{"jobname": "a"}]}
        self.assertEqual(rawfiles.fio_numjobs(fio), 1)
        self.assertEqual(rawfiles.fio_numjobs(dict(fio, **{"global options": {"numjobs": "3"}})), 3)
        fio["jobs"][0]["job options"] = {"numjobs": "4"}
        self.assertEqual(rawfiles.fio_numjobs(fio), 4)
        self.assertEqual(rawfiles.fio_numjobs(None), 1)

    def test_share_per_job(self):
        self.check_per_job(self.run_of(numjobs=4, weight=5))

    def test_share_per_job_group_reporting(self):
        self.check_per_job(self.run_of(numjobs=4, weight=5, group_reporting=True))

    def test_share_above_100_is_not_printed(self):
        # one process, but fio's clock says four times the rate the
        # counted window allows: no share, and why
        tmp = tempfile.TemporaryDirectory()
        self.addCleanup(tmp.cleanup)
        counted_run(tmp.name, weight=5)
        for path in glob.glob(os.path.join(tmp.name, "boots", "*pre-fixed*", "guest", "jobs",
                                           "*", "fio.json")):
            fio = H.read_json(path)
            fio["jobs"][0]["read"]["iops"] *= 4
            H.write_text(path, json.dumps(fio) + "\n")
        run = slow_one_boot(tmp.name)
        (row,) = usbpio.per_bounce(run)
        self.assertGreater(row[-1], 100)
        (line,) = usbpio.share_lines(run, stats.verdicts(run))
        text = line + "\n".join(usbpio.section(run, None))
        self.assertIn("no share of pre-fixed's time per I/O: the bounce's counted work per I/O "
                      "exceeds that time", line)
        self.assertNotRegex(text, r"\b(1\d\d|[2-9]\d\d|\d{4,})(\.\d+)?% of ")

if __name__ == "__main__":
    unittest.main()
