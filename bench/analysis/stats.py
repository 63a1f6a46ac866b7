# SPDX-License-Identifier: GPL-2.0
"""Verdicts: a run (tidy.Run) -> the verdict table (VERDICT_COLUMNS and
RELEVANCE_COLUMNS), one row per metric, cell (disk, job, pressure) and
pair of labels (A first in Run.labels' pair order), and per split half of
a label on an exact clock.

A pair of deterministic cells is decided by the bound (determinism.py),
any other by an exact permutation test on log values with its inverted
CI, Benjamini-Hochberg per question and family, an MDE, and a relevance
label against the smallest effect of interest. The method, and why, is
bench/README.md's "Repetitions and verdicts".
"""
import itertools
import math
import zlib
from functools import lru_cache

import numpy as np
import pandas as pd

from lab import labconf as L
from . import cells as C
from . import determinism as D
from . import metrics as M
from . import roles as ROLES

ALPHA = 0.05
LEVEL = 1 - ALPHA
POWER = 0.80
# Repetitions a side that the calibration test proves enough: false
# positives <= ALPHA and >= 80 % power for a 10 % change at 5 % CV.
DEFAULT_REPS = 6
EXACT_MAX = 20000       # enumerate every relabelling up to this many
N_PERM = 10000          # else this many random ones
CHUNK = 4_000_000       # statistics computed at once (memory bound)
N_BOOT = N_PERM         # the --resamples default (bar whiskers, history CIs)
SEED = 20250516
MIN_REPS = 2
PAIRED_MIN = 6          # 2^(1-n) <= ALPHA: a sign-flip test can reach ALPHA
BLOCK_RATIO = 4.0       # pair only when var(log A_i + log B_i) >= this * mean(d_i^2)
QUANTISED = 0.5         # distinct values / values below this: quantised

VERDICT_COLUMNS = ["metric", "unit", "disk", "job", "pressure", "a", "b", "pair_kind",
                   "n_a", "n_b", "median_a", "median_b", "ratio", "ci_low", "ci_high",
                   "mde_pct", "verdict", "note", "p_value", "p_adjusted", "primary",
                   "slot", "analysis", "control"]

AA = "A/A"
ODD, EVEN = "odd", "even"   # the halves of a split-half A/A row
SAME_SEEDS = "same seeds: cannot differ under an exact clock"
NOT_EXERCISED = "bounce path not exercised"
TOO_FEW = "too few repetitions for a verdict"
NO_DATA = "no data"
NO_DIFF = "no significant difference"
PAIRED, UNPAIRED = "paired by rep", "unpaired"
SIGNIFICANT = ("faster", "slower", "higher", "lower", "cheaper", "costlier")


def is_significant(verdict):
    return verdict in SIGNIFICANT


def is_too_few(verdict):
    return isinstance(verdict, str) and verdict.startswith(TOO_FEW)


# t quantiles: no scipy on Debian's python3 here
def t_abs_cdf(t, df):
    """P(|T| <= t) for Student's t, integer df >= 1 (closed forms)."""
    if t <= 0:
        return 0.0
    th = math.atan(t / math.sqrt(df))
    if df == 1:
        return 2 * th / math.pi
    c2, sn, odd = math.cos(th) ** 2, math.sin(th), df % 2
    term, total = 1.0, 1.0
    for k in range(1, (df - odd) // 2):
        term *= c2 * (2 * k - 1 + odd) / (2 * k + odd)
        total += term
    return 2 / math.pi * (th + sn * math.cos(th) * total) if odd else sn * total


def _bisect(below, lo, hi, steps):
    """The edge between lo (below holds) and hi (it does not) after steps halvings."""
    for _ in range(steps):
        mid = (lo + hi) / 2
        if below(mid):
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


@lru_cache(maxsize=None)
def t_quantile(q, df):
    """The q quantile (q > 0.5) of Student's t with df degrees of freedom."""
    target, hi = 2 * q - 1, 1.0
    while t_abs_cdf(hi, df) < target:
        hi *= 2
    return _bisect(lambda t: t_abs_cdf(t, df) < target, 0.0, hi, 100)


def power_factor(df):
    """t_(1-ALPHA/2) + t_POWER at df: from standard errors to the MDE."""
    return t_quantile(1 - ALPHA / 2, df) + t_quantile(POWER, df)


@lru_cache(maxsize=64)
def _subsets(n_a, n_b, n_perm, seed):
    """Indicator rows of the relabellings: which of the n_a + n_b pooled
    values (A first) are called B. The first row is the observed one."""
    n = n_a + n_b
    if math.comb(n, n_b) <= EXACT_MAX:
        rows = np.zeros((math.comb(n, n_b), n))
        for i, c in enumerate(itertools.combinations(range(n), n_b)):
            rows[i, list(c)] = 1
        # the observed one (B the last n_b) is the last combination
        return np.roll(rows, 1, axis=0)
    keys = np.random.default_rng(seed).random((n_perm, n)).argsort(1) < n_b
    return np.vstack([np.arange(n) >= n_a, keys]).astype(float)


@lru_cache(maxsize=64)
def _signs(n, n_perm, seed):
    """Sign-flip rows (the first is the observed, all +1)."""
    if 2 ** n <= EXACT_MAX:
        return np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    s = np.random.default_rng(seed).choice((1.0, -1.0), size=(n_perm, n))
    return np.vstack([np.ones((1, n)), s])


def _share(z, n_rows, stat, tol=1):
    """Per row of z, the share of the statistics stat(rows of z) (T,
    n_rows), the observed first, at least as far from 0 as the observed:
    CHUNK statistics at a time."""
    out = np.empty(len(z))
    step = max(1, CHUNK // n_rows)
    for i in range(0, len(z), step):
        zc = z[i:i + step]
        st = stat(zc)
        scale = max(float(np.nanmax(np.abs(zc))) if np.size(zc) else 0.0, 1e-300)
        out[i:i + step] = (st >= st[:, :1] - 1e-9 * scale * tol).mean(1)
    return out


def unpaired_p(xa, xb, shift=0.0, n_perm=N_PERM, seed=SEED):
    """Two-sided permutation p of mean(xb - shift) - mean(xa), for each row
    of xa (T, n_a) and xb (T, n_b); shift is a scalar or (T,)."""
    xa, xb = np.atleast_2d(xa), np.atleast_2d(xb)
    n_a, n_b = xa.shape[1], xb.shape[1]
    sub = _subsets(n_a, n_b, n_perm, seed)

    def stat(zc):
        sb = zc @ sub.T
        return np.abs(sb / n_b - (zc.sum(1, keepdims=True) - sb) / n_a)
    return _share(np.concatenate([xa, xb - np.reshape(shift, (-1, 1))], axis=1), len(sub), stat)


def paired_p(d, shift=0.0, n_perm=N_PERM, seed=SEED):
    """Two-sided sign-flip p of mean(d - shift), for each row of d (T, n)."""
    d = np.atleast_2d(d)
    sg = _signs(d.shape[1], n_perm, seed)
    return _share(d - np.reshape(shift, (-1, 1)), len(sg), lambda xc: np.abs(xc @ sg.T),
                  d.shape[1])


def min_p(n_a, n_b, paired=False, n_perm=N_PERM, seed=SEED):
    """The smallest p the test can give at these sizes."""
    if min(n_a, n_b) < 1:
        return 1.0
    if paired:
        return float(paired_p(np.ones((1, n_a)), 0.0, n_perm, seed)[0])
    return float(unpaired_p(np.zeros((1, n_a)), np.ones((1, n_b)), 0.0, n_perm, seed)[0])


def choose_paired(xa, xb):
    """For each row of complete blocks xa, xb (T, n): True where pairing is
    expected to detect a smaller change (bench/README.md)."""
    xa, xb = np.atleast_2d(xa), np.atleast_2d(xb)
    n = xa.shape[1]
    if n < PAIRED_MIN:
        return np.zeros(xa.shape[0], bool)
    md2 = ((xb - xa) ** 2).mean(1)
    var_s = (xb + xa).var(1, ddof=1)
    se_p = np.sqrt(md2 / n)
    se_u = np.sqrt((var_s + md2) / (2 * n))
    return ((var_s >= BLOCK_RATIO * md2) &
            (power_factor(n - 1) * se_p < power_factor(2 * n - 2) * se_u))


def test_pvalues(xa, xb, blocked=True, n_perm=N_PERM, seed=SEED):
    """(p, paired) for each row of xa, xb (T, n_a / n_b, log scale), as
    verdicts() tests; blocked: column i of both is one rep."""
    xa, xb = np.atleast_2d(xa), np.atleast_2d(xb)
    p = unpaired_p(xa, xb, 0.0, n_perm, seed)
    paired = np.zeros(len(p), bool)
    if blocked and xa.shape[1] == xb.shape[1]:
        paired = choose_paired(xa, xb)
        if paired.any():
            p[paired] = paired_p((xb - xa)[paired], 0.0, n_perm, seed)
    return p, paired


def bh_adjust(p):
    """Benjamini-Hochberg adjusted p-values (NaN stays NaN)."""
    p = np.asarray(p, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    out[ok] = bh_adjust_rows(p[ok][None])[0]
    return out


def bh_adjust_rows(p):
    """bh_adjust over the rows of a (T, m) array."""
    p = np.asarray(p, dtype=float)
    m = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    ps = np.take_along_axis(p, order, 1) * m / np.arange(1, m + 1)
    ps = np.minimum.accumulate(ps[:, ::-1], axis=1)[:, ::-1]
    out = np.empty_like(p)
    np.put_along_axis(out, order, np.minimum(ps, 1.0), 1)
    return out


def _ci_bound(pfun, est, sign, scale):
    """The CI's bound on the side of sign: from est, the step doubles until
    a shift c has pfun(c) <= ALPHA, then bisection; infinite where none has."""
    step = max(scale, 1e-12)
    inner, limit = est, 1e6 * step + 100
    for _ in range(200):
        c = est + sign * step
        if pfun(c) <= ALPHA:
            return _bisect(lambda x: pfun(x) > ALPHA, inner, c, 60)
        inner, step = c, step * 2
        if step > limit:
            break
    return sign * np.inf


def cell_seed(*key):
    """A seed that depends only on the cell's key."""
    return SEED ^ zlib.crc32("|".join(map(str, key)).encode())


def median_ci(x, n_boot=N_BOOT, seed=SEED, level=LEVEL):
    """Median of x and its percentile bootstrap CI (for bar whiskers)."""
    x = np.asarray(x, dtype=float)
    if len(x) < MIN_REPS:
        return float(np.median(x)), np.nan, np.nan
    idx = np.random.default_rng(seed).integers(0, len(x), size=(n_boot, len(x)))
    m = np.median(x[idx], axis=1)
    tail = (1 - level) / 2 * 100
    return (float(np.median(x)), float(np.percentile(m, tail)),
            float(np.percentile(m, 100 - tail)))


# the verdict words of a change up and down, by the metric's kind
WORDS = {M.THROUGHPUT: ("faster", "slower"), M.LATENCY: ("slower", "faster"),
         M.COST: ("costlier", "cheaper")}


def word(metric, up):
    """The verdict word for a significant change of B against A."""
    return WORDS.get(M.kind(metric), ("higher", "lower"))[0 if up else 1]


def bounce_check(cell_jobs):
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


def bounce_exercised(cell_jobs):
    """Whether jobs prove the bounce path ran: ok jobs, each counting bounced bios
    (> 0). The one rule the verdicts, the report and the console summary ask."""
    ok = cell_jobs[cell_jobs["state"] == "ok"]
    return not ok.empty and bounce_check(ok) is None


def _missing_reason(label, side_jobs, metric):
    """Why a side has no value for a metric."""
    ok = side_jobs[side_jobs["state"] == "ok"]
    if ok.empty:
        return (f"{label}: {'/'.join(sorted(set(side_jobs['state'])))} "
                f"({'; '.join(sorted(set(side_jobs['reason'])))})")
    if metric in M.BOUNCE_METRICS and (ok["bounce_trace"] == "absent").all():
        return f"{label}: no block_bio_bounce tracepoint (bounce code removed)"
    return f"{label}: kernel does not expose this metric"


def _clock_note(metric, ja, jb):
    clocks_a, clocks_b = set(ja["clocksource"].dropna()), set(jb["clocksource"].dropna())
    notes = []
    if clocks_a and clocks_b and clocks_a != clocks_b:
        notes.append(f"clocksources differ ({'/'.join(sorted(clocks_a))} vs "
                     f"{'/'.join(sorted(clocks_b))})")
    if M.kind(metric) == M.LATENCY and any("jiffies" in c for c in clocks_a | clocks_b):
        notes.append("latency quantised to the timer tick (jiffies clocksource)")
    return notes


def _logs(*arrays):
    """The log values of every array, or None when a value is <= 0."""
    if any((np.asarray(x) <= 0).any() for x in arrays):
        return None
    return [np.log(np.asarray(x, dtype=float)) for x in arrays]


def _spread(groups):
    """(pooled within-group sd, df, quantised) of a list of arrays."""
    groups = [g for g in groups if len(g)]
    df = sum(len(g) - 1 for g in groups)
    if df <= 0:
        return np.nan, 0, False
    ss = sum(float(((g - g.mean()) ** 2).sum()) for g in groups)
    allv = np.concatenate(groups)
    quantised = len(np.unique(np.round(allv, 12))) < QUANTISED * len(allv)
    return math.sqrt(ss / df), df, quantised


def _sides(a_vals, b_vals, **cols):
    """The verdict columns of a pair before its test: sizes and medians."""
    return dict(n_a=len(a_vals), n_b=len(b_vals),
                median_a=float(np.median(a_vals)) if len(a_vals) else np.nan,
                median_b=float(np.median(b_vals)) if len(b_vals) else np.nan,
                ratio=np.nan, ci_low=np.nan, ci_high=np.nan, mde_pct=np.nan,
                p_value=np.nan, **cols)


def mde_pct(sd, df, n_a, n_b, paired=False):
    """The MDE in % (bench/README.md); NaN when it cannot be given."""
    if not np.isfinite(sd) or sd <= 0 or df < 1:
        return np.nan
    se = sd * (math.sqrt(1 / n_a) if paired else math.sqrt(1 / n_a + 1 / n_b))
    return 100 * math.expm1(power_factor(df) * se)


def compare(metric, a_vals, b_vals, n_boot=N_PERM, seed=SEED, blocks_a=None,
            blocks_b=None, pooled=None):
    """Statistics of one pair: dict of the verdict columns (the verdict per
    row, p_value <= ALPHA; verdicts() adjusts it). blocks_a/blocks_b: the
    rep of each value (one value per rep of the same reps a side: pairing
    may be chosen); pooled: (sd, df, quantised) of the cell's log values
    for the MDE (default: these two sides)."""
    a_vals, b_vals = np.asarray(a_vals, dtype=float), np.asarray(b_vals, dtype=float)
    out = _sides(a_vals, b_vals, verdict=NO_DATA, note="", analysis="")
    n_a, n_b = out["n_a"], out["n_b"]
    if not n_a or not n_b:
        return out
    logs = _logs(a_vals, b_vals)
    if logs is None:
        # 0/0 = 1 (both zero: no change), x/0 = inf
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.float64(out["median_b"]) / out["median_a"]
        out["ratio"] = 1.0 if out["median_b"] == out["median_a"] == 0 else float(ratio)
    else:
        out["ratio"] = float(np.exp(logs[1].mean() - logs[0].mean()))
    xa, xb = logs if logs is not None else (a_vals, b_vals)
    blocked = False
    if blocks_a is not None and blocks_b is not None and n_a == n_b:
        ba, bb = list(blocks_a), list(blocks_b)
        if len(set(ba)) == n_a and set(ba) == set(bb):
            xb = xb[[bb.index(r) for r in ba]]     # B in A's rep order
            blocked = True
    paired = bool(blocked and choose_paired(xa[None], xb[None])[0])
    floor = min_p(n_a, n_b, paired, n_boot, seed)
    out["analysis"] = PAIRED if paired else UNPAIRED
    d = xb - xa if paired else None

    def pfun(c):
        return float((paired_p(d[None], c, n_boot, seed) if paired else
                      unpaired_p(xa[None], xb[None], c, n_boot, seed))[0])
    if floor > ALPHA:
        if n_a + n_b > 2:
            out["p_value"] = pfun(0.0)
        out["verdict"] = f"{TOO_FEW} (min p = {floor:.2g})"
        out["note"] = f"{n_a} against {n_b} repetitions: no relabelling reaches p <= {ALPHA:g}"
        return out
    est = float(d.mean()) if paired else float(xb.mean() - xa.mean())
    p = out["p_value"] = pfun(0.0)
    if logs is not None:
        scale = float(np.std(np.concatenate([xa - xa.mean(), xb - xb.mean()])))
        scale = max(scale, abs(est) * 1e-3, 1e-9) / math.sqrt(min(n_a, n_b))
        lo, hi = (_ci_bound(pfun, est, sign, scale) for sign in (-1, 1))
        out["ci_low"], out["ci_high"] = float(np.exp(lo)), float(np.exp(hi))
        if paired:
            sd, df, quant = _spread([d])
        else:
            sd, df, quant = pooled if pooled is not None else _spread([xa, xb])
        if not quant:
            out["mde_pct"] = mde_pct(sd, df, n_a, n_b, paired)
    else:
        out["note"] = "values of 0: tested on raw values, no CI for the ratio"
    out["verdict"] = word(metric, est > 0) if p <= ALPHA and est != 0 else NO_DIFF
    return out


def exact_compare(metric, a_vals, b_vals, bound):
    """compare()'s columns for a pair of deterministic cells: the ratio of
    medians, its interval ratio / (1 + bound) to ratio * (1 + bound) (bound
    in %), a change where that excludes 1."""
    out = _sides(a_vals, b_vals, analysis=f"{D.EXACT}: bound ±{bound:g}%")
    ratio = out["median_b"] / out["median_a"] if out["median_a"] else np.nan
    f = 1 + bound / 100
    out.update(ratio=ratio, ci_low=ratio / f, ci_high=ratio * f, mde_pct=bound,
               note=(f"exact clock: {len(a_vals)} and {len(b_vals)} reps spread "
                     f"{D.spread_pct(a_vals):.2g}% and {D.spread_pct(b_vals):.2g}%"))
    changed = np.isfinite(ratio) and (ratio / f > 1 or ratio * f < 1)
    out["verdict"] = word(metric, ratio > 1) if changed else NO_DIFF
    return out


def is_exact(df):
    """The rows decided by the determinism bound, not a test."""
    if "analysis" not in df:
        return pd.Series(False, index=df.index)
    return df["analysis"].astype(str).str.startswith(D.EXACT)


def split_label(label, half):
    """The side name of a split-half A/A row: "pre-fixed[odd]"."""
    return f"{label}[{half}]"


def is_split(df):
    """The split-half A/A rows of a verdict table."""
    return df["a"].astype(str).str.endswith(split_label("", ODD))


def _seed_note(seeds, sa, sb, exact):
    """The seeds ({boot: seed}) of both sides of an A/A row; on an exact
    clock two boots of one kernel and seed are one boot: said."""
    a, b = ({int(seeds[x]) for x in side["boot"] if pd.notna(seeds.get(x))} for side in (sa, sb))
    text = f"seeds {', '.join(map(str, sorted(a)))} against {', '.join(map(str, sorted(b)))}"
    if not a & b:
        return f"{text}: distinct"
    return f"{SAME_SEEDS} ({text})" if exact else text


def verdicts(run, n_boot=N_PERM, min_effect=None):
    """The verdict table of a run (the module docstring), adjusted
    (adjust()) and labelled (relevance(); min_effect: its overrides)."""
    jobs, bound, asked = run.jobs, run.bound_pct, run.question_jobs
    if jobs.empty:
        return pd.DataFrame(columns=VERDICT_COLUMNS + RELEVANCE_COLUMNS)
    tidy = run.tidy[~run.tidy["metric"].isin(M.TOTALS)]
    seeds = dict(zip(run.boots["boot"], run.boots["seed"]))
    key = ["disk", "job", "pressure"]
    cells = sorted(set(map(tuple, jobs[key].to_numpy())) | set(map(tuple, tidy[key].to_numpy())))
    # split by cell once: filtering per cell took most of the time
    job_cells, tidy_cells = (dict(tuple(t.groupby(key, sort=False))) for t in (jobs, tidy))
    rows = []
    for disk, job, pressure in cells:
        # a within-boot ratio "A/B" (tidy.py) answers for the jobs of A
        cjobs = job_cells.get((C.first_disk(disk), job, pressure), jobs.iloc[:0])
        labels = run.in_pair_order(set(cjobs["variant"]))
        cell = tidy_cells.get((disk, job, pressure), tidy.iloc[:0])
        cell_metrics = sorted(set(cell["metric"]), key=M.order)
        primary = {m: slot for slot, m in M.primary_metrics(job, cell_metrics).items()}
        # each metric's values by label, in (rep, boot) order
        by_label = {m: dict(tuple(g.sort_values(["rep", "boot"]).groupby("variant", sort=False)))
                    for m, g in cell.groupby("metric")}

        def side(v, parity=None):
            """A label's rows of a metric; parity: of its odd (1) or even (0) reps."""
            def pick(m):
                x = by_label[m].get(v, cell.iloc[:0])
                return x if parity is None else x[x["rep"] % 2 == parity]
            return pick

        # the MDE's spread: the labels' log values pooled (none where one is <= 0)
        pooled = {m: _spread(_logs(*[g[v]["value"] for v in labels if v in g]) or [])
                  for m, g in by_label.items()}
        exact = disk in run.exact_disks
        mbound = {m: D.metric_bound(m, bound, disk) for m in by_label}
        # the bound decides only where no label's reps spread beyond it:
        # what the seed moves one kernel's cell by it may move another's
        decides = {m: exact and job in run.performance_jobs and
                   all(len(g) < D.MIN_REPS or D.is_deterministic(g["value"], mbound[m])
                       for g in by_label[m].values())
                   for m in by_label}

        def pair(a, b, pick_a, pick_b, ja, jb, kind, control, bounce_why, metrics, halves=False):
            """The rows of one pair: pick_a/pick_b give a side's rows of a
            metric. halves: a label's split halves, where one rep a side
            is the question itself (what the seed moves), not too few."""
            for metric in metrics:
                sa, sb = pick_a(metric), pick_b(metric)
                va, vb = sa["value"], sb["value"]
                if (decides[metric] and
                        all(D.is_deterministic(v, mbound[metric]) or (halves and len(v) == 1)
                            for v in (va, vb)) and np.median(va) > 0):
                    res = exact_compare(metric, va.to_numpy(float), vb.to_numpy(float),
                                        mbound[metric])
                else:
                    res = compare(metric, va.to_numpy(), vb.to_numpy(), n_boot,
                                  cell_seed(metric, disk, job, pressure, a, b),
                                  sa["rep"].tolist(), sb["rep"].tolist(), pooled.get(metric))
                notes = [res["note"]] if res["note"] else []
                if res["verdict"] == NO_DATA:
                    notes = [_missing_reason(l, j, metric)
                             for l, v, j in ((a, va, ja), (b, vb, jb)) if v.empty]
                elif bounce_why:
                    # no bounce cost without proof that the path ran
                    res.update(ratio=np.nan, ci_low=np.nan, ci_high=np.nan, mde_pct=np.nan,
                               p_value=np.nan, verdict=NOT_EXERCISED)
                    notes = [bounce_why]
                elif kind == AA:
                    notes.insert(0, _seed_note(seeds, sa, sb, exact))
                if res["verdict"] != NO_DATA:
                    notes += _clock_note(metric, ja, jb)
                res["note"] = "; ".join(notes)
                rows.append(dict(metric=metric, unit=M.unit(metric), disk=disk, job=job,
                                 pressure=pressure, a=a, b=b, pair_kind=kind,
                                 primary=metric in primary, slot=primary.get(metric, ""),
                                 control=control, **res))

        candidate = ROLES.is_candidate(run, disk)
        for a, b in itertools.combinations(labels, 2):
            ja, jb = (cjobs[cjobs["variant"] == v] for v in (a, b))
            ka, kb = run.kernels.get(a), run.kernels.get(b)
            # the bounce variant's sides that did not prove the path ran
            whys = [f"{v}: {why}" for v, side_jobs in ((a, ja), (b, jb))
                    if candidate and run.roles.get(v) == ROLES.BOUNCE and
                    (why := bounce_check(side_jobs))]
            pair(a, b, side(a), side(b), ja, jb, AA if ka and ka == kb else "A/B",
                 ROLES.is_aa_pair(run, a, b, disk), whys[-1] if whys else None, cell_metrics)
        if not exact or job not in asked:
            continue
        for v in labels:
            if set(cell.loc[cell["variant"] == v, "rep"].dropna().astype(int) % 2) != {0, 1}:
                continue
            jv = cjobs[cjobs["variant"] == v]
            odd, even = side(v, 1), side(v, 0)
            # primary metrics only, and only where both halves have values
            pair(split_label(v, ODD), split_label(v, EVEN), odd, even, jv, jv, AA, True, None,
                 [m for m in cell_metrics if m in primary and len(odd(m)) and len(even(m))],
                 halves=True)
    return relevance(adjust(pd.DataFrame(rows, columns=VERDICT_COLUMNS)), min_effect)


def question(df):
    """Per row, the question its family belongs to: "memory" under a
    pressure level, else "cost"."""
    p = df["pressure"] if "pressure" in df else pd.Series("", index=df.index)
    under = p.notna() & ~p.astype(str).isin(["", L.NO_PRESSURE, "nan"])
    return np.where(under, "memory", "cost").astype(object)


def adjust(df):
    """p_adjusted within each question's primary and exploratory family
    and the control family; a significant verdict that does not survive
    it becomes NO_DIFF."""
    df = df.copy()
    df["p_adjusted"] = np.nan
    family = np.where(df["control"].astype(bool), "control",
                      question(df) + ":" + df["primary"].astype(str))
    for fam in set(family):
        # rows that cannot reach ALPHA are no tests (they cannot reject)
        sel = (family == fam) & df["p_value"].notna() & ~df["verdict"].map(is_too_few)
        df.loc[sel, "p_adjusted"] = bh_adjust(df.loc[sel, "p_value"].to_numpy(float))
    lost = df["verdict"].isin(SIGNIFICANT) & ~(df["p_adjusted"] <= ALPHA) & ~is_exact(df)
    df.loc[lost, "verdict"] = NO_DIFF
    expl = ~df["primary"].astype(bool) & df["verdict"].isin(SIGNIFICANT)
    df.loc[expl, "note"] = ["exploratory" + (f"; {n}" if n else "")
                            for n in df.loc[expl, "note"]]
    return df[VERDICT_COLUMNS]


# relevance: a label on whatever verdict, ratio and CI a row has
RELEVANT, NEGLIGIBLE = "relevant", "negligible"
NO_DIFFERENCE, TOO_FEW_REPS = "no difference", "too few repetitions"
# not significant, its CI within ±the smallest effect of interest
EQUIVALENT = "no relevant difference"
# a difference this row alone would call, that the adjustment does not let through
NOT_ADJUSTED = "not significant after adjustment (its own CI excludes 1)"
RELEVANCE_COLUMNS = ["relevance", "min_effect_pct"]


def is_decided(label):
    """Whether a relevance label decides its row: a change that matters,
    one that does not, or none that could."""
    return label in (RELEVANT, NEGLIGIBLE) or str(label).startswith(EQUIVALENT)


def effect_pct(ratio):
    """|B/A - 1| in % (inf when the ratio is unknown: never hidden)."""
    r = float(ratio) if ratio is not None else np.nan
    return 100 * abs(r - 1) if np.isfinite(r) else np.inf


def _relevance(row):
    """One row's relevance label (relevance())."""
    v, x = row["verdict"], row["min_effect_pct"]
    lo, hi = row.get("ci_low", np.nan), row.get("ci_high", np.nan)
    has_ci = np.isfinite(lo) and np.isfinite(hi)
    if is_significant(v):
        return RELEVANT if effect_pct(row["ratio"]) >= x else NEGLIGIBLE
    if v != NO_DIFF:
        return TOO_FEW_REPS if is_too_few(v) else ""
    if has_ci and 1 - x / 100 <= lo and hi <= 1 + x / 100:
        return f"{EQUIVALENT} (CI within ±{x:g}%)"
    if has_ci and (lo > 1 or hi < 1):
        return NOT_ADJUSTED
    # no difference, could detect ±the MDE, else ±the CI's reach
    d = row.get("mde_pct", np.nan)
    if not np.isfinite(d) and has_ci and lo > 0:
        d = 100 * max(abs(lo - 1), abs(hi - 1))
    if not np.isfinite(d):
        return NO_DIFFERENCE
    return f"{NO_DIFFERENCE}, could detect " + (f"±{d:.2g}%" if d >= 0.01 else "±<0.01%")


def relevance(df, min_effect=None):
    """df with RELEVANCE_COLUMNS: whether each row's verdict matters
    against its metric's smallest effect of interest (metrics.min_effect);
    "" without data or where the bounce path was not exercised."""
    df = df.copy()
    levels = df["pressure"] if "pressure" in df else [None] * len(df)
    df["min_effect_pct"] = [M.min_effect(m, min_effect, p) for m, p in zip(df["metric"], levels)]
    df["relevance"] = [_relevance(r) for r in df.to_dict("records")]
    return df


def is_relevant(label):
    return label == RELEVANT


def control_rows(df):
    """The primary control rows of a verdict table that have a test."""
    if df.empty:
        return df
    return df[df["control"].astype(bool) & df["primary"].astype(bool) &
              (df["p_adjusted"].notna() | is_exact(df))]


def controls(df):
    """(significant, tested) primary control rows of a verdict table."""
    c = control_rows(df)
    return int(c["verdict"].isin(SIGNIFICANT).sum()), len(c)


def ci_check(verdicts, target_pct):
    """(narrow, rows): whether every primary, non-control row that can be
    compared has a CI half-width (half its log-width, %) <= target_pct;
    rows by half-width, widest first (inf: no CI yet)."""
    if verdicts.empty:
        return False, verdicts.assign(half_width_pct=[])
    v = verdicts[verdicts["primary"].astype(bool) & ~verdicts["control"].astype(bool) &
                 ~verdicts["verdict"].isin([NO_DATA, NOT_EXERCISED])].copy()
    v = v[~v["note"].str.contains("values of 0", regex=False)]
    with np.errstate(divide="ignore", invalid="ignore"):
        half = np.expm1((np.log(v["ci_high"]) - np.log(v["ci_low"])) / 2) * 100
    v["half_width_pct"] = half.fillna(np.inf)
    v = v.sort_values("half_width_pct", ascending=False, kind="stable")
    return (len(v) > 0 and bool((v["half_width_pct"] <= target_pct).all())), v


def write_verdicts(df, path):
    df.to_csv(path, index=False)
