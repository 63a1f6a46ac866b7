# SPDX-License-Identifier: GPL-2.0
"""Ratios of medians with bootstrap confidence intervals, and verdicts.

For every metric and cell (disk, job, pressure) and every pair of variant
labels present in the cell, B is compared with A (A is the baseline, see
pair_order) by the ratio of medians B/A.

Confidence interval: percentile bootstrap, both sides resampled
independently with replacement, N_BOOT resamples, 95 %. The generator is
seeded from the cell's own key, so a row is reproducible whatever else the
run holds. A ratio whose interval excludes 1.0 is significant; the wording
follows the metric (faster/slower for throughput and latency, higher/lower
for the rest). With fewer than 5 runs a side the bootstrap of a median is
optimistic (it cannot see spread it has not sampled): the note says so.

Minimum detectable effect (mde_pct): the relative change that these reps
and this noise would detect with 80 % power at the 5 % level, taken from the
interval's half-width on the log scale, h = (ln hi - ln lo) / 2:
mde = exp(h * (z_0.975 + z_0.80) / z_0.975) - 1. An effect smaller than
that can hide in a "no significant difference".

A bounce cost (a comparison on usb-pio where one side runs the pre-fixed
kernel) is only reported where that side's every job counted bounced bios
(> 0); otherwise the row says "bounce path not exercised".
"""
import zlib

import numpy as np
import pandas as pd

from . import metrics as M
from . import tidy as T

N_BOOT = 2000
SEED = 20250516
LEVEL = 0.95
_Z = 1.959963984540054
_Z_POWER = 0.8416212335729143
POWER_FACTOR = (_Z + _Z_POWER) / _Z
MIN_REPS = 2
FEW_REPS = 5

# Baseline order: the bounce path as designed, the kernel as shipped, the
# series. Pairs are (A, B) with A earlier here; unknown labels come last.
KNOWN_ORDER = ("pre-fixed", "pre", "post")
BOUNCE_VARIANT = "pre-fixed"
BOUNCE_DISK = "usb-pio"

VERDICT_COLUMNS = ["metric", "unit", "disk", "job", "pressure", "a", "b",
                   "pair_kind", "n_a", "n_b", "median_a", "median_b", "ratio",
                   "ci_low", "ci_high", "mde_pct", "verdict", "note"]

NOT_EXERCISED = "bounce path not exercised"
TOO_FEW = "too few repetitions"
NO_DATA = "no data"
NO_DIFF = "no significant difference"


def cell_seed(*key):
    """A seed that depends only on the cell's key."""
    return SEED ^ zlib.crc32("|".join(map(str, key)).encode())


def _ratio(num, den):
    """num/den with 0/0 = 1 (both zero: no change) and x/0 = inf."""
    num = np.asarray(num, dtype=float)
    den = np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = num / den
    return np.where((num == 0) & (den == 0), 1.0, r)


def _boot_medians(rng, x, n_boot):
    idx = rng.integers(0, len(x), size=(n_boot, len(x)))
    return np.median(x[idx], axis=1)


def bootstrap_ratio(a, b, n_boot=N_BOOT, seed=SEED, level=LEVEL):
    """Ratio of medians B/A and its percentile bootstrap CI.

    Returns (ratio, lo, hi). The bounds use the order statistics just
    outside the interval (no interpolation: resampled ratios may be inf).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    rng = np.random.default_rng(seed)
    r = _ratio(_boot_medians(rng, b, n_boot), _boot_medians(rng, a, n_boot))
    tail = (1 - level) / 2 * 100
    lo = float(np.percentile(r, tail, method="lower"))
    hi = float(np.percentile(r, 100 - tail, method="higher"))
    return float(_ratio(np.median(b), np.median(a))), lo, hi


def median_ci(x, n_boot=N_BOOT, seed=SEED, level=LEVEL):
    """Median of x and its percentile bootstrap CI (for bar whiskers)."""
    x = np.asarray(x, dtype=float)
    if len(x) < MIN_REPS:
        return float(np.median(x)), np.nan, np.nan
    m = _boot_medians(np.random.default_rng(seed), x, n_boot)
    tail = (1 - level) / 2 * 100
    return (float(np.median(x)), float(np.percentile(m, tail)),
            float(np.percentile(m, 100 - tail)))


def mde(lo, hi):
    """Minimum detectable relative effect from a ratio CI (see above)."""
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo <= 0 or hi <= 0:
        return np.nan
    half = (np.log(hi) - np.log(lo)) / 2
    return float(np.expm1(half * POWER_FACTOR))


def word(metric, up):
    """The verdict word for a significant change of B against A."""
    k = M.kind(metric)
    if k == M.THROUGHPUT:
        return "faster" if up else "slower"
    if k == M.LATENCY:
        return "slower" if up else "faster"
    return "higher" if up else "lower"


def significance(metric, lo, hi):
    if lo > 1:
        return word(metric, True)
    if hi < 1:
        return word(metric, False)
    return NO_DIFF


def pair_order(run, labels):
    """Labels sorted baseline first (KNOWN_ORDER by kernel variant, then
    first appearance in boots.tsv)."""
    seen = list(dict.fromkeys(run.boots["variant"]))

    def rank(label):
        base = label if label in KNOWN_ORDER else T.base_variant(run, label)
        known = KNOWN_ORDER.index(base) if base in KNOWN_ORDER else len(KNOWN_ORDER)
        return (known, seen.index(label) if label in seen else len(seen), label)
    return sorted(labels, key=rank)


def is_bounce_variant(run, label):
    return BOUNCE_VARIANT in (label, T.base_variant(run, label))


def _bounce_check(cell_jobs):
    """None when every measured job counted bounces > 0, else the reason."""
    ok = cell_jobs[cell_jobs["state"] == "ok"]
    if ok.empty:
        return None
    counted = ok[ok["bounce_trace"] == "counted"]
    if len(counted) < len(ok):
        traces = sorted(set(ok["bounce_trace"]) - {"counted"})
        return (f"bounces not counted on {len(ok) - len(counted)} of {len(ok)} "
                f"jobs ({', '.join(traces)})")
    zero = int((counted["bounces"] <= 0).sum())
    if zero:
        return f"0 bounced bios in {zero} of {len(ok)} jobs"
    return None


def _missing_reason(label, side_jobs, metric):
    """Why a side has no value for a metric."""
    ok = side_jobs[side_jobs["state"] == "ok"]
    if ok.empty:
        reasons = sorted(set(side_jobs["reason"]))
        states = sorted(set(side_jobs["state"]))
        return f"{label}: {'/'.join(states)} ({'; '.join(reasons)})"
    if metric in M.BOUNCE_METRICS and (ok["bounce_trace"] == "absent").all():
        return f"{label}: no block_bio_bounce tracepoint (bounce code removed)"
    return f"{label}: kernel does not expose this metric"


def _clock_note(metric, ja, jb):
    clocks_a = set(ja["clocksource"].dropna())
    clocks_b = set(jb["clocksource"].dropna())
    notes = []
    if clocks_a and clocks_b and clocks_a != clocks_b:
        notes.append(f"clocksources differ ({'/'.join(sorted(clocks_a))} vs "
                     f"{'/'.join(sorted(clocks_b))})")
    if M.kind(metric) == M.LATENCY and any("jiffies" in c for c in clocks_a | clocks_b):
        notes.append("latency quantised to the timer tick (jiffies clocksource)")
    return notes


def compare(metric, a_vals, b_vals, n_boot=N_BOOT, seed=SEED):
    """Statistics of one pair: dict of the numeric verdict columns."""
    a_vals = np.asarray(a_vals, dtype=float)
    b_vals = np.asarray(b_vals, dtype=float)
    out = dict(n_a=len(a_vals), n_b=len(b_vals),
               median_a=float(np.median(a_vals)) if len(a_vals) else np.nan,
               median_b=float(np.median(b_vals)) if len(b_vals) else np.nan,
               ratio=np.nan, ci_low=np.nan, ci_high=np.nan, mde_pct=np.nan,
               verdict=NO_DATA, note="")
    if not len(a_vals) or not len(b_vals):
        return out
    out["ratio"] = float(_ratio(out["median_b"], out["median_a"]))
    if min(len(a_vals), len(b_vals)) < MIN_REPS:
        out["verdict"] = TOO_FEW
        return out
    ratio, lo, hi = bootstrap_ratio(a_vals, b_vals, n_boot, seed)
    out.update(ci_low=lo, ci_high=hi, mde_pct=100 * mde(lo, hi),
               verdict=significance(metric, lo, hi))
    if min(len(a_vals), len(b_vals)) < FEW_REPS:
        out["note"] = f"fewer than {FEW_REPS} runs a side: the CI is optimistic"
    return out


def verdicts(run, n_boot=N_BOOT):
    """One row per metric, cell and pair of variant labels."""
    rows = []
    kernels = T.variant_kernels(run)
    jobs = run.jobs
    if jobs.empty:
        return pd.DataFrame(columns=VERDICT_COLUMNS)
    tidy = run.tidy
    for (disk, job, pressure), cjobs in jobs.groupby(["disk", "job", "pressure"], sort=True):
        labels = pair_order(run, list(dict.fromkeys(cjobs["variant"])))
        cell = tidy[(tidy["disk"] == disk) & (tidy["job"] == job) &
                    (tidy["pressure"] == pressure)]
        cell_metrics = sorted(set(cell["metric"]), key=M.order)
        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                ja, jb = cjobs[cjobs["variant"] == a], cjobs[cjobs["variant"] == b]
                ka, kb = kernels.get(a), kernels.get(b)
                kind = "A/A" if ka and ka == kb else "A/B"
                bounce_why = None
                if disk == BOUNCE_DISK:
                    for label, side in ((a, ja), (b, jb)):
                        if is_bounce_variant(run, label):
                            why = _bounce_check(side)
                            if why:
                                bounce_why = f"{label}: {why}"
                for metric in cell_metrics:
                    va = cell[(cell["variant"] == a) & (cell["metric"] == metric)]["value"]
                    vb = cell[(cell["variant"] == b) & (cell["metric"] == metric)]["value"]
                    seed = cell_seed(metric, disk, job, pressure, a, b)
                    res = compare(metric, va.to_numpy(), vb.to_numpy(), n_boot, seed)
                    notes = [res["note"]] if res["note"] else []
                    if res["verdict"] == NO_DATA:
                        notes = [_missing_reason(l, j, metric)
                                 for l, v, j in ((a, va, ja), (b, vb, jb)) if v.empty]
                    elif bounce_why:
                        # no bounce cost without proof that the path ran
                        res.update(ratio=np.nan, ci_low=np.nan, ci_high=np.nan,
                                   mde_pct=np.nan, verdict=NOT_EXERCISED)
                        notes = [bounce_why]
                    if res["verdict"] != NO_DATA:
                        notes += _clock_note(metric, ja, jb)
                    res["note"] = "; ".join(notes)
                    rows.append(dict(metric=metric, unit=M.unit(metric), disk=disk,
                                     job=job, pressure=pressure, a=a, b=b,
                                     pair_kind=kind, **res))
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


def bounce_summary(run):
    """Per variant, disk, job and pressure: how bounces were seen.

    Columns: variant, disk, job, pressure, jobs, counted, bounces (sum),
    trace ("counted", "absent", ...).
    """
    ok = run.jobs[run.jobs["state"] == "ok"] if not run.jobs.empty else run.jobs
    rows = []
    if ok.empty:
        return pd.DataFrame(columns=["variant", "disk", "job", "pressure",
                                     "jobs", "counted", "bounces", "trace"])
    for key, g in ok.groupby(["variant", "disk", "job", "pressure"], sort=True):
        counted = g[g["bounce_trace"] == "counted"]
        rows.append(dict(zip(["variant", "disk", "job", "pressure"], key),
                         jobs=len(g), counted=len(counted),
                         bounces=float(counted["bounces"].sum()) if len(counted) else np.nan,
                         trace="/".join(sorted(set(g["bounce_trace"])))))
    return pd.DataFrame(rows)


def write_verdicts(df, path):
    df.to_csv(path, index=False)
