# SPDX-License-Identifier: GPL-2.0
"""report.md and the short console summary of a run.

The report links only files that exist when it is written (figures made
by this call, tables written next to it).
"""
import os

import numpy as np

from lab import labconf as L
from . import determinism as D
from . import md
from . import metrics as M
from . import stats as S
from . import tidy as T
from .questions import QUESTIONS, bounced, cost, name
from .md import p_text as _p, ratio_text, table as _table

# Pairs for the one-line-per-cell headline, most telling first.
MAX_HEADLINES = 12
MAX_FIRST = 20          # relevant rows in the table below the first screen
TABLES = "tables.md"    # the full verdict tables, next to report.md


def _short(text, width=160):
    """One line of at most width characters (the full text stays in meta.json)."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def _link(run_dir, rel, text, image=False):
    """A markdown link to rel (relative to the run), or "" if it is missing."""
    if not os.path.isfile(os.path.join(run_dir, rel)):
        return ""
    return f"{'!' if image else ''}[{text}]({rel})"


def clocks_line(run):
    """Which disks ran under which clock (lab.conf "clock"): host time swings from boot to boot,
    instruction time does not. None for a run that names none."""
    if not any(run.disk_clocks.values()) or run.tidy.empty:
        return None
    by_clock = {}
    for d in sorted(set(run.tidy["disk"])):
        by_clock.setdefault(run.disk_clocks[d], []).append(d)
    return "Clocks: " + "; ".join(
        f"{', '.join(ds)}: {L.clock(run.lab, clock).get('label') or clock or 'unknown'}"
        for clock, ds in sorted(by_clock.items())) + "."


def _primary(verdicts, run, control=False):
    """The primary rows of the performance jobs (not integrity jobs, which
    measure data, nor probed twins, which measure the probes; all jobs
    without run), of the controls or of the rest."""
    v = verdicts if run is None else verdicts[verdicts["job"].isin(run.question_jobs)]
    return v[v["primary"].astype(bool) & (v["control"].astype(bool) == control)]


def _undecided(rows):
    """The rows with neither a test (a p-value) nor the determinism bound
    of an exact clock to decide them, or with too few repetitions."""
    return ~(rows["p_value"].notna() | S.is_exact(rows)) | rows["verdict"].map(S.is_too_few)


def headline_rows(verdicts, run=None):
    """The decided primary rows of the performance jobs but the controls, relevant and largest
    effect first."""
    if verdicts.empty:
        return []
    v = _primary(verdicts, run)
    v = v[~_undecided(v)]
    v = v.assign(_s=v["relevance"] != S.RELEVANT, _e=[-S.effect_pct(x) for x in v["ratio"]])
    v = v.sort_values(["_s", "_e", "p_adjusted", "disk", "job", "pressure"], kind="stable")
    return [r for _, r in v.iterrows()]


def _max_pct(rows):
    return float(np.max(np.abs(rows["ratio"].astype(float) - 1))) * 100 if len(rows) else 0.0


def _aa_counts(rows, exact):
    """(fired, "R [of N A/A rows: host time] relevant, G negligible, U too
    few repetitions") of A/A rows. On host time any significant one fires,
    relevant or not: the test's own false-positive rate is the question.
    On an exact clock a split half beyond the bound measures what the
    seed moves a cell by: it fires where that reaches the smallest effect
    of interest (relevant); below it (negligible) it is a floor the kernel
    pairs of that cell must clear, said with its size."""
    rel = rows["relevance"]
    n_rel, n_neg = int((rel == S.RELEVANT).sum()), int((rel == S.NEGLIGIBLE).sum())
    n_few = int(_undecided(rows).sum())
    neg = (f" (at most {md.fmt(_max_pct(rows[rel == S.NEGLIGIBLE]), 2, '')}%: what the seeds "
           "move those cells by, below the smallest effect of interest)") if exact else ""
    return bool(n_rel or (n_neg and not exact)), (
        f"{n_rel}{'' if exact else f' of {len(rows)} A/A rows'} relevant" +
        (f", {n_neg} negligible{neg}" if n_neg else "") +
        (f", {n_few} too few repetitions" if n_few else ""))


def _split_halves_pass(verdicts, row):
    """Whether both labels' split-half A/A rows of a row's cell and metric
    are decided and do not differ: True, False (one differs), None (missing
    or undecided)."""
    key = ["metric", "disk", "job", "pressure"]
    aa = verdicts[(verdicts[key] == [row[k] for k in key]).all(axis=1) &
                  verdicts["a"].isin([S.split_label(x, S.ODD) for x in (row["a"], row["b"])])]
    if aa["verdict"].map(S.is_significant).any():
        return False
    return True if len(aa) == 2 and not _undecided(aa).any() else None


def controls_line(verdicts, run=None):
    """(ok: bool|None, sentence) of the control rows of the performance
    jobs' primary metrics, counted by relevance (a significant row below
    its smallest effect of interest is "negligible", never counted as
    significant); ok is None when no control could be decided.

    On host time every control row is an A/A noise check. An exact clock
    repeats a boot to the instruction: its A/A rows are the split halves
    and the copies of a label (stats.py) whose seeds differ (_aa_counts
    says when they fire); a copy with the same seeds cannot differ and is
    counted apart. A pair of kernels on a control disk there is the
    kernels' difference, real only where _split_halves_pass."""
    if verdicts.empty:
        return None, "controls: no A/A control rows with a test in this run"
    c = _primary(verdicts, run, control=True)
    c = c[~c["verdict"].isin([S.NO_DATA, S.NOT_EXERCISED])]
    on_exact = c["disk"].isin(run.exact_disks if run is not None else ())
    ex, host = c[on_exact], c[~on_exact]
    host = host[~_undecided(host)] if len(host) else host
    if ex.empty and host.empty:
        return None, "controls: no A/A control rows with a test in this run"
    parts, fired, checked = [], False, False
    if len(ex):
        same = ex["note"].str.contains(S.SAME_SEEDS, regex=False)
        aa = ex[(ex["pair_kind"] == S.AA) & ~same]
        n_copy = int((~S.is_split(aa)).sum())
        text = (f"instruction time ({', '.join(sorted(set(ex['disk'])))}): {len(aa)} A/A rows "
                "with distinct seeds (" + (f"{len(aa) - n_copy} split halves, {n_copy} copies "
                                           "of a label)" if n_copy else "split halves)"))
        f, counts = _aa_counts(aa, exact=True)
        fired, checked = f, bool((~_undecided(aa)).any())
        parts.append(f"{text}, {counts}" +
                     (": the instruction-time verdicts are NOT to be trusted" if f else ""))
        if same.any():
            parts.append(f"{int(same.sum())} rows of copies with the same seeds "
                         "(cannot differ under an exact clock: not counted)")
        kd = ex[ex["pair_kind"] != S.AA]
        if len(kd):
            rel = kd[kd["relevance"] == S.RELEVANT]
            neg = kd[kd["relevance"] == S.NEGLIGIBLE]
            passed = [_split_halves_pass(verdicts, r) for r in rel.to_dict("records")]
            real = rel[[p is True for p in passed]]
            why = ([f"{len(real)} up to {md.fmt(_max_pct(real), 2, '')}%: real differences "
                    "between the kernels, their split halves agree"] if len(real) else [])
            why += [f"{n} {what}: not called real" for n, what in (
                (passed.count(None), "whose split halves could not be decided"),
                (passed.count(False), "whose split halves differ")) if n]
            parts.append(f"kernel pairs on a control disk ({', '.join(sorted(set(kd['disk'])))}): "
                         f"{len(rel)} of {len(kd)} rows relevant" +
                         (f" ({'; '.join(why)})" if why else "") +
                         (f", {len(neg)} negligible (at most {md.fmt(_max_pct(neg), 2, '')}%: "
                          "below the smallest effect of interest)" if len(neg) else ""))
    if len(host):
        f, counts = _aa_counts(host, exact=False)
        # usb-pio under insn too: QEMU completes its I/O on host time
        where, whose = (f"I/O on host time ({', '.join(sorted(set(host['disk'])))}): ",
                        "those verdicts") if len(ex) else ("", "the verdicts of this run")
        parts.insert(0, f"{where}{counts}" + (f": {whose} are NOT to be trusted" if f else ""))
        fired, checked = fired or f, True
    return (False if fired else (True if checked else None)), "controls: " + "; ".join(parts)


def relevance_counts(verdicts, run=None):
    """Counts by relevance class of the primary rows of the performance jobs but the controls."""
    if verdicts.empty:
        return dict(tested=0, relevant=0, negligible=0, equivalent=0, nodiff=0, few=0)
    v = _primary(verdicts, run)
    rel = v["relevance"].fillna("")
    return dict(tested=int((~_undecided(v)).sum()),
                relevant=int((rel == S.RELEVANT).sum()),
                negligible=int((rel == S.NEGLIGIBLE).sum()),
                equivalent=int(rel.str.startswith(S.EQUIVALENT).sum()),
                nodiff=int((rel.str.startswith(S.NO_DIFFERENCE) | (rel == S.NOT_ADJUSTED)).sum()),
                few=int((rel == S.TOO_FEW_REPS).sum()))


def counts_line(verdicts, run=None):
    k = relevance_counts(verdicts, run)
    return (f"Primary verdicts: **{k['relevant']} relevant** of {k['tested']} tested primary rows "
            "of the performance jobs "
            f"({k['negligible']} negligible: significant but below the smallest effect of "
            f"interest; {k['equivalent']} no relevant difference: the CI within it; "
            f"{k['nodiff']} no difference; {k['few']} with too few repetitions; "
            "controls excluded).")


def guest_bounds_line(run):
    """The guest's bounds as meta.json recorded them; older runs did not:
    "not recorded", never the lab.conf default of today."""
    b = run.guest_bounds
    if not b:
        return "Guest bounds: not recorded (a run from before meta.json kept them)."
    parts = [("disk wait", "disk_wait_s", "s"), ("monitor interval", "mon_interval_ms", "ms"),
             ("job timeout", "job_timeout_s", "s")]
    return "Guest bounds: " + ", ".join(
        f"{name} {b[key]} {unit}" if key in b else f"{name} not recorded"
        for name, key, unit in parts) + " (meta.json)."


def uncomparable(verdicts, run):
    """One line per reason why cells cannot be compared (no data on a
    side, refused disks, a single variant), with the count of rows."""
    out = []
    if not verdicts.empty:
        reasons = {}
        for key, g in verdicts.groupby(["disk", "job", "pressure", "a", "b"], sort=True):
            if (g["verdict"] == S.NO_DATA).all():
                why = g["note"].iloc[0].split("; ")[0]
                reasons.setdefault(why, set()).add(key[:3])     # its cell
        for why, cells in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
            disks = "/".join(sorted({c[0] for c in cells}))
            out.append(f"{len(cells)} cell(s) on {disks} cannot be compared: {why}")
    cells = [] if run.jobs.empty else run.jobs.groupby(["disk", "job", "pressure"])
    lonely = sum(len(set(g["variant"])) == 1 for _, g in cells)
    if lonely:
        out.append(f"{lonely} cell(s) where a single variant ran: nothing to compare")
    return out


def mde_text(row):
    return "n/a" if not np.isfinite(row["mde_pct"]) else f"±{md.fmt(row['mde_pct'], 2)}%"


def headline_text(row):
    what = (f"{row['disk']} {row['job']} (pressure {row['pressure']}): "
            f"{row['b']} vs {row['a']} {M.label(row['metric'])}")
    if row["verdict"] in (S.NO_DATA, S.NOT_EXERCISED):
        return f"{what}: {row['verdict']} ({row['note'].split('; ')[0]})"
    text = f"{what}: ratio {ratio_text(row)}, {row['verdict']}"
    if np.isfinite(row["p_adjusted"]):
        text += f" (adj. p {_p(row['p_adjusted'])})"
    if row["verdict"] == S.NO_DIFF:
        text += f" (could detect {mde_text(row)})"
    return text


def console_summary(run, verdicts, report_path=None):
    """A few lines for the terminal."""
    boots, jobs = run.boots, run.jobs
    ok = int((boots["status"] == "ok").sum())
    measured = int((jobs["state"] == "ok").sum()) if not jobs.empty else 0
    sig = [r for r in headline_rows(verdicts, run) if r["relevance"] == S.RELEVANT]
    k = relevance_counts(verdicts, run)
    lines = [f"run {run.run_id}: {len(boots)} boots ({ok} ok, {len(boots) - ok} failed), "
             f"{len(jobs)} jobs ({measured} measured, {len(jobs) - measured} skipped or failed)",
             "bounce path: " + bounced.status(run)[1], controls_line(verdicts, run)[1],
             f"primary verdicts: {k['relevant']} relevant of {k['tested']} tested rows "
             f"(Benjamini-Hochberg at {S.ALPHA:g}, at least the smallest effect of "
             f"interest; {k['negligible']} negligible)"]
    lines += ["  " + headline_text(r) for r in sig[:MAX_HEADLINES]]
    if len(sig) > MAX_HEADLINES:
        lines.append(f"  ... {len(sig) - MAX_HEADLINES} more in the report")
    lines += ["warning: " + w for w in run.warnings[:5]]
    if len(run.warnings) > 5:
        lines.append(f"warning: ... {len(run.warnings) - 5} more in the report")
    if report_path:
        lines.append(f"report: {report_path}")
    return "\n".join(lines)


def first_screen(run, verdicts):
    """The top of report.md, one screen (at most 40 lines): the headline
    table (what the removed copies cost, what the series changed), data
    integrity, the controls and the count of relevant verdicts."""
    out = [f"Bounce path: **{bounced.status(run)[1]}**.", ""]
    for q in QUESTIONS:
        lines = q.first_screen(run, verdicts)
        out += lines + ([""] if q is cost and lines else [])
    ok, line = controls_line(verdicts, run)
    bold = "**" if ok is False else ""
    return out + ["", f"{bold}{line}{bold} (primary rows; A/A: pairs that can only differ "
                  "by noise).", "", counts_line(verdicts, run), ""]


def early_answer(run, verdicts):
    """The headline table of the boots in so far, for the console of a run
    still running: the exact boots without pressure decide it, and they
    come first (bench/compare). What the rest of the run adds (pressure,
    host-time disks, more reps) is in the report at the end."""
    ok = int((run.boots["status"] == "ok").sum())
    head = (f"early answer, from the {ok} boot(s) in so far (the exact boots without "
            "pressure); the report at the end has the rest:")
    return [head] + (cost.first_screen(run, verdicts) or ["  (no headline row yet)"])


def details_screen(run, verdicts, figures, run_dir):
    """Right below the first screen: clocks, bounds, the relevant primary
    rows and the forest plots."""
    out = [line for line in (clocks_line(run), guest_bounds_line(run)) if line] + [""]
    if run.warnings:
        out += [f"{len(run.warnings)} warning(s): see Warnings below.", ""]
    rel = [r for r in headline_rows(verdicts, run) if r["relevance"] == S.RELEVANT]
    out += ["## Relevant primary verdicts", "",
            f"{len(rel)} primary rows are significant (adjusted p ≤ {S.ALPHA:g}, or "
            "beyond the determinism bound of an exact clock: adj. p \"exact\") and at "
            "least their smallest effect of interest, largest first; controls and "
            "untestable rows excluded.", ""]
    shown = rel[:MAX_FIRST]
    if shown:
        out += [_table(["cell", "B vs A", "metric", "B/A (95% CI)", "adj. p", "MDE", "verdict"],
                       [[f"{r['disk']} {r['job']} {r['pressure']}", f"{r['b']} vs {r['a']}",
                         M.label(r["metric"]), ratio_text(r),
                         "exact" if str(r["analysis"]).startswith(D.EXACT) else _p(r["p_adjusted"]),
                         mde_text(r), r["verdict"]] for r in shown]), ""]
    if len(rel) > len(shown):
        out += [f"... {len(rel) - len(shown)} more relevant rows in {TABLES}.", ""]
    notes = uncomparable(verdicts, run)
    out += [f"- {n}" for n in notes[:6]] + ([""] if notes else [])
    if figures is None:
        out.append("Plots were not made (--no-plots).")
    out += [_figure(f, run_dir) for f in figures or [] if f["kind"] == "forest"]
    out += ["", "Every primary row with its CI, adjusted p, MDE and relevance: "
            f"{_link(run_dir, TABLES, TABLES) or 'verdict.csv'}; every row: "
            f"{_link(run_dir, 'verdict.csv', 'verdict.csv') or 'verdict.csv'}.", ""]
    return out


def _run_section(run):
    out = [f"Kernel: {T.kernel_title(run)}.", ""]
    rows = []
    for v in run.labels:
        b = run.boots[run.boots["variant"] == v]
        first, ok = b.iloc[0], int((b["status"] == "ok").sum())
        rows.append([v, first.get("base_variant") or "", first.get("stacks") or "",
                     (run.kernels.get(v) or "")[:12], str(ok), str(len(b) - ok)])
    out.append(_table(["label", "kernel variant", "patch stacks",
                       "bzImage sha256", "boots ok", "boots failed"], rows))
    scalars = {k: v for k, v in run.meta.items()
               if isinstance(v, (str, int, float, bool)) and v != ""}
    out += ["", _table(["meta.json", "value"], [[k, _short(str(v))] for k, v in scalars.items()])
            if scalars else "meta.json: missing or without scalar keys."]
    return "\n".join(out)


def _rows_table(rows):
    return _table(["metric", "B vs A", "n A/B", "median A", "median B",
                   "B/A (95% CI)", "p", "adj. p", "MDE", "analysis", "verdict", "relevance",
                   "note"],
                  [[M.label(r.metric) + f" ({r.unit})", f"{r.b} vs {r.a}" +
                    (" (control)" if r.control else ""),
                    f"{r.n_a}/{r.n_b}", md.fmt(r.median_a, 4, ""), md.fmt(r.median_b, 4, ""),
                    ratio_text(r._asdict()), _p(r.p_value), _p(r.p_adjusted),
                    mde_text(r._asdict()) if np.isfinite(r.p_value) else "",
                    r.analysis, r.verdict, getattr(r, "relevance", ""), r.note]
                   for r in rows.itertuples()])


def verdict_tables(verdicts):
    """tables.md: every primary row, then the exploratory rows per cell
    (rows without data collapse into one line per reason)."""
    out = ["# Verdict tables", "",
           "Primary rows share one Benjamini-Hochberg family; exploratory rows a "
           "second one, control rows a third. The CI is per row (it excludes 1 "
           f"exactly when p ≤ {S.ALPHA:g}); the verdict needs the adjusted p ≤ {S.ALPHA:g}.", ""]
    if verdicts.empty:
        return "\n".join(out + ["No rows."])
    v = verdicts.assign(_o=verdicts["metric"].map(M.order))
    v = v.sort_values(["disk", "job", "pressure", "_o", "a", "b"], kind="stable")
    data = v[v["verdict"] != S.NO_DATA]
    split = S.is_split(data)
    out += ["## Primary rows", "", _rows_table(data[data["primary"].astype(bool) & ~split]), ""]
    if split.any():
        out += ["## Split-half A/A rows", "", "Each label's odd reps against its even reps "
                "on an exact clock (controls: their own Benjamini-Hochberg family).", "",
                _rows_table(data[split]), ""]
    out += ["## Exploratory rows", ""]
    for (disk, job, pressure), cell in data[~data["primary"].astype(bool)].groupby(
            ["disk", "job", "pressure"], sort=True):
        out += [f"### {disk} / {job} / pressure {pressure}", "", _rows_table(cell), ""]
    nodata = v[v["verdict"] == S.NO_DATA]
    if not nodata.empty:
        out += ["## Rows without data", ""]
        for note, g in nodata.groupby("note", sort=True):
            cells = g[["disk", "job", "pressure"]].drop_duplicates()
            out.append(f"- {len(g)} rows in {len(cells)} cell(s) "
                       f"({', '.join(sorted(set(g['disk'])))}): {note}")
    return "\n".join(out) + "\n"


def _figure(f, run_dir, caption=False):
    """A figure's image link (and its SVG's, when there is one), with its
    caption under it; "" when its PNG is missing."""
    img = _link(run_dir, os.path.relpath(f["png"], run_dir), f["caption"], image=True)
    svg = _link(run_dir, os.path.relpath(f["svg"], run_dir), "SVG") if f.get("svg") else ""
    if not img or not caption:
        return f"{img} {svg}" if img else ""
    return f"{img}\n\n*{f['caption']}*" + (f" ({svg})" if svg else "") + "\n"


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
One value per job and metric; a metric the kernel does not expose has no
value, never 0. Deterministic cells (an exact clock) are compared against
the determinism bound; the others by an exact permutation test on log
values, the ratio of geometric means with its 95 % CI inverted from that
test, Benjamini-Hochberg per family (primary, exploratory, controls) at
{S.ALPHA:g}, and the MDE (80 % power). A significant row is "relevant" at its
smallest effect of interest, else "negligible". Controls are A/A pairs; a
bounce cost needs counted bounces. The whole method: bench/README.md,
"Repetitions and verdicts".
"""


def write_report(run, verdicts, figures, path, extra_warnings=()):
    """report.md (and tables.md beside it); figures is the list from
    questions.make_plots or None. Returns report.md's text (html.write's)."""
    run_dir = os.path.dirname(os.path.abspath(path))
    with open(os.path.join(run_dir, TABLES), "w", encoding="utf-8") as f:
        f.write(verdict_tables(verdicts))
    parts = ([f"# bouncelab run {run.run_id}", ""] + first_screen(run, verdicts) +
             details_screen(run, verdicts, figures, run_dir))
    for q in QUESTIONS:
        # its figures but the forest (under the verdicts)
        shown = (_figure(f, run_dir, True) for f in figures or []
                 if f["question"] == name(q) and f["kind"] != "forest")
        lines = q.section(run, verdicts) + [text for text in shown if text]
        if lines:
            parts += [f"## {q.TITLE}", ""] + lines + [""]
    parts += ["## Run", "", _run_section(run), ""]
    warnings = list(run.warnings) + list(extra_warnings)
    if warnings:
        parts += ["## Warnings", ""] + [f"- {w}" for w in warnings] + [""]
    parts += ["## Failed boots, skipped and failed jobs", "", _excluded_section(run), "",
              "## Method", "", METHOD]
    text = "\n".join(parts)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return text
