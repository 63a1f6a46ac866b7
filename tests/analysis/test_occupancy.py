# SPDX-License-Identifier: GPL-2.0
"""The pressure runs' per-job files: the kernel's exact bounce-page count
(bounce-occupancy), the hogs' CPU (hog-ticks) and the OOM killer's lines
(oom-kills); fio percentiles of a writer beside a reader; lab.conf
pressure lines. Every job folder is built here, in a temporary folder."""
import json
import os
import tempfile
import unittest

import helpers as H
from analysis import rawfiles, tidy
from lab import labconf

# A lab_occupancy file as the lab-bounce kernel prints it.
OCCUPANCY = {"inflight": 0, "peak": 128, "allocated": 4096,
             "page_ns": 9759553440, "span_ns": 1102858330,
             "alloc_ns": 61440000, "alloc_max_ns": 2500000,
             "pool_min": 60, "pool_size": 64}
OCCUPANCY_TEXT = "".join(f"{k} {v}\n" for k, v in OCCUPANCY.items())
OCCUPANCY_METRICS = ("bounce_pages_peak", "bounce_pages_mean",
                     "bounce_lowmem_peak_kib", "bounce_pages_taken",
                     "bounce_alloc_us_per_page", "bounce_alloc_max_us",
                     "bounce_reserve_used_pages", "bounce_pool_kib")
OOM_LINE = ("[  41.123456] Out of memory: Killed process 213 (fio) "
            "total-vm:12345kB, anon-rss:2048kB, file-rss:0kB")


def _clat(n, mean, p50, p99):
    return {"min": 1000, "max": p99 * 2, "mean": mean, "N": n,
            "percentile": {"50.000000": p50, "99.000000": p99}}


def _idle():
    return {"io_bytes": 0, "bw_bytes": 0, "iops": 0.0, "runtime": 0,
            "total_ios": 0, "clat_ns": {"min": 0, "max": 0, "mean": 0.0, "N": 0}}


def _moved(ios, iops, clat):
    return {"io_bytes": ios * 4096, "bw_bytes": int(iops * 4096), "iops": iops,
            "runtime": 1000, "total_ios": ios, "clat_ns": clat}


def _entry(name, read=None, write=None):
    return {"jobname": name, "error": 0, "usr_cpu": 1.0, "sys_cpu": 5.0,
            "ctx": 100, "read": read or _idle(), "write": write or _idle()}


# One writer: 10240 writes of 4 KiB (40 MiB), p50 2 ms, p99 9 ms.
WRITER = _entry("writeback", write=_moved(10240, 2048.0, _clat(10240, 2.5e6, 2000000, 9000000)))
# One reader: 300 reads, p50 300 µs, p99 1.2 ms.
READER = _entry("reader", read=_moved(300, 60.0, _clat(300, 4.0e5, 300000, 1200000)))
READER2 = _entry("reader2", read=_moved(500, 100.0, _clat(500, 5.0e5, 350000, 1500000)))


def _write(path, text):
    H.write_text(path, text)


def _job(root, fio_jobs, **files):
    """A minimal measured job folder: fio.json with these entries, fio.rc
    0, and the named files (bounce_occupancy -> bounce-occupancy)."""
    jdir = os.path.join(root, "01-virtio-pressure-writeback")
    _write(os.path.join(jdir, "fio.json"), json.dumps({"fio version": "fio-3.33",
                                                      "jobs": fio_jobs}) + "\n")
    _write(os.path.join(jdir, "fio.rc"), "0\n")
    _write(os.path.join(jdir, "what"), "virtio pressure-writeback.fio\n")
    for name, text in files.items():
        _write(os.path.join(jdir, name.replace("_", "-")), text)
    return jdir


class ReadOccupancy(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "bounce-occupancy")

    def tearDown(self):
        self.tmp.cleanup()

    def read(self, text):
        _write(self.path, text)
        return rawfiles.read_occupancy(self.path)

    def test_full_file_gives_every_key(self):
        got = self.read(OCCUPANCY_TEXT)
        self.assertEqual(got, OCCUPANCY)
        self.assertEqual(set(got), set(rawfiles.OCCUPANCY_KEYS))

    def test_absent_and_missing_are_words_not_counts(self):
        self.assertEqual(self.read("absent\n"), "absent")
        self.assertEqual(self.read("missing\n"), "missing")
        self.assertEqual(self.read("off\n"), "off")

    def test_a_lacking_key_is_not_a_count(self):
        for key in rawfiles.OCCUPANCY_KEYS:
            with self.subTest(lacking=key):
                text = "".join(f"{k} {v}\n" for k, v in OCCUPANCY.items() if k != key)
                self.assertIsNone(self.read(text))

    def test_a_non_number_is_not_a_count(self):
        self.assertIsNone(self.read(OCCUPANCY_TEXT.replace("peak 128", "peak lots")))

    def test_empty_or_missing_file_is_none(self):
        self.assertIsNone(self.read(""))
        self.assertIsNone(rawfiles.read_occupancy(os.path.join(self.tmp.name, "nothing")))


class JobMetrics(unittest.TestCase):
    """tidy.job_metrics and tidy.job_state on a minimal job folder."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def metrics(self, **files):
        jdir = _job(self.tmp.name, [WRITER], **files)
        rows, info, _ = tidy.job_metrics(jdir)
        names = [m for m, _ in rows]
        self.assertEqual(len(names), len(set(names)), f"a metric twice: {names}")
        return dict(rows), info, jdir

    def test_every_occupancy_metric_exact(self):
        got, info, _ = self.metrics(bounce_occupancy=OCCUPANCY_TEXT)
        self.assertEqual(info["occupancy"], "counted")
        self.assertEqual(got["bounce_pages_peak"], 128)
        self.assertEqual(got["bounce_lowmem_peak_kib"], 512)
        self.assertEqual(got["bounce_pages_taken"], 4096)
        # page_ns / span_ns: pages held on average over the window
        self.assertAlmostEqual(got["bounce_pages_mean"], 9759553440 / 1102858330, places=12)
        self.assertAlmostEqual(got["bounce_pages_mean"], 8.849, places=3)
        # alloc_ns / allocated, in µs: 61.44 ms over 4096 pages
        self.assertAlmostEqual(got["bounce_alloc_us_per_page"], 15.0, places=12)
        self.assertAlmostEqual(got["bounce_alloc_max_us"], 2500.0, places=12)
        self.assertEqual(got["bounce_reserve_used_pages"], 4)
        self.assertEqual(got["bounce_pool_kib"], 256)
        # the writer's figures are still there beside them
        self.assertEqual(got["write_iops"], 2048.0)
        self.assertAlmostEqual(got["write_clat_p99_us"], 9000.0)

    def test_no_page_taken_and_no_window(self):
        # a window of 0 ns and no page taken: no mean and no cost per
        # page (not a division by zero), the other figures stay
        text = OCCUPANCY_TEXT.replace("allocated 4096", "allocated 0") \
                             .replace("span_ns 1102858330", "span_ns 0")
        got, _, _ = self.metrics(bounce_occupancy=text)
        self.assertNotIn("bounce_pages_mean", got)
        self.assertNotIn("bounce_alloc_us_per_page", got)
        self.assertEqual(got["bounce_pages_taken"], 0)
        self.assertEqual(got["bounce_pages_peak"], 128)

    def test_absent_or_missing_gives_no_occupancy_row(self):
        for word in ("off", "absent", "missing"):
            with self.subTest(word=word):
                got, info, _ = self.metrics(bounce_occupancy=word + "\n")
                self.assertEqual(info["occupancy"], word)
                self.assertFalse(set(OCCUPANCY_METRICS) & set(got))
                self.assertIn("write_iops", got)

    def test_no_file_gives_no_occupancy_row(self):
        got, info, _ = self.metrics()
        self.assertEqual(info["occupancy"], "missing")
        self.assertFalse(set(OCCUPANCY_METRICS) & set(got))
        # no hog-ticks, no oom-kills file: no row, never a 0
        self.assertNotIn("hog_cpu_s", got)
        self.assertNotIn("oom_kills", got)

    def test_hog_ticks(self):
        got, _, _ = self.metrics(hog_ticks="270 282\n")
        self.assertAlmostEqual(got["hog_cpu_s"], 0.12, places=12)

    def test_hog_ticks_not_two_counts_gives_no_row(self):
        for text in ("270\n", "270 x\n", "\n"):
            with self.subTest(text=text):
                got, _, _ = self.metrics(hog_ticks=text)
                self.assertNotIn("hog_cpu_s", got)

    def test_no_oom_kill(self):
        got, _, jdir = self.metrics(oom_kills="")
        self.assertEqual(got["oom_kills"], 0)
        self.assertEqual(tidy.job_state(jdir), ("ok", ""))

    def test_an_oom_kill_fails_the_job(self):
        got, _, jdir = self.metrics(oom_kills=OOM_LINE + "\n")
        self.assertEqual(got["oom_kills"], 1)
        state, reason = tidy.job_state(jdir)
        self.assertEqual(state, "failed")
        self.assertIn("OOM killer", reason)
        self.assertIn("Killed process 213 (fio)", reason)

    def test_oom_kills_counts_lines(self):
        got, _, jdir = self.metrics(oom_kills=OOM_LINE + "\n" + OOM_LINE.replace("213", "214") + "\n")
        self.assertEqual(got["oom_kills"], 2)
        # the reason names the first
        self.assertIn("213", tidy.job_state(jdir)[1])


class LoadRun(unittest.TestCase):
    """The same files through tidy.load_run: the OOM-killed job is listed
    as excluded, the counted one has its rows and its state."""

    def test_occupancy_and_oom_in_a_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = H.make_run(os.path.join(tmp, "run"), [dict(
                variant="pre", disk="usb-pio", pressure="full24", rep=1,
                jobs=[dict(device="usb", job="counted"),
                      dict(device="usb", job="killed")])])
            jobs = os.path.join(root, "boots", "001-pre-usb-pio-full24-r1", "guest", "jobs")
            _write(os.path.join(jobs, "01-usb-counted", "bounce-occupancy"), OCCUPANCY_TEXT)
            _write(os.path.join(jobs, "01-usb-counted", "oom-kills"), "")
            _write(os.path.join(jobs, "02-usb-killed", "oom-kills"), OOM_LINE + "\n")
            run = tidy.load_run(root)
        j = run.jobs.set_index("job")
        self.assertEqual(j.loc["counted", "state"], "ok")
        self.assertEqual(j.loc["counted", "occupancy"], "counted")
        self.assertEqual(j.loc["killed", "state"], "failed")
        ex = run.excluded
        self.assertEqual(list(ex["job"]), ["killed"])
        self.assertIn("OOM killer", ex["reason"].iloc[0])
        t = run.tidy
        counted = t[(t["job"] == "counted") & (t["metric"] == "bounce_pages_peak")]
        self.assertEqual(list(counted["value"]), [128.0])
        self.assertEqual(list(counted["pressure"]), ["full24"])
        self.assertTrue(t[t["job"] == "killed"].empty)


class FioDirections(unittest.TestCase):
    def test_writer_beside_reader_keeps_both(self):
        d = rawfiles.fio_directions({"jobs": [WRITER, READER]})
        self.assertEqual(d["read"]["percentiles"], {50.0: 300000.0, 99.0: 1200000.0})
        self.assertEqual(d["write"]["percentiles"], {50.0: 2000000.0, 99.0: 9000000.0})
        self.assertEqual(d["read"]["ios"], 300)
        self.assertEqual(d["write"]["ios"], 10240)
        self.assertAlmostEqual(d["read"]["clat_mean_ns"], 4.0e5)
        self.assertAlmostEqual(d["write"]["clat_mean_ns"], 2.5e6)

    def test_order_does_not_matter(self):
        d = rawfiles.fio_directions({"jobs": [READER, WRITER]})
        self.assertEqual(d["read"]["percentiles"][99.0], 1200000.0)
        self.assertEqual(d["write"]["percentiles"][99.0], 9000000.0)

    def test_two_readers_give_no_read_percentiles(self):
        d = rawfiles.fio_directions({"jobs": [READER, READER2, WRITER]})
        self.assertIsNone(d["read"]["percentiles"])
        # what does add up still does, the writer keeps its own
        self.assertEqual(d["read"]["ios"], 800)
        self.assertAlmostEqual(d["read"]["iops"], 160.0)
        self.assertAlmostEqual(d["read"]["clat_mean_ns"], (300 * 4.0e5 + 500 * 5.0e5) / 800)
        self.assertEqual(d["write"]["percentiles"][50.0], 2000000.0)

    def test_job_metrics_of_writer_and_reader(self):
        with tempfile.TemporaryDirectory() as tmp:
            jdir = _job(tmp, [WRITER, READER])
            got = dict(tidy.job_metrics(jdir)[0])
        self.assertAlmostEqual(got["read_clat_p50_us"], 300.0)
        self.assertAlmostEqual(got["read_clat_p99_us"], 1200.0)
        self.assertAlmostEqual(got["write_clat_p99_us"], 9000.0)


class PressureLines(unittest.TestCase):
    def test_kind_mib_label(self):
        lab = labconf.parse("pressure full24  full    24   "
                            "memhog: HighFree 16 MiB; lowhog: LowFree 24 MiB\n")
        self.assertEqual(lab["pressure"]["full24"],
                         {"kind": "full", "mib": "24",
                          "label": "memhog: HighFree 16 MiB; lowhog: LowFree 24 MiB"})

    def test_dash_is_the_default_size(self):
        lab = labconf.parse("pressure none    none    -    no extra memory pressure\n")
        self.assertEqual(lab["pressure"]["none"],
                         {"kind": "none", "mib": "", "label": "no extra memory pressure"})

    def test_repository_lab_conf(self):
        # the levels the matrix names: full kinds with their LowFree size
        lab = labconf.load()
        for name, mib in (("full64", "64"), ("full24", "24"), ("full12", "12")):
            with self.subTest(name=name):
                self.assertEqual(lab["pressure"][name]["kind"], "full")
                self.assertEqual(lab["pressure"][name]["mib"], mib)
        self.assertEqual(lab["pressure"]["lowmem"]["kind"], "lowmem")
        self.assertEqual(lab["pressure"]["lowmem"]["mib"], "")


if __name__ == "__main__":
    unittest.main()
