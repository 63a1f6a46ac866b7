# SPDX-License-Identifier: GPL-2.0
"""The headline table that opens report.md: per bounce-candidate disk (its
within-boot ratio first) and performance job, what the series changed
(removed/baseline), what the copies cost (removed/bounce, baseline/bounce),
with CIs and relevance, beside the bounce kernel's footprint, integrity
and refusals; and the one-line integrity verdict under it. The I/O-size
sweep's jobs (sweep.py) are left to their own section.
"""
from collections import namedtuple

import numpy as np

from . import headline as H
from . import memory as MEM
from . import metrics as M
from . import roles as R
from . import stats as S
from . import sweep as SW

Key = namedtuple("Key", "job pressure metric")
_fmt = H._fmt
_values = H._values
integrity_table = H.integrity_table
candidate_disks = H.candidate_disks
performance_jobs = H.performance_jobs


def _role_label(run, role):
    labels = R.labels_with_role(run, role)
    return labels[0] if labels else None


def headline_pairs(run):
    """(numerator, denominator) of the headline columns: what the series
    changed for the kernel as shipped (removed/baseline), the copies it
    removed (removed/bounce) and the copies alone (baseline/bounce). A run
    of several kernel versions (./run.sh versions) asks the versions
    question instead: versions_pairs()."""
    if len(set(_versions(run).values())) > 1:
        return versions_pairs(run)
    rem, base, bnc = (_role_label(run, r) for r in (R.REMOVED, R.BASELINE, R.BOUNCE))
    pairs = [(rem, base), (rem, bnc), (base, bnc)]
    return [(a, b) for a, b in pairs if a and b]


def _versions(run):
    """{label: its kernel's release as a sortable tuple} of the run."""
    out = {}
    b = run.boots
    if "kernel_release" not in b:
        return out
    for label, rel in b[["variant", "kernel_release"]].dropna().drop_duplicates().itertuples(index=False):
        nums = tuple(int(x) for x in str(rel).split("-")[0].split(".") if x.isdigit())
        out.setdefault(label, nums[:2])
    return out


def versions_pairs(run):
    """The versions question's columns: in each version that has both,
    its baseline against its bounce variant (what the copies cost there:
    6.1/stock / 6.1/fixed, pre / pre-fixed); then each version's kernel as
    shipped (its baseline, else its only label: 5.10/stock bounces as
    shipped, 7.2/upstream has the series) against the one of the version
    before it, oldest first."""
    vers = _versions(run)
    labels = [l for l in dict.fromkeys(run.boots["variant"]) if l in vers]
    by_ver = {}
    for l in labels:
        by_ver.setdefault(vers[l], []).append(l)
    pairs, shipped = [], []
    for v in sorted(by_ver):
        roles = {R.variant_role(run, l): l for l in reversed(by_ver[v])}
        if R.BASELINE in roles and R.BOUNCE in roles:
            pairs.append((roles[R.BASELINE], roles[R.BOUNCE]))
        shipped.append(roles.get(R.BASELINE) or roles.get(R.REMOVED) or by_ver[v][0])
    pairs += [(new, old) for old, new in zip(shipped, shipped[1:])]
    return pairs


def _refusal(run, label, disk):
    """The reason a kernel refused a disk (its jobs were skipped), or None."""
    j = run.jobs
    sel = j[(j["variant"] == label) & (j["disk"] == disk) & (j["state"] == "skipped")]
    why = [r for r in sel["reason"].astype(str) if "refused" in r]
    return why[0] if why else None


def headline_cell(o):
    """A ratio with its CI and its relevance: "1.21 (1.20–1.22) faster"."""
    if o is None:
        return "n/a"
    verdict = str(o["verdict"])
    if verdict == S.NO_DATA:
        return "no data"
    if verdict == S.NOT_EXERCISED:
        return "bounce path not exercised"
    if not np.isfinite(o["ratio"]):
        return verdict
    text = _fmt(o["ratio"])
    if np.isfinite(o["lo"]) and np.isfinite(o["hi"]):
        text += f" ({_fmt(o['lo'])}–{_fmt(o['hi'])})"
    rel = o.get("relevance") or ""
    if rel == S.RELEVANT:
        return f"**{text} {verdict}**"
    return f"{text} {rel or verdict}"


def _footprint(run, disk, job, pressure):
    """The bounce kernel's exact bounce pages in flight, peak (median of
    boots), on a candidate disk and job."""
    bnc = _role_label(run, R.BOUNCE)
    if not bnc:
        return ""
    sel = _values(run, "bounce_pages_peak", [bnc], disk, job)
    sel = sel[sel["pressure"] == pressure]
    if sel.empty:
        sel = _values(run, "bounce_pages_peak", [bnc], disk,
                      job + "+probe")
        sel = sel[sel["pressure"] == pressure]
    if sel.empty:
        return "not counted"
    peak = float(sel["value"].median())
    return f"{peak:.0f} ({peak * 4:.0f} KiB)" if peak >= 100 else f"{_fmt(peak)} ({_fmt(peak * 4)} KiB)"


def _integrity_cell(run, disk):
    tab = integrity_table(run)
    if tab.empty:
        return ""
    tab = tab[tab["disk"] == disk]
    if tab.empty:
        return "not run"
    parts = []
    for v, g in tab.groupby("variant", sort=False):
        bad, checked = int(g["bad"].sum()), int(g["checked"].sum())
        parts.append(f"{v} {'**' if bad else ''}{bad}{'**' if bad else ''} of {checked}")
    return "; ".join(sorted(parts))


def headline_table(run, verdicts):
    """Markdown lines: per bounce-candidate disk (its within-boot ratio to
    its control first) and primary job, the headline metrics' ratios,
    the bounce kernel's footprint, integrity and refusals. [] when the
    run has no candidate disk or no pair to show."""
    pairs = headline_pairs(run)
    cands = candidate_disks(run)
    if verdicts is None or verdicts.empty or not pairs or not cands:
        return []
    disks = [d for d in dict.fromkeys(verdicts["disk"])
             if "/" in str(d) and str(d).split("/")[0] in cands]
    disks = sorted(disks) + sorted(cands)
    if len(set(_versions(run).values())) > 1:
        # the versions question: each pair on the control disk beside
        disks += [str(d).split("/")[1] for d in disks if "/" in str(d)]
    # the I/O-size sweep has a section of its own, below the first screen
    jobs = {j for j in performance_jobs(run) if not SW.shape(j)}
    heads = set(M.selected("headline"))
    levels = MEM.levels(run)        # none first, then the mildest pressure
    rows, refused = [], {}
    for disk in disks:
        base_disk = str(disk).split("/")[0]
        v = verdicts[(verdicts["disk"] == disk) & verdicts["job"].isin(jobs) &
                     verdicts["primary"].astype(bool) & verdicts["metric"].isin(heads)]
        first = True
        keys = sorted(set(map(tuple, v[["job", "pressure", "metric"]].to_numpy())),
                      key=lambda k: (levels.index(k[1]) if k[1] in levels else len(levels),
                                     k[1], k[0], M.order(k[2])))
        for k in (Key(*k) for k in keys):
            cells = []
            for num, den in pairs:
                why = _refusal(run, num, base_disk) or _refusal(run, den, base_disk)
                if why:
                    refused[(num if _refusal(run, num, base_disk) else den, base_disk)] = why
                    cells.append("refused")
                    continue
                cells.append(headline_cell(MEM.oriented(verdicts, k.metric, disk, k.job,
                                                        k.pressure, num, den)))
            where = k.job + ("" if k.pressure == "none" else f" ({k.pressure})")
            foot = (_footprint(run, base_disk, k.job, k.pressure)
                    if M.kind(k.metric) == M.THROUGHPUT else "")
            # the CPU row by its slot's short name: the label is a sentence
            name = "CPU per GiB" if M.kind(k.metric) == M.COST else M.label(k.metric)
            shown = disk if R.is_candidate(run, base_disk) else f"{disk} (control)"
            rows.append(f"| {shown if first else ''} | {where} | {name} | " +
                        " | ".join(cells) + f" | {foot} | "
                        f"{_integrity_cell(run, base_disk) if first and '/' not in str(disk) else ''} |")
            first = False
    if not rows:
        return []
    bnc = _role_label(run, R.BOUNCE) or "bounce kernel"
    out = ["| disk | job | metric | " + " | ".join(f"{a}/{b}" for a, b in pairs) +
           f" | {bnc} bounce pages, peak | integrity: bad of checked blocks |",
           "|---|---|---|" + "---|" * len(pairs) + "---|---|"] + rows
    thr = sorted({_fmt(x) for x in verdicts.get("min_effect_pct", [])}) or ["1"]
    out += ["", f"B/A ratio of geometric means (95% CI). **Bold**: relevant, i.e. significant "
            f"(Benjamini-Hochberg) and at least {'/'.join(thr)}% (the smallest effect of "
            "interest, bench/analyze --min-effect); \"negligible\": significant, smaller. "
            "A/B disks: the within-boot ratio to the control disk (TCG's speed cancels)."]
    for (label, disk), why in sorted(refused.items()):
        out.append(f"Refused: {label} on {disk}: {why}.")
    return out


def integrity_line(run):
    """One line: which kernel corrupted data, bad of checked blocks."""
    tab = integrity_table(run)
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
