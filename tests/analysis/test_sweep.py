# SPDX-License-Identifier: GPL-2.0
"""The I/O-size sweep (sweep.py) and the units that carry (insnprof's
count rows, insnbudget.units_lines): a job's shape from its name
(lab.jobname, the job-name grammar), the
peak of bounce pages predicted from size, depth and queue limits, the
cost per I/O, page and byte and its parts, the bytes per rep movs
iteration of a format 2 profile (a format 1 file gives no bytes, not 0),
the queue limits' reader, the within-boot cost per byte (tidy.py), and
the report section and figure of a synthetic counted run."""
import glob
import json
import os
import tempfile
import unittest

import numpy as np
import pandas as pd

import helpers as H
from analysis import insnprof as X, metrics, plots, report
from analysis.questions import cost as HT, counted as insnbudget, sweep as SW
from analysis import stats as S, tidy
from tracker import changes, markdown as V
from analysis.monitors import Job, queue_limits
from lab import jobname as J

NS = 8
USER = 5000
# per I/O of a 4 KiB job, in instructions: (count, calls, rep movs
# iterations, bytes). The driver copies byte-wise; pre-fixed adds a
# bounce per 4 KiB page: a dword-wise read copy, a byte-wise write copy.
BASE = {"blk_mq_submit_bio": (15000, 1, 0, 0), "sg_copy_buffer": (5000, 1, 4096, 4096)}
BOUNCE = {"read": {"bounce_end_io_read": (1200, 1, 1024, 4096),
                   "mempool_alloc_noprof": (100, 1, 0, 0), "bio_alloc_bioset": (500, 1, 0, 0)},
          "write": {"__blk_queue_bounce": (4400, 1, 4096, 4096),
                    "bounce_end_io_write": (200, 1, 0, 0),
                    "mempool_alloc_noprof": (100, 1, 0, 0), "bio_alloc_bioset": (500, 1, 0, 0)}}
JOBS = {"sweep-randread-4k-qd1": ("read", 1, 2048),
        "sweep-randwrite-1m-qd1": ("write", 256, 32),
        "sweep-seqwrite-128k-qd4": ("write", 32, 128)}
# post does less than pre in the rest of the kernel
POST_LESS = 500


def syms(variant, direction, pages):
    """Per I/O: the driver's work scales with the pages, the bounce adds
    its work per page, the clone and completion once per bio."""
    out = {s: (c * pages, n, k * pages, b * pages) for s, (c, n, k, b) in BASE.items()}
    if variant == "post":
        c, n, k, b = out["blk_mq_submit_bio"]
        out["blk_mq_submit_bio"] = (c - POST_LESS, n, k, b)
    if variant == "pre-fixed":
        for s, (c, n, k, b) in BOUNCE[direction].items():
            per_page = s not in ("bio_alloc_bioset", "bounce_end_io_write")
            out[s] = (c * (pages if per_page else 1), n * (pages if s == "mempool_alloc_noprof"
                                                            else 1),
                      k * pages, b * pages)
    return out


def profile(windows, fmt=2):
    out = [f"insnprof {fmt} vcpus=1 kbase=0xc0000000 symbols=9"]
    for w, (ios, per_io) in windows.items():
        kern = {s: tuple(x * ios for x in v) for s, v in per_io.items()}
        out.append(f"window {w} user={USER * ios} kernel={sum(v[0] for v in kern.values())}")
        out += [f"sym {s} {c} {n} {k}" + (f" {b}" if fmt == 2 else "")
                for s, (c, n, k, b) in kern.items()]
        out.append(f"end {w}")
    return "\n".join(out) + "\n"


def sweep_run(root, reps=(1, 2), fmt=2):
    """pre, pre-fixed and post on ram-bounce (and its control ram) under
    insn, each sweep job of JOBS on both disks; every window's time is
    exactly its instructions, so 1 / IOPS is too."""
    boots = [dict(variant=v, disk="ram-bounce+ram", pressure="none", rep=r,
                  jobs=[dict(device=d, template="ram", job=j, bounces=None)
                        for j in JOBS for d in ("ram-bounce", "ram")])
             for r in reps for v in ("pre", "pre-fixed", "post")]
    H.make_run(root, boots)
    for bdir in glob.glob(os.path.join(root, "boots", "*")):
        v = next(x for x in ("pre-fixed", "post", "pre") if f"-{x}-" in bdir)
        H.write_text(os.path.join(bdir, "clock"), "insn\n")
        windows = {}
        for n, jdir in enumerate(sorted(glob.glob(os.path.join(bdir, "guest", "jobs", "*"))), 1):
            name = os.path.basename(jdir)
            job = next(j for j in JOBS if name.endswith(j))
            bounced = "ram-bounce" in name
            direction, pages, ios = JOBS[job]
            per_io = syms(v if bounced else "pre", direction, pages)
            per = USER + sum(c for c, _, _, _ in per_io.values())
            fio = H.read_json(os.path.join(jdir, "fio.json"))
            fio["jobs"] = fio["jobs"][:1]
            other = "write" if direction == "read" else "read"
            j = fio["jobs"][0]
            j[other].update(total_ios=0, iops=0, bw_bytes=0, io_bytes=0)
            iops = 1e9 / (per * NS)
            j[direction].update(total_ios=ios, iops=iops, bw_bytes=iops * pages * 4096,
                                io_bytes=ios * pages * 4096)
            H.write_text(os.path.join(jdir, "fio.json"), json.dumps(fio) + "\n")
            H.write_text(os.path.join(jdir, "insn-window"),
                         f"open {n} 1000\nclose {n} {1000 + ios * per * NS}\n")
            H.write_text(os.path.join(jdir, "queue-limits"),
                         "max_sectors_kb 1280\nmax_hw_sectors_kb 2147483647\n"
                         "max_segments 2048\nbogus\n")
            if v == "pre-fixed" and bounced:
                occ = dict(inflight=0, peak=pages, allocated=pages * ios, page_ns=ios * per * NS // 2,
                           span_ns=ios * per * NS, alloc_ns=pages * ios * 900, alloc_max_ns=2000,
                           pool_min=64, pool_size=64)
                H.write_text(os.path.join(jdir, "bounce-occupancy"),
                             "".join(f"{k} {x}\n" for k, x in occ.items()))
            elif v == "post":
                H.write_text(os.path.join(jdir, "bounce-occupancy"), "absent\n")
            windows[n] = (ios, per_io)
        H.write_text(os.path.join(bdir, "insnprof.txt"), profile(windows, fmt))
    meta = {"run_id": "s", "status": "complete", "clock": "host", "accel": "tcg",
            "roles": {"pre": "baseline", "pre-fixed": "bounce", "post": "removed"},
            "disk_roles": {"ram-bounce": "bounce-candidate", "ram": "control"},
            "disk_clocks": {"ram-bounce": "insn", "ram": "insn"}}
    H.write_meta(root, meta)
    return tidy.load_run(root)


class Shapes(unittest.TestCase):
    def test_job_name_grammar(self):
        self.assertEqual(J.shape("lat-randread-4k-qd1+probe"),
                         J.Shape("rand", "read", 4096, 1, "+probe"))
        self.assertEqual(J.shape("integrity-direct-512-qd8"), J.Shape("", "", 512, 8, ""))
        self.assertIsNone(J.shape("smoke-randwrite-verify"))
        self.assertEqual([J.family(j) for j in ("sweep-randread-4k-qd1", "pressure-writeback",
                                                "randread")], ["sweep", "pressure", ""])
        self.assertTrue(J.is_page_qd1("lat-randwrite-4k-qd1"))
        self.assertTrue(J.is_page_qd1("sweep-randread-4k-qd1"))
        # a 64 KiB job ends in "4k-qd1" too, but is not one page
        self.assertFalse(J.is_page_qd1("sweep-randread-64k-qd1"))
        self.assertFalse(J.is_page_qd1("lat-randread-4k-qd1+probe"))
        self.assertFalse(J.is_page_qd1("tput-randread-4k-qd16"))
        self.assertEqual(J.directions("pressure-rewrite-fsync"), ["write"])
        self.assertTrue(J.is_streaming("buffered-seqwrite"))

    def test_shape_from_name(self):
        self.assertEqual(J.sweep_shape("sweep-randwrite-1m-qd1"),
                         {"pattern": "rand", "dir": "write", "bytes": 1 << 20, "qd": 1})
        self.assertEqual(J.sweep_shape("sweep-seqread-128k-qd4"),
                         {"pattern": "seq", "dir": "read", "bytes": 128 << 10, "qd": 4})
        self.assertIsNone(J.sweep_shape("lat-randread-4k-qd1"))
        self.assertIsNone(J.sweep_shape("sweep-randread-4k-qd1+probe"))
        self.assertEqual(SW.size_text(1 << 20), "1 MiB")
        self.assertEqual(SW.size_text(16 << 10), "16 KiB")

    def test_predicted_peak(self):
        # an I/O holds its size in pages whatever the limits split it into
        self.assertEqual(SW.predicted_peak(1 << 20, 1, 1280, 2048), (256, 256, 1))
        self.assertEqual(SW.predicted_peak(1 << 20, 1, 128, 2048), (256, 256, 8))
        self.assertEqual(SW.predicted_peak(1 << 20, 1, 1280, 16), (256, 256, 16))
        self.assertEqual(SW.predicted_peak(128 << 10, 4, 1280, 2048), (32, 128, 1))
        pages, pred, req = SW.predicted_peak(4096, 1)
        self.assertEqual((pages, pred), (1, 1))
        self.assertTrue(np.isnan(req))

    def test_peak_note(self):
        self.assertEqual(SW.peak_note(256, 256, 256, 1), "agrees")
        self.assertIn("one I/O at a time, not 4", SW.peak_note(32, 32, 128, 4))
        self.assertIn("above", SW.peak_note(300, 256, 256, 1))
        self.assertEqual(SW.peak_note(np.nan, 1, 1, 1), "not counted")

    def test_queue_limits_reader(self):
        with tempfile.TemporaryDirectory() as d:
            job = Job(d, boot=d)
            self.assertEqual((queue_limits.read(job), job.info), ({}, {}))
            with open(os.path.join(d, "queue-limits"), "w") as f:
                f.write("max_sectors_kb 1280\nbad line here\nmax_segments x\n")
            job = Job(d, boot=d)
            queue_limits.read(job)
            self.assertEqual(job.info, {"queue_max_sectors_kb": 1280})


class Counts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_bytes_of_format_2_and_none_of_format_1(self):
        per = syms("pre-fixed", "read", 1)
        for fmt in (1, 2):
            path = os.path.join(self.tmp.name, f"p{fmt}.txt")
            H.write_text(path, profile({1: (10, per)}, fmt))
            counts = X.read_profile(path)[1]
            self.assertEqual(counts["syms"]["bounce_end_io_read"], (12000, 10, 10240))
            rows = dict(X.count_rows(counts, 10))
            self.assertEqual(rows["insn_copy_iters_per_io"], 4096 + 1024)
            self.assertEqual(rows["insn_instructions_per_io"],
                             USER + sum(c for c, _, _, _ in per.values()))
            if fmt == 2:
                self.assertEqual(counts["copy_bytes"]["bounce_end_io_read"], 40960)
                self.assertEqual(rows["insn_copy_bytes_per_io"], 8192)
            else:
                self.assertIsNone(counts["copy_bytes"])
                self.assertNotIn("insn_copy_bytes_per_io", rows)
        self.assertEqual(X.count_rows(counts, 0), [])
        H.write_text(os.path.join(self.tmp.name, "p3.txt"), "insnprof 3 vcpus=1\n")
        self.assertEqual(X.read_profile(os.path.join(self.tmp.name, "p3.txt")), {})


class SweepRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.root = os.path.join(cls.tmp.name, "run")
        cls.r = sweep_run(cls.root)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def point(self, job):
        return next(p for p in SW.points(self.r) if p["job"] == job)

    def test_cost_per_unit(self):
        p = self.point("sweep-randwrite-1m-qd1")
        added = sum(c for s, (c, _, _, _) in syms("pre-fixed", "write", 256).items()
                    if s not in BASE)
        self.assertAlmostEqual(p["d_us"], added * NS / 1000, places=6)
        self.assertAlmostEqual(p["d_us_page"], p["d_us"] / 256, places=9)
        self.assertAlmostEqual(p["d_ns_byte"], p["d_us"] * 1000 / (1 << 20), places=9)
        # the write copy: one byte an iteration, 4096 a page
        self.assertAlmostEqual(p["parts_ns_byte"]["copy"], 4096 * 256 * NS / (1 << 20), places=9)
        self.assertAlmostEqual(sum(p["parts_ns_byte"].values()), p["d_ns_byte"], places=9)
        self.assertEqual((p["peak"], p["predicted"], p["note"]), (256, 256, "agrees"))
        self.assertEqual((p["max_sectors_kb"], p["max_segments"], p["requests"]), (1280, 2048, 1))
        self.assertAlmostEqual(p["mean"], 0.5)
        self.assertAlmostEqual(p["alloc_us_page"], 0.9)
        self.assertEqual(p["pages_per_io"], 256)
        self.assertEqual(p["bios_per_io"], 1)
        # exact boots: every rep alike
        self.assertEqual(max(p["repeat"].values()), 0.0)
        self.assertEqual(set(p["repeat"]), set(X.PART_NAMES))
        self.assertEqual(p["spread"], 0.0)
        # post does POST_LESS fewer instructions than pre, pre-fixed the bounce more
        per_pre = USER + sum(c for c, _, _, _ in syms("pre", "write", 256).values())
        self.assertAlmostEqual(p["r_base"], (per_pre + added) / per_pre, places=9)
        self.assertAlmostEqual(p["r_removed"], (per_pre + added) / (per_pre - POST_LESS), places=9)

    def test_qd4_peak_below_prediction_says_why(self):
        p = self.point("sweep-seqwrite-128k-qd4")
        self.assertEqual((p["peak"], p["predicted"]), (32, 128))
        self.assertIn("inside io_submit", p["note"])

    def test_units_that_carry(self):
        rows = {(d, j): insnbudget.unit_deltas(self.r, d, j, "pre-fixed", "pre")
                for d, j, _, _, _ in insnbudget.pairs(self.r)}
        u = rows[("ram-bounce", "sweep-randread-4k-qd1")]
        self.assertEqual(u["insn_copy_iters_per_io"], 1024)
        self.assertEqual(u["insn_copy_bytes_per_io"], 4096)
        self.assertEqual(u["insn_instructions_per_io"], 1800)
        self.assertAlmostEqual(u["insn_us"], 1800 * NS / 1000)
        self.assertEqual(u["bounce_pages_per_io"], 1)
        lines = insnbudget.units_lines(self.r)
        self.assertIn("not a cycle model", lines[0])
        row = next(x for x in lines if "sweep-randread-4k-qd1" in x)
        # Δ instructions, iterations, the rest, bytes, bytes per iteration
        self.assertIn("| +1800 | +1024 | +776 | +4096 | 4.00 | 1.00 |", row)
        row = next(x for x in lines if "sweep-randwrite-1m-qd1" in x)
        self.assertIn("| 1.00 | 256.00 |", row)

    def test_within_boot_costs_counted(self):
        t = self.r.tidy
        t = t[t["disk"] == "ram-bounce/ram"]

        def vals(metric, job, variant):
            return t[(t["metric"] == metric) & (t["job"] == job) &
                     (t["variant"] == variant)]["value"].to_numpy()
        job = "sweep-randwrite-1m-qd1"
        self.assertEqual(len(t[(t["metric"] == "bounce_ns_per_byte") & (t["job"] == job)]), 6)
        pf = vals("bounce_ns_per_byte", job, "pre-fixed")
        self.assertTrue(np.allclose(pf, self.point(job)["d_ns_byte"]))
        self.assertTrue(np.allclose(vals("bounce_ns_per_byte", job, "pre"), 0))
        added = sum(c for s, (c, _, _, _) in syms("pre-fixed", "write", 256).items()
                    if s not in BASE)
        # one bounced bio per I/O: all of it, and its copy, per bounce
        self.assertTrue(np.allclose(vals("bounce_us_per_bounce", job, "pre-fixed"),
                                    added * NS / 1000))
        self.assertTrue(np.allclose(vals("bounce_copy_us_per_bounce", job, "pre-fixed"),
                                    4096 * 256 * NS / 1000))
        # every byte moved was copied once; a kernel that bounces nothing
        # copies none and has no cost per bounce (no bounce to divide by)
        self.assertTrue(np.allclose(vals("bounce_copied_bytes_per_gib", job, "pre-fixed"),
                                    1 << 30))
        self.assertTrue(np.allclose(vals("bounce_copied_bytes_per_gib", job, "post"), 0))
        self.assertEqual(len(vals("bounce_us_per_bounce", job, "post")), 0)

    def test_section_and_figure(self):
        lines = SW.section(self.r)
        text = "\n".join(lines)
        self.assertIn("| sweep-randwrite-1m-qd1 | 1 MiB | 1 |", text)
        self.assertIn("| sweep-seqwrite-128k-qd4 | 128 KiB | 4 | 1280 | 2048 | 1 | 128 | 32 |",
                      text)
        self.assertIn("the largest over the sizes: copy 0.000, instruments 0.000", text)
        self.assertIn("Within the 0.2% determinism bound: copy, instruments, bounce page", text)
        self.assertNotIn("above it", text)
        rows = SW.figure_rows(self.r)
        self.assertEqual(sorted((d, k) for d, k, _, _, _ in rows), [("read", 4), ("write", 1024)])
        out = os.path.join(self.tmp.name, "plots")
        p = plots.Plotter(out)
        SW.figures(self.r, None, p)
        if p.gnuplot:
            self.assertEqual([f["name"] for f in p.figures], ["sweep"], p.errors)
        with open(os.path.join(out, "data", "sweep.dat"), encoding="utf-8") as f:
            data = f.read()
        self.assertEqual(len(data.strip().split("\n\n\n")), 2)
        # the headline table leaves the sweep to its own section
        path = os.path.join(self.tmp.name, "report.md")
        verdicts = S.verdicts(self.r, n_boot=200)
        report.write_report(self.r, verdicts, None, path)
        with open(path, encoding="utf-8") as f:
            md = f.read()
        self.assertIn("## What a bounce costs per byte: the I/O-size sweep", md)
        self.assertIn("Units that carry", md)
        self.assertEqual(HT.first_screen(self.r, verdicts), [])

    def test_spread_is_reported_not_decided(self):
        from analysis import determinism as D
        with tempfile.TemporaryDirectory() as d:
            run = sweep_run(os.path.join(d, "r"))
            t = run.tidy
            hit = ((t["job"] == "sweep-randwrite-1m-qd1") & (t["variant"] == "post") &
                   (t["rep"] == 2) & (t["metric"] == "write_iops") & (t["disk"] == "ram-bounce"))
            self.assertEqual(int(hit.sum()), 1)
            t.loc[hit, "value"] *= 1.01
            cells = D.cells(run)
            self.assertFalse(cells[(cells["job"] == "sweep-randwrite-1m-qd1") &
                                   (cells["disk"] == "ram-bounce") &
                                   (cells["variant"] == "post")]["deterministic"].all())
            # the sweep does not extend its entry; its section flags the cell
            self.assertTrue(D.undecided(run).empty)
            p = next(x for x in SW.points(run) if x["job"] == "sweep-randwrite-1m-qd1")
            self.assertAlmostEqual(p["spread"], 100 * 0.01 / 1.005, places=6)
            self.assertIn("| 0.9950 **!** |", "\n".join(SW.section(run)))

    def test_no_sweep_no_section(self):
        with tempfile.TemporaryDirectory() as d:
            run = sweep_run(os.path.join(d, "r"), reps=(1,))
            run.tidy = run.tidy[~run.tidy["job"].str.startswith("sweep-")]
            self.assertEqual(SW.section(run), [])
            self.assertEqual(SW.figure_rows(run), [])


if __name__ == "__main__":
    unittest.main()


class VersionsCounted(unittest.TestCase):
    """The versions table takes the bytes copied and the cost per bounce
    from the count: a column for the read and one for the write, on the
    within-boot disk, for each kernel that bounced; "not measured" for
    one that did not (never 0)."""

    def test_counted_columns(self):
        rows = []
        for ver, label, cost in (("5.10.262-1", "5.10/stock", 40.0),
                                 ("6.1.192-3", "6.1/stock", None)):
            for job in ("lat-randread-4k-qd1", "lat-randwrite-4k-qd1", "sweep-randread-4k-qd1"):
                if cost is not None:
                    rows.append(dict(kernel_source_version=ver, variant=label, run_id="r",
                                     metric="bounce_us_per_bounce", disk="ram-bounce/ram",
                                     job=job, pressure="none", median=cost,
                                     ci_low=cost, ci_high=cost, _rank=1))
        sel = pd.DataFrame(rows)
        labels = [({"version": "5.10.262-1", "release": "5.10.262"}, "5.10/stock", "bounce"),
                  ({"version": "6.1.192-3", "release": "6.1.192"}, "6.1/stock", "baseline")]
        header, out = V.group_table(sel, labels, "cost-counted")
        self.assertEqual(header[4:6], ["ram-bounce/ram lat-randread-4k-qd1 all",
                                       "ram-bounce/ram lat-randwrite-4k-qd1 all"])
        self.assertNotIn("sweep", " ".join(header))
        self.assertEqual(out[0][4:6], ["40 [40, 40]", "40 [40, 40]"])
        self.assertEqual(out[1][4:6], [V.NOT_MEASURED, V.NOT_MEASURED])
        self.assertTrue(V.is_candidate("ram-bounce/ram"))


class History(unittest.TestCase):
    """The history draws the sweep's cost per byte at its ends, 4 KiB and
    1 MiB, and leaves the sweep's jobs out of the figures of the lat jobs."""

    def test_headlines(self):
        for job in ("sweep-randread-4k-qd1", "sweep-randwrite-1m-qd1"):
            self.assertTrue(changes.is_headline("bounce_ns_per_byte", job))
            self.assertTrue(metrics.is_headline("bounce_ns_per_byte", job, "per-byte"))
        self.assertFalse(changes.is_headline("bounce_ns_per_byte", "sweep-randwrite-64k-qd1"))
        for metric in ("read_iops", "read_lat_p99_us", "cpu_s_per_gib", "bounced_bytes_per_gib"):
            self.assertTrue(changes.is_headline(metric, "lat-randread-4k-qd1"), metric)
            self.assertFalse(changes.is_headline(metric, "sweep-randread-4k-qd1"), metric)
        self.assertFalse(changes.is_headline("read_bw", "sweep-seqread-128k-qd4"))
        self.assertTrue(changes.is_headline("read_bw", "tput-seqread-128k-qd4"))
        self.assertTrue(metrics.is_headline("bounce_us_per_bounce", "lat-randwrite-4k-qd1",
                                            "cost-counted"))
        self.assertFalse(metrics.is_headline("bounced_bytes_per_gib", "sweep-randread-4k-qd1",
                                             [g for g, _ in metrics.HEADLINE_GROUPS]))
