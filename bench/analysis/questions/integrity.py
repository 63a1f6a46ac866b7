# SPDX-License-Identifier: GPL-2.0
"""Does a kernel corrupt data? The integrity jobs (class integrity): fio
writes with verify=crc32c and reads every block back; bad blocks of
checked, per variant, disk and job, summed over the run's boots.
"""
import pandas as pd

from .. import md

TITLE = "Data integrity"


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


def integrity_row(tab, disk, width):
    """The headline table's row of a disk's integrity jobs: the cell is a
    sum over them, so it stands on a row of its own, never on a
    performance job's. None when the run had no integrity job."""
    cell = _integrity_cell(tab, disk)
    if not cell:
        return None
    n = tab[tab["disk"] == disk]["job"].nunique()
    jobs = f"its {n} integrity job{'s' if n != 1 else ''}, summed" if n else "integrity jobs"
    return ["", jobs, "bad of checked blocks"] + [""] * width + ["", cell]


def first_screen(run, verdicts):
    return [integrity_line(run)]


def section(run, verdicts):
    return integrity_section(run) or ["No integrity data in this run."]


def figures(run, verdicts, p, everything):
    pass
