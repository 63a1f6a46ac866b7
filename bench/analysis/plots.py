# SPDX-License-Identifier: GPL-2.0
"""Data files for plots/*.gp and the gnuplot calls that turn them into PNG
and SVG files.

Every figure is written to OUTDIR/NAME.png and OUTDIR/NAME.svg from
OUTDIR/data/NAME.dat; make_plots returns only the figures whose files
exist, so the report never links a plot that failed.
"""
import os
import re
import shutil
import subprocess

import numpy as np
import pandas as pd

from . import memory as MEM
from . import metrics as M
from . import rawfiles as R
from . import stats as S
from . import tidy as T

GP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plots")

# Pixel size of each kind of figure (PNG; SVG gets the same size in pt).
SIZES = {
    "latency-percentiles": (900, 560),
    "bars": (1000, 560),
    "memory-timeline": (900, 820),
    "bounced-bytes": (900, 560),
    "forest": (900, 300),
    "dose-response": (1000, 760),
    "pressure-timeline": (1000, 820),
}
PX_PER_FOREST_ROW = 16
# The bar figures: (file-name prefix, metric).
BAR_METRICS = [
    ("throughput", "read_iops"), ("throughput", "write_iops"),
    ("latency", "read_clat_p99_us"), ("latency", "write_clat_p99_us"),
]
# Room for one x label ("smoke-randwrite-verify" at 8 pt): wide figures
# grow by this much per group or bar instead of overlapping their labels.
PX_PER_LABEL = 130
SIGNIFICANT = S.SIGNIFICANT
GNUPLOT_TIMEOUT = 120


def _slug(*parts):
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", "-".join(str(p) for p in parts))


def _num(x):
    return "?" if x is None or not np.isfinite(x) else f"{x:.6g}"


def _q(text):
    """A double-quoted gnuplot data-file string."""
    return '"' + str(text).replace('"', "'") + '"'


def _lines(*parts):
    """A multi-line gnuplot label (gnuplot expands \\n in quoted data)."""
    return "\\n".join(str(p) for p in parts)


def _gp_str(text):
    """A single-quoted gnuplot string for -e (a ' is written twice)."""
    return "'" + str(text).replace("'", "''") + "'"


class Plotter:
    def __init__(self, outdir, gp_dir=GP_DIR, gnuplot="gnuplot", sizes=None):
        self.outdir = outdir
        self.sizes = sizes or SIZES
        self.datadir = os.path.join(outdir, "data")
        self.gp_dir = os.path.abspath(gp_dir)
        self.gnuplot = shutil.which(gnuplot)
        self.figures = []
        self.errors = []

    def render(self, script, name, data, params, caption, group, width=None,
               height=None):
        """Write the data file, run gnuplot for PNG and SVG, record the
        figure if its files exist. width overrides the size table (SIZES,
        or the sizes given to the constructor) for figures that grow with
        the number of bars."""
        os.makedirs(self.datadir, exist_ok=True)
        datafile = os.path.join(self.datadir, name + ".dat")
        with open(datafile, "w", encoding="utf-8") as f:
            f.write(data)
        if not self.gnuplot:
            self.errors.append("gnuplot not found: no plots")
            return
        base_w, base_h = self.sizes[script]
        width = max(base_w, int(width or 0))
        height = max(base_h, int(height or 0))
        outs = {}
        for ext in ("png", "svg"):
            out = os.path.join(self.outdir, f"{name}.{ext}")
            args = dict(params, datafile=datafile, outfile=out,
                        width=width, height=height)
            expr = "; ".join(f"{k}={_gp_str(v) if isinstance(v, str) else v}"
                             for k, v in args.items())
            try:
                res = subprocess.run(
                    [self.gnuplot, "-e", expr,
                     os.path.join(self.gp_dir, script + ".gp")],
                    capture_output=True, text=True, timeout=GNUPLOT_TIMEOUT)
                err = res.stderr.strip() if res.returncode else ""
            except (OSError, subprocess.TimeoutExpired) as e:
                err = str(e)
            if err or not os.path.isfile(out) or os.path.getsize(out) == 0:
                self.errors.append(f"{script} -> {name}.{ext}: {err or 'no output'}")
                if os.path.isfile(out):
                    os.remove(out)
                continue
            outs[ext] = out
        if "png" in outs:
            self.figures.append(dict(kind=script, name=name, caption=caption,
                                     group=group, png=outs["png"],
                                     svg=outs.get("svg"), width=width,
                                     height=height))


def _variant_index(run):
    labels = S.pair_order(run, list(dict.fromkeys(run.boots["variant"])))
    return {v: i + 1 for i, v in enumerate(labels)}, labels


def latency_curves(run, p):
    """One figure per disk/job/pressure/direction, variants overlaid."""
    curves = run.percentiles
    if curves.empty:
        return
    _, order = _variant_index(run)
    ktitle = T.kernel_title(run)
    for (disk, job, pressure, d), g in curves.groupby(
            ["disk", "job", "pressure", "direction"], sort=True):
        blocks = []
        for v in [v for v in order if v in set(g["variant"])]:
            gv = g[(g["variant"] == v) & (g["percentile"] < 100)]
            n = gv["boot"].nunique()
            med = gv.groupby("percentile")["clat_us"].median().sort_index()
            rows = [f"{pc:g} {-np.log10(1 - pc / 100):.6g} {val:.6g}"
                    for pc, val in med.items()]
            blocks.append(_q(f"{v} (n={n})") + "\n" + "\n".join(rows))
        name = _slug("percentiles", disk, job, pressure, d)
        title = (f"{d} completion latency percentiles, median of runs\n"
                 f"{ktitle}; disk {disk}, job {job}, pressure {pressure}; "
                 f"variants {', '.join(v for v in order if v in set(g['variant']))}")
        p.render("latency-percentiles", name, "\n\n\n".join(blocks) + "\n",
                 dict(nblocks=len(blocks), title=title, direction=d),
                 f"{d} latency percentiles: {disk}, {job}, pressure {pressure}",
                 "latency percentiles")


def metric_bars(run, verdicts, p, prefix, metric):
    """One figure per disk (disks differ by orders of magnitude, so they
    never share an axis)."""
    t = run.tidy[run.tidy["metric"] == metric]
    for disk in sorted(set(t["disk"])):
        _metric_bars(run, verdicts, p, prefix, metric, t[t["disk"] == disk], disk)


def _metric_bars(run, verdicts, p, prefix, metric, t, disk_name):
    """Median per variant and cell with CI whiskers, every rep as a point
    and significance marks."""
    if t.empty:
        return
    points = []
    vindex, order = _variant_index(run)
    variants = [v for v in order if v in set(t["variant"])]
    cells = sorted({(r.disk, r.job, r.pressure) for r in t.itertuples()})
    nv = len(variants)
    blocks = {v: [] for v in variants}
    ticks = []
    for ci, (disk, job, pressure) in enumerate(cells):
        x0 = ci * (nv + 1)
        ticks.append(f"{x0 + (nv - 1) / 2:g} " + _q(_lines(disk, job, f"pressure {pressure}")))
        cell = t[(t["disk"] == disk) & (t["job"] == job) & (t["pressure"] == pressure)]
        present = [v for v in variants if v in set(cell["variant"])]
        base = present[0] if present else None
        for vi, v in enumerate(variants):
            vals = cell[cell["variant"] == v]["value"].to_numpy()
            if not len(vals):
                continue
            points += [f"{x0 + vi:g} {_num(x)}" for x in vals]
            med, lo, hi = S.median_ci(vals, seed=S.cell_seed(metric, disk, job, pressure, v))
            mark = ""
            if v != base:
                row = verdicts[(verdicts["metric"] == metric) & (verdicts["disk"] == disk) &
                               (verdicts["job"] == job) & (verdicts["pressure"] == pressure) &
                               (verdicts["a"] == base) & (verdicts["b"] == v)]
                if len(row) and row["verdict"].iloc[0] in SIGNIFICANT:
                    mark = "*"
            top = hi if np.isfinite(hi) else med
            blocks[v].append(f"{x0 + vi:g} {_num(med)} {_num(lo)} {_num(hi)} "
                             f"{_num(top)} {_q(mark)}")
    parts = [_q(f"{v}") + "\n" + "\n".join(rows) for v, rows in blocks.items() if rows]
    colors = " ".join(str(vindex[v]) for v, rows in blocks.items() if rows)
    nblocks = len(parts)
    parts.append(_q("ticks") + "\n" + "\n".join(ticks))
    parts.append(_q("reps") + "\n" + "\n".join(points))
    name = _slug(prefix, metric, disk_name)
    unit = M.unit(metric)
    title = (f"{M.label(metric)} on {disk_name}: median per variant with 95% bootstrap CI, "
             f"dots: each rep\n{T.kernel_title(run)}; variants {', '.join(variants)}")
    foot = ("* = significant against the first variant of the group (BH-adjusted "
            "permutation test); no whisker = fewer than 2 runs")
    p.render("bars", name, "\n\n\n".join(parts) + "\n",
             dict(nblocks=nblocks, title=title, ylabel=f"{M.label(metric)} ({unit})",
                  footnote=foot, colors=colors,
                  xmax=(len(cells) - 1) * (nv + 1) + nv - 1),
             f"{M.label(metric)} per variant on {disk_name}", prefix,
             width=len(cells) * max(PX_PER_LABEL, 30 * (nv + 1)) + 200)


def bounced_bytes(run, p):
    """Bounced MiB per GiB moved for every variant/disk/job that ran."""
    ok = run.jobs[run.jobs["state"] == "ok"] if not run.jobs.empty else run.jobs
    if ok.empty:
        return
    vindex, order = _variant_index(run)
    t = run.tidy[run.tidy["metric"] == "bounced_bytes_per_gib"]
    keys = sorted({(r.variant, r.disk, r.job, r.pressure) for r in ok.itertuples()},
                  key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1:]))
    rows = []
    for x, (v, disk, job, pressure) in enumerate(keys):
        vals = t[(t["variant"] == v) & (t["disk"] == disk) & (t["job"] == job) &
                 (t["pressure"] == pressure)]["value"].to_numpy() / (1 << 20)
        jobs = ok[(ok["variant"] == v) & (ok["disk"] == disk) & (ok["job"] == job) &
                  (ok["pressure"] == pressure)]
        if len(vals):
            med, lo, hi = S.median_ci(vals, seed=S.cell_seed("bb", v, disk, job, pressure))
            note, top = f"{med:.0f}", (hi if np.isfinite(hi) else med)
        else:
            med = lo = hi = np.nan
            top = 0.0
            traces = set(jobs["bounce_trace"])
            note = "no tracepoint" if traces == {"absent"} else "not counted"
        rows.append(f"{x} {_num(med)} {_num(lo)} {_num(hi)} {vindex.get(v, 1)} "
                    f"{_num(top)} {_q(note)} " + _q(_lines(v, disk, job, f"pressure {pressure}")))
    title = (f"Bounced bytes per GiB moved (block_bio_bounce hist), median of runs\n"
             f"{T.kernel_title(run)}")
    p.render("bounced-bytes", "bounced-bytes", "\n".join(rows) + "\n",
             dict(title=title, nbars=len(rows)), "bounced bytes per GiB moved", "bounces",
             width=len(rows) * PX_PER_LABEL + 150)


def _labmon_data(mon):
    """labmon columns -> the timeline data file; None when unusable."""
    def col(name, scale=1.0):
        if name not in mon:
            return pd.Series([np.nan] * len(mon))
        return pd.to_numeric(mon[name], errors="coerce") * scale
    t = col("t_ms", 1e-3)
    data = pd.DataFrame({
        "t": t, "low": col("LowFree", 1 / 1024), "high": col("HighFree", 1 / 1024),
        "bounce": col("Bounce"), "nr_bounce": col("nr_bounce", 4.0),
        "hits": col("bounce_hits"), "some": col("some_avg10"), "full": col("full_avg10"),
    })
    lines = [" ".join(_num(x) for x in row) for row in data.itertuples(index=False)]
    flags = dict(has_bounce=int(data[["bounce", "nr_bounce"]].notna().any().any()),
                 has_hits=int(data["hits"].notna().any()),
                 has_psi=int(data[["some", "full"]].notna().any().any()))
    return "\n".join(lines) + "\n", flags, float(t.max())


def memory_timelines(run, p):
    """One timeline per variant/disk/job/pressure: its lowest repetition
    (the others look alike; the tidy metrics cover all of them)."""
    ok = run.jobs[run.jobs["state"] == "ok"] if not run.jobs.empty else run.jobs
    if ok.empty:
        return
    _, order = _variant_index(run)
    ktitle = T.kernel_title(run)
    first = ok.sort_values(["rep", "boot"]).groupby(
        ["variant", "disk", "job", "pressure"], sort=False).head(1)
    first = first.assign(_o=first["variant"].map(lambda v: order.index(v) if v in order else 99))
    for j in first.sort_values(["disk", "job", "pressure", "_o"]).itertuples():
        mon = R.read_labmon(os.path.join(run.path, j.dir, "labmon.csv"))
        if mon is None or len(mon) < 2 or "t_ms" not in mon:
            continue
        data, flags, tmax = _labmon_data(mon)
        dur = (j.end_s - j.start_s) if np.isfinite(j.start_s) and np.isfinite(j.end_s) else tmax
        name = _slug("memory", j.variant, j.disk, j.job, j.pressure, f"r{j.rep}")
        title = (f"Memory during the job: {ktitle}, variant {j.variant}\n"
                 f"disk {j.disk}, job {j.job}, pressure {j.pressure}, rep {j.rep} (boot {j.boot})")
        p.render("memory-timeline", name, data,
                 dict(title=title, jobstart=0, jobend=f"{dur:.3f}", tmax=f"{tmax:.3f}", **flags),
                 f"memory timeline: {j.variant}, {j.disk}, {j.job}, "
                 f"pressure {j.pressure}, rep {j.rep}",
                 "memory timelines")


def forest(run, verdicts, p):
    """One forest plot per primary slot: ratio and CI of every primary
    row that has a ratio (controls grey, significant rows red)."""
    if verdicts.empty:
        return
    prim = verdicts[verdicts["primary"].astype(bool) & np.isfinite(verdicts["ratio"]) &
                    (verdicts["ratio"] > 0) & np.isfinite(verdicts["ratio"].replace(np.inf, np.nan))]
    for slot in M.PRIMARY_SLOTS:
        rows = prim[prim["slot"] == slot]
        if rows.empty:
            continue
        rows = rows.sort_values(["control", "disk", "job", "pressure", "a", "b"], kind="stable")
        lines = []
        for y, r in enumerate(rows.itertuples()):
            color = 3 if r.control else (2 if r.verdict in SIGNIFICANT else 1)
            lo = r.ci_low if np.isfinite(r.ci_low) and r.ci_low > 0 else np.nan
            hi = r.ci_high if np.isfinite(r.ci_high) else np.nan
            label = (f"{r.disk} {r.job} {r.pressure}: {r.b}/{r.a}"
                     + (" (control)" if r.control else ""))
            lines.append(f"{y} {_num(r.ratio)} {_num(lo)} {_num(hi)} {color} {_q(label)}")
        metrics = ", ".join(dict.fromkeys(M.label(m) for m in rows["metric"]))
        title = (f"Primary metric: {slot} ({metrics})\n{T.kernel_title(run)}\n"
                 "red: significant after BH; grey: control (A/A)")
        p.render("forest", _slug("forest", slot), "\n".join(lines) + "\n",
                 dict(title=title, nrows=len(lines)), f"forest plot: {slot}", "forest",
                 height=150 + PX_PER_FOREST_ROW * len(lines))


def make_plots(run, verdicts, outdir, gp_dir=GP_DIR):
    """All figures of a run; returns the Plotter (figures, errors)."""
    os.makedirs(outdir, exist_ok=True)
    p = Plotter(outdir, gp_dir)
    forest(run, verdicts, p)
    for prefix, metric in BAR_METRICS:
        metric_bars(run, verdicts, p, prefix, metric)
    latency_curves(run, p)
    bounced_bytes(run, p)
    memory_timelines(run, p)
    MEM.dose_response(run, p)
    MEM.pressure_timeline(run, p)
    return p
