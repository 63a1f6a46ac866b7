# SPDX-License-Identifier: GPL-2.0
"""What one bounce costs, counted: the exact time budget of an I/O on an
exact clock. In: the insnprof counts (insnprof.py) of the pressure-free
boots. Out: every counted job's budget; per performance job on a
candidate disk, the bounce variant less the baseline part by part, per
bounce, in units that carry to another CPU, where the instructions go,
and whether the lab's measures of the cost agree (within AGREE_PCT).
"""
import os
from itertools import combinations

import numpy as np

from lab import labconf as L
from .. import cells as C, explain as E, insnprof as X, md, plots as P, roles as R, tidy as T

TITLE = "What a bounce costs, counted"
AGREE_PCT = 10.0
WALL = "time_wall_us_per_io"
PARTS = tuple(X.metric_key(p) for p in X.PART_NAMES)
PER_BOUNCE_PARTS = ("copy", "bounce page", "bio clone", "kmap", "completion")
BOUNCE_PARTS = tuple(X.metric_key(p) for p in PER_BOUNCE_PARTS)
SIDE = ("insn_window_us_per_io", "insn_user_us_per_io",
        "insn_kernel_us_per_io", "insn_idle_us_per_io", "insn_bounces_per_io")
WINDOW, USER, KERNEL, IDLE, BOUNCES = SIDE
TICK_CPU = ("time_sys_us_per_io", "time_irq_us_per_io")
INSTRUMENTS = X.metric_key("instruments")
OTHER = X.metric_key(X.OTHER)
TOP_SYMBOLS = 8     # per job under the parts (./run.sh explain has them all)
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


def _calm(run):
    """The pressure-free tidy rows, None when no boot was counted."""
    t = run.tidy
    return None if t.empty or KERNEL not in set(t["metric"]) else run.calm


def _counted(t, disks, labels, metrics):
    """[(disk, job, variant, {metric: median})] of the counted jobs on disks."""
    return [(disk, job, v, {m: C.median(t, v, disk, job, m) for m in metrics})
            for disk in sorted(disks) for job in sorted(set(C.rows(t, KERNEL, disk=disk)["job"]))
            for v in labels]


def pairs(run):
    """[(disk, job, bounce variant, baseline, {metric: (bounce, base)})]
    of the counted performance jobs on the candidate disks."""
    t, base, bounce = _calm(run), run.labels_of(R.BASELINE), run.labels_of(R.BOUNCE)
    if t is None or not base or not bounce:
        return []
    metrics = (WALL,) + SIDE + PARTS + TICK_CPU
    out = []
    for disk, job, v, vals in _counted(t, run.candidate_disks, bounce, metrics):
        ref = {m: C.median(t, base[0], disk, job, m) for m in metrics}
        if job in run.performance_jobs and np.isfinite(vals[WALL]) and np.isfinite(ref[WALL]):
            out.append((disk, job, v, base[0], {m: (vals[m], ref[m]) for m in metrics}))
    return out


def per_job(run):
    """[(disk, job, variant, {metric: median})] of every counted job and disk."""
    t = _calm(run)
    if t is None:
        return []
    return [r for r in _counted(t, {d for d in t["disk"] if not C.is_ratio(d)}, run.labels,
                                (WALL,) + SIDE + (INSTRUMENTS,)) if np.isfinite(r[3][KERNEL])]


def _delta(vals, m):
    a, b = vals[m]
    return a - b if np.isfinite(a) and np.isfinite(b) else np.nan


def budget(vals):
    """(parts [(name, Δ µs per I/O)], user Δ, idle Δ, sum, Δ wall)."""
    parts = [(p, _delta(vals, X.metric_key(p))) for p in X.PART_NAMES]
    user, idle = _delta(vals, USER), _delta(vals, IDLE)
    return parts, user, idle, sum(x for _, x in parts) + user + idle, _delta(vals, WALL)


def consistency(vals):
    """The measures of the added time per I/O in µs, (time, exact CPU,
    bounce functions, tick CPU, [(a, b, gap %)] of the first three
    that differ by more than AGREE_PCT)."""
    time = _delta(vals, WALL)
    cpu = _delta(vals, USER) + _delta(vals, KERNEL)
    funcs = sum(_delta(vals, m) for m in BOUNCE_PARTS)
    named = (("time per I/O", time), ("CPU per I/O", cpu), ("bounce functions", funcs))
    gaps = [(na, nb, abs(a - b) / max(abs(a), abs(b)) * 100)
            for (na, a), (nb, b) in combinations(named, 2)
            if np.isfinite(a) and np.isfinite(b) and max(abs(a), abs(b)) > 0]
    bad = [g for g in gaps if g[2] > AGREE_PCT]
    return time, cpu, funcs, sum(_delta(vals, m) for m in TICK_CPU), bad


def _job_table(run):
    rows = per_job(run)
    if not rows:
        return []
    cols = (WALL, WINDOW, USER, KERNEL, IDLE)
    return ["Every counted job, µs per I/O (medians of boots): 1/IOPS over fio's "
            "clock, the counted window, and its user, kernel and idle time, which "
            "add up to the window exactly. Kernel time includes interrupts and "
            "softirqs: the plugin counts instructions, not contexts.", "",
            md.table(["disk", "job", "variant", "1/IOPS", "window", "user", "kernel", "idle"],
                     [[d, j, v] + [md.fmt(vals[m], fixed=1) for m in cols]
                      for d, j, v, vals in rows]),
            ""] + instrument_lines(run, rows)


def instrument_gaps(run, rows):
    """[(disk, job, {variant: µs}, gap % of the window, bound %)] of the
    unprobed performance jobs: how far apart the kernels' windows hold
    the lab's own instruments (above the determinism bound, the lab's
    cost enters the comparison)."""
    groups = {}
    for disk, job, v, vals in rows:
        if job in run.question_jobs and np.isfinite(vals[INSTRUMENTS]):
            groups.setdefault((disk, job), []).append((v, vals))
    out = []
    for (disk, job), vs in groups.items():
        if len(vs) < 2:
            continue
        instr = {v: vals[INSTRUMENTS] for v, vals in vs}
        window = float(np.median([vals[WINDOW] for _, vals in vs]))
        gap = (max(instr.values()) - min(instr.values())) / window * 100 if window else np.nan
        out.append((disk, job, instr, gap, run.bound_pct))
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
    rows, table = pairs(run), _job_table(run)
    if not rows:
        return table
    cells, notes = [], []
    for disk, job, v, b, vals in rows:
        parts, user, idle, total, wall = budget(vals)
        cells.append([disk, job, f"{v} − {b}", md.delta(wall), md.delta(total)] +
                     [md.delta(x) for _, x in parts] + [md.delta(user), md.delta(idle)])
        notes += _job_notes(run, disk, job, v, b, vals, total, wall)
    head = ["disk", "job", "pair", "Δ 1/IOPS", "sum of parts", *X.PART_NAMES, "user", "idle"]
    return table + [
        "Counted, not sampled: on an exact clock every instruction takes the "
        "same virtual time, and the insnprof plugin counts each one by kernel "
        "symbol while adding none, so a job's time is its instructions plus its "
        "idle time, exactly. Differences of medians of boots, bounce variant "
        "less baseline, in µs per I/O; \"copy\" is the rep movs iterations "
        "(one a byte or a word: see README, instruction time).", "",
        md.table(head, cells), ""] + units_lines(run) + symbol_lines(run, rows) + notes


def symbol_lines(run, rows):
    """Where the instructions go: on the first counted disk, the first
    read, write and read-write job, the symbols whose instructions per
    I/O differ most between the bounce variant and the baseline."""
    picked = {}     # what one I/O of the job is -> the first such job
    for disk, job, v, b, _vals in rows:
        if disk == rows[0][0] and not C.is_probed(job):
            present = set(C.rows(run.tidy, disk=disk, job=job)["metric"])
            reads, writes = "read_iops" in present, "write_iops" in present
            d = "an I/O" if reads and writes else "a write" if writes else "a read"
            picked.setdefault(d, (disk, job, v, b))
    jobs = run.jobs[run.jobs["state"] == "ok"].astype({"rep": int})   # as explain reads them
    out, cache = [], {}     # a read and a write job share boots
    for d, (disk, job, v, b) in picked.items():
        try:
            sa, sb = E.load_pair((run.path, b), (run.path, v), disk, job, L.NO_PRESSURE,
                                 jobs, cache)
        except E.ExplainError:
            continue
        table, summary = E.differ(sa, sb, TOP_SYMBOLS)
        exact = ("exact: every boot of both within the determinism bound" if summary["exact"]
                 else "the boots spread beyond the determinism bound")
        out += [f"Where the instructions of {d} go ({disk} {job}): the symbols whose "
                f"instructions per I/O differ most, {v} less {b} (means of boots; "
                f"`./run.sh explain {os.path.basename(run.path)} {b} {v} --disk {disk} "
                f"--job {job}` lists them all); the total is the counted difference "
                f"({exact}).", "",
                md.table(["symbol", "part", "Δ instructions per I/O", "of it copy",
                          f"calls per I/O, {b} → {v}", "Δ µs per I/O", "range over reps"],
                         [[r.symbol, r.part, md.delta(r.delta, 0),
                           md.delta(r.copy, 0) if np.isfinite(r.copy) else "",
                           f"{md.fmt(r.calls_a, fixed=2)} → {md.fmt(r.calls_b, fixed=2)}"
                           if np.isfinite(r.calls_a) else "", md.delta(r.us, 2),
                           f"{md.delta(r.lo, 0)} to {md.delta(r.hi, 0)}"
                           if np.isfinite(r.lo) else ""]
                          for r in table.itertuples()]), ""]
    return out


def _probe_lines(run, disk, job, v):
    """What function_graph said of one bounce in the probed twin, against
    what its own hooks cost there (counted), [] without a twin."""
    t, twin = run.tidy, job + C.PROBED
    sub, end = (C.median(t, v, disk, twin, f"bounce_{m}_us_p50") for m in ("submit", "endio"))
    if not (np.isfinite(sub) and np.isfinite(end)):
        return []
    own, clean = (C.median(t, v, disk, j, INSTRUMENTS) for j in (twin, job))
    per = C.median(t, v, disk, twin, BOUNCES)
    cost = ""
    if np.isfinite(own) and np.isfinite(clean) and per and np.isfinite(per):
        hooks = (own - clean) / per
        cost = (f"; there its own hooks and the bounce count cost {hooks:.1f} µs per "
                f"bounce (counted), which leaves {sub + end - hooks:.1f}: the probes "
                "time themselves, and part of their cost lies outside what they time, "
                "so on an exact clock the count replaces them")
    return [f"  function_graph (the probed twin) times one bounce at {sub + end:.1f} µs "
            f"(p50 at submit {sub:.1f} + at completion {end:.1f}){cost}."]


def job_median(run, column, variant, disk=None, job=None):
    """A job-table column's median over the variant's jobs (on disk, job), else NaN."""
    j = run.jobs
    x = C.rows(j, None, variant, disk, job)[column].dropna() if column in j else []
    return float(np.median(x.astype(float))) if len(x) else np.nan


def _job_notes(run, disk, job, v, b, vals, total, wall):
    if C.is_probed(job):
        return [f"- **{disk} {job}** (the probed twin): {v} adds {md.delta(wall)} µs per "
                f"I/O over {b}, of which the lab's instruments (function_graph, the "
                f"bounce count) take {md.delta(_delta(vals, INSTRUMENTS))} "
                f"and the rest of the kernel {md.delta(_delta(vals, OTHER))}: "
                "a probed job measures its probes too; its numbers are not the bounce's."]
    time, cpu, funcs, tick, bad = consistency(vals)
    gap = abs(total - wall) / abs(wall) * 100 if wall else np.nan
    out = [f"- **{disk} {job}**: {v} adds {md.delta(wall)} µs per I/O over {b}; "
           f"the parts sum to {md.delta(total)} ({gap:.1f}% apart: the window's ends "
           f"lie outside fio's clock)."]
    per_io, memcpy = vals[BOUNCES][0], job_median(run, "memcpy_4k_us", v)
    one = wall / per_io if per_io > 0 else np.nan
    copies = (f", {one / memcpy:.1f} plain 4 KiB memcpys of the same boots "
              f"({memcpy:.2f} µs each)") if np.isfinite(memcpy) and memcpy > 0 else ""
    out.append(f"  One bounce: {per_io:.3f} bounces per I/O, so {one:.1f} µs each{copies}."
               if per_io > 0 else "  No bounce was counted in these boots: no cost per bounce.")
    out.append(f"  Measures: time per I/O {md.delta(time)}, CPU per I/O {md.delta(cpu)} "
               f"(idle {md.delta(vals[IDLE][0] - vals[IDLE][1])}), "
               f"bounce functions {md.delta(funcs)} (the rest of the kernel "
               f"{md.delta(_delta(vals, OTHER))}, the lab's instruments "
               f"{md.delta(_delta(vals, INSTRUMENTS))}); "
               f"the tick-sampled sys+irq of /proc/stat says {md.delta(tick)}"
               + (f", {abs(tick - cpu) / abs(cpu) * 100:.0f}% off the count."
                  if np.isfinite(tick) and cpu else "."))
    out += _probe_lines(run, disk, job, v)
    return out + [f"  **Disagree** by more than {AGREE_PCT:g}%: " +
                  "; ".join(f"{x} and {y} ({g:.0f}%)" for x, y, g in bad) + "."
                  if bad else f"  The three agree within {AGREE_PCT:g}%."]


def unit_deltas(run, disk, job, bounce, base):
    """{metric: bounce less baseline} of the count metrics, the bounce
    variant's own pages and bios per I/O (the baseline takes none), and
    "insn_us" the added user and kernel time."""
    t = run.calm

    def med(v, m):
        return C.median(t, v, disk, job, m)
    out = {m: med(bounce, m) - med(base, m) for m in UNITS[:3]}
    out.update({m: med(bounce, m) for m in UNITS[3:]})
    out["insn_us"] = sum(med(bounce, m) - med(base, m) for m in (USER, KERNEL))
    return out


def units_lines(run):
    """Per counted pair, the added instruction time beside the counts that carry."""
    rows = []
    for disk, job, v, b, _vals in pairs(run):
        u = unit_deltas(run, disk, job, v, b)
        insns, iters, nbytes = (u[m] for m in UNITS[:3])
        if not np.isfinite(insns):
            continue
        per = nbytes / iters if np.isfinite(nbytes) and iters else np.nan
        rows.append([disk, job, f"{v} − {b}", md.delta(u["insn_us"], 2), md.delta(insns, 0),
                     md.delta(iters, 0), md.delta(insns - iters, 0), md.delta(nbytes, 0),
                     md.fmt(per, fixed=2), md.fmt(u["bounce_pages_per_io"], fixed=2),
                     md.fmt(u[BOUNCES], fixed=3)])
    if not rows:
        return []
    return [CARRY, "", md.table(
        ["disk", "job", "pair", "Δ µs (user + kernel)", "Δ instructions",
         "Δ rep movs iterations", "Δ other instructions", "Δ bytes copied",
         "bytes per iteration", "bounce pages taken", "bios cloned"], rows), ""]


def first_screen(run, verdicts):
    return []


def figures(run, verdicts, p, everything):
    """The counted budget of each unprobed job: its parts stacked (bounce
    variant less baseline, µs per I/O), the measured Δ 1/IOPS beside."""
    rows = [r for r in pairs(run) if not C.is_probed(r[1]) and not run.sweep_shape(r[1])]
    if not rows:
        return
    names = list(X.PART_NAMES) + ["user", "idle"]
    blocks, ticks = {n: [] for n in names}, []
    for x, (disk, job, v, b, vals) in enumerate(rows):
        parts, user, idle, _total, wall = budget(vals)
        up = down = 0.0
        for name, d in parts + [("user", user), ("idle", idle)]:
            if not np.isfinite(d) or d == 0:
                continue
            lo, hi = (up, up + d) if d > 0 else (down + d, down)
            up, down = (hi, down) if d > 0 else (up, lo)
            blocks[name].append(f"{x} {P.num(lo)} {P.num(hi)}")
        ticks.append(f"{x} {P.num(wall)} {P.q(P.lines(disk, job, f'{v} − {b}'))}")
    data = "\n\n\n".join("\n".join(blocks[n]) or "0 ? ?" for n in names)
    title = (f"What one I/O costs more with the bounce, counted, part by part (µs per I/O, "
             f"medians of boots)\n{T.kernel_title(run)}")
    p.render("budget", "budget", data + "\n\n\n" + "\n".join(ticks) + "\n",
             dict(title=title, nparts=len(names), nbars=len(rows),
                  parts=" ".join(n.replace(" ", "-") for n in names)),
             "the counted budget: the bounce's parts per I/O, stacked per job and disk",
             "counted", width=len(rows) * P.PX_PER_LABEL + 400)
