# SPDX-License-Identifier: GPL-2.0
"""history.md, what a reader asks first at the top: what the newest run
moved against the previous run of each variant (check.py, the answer of
`history --check`), then the history across kernel versions
(tracker.versions), the significant changes, data integrity per run and
variant, the runs, the kernel source versions and the figures over time.
"""
import datetime as dt
import os

import numpy as np
import pandas as pd

from analysis import md, metrics, stats
from tracker import changes, check, figures, table, versions


def runs_table(df):
    """One row per run, in date order."""
    if df.empty:
        return pd.DataFrame(columns=["run_id", "started"])
    order = table.run_order(df)
    out = []
    for r in sorted(order, key=order.get):
        g = df[df["run_id"] == r]
        first = g.iloc[0]
        out.append(dict(
            run_id=r, started=first["started"],
            kernel_source_version=table.joined_versions(g["kernel_source_version"]),
            kernel_release="/".join(versions.sort_versions(x for x in g["kernel_release"] if x)),
            git_revision=first["git_revision"], accel=first["accel"],
            memhog_mb=first["memhog_mb"],
            variants=" ".join(table.variant_order(g)),
            disks=" ".join(sorted(set(g["disk"]))),
            jobs=g[["disk", "job", "pressure"]].drop_duplicates().shape[0],
            reps=int(g["n"].max()), rows=len(g)))
    return pd.DataFrame(out)


def versions_table(df):
    """One row per kernel source version (source package and Debian
    version) in version order: its first and last run, how many runs
    and which variant labels booted it."""
    if df.empty:
        return []
    order = table.run_order(df)
    out = []
    keys = df[["source_package", "kernel_source_version"]].drop_duplicates()
    keyed = sorted(keys.itertuples(index=False),
                   key=lambda k: (not versions.known(k.kernel_source_version),
                                  versions.parse(
                                      k.kernel_source_version
                                      if versions.known(k.kernel_source_version) else "0"),
                                  k.source_package))
    for k in keyed:
        g = df[(df["source_package"] == k.source_package) &
               (df["kernel_source_version"] == k.kernel_source_version)]
        runs = sorted(set(g["run_id"]), key=order.get)
        first = df[df["run_id"] == runs[0]]["started"].iloc[0]
        last = df[df["run_id"] == runs[-1]]["started"].iloc[0]
        out.append(dict(version=k.kernel_source_version, package=k.source_package or "?",
                        release="/".join(sorted({r for r in g["kernel_release"] if r})),
                        first=first, last=last, runs=len(runs),
                        variants=" ".join(table.variant_order(g))))
    return out


def _change_row(r):
    ratio = md.ratio_text(r)
    return [r["metric"], r["job"], r["disk"], r["pressure"], r["variant"],
            f"{r['run_a']} ({r['version_a']})", f"{r['run_b']} ({r['version_b']})",
            f"{md.fmt(r['median_a'], 4, '')} -> {md.fmt(r['median_b'], 4, '')} {r['unit']}",
            ratio, r["verdict"], r["note"]]


def integrity_lines(df):
    """## Data integrity: bad blocks / checked per run and variant (summed
    over its disks, integrity jobs and repetitions: changes.csv and
    history.csv have each job's); [] without any."""
    sel = df[df["metric"].isin(["integrity_bad_blocks", "integrity_checked_blocks"])]
    if sel.empty:
        return []
    sums = sel.assign(total=sel["values"].map(lambda v: float(table.values(v).sum())))
    wide = sums.pivot_table(index=["started", "run_id", "kernel_source_version", "variant"],
                            columns="metric", values="total", aggfunc="sum").reset_index()
    jobs = sel.groupby(["run_id", "variant"])[["disk", "job"]].apply(
        lambda g: len(g.drop_duplicates()))
    rows = []
    for r in wide.itertuples(index=False):
        bad = getattr(r, "integrity_bad_blocks", np.nan)
        checked = getattr(r, "integrity_checked_blocks", np.nan)
        rows.append([r.run_id, r.kernel_source_version, r.variant,
                     str(jobs.get((r.run_id, r.variant), "")),
                     f"{'**' if bad else ''}{bad:.0f}{'**' if bad else ''} / {checked:.0f}"])
    corrupt = sorted({(r[0], r[2]) for r, b in zip(rows, wide.get("integrity_bad_blocks", []))
                      if b and b > 0})
    out = ["## Data integrity", "",
           "Bad blocks / blocks read back and checked, per run and variant, summed over "
           "its integrity jobs and disks (each job's in history.csv).", "",
           md.table(["run", "kernel source", "variant", "jobs x disks", "bad / checked"],
                    rows),
           ""]
    if corrupt:
        out += ["Corrupted data: " + "; ".join(f"{v} in {run}" for run, v in corrupt) + ".", ""]
    else:
        out += ["No run corrupted data.", ""]
    return out


def _figure_link(f, base):
    rel = os.path.relpath(f["png"], base)
    svg = os.path.relpath(f["svg"], base) if f.get("svg") else None
    return f"![{f['caption']}]({rel})" + (f" ([SVG]({svg}))" if svg else "")


def moved_lines(df, ch):
    """## What moved: the newest run against the previous run of each of
    its variants (check.moved: headline metrics beyond their smallest
    effect of interest), what `history --check` answers."""
    run = check.newest_run(df)
    out = ["## What moved", ""]
    if run is None:
        return out + ["No run yet.", ""]
    pairs, moved = check.moved(ch, run)
    if pairs.empty:
        return out + [f"The newest run, {run}, has no earlier run of its variants to "
                      "compare with.", ""]
    out.append(f"The newest run, {run}, against the previous run of each of its variants: "
               f"{len(pairs)} headline cell(s) compared, {len(moved)} moved beyond their "
               "smallest effect of interest (`./run.sh history --check` says where the "
               "instructions went).")
    out.append("")
    out += [f"- {check.line(r)}" for _, r in moved.iterrows()]
    return out + ([""] if len(moved) else [])


def _changes_lines(ch):
    """## Significant changes: the headline metrics' table, the count of
    the others and of the pairs too small to test."""
    out = ["## Significant changes", "",
           "Each run against the previous run (by date) of the same variant, disk, "
           "job, pressure and metric: ratio of geometric means (later/earlier; of "
           "medians where a value is 0) with its 95 % CI inverted from an exact "
           "permutation test on the two runs' per-repetition log values; "
           "significant when the Benjamini-Hochberg adjusted p (across the "
           "whole history; primary metrics one family, others another) is <= 0.05. "
           "Where the test cannot reach 0.05 nothing is tested. A change every variant "
           f"shows alike points at the host or setup. All pairs: `{table.CHANGES_FILE}`.",
           ""]
    sig = changes.significant(ch)
    head = sig[[figures.is_headline(m, j) for m, j in zip(sig["metric"], sig["job"])]] \
        if not sig.empty else sig
    if head.empty:
        out.append("No significant change in the headline metrics.")
    else:
        head = head.assign(_m=head["metric"].map(metrics.order)).sort_values(
            ["started_b", "_m", "job", "disk", "pressure", "variant"])
        out.append(md.table(["metric", "job", "disk", "pressure", "variant",
                                  "from run", "to run", "median", "ratio", "verdict",
                                  "note"],
                                 [_change_row(r) for _, r in head.iterrows()]))
    others = len(sig) - len(head)
    if others:
        out += ["", f"{others} further significant change(s) in other metrics: "
                f"see `{table.CHANGES_FILE}`."]
    untested = int(ch["verdict"].map(stats.is_too_few).sum()) if not ch.empty else 0
    if untested:
        out += ["", f"{untested} pair(s) of consecutive runs had fewer than "
                f"{stats.MIN_REPS} repetitions on a side: not tested."]
    return out + [""]


def write(df, ch, figs, errors, path):
    """history.md (the module's docstring has the order; only figures
    whose files exist; figures of kind "versions" go in their own
    section)."""
    base = os.path.dirname(os.path.abspath(path))
    vfigs = [f for f in figs if f["kind"] == versions.SCRIPT]
    figs = [f for f in figs if f["kind"] != versions.SCRIPT]
    runs = runs_table(df)
    out = ["# bouncelab history", ""]
    out.append(f"{len(runs)} run(s) in `{table.HISTORY_FILE}`; written "
               f"{table.iso(dt.datetime.now(dt.timezone.utc))} by `bench/history plot`.")
    out.append("")
    if runs.empty:
        out += ["No runs yet: `bench/history add RUN_DIR` (or `bench/history rebuild`)."]
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(out) + "\n")
        return
    out += moved_lines(df, ch)
    out += versions.report_lines(df, table.run_order(df), vfigs,
                                 lambda f: _figure_link(f, base))
    out += _changes_lines(ch)
    out += integrity_lines(df)
    out += ["## Runs", "",
            md.table(
                ["date", "run", "kernel source", "release", "git", "accel", "memhog MiB",
                 "variants", "disks", "cells", "max reps"],
                [[r.started, r.run_id, r.kernel_source_version, r.kernel_release,
                  r.git_revision, r.accel, r.memhog_mb, r.variants, r.disks, r.jobs, r.reps]
                 for r in runs.itertuples()]),
            "",
            "## Kernel source versions", "",
            md.table(["package", "version", "release", "first run", "last run",
                           "runs", "variants"],
                          [[v["package"], v["version"], v["release"], v["first"],
                            v["last"], v["runs"], v["variants"]]
                           for v in versions_table(df)]), ""]
    if figs:
        out += ["## Figures", "",
                "Median per run (x: runs in order of run date, labelled with date "
                "and kernel source version), variants overlaid, error bars: the "
                "run's 95 % bootstrap CI of the median; circled points changed "
                "significantly from the previous run of their variant.", ""]
        for group in dict.fromkeys(f["group"] for f in figs):
            out += [f"### {group}", ""]
            for f in (f for f in figs if f["group"] == group):
                out += [_figure_link(f, base), ""]
    if errors:
        out += ["## Plot errors", ""] + [f"- {e}" for e in errors] + [""]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out).rstrip() + "\n")
