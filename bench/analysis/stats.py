# SPDX-License-Identifier: GPL-2.0
"""Verdicts: exact permutation tests on log values, with the ratio's
confidence interval inverted from the same test, Benjamini-Hochberg across
the primary rows, and a minimum detectable effect from pooled noise.

For every metric and cell (disk, job, pressure) and every pair of variant
labels present in the cell, B is compared with A (A comes first in
the run's pair order, Run.labels).

Estimate. On log values: ratio = exp(mean log B - mean log A), the ratio of
geometric means (with complete blocks, the geometric mean of the per-rep
ratios B/A). median_a and median_b are the plain medians.

Test. Two analyses, both exact permutation tests of "A and B are
exchangeable", two-sided, statistic the difference of mean logs:
- "unpaired": every relabelling of the n_a + n_b values (all
  C(n_a + n_b, n_b) of them when there are at most EXACT_MAX, else
  n_perm seeded random ones plus the observed one).
- "paired by rep": boots run in blocks (A B C per rep), so the per-rep log
  ratios d_i = log B_i - log A_i are tested by flipping their signs (all
  2^n, or n_perm random ones above EXACT_MAX). Chosen only when every
  value is in a complete block, the sign-flip test can reach ALPHA at all
  (n >= 6), and pairing is expected to detect a smaller change: the
  block-level spread var(log A_i + log B_i) and mean(d_i^2), which a
  swap of A and B inside a block does not change (so the choice does not
  bias the paired test), give the standard errors of both analyses;
  pairing wins when (t_0.975 + t_0.80)(n - 1 df) * SE_paired is below
  (t_0.975 + t_0.80)(2n - 2 df) * SE_unpaired. The analysis column says
  which was used.
p_value is the fraction of relabellings whose statistic is at least as
far from 0 as the observed one. When no relabelling can reach ALPHA
(3 against 3: min p = 0.1; 1 against any: 1) there is no verdict:
"too few repetitions for a verdict (min p = ...)".

Interval. The 95 % CI of the ratio is the set of shifts c for which the
same test, run on log B - log c against log A, gives p > ALPHA (found by
bisection; with n_a = n_b it is finite exactly when min p <= ALPHA). So the
CI excludes 1 exactly when p_value <= ALPHA.

Multiplicity. Families follow the report's questions: what a bounce
costs an I/O (rows without extra pressure) and what it costs when memory
is short (rows under a pressure level). In each, the primary rows
(metrics.PRIMARY: one throughput, one latency tail, CPU per GiB and the
lowmem floor of each job; the pressure jobs' own) form one family and the
other rows, exploratory, a second; the control rows, primary or not, one
more, so that adding controls never changes a kernel row's adjustment.
One question's rows do not dilute another's: the cost question's
usb-pio rows (4 reps, smallest p 0.029) once held back every pressure row
at 5 reps (smallest p 0.0079; run 20261206-080728). p_adjusted
is the Benjamini-Hochberg adjusted p within the row's family; a verdict
(faster/slower, cheaper/costlier, higher/lower) needs p_adjusted <= ALPHA.
The per-row CI is not adjusted: a row whose CI excludes 1 may still be "no
significant difference" after the adjustment.

Controls. A pair that cannot differ but by noise (roles.is_aa_pair: the same
kernel under two labels, or baseline against bounce variant on a control
disk) is a control row. Significant control rows are false positives.
An A/A row (pair_kind "A/A") notes the seeds of its sides' boots
(tidy._boot_seed): on an exact clock two boots of one kernel with one
seed are one boot, so such a row says SAME_SEEDS and proves nothing.
Split halves: on a disk whose numbers repeat (see Exact cells), for
every label of a performance job (no probed twin) with odd and even reps,
its odd reps against its even reps (a "LABEL[odd]", b "LABEL[even]",
pair_kind "A/A", control), primary metrics only, by the same machinery
as a pair of labels: an A/A of distinct seeds that needs no extra boot.
On an exact clock the bound decides them from 1 rep a half (what the
seed moves a cell by); where a label of the cell spreads beyond it, the
test, which says "too few repetitions" below 4 reps a half. So on an
exact clock they are the determinism check itself: they cannot differ
where a pair of kernels was decided on the bound, and they fire where
the test finds a difference.

MDE (mde_pct). The change these reps would detect with 80 % power at the
5 % level (per row, before adjustment): exp((t_0.975 + t_0.80) * s *
sqrt(1/n_a + 1/n_b)) - 1 with s the within-variant standard deviation of
the log values pooled over every variant of the cell (t with the pooled
degrees of freedom); for a paired row s * sqrt(1/n) of the per-rep log
ratios, n - 1 degrees of freedom. n/a (empty) when the values are tied or
quantised (no spread, or fewer distinct values than half the values), when
a value is 0 (no log), or when the test cannot reach ALPHA at this n.

Values of 0 (counters that did not move): no logs, so the test runs on the
raw values (the difference of means) and there is no CI for the ratio.

Calibration (tests/analysis/test_calibration.py) measures, on synthetic
lognormal data with a fixed seed, the per-row false-positive rate, the
run-level false discovery rate and the power for a 10 % change at 5 % CV at
DEFAULT_REPS repetitions a side, and prints the table.

Exact cells. On a disk whose numbers repeat (run.exact_disks: an exact
clock, I/O the guest completes; not usb-pio or virtio, whose I/O QEMU
completes on host time), a performance job's metric whose values spread
within the determinism bound on both sides, and on every other label of
the cell (what the seed moves one kernel's cell by it may move
another's), is not tested (determinism.py: instruction time makes them
repeat to the digit): its ratio of medians is known to the bound, the
interval is ratio / (1 + bound) to ratio * (1 + bound), and the verdict says a change
when that excludes 1 (analysis "exact: bound ±X%", no p-value, outside the
Benjamini-Hochberg families). Cells that spread more are tested as above.

A bounce cost (a comparison on a bounce-candidate disk where one side runs
the bounce variant) is only reported where that side's every job counted
bounced bios (> 0); otherwise the row says "bounce path not exercised".
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

VERDICT_COLUMNS = ["metric", "unit", "disk", "job", "pressure", "a", "b",
                   "pair_kind", "n_a", "n_b", "median_a", "median_b", "ratio",
                   "ci_low", "ci_high", "mde_pct", "verdict", "note",
                   "p_value", "p_adjusted", "primary", "slot", "analysis",
                   "control"]

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


# --- t quantiles (no scipy on Debian's python3 here) --------------------------

def t_abs_cdf(t, df):
    """P(|T| <= t) for Student's t with integer df >= 1 (the closed forms
    for odd and even df)."""
    if t <= 0:
        return 0.0
    th = math.atan(t / math.sqrt(df))
    c2, sn = math.cos(th) ** 2, math.sin(th)
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for k in range(1, df // 2):
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return sn * total
    if df == 1:
        return 2 * th / math.pi
    term, total = 1.0, 1.0
    for k in range(1, (df - 1) // 2):
        term *= c2 * (2 * k) / (2 * k + 1)
        total += term
    return 2 / math.pi * (th + sn * math.cos(th) * total)


@lru_cache(maxsize=None)
def t_quantile(q, df):
    """The q quantile (q > 0.5) of Student's t with df degrees of freedom."""
    target = 2 * q - 1
    lo, hi = 0.0, 1.0
    while t_abs_cdf(hi, df) < target:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if t_abs_cdf(mid, df) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def power_factor(df):
    """t_(1-ALPHA/2) + t_POWER at df: standard errors to the MDE."""
    return t_quantile(1 - ALPHA / 2, df) + t_quantile(POWER, df)


# --- the permutation machinery (vectorised over trials) ------------------------

@lru_cache(maxsize=64)
def _subsets(n_a, n_b, n_perm, seed):
    """Indicator rows of the relabellings: which of the n_a + n_b pooled
    values (A first) are called B. The first row is the observed one."""
    n = n_a + n_b
    if math.comb(n, n_b) <= EXACT_MAX:
        rows = np.zeros((math.comb(n, n_b), n))
        for i, c in enumerate(itertools.combinations(range(n), n_b)):
            rows[i, list(c)] = 1
        obs = np.zeros(n)
        obs[n_a:] = 1
        return np.vstack([obs, rows[~(rows == obs).all(1)]]), True
    rng = np.random.default_rng(seed)
    keys = rng.random((n_perm, n)).argsort(1) < n_b
    obs = np.zeros((1, n))
    obs[0, n_a:] = 1
    return np.vstack([obs, keys.astype(float)]), False


@lru_cache(maxsize=64)
def _signs(n, n_perm, seed):
    """Sign-flip rows (the first is the observed, all +1)."""
    if 2 ** n <= EXACT_MAX:
        s = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        return s, True
    rng = np.random.default_rng(seed)
    s = rng.choice((1.0, -1.0), size=(n_perm, n))
    return np.vstack([np.ones((1, n)), s]), False


def _tol(*arrays):
    scale = max(float(np.nanmax(np.abs(a))) if np.size(a) else 0.0 for a in arrays)
    return 1e-9 * max(scale, 1e-300)


def unpaired_p(xa, xb, shift=0.0, n_perm=N_PERM, seed=SEED):
    """Two-sided permutation p of mean(xb - shift) - mean(xa), for each row
    of xa (T, n_a) and xb (T, n_b); shift is a scalar or (T,)."""
    xa, xb = np.atleast_2d(xa), np.atleast_2d(xb)
    n_a, n_b = xa.shape[1], xb.shape[1]
    sub, _ = _subsets(n_a, n_b, n_perm, seed)
    shift = np.broadcast_to(np.asarray(shift, float), (xa.shape[0],))
    z = np.concatenate([xa, xb - shift[:, None]], axis=1)
    out = np.empty(len(z))
    step = max(1, CHUNK // len(sub))
    for i in range(0, len(z), step):
        zc = z[i:i + step]
        tot = zc.sum(1, keepdims=True)
        sb = zc @ sub.T
        stat = np.abs(sb / n_b - (tot - sb) / n_a)
        out[i:i + step] = (stat >= stat[:, :1] - _tol(zc)).mean(1)
    return out


def paired_p(d, shift=0.0, n_perm=N_PERM, seed=SEED):
    """Two-sided sign-flip p of mean(d - shift), for each row of d (T, n)."""
    d = np.atleast_2d(d)
    sg, _ = _signs(d.shape[1], n_perm, seed)
    shift = np.broadcast_to(np.asarray(shift, float), (d.shape[0],))
    x = d - shift[:, None]
    out = np.empty(len(x))
    step = max(1, CHUNK // len(sg))
    for i in range(0, len(x), step):
        xc = x[i:i + step]
        stat = np.abs(xc @ sg.T)
        out[i:i + step] = (stat >= stat[:, :1] - _tol(xc) * d.shape[1]).mean(1)
    return out


def min_p(n_a, n_b, paired=False, n_perm=N_PERM, seed=SEED):
    """The smallest p the test can give at these sizes."""
    if min(n_a, n_b) < 1:
        return 1.0
    if paired:
        return float(paired_p(np.ones((1, n_a)), 0.0, n_perm, seed)[0])
    return float(unpaired_p(np.zeros((1, n_a)), np.ones((1, n_b)), 0.0, n_perm, seed)[0])


def choose_paired(xa, xb):
    """For each row of complete blocks xa, xb (T, n): True where pairing is
    expected to detect a smaller change (see the module docstring)."""
    xa, xb = np.atleast_2d(xa), np.atleast_2d(xb)
    n = xa.shape[1]
    if n < PAIRED_MIN:
        return np.zeros(xa.shape[0], bool)
    d, s = xb - xa, xb + xa
    md2 = (d ** 2).mean(1)
    var_s = s.var(1, ddof=1)
    se_p = np.sqrt(md2 / n)
    se_u = np.sqrt((var_s + md2) / (2 * n))
    return ((var_s >= BLOCK_RATIO * md2) &
            (power_factor(n - 1) * se_p < power_factor(2 * n - 2) * se_u))


def test_pvalues(xa, xb, blocked=True, n_perm=N_PERM, seed=SEED):
    """(p, paired) for each row of xa, xb (T, n_a / n_b, on the log scale):
    the analysis verdicts() runs. blocked: column i of xa and xb are the
    same rep (then pairing may be chosen)."""
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
    m = int(ok.sum())
    if not m:
        return out
    pv = p[ok]
    order = np.argsort(pv, kind="stable")
    adj = pv[order] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(adj[::-1])[::-1]
    res = np.empty(m)
    res[order] = np.minimum(adj, 1.0)
    out[ok] = res
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


def _invert(pfun, est, scale):
    """The interval of shifts c around est with pfun(c) > ALPHA (bisection
    on each side); an infinite bound where no shift reaches ALPHA."""
    bounds = []
    for sign in (-1, 1):
        step = max(scale, 1e-12)
        inner, outer = est, None
        for _ in range(200):
            c = est + sign * step
            if pfun(c) <= ALPHA:
                outer = c
                break
            inner, step = c, step * 2
            if step > 1e6 * max(scale, 1e-12) + 100:
                break
        if outer is None:
            bounds.append(sign * np.inf)
            continue
        for _ in range(60):
            mid = (inner + outer) / 2
            if pfun(mid) <= ALPHA:
                outer = mid
            else:
                inner = mid
        bounds.append((inner + outer) / 2)
    return bounds[0], bounds[1]


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


def median_ci(x, n_boot=N_BOOT, seed=SEED, level=LEVEL):
    """Median of x and its percentile bootstrap CI (for bar whiskers)."""
    x = np.asarray(x, dtype=float)
    if len(x) < MIN_REPS:
        return float(np.median(x)), np.nan, np.nan
    m = _boot_medians(np.random.default_rng(seed), x, n_boot)
    tail = (1 - level) / 2 * 100
    return (float(np.median(x)), float(np.percentile(m, tail)),
            float(np.percentile(m, 100 - tail)))


def word(metric, up):
    """The verdict word for a significant change of B against A."""
    k = M.kind(metric)
    if k == M.THROUGHPUT:
        return "faster" if up else "slower"
    if k == M.LATENCY:
        return "slower" if up else "faster"
    if k == M.COST:
        return "costlier" if up else "cheaper"
    return "higher" if up else "lower"



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
    """Whether jobs prove the bounce path ran: there are measured (ok)
    jobs and every one counted bounced bios (> 0). The one rule of "bounce
    path exercised": the verdicts (bounce_check), the report's first
    lines (report.bounce_status) and bench/compare's console summary
    (bounce_summary.py) all ask it."""
    ok = cell_jobs[cell_jobs["state"] == "ok"]
    return not ok.empty and bounce_check(ok) is None


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


def mde_pct(sd, df, n_a, n_b, paired=False):
    """The MDE in % (see the module docstring); NaN when it cannot be
    given."""
    if not np.isfinite(sd) or sd <= 0 or df < 1:
        return np.nan
    se = sd * (math.sqrt(1 / n_a) if paired else math.sqrt(1 / n_a + 1 / n_b))
    return 100 * math.expm1(power_factor(df) * se)


def compare(metric, a_vals, b_vals, n_boot=N_PERM, seed=SEED, blocks_a=None,
            blocks_b=None, pooled=None):
    """Statistics of one pair: dict of the verdict columns (the verdict is
    per row, p_value <= ALPHA; verdicts() adjusts it).

    blocks_a/blocks_b: the rep of each value; when both sides hold one
    value per rep of the same reps, pairing may be chosen. pooled: (sd,
    df, quantised) of the cell's log values for the MDE (default: these
    two sides)."""
    a_vals = np.asarray(a_vals, dtype=float)
    b_vals = np.asarray(b_vals, dtype=float)
    n_a, n_b = len(a_vals), len(b_vals)
    out = dict(n_a=n_a, n_b=n_b,
               median_a=float(np.median(a_vals)) if n_a else np.nan,
               median_b=float(np.median(b_vals)) if n_b else np.nan,
               ratio=np.nan, ci_low=np.nan, ci_high=np.nan, mde_pct=np.nan,
               verdict=NO_DATA, note="", p_value=np.nan, analysis="")
    if not n_a or not n_b:
        return out
    logs = _logs(a_vals, b_vals)
    if logs is None:
        out["ratio"] = float(_ratio(out["median_b"], out["median_a"]))
    else:
        out["ratio"] = float(np.exp(logs[1].mean() - logs[0].mean()))
    blocked = False
    if blocks_a is not None and blocks_b is not None and n_a == n_b:
        ba, bb = list(blocks_a), list(blocks_b)
        if len(set(ba)) == n_a and set(ba) == set(bb):
            order_b = [bb.index(r) for r in ba]
            b_vals = b_vals[order_b]
            if logs is not None:
                logs[1] = logs[1][order_b]
            blocked = True
    xa, xb = logs if logs is not None else (a_vals, b_vals)
    paired = bool(blocked and choose_paired(xa[None], xb[None])[0])
    floor = min_p(n_a, n_b, paired, n_boot, seed)
    out["analysis"] = PAIRED if paired else UNPAIRED
    if floor > ALPHA:
        if n_a > 0 and n_b > 0 and n_a + n_b > 2:
            pp = (paired_p((xb - xa)[None], 0.0, n_boot, seed) if paired else
                  unpaired_p(xa[None], xb[None], 0.0, n_boot, seed))
            out["p_value"] = float(pp[0])
        out["verdict"] = f"{TOO_FEW} (min p = {floor:.2g})"
        out["note"] = (f"{n_a} against {n_b} repetitions: no relabelling reaches "
                       f"p <= {ALPHA:g}")
        return out
    if paired:
        d = xb - xa
        def pfun(c):
            return float(paired_p(d[None], c, n_boot, seed)[0])
        est = float(d.mean())
    else:
        def pfun(c):
            return float(unpaired_p(xa[None], xb[None], c, n_boot, seed)[0])
        est = float(xb.mean() - xa.mean())
    p = pfun(0.0)
    out["p_value"] = p
    if logs is not None:
        scale = float(np.std(np.concatenate([xa - xa.mean(), xb - xb.mean()])))
        scale = max(scale, abs(est) * 1e-3, 1e-9) / math.sqrt(min(n_a, n_b))
        lo, hi = _invert(pfun, est, scale)
        out["ci_low"], out["ci_high"] = float(np.exp(lo)), float(np.exp(hi))
        if paired:
            sd = float(np.std(xb - xa, ddof=1))
            q = len(np.unique(np.round(xb - xa, 12))) < QUANTISED * n_a
            sd, df, quant = sd, n_a - 1, q
        else:
            sd, df, quant = pooled if pooled is not None else _spread([xa, xb])
        if not quant:
            out["mde_pct"] = mde_pct(sd, df, n_a, n_b, paired)
    else:
        out["note"] = "values of 0: tested on raw values, no CI for the ratio"
    if p <= ALPHA and est != 0:
        out["verdict"] = word(metric, est > 0)
    else:
        out["verdict"] = NO_DIFF
    return out


def exact_compare(metric, a_vals, b_vals, bound):
    """compare()'s columns for a pair of deterministic cells (see the
    module docstring)."""
    r = D.compare(a_vals, b_vals, bound)
    up = r["ratio"] > 1
    return dict(n_a=len(a_vals), n_b=len(b_vals),
                median_a=float(np.median(a_vals)), median_b=float(np.median(b_vals)),
                ratio=r["ratio"], ci_low=r["ci_low"], ci_high=r["ci_high"],
                mde_pct=r["mde_pct"], p_value=np.nan, analysis=r["analysis"],
                verdict=word(metric, up) if r["changed"] else NO_DIFF,
                note=(f"exact clock: {len(a_vals)} and {len(b_vals)} reps spread "
                      f"{D.spread_pct(a_vals):.2g}% and {D.spread_pct(b_vals):.2g}%"))


def is_exact(df):
    """The rows decided by the determinism bound, not a test."""
    if "analysis" not in df:
        return pd.Series(False, index=df.index)
    return df["analysis"].astype(str).str.startswith(D.EXACT)


def split_label(label, half):
    """The side name of a split-half A/A row: "pre-fixed[odd]"."""
    return f"{label}[{half}]"


def is_split(df):
    """The split-half A/A rows of a verdict table (see the module docstring)."""
    return df["a"].astype(str).str.endswith(split_label("", ODD))


def _seed_note(seeds, sa, sb, exact):
    """The seeds ({boot: seed}) of both sides of an A/A row; on an exact
    clock two boots of one kernel with one seed are one boot, so a shared
    seed says so."""
    a, b = ({int(seeds[x]) for x in side["boot"] if pd.notna(seeds.get(x))} for side in (sa, sb))
    text = f"seeds {', '.join(map(str, sorted(a)))} against {', '.join(map(str, sorted(b)))}"
    if not a & b:
        return f"{text}: distinct"
    return f"{SAME_SEEDS} ({text})" if exact else text


def verdicts(run, n_boot=N_PERM, min_effect=None):
    """One row per metric, cell and pair of variant labels, and per split
    half of a label on an exact clock (see the module docstring), with
    Benjamini-Hochberg adjusted p-values (adjust()), the verdicts they
    allow and their relevance (min_effect: overrides of the smallest
    effect of interest, see relevance())."""
    rows = []
    kernels = run.kernels
    jobs = run.jobs
    if jobs.empty:
        return pd.DataFrame(columns=VERDICT_COLUMNS + RELEVANCE_COLUMNS)
    tidy = run.tidy[~run.tidy["metric"].isin(M.TOTALS)]
    exact_disks, bound = run.exact_disks, run.bound_pct
    perf_jobs = run.performance_jobs
    seeds = dict(zip(run.boots["boot"], run.boots["seed"]))
    cells = sorted(set(map(tuple, jobs[["disk", "job", "pressure"]].to_numpy())) |
                   set(map(tuple, tidy[["disk", "job", "pressure"]].to_numpy())))
    # each table split by cell once (filtering it per cell took most of
    # the analysis' time)
    key = ["disk", "job", "pressure"]
    job_cells = {k: g for k, g in jobs.groupby(key, sort=False)}
    tidy_cells = {k: g for k, g in tidy.groupby(key, sort=False)}
    for disk, job, pressure in cells:
        # a within-boot ratio "A/B" (tidy.py) answers for the jobs of A
        jdisk = str(disk).split("/")[0]
        cjobs = job_cells.get((jdisk, job, pressure), jobs.iloc[:0])
        labels = run.in_pair_order(set(cjobs["variant"]))
        cell = tidy_cells.get((disk, job, pressure), tidy.iloc[:0])
        cell_metrics = sorted(set(cell["metric"]), key=M.order)
        primary = {m: slot for slot, m in M.primary_metrics(job, cell_metrics).items()}
        # in rep order once: a side's values are picked from it in order
        # ((rep, boot) is one value of a label)
        by_metric = {m: g.sort_values(["rep", "boot"]) for m, g in cell.groupby("metric")}
        # and each metric's values by label
        by_label = {m: dict(tuple(g.groupby("variant", sort=False))) for m, g in by_metric.items()}
        empty = cell.iloc[:0]
        pooled = {}
        for metric in by_metric:
            groups = [by_label[metric].get(v, empty)["value"].to_numpy(float) for v in labels]
            logs = _logs(*[x for x in groups if len(x)])
            pooled[metric] = _spread(logs) if logs else (np.nan, 0, False)
        exact = disk in exact_disks
        # the bound decides a cell's pairs only where no label's reps spread
        # beyond it: what the seed moves one kernel's cell by it may move
        # another's (run 20261206-055026: pre's 1 MiB reads 1.5 % apart
        # between two seeds, pre-fixed's 0.16 %)
        repeats = {m: not any(len(g) >= D.MIN_REPS and
                              not D.is_deterministic(g["value"], D.metric_bound(m, bound, disk))
                              for g in by_label[m].values())
                   for m in by_label} if exact else {}

        def pair(a, b, pick_a, pick_b, ja, jb, kind, control, bounce_why, metrics,
                 halves=False):
            """The rows of one pair: pick_a/pick_b give a side's rows of
            a metric, in rep order. halves: a label's split halves, where on an
            exact clock one rep a side is the control itself (does the
            seed move the cell beyond the bound?), not a sample too small."""
            def exact_side(v, mbound):
                return D.is_deterministic(v, mbound) or (halves and len(v) == 1)

            for metric in metrics:
                sa, sb = pick_a(metric), pick_b(metric)
                va, vb = sa["value"], sb["value"]
                seed = cell_seed(metric, disk, job, pressure, a, b)
                mbound = D.metric_bound(metric, bound, disk)
                if (exact and job in perf_jobs and repeats[metric] and exact_side(va, mbound) and
                        exact_side(vb, mbound) and np.median(va) > 0):
                    res = exact_compare(metric, va.to_numpy(float),
                                        vb.to_numpy(float), mbound)
                else:
                    res = compare(metric, va.to_numpy(), vb.to_numpy(), n_boot, seed,
                                  sa["rep"].tolist(), sb["rep"].tolist(),
                                  pooled.get(metric))
                notes = [res["note"]] if res["note"] else []
                if res["verdict"] == NO_DATA:
                    notes = [_missing_reason(l, j, metric)
                             for l, v, j in ((a, va, ja), (b, vb, jb)) if v.empty]
                elif bounce_why:
                    # no bounce cost without proof that the path ran
                    res.update(ratio=np.nan, ci_low=np.nan, ci_high=np.nan,
                               mde_pct=np.nan, p_value=np.nan,
                               verdict=NOT_EXERCISED)
                    notes = [bounce_why]
                elif kind == AA:
                    notes.insert(0, _seed_note(seeds, sa, sb, exact))
                if res["verdict"] != NO_DATA:
                    notes += _clock_note(metric, ja, jb)
                res["note"] = "; ".join(notes)
                rows.append(dict(metric=metric, unit=M.unit(metric), disk=disk,
                                 job=job, pressure=pressure, a=a, b=b,
                                 pair_kind=kind, primary=metric in primary,
                                 slot=primary.get(metric, ""), control=control,
                                 **res))

        def label_of(v):
            return lambda m: by_label[m].get(v, empty)

        for i, a in enumerate(labels):
            for b in labels[i + 1:]:
                ja, jb = cjobs[cjobs["variant"] == a], cjobs[cjobs["variant"] == b]
                ka, kb = kernels.get(a), kernels.get(b)
                bounce_why = None
                if ROLES.is_candidate(run, disk):
                    for label, side in ((a, ja), (b, jb)):
                        if run.roles.get(label) == ROLES.BOUNCE:
                            why = bounce_check(side)
                            if why:
                                bounce_why = f"{label}: {why}"
                pair(a, b, label_of(a), label_of(b), ja, jb,
                     AA if ka and ka == kb else "A/B", ROLES.is_aa_pair(run, a, b, disk),
                     bounce_why, cell_metrics)
        if not exact or job not in perf_jobs or C.is_probed(job):
            continue
        for v in labels:
            reps = set(cell.loc[cell["variant"] == v, "rep"].dropna().astype(int))
            if {r % 2 for r in reps} != {0, 1}:
                continue
            jv = cjobs[cjobs["variant"] == v]
            def half_of(m, p, v=v):
                x = by_label[m].get(v, empty)
                return x[x["rep"] % 2 == p]
            half = {h: (lambda m, p=p: half_of(m, p)) for h, p in ((ODD, 1), (EVEN, 0))}
            # primary metrics only, and only where both halves have values
            pair(split_label(v, ODD), split_label(v, EVEN), half[ODD], half[EVEN], jv, jv,
                 AA, True, None, [m for m in cell_metrics if m in primary and
                                  all(len(f(m)) for f in half.values())],
                 halves=True)
    df = pd.DataFrame(rows, columns=VERDICT_COLUMNS + ["_up"])
    return relevance(adjust(df), min_effect)


def question(df):
    """Per row, the question its family belongs to: "memory" under a
    pressure level, else "cost"."""
    p = df["pressure"] if "pressure" in df else pd.Series("", index=df.index)
    under = p.notna() & ~p.astype(str).isin(["", L.NO_PRESSURE, "nan"])
    return np.where(under, "memory", "cost").astype(object)


def adjust(df):
    """p_adjusted within each question's primary and exploratory family
    and the control family, and the verdicts: a per-row significant
    verdict that does not survive the adjustment becomes "no significant
    difference"."""
    df = df.drop(columns=["_up"], errors="ignore").copy()
    df["p_adjusted"] = np.nan
    family = np.where(df["control"].astype(bool), "control",
                      question(df) + ":" + df["primary"].astype(str))
    for fam in set(family):
        # rows that cannot reach ALPHA are no tests (they cannot reject)
        sel = ((family == fam) & df["p_value"].notna() &
               ~df["verdict"].map(is_too_few))
        df.loc[sel, "p_adjusted"] = bh_adjust(df.loc[sel, "p_value"].to_numpy(float))
    lost = df["verdict"].isin(SIGNIFICANT) & ~(df["p_adjusted"] <= ALPHA) & ~is_exact(df)
    df.loc[lost, "verdict"] = NO_DIFF
    expl = ~df["primary"].astype(bool) & df["verdict"].isin(SIGNIFICANT)
    df.loc[expl, "note"] = ["exploratory" + (f"; {n}" if n else "")
                            for n in df.loc[expl, "note"]]
    return df[VERDICT_COLUMNS]


# --- relevance: a label on whatever verdict, ratio and CI a row has ---------

RELEVANT, NEGLIGIBLE = "relevant", "negligible"
NO_DIFFERENCE, TOO_FEW_REPS = "no difference", "too few repetitions"
# No significant difference and a CI within ±the smallest effect of
# interest: whatever the change is, it is smaller than one that matters.
EQUIVALENT = "no relevant difference"
# A row whose own CI excludes 1 but whose adjusted p is above ALPHA: a
# difference this row alone would call, that the run's number of rows does
# not let through. Neither "no difference" nor "below the noise".
NOT_ADJUSTED = "not significant after adjustment (its own CI excludes 1)"
RELEVANCE_COLUMNS = ["relevance", "min_effect_pct"]


def ci_excludes_1(row):
    lo, hi = row.get("ci_low", np.nan), row.get("ci_high", np.nan)
    return bool(np.isfinite(lo) and np.isfinite(hi) and (lo > 1 or hi < 1))


def _no_difference(row):
    """"no difference, could detect ±X%": X the MDE, else the CI's reach."""
    x = row.get("mde_pct", np.nan)
    if not np.isfinite(x):
        lo, hi = row.get("ci_low", np.nan), row.get("ci_high", np.nan)
        if np.isfinite(lo) and np.isfinite(hi) and lo > 0:
            x = 100 * max(abs(lo - 1), abs(hi - 1))
    if not np.isfinite(x):
        return NO_DIFFERENCE
    return f"{NO_DIFFERENCE}, could detect " + (f"±{x:.2g}%" if x >= 0.01 else "±<0.01%")


def _equivalent(row):
    """EQUIVALENT "(CI within ±X%)" where the row's CI lies within ±its
    smallest effect of interest X, else None."""
    lo, hi, x = row.get("ci_low", np.nan), row.get("ci_high", np.nan), row["min_effect_pct"]
    if np.isfinite(lo) and np.isfinite(hi) and 1 - x / 100 <= lo and hi <= 1 + x / 100:
        return f"{EQUIVALENT} (CI within ±{x:g}%)"
    return None


def is_decided(label):
    """Whether a relevance label decides its row: a change that matters,
    one that does not, or none that could."""
    return label in (RELEVANT, NEGLIGIBLE) or str(label).startswith(EQUIVALENT)


def effect_pct(ratio):
    """|B/A - 1| in %: the size compared with the smallest effect of
    interest (inf when the ratio is unknown, so it is never hidden)."""
    r = float(ratio) if ratio is not None else np.nan
    return 100 * abs(r - 1) if np.isfinite(r) else np.inf


def relevance(df, min_effect=None):
    """df with RELEVANCE_COLUMNS: "relevant" (significant and at least the
    metric's smallest effect of interest, metrics.min_effect), "negligible"
    (significant, below it), "no relevant difference (CI within ±X%)" (not
    significant, its CI within ±that effect: an equivalence), "no
    difference, could detect ±X%", "too few repetitions", or "" (no data,
    bounce path not exercised). Applied after adjust(), to whatever
    verdict a row has: the statistics stay as they are, this only says
    whether a verdict matters."""
    df = df.copy()
    levels = df["pressure"] if "pressure" in df else [None] * len(df)
    df["min_effect_pct"] = [M.min_effect(m, min_effect, p) for m, p in zip(df["metric"], levels)]
    out = []
    for r in df.to_dict("records"):
        v = r["verdict"]
        if is_significant(v):
            out.append(RELEVANT if effect_pct(r["ratio"]) >= r["min_effect_pct"] else NEGLIGIBLE)
        elif v == NO_DIFF and _equivalent(r):
            out.append(_equivalent(r))
        elif v == NO_DIFF and ci_excludes_1(r):
            out.append(NOT_ADJUSTED)
        elif v == NO_DIFF:
            out.append(_no_difference(r))
        elif is_too_few(v):
            out.append(TOO_FEW_REPS)
        else:
            out.append("")
    df["relevance"] = out
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
    """(narrow: bool, rows): whether every primary, non-control row that
    can be compared has a 95 % CI half-width <= target_pct % (half the
    log-width of the CI, as a percentage); rows are the primary rows by
    half-width, widest first (inf: no CI yet, too few repetitions)."""
    if verdicts.empty:
        return False, verdicts.assign(half_width_pct=[])
    v = verdicts[verdicts["primary"].astype(bool) & ~verdicts["control"].astype(bool) &
                 ~verdicts["verdict"].isin([NO_DATA, NOT_EXERCISED])].copy()
    zeros = v["note"].str.contains("values of 0", regex=False)
    v = v[~zeros]
    with np.errstate(divide="ignore", invalid="ignore"):
        half = np.expm1((np.log(v["ci_high"]) - np.log(v["ci_low"])) / 2) * 100
    v["half_width_pct"] = half.fillna(np.inf)
    v = v.sort_values("half_width_pct", ascending=False, kind="stable")
    return (len(v) > 0 and bool((v["half_width_pct"] <= target_pct).all())), v


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
