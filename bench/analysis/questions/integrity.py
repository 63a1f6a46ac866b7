# SPDX-License-Identifier: GPL-2.0
"""Does a kernel corrupt data? The integrity jobs (class integrity): fio
writes with verify=crc32c and reads every block back; bad blocks of
checked, per variant, disk and job, summed over the run's boots.
"""
import pandas as pd

from .. import md

TITLE = "Data integrity"


def integrity_table(run):
    """Per variant, disk and job: blocks bad and checked, and the bounced
    bios of those jobs. Empty when the run had no integrity job."""
    t = run.tidy
    keys = ["variant", "disk", "job", "boot"]
    ints = t[t["metric"].str.startswith("integrity_")]
    if ints.empty:
        return pd.DataFrame()
    wide = ints.pivot_table(index=keys, columns="metric", values="value",
                            aggfunc="sum").reset_index()
    b = t[t["metric"] == "bounces"][keys + ["value"]].rename(columns={"value": "bounces"})
    return wide.merge(b, on=keys, how="left").groupby(keys[:3], sort=True).agg(
        bad=("integrity_bad_blocks", "sum"),
        checked=("integrity_checked_blocks", "sum"),
        bounces=("bounces", lambda s: s.sum(min_count=1))).reset_index()


def _bad_of(bad, checked, sep=" / "):
    """"0 / 1024", or "**5** / 1024" when blocks went bad."""
    mark = "**" if bad else ""
    return f"{mark}{int(bad)}{mark}{sep}{int(checked)}"


def integrity_section(run):
    """Markdown lines: bad blocks / checked per variant and disk, one
    column per integrity job, and integrity_line."""
    tab = integrity_table(run)
    if tab.empty:
        return []
    jobs = sorted(set(tab["job"]))
    rows = []
    for (v, d), g in tab.groupby(["variant", "disk"], sort=True):
        cells = [_bad_of(r["bad"].iloc[0], r["checked"].iloc[0]) if len(r) else ""
                 for r in (g[g["job"] == j] for j in jobs)]
        b = g["bounces"]
        rows.append([v, d] + cells + [f"{int(b.sum())}" if b.notna().any() else "no tracepoint"])
    short = [j.removeprefix("integrity-") for j in jobs]
    return [md.table(["variant", "disk"] + short + ["bounced bios"], rows),
            "", "Cells: bad blocks / blocks read back from the device and checked "
            "(crc32c), summed over the run's boots.", integrity_line(run, tab)]


def integrity_line(run, tab=None):
    """One line: which kernel corrupted data, bad of checked blocks."""
    tab = integrity_table(run) if tab is None else tab
    if tab.empty:
        return "Integrity: no integrity job in this run."
    sums = tab.groupby(["variant", "disk"], sort=True)[["bad", "checked"]].sum().reset_index()
    bad = sums[sums["bad"] > 0]
    if bad.empty:
        return f"Integrity: no kernel corrupted data (0 bad of {int(tab['checked'].sum())} blocks)."
    parts = []
    for v, g in bad.groupby("variant", sort=True):
        per = ", ".join(f"{r.disk}: {int(r.bad)} of {int(r.checked)}" for r in g.itertuples())
        parts.append(f"**{v} corrupts data** ({per} blocks bad)")
    clean = sorted(set(tab["variant"]) - set(bad["variant"]))
    return ("Integrity: " + "; ".join(parts) +
            (f"; no bad block on {', '.join(clean)}." if clean else "."))


def integrity_rows(tab, disk, width):
    """[the headline table's row of a disk's integrity jobs]: the cell is a
    sum over them, so it stands on a row of its own, never on a
    performance job's. []: the run had no integrity job."""
    if tab.empty:
        return []
    tab = tab[tab["disk"] == disk]
    cell = "; ".join(sorted(f"{v} {_bad_of(g['bad'].sum(), g['checked'].sum(), ' of ')}"
                            for v, g in tab.groupby("variant", sort=False))) or "not run"
    n = tab["job"].nunique()
    jobs = f"its {n} integrity job{'s' if n != 1 else ''}, summed" if n else "integrity jobs"
    return [["", jobs, "bad of checked blocks"] + [""] * width + ["", cell]]


def first_screen(run, verdicts):
    return [integrity_line(run)]


def section(run, verdicts):
    return integrity_section(run) or ["No integrity data in this run."]


def figures(run, verdicts, p, everything):
    pass
