# SPDX-License-Identifier: GPL-2.0
"""Every run against the previous run of the same cell (changes.csv).

Significance of a change between two runs: for each variant label, disk,
job, pressure and metric, each run is compared with the previous run (by
date) that has the same cell, with stats.compare on the two runs'
per-repetition values: the ratio of geometric means (later/earlier) and
its 95 % CI inverted from an exact permutation test on log values; the
change is significant when its Benjamini-Hochberg adjusted p is <= 0.05
(the same test as a run's own verdicts, see stats.py; BH across every
consecutive pair of the whole history, primary metrics one family, the
others a second, exploratory one). This is more
sensitive than asking whether the two runs' median CIs overlap (two 95 %
intervals may overlap while the difference is significant). With fewer
than 2 repetitions on a side nothing is tested ("too few repetitions").
Each consecutive pair is a separate test at the 5 % level: over many
metrics and cells some flags are false alarms, and a change that every
variant of a cell shows alike points at the host or the setup rather than
a kernel (changes.csv says so in its note).

Under an exact clock no test is needed where the two runs ran the same
seeds: one kernel and seed give the same instructions in every run, in
any folder, on any machine (the same plan: what the guest runs in a job's
window is counted too), so each seed's ratio is a count, not a sample.
Such a pair (both runs on the same -icount clock, a cell without
pressure, a metric that times the I/O itself: determinism.EXACT_SLOTS,
the same seeds in the same order) is compared seed by seed: the ratio is
the geometric mean of the seeds' ratios, its interval their range, and
it changed when every seed's ratio lies on the same side of 1 (analysis
"exact: same seeds"; no p-value, nothing to adjust). One boot a side is
enough. Writeback under pressure is left to the test: there a seed's
trajectory is chaotic, and one seed's exact ratio says little of the
next's.

Without the same seeds (a row from before the seeds were kept, or
another set of reps), two such cells whose repetitions each spread within
the determinism bound (lab.conf; determinism.py) are compared as a run
compares them: the ratio is known to the bound, no test (analysis
"exact: bound ±X%").
"""
import numpy as np
import pandas as pd

from analysis import determinism, metrics, stats
from tracker import table

COLUMNS = ["metric", "unit", "disk", "job", "pressure", "variant",
           "run_a", "run_b", "started_a", "started_b", "version_a",
           "version_b", "n_a", "n_b", "median_a", "median_b", "ratio",
           "ci_low", "ci_high", "verdict", "significant", "note",
           "p_value", "p_adjusted", "primary", "analysis", "label_a", "label_b"]
# Setup fields that must match for two runs to be compared like for like.
SETUP = ["accel", "icount", "memhog_mb"]


def _setup_note(a, b):
    diffs = [f"{k} {a[k] or '-'} -> {b[k] or '-'}" for k in SETUP if a[k] != b[k]]
    return f"setup differs ({', '.join(diffs)})" if diffs else ""


def _exact_metrics(job, present):
    """The metrics of a job that time the I/O itself (its throughput and
    latency-tail slots), which an exact clock makes counts."""
    return {m for slot, m in metrics.primary_metrics(job, present).items()
            if slot in determinism.EXACT_SLOTS}


def _one_exact_clock(a, b, exact):
    """Whether history rows a and b are an exact metric (exact) of a cell
    without pressure, both on one -icount clock."""
    return bool(exact and str(a["icount"] or "") != "" and a["icount"] == b["icount"] and
                str(a["pressure"]) == metrics.NO_PRESSURE)


def same_seeds(a, b, exact):
    """Whether history rows a and b ran the same seeds on one exact clock
    (_one_exact_clock): known seeds, equal and in the same order."""
    return bool(_one_exact_clock(a, b, exact) and a["seeds"] and a["seeds"] == b["seeds"] and
                len(str(a["seeds"]).split(";")) == len(table.values(a["values"])) ==
                len(table.values(b["values"])))


def deterministic(a, b, va, vb, exact, bound):
    """Whether rows a and b (values va, vb) are two deterministic cells of
    one exact clock (_one_exact_clock): on each side at least
    determinism.MIN_REPS values within bound (the cell's, in %)."""
    return (_one_exact_clock(a, b, exact) and determinism.is_deterministic(va, bound) and
            determinism.is_deterministic(vb, bound))


def seeded_compare(metric, a_vals, b_vals):
    """compare()'s columns for two runs of the same seeds on an exact
    clock (the module docstring): seed by seed, no test."""
    a_vals, b_vals = np.asarray(a_vals, float), np.asarray(b_vals, float)
    out = dict(n_a=len(a_vals), n_b=len(b_vals), median_a=float(np.median(a_vals)),
               median_b=float(np.median(b_vals)), p_value=np.nan, mde_pct=np.nan,
               analysis=f"{determinism.EXACT}: same seeds")
    if (a_vals <= 0).any() or (b_vals <= 0).any():
        same = bool(np.array_equal(a_vals, b_vals))
        return dict(out, ratio=1.0 if same else np.nan, ci_low=np.nan, ci_high=np.nan,
                    verdict=stats.NO_DIFF if same else stats.NO_DATA,
                    note="exact clock, same seeds: values of 0, no ratio")
    r = b_vals / a_vals
    ratio = float(np.exp(np.log(r).mean()))
    lo, hi = float(r.min()), float(r.max())
    changed = lo > 1 or hi < 1
    return dict(out, ratio=ratio, ci_low=lo, ci_high=hi,
                verdict=stats.word(metric, ratio > 1) if changed else stats.NO_DIFF,
                note=(f"exact clock, same seeds ({len(r)}): each seed's ratio a count"
                      + ("" if len(r) > 1 else "; one seed, so what the seed moves "
                         "is not measured")))


def compute(df, n_boot=stats.N_BOOT, bound=None):
    """Every run against the previous run (by date) of the same variant
    label, disk, job, pressure and metric: one row per pair (COLUMNS).
    bound: the determinism bound in % (default: the repository's
    lab.conf)."""
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    bound = determinism.lab_bound_pct() if bound is None else bound
    order = table.run_order(df)
    rows = []
    d = df.assign(_r=df["run_id"].map(order))
    present = {k: set(g["metric"]) for k, g in d.groupby("job", sort=False)}
    for (v, disk, job, pressure, metric), g in d.groupby(
            ["variant", "disk", "job", "pressure", "metric"], sort=True):
        if metric in metrics.TOTALS:
            continue
        primary = metric in metrics.primary_metrics(job, present[job]).values()
        exact = metric in _exact_metrics(job, present[job])
        cell_bound = determinism.metric_bound(metric, bound, disk)
        g = g.sort_values("_r")
        recs = g.to_dict("records")
        for a, b in zip(recs, recs[1:]):
            va, vb = table.values(a["values"]), table.values(b["values"])
            if same_seeds(a, b, exact):
                res = seeded_compare(metric, va, vb)
            elif deterministic(a, b, va, vb, exact, cell_bound):
                res = stats.exact_compare(metric, va, vb, cell_bound)
            else:
                res = stats.compare(metric, va, vb, n_boot,
                                    stats.cell_seed("history", metric, disk, job,
                                                    pressure, v, a["run_id"], b["run_id"]))
            notes = [res["note"]] if res["note"] else []
            if a["kernel_source_version"] != b["kernel_source_version"]:
                notes.append(f"kernel source {a['kernel_source_version']} -> "
                             f"{b['kernel_source_version']}")
            if a["git_revision"] != b["git_revision"]:
                notes.append(f"git {a['git_revision']} -> {b['git_revision']}")
            setup = _setup_note(a, b)
            if setup:
                notes.append(setup)
            rows.append(dict(metric=metric, unit=metrics.unit(metric), disk=disk, job=job,
                             pressure=pressure, variant=v, run_a=a["run_id"],
                             run_b=b["run_id"], started_a=a["started"],
                             started_b=b["started"],
                             version_a=a["kernel_source_version"],
                             version_b=b["kernel_source_version"],
                             n_a=res["n_a"], n_b=res["n_b"], median_a=res["median_a"],
                             median_b=res["median_b"], ratio=res["ratio"],
                             ci_low=res["ci_low"], ci_high=res["ci_high"],
                             verdict=res["verdict"],
                             significant=res["verdict"] in stats.SIGNIFICANT,
                             note="; ".join(notes), p_value=res["p_value"],
                             p_adjusted=np.nan, primary=primary,
                             analysis=res.get("analysis", ""),
                             label_a=a["label"], label_b=b["label"]))
    out = pd.DataFrame(rows, columns=COLUMNS)
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
               ~out["verdict"].map(stats.is_too_few))
        out.loc[sel, "p_adjusted"] = stats.bh_adjust(out.loc[sel, "p_value"].to_numpy(float))
    # an exact pair (same seeds, or within the bound) is no test: nothing
    # to adjust
    lost = (out["verdict"].isin(stats.SIGNIFICANT) & ~(out["p_adjusted"] <= stats.ALPHA) &
            ~stats.is_exact(out))
    out.loc[lost, "verdict"] = stats.NO_DIFF
    out["significant"] = out["verdict"].isin(stats.SIGNIFICANT)
    return out


def significant(ch):
    return ch[ch["significant"].astype(bool)] if not ch.empty else ch
