# SPDX-License-Identifier: GPL-2.0
"""changes.csv: every run against the previous run (by date) of its cell.
Two runs of the same seeds on one exact clock, in a cell without pressure
whose metric times the I/O, are compared seed by seed (each ratio a
count); else two such cells within the determinism bound to the bound;
else with stats.compare, Benjamini-Hochberg across the whole history.
check: a headline pair of the newest run moved when it changed by its
smallest effect of interest, either way (explain.py says where).
"""
import os

import numpy as np
import pandas as pd

from analysis import determinism, explain, md, metrics, stats
from tracker import table

COLUMNS = ["metric", "unit", "disk", "job", "pressure", "variant", "run_a", "run_b",
           "started_a", "started_b", "version_a", "version_b", "n_a", "n_b", "median_a",
           "median_b", "ratio", "ci_low", "ci_high", "verdict", "significant", "note",
           "p_value", "p_adjusted", "primary", "analysis", "label_a", "label_b"]
SETUP = ["accel", "icount", "memhog_mb"]      # a like-for-like comparison needs them equal
# a pair's columns of each side (suffix _a, _b): the history's column
SIDE = {"run": "run_id", "started": "started", "version": "kernel_source_version", "label": "label"}


def _differ(a, b, note):
    """The pair's note, then what differs between its runs."""
    yield from [note] if note else []
    for k, what in (("kernel_source_version", "kernel source"), ("git_revision", "git")):
        yield from [f"{what} {a[k]} -> {b[k]}"] if a[k] != b[k] else []
    diffs = [f"{k} {a[k] or '-'} -> {b[k] or '-'}" for k in SETUP if a[k] != b[k]]
    yield from [f"setup differs ({', '.join(diffs)})"] if diffs else []


def _one_exact_clock(a, b, exact):
    """Rows a and b of a metric timing the I/O, no pressure, one -icount clock."""
    return bool(exact and a["icount"] and a["icount"] == b["icount"] and
                str(a["pressure"]) == metrics.NO_PRESSURE)


def same_seeds(a, b, exact):
    """Rows a and b ran the same known seeds, in order, on one exact clock."""
    return bool(_one_exact_clock(a, b, exact) and a["seeds"] and a["seeds"] == b["seeds"] and
                len(str(a["seeds"]).split(";")) == len(table.values(a["values"])) ==
                len(table.values(b["values"])))


def seeded_compare(metric, a_vals, b_vals):
    """stats.compare's columns for two runs of the same seeds: no test."""
    out = dict(n_a=len(a_vals), n_b=len(b_vals), median_a=float(np.median(a_vals)), p_value=np.nan,
               median_b=float(np.median(b_vals)), analysis=f"{determinism.EXACT}: same seeds")
    if (a_vals <= 0).any() or (b_vals <= 0).any():
        same = bool(np.array_equal(a_vals, b_vals))
        return dict(out, ratio=1.0 if same else np.nan, ci_low=np.nan, ci_high=np.nan,
                    verdict=stats.NO_DIFF if same else stats.NO_DATA,
                    note="exact clock, same seeds: values of 0, no ratio")
    r = b_vals / a_vals
    ratio, lo, hi = float(np.exp(np.log(r).mean())), float(r.min()), float(r.max())
    one = "" if len(r) > 1 else "; one seed, so what the seed moves is not measured"
    return dict(out, ratio=ratio, ci_low=lo, ci_high=hi,
                verdict=stats.word(metric, ratio > 1) if lo > 1 or hi < 1 else stats.NO_DIFF,
                note=f"exact clock, same seeds ({len(r)}): each seed's ratio a count{one}")


def compute(df, n_boot=stats.N_BOOT, bound=None):
    """A row per run and the previous run of its cell; bound: lab.conf's."""
    if df.empty:
        return pd.DataFrame(columns=COLUMNS)
    bound = determinism.lab_bound_pct() if bound is None else bound
    rows, d = [], df.assign(_r=df["run_id"].map(table.run_order(df)))
    present = {k: set(g["metric"]) for k, g in d.groupby("job", sort=False)}
    for (v, disk, job, pressure, metric), g in d.groupby(
            ["variant", "disk", "job", "pressure", "metric"]):
        if metric in metrics.TOTALS:
            continue
        slots = [s for s, m in metrics.primary_metrics(job, present[job]).items() if m == metric]
        exact = any(s in determinism.EXACT_SLOTS for s in slots)
        cell_bound = determinism.metric_bound(metric, bound, disk)
        recs = g.sort_values("_r").to_dict("records")
        for a, b in zip(recs, recs[1:]):
            va, vb = table.values(a["values"]), table.values(b["values"])
            if same_seeds(a, b, exact):
                res = seeded_compare(metric, va, vb)
            elif (_one_exact_clock(a, b, exact) and determinism.is_deterministic(va, cell_bound)
                  and determinism.is_deterministic(vb, cell_bound)):
                res = stats.exact_compare(metric, va, vb, cell_bound)
            else:
                res = stats.compare(metric, va, vb, n_boot, stats.cell_seed(
                    "history", metric, disk, job, pressure, v, a["run_id"], b["run_id"]))
            rows.append(dict(
                {k: res[k] for k in COLUMNS if k in res},
                **{f"{k}_{s}": r[c] for s, r in (("a", a), ("b", b)) for k, c in SIDE.items()},
                metric=metric, unit=metrics.unit(metric), disk=disk, job=job, pressure=pressure,
                variant=v, note="; ".join(_differ(a, b, res["note"])), primary=bool(slots),
                analysis=res.get("analysis", "")))
    out = pd.DataFrame(rows, columns=COLUMNS)
    return _adjust(out) if len(out) else out


def _adjust(out):
    """Benjamini-Hochberg, primary metrics one family, the others another;
    then the note of a cell whose every variant moved alike."""
    out = out.assign(p_adjusted=np.nan)
    for fam in (True, False):
        sel = ((out["primary"] == fam) & out["p_value"].notna() &
               ~out["verdict"].map(stats.is_too_few))
        out.loc[sel, "p_adjusted"] = stats.bh_adjust(out.loc[sel, "p_value"].to_numpy(float))
    # an exact pair is no test: nothing to adjust
    lost = (out["verdict"].isin(stats.SIGNIFICANT) & ~(out["p_adjusted"] <= stats.ALPHA) &
            ~stats.is_exact(out))
    out.loc[lost, "verdict"] = stats.NO_DIFF
    out["significant"] = out["verdict"].isin(stats.SIGNIFICANT)
    # every variant of a cell moved alike in one run: more likely the host
    # or the setup than a kernel
    key = ["run_b", "metric", "disk", "job", "pressure"]
    size = out.groupby(key)["variant"].transform("size")
    for _, g in significant(out).groupby(key):
        if 2 <= size[g.index[0]] == len(g) and (g["ratio"] > 1).nunique() == 1:
            note = "every variant moved alike: host or setup drift rather than a kernel?"
            out.loc[g.index, "note"] = [f"{n}; {note}" if n else note for n in g["note"]]
    return out


def significant(ch):
    return ch[ch["significant"].astype(bool)] if not ch.empty else ch


def is_headline(metric, job):
    """Whether the history draws metric of job, and check watches it."""
    return metrics.is_headline(metric, job, metrics.HISTORY)


def newest_run(df):
    """The run id that sorts last by date (None: empty)."""
    order = table.run_order(df)
    return max(order, key=order.get, default=None)


def headline(ch):
    """The headline pairs of ch, by date, metric order and cell."""
    ch = ch.loc[[is_headline(m, j) for m, j in zip(ch["metric"], ch["job"])]]
    return ch.assign(_m=ch["metric"].map(metrics.order)).sort_values(
        ["started_b", "_m", "job", "disk", "pressure", "variant"]).drop(columns="_m")


def moved(ch, run_id):
    """(the headline pairs that end in run_id, those that moved)."""
    pairs = headline(ch[ch["run_b"] == run_id])
    if pairs.empty:
        return pairs, pairs
    pairs = stats.relevance(pairs)
    return pairs, pairs[pairs["relevance"].map(stats.is_relevant)]


def _labels(r):
    """Each run's own label of a pair (add --as may file it elsewhere)."""
    return [str(r.get(k) or r["variant"]) for k in ("label_a", "label_b")]


def line(r):
    """One moved pair: metric, cell, kernel (said once), old -> new, threshold."""
    note = "".join(f"; {n}" for n in str(r["note"] or "").split("; ")
                   if n and not n.startswith("kernel source "))
    la, lb = _labels(r)
    filed = "" if la == lb == r["variant"] else f", filed from labels {la} -> {lb}"
    analysis = str(r.get("analysis", "") or "")
    exact = f", {analysis}" if analysis.startswith("exact") else ""
    return (f"{r['metric']} {r['job']} {r['disk']} {r['pressure']}, variant {r['variant']}{filed} "
            f"({r['version_a']} -> {r['version_b']}{exact}): {md.fmt(r['median_a'], 4, '')} -> "
            f"{md.fmt(r['median_b'], 4, '')} {r['unit']}, {r['verdict']}, ratio {md.ratio_text(r)}"
            f": {stats.effect_pct(r['ratio']):.3g} % >= its smallest effect of interest "
            f"{r['min_effect_pct']:.3g} % (runs {r['run_a']} -> {r['run_b']}{note})")


def symbol_lines(r, results, top=5):
    """Where a moved pair's instructions per I/O went (./run.sh explain: all)."""
    la, lb = _labels(r)
    try:
        a, b = explain.load_pair((os.path.join(results, str(r["run_a"])), la),
                                 (os.path.join(results, str(r["run_b"])), lb),
                                 r["disk"], r["job"], r["pressure"])
    except explain.ExplainError:
        return []
    rows, summary = explain.differ(a, b, top)
    out = [f"  where it went (counted, {'exact' if summary['exact'] else 'means of boots'}): "
           f"instructions per I/O {md.fmt(summary['a_total'], fixed=0)} -> "
           f"{md.fmt(summary['b_total'], fixed=0)} "
           f"({md.fmt(summary['counted'], fixed=0, sign=True)})"]
    note = explain.instruments_note(a, b)
    out += [f"  ({note})"] if note else []
    for x in rows.itertuples():
        calls = (f", calls per I/O {md.fmt(x.calls_a, fixed=2)} -> {md.fmt(x.calls_b, fixed=2)}"
                 if np.isfinite(x.calls_a) else "")
        part = f" ({x.part})" if x.part else ""
        out.append(f"    {x.symbol}{part}: {md.fmt(x.delta, fixed=0, sign=True)}{calls}")
    return out
