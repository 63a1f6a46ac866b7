# SPDX-License-Identifier: GPL-2.0
"""Regression tracking across runs: the history table, the changes between
consecutive runs, their plots and history.md.

history.csv (HISTORY_DIR/history.csv) has one row per run, variant label,
disk, job, pressure and metric (HISTORY_COLUMNS): the run's identity
(run_id, run date "started", git revision, and the setup that makes runs
comparable: accel, icount, memhog_mb; icount is the disk's own, from the
clock it ran under, meta.json "disk_clocks"), the kernel the label booted
(source_package, kernel_source_version: the Debian version,
source_suite, kernel_release) and the label's role (baseline, bounce,
removed: meta.json "roles", else bench/lab.conf), the cell's median over
its repetitions, n, the 95 % percentile
bootstrap CI of the median (stats.median_ci, seeded like the run's bar
plots, so the bounds are the bar whiskers of the run's report) and the
per-repetition values themselves ("values", ";"-separated), which is what
the significance test below uses. The rows come from tidy.load_run, so
failed boots, failed and skipped jobs are excluded exactly as in a run's
own analysis.

A run is identified by run_id (meta.json "run_id", else the folder name):
adding a run that is already in the table replaces its rows (idempotent).
The kernel of a label comes from the build-info.json of its boots (a run
may boot several bases: 5.10/stock next to pre), else meta.json
"kernels", else the run's meta.json "kernel_source_version" (the default
base's, used only for a label of that package); see kernel_identity. A
new Debian linux-source-6.12 gives new rows with a new version in the
same table; runs are ordered by run date (meta.json "started"; else a
YYYYMMDD-HHMMSS run_id; else the time boots.tsv was written). A
history.csv written before source_package, source_suite and role existed
loads with them filled in (fill_missing). versions.py puts the kernel
versions on the x axis (versions-*.png, "Across kernel versions" in
history.md).

Significance of a change between two runs: for each variant label, disk,
job, pressure and metric, each run is compared with the previous run (by
date) that has the same cell, with stats.compare on the two runs'
per-repetition values: the ratio of medians (later/earlier) and its 95 %
percentile bootstrap CI, both sides resampled independently; the change
is significant when its Benjamini-Hochberg adjusted p is <= 0.05 (the same
test as a run's own verdicts, see stats.py: exact permutation test on log
values; BH across every consecutive pair of the whole history, primary
metrics one family, the others a second, exploratory one). This is more sensitive than asking whether the two runs'
median CIs overlap (two 95 % intervals may overlap while the difference is
significant). With fewer than 2 repetitions on a side nothing is tested
("too few repetitions"). Each consecutive pair is a separate test at the
5 % level: over many metrics and cells some flags are false alarms, and a
change that every variant of a cell shows alike points at the host or the
setup rather than a kernel (changes.csv says so in its note).
"""
import datetime as dt
import fcntl
import fnmatch
import os
import re
from contextlib import contextmanager

import numpy as np
import pandas as pd

from . import labconf as L
from . import metrics as M
from . import plots as P
from . import rawfiles as R
from . import report as REP
from . import roles as ROLES
from . import stats as S
from . import tidy as T
from . import versions as V

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
HISTORY_COLUMNS = RUN_COLUMNS + CELL_COLUMNS + STAT_COLUMNS + LABEL_COLUMNS
KEY = ["run_id", "variant", "disk", "job", "pressure", "metric"]
# What a history.csv must have; every other column may be missing (an
# older table) and is filled in by load().
REQUIRED = KEY + ["n", "median", "ci_low", "ci_high", "values"]
NUMERIC = ["n", "median", "ci_low", "ci_high"]
# Setup fields that must match for two runs to be compared like for like.
SETUP = ["accel", "icount", "memhog_mb"]

CHANGE_COLUMNS = ["metric", "unit", "disk", "job", "pressure", "variant",
                  "run_a", "run_b", "started_a", "started_b", "version_a",
                  "version_b", "n_a", "n_b", "median_a", "median_b", "ratio",
                  "ci_low", "ci_high", "verdict", "significant", "note",
                  "p_value", "p_adjusted", "primary"]

# The headline figures: (metric, job-name pattern). One figure per
# headline metric, matching job, disk and pressure (pattern None: every
# job that has the metric).
HEADLINES = [
    ("read_iops", r"randread-4k-qd1(?!\d)"),
    ("read_clat_p99_us", r"randread-4k-qd1(?!\d)"),
    ("write_iops", r"randwrite-4k-qd1(?!\d)"),
    ("write_clat_p99_us", r"randwrite-4k-qd1(?!\d)"),
    ("read_bw", r"seqread"),
    ("write_bw", r"seqwrite"),
    ("bounced_bytes_per_gib", None),
    ("cpu_s_per_gib", r"4k-qd1$"),
    ("bounce_submit_us_p50", None),
    ("bounce_endio_us_p50", None),
    ("integrity_bad_blocks", None),
]
HISTORY_SIZE = (1000, 560)
PX_PER_RUN = 120
# Overlaid variants are drawn this far apart on the x axis (run slots are 1).
VARIANT_OFFSET = 0.08
# Units shown scaled in the figures.
DISPLAY_UNITS = V.DISPLAY_UNITS
RUN_ID_DATE = re.compile(r"^(\d{8})-(\d{6})")


class HistoryError(Exception):
    """A run that cannot go into the history (the message says why)."""


class NotARun(HistoryError):
    """The folder is not a run folder at all."""


# --- the table ---------------------------------------------------------------

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
    roles.py does for a run without roles), kernel_variant from the label;
    an unknown source version or git revision is "unknown", anything else
    "". Empty roles and packages of a newer table are filled the same way."""
    df = df.copy()
    for col in HISTORY_COLUMNS:
        if col not in df.columns:
            df[col] = "unknown" if col in ("kernel_source_version", "git_revision") else ""
    blank = df["kernel_variant"] == ""
    df.loc[blank, "kernel_variant"] = df.loc[blank, "variant"]
    blank = df["source_package"] == ""
    if blank.any():
        df.loc[blank, "source_package"] = [
            V.package_of(r, v) for r, v in zip(df.loc[blank, "kernel_release"],
                                               df.loc[blank, "kernel_source_version"])]
    blank = df["role"] == ""
    if blank.any():
        df.loc[blank, "role"] = [fallback_role(v, k) for v, k in
                                 zip(df.loc[blank, "variant"], df.loc[blank, "kernel_variant"])]
    return df


def fallback_role(label, kernel_variant):
    """The role bench/lab.conf gives a label (or the kernel it boots)."""
    for key in (label, kernel_variant):
        if key in ROLES.FALLBACK_VARIANT_ROLES:
            return ROLES.FALLBACK_VARIANT_ROLES[key]
    return ""


def _run_order(df):
    """run_id -> rank by (run date, run_id)."""
    runs = df[["run_id", "started"]].drop_duplicates("run_id")
    runs = runs.assign(_t=_parse_dates(runs["started"]))
    runs = runs.sort_values(["_t", "run_id"], kind="stable", na_position="last")
    return {r: i for i, r in enumerate(runs["run_id"])}


def _parse_dates(series):
    return pd.to_datetime(series, utc=True, errors="coerce")


def sort(df):
    """Rows in order of run date, then cell and metric."""
    if df.empty:
        return df.reset_index(drop=True)
    order = _run_order(df)
    out = df.assign(_r=df["run_id"].map(order), _m=df["metric"].map(M.order))
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


# --- one run -> rows ---------------------------------------------------------

def _iso(ts):
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_date(run):
    """(ISO date, where it came from) of a run."""
    started = run.meta.get("started")
    if isinstance(started, str) and not pd.isna(_parse_dates(pd.Series([started]))[0]):
        return started, "meta.json"
    m = RUN_ID_DATE.match(run.run_id)
    if m:
        try:
            ts = dt.datetime.strptime(m.group(1) + m.group(2), "%Y%m%d%H%M%S")
            return _iso(ts), "run id"
        except ValueError:
            pass
    mtime = os.path.getmtime(os.path.join(run.path, "boots.tsv"))
    return _iso(dt.datetime.fromtimestamp(mtime, dt.timezone.utc)), "boots.tsv time"


def _label_builds(run):
    """label -> the build-info.json of its first boot that has one."""
    out = {}
    for label, bdir in zip(run.boots["variant"], run.boots["dir"]):
        if label in out or not bdir:
            continue
        info = R.read_json(os.path.join(run.path, bdir, "build-info.json"))
        if info:
            out[label] = info
    return out


def kernel_identity(run):
    """variant label -> the kernel it booted: {source_package,
    kernel_source_version, source_suite, kernel_release}.

    Per label, because a run may boot several bases (5.10/stock next to
    pre): the build-info.json of the label's boots, else meta.json
    "kernels" (the build-info of each kernel variant), else the run's
    meta.json "kernel_source_package"/"kernel_source_version" (the default
    base: only for a label of that package, or of no known package); a
    version nobody names is "unknown"."""
    meta = run.meta if isinstance(run.meta, dict) else {}
    kernels = meta.get("kernels") if isinstance(meta.get("kernels"), dict) else {}
    meta_pkg = _meta_str(meta, "kernel_source_package")
    meta_ver = _meta_str(meta, "kernel_source_version")
    builds = _label_builds(run)
    out = {}
    for label in dict.fromkeys(run.boots["variant"]):
        sources = [builds.get(label, {})]
        k = kernels.get(T.base_variant(run, label)) or kernels.get(label)
        if isinstance(k, dict):
            sources.append(k)

        def field(key):
            return next((str(s[key]) for s in sources if s.get(key)), "")
        pkg, ver = field("source_package"), field("source_version")
        if not ver and meta_ver and (not pkg or not meta_pkg or pkg == meta_pkg):
            ver, pkg = meta_ver, pkg or meta_pkg
        release = field("kernel_release")
        out[label] = dict(source_package=pkg or V.package_of(release, ver),
                          kernel_source_version=ver or "unknown",
                          source_suite=field("source_suite"), kernel_release=release)
    return out


def source_versions(run):
    """variant label -> kernel source version (see kernel_identity)."""
    return {k: v["kernel_source_version"] for k, v in kernel_identity(run).items()}


def _meta_str(meta, key):
    v = meta.get(key)
    return "" if v is None else str(v)


def run_rows(run, n_boot=S.N_BOOT):
    """The history rows of a loaded run. Raises HistoryError for a run
    with no successful boot or no measured job."""
    if not (run.boots["status"] == "ok").any():
        reasons = sorted(set(run.boots["status"]))
        raise HistoryError(f"{run.path}: no boot of this run succeeded "
                           f"({'; '.join(reasons)})")
    if run.tidy.empty:
        raise HistoryError(f"{run.path}: no job of this run was measured "
                           "(every job failed or was skipped)")
    run_id = str(run.meta.get("run_id") or run.run_id)
    started, _ = run_date(run)
    kernels = kernel_identity(run)
    unknown = dict(source_package="", kernel_source_version="unknown",
                   source_suite="", kernel_release="")
    base = dict(run_id=run_id, started=started,
                git_revision=_meta_str(run.meta, "git_revision") or "unknown",
                accel=_meta_str(run.meta, "accel"),
                memhog_mb=_meta_str(run.meta, "memhog_mb"))
    lab = L.load(run.path)
    rows = []
    kvariant, role = {}, {}
    for (v, disk, job, pressure, metric), g in run.tidy.groupby(
            ["variant", "disk", "job", "pressure", "metric"], sort=True):
        vals = g.sort_values(["rep", "boot"])["value"].to_numpy(dtype=float)
        med, lo, hi = S.median_ci(vals, n_boot=n_boot,
                                  seed=S.cell_seed(metric, disk, job, pressure, v))
        if v not in kvariant:
            kvariant[v] = T.base_variant(run, v)
            role[v] = ROLES.variant_role(run, v) or ""
        rows.append(dict(base, **kernels.get(v, unknown), role=role[v], variant=v,
                         icount=L.disk_icount(run.meta, lab, disk),
                         kernel_variant=kvariant[v], disk=disk, job=job,
                         pressure=str(pressure), metric=metric, unit=M.unit(metric),
                         n=len(vals), median=med, ci_low=lo, ci_high=hi,
                         values=";".join(f"{x:.10g}" for x in vals)))
    df = pd.DataFrame(rows, columns=HISTORY_COLUMNS)
    df["n"] = df["n"].astype("Int64")
    return df


def read_run(path, n_boot=S.N_BOOT, allow_incomplete=False):
    """A run folder -> its history rows. Raises NotARun or HistoryError."""
    try:
        run = T.load_run(path)
    except (T.RunError, ValueError) as e:
        raise NotARun(f"{e}: not a run") from None
    incomplete = R.read_text(os.path.join(path, "INCOMPLETE"))
    if incomplete is not None and not allow_incomplete:
        raise HistoryError(f"{path}: incomplete run (INCOMPLETE: "
                           f"{incomplete or 'no reason given'}); --allow-incomplete adds it")
    return run_rows(run, n_boot)


def values(cell):
    """The per-repetition values of a history row."""
    text = cell if isinstance(cell, str) else ""
    return np.array([float(x) for x in text.split(";") if x], dtype=float)


# --- add and rebuild ---------------------------------------------------------

def add(paths, history_dir, n_boot=S.N_BOOT, allow_incomplete=False):
    """Add runs to history.csv. Returns [(path, status, message)] with
    status "added", "replaced", "refused" or "not a run". history.csv is
    only written when a run was added."""
    out, frames = [], []
    for path in paths:
        try:
            frames.append((path, read_run(path, n_boot, allow_incomplete)))
        except NotARun as e:
            out.append((path, "not a run", str(e)))
        except HistoryError as e:
            out.append((path, "refused", str(e)))
    if not frames:
        return out
    with locked(history_dir):
        df = load(history_dir)
        for path, rows in frames:
            run_id = rows["run_id"].iloc[0]
            had = (not df.empty) and run_id in set(df["run_id"])
            df = merge(df, rows)
            status = "replaced" if had else "added"
            out.append((path, status,
                        f"{path}: run {run_id} ({rows['started'].iloc[0]}, kernel source "
                        f"{_joined_versions(rows['kernel_source_version'])}): "
                        f"{len(rows)} rows {status}"))
        save(df, history_dir)
    order = {p: i for i, p in reversed(list(enumerate(paths)))}
    return sorted(out, key=lambda t: order.get(t[0], len(paths)))


def rebuild(results_dir, history_dir, n_boot=S.N_BOOT, exclude=()):
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
        if os.path.realpath(path) == hist:
            out.append((path, "skipped", f"{path}: the history folder itself: skipped"))
            continue
        pat = next((g for g in exclude if fnmatch.fnmatchcase(name, g)), None)
        if pat:
            out.append((path, "skipped", f"{path}: excluded by --exclude '{pat}': skipped"))
            continue
        if not os.path.isfile(os.path.join(path, "boots.tsv")):
            out.append((path, "skipped", f"{path}: not a run (no boots.tsv): skipped"))
            continue
        incomplete = R.read_text(os.path.join(path, "INCOMPLETE"))
        if incomplete is not None:
            out.append((path, "skipped", f"{path}: incomplete run (INCOMPLETE: "
                        f"{incomplete or 'no reason given'}): skipped"))
            continue
        try:
            rows = read_run(path, n_boot)
        except HistoryError as e:
            out.append((path, "skipped", f"{e}: skipped"))
            continue
        frames.append(rows)
        out.append((path, "added", f"{path}: run {rows['run_id'].iloc[0]}: "
                    f"{len(rows)} rows"))
    with locked(history_dir):
        df = empty()
        for rows in frames:
            df = merge(df, rows)
        save(df, history_dir)
    return out


# --- changes between consecutive runs ----------------------------------------

def _setup_note(a, b):
    diffs = [f"{k} {a[k] or '-'} -> {b[k] or '-'}" for k in SETUP if a[k] != b[k]]
    return f"setup differs ({', '.join(diffs)})" if diffs else ""


def changes(df, n_boot=S.N_BOOT):
    """Every run against the previous run (by date) of the same variant
    label, disk, job, pressure and metric: one row per pair (CHANGE_COLUMNS)."""
    if df.empty:
        return pd.DataFrame(columns=CHANGE_COLUMNS)
    order = _run_order(df)
    rows = []
    d = df.assign(_r=df["run_id"].map(order))
    present = {k: set(g["metric"]) for k, g in d.groupby("job", sort=False)}
    for (v, disk, job, pressure, metric), g in d.groupby(
            ["variant", "disk", "job", "pressure", "metric"], sort=True):
        if metric in M.TOTALS:
            continue
        primary = metric in M.primary_metrics(job, present[job]).values()
        g = g.sort_values("_r")
        recs = g.to_dict("records")
        for a, b in zip(recs, recs[1:]):
            res = S.compare(metric, values(a["values"]), values(b["values"]), n_boot,
                            S.cell_seed("history", metric, disk, job, pressure, v,
                                        a["run_id"], b["run_id"]))
            notes = [res["note"]] if res["note"] else []
            if a["kernel_source_version"] != b["kernel_source_version"]:
                notes.append(f"kernel source {a['kernel_source_version']} -> "
                             f"{b['kernel_source_version']}")
            if a["git_revision"] != b["git_revision"]:
                notes.append(f"git {a['git_revision']} -> {b['git_revision']}")
            setup = _setup_note(a, b)
            if setup:
                notes.append(setup)
            rows.append(dict(metric=metric, unit=M.unit(metric), disk=disk, job=job,
                             pressure=pressure, variant=v, run_a=a["run_id"],
                             run_b=b["run_id"], started_a=a["started"],
                             started_b=b["started"],
                             version_a=a["kernel_source_version"],
                             version_b=b["kernel_source_version"],
                             n_a=res["n_a"], n_b=res["n_b"], median_a=res["median_a"],
                             median_b=res["median_b"], ratio=res["ratio"],
                             ci_low=res["ci_low"], ci_high=res["ci_high"],
                             verdict=res["verdict"],
                             significant=res["verdict"] in P.SIGNIFICANT,
                             note="; ".join(notes), p_value=res["p_value"],
                             p_adjusted=np.nan, primary=primary))
    out = pd.DataFrame(rows, columns=CHANGE_COLUMNS)
    # Benjamini-Hochberg across the whole history: primary metrics one
    # family, the others (exploratory) another, as in a run's verdicts
    if not out.empty:
        out = _adjust(out)
    # A change every variant of the cell shows alike, in the same run:
    # more likely the host or the setup than a kernel.
    sig = out[out["significant"].astype(bool)]
    for (run_b, metric, disk, job, pressure), g in sig.groupby(
            ["run_b", "metric", "disk", "job", "pressure"]):
        present = out[(out["run_b"] == run_b) & (out["metric"] == metric) &
                      (out["disk"] == disk) & (out["job"] == job) &
                      (out["pressure"] == pressure)]
        ups = set(g["ratio"] > 1)
        if len(present) >= 2 and len(g) == len(present) and len(ups) == 1:
            note = "every variant moved alike: host or setup drift rather than a kernel?"
            out.loc[g.index, "note"] = [f"{n}; {note}" if n else note for n in g["note"]]
    return out


def _adjust(out):
    out = out.copy()
    out["p_adjusted"] = np.nan
    for fam in (True, False):
        sel = ((out["primary"] == fam) & out["p_value"].notna() &
               ~out["verdict"].map(S.is_too_few))
        out.loc[sel, "p_adjusted"] = S.bh_adjust(out.loc[sel, "p_value"].to_numpy(float))
    lost = out["verdict"].isin(S.SIGNIFICANT) & ~(out["p_adjusted"] <= S.ALPHA)
    out.loc[lost, "verdict"] = S.NO_DIFF
    out["significant"] = out["verdict"].isin(S.SIGNIFICANT)
    return out


def significant(ch):
    return ch[ch["significant"].astype(bool)] if not ch.empty else ch


def is_headline(metric, job):
    for m, pat in HEADLINES:
        if m == metric and (pat is None or re.search(pat, job)):
            return True
    return False


# --- plots ---------------------------------------------------------------------

# The history's own variant order: the roles bench/lab.conf gives the
# kernel variants, in roles.PAIR_ORDER (bounce, baseline, removed).
ROLE_ORDER = [v for r in ROLES.PAIR_ORDER for v, rv in ROLES.FALLBACK_VARIANT_ROLES.items()
              if rv == r]


def variant_rank(label, kernel_variant):
    """Sort key and colour of a variant label: its role's place in
    roles.PAIR_ORDER, so a variant has the same colour as in a run's own
    figures."""
    base = label if label in ROLE_ORDER else kernel_variant
    return ROLE_ORDER.index(base) if base in ROLE_ORDER else len(ROLE_ORDER)


def _variant_order(df):
    pairs = df[["variant", "kernel_variant"]].drop_duplicates("variant")
    ranked = sorted(((variant_rank(v, k), v) for v, k in
                     zip(pairs["variant"], pairs["kernel_variant"])))
    return [v for _, v in ranked]


def _colors(df):
    """variant -> line type, fixed for every figure of the history."""
    out = {}
    extra = len(ROLE_ORDER)
    for v in _variant_order(df):
        k = df[df["variant"] == v]["kernel_variant"].iloc[0]
        r = variant_rank(v, k)
        if r < len(ROLE_ORDER) and v in ROLE_ORDER:
            out[v] = r + 1
        else:
            extra += 1
            out[v] = extra
    return out


def tic_label(started, version):
    ts = _parse_dates(pd.Series([started]))[0]
    when = ts.strftime("%Y-%m-%d %H:%M") if not pd.isna(ts) else str(started)
    return P._lines(when, version)


def figure_width(nruns):
    return max(HISTORY_SIZE[0], nruns * PX_PER_RUN + 250)


def figure_name(metric, job, disk, pressure):
    return P._slug("history", metric, job, disk, pressure)


def figure_data(cell, ch, colors):
    """The data file and the gnuplot parameters of one figure: cell is the
    history rows of one metric/job/disk/pressure, ch the changes."""
    metric = cell["metric"].iloc[0]
    scale, unit = DISPLAY_UNITS.get(M.unit(metric), (1.0, M.unit(metric)))
    order = _run_order(cell)
    runs = sorted(order, key=order.get)
    x_of = {r: i for i, r in enumerate(runs)}
    variants = [v for v in _variant_order(cell)]
    nv = len(variants)
    sig = significant(ch)
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
            lines.append(f"{x_of[r] + off:.4g} {P._num(med)} {P._num(lo)} "
                         f"{P._num(hi)} {P._num(top)} {P._q(mark)}")
        blocks.append(P._q(v) + "\n" + "\n".join(lines))
        cols.append(str(colors.get(v, vi + 1)))
    info = cell.drop_duplicates("run_id").set_index("run_id")
    ticks, vlines, prev = [], [], None
    for r in runs:
        version = _joined_versions(cell[cell["run_id"] == r]["kernel_source_version"])
        ticks.append(f"{x_of[r]} " + P._q(tic_label(info.loc[r, "started"], version)))
        if prev is not None and version != prev:
            vlines.append(f"{x_of[r] - 0.5:g}")
        prev = version
    data = "\n\n\n".join(blocks + [P._q("ticks") + "\n" + "\n".join(ticks)]) + "\n"
    disk, job, pressure = (cell[c].iloc[0] for c in ("disk", "job", "pressure"))
    title = (f"{M.label(metric)}: median per run with 95% bootstrap CI\n"
             f"job {job}, disk {disk}, pressure {pressure}; variants {', '.join(variants)}")
    foot = ("circled, with its change: significant against the previous run of the same "
            "variant (95% bootstrap CI of the ratio of medians excludes 1)\n"
            "error bar: 95% bootstrap CI of the run's median (none: fewer than 2 "
            "repetitions); dashed line: new kernel source version")
    params = dict(nblocks=len(blocks), title=title, ylabel=f"{M.label(metric)} ({unit})",
                  footnote=foot, colors=" ".join(cols), xmax=len(runs) - 1,
                  vlines=" ".join(vlines))
    return data, params, len(runs)


def make_plots(df, ch, outdir, gp_dir=P.GP_DIR):
    """One figure per headline metric, job, disk and pressure, then the
    figures across kernel versions (versions.py; only with two or more
    source versions); returns the Plotter (figures, errors)."""
    os.makedirs(outdir, exist_ok=True)
    p = P.Plotter(outdir, gp_dir, sizes={"history": HISTORY_SIZE, V.SCRIPT: V.SIZE})
    if df.empty:
        return p
    colors = _colors(df)
    for metric, _ in HEADLINES:
        rows = df[(df["metric"] == metric) & df["median"].notna()]
        for (job, disk, pressure), cell in rows.groupby(["job", "disk", "pressure"], sort=True):
            if not is_headline(metric, job):
                continue
            cch = ch[(ch["metric"] == metric) & (ch["job"] == job) &
                     (ch["disk"] == disk) & (ch["pressure"] == pressure)] if not ch.empty else ch
            data, params, nruns = figure_data(cell, cch, colors)
            p.render("history", figure_name(metric, job, disk, pressure), data, params,
                     f"{M.label(metric)}: {job}, {disk}, pressure {pressure}",
                     M.label(metric), width=figure_width(nruns))
    V.make_plots(df, _run_order(df), p)
    return p


# --- history.md ------------------------------------------------------------------

def runs_table(df):
    """One row per run, in date order."""
    if df.empty:
        return pd.DataFrame(columns=["run_id", "started"])
    order = _run_order(df)
    out = []
    for r in sorted(order, key=order.get):
        g = df[df["run_id"] == r]
        first = g.iloc[0]
        out.append(dict(
            run_id=r, started=first["started"],
            kernel_source_version=_joined_versions(g["kernel_source_version"]),
            kernel_release="/".join(V.sort_versions(x for x in g["kernel_release"] if x)),
            git_revision=first["git_revision"], accel=first["accel"],
            memhog_mb=first["memhog_mb"],
            variants=" ".join(_variant_order(g)),
            disks=" ".join(sorted(set(g["disk"]))),
            jobs=g[["disk", "job", "pressure"]].drop_duplicates().shape[0],
            reps=int(g["n"].max()), rows=len(g)))
    return pd.DataFrame(out)


def _joined_versions(series):
    """"5.10.262-1/6.12.118-1~deb12u1": a run's versions in version order."""
    vals = set(series)
    return "/".join(V.sort_versions(v for v in vals if V.known(v)) +
                    sorted(v for v in vals if not V.known(v)))


def versions_table(df):
    """One row per kernel source version (source package and Debian
    version) in version order: its first and last run, how many runs
    and which variant labels booted it."""
    if df.empty:
        return []
    order = _run_order(df)
    out = []
    keys = df[["source_package", "kernel_source_version"]].drop_duplicates()
    keyed = sorted(keys.itertuples(index=False),
                   key=lambda k: (not V.known(k.kernel_source_version),
                                  V.version_key(k.kernel_source_version
                                                if V.known(k.kernel_source_version) else "0"),
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
                        variants=" ".join(_variant_order(g))))
    return out


def _change_row(r):
    ratio = REP.ratio_text(r)
    return [r["metric"], r["job"], r["disk"], r["pressure"], r["variant"],
            f"{r['run_a']} ({r['version_a']})", f"{r['run_b']} ({r['version_b']})",
            f"{REP.fmt(r['median_a'])} -> {REP.fmt(r['median_b'])} {r['unit']}",
            ratio, r["verdict"], r["note"]]


def integrity_lines(df):
    """## Data integrity: bad blocks / checked per run, variant, disk and
    integrity job (summed over the run's repetitions); [] without any."""
    sel = df[df["metric"].isin(["integrity_bad_blocks", "integrity_checked_blocks"])]
    if sel.empty:
        return []
    sums = sel.assign(total=sel["values"].map(lambda v: float(values(v).sum())))
    wide = sums.pivot_table(index=["started", "run_id", "kernel_source_version",
                                   "variant", "disk", "job"],
                            columns="metric", values="total", aggfunc="sum").reset_index()
    rows = []
    for r in wide.itertuples(index=False):
        bad = getattr(r, "integrity_bad_blocks", np.nan)
        checked = getattr(r, "integrity_checked_blocks", np.nan)
        rows.append([r.run_id, r.kernel_source_version, r.variant, r.disk, r.job,
                     f"{'**' if bad else ''}{bad:.0f}{'**' if bad else ''} / {checked:.0f}"])
    corrupt = sorted({(r[0], r[2]) for r, b in zip(rows, wide.get("integrity_bad_blocks", []))
                      if b and b > 0})
    out = ["## Data integrity", "",
           "Bad blocks / blocks read back and checked, per integrity job.", "",
           REP._table(["run", "kernel source", "variant", "disk", "job", "bad / checked"], rows),
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


def write_report(df, ch, figures, errors, path):
    """history.md: the runs, the kernel versions, the significant changes,
    the history across kernel versions and the figures (only those whose
    files exist; figures of kind "versions" go in their own section)."""
    base = os.path.dirname(os.path.abspath(path))
    vfigs = [f for f in figures if f["kind"] == V.SCRIPT]
    figures = [f for f in figures if f["kind"] != V.SCRIPT]
    runs = runs_table(df)
    out = ["# bouncelab history", ""]
    out.append(f"{len(runs)} run(s) in `{HISTORY_FILE}`; written "
               f"{_iso(dt.datetime.now(dt.timezone.utc))} by `bench/history plot`.")
    out.append("")
    if runs.empty:
        out += ["No runs yet: `bench/history add RUN_DIR` (or `bench/history rebuild`)."]
        with open(path, "w", encoding="utf-8") as fh:
            fh.write("\n".join(out) + "\n")
        return
    out += ["## Runs", ""]
    if not runs.empty:
        out.append(REP._table(
            ["date", "run", "kernel source", "release", "git", "accel", "memhog MiB",
             "variants", "disks", "cells", "max reps"],
            [[r.started, r.run_id, r.kernel_source_version, r.kernel_release,
              r.git_revision, r.accel, r.memhog_mb, r.variants, r.disks, r.jobs, r.reps]
             for r in runs.itertuples()]))
        out.append("")
        out += ["## Kernel source versions", "",
                REP._table(["package", "version", "release", "first run", "last run",
                            "runs", "variants"],
                           [[v["package"], v["version"], v["release"], v["first"],
                             v["last"], v["runs"], v["variants"]]
                            for v in versions_table(df)]), ""]
    out += integrity_lines(df)
    out += ["## Significant changes", "",
            "Each run against the previous run (by date) of the same variant, disk, "
            "job, pressure and metric: ratio of medians (later/earlier) with a 95 % "
            "CI from an exact permutation test on the two runs' per-repetition log "
            "values; significant when the Benjamini-Hochberg adjusted p (across the "
            "whole history; primary metrics one family, others another) is <= 0.05. "
            "Where the test cannot reach 0.05 nothing is tested. A change every variant "
            f"shows alike points at the host or setup. All pairs: `{CHANGES_FILE}`.", ""]
    sig = significant(ch)
    head = sig[[is_headline(m, j) for m, j in zip(sig["metric"], sig["job"])]] \
        if not sig.empty else sig
    if head.empty:
        out.append("No significant change in the headline metrics.")
    else:
        head = head.assign(_m=head["metric"].map(M.order)).sort_values(
            ["started_b", "_m", "job", "disk", "pressure", "variant"])
        out.append(REP._table(["metric", "job", "disk", "pressure", "variant",
                               "from run", "to run", "median", "ratio", "verdict",
                               "note"],
                              [_change_row(r) for _, r in head.iterrows()]))
    others = len(sig) - len(head)
    if others:
        out += ["", f"{others} further significant change(s) in other metrics: "
                f"see `{CHANGES_FILE}`."]
    untested = int(ch["verdict"].map(S.is_too_few).sum()) if not ch.empty else 0
    if untested:
        out += ["", f"{untested} pair(s) of consecutive runs had fewer than "
                f"{S.MIN_REPS} repetitions on a side: not tested."]
    out.append("")
    out += V.report_lines(df, _run_order(df), vfigs, lambda f: _figure_link(f, base))
    if figures:
        out += ["## Figures", "",
                "Median per run (x: runs in order of run date, labelled with date "
                "and kernel source version), variants overlaid, error bars: the "
                "run's 95 % bootstrap CI of the median; circled points changed "
                "significantly from the previous run of their variant.", ""]
        for group in dict.fromkeys(f["group"] for f in figures):
            out += [f"### {group}", ""]
            for f in (f for f in figures if f["group"] == group):
                out += [_figure_link(f, base), ""]
    if errors:
        out += ["## Plot errors", ""] + [f"- {e}" for e in errors] + [""]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(out).rstrip() + "\n")


def plot(history_dir, n_boot=S.N_BOOT, gp_dir=P.GP_DIR):
    """changes.csv, the figures and history.md of history_dir. Returns
    (history, changes, Plotter)."""
    df = load(history_dir)
    ch = changes(df, n_boot)
    ch.to_csv(os.path.join(history_dir, CHANGES_FILE), index=False, float_format="%.6g")
    pdir = os.path.join(history_dir, PLOTS_DIR)
    # figures of an earlier call are not kept: a figure whose cell left
    # the history (a rebuild) must not linger
    if os.path.isdir(pdir):
        for name in os.listdir(pdir):
            if (name.startswith(("history-", V.PREFIX + "-")) and
                    name.endswith((".png", ".svg"))):
                os.remove(os.path.join(pdir, name))
    p = make_plots(df, ch, pdir, gp_dir)
    write_report(df, ch, p.figures, p.errors, os.path.join(history_dir, REPORT_FILE))
    return df, ch, p
