# SPDX-License-Identifier: GPL-2.0
"""What a bounce costs where the host times the I/O (usb-pio, the PIO
host controller the bounce path was for): the parts of one bounce from
the count, the range its boots allow, and its share of one fio process's
time per I/O (numjobs / IOPS). A share above 100 % is never printed: the
line says why it cannot be compared. On a disk the host emulates the
counts nearly repeat while the time per I/O does not, so the first
screen gives the counted cost beside what the disk's timing could detect.
"""
import numpy as np

from .. import cells as C
from .. import determinism as D
from .. import insnprof as X
from .. import md
from lab import labconf as L
from .counted import PER_BOUNCE_PARTS, WALL, pairs

TITLE = "What a bounce costs where the host times the I/O"


def _cell(t, v, disk, job, m):
    x = t[(t["variant"] == v) & (t["disk"] == disk) & (t["job"] == job) &
          (t["metric"] == m)]["value"].to_numpy(float)
    return x[np.isfinite(x)]


def per_bounce(run):
    """[(disk, job, bounce variant, baseline, bounces per I/O, parts,
    share)] of the unprobed performance jobs on candidate disks where the
    bounce variant bounced: parts [(name, Δ µs per bounce, (low, high)
    the range its boots allow, that range's half-width in % of |Δ|,
    exact)] for the bounce's parts, the rest of the kernel, user and
    idle; share the bounce's parts over the bounce variant's time per
    I/O of one of the job's fio processes (job_time_us), in %: above
    100 it cannot be compared, and share_text says why instead."""
    t = run.tidy
    out = []
    if t.empty:
        return out
    t = t[t["pressure"] == L.NO_PRESSURE]
    bound = run.bound_pct
    for disk, job, v, b, vals in pairs(run):
        if C.is_probed(job):
            continue
        per_io = vals["insn_bounces_per_io"][0]
        if not (np.isfinite(per_io) and per_io > 0):
            continue
        parts = []
        for name, m in ([(p, X.metric_key(p)) for p in PER_BOUNCE_PARTS] +
                        [(X.OTHER, X.metric_key(X.OTHER)),
                         ("user", "insn_user_us_per_io"), ("idle", "insn_idle_us_per_io")]):
            xb, xa = _cell(t, v, disk, job, m), _cell(t, b, disk, job, m)
            if not len(xb) or not len(xa):
                continue
            delta = (float(np.median(xb)) - float(np.median(xa))) / per_io
            rng = ((xb.min() - xa.max()) / per_io, (xb.max() - xa.min()) / per_io)
            half = (rng[1] - rng[0]) / 2 / abs(delta) * 100 if delta else np.nan
            exact = all(D.is_deterministic(x, bound) for x in (xb, xa))
            parts.append((name, delta, rng, half, exact))
        funcs = sum(d for n, d, _, _, _ in parts if n in PER_BOUNCE_PARTS) * per_io
        wall = job_time_us(run, v, disk, job, vals[WALL][0])
        share = funcs / wall * 100 if np.isfinite(wall) and wall > 0 else np.nan
        out.append((disk, job, v, b, per_io, parts, share))
    return out


def numjobs(run, variant, disk, job):
    """How many fio processes ran the job (the job table's numjobs, read
    from fio's own output); 1 where it does not say."""
    j = run.jobs
    if j.empty or "numjobs" not in j:
        return 1
    n = j[(j["variant"] == variant) & (j["disk"] == disk) & (j["job"] == job)]["numjobs"]
    n = n.dropna()
    return int(n.max()) if len(n) else 1


def job_time_us(run, variant, disk, job, wall):
    """The time per I/O of one of the job's fio processes: numjobs over
    the IOPS, which fio adds up over the processes (wall is 1 / those
    IOPS), while the counted cost is per I/O of any one of them."""
    return wall * numjobs(run, variant, disk, job)


# A share of an I/O's time above this cannot be one: never printed.
MAX_SHARE_PCT = 100.0


def share_text(run, disk, job, variant, share):
    """"S% of V's time per I/O" (of one of its N jobs), or, where the
    share would exceed MAX_SHARE_PCT, why it cannot be compared."""
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


def _per_bounce_lines(run):
    rows = per_bounce(run)
    if not rows:
        return []
    bound = run.bound_pct
    out = [f"One bounce, part by part (µs per bounce, bounce variant less baseline, "
           f"medians of boots; the range any pairing of their boots allows, its half-width "
           f"in % of Δ; exact: both kernels' boots repeat within the {bound:g}% determinism "
           f"bound):", "",
           "| disk | job | part | Δ per bounce | boots allow | ± | exact |",
           "|---|---|---|---|---|---|---|"]
    for disk, job, v, b, per_io, parts, share in rows:
        first = True
        for name, delta, (lo, hi), half, exact in parts:
            out.append(f"| {disk if first else ''} | {job if first else ''} | {name} | "
                       f"{md.delta(delta, 2)} | {md.delta(lo, 2)} to {md.delta(hi, 2)} | "
                       f"{half:.1f}% | {'exact' if exact else 'no'} |")
            first = False
    out.append("")
    for disk, job, v, b, per_io, parts, share in rows:
        funcs = sum(d for n, d, _, _, _ in parts if n in PER_BOUNCE_PARTS)
        out.append(f"- {disk} {job}: the bounce's own parts come to {md.delta(funcs, 2)} µs per "
                   f"bounce, {share_text(run, disk, job, v, share)}.")
    return out + [""]


def share_lines(run, verdicts):
    """The first screen's lines for candidate disks whose time per I/O is
    not exact (a disk the host emulates): what one bounce costs, counted,
    its share of an I/O, and what the timing of the disk could detect."""
    out = []
    for disk, job, v, b, per_io, parts, share in per_bounce(run):
        sel = verdicts[(verdicts["disk"] == disk) & (verdicts["job"] == job) &
                       (verdicts["slot"] == "throughput") &
                       verdicts["a"].isin([v, b]) & verdicts["b"].isin([v, b])] \
            if verdicts is not None and not verdicts.empty else verdicts
        if sel is None or sel.empty or str(sel.iloc[0]["analysis"]).startswith(D.EXACT):
            continue
        mde = sel.iloc[0].get("mde_pct", np.nan)
        own = [(n, d, sp) for n, d, _, sp, _ in parts if n in PER_BOUNCE_PARTS]
        lo = sum(r[0] for n, _, r, _, _ in parts if n in PER_BOUNCE_PARTS)
        hi = sum(r[1] for n, _, r, _, _ in parts if n in PER_BOUNCE_PARTS)
        detect = (f"its timing could detect ±{mde:.0f}%" if np.isfinite(mde)
                  else "its timing has no MDE at these boots")
        out.append(f"{disk} {job}, counted: one bounce adds "
                   f"{md.delta(sum(d for _, d, _ in own), 1)} µs of kernel work ("
                   + ", ".join(f"{n} {md.delta(d, 1)}" for n, d, _ in own)
                   + f"; its boots allow {md.delta(lo, 1)} to {md.delta(hi, 1)}), "
                   f"{share_text(run, disk, job, v, share)}; {detect}.")
    return out


TITLE = "One bounce, part by part, and its share of an I/O"


def first_screen(run, verdicts):
    return [f"- {line}" for line in share_lines(run, verdicts)]


def section(run, verdicts):
    return _per_bounce_lines(run)


def figures(run, verdicts, p, everything):
    pass
