# SPDX-License-Identifier: GPL-2.0
"""tidy.py on the real fixture run: every value is checked against what the
fixture files themselves say (read here with json/csv, not the parsers)."""
import csv
import json
import os
import re
import shutil
import tempfile
import unittest

import helpers as H
from analysis import rawfiles, tidy

GIB = 1 << 30


def _file(rel, *parts):
    return os.path.join(H.FIXTURE_RUN, rel, *parts)


def _text(path):
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def _kv(path):
    out = {}
    for line in _text(path).splitlines():
        k, v = line.split()
        out[k] = int(v)
    return out


def _labmon(path):
    with open(path, encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _psi_window(rel, rows, line):
    """PSI's total over fio's window (start-uptime to end-uptime), linear
    between the labmon samples around each end (t_ms 0 at labmon's start,
    fio's in a fixture from before labmon-start-uptime)."""
    start, end = (float(_text(_file(rel, f))) for f in ("start-uptime", "end-uptime"))
    t0 = (float(_text(_file(rel, "labmon-start-uptime")))
          if os.path.exists(_file(rel, "labmon-start-uptime")) else start)
    pts = [(float(r["t_ms"]), float(r[f"{line}_total"])) for r in rows if r[f"{line}_total"] != ""]

    def at(t):
        for (ta, va), (tb, vb) in zip(pts, pts[1:]):
            if ta <= t <= tb:
                return va + (vb - va) * (t - ta) / (tb - ta)
        return pts[0][1] if t < pts[0][0] else pts[-1][1]
    return at((end - t0) * 1000) - at((start - t0) * 1000)


def expected_metrics(rel):
    """The metrics of one fixture job, computed straight from its files."""
    fio = H.read_json(_file(rel, "fio.json"))["jobs"][0]
    exp = {}
    moved = 0
    for d in ("read", "write"):
        part = fio[d]
        if not part["total_ios"]:
            continue
        moved += part["io_bytes"]
        exp[f"{d}_iops"] = part["iops"]
        exp[f"{d}_bw"] = part["bw_bytes"]
        exp[f"{d}_clat_mean_us"] = part["clat_ns"]["mean"] / 1000
        pct = part["clat_ns"]["percentile"]
        exp[f"{d}_clat_p50_us"] = pct["50.000000"] / 1000
        exp[f"{d}_clat_p99_us"] = pct["99.000000"] / 1000
        exp[f"{d}_clat_p99.9_us"] = pct["99.900000"] / 1000
    exp["cpu_usr_pct"] = fio["usr_cpu"]
    exp["cpu_sys_pct"] = fio["sys_cpu"]
    exp["ctx_switches"] = fio["ctx"]
    bounces = _text(_file(rel, "bounces"))
    if bounces != "absent":
        exp["bounces"] = int(bounces)
        sectors = sum(int(m) for m in re.findall(r"nr_sector:\s*(\d+)",
                                                 _text(_file(rel, "bounce-hist.txt"))))
        exp["bounced_bytes_per_gib"] = sectors * 512 / moved * GIB
    rows = _labmon(_file(rel, "labmon.csv"))
    bounce = [float(r["Bounce"]) for r in rows if r["Bounce"] != ""]
    if bounce:
        exp["bounce_peak_kb"] = max(bounce)
        exp["bounce_gauge_pages_peak"] = max(bounce) / 4
        exp["bounce_gauge_pages_mean"] = sum(bounce) / len(bounce) / 4
    low = [float(r["LowFree"]) for r in rows if r["LowFree"] != ""]
    if low:
        exp["lowfree_min_kb"] = min(low)
    high = [float(r["HighFree"]) for r in rows if r["HighFree"] != ""]
    if high:
        exp["highfree_min_kb"] = min(high)
    vm0, vm1 = _kv(_file(rel, "before", "vmstat")), _kv(_file(rel, "after", "vmstat"))
    exp["allocstall"] = sum(vm1[k] - vm0[k] for k in vm1 if k.startswith("allocstall_"))
    exp["pgscan"] = sum(vm1[k] - vm0[k] for k in ("pgscan_kswapd", "pgscan_direct"))
    exp["pgsteal"] = sum(vm1[k] - vm0[k] for k in ("pgsteal_kswapd", "pgsteal_direct"))
    for line in ("some", "full"):
        exp[f"psi_{line}_us"] = _psi_window(rel, rows, line)
    # pressure totals as rates: per second of job time, per GiB moved,
    # per MiB written
    secs = (float(_text(_file(rel, "end-uptime")).split()[0]) -
            float(_text(_file(rel, "start-uptime")).split()[0]))
    written = fio["write"]["io_bytes"] if fio["write"]["total_ios"] else 0
    for m in ("allocstall", "pgscan", "pgsteal", "psi_some_us", "psi_full_us"):
        exp[f"{m}_per_s"] = exp[m] / secs
        exp[f"{m}_per_gib"] = exp[m] / moved * GIB
        if written:
            exp[f"{m}_per_mib_written"] = exp[m] / written * (1 << 20)
    return exp


class FixtureRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.data = tidy.load_run(H.FIXTURE_RUN)
        cls.jobs = cls.data.jobs.set_index("dir")

    def rows(self, rel):
        """The tidy rows of one job folder as {metric: value}."""
        j = self.jobs.loc[rel]
        t = self.data.tidy
        sel = t[(t["boot"] == j["boot"]) & (t["disk"] == j["disk"]) & (t["job"] == j["job"])]
        self.assertEqual(len(sel), sel["metric"].nunique(), "one row per metric")
        return dict(zip(sel["metric"], sel["value"]))

    def test_columns(self):
        self.assertEqual(list(self.data.tidy.columns), tidy.TIDY_COLUMNS)

    def test_every_measured_job_exact(self):
        measured = [rel for rel in H.fixture_job_dirs()
                    if not os.path.exists(_file(rel, "skipped"))]
        self.assertTrue(measured)
        for rel in measured:
            with self.subTest(job=rel):
                got = self.rows(rel)
                exp = expected_metrics(rel)
                self.assertEqual(set(got), set(exp))
                for m, v in exp.items():
                    self.assertAlmostEqual(got[m], v, delta=abs(v) * 1e-12, msg=m)

    def test_keys_from_boots_tsv(self):
        with open(os.path.join(H.FIXTURE_RUN, "boots.tsv"), encoding="utf-8") as f:
            boots = {r["dir"]: r for r in csv.DictReader(f, delimiter="\t")}
        for rel in H.fixture_job_dirs():
            j = self.jobs.loc[rel]
            b = boots[os.path.join(*rel.split(os.sep)[:2])]
            what = _text(_file(rel, "what")).split()
            # the guest named the channel (bench/upgrade-run kept its line)
            orig = _text(_file(rel, "what.orig" if os.path.exists(_file(rel, "what.orig"))
                               else "what")).split()
            with self.subTest(job=rel):
                self.assertEqual(j["variant"], b["variant"])
                self.assertEqual(j["pressure"], b["pressure"])
                self.assertEqual(int(j["rep"]), int(b["rep"]))
                self.assertEqual(j["job"], what[1][:-len(".fio")])
                # usb jobs carry the boot's usb mode, virtio is the control
                self.assertEqual(j["disk"], b["disk"] if orig[0] == "usb" else "virtio")
                self.assertEqual(what[0], j["disk"])

    def test_units(self):
        t = self.data.tidy
        self.assertEqual(set(t[t["metric"].str.contains("clat")]["unit"]), {"µs"})
        self.assertEqual(set(t[t["metric"].str.endswith("_bw")]["unit"]), {"B/s"})

    def test_absent_tracepoint_gives_no_bounce_row(self):
        absent = [rel for rel in H.fixture_job_dirs()
                  if os.path.exists(_file(rel, "bounces")) and
                  _text(_file(rel, "bounces")) == "absent"]
        self.assertTrue(absent, "the fixture has post-series jobs")
        for rel in absent:
            got = self.rows(rel)
            with self.subTest(job=rel):
                self.assertNotIn("bounces", got)
                self.assertNotIn("bounced_bytes_per_gib", got)
                self.assertEqual(self.jobs.loc[rel]["bounce_trace"], "absent")

    def test_empty_labmon_cell_is_missing_not_zero(self):
        # post kernels: labmon leaves Bounce empty, though /proc/meminfo has
        # a hard-wired "Bounce: 0 kB"; the analysis must not turn it into 0
        for rel in H.fixture_job_dirs():
            if not os.path.exists(_file(rel, "labmon.csv")):
                continue
            rows = _labmon(_file(rel, "labmon.csv"))
            if all(r["Bounce"] == "" for r in rows):
                meminfo = rawfiles.read_meminfo(_file(rel, "after", "meminfo"))
                self.assertEqual(meminfo.get("Bounce"), 0)
                self.assertNotIn("bounce_peak_kb", self.rows(rel))

    def test_blank_column_drops_metric(self):
        with tempfile.TemporaryDirectory() as tmp:
            job = os.path.join(tmp, "job")
            H.make_job(job, "usb")
            rows, _, _ = tidy.job_metrics(job)
            self.assertIn("lowfree_min_kb", dict(rows))
            H.blank_labmon_columns(os.path.join(job, "labmon.csv"), ["LowFree"])
            rows, _, _ = tidy.job_metrics(job)
            self.assertNotIn("lowfree_min_kb", dict(rows))
            self.assertIn("bounce_peak_kb", dict(rows))

    def test_psi_over_fios_window_only(self):
        # what stalls after fio ended (the monitors, the umount) is not the
        # job's; samples that do not reach fio's start give no row
        with tempfile.TemporaryDirectory() as tmp:
            job = os.path.join(tmp, "job")
            H.make_job(job, "ram")
            before = dict(tidy.job_metrics(job)[0])
            p = os.path.join(job, "labmon.csv")
            lines = _text(p).splitlines()
            head, last = lines[0].split(","), lines[-1].split(",")
            late = [str(int(last[0]) + 10 ** 7) if c == "t_ms" else
                    str(int(v) + 10 ** 6) if c.endswith("_total") else v
                    for c, v in zip(head, last)]
            H.write_text(p, "\n".join(lines + [",".join(late)]) + "\n")
            got = dict(tidy.job_metrics(job)[0])
            self.assertGreater(got["psi_some_us"], 0)
            self.assertAlmostEqual(got["psi_some_us"], before["psi_some_us"], delta=10)
            self.assertAlmostEqual(got["psi_some_us_per_mib_written"],
                                   got["psi_some_us"] / 40, delta=1)
            H.write_text(p, "\n".join([lines[0]] + lines[20:]) + "\n")
            self.assertNotIn("psi_some_us", dict(tidy.job_metrics(job)[0]))

    def test_reader_against_its_offered_rate(self):
        with tempfile.TemporaryDirectory() as tmp:
            job = os.path.join(tmp, "job")
            H.make_job(job, "ram")
            self.assertNotIn("read_iops_offered_pct", dict(tidy.job_metrics(job)[0]))
            fio = H.read_json(os.path.join(job, "fio.json"))
            reader = [j for j in fio["jobs"] if j["jobname"] == "reader"][0]
            reader["job options"]["rate_iops"] = "2000"
            H.write_text(os.path.join(job, "fio.json"), json.dumps(fio))
            got = dict(tidy.job_metrics(job)[0])
            self.assertAlmostEqual(got["read_iops_offered_pct"],
                                   100 * reader["read"]["iops"] / 2000)
            self.assertNotIn("write_iops_offered_pct", got)

    def test_a_steady_readers_late_share(self):
        # the % of its reads of 1 ms or more: fio's latency_ms buckets,
        # only where the reader was offered a rate and moved only reads
        with tempfile.TemporaryDirectory() as tmp:
            job = os.path.join(tmp, "job")
            H.make_job(job, "ram")
            fio = H.read_json(os.path.join(job, "fio.json"))
            reader = [j for j in fio["jobs"] if j["jobname"] == "reader"][0]
            reader["latency_ms"] = {"2": 0.25, "4": 1.5, "10": 0.0, ">=2000": 0.01}
            H.write_text(os.path.join(job, "fio.json"), json.dumps(fio))
            self.assertNotIn("read_late_1ms_pct", dict(tidy.job_metrics(job)[0]))
            reader["job options"]["rate_iops"] = "500"
            H.write_text(os.path.join(job, "fio.json"), json.dumps(fio))
            got = dict(tidy.job_metrics(job)[0])
            self.assertAlmostEqual(got["read_late_1ms_pct"], 1.76)
            self.assertNotIn("write_late_1ms_pct", got)
            reader["write"] = dict(reader["read"])
            H.write_text(os.path.join(job, "fio.json"), json.dumps(fio))
            self.assertNotIn("read_late_1ms_pct", dict(tidy.job_metrics(job)[0]))

    def test_missing_vmstat_keys_drop_metric(self):
        with tempfile.TemporaryDirectory() as tmp:
            job = os.path.join(tmp, "job")
            H.make_job(job, "usb")
            for snap in ("before", "after"):
                p = os.path.join(job, snap, "vmstat")
                keep = [ln for ln in _text(p).splitlines() if not ln.startswith("allocstall_")]
                H.write_text(p, "\n".join(keep) + "\n")
            got = dict(tidy.job_metrics(job)[0])
            self.assertNotIn("allocstall", got)
            self.assertIn("pgscan", got)

    def test_failed_boot_and_skipped_job_listed(self):
        ex = tidy.exclusions(self.data)
        with open(os.path.join(H.FIXTURE_RUN, "boots.tsv"), encoding="utf-8") as f:
            failed = [r for r in csv.DictReader(f, delimiter="\t") if r["status"] != "ok"]
        self.assertTrue(failed)
        for b in failed:
            row = ex[(ex["kind"] == "failed boot") & (ex["boot"] == int(b["boot"]))]
            self.assertEqual(len(row), 1)
            self.assertEqual(row["reason"].iloc[0], b["status"])
            self.assertFalse((self.data.tidy["boot"] == int(b["boot"])).any())
        skipped = [rel for rel in H.fixture_job_dirs() if os.path.exists(_file(rel, "skipped"))]
        self.assertTrue(skipped)
        for rel in skipped:
            row = ex[ex["dir"] == rel]
            self.assertEqual(list(row["kind"]), ["skipped job"])
            self.assertEqual(row["reason"].iloc[0], _text(_file(rel, "skipped")))

    def test_failed_fio_job_listed(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = H.make_run(os.path.join(tmp, "run"), [dict(
                variant="pre", disk="usb-dma", pressure="none", rep=1,
                jobs=[dict(device="usb", fio_rc=1), dict(device="virtio")])])
            r = tidy.load_run(run)
            ex = tidy.exclusions(r)
            self.assertEqual(list(ex["kind"]), ["failed job"])
            self.assertIn("fio exited 1", ex["reason"].iloc[0])
            self.assertEqual(set(r.tidy["disk"]), {"virtio"})

    def test_summary_csv(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "summary.csv")
            tidy.write_summary(self.data, path)
            with open(path, encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
            self.assertEqual(list(rows[0]), tidy.TIDY_COLUMNS)
            self.assertEqual(len(rows), len(self.data.tidy))

    def test_kernel_title_from_build_info(self):
        info = H.read_json(H.BUILD_INFO["pre"])
        title = tidy.kernel_title(self.data)
        self.assertIn(info["kernel_release"], title)
        self.assertIn(info["source_version"], title)

    def test_coarse_clocksource_warned(self):
        clocks = {rawfiles.read_clocksource(os.path.join(H.FIXTURE_RUN, rel.split("/guest/")[0],
                                                         "guest", "dmesg.txt"))
                  for rel in H.fixture_job_dirs()}
        if any("jiffies" in c for c in clocks if c):
            self.assertTrue(any("jiffies" in w for w in self.data.warnings))
        if len(clocks - {None}) > 1:
            self.assertTrue(any("different clocksources" in w for w in self.data.warnings))


class InterruptedRun(unittest.TestCase):
    def test_planned_boots_not_run_are_listed(self):
        with tempfile.TemporaryDirectory() as tmp:
            d = H.make_run(os.path.join(tmp, "run"), [dict(
                variant="pre", disk="usb-pio", pressure="none", rep=1,
                jobs=[dict(device="usb")])])
            planned = [("1", "pre", "pre", "usb-pio", "none", "1"),
                       ("2", "pre.2", "pre", "usb-pio", "none", "1")]
            H.write_text(os.path.join(d, "matrix.tsv"),
                         "boot\tvariant\tkernel\tdisk\tpressure\trep\n" +
                         "".join("\t".join(p) + "\n" for p in planned))
            reason = "interrupted after 1 of 2 boots"
            H.write_text(os.path.join(d, "INCOMPLETE"), reason + "\n")
            r = tidy.load_run(d)
            ex = tidy.exclusions(r)
            self.assertEqual(list(ex["kind"]), ["boot not run"])
            self.assertEqual(int(ex["boot"].iloc[0]), int(planned[1][0]))
            self.assertEqual(ex["variant"].iloc[0], planned[1][1])
            self.assertTrue(any(reason in w for w in r.warnings))
            # the label's kernel comes from matrix.tsv when no boot ran it
            self.assertEqual(tidy.base_variant(r, planned[1][1]), planned[1][2])


class Upgrade(unittest.TestCase):
    """bench/upgrade-run: a job folder without its "what" file gets disk
    and job from the folder name NN-DISK-JOB, where the disk name itself
    may hold a dash; a run it did not upgrade is refused; a second
    upgrade changes nothing."""

    def test_not_upgraded(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = os.path.join(tmp, "run")
            shutil.copytree(H.FIXTURE_RUN, run)
            os.remove(os.path.join(run, "meta.json"))
            with self.assertRaisesRegex(tidy.RunError, "bench/upgrade-run"):
                tidy.load_run(run)
            self.assertTrue(H.upgrade_run.upgrade(run))
            self.assertEqual(H.upgrade_run.upgrade(run), [])
            tidy.load_run(run)

    def test_longest_disk_name(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = os.path.join(tmp, "run")
            shutil.copytree(H.FIXTURE_RUN, run)
            jobs = os.path.join(run, "boots", "002-pre-fixed-usb-pio-none-r1", "guest",
                                "jobs")
            for old, new in (("02-usb-smoke-randread", "02-ram-bounce-smoke-randread"),
                             ("03-virtio-smoke-randwrite-verify",
                              "03-ram-smoke-randwrite-verify")):
                os.rename(os.path.join(jobs, old), os.path.join(jobs, new))
                os.remove(os.path.join(jobs, new, "what"))
            H.upgrade_run.upgrade(run)
            j = tidy.load_run(run).jobs.set_index("dir")
            got = {os.path.basename(d): (r["disk"], r["job"]) for d, r in j.iterrows()
                   if "/002-" in d}
            self.assertEqual(got["02-ram-bounce-smoke-randread"],
                             ("ram-bounce", "smoke-randread"))
            self.assertEqual(got["03-ram-smoke-randwrite-verify"],
                             ("ram", "smoke-randwrite-verify"))


class NotARun(unittest.TestCase):
    def test_missing_and_empty(self):
        with tempfile.TemporaryDirectory() as tmp:
            with self.assertRaises(tidy.RunError):
                tidy.load_run(os.path.join(tmp, "nope"))
            with self.assertRaises(tidy.RunError):
                tidy.load_run(tmp)
            H.write_text(os.path.join(tmp, "boots.tsv"),
                         "boot\tvariant\tdisk\tpressure\trep\tstatus\tseconds\tdir\n")
            with self.assertRaises(tidy.RunError):
                tidy.load_run(tmp)


if __name__ == "__main__":
    unittest.main()
