# SPDX-License-Identifier: GPL-2.0
"""The figures, one question each, PNG only; none of zeros only.

Over time (plots/history.gp): did a headline metric move from run to
run? A figure per metric (read and write as one), candidate disk and
pressure, a series per variant and job of two runs or more. Across
versions (plots/versions.gp): a table of "Across kernel versions" drawn
per disk, pressure and unit, x the kernels, a series per column.
"""
import os
import re

import numpy as np
import pandas as pd

from analysis import metrics, plots, stats
from tracker import changes, markdown as V, table

SIZE = (1000, 560)
PX_PER_RUN = 120
PX_PER_KERNEL = 110
LEGEND_PX = 450         # room for the legend, outside the axes
POINT_TYPES = (7, 5, 9, 11, 13, 15)


def family(metric):
    return re.sub(r"^(read|write)_", "", metric)


def name(metric, disk, pressure):
    return plots.slug("history", family(metric), disk, pressure)


def versions_name(group, disk, pressure, *extra):
    return plots.slug(V.PREFIX, group, disk, pressure, *extra)


def point(x, r, scale, label=""):
    """A data row "x median ci_low ci_high label_y \"label\"" ("?": none)."""
    if r is None:
        return f"{x:.4g} ? ? ? ? \"\""
    med, lo, hi = (r["median"] * scale, r["ci_low"] * scale, r["ci_high"] * scale)
    return (f"{x:.4g} {plots.num(med)} {plots.num(lo)} {plots.num(hi)} "
            f"{plots.num(hi if np.isfinite(hi) else med)} {plots.q(label)}")


def _text(blocks):
    return "\n\n\n".join(plots.q(h) + "\n" + "\n".join(rows) for h, rows in blocks) + "\n"


def over_time(p, cell, sig, colors):
    """Draw a figure over time, if a series has two runs and a point is not 0."""
    order = table.run_order(cell)
    vrank = {v: i for i, v in enumerate(table.variant_order(cell))}
    series = sorted(((k, g) for k, g in cell.groupby(["variant", "metric", "job"])
                     if g["run_id"].nunique() >= 2),
                    key=lambda t: (vrank[t[0][0]], metrics.order(t[0][1]), t[0][2]))
    if not any((g["median"] != 0).any() for _, g in series):
        return
    runs = sorted({r for _, g in series for r in g["run_id"]}, key=order.get)
    kinds = list(dict.fromkeys(k[1:] for k, _ in series))
    scale, unit = V.scale_of(series[0][0][1])
    blocks = []
    for i, ((v, m, j), g) in enumerate(series):
        hits = sig[(sig["variant"] == v) & (sig["metric"] == m) & (sig["job"] == j)]
        marks = {r: f"{(x - 1) * 100:+.0f}%" for r, x in zip(hits["run_b"], hits["ratio"])}
        off = (i - (len(series) - 1) / 2) * min(0.08, 0.6 / len(series))
        blocks.append((f"{v}: {m} {j}", [
            point(runs.index(r["run_id"]) + off, r, scale, marks.get(r["run_id"], ""))
            for r in sorted(g.to_dict("records"), key=lambda r: order[r["run_id"]])]))
    plotted = pd.concat([g for _, g in series])
    per_run = [plotted[plotted["run_id"] == r] for r in runs]
    vers = [table.joined_versions(g["kernel_source_version"]) for g in per_run]
    started = [g["started"].iloc[0] for g in per_run]
    ticks = [f"{x} " + plots.q(plots.lines(s if pd.isna(t) else t.strftime("%Y-%m-%d %H:%M"), ver))
             for x, (s, t, ver) in enumerate(zip(started, table.parse_dates(started), vers))]
    labels = list(dict.fromkeys(metrics.label(k[1]) for k, _ in series))
    label = labels[0] if len(labels) < 2 else re.sub(r"^\w+ ", "read and write ", labels[0])
    disk, pressure = cell["disk"].iloc[0], cell["pressure"].iloc[0]
    params = dict(
        nblocks=len(blocks), xmax=len(runs) - 1, ylabel=f"{label} ({unit})",
        colors=" ".join(str(colors.index(k[0]) + 1) for k, _ in series),
        pts=" ".join(str(POINT_TYPES[kinds.index(k[1:]) % len(POINT_TYPES)]) for k, _ in series),
        vlines=" ".join(f"{x - 0.5:g}" for x in range(1, len(runs)) if vers[x] != vers[x - 1]),
        title=f"{label}\nmedian per run, 95% bootstrap CI; disk {disk}, pressure {pressure}",
        footnote="circled, with its change: significant against the variant's previous run\n"
                 "error bar: 95% bootstrap CI (none: fewer than 2 repetitions); dashed line: "
                 "new kernel source version")
    p.render("history", name(series[0][0][1], disk, pressure), _text(blocks + [("ticks", ticks)]),
             params, f"{label} over the runs: {disk}, pressure {pressure}", label,
             width=max(SIZE[0], len(runs) * PX_PER_RUN + LEGEND_PX))


def across_versions(p, sel, kernels, group, cols, fname):
    """Draw a table's columns across versions, a point per kernel with a value, if one is not 0."""
    measured = sel[sel["median"].notna()]
    pts = [[V.pick(measured, col, v["version"], label) for v, label, _ in kernels]
           for col in cols]
    shown = [k for k in range(len(kernels)) if any(c[k] is not None for c in pts)]
    if not shown:
        return
    blocks, tops = [], []
    for col, col_pts in zip(cols, pts):
        scale, got = V.scale_of(col[0])[0], [col_pts[k] for k in shown]
        blocks.append((V.column_name(col, group, False),
                       [point(x, r, scale) for x, r in enumerate(got)]))
        tops += [scale * (r["ci_high"] if np.isfinite(r["ci_high"]) else r["median"])
                 for r in got if r is not None]
    if not any(tops):
        return
    ticks = [f"{x} " + plots.q(plots.lines(v["release"], f"{label} ({role})"))
             for x, (v, label, role) in enumerate(kernels[k] for k in shown)]
    marks = [f"{x:g} " + plots.q(label) for x, _, label in
             V.markers([kernels[k][0]["version"] for k in shown])]
    top = max([t for t in tops if np.isfinite(t)], default=0)
    metric, disk, _, pressure = cols[0]
    title = dict(metrics.HEADLINE_GROUPS)[group]
    params = dict(
        nblocks=len(blocks), colors=" ".join(str(i + 1) for i in range(len(blocks))),
        titles=" ".join(plots.q(h) for h, _ in blocks), xmax=len(shown) - 1,
        ymax=float(f"{top * 1.35 if top > 0 else 1.0:.6g}"), ylabel=V.scale_of(metric)[1],
        title=f"{title} across kernel versions\nmedian of each kernel's newest run, "
              f"95% bootstrap CI; disk {disk}, pressure {pressure}",
        footnote="x: each kernel (its role) in Debian version order; a series per column of "
                 "the table\nno point: not measured (never 0); no whisker: fewer than 2 "
                 "repetitions")
    p.render(V.SCRIPT, fname, _text(blocks + [("ticks", ticks), ("markers", marks)]), params,
             f"{title} across kernel versions: {disk}, pressure {pressure}", title,
             width=max(SIZE[0], len(shown) * PX_PER_KERNEL + LEGEND_PX))


def make(df, ch, outdir, gp_dir=plots.GP_DIR):
    """The figures over time, then across versions; the Plotter."""
    os.makedirs(outdir, exist_ok=True)
    p = plots.Plotter(outdir, gp_dir, svg_kinds=(), sizes={"history": SIZE, V.SCRIPT: SIZE})
    if df.empty:
        return p
    colors = table.variant_order(df)      # a variant's colour in every figure
    sig = changes.significant(ch)
    rows = df[df["median"].notna() & df["disk"].map(V.is_candidate) &
              [changes.is_headline(m, j) for m, j in zip(df["metric"], df["job"])]]
    for (_, disk, pressure), cell in rows.groupby([rows["metric"].map(family), "disk", "pressure"]):
        over_time(p, cell, sig[(sig["disk"] == disk) & (sig["pressure"] == pressure)], colors)
    versions = V.axis(df)
    if len(versions) < 2:
        return p
    sel = V.newest_cells(df, table.run_order(df))
    kernels = V.kernels(sel, versions)
    for group, _ in metrics.HEADLINE_GROUPS:
        figs = {}
        for col in V.columns(sel, group):
            figs.setdefault((col[1], col[3], V.scale_of(col[0])[1]), []).append(col)
        units = {u for _, _, u in figs}
        for (disk, pressure, unit), cols in figs.items():
            across_versions(p, sel, kernels, group, cols, versions_name(
                group, disk, pressure, *([cols[0][0]] if len(units) > 1 else [])))
    return p


def plot(history_dir, n_boot=stats.N_BOOT, gp_dir=plots.GP_DIR):
    """changes.csv, the figures and history.md; (history, changes, Plotter)."""
    df = table.load(history_dir)
    ch = changes.compute(df, n_boot)
    ch.to_csv(os.path.join(history_dir, table.CHANGES_FILE), index=False, float_format="%.6g")
    pdir = os.path.join(history_dir, table.PLOTS_DIR)
    # a figure whose cell left the history (a rebuild) must not linger
    for f in os.listdir(pdir) if os.path.isdir(pdir) else []:
        if f.startswith(("history-", V.PREFIX + "-")) and f.endswith((".png", ".svg")):
            os.remove(os.path.join(pdir, f))
    p = make(df, ch, pdir, gp_dir)
    V.write(df, ch, p.figures, p.errors, os.path.join(history_dir, table.REPORT_FILE))
    return df, ch, p
