# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "labmon" (guest/monitors/30-labmon.sh): the
samples of meminfo and the bounce gauge while a job runs (labmon.csv):
LowFree and HighFree at their lowest, Bounce: at its highest and mean, and
PSI memory over fio's own window (not the monitors' work or the umount
after it). A column this kernel does not have gives no row.
"""
import numpy as np

from .. import rawfiles as R

GUEST = "30-labmon.sh"
# (column, metric, reduction, scale)
SAMPLED = (("Bounce", "bounce_peak_kb", "max", 1),
           ("Bounce", "bounce_gauge_pages_peak", "max", 1 / R.PAGE_KB),
           ("Bounce", "bounce_gauge_pages_mean", "mean", 1 / R.PAGE_KB),
           ("LowFree", "lowfree_min_kb", "min", 1),
           ("HighFree", "highfree_min_kb", "min", 1))
METRICS = tuple(metric for _, metric, _, _ in SAMPLED) + ("psi_some_us", "psi_full_us")


def _window(job, mon):
    """PSI totals (µs) over fio's window, interpolated in labmon's samples
    (t_ms from labmon-start-uptime, else fio's start); none where the
    samples do not reach within one interval of either end."""
    start, end = R.read_uptime(job.path("start-uptime")), R.read_uptime(job.path("end-uptime"))
    t0 = R.read_uptime(job.path("labmon-start-uptime")) or start
    if None in (start, end) or "t_ms" not in mon or len(mon) < 2:
        return {}
    ends = [(start - t0) * 1000, (end - t0) * 1000]
    step = float(np.median(np.diff(mon["t_ms"])))
    out = {}
    for line in ("some", "full"):
        col = f"{line}_total"
        x = mon[["t_ms", col]].dropna().to_numpy(float) if col in mon else []
        if len(x) >= 2 and x[0, 0] <= ends[0] + step and x[-1, 0] >= ends[1] - step:
            a, b = np.interp(ends, x[:, 0], x[:, 1])
            out[f"psi_{line}_us"] = float(b - a)
    return out


def read(job):
    mon = R.read_labmon(job.path("labmon.csv"))
    if mon is None or not len(mon):
        return {}
    out = {metric: scale * float(getattr(mon[col].dropna(), fn)())
           for col, metric, fn, scale in SAMPLED if col in mon and mon[col].notna().any()}
    return dict(out, **_window(job, mon))
