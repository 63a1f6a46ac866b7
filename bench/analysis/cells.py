# SPDX-License-Identifier: GPL-2.0
"""Cells of a run: the rows of a tidy table a (variant, disk, job,
pressure, metric) selects, and their median. A disk "A/B" is a within-boot
ratio (tidy.py); a job "JOB+probe" JOB's probed twin.
"""
import numpy as np

PROBED = "+probe"       # tidy.py's suffix of a probed twin's job name


def is_probed(job):
    return str(job).endswith(PROBED)


def is_ratio(disk):
    """Whether disk is a within-boot ratio "A/B"."""
    return "/" in str(disk)


def first_disk(disk):
    """A of a within-boot ratio "A/B"; any other disk itself."""
    return str(disk).split("/")[0]


# (table, its rows by (metric, disk, job)) of the newest tables asked
_BY_CELL = []


def _by_cell(t):
    for tab, n, idx in _BY_CELL:
        if tab is t and n == len(t):
            return idx
    idx = t.groupby(["metric", "disk", "job"], sort=False).indices
    _BY_CELL.insert(0, (t, len(t), idx))
    del _BY_CELL[4:]
    return idx


def rows(t, metric=None, variants=None, disk=None, job=None, pressure=None):
    """The rows of tidy table t in a cell (None: any); variants is a
    label or a list of them."""
    if None not in (metric, disk, job) and len(t):
        pos = _by_cell(t).get((metric, disk, job))
        if pos is None:
            return t.iloc[:0]
        t, metric, disk, job = t.iloc[pos], None, None, None
    sel = np.ones(len(t), dtype=bool)
    if variants is not None:
        sel &= t["variant"].isin([variants] if isinstance(variants, str) else variants).to_numpy()
    for col, val in (("metric", metric), ("disk", disk), ("job", job), ("pressure", pressure)):
        if val is not None:
            sel &= (t[col] == val).to_numpy()
    return t[sel]


def median(t, variant, disk, job, metric, pressure=None):
    """The median of one cell of tidy table t, NaN when it has no value."""
    v = rows(t, metric, variant, disk, job, pressure)["value"]
    return float(np.median(v)) if len(v) else np.nan
