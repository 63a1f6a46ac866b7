# SPDX-License-Identifier: GPL-2.0
"""Did the bounce path run? The bounced bios the block_bio_bounce hist
trigger counted per job, and whether they prove the bounce path ran
(stats.bounce_exercised): the report's first line and its section, and
the summary bench/compare prints at the end of a run (bench/analyze
--bounce-summary), with the failed boots.
"""
from .. import md, roles as ROLES, stats, tidy

TITLE = "Did the bounce path run?"


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
    cells = {} if run.jobs.empty else {
        key: _cell(g) for key, g in run.jobs.groupby(["variant", "disk"], sort=False)}
    failed = run.boots[run.boots["status"] != "ok"]
    for key, g in failed.groupby(["variant", "disk"], sort=False):
        cells[key] = f"{cells.get(key, 'not measured')} ({len(g)} boot(s) failed)"
    out = ["bounced bios counted (block:block_bio_bounce) per variant and disk:"]
    out += [f"  {label + ' ' + disk:<28} {line}" for (label, disk), line in sorted(cells.items())]
    if not failed.empty:
        out.append("failed boots (folders and serial logs kept):")
        out += [f"  boot {b.boot} {b.variant} {b.disk} {b.pressure} rep {b.rep}: "
                f"{b.status} ({b.dir})" for b in failed.sort_values("boot").itertuples()]
    return out


def status(run):
    """(exercised: bool|None, sentence) about the bounce variant on the
    bounce-candidate disks."""
    j = run.jobs
    if j.empty or not (j["state"] == "ok").any():
        return None, "no measured jobs"
    j = j[j["disk"].isin(run.candidate_disks) & j["variant"].isin(run.labels_of(ROLES.BOUNCE))]
    ok = j[j["state"] == "ok"]
    if ok.empty:
        return None, "not tested: no bounce-variant job ran on a bounce-candidate disk"
    names = f"{'/'.join(sorted(set(ok['variant'])))} on {'/'.join(sorted(set(ok['disk'])))}"
    zero_jobs = ok[~(ok["bounces"] > 0)]
    if stats.bounce_exercised(j):
        total = ok.loc[ok["bounce_trace"] == "counted", "bounces"].sum()
        return True, f"exercised: {names} counted {int(total)} bounced bios in {len(ok)} job(s)"
    scope = "" if len(zero_jobs) >= len(ok) else " everywhere"
    return False, (f"NOT exercised{scope}: {len(zero_jobs)} of {len(ok)} job(s) of {names} "
                   "counted no bounced bios; no bounce cost is reported for them")


def section(run, verdicts):
    out = [f"Bounce path: **{status(run)[1]}**.", "",
           "Bounces are counted by a hist trigger on `block:block_bio_bounce` "
           "during each job; \"absent\" means the kernel has no such "
           "tracepoint (the bounce code is gone), which is not a count of 0.",
           ""]
    ok = run.jobs[run.jobs["state"] == "ok"] if not run.jobs.empty else run.jobs
    if not ok.empty:
        rows = []
        for key, g in ok.groupby(["variant", "disk", "job", "pressure"], sort=True):
            counted = g.loc[g["bounce_trace"] == "counted", "bounces"]
            rows.append(list(key) + [str(len(g)), md.fmt(float(counted.sum()), 4, "")
                                     if len(counted) else "",
                                     "/".join(sorted(set(g["bounce_trace"])))])
        out.append(md.table(["variant", "disk", "job", "pressure", "jobs",
                             "bounced bios (sum)", "tracepoint"], rows))
    return out


def first_screen(run, verdicts):
    return []


def figures(run, verdicts, p, everything):
    pass
