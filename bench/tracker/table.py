# SPDX-License-Identifier: GPL-2.0
"""history.csv (a row per run, label, disk, job, pressure and metric: the
run, the label's kernel and role, the cell's median, n, CI, each value
and its seed), the order of runs, variants and Debian versions, and add
and rebuild: a run folder's rows from tidy.load_run (failed boots and
jobs left out as in the run's own analysis).
"""
import datetime as dt
import fcntl
import fnmatch
import os
import re

import numpy as np
import pandas as pd
from debian.debian_support import Version

from analysis import metrics, rawfiles, roles, stats, tidy
from lab import labconf

HISTORY_FILE = "history.csv"
CHANGES_FILE = "changes.csv"
REPORT_FILE = "history.md"
PLOTS_DIR = "plots"

NUMERIC = ["n", "median", "ci_low", "ci_high"]
# Later additions go last, so older tables keep their columns' places: the
# label's package, suite and role (issue 12); the run's own label of the
# row and each value's seed (issue 36).
PAIRING_COLUMNS = ["label", "seeds"]
HISTORY_COLUMNS = (["run_id", "started", "kernel_source_version", "kernel_release", "git_revision",
                    "accel", "icount", "memhog_mb", "variant", "kernel_variant", "disk", "job",
                    "pressure", "metric", "unit"] + NUMERIC +
                   ["values", "source_package", "source_suite", "role"] + PAIRING_COLUMNS)
KEY = ["run_id", "variant", "disk", "job", "pressure", "metric"]
REQUIRED = KEY + NUMERIC + ["values"]


class HistoryError(Exception):
    """A run that cannot go into the history (the message says why)."""


class NotARun(HistoryError):
    """The folder is not a run folder at all."""


def parse(version):
    """A Version; one dpkg rejects ("6.12.1_x") sorts before every valid one."""
    text = str(version).strip()
    try:
        return Version(text)
    except ValueError:
        return Version("0~" + re.sub(r"[^A-Za-z0-9.+~]", ".", text))


def upstream(version):
    """"6.12.118" of "1:6.12.118-1~deb12u1"."""
    try:
        return Version(str(version).strip()).upstream_version
    except ValueError:
        return str(version).strip()


def sort_versions(versions):
    return sorted(set(versions), key=parse)


def known(version):
    return isinstance(version, str) and version not in ("", "unknown")


def package_of(release, version):
    """"linux-source-X.Y" (Debian's name) from a release or a version."""
    for v in (release, upstream(version) if known(version) else ""):
        m = re.match(r"^(\d+)\.(\d+)", str(v or ""))
        if m:
            return f"linux-source-{m.group(1)}.{m.group(2)}"
    return ""


def joined_versions(series):
    """"5.10.262-1/6.12.118-1~deb12u1": a run's versions in version order."""
    return "/".join(sort_versions(v for v in series if known(v)) +
                    sorted({v for v in series if not known(v)}))


def history_path(history_dir):
    return os.path.join(history_dir, HISTORY_FILE)


def load(history_dir):
    """history.csv; what an older table lacks is filled in (no seeds)."""
    path = history_path(history_dir)
    if not os.path.isfile(path):
        return pd.DataFrame(columns=HISTORY_COLUMNS)
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise HistoryError(f"{path}: missing columns {', '.join(missing)}")
    df = df.assign(**{c: "unknown" if c in ("kernel_source_version", "git_revision") else ""
                      for c in HISTORY_COLUMNS if c not in df.columns})
    for col, fill, src in (("kernel_variant", str, ["variant"]), ("label", str, ["variant"]),
                           ("source_package", package_of, ["kernel_release",
                                                           "kernel_source_version"]),
                           ("role", fallback_role, ["variant", "kernel_variant"])):
        blank = df[col] == ""
        df.loc[blank, col] = [fill(*x) for x in df.loc[blank, src].itertuples(index=False)]
    for col in NUMERIC:
        df[col] = pd.to_numeric(df[col], errors="coerce")
    return df[HISTORY_COLUMNS].astype({"n": "Int64"})


def fallback_role(label, kernel_variant):
    """The role bench/lab.conf gives a label (or the kernel it boots)."""
    return next((roles.LAB_VARIANT_ROLES[k] for k in (label, kernel_variant)
                 if k in roles.LAB_VARIANT_ROLES), "")


def parse_dates(series):
    return pd.to_datetime(series, utc=True, errors="coerce")    # NaT: not a date


def iso(ts):
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_order(df):
    """run_id -> rank by (run date, run_id)."""
    runs = df[["run_id", "started"]].drop_duplicates("run_id")
    runs = runs.assign(_t=parse_dates(runs["started"])).sort_values(
        ["_t", "run_id"], kind="stable", na_position="last")
    return {r: i for i, r in enumerate(runs["run_id"])}


def variant_order(df):
    """The labels in bench/lab.conf's role order (by label, else kernel)."""
    order = roles.LAB_VARIANT_ORDER
    pairs = df[["variant", "kernel_variant"]].drop_duplicates("variant")
    rank = {v: next((order.index(b) for b in (v, k) if b in order), len(order))
            for v, k in zip(pairs["variant"], pairs["kernel_variant"])}
    return sorted(rank, key=lambda v: (rank[v], v))


def values(cell):
    """The per-repetition values of a history row."""
    return np.array([float(x) for x in (cell if isinstance(cell, str) else "").split(";")
                     if x], dtype=float)


def save(df, history_dir):
    """Write history.csv atomically, in order of run date, cell, metric."""
    tmp = f"{history_path(history_dir)}.tmp.{os.getpid()}"
    df = df.assign(_r=df["run_id"].map(run_order(df)), _m=df["metric"].map(metrics.order))
    df = df.sort_values(["_r", "disk", "job", "pressure", "_m", "variant"], kind="stable")
    df[HISTORY_COLUMNS].to_csv(tmp, index=False, float_format="%.10g")
    os.replace(tmp, history_path(history_dir))


def merge(df, rows):
    """df with a run's rows added; a run_id already present is replaced."""
    kept = df[~df["run_id"].isin(set(rows["run_id"]))]
    out = pd.concat([p for p in (kept, rows) if not p.empty], ignore_index=True)
    return out.drop_duplicates(KEY, keep="last")[HISTORY_COLUMNS]


def date(run):
    """meta.json "started", else a YYYYMMDD-HHMMSS run id, else boots.tsv's."""
    started = run.meta.get("started")
    if isinstance(started, str) and not pd.isna(parse_dates(pd.Series([started]))[0]):
        return started
    try:
        return iso(dt.datetime.strptime(run.run_id[:15], "%Y%m%d-%H%M%S"))
    except ValueError:
        mtime = os.path.getmtime(os.path.join(run.path, "boots.tsv"))
        return iso(dt.datetime.fromtimestamp(mtime, dt.timezone.utc))


def kernel_identity(run):
    """label -> its kernel (package, version, suite, release, variant) and role:
    build-info.json, meta.json "kernels", else the run's base (for a label of its package)."""
    kernels = run.meta.get("kernels") if isinstance(run.meta.get("kernels"), dict) else {}
    meta_pkg, meta_ver = (_meta_str(run.meta, k) for k in ("kernel_source_package",
                                                            "kernel_source_version"))
    builds = {}
    for label, bdir in zip(run.boots["variant"], run.boots["dir"]):
        if not builds.get(label) and bdir:
            builds[label] = rawfiles.read_json(os.path.join(run.path, bdir, "build-info.json"))
    out = {}
    for label in dict.fromkeys(run.boots["variant"]):
        base = tidy.base_variant(run, label)
        k = kernels.get(base) or kernels.get(label)
        sources = [builds.get(label) or {}] + ([k] if isinstance(k, dict) else [])

        def field(key):
            return next((str(s[key]) for s in sources if s.get(key)), "")
        pkg, ver = field("source_package"), field("source_version")
        if not ver and meta_ver and (not pkg or not meta_pkg or pkg == meta_pkg):
            ver, pkg = meta_ver, pkg or meta_pkg
        release = field("kernel_release")
        out[label] = dict(source_package=pkg or package_of(release, ver),
                          kernel_source_version=ver or "unknown",
                          source_suite=field("source_suite"), kernel_release=release,
                          kernel_variant=base, role=roles.variant_role(run, label) or "")
    return out


def _meta_str(meta, key):
    v = meta.get(key)
    return "" if v is None else str(v)


def rows(run, n_boot=stats.N_BOOT):
    """The history rows of a loaded run with a successful boot and a job."""
    if not (run.boots["status"] == "ok").any():
        raise HistoryError(f"{run.path}: no boot of this run succeeded "
                           f"({'; '.join(sorted(set(run.boots['status'])))})")
    if run.tidy.empty:
        raise HistoryError(f"{run.path}: no job of this run was measured "
                           "(every job failed or was skipped)")
    kernels = kernel_identity(run)
    base = dict(run_id=str(run.meta.get("run_id") or run.run_id), started=date(run),
                git_revision=_meta_str(run.meta, "git_revision") or "unknown",
                **{k: _meta_str(run.meta, k) for k in ("accel", "memhog_mb")})
    out, seed_of = [], dict(zip(run.boots["boot"], run.boots["seed"]))
    for (v, disk, job, pressure, metric), g in run.tidy.groupby(
            ["variant", "disk", "job", "pressure", "metric"], sort=True):
        g = g.sort_values(["rep", "boot"])
        vals, seeds = g["value"].to_numpy(dtype=float), [seed_of.get(b) for b in g["boot"]]
        med, lo, hi = stats.median_ci(vals, n_boot=n_boot,
                                      seed=stats.cell_seed(metric, disk, job, pressure, v))
        out.append(dict(base, **kernels[v], variant=v, disk=disk, job=job,
                        icount=labconf.disk_icount(run.meta, run.lab, disk),
                        pressure=str(pressure), metric=metric, unit=metrics.unit(metric),
                        n=len(vals), median=med, ci_low=lo, ci_high=hi,
                        values=";".join(f"{x:.10g}" for x in vals), label=v,
                        seeds=("" if any(pd.isna(x) for x in seeds)
                               else ";".join(str(int(x)) for x in seeds))))
    return pd.DataFrame(out, columns=HISTORY_COLUMNS).astype({"n": "Int64"})


def file_as(df, aliases, path):
    """Each label of aliases {LABEL: VARIANT} filed under VARIANT (a candidate
    fix, a planted regression); a row keeps its label, takes VARIANT's role."""
    labels = set(df["variant"])
    for label, variant in aliases.items():
        if label not in labels:
            raise HistoryError(f"{path}: --as {label}={variant}: the run has no label "
                               f"'{label}' (its labels: {', '.join(sorted(labels))})")
        if variant in labels and variant not in aliases:
            raise HistoryError(f"{path}: --as {label}={variant}: the run has a "
                               f"label '{variant}' of its own")
    if len(set(aliases.values())) < len(aliases):
        raise HistoryError(f"{path}: --as files two labels under one variant")
    df = df.copy()
    sel = df["variant"].isin(list(aliases))
    df.loc[sel, "variant"] = df.loc[sel, "variant"].map(aliases)
    df.loc[sel, "role"] = [fallback_role(v, v) for v in df.loc[sel, "variant"]]
    return df


def read(path, n_boot=stats.N_BOOT, allow_incomplete=False, aliases=None):
    """A run folder -> its history rows (aliases: file_as)."""
    try:
        run = tidy.load_run(path)
    except (tidy.RunError, ValueError) as e:
        raise NotARun(f"{e}: not a run") from None
    incomplete = rawfiles.read_text(os.path.join(path, "INCOMPLETE"))
    if incomplete is not None and not allow_incomplete:
        raise HistoryError(f"{path}: incomplete run (INCOMPLETE: "
                           f"{incomplete or 'no reason given'}); --allow-incomplete adds it")
    out = rows(run, n_boot)
    return file_as(out, aliases, path) if aliases else out


def add(paths, history_dir, n_boot=stats.N_BOOT, allow_incomplete=False, aliases=None,
        fresh=False):
    """Add runs (aliases: file_as; fresh: to an empty table); [(path, status
    "added", "replaced", "refused" or "not a run", message)]."""
    out, frames = [], []
    for path in paths:
        try:
            frames.append((path, read(path, n_boot, allow_incomplete, aliases)))
        except NotARun as e:
            out.append((path, "not a run", str(e)))
        except HistoryError as e:
            out.append((path, "refused", str(e)))
    if frames or fresh:
        os.makedirs(history_dir, exist_ok=True)
        # one writer at a time (two runs ending together); closing unlocks
        with open(os.path.join(history_dir, ".lock"), "w", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            df = load(history_dir) if not fresh else pd.DataFrame(columns=HISTORY_COLUMNS)
            for path, rows in frames:
                status = "replaced" if rows["run_id"].iloc[0] in set(df["run_id"]) else "added"
                df = merge(df, rows)
                out.append((path, status, f"{path}: run {rows['run_id'].iloc[0]} "
                            f"({rows['started'].iloc[0]}, kernel source "
                            f"{joined_versions(rows['kernel_source_version'])}): "
                            f"{len(rows)} rows {status}"))
            save(df, history_dir)
    return sorted(out, key=lambda t: paths.index(t[0]))


def rebuild(results_dir, history_dir, n_boot=stats.N_BOOT, exclude=()):
    """history.csv afresh from the run folders under results_dir but exclude's."""
    out, paths = [], []
    hist = os.path.realpath(history_dir)
    for name in sorted(os.listdir(results_dir)) if os.path.isdir(results_dir) else []:
        path = os.path.join(results_dir, name)
        if not os.path.isdir(path):
            continue
        pat = next((g for g in exclude if fnmatch.fnmatchcase(name, g)), None)
        why = ("the history folder itself" if os.path.realpath(path) == hist else
               f"excluded by --exclude '{pat}'" if pat else
               "" if os.path.isfile(os.path.join(path, "boots.tsv")) else
               "not a run (no boots.tsv)")
        if why:
            out.append((path, "skipped", f"{path}: {why}: skipped"))
        else:
            paths.append(path)
    return sorted(out + [(p, "skipped", f"{m}: skipped") if s in ("refused", "not a run")
                         else (p, "added", m)
                         for p, s, m in add(paths, history_dir, n_boot, fresh=True)])
