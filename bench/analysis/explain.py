# SPDX-License-Identifier: GPL-2.0
"""Where two kernels' instructions differ, symbol by symbol: the exact
differential profile of one job (bench/explain prints it). Two sides, A
and B (a label of a run, or one label in two runs), of one cell -> per I/O
of the job, B - A instructions per symbol (differ). The bounce-page
counter runs in the window only in a job without a probed twin (about
1.5 % of a 4 KiB read on pre-fixed): instruments_note.
"""
import os
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from lab import labconf as L
from . import determinism as D
from . import insnprof as X
from .monitors import Boot, Job

USER, UNNAMED = "(user)", "(kernel, no symbol)"
# The job table's word for a window the bounce-page counter counted.
COUNTED = "counted"


class ExplainError(Exception):
    """Bad input: an unknown run, label, disk or job, or no counts."""


@dataclass
class Side:
    """One side: a label's ok jobs of one cell, per rep by symbol."""
    run: str
    label: str
    disk: str
    job: str
    pressure: str
    ns_per_insn: float = np.nan
    bound_pct: float = field(default_factory=D.lab_bound_pct)
    reps: list = field(default_factory=list)        # rep numbers
    per_io: list = field(default_factory=list)      # {symbol: insns per I/O}
    calls: list = field(default_factory=list)       # {symbol: calls per I/O}
    copy: list = field(default_factory=list)        # {symbol: rep movs iterations per I/O}
    total: list = field(default_factory=list)       # window insns per I/O
    counter: set = field(default_factory=set)       # the jobs' "occupancy" states

    @property
    def name(self):
        return f"{os.path.basename(self.run)}:{self.label}"


def run_jobs(run_dir):
    """The run's job table (jobs.csv, written by the analysis)."""
    path = os.path.join(run_dir, "jobs.csv")
    if not os.path.isfile(path):
        raise ExplainError(f"{run_dir}: no jobs.csv (not an analysed run; "
                           f"./run.sh report {os.path.basename(run_dir)} writes it)")
    j = pd.read_csv(path, dtype=str, keep_default_na=False)
    return j[j["state"] == "ok"]


def _choose(rows, col, asked, where, what=None, order=None):
    """(asked, its rows): asked among the values of col in rows, in the order
    they come or sorted by order; the first when None; else ExplainError."""
    found = list(dict.fromkeys(rows[col]))
    if order:
        found.sort(key=order)
    what = what or col
    if asked is None:
        if not found:
            raise ExplainError(f"no {what} with instruction counts in {where}")
        asked = found[0]
    if asked not in found:
        raise ExplainError(f"unknown {what} '{asked}' in {where} "
                           f"(there: {', '.join(found) or 'none'})")
    return asked, rows[rows[col] == asked]


def load_side(run_dir, label, disk=None, job=None, pressure=None, jobs=None, cache=None):
    """The Side of label in run_dir. disk, job and pressure None: the
    label's first (candidate disks first, jobs in the order they ran,
    "none" first). ExplainError on anything unknown or without counts.
    cache: a dict kept across calls (each insnprof.txt parsed once)."""
    if not os.path.isdir(run_dir):
        raise ExplainError(f"no run folder {run_dir}")
    jobs = run_jobs(run_dir) if jobs is None else jobs
    lab = L.load(run_dir)
    where = f"run {os.path.basename(run_dir)}"
    label, mine = _choose(jobs, "variant", label, where)
    disk, mine = _choose(mine, "disk", disk, f"{where}, {label}",
                         order=lambda d: L.disk_role(lab, d) != "bounce-candidate")
    job, mine = _choose(mine, "job", job, f"{where}, {label} on {disk}")
    pressure, mine = _choose(mine, "pressure", pressure, f"{where}, {label} {disk} {job}",
                             "pressure level", lambda p: (p != L.NO_PRESSURE, p))
    side = Side(run_dir, label, disk, job, pressure, bound_pct=D.bound_pct(lab))
    cache = {} if cache is None else cache
    for r in mine.sort_values("rep", key=lambda s: s.astype(int)).itertuples():
        jdir = os.path.join(run_dir, r.dir)
        boot = Boot(X.boot_dir(jdir), lab)
        prof = X.job_profile(jdir, cache)
        ios = Job(jdir, boot).ios
        if prof is None or not ios or not boot.ns_per_insn:
            continue
        counts, syms = prof[0], prof[0]["syms"]
        # per I/O of each symbol: instructions, calls, rep movs iterations
        for i, into in enumerate((side.per_io, side.calls, side.copy)):
            into.append({s: v[i] / ios for s, v in syms.items()})
        side.per_io[-1][USER] = counts["user"] / ios
        side.per_io[-1][UNNAMED] = (counts["kernel"] - sum(v[0] for v in syms.values())) / ios
        side.reps.append(int(r.rep))
        side.total.append((counts["user"] + counts["kernel"]) / ios)
        # the bounce-page counter's state: "counted", "off", "absent", ...
        side.counter.add(getattr(r, "occupancy", "") or "")
        side.ns_per_insn = boot.ns_per_insn
    if not side.reps:
        raise ExplainError(f"{where}: {label} {disk} {job} ({pressure}) has no instruction "
                           "counts (no insnprof.txt: boot it on an exact clock)")
    return side


def instruments_note(a, b):
    """A line when the bounce-page counter ran in one side's windows and
    not in the other's: its clock reads are then in the deltas; else ""."""
    if (COUNTED in a.counter) != (COUNTED in b.counter):
        on, off = (a, b) if COUNTED in a.counter else (b, a)
        return (f"the bounce-page counter ran in {on.name}'s windows and not in {off.name}'s "
                "(a plan without or with the job's probed twin): its clock reads "
                "(ktime_get, read_hpet) and bookkeeping are in the deltas")
    return ""


def load_pair(a, b, disk=None, job=None, pressure=None, jobs=None, cache=None):
    """(Side A, Side B) of a and b, each (run folder, label), B on A's
    cell. jobs: the job table of the one run both are in, when given."""
    side_a = load_side(*a, disk, job, pressure, jobs, cache)
    return side_a, load_side(*b, side_a.disk, side_a.job, side_a.pressure, jobs, cache)


def _frame(dicts, cols):
    return pd.DataFrame(dicts).fillna(0.0).reindex(columns=cols, fill_value=0.0)


def is_exact(side):
    """Whether the side's boots repeat: window instructions per I/O within
    the determinism bound ((max - min) / median)."""
    t = np.asarray(side.total, float)
    return len(t) >= 1 and (t.max() - t.min()) <= side.bound_pct / 100 * np.median(t)


def differ(a, b, top=20):
    """(rows, summary) of B against A. rows: the top symbols by |delta|,
    "rest", the user and unnamed lines and "total"; columns symbol, part,
    delta, copy (the rep movs iterations among them), calls_a, calls_b,
    us, lo, hi (over reps paired by rep; NaN without one). summary: the
    counted delta, the total's relative gap to it, exactness."""
    syms = sorted({s for d in a.per_io + b.per_io for s in d})
    pa, pb = _frame(a.per_io, syms), _frame(b.per_io, syms)
    ca, cb = _frame(a.calls, syms).mean(), _frame(b.calls, syms).mean()
    copy = _frame(b.copy, syms).mean() - _frame(a.copy, syms).mean()
    delta = pb.mean() - pa.mean()
    shared = [r for r in b.reps if r in a.reps]
    per_rep = (pb.iloc[[b.reps.index(r) for r in shared]].reset_index(drop=True) -
               pa.iloc[[a.reps.index(r) for r in shared]].reset_index(drop=True))
    lo, hi = per_rep.min(), per_rep.max()

    def span(cols):
        s = per_rep[cols].sum(axis=1)
        return (float(s.min()), float(s.max())) if cols else (np.nan, np.nan)

    ns = a.ns_per_insn if np.isfinite(a.ns_per_insn) else b.ns_per_insn
    special = [USER, UNNAMED]
    named = delta.drop(special).reindex(delta.drop(special).abs().sort_values(
        ascending=False, kind="stable").index)
    head, rest = named.iloc[:top], named.iloc[top:]

    def row(sym, d, reps, part="", c_a=np.nan, c_b=np.nan, cp=np.nan):
        return dict(symbol=sym, part=part, delta=d, copy=cp, calls_a=c_a, calls_b=c_b,
                    us=d * ns / 1000.0, lo=reps[0], hi=reps[1])
    rows = [row(s, delta[s], (lo[s], hi[s]), X.part_of(s), ca[s], cb[s], copy[s])
            for s in head.index]
    rows.append(row(f"rest ({len(rest)} symbols)", float(rest.sum()), span(list(rest.index))))
    rows += [row(s, delta[s], (lo[s], hi[s])) for s in special]
    total = float(delta.sum())
    rows.append(row("total", total, span(syms)))
    a_total, b_total = float(np.mean(a.total)), float(np.mean(b.total))
    counted = b_total - a_total
    return pd.DataFrame(rows), dict(counted=counted, total=total,
                                    gap=abs(total - counted) / max(abs(counted), 1e-12),
                                    exact=is_exact(a) and is_exact(b), ns=ns,
                                    a_total=a_total, b_total=b_total)


def _num(x, digits=1, sign=False):
    if x is None or not np.isfinite(x):
        return "n/a"
    return f"{x:+,.{digits}f}" if sign else f"{x:,.{digits}f}"


def render(a, b, rows, summary):
    """The text bench/explain prints."""
    head = f"{b.label} against {a.label}" if a.run == b.run else f"{b.name} against {a.name}"
    out = [f"{head}: {a.disk}, {a.job} (pressure {a.pressure}); "
           f"{len(a.reps)} and {len(b.reps)} boots",
           f"window instructions per I/O: {a.label} {_num(summary['a_total'])}, "
           f"{b.label} {_num(summary['b_total'])}, delta {_num(summary['counted'], sign=True)} "
           f"({_num(summary['counted'] * summary['ns'] / 1000.0, 2, True)} µs at "
           f"{summary['ns']:g} ns an instruction)"]
    if summary["exact"]:
        out.append(f"exact clock, every boot of both sides within ±{a.bound_pct:g}%: each delta "
                   "is a count, not an estimate; the rep ranges show what the seed moves")
    else:
        out.append("the boots of a side spread beyond the determinism bound: each delta is a "
                   "mean over boots; the range over reps paired by seed says how far it moves")
    note = instruments_note(a, b)
    if note:
        out.append(note)
    out += ["", f"{'symbol':<40} {'part':<12} {'delta insn/IO':>14} {'of it copy':>11} "
            f"{'calls/IO ' + a.label:>16} {'calls/IO ' + b.label:>16} {'µs/IO':>9}  "
            "range over reps"]
    for r in rows.itertuples():
        rng = (f"{_num(r.lo, 1, True)} .. {_num(r.hi, 1, True)}"
               if np.isfinite(r.lo) and np.isfinite(r.hi) else "")
        cp = _num(r.copy, 1, True) if np.isfinite(r.copy) else ""
        out.append(f"{r.symbol[:40]:<40} {r.part[:12]:<12} {_num(r.delta, 1, True):>14} {cp:>11} "
                   f"{_num(r.calls_a, 3):>16} {_num(r.calls_b, 3):>16} "
                   f"{_num(r.us, 3, True):>9}  {rng}")
    out += ["", f"the total is the counted delta within {100 * summary['gap']:.2g}%"]
    return "\n".join(out)
