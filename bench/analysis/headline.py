# SPDX-License-Identifier: GPL-2.0
"""The first screen of report.md and the figures behind its question.

  headline table  per bounce-candidate disk (its within-boot ratio first)
                  and performance job, what the series changed
                  (removed/baseline), what the copies cost (removed/bounce,
                  baseline/bounce), with CIs and relevance, beside the
                  bounce kernel's footprint and refusals, and under each
                  disk's jobs a row of its integrity jobs; a run
                  of several kernel versions asks the versions question
                  (versions_pairs). The I/O-size sweep's jobs (sweep.py)
                  are left to their own section.
  integrity       bad blocks of checked, per variant, disk and job, and
                  which kernel corrupts data: one sentence, on the first
                  screen and under the section's table
  what it costs   bounced bytes, the probes' timing of one bounced bio and
                  their own cost, lowmem held, and the bounce variant
                  against the others on each candidate disk

Every figure here is a median over the run's boots of a per-job value in
summary.csv; nothing is printed for a quantity the run did not measure.
Roles (which variant bounces, which disk is the bounce candidate) are
roles.py's answers.
"""
from collections import namedtuple

import numpy as np
import pandas as pd

from lab import labconf as L
from . import cells as C
from . import md
from . import metrics as M
from . import roles as R
from . import stats as S

Key = namedtuple("Key", "job pressure metric")


def _role_label(run, role):
    labels = run.labels_of(role)
    return labels[0] if labels else None


def question_jobs(run):
    """The unprobed performance jobs of the run: what verdicts and figures
    are about (integrity jobs measure data, probed twins the probes)."""
    return {j for j in run.performance_jobs if not C.is_probed(j)}



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


def _bad_of(bad, checked, sep=" / "):
    """"0 / 1024", or "**5** / 1024" when blocks went bad."""
    mark = "**" if bad else ""
    return f"{mark}{int(bad)}{mark}{sep}{int(checked)}"


def integrity_section(run):
    """Markdown lines: bad blocks / checked per variant and disk (one
    column per integrity job), and which variant corrupts data
    (integrity_line)."""
    tab = integrity_table(run)
    if tab.empty:
        return []
    jobs = sorted(set(tab["job"]))
    rows = []
    for (v, d), g in tab.groupby(["variant", "disk"], sort=True):
        cells = []
        for j in jobs:
            r = g[g["job"] == j]
            cells.append("" if r.empty else _bad_of(r["bad"].iloc[0], r["checked"].iloc[0]))
        b = g["bounces"]
        rows.append([v, d] + cells + ["no tracepoint" if not b.notna().any() else f"{int(b.sum())}"])
    return [md.table(["variant", "disk"] + [_short_job(j) for j in jobs] + ["bounced bios"], rows),
            "", "Cells: bad blocks / blocks read back from the device and checked "
            "(crc32c), summed over the run's boots.", integrity_line(run, tab)]


def integrity_line(run, tab=None):
    """One line: which kernel corrupted data, bad of checked blocks."""
    tab = integrity_table(run) if tab is None else tab
    if tab.empty:
        return "Integrity: no integrity job in this run."
    bad = tab[tab["bad"] > 0]
    if bad.empty:
        return f"Integrity: no kernel corrupted data (0 bad of {int(tab['checked'].sum())} blocks)."
    parts = []
    for v, g in bad.groupby("variant", sort=True):
        all_v = tab[tab["variant"] == v]
        per = ", ".join(f"{d}: {int(x['bad'].sum())} of {int(all_v[all_v['disk'] == d]['checked'].sum())}"
                        for d, x in g.groupby("disk", sort=True))
        parts.append(f"**{v} corrupts data** ({per} blocks bad)")
    clean = sorted(set(tab["variant"]) - set(bad["variant"]))
    return ("Integrity: " + "; ".join(parts) +
            (f"; no bad block on {', '.join(clean)}." if clean else "."))


def _integrity_cell(tab, disk):
    """The headline table's integrity cell of one disk."""
    if tab.empty:
        return ""
    tab = tab[tab["disk"] == disk]
    if tab.empty:
        return "not run"
    return "; ".join(sorted(f"{v} {_bad_of(g['bad'].sum(), g['checked'].sum(), ' of ')}"
                            for v, g in tab.groupby("variant", sort=False)))


def _integrity_row(tab, disk, width):
    """The headline table's row of a disk's integrity jobs: the cell is a
    sum over them, so it stands on a row of its own, never on a
    performance job's. None when the run had no integrity job."""
    cell = _integrity_cell(tab, disk)
    if not cell:
        return None
    n = tab[tab["disk"] == disk]["job"].nunique()
    jobs = f"its {n} integrity job{'s' if n != 1 else ''}, summed" if n else "integrity jobs"
    return ["", jobs, "bad of checked blocks"] + [""] * width + ["", cell]


# -- what the bounce costs --------------------------------------------------

def _probe_overhead(run, variant, disk):
    """IOPS(job+probe) / IOPS(job) of each boot and job on one disk."""
    t = run.tidy
    t = t[(t["variant"] == variant) & (t["disk"] == disk) &
          t["metric"].isin(["read_iops", "write_iops"])]
    probed = t[t["job"].map(C.is_probed)].copy()
    if probed.empty:
        return np.array([])
    probed["job"] = probed["job"].str[:-len(C.PROBED)]
    m = probed.merge(t, on=["boot", "job", "metric"], suffixes=("_p", "_u"))
    return (m["value_p"] / m["value_u"]).to_numpy(float) if len(m) else np.array([])


def cost_text(ratios):
    """The share of IOPS lost (1 - median ratio) in %, or "no difference,
    could detect ±X%" when the ratios' 95% CI of the median reaches 1 or
    the median is a gain: a cost is never printed below zero."""
    if not len(ratios):
        return None
    med, lo, hi = S.median_ci(ratios, seed=S.cell_seed("probe-cost", *ratios[:3]))
    if np.isfinite(lo) and np.isfinite(hi):
        noise = 100 * max(abs(1 - lo), abs(hi - 1))
        if lo <= 1 <= hi or med >= 1:
            return f"{S.NO_DIFFERENCE}, could detect ±{md.fmt(noise, 2)}%"
        return f"{md.fmt(100 * (1 - med), 2)}% (95% CI {md.fmt(100 * (1 - hi), 2)}–{md.fmt(100 * (1 - lo), 2)}%)"
    if med >= 1:
        return f"{S.NO_DIFFERENCE} (one boot)"
    return f"{md.fmt(100 * (1 - med), 2)}% (one boot)"


def cost_section(run, verdicts):
    """Markdown lines: bounced bytes, cost per bounced bio beside a plain
    memcpy, the probes' own cost, lowmem held, then a table of the bounce
    variant against the others (IOPS and CPU per GiB) on each bounce
    candidate and on its within-boot ratio to its control."""
    out = []
    bouncers = run.labels_of(R.BOUNCE)
    others = run.labels_of(R.REMOVED, R.BASELINE)
    disks = list(dict.fromkeys(run.tidy["disk"]))
    candidates = [d for d in disks if not C.is_ratio(d) and R.is_candidate(run, d)]
    jobs = run.jobs
    t = run.tidy
    for disk in candidates:
        for v in bouncers:
            bb = C.rows(t, "bounced_bytes_per_gib", v, disk)
            bb = bb[~bb["job"].map(C.is_probed)]
            if bb.empty or not (bb["value"] > 0).any():
                continue
            share = ", ".join(f"{j} {md.fmt(100 * g['value'].median() / (1 << 30))}%"
                              for j, g in bb.groupby("job", sort=True))
            out.append(f"- **{v} on {disk}**: bytes bounced per byte moved: {share}.")
            for job in sorted(set(C.rows(t, "bounce_submit_us_p50", v, disk)["job"])):
                j = jobs[(jobs["variant"] == v) & (jobs["disk"] == disk) & (jobs["job"] == job)]
                memcpy = float(j["memcpy_4k_us"].median()) if "memcpy_4k_us" in j else np.nan

                def med(metric):
                    return md.fmt(C.median(t, v, disk, job, metric))
                per_gib = C.median(t, v, disk, job, "bounce_us_per_gib")
                out.append(
                    f"  - {job}: **a bounced bio costs {med('bounce_submit_us_p50')} µs at "
                    f"submit (p99 {med('bounce_submit_us_p99')}) and "
                    f"{med('bounce_endio_us_p50')} µs at completion (p99 "
                    f"{med('bounce_endio_us_p99')})**, {md.fmt(per_gib / 1e6)} s per GiB; "
                    f"a plain 4 KiB memcpy: {md.fmt(memcpy)} µs in the same boots.")
            over = [(w, cost_text(_probe_overhead(run, w, disk))) for w in bouncers + others]
            over = [f"{w} {x}" for w, x in over if x]
            if over:
                out.append(f"  - the probes' own cost (IOPS lost with them on, same "
                           f"boot, median): {', '.join(over)}.")
            peak = C.median(t, v, disk, None, "bounce_pages_peak")
            mean = C.median(t, v, disk, None, "bounce_pages_mean")
            if np.isfinite(peak):
                out.append(f"  - lowmem held by bounce pages (exact, the kernel's count "
                           f"per job; median over jobs and boots): peak {md.fmt(peak)} "
                           f"pages ({md.fmt(peak * 4)} KiB), time-weighted mean "
                           f"{md.fmt(mean)} pages.")
                continue
            peak = C.median(t, v, disk, None, "bounce_gauge_pages_peak")
            mean = C.median(t, v, disk, None, "bounce_gauge_pages_mean")
            if np.isfinite(peak):
                out.append(f"  - lowmem held by bounce pages: peak {md.fmt(peak)}, mean "
                           f"{md.fmt(mean)} pages (Bounce: sampled, monitor interval "
                           f"{_interval(run)})"
                           f"{_unseen_note(run, disk, peak)}.")
    rows = []
    pairs = [(v, w) for v in bouncers for w in others]
    jobs = question_jobs(run)
    # the headline metrics that have a within-boot ratio
    metrics = [m for m in M.headlines(M.REPORT) if m in M.selected("ratio")]
    for disk in [d for d in disks if C.is_ratio(d)] + candidates:
        for metric in metrics:
            for job in sorted(set(C.rows(t, metric, disk=disk)["job"]) & jobs):
                got = [md.oriented(verdicts, metric, disk, job, None, w, v)
                       if verdicts is not None and not verdicts.empty else None
                       for v, w in pairs]
                if any(o is not None for o in got):
                    rows.append([disk, job, metric] +
                                ["" if o is None else md.verdict_cell(o) for o in got])
    if rows:
        out += ["", md.table(["disk", "job", "metric"] + [f"{w} / {v}" for v, w in pairs], rows)]
        out.append("")
        out.append("Ratios with their 95 % CI; A/B is the within-boot ratio "
                   "of a bounce candidate to its control (TCG's boot-to-boot speed "
                   "cancels in it).")
    return out


def _unseen_note(run, disk, peak):
    """Why a peak of 0 bounce pages is not "none held": on a one-vCPU
    clock (the exact one) the sampler only runs between I/Os, and a bounce
    page of a synchronous in-guest disk lives within one I/O."""
    if peak != 0 or disk not in run.exact_disks:
        return ""
    clock = run.disk_clocks.get(disk, "")
    return (f"; not seen, not absent: under the clock {clock} (one vCPU) the sampler "
            "runs only between I/Os; see a disk on host time for the footprint")


def _interval(run):
    """The monitor interval meta.json recorded; never a default."""
    ms = run.guest_bounds.get("mon_interval_ms")
    return f"{ms} ms" if ms else "not recorded"


# -- the headline table -----------------------------------------------------

def headline_pairs(run):
    """(numerator, denominator) of the headline columns: what the series
    changed for the kernel as shipped (removed/baseline), the copies it
    removed (removed/bounce) and the copies alone (baseline/bounce). A run
    of several kernel versions (./run.sh versions) asks the versions
    question instead: versions_pairs()."""
    if len(set(_versions(run).values())) > 1:
        return versions_pairs(run)
    rem, base, bnc = (_role_label(run, r) for r in (R.REMOVED, R.BASELINE, R.BOUNCE))
    pairs = [(rem, base), (rem, bnc), (base, bnc)]
    return [(a, b) for a, b in pairs if a and b]


def _versions(run):
    """{label: its kernel's release as a sortable tuple} of the run."""
    out = {}
    b = run.boots
    if "kernel_release" not in b:
        return out
    for label, rel in b[["variant", "kernel_release"]].dropna().drop_duplicates().itertuples(index=False):
        nums = tuple(int(x) for x in str(rel).split("-")[0].split(".") if x.isdigit())
        out.setdefault(label, nums[:2])
    return out


def versions_pairs(run):
    """The versions question's columns: in each version that has both,
    its baseline against its bounce variant (what the copies cost there:
    6.1/stock / 6.1/fixed, pre / pre-fixed); then each version's kernel as
    shipped (its baseline, else its only label: 5.10/stock bounces as
    shipped, 7.2/upstream has the series) against the one of the version
    before it, oldest first."""
    vers = _versions(run)
    labels = [l for l in dict.fromkeys(run.boots["variant"]) if l in vers]
    by_ver = {}
    for l in labels:
        by_ver.setdefault(vers[l], []).append(l)
    pairs, shipped = [], []
    for v in sorted(by_ver):
        roles = {R.variant_role(run, l): l for l in reversed(by_ver[v])}
        if R.BASELINE in roles and R.BOUNCE in roles:
            pairs.append((roles[R.BASELINE], roles[R.BOUNCE]))
        shipped.append(roles.get(R.BASELINE) or roles.get(R.REMOVED) or by_ver[v][0])
    pairs += [(new, old) for old, new in zip(shipped, shipped[1:])]
    return pairs


def _refusal(run, label, disk):
    """The reason a kernel refused a disk (its jobs were skipped), or None."""
    j = run.jobs
    sel = j[(j["variant"] == label) & (j["disk"] == disk) & (j["state"] == "skipped")]
    why = [r for r in sel["reason"].astype(str) if "refused" in r]
    return why[0] if why else None


def _footprint(run, disk, job, pressure):
    """The bounce kernel's exact bounce pages in flight, peak (median of
    boots), on a candidate disk and job."""
    bnc = _role_label(run, R.BOUNCE)
    if not bnc:
        return ""
    sel = C.rows(run.tidy, "bounce_pages_peak", bnc, disk, job, pressure)
    if sel.empty:
        sel = C.rows(run.tidy, "bounce_pages_peak", bnc, disk, job + C.PROBED, pressure)
    if sel.empty:
        return "not counted"
    peak = float(sel["value"].median())
    return f"{peak:.0f} ({peak * 4:.0f} KiB)" if peak >= 100 else f"{md.fmt(peak)} ({md.fmt(peak * 4)} KiB)"


def headline_table(run, verdicts):
    """Markdown lines: per bounce-candidate disk (its within-boot ratio to
    its control first) and primary job, the headline metrics' ratios,
    the bounce kernel's footprint, integrity and refusals. [] when the
    run has no candidate disk or no pair to show."""
    pairs = headline_pairs(run)
    cands = run.candidate_disks
    if verdicts is None or verdicts.empty or not pairs or not cands:
        return []
    disks = [d for d in dict.fromkeys(verdicts["disk"])
             if C.is_ratio(d) and C.first_disk(d) in cands]
    disks = sorted(disks) + sorted(cands)
    if len(set(_versions(run).values())) > 1:
        # the versions question: each pair on the control disk beside
        disks += [str(d).split("/")[1] for d in disks if C.is_ratio(d)]
    # the I/O-size sweep has a section of its own, below the first screen
    jobs = {j for j in question_jobs(run) if not run.sweep_shape(j)}
    integrity = integrity_table(run)
    heads = set(M.headlines(M.REPORT))
    levels = run.levels        # none first, then the mildest pressure
    rows, refused = [], {}
    for disk in disks:
        base_disk = C.first_disk(disk)
        v = verdicts[(verdicts["disk"] == disk) & verdicts["job"].isin(jobs) &
                     verdicts["primary"].astype(bool) & verdicts["metric"].isin(heads)]
        first = True
        keys = sorted(set(map(tuple, v[["job", "pressure", "metric"]].to_numpy())),
                      key=lambda k: (levels.index(k[1]) if k[1] in levels else len(levels),
                                     k[1], k[0], M.order(k[2])))
        for k in (Key(*k) for k in keys):
            cells = []
            for num, den in pairs:
                why = _refusal(run, num, base_disk) or _refusal(run, den, base_disk)
                if why:
                    refused[(num if _refusal(run, num, base_disk) else den, base_disk)] = why
                    cells.append("refused")
                    continue
                cells.append(md.verdict_cell(md.oriented(verdicts, k.metric, disk, k.job,
                                                        k.pressure, num, den)))
            where = k.job + ("" if k.pressure == L.NO_PRESSURE else f" ({k.pressure})")
            foot = (_footprint(run, base_disk, k.job, k.pressure)
                    if M.kind(k.metric) == M.THROUGHPUT else "")
            # the CPU row by its slot's short name: the label is a sentence
            name = "CPU per GiB" if M.kind(k.metric) == M.COST else M.label(k.metric)
            shown = disk if R.is_candidate(run, base_disk) else f"{disk} (control)"
            rows.append([shown if first else "", where, name] + cells + [foot, ""])
            first = False
        row = (None if first or C.is_ratio(disk) else
               _integrity_row(integrity, base_disk, len(pairs)))
        if row:
            rows.append(row)
    if not rows:
        return []
    bnc = _role_label(run, R.BOUNCE) or "bounce kernel"
    out = [md.table(["disk", "job", "metric"] + [f"{a}/{b}" for a, b in pairs] +
                    [f"{bnc} bounce pages, peak", "integrity: bad of checked blocks"], rows)]
    thr = sorted({md.fmt(x) for x in verdicts.get("min_effect_pct", [])}) or ["1"]
    out += ["", f"B/A ratio of geometric means (95% CI). **Bold**: relevant, i.e. significant "
            f"(Benjamini-Hochberg) and at least {'/'.join(thr)}% (the smallest effect of "
            "interest, bench/analyze --min-effect); \"negligible\": significant, smaller. "
            "A/B disks: the within-boot ratio to the control disk (TCG's speed cancels)."]
    for (label, disk), why in sorted(refused.items()):
        out.append(f"Refused: {label} on {disk}: {why}.")
    return out


