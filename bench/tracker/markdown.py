# SPDX-License-Identifier: GPL-2.0
"""history.md: what the newest run moved (check's answer), then "Across
kernel versions": per metrics.HEADLINE_GROUPS group a table, a row per
kernel in Debian version order, a column per headline cell some version
measured (a value not measured is never 0); then the changes, data
integrity, the runs and the figures over time.
"""
import datetime as dt
import os

import numpy as np
import pandas as pd

from analysis import md, metrics, plots, roles, stats
from lab import jobname as J
from tracker import changes, table

PREFIX = SCRIPT = "versions"
MARKERS = (      # where the bounce path changed upstream
    ("5.13", "5.13: bouncing dead on HIGHMEM", "(9bb33f24abbd: inverted check)"),
    ("6.16", "6.16: bounce code removed", "(remove block layer bounce buffering)"),
)
DISPLAY_UNITS = {"B/s": (1.0 / (1 << 20), "MiB/s"), "B/GiB": (1.0 / (1 << 20), "MiB/GiB")}
OTHER = "other"         # a role the lab does not know: after roles.PAIR_ORDER's
NOT_MEASURED = "not measured"
INTEGRITY = ("integrity_bad_blocks", "integrity_checked_blocks")
SIG_TEXT = (
    "Each run against the previous run of its cell: ratio of geometric means with its 95 % "
    "CI from an exact permutation test on log values, significant when the "
    "Benjamini-Hochberg adjusted p (whole history; primary metrics one family) is <= 0.05; "
    "two runs of one exact clock compared to the bound or seed by seed. A change every "
    f"variant shows alike points at the host or setup. All pairs: `{table.CHANGES_FILE}`.")
FIG_TEXT = ("Median per run in date order, a series per variant and job of two runs or "
            "more, error bars its 95 % bootstrap CI; circled: a significant change.")


def markers(versions):
    """[(x, version, label)]: each marker after the places of older versions."""
    return [(sum(table.parse(table.upstream(v)) < table.parse(at) for v in versions) - 0.5, at,
             plots.lines(what, why)) for at, what, why in MARKERS]


def is_candidate(disk):
    return roles.LAB_DISK_ROLES.get(str(disk).split("/")[0]) == roles.CANDIDATE


def newest_cells(df, order):
    """Known versions' rows on candidate disks, each cell from its newest run."""
    d = df[df["kernel_source_version"].map(table.known) & df["disk"].map(is_candidate)]
    d = d.assign(_rank=d["run_id"].map(order).astype(float))
    return d[d["_rank"] == d.groupby(["kernel_source_version", "variant", "disk", "job",
                                      "pressure"], sort=False)["_rank"].transform("max")]


def axis(df):
    """[dict(version, release, package)] of the known versions, in order."""
    d = df[df["kernel_source_version"].map(table.known)]
    out = []
    for v in table.sort_versions(d["kernel_source_version"]):
        g = d[d["kernel_source_version"] == v]
        rel = [r for r in g["kernel_release"] if r]
        out.append(dict(version=v, release=min(rel, key=lambda r: (-rel.count(r), r),
                                               default=table.upstream(v)),
                        package=next((p for p in g["source_package"] if p), "") or
                        table.package_of("", v)))
    return out


def pick(sel, col, version, label):
    """The row of a kernel's cell (col: metric, disk, job, pressure), or None."""
    key = dict(zip(("metric", "disk", "job", "pressure"), col),
               kernel_source_version=version, variant=label)
    rows = sel[(sel[list(key)] == pd.Series(key)).all(axis=1)]
    return rows.iloc[0] if len(rows) else None


def scale_of(metric):
    return DISPLAY_UNITS.get(metrics.unit(metric), (1.0, metrics.unit(metric)))


def _total(rows, metric, missing=None):
    """The sum of a metric's values over rows (missing: none)."""
    sel = rows[rows["metric"] == metric]
    return missing if sel.empty else float(sum(table.values(v).sum() for v in sel["values"]))


def kernels(sel, versions):
    """[(version dict, label, role)] in version, role, label order."""
    out = []
    for v in versions:
        g = sel[sel["kernel_source_version"] == v["version"]].drop_duplicates("variant")
        out += sorted(((v, label, r if r in roles.VARIANT_ROLES else OTHER)
                       for label, r in zip(g["variant"], g["role"])),
                      key=lambda k: (roles.role_rank(k[2]), k[1]))
    return out


def _said(parts):
    """"what on a, b; what on c" of [(what, names, separator)]."""
    return "; ".join(f"{what} on {sep.join(names)}" for what, names, sep in parts if names)


def reading(sel, labels):
    """The one-line readings: which versions bounce, which corrupt data."""
    bounced, none, absent, corrupt, clean, untested = [], [], [], [], [], []
    for v, label, _ in labels:
        name = f"{v['release']} {label}"
        g = sel[(sel["kernel_source_version"] == v["version"]) & (sel["variant"] == label)]
        bb = g.loc[g["job"].map(J.is_page_qd1) & (g["metric"] == "bounced_bytes_per_gib"),
                   "median"].dropna()
        bios = _total(g, "bounces")
        what = (([f"{md.fmt(bb.max() / (1 << 20), 4, '')} MiB/GiB"] if len(bb) else []) +
                ([f"{bios:.0f} bios in all"] if bios is not None else []))
        if not what:
            absent.append(name)
        elif (bb.max() if len(bb) else bios) > 0:
            bounced.append(f"{name} ({', '.join(what)})")
        else:
            none.append(name)
        bad, checked = (_total(g, m) for m in INTEGRITY)
        ijobs = g.loc[g["metric"] == "integrity_bad_blocks", "job"]
        ibios = _total(g[g["job"].isin(ijobs)], "bounces")
        if bad is None:
            untested.append(name)
        else:
            (corrupt if bad > 0 else clean).append(
                f"{name} ({bad:.0f} bad of {checked or 0:.0f} checked, " +
                (f"{ibios:.0f} bios bounced)" if ibios is not None else "bounces not counted)"))
    bouncing = _said([("bounces", bounced, "; "), ("none counted", none, ", "),
                      ("not measured (no bounce tracepoint)", absent, ", ")])
    return ["Bouncing (bytes: 4 KiB QD1 jobs; bios: every job and repetition on the "
            f"candidate disks): {bouncing or NOT_MEASURED}.",
            "Integrity (integrity jobs, every repetition): " +
            _said([("**bad blocks**", corrupt, "; "), ("none", clean, "; "),
                   (NOT_MEASURED, untested, ", ")]) + "."]


def columns(sel, group):
    """[(metric, disk, job, pressure)] of a group that some version measured."""
    cols, cell = [], ["disk", "job", "pressure"]
    for metric in metrics.headlines(group):
        rows = sel.loc[(sel["metric"] == metric) & sel["median"].notna(), cell].drop_duplicates()
        cols += [(metric, *r) for r in rows.sort_values(cell).itertuples(index=False)
                 if metrics.is_headline(metric, r.job, group)]
    return cols


def column_name(col, group, with_disk=True):
    metric, disk, job, _ = col
    short = {h.metric: h.short for h in metrics.headline_rows(group) if h.short}
    return " ".join(([disk] if with_disk else []) + [job] +
                    ([short[metric]] if metric in short else []))


def group_table(sel, labels, group):
    """(header, rows) of a group's table; (None, []) without a column."""
    cols = columns(sel, group)
    if not cols:
        return None, []
    header = (["version", "Debian", "variant", "role"] +
              [column_name(c, group) + (f" ({c[3]})" if len({c[3] for c in cols}) > 1 else "")
               for c in cols] + ["run"])
    out = []
    for v, label, role in labels:
        row, runs = [v["release"], v["version"], label, role], []
        for col in cols:
            r = pick(sel, col, v["version"], label)
            if r is None or not np.isfinite(r["median"]):
                row.append(NOT_MEASURED)
            else:
                lo, med, hi = (md.fmt(r[k] * scale_of(col[0])[0], 4, "")
                               for k in ("ci_low", "median", "ci_high"))
                row.append(med + (f" [{lo}, {hi}]" if np.isfinite(r["ci_low"]) and
                                  np.isfinite(r["ci_high"]) else ""))
            runs += [r["run_id"]] if r is not None else []
        row.append(", ".join(dict.fromkeys(runs)) or "-")
        out.append(row)
    return header, out


def report_lines(df, order, links):
    """"Across kernel versions"; links(group, True): its figures' lines."""
    versions = axis(df)
    out = ["## Across kernel versions", ""]
    if len(versions) < 2:
        have = (f"one kernel source version ({versions[0]['version']})" if versions
                else "no known kernel source version")
        return out + [f"The history holds {have}: the figures across kernel versions need "
                      "at least two (`./run.sh versions` boots 5.10, 6.1, 6.12 and 7.2 "
                      "side by side).", ""]
    sel = newest_cells(df, order)
    labels = kernels(sel, versions)
    out += [f"{len(versions)} kernel source versions, in Debian version order: "
            + ", ".join(f"{v['version']} ({v['package']})" for v in versions) + ".", "",
            "Bounce-candidate disks; each cell from the newest run that has it (the run "
            "column): median with the 95 % bootstrap CI in brackets; \"not measured\" "
            "(not run, or nothing to count: no bounce tracepoint, no bounced bio) is never "
            "a 0. Bouncing died on HIGHMEM in 5.13 (9bb33f24abbd inverted the check in "
            "`blk_queue_may_bounce()`); 6.16 removed the bounce code.", ""]
    if sel.empty or not labels:
        return out + ["No bounce-candidate disk was measured.", ""]
    out += reading(sel, labels) + [""]
    for group, title in metrics.HEADLINE_GROUPS:
        header, rows = group_table(sel, labels, group)
        if header is None:      # measured on no version: no section at all
            continue
        units = sorted({scale_of(m)[1] for m in metrics.headlines(group)})
        # a kernel with nothing to measure in any column: named, not a row
        empty = [f"{r[2]} ({r[0]})" for r in rows if all(c == NOT_MEASURED for c in r[4:-1])]
        out += [f"### {title} ({', '.join(units)})", "", md.table(header, [
            r for r in rows if any(c != NOT_MEASURED for c in r[4:-1])]), ""]
        if empty:
            out += [f"Nothing to measure here on {', '.join(empty)}.", ""]
        out += links(title, True)
    return out

def runs_lines(df, order):
    """## Runs: a row per run, in date order."""
    rows = []
    for r in sorted(order, key=order.get):
        g = df[df["run_id"] == r]
        f = g.iloc[0]
        rows.append([f["started"], r, table.joined_versions(g["kernel_source_version"]),
                     "/".join(table.sort_versions(x for x in g["kernel_release"] if x)),
                     f["git_revision"], f["accel"], f["memhog_mb"],
                     " ".join(table.variant_order(g)), " ".join(sorted(set(g["disk"]))),
                     len(g[["disk", "job", "pressure"]].drop_duplicates()), int(g["n"].max())])
    return ["## Runs", "", md.table(["date", "run", "kernel source", "release", "git", "accel",
                                     "memhog MiB", "variants", "disks", "cells", "max reps"],
                                    rows), ""]


def integrity_lines(df):
    """## Data integrity: bad / checked blocks per run and variant; [] without."""
    sel = df[df["metric"].isin(INTEGRITY)]
    if sel.empty:
        return []
    rows, corrupt = [], set()
    for (_, run, ver, v), g in sel.groupby(["started", "run_id", "kernel_source_version",
                                            "variant"]):
        bad, checked = (_total(g, m, np.nan) for m in INTEGRITY)
        if bad > 0:
            corrupt.add((run, v))
        star = "**" if bad else ""
        rows.append([run, ver, v, str(len(g[["disk", "job"]].drop_duplicates())),
                     f"{star}{bad:.0f}{star} / {checked:.0f}"])
    return ["## Data integrity", "",
            "Bad blocks / blocks read back and checked, per run and variant, summed over "
            "its integrity jobs and disks (each job's in history.csv).", "",
            md.table(["run", "kernel source", "variant", "jobs x disks", "bad / checked"],
                     rows), "",
            ("Corrupted data: " + "; ".join(f"{v} in {run}" for run, v in sorted(corrupt))
             + "." if corrupt else "No run corrupted data."), ""]


def moved_lines(df, ch):
    """## What moved: what `history --check` answers (changes.moved)."""
    run = changes.newest_run(df)
    pairs, moved = changes.moved(ch, run)
    if pairs.empty:
        return ["## What moved", "", f"The newest run, {run}, has no earlier run of its "
                "variants to compare with.", ""]
    return ["## What moved", "", f"The newest run, {run}, against the previous run of each "
            f"of its variants: {len(pairs)} headline cell(s) compared, {len(moved)} moved beyond "
            "their smallest effect of interest (`./run.sh history --check` says where the "
            "instructions went).", ""] + [f"- {changes.line(r)}" for _, r in moved.iterrows()] + \
        ([""] if len(moved) else [])


def changes_lines(ch):
    """## Significant changes: the headline ones, the count of the others."""
    out = ["## Significant changes", "", SIG_TEXT, ""]
    sig = changes.significant(ch)
    head = changes.headline(sig)
    if head.empty:
        out.append("No significant change in the headline metrics.")
    else:
        cell = ["metric", "job", "disk", "pressure", "variant"]
        out.append(md.table(cell + ["from run", "to run", "median", "ratio", "verdict", "note"], [
            [*r[cell], f"{r['run_a']} ({r['version_a']})", f"{r['run_b']} ({r['version_b']})",
             f"{md.fmt(r['median_a'], 4, '')} -> {md.fmt(r['median_b'], 4, '')} {r['unit']}",
             md.ratio_text(r), r["verdict"], r["note"]] for _, r in head.iterrows()]))
    if len(sig) > len(head):
        out += ["", f"{len(sig) - len(head)} further significant change(s) in other "
                f"metrics: see `{table.CHANGES_FILE}`."]
    untested = int(ch["verdict"].map(stats.is_too_few).sum()) if not ch.empty else 0
    if untested:
        out += ["", f"{untested} pair(s) of consecutive runs had fewer than "
                f"{stats.MIN_REPS} repetitions on a side: not tested."]
    return out + [""]


def write(df, ch, figs, errors, path):
    """history.md; figures of kind "versions" go in their own section."""
    base = os.path.dirname(os.path.abspath(path))

    def links(group, versions):
        """The lines of group's figures, across versions or over time."""
        return [x for f in figs if f["group"] == group and (f["kind"] == SCRIPT) == versions
                for x in (f"![{f['caption']}]({os.path.relpath(f['png'], base)})", "")]
    order = table.run_order(df) if not df.empty else {}
    out = ["# bouncelab history", "",
           f"{len(order)} run(s) in `{table.HISTORY_FILE}`; written "
           f"{table.iso(dt.datetime.now(dt.timezone.utc))} by `bench/history plot`.", ""]
    if not order:
        out += ["No runs yet: `bench/history add RUN_DIR` (or `bench/history rebuild`)."]
    else:
        out += (moved_lines(df, ch) + report_lines(df, order, links) + changes_lines(ch) +
                integrity_lines(df) + runs_lines(df, order))
        groups = dict.fromkeys(f["group"] for f in figs if f["kind"] != SCRIPT)
        out += ["## Figures", "", FIG_TEXT, ""] if groups else []
        for group in groups:
            out += [f"### {group}", ""] + links(group, False)
        if errors:
            out += ["## Plot errors", ""] + [f"- {e}" for e in errors] + [""]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out).rstrip() + "\n")
