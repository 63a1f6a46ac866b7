# SPDX-License-Identifier: GPL-2.0
"""The history across kernel versions (tracker/markdown.py and figures.py, bench/history
plot): Debian version order, the markers, the version figures' data files,
"not measured" never turning into 0, and history.csv files written before
the per-label kernel columns.

Two kinds of input: history rows for four bases made from the real rows
of fixtures/versions/history-old.csv (6.12.118, written by bench/history
before the base axis; each variant's rows copied to the labels of the
other bases, with the run dates out of version order), and a run folder
that boots all four bases (build-info.json of fixtures/versions)."""
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np
import pandas as pd

import helpers as H
from tracker import markdown as V
from tracker import figures, table
from test_history import blocks
from test_plots import png_size

OLD_CSV = os.path.join(H.VERSIONS_FIXTURES, "history-old.csv")
# the history.csv columns before the base axis (the fixture's header)
OLD_COLUMNS = ["run_id", "started", "kernel_source_version", "kernel_release",
               "git_revision", "accel", "icount", "memhog_mb", "variant",
               "kernel_variant", "disk", "job", "pressure", "metric", "unit", "n",
               "median", "ci_low", "ci_high", "values"]
DISK = "ram-bounce"
JOB = "lat-randread-4k-qd1"
# label -> (copied from the 6.12 variant, package, Debian version, release,
# role, run id, run date). The run dates are not in version order.
BASES = {
    "5.10/stock": ("pre-fixed", "linux-source-5.10", "5.10.262-1", "5.10.262",
                   "bounce", "versions-b", "2026-12-20T06:00:00Z"),
    "6.1/stock": ("pre", "linux-source-6.1", "6.1.192-3", "6.1.192",
                  "baseline", "versions-b", "2026-12-20T06:00:00Z"),
    "6.1/fixed": ("pre-fixed", "linux-source-6.1", "6.1.192-3", "6.1.192",
                  "bounce", "versions-b", "2026-12-20T06:00:00Z"),
    "7.2/upstream": ("post", "linux-source-7.2", "7.2.13-1", "7.2.13",
                     "removed", "versions-a", "2026-11-01T06:00:00Z"),
}
VERSION_ORDER = ["5.10.262-1", "6.1.192-3", "6.12.118-1~deb12u1", "7.2.13-1"]
ROLES = ["bounce", "baseline", "removed"]
# the newer 6.12 pre-fixed value (versions-b also boots pre-fixed)
NEWER = 2.0
NOT_MEASURED_TEXT = V.NOT_MEASURED


def old_rows():
    return pd.read_csv(OLD_CSV, dtype=str, keep_default_na=False)


def four_versions():
    """history.csv rows (strings, as on disk): the fixture's 6.12 run, the
    four bases, and pre-fixed again in the newest run with medians (and
    values) scaled by NEWER."""
    # the fixture's rows predate lat_percentiles=1: its completion latency
    # rows stand in for the whole-I/O latency the versions table plots
    old = old_rows().replace({"metric": {"read_clat_p99_us": "read_lat_p99_us",
                                         "write_clat_p99_us": "write_lat_p99_us"}})
    parts = [old]
    for label, (src, pkg, ver, rel, role, run, started) in BASES.items():
        g = old[old["variant"] == src].copy()
        g = g.assign(variant=label, kernel_variant=label, source_package=pkg,
                     kernel_source_version=ver, kernel_release=rel, role=role,
                     run_id=run, started=started, source_suite="")
        parts.append(g)
    newer = old[old["variant"] == "pre-fixed"].copy()
    for col in ("median", "ci_low", "ci_high"):
        newer[col] = (pd.to_numeric(newer[col]) * NEWER).map(lambda x: f"{x:.10g}")
    newer["values"] = newer["values"].map(
        lambda v: ";".join(f"{float(x) * NEWER:.10g}" for x in v.split(";")))
    newer = newer.assign(run_id="versions-b", started="2026-12-20T06:00:00Z")
    parts.append(newer)
    return pd.concat(parts, ignore_index=True)


def write_history(hdir, rows):
    os.makedirs(hdir, exist_ok=True)
    rows.to_csv(table.history_path(hdir), index=False)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Order(unittest.TestCase):
    PAIRS = [("5.10.262-1", "6.1.192-3"), ("6.1.176-1", "6.1.192-3"),
             ("6.1.192-3", "6.12.118-1~deb12u1"), ("6.12.118-1~deb12u1", "6.12.118-1"),
             ("6.12.118-1", "6.12.120-1~deb12u1"), ("6.12.120-1~deb12u1", "7.2.13-1"),
             ("7.2.13-1", "1:4.19.0-1"), ("6.16~rc1-1", "6.16-1"), ("6.16", "6.16.1"),
             ("5.10.262-1", "5.10.262-1+b1"), ("6.12.118-1~bpo12+1", "6.12.118-1"),
             ("6.12.118-1", "6.12.118-1+deb12u1"), ("6.12.118-1+deb12u1", "6.12.118-2")]

    def test_pairs(self):
        for a, b in self.PAIRS:
            self.assertLess(table.parse(a), table.parse(b), (a, b))
            self.assertGreater(table.parse(b), table.parse(a), (b, a))
            self.assertEqual(table.parse(a), table.parse(a))

    @unittest.skipUnless(shutil.which("dpkg"), "no dpkg")
    def test_same_as_dpkg(self):
        for a, b in self.PAIRS:
            res = subprocess.run(["dpkg", "--compare-versions", a, "lt", b])
            self.assertEqual(res.returncode, 0, (a, b))

    def test_sort_is_not_text_order(self):
        shuffled = ["7.2.13-1", "6.12.118-1~deb12u1", "6.9.12-1", "5.10.262-1", "6.1.192-3"]
        want = ["5.10.262-1", "6.1.192-3", "6.9.12-1", "6.12.118-1~deb12u1", "7.2.13-1"]
        self.assertEqual(table.sort_versions(shuffled), want)
        self.assertNotEqual(sorted(shuffled), want)

    def test_kernel_series(self):
        # 5.10 < 6.1 < 6.12 < 7.2 by number, not by text; within one
        # upstream, ~ sorts before the bare revision and + after it
        want = ["5.10.262-1", "6.1.192-3", "6.12.118-1~deb12u1", "6.12.118-1",
                "6.12.118-1+deb12u1", "7.2.13-1"]
        self.assertEqual(table.sort_versions(reversed(want)), want)
        self.assertEqual(table.sort_versions(sorted(want)), want)

    def test_not_a_debian_version(self):
        # dpkg rejects "_": such a string sorts first instead of failing
        self.assertEqual(table.sort_versions(["6.1.192-3", "6.12.1_lab"]),
                         ["6.12.1_lab", "6.1.192-3"])
        self.assertEqual(table.upstream("6.12.1_lab"), "6.12.1_lab")

    def test_upstream_and_package(self):
        self.assertEqual(table.upstream("1:6.12.118-1~deb12u1"), "6.12.118")
        self.assertEqual(table.package_of("", "5.10.262-1"), "linux-source-5.10")
        self.assertEqual(table.package_of("6.1.192", "unknown"), "linux-source-6.1")
        self.assertEqual(table.package_of("", "unknown"), "")


class Markers(unittest.TestCase):
    def test_four_versions(self):
        m = V.markers(VERSION_ORDER)
        self.assertEqual([(x, at) for x, at, _ in m], [(0.5, "5.13"), (2.5, "6.16")])
        self.assertIn("9bb33f24abbd", m[0][2])
        self.assertIn("removed", m[1][2])

    def test_at_the_edges(self):
        m = V.markers(["6.12.118-1~deb12u1", "7.2.13-1"])
        self.assertEqual([x for x, _, _ in m], [-0.5, 0.5])
        m = V.markers(["5.10.262-1", "6.12.118-1"])
        self.assertEqual([x for x, _, _ in m], [0.5, 1.5])


class OldHistory(unittest.TestCase):
    """history.csv written before source_package, source_suite and role."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.hdir = os.path.join(self.tmp.name, "history")
        os.makedirs(self.hdir)
        shutil.copy(OLD_CSV, table.history_path(self.hdir))

    def tearDown(self):
        self.tmp.cleanup()

    def test_fixture_is_old(self):
        self.assertEqual(list(old_rows().columns), OLD_COLUMNS)

    def test_loads_filled(self):
        df = table.load(self.hdir)
        self.assertEqual(list(df.columns), table.HISTORY_COLUMNS)
        self.assertEqual(len(df), len(old_rows()))
        self.assertEqual(set(df["source_package"]), {"linux-source-6.12"})
        self.assertEqual(set(df["source_suite"]), {""})
        roles = dict(zip(df["variant"], df["role"]))
        self.assertEqual(roles, {"pre": "baseline", "pre-fixed": "bounce", "post": "removed"})
        # the old columns keep their values
        old = old_rows()
        self.assertEqual(list(df["kernel_source_version"]), list(old["kernel_source_version"]))
        self.assertTrue(np.allclose(df["median"], pd.to_numeric(old["median"])))

    def test_older_still(self):
        # a table without kernel_release or kernel_variant either
        rows = old_rows().drop(columns=["kernel_release", "kernel_variant", "git_revision"])
        write_history(self.hdir, rows)
        df = table.load(self.hdir)
        self.assertEqual(set(df["kernel_release"]), {""})
        self.assertEqual(list(df["kernel_variant"]), list(df["variant"]))
        self.assertEqual(set(df["git_revision"]), {"unknown"})
        self.assertEqual(set(df["source_package"]), {"linux-source-6.12"})

    def test_required_columns(self):
        write_history(self.hdir, old_rows().drop(columns=["median"]))
        with self.assertRaisesRegex(table.HistoryError, "missing columns median"):
            table.load(self.hdir)

    def test_plot_and_save(self):
        df, _, p = figures.plot(self.hdir, n_boot=200)
        self.assertEqual(p.errors, [])
        text = read(os.path.join(self.hdir, table.REPORT_FILE))
        self.assertIn("## Across kernel versions", text)
        self.assertIn("one kernel source version (6.12.118-1~deb12u1)", text)
        self.assertFalse([f for f in p.figures if f["kind"] == V.SCRIPT])
        # one run: a point a variant, no figure over time
        self.assertFalse([f for f in p.figures if f["kind"] == "history"])
        # saved again (a run added), the table has every column
        table.save(df, self.hdir)
        with open(table.history_path(self.hdir), encoding="utf-8") as f:
            self.assertEqual(f.readline().strip().split(","), table.HISTORY_COLUMNS)


class FourVersions(unittest.TestCase):
    """Synthetic history rows of four bases, plotted."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.hdir = os.path.join(cls.tmp.name, "history")
        write_history(cls.hdir, four_versions())
        cls.df, cls.ch, cls.p = figures.plot(cls.hdir, n_boot=200)
        cls.text = read(os.path.join(cls.hdir, table.REPORT_FILE))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def data(self, group, disk=DISK):
        name = figures.versions_name(group, disk, "none")
        return dict(blocks(os.path.join(self.hdir, "plots", "data", name + ".dat")))

    def points(self, group, column):
        """{kernel label: median ("?" kept)} of a column of a figure."""
        data = self.data(group)
        labels = [t.split("\\n")[1].split(" (")[0] for t in data["ticks"]]
        return dict(zip(labels, (r.split()[1] for r in data[column])))

    def test_no_errors(self):
        self.assertEqual(self.p.errors, [])

    def test_axis_in_version_order(self):
        self.assertEqual([v["version"] for v in V.axis(self.df)], VERSION_ORDER)
        ticks = self.data("latency")["ticks"]
        # a place per kernel, in version order, then role order
        self.assertEqual([t.split(" ", 1)[0] for t in ticks], [str(i) for i in range(7)])
        self.assertEqual([t.split("\\n")[1].rstrip('"') for t in ticks], [
            "5.10/stock (bounce)", "6.1/fixed (bounce)", "6.1/stock (baseline)",
            "pre-fixed (bounce)", "pre (baseline)", "post (removed)",
            "7.2/upstream (removed)"])

    def test_one_point_per_kernel_and_column(self):
        for group in ("bounced", "latency"):
            data = self.data(group)
            for head, rows in data.items():
                if head not in ("ticks", "markers"):
                    self.assertEqual([float(r.split()[0]) for r in rows],
                                     list(range(len(data["ticks"]))), (group, head))

    def test_points(self):
        # 6.1/stock and pre bounce nothing: a measured 0
        self.assertEqual(self.points("bounced", JOB), {
            "5.10/stock": "1024", "6.1/fixed": "1024", "6.1/stock": "0",
            "pre-fixed": str(1024 * NEWER).rstrip("0").rstrip("."), "pre": "0"})

    def test_missing_stays_missing(self):
        # post and 7.2/upstream have no bounce tracepoint: no place, never a 0
        self.assertNotIn("post", self.points("bounced", JOB))
        t = V.newest_cells(self.df, table.run_order(self.df))
        self.assertFalse(len(t[(t["variant"] == "7.2/upstream") &
                               (t["metric"] == "bounced_bytes_per_gib")]))
        # a kernel with nothing to count is named under the table, not a
        # row of "not measured" (and never a 0)
        sec = self.text.split("### Bounced bytes per GiB moved", 1)[1].split("\n### ", 1)[0]
        self.assertFalse([line for line in sec.splitlines() if line.startswith("| 7.2.13 |")])
        self.assertIn("Nothing to measure here on post (6.12.118), 7.2/upstream (7.2.13).", sec)

    def test_newest_run_wins(self):
        # pre-fixed is in the fixture's run and (scaled) in versions-b
        lat = self.points("latency", JOB + " read p99")
        old = old_rows()
        sel = old[(old["variant"] == "pre-fixed") & (old["metric"] == "read_clat_p99_us") &
                  (old["job"] == JOB)]
        self.assertAlmostEqual(float(lat["pre-fixed"]), float(sel["median"].iloc[0]) * NEWER,
                               places=2)
        self.assertIn("| 6.12.118 | 6.12.118-1~deb12u1 | pre-fixed | bounce |", self.text)
        row = [line for line in self.text.splitlines()
               if line.startswith("| 6.12.118 | 6.12.118-1~deb12u1 | pre-fixed |")][0]
        self.assertTrue(row.rstrip(" |").endswith("versions-b"), row)

    def test_markers(self):
        marks = self.data("latency")["markers"]
        self.assertEqual([float(m.split()[0]) for m in marks], [0.5, 5.5])
        self.assertIn("5.13", marks[0])
        self.assertIn("6.16", marks[1])

    def test_figures(self):
        figs = {f["name"]: f for f in self.p.figures if f["kind"] == V.SCRIPT}
        # a figure per table and disk, no more
        self.assertEqual(set(figs), {figures.versions_name(g, DISK, "none")
                                     for g in ("bounced", "latency", "integrity")})
        for f in figs.values():
            self.assertLessEqual(png_size(f["png"])[1], 1600)
            self.assertIsNone(f["svg"])          # PNG only
            self.assertIn(f"]({os.path.relpath(f['png'], self.hdir)})", self.text)
        # nothing drawn for what no version measured (no probed job here)
        self.assertNotIn("versions-cost", " ".join(figs))

    def test_section(self):
        sec = self.text.split("## Across kernel versions", 1)[1].split("\n## ", 1)[0]
        self.assertIn("5.10.262-1 (linux-source-5.10)", sec)
        bounce = [line for line in sec.splitlines() if line.startswith("Bouncing")][0]
        self.assertIn("bounces on 5.10.262 5.10/stock", bounce)
        self.assertIn("none counted on 6.1.192 6.1/stock", bounce)
        self.assertIn("not measured (no bounce tracepoint) on", bounce)
        self.assertIn("7.2.13 7.2/upstream", bounce)
        integ = [line for line in sec.splitlines() if line.startswith("Integrity")][0]
        # sums over the 6 repetitions; pre-fixed from the newest run (scaled)
        self.assertIn("**bad blocks** on 5.10.262 5.10/stock (10752 bad of 12288 checked, "
                      "24576 bios bounced)", integ)
        self.assertIn("6.12.118 pre-fixed (21504 bad of 24576 checked", integ)
        self.assertIn("none on 6.1.192 6.1/stock (0 bad of 12288 checked, 0 bios bounced)",
                      integ)
        self.assertIn("7.2.13 7.2/upstream (0 bad of 12288 checked, bounces not counted)",
                      integ)
        # no section, nor line, of "not measured" only
        self.assertNotIn("### Cost per bounced bio", sec)
        self.assertNotIn("Not measured on any version", sec)
        for v in VERSION_ORDER:
            self.assertIn(v, sec)

    def test_versions_listed(self):
        line = [x for x in self.text.splitlines() if "in Debian version order:" in x][0]
        self.assertEqual([v.split(" (")[0] for v in line.split(": ", 1)[1].split(", ")],
                         VERSION_ORDER)

    def test_one_version_no_figures(self):
        with tempfile.TemporaryDirectory() as tmp:
            hdir = os.path.join(tmp, "h")
            rows = four_versions()
            write_history(hdir, rows[rows["kernel_source_version"] == "7.2.13-1"])
            _, _, p = figures.plot(hdir, n_boot=200)
            self.assertFalse([f for f in p.figures if f["kind"] == V.SCRIPT])
            self.assertIn("one kernel source version (7.2.13-1)",
                          read(os.path.join(hdir, table.REPORT_FILE)))
            # figures of an earlier plot are removed
            write_history(hdir, rows)
            figures.plot(hdir, n_boot=200)
            self.assertTrue([n for n in os.listdir(os.path.join(hdir, "plots"))
                             if n.startswith("versions-")])
            write_history(hdir, rows[rows["kernel_source_version"] == "7.2.13-1"])
            figures.plot(hdir, n_boot=200)
            self.assertFalse([n for n in os.listdir(os.path.join(hdir, "plots"))
                              if n.startswith("versions-") and n.endswith(".png")])


# The run: every base on usb-pio, 2 repetitions, interleaved. label ->
# (bounced bios per job, probe (submit µs, completion µs) or None, bad
# blocks in the integrity job). 7.2/upstream and post have no bounce code.
RUN = {
    "5.10/stock": (300, (9.0, 11.0), 0),
    "6.1/stock": (0, None, 0),
    "6.1/fixed": (300, (10.0, 12.0), 700),
    "pre": (0, None, 0),
    "pre-fixed": (300, (8.0, 13.0), 1792),
    "post": ("absent", "absent", 0),
    "7.2/upstream": ("absent", "absent", 0),
}
RUN_ROLES = {"5.10/stock": "bounce", "6.1/stock": "baseline", "6.1/fixed": "bounce",
             "pre": "baseline", "pre-fixed": "bounce", "post": "removed",
             "7.2/upstream": "removed"}


def versions_run(root, reps=2):
    boots = []
    for rep in range(1, reps + 1):
        for label, (bounces, probe, bad) in RUN.items():
            jobs = [dict(device="usb", job=JOB, bounces=bounces),
                    dict(device="usb", job=JOB, bounces=bounces,
                         probe=(probe + (bounces,)) if isinstance(probe, tuple)
                         else ("absent" if probe == "absent" else ())),
                    dict(device="usb", job="integrity-direct-512-qd8", template="virtio",
                         bounces=bounces, integrity_bad=bad)]
            boots.append(dict(variant=label, disk="usb-pio", pressure="none", rep=rep,
                              jobs=jobs))
    H.make_run(root, boots)
    meta = {"run_id": os.path.basename(root), "status": "complete",
            "started": "2026-12-21T06:00:00Z", "git_revision": "abc1234", "accel": "tcg",
            "icount": "", "memhog_mb": 1088, "roles": RUN_ROLES,
            # the default base: it names no other base's version
            "kernel_source_package": "linux-source-6.12",
            "kernel_source_version": "6.12.118-1~deb12u1"}
    H.write_meta(root, meta)
    return root


class VersionsRun(unittest.TestCase):
    """One run folder that boots all four bases (./run.sh versions)."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.run_dir = versions_run(os.path.join(cls.tmp.name, "results", "versions-1"))
        cls.hdir = os.path.join(cls.tmp.name, "history")
        cls.add = subprocess.run([os.path.join(H.ROOT, "bench", "history"), "--resamples",
                                  "200", "--history-dir", cls.hdir, "add", cls.run_dir],
                                 capture_output=True, text=True, timeout=600)
        cls.plot = subprocess.run([os.path.join(H.ROOT, "bench", "history"), "--resamples",
                                   "200", "--history-dir", cls.hdir, "plot"],
                                  capture_output=True, text=True, timeout=600)
        cls.df = table.load(cls.hdir)
        cls.text = read(os.path.join(cls.hdir, table.REPORT_FILE))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_cli(self):
        self.assertEqual(self.add.returncode, 0, self.add.stderr)
        self.assertEqual(self.plot.returncode, 0, self.plot.stdout + self.plot.stderr)
        self.assertIn("4 kernel source version(s)", self.plot.stdout)

    def test_boot_folders(self):
        names = os.listdir(os.path.join(self.run_dir, "boots"))
        self.assertIn("001-5.10_stock-usb-pio-none-r1", names)

    def test_identity_per_label(self):
        ident = self.df.drop_duplicates("variant").set_index("variant")
        expect = {
            "5.10/stock": ("linux-source-5.10", "5.10.262-1", "bullseye-security", "5.10.262"),
            "6.1/fixed": ("linux-source-6.1", "6.1.192-3", "bookworm", "6.1.192"),
            "7.2/upstream": ("linux-source-7.2", "7.2.13-1", "sid", "7.2.13"),
            "pre": ("linux-source-6.12", "6.12.118-1~deb12u1", "", "6.12.118"),
        }
        for label, want in expect.items():
            got = tuple(ident.loc[label, c] for c in ("source_package",
                        "kernel_source_version", "source_suite", "kernel_release"))
            self.assertEqual(got, want, label)
        self.assertEqual(dict(zip(ident.index, ident["role"])), RUN_ROLES)
        self.assertEqual(ident.loc["6.1/stock", "kernel_variant"], "6.1/stock")

    def test_meta_fallback(self):
        # boots without build-info.json: meta.json "kernels", then the
        # run's own version only for a label of the default base's package
        run = os.path.join(self.tmp.name, "nobuild")
        shutil.copytree(self.run_dir, run)
        for b in os.listdir(os.path.join(run, "boots")):
            os.remove(os.path.join(run, "boots", b, "build-info.json"))
        meta = H.read_json(os.path.join(run, "meta.json"))
        meta["kernels"] = {"5.10/stock": H.read_json(H.BUILD_INFO["5.10/stock"])}
        H.write_meta(run, meta)
        rows = table.read(run, n_boot=100)
        got = rows.drop_duplicates("variant").set_index("variant")["kernel_source_version"]
        self.assertEqual(got["5.10/stock"], "5.10.262-1")
        self.assertEqual(got["pre"], "6.12.118-1~deb12u1")

    def test_plot_data(self):
        name = figures.versions_name("cost", "usb-pio", "none")
        data = dict(blocks(os.path.join(self.hdir, "plots", "data", name + ".dat")))
        submit = [r.split() for r in data[JOB + "+probe submit p50"]]
        self.assertEqual([float(r[1]) for r in submit], [9.0, 10.0, 8.0])
        # nothing bounced on the baselines, nothing to time: not measured,
        # so only the bouncing kernels have a place
        self.assertEqual([t.split("\\n")[1].rstrip('"') for t in data["ticks"]],
                         ["5.10/stock (bounce)", "6.1/fixed (bounce)", "pre-fixed (bounce)"])

    def test_reading(self):
        bounce = [line for line in self.text.splitlines() if line.startswith("Bouncing")][0]
        # 300 bios of 4 KiB per job, 3 jobs, 2 repetitions
        self.assertIn("5.10.262 5.10/stock (554.5 MiB/GiB, 1800 bios in all)", bounce)
        self.assertIn("none counted on 6.1.192 6.1/stock, 6.12.118 pre;", bounce)
        integ = [line for line in self.text.splitlines() if line.startswith("Integrity")][0]
        self.assertIn("**bad blocks** on 6.1.192 6.1/fixed (1400 bad of", integ)
        self.assertIn("6.12.118 pre-fixed (3584 bad of", integ)
        self.assertIn("5.10.262 5.10/stock (0 bad of", integ)



class StandaloneScript(unittest.TestCase):
    def test_versions_script_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "d.dat")
            H.write_text(data, '"bounce: a"\n0 10 9 11 11 "a"\n1 ? ? ? ? ""\n\n\n'
                         '"removed: not measured"\n0 ? ? ? ? ""\n1 ? ? ? ? ""\n\n\n'
                         '"ticks"\n0 "5.10.262"\n1 "7.2.13"\n\n\n'
                         '"markers"\n0.5 "5.13"\n0.5 "6.16"\n')
            for ext in ("png", "svg"):
                out = os.path.join(tmp, "o." + ext)
                res = subprocess.run(
                    ["gnuplot", "-e", f"datafile='{data}'; outfile='{out}'; nblocks=2; "
                     "title='t'; width=640; height=400; xmax=1; ymax=15; "
                     "titles='\"bounce: a\" \"removed: not measured\"'",
                     os.path.join(H.ROOT, "plots", "versions.gp")],
                    capture_output=True, text=True)
                self.assertEqual(res.returncode, 0, res.stderr)
                self.assertGreater(os.path.getsize(out), 0)
            self.assertEqual(png_size(os.path.join(tmp, "o.png")), (640, 400))


class MemoryRows(unittest.TestCase):
    """The pressure jobs' cells join the versions table: bounce pages at
    most in flight, writeback, the reader's tail, PSI; "not measured"
    where a kernel has no bounce code to count in, never 0."""

    def test_section(self):
        rows = four_versions()
        src = rows[(rows["metric"] == "read_lat_p99_us") & (rows["job"] == JOB) &
                   (rows["disk"] == DISK)]
        extra = []
        for metric in ("bounce_pages_peak", "write_bw"):
            g = src.assign(job="pressure-writeback", pressure="full24", metric=metric)
            if metric == "bounce_pages_peak":
                g = g[g["role"] != "removed"]
            extra.append(g)
        with tempfile.TemporaryDirectory() as tmp:
            hdir = os.path.join(tmp, "history")
            write_history(hdir, pd.concat([rows] + extra, ignore_index=True))
            figures.plot(hdir, n_boot=200)
            text = read(os.path.join(hdir, table.REPORT_FILE))
        sec = text.split("### Writeback under memory pressure", 1)[1].split("\n### ", 1)[0]
        self.assertIn("pressure-writeback", sec)
        self.assertIn("full24", sec)
        head = [l for l in sec.splitlines() if l.startswith("| version")][0].split(" | ")
        self.assertIn("ram-bounce pressure-writeback bounce pages, peak", head[4])
        self.assertNotIn("lat-randread", " ".join(head))
        row = [l for l in sec.splitlines() if l.startswith("| 7.2.13")][0].split(" | ")
        self.assertEqual(row[4], NOT_MEASURED_TEXT)
        pre = [l for l in sec.splitlines() if l.startswith("| 6.12.118") and "| pre |" in l][0]
        self.assertNotIn(NOT_MEASURED_TEXT, pre.split(" | ")[4])


class FirstScreen(unittest.TestCase):
    """A run of every base asks the versions question on its first
    screen: each version's baseline against its bounce variant, each
    version's kernel as shipped against the one before, the control disk
    beside."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        labels = ["5.10/stock", "6.1/stock", "6.1/fixed", "pre", "pre-fixed", "7.2/upstream"]
        jobs = [dict(device=d, template="ram", job=JOB, bounces=0) for d in ("ram-bounce", "ram")]
        H.make_run(cls.tmp.name, [dict(variant=v, disk="ram-bounce+ram", pressure="none",
                                       rep=r, jobs=jobs)
                                  for r in (1, 2, 3, 4) for v in labels])
        from analysis import stats, tidy
        cls.vrun = tidy.load_run(cls.tmp.name)
        cls.verdicts = stats.verdicts(cls.vrun, n_boot=200)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_pairs(self):
        from analysis.questions import cost as HT
        self.assertEqual(HT.headline_pairs(self.vrun),
                         [("6.1/stock", "6.1/fixed"), ("pre", "pre-fixed"),
                          ("6.1/stock", "5.10/stock"), ("pre", "6.1/stock"),
                          ("7.2/upstream", "pre")])

    def test_table_has_the_control_beside(self):
        from analysis.questions import cost as HT
        text = "\n".join(HT.first_screen(self.vrun, self.verdicts))
        self.assertIn("| 6.1/stock/6.1/fixed | pre/pre-fixed | 6.1/stock/5.10/stock |", text)
        self.assertIn("| ram (control) |", text)


if __name__ == "__main__":
    unittest.main()
