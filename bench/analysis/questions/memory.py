# SPDX-License-Identifier: GPL-2.0
"""What a bounce costs in memory: report.md's section and its figures.

Three measures, each from the run's own boots:

  footprint  the kernel's exact count of bounce pages per job (lab-bounce:
             peak and time-weighted mean in flight, pages taken, time in
             mempool_alloc), without extra pressure
  standing   the bounce pool's reserve (pool_size, exact) and LowFree at
             the start of each boot, the removed kernel against the
             baseline, beside the baseline against the bounce kernel
             (the same pool: an A/A bound on what the boot itself moves)
  dose       per pressure level and kernel: how far its jobs' doses were
             off the level's targets, how many were excluded for it, and
             whether the reader kept up with its offered rate
  pressure   per pressure level (lab.conf "pressure", the pressure boots
             of bench/matrix): the bounce kernel against the others, with
             the verdicts of verdict.csv and the control disk beside it

and two figures: the dose-response (each pressure metric against the
level's LowFree target, one line per variant) and the timelines of the
strongest level (LowFree, PSI and the Bounce: gauge, variants side by
side).
"""
import os

import numpy as np
import pandas as pd

from lab import labconf as L
from lab import matrix
from .. import cells as C
from .. import md
from .. import metrics as M
from .. import rawfiles as R
from .. import roles as ROLES
from .. import stats as S
from .. import tidy as T
from .. import plots as P
from .counted import BOUNCE_PARTS

FOOTPRINT = ["bounce_pages_peak", "bounce_lowmem_peak_kib", "bounce_pages_mean",
             "bounce_pages_taken", "bounce_alloc_us_per_page"]
# What pressure does to a job, most telling first.
# (The reader's IOPS and the dose: dose_lines.)
PRESSURE_METRICS = ["write_bw", "read_late_1ms_pct", "read_lat_mean_us", "read_lat_p99_us",
                    "read_lat_p99.9_us",
                    "pgsteal_per_mib_written", "psi_some_us_per_mib_written", "psi_some_us_per_s",
                    "allocstall_per_mib_written", "pgscan_per_mib_written",
                    "psi_full_us_per_s", "lowfree_min_kb", "cpu_s_per_gib",
                    "bounce_pages_peak", "bounce_alloc_max_us", "bounce_reserve_used_pages"]
# The dose-response figure's panels: (metric, axis label, scale).
DOSE_PANELS = [("write_bw", "writeback MB/s (incl. fsync)", 1e-6),
               ("read_lat_p99.9_us", "reader p99.9 latency, ms", 1e-3),
               ("psi_some_us_per_s", "PSI memory some, % of time", 1e-4),
               ("bounce_pages_peak", "bounce pages in flight, peak", 1.0)]


def dose_panels(run):
    """DOSE_PANELS, the reader's latency as a run from before
    lat_percentiles=1 measured it (completion only) where it has no lat."""
    if "read_lat_p99.9_us" in set(run.tidy["metric"]):
        return DOSE_PANELS
    return [("read_clat_p99.9_us", "reader p99.9 completion latency, ms", s)
            if m == "read_lat_p99.9_us" else (m, lab, s) for m, lab, s in DOSE_PANELS]


def _occupancy_state(run, variant, disk):
    """"counted", "absent" (no bounce code), "missing" (no counter) or ""
    for a variant on a disk, from its jobs."""
    j = run.jobs
    if j.empty or "occupancy" not in j:
        return ""
    states = set(j.loc[(j["variant"] == variant) & (j["disk"] == disk),
                       "occupancy"].dropna())
    for s in ("counted", "absent", "missing"):
        if s in states:
            return s
    return ""


def _targets(run):
    """{pressure: its MIB in the run's lab.conf (nan without one)}."""
    return {name: float(d["mib"]) if d.get("mib", "").isdigit() else np.nan
            for name, d in run.lab["pressure"].items()}


def footprint_lines(run):
    """The exact bounce-page footprint of each job without pressure."""
    out = []
    t = run.tidy
    if t.empty:
        return out
    rows = []
    for disk in dict.fromkeys(t["disk"]):
        if C.is_ratio(disk) or not ROLES.is_candidate(run, disk):
            continue
        for v in run.labels_of(ROLES.BOUNCE):
            state = _occupancy_state(run, v, disk)
            sel = t[(t["variant"] == v) & (t["disk"] == disk) & (t["pressure"] == L.NO_PRESSURE) &
                    (t["metric"] == "bounce_pages_peak")]
            for job in sorted(set(sel["job"])):
                vals = [C.median(t, v, disk, job, m, L.NO_PRESSURE) for m in FOOTPRINT]
                rows.append(f"| {disk} | {v} | {job} | " +
                            " | ".join(md.fmt(x) for x in vals) + " |")
            if not len(sel) and state in ("missing", "absent"):
                rows.append(f"| {disk} | {v} | (every job) | not measured: "
                            f"{'no lab counter in this kernel' if state == 'missing' else 'no bounce code'} | | | | |")
    if rows:
        out += ["Lowmem held by bounce pages, counted exactly by the kernel per job "
                "(the lab-bounce patch; median of boots), without extra pressure:", "",
                "| disk | variant | job | peak pages | peak KiB | mean pages "
                "(time-weighted) | pages taken | mempool_alloc µs per page |",
                "|---|---|---|---|---|---|---|---|"] + rows + [""]
    for v in run.labels_of(ROLES.BASELINE):
        peaks = t[(t["variant"] == v) & (t["metric"] == "bounce_pages_peak")]["value"]
        if len(peaks):
            out.append(f"- {v}: {int(peaks.max())} bounce pages at most in any job "
                       f"({len(peaks)} jobs counted).")
    for v in run.labels_of(ROLES.REMOVED):
        out.append(f"- {v}: no bounce code: nothing to count (not a count of 0).")
    return out


def _boot_lowfree(run):
    """{label: [LowFree kB at the start of each ok boot]} of the boots of
    the run's first disk entry without pressure: one clock and one set of
    disks, so that only the kernel differs."""
    out = {}
    boots = run.boots
    if boots.empty:
        return out
    entry = boots["disk"].iloc[0]
    for b in boots.itertuples():
        if (getattr(b, "status", "") != "ok" or not isinstance(getattr(b, "dir", None), str)
                or b.disk != entry or getattr(b, "pressure", L.NO_PRESSURE) != L.NO_PRESSURE):
            continue
        mi = R.read_meminfo(os.path.join(run.path, b.dir, "guest", "proc-start", "meminfo"))
        if mi and "LowFree" in mi:
            out.setdefault(b.variant, []).append(float(mi["LowFree"]))
    return out


def standing_lines(run):
    """The pool's reserve (exact) and LowFree at boot, removed against
    baseline with the baseline-bounce difference as its A/A bound."""
    out = []
    t = run.tidy
    pools = {}
    for v in dict.fromkeys(run.boots["variant"]):
        sel = t[(t["variant"] == v) & (t["metric"] == "bounce_pool_kib")]["value"] if not t.empty else []
        if len(sel):
            pools[v] = float(np.median(sel))
    if pools:
        text = ", ".join(f"{v} {md.fmt(k)} KiB" for v, k in pools.items())
        out.append(f"- The bounce pool's reserve (mempool, lowmem, taken at boot, exact): {text}; "
                   + ", ".join(f"{v}: none (no bounce code)"
                               for v in run.labels_of(ROLES.REMOVED)) + ".")
    low = _boot_lowfree(run)
    base = [v for v in run.labels_of(ROLES.BASELINE) if v in low]
    bnc = [v for v in run.labels_of(ROLES.BOUNCE) if v in low]
    rem = [v for v in run.labels_of(ROLES.REMOVED) if v in low]
    if base and rem:
        b, r = np.median(low[base[0]]), np.median(low[rem[0]])
        line = (f"- LowFree at the start of the boot ({run.boots['disk'].iloc[0]} boots without "
                f"pressure, median of {len(low[base[0]])} and "
                f"{len(low[rem[0]])} boots): {base[0]} {md.fmt(b, 6)} kB, {rem[0]} {md.fmt(r, 6)} kB, "
                f"{rem[0]} − {base[0]} = {md.fmt(r - b, 4)} kB")
        if bnc:
            aa = np.median(low[bnc[0]]) - b
            spread = max(np.ptp(low[base[0]]), np.ptp(low[rem[0]]))
            bound = max(abs(aa), spread)
            line += (f"; {bnc[0]} − {base[0]} (the same pool, an A/A bound): {md.fmt(aa, 4)} kB, "
                     f"spread within a variant {md.fmt(spread, 4)} kB")
            line += (": the difference is **outside** that bound." if abs(r - b) > bound
                     else f": **below the noise** (±{md.fmt(bound, 4)} kB).")
        else:
            line += "."
        out.append(line)
    return out


def _kept_up(t):
    """"kept up" or "fell behind by X%" of the reader (median of its jobs'
    IOPS against the rate offered), per disk; "" where none was offered.
    Short by less than read IOPS's smallest effect of interest is kept up."""
    out = []
    for disk, x in t[t["metric"] == "read_iops_offered_pct"].groupby("disk", sort=False):
        short = 100 - float(x["value"].median())
        out.append(f"{disk} " + ("kept up" if short < M.min_effect("read_iops")
                                 else f"fell behind by {md.fmt(short, 2)}%"))
    return "; ".join(out)


def dose_lines(run):
    """Per pressure level and variant: the dose its jobs got (HighFree and
    LowFree less their targets, kB: median and range; "not held" where no
    hog held the zone), how many jobs were excluded for it, and whether
    the reader kept up with its offered rate; then whether every job was
    within band."""
    t, j = run.tidy, run.jobs
    if t.empty or j.empty or "dose_off" not in j:
        return []
    band = int(L.default(run.lab, "dose_band_kb", T.DOSE_BAND_KB))
    out = []
    for p in [x for x in run.levels if x != L.NO_PRESSURE]:
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
            rows.append(f"| {v} | " + " | ".join(cells + [_kept_up(tv) or "no rate offered"]) + " |")
        if not rows:
            continue
        off = int((dosed["state"] == "excluded").sum())
        out += [f"Dose under **{p}** (each job's HighFree and LowFree less its target, kB: "
                f"median (range); the band ±{band} kB) and the reader against its offered rate:",
                "", "| variant | jobs | excluded | HighFree − target | LowFree − target | reader |",
                "|---|---|---|---|---|---|"] + rows + [""]
        out.append(f"Every job's dose was within ±{band} kB of its targets in both zones." if not off
                   else f"**{off} of {len(dosed)} jobs were off their band or a hog did not settle**: "
                   "excluded from the verdicts, each listed with its reason under "
                   "\"Failed boots, skipped and failed jobs\".")
        out.append("")
    return out


def pressure_lines(run, verdicts):
    """Per pressure level: bounce/baseline and bounce/removed on every
    pressure metric, candidate disk and control side by side."""
    out = []
    if verdicts is None or verdicts.empty:
        return out
    bnc = run.labels_of(ROLES.BOUNCE)
    others = run.labels_of(ROLES.BASELINE) + run.labels_of(ROLES.REMOVED)
    pressure_jobs = run.pressure_jobs
    if not bnc or not others:
        return out
    lvls = [p for p in run.levels if p != L.NO_PRESSURE or pressure_jobs]
    lab = run.lab["pressure"]
    targets = _targets(run)
    for p in lvls:
        t = run.tidy[run.tidy["pressure"] == p]
        jobs = sorted(j for j in set(t["job"]) if not pressure_jobs or j in pressure_jobs)
        if p == L.NO_PRESSURE and not jobs:
            continue
        for job in jobs:
            rows = []
            disks = [d for d in dict.fromkeys(t[t["job"] == job]["disk"]) if not C.is_ratio(d)]
            for metric in PRESSURE_METRICS:
                for disk in disks:
                    cells = [md.verdict_cell(md.oriented(verdicts, metric, disk, job, p, bnc[0], o))
                             for o in others]
                    meds = [C.median(run.tidy, v, disk, job, metric, p) for v in bnc + others]
                    if all(not np.isfinite(m) for m in meds):
                        continue
                    ctl = "" if ROLES.is_candidate(run, disk) else " (control)"
                    rows.append(f"| {M.label(metric)} ({M.unit(metric)}) | {disk}{ctl} | " +
                                " | ".join(md.fmt(m, 4) for m in meds) + " | " +
                                " | ".join(cells) + " |")
            if not rows:
                continue
            hog = t[(t["job"] == job) & (t["metric"] == "hog_cpu_s")]["value"]
            if len(hog):
                rows.append(f"| pressure hogs' CPU during the job, most (must be 0) | all | "
                            f"{md.fmt(float(hog.max()))} s |" + " |" * (len(bnc + others) + len(others) - 1))
            spread = _spread_line(run, p, job, bnc + others)
            if spread:
                rows.append(spread)
            target = targets.get(p, np.nan)
            head = (f"**{p}**" + (f" (LowFree target {int(target)} MiB, "
                                  f"{lab.get(p, {}).get('label', '')})"
                                  if np.isfinite(target) else " (no extra pressure)"))
            out += [f"{head}, job {job}: medians, then {bnc[0]} against each other kernel "
                    "(ratio, 95% CI, verdict; the control disk is the same boots' A/A bound):", "",
                    "| metric | disk | " + " | ".join(bnc + others) + " | " +
                    " | ".join(f"{bnc[0]}/{o}" for o in others) + " |",
                    "|---|---|" + "---|" * (len(bnc + others) + len(others))] + rows + [""]
    return out


def _spread_line(run, pressure, job, variants):
    """How far the repeated boots of each kernel spread (max/min - 1) on
    the candidate disk's write bandwidth: whether the clock made this
    job deterministic (within the run's determinism bound), said beside
    the table, never assumed."""
    t = run.tidy
    sel = t[(t["pressure"] == pressure) & (t["job"] == job) & (t["metric"] == "write_bw")]
    parts, worst = [], 0.0
    for v in variants:
        for disk in dict.fromkeys(sel["disk"]):
            if C.is_ratio(disk) or not ROLES.is_candidate(run, disk):
                continue
            x = sel[(sel["variant"] == v) & (sel["disk"] == disk)]["value"]
            if len(x) >= 2 and x.min() > 0:
                sp = float(x.max() / x.min() - 1)
                worst = max(worst, sp)
                parts.append(f"{v} {100 * sp:.3g}% ({len(x)} boots)")
    if not parts:
        return ""
    word = ("deterministic" if worst <= run.bound_pct / 100 else
            "NOT deterministic: the verdicts rest on the test across boots")
    return (f"| spread of repeated boots, writeback bandwidth (max/min − 1) | candidate | "
            f"{'; '.join(parts)}: {word} |" + " |" * (len(variants) + 0))


# A pressure row is decided when it is exact, significant, or "no
# difference" with an MDE at most this (%); the rest say what would.
DECIDED_MDE_PCT = 10.0
# The matrix set that decides the writeback rows tighter, and its cost.
DECIDING_SET = "writeback"


def undecided_rows(run, verdicts):
    """The primary rows of the pressure jobs on candidate disks, of the
    bounce variant against every other kernel, that are neither exact,
    nor decided by their relevance (stats.is_decided: relevant,
    negligible, or no relevant difference), nor "no difference" within
    DECIDED_MDE_PCT: [(metric,
    other label, what the row says, job)]."""
    pressure_jobs = run.pressure_jobs
    bnc = run.labels_of(ROLES.BOUNCE)
    if verdicts is None or verdicts.empty or not pressure_jobs or not bnc:
        return []
    v = verdicts[verdicts["job"].isin(pressure_jobs) & verdicts["primary"].astype(bool) &
                 (verdicts["pressure"] != "none") &
                 (verdicts["a"].isin(bnc) | verdicts["b"].isin(bnc))]
    out = []
    for r in v.itertuples():
        if "/" in str(r.disk) or not ROLES.is_candidate(run, r.disk):
            continue
        exact = str(r.analysis).startswith("exact")
        mde = getattr(r, "mde_pct", np.nan)
        if exact or _none_in_either(run, r) or S.is_decided(getattr(r, "relevance", "")) or (
                str(r.verdict).startswith("no significant") and np.isfinite(mde)
                and mde <= DECIDED_MDE_PCT):
            continue
        other = r.b if r.a in bnc else r.a
        said = (f"could detect ±{md.fmt(mde, 2)}%" if np.isfinite(mde) else str(r.verdict))
        out.append((r.metric, other, said, r.job))
    return out


def _none_in_either(run, r):
    """Whether every boot of both kernels of verdict row r counted 0 (a
    direct writer reclaims nothing): nothing there to decide."""
    x = C.rows(run.tidy, r.metric, [r.a, r.b], r.disk, r.job, r.pressure)["value"]
    return bool(len(x)) and bool((x == 0).all())


def _reps_for_decided(n, mde):
    """The reps a side that would bring an MDE of mde % at n reps a side
    to ±DECIDED_MDE_PCT (an MDE shrinks as 1/sqrt of the reps)."""
    return int(np.ceil(n * (mde / DECIDED_MDE_PCT) ** 2))


def pressure_reps(run):
    """The fewest ok pressure boots of a kernel in the run: its reps a side."""
    b = run.boots
    ok = b[(b["pressure"] != "none") & (b["status"] == "ok")]
    return int(ok.groupby("variant").size().min()) if len(ok) else 0


def _deciding_set():
    """bench/matrix's keys of the set that decides the writeback rows,
    {} when it has none."""
    try:
        return matrix.load().get(DECIDING_SET, {})
    except OSError:
        return {}


def deciding_cost(run, keys):
    """"N pressure boots, about M min" of the deciding set (keys, from
    _deciding_set) from this run's own pressure boots' wall time, or ""
    when there is no such set."""
    if not keys.get("variants") or not keys.get("reps"):
        return ""
    boots = len(keys["variants"]) * int(keys["reps"][0])
    b = run.boots
    secs = b[(b["pressure"] != "none") & (b["status"] == "ok")]["seconds"]
    secs = pd.to_numeric(secs, errors="coerce").dropna()
    if not len(secs):
        return f"{boots} pressure boots"
    # two side by side; a pressure boot's time is mostly its boot and
    # its hogs, so one of the candidate disk alone (what the set boots)
    # takes about what one of a pair does (43 s against 37 s, measured)
    minutes = boots * float(secs.median()) / 2 / 60
    return f"{boots} pressure boots, about {minutes:.0f} min"


def undecided_line(run, verdicts):
    """One line: which pressure rows this run could not decide to
    ±DECIDED_MDE_PCT, and what would: the set that decides them tighter
    (and its cost), or, in a run with as many reps as that set, how many
    reps a side ±DECIDED_MDE_PCT would take (an MDE shrinks as 1/sqrt of
    the reps); "" when every row is decided."""
    rows = undecided_rows(run, verdicts)
    if not rows:
        return ""
    shapes = list(dict.fromkeys(j for *_, j in rows))
    names = sorted({(f"{j}: " if len(shapes) > 1 else "") + M.label(m) for m, _, _, j in rows})
    mdes = [float(s.split("±")[1][:-1]) for _, _, s, _ in rows if s.startswith("could detect")]
    head = (f"Not decided to ±{DECIDED_MDE_PCT:g}% here ({len(rows)} rows: " + "; ".join(names)
            + (f"; the widest could detect ±{md.fmt(max(mdes), 2)}%" if mdes else "") + ")")
    keys = _deciding_set()
    try:
        set_reps = int(keys.get("reps", ["0"])[0])
    except ValueError:
        set_reps = 0
    n = pressure_reps(run)
    if set_reps and n >= set_reps and mdes:
        need = _reps_for_decided(n, max(mdes))
        return (f"{head}: at {n} reps a side; the widest would take about {need} reps a "
                f"side (an MDE shrinks as 1/√reps).")
    cost = deciding_cost(run, keys)
    return (f"{head}: `./run.sh compare --set {DECIDING_SET}` decides them tighter"
            + (f" ({cost})" if cost else "") + ".")


def _pressure_cells(run):
    """(level, disk, [jobs]): the first pressure level, the first
    bounce-candidate disk of its pressure jobs and those jobs (the
    shapes), in the run's order; None when the run has no pressure job."""
    pressure_jobs = run.pressure_jobs
    lvls = [p for p in run.levels if p != L.NO_PRESSURE]
    if not pressure_jobs or not lvls:
        return None
    p, t = lvls[0], run.tidy
    t = t[(t["pressure"] == p) & t["job"].isin(pressure_jobs)]
    disks = [d for d in dict.fromkeys(t["disk"]) if not C.is_ratio(d) and ROLES.is_candidate(run, d)]
    jobs = [j for j in pressure_jobs if j in set(t["job"])]
    return (p, disks[0], jobs) if disks and jobs else None


# A shape's verdicts on the first screen: (metric, what it is of the job).
SHAPE_VERDICTS = [("write_bw", "write bandwidth"), ("read_lat_mean_us", "reader's mean latency")]


def first_screen_lines(run, verdicts):
    """The memory result, one line per pressure job (a shape of the
    pressure case), from the first pressure level and the candidate disk:
    the bounce kernel's bounce pages at most in flight (exact) against the
    lowmem the dose left free, then its write bandwidth and its reader's
    mean latency against the removed kernel's and the baseline's, with
    CIs and verdicts; [] when the run has no pressure boot."""
    cells = _pressure_cells(run)
    bnc = run.labels_of(ROLES.BOUNCE)
    if not cells or not bnc or verdicts is None or verdicts.empty:
        return []
    p, disk, jobs = cells
    t = run.tidy[(run.tidy["pressure"] == p) & (run.tidy["disk"] == disk)]
    others = (run.labels_of(ROLES.REMOVED) +
              run.labels_of(ROLES.BASELINE))
    out = []
    for job in jobs:
        sel = t[(t["variant"] == bnc[0]) & (t["job"] == job)]
        peak = sel[sel["metric"] == "bounce_pages_peak"]["value"]
        low = t[(t["job"] == job) & (t["metric"] == "dose_lowfree_kb")]["value"]
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
            for o in others:
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


# The mechanism of each shape: what the kernel did with bounce pages, in
# the bounce kernel's jobs (median of boots), and what it cost.
MECHANISM = [("bounce_pages_peak", "bounce pages in flight, peak"),
             ("bounce_pages_mean", "mean (time-weighted)"),
             ("bounce_pages_per_io", "pages per I/O"),
             ("bounce_alloc_us_per_page", "mempool_alloc µs a page"),
             ("bounce_alloc_max_us", "longest mempool_alloc µs"),
             ("bounce_reserve_used_pages", "pool reserve used, pages"),
             ("pgsteal_per_mib_written", "pages reclaimed per MiB written")]


def bounce_work(run, variant, base, disk, job, pressure):
    """(µs per I/O, share of variant's window): the instructions of the
    bounce's parts (counted.BOUNCE_PARTS, as µs at the clock's rate)
    that variant runs per I/O of the job above base, medians of boots;
    NaNs where the boots carry no instruction counts."""
    t = run.tidy

    def parts(v):
        vals = [C.median(t, v, disk, job, m, pressure) for m in BOUNCE_PARTS]
        return float(np.sum(vals)) if all(np.isfinite(vals)) else np.nan
    d = parts(variant) - parts(base)
    window = C.median(t, variant, disk, job, "insn_window_us_per_io", pressure)
    return d, (d / window if np.isfinite(window) and window > 0 else np.nan)


def mechanism_lines(run):
    """Per shape (pressure job) and level, with and without pressure: the
    bounce kernel's bounce pages (peak, mean, per I/O), its waits in
    mempool_alloc and the pool reserve it used (the lab counter, exact),
    the reclaim beside them, and the bounce's counted work per I/O above
    the baseline: why one shape pays and another does not."""
    pressure_jobs = run.pressure_jobs
    bnc = run.labels_of(ROLES.BOUNCE)
    base = run.labels_of(ROLES.BASELINE)
    if not pressure_jobs or not bnc:
        return []
    t = run.tidy
    rows = []
    for job in pressure_jobs:
        for p in run.levels:
            for disk in dict.fromkeys(t[(t["job"] == job) & (t["pressure"] == p)]["disk"]):
                if C.is_ratio(disk) or not ROLES.is_candidate(run, disk):
                    continue
                vals = [C.median(t, bnc[0], disk, job, m, p) for m, _ in MECHANISM]
                if not any(np.isfinite(vals)):
                    continue
                work, share = (bounce_work(run, bnc[0], base[0], disk, job, p) if base
                               else (np.nan, np.nan))
                rows.append(f"| {job} | {p} | {disk} | " +
                            " | ".join(md.fmt(x) for x in vals) +
                            f" | {md.fmt(work, sign=True)} | "
                            f"{md.fmt(100 * share, 2) + '%' if np.isfinite(share) else 'n/a'} |")
    if not rows:
        return []
    vs = f" above {base[0]}" if base else ""
    return ([f"The mechanism, per shape: what {bnc[0]} did with bounce pages (the kernel's "
             "lab counter, exact; median of boots) and what the bounce's parts cost per I/O "
             f"of the job, writer and reader together ({bnc[0]}{vs}, counted instructions as "
             "µs at the clock's rate; n/a without counts):", "",
             "| shape | pressure | disk | " + " | ".join(w for _, w in MECHANISM) +
             " | bounce work, µs per I/O | its share of the window |",
             "|---|---|---|" + "---|" * (len(MECHANISM) + 2)] + rows + [""])


def section(run, verdicts):
    """[] when the run has nothing to say about memory."""
    out = footprint_lines(run)
    stand = standing_lines(run)
    if stand:
        out += stand + [""]
    return out + dose_lines(run) + pressure_lines(run, verdicts) + mechanism_lines(run)


# --- figures -----------------------------------------------------------


def dose_response(run, p):
    """Each DOSE_PANELS metric against the level's LowFree target (none:
    the boots' own LowFree at the start), one line per variant, on the
    bounce-candidate disk of the pressure jobs. Only where a kernel has
    two points or more (two levels measured): one point a kernel is no
    response (the section's table has those values)."""
    pressure_jobs = run.pressure_jobs
    lvls = run.levels
    if not pressure_jobs or len([x for x in lvls if x != L.NO_PRESSURE]) < 1:
        return
    t = run.tidy[run.tidy["job"].isin(pressure_jobs)]
    disks = [d for d in dict.fromkeys(t["disk"]) if not C.is_ratio(d) and ROLES.is_candidate(run, d)]
    if t.empty or not disks:
        return
    disk = disks[0]
    # the first pressure job of the run (its first shape)
    job = [x for x in pressure_jobs if x in set(t["job"])][0]
    low = _boot_lowfree(run)
    variants = [v for v in dict.fromkeys(run.boots["variant"])]
    targets = _targets(run)
    blocks, most = [], 0
    for metric, _, scale in dose_panels(run):
        for v in variants:
            lines = []
            for lvl in lvls:
                x = targets.get(lvl, np.nan)
                if not np.isfinite(x):
                    x = np.median(low.get(v, [np.nan])) / 1024
                y = C.median(run.tidy, v, disk, job, metric, lvl)
                if np.isfinite(x) and np.isfinite(y):
                    lines.append(f"{x:.6g} {y * scale:.6g}")
            blocks.append(f"# {metric} {v}\n" + ("\n".join(lines) if lines else "? ?"))
            most = max(most, len(lines))
    if most < 2:
        return
    data = "\n\n\n".join(blocks) + "\n"
    panels = {f"p{i + 1}": lab for i, (_, lab, _) in enumerate(dose_panels(run))}
    p.render("dose-response", f"memory-dose-response-{disk}", data,
             dict(title=f"Writeback under memory pressure on {disk}: "
                        f"{T.kernel_title(run)} (medians of boots)",
                  nvariants=len(variants), variants=" ".join(variants), **panels),
             f"dose-response: {job} on {disk} against LowFree", "memory")


def pressure_timeline(run, p):
    """LowFree, PSI some and the Bounce: gauge over the job at the
    strongest level, rep 1, every variant side by side in one figure."""
    pressure_jobs = run.pressure_jobs
    lvls = [x for x in run.levels if x != L.NO_PRESSURE]
    if not lvls or not pressure_jobs or run.jobs.empty:
        return
    lvl = lvls[-1]
    j = run.jobs[(run.jobs["state"] == "ok") & (run.jobs["pressure"] == lvl) &
                 run.jobs["job"].isin(pressure_jobs)]
    j = j[[ROLES.is_candidate(run, d) for d in j["disk"]]]
    if j.empty:
        return
    # the run's first pressure job (its first shape), rep 1 of each variant
    j = j[j["job"] == [x for x in pressure_jobs if x in set(j["job"])][0]]
    first = j.sort_values(["rep", "boot"]).groupby("variant", sort=False).head(1)
    blocks, names = [], []
    for r in first.itertuples():
        mon = R.read_labmon(os.path.join(run.path, r.dir, "labmon.csv"))
        if mon is None or len(mon) < 2 or "t_ms" not in mon:
            continue
        cols = []
        for c, scale in (("t_ms", 1e-3), ("LowFree", 1 / 1024), ("some_avg10", 1.0),
                         ("Bounce", 1.0)):
            cols.append(mon[c].astype(float) * scale if c in mon else None)
        lines = [" ".join("?" if col is None or not np.isfinite(col.iloc[i]) else f"{col.iloc[i]:.6g}"
                          for col in cols) for i in range(len(mon))]
        blocks.append("\n".join(lines))
        names.append(r.variant)
    if not blocks:
        return
    p.render("pressure-timeline", f"memory-pressure-timeline-{lvl}", "\n\n\n".join(blocks) + "\n",
             dict(title=f"Under {lvl}: {first.iloc[0]['disk']}, job "
                        f"{first.iloc[0]['job']}, rep 1 of each variant",
                  nvariants=len(names), variants=" ".join(names)),
             f"timelines under {lvl}: LowFree, PSI, Bounce:, variants side by side", "memory")


def _labmon_data(mon):
    """labmon columns -> the timeline data file; None when unusable."""
    def col(name, scale=1.0):
        if name not in mon:
            return pd.Series([np.nan] * len(mon))
        return pd.to_numeric(mon[name], errors="coerce") * scale
    t = col("t_ms", 1e-3)
    data = pd.DataFrame({
        "t": t, "low": col("LowFree", 1 / 1024), "high": col("HighFree", 1 / 1024),
        "bounce": col("Bounce"), "nr_bounce": col("nr_bounce", 4.0),
        "hits": col("bounce_hits"), "some": col("some_avg10"), "full": col("full_avg10"),
    })
    lines = [" ".join(P.num(x) for x in row) for row in data.itertuples(index=False)]
    flags = dict(has_bounce=int(data[["bounce", "nr_bounce"]].notna().any().any()),
                 has_hits=int(data["hits"].notna().any()),
                 has_psi=int(data[["some", "full"]].notna().any().any()))
    return "\n".join(lines) + "\n", flags, float(t.max())


def job_timelines(run, p):
    """One timeline per variant/disk/job/pressure: its lowest repetition
    (the others look alike; the tidy metrics cover all of them). Only with
    --all-plots: a default run has disk_timelines instead."""
    ok = run.jobs[run.jobs["state"] == "ok"] if not run.jobs.empty else run.jobs
    if ok.empty:
        return
    _, order = P.variant_index(run)
    ktitle = T.kernel_title(run)
    first = ok.sort_values(["rep", "boot"]).groupby(
        ["variant", "disk", "job", "pressure"], sort=False).head(1)
    first = first.assign(_o=first["variant"].map(lambda v: order.index(v) if v in order else 99))
    for j in first.sort_values(["disk", "job", "pressure", "_o"]).itertuples():
        mon = R.read_labmon(os.path.join(run.path, j.dir, "labmon.csv"))
        if mon is None or len(mon) < 2 or "t_ms" not in mon:
            continue
        data, flags, tmax = _labmon_data(mon)
        dur = (j.end_s - j.start_s) if np.isfinite(j.start_s) and np.isfinite(j.end_s) else tmax
        name = P.slug("memory", j.variant, j.disk, j.job, j.pressure, f"r{j.rep}")
        title = (f"Memory during the job: {ktitle}, variant {j.variant}\n"
                 f"disk {j.disk}, job {j.job}, pressure {j.pressure}, rep {j.rep} (boot {j.boot})")
        p.render("memory-timeline", name, data,
                 dict(title=title, jobstart=0, jobend=f"{dur:.3f}", tmax=f"{tmax:.3f}", **flags),
                 f"memory timeline: {j.variant}, {j.disk}, {j.job}, "
                 f"pressure {j.pressure}, rep {j.rep}",
                 "memory timelines")


def disk_timelines(run, p):
    """One figure per disk: memory over every job of rep 1 without extra
    pressure, in run order, the variants side by side on shared axes
    (--all-plots: without pressure its lines are flat, the pressure
    timeline is the figure that moves)."""
    ok = run.jobs[run.jobs["state"] == "ok"] if not run.jobs.empty else run.jobs
    if ok.empty:
        return
    _, order = P.variant_index(run)
    for disk in sorted(set(ok["disk"])):
        d = ok[ok["disk"] == disk]
        pressure = "none" if (d["pressure"] == "none").any() else sorted(set(d["pressure"]))[0]
        d = d[d["pressure"] == pressure]
        blocks, names = [], []
        for v in [v for v in order if v in set(d["variant"])]:
            dv = d[d["variant"] == v]
            rep = dv["rep"].min()
            boot = dv[dv["rep"] == rep]["boot"].min()
            data = _concat_jobs(run, dv[(dv["rep"] == rep) & (dv["boot"] == boot)])
            if data is not None:
                blocks.append(data)
                names.append(v)
        if not blocks:
            continue
        allv = pd.concat(blocks)
        text = "\n\n\n".join(_block_text(b) for b in blocks) + "\n"
        title = (f"Memory on {disk} over the jobs of rep 1 (pressure {pressure}), in run order; "
                 f"{T.kernel_title(run)}")
        p.render("memory-disk", P.slug("memory", disk), text,
                 dict(title=title, nvariants=len(names), variants=" ".join(names),
                      has_bounce=" ".join(str(int(b["bounce"].notna().any())) for b in blocks),
                      has_psi=" ".join(str(int(b["some"].notna().any())) for b in blocks),
                      **_axes(allv)),
                 f"memory timeline: {disk}, rep 1, {', '.join(names)} side by side",
                 "memory timelines")


def _concat_jobs(run, jobs):
    """The labmon samples of jobs (one boot) one after the other: time runs
    on from job to job; NaN rows separate them (a gap in the lines)."""
    parts, t0 = [], 0.0
    for j in jobs.sort_values("dir").itertuples():
        mon = R.read_labmon(os.path.join(run.path, j.dir, "labmon.csv"))
        if mon is None or len(mon) < 2 or "t_ms" not in mon:
            continue

        def col(name, scale=1.0):
            if name not in mon:
                return pd.Series([np.nan] * len(mon))
            return pd.to_numeric(mon[name], errors="coerce").reset_index(drop=True) * scale
        t = col("t_ms", 1e-3)
        parts.append(pd.DataFrame({"t": t + t0, "low": col("LowFree", 1 / 1024),
                                   "bounce": col("Bounce"), "some": col("some_avg10")}))
        parts.append(pd.DataFrame({"t": [np.nan], "low": [np.nan], "bounce": [np.nan],
                                   "some": [np.nan]}))
        t0 += float(t.max()) + 1.0
    return pd.concat(parts, ignore_index=True) if parts else None


def _axes(df):
    """Shared axes of the side-by-side panels (gnuplot's own without data)."""
    low, t = df["low"].dropna(), df["t"].dropna()
    out = dict(tmax=round(float(t.max()), 3) if len(t) else 1)
    if len(low):
        pad = max(float(low.max() - low.min()) * 0.1, 1.0)
        out.update(lowmin=round(float(low.min()) - pad, 3), lowmax=round(float(low.max()) + pad, 3))
    return out


def _block_text(df):
    rows = []
    for r in df.itertuples(index=False):
        rows.append("" if not np.isfinite(r.t) else " ".join(P.num(x) for x in r))
    return "\n".join(rows)


TITLE = "What a bounce costs in memory"


def first_screen(run, verdicts):
    undecided = undecided_line(run, verdicts)
    return [f"- {x}" for x in first_screen_lines(run, verdicts)] + \
        ([f"  {undecided}"] if undecided else [])


def figures(run, verdicts, p, everything):
    if everything:
        disk_timelines(run, p)
        job_timelines(run, p)
    dose_response(run, p)
    pressure_timeline(run, p)
