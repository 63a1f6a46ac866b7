# SPDX-License-Identifier: GPL-2.0
"""report.md and the short console summary of a run.

The report links only files that exist when it is written (figures made
by this call, tables written next to it).
"""
import os

import numpy as np

from . import metrics as M
from . import stats as S
from . import tidy as T

# Metrics of the verdict table in report.md (verdict.csv has them all).
REPORT_METRICS = ["read_iops", "write_iops", "read_clat_p50_us",
                  "read_clat_p99_us", "write_clat_p50_us", "write_clat_p99_us",
                  "cpu_sys_pct", "bounces", "bounced_bytes_per_gib",
                  "bounce_peak_kb", "lowfree_min_kb", "allocstall",
                  "psi_some_us"]
# Pairs for the one-line-per-cell headline, most telling first.
HEADLINE_PAIRS = [("pre-fixed", "post"), ("pre", "post"), ("pre-fixed", "pre")]
MAX_HEADLINES = 12


def fmt(x, digits=4):
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return ""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    ax = abs(x)
    if ax != 0 and (ax >= 1e8 or ax < 1e-3):
        return f"{x:.{digits - 1}e}"
    if ax >= 10 ** digits:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def _md(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _table(header, rows):
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(_md(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def _short(text, width=160):
    """One line of at most width characters (the full text stays in
    meta.json)."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _link(run_dir, rel, text, image=False):
    """A markdown link to rel (relative to the run), or "" if it is missing."""
    if not os.path.isfile(os.path.join(run_dir, rel)):
        return ""
    return f"{'!' if image else ''}[{text}]({rel})"


def ratio_text(row):
    """"1.41 (95% CI 1.30-1.52)" or just the ratio when there is no CI."""
    if not np.isfinite(row["ratio"]):
        return ""
    text = fmt(row["ratio"], 3)
    if np.isfinite(row["ci_low"]):
        text += f" (95% CI {fmt(row['ci_low'], 3)}–{fmt(row['ci_high'], 3)})"
    return text


def bounce_status(run):
    """(exercised: bool|None, sentence) about the pre-fixed usb-pio path."""
    bs = S.bounce_summary(run)
    if bs.empty:
        return None, "no measured jobs"
    pf = bs[bs["variant"].map(lambda v: S.is_bounce_variant(run, v)) &
            (bs["disk"] == S.BOUNCE_DISK)]
    if pf.empty:
        return None, (f"not tested: no {S.BOUNCE_VARIANT} job on "
                      f"{S.BOUNCE_DISK} ran")
    total = pf["bounces"].sum()
    jobs = int(pf["jobs"].sum())
    cells_ok = ((pf["counted"] == pf["jobs"]) & (pf["bounces"] > 0)).all()
    zero_jobs = run.jobs[(run.jobs["state"] == "ok") & (run.jobs["disk"] == S.BOUNCE_DISK) &
                         run.jobs["variant"].map(lambda v: S.is_bounce_variant(run, v)) &
                         ~(run.jobs["bounces"] > 0)]
    if cells_ok and zero_jobs.empty:
        return True, (f"exercised: {S.BOUNCE_VARIANT} on {S.BOUNCE_DISK} counted "
                      f"{int(total)} bounced bios in {jobs} job(s)")
    scope = "" if len(zero_jobs) >= jobs else " everywhere"
    return False, (f"NOT exercised{scope}: {len(zero_jobs)} of {jobs} "
                   f"{S.BOUNCE_VARIANT} job(s) on {S.BOUNCE_DISK} counted no "
                   "bounced bios; no bounce cost is reported for them")


def _primary_metric(cell):
    for m in ("write_iops", "read_iops"):
        if m in set(cell["metric"]):
            return m
    return cell["metric"].iloc[0] if len(cell) else None


def headline_rows(verdicts):
    """Per cell and pair, the main throughput metric's verdict row; the
    pairs of HEADLINE_PAIRS first."""
    out = []
    if verdicts.empty:
        return out
    rank = {p: i for i, p in enumerate(HEADLINE_PAIRS)}
    for _, cell in verdicts.groupby(["disk", "job", "pressure"], sort=True):
        metric = _primary_metric(cell)
        rows = cell[cell["metric"] == metric]
        rows = rows.assign(_r=[rank.get((a, b), len(rank))
                               for a, b in zip(rows["a"], rows["b"])])
        out += [r for _, r in rows.sort_values("_r", kind="stable").iterrows()]
    return out


def lonely_cells(run):
    """Cells where a single variant ran: nothing to compare there."""
    jobs = run.jobs
    if jobs.empty:
        return []
    out = []
    for (disk, job, pressure), g in jobs.groupby(["disk", "job", "pressure"], sort=True):
        labels = list(dict.fromkeys(g["variant"]))
        if len(labels) == 1:
            out.append(f"{disk} {job} (pressure {pressure}): only {labels[0]} "
                       "ran there, nothing to compare")
    return out


def headline_text(row):
    what = (f"{row['disk']} {row['job']} (pressure {row['pressure']}): "
            f"{row['b']} vs {row['a']}"
            f"{' (A/A)' if row['pair_kind'] == 'A/A' else ''} {M.label(row['metric'])}")
    if row["verdict"] in (S.NO_DATA, S.NOT_EXERCISED):
        return f"{what}: {row['verdict']} ({row['note'].split('; ')[0]})"
    text = f"{what}: ratio {ratio_text(row)}, {row['verdict']}"
    if row["verdict"] == S.TOO_FEW:
        text += f" (n={row['n_a']}/{row['n_b']})"
    elif row["verdict"] == S.NO_DIFF and np.isfinite(row["mde_pct"]):
        text += f" (could detect ±{fmt(row['mde_pct'], 2)}%)"
    return text


def console_summary(run, verdicts, report_path=None):
    """A few lines for the terminal."""
    boots = run.boots
    ok = int((boots["status"] == "ok").sum())
    jobs = run.jobs
    measured = int((jobs["state"] == "ok").sum()) if not jobs.empty else 0
    lines = [f"run {run.run_id}: {len(boots)} boots ({ok} ok, {len(boots) - ok} failed), "
             f"{len(jobs)} jobs ({measured} measured, {len(jobs) - measured} skipped or failed)"]
    lines.append("bounce path: " + bounce_status(run)[1])
    heads = [headline_text(r) for r in headline_rows(verdicts)] + lonely_cells(run)
    lines += ["  " + h for h in heads[:MAX_HEADLINES]]
    if len(heads) > MAX_HEADLINES:
        lines.append(f"  ... {len(heads) - MAX_HEADLINES} more in the report")
    for w in run.warnings:
        lines.append("warning: " + w)
    if report_path:
        lines.append(f"report: {report_path}")
    return "\n".join(lines)


def _run_section(run):
    out = [f"Kernel: {T.kernel_title(run)}.", ""]
    rows = []
    kernels = T.variant_kernels(run)
    for v in S.pair_order(run, list(dict.fromkeys(run.boots["variant"]))):
        b = run.boots[run.boots["variant"] == v]
        first = b.iloc[0]
        rows.append([v, first.get("base_variant") or "", first.get("stacks") or "",
                     (kernels.get(v) or "")[:12],
                     str(int((b["status"] == "ok").sum())),
                     str(int((b["status"] != "ok").sum()))])
    out.append(_table(["label", "kernel variant", "patch stacks",
                       "bzImage sha256", "boots ok", "boots failed"], rows))
    scalars = {k: v for k, v in run.meta.items()
               if isinstance(v, (str, int, float, bool)) and v != ""}
    out.append("")
    if scalars:
        out.append(_table(["meta.json", "value"],
                          [[k, _short(str(v))] for k, v in scalars.items()]))
    else:
        out.append("meta.json: missing or without scalar keys.")
    return "\n".join(out)


def _bounce_section(run):
    exercised, sentence = bounce_status(run)
    bs = S.bounce_summary(run)
    out = [f"Bounce path: **{sentence}**.", "",
           "Bounces are counted by a hist trigger on `block:block_bio_bounce` "
           "during each job; \"absent\" means the kernel has no such "
           "tracepoint (the bounce code is gone), which is not a count of 0.",
           ""]
    if not bs.empty:
        rows = [[r.variant, r.disk, r.job, r.pressure, str(r.jobs),
                 fmt(r.bounces) if r.counted else "", r.trace]
                for r in bs.itertuples()]
        out.append(_table(["variant", "disk", "job", "pressure", "jobs",
                           "bounced bios (sum)", "tracepoint"], rows))
    return "\n".join(out)


def _verdict_section(verdicts, run, run_dir):
    out = []
    heads = [headline_text(r) for r in headline_rows(verdicts)] + lonely_cells(run)
    if heads:
        out += ["Headlines (main throughput metric of each disk/job):", ""]
        out += [f"- {h}" for h in heads]
        out.append("")
    sub = verdicts[verdicts["metric"].isin(REPORT_METRICS)].copy()
    sub["_o"] = sub["metric"].map(M.order)
    sub = sub.sort_values(["disk", "job", "pressure", "_o", "a", "b"], kind="stable")
    for (disk, job, pressure), cell in sub.groupby(["disk", "job", "pressure"], sort=True):
        out += [f"### {disk} / {job} / pressure {pressure}", ""]
        rows = []
        # a pair without data: one line per reason instead of one per metric
        nodata = cell[cell["verdict"] == S.NO_DATA]
        for (a, b, note), g in nodata.groupby(["a", "b", "note"], sort=False):
            names = ", ".join(M.label(m) for m in g["metric"])
            rows.append([names if len(g) < 4 else f"{len(g)} metrics", f"{b} vs {a}",
                         "", "", "", "", "", S.NO_DATA, note])
        for r in cell[cell["verdict"] != S.NO_DATA].itertuples():
            rows.append([M.label(r.metric) + f" ({r.unit})", f"{r.b} vs {r.a}" +
                         (" (A/A)" if r.pair_kind == "A/A" else ""),
                         f"{r.n_a}/{r.n_b}", fmt(r.median_a), fmt(r.median_b),
                         ratio_text(r._asdict()), fmt(r.mde_pct, 2), r.verdict, r.note])
        out.append(_table(["metric", "B vs A", "n A/B", "median A", "median B",
                           "B/A (95% CI)", "MDE %", "verdict", "note"], rows))
        out.append("")
    link = _link(run_dir, "verdict.csv", "verdict.csv")
    if link:
        out.append(f"Every metric and pair ({len(verdicts)} rows): {link}; "
                   f"the tidy data: {_link(run_dir, 'summary.csv', 'summary.csv')}.")
    return "\n".join(out)


def _plots_section(figures, run_dir):
    if figures is None:
        return "Plots were not made (--no-plots)."
    out, group = [], None
    for f in figures:
        rel_png = os.path.relpath(f["png"], run_dir)
        img = _link(run_dir, rel_png, f["caption"], image=True)
        if not img:
            continue
        if f["group"] != group:
            group = f["group"]
            out += [f"### {group}", ""]
        svg = _link(run_dir, os.path.relpath(f["svg"], run_dir), "SVG") if f.get("svg") else ""
        out += [img, "", f"*{f['caption']}*" + (f" ({svg})" if svg else ""), ""]
    return "\n".join(out) if out else "No plot could be made."


def _excluded_section(run):
    ex = T.exclusions(run)
    if ex.empty:
        return "None: every boot succeeded and every planned job ran."
    rows = [[r.kind, str(r.boot), r.variant, r.disk, r.pressure, str(r.rep),
             r.job, r.reason, r.dir] for r in ex.itertuples()]
    return ("Not used in any statistic, listed here so nothing disappears:\n\n" +
            _table(["kind", "boot", "variant", "disk", "pressure", "rep", "job",
                    "reason", "folder"], rows))


METHOD = f"""\
- Each job gives one value per metric; a metric the kernel does not expose
  has no value (never 0). Cells are disk × job × memory pressure. Pressure
  counters are compared as rates (per second of job time, per GiB moved),
  not as totals per job.
- B/A is the ratio of geometric means. p: exact permutation test on log
  values (all relabellings, or sign flips of the per-rep log ratios when
  the blocks A B C of a rep cut the noise: "paired by rep"). The 95 % CI
  is inverted from the same test, so it excludes 1 exactly when
  p ≤ {S.ALPHA:g}. Where no relabelling can reach p ≤ {S.ALPHA:g} (3
  against 3: min p = 0.1) there is no verdict.
- Primary rows (per job: one throughput, one latency tail, CPU per GiB,
  lowmem floor) share one Benjamini-Hochberg family, every other row a
  second, exploratory one; a verdict needs the adjusted p ≤ {S.ALPHA:g}.
- MDE: the change these reps would detect with 80 % power at the 5 %
  level, from the within-variant noise pooled over the cell's variants
  (t quantiles); n/a for tied or quantised values.
- Controls (A/A): the same kernel under two labels, or the baseline and
  the bounce variant on a control disk. A significant control is a false
  positive; a run with one is not to be trusted.
- A comparison on a bounce-candidate disk with a bounce-variant side is
  only reported when every such job counted bounced bios; else "bounce
  path not exercised".
- Failed boots, skipped and failed jobs are left out of the statistics and
  listed above.
"""


def write_report(run, verdicts, figures, path, extra_warnings=()):
    """report.md; figures is the list from plots.make_plots or None."""
    run_dir = os.path.dirname(os.path.abspath(path))
    parts = [f"# bouncelab run {run.run_id}", "", _run_section(run), ""]
    warnings = list(run.warnings) + list(extra_warnings)
    if warnings:
        parts += ["## Warnings", ""] + [f"- {w}" for w in warnings] + [""]
    parts += ["## Did the bounce path run?", "", _bounce_section(run), "",
              "## Verdicts", "", _verdict_section(verdicts, run, run_dir), "",
              "## Plots", "", _plots_section(figures, run_dir), "",
              "## Failed boots, skipped and failed jobs", "",
              _excluded_section(run), "",
              "## Method", "", METHOD]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts))
