# SPDX-License-Identifier: GPL-2.0
"""Data files for plots/*.gp and the gnuplot calls that turn them into PNG
and SVG files.

Every figure is written to OUTDIR/NAME.png (and NAME.svg for the kinds in
SVG_KINDS, or for all with everything=True) from OUTDIR/data/NAME.dat;
make_plots returns only the figures whose files exist, so the report never
links a plot that failed. A default run stays at about 30 plot files: the
per-job figures (every memory timeline, every latency curve, the bars of
every disk) are made only when asked for (bench/analyze --all-plots); the
I/O-size sweep's jobs have one figure of their own (sweep).
"""
import os
import re
import shutil
import subprocess

import numpy as np
import pandas as pd

from lab import jobname as J
from . import headline as HL
from . import memory as MEM
from . import metrics as M
from . import rawfiles as R
from . import stats as S
from . import sweep as SW
from . import tidy as T

GP_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plots")

# Pixel size of each kind of figure (PNG; SVG gets the same size in pt).
SIZES = {
    "latency-percentiles": (900, 560),
    "bars": (1000, 560),
    "memory-timeline": (900, 820),
    "memory-disk": (1000, 760),
    "bounced-bytes": (900, 560),
    "forest": (900, 300),
    "dose-response": (1000, 760),
    "pressure-timeline": (1000, 820),
    "sweep": (1000, 520),
}
PX_PER_FOREST_ROW = 16
# The forest's title (four lines) and x axis.
FOREST_HEAD_PX = 170
# A forest a reader reads in a minute: the first screen's rows, at most
# this many (the largest effects; tables.md has every row).
MAX_FOREST_ROWS = 30
# The bar figures: (file-name prefix, metric), from the registry's "plot"
# flag; --all-plots adds the latency tails.
BAR_METRICS = [("throughput", m) for m in M.selected("plot")]
ALL_BAR_METRICS = BAR_METRICS + [("latency", "read_lat_p99_us"),
                                 ("latency", "write_lat_p99_us")]
# Kinds that also get an SVG in a default run: the forest plots, whose
# row labels one zooms into.
SVG_KINDS = ("forest",)
# Room for one x label ("smoke-randwrite-verify" at 8 pt): wide figures
# grow by this much per group or bar instead of overlapping their labels.
PX_PER_LABEL = 130
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
    def __init__(self, outdir, gp_dir=GP_DIR, gnuplot="gnuplot", sizes=None,
                 svg_kinds=None):
        self.outdir = outdir
        self.svg_kinds = svg_kinds      # None: every kind (history, versions)
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
        svg = self.svg_kinds is None or script in self.svg_kinds
        for ext in ("png", "svg") if svg else ("png",):
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
    labels = run.labels
    return {v: i + 1 for i, v in enumerate(labels)}, labels


def _tail_direction(run, disk, job):
    """The direction of a job's primary latency tail ("read"/"write")."""
    present = set(run.tidy.loc[(run.tidy["disk"] == disk) & (run.tidy["job"] == job), "metric"])
    m = M.primary_metrics(job, present).get("latency tail", "")
    return m.split("_")[0] if m else None


def latency_curves(run, p, everything=False):
    """One figure per disk/job/pressure/direction, variants overlaid; by
    default only the primary jobs of the bounce-candidate disks, in the
    direction of their latency tail, but the I/O-size sweep's (its own
    figure, sweep())."""
    curves = run.percentiles
    if curves.empty:
        return
    if not everything:
        jobs = {j for j in HL.question_jobs(run) if not run.sweep_shape(j)}
        keep = [d in run.candidate_disks and j in jobs and dr == _tail_direction(run, d, j)
                for d, j, dr in zip(curves["disk"], curves["job"], curves["direction"])]
        curves = curves[keep]
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


def metric_bars(run, verdicts, p, prefix, metric, everything=False):
    """One figure per disk (disks differ by orders of magnitude, so they
    never share an axis); by default only the bounce-candidate disks and
    their within-boot ratios, without the I/O-size sweep's jobs (their
    IOPS span three orders of magnitude; its own figure, sweep())."""
    t = run.tidy[run.tidy["metric"] == metric]
    disks = sorted(set(t["disk"]))
    if not everything:
        t = t[[not run.sweep_shape(j) for j in t["job"]]]
        cand = run.candidate_disks
        disks = [d for d in disks if d in cand or str(d).split("/")[0] in cand]
    for disk in disks:
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
                if len(row) and S.is_relevant(row.iloc[0].get("relevance", "")):
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
    foot = ("* = relevant against the first variant of the group (BH-adjusted "
            "permutation test, at least the smallest effect of interest); "
            "no whisker = fewer than 2 runs")
    p.render("bars", name, "\n\n\n".join(parts) + "\n",
             dict(nblocks=nblocks, title=title, ylabel=f"{M.label(metric)} ({unit})",
                  footnote=foot, colors=colors,
                  xmax=(len(cells) - 1) * (nv + 1) + nv - 1),
             f"{M.label(metric)} per variant on {disk_name}", prefix,
             width=len(cells) * max(PX_PER_LABEL, 30 * (nv + 1)) + 200)


def bounced_bytes(run, p):
    """Bounced MiB per GiB moved, median and 95 % CI over boots, for every
    variant/disk/job the block_bio_bounce trigger counted on a
    bounce-candidate disk (the sweep's jobs have their own figure). A
    cell it did not count (an unprobed twin, a kernel without the
    tracepoint) has no bar: the report's tables say which; no figure
    when nothing was counted."""
    vindex, order = _variant_index(run)
    t = run.tidy[run.tidy["metric"] == "bounced_bytes_per_gib"]
    t = t[t["disk"].isin(run.candidate_disks) & ~t["job"].map(J.is_sweep).astype(bool)]
    keys = sorted({(r.variant, r.disk, r.job, r.pressure) for r in t.itertuples()},
                  key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1:]))
    if not keys:
        return
    rows = []
    for x, (v, disk, job, pressure) in enumerate(keys):
        vals = t[(t["variant"] == v) & (t["disk"] == disk) & (t["job"] == job) &
                 (t["pressure"] == pressure)]["value"].to_numpy() / (1 << 20)
        med, lo, hi = S.median_ci(vals, seed=S.cell_seed("bb", v, disk, job, pressure))
        top = hi if np.isfinite(hi) else med
        rows.append(f"{x} {_num(med)} {_num(lo)} {_num(hi)} {vindex.get(v, 1)} "
                    f"{_num(top)} {_q(f'{med:.0f} (n {len(vals)})')} " +
                    _q(_lines(v, disk, job, f"pressure {pressure}")))
    title = ("Bounced MiB per GiB moved (block_bio_bounce hist): median and 95 % CI over "
             f"boots, n per bar\n{T.kernel_title(run)}")
    p.render("bounced-bytes", "bounced-bytes", "\n".join(rows) + "\n",
             dict(title=title, nbars=len(rows)), "bounced bytes per GiB moved", "bounces",
             width=len(rows) * (PX_PER_LABEL + 30) + 150)


def sweep(run, p):
    """The I/O-size sweep: removed/bounce and baseline/bounce IOPS per
    size, read and write, with the determinism bound as the band."""
    rows = SW.figure_rows(run)
    if not rows:
        return
    pts = SW.points(run)
    bounce, base, rem = pts[0]["bounce"], pts[0]["base"], pts[0]["removed"] or "removed"
    blocks = []
    for d in ("read", "write"):
        blocks.append("\n".join(f"{kib} {_num(r)} {_num(b)}"
                                 for dd, kib, r, b, _ in sorted(rows, key=lambda x: x[1])
                                 if dd == d) or "? ? ?")
    disks = ", ".join(dict.fromkeys(x["disk"] for x in pts))
    title = (f"IOPS against {bounce} by I/O size, {disks}, instruction time\n"
             f"{T.kernel_title(run)}")
    p.render("sweep", "sweep", "\n\n\n".join(blocks) + "\n",
             dict(title=title, bound=rows[0][4], rem=f"{rem}/{bounce}", base=f"{base}/{bounce}"),
             f"{rem}/{bounce} and {base}/{bounce} IOPS against I/O size (band: the "
             f"{rows[0][4]:g}% determinism bound)", "the I/O-size sweep")


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


def job_timelines(run, p):
    """One timeline per variant/disk/job/pressure: its lowest repetition
    (the others look alike; the tidy metrics cover all of them). Only with
    --all-plots: a default run has disk_timelines instead."""
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


def disk_timelines(run, p):
    """One figure per disk: memory over every job of rep 1 without extra
    pressure, in run order, the variants side by side on shared axes
    (--all-plots: without pressure its lines are flat, the pressure
    timeline is the figure that moves)."""
    ok = run.jobs[run.jobs["state"] == "ok"] if not run.jobs.empty else run.jobs
    if ok.empty:
        return
    _, order = _variant_index(run)
    for disk in sorted(set(ok["disk"])):
        d = ok[ok["disk"] == disk]
        pressure = "none" if (d["pressure"] == "none").any() else sorted(set(d["pressure"]))[0]
        d = d[d["pressure"] == pressure]
        blocks, names = [], []
        for v in [v for v in order if v in set(d["variant"])]:
            dv = d[d["variant"] == v]
            rep = dv["rep"].min()
            boot = dv[dv["rep"] == rep]["boot"].min()
            data = _concat_jobs(run, dv[(dv["rep"] == rep) & (dv["boot"] == boot)])
            if data is not None:
                blocks.append(data)
                names.append(v)
        if not blocks:
            continue
        allv = pd.concat(blocks)
        text = "\n\n\n".join(_block_text(b) for b in blocks) + "\n"
        title = (f"Memory on {disk} over the jobs of rep 1 (pressure {pressure}), in run order; "
                 f"{T.kernel_title(run)}")
        p.render("memory-disk", _slug("memory", disk), text,
                 dict(title=title, nvariants=len(names), variants=" ".join(names),
                      has_bounce=" ".join(str(int(b["bounce"].notna().any())) for b in blocks),
                      has_psi=" ".join(str(int(b["some"].notna().any())) for b in blocks),
                      **_axes(allv)),
                 f"memory timeline: {disk}, rep 1, {', '.join(names)} side by side",
                 "memory timelines")


def _concat_jobs(run, jobs):
    """The labmon samples of jobs (one boot) one after the other: time runs
    on from job to job; NaN rows separate them (a gap in the lines)."""
    parts, t0 = [], 0.0
    for j in jobs.sort_values("dir").itertuples():
        mon = R.read_labmon(os.path.join(run.path, j.dir, "labmon.csv"))
        if mon is None or len(mon) < 2 or "t_ms" not in mon:
            continue

        def col(name, scale=1.0):
            if name not in mon:
                return pd.Series([np.nan] * len(mon))
            return pd.to_numeric(mon[name], errors="coerce").reset_index(drop=True) * scale
        t = col("t_ms", 1e-3)
        parts.append(pd.DataFrame({"t": t + t0, "low": col("LowFree", 1 / 1024),
                                   "bounce": col("Bounce"), "some": col("some_avg10")}))
        parts.append(pd.DataFrame({"t": [np.nan], "low": [np.nan], "bounce": [np.nan],
                                   "some": [np.nan]}))
        t0 += float(t.max()) + 1.0
    return pd.concat(parts, ignore_index=True) if parts else None


def _axes(df):
    """Shared axes of the side-by-side panels (gnuplot's own without data)."""
    low, t = df["low"].dropna(), df["t"].dropna()
    out = dict(tmax=round(float(t.max()), 3) if len(t) else 1)
    if len(low):
        pad = max(float(low.max() - low.min()) * 0.1, 1.0)
        out.update(lowmin=round(float(low.min()) - pad, 3), lowmax=round(float(low.max()) + pad, 3))
    return out


def _block_text(df):
    rows = []
    for r in df.itertuples(index=False):
        rows.append("" if not np.isfinite(r.t) else " ".join(_num(x) for x in r))
    return "\n".join(rows)


def _forest_rows(run, verdicts):
    """The primary rows of the performance jobs (no integrity job, no
    probed twin) that have a ratio, but the split halves (a label against
    itself: the controls line counts them)."""
    jobs = HL.question_jobs(run)
    r = verdicts["ratio"].astype(float)
    return verdicts[verdicts["primary"].astype(bool) & verdicts["job"].isin(jobs) &
                    np.isfinite(r) & (r > 0) & ~S.is_split(verdicts)]


def _headline_rows(run, rows):
    """(rows the forest draws, how many it leaves to tables.md): the
    first screen's rows, those of a bounce-candidate disk or its
    within-boot ratio, no control and no sweep job (the sweep has its own
    figure), the largest effects first when there are more than
    MAX_FOREST_ROWS."""
    sweep = np.array([J.is_sweep(j) for j in rows["job"]], dtype=bool)
    cand = run.candidate_disks
    first = np.array([str(d).split("/")[0] in cand for d in rows["disk"]], dtype=bool)
    keep = rows[~rows["control"].astype(bool) & ~sweep & first]
    if len(keep) > MAX_FOREST_ROWS:
        size = np.abs(np.log(keep["ratio"].astype(float)))
        keep = keep.loc[size.sort_values(ascending=False, kind="stable").index[:MAX_FOREST_ROWS]]
    return keep, len(rows) - len(keep)


def _fitted_range(rows):
    """An x range around the ratios and their finite CI bounds, with 1."""
    vals = [1.0] + list(rows["ratio"].astype(float))
    for c in ("ci_low", "ci_high"):
        x = rows[c].astype(float)
        vals += list(x[np.isfinite(x) & (x > 0)])
    lo, hi = min(vals), max(vals)
    pad = max(hi - lo, 0.01) * 0.06
    return max(lo - pad, 0.0), hi + pad


def forest(run, verdicts, p):
    """One forest plot per primary slot: ratio and 95 % CI of each row of
    the first screen (_headline_rows: no control, no sweep, at most
    MAX_FOREST_ROWS), sorted by disk then effect, each label with n per
    kernel; relevant rows red; a linear x axis fitted to the rows that
    have a CI. The controls and the rows left out are counted in the
    title (tables.md has them all)."""
    if verdicts.empty:
        return
    prim = _forest_rows(run, verdicts)
    for slot in M.PRIMARY_SLOTS:
        every = prim[prim["slot"] == slot]
        rows, left = _headline_rows(run, every)
        if rows.empty:
            continue
        rows = rows.assign(_r=rows["ratio"].astype(float))
        rows = rows.sort_values(["disk", "_r", "job", "pressure", "a", "b"], kind="stable")
        # a ratio without a CI (too few reps) must not stretch the axis
        has_ci = np.isfinite(rows["ci_low"].astype(float)) & np.isfinite(
            rows["ci_high"].astype(float))
        xmin, xmax = _fitted_range(rows[has_ci] if has_ci.any() else rows)
        lines = []
        for y, r in enumerate(rows.itertuples()):
            color = 2 if S.is_relevant(getattr(r, "relevance", "")) else 1
            lo = r.ci_low if np.isfinite(r.ci_low) and r.ci_low > 0 else np.nan
            hi = r.ci_high if np.isfinite(r.ci_high) else np.nan
            ratio = min(max(r.ratio, xmin), xmax)
            label = (f"{r.disk} {r.job}" + ("" if r.pressure == "none" else f" {r.pressure}") +
                     f": {r.b}/{r.a} (n {r.n_b}/{r.n_a})" +
                     ("" if np.isfinite(lo) and np.isfinite(hi) else
                      f", no CI, ratio {r.ratio:.3g}"))
            lines.append(f"{y} {_num(ratio)} {_num(lo)} {_num(hi)} {color} {_q(label)}")
        metrics = ", ".join(dict.fromkeys(M.label(m) for m in rows["metric"]))
        controls = every[every["control"].astype(bool)]
        ctl_rel = int(controls["relevance"].map(S.is_relevant).sum()) if len(controls) else 0
        title = (f"{slot} ({metrics}): ratio B/A of geometric means, 95 % CI\n"
                 f"{T.kernel_title(run)}; n: boots B/A\n"
                 "red: relevant (significant, at least the smallest effect of interest)\n"
                 f"controls: {len(controls)} rows, {ctl_rel} relevant; {left} more rows "
                 "(controls, control disks, sweep) in tables.md")
        p.render("forest", _slug("forest", slot), "\n".join(lines) + "\n",
                 dict(title=title, nrows=len(lines), xmin=round(xmin, 6), xmax=round(xmax, 6)),
                 f"forest plot: {slot}", "forest",
                 height=FOREST_HEAD_PX + PX_PER_FOREST_ROW * len(lines))


def make_plots(run, verdicts, outdir, gp_dir=GP_DIR, everything=False):
    """All figures of a run; returns the Plotter (figures, errors).
    everything: also the per-job figures, and an SVG beside every PNG."""
    os.makedirs(outdir, exist_ok=True)
    p = Plotter(outdir, gp_dir, svg_kinds=None if everything else SVG_KINDS)
    forest(run, verdicts, p)
    for prefix, metric in ALL_BAR_METRICS if everything else BAR_METRICS:
        metric_bars(run, verdicts, p, prefix, metric, everything)
    latency_curves(run, p, everything)
    bounced_bytes(run, p)
    sweep(run, p)
    if everything:
        disk_timelines(run, p)
        job_timelines(run, p)
    MEM.dose_response(run, p)
    MEM.pressure_timeline(run, p)
    return p
