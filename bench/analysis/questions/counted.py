# SPDX-License-Identifier: GPL-2.0
"""What one bounce costs, counted: the exact time budget of an I/O on an
exact clock, the bounce's parts, and whether the lab's measures agree.

For each performance job on a bounce-candidate disk whose boots carry the
insnprof counts (insnprof.py), the medians of boots per variant of time
per I/O (1 / IOPS), of the counted window's user, kernel and idle time per
I/O and of the kernel's parts. The bounce variant against the baseline
gives:

  the budget       the difference of each part per I/O, and their sum
                   against the difference of 1 / IOPS (they differ only by
                   the few instructions between fio's clock and the
                   window's ends);
  per bounce       the added time over the bounces per I/O (the calls of
                   the bounce completions), also in plain 4 KiB memcpys of
                   the same boots (copyref), a unit of the guest's own;
  the consistency  the three measures of one bounce's cost side by side:
                   time per I/O, CPU per I/O (exact, and the tick-sampled
                   /proc/stat figure the lab used to report), and the cost
                   of the bounce functions alone (copy, bounce page, clone,
                   kmap, completion); two that differ by more than
                   AGREE_PCT are flagged, with the measured quantity that
                   makes up the gap;
  the units        the added instructions, rep movs iterations and the
                   rest, bytes copied (and bytes per iteration), bounce
                   pages and bios per I/O beside the µs: the counts that
                   carry to another CPU, where instruction time does not
                   (units_lines, and CARRY says how to scale them);
  the instruments  per unprobed performance job on any disk, how far apart
                   the kernels' windows hold the lab's own instruments
                   (tracing, the hist): flagged above the determinism
                   bound, where a comparison would carry the lab's cost;
  per bounce       each part of one bounce (the difference per I/O over
                   the bounces per I/O) beside the range its boots allow
                   and how far each kernel's boots spread: a part whose
                   boots repeat within the determinism bound is exact; on a
                   disk the host emulates (usb-pio) the parts nearly repeat
                   while the time per I/O does not, so a bounce's share of
                   an I/O is given from the count, beside what the timing
                   of the disk could detect (the first screen's line). The
                   share is of one fio process's time per I/O (numjobs /
                   IOPS), and one above 100% is never printed: the line
                   says why it cannot be compared instead.
"""
import os

import numpy as np

from lab import labconf as L
from .. import cells as C
from .. import explain as E
from .. import insnprof as X
from .. import md
from .. import roles as ROLES

AGREE_PCT = 10.0
WALL = "time_wall_us_per_io"
PARTS = tuple(X.metric_key(p) for p in X.PART_NAMES)
PER_BOUNCE_PARTS = ("copy", "bounce page", "bio clone", "kmap", "completion")
BOUNCE_PARTS = tuple(X.metric_key(p) for p in PER_BOUNCE_PARTS)
SIDE = ("insn_window_us_per_io", "insn_user_us_per_io",
        "insn_kernel_us_per_io", "insn_idle_us_per_io", "insn_bounces_per_io")
TICK_CPU = ("time_sys_us_per_io", "time_irq_us_per_io")
INSTRUMENTS = X.metric_key("instruments")


def pairs(run):
    """[(disk, job, bounce variant, baseline, {metric: (bounce, base)})]
    for the candidate disks' performance jobs with insnprof counts, the
    pressure-free boots only."""
    t = run.tidy
    if t.empty or "insn_kernel_us_per_io" not in set(t["metric"]):
        return []
    t = t[t["pressure"] == L.NO_PRESSURE] if "pressure" in t else t
    variants = run.labels
    base = [v for v in variants if ROLES.variant_role(run, v) == ROLES.BASELINE]
    bounce = run.labels_of(ROLES.BOUNCE)
    if not base or not bounce:
        return []
    perf = run.performance_jobs
    out = []
    metrics = (WALL,) + SIDE + PARTS + TICK_CPU
    for disk in sorted(d for d in set(t["disk"]) if "/" not in str(d)):
        if not ROLES.is_candidate(run, disk):
            continue
        jobs = set(t[(t["disk"] == disk) & (t["metric"] == "insn_kernel_us_per_io")]["job"])
        for job in sorted(jobs & perf):
            for v in bounce:
                vals = {m: (C.median(t, v, disk, job, m), C.median(t, base[0], disk, job, m))
                        for m in metrics}
                if np.isfinite(vals[WALL][0]) and np.isfinite(vals[WALL][1]):
                    out.append((disk, job, v, base[0], vals))
    return out


def _delta(vals, m):
    a, b = vals[m]
    return a - b if np.isfinite(a) and np.isfinite(b) else np.nan


def _memcpy_us(run, variant):
    j = run.jobs
    if "memcpy_4k_us" not in j:
        return np.nan
    v = j[j["variant"] == variant]["memcpy_4k_us"].dropna()
    return float(np.median(v)) if len(v) else np.nan


def budget(vals):
    """(parts [(name, Δ µs per I/O)], user Δ, idle Δ, sum, Δ wall)."""
    parts = [(p, _delta(vals, X.metric_key(p))) for p in X.PART_NAMES]
    user, idle = _delta(vals, "insn_user_us_per_io"), _delta(vals, "insn_idle_us_per_io")
    total = sum(x for _, x in parts) + user + idle
    return parts, user, idle, total, _delta(vals, WALL)


def consistency(vals):
    """The three measures of the added time per I/O, in µs:
    (time, exact CPU, bounce functions, tick CPU); disagreements as
    [(a, b, gap %)] above AGREE_PCT among the first three."""
    time = _delta(vals, WALL)
    cpu = _delta(vals, "insn_user_us_per_io") + _delta(vals, "insn_kernel_us_per_io")
    funcs = sum(_delta(vals, m) for m in BOUNCE_PARTS)
    tick = sum(_delta(vals, m) for m in TICK_CPU)
    named = (("time per I/O", time), ("CPU per I/O", cpu), ("bounce functions", funcs))
    bad = []
    for i, (na, a) in enumerate(named):
        for nb, b in named[i + 1:]:
            if np.isfinite(a) and np.isfinite(b) and max(abs(a), abs(b)) > 0:
                gap = abs(a - b) / max(abs(a), abs(b)) * 100
                if gap > AGREE_PCT:
                    bad.append((na, nb, gap))
    return time, cpu, funcs, tick, bad


def per_job(run):
    """[(disk, job, variant, {metric: median})] of every counted job on
    every disk, pressure-free boots, variants in pair order."""
    t = run.tidy
    if t.empty or "insn_kernel_us_per_io" not in set(t["metric"]):
        return []
    t = t[t["pressure"] == L.NO_PRESSURE]
    variants = run.labels
    out = []
    for disk in sorted(d for d in set(t["disk"]) if "/" not in str(d)):
        for job in sorted(set(t[(t["disk"] == disk) &
                                (t["metric"] == "insn_kernel_us_per_io")]["job"])):
            for v in variants:
                vals = {m: C.median(t, v, disk, job, m)
                        for m in (WALL,) + SIDE + (INSTRUMENTS,)}
                if np.isfinite(vals["insn_kernel_us_per_io"]):
                    out.append((disk, job, v, vals))
    return out


def _job_table(run):
    rows = per_job(run)
    if not rows:
        return []
    head = ["disk", "job", "variant", "1/IOPS", "window", "user", "kernel", "idle"]
    out = ["Every counted job, µs per I/O (medians of boots): 1/IOPS over fio's "
           "clock, the counted window, and its user, kernel and idle time, which "
           "add up to the window exactly. Kernel time includes interrupts and "
           "softirqs: the plugin counts instructions, not contexts.", "",
           "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for disk, job, v, vals in rows:
        out.append("| " + " | ".join([disk, job, v] + [
            md.fmt(vals[m], fixed=1)
            for m in (WALL, "insn_window_us_per_io", "insn_user_us_per_io",
                      "insn_kernel_us_per_io", "insn_idle_us_per_io")]) + " |")
    return out + [""] + instrument_lines(run, rows)


def instrument_gaps(run, rows):
    """[(disk, job, {variant: µs}, gap % of the window, bound %)] of the
    unprobed performance jobs: how far apart the kernels' windows hold the lab's own
    instruments (tracing, the hist). Kernels with and without an event
    pay its instrument differently, so a gap above the determinism bound
    is the lab's, not the kernels'."""
    bound, perf = run.bound_pct, run.performance_jobs
    groups = {}
    for disk, job, v, vals in rows:
        if job in perf and not C.is_probed(job) and np.isfinite(vals[INSTRUMENTS]):
            groups.setdefault((disk, job), []).append((v, vals))
    out = []
    for (disk, job), vs in groups.items():
        if len(vs) < 2:
            continue
        instr = {v: vals[INSTRUMENTS] for v, vals in vs}
        window = float(np.median([vals["insn_window_us_per_io"] for _, vals in vs]))
        gap = (max(instr.values()) - min(instr.values())) / window * 100 if window else np.nan
        out.append((disk, job, instr, gap, bound))
    return out


def instrument_lines(run, rows):
    gaps = instrument_gaps(run, rows)
    if not gaps:
        return []
    over = [g for g in gaps if g[3] > g[4]]
    top = max(gaps, key=lambda g: g[3])
    if not over:
        return [f"The lab's instruments in unprobed windows: at most {top[3]:.3f}% of the "
                f"window apart between kernels ({top[0]} {top[1]}), below the "
                f"{top[4]:g}% determinism bound: the lab's own cost does not enter the "
                "comparisons.", ""]
    return [f"**The lab's instruments differ between kernels** on {disk} {job}: "
            + ", ".join(f"{v} {x:.2f}" for v, x in instr.items())
            + f" µs per I/O, {gap:.2f}% of the window (determinism bound {bound:g}%): "
            "its comparisons between these kernels carry the lab's own cost."
            for disk, job, instr, gap, bound in over] + [""]


def section(run, verdicts=None):
    """Markdown lines, or [] when no boot of the run was counted."""
    rows = pairs(run)
    table = _job_table(run)
    if not rows:
        return table
    lines = table + ["Counted, not sampled: on an exact clock every instruction takes the "
             "same virtual time, and the insnprof plugin counts each one by kernel "
             "symbol while adding none, so a job's time is its instructions plus its "
             "idle time, exactly. Differences of medians of boots, bounce variant "
             "less baseline, in µs per I/O; \"copy\" is the rep movs iterations "
             "(one a byte or a word: see README, instruction time).", ""]
    head = ["disk", "job", "pair", "Δ 1/IOPS", "sum of parts"] + list(X.PART_NAMES) + \
        ["user", "idle"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    notes = []
    for disk, job, v, b, vals in rows:
        parts, user, idle, total, wall = budget(vals)
        lines.append("| " + " | ".join(
            [disk, job, f"{v} − {b}", md.delta(wall), md.delta(total)] +
            [md.delta(x) for _, x in parts] + [md.delta(user), md.delta(idle)]) + " |")
        notes.append(_job_notes(run, disk, job, v, b, vals, total, wall))
    return (lines + [""] + units_lines(run) + symbol_lines(run, rows) +
            [n for group in notes for n in group])


# Symbols shown per job under the parts (./run.sh explain has them all).
TOP_SYMBOLS = 8


def _direction(run, disk, job):
    """What one I/O of the job is: "a read", "a write", or "an I/O" of a
    job that does both (a writer beside a reader)."""
    t = run.tidy
    present = set(t[(t["disk"] == disk) & (t["job"] == job)]["metric"])
    reads, writes = "read_iops" in present, "write_iops" in present
    return "an I/O" if reads and writes else "a write" if writes else "a read"


def symbol_lines(run, rows):
    """Under the parts, where the instructions go: for the first counted
    disk, one read job, one write job and one that does both (the first
    of each), the
    symbols whose instructions per I/O differ most between the bounce
    variant and the baseline (explain.py), the rest and the total."""
    picked, seen = [], set()
    for disk, job, v, b, _vals in rows:
        d = _direction(run, disk, job)
        if disk == rows[0][0] and d not in seen and not job.endswith(C.PROBED):
            seen.add(d)
            picked.append((disk, job, v, b, d))
    out, jobs, cache = [], _ok_jobs(run), {}   # (a read and a write job share boots)
    for disk, job, v, b, d in picked:
        try:
            sa, sb = E.load_pair((run.path, b), (run.path, v), disk, job, L.NO_PRESSURE,
                                 jobs, cache)
        except E.ExplainError:
            continue
        table, summary = E.differ(sa, sb, TOP_SYMBOLS)
        out += [f"Where the instructions of {d} go ({disk} {job}): the symbols whose "
                f"instructions per I/O differ most, {v} less {b} (means of boots; "
                f"`./run.sh explain {os.path.basename(run.path)} {b} {v} --disk {disk} "
                f"--job {job}` lists them all); the total is the counted difference "
                f"({'exact: every boot of both within the determinism bound' if summary['exact'] else 'the boots spread beyond the determinism bound'}).",
                "", "| symbol | part | Δ instructions per I/O | of it copy | calls per I/O, "
                f"{b} → {v} | Δ µs per I/O | range over reps |", "|---|---|---|---|---|---|---|"]
        for r in table.itertuples():
            calls = (f"{md.fmt(r.calls_a, fixed=2)} → {md.fmt(r.calls_b, fixed=2)}"
                     if np.isfinite(r.calls_a) else "")
            rng = (f"{md.fmt(r.lo, fixed=0, sign=True)} to {md.fmt(r.hi, fixed=0, sign=True)}"
                   if np.isfinite(r.lo) else "")
            out.append(f"| {r.symbol} | {r.part} | {md.fmt(r.delta, fixed=0, sign=True)} | "
                       f"{md.fmt(r.copy, fixed=0, sign=True) if np.isfinite(r.copy) else ''} | "
                       f"{calls} | {md.fmt(r.us, fixed=2, sign=True)} | {rng} |")
        out.append("")
    return out


def _ok_jobs(run):
    """The run's measured jobs, as explain reads them from jobs.csv."""
    j = run.jobs
    return j[j["state"] == "ok"].astype({"rep": int})


def _probe_note(run, disk, job, v):
    """What function_graph said of one bounce in the probed twin, against
    what its own hooks cost there (counted), or "" without a twin."""
    t = run.tidy
    twin = job + C.PROBED
    sub = C.median(t, v, disk, twin, "bounce_submit_us_p50")
    end = C.median(t, v, disk, twin, "bounce_endio_us_p50")
    if not (np.isfinite(sub) and np.isfinite(end)) or C.is_probed(job):
        return ""
    own = C.median(t, v, disk, twin, INSTRUMENTS)
    clean = C.median(t, v, disk, job, INSTRUMENTS)
    per = C.median(t, v, disk, twin, "insn_bounces_per_io")
    cost = ""
    if np.isfinite(own) and np.isfinite(clean) and per and np.isfinite(per):
        hooks = (own - clean) / per
        cost = (f"; there its own hooks and the bounce count cost {hooks:.1f} µs per "
                f"bounce (counted), which leaves {sub + end - hooks:.1f}: the probes "
                "time themselves, and part of their cost lies outside what they time, "
                "so on an exact clock the count replaces them")
    return (f"function_graph (the probed twin) times one bounce at {sub + end:.1f} µs "
            f"(p50 at submit {sub:.1f} + at completion {end:.1f}){cost}.")


def _job_notes(run, disk, job, v, b, vals, total, wall):
    if C.is_probed(job):
        return [f"- **{disk} {job}** (the probed twin): {v} adds {md.delta(wall)} µs per "
                f"I/O over {b}, of which the lab's instruments (function_graph, the "
                f"bounce count) take {md.delta(_delta(vals, X.metric_key('instruments')))} "
                f"and the rest of the kernel {md.delta(_delta(vals, X.metric_key(X.OTHER)))}: "
                "a probed job measures its probes too; its numbers are not the bounce's."]
    time, cpu, funcs, tick, bad = consistency(vals)
    gap = abs(total - wall) / abs(wall) * 100 if wall else np.nan
    out = [f"- **{disk} {job}**: {v} adds {md.delta(wall)} µs per I/O over {b}; "
           f"the parts sum to {md.delta(total)} ({gap:.1f}% apart: the window's ends "
           f"lie outside fio's clock)."]
    per_io = vals["insn_bounces_per_io"][0]
    if np.isfinite(per_io) and per_io > 0:
        memcpy = _memcpy_us(run, v)
        one = wall / per_io
        copies = (f", {one / memcpy:.1f} plain 4 KiB memcpys of the same boots "
                  f"({memcpy:.2f} µs each)") if np.isfinite(memcpy) and memcpy > 0 else ""
        out.append(f"  One bounce: {per_io:.3f} bounces per I/O, so {one:.1f} µs "
                   f"each{copies}.")
    else:
        out.append("  No bounce was counted in these boots: no cost per bounce.")
    out.append(f"  Measures: time per I/O {md.delta(time)}, CPU per I/O {md.delta(cpu)} "
               f"(idle {md.delta(vals['insn_idle_us_per_io'][0] - vals['insn_idle_us_per_io'][1])}), "
               f"bounce functions {md.delta(funcs)} (the rest of the kernel "
               f"{md.delta(_delta(vals, X.metric_key(X.OTHER)))}, the lab's instruments "
               f"{md.delta(_delta(vals, X.metric_key('instruments')))}); "
               f"the tick-sampled sys+irq of /proc/stat says {md.delta(tick)}"
               + (f", {abs(tick - cpu) / abs(cpu) * 100:.0f}% off the count."
                  if np.isfinite(tick) and cpu else "."))
    probed = _probe_note(run, disk, job, v)
    if probed:
        out.append("  " + probed)
    if bad:
        out.append("  **Disagree** by more than "
                   f"{AGREE_PCT:g}%: " + "; ".join(f"{a} and {b2} ({g:.0f}%)"
                                                     for a, b2, g in bad) + ".")
    else:
        out.append(f"  The three agree within {AGREE_PCT:g}%.")
    return out


# The units that carry to another CPU: counts per I/O, beside the µs.
UNITS = ("insn_instructions_per_io", "insn_copy_iters_per_io", "insn_copy_bytes_per_io",
         "bounce_pages_per_io", "insn_bounces_per_io")
CARRY = ("Units that carry: instruction time charges every instruction 8 ns and every "
         "rep movs iteration one instruction, so its µs hold only on this clock. The "
         "counts do not: per I/O, the instructions the bounce variant adds, split into "
         "rep movs iterations and the rest, the bytes those iterations moved (bytes per "
         "iteration: 1 for movsb, 2 for movsw, 4 for movsl, as the plugin saw them), the "
         "bounce pages taken and the bios cloned. To scale them to a real CPU, time the "
         "rest at that CPU's own cycles per instruction on this kernel path, the bytes at "
         "its own copy cost per byte (a plain memcpy timed there, like copyref: with fast "
         "string moves a byte-wise rep movsb costs about what a dword-wise movsl does), "
         "and a page and a clone at what that machine's allocator takes for one; the lab "
         "gives the counts, not a cycle model.")


def unit_deltas(run, disk, job, bounce, base):
    """{metric: bounce less baseline} of the count metrics, and the
    bounce variant's own pages and bios per I/O (the baseline takes none)."""
    t = run.tidy
    t = t[t["pressure"] == L.NO_PRESSURE] if "pressure" in t else t
    med = lambda v, m: C.median(t, v, disk, job, m)
    out = {m: med(bounce, m) - med(base, m) for m in UNITS[:3]}
    out.update({m: med(bounce, m) for m in UNITS[3:]})
    out["insn_us"] = sum(med(bounce, m) - med(base, m)
                         for m in ("insn_user_us_per_io", "insn_kernel_us_per_io"))
    return out


def units_lines(run):
    """Markdown lines: per counted pair (pairs()), the added instruction
    time beside the counts that carry; [] without counts (runs before
    the count metrics)."""
    rows = []
    for disk, job, v, b, _vals in pairs(run):
        u = unit_deltas(run, disk, job, v, b)
        if not np.isfinite(u["insn_instructions_per_io"]):
            continue
        iters, nbytes = u["insn_copy_iters_per_io"], u["insn_copy_bytes_per_io"]
        per = nbytes / iters if np.isfinite(nbytes) and iters else np.nan
        rows.append("| " + " | ".join(
            [disk, job, f"{v} − {b}", md.delta(u["insn_us"], 2),
             md.delta(u["insn_instructions_per_io"], 0), md.delta(iters, 0),
             md.delta(u["insn_instructions_per_io"] - iters, 0), md.delta(nbytes, 0),
             md.fmt(per, fixed=2), md.fmt(u["bounce_pages_per_io"], fixed=2),
             md.fmt(u["insn_bounces_per_io"], fixed=3)])
            + " |")
    if not rows:
        return []
    head = ["disk", "job", "pair", "Δ µs (user + kernel)", "Δ instructions",
            "Δ rep movs iterations", "Δ other instructions", "Δ bytes copied",
            "bytes per iteration", "bounce pages taken", "bios cloned"]
    return [CARRY, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + rows + [""]


TITLE = "What a bounce costs, counted"


def first_screen(run, verdicts):
    return []


def figures(run, verdicts, p, everything):
    pass
