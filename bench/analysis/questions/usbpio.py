# SPDX-License-Identifier: GPL-2.0
"""What a bounce costs where the host times the I/O (usb-pio): the parts
of one bounce from the count, the range its boots allow, and its share of
one fio process's time per I/O. On a disk the host emulates the counts
nearly repeat while the time per I/O does not, so the first screen gives
the counted cost beside what the disk's timing could detect.
"""
import numpy as np

from .. import cells as C, determinism as D, insnprof as X, md
from .counted import BOUNCES, IDLE, PER_BOUNCE_PARTS, USER, WALL, pairs

TITLE = "One bounce, part by part, and its share of an I/O"
MAX_SHARE_PCT = 100.0   # a share of an I/O's time above it cannot be one: never printed
_PARTS = ([(p, X.metric_key(p)) for p in PER_BOUNCE_PARTS] +
          [(X.OTHER, X.metric_key(X.OTHER)), ("user", USER), ("idle", IDLE)])


def per_bounce(run):
    """[(disk, job, bounce variant, baseline, bounces per I/O, parts,
    share)] of the unprobed counted jobs where the bounce variant
    bounced: parts [(name, Δ µs per bounce, (low, high) its boots allow,
    that range's half-width in % of |Δ|, exact)]; share the bounce's
    parts in % of one fio process's time per I/O."""
    out, rows = [], pairs(run)
    t = run.calm if rows else None
    for disk, job, v, b, vals in rows:
        per_io = vals[BOUNCES][0]
        if C.is_probed(job) or not per_io > 0:
            continue
        parts = []
        for name, m in _PARTS:
            xb, xa = (C.rows(t, m, x, disk, job)["value"].to_numpy(float) for x in (v, b))
            xb, xa = xb[np.isfinite(xb)], xa[np.isfinite(xa)]
            if not len(xb) or not len(xa):
                continue
            delta = (float(np.median(xb)) - float(np.median(xa))) / per_io
            lo, hi = (xb.min() - xa.max()) / per_io, (xb.max() - xa.min()) / per_io
            half = (hi - lo) / 2 / abs(delta) * 100 if delta else np.nan
            exact = all(D.is_deterministic(x, run.bound_pct) for x in (xb, xa))
            parts.append((name, delta, (lo, hi), half, exact))
        funcs = sum(d for n, d, _, _, _ in parts if n in PER_BOUNCE_PARTS) * per_io
        # one fio process's time per I/O: 1/IOPS is that of all numjobs
        wall = vals[WALL][0] * numjobs(run, v, disk, job)
        share = funcs / wall * 100 if np.isfinite(wall) and wall > 0 else np.nan
        out.append((disk, job, v, b, per_io, parts, share))
    return out


def numjobs(run, variant, disk, job):
    """How many fio processes ran the job (fio's own output), else 1."""
    j = run.jobs
    n = C.rows(j, None, variant, disk, job)["numjobs"].dropna() if "numjobs" in j else []
    return int(n.max()) if len(n) else 1


def share_text(run, disk, job, variant, share):
    """"S% of V's time per I/O", or why a share above MAX_SHARE_PCT is none."""
    n = numjobs(run, variant, disk, job)
    of = f"{variant}'s time per I/O" + (f" of one of its {n} jobs" if n > 1 else "")
    if not np.isfinite(share):
        return f"no share of {of} (not measured)"
    if share <= MAX_SHARE_PCT:
        return f"{share:.2f}% of {of}"
    return (f"no share of {of}: the bounce's counted work per I/O exceeds that time, so "
            "fio's clock and the counted window did not time the same I/Os"
            + (f" (its {n} processes did not run side by side all through the window)"
               if n > 1 else ""))


def section(run, verdicts):
    rows = per_bounce(run)
    if not rows:
        return []
    cells = [["" if i else disk, "" if i else job, name, md.delta(delta, 2),
              f"{md.delta(lo, 2)} to {md.delta(hi, 2)}", f"{half:.1f}%",
              "exact" if exact else "no"]
             for disk, job, _, _, _, parts, _ in rows
             for i, (name, delta, (lo, hi), half, exact) in enumerate(parts)]
    return [f"One bounce, part by part (µs per bounce, bounce variant less baseline, "
            f"medians of boots; the range any pairing of their boots allows, its half-width "
            f"in % of Δ; exact: both kernels' boots repeat within the {run.bound_pct:g}% "
            f"determinism bound):", "",
            md.table(["disk", "job", "part", "Δ per bounce", "boots allow", "±", "exact"],
                     cells), ""] + [
        f"- {disk} {job}: the bounce's own parts come to "
        f"{md.delta(sum(d for n, d, *_ in parts if n in PER_BOUNCE_PARTS), 2)} µs per "
        f"bounce, {share_text(run, disk, job, v, share)}."
        for disk, job, v, _, _, parts, share in rows] + [""]


def share_lines(run, verdicts):
    """The first screen's lines for candidate disks whose time per I/O is
    not exact (a disk the host emulates): one bounce's counted cost, its
    share of an I/O, and what the timing of the disk could detect."""
    if verdicts is None or verdicts.empty:
        return []
    out = []
    for disk, job, v, b, per_io, parts, share in per_bounce(run):
        sel = verdicts[(verdicts["disk"] == disk) & (verdicts["job"] == job) &
                       (verdicts["slot"] == "throughput") &
                       verdicts["a"].isin([v, b]) & verdicts["b"].isin([v, b])]
        if sel.empty or str(sel.iloc[0]["analysis"]).startswith(D.EXACT):
            continue
        mde = sel.iloc[0].get("mde_pct", np.nan)
        own = [(n, d, r) for n, d, r, _, _ in parts if n in PER_BOUNCE_PARTS]
        detect = (f"its timing could detect ±{mde:.0f}%" if np.isfinite(mde)
                  else "its timing has no MDE at these boots")
        out.append(f"{disk} {job}, counted: one bounce adds "
                   f"{md.delta(sum(d for _, d, _ in own), 1)} µs of kernel work ("
                   + ", ".join(f"{n} {md.delta(d, 1)}" for n, d, _ in own)
                   + f"; its boots allow {md.delta(sum(r[0] for *_, r in own), 1)} to "
                   f"{md.delta(sum(r[1] for *_, r in own), 1)}), "
                   f"{share_text(run, disk, job, v, share)}; {detect}.")
    return out


def first_screen(run, verdicts):
    return [f"- {line}" for line in share_lines(run, verdicts)]


def figures(run, verdicts, p, everything):
    pass
