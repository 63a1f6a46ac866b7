# SPDX-License-Identifier: GPL-2.0
"""history.csv: its columns, load, save and merge, and the order of runs
and variants that every part of the history shares.

history.csv (HISTORY_DIR/history.csv) has one row per run, variant label,
disk, job, pressure and metric (HISTORY_COLUMNS): the run's identity
(run_id, run date "started", git revision, and the setup that makes runs
comparable: accel, icount, memhog_mb; icount is the disk's own, from the
clock it ran under, meta.json "disk_clocks"), the kernel the label booted
(source_package, kernel_source_version: the Debian version,
source_suite, kernel_release) and the label's role (baseline, bounce,
removed: meta.json "roles", else bench/lab.conf), the cell's median over
its repetitions, n, the 95 % percentile bootstrap CI of the median
(stats.median_ci, seeded like the run's bar plots, so the bounds are the
bar whiskers of the run's report) and the per-repetition values
themselves ("values", ";"-separated) with the seed each value's boot ran
("seeds"), which is what the change test (changes.py) uses, and the
run's own label of the row ("label": its variant, unless `add --as`
filed it under another). The rows come from runs.py.

A run is identified by run_id: adding a run that is already in the table
replaces its rows (idempotent). Runs are ordered by run date, then run_id.
A history.csv written before source_package, source_suite and role
existed loads with them filled in (fill_missing).
"""
import fcntl
import os
from contextlib import contextmanager

import numpy as np
import pandas as pd

from analysis import metrics, roles
from tracker import versions

HISTORY_FILE = "history.csv"
CHANGES_FILE = "changes.csv"
REPORT_FILE = "history.md"
PLOTS_DIR = "plots"

RUN_COLUMNS = ["run_id", "started", "kernel_source_version", "kernel_release",
               "git_revision", "accel", "icount", "memhog_mb"]
CELL_COLUMNS = ["variant", "kernel_variant", "disk", "job", "pressure",
                "metric", "unit"]
STAT_COLUMNS = ["n", "median", "ci_low", "ci_high", "values"]
# Added with the base axis (issue 12): the label's Debian source package
# and suite, and its role. Last, so that the older columns keep their
# places; a history.csv without them gets them filled in on load.
LABEL_COLUMNS = ["source_package", "source_suite", "role"]
# Added with the exact comparison across runs (issue 36): the run's own
# label of the row (its variant, unless `add --as` filed it under another
# one) and the seed of each value's boot, ";"-separated like values ("":
# not known, a table from before).
PAIRING_COLUMNS = ["label", "seeds"]
HISTORY_COLUMNS = (RUN_COLUMNS + CELL_COLUMNS + STAT_COLUMNS + LABEL_COLUMNS +
                   PAIRING_COLUMNS)
KEY = ["run_id", "variant", "disk", "job", "pressure", "metric"]
# What a history.csv must have; every other column may be missing (an
# older table) and is filled in by load().
REQUIRED = KEY + ["n", "median", "ci_low", "ci_high", "values"]
NUMERIC = ["n", "median", "ci_low", "ci_high"]

class HistoryError(Exception):
    """A run that cannot go into the history (the message says why)."""


class NotARun(HistoryError):
    """The folder is not a run folder at all."""


def history_path(history_dir):
    return os.path.join(history_dir, HISTORY_FILE)


def empty():
    return pd.DataFrame(columns=HISTORY_COLUMNS)


def load(history_dir):
    """history.csv as a DataFrame (empty when there is none yet). A table
    written before some columns existed loads too (fill_missing)."""
    path = history_path(history_dir)
    if not os.path.isfile(path):
        return empty()
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise HistoryError(f"{path}: missing columns {', '.join(missing)}")
    df = fill_missing(df)
    for col in NUMERIC:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    df["n"] = df["n"].astype("Int64")
    return df[HISTORY_COLUMNS]


def fill_missing(df):
    """Columns an older history.csv lacks, from what it has: the source
    package from the kernel release or version (Debian's linux-source-X.Y),
    the role from bench/lab.conf (by label, then by kernel variant, as
    roles.py does for a run without roles), kernel_variant and the run's
    own label from the variant, no seeds;
    an unknown source version or git revision is "unknown", anything else
    "". Empty roles and packages of a newer table are filled the same way."""
    df = df.copy()
    for col in HISTORY_COLUMNS:
        if col not in df.columns:
            df[col] = "unknown" if col in ("kernel_source_version", "git_revision") else ""
    for col in ("kernel_variant", "label"):
        blank = df[col] == ""
        df.loc[blank, col] = df.loc[blank, "variant"]
    blank = df["source_package"] == ""
    if blank.any():
        df.loc[blank, "source_package"] = [
            versions.package_of(r, v) for r, v in
            zip(df.loc[blank, "kernel_release"], df.loc[blank, "kernel_source_version"])]
    blank = df["role"] == ""
    if blank.any():
        df.loc[blank, "role"] = [fallback_role(v, k) for v, k in
                                 zip(df.loc[blank, "variant"], df.loc[blank, "kernel_variant"])]
    return df


def fallback_role(label, kernel_variant):
    """The role bench/lab.conf gives a label (or the kernel it boots)."""
    for key in (label, kernel_variant):
        if key in roles.LAB_VARIANT_ROLES:
            return roles.LAB_VARIANT_ROLES[key]
    return ""


def parse_dates(series):
    return pd.to_datetime(series, utc=True, errors="coerce")


def iso(ts):
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_order(df):
    """run_id -> rank by (run date, run_id)."""
    runs = df[["run_id", "started"]].drop_duplicates("run_id")
    runs = runs.assign(_t=parse_dates(runs["started"]))
    runs = runs.sort_values(["_t", "run_id"], kind="stable", na_position="last")
    return {r: i for i, r in enumerate(runs["run_id"])}


def variant_rank(label, kernel_variant):
    """Sort key and colour of a variant label: its role's place in
    roles.PAIR_ORDER, so a variant has the same colour as in a run's own
    figures."""
    order = roles.LAB_VARIANT_ORDER      # bench/lab.conf's variants by role
    base = label if label in order else kernel_variant
    return order.index(base) if base in order else len(order)


def variant_order(df):
    pairs = df[["variant", "kernel_variant"]].drop_duplicates("variant")
    ranked = sorted(((variant_rank(v, k), v) for v, k in
                     zip(pairs["variant"], pairs["kernel_variant"])))
    return [v for _, v in ranked]


def joined_versions(series):
    """"5.10.262-1/6.12.118-1~deb12u1": a run's versions in version order."""
    vals = set(series)
    return "/".join(versions.sort_versions(v for v in vals if versions.known(v)) +
                    sorted(v for v in vals if not versions.known(v)))


def values(cell):
    """The per-repetition values of a history row."""
    text = cell if isinstance(cell, str) else ""
    return np.array([float(x) for x in text.split(";") if x], dtype=float)


def sort(df):
    """Rows in order of run date, then cell and metric."""
    if df.empty:
        return df.reset_index(drop=True)
    order = run_order(df)
    out = df.assign(_r=df["run_id"].map(order), _m=df["metric"].map(metrics.order))
    out = out.sort_values(["_r", "disk", "job", "pressure", "_m", "variant"],
                          kind="stable")
    return out.drop(columns=["_r", "_m"]).reset_index(drop=True)


def save(df, history_dir):
    """Write history.csv atomically (a reader never sees half a table)."""
    os.makedirs(history_dir, exist_ok=True)
    path = history_path(history_dir)
    tmp = f"{path}.tmp.{os.getpid()}"
    out = sort(df)[HISTORY_COLUMNS]
    out.to_csv(tmp, index=False, float_format="%.10g")
    os.replace(tmp, path)


def merge(df, rows):
    """df with rows added; rows of a run_id already present replace its
    old rows (adding a run twice changes nothing)."""
    if rows.empty:
        return df
    ids = set(rows["run_id"])
    kept = df[~df["run_id"].isin(ids)] if not df.empty else df
    parts = [p for p in (kept, rows) if not p.empty]
    out = pd.concat(parts, ignore_index=True) if parts else empty()
    return out.drop_duplicates(KEY, keep="last")[HISTORY_COLUMNS]


@contextmanager
def locked(history_dir):
    """One writer at a time (two runs finishing together)."""
    os.makedirs(history_dir, exist_ok=True)
    with open(os.path.join(history_dir, ".lock"), "w", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
