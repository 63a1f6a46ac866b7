# SPDX-License-Identifier: GPL-2.0
"""Where one I/O's time goes, and whether the lab's measures of a bounce's
cost agree.

Per performance job on a bounce-candidate disk booted with one vCPU (the
insn clock), the medians per variant of the wall time per I/O (1 / IOPS,
fio's runtime) and of the CPU states of /proc/stat per I/O (user, system,
irq+softirq, idle: tick-sampled at USER_HZ). The /proc/stat window is the
job's whole span, fio's start and end included, so the states add up to
the wall time plus that: "outside fio's run" is their sum less the wall
time (a probed job's trace is read out there). The difference of the
bounce variant to the baseline says where the bounce's added time went:
the lab's CPU per GiB counts system, irq and softirq only, so time the
bounce adds in user space or idle (a completion waiting for a timer or a
softirq) is time the CPU measure misses. With two vCPUs the states count
both, so host-time disks get no budget.
"""
import numpy as np

from . import determinism as D
from lab import labconf as L
from . import roles as ROLES
from . import stats as S

PARTS = ("time_user_us_per_io", "time_sys_us_per_io", "time_irq_us_per_io",
         "time_idle_us_per_io")
WALL = "time_wall_us_per_io"


def cell_median(t, variant, disk, job, metric):
    """The median of one cell of a tidy table, NaN when it has no value."""
    v = t[(t["variant"] == variant) & (t["disk"] == disk) & (t["job"] == job) &
          (t["metric"] == metric)]["value"]
    return float(np.median(v)) if len(v) else np.nan


def _fmt(x):
    return "n/a" if not np.isfinite(x) else f"{x:.1f}"


def rows(run):
    """[(disk, job, variant, wall, parts..., unaccounted)] in µs per I/O,
    the medians of boots; variants baseline first."""
    t = run.tidy
    if t.empty or WALL not in set(t["metric"]):
        return []
    out = []
    perf = D.performance_jobs(run)
    variants = S.pair_order(run, list(dict.fromkeys(run.boots["variant"])))
    lab = L.load(run.path)
    for disk in sorted(d for d in set(t["disk"]) if "/" not in str(d)):
        cpus = L.clock(lab, L.disk_clock(run.meta or {}, disk)).get("cpus")
        if not ROLES.is_candidate(run, disk) or str(cpus) != "1":
            continue
        for job in sorted(set(t[(t["disk"] == disk) & (t["metric"] == WALL)]["job"]) & perf):
            for v in variants:
                wall = cell_median(t, v, disk, job, WALL)
                if not np.isfinite(wall):
                    continue
                parts = [cell_median(t, v, disk, job, m) for m in PARTS]
                out.append((disk, job, v, wall, *parts,
                            np.sum(parts) - wall if all(np.isfinite(parts)) else np.nan))
    return out


def section(run):
    """Markdown lines of the time budget, or [] when the run has none."""
    r = rows(run)
    if not r:
        return []
    head = ["disk", "job", "variant", "wall", "user", "sys", "irq+softirq", "idle",
            "outside fio's run"]
    lines = ["Where an I/O's time goes, µs per I/O, on the one-vCPU disks (medians of "
             "boots; wall = 1 / IOPS over fio's runtime; the CPU states of /proc/stat, "
             "tick-sampled at 100 Hz, over the job's whole span, so they add up to the "
             "wall time plus the time outside fio's run). The lab's CPU per GiB counts "
             "sys and irq+softirq only.", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for disk, job, v, wall, *rest in r:
        lines.append("| " + " | ".join([disk, job, v, _fmt(wall)] + [_fmt(x) for x in rest]) + " |")
    lines += [""] + _differences(run, r)
    return lines


def _differences(run, r):
    """One line per job: the bounce variant's added time per I/O and where
    it went, against the baseline."""
    out = []
    by = {(d, j, v): rest for d, j, v, *rest in r}
    for (disk, job, v), rest in by.items():
        if not S.is_bounce_variant(run, v):
            continue
        base = [b for b in by if b[:2] == (disk, job) and
                ROLES.variant_role(run, b[2]) == "baseline"]
        if not base:
            continue
        b = by[base[0]]
        d = [x - y for x, y in zip(rest, b)]
        names = ["user", "sys", "irq+softirq", "idle", "outside fio's run"]
        out.append(f"- {disk} {job}: {v} adds {_fmt(d[0])} µs per I/O over {base[0][2]}: "
                   + ", ".join(f"{n} {_fmt(x)}" for n, x in zip(names, d[1:])) +
                   f"; the CPU measure (sys + irq+softirq) sees {_fmt(d[2] + d[3])} of it.")
    return out
