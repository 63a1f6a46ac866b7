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
"""
from analysis import md, metrics, stats
from analysis.history import figures, table


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


def line(r):
    """One moved pair: which metric, which kernel, old -> new, the
    threshold."""
    # (the kernel versions are said already)
    note = "".join(f"; {n}" for n in str(r["note"] or "").split("; ")
                   if n and not n.startswith("kernel source "))
    return (f"{r['metric']} {r['job']} {r['disk']} {r['pressure']}, variant "
            f"{r['variant']} ({r['version_a']} -> {r['version_b']}): "
            f"{md.fmt(r['median_a'], 4, '')} -> {md.fmt(r['median_b'], 4, '')} {r['unit']}, "
            f"{r['verdict']}, ratio {md.ratio_text(r)}: "
            f"{stats.effect_pct(r['ratio']):.3g} % >= its smallest effect of interest "
            f"{r['min_effect_pct']:.3g} % (runs {r['run_a']} -> {r['run_b']}{note})")
