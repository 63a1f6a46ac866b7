# SPDX-License-Identifier: GPL-2.0
"""Which cells of an exact clock are deterministic: a run -> its cells'
spreads (cells, undecided); stats.exact_compare decides a pair of such
cells. A cell (variant, disk, job, pressure, metric) is deterministic
with at least MIN_REPS values that spread, (max - min) / median, within
the bound (lab.conf's determinism_bound_pct, metric_bound); the method
is bench/README.md's "Repetitions and verdicts".
"""
import re
from functools import lru_cache

import numpy as np
import pandas as pd

from lab import labconf as L
from . import cells as C
from . import metrics as M

MIN_REPS = 2
# The bound's number is set in lab.conf only.
BOUND_KEY = "determinism_bound_pct"
# a percentile is a bucket of fio's histogram, 64 a power of two
FIO_BUCKET_PCT = 100 / 64
_PERCENTILE = re.compile(r"_p\d+(\.\d+)?_us$")
# The slots that time the I/O itself: they decide whether an entry needs
# more reps (the others are sampled)
EXACT_SLOTS = ("throughput", "latency tail")
EXACT = "exact"          # the analysis column of a verdict decided by the bound


@lru_cache(maxsize=1)
def lab_bound_pct():
    """The bound (%) of the repository's bench/lab.conf."""
    return float(L.default(L.load(), BOUND_KEY))


def bound_pct(lab):
    """The bound (%) of a run's lab.conf (parsed), the repository's for
    a run whose copy is from before the key."""
    v = L.default(lab, BOUND_KEY)
    return float(v) if v is not None else lab_bound_pct()


def metric_bound(metric, bound, disk=""):
    """The bound (%) of one metric: the run's, at least one histogram
    bucket for a latency percentile; twice that for a within-boot ratio."""
    sides = 2 if C.is_ratio(disk) else 1
    return sides * (max(bound, FIO_BUCKET_PCT) if _PERCENTILE.search(metric) else bound)


def spread_pct(values):
    """(max - min) / median of the values, in %; NaN for fewer than two
    values or a median of 0."""
    v = np.asarray(values, dtype=float)
    if len(v) < MIN_REPS:
        return np.nan
    med = float(np.median(v))
    if med == 0:
        return 0.0 if float(v.max() - v.min()) == 0 else np.nan
    return 100 * float(v.max() - v.min()) / abs(med)


def cells(run, slots=None):
    """One row per primary cell (of those slots, default all) of a
    performance job on an exact disk: variant, disk, job, pressure,
    metric, n, spread_pct, deterministic."""
    # integrity jobs answer with bad blocks, not their I/O time
    t = run.tidy[run.tidy["disk"].isin(run.exact_disks) &
                 run.tidy["job"].isin(run.performance_jobs)]
    rows = []
    for job, tj in t.groupby("job"):
        primary = {m for slot, m in M.primary_metrics(job, sorted(set(tj["metric"]))).items()
                   if slots is None or slot in slots}
        tj = tj[tj["metric"].isin(primary)]
        for (variant, disk, pressure, metric), g in tj.groupby(
                ["variant", "disk", "pressure", "metric"]):
            rows.append((variant, disk, job, pressure, metric, len(g), spread_pct(g["value"]),
                         is_deterministic(g["value"], metric_bound(metric, run.bound_pct, disk))))
    return pd.DataFrame(rows, columns=["variant", "disk", "job", "pressure", "metric", "n",
                                       "spread_pct", "deterministic"])


def deciding_cells(run):
    """The cells that decide whether an entry needs more reps: the I/O-time
    slots of the unprobed performance jobs but the sweep's."""
    c, asked = cells(run, slots=EXACT_SLOTS), run.question_jobs
    return c[np.array([j in asked and run.sweep_shape(j) is None for j in c["job"]], bool)]


def undecided(run):
    """The deciding cells that are not deterministic, each with the boot
    disk entry (boots.tsv "disk", e.g. ram-bounce+ram) that carried it:
    the entries that need more repetitions."""
    c = deciding_cells(run)
    c = c[~c["deterministic"]]
    if c.empty:
        return c.assign(boot_disk=[])
    where = {}
    for b in run.boots[["variant", "pressure", "disk"]].drop_duplicates().itertuples(index=False):
        for d in str(b.disk).split("+"):
            where.setdefault((b.variant, b.pressure, d), b.disk)
    return c.assign(boot_disk=[where.get((r.variant, r.pressure, C.first_disk(r.disk)), "")
                               for r in c.itertuples()])


def is_deterministic(values, bound):
    """At least MIN_REPS values, spread within bound (%)."""
    s = spread_pct(values)
    return bool(np.isfinite(s) and s <= bound)

