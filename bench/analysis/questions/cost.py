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

from lab import labconf as L
from .. import cells as C
from .. import md
from .. import metrics as M
from .. import roles as R
from .. import stats as S
from .. import plots as P
from .. import tidy as T
from lab import jobname as J
from .integrity import integrity_row, integrity_table

Key = namedtuple("Key", "job pressure metric")


def _role_label(run, role):
    labels = run.labels_of(role)
    return labels[0] if labels else None


# -- data integrity ---------------------------------------------------------


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
                           f"{interval(run)})"
                           f"{unseen_note(run, disk, peak)}.")
    rows = []
    pairs = [(v, w) for v in bouncers for w in others]
    jobs = run.question_jobs
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


def unseen_note(run, disk, peak):
    """Why a peak of 0 bounce pages is not "none held": on a one-vCPU
    clock (the exact one) the sampler only runs between I/Os, and a bounce
    page of a synchronous in-guest disk lives within one I/O."""
    if peak != 0 or disk not in run.exact_disks:
        return ""
    clock = run.disk_clocks.get(disk, "")
    return (f"; not seen, not absent: under the clock {clock} (one vCPU) the sampler "
            "runs only between I/Os; see a disk on host time for the footprint")


def interval(run):
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
    jobs = {j for j in run.question_jobs if not run.sweep_shape(j)}
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
               integrity_row(integrity, base_disk, len(pairs)))
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


PX_PER_FOREST_ROW = 16


# The forest's title (four lines) and x axis.
FOREST_HEAD_PX = 170


# A forest a reader reads in a minute: the first screen's rows, at most
# this many (the largest effects; tables.md has every row).
MAX_FOREST_ROWS = 30


# The bar figures: (file-name prefix, metric), from the registry's "plot"
# flag; --all-plots adds the latency tails.
BAR_METRICS = [("throughput", m) for m in M.selected("plot")]


ALL_BAR_METRICS = BAR_METRICS + [("latency", "read_lat_p99_us"),
                                 ("latency", "write_lat_p99_us")]


def _tail_direction(run, disk, job):
    """The direction of a job's primary latency tail ("read"/"write")."""
    present = set(run.tidy.loc[(run.tidy["disk"] == disk) & (run.tidy["job"] == job), "metric"])
    m = M.primary_metrics(job, present).get("latency tail", "")
    return m.split("_")[0] if m else None


def latency_curves(run, p, everything=False):
    """One figure per disk/job/pressure/direction, variants overlaid; by
    default only the primary jobs of the bounce-candidate disks, in the
    direction of their latency tail, but the I/O-size sweep's (its own
    figure, sweep())."""
    curves = run.percentiles
    if curves.empty:
        return
    if not everything:
        jobs = {j for j in run.question_jobs if not run.sweep_shape(j)}
        keep = [d in run.candidate_disks and j in jobs and dr == _tail_direction(run, d, j)
                for d, j, dr in zip(curves["disk"], curves["job"], curves["direction"])]
        curves = curves[keep]
    _, order = P.variant_index(run)
    ktitle = T.kernel_title(run)
    for (disk, job, pressure, d), g in curves.groupby(
            ["disk", "job", "pressure", "direction"], sort=True):
        blocks = []
        for v in [v for v in order if v in set(g["variant"])]:
            gv = g[(g["variant"] == v) & (g["percentile"] < 100)]
            n = gv["boot"].nunique()
            med = gv.groupby("percentile")["clat_us"].median().sort_index()
            rows = [f"{pc:g} {-np.log10(1 - pc / 100):.6g} {val:.6g}"
                    for pc, val in med.items()]
            blocks.append(P.q(f"{v} (n={n})") + "\n" + "\n".join(rows))
        name = P.slug("percentiles", disk, job, pressure, d)
        title = (f"{d} completion latency percentiles, median of runs\n"
                 f"{ktitle}; disk {disk}, job {job}, pressure {pressure}; "
                 f"variants {', '.join(v for v in order if v in set(g['variant']))}")
        p.render("latency-percentiles", name, "\n\n\n".join(blocks) + "\n",
                 dict(nblocks=len(blocks), title=title, direction=d),
                 f"{d} latency percentiles: {disk}, {job}, pressure {pressure}",
                 "latency percentiles")


def metric_bars(run, verdicts, p, prefix, metric, everything=False):
    """One figure per disk (disks differ by orders of magnitude, so they
    never share an axis); by default only the bounce-candidate disks and
    their within-boot ratios, without the I/O-size sweep's jobs (their
    IOPS span three orders of magnitude; its own figure, sweep())."""
    t = run.tidy[run.tidy["metric"] == metric]
    disks = sorted(set(t["disk"]))
    if not everything:
        t = t[[not run.sweep_shape(j) for j in t["job"]]]
        cand = run.candidate_disks
        disks = [d for d in disks if d in cand or str(d).split("/")[0] in cand]
    for disk in disks:
        _metric_bars(run, verdicts, p, prefix, metric, t[t["disk"] == disk], disk)


def _metric_bars(run, verdicts, p, prefix, metric, t, disk_name):
    """Median per variant and cell with CI whiskers, every rep as a point
    and significance marks."""
    if t.empty:
        return
    points = []
    vindex, order = P.variant_index(run)
    variants = [v for v in order if v in set(t["variant"])]
    cells = sorted({(r.disk, r.job, r.pressure) for r in t.itertuples()})
    nv = len(variants)
    blocks = {v: [] for v in variants}
    ticks = []
    for ci, (disk, job, pressure) in enumerate(cells):
        x0 = ci * (nv + 1)
        ticks.append(f"{x0 + (nv - 1) / 2:g} " + P.q(P.lines(disk, job, f"pressure {pressure}")))
        cell = t[(t["disk"] == disk) & (t["job"] == job) & (t["pressure"] == pressure)]
        present = [v for v in variants if v in set(cell["variant"])]
        base = present[0] if present else None
        for vi, v in enumerate(variants):
            vals = cell[cell["variant"] == v]["value"].to_numpy()
            if not len(vals):
                continue
            points += [f"{x0 + vi:g} {P.num(x)}" for x in vals]
            med, lo, hi = S.median_ci(vals, seed=S.cell_seed(metric, disk, job, pressure, v))
            mark = ""
            if v != base:
                row = verdicts[(verdicts["metric"] == metric) & (verdicts["disk"] == disk) &
                               (verdicts["job"] == job) & (verdicts["pressure"] == pressure) &
                               (verdicts["a"] == base) & (verdicts["b"] == v)]
                if len(row) and S.is_relevant(row.iloc[0].get("relevance", "")):
                    mark = "*"
            top = hi if np.isfinite(hi) else med
            blocks[v].append(f"{x0 + vi:g} {P.num(med)} {P.num(lo)} {P.num(hi)} "
                             f"{P.num(top)} {P.q(mark)}")
    parts = [P.q(f"{v}") + "\n" + "\n".join(rows) for v, rows in blocks.items() if rows]
    colors = " ".join(str(vindex[v]) for v, rows in blocks.items() if rows)
    nblocks = len(parts)
    parts.append(P.q("ticks") + "\n" + "\n".join(ticks))
    parts.append(P.q("reps") + "\n" + "\n".join(points))
    name = P.slug(prefix, metric, disk_name)
    unit = M.unit(metric)
    title = (f"{M.label(metric)} on {disk_name}: median per variant with 95% bootstrap CI, "
             f"dots: each rep\n{T.kernel_title(run)}; variants {', '.join(variants)}")
    foot = ("* = relevant against the first variant of the group (BH-adjusted "
            "permutation test, at least the smallest effect of interest); "
            "no whisker = fewer than 2 runs")
    p.render("bars", name, "\n\n\n".join(parts) + "\n",
             dict(nblocks=nblocks, title=title, ylabel=f"{M.label(metric)} ({unit})",
                  footnote=foot, colors=colors,
                  xmax=(len(cells) - 1) * (nv + 1) + nv - 1),
             f"{M.label(metric)} per variant on {disk_name}", prefix,
             width=len(cells) * max(P.PX_PER_LABEL, 30 * (nv + 1)) + 200)


def bounced_bytes(run, p):
    """Bounced MiB per GiB moved, median and 95 % CI over boots, for every
    variant/disk/job the block_bio_bounce trigger counted on a
    bounce-candidate disk (the sweep's jobs have their own figure). A
    cell it did not count (an unprobed twin, a kernel without the
    tracepoint) has no bar: the report's tables say which; no figure
    when nothing was counted."""
    vindex, order = P.variant_index(run)
    t = run.tidy[run.tidy["metric"] == "bounced_bytes_per_gib"]
    t = t[t["disk"].isin(run.candidate_disks) & ~t["job"].map(J.is_sweep).astype(bool)]
    keys = sorted({(r.variant, r.disk, r.job, r.pressure) for r in t.itertuples()},
                  key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1:]))
    if not keys:
        return
    rows = []
    for x, (v, disk, job, pressure) in enumerate(keys):
        vals = t[(t["variant"] == v) & (t["disk"] == disk) & (t["job"] == job) &
                 (t["pressure"] == pressure)]["value"].to_numpy() / (1 << 20)
        med, lo, hi = S.median_ci(vals, seed=S.cell_seed("bb", v, disk, job, pressure))
        top = hi if np.isfinite(hi) else med
        rows.append(f"{x} {P.num(med)} {P.num(lo)} {P.num(hi)} {vindex.get(v, 1)} "
                    f"{P.num(top)} {P.q(f'{med:.0f} (n {len(vals)})')} " +
                    P.q(P.lines(v, disk, job, f"pressure {pressure}")))
    title = ("Bounced MiB per GiB moved (block_bio_bounce hist): median and 95 % CI over "
             f"boots, n per bar\n{T.kernel_title(run)}")
    p.render("bounced-bytes", "bounced-bytes", "\n".join(rows) + "\n",
             dict(title=title, nbars=len(rows)), "bounced bytes per GiB moved", "bounces",
             width=len(rows) * (P.PX_PER_LABEL + 30) + 150)


def forest_rows(run, verdicts):
    """The primary rows of the performance jobs (no integrity job, no
    probed twin) that have a ratio, but the split halves (a label against
    itself: the controls line counts them)."""
    jobs = run.question_jobs
    r = verdicts["ratio"].astype(float)
    return verdicts[verdicts["primary"].astype(bool) & verdicts["job"].isin(jobs) &
                    np.isfinite(r) & (r > 0) & ~S.is_split(verdicts)]


def headline_rows(run, rows):
    """(rows the forest draws, how many it leaves to tables.md): the
    first screen's rows, those of a bounce-candidate disk or its
    within-boot ratio, no control and no sweep job (the sweep has its own
    figure), the largest effects first when there are more than
    MAX_FOREST_ROWS."""
    sweep = np.array([J.is_sweep(j) for j in rows["job"]], dtype=bool)
    cand = run.candidate_disks
    first = np.array([str(d).split("/")[0] in cand for d in rows["disk"]], dtype=bool)
    keep = rows[~rows["control"].astype(bool) & ~sweep & first]
    if len(keep) > MAX_FOREST_ROWS:
        size = np.abs(np.log(keep["ratio"].astype(float)))
        keep = keep.loc[size.sort_values(ascending=False, kind="stable").index[:MAX_FOREST_ROWS]]
    return keep, len(rows) - len(keep)


def _fitted_range(rows):
    """An x range around the ratios and their finite CI bounds, with 1."""
    vals = [1.0] + list(rows["ratio"].astype(float))
    for c in ("ci_low", "ci_high"):
        x = rows[c].astype(float)
        vals += list(x[np.isfinite(x) & (x > 0)])
    lo, hi = min(vals), max(vals)
    pad = max(hi - lo, 0.01) * 0.06
    return max(lo - pad, 0.0), hi + pad


def forest(run, verdicts, p):
    """One forest plot per primary slot: ratio and 95 % CI of each row of
    the first screen (_headline_rows: no control, no sweep, at most
    MAX_FOREST_ROWS), sorted by disk then effect, each label with n per
    kernel; relevant rows red; a linear x axis fitted to the rows that
    have a CI. The controls and the rows left out are counted in the
    title (tables.md has them all)."""
    if verdicts.empty:
        return
    prim = forest_rows(run, verdicts)
    for slot in M.PRIMARY_SLOTS:
        every = prim[prim["slot"] == slot]
        rows, left = headline_rows(run, every)
        if rows.empty:
            continue
        rows = rows.assign(_r=rows["ratio"].astype(float))
        rows = rows.sort_values(["disk", "_r", "job", "pressure", "a", "b"], kind="stable")
        # a ratio without a CI (too few reps) must not stretch the axis
        has_ci = np.isfinite(rows["ci_low"].astype(float)) & np.isfinite(
            rows["ci_high"].astype(float))
        xmin, xmax = _fitted_range(rows[has_ci] if has_ci.any() else rows)
        lines = []
        for y, r in enumerate(rows.itertuples()):
            color = 2 if S.is_relevant(getattr(r, "relevance", "")) else 1
            lo = r.ci_low if np.isfinite(r.ci_low) and r.ci_low > 0 else np.nan
            hi = r.ci_high if np.isfinite(r.ci_high) else np.nan
            ratio = min(max(r.ratio, xmin), xmax)
            label = (f"{r.disk} {r.job}" + ("" if r.pressure == "none" else f" {r.pressure}") +
                     f": {r.b}/{r.a} (n {r.n_b}/{r.n_a})" +
                     ("" if np.isfinite(lo) and np.isfinite(hi) else
                      f", no CI, ratio {r.ratio:.3g}"))
            lines.append(f"{y} {P.num(ratio)} {P.num(lo)} {P.num(hi)} {color} {P.q(label)}")
        metrics = ", ".join(dict.fromkeys(M.label(m) for m in rows["metric"]))
        controls = every[every["control"].astype(bool)]
        ctl_rel = int(controls["relevance"].map(S.is_relevant).sum()) if len(controls) else 0
        title = (f"{slot} ({metrics}): ratio B/A of geometric means, 95 % CI\n"
                 f"{T.kernel_title(run)}; n: boots B/A\n"
                 "red: relevant (significant, at least the smallest effect of interest)\n"
                 f"controls: {len(controls)} rows, {ctl_rel} relevant; {left} more rows "
                 "(controls, control disks, sweep) in tables.md")
        p.render("forest", P.slug("forest", slot), "\n".join(lines) + "\n",
                 dict(title=title, nrows=len(lines), xmin=round(xmin, 6), xmax=round(xmax, 6)),
                 f"forest plot: {slot}", "forest",
                 height=FOREST_HEAD_PX + PX_PER_FOREST_ROW * len(lines))


TITLE = "What a bounce costs"


def first_screen(run, verdicts):
    return headline_table(run, verdicts)


def section(run, verdicts):
    return cost_section(run, verdicts)


def figures(run, verdicts, p, everything):
    forest(run, verdicts, p)
    for prefix, metric in ALL_BAR_METRICS if everything else BAR_METRICS:
        metric_bars(run, verdicts, p, prefix, metric, everything)
    latency_curves(run, p, everything)
    bounced_bytes(run, p)
