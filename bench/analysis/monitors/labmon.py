# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "labmon" (guest/monitors/30-labmon.sh): the
samples of meminfo and the bounce gauge while a job runs (labmon.csv).

  lowfree_min_kb, highfree_min_kb   the lowest LowFree and HighFree
  bounce_peak_kb                    the highest Bounce: (kB)
  bounce_gauge_pages_peak, _mean    Bounce: in pages, sampled

A column this kernel does not have (empty cells) gives no row. The
timelines of the plots read labmon.csv themselves (plots.py, memory.py).
"""
from .. import rawfiles as R
from . import PAGE_KB

GUEST = "30-labmon.sh"
# (column, metric, reduction, scale)
SAMPLED = (("Bounce", "bounce_peak_kb", "max", 1),
           ("Bounce", "bounce_gauge_pages_peak", "max", 1 / PAGE_KB),
           ("Bounce", "bounce_gauge_pages_mean", "mean", 1 / PAGE_KB),
           ("LowFree", "lowfree_min_kb", "min", 1),
           ("HighFree", "highfree_min_kb", "min", 1))
METRICS = tuple(metric for _, metric, _, _ in SAMPLED)


def read(job):
    out = {}
    mon = R.read_labmon(job.path("labmon.csv"))
    if mon is None or not len(mon):
        return out
    for col, metric, fn, scale in SAMPLED:
        if col in mon and mon[col].notna().any():
            out[metric] = scale * float(getattr(mon[col].dropna(), fn)())
    return out
