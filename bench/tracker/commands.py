# SPDX-License-Identifier: GPL-2.0
"""What bench/history does: add runs, rebuild the table from every run
folder, and plot (changes.csv, the figures and history.md).
"""
import fnmatch
import os

from analysis import plots, rawfiles, stats
from tracker import changes, figures, markdown, runs, table, versions


def add(paths, history_dir, n_boot=stats.N_BOOT, allow_incomplete=False, aliases=None):
    """Add runs to history.csv (aliases {LABEL: VARIANT}: runs.file_as).
    Returns [(path, status, message)] with status "added", "replaced",
    "refused" or "not a run". history.csv is only written when a run was
    added."""
    out, frames = [], []
    for path in paths:
        try:
            frames.append((path, runs.read(path, n_boot, allow_incomplete, aliases)))
        except table.NotARun as e:
            out.append((path, "not a run", str(e)))
        except table.HistoryError as e:
            out.append((path, "refused", str(e)))
    if not frames:
        return out
    with table.locked(history_dir):
        df = table.load(history_dir)
        for path, rows in frames:
            run_id = rows["run_id"].iloc[0]
            had = (not df.empty) and run_id in set(df["run_id"])
            df = table.merge(df, rows)
            status = "replaced" if had else "added"
            out.append((path, status,
                        f"{path}: run {run_id} ({rows['started'].iloc[0]}, kernel source "
                        f"{table.joined_versions(rows['kernel_source_version'])}): "
                        f"{len(rows)} rows {status}"))
        table.save(df, history_dir)
    order = {p: i for i, p in reversed(list(enumerate(paths)))}
    return sorted(out, key=lambda t: order.get(t[0], len(paths)))


def _skip_reason(path, name, hist, exclude):
    """Why rebuild leaves a folder out, or None."""
    if os.path.realpath(path) == hist:
        return f"{path}: the history folder itself: skipped"
    pat = next((g for g in exclude if fnmatch.fnmatchcase(name, g)), None)
    if pat:
        return f"{path}: excluded by --exclude '{pat}': skipped"
    if not os.path.isfile(os.path.join(path, "boots.tsv")):
        return f"{path}: not a run (no boots.tsv): skipped"
    incomplete = rawfiles.read_text(os.path.join(path, "INCOMPLETE"))
    if incomplete is not None:
        return (f"{path}: incomplete run (INCOMPLETE: "
                f"{incomplete or 'no reason given'}): skipped")
    return None


def rebuild(results_dir, history_dir, n_boot=stats.N_BOOT, exclude=()):
    """history.csv from every complete run folder under results_dir
    (folder names matching a glob of exclude are left out). Returns
    [(path, status, message)], one per folder."""
    out = []
    frames = []
    hist = os.path.realpath(history_dir)
    for name in sorted(os.listdir(results_dir)) if os.path.isdir(results_dir) else []:
        path = os.path.join(results_dir, name)
        if not os.path.isdir(path):
            continue
        skip = _skip_reason(path, name, hist, exclude)
        if skip:
            out.append((path, "skipped", skip))
            continue
        try:
            rows = runs.read(path, n_boot)
        except table.HistoryError as e:
            out.append((path, "skipped", f"{e}: skipped"))
            continue
        frames.append(rows)
        out.append((path, "added", f"{path}: run {rows['run_id'].iloc[0]}: "
                    f"{len(rows)} rows"))
    with table.locked(history_dir):
        df = table.empty()
        for rows in frames:
            df = table.merge(df, rows)
        table.save(df, history_dir)
    return out


def plot(history_dir, n_boot=stats.N_BOOT, gp_dir=plots.GP_DIR):
    """changes.csv, the figures and history.md of history_dir. Returns
    (history, changes, Plotter)."""
    df = table.load(history_dir)
    ch = changes.compute(df, n_boot)
    ch.to_csv(os.path.join(history_dir, table.CHANGES_FILE), index=False,
              float_format="%.6g")
    pdir = os.path.join(history_dir, table.PLOTS_DIR)
    # figures of an earlier call are not kept: a figure whose cell left
    # the history (a rebuild) must not linger
    if os.path.isdir(pdir):
        for name in os.listdir(pdir):
            if (name.startswith(("history-", versions.PREFIX + "-")) and
                    name.endswith((".png", ".svg"))):
                os.remove(os.path.join(pdir, name))
    p = figures.make(df, ch, pdir, gp_dir)
    markdown.write(df, ch, p.figures, p.errors, os.path.join(history_dir, table.REPORT_FILE))
    return df, ch, p
