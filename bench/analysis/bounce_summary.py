# SPDX-License-Identifier: GPL-2.0
"""The bounce summary at the end of a run (bench/analyze --bounce-summary,
printed by bench/compare): per variant and disk, the bounced bios counted
and whether the bounce path ran (stats.bounce_exercised); then the failed
boots.
"""
from . import stats, tidy


def _cell(jobs):
    counted = jobs[jobs["bounce_trace"] == "counted"]
    if not counted.empty:
        total = int(counted["bounces"].sum())
        if stats.bounce_exercised(jobs):
            return f"{total}  <- bounce path exercised"
        return f"{total}  (not exercised: {stats.bounce_check(jobs)})" if total > 0 else str(total)
    if (jobs["bounce_trace"] == "absent").any():
        return "0 (no bounce code in this kernel)"
    skipped = [r for r in jobs.loc[jobs["state"] == "skipped", "reason"] if r]
    return f"not measured: {skipped[0]}" if skipped else "not measured"


def lines(run_dir):
    """The summary's lines; a folder that cannot be loaded gets one line
    saying why (the run itself is intact)."""
    try:
        run = tidy.load_run(run_dir)
    except (tidy.RunError, OSError, ValueError) as e:
        return [f"bounced bios counted: none ({e})"]
    cells = {}
    if not run.jobs.empty:
        for (label, disk), g in run.jobs.groupby(["variant", "disk"], sort=False):
            cells[(label, disk)] = _cell(g)
    failed = run.boots[run.boots["status"] != "ok"]
    for (label, disk), g in failed.groupby(["variant", "disk"], sort=False):
        line = cells.get((label, disk), "not measured")
        cells[(label, disk)] = f"{line} ({len(g)} boot(s) failed)"
    out = ["bounced bios counted (block:block_bio_bounce) per variant and disk:"]
    out += [f"  {label + ' ' + disk:<28} {line}" for (label, disk), line in sorted(cells.items())]
    if not failed.empty:
        out.append("failed boots (folders and serial logs kept):")
        out += [f"  boot {b.boot} {b.variant} {b.disk} {b.pressure} rep {b.rep}: "
                f"{b.status} ({b.dir})" for b in failed.sort_values("boot").itertuples()]
    return out
