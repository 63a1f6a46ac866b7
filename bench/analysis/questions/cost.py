# SPDX-License-Identifier: GPL-2.0
"""What a bounce costs. first_screen: the headline table, per candidate
disk (its within-boot ratio first) and job, the headline pairs' ratios
beside the bounce kernel's footprint, refusals and integrity (not the
sweep's jobs: sweep.py). section: bounced bytes, the probes' timing and
own cost, lowmem held. figures: forest, bars, latency, bounced bytes.
"""
import numpy as np

from lab import jobname as J, labconf as L
from .. import cells as C, md, metrics as M, plots as P, roles as R, stats as S, tidy as T
from .counted import job_median
from .integrity import integrity_rows, integrity_table

TITLE = "What a bounce costs"


def _role_label(run, role):
    return next(iter(run.labels_of(role)), None)


def _probe_overhead(run, variant, disk):
    """IOPS(job+probe) / IOPS(job) of each boot and job on one disk."""
    t = C.rows(run.tidy, None, variant, disk)
    t = t[t["metric"].isin(["read_iops", "write_iops"])]
    probed = t[t["job"].map(C.is_probed).astype(bool)].copy()
    probed["job"] = probed["job"].str[:-len(C.PROBED)]
    m = probed.merge(t, on=["boot", "job", "metric"], suffixes=("_p", "_u"))
    return (m["value_p"] / m["value_u"]).to_numpy(float)


def cost_text(ratios):
    """The share of IOPS lost (1 - median ratio) in %; never below zero:
    "no difference, could detect ±X%" when the CI reaches 1 or a gain."""
    if not len(ratios):
        return None
    med, lo, hi = S.median_ci(ratios, seed=S.cell_seed("probe-cost", *ratios[:3]))
    if np.isfinite(lo) and np.isfinite(hi):
        noise = 100 * max(abs(1 - lo), abs(hi - 1))
        if lo <= 1 <= hi or med >= 1:
            return f"{S.NO_DIFFERENCE}, could detect ±{md.fmt(noise, 2)}%"
        return (f"{md.fmt(100 * (1 - med), 2)}% (95% CI {md.fmt(100 * (1 - hi), 2)}–"
                f"{md.fmt(100 * (1 - lo), 2)}%)")
    if med >= 1:
        return f"{S.NO_DIFFERENCE} (one boot)"
    return f"{md.fmt(100 * (1 - med), 2)}% (one boot)"


def _lowmem_lines(run, v, disk):
    """Lowmem held by v's bounce pages: the exact count, else the sampled gauge."""
    def med(metric):
        return C.median(run.tidy, v, disk, None, metric)
    peak, mean = med("bounce_pages_peak"), med("bounce_pages_mean")
    if np.isfinite(peak):
        return [f"  - lowmem held by bounce pages (exact, the kernel's count per job; "
                f"median over jobs and boots): peak {md.fmt(peak)} pages "
                f"({md.fmt(peak * 4)} KiB), time-weighted mean {md.fmt(mean)} pages."]
    peak, mean = med("bounce_gauge_pages_peak"), med("bounce_gauge_pages_mean")
    if np.isfinite(peak):
        return [f"  - lowmem held by bounce pages: peak {md.fmt(peak)}, mean "
                f"{md.fmt(mean)} pages (Bounce: sampled, monitor interval "
                f"{interval(run)}){unseen_note(run, disk, peak)}."]
    return []


def _bounce_lines(run, v, disk, labels):
    """Bounced bytes, a bounced bio's probed timing, the probes' own cost
    (on labels) and lowmem held, of bounce variant v on a candidate disk."""
    t = run.tidy
    bb = C.rows(t, "bounced_bytes_per_gib", v, disk)
    bb = bb[~bb["job"].map(C.is_probed)]
    if bb.empty or not (bb["value"] > 0).any():
        return []
    share = ", ".join(f"{j} {md.fmt(100 * g['value'].median() / (1 << 30))}%"
                      for j, g in bb.groupby("job", sort=True))
    out = [f"- **{v} on {disk}**: bytes bounced per byte moved: {share}."]
    for job in sorted(set(C.rows(t, "bounce_submit_us_p50", v, disk)["job"])):
        def med(metric):
            return md.fmt(C.median(t, v, disk, job, metric))
        per_gib = C.median(t, v, disk, job, "bounce_us_per_gib")
        memcpy = job_median(run, "memcpy_4k_us", v, disk, job)
        out.append(
            f"  - {job}: **a bounced bio costs {med('bounce_submit_us_p50')} µs at "
            f"submit (p99 {med('bounce_submit_us_p99')}) and "
            f"{med('bounce_endio_us_p50')} µs at completion (p99 "
            f"{med('bounce_endio_us_p99')})**, {md.fmt(per_gib / 1e6)} s per GiB; "
            f"a plain 4 KiB memcpy: {md.fmt(memcpy)} µs in the same boots.")
    over = [(w, cost_text(_probe_overhead(run, w, disk))) for w in labels]
    over = [f"{w} {x}" for w, x in over if x]
    if over:
        out.append(f"  - the probes' own cost (IOPS lost with them on, same "
                   f"boot, median): {', '.join(over)}.")
    return out + _lowmem_lines(run, v, disk)


def section(run, verdicts):
    """_bounce_lines, then the bounce variant against the others (the
    headline metrics with a within-boot ratio) on each candidate disk."""
    bouncers, others = run.labels_of(R.BOUNCE), run.labels_of(R.REMOVED, R.BASELINE)
    t = run.tidy
    cands = [d for d in dict.fromkeys(t["disk"]) if d in run.candidate_disks]
    ratios = [d for d in dict.fromkeys(t["disk"]) if C.is_ratio(d)]
    out = [line for disk in cands for v in bouncers
           for line in _bounce_lines(run, v, disk, bouncers + others)]
    pairs = [(v, w) for v in bouncers for w in others]
    metrics = [m for m in M.headlines(M.REPORT) if m in M.selected("ratio")]
    rows = []
    if verdicts is not None and not verdicts.empty:
        for disk in ratios + cands:
            for metric in metrics:
                for job in sorted(set(C.rows(t, metric, disk=disk)["job"]) & run.question_jobs):
                    got = [md.oriented(verdicts, metric, disk, job, None, w, v)
                           for v, w in pairs]
                    if any(o is not None for o in got):
                        rows.append([disk, job, metric] +
                                    ["" if o is None else md.verdict_cell(o) for o in got])
    if rows:
        out += ["", md.table(["disk", "job", "metric"] + [f"{w} / {v}" for v, w in pairs], rows),
                "", "Ratios with their 95 % CI; A/B is the within-boot ratio "
                "of a bounce candidate to its control (TCG's boot-to-boot speed "
                "cancels in it)."]
    return out


def unseen_note(run, disk, peak):
    """Why a peak of 0 sampled pages on a one-vCPU clock is not "none held"."""
    if peak != 0 or disk not in run.exact_disks:
        return ""
    clock = run.disk_clocks.get(disk, "")
    return (f"; not seen, not absent: under the clock {clock} (one vCPU) the sampler "
            "runs only between I/Os; see a disk on host time for the footprint")


def interval(run):
    """The monitor interval meta.json recorded; never a default."""
    ms = run.guest_bounds.get("mon_interval_ms")
    return f"{ms} ms" if ms else "not recorded"


def headline_pairs(run):
    """(numerator, denominator) of the headline columns; a run of several
    kernel versions asks versions_pairs."""
    if len(set(_versions(run).values())) > 1:
        return versions_pairs(run)
    rem, base, bnc = (_role_label(run, r) for r in (R.REMOVED, R.BASELINE, R.BOUNCE))
    return [(a, b) for a, b in [(rem, base), (rem, bnc), (base, bnc)] if a and b]


def _versions(run):
    """{label: its kernel's release as a sortable tuple} of the run."""
    if "kernel_release" not in run.boots:
        return {}
    rels = run.boots[["variant", "kernel_release"]].dropna().drop_duplicates("variant")
    return {label: tuple(int(x) for x in str(rel).split("-")[0].split(".") if x.isdigit())[:2]
            for label, rel in rels.itertuples(index=False)}


def versions_pairs(run):
    """In each version that has both, its baseline against its bounce
    variant; then each version's kernel as shipped (its baseline, else its
    removed, else its only label) against the one before it, oldest first."""
    vers = _versions(run)
    by_ver = {}
    for label in dict.fromkeys(run.boots["variant"]):
        if label in vers:
            by_ver.setdefault(vers[label], []).append(label)
    pairs, shipped = [], []
    for v in sorted(by_ver):
        roles = {R.variant_role(run, label): label for label in reversed(by_ver[v])}
        if R.BASELINE in roles and R.BOUNCE in roles:
            pairs.append((roles[R.BASELINE], roles[R.BOUNCE]))
        shipped.append(roles.get(R.BASELINE) or roles.get(R.REMOVED) or by_ver[v][0])
    return pairs + [(new, old) for old, new in zip(shipped, shipped[1:])]


def _footprint(run, disk, job, pressure):
    """The bounce kernel's exact bounce pages in flight, peak (median of boots)."""
    bnc = _role_label(run, R.BOUNCE)
    if not bnc:
        return ""
    for name in (job, job + C.PROBED):
        sel = C.rows(run.tidy, "bounce_pages_peak", bnc, disk, name, pressure)
        if len(sel):
            peak = float(sel["value"].median())
            show = "{:.0f}".format if peak >= 100 else md.fmt
            return f"{show(peak)} ({show(peak * 4)} KiB)"
    return "not counted"


def first_screen(run, verdicts):
    """The headline table's lines; [] without a candidate disk or a pair."""
    pairs = headline_pairs(run)
    cands = run.candidate_disks
    if verdicts is None or verdicts.empty or not pairs or not cands:
        return []
    disks = sorted({d for d in verdicts["disk"] if C.is_ratio(d) and C.first_disk(d) in cands})
    disks += sorted(cands)
    if len(set(_versions(run).values())) > 1:
        # the versions question: each pair on the control disk beside
        disks += [str(d).split("/")[1] for d in disks if C.is_ratio(d)]
    integrity = integrity_table(run)
    prim = verdicts[verdicts["job"].isin(_headline_jobs(run)) & verdicts["primary"].astype(bool) &
                    verdicts["metric"].isin(set(M.headlines(M.REPORT)))]
    levels, j = run.levels, run.jobs
    j = j[(j["state"] == "skipped") & j["reason"].astype(str).str.contains("refused", regex=False)]
    j = j.drop_duplicates(["variant", "disk"])
    refusals = dict(zip(zip(j["variant"], j["disk"]), j["reason"].astype(str)))
    rows, refused = [], {}
    for disk in disks:
        base_disk = C.first_disk(disk)
        v = prim[prim["disk"] == disk]
        keys = sorted(set(map(tuple, v[["job", "pressure", "metric"]].to_numpy())),
                      key=lambda k: (levels.index(k[1]) if k[1] in levels else len(levels),
                                     k[1], k[0], M.order(k[2])))
        # per pair, the first of its kernels that refused the disk
        who = [next((x for x in pair if (x, base_disk) in refusals), None) for pair in pairs]
        if keys:
            refused.update({(w, base_disk): refusals[(w, base_disk)] for w in who if w})
        shown = disk if base_disk in cands else f"{disk} (control)"
        for i, (job, pressure, metric) in enumerate(keys):
            cells = ["refused" if w else md.verdict_cell(
                md.oriented(verdicts, metric, disk, job, pressure, *pair))
                for w, pair in zip(who, pairs)]
            where = job + ("" if pressure == L.NO_PRESSURE else f" ({pressure})")
            foot = (_footprint(run, base_disk, job, pressure)
                    if M.kind(metric) == M.THROUGHPUT else "")
            # the CPU row by its slot's short name: the label is a sentence
            name = "CPU per GiB" if M.kind(metric) == M.COST else M.label(metric)
            rows.append([shown if i == 0 else "", where, name] + cells + [foot, ""])
        if keys and not C.is_ratio(disk):
            rows += integrity_rows(integrity, base_disk, len(pairs))
    if not rows:
        return []
    bnc = _role_label(run, R.BOUNCE) or "bounce kernel"
    thr = sorted({md.fmt(x) for x in verdicts.get("min_effect_pct", [])}) or ["1"]
    out = [md.table(["disk", "job", "metric"] + [f"{a}/{b}" for a, b in pairs] +
                    [f"{bnc} bounce pages, peak", "integrity: bad of checked blocks"], rows),
           "", f"B/A ratio of geometric means (95% CI). **Bold**: relevant, i.e. significant "
           f"(Benjamini-Hochberg) and at least {'/'.join(thr)}% (the smallest effect of "
           "interest, bench/analyze --min-effect); \"negligible\": significant, smaller. "
           "A/B disks: the within-boot ratio to the control disk (TCG's speed cancels)."]
    return out + [f"Refused: {label} on {disk}: {why}." for (label, disk), why
                  in sorted(refused.items())]


PX_PER_FOREST_ROW = 16
FOREST_HEAD_PX = 170    # the forest's title (four lines) and x axis
MAX_FOREST_ROWS = 30    # a forest read in a minute: the largest effects
# The bar figures: (file-name prefix, metric); --all-plots adds the tails.
BAR_METRICS = [("throughput", m) for m in M.selected("plot")]
ALL_BAR_METRICS = BAR_METRICS + [("latency", "read_lat_p99_us"),
                                 ("latency", "write_lat_p99_us")]


def _data(blocks):
    """A gnuplot data file of named blocks [(name, rows)]."""
    return "\n\n\n".join(P.q(name) + "\n" + "\n".join(rows) for name, rows in blocks) + "\n"


def _median_ci(vals, *seed):
    """Median, 95 % CI and the top of its whisker, over boots."""
    med, lo, hi = S.median_ci(vals, seed=S.cell_seed(*seed))
    return med, lo, hi, hi if np.isfinite(hi) else med


def _headline_jobs(run):
    """The question's jobs of the headline: not the sweep's (sweep.py)."""
    return {j for j in run.question_jobs if not run.sweep_shape(j)}


def latency_curves(run, p, everything=False):
    """One figure per disk/job/pressure/direction, variants overlaid;
    by default only the candidate disks' primary jobs in the direction
    of their latency tail, the sweep's left to sweep.py."""
    curves = run.percentiles
    if curves.empty:
        return
    if not everything:
        jobs = _headline_jobs(run)

        def tail(d, j):
            """The direction ("read"/"write") of the job's primary latency tail."""
            present = C.rows(run.tidy, disk=d, job=j)["metric"]
            return M.primary_metrics(j, present).get("latency tail", "").split("_")[0] or None
        # once a job, not once a curve point: each asks the whole tidy table
        tails = {(d, j): tail(d, j) for d, j in set(zip(curves["disk"], curves["job"]))
                 if d in run.candidate_disks and j in jobs}
        curves = curves[[tails.get((d, j)) == dr for d, j, dr in
                         zip(curves["disk"], curves["job"], curves["direction"])]]
    for (disk, job, pressure, d), g in curves.groupby(
            ["disk", "job", "pressure", "direction"], sort=True):
        variants = [v for v in run.labels if v in set(g["variant"])]
        blocks = []
        for v in variants:
            gv = g[(g["variant"] == v) & (g["percentile"] < 100)]
            med = gv.groupby("percentile")["clat_us"].median().sort_index()
            blocks.append((f"{v} (n={gv['boot'].nunique()})",
                           [f"{pc:g} {-np.log10(1 - pc / 100):.6g} {val:.6g}"
                            for pc, val in med.items()]))
        title = (f"{d} completion latency percentiles, median of runs\n"
                 f"{T.kernel_title(run)}; disk {disk}, job {job}, pressure {pressure}; "
                 f"variants {', '.join(variants)}")
        p.render("latency-percentiles", P.slug("percentiles", disk, job, pressure, d),
                 _data(blocks), dict(nblocks=len(blocks), title=title, direction=d),
                 f"{d} latency percentiles: {disk}, {job}, pressure {pressure}",
                 "latency percentiles")


def _relevant_mark(verdicts, metric, cell, base, v):
    """"*" when v is relevant against base in the cell (disk, job, pressure)."""
    row = C.rows(verdicts, metric, None, *cell)
    row = row[(row["a"] == base) & (row["b"] == v)]
    return "*" if len(row) and S.is_relevant(row.iloc[0].get("relevance", "")) else ""


def metric_bars(run, verdicts, p, prefix, metric, everything=False):
    """One figure per disk (disks never share an axis): median per variant
    and cell with CI whiskers, reps and relevance marks; by default only the
    candidate disks and their within-boot ratios, not the sweep's jobs."""
    t = run.tidy[run.tidy["metric"] == metric]
    if not everything:
        # a mask, never a list: t[[]] of a metric no job has would pick columns
        t = t[np.array([not run.sweep_shape(j) and C.first_disk(d) in run.candidate_disks
                        for j, d in zip(t["job"], t["disk"])], dtype=bool)]
    vindex, order = P.variant_index(run)
    for disk_name in sorted(set(t["disk"])):
        td = t[t["disk"] == disk_name]
        variants = [v for v in order if v in set(td["variant"])]
        cells = sorted({(r.disk, r.job, r.pressure) for r in td.itertuples()})
        nv = len(variants)
        blocks = {v: [] for v in variants}
        ticks, points = [], []
        for ci, cell in enumerate(cells):
            x0 = ci * (nv + 1)
            ticks.append(f"{x0 + (nv - 1) / 2:g} " +
                         P.q(P.lines(cell[0], cell[1], f"pressure {cell[2]}")))
            rows = C.rows(td, None, None, *cell)
            base = next((v for v in variants if v in set(rows["variant"])), None)
            for vi, v in enumerate(variants):
                vals = rows[rows["variant"] == v]["value"].to_numpy()
                if not len(vals):
                    continue
                points += [f"{x0 + vi:g} {P.num(x)}" for x in vals]
                med, lo, hi, top = _median_ci(vals, metric, *cell, v)
                mark = "" if v == base else _relevant_mark(verdicts, metric, cell, base, v)
                blocks[v].append(f"{x0 + vi:g} {P.num(med)} {P.num(lo)} {P.num(hi)} "
                                 f"{P.num(top)} {P.q(mark)}")
        drawn = [(v, rows) for v, rows in blocks.items() if rows]
        title = (f"{M.label(metric)} on {disk_name}: median per variant with 95% bootstrap CI, "
                 f"dots: each rep\n{T.kernel_title(run)}; variants {', '.join(variants)}")
        foot = ("* = relevant against the first variant of the group (BH-adjusted "
                "permutation test, at least the smallest effect of interest); "
                "no whisker = fewer than 2 runs")
        p.render("bars", P.slug(prefix, metric, disk_name),
                 _data(drawn + [("ticks", ticks), ("reps", points)]),
                 dict(nblocks=len(drawn), title=title,
                      ylabel=f"{M.label(metric)} ({M.unit(metric)})", footnote=foot,
                      colors=" ".join(str(vindex[v]) for v, _ in drawn),
                      xmax=(len(cells) - 1) * (nv + 1) + nv - 1),
                 f"{M.label(metric)} per variant on {disk_name}", prefix,
                 width=len(cells) * max(P.PX_PER_LABEL, 30 * (nv + 1)) + 200)


def bounced_bytes(run, p):
    """Bounced MiB per GiB moved, median and 95 % CI over boots, of every
    cell on a candidate disk the block_bio_bounce trigger counted (not the
    sweep's); no bar for a cell it did not count, no figure without any."""
    vindex, order = P.variant_index(run)
    t = run.tidy[run.tidy["metric"] == "bounced_bytes_per_gib"]
    t = t[t["disk"].isin(run.candidate_disks) & ~t["job"].map(J.is_sweep).astype(bool)]
    keys = sorted({(r.variant, r.disk, r.job, r.pressure) for r in t.itertuples()},
                  key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1:]))
    if not keys:
        return
    rows = []
    for x, (v, disk, job, pressure) in enumerate(keys):
        vals = C.rows(t, None, v, disk, job, pressure)["value"].to_numpy() / (1 << 20)
        med, lo, hi, top = _median_ci(vals, "bb", v, disk, job, pressure)
        rows.append(f"{x} {P.num(med)} {P.num(lo)} {P.num(hi)} {vindex.get(v, 1)} "
                    f"{P.num(top)} {P.q(f'{med:.0f} (n {len(vals)})')} " +
                    P.q(P.lines(v, disk, job, f"pressure {pressure}")))
    title = ("Bounced MiB per GiB moved (block_bio_bounce hist): median and 95 % CI over "
             f"boots, n per bar\n{T.kernel_title(run)}")
    p.render("bounced-bytes", "bounced-bytes", "\n".join(rows) + "\n",
             dict(title=title, nbars=len(rows)), "bounced bytes per GiB moved", "bounces",
             width=len(rows) * (P.PX_PER_LABEL + 30) + 150)


def forest_rows(run, verdicts):
    """The primary rows of the question's jobs with a ratio, not split halves."""
    r = verdicts["ratio"].astype(float)
    return verdicts[verdicts["primary"].astype(bool) & verdicts["job"].isin(run.question_jobs) &
                    np.isfinite(r) & (r > 0) & ~S.is_split(verdicts)]


def headline_rows(run, rows):
    """(rows the forest draws, how many it leaves to tables.md): those of
    a candidate disk or its within-boot ratio, no control and no sweep
    job, the MAX_FOREST_ROWS largest effects."""
    sweep = np.array([J.is_sweep(j) for j in rows["job"]], dtype=bool)
    first = np.array([C.first_disk(d) in run.candidate_disks for d in rows["disk"]], dtype=bool)
    keep = rows[~rows["control"].astype(bool) & ~sweep & first]
    if len(keep) > MAX_FOREST_ROWS:
        size = np.abs(np.log(keep["ratio"].astype(float)))
        keep = keep.loc[size.sort_values(ascending=False, kind="stable").index[:MAX_FOREST_ROWS]]
    return keep, len(rows) - len(keep)


def _fitted_range(rows):
    """An x range around the ratios and their finite CI bounds, with 1."""
    ci = rows[["ci_low", "ci_high"]].to_numpy(float).ravel()
    vals = np.concatenate([[1.0], rows["ratio"].to_numpy(float), ci[np.isfinite(ci) & (ci > 0)]])
    lo, hi = float(vals.min()), float(vals.max())
    pad = max(hi - lo, 0.01) * 0.06
    return max(lo - pad, 0.0), hi + pad


def _forest_line(y, r, xmin, xmax):
    color = 2 if S.is_relevant(getattr(r, "relevance", "")) else 1
    lo = r.ci_low if np.isfinite(r.ci_low) and r.ci_low > 0 else np.nan
    hi = r.ci_high if np.isfinite(r.ci_high) else np.nan
    label = (f"{r.disk} {r.job}" + ("" if r.pressure == "none" else f" {r.pressure}") +
             f": {r.b}/{r.a} (n {r.n_b}/{r.n_a})" +
             ("" if np.isfinite(lo) and np.isfinite(hi) else f", no CI, ratio {r.ratio:.3g}"))
    ratio = min(max(r.ratio, xmin), xmax)
    return f"{y} {P.num(ratio)} {P.num(lo)} {P.num(hi)} {color} {P.q(label)}"


def forest(run, verdicts, p):
    """One forest plot per primary slot: ratio and 95 % CI of the first
    screen's rows (headline_rows), by disk then effect, relevant rows
    red, the x axis fitted to the rows with a CI; the controls and the
    rows left out counted in the title."""
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
        has_ci = np.isfinite(rows[["ci_low", "ci_high"]].to_numpy(float)).all(axis=1)
        xmin, xmax = _fitted_range(rows[has_ci] if has_ci.any() else rows)
        lines = [_forest_line(y, r, xmin, xmax) for y, r in enumerate(rows.itertuples())]
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


def figures(run, verdicts, p, everything):
    forest(run, verdicts, p)
    for prefix, metric in ALL_BAR_METRICS if everything else BAR_METRICS:
        metric_bars(run, verdicts, p, prefix, metric, everything)
    latency_curves(run, p, everything)
    bounced_bytes(run, p)
