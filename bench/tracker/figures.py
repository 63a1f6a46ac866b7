# SPDX-License-Identifier: GPL-2.0
"""The headline metrics over time: one figure per headline metric, job,
bounce-candidate disk and pressure (history-*.png from plots/history.gp), runs in date
order on x, variants overlaid, significant changes circled; then the
figures across kernel versions (tracker.versions).
"""
import os

import numpy as np
import pandas as pd

from analysis import metrics, plots, roles
from tracker import changes, table, versions

SIZE = (1000, 560)
PX_PER_RUN = 120
# Overlaid variants are drawn this far apart on the x axis (run slots are 1).
VARIANT_OFFSET = 0.08


def is_headline(metric, job):
    """Whether the history draws metric of job (metrics.HEADLINES, page
    HISTORY): one figure per such metric, job, disk and pressure."""
    return metrics.is_headline(metric, job, metrics.HISTORY)


def _colors(df):
    """variant -> line type, fixed for every figure of the history."""
    out = {}
    extra = len(roles.LAB_VARIANT_ORDER)
    for v in table.variant_order(df):
        k = df[df["variant"] == v]["kernel_variant"].iloc[0]
        r = table.variant_rank(v, k)
        if r < len(roles.LAB_VARIANT_ORDER) and v in roles.LAB_VARIANT_ORDER:
            out[v] = r + 1
        else:
            extra += 1
            out[v] = extra
    return out


def tic_label(started, version):
    ts = table.parse_dates(pd.Series([started]))[0]
    when = ts.strftime("%Y-%m-%d %H:%M") if not pd.isna(ts) else str(started)
    return plots._lines(when, version)


def width(nruns):
    return max(SIZE[0], nruns * PX_PER_RUN + 250)


def name(metric, job, disk, pressure):
    return plots._slug("history", metric, job, disk, pressure)


def data(cell, ch, colors):
    """The data file and the gnuplot parameters of one figure: cell is the
    history rows of one metric/job/disk/pressure, ch the changes."""
    metric = cell["metric"].iloc[0]
    scale, unit = versions.DISPLAY_UNITS.get(metrics.unit(metric),
                                             (1.0, metrics.unit(metric)))
    order = table.run_order(cell)
    runs = sorted(order, key=order.get)
    x_of = {r: i for i, r in enumerate(runs)}
    variants = [v for v in table.variant_order(cell)]
    nv = len(variants)
    sig = changes.significant(ch)
    blocks, cols = [], []
    for vi, v in enumerate(variants):
        g = cell[cell["variant"] == v]
        off = (vi - (nv - 1) / 2) * VARIANT_OFFSET
        lines = []
        for r in sorted(g["run_id"], key=order.get):
            row = g[g["run_id"] == r].iloc[0]
            med, lo, hi = (row["median"] * scale, row["ci_low"] * scale,
                           row["ci_high"] * scale)
            mark = ""
            hit = sig[(sig["variant"] == v) & (sig["run_b"] == r)]
            if len(hit):
                mark = f"{(hit['ratio'].iloc[0] - 1) * 100:+.0f}%"
            top = hi if np.isfinite(hi) else med
            lines.append(f"{x_of[r] + off:.4g} {plots._num(med)} {plots._num(lo)} "
                         f"{plots._num(hi)} {plots._num(top)} {plots._q(mark)}")
        blocks.append(plots._q(v) + "\n" + "\n".join(lines))
        cols.append(str(colors.get(v, vi + 1)))
    info = cell.drop_duplicates("run_id").set_index("run_id")
    ticks, vlines, prev = [], [], None
    for r in runs:
        version = table.joined_versions(cell[cell["run_id"] == r]["kernel_source_version"])
        ticks.append(f"{x_of[r]} " + plots._q(tic_label(info.loc[r, "started"], version)))
        if prev is not None and version != prev:
            vlines.append(f"{x_of[r] - 0.5:g}")
        prev = version
    text = "\n\n\n".join(blocks + [plots._q("ticks") + "\n" + "\n".join(ticks)]) + "\n"
    disk, job, pressure = (cell[c].iloc[0] for c in ("disk", "job", "pressure"))
    title = (f"{metrics.label(metric)}: median per run with 95% bootstrap CI\n"
             f"job {job}, disk {disk}, pressure {pressure}; variants {', '.join(variants)}")
    foot = ("circled, with its change: significant against the previous run of the same "
            "variant (permutation test, Benjamini-Hochberg adjusted p <= 0.05)\n"
            "error bar: 95% bootstrap CI of the run's median (none: fewer than 2 "
            "repetitions); dashed line: new kernel source version")
    params = dict(nblocks=len(blocks), title=title,
                  ylabel=f"{metrics.label(metric)} ({unit})",
                  footnote=foot, colors=" ".join(cols), xmax=len(runs) - 1,
                  vlines=" ".join(vlines))
    return text, params, len(runs)


def make(df, ch, outdir, gp_dir=plots.GP_DIR):
    """One figure per headline metric, job, disk and pressure, then the
    figures across kernel versions (tracker.versions; only with two or
    more source versions); returns the Plotter (figures, errors)."""
    os.makedirs(outdir, exist_ok=True)
    # PNG only: the page is read in a browser (an SVG beside each figure
    # doubled the files)
    p = plots.Plotter(outdir, gp_dir, svg_kinds=(),
                      sizes={"history": SIZE, versions.SCRIPT: versions.SIZE})
    if df.empty:
        return p
    colors = _colors(df)
    for metric in metrics.headlines(metrics.HISTORY):
        rows = df[(df["metric"] == metric) & df["median"].notna()]
        for (job, disk, pressure), cell in rows.groupby(["job", "disk", "pressure"], sort=True):
            # the bounce-candidate disks: a control disk's tables stay in
            # history.csv and changes.csv
            if not is_headline(metric, job) or not versions.is_candidate(disk):
                continue
            # over time needs two runs of a variant; one run is a point, in
            # the tables across versions
            if cell.groupby("variant")["run_id"].nunique().max() < 2:
                continue
            cch = ch[(ch["metric"] == metric) & (ch["job"] == job) &
                     (ch["disk"] == disk) & (ch["pressure"] == pressure)] if not ch.empty else ch
            text, params, nruns = data(cell, cch, colors)
            p.render("history", name(metric, job, disk, pressure), text, params,
                     f"{metrics.label(metric)}: {job}, {disk}, pressure {pressure}",
                     metrics.label(metric), width=width(nruns))
    versions.make_plots(df, table.run_order(df), p)
    return p
