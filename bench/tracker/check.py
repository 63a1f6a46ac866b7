# SPDX-License-Identifier: GPL-2.0
"""bench/history check: whether the newest run moved a headline metric
beyond its smallest effect of interest, for an unattended job (a cron job
after Debian updates a kernel) to fail on, as LKP reports a regression.

The newest run (by date, then run id: table.run_order) is taken against
the previous run of each of its variant labels, cell by cell, with the
history's own test (changes.compute: the pairs history.md and
changes.csv show, Benjamini-Hochberg across the whole history). A pair
moved when its metric is a headline one (figures.is_headline), the change
is significant and its size |B/A - 1| is at least the metric's smallest
effect of interest (metrics.min_effect; stats.relevance calls it
"relevant"). Either direction counts: a kernel that got faster changed
too, and the lines say which way.

Under each moved pair whose two runs are in the results folder with
instruction counts (an exact clock), where the instructions went: the
symbols whose instructions per I/O moved most between the two runs
(explain.py), the rest and the total.
"""
import os

import numpy as np

from analysis import explain, md, metrics, stats
from tracker import figures, table

# Symbols said under a moved metric (./run.sh explain has them all).
TOP_SYMBOLS = 5


def newest_run(df):
    """The run id that sorts last by date, None for an empty history."""
    order = table.run_order(df) if not df.empty else {}
    return max(order, key=order.get) if order else None


def moved(ch, run_id):
    """(compared, moved): the headline pairs that end in run_id, and those
    of them that moved beyond their smallest effect of interest."""
    if ch.empty:
        return ch, ch
    pairs = ch[(ch["run_b"] == run_id) &
               [figures.is_headline(m, j) for m, j in zip(ch["metric"], ch["job"])]]
    if pairs.empty:
        return pairs, pairs
    pairs = stats.relevance(pairs)
    out = pairs[pairs["relevance"].map(stats.is_relevant)]
    out = out.assign(_m=out["metric"].map(metrics.order)).sort_values(
        ["_m", "job", "disk", "pressure", "variant"]).drop(columns="_m")
    return pairs, out


def _labels(r):
    """Each run's own label of a pair's cell (add --as may file one under
    another variant)."""
    return [str(r.get(k) or r["variant"]) for k in ("label_a", "label_b")]


def line(r):
    """One moved pair: which metric, which kernel, old -> new, the
    threshold."""
    # (the kernel versions are said already)
    note = "".join(f"; {n}" for n in str(r["note"] or "").split("; ")
                   if n and not n.startswith("kernel source "))
    labels = _labels(r)
    filed = ("" if labels == [r["variant"]] * 2 else
             f", filed from labels {labels[0]} -> {labels[1]}")
    analysis = str(r.get("analysis", "") or "")
    exact = f", {analysis}" if analysis.startswith("exact") else ""
    return (f"{r['metric']} {r['job']} {r['disk']} {r['pressure']}, variant "
            f"{r['variant']}{filed} ({r['version_a']} -> {r['version_b']}{exact}): "
            f"{md.fmt(r['median_a'], 4, '')} -> {md.fmt(r['median_b'], 4, '')} {r['unit']}, "
            f"{r['verdict']}, ratio {md.ratio_text(r)}: "
            f"{stats.effect_pct(r['ratio']):.3g} % >= its smallest effect of interest "
            f"{r['min_effect_pct']:.3g} % (runs {r['run_a']} -> {r['run_b']}{note})")


def symbol_lines(r, results, top=TOP_SYMBOLS):
    """Indented lines: where a moved pair's instructions per I/O went
    between its two runs, symbol by symbol; [] when either run is not in
    results or its cell has no instruction counts (host time)."""
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
           f"{md.fmt(summary['b_total'], fixed=0)} ({md.fmt(summary['counted'], fixed=0, sign=True)})"]
    note = explain.instruments_note(a, b)
    if note:
        out.append(f"  ({note})")
    for x in rows.itertuples():
        calls = (f", calls per I/O {md.fmt(x.calls_a, fixed=2)} -> {md.fmt(x.calls_b, fixed=2)}"
                 if np.isfinite(x.calls_a) else "")
        part = f" ({x.part})" if x.part else ""
        out.append(f"    {x.symbol}{part}: {md.fmt(x.delta, fixed=0, sign=True)}{calls}")
    return out
