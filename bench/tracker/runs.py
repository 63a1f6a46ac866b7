# SPDX-License-Identifier: GPL-2.0
"""A run folder -> its history rows (table.HISTORY_COLUMNS).

The rows come from tidy.load_run, so failed boots, failed and skipped jobs
are excluded exactly as in a run's own analysis. A run is identified by
meta.json "run_id", else its folder name, and dated by meta.json
"started", else a YYYYMMDD-HHMMSS run_id, else the time boots.tsv was
written. The kernel of a label comes from the build-info.json of its
boots (a run may boot several bases: 5.10/stock next to pre), else
meta.json "kernels", else the run's meta.json "kernel_source_version"
(the default base's, used only for a label of that package); see
kernel_identity.
"""
import datetime as dt
import os
import re

import pandas as pd

from analysis import metrics, rawfiles, roles, stats, tidy
from lab import labconf
from tracker import table, versions

RUN_ID_DATE = re.compile(r"^(\d{8})-(\d{6})")


def date(run):
    """(ISO date, where it came from) of a run."""
    started = run.meta.get("started")
    if isinstance(started, str) and not pd.isna(table.parse_dates(pd.Series([started]))[0]):
        return started, "meta.json"
    m = RUN_ID_DATE.match(run.run_id)
    if m:
        try:
            ts = dt.datetime.strptime(m.group(1) + m.group(2), "%Y%m%d%H%M%S")
            return table.iso(ts), "run id"
        except ValueError:
            pass
    mtime = os.path.getmtime(os.path.join(run.path, "boots.tsv"))
    return table.iso(dt.datetime.fromtimestamp(mtime, dt.timezone.utc)), "boots.tsv time"


def _label_builds(run):
    """label -> the build-info.json of its first boot that has one."""
    out = {}
    for label, bdir in zip(run.boots["variant"], run.boots["dir"]):
        if label in out or not bdir:
            continue
        info = rawfiles.read_json(os.path.join(run.path, bdir, "build-info.json"))
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
        k = kernels.get(tidy.base_variant(run, label)) or kernels.get(label)
        if isinstance(k, dict):
            sources.append(k)

        def field(key):
            return next((str(s[key]) for s in sources if s.get(key)), "")
        pkg, ver = field("source_package"), field("source_version")
        if not ver and meta_ver and (not pkg or not meta_pkg or pkg == meta_pkg):
            ver, pkg = meta_ver, pkg or meta_pkg
        release = field("kernel_release")
        out[label] = dict(source_package=pkg or versions.package_of(release, ver),
                          kernel_source_version=ver or "unknown",
                          source_suite=field("source_suite"), kernel_release=release)
    return out


def _meta_str(meta, key):
    v = meta.get(key)
    return "" if v is None else str(v)


def rows(run, n_boot=stats.N_BOOT):
    """The history rows of a loaded run. Raises HistoryError for a run
    with no successful boot or no measured job."""
    if not (run.boots["status"] == "ok").any():
        reasons = sorted(set(run.boots["status"]))
        raise table.HistoryError(f"{run.path}: no boot of this run succeeded "
                                 f"({'; '.join(reasons)})")
    if run.tidy.empty:
        raise table.HistoryError(f"{run.path}: no job of this run was measured "
                                 "(every job failed or was skipped)")
    run_id = str(run.meta.get("run_id") or run.run_id)
    started, _ = date(run)
    kernels = kernel_identity(run)
    unknown = dict(source_package="", kernel_source_version="unknown",
                   source_suite="", kernel_release="")
    base = dict(run_id=run_id, started=started,
                git_revision=_meta_str(run.meta, "git_revision") or "unknown",
                accel=_meta_str(run.meta, "accel"),
                memhog_mb=_meta_str(run.meta, "memhog_mb"))
    lab = run.lab
    out = []
    kvariant, role = {}, {}
    seed_of = dict(zip(run.boots["boot"], run.boots["seed"]))
    for (v, disk, job, pressure, metric), g in run.tidy.groupby(
            ["variant", "disk", "job", "pressure", "metric"], sort=True):
        g = g.sort_values(["rep", "boot"])
        vals = g["value"].to_numpy(dtype=float)
        seeds = [seed_of.get(b) for b in g["boot"]]
        med, lo, hi = stats.median_ci(vals, n_boot=n_boot,
                                      seed=stats.cell_seed(metric, disk, job, pressure, v))
        if v not in kvariant:
            kvariant[v] = tidy.base_variant(run, v)
            role[v] = roles.variant_role(run, v) or ""
        out.append(dict(base, **kernels.get(v, unknown), role=role[v], variant=v,
                        icount=labconf.disk_icount(run.meta, lab, disk),
                        kernel_variant=kvariant[v], disk=disk, job=job,
                        pressure=str(pressure), metric=metric, unit=metrics.unit(metric),
                        n=len(vals), median=med, ci_low=lo, ci_high=hi,
                        values=";".join(f"{x:.10g}" for x in vals), label=v,
                        seeds=("" if any(pd.isna(x) for x in seeds)
                               else ";".join(str(int(x)) for x in seeds))))
    df = pd.DataFrame(out, columns=table.HISTORY_COLUMNS)
    df["n"] = df["n"].astype("Int64")
    return df


def file_as(df, aliases, path):
    """The rows of each run label LABEL of aliases {LABEL: VARIANT} filed
    under VARIANT: a kernel built under another name to stand for VARIANT
    in the history (a candidate fix, a bisect step, the planted regression
    of tests/regression-test.sh), compared with VARIANT's earlier runs.
    The row keeps its own label (for bench/explain) and the kernel it
    booted (kernel_variant); its role is VARIANT's. Raises HistoryError
    for a label the run does not have, or a VARIANT the run has already."""
    labels = set(df["variant"])
    for label, variant in aliases.items():
        if label not in labels:
            raise table.HistoryError(f"{path}: --as {label}={variant}: the run has no "
                                     f"label '{label}' (its labels: "
                                     f"{', '.join(sorted(labels))})")
        if variant in labels and variant not in aliases:
            raise table.HistoryError(f"{path}: --as {label}={variant}: the run has a "
                                     f"label '{variant}' of its own")
    if len(set(aliases.values())) < len(aliases):
        raise table.HistoryError(f"{path}: --as files two labels under one variant")
    df = df.copy()
    sel = df["variant"].isin(list(aliases))
    df.loc[sel, "variant"] = df.loc[sel, "variant"].map(aliases)
    df.loc[sel, "role"] = [table.fallback_role(v, v) for v in df.loc[sel, "variant"]]
    return df


def read(path, n_boot=stats.N_BOOT, allow_incomplete=False, aliases=None):
    """A run folder -> its history rows (aliases: file_as). Raises
    NotARun or HistoryError."""
    try:
        run = tidy.load_run(path)
    except (tidy.RunError, ValueError) as e:
        raise table.NotARun(f"{e}: not a run") from None
    incomplete = rawfiles.read_text(os.path.join(path, "INCOMPLETE"))
    if incomplete is not None and not allow_incomplete:
        raise table.HistoryError(f"{path}: incomplete run (INCOMPLETE: "
                                 f"{incomplete or 'no reason given'}); "
                                 "--allow-incomplete adds it")
    out = rows(run, n_boot)
    return file_as(out, aliases, path) if aliases else out
