# SPDX-License-Identifier: GPL-2.0
"""bench/history and bench/tracker/ on three synthetic runs of
different kernel source versions: run B makes the post kernel 50 % faster
than run A; run C repeats run B exactly (no change). The runs are added out
of date order."""
import os
import shutil
import subprocess
import tempfile
import unittest

import numpy as np
import pandas as pd

import helpers as H
from analysis import tidy
from tracker import figures, table
from test_plots import png_size

HISTORY = os.path.join(H.ROOT, "bench", "history")
JOB = "lat-randread-4k-qd1"
DISK = "usb-pio"
REPS = 5
SIGMA = 0.03
EFFECT = 1.5
RESAMPLES = "200"
# run id -> (kernel source version, run date, post kernel speed-up)
RUNS = {
    "run-a": ("6.12.118-1~deb12u1", "2026-12-01T06:00:00Z", 1.0),
    "run-b": ("6.12.120-1~deb12u1", "2026-12-08T06:00:00Z", EFFECT),
    "run-c": ("6.12.121-1~deb12u1", "2026-12-15T06:00:00Z", EFFECT),
}
ADD_ORDER = ["run-c", "run-a"]          # then run-b on its own


def history_run(root, version, started, post_scale, seed=1, failed_boot=False,
                meta=True, sigma=SIGMA):
    """pre-fixed (bouncing) and post, REPS boots each, interleaved; the
    noise (log-normal, sigma) depends only on the seed, so two runs with
    the same seed and scale have identical values. The kernels are built
    from version (their build-info.json says so, as meta.json does)."""
    rng = np.random.default_rng(seed)
    build = dict(source_version=version, kernel_release=release(version)) if version else {}
    boots = []
    for rep in range(1, REPS + 1):
        for v in ("pre-fixed", "post"):
            noise = float(rng.lognormal(0, sigma))
            boots.append(dict(
                variant=v, disk=DISK, pressure="none", rep=rep, build=build,
                jobs=[dict(device="usb", job=JOB,
                           scale=noise * (post_scale if v == "post" else 1.0),
                           bounces=554 if v == "pre-fixed" else "absent")]))
    if failed_boot:
        boots.append(dict(variant="post", disk=DISK, pressure="none", rep=REPS + 1,
                          status="failed: kernel panic", jobs=[]))
    H.make_run(root, boots)
    if meta:
        m = {"run_id": os.path.basename(root), "status": "complete",
             "started": started, "git_revision": "abc1234", "accel": "tcg",
             "icount": "", "memhog_mb": 1536}
        if version:
            m["kernel_source_version"] = version
        H.write_meta(root, m)
    return root


def release(version):
    """"6.12.120" of "6.12.120-1~deb12u1"."""
    return version.split("-")[0]


def cli(*args):
    return subprocess.run([HISTORY, "--resamples", RESAMPLES, *args],
                          capture_output=True, text=True, timeout=600)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def blocks(datafile):
    """The blocks of a plot data file: [(header, [row, ...])]."""
    with open(datafile, encoding="utf-8") as f:
        parts = f.read().strip("\n").split("\n\n\n")
    return [(p.splitlines()[0].strip('"'), p.splitlines()[1:]) for p in parts]


class History(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.results = os.path.join(cls.tmp.name, "results")
        cls.hdir = os.path.join(cls.tmp.name, "history")
        cls.runs = {}
        for rid, (version, started, scale) in RUNS.items():
            cls.runs[rid] = history_run(os.path.join(cls.results, rid), version, started,
                                        scale, failed_boot=(rid == "run-c"))
        cls.add1 = cli("--history-dir", cls.hdir, "add",
                       *[cls.runs[r] for r in ADD_ORDER])
        cls.after_two = table.load(cls.hdir)
        cls.add2 = cli("--history-dir", cls.hdir, "add", cls.runs["run-b"])
        cls.csv = read_bytes(table.history_path(cls.hdir))
        cls.df = table.load(cls.hdir)
        cls.plot = cli("--history-dir", cls.hdir, "plot")
        cls.changes = pd.read_csv(os.path.join(cls.hdir, table.CHANGES_FILE))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def row(self, run_id, variant, metric):
        sel = self.df[(self.df["run_id"] == run_id) & (self.df["variant"] == variant) &
                      (self.df["metric"] == metric)]
        self.assertEqual(len(sel), 1, (run_id, variant, metric))
        return sel.iloc[0]

    def change(self, variant, metric, a, b):
        sel = self.changes[(self.changes["variant"] == variant) &
                           (self.changes["metric"] == metric) &
                           (self.changes["run_a"] == a) & (self.changes["run_b"] == b)]
        self.assertEqual(len(sel), 1, (variant, metric, a, b))
        return sel.iloc[0]

    def test_cli_exit(self):
        for res in (self.add1, self.add2, self.plot):
            self.assertEqual(res.returncode, 0, res.stdout + res.stderr)
        self.assertTrue(os.access(HISTORY, os.X_OK))

    def test_rows_appended(self):
        self.assertEqual(set(self.after_two["run_id"]), set(ADD_ORDER))
        self.assertEqual(set(self.df["run_id"]), set(RUNS))
        run = tidy.load_run(self.runs["run-a"])
        for metric in ("read_iops", "read_lat_p99_us", "bounced_bytes_per_gib"):
            r = self.row("run-a", "pre-fixed", metric)
            vals = run.tidy[(run.tidy["variant"] == "pre-fixed") &
                            (run.tidy["metric"] == metric)]["value"]
            self.assertEqual(r["n"], REPS)
            self.assertAlmostEqual(r["median"], float(np.median(vals)), places=6)
            self.assertLessEqual(r["ci_low"], r["median"])
            self.assertGreaterEqual(r["ci_high"], r["median"])
            self.assertEqual(len(table.values(r["values"])), REPS)
            self.assertEqual((r["disk"], r["job"], r["pressure"]), (DISK, JOB, "none"))
        # every cell and metric of the run, and nothing the kernel lacks
        self.assertEqual(len(self.df[self.df["run_id"] == "run-a"]),
                         run.tidy.groupby(["variant", "disk", "job", "pressure",
                                           "metric"]).ngroups)
        self.assertFalse(len(self.df[(self.df["variant"] == "post") &
                                     (self.df["metric"] == "bounces")]))

    def test_run_identity(self):
        for rid, (version, started, _) in RUNS.items():
            g = self.df[self.df["run_id"] == rid]
            self.assertEqual(set(g["kernel_source_version"]), {version})
            self.assertEqual(set(g["started"]), {started})
            self.assertEqual(set(g["git_revision"]), {"abc1234"})
            self.assertEqual(set(g["kernel_release"]), {release(version)})
            self.assertEqual(set(g["source_package"]), {"linux-source-6.12"})
            self.assertEqual(set(g[g["variant"] == "post"]["role"]), {"removed"})
            self.assertEqual(set(g[g["variant"] == "pre-fixed"]["role"]), {"bounce"})

    def test_failed_boot_excluded(self):
        # run-c has a failed sixth post boot: not counted
        self.assertEqual(self.row("run-c", "post", "read_iops")["n"], REPS)

    def test_idempotent(self):
        res = cli("--history-dir", self.hdir, "add", self.runs["run-b"], self.runs["run-a"])
        self.assertEqual(res.returncode, 0, res.stderr)
        self.assertIn("replaced", res.stdout)
        self.assertEqual(read_bytes(table.history_path(self.hdir)), self.csv)
        self.assertFalse(self.df.duplicated(table.KEY).any())

    def test_change_flagged(self):
        r = self.change("post", "read_iops", "run-a", "run-b")
        self.assertTrue(r["significant"])
        self.assertEqual(r["verdict"], "faster")
        self.assertGreater(r["ci_low"], 1.0)
        self.assertAlmostEqual(r["ratio"], EFFECT, places=3)
        self.assertIn("kernel source 6.12.118-1~deb12u1 -> 6.12.120-1~deb12u1", r["note"])
        lat = self.change("post", "read_lat_p99_us", "run-a", "run-b")
        self.assertEqual(lat["verdict"], "faster")

    def test_no_change_not_flagged(self):
        for variant, a, b in (("post", "run-b", "run-c"), ("pre-fixed", "run-a", "run-b"),
                              ("pre-fixed", "run-b", "run-c")):
            r = self.change(variant, "read_iops", a, b)
            self.assertFalse(r["significant"], (variant, a, b))
            self.assertEqual(r["verdict"], "no significant difference")
        # only consecutive runs are compared
        self.assertFalse(len(self.changes[(self.changes["run_a"] == "run-a") &
                                          (self.changes["run_b"] == "run-c")]))

    def test_png(self):
        name = figures.name("read_iops", DISK, "none")
        png = os.path.join(self.hdir, "plots", name + ".png")
        self.assertGreater(os.path.getsize(png), 1000)
        self.assertEqual(png_size(png)[1], figures.SIZE[1])
        # PNG only: the history is read in a browser
        self.assertFalse(os.path.exists(os.path.join(self.hdir, "plots", name + ".svg")))

    def test_plot_data_in_date_order(self):
        name = figures.name("read_iops", DISK, "none")
        data = blocks(os.path.join(self.hdir, "plots", "data", name + ".dat"))
        # a series per variant and job (write_iops shares the figure)
        self.assertEqual([h for h, _ in data if "read_iops" in h or h == "ticks"],
                         [f"pre-fixed: read_iops {JOB}", f"post: read_iops {JOB}", "ticks"])
        data = [(h, rows) for h, rows in data if "read_iops" in h or h == "ticks"]
        ticks = data[-1][1]
        versions = [v for v, _, _ in RUNS.values()]
        self.assertEqual(len(ticks), len(RUNS))
        for i, (tick, version) in enumerate(zip(ticks, versions)):
            self.assertTrue(tick.startswith(f"{i} "), tick)
            self.assertIn(version, tick)
        # the significant change is marked on run-b's post point only
        post = data[1][1]
        self.assertEqual([row.split()[-1] for row in post], ['""', '"+50%"', '""'])
        self.assertTrue(all(row.split()[-1] == '""' for row in data[0][1]))

    def test_history_md(self):
        with open(os.path.join(self.hdir, table.REPORT_FILE), encoding="utf-8") as f:
            text = f.read()
        for rid, (version, _, _) in RUNS.items():
            self.assertIn(rid, text)
            self.assertIn(version, text)
        sig = [line for line in text.splitlines()
               if line.startswith("| read_iops |") and "run-a" in line]
        self.assertEqual(len(sig), 1, sig)
        self.assertIn("faster", sig[0])
        self.assertFalse([line for line in text.splitlines()
                          if line.startswith("| read_iops |") and "run-c" in line])
        png = f"plots/{figures.name('read_iops', DISK, 'none')}.png"
        self.assertIn(f"]({png})", text)


class Refused(unittest.TestCase):
    def test_no_ok_boots(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = H.make_run(os.path.join(tmp, "dead"), [dict(
                variant="pre", disk=DISK, pressure="none", rep=1,
                status="failed: kernel panic", jobs=[])])
            hdir = os.path.join(tmp, "history")
            res = cli("--history-dir", hdir, "add", run)
            self.assertEqual(res.returncode, 1)
            self.assertIn("no boot of this run succeeded", res.stderr)
            self.assertIn("failed: kernel panic", res.stderr)
            self.assertFalse(os.path.exists(table.history_path(hdir)))
            # next to a good run: the good one is added, the exit still says no
            good = history_run(os.path.join(tmp, "good"), "6.12.118-1~deb12u1",
                               "2026-12-01T06:00:00Z", 1.0)
            res = cli("--history-dir", hdir, "add", run, good)
            self.assertEqual(res.returncode, 1)
            self.assertEqual(set(table.load(hdir)["run_id"]), {"good"})

    def test_not_a_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            res = cli("--history-dir", os.path.join(tmp, "h"), "add", os.path.join(tmp, "nope"))
            self.assertEqual(res.returncode, 2)
            self.assertIn("no such run folder", res.stderr)

    def test_incomplete(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = history_run(os.path.join(tmp, "int"), "6.12.118-1~deb12u1",
                              "2026-12-01T06:00:00Z", 1.0)
            H.write_text(os.path.join(run, "INCOMPLETE"), "interrupted\n")
            hdir = os.path.join(tmp, "h")
            res = cli("--history-dir", hdir, "add", run)
            self.assertEqual(res.returncode, 1)
            self.assertIn("incomplete", res.stderr)
            res = cli("--history-dir", hdir, "add", "--allow-incomplete", run)
            self.assertEqual(res.returncode, 0, res.stderr)


class SourceVersion(unittest.TestCase):
    def test_fallback_to_build_info(self):
        with tempfile.TemporaryDirectory() as tmp:
            run = history_run(os.path.join(tmp, "20261203-062732"), None, None, 1.0,
                              meta=False)
            rows = table.read(run, n_boot=100)
            build = H.read_json(H.BUILD_INFO["post"])
            self.assertEqual(set(rows["kernel_source_version"]), {build["source_version"]})
            # no meta.json: the run id says when
            self.assertEqual(set(rows["started"]), {"2026-12-03T06:27:32Z"})
            self.assertEqual(set(rows["git_revision"]), {"unknown"})


class Rebuild(unittest.TestCase):
    def test_rebuild(self):
        with tempfile.TemporaryDirectory() as tmp:
            results = os.path.join(tmp, "results")
            for rid in ("run-a", "run-b"):
                version, started, scale = RUNS[rid]
                history_run(os.path.join(results, rid), version, started, scale)
            shutil.copytree(os.path.join(results, "run-a"), os.path.join(results, "run-int"))
            H.write_text(os.path.join(results, "run-int", "INCOMPLETE"), "interrupted\n")
            H.make_run(os.path.join(results, "run-dead"), [dict(
                variant="pre", disk=DISK, pressure="none", rep=1,
                status="failed: kernel panic", jobs=[])])
            H.write_text(os.path.join(results, "notes", "x.txt"), "hello\n")
            H.write_text(os.path.join(results, "README.md"), "runs\n")
            hdir = os.path.join(results, "history")
            # a stale table: rebuild starts afresh
            H.write_text(table.history_path(hdir), ",".join(table.HISTORY_COLUMNS) + "\n")
            res = cli("--history-dir", hdir, "rebuild", "--results-dir", results)
            self.assertEqual(res.returncode, 0, res.stderr)
            self.assertEqual(set(table.load(hdir)["run_id"]), {"run-a", "run-b"})
            out = res.stdout
            self.assertIn("run-int: incomplete run", out)
            self.assertIn("run-dead: no boot of this run succeeded", out)
            self.assertIn("notes: not a run", out)
            self.assertIn("history: the history folder itself", out)
            res = cli("--history-dir", hdir, "rebuild", "--results-dir", results,
                      "--exclude", "run-b")
            self.assertEqual(set(table.load(hdir)["run_id"]), {"run-a"})


class StandaloneScript(unittest.TestCase):
    def test_history_script_alone(self):
        with tempfile.TemporaryDirectory() as tmp:
            data = os.path.join(tmp, "d.dat")
            H.write_text(data, '"a"\n0 10 9 11 11 ""\n1 15 14 16 16 "+50%"\n\n\n'
                         '"ticks"\n0 "2026-12-01\\n6.12.118"\n1 "2026-12-08\\n6.12.120"\n')
            for ext in ("png", "svg"):
                out = os.path.join(tmp, "o." + ext)
                subprocess.run(
                    ["gnuplot", "-e", f"datafile='{data}'; outfile='{out}'; nblocks=1; "
                     "title='t'; width=640; height=400; xmax=1; vlines='0.5'",
                     os.path.join(H.ROOT, "plots", "history.gp")],
                    check=True, capture_output=True)
                self.assertGreater(os.path.getsize(out), 0)
            self.assertEqual(png_size(os.path.join(tmp, "o.png")), (640, 400))


if __name__ == "__main__":
    unittest.main()
