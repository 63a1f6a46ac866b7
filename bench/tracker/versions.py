# SPDX-License-Identifier: GPL-2.0
"""The history across kernel versions: Debian version order, the version
figures (versions-*.png/.svg) and the "Across kernel versions" section of
history.md.

Every history.csv row knows the kernel its label booted (source_package,
kernel_source_version: the Debian version, kernel_release) and the label's
role (baseline, bounce, removed). Here each distinct known source version
is a place on the x axis, in Debian version order (python3-debian's
Version, as dpkg --compare-versions: 5.10.262-1 < 6.1.192-3 <
6.12.118-1~deb12u1 < 6.12.118-1 < 7.2.13-1), not in run-date order.

Per headline metric (metrics.HEADLINES, a row per group of
metrics.HEADLINE_GROUPS: one table each), bounce-candidate disk
(bench/lab.conf; a within-boot ratio "A/B" counts as its A), job and
pressure, one figure:
one point series per role, each point the median of the newest run that
has that (version, variant, disk, job, pressure) cell, with the 95 %
bootstrap CI of that median as whiskers. A metric not measured for a
version (the variant did not run the cell, or its kernel has nothing to
count: no bounce tracepoint after the series, no bounced bio to time) is
missing ("?" in the data file, "not measured" in the table), never 0.
Dashed lines mark where bouncing died on HIGHMEM (5.13, commit
9bb33f24abbd: the inverted check in blk_queue_may_bounce()) and where the
bounce code was removed (6.16).

Two labels of one role and version (an A/A copy "pre.2", an alias
"6.12/post" of "post") share a point: the newest run's, the label that is
not a copy first. The tables list every label.
"""
import re

import numpy as np
import pandas as pd
from debian.debian_support import Version

from analysis import md, metrics, plots, roles
from lab import jobname as J

PREFIX = "versions"
SCRIPT = "versions"
UNKNOWN = ("", "unknown")
# Where the bounce path changed upstream: (version, what happened).
MARKERS = (
    ("5.13", "5.13: bouncing dead on HIGHMEM", "(9bb33f24abbd: inverted check)"),
    ("6.16", "6.16: bounce code removed", "(remove block layer bounce buffering)"),
)
# Units shown scaled (figures and tables).
DISPLAY_UNITS = {"B/s": (1.0 / (1 << 20), "MiB/s"),
                 "B/GiB": (1.0 / (1 << 20), "MiB/GiB")}
OTHER = "other"         # a role the lab does not know: after roles.PAIR_ORDER's
SIZE = (1000, 560)
PX_PER_VERSION = 160
ROLE_OFFSET = 0.15
COPY = re.compile(r"\.\d+$")
NOT_MEASURED = "not measured"


# --- Debian version order ------------------------------------------------------

def parse(version):
    """version as a python3-debian Version (dpkg --compare-versions order).
    A string dpkg would reject (a local kernel release "6.12.1_x") keeps
    the characters dpkg accepts and sorts before every valid version."""
    text = str(version).strip()
    try:
        return Version(text)
    except ValueError:
        return Version("0~" + re.sub(r"[^A-Za-z0-9.+~]", ".", text))


def upstream(version):
    """"6.12.118" of "1:6.12.118-1~deb12u1"."""
    try:
        return Version(str(version).strip()).upstream_version
    except ValueError:
        return str(version).strip()


def compare(a, b):
    """<0, 0, >0 as Debian version a sorts before, with, after b."""
    va, vb = parse(a), parse(b)
    return (va > vb) - (va < vb)


def sort_versions(versions):
    return sorted(set(versions), key=parse)


def known(version):
    return isinstance(version, str) and version not in UNKNOWN


def package_of(release, version):
    """"linux-source-X.Y" from a kernel release or a Debian version (what
    Debian names its kernel source packages); "" when neither is known."""
    for v in (release, upstream(version) if known(version) else ""):
        m = re.match(r"^(\d+)\.(\d+)", str(v or ""))
        if m:
            return f"linux-source-{m.group(1)}.{m.group(2)}"
    return ""


def markers(versions):
    """[(x, version, label)]: each MARKERS version between the last axis
    version before it and the first at or after it (x positions are
    0, 1, ... in version order; a marker before or after every version
    sits at the axis edge)."""
    out = []
    for at, what, why in MARKERS:
        before = sum(compare(upstream(v), at) < 0 for v in versions)
        out.append((before - 0.5, at, plots._lines(what, why)))
    return out


# --- the rows the version axis reads ---------------------------------------------

def role_of(role):
    return role if role in roles.VARIANT_ROLES else OTHER


def is_candidate(disk):
    return roles.LAB_DISK_ROLES.get(str(disk).split("/")[0]) == roles.CANDIDATE


def groups():
    """The metrics.HEADLINE_GROUPS keys, in order."""
    return [g for g, _ in metrics.HEADLINE_GROUPS]


def headline_metric(metric, job, group=None):
    """Whether (metric, job) is a headline of the versions table: of one
    group, or of any group (a metric may head two groups, each for its
    own jobs: the latency of the 4 KiB jobs, of the writeback)."""
    return metrics.is_headline(metric, job, group or groups())


def newest_cells(df, order):
    """The rows of known versions on bounce-candidate disks, each (version,
    variant, disk, job, pressure) cell from the newest run (order: run_id
    -> rank by date) that has it: every metric of that run's cell, none
    of an older run's."""
    d = df[df["kernel_source_version"].map(known) & df["disk"].map(is_candidate)]
    if d.empty:
        return d.assign(_rank=pd.Series(dtype=int))
    d = d.assign(_rank=d["run_id"].map(order))
    cell = ["kernel_source_version", "variant", "disk", "job", "pressure"]
    last = d.groupby(cell, sort=False)["_rank"].transform("max")
    return d[d["_rank"] == last]


def axis(df):
    """[dict(version, release, package)] of every known source version of
    the history, in version order."""
    d = df[df["kernel_source_version"].map(known)]
    out = []
    for v in sort_versions(d["kernel_source_version"]):
        g = d[d["kernel_source_version"] == v]
        rel = [r for r in g["kernel_release"] if r]
        pkg = [p for p in g["source_package"] if p]
        common = sorted(set(rel), key=lambda r: (-rel.count(r), r))
        out.append(dict(version=v, release=common[0] if common else upstream(v),
                        package=pkg[0] if pkg else package_of("", v)))
    return out


def _label_key(row):
    """Point of a role and version: newest run, then a label that is not
    an A/A copy, then the label."""
    return (-row["_rank"], bool(COPY.search(row["variant"])), row["variant"])


def pick(rows):
    """The row a point shows among rows of one role and version."""
    if rows.empty:
        return None
    recs = rows.to_dict("records")
    return sorted(recs, key=_label_key)[0]


def roles_present(sel):
    present = {role_of(r) for r in sel["role"]}
    return sorted(present, key=roles.role_rank)


def scale_of(metric):
    return DISPLAY_UNITS.get(metrics.unit(metric), (1.0, metrics.unit(metric)))


# --- figures ------------------------------------------------------------------------

def figure_name(metric, job, disk, pressure):
    return plots._slug(PREFIX, metric, job, disk, pressure)


def figure_width(nversions):
    return max(SIZE[0], nversions * PX_PER_VERSION + 300)


def figure_cells(sel):
    """[(metric, disk, job, pressure)] with a figure: a headline metric
    that has a value for at least one version."""
    out = []
    for group in groups():
        for metric in metrics.headlines(group):
            rows = sel[(sel["metric"] == metric) & sel["median"].notna()]
            keys = sorted({(r.disk, r.job, r.pressure) for r in rows.itertuples()
                           if headline_metric(metric, r.job, group)})
            out += [(metric, disk, job, pressure) for disk, job, pressure in keys
                    if (metric, disk, job, pressure) not in out]
    return out


def figure_data(sel, versions, shown_roles, metric, disk, job, pressure):
    """The data file and gnuplot parameters of one version figure: one
    block per role with one row per version ("?" where not measured),
    then the version ticks and the markers."""
    scale, unit = scale_of(metric)
    cell = sel[(sel["metric"] == metric) & (sel["disk"] == disk) &
               (sel["job"] == job) & (sel["pressure"] == pressure)]
    nr = len(shown_roles)
    blocks, colors, tops, titles = [], [], [], []
    for ri, role in enumerate(shown_roles):
        off = (ri - (nr - 1) / 2) * ROLE_OFFSET
        lines, shown = [], []
        for x, v in enumerate(versions):
            rows = cell[(cell["kernel_source_version"] == v["version"]) &
                        (cell["role"].map(role_of) == role) & cell["median"].notna()]
            r = pick(rows)
            if r is None:
                lines.append(f"{x + off:.4g} ? ? ? ? \"\"")
                continue
            med, lo, hi = (r["median"] * scale, r["ci_low"] * scale, r["ci_high"] * scale)
            top = hi if np.isfinite(hi) else med
            tops.append(top)
            shown.append(r["variant"])
            lines.append(f"{x + off:.4g} {plots._num(med)} {plots._num(lo)} {plots._num(hi)} "
                         f"{plots._num(top)} {plots._q(r['variant'])}")
        head = (f"{role}: {', '.join(dict.fromkeys(shown))}" if shown
                else f"{role}: {NOT_MEASURED}")
        blocks.append(plots._q(head) + "\n" + "\n".join(lines))
        titles.append(plots._q(head))
        colors.append(str(roles.role_rank(role) + 1))
    ticks = [f"{x} " + plots._q(plots._lines(v["release"], v["version"]))
             for x, v in enumerate(versions)]
    marks = [f"{x:g} " + plots._q(label)
             for x, _, label in markers([v["version"] for v in versions])]
    data = "\n\n\n".join(blocks + [plots._q("ticks") + "\n" + "\n".join(ticks),
                                   plots._q("markers") + "\n" + "\n".join(marks)]) + "\n"
    finite = [t for t in tops if np.isfinite(t)]
    ymax = max(finite) * 1.35 if finite and max(finite) > 0 else 1.0
    title = (f"{metrics.label(metric)} across kernel versions\n"
             f"median of the newest run of each version, 95% bootstrap CI; "
             f"job {job}, disk {disk}, pressure {pressure}")
    foot = ("x: kernel source versions in Debian version order; one series per variant "
            "role, each point labelled with its variant\n"
            "no point: not measured (never 0); no whisker: fewer than 2 repetitions; "
            "dashed: 5.13 (bouncing dead on HIGHMEM), 6.16 (bounce code removed)")
    params = dict(nblocks=len(blocks), title=title, ylabel=f"{metrics.label(metric)} ({unit})",
                  footnote=foot, colors=" ".join(colors), titles=" ".join(titles),
                  xmax=len(versions) - 1,
                  ymax=float(f"{ymax:.6g}"))
    return data, params


def make_plots(df, order, p):
    """The version figures of a history into Plotter p (figures of kind
    "versions"). Nothing with fewer than two known source versions.
    Returns the number of versions on the axis."""
    versions = axis(df)
    if len(versions) < 2:
        return len(versions)
    sel = newest_cells(df, order)
    shown_roles = roles_present(sel)
    for metric, disk, job, pressure in figure_cells(sel):
        data, params = figure_data(sel, versions, shown_roles, metric, disk, job, pressure)
        p.render(SCRIPT, figure_name(metric, job, disk, pressure), data, params,
                 f"{metrics.label(metric)} across kernel versions: {job}, {disk}, "
                 f"pressure {pressure}", group_of(metric, job),
                 width=figure_width(len(versions)))
    return len(versions)


def group_of(metric, job):
    for group, title in metrics.HEADLINE_GROUPS:
        if headline_metric(metric, job, group):
            return title
    return metric


# --- history.md ----------------------------------------------------------------------

def _total(rows, metric):
    """Sum of the per-repetition values of a metric over rows (None when
    no row has it)."""
    sel = rows[rows["metric"] == metric]
    if sel.empty:
        return None
    return float(sum(sel["values"].map(_sum_values)))


def _sum_values(text):
    return sum(float(x) for x in str(text).split(";") if x) if isinstance(text, str) else 0.0


def _cell_text(row, scale):
    if row is None or not np.isfinite(row["median"]):
        return NOT_MEASURED
    text = md.fmt(row["median"] * scale, 4, "")
    if np.isfinite(row["ci_low"]) and np.isfinite(row["ci_high"]):
        text += f" [{md.fmt(row['ci_low'] * scale, 4, '')}, {md.fmt(row['ci_high'] * scale, 4, '')}]"
    return text


def _labels(sel, versions):
    """[(version dict, label, role)] in version, role, label order."""
    out = []
    for v in versions:
        g = sel[sel["kernel_source_version"] == v["version"]]
        pairs = g[["variant", "role"]].drop_duplicates("variant")
        ranked = sorted(pairs.itertuples(index=False),
                        key=lambda r: (roles.role_rank(role_of(r.role)), r.variant))
        out += [(v, r.variant, role_of(r.role)) for r in ranked]
    return out


def _vname(v, label):
    return f"{v['release']} {label}"


def reading(sel, labels):
    """The one-line readings: which versions bounce, which corrupt data."""
    bounced, none, absent = [], [], []
    corrupt, clean, untested = [], [], []
    for v, label, _ in labels:
        g = sel[(sel["kernel_source_version"] == v["version"]) & (sel["variant"] == label)]
        perf = g[g["job"].map(J.is_page_qd1)]
        bb = perf[perf["metric"] == "bounced_bytes_per_gib"]["median"].dropna()
        bios = _total(g, "bounces")
        if not len(bb) and bios is None:
            absent.append(_vname(v, label))
        elif (bb.max() > 0) if len(bb) else (bios > 0):
            what = [f"{md.fmt(bb.max() / (1 << 20), 4, '')} MiB/GiB"] if len(bb) else []
            what += [f"{bios:.0f} bios in all"] if bios is not None else []
            bounced.append(f"{_vname(v, label)} ({', '.join(what)})")
        else:
            none.append(_vname(v, label))
        bad = _total(g, "integrity_bad_blocks")
        checked = _total(g, "integrity_checked_blocks")
        ibios = _total(g[g["job"].isin(set(g[g["metric"] == "integrity_bad_blocks"]["job"]))],
                       "bounces")
        if bad is None:
            untested.append(_vname(v, label))
            continue
        what = f"{bad:.0f} bad of {checked or 0:.0f} checked"
        what += f", {ibios:.0f} bios bounced" if ibios is not None else ", bounces not counted"
        (corrupt if bad > 0 else clean).append(f"{_vname(v, label)} ({what})")
    out = []
    line = ("Bouncing (bytes: 4 KiB QD1 jobs; bios: every job and repetition "
            "on the candidate disks): ")
    parts = []
    if bounced:
        parts.append("bounces on " + "; ".join(bounced))
    if none:
        parts.append("none counted on " + ", ".join(none))
    if absent:
        parts.append("not measured (no bounce tracepoint) on " + ", ".join(absent))
    out.append(line + ("; ".join(parts) if parts else NOT_MEASURED) + ".")
    parts = []
    if corrupt:
        parts.append("**bad blocks** on " + "; ".join(corrupt))
    if clean:
        parts.append("none on " + "; ".join(clean))
    if untested:
        parts.append(NOT_MEASURED + " on " + ", ".join(untested))
    out.append("Integrity (integrity jobs, every repetition): " + "; ".join(parts) + ".")
    return out


def table(sel, labels, group):
    """(header, rows) of one headline group: a row per version and label,
    a column per (metric, disk, job, pressure) that has a value for some
    version."""
    cols = []
    for metric in metrics.headlines(group):
        rows = sel[(sel["metric"] == metric) & sel["median"].notna()]
        cols += [(metric, r.disk, r.job, r.pressure) for r in
                 rows[["disk", "job", "pressure"]].drop_duplicates().sort_values(
                     ["disk", "job", "pressure"]).itertuples()
                 if headline_metric(metric, r.job, group)]
    if not cols:
        return None, []
    pressures = {c[3] for c in cols}
    short = {h.metric: h.short for h in metrics.headline_rows(group) if h.short}
    header = ["version", "Debian", "variant", "role"]
    for metric, disk, job, pressure in cols:
        name = f"{disk} {job}"
        if metric in short:
            name += f" {short[metric]}"
        if len(pressures) > 1:
            name += f" ({pressure})"
        header.append(name)
    header.append("run")
    out = []
    for v, label, role in labels:
        g = sel[(sel["kernel_source_version"] == v["version"]) & (sel["variant"] == label)]
        row = [v["release"], v["version"], label, role]
        runs = []
        for metric, disk, job, pressure in cols:
            hit = g[(g["metric"] == metric) & (g["disk"] == disk) & (g["job"] == job) &
                    (g["pressure"] == pressure)]
            r = pick(hit)
            row.append(_cell_text(r, scale_of(metric)[0]))
            if r is not None:
                runs.append(r["run_id"])
        row.append(", ".join(dict.fromkeys(runs)) or "-")
        out.append(row)
    return header, out


def report_lines(df, order, figures, link):
    """The "Across kernel versions" section of history.md. figures: the
    Plotter's figures of kind "versions"; link(figure) -> markdown."""
    versions = axis(df)
    out = ["## Across kernel versions", ""]
    if len(versions) < 2:
        have = (f"one kernel source version ({versions[0]['version']})" if versions
                else "no known kernel source version")
        out += [f"The history holds {have}: the figures across kernel versions need "
                "at least two (`./run.sh versions` boots 5.10, 6.1, 6.12 and 7.2 "
                "side by side).", ""]
        return out
    sel = newest_cells(df, order)
    labels = _labels(sel, versions)
    out += [f"{len(versions)} kernel source versions, in Debian version order: "
            + ", ".join(f"{v['version']} ({v['package']})" for v in versions) + ".",
            "",
            "Bounce-candidate disks only; each version, variant and cell from the newest "
            "run that has it (the run column); median of its repetitions with the 95 % "
            "bootstrap CI of the median in brackets. \"not measured\": the variant did "
            "not run that cell, or its kernel has nothing to count there (no bounce "
            "tracepoint after the series, no bounced bio to time); it is never a 0. "
            "Bouncing died on HIGHMEM in 5.13 (commit 9bb33f24abbd inverted the check "
            "in `blk_queue_may_bounce()`) and the bounce code was removed in 6.16; the "
            "figures mark both.", ""]
    if sel.empty or not labels:
        out += ["No bounce-candidate disk was measured.", ""]
        return out
    out += reading(sel, labels) + [""]
    unmeasured = []
    for group, title in metrics.HEADLINE_GROUPS:
        header, rows = table(sel, labels, group)
        units = sorted({scale_of(m)[1] for m in metrics.headlines(group)})
        if header is None:
            unmeasured.append(title)
            continue
        # a kernel with nothing to measure in any column: named, not a row
        empty = [f"{r[2]} ({r[0]})" for r in rows if all(c == NOT_MEASURED for c in r[4:-1])]
        rows = [r for r in rows if not all(c == NOT_MEASURED for c in r[4:-1])]
        out += [f"### {title} ({', '.join(units)})", "", md.table(header, rows), ""]
        if empty:
            out += [f"Nothing to measure here on {', '.join(empty)}.", ""]
        for f in (f for f in figures if f["group"] == title):
            out += [link(f), ""]
    if unmeasured:
        out += [f"{NOT_MEASURED.capitalize()} on any version: {'; '.join(unmeasured)}.", ""]
    return out
