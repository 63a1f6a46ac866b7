# SPDX-License-Identifier: GPL-2.0
"""Data integrity and what the bounce costs (below the headline table,
headline_table.py), and the jobs and disks the first screen is about.

Every figure here is a median over the run's boots of a per-job value in
summary.csv; nothing is printed for a quantity the run did not measure.
Roles (which variant bounces, which disk is the bounce candidate) are
roles.py's answers.
"""
import numpy as np
import pandas as pd

from lab import labconf as L
from . import metrics as M
from . import roles as R
from . import stats as S


def _fmt(x, digits=3):
    if x is None or not np.isfinite(x):
        return "n/a"
    return f"{x:.{digits}g}"


def _labels(run, role):
    """The run's labels whose variant has ROLE (roles.py decides)."""
    return [l for l in dict.fromkeys(run.boots["variant"])
            if R.variant_role(run, l) == role]


def _values(run, metric, variants=None, disk=None, job=None):
    t = run.tidy
    sel = t["metric"] == metric
    if variants is not None:
        sel &= t["variant"].isin(variants)
    if disk is not None:
        sel &= t["disk"] == disk
    if job is not None:
        sel &= t["job"] == job
    return t[sel]


# -- data integrity ---------------------------------------------------------

def integrity_table(run):
    """Per variant, disk and job: blocks bad / checked, and the bounced
    bios of those jobs. Empty when the run had no integrity job."""
    t = run.tidy
    keys = ["variant", "disk", "job"]
    ints = t[t["metric"].str.startswith("integrity_")]
    if ints.empty:
        return pd.DataFrame()
    wide = ints.pivot_table(index=keys + ["boot"], columns="metric", values="value",
                            aggfunc="sum").reset_index()
    b = t[t["metric"] == "bounces"][keys + ["boot", "value"]].rename(
        columns={"value": "bounces"})
    wide = wide.merge(b, on=keys + ["boot"], how="left")
    out = wide.groupby(keys, sort=True).agg(
        boots=("boot", "nunique"),
        bad=("integrity_bad_blocks", "sum"),
        checked=("integrity_checked_blocks", "sum"),
        bounces=("bounces", lambda s: s.sum(min_count=1))).reset_index()
    return out


def _short_job(job):
    """integrity-direct-512-qd8 -> direct-512-qd8: the table's columns."""
    return job[len("integrity-"):] if job.startswith("integrity-") else job


def integrity_section(run):
    """Markdown lines: bad blocks / checked per variant and disk (one
    column per integrity job), and which variant corrupts data."""
    tab = integrity_table(run)
    if tab.empty:
        return []
    jobs = sorted(set(tab["job"]))
    out = ["| variant | disk | " + " | ".join(_short_job(j) for j in jobs) +
           " | bounced bios |",
           "|---|---|" + "---|" * len(jobs) + "---|"]
    for (v, d), g in tab.groupby(["variant", "disk"], sort=True):
        cells = []
        for j in jobs:
            r = g[g["job"] == j]
            cells.append("" if r.empty else
                         f"{'**' if r['bad'].iloc[0] else ''}{int(r['bad'].iloc[0])}"
                         f"{'**' if r['bad'].iloc[0] else ''} / {int(r['checked'].iloc[0])}")
        b = g["bounces"]
        bounces = "no tracepoint" if not b.notna().any() else f"{int(b.sum())}"
        out.append(f"| {v} | {d} | " + " | ".join(cells) + f" | {bounces} |")
    out.append("")
    out.append("Cells: bad blocks / blocks read back from the device and checked "
               "(crc32c), summed over the run's boots.")
    bad = tab[tab["bad"] > 0]
    if bad.empty:
        out.append(f"No variant corrupted data: 0 bad blocks in {int(tab['checked'].sum())} checked.")
    else:
        for v, g in bad.groupby("variant", sort=True):
            where = "; ".join(f"{r.disk} {_short_job(r.job)}: {int(r.bad)} of {int(r.checked)}"
                              for r in g.itertuples())
            out.append(f"**{v} corrupts data**: bad blocks read back ({where}).")
        clean = sorted(set(tab["variant"]) - set(bad["variant"]))
        if clean:
            out.append(f"No bad block on {', '.join(clean)}.")
    return out


# -- what the bounce costs --------------------------------------------------

def _median(df):
    return float(df["value"].median()) if len(df) else np.nan


def _probe_overhead(run, variant, disk):
    """IOPS(job+probe) / IOPS(job) of each boot and job on one disk."""
    t = run.tidy
    t = t[(t["variant"] == variant) & (t["disk"] == disk) &
          t["metric"].isin(["read_iops", "write_iops"])]
    probed = t[t["job"].str.endswith("+probe")].copy()
    if probed.empty:
        return np.array([])
    probed["job"] = probed["job"].str[:-len("+probe")]
    m = probed.merge(t, on=["boot", "job", "metric"], suffixes=("_p", "_u"))
    return (m["value_p"] / m["value_u"]).to_numpy(float) if len(m) else np.array([])


def cost_text(ratios):
    """The share of IOPS lost (1 - median ratio) in %, or "below the noise
    (±X%)" when the ratios' 95% CI of the median reaches 1 or the median
    is a gain: a cost is never printed below zero."""
    if not len(ratios):
        return None
    med, lo, hi = S.median_ci(ratios, seed=S.cell_seed("probe-cost", *ratios[:3]))
    if np.isfinite(lo) and np.isfinite(hi):
        noise = 100 * max(abs(1 - lo), abs(hi - 1))
        if lo <= 1 <= hi or med >= 1:
            return f"below the noise (±{_fmt(noise, 2)}%)"
        return f"{_fmt(100 * (1 - med), 2)}% (95% CI {_fmt(100 * (1 - hi), 2)}–{_fmt(100 * (1 - lo), 2)}%)"
    if med >= 1:
        return "below the noise (one boot)"
    return f"{_fmt(100 * (1 - med), 2)}% (one boot)"


def _verdict_cell(verdicts, metric, disk, job, a, b):
    """"0.81 ±1.2% slower" for the table, or why there is no figure."""
    if verdicts is None or verdicts.empty:
        return ""
    v = verdicts[(verdicts["metric"] == metric) & (verdicts["disk"] == disk) &
                 (verdicts["job"] == job) & (verdicts["a"] == a) & (verdicts["b"] == b)]
    if v.empty:
        return ""
    r = v.iloc[0]
    if not np.isfinite(r["ratio"]):
        return str(r["verdict"])
    text = _fmt(r["ratio"])
    if np.isfinite(r["ci_low"]) and np.isfinite(r["ci_high"]) and r["ratio"] > 0:
        text += f" ±{_fmt(100 * (r['ci_high'] - r['ci_low']) / 2 / r['ratio'], 2)}%"
    verdict = str(r["verdict"])
    if verdict.startswith("no significant") and S.ci_excludes_1(r):
        verdict = "not significant after adjustment"
    elif verdict.startswith("no significant"):
        mde = r.get("mde_pct", np.nan)
        verdict = ("below the noise" +
                   (f" (could detect ±{_fmt(mde, 2)}%)" if np.isfinite(mde) else ""))
    elif r.get("relevance") == S.NEGLIGIBLE:
        verdict = f"negligible ({verdict}, below {_fmt(r['min_effect_pct'], 2)}%)"
    return f"{text} {verdict}"


def cost_section(run, verdicts):
    """Markdown lines: bounced bytes, cost per bounced bio beside a plain
    memcpy, the probes' own cost, lowmem held, then a table of the bounce
    variant against the others (IOPS and CPU per GiB) on each bounce
    candidate and on its within-boot ratio to its control."""
    out = []
    bouncers = _labels(run, "bounce")
    others = _labels(run, "removed") + _labels(run, "baseline")
    disks = list(dict.fromkeys(run.tidy["disk"]))
    candidates = [d for d in disks if "/" not in str(d) and R.is_candidate(run, d)]
    jobs = run.jobs
    for disk in candidates:
        for v in bouncers:
            bb = _values(run, "bounced_bytes_per_gib", [v], disk)
            bb = bb[~bb["job"].str.endswith("+probe")]
            if bb.empty or not (bb["value"] > 0).any():
                continue
            share = ", ".join(f"{j} {_fmt(100 * g['value'].median() / (1 << 30))}%"
                              for j, g in bb.groupby("job", sort=True))
            out.append(f"- **{v} on {disk}**: bytes bounced per byte moved: {share}.")
            for job in sorted(set(_values(run, "bounce_submit_us_p50", [v], disk)["job"])):
                j = jobs[(jobs["variant"] == v) & (jobs["disk"] == disk) & (jobs["job"] == job)]
                memcpy = float(j["memcpy_4k_us"].median()) if "memcpy_4k_us" in j else np.nan

                def med(metric):
                    return _fmt(_median(_values(run, metric, [v], disk, job)))
                per_gib = _median(_values(run, "bounce_us_per_gib", [v], disk, job))
                out.append(
                    f"  - {job}: **a bounced bio costs {med('bounce_submit_us_p50')} µs at "
                    f"submit (p99 {med('bounce_submit_us_p99')}) and "
                    f"{med('bounce_endio_us_p50')} µs at completion (p99 "
                    f"{med('bounce_endio_us_p99')})**, {_fmt(per_gib / 1e6)} s per GiB; "
                    f"a plain 4 KiB memcpy: {_fmt(memcpy)} µs in the same boots.")
            over = [(w, cost_text(_probe_overhead(run, w, disk))) for w in bouncers + others]
            over = [f"{w} {x}" for w, x in over if x]
            if over:
                out.append(f"  - the probes' own cost (IOPS lost with them on, same "
                           f"boot, median): {', '.join(over)}.")
            peak = _median(_values(run, "bounce_pages_peak", [v], disk))
            mean = _median(_values(run, "bounce_pages_mean", [v], disk))
            if np.isfinite(peak):
                out.append(f"  - lowmem held by bounce pages (exact, the kernel's count "
                           f"per job; median over jobs and boots): peak {_fmt(peak)} "
                           f"pages ({_fmt(peak * 4)} KiB), time-weighted mean "
                           f"{_fmt(mean)} pages.")
                continue
            peak = _median(_values(run, "bounce_gauge_pages_peak", [v], disk))
            mean = _median(_values(run, "bounce_gauge_pages_mean", [v], disk))
            if np.isfinite(peak):
                out.append(f"  - lowmem held by bounce pages: peak {_fmt(peak)}, mean "
                           f"{_fmt(mean)} pages (Bounce: sampled, monitor interval "
                           f"{_interval(run)})"
                           f"{_unseen_note(run, disk, peak)}.")
    rows = []
    cells = [d for d in disks if "/" in str(d)] + candidates
    pairs = [(v, w) for v in bouncers for w in others]
    for disk in cells:
        # the headline metrics that have a within-boot ratio
        for metric in [m for m in M.selected("headline") if m in M.selected("ratio")]:
            for job in _performance_jobs(run, _values(run, metric, None, disk)):
                got = [_verdict_cell(verdicts, metric, disk, job, v, w) for v, w in pairs]
                if any(got):
                    rows.append(f"| {disk} | {job} | {metric} | " + " | ".join(got) + " |")
    if rows:
        out += ["", "| disk | job | metric | " +
                " | ".join(f"{w} / {v}" for v, w in pairs) + " |",
                "|---|---|---|" + "---|" * len(pairs)] + rows
        out.append("")
        out.append("Ratios with their 95 % CI half-width; A/B is the within-boot ratio "
                   "of a bounce candidate to its control (TCG's boot-to-boot speed "
                   "cancels in it).")
    return out


def _unseen_note(run, disk, peak):
    """Why a peak of 0 bounce pages is not "none held": on a one-vCPU
    clock the sampler only runs between I/Os, and a bounce page of a
    synchronous in-guest disk lives within one I/O."""
    if peak != 0:
        return ""
    clock = L.disk_clock(run.meta or {}, disk)
    if L.clock(L.load(run.path), clock).get("cpus") != "1":
        return ""
    return (f"; not seen, not absent: under the clock {clock} (one vCPU) the sampler "
            "runs only between I/Os; see a disk on host time for the footprint")


def performance_jobs(run):
    """The unprobed performance jobs of the run: what verdicts and figures
    are about (integrity jobs measure data, probed twins the probes)."""
    j = run.jobs
    if j.empty:
        return set()
    integrity = set(j.loc[j["job_class"] == "integrity", "job"]) if "job_class" in j else set()
    return {x for x in set(j["job"]) if not x.endswith("+probe") and x not in integrity}


def candidate_disks(run):
    """The bounce-candidate disks that ran (not the within-boot ratios)."""
    disks = dict.fromkeys(run.jobs["disk"]) if not run.jobs.empty else {}
    return [d for d in disks if "/" not in str(d) and R.is_candidate(run, d)]


def _performance_jobs(run, rows):
    return sorted(set(rows["job"]) & performance_jobs(run))


def _interval(run):
    """The monitor interval meta.json recorded; never a default."""
    b = (run.meta or {}).get("guest_bounds")
    ms = b.get("mon_interval_ms") if isinstance(b, dict) else None
    return f"{ms} ms" if ms else "not recorded"
