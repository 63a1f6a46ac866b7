# SPDX-License-Identifier: GPL-2.0
"""What a bounce costs in memory. In: the run's boots, its pressure levels
(lab.conf "pressure") and the verdicts. Out: each job's bounce pages (the
kernel's exact count), the pool's reserve and LowFree at boot (A/A bound:
baseline against bounce), each level's dose, per level and shape the bounce
kernel against the others and its mechanism; the dose-response and the
strongest level's timelines."""
import os
from itertools import product

import numpy as np
import pandas as pd

from lab import labconf as L, matrix
from .. import cells as C, md, metrics as M, plots as P, rawfiles as R, roles as ROLES
from .. import stats as S, tidy as T
from .counted import BOUNCE_PARTS

FOOTPRINT = ["bounce_pages_peak", "bounce_lowmem_peak_kib", "bounce_pages_mean",
             "bounce_pages_taken", "bounce_alloc_us_per_page"]
# What pressure does to a job, most telling first (the dose: dose_lines).
PRESSURE_METRICS = ["write_bw", "read_late_1ms_pct", "read_lat_mean_us", "read_lat_p99_us",
                    "read_lat_p99.9_us", "pgsteal_per_mib_written", "psi_some_us_per_mib_written",
                    "psi_some_us_per_s", "allocstall_per_mib_written", "pgscan_per_mib_written",
                    "psi_full_us_per_s", "lowfree_min_kb", "cpu_s_per_gib", "bounce_pages_peak",
                    "bounce_alloc_max_us", "bounce_reserve_used_pages"]
# The dose-response figure's panels: (metric, axis label, scale).
DOSE_PANELS = [("write_bw", "writeback MB/s (incl. fsync)", 1e-6),
               ("read_lat_p99.9_us", "reader p99.9 latency, ms", 1e-3),
               ("psi_some_us_per_s", "PSI memory some, % of time", 1e-4),
               ("bounce_pages_peak", "bounce pages in flight, peak", 1.0)]


def _candidates(run, disks):
    return [d for d in dict.fromkeys(disks) if d in run.candidate_disks]


def _strained(run):
    return [p for p in run.levels if p != L.NO_PRESSURE]


def _ok_jobs(run):
    return run.jobs[run.jobs["state"] == "ok"] if not run.jobs.empty else run.jobs


def _pressure_boots(run):
    b = run.boots
    return b[(b["pressure"] != "none") & (b["status"] == "ok")]


def _where(run, frame):
    """(the first candidate disk of frame's pressure jobs, None: none; those
    jobs in the run's order), frame a tidy or a jobs table."""
    frame = frame[frame["job"].isin(run.pressure_jobs)]
    disks = _candidates(run, frame["disk"])
    return disks[0] if disks else None, [j for j in run.pressure_jobs if j in set(frame["job"])]


def footprint_lines(run):
    """The exact bounce-page footprint of each job without pressure."""
    t, j = run.tidy, run.jobs
    if t.empty:
        return []
    rows = []
    for disk, v in product(_candidates(run, t["disk"]), run.labels_of(ROLES.BOUNCE)):
        sel = C.rows(t, "bounce_pages_peak", v, disk, pressure=L.NO_PRESSURE)
        rows += [[disk, v, job] + [md.fmt(C.median(t, v, disk, job, m, L.NO_PRESSURE))
                                   for m in FOOTPRINT] for job in sorted(set(sel["job"]))]
        # the occupancy monitor says "absent" (no bounce code) or "missing" (no counter)
        states = set(j.loc[(j["variant"] == v) & (j["disk"] == disk), "occupancy"].dropna()
                     ) if "occupancy" in j and not j.empty else set()
        if not len(sel) and "counted" not in states and states & {"absent", "missing"}:
            why = "no bounce code" if "absent" in states else "no lab counter in this kernel"
            rows.append([disk, v, "(every job)", f"not measured: {why}"] + [""] * 4)
    out = (["Lowmem held by bounce pages, counted exactly by the kernel per job "
            "(the lab-bounce patch; median of boots), without extra pressure:", "",
            md.table(["disk", "variant", "job", "peak pages", "peak KiB",
                      "mean pages (time-weighted)", "pages taken",
                      "mempool_alloc µs per page"], rows), ""]) if rows else []
    for v in run.labels_of(ROLES.BASELINE):
        peaks = C.rows(t, "bounce_pages_peak", v)["value"]
        if len(peaks):
            out.append(f"- {v}: {int(peaks.max())} bounce pages at most in any job "
                       f"({len(peaks)} jobs counted).")
    return out + [f"- {v}: no bounce code: nothing to count (not a count of 0)."
                  for v in run.labels_of(ROLES.REMOVED)]


def _boot_lowfree(run):
    """{label: [LowFree kB at the start of each ok boot]} of the first
    disk entry without pressure: only the kernel differs."""
    out, b = {}, run.boots
    if b.empty:
        return out
    b = b[(b["status"] == "ok") & (b["disk"] == b["disk"].iloc[0]) &
          (b["pressure"] == L.NO_PRESSURE) & b["dir"].map(lambda d: isinstance(d, str))]
    for v, d in zip(b["variant"], b["dir"]):
        mi = R.read_meminfo(os.path.join(run.path, d, "guest", "proc-start", "meminfo"))
        if mi and "LowFree" in mi:
            out.setdefault(v, []).append(float(mi["LowFree"]))
    return out


def standing_lines(run):
    """The pool's reserve and LowFree at boot, removed against baseline
    (baseline against bounce: the A/A bound)."""
    pools = {v: float(np.median(x)) for v in dict.fromkeys(run.boots["variant"])
             if len(x := C.rows(run.tidy, "bounce_pool_kib", v)["value"])}
    text = ", ".join(f"{v} {md.fmt(k)} KiB" for v, k in pools.items())
    out = [f"- The bounce pool's reserve (mempool, lowmem, taken at boot, exact): {text}; "
           + ", ".join(f"{v}: none (no bounce code)" for v in run.labels_of(ROLES.REMOVED))
           + "."] if pools else []
    low = _boot_lowfree(run)
    base, bnc, rem = (next((v for v in run.labels_of(r) if v in low), None)
                      for r in (ROLES.BASELINE, ROLES.BOUNCE, ROLES.REMOVED))
    if not base or not rem:
        return out
    b, r = np.median(low[base]), np.median(low[rem])
    line = (f"- LowFree at the start of the boot ({run.boots['disk'].iloc[0]} boots without "
            f"pressure, median of {len(low[base])} and {len(low[rem])} boots): "
            f"{base} {md.fmt(b, 6)} kB, {rem} {md.fmt(r, 6)} kB, {rem} − {base} = "
            f"{md.fmt(r - b, 4)} kB")
    if not bnc:
        return out + [line + "."]
    aa = np.median(low[bnc]) - b
    spread = max(np.ptp(low[base]), np.ptp(low[rem]))
    bound = max(abs(aa), spread)
    line += (f"; {bnc} − {base} (the same pool, an A/A bound): {md.fmt(aa, 4)} kB, "
             f"spread within a variant {md.fmt(spread, 4)} kB")
    line += (": the difference is **outside** that bound." if abs(r - b) > bound
             else f": **below the noise** (±{md.fmt(bound, 4)} kB).")
    return out + [line]


def _kept_up(t):
    """Per disk, the reader against its offered rate (short by less than
    read IOPS's smallest effect of interest: kept up)."""
    short = {d: 100 - float(x["value"].median()) for d, x in
             t[t["metric"] == "read_iops_offered_pct"].groupby("disk", sort=False)}
    return "; ".join(f"{d} " + ("kept up" if x < M.min_effect("read_iops")
                                else f"fell behind by {md.fmt(x, 2)}%") for d, x in short.items())


def dose_lines(run):
    """Per level and variant: the jobs' dose, exclusions and the reader."""
    t, j = run.tidy, run.jobs
    if t.empty or j.empty or "dose_off" not in j:
        return []
    band = int(L.default(run.lab, "dose_band_kb", T.DOSE_BAND_KB))
    out = []
    for p in _strained(run):
        dosed = j[(j["pressure"] == p) & j["dose_off"].notna()]
        rows = []
        for v in dict.fromkeys(dosed["variant"]):
            jv, tv = dosed[dosed["variant"] == v], t[(t["pressure"] == p) & (t["variant"] == v)]
            cells = [str(len(jv)), str(int((jv["state"] == "excluded").sum()))]
            for zone in ("highfree", "lowfree"):
                # per job: tidy has a boot's mean of its instances
                x = jv[f"dose_{zone}_off_kb"].dropna()
                cells.append(f"{md.fmt(x.median(), 4)} ({md.fmt(x.min(), 4)} to "
                             f"{md.fmt(x.max(), 4)})" if len(x) else "not held")
            rows.append([v] + cells + [_kept_up(tv) or "no rate offered"])
        if not rows:
            continue
        off = int((dosed["state"] == "excluded").sum())
        out += [f"Dose under **{p}** (each job's HighFree and LowFree less its target, kB: "
                f"median (range); the band ±{band} kB) and the reader against its offered rate:",
                "", md.table(["variant", "jobs", "excluded", "HighFree − target",
                              "LowFree − target", "reader"], rows), ""]
        out += (f"Every job's dose was within ±{band} kB of its targets in both zones." if not off
                else f"**{off} of {len(dosed)} jobs were off their band or a hog did not settle**: "
                "excluded from the verdicts, each listed with its reason under "
                "\"Failed boots, skipped and failed jobs\".", "")
    return out


def pressure_lines(run, verdicts):
    """Per pressure level and job: the medians and the bounce kernel against
    each other on every pressure metric, candidate disk and control."""
    bnc, others = run.labels_of(ROLES.BOUNCE), run.labels_of(ROLES.BASELINE, ROLES.REMOVED)
    if verdicts is None or verdicts.empty or not bnc or not others:
        return []
    kernels, out = bnc + others, []
    pad = len(kernels + others) - 1     # empty cells after a 3-cell row
    for p in [p for p in run.levels if p != L.NO_PRESSURE or run.pressure_jobs]:
        t = run.tidy[run.tidy["pressure"] == p]
        jobs = sorted(j for j in set(t["job"]) if not run.pressure_jobs or j in run.pressure_jobs)
        for job in jobs:
            rows = []
            disks = [d for d in dict.fromkeys(t[t["job"] == job]["disk"]) if not C.is_ratio(d)]
            for metric, disk in product(PRESSURE_METRICS, disks):
                meds = [C.median(run.tidy, v, disk, job, metric, p) for v in kernels]
                if all(not np.isfinite(m) for m in meds):
                    continue
                ctl = "" if ROLES.is_candidate(run, disk) else " (control)"
                rows.append([f"{M.label(metric)} ({M.unit(metric)})", disk + ctl] +
                            [md.fmt(m, 4) for m in meds] +
                            [md.verdict_cell(md.oriented(verdicts, metric, disk, job,
                                                         p, bnc[0], o)) for o in others])
            if not rows:
                continue
            hog = t[(t["job"] == job) & (t["metric"] == "hog_cpu_s")]["value"]
            if len(hog):
                rows.append(["pressure hogs' CPU during the job, most (must be 0)", "all",
                             f"{md.fmt(float(hog.max()))} s"] + [""] * pad)
            rows += _spread_line(run, p, job, kernels, pad)
            target = run.level_mib.get(p, np.nan)
            head = (f"**{p}**" + (f" (LowFree target {int(target)} MiB, "
                                  f"{run.lab['pressure'].get(p, {}).get('label', '')})"
                                  if np.isfinite(target) else " (no extra pressure)"))
            out += [f"{head}, job {job}: medians, then {bnc[0]} against each other kernel "
                    "(ratio, 95% CI, verdict; the control disk is the same boots' A/A bound):", "",
                    md.table(["metric", "disk"] + kernels + [f"{bnc[0]}/{o}" for o in others],
                             rows), ""]
    return out


def _spread_line(run, pressure, job, variants, pad):
    """[the row]: whether the job is deterministic: each kernel's boots'
    spread (max/min - 1) of the candidate disk's write bandwidth; []: none."""
    sel = C.rows(run.tidy, "write_bw", job=job, pressure=pressure)
    parts, worst = [], 0.0
    for v, disk in product(variants, _candidates(run, sel["disk"])):
        x = sel[(sel["variant"] == v) & (sel["disk"] == disk)]["value"]
        if len(x) >= 2 and x.min() > 0:
            sp = float(x.max() / x.min() - 1)
            worst = max(worst, sp)
            parts.append(f"{v} {100 * sp:.3g}% ({len(x)} boots)")
    if not parts:
        return []
    word = ("deterministic" if worst <= run.bound_pct / 100 else
            "NOT deterministic: the verdicts rest on the test across boots")
    return [["spread of repeated boots, writeback bandwidth (max/min − 1)", "candidate",
             f"{'; '.join(parts)}: {word}"] + [""] * pad]


# A pressure row is decided when it is exact, significant, or "no
# difference" with an MDE at most this (%); the rest say what would.
DECIDED_MDE_PCT = 10.0
# The matrix set that decides the writeback rows tighter, and its cost.
DECIDING_SET = "writeback"


def undecided_rows(run, verdicts):
    """[(metric, other label, what the row says, job)]: the bounce kernel's
    primary pressure rows on candidate disks that are neither exact, nor
    decided (stats.is_decided), nor "no difference" within DECIDED_MDE_PCT,
    nor 0 in every boot of both (a direct writer reclaims nothing)."""
    bnc = run.labels_of(ROLES.BOUNCE)
    if verdicts is None or verdicts.empty or not run.pressure_jobs or not bnc:
        return []
    v = verdicts[verdicts["job"].isin(run.pressure_jobs) & verdicts["primary"].astype(bool) &
                 (verdicts["pressure"] != "none") & verdicts["disk"].isin(run.candidate_disks) &
                 (verdicts["a"].isin(bnc) | verdicts["b"].isin(bnc))]
    out = []
    for r in v.itertuples():
        mde = getattr(r, "mde_pct", np.nan)
        x = C.rows(run.tidy, r.metric, [r.a, r.b], r.disk, r.job, r.pressure)["value"]
        if str(r.analysis).startswith("exact") or (len(x) and (x == 0).all()) or S.is_decided(
                getattr(r, "relevance", "")) or (str(r.verdict).startswith("no significant")
                                                 and np.isfinite(mde) and mde <= DECIDED_MDE_PCT):
            continue
        said = f"could detect ±{md.fmt(mde, 2)}%" if np.isfinite(mde) else str(r.verdict)
        out.append((r.metric, r.b if r.a in bnc else r.a, said, r.job))
    return out


def pressure_reps(run):
    """The fewest ok pressure boots of a kernel in the run: its reps a side."""
    ok = _pressure_boots(run)
    return int(ok.groupby("variant").size().min()) if len(ok) else 0


def undecided_line(run, verdicts):
    """The rows undecided to ±DECIDED_MDE_PCT and what would decide them:
    the deciding set (its boots and, from this run's pressure boots' wall
    time, minutes), or at its reps, the reps a side it would take."""
    rows = undecided_rows(run, verdicts)
    if not rows:
        return ""
    shapes = list(dict.fromkeys(j for *_, j in rows))
    names = sorted({(f"{j}: " if len(shapes) > 1 else "") + M.label(m) for m, _, _, j in rows})
    mdes = [float(s.split("±")[1][:-1]) for _, _, s, _ in rows if s.startswith("could detect")]
    head = (f"Not decided to ±{DECIDED_MDE_PCT:g}% here ({len(rows)} rows: " + "; ".join(names)
            + (f"; the widest could detect ±{md.fmt(max(mdes), 2)}%" if mdes else "") + ")")
    try:
        keys = matrix.load().get(DECIDING_SET, {})
    except OSError:
        keys = {}
    try:
        set_reps = int(keys.get("reps", ["0"])[0])
    except ValueError:
        set_reps = 0
    n = pressure_reps(run)
    if set_reps and n >= set_reps and mdes:
        need = int(np.ceil(n * (max(mdes) / DECIDED_MDE_PCT) ** 2))
        return (f"{head}: at {n} reps a side; the widest would take about {need} reps a "
                f"side (an MDE shrinks as 1/√reps).")
    cost = ""
    if keys.get("variants") and set_reps:
        boots = len(keys["variants"]) * set_reps
        secs = pd.to_numeric(_pressure_boots(run)["seconds"], errors="coerce").dropna()
        # a pressure boot's time is mostly its boot and hogs: one of the candidate disk
        # alone (what the set boots) takes about what one of a pair does (43 s vs 37 s)
        minutes = f", about {boots * float(secs.median()) / 2 / 60:.0f} min" if len(secs) else ""
        cost = f" ({boots} pressure boots{minutes})"
    return f"{head}: `./run.sh compare --set {DECIDING_SET}` decides them tighter{cost}."


# A shape's verdicts on the first screen: (metric, what it is of the job).
SHAPE_VERDICTS = [("write_bw", "write bandwidth"), ("read_lat_mean_us", "reader's mean latency")]


def first_screen_lines(run, verdicts):
    """One line per pressure job at the first pressure level on its first
    candidate disk (_where): the bounce kernel's peak bounce pages against
    the LowFree the dose left, and its SHAPE_VERDICTS against the others."""
    lvls, bnc = _strained(run), run.labels_of(ROLES.BOUNCE)
    if not lvls or not bnc or verdicts is None or verdicts.empty:
        return []
    p = lvls[0]
    disk, jobs = _where(run, run.tidy[run.tidy["pressure"] == p])
    out = []
    for job in jobs if disk else []:
        peak = C.rows(run.tidy, "bounce_pages_peak", bnc[0], disk, job, p)["value"]
        low = C.rows(run.tidy, "dose_lowfree_kb", None, disk, job, p)["value"]
        head = f"Memory, under {p} ({disk}, {job}): "
        if len(peak):
            pk = float(peak.max()) * 4 / 1024
            head += f"{bnc[0]} holds up to {pk:.1f} MiB of bounce pages"
            if len(low):
                head += (f" ({100 * pk * 1024 / float(low.median()):.0f}% of the "
                         f"{float(low.median()) / 1024:.1f} MiB LowFree the dose leaves)")
        else:
            head += f"{bnc[0]}'s bounce pages were not counted"
        parts = []
        for metric, what in SHAPE_VERDICTS:
            said = []
            for o in run.labels_of(ROLES.REMOVED, ROLES.BASELINE):
                c = md.oriented(verdicts, metric, disk, job, p, bnc[0], o)
                if c is None or not np.isfinite(c["ratio"]):
                    continue
                ci = (f"{md.fmt(c['lo'])}–{md.fmt(c['hi'])}, " if np.isfinite(c["lo"]) and
                      np.isfinite(c["hi"]) else "")
                said.append(f"{md.fmt(c['ratio'])}x {o}'s ({ci}{md.verdict_words(c)})")
            if said:
                parts.append(f"its {what} is " + "; ".join(said))
        out.append(head + (", and " + ", and ".join(parts) if parts else "") + ".")
    return out


# The mechanism of each shape: what the bounce kernel did with bounce
# pages (median of boots), and what it cost.
MECHANISM = [("bounce_pages_peak", "bounce pages in flight, peak"),
             ("bounce_pages_mean", "mean (time-weighted)"),
             ("bounce_pages_per_io", "pages per I/O"),
             ("bounce_alloc_us_per_page", "mempool_alloc µs a page"),
             ("bounce_alloc_max_us", "longest mempool_alloc µs"),
             ("bounce_reserve_used_pages", "pool reserve used, pages"),
             ("pgsteal_per_mib_written", "pages reclaimed per MiB written")]


def bounce_work(run, variant, base, disk, job, pressure):
    """(µs per I/O, share of variant's window) of counted.BOUNCE_PARTS
    that variant runs above base, medians of boots; NaNs uncounted."""
    t = run.tidy

    def parts(v):
        return float(np.sum([C.median(t, v, disk, job, m, pressure) for m in BOUNCE_PARTS]))
    d = parts(variant) - parts(base)
    window = C.median(t, variant, disk, job, "insn_window_us_per_io", pressure)
    return d, (d / window if np.isfinite(window) and window > 0 else np.nan)


def mechanism_lines(run):
    """Per shape, level and candidate disk: the bounce kernel's MECHANISM
    and bounce_work: why one shape pays and another does not."""
    bnc, base = run.labels_of(ROLES.BOUNCE), run.labels_of(ROLES.BASELINE)
    if not run.pressure_jobs or not bnc:
        return []
    t, rows = run.tidy, []
    for job, p in product(run.pressure_jobs, run.levels):
        for disk in _candidates(run, t[(t["job"] == job) & (t["pressure"] == p)]["disk"]):
            vals = [C.median(t, bnc[0], disk, job, m, p) for m, _ in MECHANISM]
            if not any(np.isfinite(vals)):
                continue
            work, share = (bounce_work(run, bnc[0], base[0], disk, job, p) if base
                           else (np.nan, np.nan))
            rows.append([job, p, disk] + [md.fmt(x) for x in vals] + [
                md.fmt(work, sign=True),
                md.fmt(100 * share, 2) + "%" if np.isfinite(share) else "n/a"])
    if not rows:
        return []
    vs = f" above {base[0]}" if base else ""
    return ([f"The mechanism, per shape: what {bnc[0]} did with bounce pages (the kernel's "
             "lab counter, exact; median of boots) and what the bounce's parts cost per I/O "
             f"of the job, writer and reader together ({bnc[0]}{vs}, counted instructions as "
             "µs at the clock's rate; n/a without counts):", "",
             md.table(["shape", "pressure", "disk"] + [w for _, w in MECHANISM] +
                      ["bounce work, µs per I/O", "its share of the window"], rows), ""])


def section(run, verdicts):
    """[] when the run has nothing to say about memory."""
    stand = standing_lines(run)
    return (footprint_lines(run) + (stand + [""] if stand else []) + dose_lines(run) +
            pressure_lines(run, verdicts) + mechanism_lines(run))


def dose_response(run, p):
    """Each dose panel against the level's LowFree target (none: the
    boots' own), a line per variant; only with two points or more."""
    disk, jobs = _where(run, run.tidy)
    if not _strained(run) or disk is None:
        return
    job = jobs[0]
    low = _boot_lowfree(run)
    variants = list(dict.fromkeys(run.boots["variant"]))
    panels = DOSE_PANELS
    if "read_lat_p99.9_us" not in set(run.tidy["metric"]):  # before lat_percentiles=1
        panels = [("read_clat_p99.9_us", "reader p99.9 completion latency, ms", s)
                  if m == "read_lat_p99.9_us" else (m, lab, s) for m, lab, s in DOSE_PANELS]
    blocks, most = [], 0
    for metric, _, scale in panels:
        for v in variants:
            lines = []
            for lvl in run.levels:
                x = run.level_mib.get(lvl, np.nan)
                if not np.isfinite(x):
                    x = np.median(low.get(v, [np.nan])) / 1024
                y = C.median(run.tidy, v, disk, job, metric, lvl)
                if np.isfinite(x) and np.isfinite(y):
                    lines.append(f"{x:.6g} {y * scale:.6g}")
            blocks.append(f"# {metric} {v}\n" + ("\n".join(lines) if lines else "? ?"))
            most = max(most, len(lines))
    if most < 2:
        return
    p.render("dose-response", f"memory-dose-response-{disk}", "\n\n\n".join(blocks) + "\n",
             dict(title=f"Writeback under memory pressure on {disk}: "
                        f"{T.kernel_title(run)} (medians of boots)",
                  nvariants=len(variants), variants=" ".join(variants),
                  **{f"p{i + 1}": lab for i, (_, lab, _) in enumerate(panels)}),
             f"dose-response: {job} on {disk} against LowFree", "memory")


# labmon's columns in the timelines' data: name -> (column, scale)
LABMON = {"t": ("t_ms", 1e-3), "low": ("LowFree", 1 / 1024), "high": ("HighFree", 1 / 1024),
          "bounce": ("Bounce", 1.0), "nr_bounce": ("nr_bounce", 4.0),
          "hits": ("bounce_hits", 1.0), "some": ("some_avg10", 1.0), "full": ("full_avg10", 1.0)}


def _samples(run, jobdir, names=tuple(LABMON)):
    """A job's labmon columns (NaN: not sampled); None with fewer than two samples."""
    mon = R.read_labmon(os.path.join(run.path, jobdir, "labmon.csv"))
    if mon is None or len(mon) < 2 or "t_ms" not in mon:
        return None
    return pd.DataFrame({k: pd.to_numeric(mon[LABMON[k][0]], errors="coerce").reset_index(
        drop=True) * LABMON[k][1] if LABMON[k][0] in mon else np.nan for k in names})


def _data(frames, gaps=False):
    """Gnuplot data of sample frames, a block each; gaps: a row without t is
    an empty line (the line breaks there)."""
    def line(r):
        return "" if gaps and not np.isfinite(r.t) else " ".join(map(P.num, r))
    return "\n\n\n".join("\n".join(map(line, df.itertuples(index=False))) for df in frames) + "\n"


def pressure_timeline(run, p):
    """LowFree, PSI and Bounce: over the first pressure job at the
    strongest level, rep 1, the variants side by side."""
    lvls, j = _strained(run), _ok_jobs(run)
    if not lvls or j.empty:
        return
    j = j[(j["pressure"] == lvls[-1]) & j["disk"].isin(run.candidate_disks)]
    _, jobs = _where(run, j)
    if not jobs:
        return
    first = j[j["job"] == jobs[0]].sort_values(["rep", "boot"]).groupby(
        "variant", sort=False).head(1)
    blocks = {r.variant: df for r in first.itertuples()
              if (df := _samples(run, r.dir, ("t", "low", "some", "bounce"))) is not None}
    if blocks:
        p.render("pressure-timeline", f"memory-pressure-timeline-{lvls[-1]}",
                 _data(blocks.values()),
                 dict(title=f"Under {lvls[-1]}: {first.iloc[0]['disk']}, job {jobs[0]}, "
                            "rep 1 of each variant",
                      nvariants=len(blocks), variants=" ".join(blocks)),
                 f"timelines under {lvls[-1]}: LowFree, PSI, Bounce:, variants side by side",
                 "memory")


def job_timelines(run, p):
    """A timeline per variant/disk/job/pressure, of its lowest rep."""
    ok = _ok_jobs(run)
    if ok.empty:
        return
    rank = {v: i for i, v in enumerate(run.labels)}
    first = ok.sort_values(["rep", "boot"]).groupby(
        ["variant", "disk", "job", "pressure"], sort=False).head(1)
    first = first.assign(_o=first["variant"].map(lambda v: rank.get(v, 99)))
    for j in first.sort_values(["disk", "job", "pressure", "_o"]).itertuples():
        df = _samples(run, j.dir)
        if df is None:
            continue
        tmax = float(df["t"].max())
        dur = (j.end_s - j.start_s) if np.isfinite(j.start_s) and np.isfinite(j.end_s) else tmax
        flags = dict(has_bounce=int(df[["bounce", "nr_bounce"]].notna().any().any()),
                     has_hits=int(df["hits"].notna().any()),
                     has_psi=int(df[["some", "full"]].notna().any().any()))
        p.render("memory-timeline", P.slug("memory", j.variant, j.disk, j.job, j.pressure,
                                           f"r{j.rep}"), _data([df]),
                 dict(title=f"Memory during the job: {T.kernel_title(run)}, variant {j.variant}\n"
                            f"disk {j.disk}, job {j.job}, pressure {j.pressure}, rep {j.rep} "
                            f"(boot {j.boot})",
                      jobstart=0, jobend=f"{dur:.3f}", tmax=f"{tmax:.3f}", **flags),
                 f"memory timeline: {j.variant}, {j.disk}, {j.job}, "
                 f"pressure {j.pressure}, rep {j.rep}", "memory timelines")


def disk_timelines(run, p):
    """Per disk: memory over the jobs of rep 1 without pressure, in run
    order, the variants side by side."""
    ok = _ok_jobs(run)
    if ok.empty:
        return
    for disk in sorted(set(ok["disk"])):
        d = ok[ok["disk"] == disk]
        pressure = "none" if (d["pressure"] == "none").any() else sorted(set(d["pressure"]))[0]
        d = d[d["pressure"] == pressure]
        blocks = {v: df for v in run.labels if v in set(d["variant"]) and
                  (df := _first_boot(run, d[d["variant"] == v])) is not None}
        if not blocks:
            continue
        # the panels' shared axes (gnuplot's own without data)
        low, t = (pd.concat(blocks)[c].dropna() for c in ("low", "t"))
        axes = dict(tmax=round(float(t.max()), 3) if len(t) else 1)
        if len(low):
            pad = max(float(low.max() - low.min()) * 0.1, 1.0)
            axes.update(lowmin=round(float(low.min()) - pad, 3),
                        lowmax=round(float(low.max()) + pad, 3))
        title = (f"Memory on {disk} over the jobs of rep 1 (pressure {pressure}), in run order; "
                 f"{T.kernel_title(run)}")
        p.render("memory-disk", P.slug("memory", disk), _data(blocks.values(), gaps=True),
                 dict(title=title, nvariants=len(blocks), variants=" ".join(blocks),
                      **{f"has_{k}": " ".join(str(int(b[c].notna().any())) for b in blocks.values())
                         for k, c in (("bounce", "bounce"), ("psi", "some"))}, **axes),
                 f"memory timeline: {disk}, rep 1, {', '.join(blocks)} side by side",
                 "memory timelines")


def _first_boot(run, jobs):
    """The labmon samples of the jobs of jobs' first boot (lowest rep), one
    after the other, a NaN row (a gap) between them; None: none sampled."""
    first = jobs.sort_values(["rep", "boot"]).iloc[0]
    parts, t0 = [], 0.0
    gap = pd.DataFrame({"t": [np.nan], "low": [np.nan], "bounce": [np.nan], "some": [np.nan]})
    for j in jobs[(jobs["rep"] == first["rep"]) &
                  (jobs["boot"] == first["boot"])].sort_values("dir").itertuples():
        df = _samples(run, j.dir, ("t", "low", "bounce", "some"))
        if df is not None:
            parts += [df.assign(t=df["t"] + t0), gap]
            t0 += float(df["t"].max()) + 1.0
    return pd.concat(parts, ignore_index=True) if parts else None


TITLE = "What a bounce costs in memory"


def first_screen(run, verdicts):
    undecided = undecided_line(run, verdicts)
    return [f"- {x}" for x in first_screen_lines(run, verdicts)] + \
        ([f"  {undecided}"] if undecided else [])


def figures(run, verdicts, p, everything):
    if everything:  # per job and per disk: flat lines without pressure
        disk_timelines(run, p)
        job_timelines(run, p)
    dose_response(run, p)
    pressure_timeline(run, p)
